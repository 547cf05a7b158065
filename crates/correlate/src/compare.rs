//! Matching regsim's kernels to the reference's, by program name and launch order, and the
//! per-kernel errors and summary figures of the matched kernels.
//!
//! A run is identified by its program and arguments on both sides. It is compared only
//! when the reference run completed (by the [`crate::input::VerdictRule`] it was loaded
//! with), regsim's run exited 0, and both have the same launches (the same count and
//! mangled names, in order). Every other run is listed with the reason it was not
//! compared, never dropped; a comparison of no kernel at all says why
//! ([`Correlation::why_nothing_compared`]).

use serde::Serialize;

use crate::input::{program_label, ReferenceOutcome, ReferenceProgram, RegsimProgram};
use crate::metrics;
use crate::svg::{Scatter, ScatterPoint};

/// A quantity compared per kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    Cycles,
    L1dAccesses,
    L1dMisses,
    L2Accesses,
    L2Misses,
    /// L1D reservation failures, one per cycle an access is refused (GPGPU-Sim's count).
    L1dReservationFails,
}

impl Metric {
    pub const ALL: [Metric; 6] = [
        Metric::Cycles,
        Metric::L1dAccesses,
        Metric::L1dMisses,
        Metric::L2Accesses,
        Metric::L2Misses,
        Metric::L1dReservationFails,
    ];

    /// A short label for tables and plots.
    pub fn label(self) -> &'static str {
        match self {
            Metric::Cycles => "cycles",
            Metric::L1dAccesses => "L1D accesses",
            Metric::L1dMisses => "L1D misses",
            Metric::L2Accesses => "L2 accesses",
            Metric::L2Misses => "L2 misses",
            Metric::L1dReservationFails => "L1D reservation fails",
        }
    }
}

/// One matched launch.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KernelRow {
    pub program: String,
    /// The program's arguments (the same on both sides).
    pub args: Vec<String>,
    /// Launch number within the program, from 1.
    pub launch: usize,
    /// Demangled name as regsim reports it.
    pub name: String,
    pub mangled: String,
    pub reference_cycles: u64,
    pub regsim_cycles: u64,
    /// `100 (regsim - reference) / reference`; `None` for a zero reference.
    pub cycles_error_percent: Option<f64>,
    pub reference_l1d_accesses: Option<u64>,
    pub regsim_l1d_accesses: u64,
    pub l1d_accesses_error_percent: Option<f64>,
    pub reference_l1d_misses: Option<u64>,
    pub regsim_l1d_misses: u64,
    pub l1d_misses_error_percent: Option<f64>,
    pub reference_l2_accesses: Option<u64>,
    pub regsim_l2_accesses: u64,
    pub l2_accesses_error_percent: Option<f64>,
    pub reference_l2_misses: Option<u64>,
    pub regsim_l2_misses: u64,
    pub l2_misses_error_percent: Option<f64>,
    pub reference_l1d_reservation_fails: Option<u64>,
    pub regsim_l1d_reservation_fails: u64,
    pub l1d_reservation_fails_error_percent: Option<f64>,
}

impl KernelRow {
    /// `(reference, regsim)` for `metric`, when the reference has it.
    pub fn pair(&self, metric: Metric) -> Option<(u64, u64)> {
        match metric {
            Metric::Cycles => Some((self.reference_cycles, self.regsim_cycles)),
            Metric::L1dAccesses => self
                .reference_l1d_accesses
                .map(|r| (r, self.regsim_l1d_accesses)),
            Metric::L1dMisses => self
                .reference_l1d_misses
                .map(|r| (r, self.regsim_l1d_misses)),
            Metric::L2Accesses => self
                .reference_l2_accesses
                .map(|r| (r, self.regsim_l2_accesses)),
            Metric::L2Misses => self.reference_l2_misses.map(|r| (r, self.regsim_l2_misses)),
            Metric::L1dReservationFails => self
                .reference_l1d_reservation_fails
                .map(|r| (r, self.regsim_l1d_reservation_fails)),
        }
    }

    /// The program and its arguments, as tables name the run.
    pub fn program_label(&self) -> String {
        program_label(&self.program, &self.args)
    }

    /// The name without its return type and parameter list (`transpose_tiled<1>` for
    /// `void transpose_tiled<1>(float const*, ...)`), for narrow tables.
    pub fn short_name(&self) -> &str {
        short_name(&self.name)
    }
}

/// `name` up to its parameter list, after the return type of a template function (the
/// last space outside angle brackets).
pub fn short_name(name: &str) -> &str {
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in name.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            ' ' if depth == 0 => start = i + 1,
            '(' if depth == 0 && i > start => return &name[start..i],
            _ => {}
        }
    }
    &name[start..]
}

/// Why a program was or was not compared.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum ProgramStatus {
    /// Its kernels are in the comparison.
    Compared { kernels: usize },
    /// The reference simulator failed on it.
    ReferenceFailed { reason: String },
    /// The reference run completed, but its program's verdict does not satisfy the
    /// verdict rule (`--verdict`).
    VerdictRejected { reason: String },
    /// The program did not exit 0 under regsim (`exit 1`, `signal 11`).
    RegsimFailed { exit: String },
    /// Both ran, but not comparably (arguments, launch count or kernel names differ).
    Mismatch { reason: String },
    /// regsim statistics but no reference file.
    NoReference,
    /// A reference file but no regsim statistics given.
    NotRun,
}

/// One program of either side.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ProgramRow {
    pub program: String,
    pub args: Vec<String>,
    #[serde(flatten)]
    pub status: ProgramStatus,
    /// Sums over the launches (when that side has any).
    pub reference_cycles: Option<u64>,
    pub regsim_cycles: Option<u64>,
}

/// Summary figures of one metric over the compared kernels.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    pub metric: Metric,
    /// Kernels with the metric on both sides.
    pub kernels: usize,
    /// Of those, the kernels with a nonzero reference value (the MAPE's).
    pub nonzero_reference_kernels: usize,
    /// Mean absolute percentage error over those with a nonzero reference; `None` when
    /// every reference value is zero (the counter is there, the relative error is not).
    pub mape_percent: Option<f64>,
    /// Pearson's r of the raw values; `None` when undefined.
    pub pearson: Option<f64>,
}

/// The whole comparison.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Correlation {
    /// The reference configs seen (normally one, `SM2_GTX480`).
    pub reference_configs: Vec<String>,
    /// The reference simulators seen.
    pub reference_simulators: Vec<String>,
    /// regsim's GPU configs seen (normally one).
    pub regsim_gpus: Vec<String>,
    /// Every program of either side, by name.
    pub programs: Vec<ProgramRow>,
    /// Compared launches, by program then launch.
    pub kernels: Vec<KernelRow>,
    /// Summary per metric, for the metrics with at least one pair.
    pub summaries: Vec<Summary>,
}

impl Correlation {
    /// When no kernel was compared, why: how many runs ended in each reason, with a hint
    /// where a flag would change it. `None` when some kernel was compared.
    pub fn why_nothing_compared(&self) -> Option<String> {
        if !self.kernels.is_empty() {
            return None;
        }
        if self.programs.is_empty() {
            return Some("no kernel compared: no runs on either side".to_string());
        }
        let count =
            |f: fn(&ProgramStatus) -> bool| self.programs.iter().filter(|p| f(&p.status)).count();
        let causes = [
            (
                count(|s| matches!(s, ProgramStatus::VerdictRejected { .. })),
                "reference runs whose verdict the --verdict rule rejects (--verdict any compares every completed run)",
            ),
            (
                count(|s| matches!(s, ProgramStatus::ReferenceFailed { .. })),
                "reference runs that failed",
            ),
            (
                count(|s| matches!(s, ProgramStatus::RegsimFailed { .. })),
                "regsim runs that failed",
            ),
            (
                count(|s| matches!(s, ProgramStatus::Mismatch { .. })),
                "runs not comparable (arguments, launches or kernel names differ)",
            ),
            (
                count(|s| matches!(s, ProgramStatus::NoReference)),
                "regsim runs with no reference run",
            ),
            (
                count(|s| matches!(s, ProgramStatus::NotRun)),
                "reference runs with no regsim statistics given",
            ),
        ];
        let parts: Vec<String> = causes
            .iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, what)| format!("{n} {what}"))
            .collect();
        Some(format!("no kernel compared: {}", parts.join("; ")))
    }

    /// The summary of `metric`, if any kernel has it on both sides.
    pub fn summary(&self, metric: Metric) -> Option<&Summary> {
        self.summaries.iter().find(|s| s.metric == metric)
    }

    /// The log-log scatter of `metric`: one point per compared kernel (reference on x,
    /// regsim on y), labelled `program #launch name`.
    pub fn scatter(&self, metric: Metric) -> Scatter {
        let points = self
            .kernels
            .iter()
            .filter_map(|k| {
                k.pair(metric).map(|(r, v)| ScatterPoint {
                    x: r as f64,
                    y: v as f64,
                    label: format!("{} #{} {}", k.program_label(), k.launch, k.short_name()),
                })
            })
            .collect();
        let reference = if self.reference_configs.is_empty() {
            "reference".to_string()
        } else {
            format!("reference {}", self.reference_configs.join(", "))
        };
        let mut caption = format!("{} kernels", self.kernels.len());
        if let Some(s) = self.summary(metric) {
            caption = format!("{} kernels", s.kernels);
            if let Some(mape) = s.mape_percent {
                caption.push_str(&format!(", MAPE {mape:.1}%"));
            }
            if let Some(r) = s.pearson {
                caption.push_str(&format!(", Pearson r {r:.3}"));
            }
        }
        Scatter {
            title: format!(
                "{}: regsim {} against {}",
                metric.label(),
                self.regsim_gpus.join(", "),
                reference
            ),
            caption,
            x_label: format!("{reference} {}", metric.label()),
            y_label: format!("regsim {}", metric.label()),
            points,
        }
    }
}

fn sorted_unique(mut v: Vec<String>) -> Vec<String> {
    v.retain(|s| !s.is_empty());
    v.sort();
    v.dedup();
    v
}

/// `with arguments `a b`` or `without arguments`.
fn arguments_text(args: &[String]) -> String {
    if args.is_empty() {
        "without arguments".to_string()
    } else {
        format!("with arguments `{}`", args.join(" "))
    }
}

/// Matches `runs` to `references` by program name and arguments, then kernels by launch
/// order. A run with more than one regsim statistics file is compared on the first and
/// the others are listed as mismatches.
pub fn correlate(references: &[ReferenceProgram], runs: &[RegsimProgram]) -> Correlation {
    let mut keys: Vec<(&str, &[String])> = references
        .iter()
        .map(|r| (r.program.as_str(), r.args.as_slice()))
        .chain(runs.iter().map(|r| (r.program.as_str(), r.args.as_slice())))
        .collect();
    keys.sort_unstable();
    keys.dedup();

    let mut programs = Vec::new();
    let mut kernels = Vec::new();
    for (name, args) in keys {
        let reference = references
            .iter()
            .find(|r| r.program == name && r.args == args);
        let mut matching = runs.iter().filter(|r| r.program == name && r.args == args);
        let run = matching.next();
        let reference_cycles = reference.and_then(|r| {
            (!r.kernels.is_empty()).then(|| r.kernels.iter().map(|k| k.cycles).sum())
        });
        let regsim_cycles = run.map(|r| r.kernels.iter().map(|k| k.cycles).sum());
        let status = match (reference, run) {
            (None, _) => {
                let others: Vec<String> = references
                    .iter()
                    .filter(|r| r.program == name)
                    .map(|r| arguments_text(&r.args))
                    .collect();
                if others.is_empty() {
                    ProgramStatus::NoReference
                } else {
                    ProgramStatus::Mismatch {
                        reason: format!(
                            "regsim ran it {}; the reference ran it {}",
                            arguments_text(args),
                            others.join(" and ")
                        ),
                    }
                }
            }
            (Some(r), None) => match reference_status(r) {
                Some(status) => status,
                None => ProgramStatus::NotRun,
            },
            (Some(reference), Some(run)) => compare_program(reference, run, &mut kernels),
        };
        let row = |status, reference_cycles, regsim_cycles| ProgramRow {
            program: name.to_string(),
            args: args.to_vec(),
            status,
            reference_cycles,
            regsim_cycles,
        };
        programs.push(row(status, reference_cycles, regsim_cycles));
        for extra in matching {
            let status = ProgramStatus::Mismatch {
                reason: format!(
                    "a second statistics file for this run ({}); only the first is compared",
                    extra.file.display()
                ),
            };
            let cycles = extra.kernels.iter().map(|k| k.cycles).sum();
            programs.push(row(status, None, Some(cycles)));
        }
    }

    let summaries = Metric::ALL
        .iter()
        .filter_map(|&metric| {
            let pairs: Vec<(f64, f64)> = kernels
                .iter()
                .filter_map(|k: &KernelRow| k.pair(metric))
                .map(|(r, v)| (r as f64, v as f64))
                .collect();
            (!pairs.is_empty()).then(|| Summary {
                metric,
                kernels: pairs.len(),
                nonzero_reference_kernels: pairs.iter().filter(|p| p.0 != 0.0).count(),
                mape_percent: metrics::mape(&pairs),
                pearson: metrics::pearson(&pairs),
            })
        })
        .collect();

    Correlation {
        reference_configs: sorted_unique(references.iter().map(|r| r.config.clone()).collect()),
        reference_simulators: sorted_unique(
            references.iter().map(|r| r.simulator.clone()).collect(),
        ),
        regsim_gpus: sorted_unique(runs.iter().map(|r| r.gpu.clone()).collect()),
        programs,
        kernels,
        summaries,
    }
}

/// The status of a run whose reference is not a reference of anything; `None` when the
/// reference run completed.
fn reference_status(reference: &ReferenceProgram) -> Option<ProgramStatus> {
    match &reference.outcome {
        ReferenceOutcome::Completed => None,
        ReferenceOutcome::Failed { reason } => Some(ProgramStatus::ReferenceFailed {
            reason: reason.clone(),
        }),
        ReferenceOutcome::VerdictRejected { reason } => Some(ProgramStatus::VerdictRejected {
            reason: reason.clone(),
        }),
    }
}

fn compare_program(
    reference: &ReferenceProgram,
    run: &RegsimProgram,
    rows: &mut Vec<KernelRow>,
) -> ProgramStatus {
    if let Some(status) = reference_status(reference) {
        return status;
    }
    if !run.passed() {
        return ProgramStatus::RegsimFailed {
            exit: run.status.clone(),
        };
    }
    if run.kernels.len() != reference.kernels.len() {
        return ProgramStatus::Mismatch {
            reason: format!(
                "{} launches in the reference, {} under regsim",
                reference.kernels.len(),
                run.kernels.len()
            ),
        };
    }
    if let Some((i, (r, k))) = reference
        .kernels
        .iter()
        .zip(&run.kernels)
        .enumerate()
        .find(|(_, (r, k))| r.mangled != k.mangled)
    {
        return ProgramStatus::Mismatch {
            reason: format!(
                "launch {}: `{}` in the reference, `{}` under regsim",
                i + 1,
                r.mangled,
                k.mangled
            ),
        };
    }
    let error = |r: Option<u64>, v: u64| r.and_then(|r| metrics::percent_error(r as f64, v as f64));
    for (i, (r, k)) in reference.kernels.iter().zip(&run.kernels).enumerate() {
        rows.push(KernelRow {
            program: reference.program.clone(),
            args: reference.args.clone(),
            launch: i + 1,
            name: k.name.clone(),
            mangled: k.mangled.clone(),
            reference_cycles: r.cycles,
            regsim_cycles: k.cycles,
            cycles_error_percent: error(Some(r.cycles), k.cycles),
            reference_l1d_accesses: r.l1d_accesses,
            regsim_l1d_accesses: k.l1d_accesses,
            l1d_accesses_error_percent: error(r.l1d_accesses, k.l1d_accesses),
            reference_l1d_misses: r.l1d_misses,
            regsim_l1d_misses: k.l1d_misses,
            l1d_misses_error_percent: error(r.l1d_misses, k.l1d_misses),
            reference_l2_accesses: r.l2_accesses,
            regsim_l2_accesses: k.l2_accesses,
            l2_accesses_error_percent: error(r.l2_accesses, k.l2_accesses),
            reference_l2_misses: r.l2_misses,
            regsim_l2_misses: k.l2_misses,
            l2_misses_error_percent: error(r.l2_misses, k.l2_misses),
            reference_l1d_reservation_fails: r.l1d_reservation_fails,
            regsim_l1d_reservation_fails: k.l1d_reservation_fails,
            l1d_reservation_fails_error_percent: error(
                r.l1d_reservation_fails,
                k.l1d_reservation_fails,
            ),
        });
    }
    ProgramStatus::Compared {
        kernels: run.kernels.len(),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::input::{ReferenceKernel, RegsimKernel};
    use std::path::PathBuf;

    pub(crate) fn reference(
        program: &str,
        kernels: &[(&str, u64, Option<u64>)],
    ) -> ReferenceProgram {
        ReferenceProgram {
            program: program.to_string(),
            args: Vec::new(),
            config: "SM2_GTX480".to_string(),
            simulator: "GPGPU-Sim test".to_string(),
            outcome: ReferenceOutcome::Completed,
            kernels: kernels
                .iter()
                .map(|&(m, cycles, l1d)| ReferenceKernel {
                    mangled: m.to_string(),
                    cycles,
                    thread_instructions: 0,
                    l1d_accesses: l1d.map(|l| l * 3),
                    l1d_misses: l1d,
                    l2_accesses: l1d.map(|l| l / 5),
                    l2_misses: l1d.map(|l| l / 10),
                    l1d_reservation_fails: l1d.map(|l| l / 2),
                })
                .collect(),
        }
    }

    pub(crate) fn run(program: &str, kernels: &[(&str, u64, u64)]) -> RegsimProgram {
        RegsimProgram {
            program: program.to_string(),
            args: Vec::new(),
            gpu: "gtx480".to_string(),
            status: "ok".to_string(),
            l1d_per_sector: false,
            kernels: kernels
                .iter()
                .map(|&(m, cycles, l1d)| RegsimKernel {
                    name: format!("{m}(int)"),
                    mangled: m.to_string(),
                    cycles,
                    l1d_accesses: l1d * 3,
                    l1d_misses: l1d,
                    l2_accesses: l1d / 5,
                    l2_misses: l1d / 10,
                    l1d_reservation_fails: l1d / 2,
                })
                .collect(),
            file: PathBuf::from(format!("{program}.json")),
        }
    }

    fn status_of<'a>(c: &'a Correlation, program: &str) -> Vec<&'a ProgramStatus> {
        c.programs
            .iter()
            .filter(|p| p.program == program)
            .map(|p| &p.status)
            .collect()
    }

    #[test]
    fn kernels_pair_by_launch_and_summaries_use_every_pair() {
        let refs = [
            reference("a", &[("k1", 100, Some(50)), ("k2", 200, Some(0))]),
            reference("b", &[("k3", 400, None)]),
        ];
        let runs = [
            run("a", &[("k1", 110, 40), ("k2", 100, 5)]),
            run("b", &[("k3", 600, 7)]),
        ];
        let c = correlate(&refs, &runs);
        let got: Vec<_> = c
            .kernels
            .iter()
            .map(|k| (k.program.as_str(), k.launch, k.cycles_error_percent))
            .collect();
        assert_eq!(
            got,
            [
                ("a", 1, Some(10.0)),
                ("a", 2, Some(-50.0)),
                ("b", 1, Some(50.0))
            ]
        );
        let cycles = c.summary(Metric::Cycles).unwrap();
        assert_eq!(cycles.kernels, 3);
        assert!((cycles.mape_percent.unwrap() - 110.0 / 3.0).abs() < 1e-9);
        // x = 100, 200, 400; y = 110, 100, 600.
        let r = crate::metrics::pearson(&[(100.0, 110.0), (200.0, 100.0), (400.0, 600.0)]);
        assert_eq!(cycles.pearson, r);
        // L1D: b has no counter; a's second launch has a zero reference (no error, left out
        // of the MAPE, kept in the count of pairs).
        let l1d = c.summary(Metric::L1dMisses).unwrap();
        assert_eq!(l1d.kernels, 2);
        assert!((l1d.mape_percent.unwrap() - 20.0).abs() < 1e-9);
        assert_eq!((l1d.kernels, l1d.nonzero_reference_kernels), (2, 1));
        assert_eq!(c.kernels[1].l1d_misses_error_percent, None);
        assert_eq!(c.kernels[2].reference_l1d_misses, None);
        assert_eq!(
            status_of(&c, "a"),
            [&ProgramStatus::Compared { kernels: 2 }]
        );
    }

    #[test]
    fn programs_not_compared_are_listed_with_the_reason() {
        let mut failed = reference("crash", &[]);
        failed.outcome = ReferenceOutcome::Failed {
            reason: "exit 139".to_string(),
        };
        let mut regsim_failed = run("fails_here", &[("k", 5, 0)]);
        regsim_failed.status = "exit 1".to_string();
        let mut large = run("large", &[("k", 5, 0)]);
        large.args = vec!["--large".to_string()];
        let refs = [
            failed,
            reference("fails_here", &[("k", 5, None)]),
            reference("large", &[("k", 5, None)]),
            reference("renamed", &[("k", 5, None), ("k", 6, None)]),
            reference("short", &[("k", 5, None), ("k", 6, None)]),
            reference("unrun", &[("k", 5, None)]),
        ];
        let runs = [
            run("crash", &[("k", 1, 0)]),
            regsim_failed,
            large,
            run("renamed", &[("k", 5, 0), ("j", 6, 0)]),
            run("short", &[("k", 5, 0)]),
            run("unreferenced", &[("k", 5, 0)]),
        ];
        let c = correlate(&refs, &runs);
        assert!(c.kernels.is_empty());
        assert!(c.summaries.is_empty());
        let mismatch = |r: &str| ProgramStatus::Mismatch {
            reason: r.to_string(),
        };
        assert_eq!(
            status_of(&c, "crash"),
            [&ProgramStatus::ReferenceFailed {
                reason: "exit 139".to_string()
            }]
        );
        assert_eq!(
            status_of(&c, "fails_here"),
            [&ProgramStatus::RegsimFailed {
                exit: "exit 1".to_string()
            }]
        );
        // The reference's run without arguments is not run; regsim's with them has no
        // reference run.
        assert_eq!(
            status_of(&c, "large"),
            [
                &ProgramStatus::NotRun,
                &mismatch(
                    "regsim ran it with arguments `--large`; the reference ran it without arguments"
                )
            ]
        );
        assert_eq!(
            status_of(&c, "renamed"),
            [&mismatch(
                "launch 2: `k` in the reference, `j` under regsim"
            )]
        );
        assert_eq!(
            status_of(&c, "short"),
            [&mismatch("2 launches in the reference, 1 under regsim")]
        );
        assert_eq!(status_of(&c, "unrun"), [&ProgramStatus::NotRun]);
        assert_eq!(status_of(&c, "unreferenced"), [&ProgramStatus::NoReference]);
        // Sorted by name, every program of either side once.
        let names: Vec<_> = c.programs.iter().map(|p| p.program.as_str()).collect();
        assert_eq!(
            names,
            [
                "crash",
                "fails_here",
                "large",
                "large",
                "renamed",
                "short",
                "unreferenced",
                "unrun"
            ]
        );
        // A reference failure is listed as such whether or not regsim ran the program.
        let mut alone = reference("crash", &[]);
        alone.outcome = ReferenceOutcome::Failed {
            reason: "exit 139".to_string(),
        };
        let c = correlate(&[alone], &[]);
        assert_eq!(
            status_of(&c, "crash"),
            [&ProgramStatus::ReferenceFailed {
                reason: "exit 139".to_string()
            }]
        );
    }

    #[test]
    fn runs_are_matched_by_program_and_arguments() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let mut small = reference("bfs", &[("k", 100, None)]);
        small.args = args(&["graph.txt"]);
        let mut large = reference("bfs", &[("k", 900, None)]);
        large.args = args(&["--large", "graph.txt"]);
        let mut run_large = run("bfs", &[("k", 1000, 0)]);
        run_large.args = args(&["--large", "graph.txt"]);
        let mut run_other = run("bfs", &[("k", 5, 0)]);
        run_other.args = args(&["other.txt"]);
        let c = correlate(&[small, large], &[run_large, run_other]);
        let got: Vec<_> = c
            .kernels
            .iter()
            .map(|k| (k.program_label(), k.reference_cycles, k.regsim_cycles))
            .collect();
        assert_eq!(got, [("bfs --large graph.txt".to_string(), 900, 1000)]);
        let rows: Vec<(String, &ProgramStatus)> = c
            .programs
            .iter()
            .map(|p| (program_label(&p.program, &p.args), &p.status))
            .collect();
        assert_eq!(
            rows,
            [
                (
                    "bfs --large graph.txt".to_string(),
                    &ProgramStatus::Compared { kernels: 1 }
                ),
                ("bfs graph.txt".to_string(), &ProgramStatus::NotRun),
                (
                    "bfs other.txt".to_string(),
                    &ProgramStatus::Mismatch {
                        reason: "regsim ran it with arguments `other.txt`; the reference ran it \
                                 with arguments `graph.txt` and with arguments `--large graph.txt`"
                            .to_string()
                    }
                ),
            ]
        );
        assert_eq!(
            c.scatter(Metric::Cycles).points[0].label,
            "bfs --large graph.txt #1 k"
        );
    }

    #[test]
    fn a_correlation_of_no_kernel_says_why() {
        let mut rejected = reference("polybench_atax", &[("k", 100, Some(5))]);
        rejected.outcome = ReferenceOutcome::VerdictRejected {
            reason: "verdict `Non-Matching ...: 0` does not satisfy --verdict pass".to_string(),
        };
        let mut failed = reference("crash", &[]);
        failed.outcome = ReferenceOutcome::Failed {
            reason: "exit 139".to_string(),
        };
        let c = correlate(
            &[rejected, failed],
            &[run("polybench_atax", &[("k", 90, 4)]), run("extra", &[])],
        );
        assert_eq!(
            status_of(&c, "polybench_atax"),
            [&ProgramStatus::VerdictRejected {
                reason: "verdict `Non-Matching ...: 0` does not satisfy --verdict pass".to_string()
            }]
        );
        assert_eq!(
            c.why_nothing_compared().as_deref(),
            Some(
                "no kernel compared: 1 reference runs whose verdict the --verdict rule rejects \
                 (--verdict any compares every completed run); 1 reference runs that failed; \
                 1 regsim runs with no reference run"
            )
        );
        let c = correlate(
            &[reference("a", &[("k", 100, None)])],
            &[run("a", &[("k", 90, 4)])],
        );
        assert_eq!(c.why_nothing_compared(), None);
        assert_eq!(
            correlate(&[], &[]).why_nothing_compared().as_deref(),
            Some("no kernel compared: no runs on either side")
        );
    }

    /// A counter the reference has but that is zero in every compared launch (an L2 that
    /// never misses on a data set copied into it) is compared, with no MAPE.
    #[test]
    fn a_counter_that_is_zero_everywhere_is_still_compared() {
        let refs = [reference(
            "a",
            &[("k1", 100, Some(0)), ("k2", 200, Some(0))],
        )];
        let runs = [run("a", &[("k1", 110, 3), ("k2", 100, 0)])];
        let c = correlate(&refs, &runs);
        let s = c
            .summary(Metric::L1dMisses)
            .expect("the reference has the counter");
        assert_eq!((s.kernels, s.nonzero_reference_kernels), (2, 0));
        assert_eq!(s.mape_percent, None);
        assert!(c.summary(Metric::L2Misses).is_some());
    }

    #[test]
    fn short_names_drop_return_types_and_parameters() {
        assert_eq!(
            short_name("void transpose_tiled<1>(float const*, float*, int, int)"),
            "transpose_tiled<1>"
        );
        assert_eq!(short_name("void f<a<b, c>, 2>(int)"), "f<a<b, c>, 2>");
        assert_eq!(
            short_name("saxpy(int, float, float const*, float*)"),
            "saxpy"
        );
        assert_eq!(short_name("_Z3fooPf"), "_Z3fooPf");
    }

    #[test]
    fn a_second_run_of_a_program_is_listed_not_merged() {
        let refs = [reference("a", &[("k", 100, None)])];
        let runs = [run("a", &[("k", 120, 0)]), run("a", &[("k", 999, 0)])];
        let c = correlate(&refs, &runs);
        assert_eq!(c.kernels.len(), 1);
        assert_eq!(c.kernels[0].regsim_cycles, 120);
        let s = status_of(&c, "a");
        assert_eq!(s.len(), 2);
        assert!(matches!(s[1], ProgramStatus::Mismatch { reason } if reason.contains("second")));
    }

    #[test]
    fn the_scatter_has_one_labelled_point_per_kernel_with_the_metric() {
        let refs = [reference("a", &[("k1", 100, Some(50)), ("k2", 200, None)])];
        let runs = [run("a", &[("k1", 110, 40), ("k2", 100, 5)])];
        let c = correlate(&refs, &runs);
        let cycles = c.scatter(Metric::Cycles);
        assert_eq!(cycles.points.len(), 2);
        assert_eq!(cycles.points[0].label, "a #1 k1");
        assert_eq!((cycles.points[1].x, cycles.points[1].y), (200.0, 100.0));
        assert_eq!(c.scatter(Metric::L1dMisses).points.len(), 1);
        assert!(cycles
            .title
            .contains("regsim gtx480 against reference SM2_GTX480"));
    }
}

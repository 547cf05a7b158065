//! `regsim paper gebhart|ltrf|cerf|malekeh|wir|modern-core|all`: runs `experiments/<paper>.toml` and
//! prints the paper's headline figures as tables, the paper's number beside ours, with a
//! per-workload table (and a per-class breakdown where the paper has classes) under each,
//! and writes the report's figures (`<out>/report/index.html` and SVGs). With
//! `--results DIR` it also writes `DIR/<paper>.md` and its SVG figures, stamped with the
//! commit, the date and the mode (see [`results`]).
//!
//! The tables are data ([`figures.toml`](figures.toml), read by [`figures`]): which
//! statistic, which reference each run is divided by, which summary, and the paper's value
//! with its figure or table. Classes come from `workloads/classes.toml` ([`classes`]).
//! Designs whose `--rf` name the config does not know yet are listed as not yet available
//! and left out of every group of the spec; the rest still run.
//!
//! The spec is a `regsim sweep` spec ([`SweepSpec`]; a paper whose designs sweep
//! different keys writes one group per design family) and runs through the sweep
//! machinery into `<out>/store.sqlite`: resumable, only points without a row run, and
//! `--slurm` submits them as a job array. `--quick` runs a subset of the same spec (see
//! [`quick_subset`]) into the same store.

pub mod classes;
pub mod figures;
pub mod results;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use regsim::sweep::{SweepSpec, Workload};
use timing::config::{find_configs_dir, ConfigError, GpuConfig, Override};

use crate::report_html::{self, Point};
pub use figures::{tables, FigureDef};

/// The papers `regsim paper` knows.
pub const PAPERS: [&str; 6] = ["gebhart", "ltrf", "cerf", "malekeh", "wir", "modern-core"];

#[derive(Args)]
pub struct PaperArgs {
    /// The paper: gebhart, ltrf, cerf, malekeh, wir or modern-core (MICRO'25's register-file
    /// cache off and on); `all` runs every one in turn.
    #[arg(value_name = "PAPER")]
    paper: String,
    /// The sweep spec (default: experiments/<PAPER>.toml; not with `all`).
    #[arg(long, value_name = "SPEC.toml")]
    spec: Option<PathBuf>,
    /// Where runs and figures go (default: results/paper-<PAPER>; with `all`,
    /// DIR/<PAPER> for each paper).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Simulations at a time (default: the number of cores).
    #[arg(short = 'j', long, value_name = "N")]
    jobs: Option<usize>,
    /// Submit the points as a Slurm job array (through `regsim sweep --slurm`).
    #[arg(long)]
    slurm: bool,
    /// Print Markdown tables.
    #[arg(long)]
    markdown: bool,
    /// The design the HTML report normalizes to (the tables use each figure's own
    /// reference, `normalize_to` in figures.toml).
    #[arg(long, default_value = "baseline")]
    baseline: String,
    /// Run the documented subset: every workload but the slowest (atomics_cas), and of
    /// each swept key only the values the paper's figures name (minutes on 2 cores).
    #[arg(long)]
    quick: bool,
    /// Also write DIR/<PAPER>.md (the tables, stamped with the commit, date and mode,
    /// and the notes of DIR/notes/<PAPER>.md) and DIR/<PAPER>/<figure>.svg.
    #[arg(long, value_name = "DIR")]
    results: Option<PathBuf>,
}

/// Whether `design` is a `register_file.design` the config knows: `Ok(false)` when the
/// config refuses exactly that key, an error for anything else wrong with the config.
pub fn design_available(config: &str, design: &str, dir: &Path) -> Result<bool> {
    let o = Override::parse(&format!("register_file.design={design}"))
        .map_err(|e| anyhow!("design {design:?}: {e}"))?;
    match GpuConfig::load(config, dir, &[o]) {
        Ok(_) => Ok(true),
        Err(e) if e.key() == Some("register_file.design") => Ok(false),
        Err(e @ ConfigError::UnknownName { .. }) => Err(anyhow!("{e}")),
        Err(e) => Err(anyhow!("config {config} with design {design}: {e}")),
    }
}

/// Leaves out of every group of `spec` the designs some config of theirs does not know
/// (see [`design_available`]), and the groups left without a design; returns the names
/// left out.
pub fn drop_unavailable_designs(
    spec: &mut SweepSpec,
    configs_dir: &Path,
) -> Result<BTreeSet<String>> {
    let mut pairs: BTreeSet<(PathBuf, &str)> = BTreeSet::new();
    for g in &spec.groups {
        for c in &g.configs {
            let config = spec.config_path(c, configs_dir);
            pairs.extend(g.designs.iter().map(|d| (config.clone(), d.as_str())));
        }
    }
    let mut unavailable = BTreeSet::new();
    for (config, design) in pairs {
        if !design_available(&config.to_string_lossy(), design, configs_dir)? {
            unavailable.insert(design.to_string());
        }
    }
    for g in &mut spec.groups {
        g.designs.retain(|d| !unavailable.contains(d));
    }
    spec.groups.retain(|g| !g.designs.is_empty());
    Ok(unavailable)
}

/// The outcome of running the points.
pub struct Ran {
    pub points: Vec<Point>,
    /// Points that failed (their label), with the reason.
    pub failures: Vec<(String, String)>,
}

/// Runs the spec into `<out>/store.sqlite` (resuming: only points without a
/// row run), or with `slurm` submits it as a job array and returns `None`.
fn run_sweep(sw: &SweepSpec, out: &Path, jobs: usize, slurm: bool) -> Result<Option<Ran>> {
    use regsim::sweep::{records_for, run_local, LocalOptions, RunStatus, Store};
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let store_path = out.join("store.sqlite");
    let mut store = Store::open(&store_path)?;
    let mut opts = LocalOptions::new()?;
    opts.jobs = jobs.max(1);
    if slurm {
        let o = regsim::sweep::slurm::SlurmOptions {
            regsim: opts.regsim.clone(),
            ..Default::default()
        };
        for s in regsim::sweep::slurm::submit(sw, &mut store, &o)? {
            crate::source::print_stdout(&format!(
                "submitted Slurm job {} ({} tasks) into {}; run the same command again when \
                 it has finished (regsim sweep --status shows progress)",
                s.job_id,
                s.tasks,
                store_path.display()
            ))?;
        }
        return Ok(None);
    }
    let summary = run_local(sw, &mut store, &opts)?;
    eprintln!("{}", summary.describe());
    let points = sw.expand_with(Some(&opts.regsim))?;
    let records = records_for(&store, &points)?;
    let failures = records
        .iter()
        .filter(|r| r.status != RunStatus::Ok)
        .map(|r| {
            (
                r.key.clone(),
                format!("{} ({})", r.status.as_str(), r.stderr_tail.trim()),
            )
        })
        .collect();
    Ok(Some(Ran {
        points: report_html::points_from_records(&records)?,
        failures,
    }))
}

/// The spec file of a paper: `experiments/<paper>.toml` under the current directory or
/// the source tree.
fn spec_path(paper: &str) -> Option<PathBuf> {
    let rel = PathBuf::from("experiments").join(format!("{paper}.toml"));
    [
        rel.clone(),
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(&rel),
    ]
    .into_iter()
    .find(|p| p.is_file())
}

/// Cuts `spec` down to the quick subset of `paper`: the workloads of `leave_out` go (a
/// `*` is expanded to the built-in workloads `builtin` first), and every swept key keeps
/// only the values some figure of the paper names (a row's `sets` or its `normalize_to`
/// reference), or all of them when none does; a key a figure's `tolerance` ladders over
/// keeps its `quick` rungs (all when none are given).
/// Explicit `points` stay. Groups left without a workload are dropped.
pub fn quick_subset(
    spec: &mut SweepSpec,
    paper: &str,
    defs: &[FigureDef],
    leave_out: &[String],
    builtin: &[String],
) {
    let named: BTreeSet<&str> = defs
        .iter()
        .filter(|f| f.paper == paper)
        .flat_map(|f| {
            f.rows
                .iter()
                .flat_map(|r| r.sets.iter())
                .chain(f.normalize_to.iter().flat_map(|r| r.sets.iter()))
        })
        .map(String::as_str)
        .collect();
    let ladders: BTreeMap<&str, &[String]> = defs
        .iter()
        .filter(|f| f.paper == paper)
        .filter_map(|f| {
            f.tolerance
                .as_ref()
                .map(|t| (t.key.as_str(), t.quick.as_slice()))
        })
        .collect();
    for g in &mut spec.groups {
        let mut workloads = Vec::new();
        for w in std::mem::take(&mut g.workloads) {
            if w.program == "*" {
                workloads.extend(builtin.iter().map(|b| Workload {
                    program: b.clone(),
                    args: w.args.clone(),
                }));
            } else {
                workloads.push(w);
            }
        }
        workloads.retain(|w| !leave_out.contains(&w.program));
        g.workloads = workloads;
        for (key, values) in &mut g.grid {
            if let Some(rungs) = ladders.get(key.as_str()) {
                if !rungs.is_empty() {
                    values.retain(|v| rungs.contains(v));
                }
                continue;
            }
            let chosen: Vec<String> = values
                .iter()
                .filter(|v| named.contains(format!("{key}={v}").as_str()))
                .cloned()
                .collect();
            if !chosen.is_empty() {
                *values = chosen;
            }
        }
    }
    spec.groups.retain(|g| !g.workloads.is_empty());
}

pub fn run(args: PaperArgs) -> Result<ExitCode> {
    let papers: Vec<&str> = if args.paper == "all" {
        if args.spec.is_some() {
            bail!("--spec names one paper's spec: give a paper, not `all`");
        }
        PAPERS.to_vec()
    } else if PAPERS.contains(&args.paper.as_str()) {
        vec![args.paper.as_str()]
    } else {
        bail!(
            "unknown paper {:?} (known: {}, or all)",
            args.paper,
            PAPERS.join(", ")
        );
    };
    let mut status = ExitCode::SUCCESS;
    for paper in papers {
        let out = match (&args.out, args.paper == "all") {
            (Some(o), true) => o.join(paper),
            (Some(o), false) => o.clone(),
            (None, _) => PathBuf::from("results").join(format!("paper-{paper}")),
        };
        if args.paper == "all" {
            crate::source::print_stdout(&format!("\n=== regsim paper {paper} ==="))?;
        }
        if run_paper(&args, paper, &out)? != ExitCode::SUCCESS {
            status = ExitCode::from(1);
        }
    }
    Ok(status)
}

/// One paper: runs its spec (or the quick subset) into `out`, prints the tables, writes
/// the HTML report and, with `--results`, the results page.
fn run_paper(args: &PaperArgs, paper: &str, out: &Path) -> Result<ExitCode> {
    let spec = match &args.spec {
        Some(p) => p.clone(),
        None => spec_path(paper).ok_or_else(|| {
            anyhow!(
                "no experiments/{paper}.toml yet: the {paper} design has not landed (its issue \
                 adds the experiment file)"
            )
        })?,
    };
    let mut sweep_spec = SweepSpec::parse(&spec)?;
    let file = figures::figure_file()?;
    let left_out = if args.quick {
        file.quick.leave_out_of(paper)
    } else {
        Vec::new()
    };
    if args.quick {
        let builtin = regsim::sweep::spec::builtin_workloads(
            &regsim::sweep::spec::find_workloads_dir(std::env::current_exe().ok().as_deref()),
        );
        quick_subset(&mut sweep_spec, paper, &file.figure, &left_out, &builtin);
    }
    let dir = find_configs_dir(std::env::current_exe().ok().as_deref());
    let unavailable = drop_unavailable_designs(&mut sweep_spec, &dir)?;
    if !unavailable.is_empty() {
        crate::source::print_stdout(&format!(
            "regsim paper {paper}: designs not yet available (unknown to register_file.design): {}",
            unavailable.iter().cloned().collect::<Vec<_>>().join(", ")
        ))?;
    }
    if sweep_spec.groups.is_empty() {
        crate::source::print_stdout(&format!("regsim paper {paper}: nothing to run"))?;
        return Ok(ExitCode::SUCCESS);
    }
    let jobs = args.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    let Some(ran) = run_sweep(&sweep_spec, out, jobs, args.slurm)? else {
        return Ok(ExitCode::SUCCESS);
    };
    for (p, e) in &ran.failures {
        crate::source::print_stdout(&format!("failed: {p}: {e}"))?;
    }
    if ran.points.is_empty() {
        bail!("no run succeeded");
    }
    let classes = classes::load_default()?;
    crate::source::write_stdout(&tables(paper, &ran.points, &classes, args.markdown)?)?;
    if ran.points.iter().any(|p| p.design == args.baseline) {
        let index = report_html::write(&out.join("report"), &ran.points, &args.baseline, None)?;
        crate::source::print_stdout(&format!("\nfigures: {}", index.display()))?;
    }
    if let Some(dir) = &args.results {
        let page = results::write(
            dir,
            &results::Run {
                paper,
                points: &ran.points,
                failures: ran.failures.len(),
                quick: args.quick,
                left_out: &left_out,
                classes: &classes,
            },
        )?;
        crate::source::print_stdout(&format!("results: {}", page.display()))?;
    }
    Ok(if ran.failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_designs_are_reported_as_unavailable() {
        let dir = timing::config::source_configs_dir();
        assert!(design_available("gtx480", "baseline", &dir).unwrap());
        assert!(!design_available("gtx480", "no-such-design", &dir).unwrap());
        assert!(design_available("no-such-config", "baseline", &dir).is_err());
    }

    #[test]
    fn unavailable_designs_leave_every_group() {
        let text = "[[sweep]]\nname='a'\nworkloads=['saxpy']\nconfigs=['gtx480']\n\
                    designs=['baseline', 'no-such-design']\n\
                    [[sweep]]\nname='b'\nworkloads=['saxpy']\nconfigs=['gtx480']\n\
                    designs=['no-such-design']\n\
                    [[sweep]]\nname='c'\nworkloads=['saxpy']\nconfigs=['gtx480']\n\
                    designs=['ideal', 'other-missing']\n";
        let mut spec = SweepSpec::from_text(text, Path::new("t.toml"), Path::new("/")).unwrap();
        let dir = timing::config::source_configs_dir();
        let gone = drop_unavailable_designs(&mut spec, &dir).unwrap();
        assert_eq!(
            gone.into_iter().collect::<Vec<_>>(),
            ["no-such-design", "other-missing"]
        );
        let left: Vec<(Option<&str>, &[String])> = spec
            .groups
            .iter()
            .map(|g| (g.name.as_deref(), g.designs.as_slice()))
            .collect();
        assert_eq!(
            left,
            [
                (Some("a"), &["baseline".to_string()][..]),
                (Some("c"), &["ideal".to_string()][..])
            ]
        );
    }

    /// Every figure row (and every normalize_to reference) that selects variants by
    /// their settings names a design and settings some group of the paper's spec runs,
    /// written the same way (rows match the points' `key=value` text).
    #[test]
    fn figure_rows_select_points_of_the_papers_spec() {
        for f in figures::figure_defs().unwrap() {
            let path = spec_path(&f.paper).unwrap();
            let spec = SweepSpec::parse(&path).unwrap();
            let selections = f
                .rows
                .iter()
                .map(|r| (&r.design, &r.sets))
                .chain(f.normalize_to.iter().map(|r| (&r.design, &r.sets)));
            for (design, wanted) in selections {
                let runs = spec.groups.iter().any(|g| {
                    g.designs.contains(design)
                        && g.set_combinations().iter().any(|sets| {
                            wanted
                                .iter()
                                .all(|o| sets.iter().any(|(k, v)| *o == format!("{k}={v}")))
                        })
                });
                assert!(runs, "{} {}: {design} {wanted:?}", f.paper, f.id);
            }
        }
    }

    #[test]
    fn every_paper_has_figures_and_they_parse() {
        let defs = figures::figure_defs().unwrap();
        let classes = classes::load_default().unwrap();
        for p in PAPERS {
            assert!(defs.iter().any(|f| f.paper == p), "{p}");
        }
        // A per-workload paper number names a built-in workload.
        let builtin =
            regsim::sweep::spec::builtin_workloads(&regsim::sweep::spec::find_workloads_dir(None));
        for f in &defs {
            for w in f.rows.iter().flat_map(|r| r.paper_by_workload.keys()) {
                assert!(builtin.contains(w), "{} {}: {w}", f.paper, f.id);
            }
        }
        // Every classification a figure names is in workloads/classes.toml, and every
        // per-class paper number names one of its classes.
        for f in &defs {
            let Some(name) = &f.classes else {
                assert!(
                    f.rows.iter().all(|r| r.paper_by_class.is_empty()),
                    "{}",
                    f.id
                );
                continue;
            };
            let cl = classes.get(name).unwrap_or_else(|| panic!("{name}"));
            for r in &f.rows {
                for class in r.paper_by_class.keys() {
                    assert!(
                        cl.class_names().contains(&class.as_str()),
                        "{name}: {class}"
                    );
                }
            }
        }
    }

    /// The quick subset of every paper: no atomics_cas, only the swept values the
    /// figures name, and still every figure row finds its points.
    #[test]
    fn the_quick_subset_keeps_what_the_figures_need() {
        let file = figures::figure_file().unwrap();
        let builtin =
            regsim::sweep::spec::builtin_workloads(&regsim::sweep::spec::find_workloads_dir(None));
        assert!(builtin.len() > 20, "{builtin:?}");
        for paper in PAPERS {
            let full = SweepSpec::parse(&spec_path(paper).unwrap()).unwrap();
            let mut quick = full.clone();
            quick_subset(
                &mut quick,
                paper,
                &file.figure,
                &file.quick.leave_out_of(paper),
                &builtin,
            );
            let full_points = full.expand().unwrap();
            let points = quick.expand().unwrap();
            // atomics_cas is left out, but for the papers whose quick run keeps it
            // (modern-core: its off/on row, issue 25).
            let kept = file
                .quick
                .keep
                .get(paper)
                .is_some_and(|k| k.iter().any(|w| w == "atomics_cas"));
            // A quick run is never larger, and smaller where it leaves a workload out;
            // one that keeps its left-out workloads, or whose spec names none of them,
            // may sweep nothing to cut (modern-core, and ltrf since its tolerance figure
            // needs the whole latency grid: every point is a figure's).
            let leaves_some_out = !kept
                && full_points
                    .iter()
                    .any(|p| p.workload.program == "atomics_cas");
            assert!(
                !points.is_empty()
                    && points.len() <= full_points.len()
                    && (points.len() < full_points.len() || !leaves_some_out),
                "{paper}"
            );
            assert_eq!(
                points.iter().any(|p| p.workload.program == "atomics_cas"),
                kept,
                "{paper}"
            );
            // A subset of the full spec's points: the same store serves both.
            let keys: BTreeSet<&str> = full_points.iter().map(|p| p.key.as_str()).collect();
            assert!(
                points.iter().all(|p| keys.contains(p.key.as_str())),
                "{paper}"
            );
            for f in file.figure.iter().filter(|f| f.paper == paper) {
                for r in &f.rows {
                    assert!(
                        points.iter().any(|p| p.design == r.design
                            && r.sets
                                .iter()
                                .all(|o| p.sets.iter().any(|(k, v)| *o == format!("{k}={v}")))),
                        "{paper} {}: {} {:?}",
                        f.id,
                        r.design,
                        r.sets
                    );
                }
            }
        }
        // Gebhart: the baseline, the 6-entry RFC and the 3-entry split ORF only.
        let mut g = SweepSpec::parse(&spec_path("gebhart").unwrap()).unwrap();
        quick_subset(
            &mut g,
            "gebhart",
            &file.figure,
            &file.quick.leave_out,
            &builtin,
        );
        assert_eq!(g.expand().unwrap().len(), 3 * (builtin.len() - 1));
    }

    fn point(workload: &str, design: &str, ipc: f64, rf_j: f64, hits: u64) -> Point {
        Point::from_stats(
            json!({
                "program": {"name": workload},
                "gpu": {"name": "g", "overrides": [], "config": {"register_file": {"design": design}}},
                "total": {"cycles": 1, "ipc": ipc, "warp_instructions": 100,
                          "register_file": {"reads": 10, "writes": 5,
                                            "extra": {"malekeh_hits": hits, "malekeh_operand_reads": 200}},
                          "energy": {"register_file_joules": rf_j, "total_joules": 2.0 * rf_j,
                                     "execution_joules": 1.0}}
            }),
            "t",
        )
        .unwrap()
    }

    #[test]
    fn tables_put_the_papers_numbers_beside_ours() {
        let pts = vec![
            point("a", "baseline", 1.0, 4.0, 0),
            point("a", "malekeh", 1.21, 2.0, 100),
            point("b", "baseline", 2.0, 4.0, 0),
            point("b", "malekeh", 2.0, 4.0, 50),
        ];
        let text = tables("malekeh", &pts, &classes::Classes::default(), false).unwrap();
        // IPC: geomean(1.21, 1.0) = 1.1.
        assert!(text.contains("1.100"), "{text}");
        assert!(text.contains("1.096"), "{text}");
        // Hit ratio: mean(0.5, 0.25) = 0.375 against the paper's 0.485.
        assert!(text.contains("0.375") && text.contains("0.485"), "{text}");
        // Energy: geomean(0.5, 1.0) = 0.707.
        assert!(text.contains("0.707") && text.contains("0.709"), "{text}");
        // BOW was not in the runs.
        assert!(text.contains("not run"), "{text}");
        // Per workload: a's IPC ratio 1.21 and the spread 1.000..1.210.
        assert!(
            text.contains("1.210") && text.contains("1.000..1.210"),
            "{text}"
        );
    }
}

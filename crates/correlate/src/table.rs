//! The correlation as text: a per-kernel table, the programs that were not compared and
//! why, and one summary line per metric; aligned columns or Markdown.

use crate::compare::{Correlation, Metric, ProgramStatus};

/// A table: header, rows, which columns are numeric (right-aligned).
pub struct Table {
    pub header: Vec<String>,
    pub numeric: Vec<bool>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    pub fn render(&self, markdown: bool) -> String {
        let mut out = String::new();
        if markdown {
            let line = |cells: &[String]| format!("| {} |\n", cells.join(" | "));
            out.push_str(&line(&self.header));
            let rule: Vec<String> = self
                .numeric
                .iter()
                .map(|&n| if n { "---:" } else { "---" }.to_string())
                .collect();
            out.push_str(&line(&rule));
            for r in &self.rows {
                out.push_str(&line(r));
            }
            return out;
        }
        let widths: Vec<usize> = (0..self.header.len())
            .map(|c| {
                std::iter::once(&self.header)
                    .chain(&self.rows)
                    .map(|r| r[c].chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        for r in std::iter::once(&self.header).chain(&self.rows) {
            let cells: Vec<String> = r
                .iter()
                .zip(&widths)
                .zip(&self.numeric)
                .map(|((cell, &w), &numeric)| {
                    if numeric {
                        format!("{cell:>w$}")
                    } else {
                        format!("{cell:<w$}")
                    }
                })
                .collect();
            out.push_str(cells.join("  ").trim_end());
            out.push('\n');
        }
        out
    }
}

fn percent(e: Option<f64>) -> String {
    e.map_or_else(|| "-".to_string(), |e| format!("{e:+.1}%"))
}

fn count(v: Option<u64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
}

/// One row per compared kernel; miss-count columns only for the metrics the reference has.
pub fn kernel_table(c: &Correlation) -> Table {
    let with_l1d = c.summary(Metric::L1dMisses).is_some();
    let with_l2 = c.summary(Metric::L2Misses).is_some();
    let mut header = vec![
        "program",
        "#",
        "kernel",
        "ref cycles",
        "regsim cycles",
        "error",
    ];
    if with_l1d {
        header.extend(["ref L1D misses", "regsim L1D misses", "error"]);
    }
    if with_l2 {
        header.extend(["ref L2 misses", "regsim L2 misses", "error"]);
    }
    let rows = c
        .kernels
        .iter()
        .map(|k| {
            let mut row = vec![
                k.program_label(),
                k.launch.to_string(),
                k.short_name().to_string(),
                k.reference_cycles.to_string(),
                k.regsim_cycles.to_string(),
                percent(k.cycles_error_percent),
            ];
            if with_l1d {
                row.extend([
                    count(k.reference_l1d_misses),
                    k.regsim_l1d_misses.to_string(),
                    percent(k.l1d_misses_error_percent),
                ]);
            }
            if with_l2 {
                row.extend([
                    count(k.reference_l2_misses),
                    k.regsim_l2_misses.to_string(),
                    percent(k.l2_misses_error_percent),
                ]);
            }
            row
        })
        .collect();
    let numeric = header
        .iter()
        .map(|h| !matches!(*h, "program" | "kernel"))
        .collect();
    Table {
        header: header.into_iter().map(str::to_string).collect(),
        numeric,
        rows,
    }
}

/// What a program's status says in a table cell.
pub fn status_text(status: &ProgramStatus) -> String {
    match status {
        ProgramStatus::Compared { kernels } => {
            format!(
                "compared ({kernels} kernel{})",
                if *kernels == 1 { "" } else { "s" }
            )
        }
        ProgramStatus::ReferenceFailed { reason } => format!("reference failed: {reason}"),
        ProgramStatus::VerdictRejected { reason } => format!("reference not used: {reason}"),
        ProgramStatus::RegsimFailed { exit } => format!("regsim run failed: {exit}"),
        ProgramStatus::Mismatch { reason } => format!("not comparable: {reason}"),
        ProgramStatus::NoReference => "no reference file".to_string(),
        ProgramStatus::NotRun => "no regsim statistics given".to_string(),
    }
}

/// One row per program that was not compared.
pub fn uncompared_table(c: &Correlation) -> Table {
    let rows = c
        .programs
        .iter()
        .filter(|p| !matches!(p.status, ProgramStatus::Compared { .. }))
        .map(|p| {
            vec![
                crate::input::program_label(&p.program, &p.args),
                count(p.reference_cycles),
                count(p.regsim_cycles),
                status_text(&p.status),
            ]
        })
        .collect();
    Table {
        header: ["program", "ref cycles", "regsim cycles", "why not compared"]
            .map(str::to_string)
            .to_vec(),
        numeric: vec![false, true, true, false],
        rows,
    }
}

/// `cycles: 45 kernels, MAPE 71.6%, Pearson correlation 0.962`, one line per metric
/// (accesses in the summary only; the kernel table has cycles and misses). A metric the
/// compared kernels' references lack says so; one whose reference values are all zero
/// says that its MAPE is undefined.
pub fn summary_lines(c: &Correlation) -> String {
    let mut out = String::new();
    for m in Metric::ALL {
        match c.summary(m) {
            Some(s) => {
                let r = s
                    .pearson
                    .map_or_else(|| "undefined".to_string(), |r| format!("{r:.3}"));
                let mape = match s.mape_percent {
                    None => "MAPE undefined (every reference value is 0)".to_string(),
                    Some(e) if s.nonzero_reference_kernels < s.kernels => format!(
                        "MAPE {e:.1}% (over the {} with a nonzero reference)",
                        s.nonzero_reference_kernels
                    ),
                    Some(e) => format!("MAPE {e:.1}%"),
                };
                out.push_str(&format!(
                    "{}: {} kernels, {mape}, Pearson correlation {r}\n",
                    m.label(),
                    s.kernels,
                ));
            }
            None if c.kernels.is_empty() => {
                out.push_str(&format!("{}: no kernels compared\n", m.label()));
            }
            None => out.push_str(&format!(
                "{}: not in the reference of any compared kernel\n",
                m.label()
            )),
        }
    }
    out
}

/// The whole report: heading, kernel table, uncompared programs, summary.
pub fn render(c: &Correlation, markdown: bool) -> String {
    let mut out = format!(
        "regsim {} against {} ({})\n\n",
        if c.regsim_gpus.is_empty() {
            "-".to_string()
        } else {
            c.regsim_gpus.join(", ")
        },
        if c.reference_configs.is_empty() {
            "-".to_string()
        } else {
            c.reference_configs.join(", ")
        },
        c.reference_simulators.join("; ")
    );
    if !c.kernels.is_empty() {
        out.push_str(&kernel_table(c).render(markdown));
        out.push('\n');
    }
    let uncompared = uncompared_table(c);
    if !uncompared.rows.is_empty() {
        out.push_str("programs not compared:\n\n");
        out.push_str(&uncompared.render(markdown));
        out.push('\n');
    }
    out.push_str(&summary_lines(c));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::correlate;
    use crate::compare::tests::{reference, run};
    use crate::input::ReferenceOutcome;

    #[test]
    fn the_report_has_kernels_failures_and_summaries() {
        let mut failed = reference("crash", &[]);
        failed.outcome = ReferenceOutcome::Failed {
            reason: "exit 139".to_string(),
        };
        let refs = [
            reference("a", &[("k1", 100, Some(50)), ("k2", 200, Some(20))]),
            failed,
        ];
        let runs = [
            run("a", &[("k1", 110, 40), ("k2", 100, 30)]),
            run("crash", &[("k", 7, 0)]),
        ];
        let text = render(&correlate(&refs, &runs), false);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            [
                "regsim gtx480 against SM2_GTX480 (GPGPU-Sim test)",
                "",
                "program  #  kernel  ref cycles  regsim cycles   error  ref L1D misses  regsim L1D misses   error  ref L2 misses  regsim L2 misses   error",
                "a        1  k1             100            110  +10.0%              50                 40  -20.0%              5                 4  -20.0%",
                "a        2  k2             200            100  -50.0%              20                 30  +50.0%              2                 3  +50.0%",
                "",
                "programs not compared:",
                "",
                "program  ref cycles  regsim cycles  why not compared",
                "crash             -              7  reference failed: exit 139",
                "",
                "cycles: 2 kernels, MAPE 30.0%, Pearson correlation -1.000",
                "L1D accesses: 2 kernels, MAPE 35.0%, Pearson correlation 1.000",
                "L1D misses: 2 kernels, MAPE 35.0%, Pearson correlation 1.000",
                "L2 accesses: 2 kernels, MAPE 35.0%, Pearson correlation 1.000",
                "L2 misses: 2 kernels, MAPE 35.0%, Pearson correlation 1.000",
                "L1D reservation fails: 2 kernels, MAPE 35.0%, Pearson correlation 1.000",
            ]
        );
        let md = render(&correlate(&refs, &runs), true);
        assert!(md.contains("| program | # | kernel | ref cycles | regsim cycles | error |"));
        assert!(md.contains("| crash | - | 7 | reference failed: exit 139 |"));
    }

    #[test]
    fn miss_columns_appear_only_when_the_reference_has_them() {
        let refs = [reference("a", &[("k1", 100, None)])];
        let runs = [run("a", &[("k1", 110, 40)])];
        let c = correlate(&refs, &runs);
        assert_eq!(kernel_table(&c).header.len(), 6);
        assert!(
            summary_lines(&c).contains("L1D misses: not in the reference of any compared kernel\n")
        );
    }

    #[test]
    fn summaries_tell_zero_references_and_nothing_compared_apart_from_absent_counters() {
        let refs = [reference(
            "a",
            &[("k1", 100, Some(0)), ("k2", 200, Some(10))],
        )];
        let runs = [run("a", &[("k1", 110, 3), ("k2", 100, 30)])];
        let lines = summary_lines(&correlate(&refs, &runs));
        assert!(
            lines.contains(
                "L1D misses: 2 kernels, MAPE 200.0% (over the 1 with a nonzero reference), \
                 Pearson correlation 1.000\n"
            ),
            "{lines}"
        );
        let refs = [reference("a", &[("k1", 100, Some(0))])];
        let lines = summary_lines(&correlate(&refs, &runs[..0]));
        assert_eq!(
            lines,
            "cycles: no kernels compared\nL1D accesses: no kernels compared\n\
             L1D misses: no kernels compared\nL2 accesses: no kernels compared\n\
             L2 misses: no kernels compared\nL1D reservation fails: no kernels compared\n"
        );
        let runs = [run("a", &[("k1", 110, 3)])];
        let lines = summary_lines(&correlate(&refs, &runs));
        assert!(
            lines.contains(
                "L1D misses: 1 kernels, MAPE undefined (every reference value is 0), \
                 Pearson correlation undefined\n"
            ),
            "{lines}"
        );
    }
}

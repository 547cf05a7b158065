//! `regsim report [--markdown] [--by-config] FILE.json...`: tables from the statistics
//! files `regsim run --stats` writes, for reading or for papers; `regsim report --html
//! OUT_DIR [--baseline DESIGN] SOURCE...` writes a page of figures instead
//! ([`crate::report_html`]).
//!
//! The default table has one row per file: workload (the program and its arguments),
//! status (its exit), kernels, warp instructions, cycles, IPC and simulation rate (warp
//! instructions per wall-clock second), a `gpu` column when the files come from more than
//! one config, and a total row (IPC and rate over the sums). Functional-mode files have no
//! cycles; their cycle and IPC cells are `-`. `--by-config` pivots: one row per workload,
//! cycles and IPC for each config, in the order the configs first appear.

use correlate::table::Table;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context, Result};
use clap::Args;
use serde_json::Value;

#[derive(Args)]
pub struct ReportArgs {
    /// Print a Markdown table instead of aligned text.
    #[arg(long)]
    markdown: bool,
    /// One row per workload with cycles and IPC for each config (for comparing configs).
    #[arg(long)]
    by_config: bool,
    /// Write a self-contained HTML page of figures (OUT_DIR/index.html) and the same
    /// figures as SVG files, instead of a table.
    #[arg(long, value_name = "OUT_DIR")]
    html: Option<PathBuf>,
    /// With --html: the design figures are normalized to.
    #[arg(long, value_name = "DESIGN", default_value = "baseline")]
    baseline: String,
    /// With --html: add the correlation scatter of the baseline runs' per-kernel cycles
    /// against a reference simulator's (a directory of `<program>.json`, as for
    /// `regsim correlate`).
    #[arg(long, value_name = "DIR", requires = "html")]
    reference: Option<PathBuf>,
    /// Statistics files written by `regsim run --stats` (with --html: or sweep stores).
    #[arg(value_name = "SOURCE", required = true, num_args = 1..)]
    files: Vec<PathBuf>,
}

/// What one statistics file says.
#[derive(Debug, Clone, PartialEq)]
struct Run {
    workload: String,
    gpu: String,
    status: String,
    passed: bool,
    kernels: u64,
    warp_instructions: u64,
    /// `None` in functional mode.
    cycles: Option<u64>,
    wall_seconds: f64,
}

impl Run {
    fn from_json(json: &Value, file: &Path) -> Result<Run> {
        let u64_at = |v: &Value, what: &str| {
            v.as_u64()
                .ok_or_else(|| anyhow!("{}: no `{what}`", file.display()))
        };
        let total = &json["total"];
        let program = &json["program"];
        let workload = match program["name"].as_str() {
            Some(name) => std::iter::once(name)
                .chain(
                    program["args"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str),
                )
                .collect::<Vec<_>>()
                .join(" "),
            None => file
                .file_stem()
                .map_or_else(String::new, |s| s.to_string_lossy().into_owned()),
        };
        let gpu = json["gpu"]["name"].as_str().unwrap_or("?").to_string();
        let overrides: Vec<&str> = json["gpu"]["overrides"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let gpu = if overrides.is_empty() {
            gpu
        } else {
            format!("{gpu} {}", overrides.join(" "))
        };
        let (status, passed) = match (program["exit_code"].as_i64(), program["signal"].as_i64()) {
            (Some(0), _) => ("ok".to_string(), true),
            (Some(code), _) => (format!("exit {code}"), false),
            (None, Some(signal)) => (format!("signal {signal}"), false),
            (None, None) => ("?".to_string(), false),
        };
        Ok(Run {
            workload,
            gpu,
            status,
            passed,
            kernels: u64_at(&total["kernels"], "total.kernels")?,
            warp_instructions: u64_at(&total["warp_instructions"], "total.warp_instructions")?,
            cycles: total["cycles"].as_u64(),
            wall_seconds: json["simulation"]["wall_seconds"].as_f64().unwrap_or(0.0),
        })
    }
}

fn ipc(warp: u64, cycles: Option<u64>) -> String {
    match cycles {
        Some(c) if c > 0 => format!("{:.3}", warp as f64 / c as f64),
        _ => "-".to_string(),
    }
}

fn rate(warp: u64, seconds: f64) -> String {
    if seconds > 0.0 {
        format!("{:.0}", warp as f64 / seconds)
    } else {
        "-".to_string()
    }
}

fn opt(v: Option<u64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
}

fn runs_table(runs: &[Run]) -> Table {
    let mixed = runs.iter().any(|r| r.gpu != runs[0].gpu);
    let mut header: Vec<&str> = vec!["workload"];
    if mixed {
        header.push("gpu");
    }
    header.extend([
        "status",
        "kernels",
        "warp instructions",
        "cycles",
        "IPC",
        "warp instructions/s",
    ]);
    let row = |name: &str, gpu: &str, status: &str, r: &Run| {
        let mut cells = vec![name.to_string()];
        if mixed {
            cells.push(gpu.to_string());
        }
        cells.extend([
            status.to_string(),
            r.kernels.to_string(),
            r.warp_instructions.to_string(),
            opt(r.cycles),
            ipc(r.warp_instructions, r.cycles),
            rate(r.warp_instructions, r.wall_seconds),
        ]);
        cells
    };
    let mut rows: Vec<Vec<String>> = runs
        .iter()
        .map(|r| row(&r.workload, &r.gpu, &r.status, r))
        .collect();
    if runs.len() > 1 {
        let passed = runs.iter().filter(|r| r.passed).count();
        let total = Run {
            workload: "total".into(),
            gpu: String::new(),
            status: format!("{passed}/{} ok", runs.len()),
            passed: passed == runs.len(),
            kernels: runs.iter().map(|r| r.kernels).sum(),
            warp_instructions: runs.iter().map(|r| r.warp_instructions).sum(),
            cycles: runs.iter().map(|r| r.cycles).sum(),
            wall_seconds: runs.iter().map(|r| r.wall_seconds).sum(),
        };
        rows.push(row("total", "", &total.status, &total));
    }
    let numeric = header
        .iter()
        .map(|h| !matches!(*h, "workload" | "gpu" | "status"))
        .collect();
    Table {
        header: header.into_iter().map(str::to_string).collect(),
        numeric,
        rows,
    }
}

fn by_config_table(runs: &[Run]) -> Table {
    let mut configs: Vec<&str> = Vec::new();
    let mut workloads: Vec<&str> = Vec::new();
    for r in runs {
        if !configs.contains(&r.gpu.as_str()) {
            configs.push(&r.gpu);
        }
        if !workloads.contains(&r.workload.as_str()) {
            workloads.push(&r.workload);
        }
    }
    let mut header = vec!["workload".to_string()];
    for c in &configs {
        header.push(format!("{c} cycles"));
        header.push(format!("{c} IPC"));
    }
    let rows = workloads
        .iter()
        .map(|w| {
            let mut cells = vec![w.to_string()];
            for c in &configs {
                match runs.iter().find(|r| r.workload == *w && r.gpu == *c) {
                    Some(r) => {
                        cells.push(opt(r.cycles));
                        cells.push(ipc(r.warp_instructions, r.cycles));
                    }
                    None => cells.extend(["-".to_string(), "-".to_string()]),
                }
            }
            cells
        })
        .collect();
    let numeric = (0..header.len()).map(|i| i > 0).collect();
    Table {
        header,
        numeric,
        rows,
    }
}

pub fn run(args: ReportArgs) -> Result<std::process::ExitCode> {
    if let Some(out_dir) = &args.html {
        let points = crate::report_html::load_sources(&args.files)?;
        let index =
            crate::report_html::write(out_dir, &points, &args.baseline, args.reference.as_deref())?;
        crate::source::print_stdout(&index.display().to_string())?;
        return Ok(std::process::ExitCode::SUCCESS);
    }
    let runs = args
        .files
        .iter()
        .map(|f| {
            let text =
                std::fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?;
            let json: Value = serde_json::from_str(&text)
                .with_context(|| format!("{} is not a statistics file", f.display()))?;
            Run::from_json(&json, f)
        })
        .collect::<Result<Vec<_>>>()?;
    let table = if args.by_config {
        by_config_table(&runs)
    } else {
        runs_table(&runs)
    };
    crate::source::write_stdout(&table.render(args.markdown))?;
    Ok(std::process::ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn stats(name: &str, gpu: &str, exit: i64, cycles: Option<u64>) -> Value {
        let mut total =
            json!({"kernels": 2, "warp_instructions": 3000, "thread_instructions": 90000});
        if let Some(c) = cycles {
            total["cycles"] = json!(c);
        }
        json!({
            "mode": if cycles.is_some() { "timing" } else { "functional" },
            "gpu": {"name": gpu, "overrides": []},
            "kernels": [],
            "total": total,
            "simulation": {"wall_seconds": 0.5, "warp_instructions_per_second": 6000.0},
            "program": {"name": name, "args": ["--large"], "exit_code": exit},
        })
    }

    fn run_of(v: &Value) -> Run {
        Run::from_json(v, Path::new("x.json")).unwrap()
    }

    #[test]
    fn one_row_per_file_and_a_total() {
        let runs = [
            run_of(&stats("saxpy", "gtx480", 0, Some(1000))),
            run_of(&stats("bfs", "gtx480", 1, Some(2000))),
        ];
        let text = runs_table(&runs).render(false);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            [
                "workload       status  kernels  warp instructions  cycles    IPC  warp instructions/s",
                "saxpy --large  ok            2               3000    1000  3.000                 6000",
                "bfs --large    exit 1        2               3000    2000  1.500                 6000",
                "total          1/2 ok        4               6000    3000  2.000                 6000",
            ]
        );
        let md = runs_table(&runs).render(true);
        assert!(md.starts_with(
            "| workload | status | kernels | warp instructions | cycles | IPC | warp instructions/s |\n\
             | --- | --- | ---: | ---: | ---: | ---: | ---: |\n\
             | saxpy --large | ok | 2 | 3000 | 1000 | 3.000 | 6000 |\n"
        ), "{md}");
    }

    #[test]
    fn functional_files_have_no_cycles_and_mixed_configs_get_a_column() {
        let runs = [
            run_of(&stats("saxpy", "gtx480", 0, None)),
            run_of(&stats("saxpy", "qv100", 0, Some(500))),
        ];
        let t = runs_table(&runs);
        assert_eq!(t.header[1], "gpu");
        assert_eq!(t.rows[0][5..7], ["-", "-"]);
        assert_eq!(t.rows[1][5..7], ["500", "6.000"]);
    }

    #[test]
    fn by_config_pivots_cycles_and_ipc() {
        let runs = [
            run_of(&stats("saxpy", "gtx480", 0, Some(1000))),
            run_of(&stats("bfs", "gtx480", 0, Some(3000))),
            run_of(&stats("saxpy", "qv100", 0, Some(600))),
        ];
        let t = by_config_table(&runs);
        assert_eq!(
            t.header,
            [
                "workload",
                "gtx480 cycles",
                "gtx480 IPC",
                "qv100 cycles",
                "qv100 IPC"
            ]
        );
        assert_eq!(
            t.rows[0],
            ["saxpy --large", "1000", "3.000", "600", "5.000"]
        );
        assert_eq!(t.rows[1], ["bfs --large", "3000", "1.000", "-", "-"]);
    }

    #[test]
    fn files_without_totals_are_rejected_by_name() {
        let e = Run::from_json(&json!({"kernels": []}), Path::new("bad.json")).unwrap_err();
        assert_eq!(e.to_string(), "bad.json: no `total.kernels`");
    }
}

//! `regsim paper gebhart|ltrf|cerf|malekeh|wir`: runs `experiments/<paper>.toml` and
//! prints the paper's headline figures as tables, the paper's number beside ours, and
//! writes the report's figures (`<out>/report/index.html` and SVGs).
//!
//! The tables are data ([`figures.toml`](figures.toml)): which statistic, which
//! normalization, which summary, and the paper's value with its figure or table. Designs
//! whose `--rf` name the config does not know yet are listed as not yet available and
//! left out of every group of the spec; the rest still run.
//!
//! The spec is a `regsim sweep` spec ([`SweepSpec`]; a paper whose designs sweep
//! different keys writes one group per design family) and runs through the sweep
//! machinery into `<out>/store.sqlite`: resumable, only points without a row run, and
//! `--slurm` submits them as a job array.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use regsim::sweep::SweepSpec;
use serde::Deserialize;
use timing::config::{find_configs_dir, ConfigError, GpuConfig, Override};

use crate::report_html::{self, geomean, Arrangement, Point};

/// The papers `regsim paper` knows.
pub const PAPERS: [&str; 5] = ["gebhart", "ltrf", "cerf", "malekeh", "wir"];

#[derive(Args)]
pub struct PaperArgs {
    /// The paper: gebhart, ltrf, cerf, malekeh or wir.
    #[arg(value_name = "PAPER")]
    paper: String,
    /// The sweep spec (default: experiments/<PAPER>.toml).
    #[arg(long, value_name = "SPEC.toml")]
    spec: Option<PathBuf>,
    /// Where runs and figures go (default: results/paper-<PAPER>).
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
    /// The design figures are normalized to.
    #[arg(long, default_value = "baseline")]
    baseline: String,
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
            println!(
                "submitted Slurm job {} ({} tasks) into {}; run the same command again when \
                 it has finished (regsim sweep --status shows progress)",
                s.job_id,
                s.tasks,
                store_path.display()
            );
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

/// `figures.toml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FigureFile {
    figure: Vec<FigureDef>,
}

/// One headline figure of a paper.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FigureDef {
    pub paper: String,
    pub title: String,
    pub source: String,
    pub metric: Metric,
    /// For `extra_ratio`: the counters summed above the line.
    #[serde(default)]
    pub numerator: Vec<String>,
    #[serde(default)]
    pub denominator: Option<String>,
    pub normalize: bool,
    pub summary: Summary,
    pub rows: Vec<RowDef>,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    Ipc,
    RfEnergy,
    SmEnergy,
    TotalEnergy,
    RfVsSingleMrf,
    MrfAccesses,
    ExtraRatio,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum Summary {
    Geomean,
    Mean,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RowDef {
    pub design: String,
    /// Only the variants with all of these overrides (the paper's configuration).
    #[serde(default)]
    pub sets: Vec<String>,
    #[serde(default)]
    pub paper: Option<f64>,
    pub note: String,
}

/// Every figure definition (the embedded `figures.toml`).
pub fn figure_defs() -> Result<Vec<FigureDef>> {
    let f: FigureFile =
        toml::from_str(include_str!("figures.toml")).map_err(|e| anyhow!("figures.toml: {e}"))?;
    Ok(f.figure)
}

impl FigureDef {
    /// The metric of one run (`None` when the run lacks what it needs).
    pub fn value(&self, p: &Point) -> Option<f64> {
        let t = &p.stats["total"];
        let energy = |k: &str| t["energy"][k].as_f64();
        match self.metric {
            Metric::Ipc => t["ipc"].as_f64(),
            Metric::RfEnergy => energy("register_file_joules"),
            Metric::SmEnergy => Some(energy("register_file_joules")? + energy("execution_joules")?),
            Metric::TotalEnergy => energy("total_joules"),
            Metric::RfVsSingleMrf => energy("register_file_normalized"),
            Metric::MrfAccesses => Some(
                t["register_file"]["reads"].as_f64()? + t["register_file"]["writes"].as_f64()?,
            ),
            Metric::ExtraRatio => {
                let get = |k: &str| -> Option<f64> {
                    if k == "warp_instructions" {
                        t["warp_instructions"].as_f64()
                    } else {
                        t["register_file"]["extra"][k].as_f64()
                    }
                };
                let n = self.numerator.iter().map(|k| get(k)).sum::<Option<f64>>()?;
                let d = get(self.denominator.as_deref()?)?;
                (d > 0.0).then(|| n / d)
            }
        }
    }

    /// Our summary for one design variant over the workloads: (value, workloads used).
    pub fn ours(&self, a: &Arrangement, v: &(String, String, String)) -> Option<(f64, usize)> {
        let mut values = Vec::new();
        for w in &a.workloads {
            let Some(p) = a.get(w, v) else { continue };
            let Some(x) = self.value(p) else { continue };
            if self.normalize {
                let Some(b) = a.baseline_of(p).and_then(|b| self.value(b)) else {
                    continue;
                };
                if b > 0.0 {
                    values.push(x / b);
                }
            } else {
                values.push(x);
            }
        }
        if values.is_empty() {
            return None;
        }
        let s = match self.summary {
            Summary::Geomean => geomean(&values)?,
            Summary::Mean => values.iter().sum::<f64>() / values.len() as f64,
        };
        Some((s, values.len()))
    }
}

/// The tables of `paper` from the runs: one per figure, one row per design variant the
/// figure lists (the paper's number beside ours).
pub fn tables(paper: &str, points: &[Point], baseline: &str, markdown: bool) -> Result<String> {
    let a = Arrangement::new(points, baseline);
    let mut out = String::new();
    for f in figure_defs()?.iter().filter(|f| f.paper == paper) {
        out.push_str(&format!("\n{} ({})\n", f.title, f.source));
        let mut rows: Vec<[String; 5]> = Vec::new();
        for r in &f.rows {
            let variants: Vec<&(String, String, String)> = a
                .variants
                .iter()
                .filter(|v| {
                    v.2 == r.design
                        && r.sets
                            .iter()
                            .all(|o| v.1.split_whitespace().any(|x| x == o))
                })
                .collect();
            let paper_value = r.paper.map_or("-".to_string(), |p| format!("{p:.3}"));
            if variants.is_empty() {
                rows.push([
                    r.design.clone(),
                    "not run".into(),
                    "-".into(),
                    paper_value.clone(),
                    r.note.clone(),
                ]);
            }
            for v in variants {
                let (ours, n) = f
                    .ours(&a, v)
                    .map_or(("-".to_string(), 0), |(x, n)| (format!("{x:.3}"), n));
                rows.push([
                    a.label(v),
                    ours,
                    n.to_string(),
                    paper_value.clone(),
                    r.note.clone(),
                ]);
            }
        }
        let header = ["design", "regsim", "workloads", "paper", "paper's figure"];
        out.push_str(&render(&header, &rows, markdown));
    }
    Ok(out)
}

fn render(header: &[&str; 5], rows: &[[String; 5]], markdown: bool) -> String {
    let mut out = String::new();
    if markdown {
        out.push_str(&format!("| {} |\n", header.join(" | ")));
        out.push_str("| --- | ---: | ---: | ---: | --- |\n");
        for r in rows {
            out.push_str(&format!("| {} |\n", r.join(" | ")));
        }
        return out;
    }
    let widths: Vec<usize> = (0..5)
        .map(|c| {
            rows.iter()
                .map(|r| r[c].chars().count())
                .chain([header[c].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: Vec<&str>| {
        let s: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(c, cell)| {
                let w = widths[c];
                if (1..4).contains(&c) {
                    format!("{cell:>w$}")
                } else {
                    format!("{cell:<w$}")
                }
            })
            .collect();
        format!("  {}\n", s.join("  ").trim_end())
    };
    out.push_str(&line(header.to_vec()));
    for r in rows {
        out.push_str(&line(r.iter().map(String::as_str).collect()));
    }
    out
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

pub fn run(args: PaperArgs) -> Result<ExitCode> {
    if !PAPERS.contains(&args.paper.as_str()) {
        bail!(
            "unknown paper {:?} (known: {})",
            args.paper,
            PAPERS.join(", ")
        );
    }
    let spec = match &args.spec {
        Some(p) => p.clone(),
        None => spec_path(&args.paper).ok_or_else(|| {
            anyhow!(
                "no experiments/{}.toml yet: the {} design has not landed (its issue adds the \
                 experiment file)",
                args.paper,
                args.paper
            )
        })?,
    };
    let mut sweep_spec = SweepSpec::parse(&spec)?;
    let dir = find_configs_dir(std::env::current_exe().ok().as_deref());
    let unavailable = drop_unavailable_designs(&mut sweep_spec, &dir)?;
    if !unavailable.is_empty() {
        println!(
            "regsim paper {}: designs not yet available (unknown to register_file.design): {}",
            args.paper,
            unavailable.iter().cloned().collect::<Vec<_>>().join(", ")
        );
    }
    if sweep_spec.groups.is_empty() {
        println!("regsim paper {}: nothing to run", args.paper);
        return Ok(ExitCode::SUCCESS);
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("results").join(format!("paper-{}", args.paper)));
    let jobs = args.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    let Some(ran) = run_sweep(&sweep_spec, &out, jobs, args.slurm)? else {
        return Ok(ExitCode::SUCCESS);
    };
    for (p, e) in &ran.failures {
        println!("failed: {p}: {e}");
    }
    if ran.points.is_empty() {
        bail!("no run succeeded");
    }
    print!(
        "{}",
        tables(&args.paper, &ran.points, &args.baseline, args.markdown)?
    );
    if ran.points.iter().any(|p| p.design == args.baseline) {
        let index = report_html::write(&out.join("report"), &ran.points, &args.baseline, None)?;
        println!("\nfigures: {}", index.display());
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

    /// Every figure row that selects variants by their settings names a design and
    /// settings some group of the paper's spec runs, written the same way (rows match
    /// the points' `key=value` text).
    #[test]
    fn figure_rows_select_points_of_the_papers_spec() {
        for f in figure_defs().unwrap() {
            let path = spec_path(&f.paper).unwrap();
            let spec = SweepSpec::parse(&path).unwrap();
            for r in &f.rows {
                let runs = spec.groups.iter().any(|g| {
                    g.designs.contains(&r.design)
                        && g.set_combinations().iter().any(|sets| {
                            r.sets
                                .iter()
                                .all(|o| sets.iter().any(|(k, v)| *o == format!("{k}={v}")))
                        })
                });
                assert!(runs, "{}: {} {:?}", f.paper, r.design, r.sets);
            }
        }
    }

    #[test]
    fn every_paper_has_figures_and_they_parse() {
        let defs = figure_defs().unwrap();
        for p in PAPERS {
            assert!(defs.iter().any(|f| f.paper == p), "{p}");
        }
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
        let text = tables("malekeh", &pts, "baseline", false).unwrap();
        // IPC: geomean(1.21, 1.0) = 1.1.
        assert!(text.contains("1.100"), "{text}");
        assert!(text.contains("1.096"), "{text}");
        // Hit ratio: mean(0.5, 0.25) = 0.375 against the paper's 0.485.
        assert!(text.contains("0.375") && text.contains("0.485"), "{text}");
        // Energy: geomean(0.5, 1.0) = 0.707.
        assert!(text.contains("0.707") && text.contains("0.709"), "{text}");
        // BOW was not in the runs.
        assert!(text.contains("not run"), "{text}");
    }
}

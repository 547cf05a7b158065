//! `regsim paper gebhart|ltrf|cerf|malekeh|wir`: runs `experiments/<paper>.toml` and
//! prints the paper's headline figures as tables, the paper's number beside ours, and
//! writes the report's figures (`<out>/report/index.html` and SVGs).
//!
//! The tables are data ([`figures.toml`](figures.toml)): which statistic, which
//! normalization, which summary, and the paper's value with its figure or table. Designs
//! whose `--rf` name the config does not know yet are listed as not yet available and
//! left out; the rest still run.
//!
//! A spec `regsim sweep` reads runs through the sweep machinery into `<out>/store.sqlite`
//! (resumable; `--slurm` submits it as a job array). A spec with several `[[sweep]]`
//! tables (one per design family) runs through [`run_points`]: `regsim run` child
//! processes, `-j` at a time, one statistics file per point under `<out>/runs/`; a point
//! whose file already holds a successful run is not run again.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use serde::Deserialize;
use serde_json::Value;
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

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Sweep {
    /// A label for a `[[sweep]]` entry.
    #[serde(default)]
    name: Option<String>,
    workloads: Vec<String>,
    configs: Vec<String>,
    designs: Vec<String>,
    #[serde(default)]
    set: toml::Table,
    /// Explicit override combinations, added to the grid's.
    #[serde(default)]
    points: Vec<toml::Table>,
    /// More `regsim run` arguments for every point.
    #[serde(default)]
    run_args: Vec<String>,
    /// Accepted for compatibility with `regsim sweep` specs; a run is not timed out here.
    #[serde(default)]
    timeout_seconds: Option<f64>,
}

/// One point of a sweep.
#[derive(Clone, Debug, PartialEq)]
pub struct RunPoint {
    /// A built-in workload name or a program path, then its arguments.
    pub workload: Vec<String>,
    pub config: String,
    pub design: String,
    /// `KEY=VALUE` overrides.
    pub sets: Vec<String>,
    /// More `regsim run` arguments.
    pub run_args: Vec<String>,
}

impl RunPoint {
    /// A file-name-safe key, unique per point.
    pub fn key(&self) -> String {
        let mut s = format!(
            "{}__{}__{}",
            self.workload.join("_"),
            self.config,
            self.design
        );
        for o in self.sets.iter().chain(&self.run_args) {
            s.push_str("__");
            s.push_str(o);
        }
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "._=-".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    }
}

/// A TOML value as an override's right-hand side.
fn set_value(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Every point of a spec: workloads × configs × designs × the cartesian product of
/// `[sweep.set]` (keys in sorted order).
pub fn parse_spec(text: &str, origin: &str) -> Result<Vec<RunPoint>> {
    // `[sweep]`, or several `[[sweep]]` (design families that sweep different keys).
    let doc: toml::Table = toml::from_str(text).map_err(|e| anyhow!("{origin}: {e}"))?;
    if let Some(k) = doc.keys().find(|k| *k != "sweep") {
        bail!("{origin}: unknown table or key `{k}` (a spec has [sweep] or [[sweep]])");
    }
    let one = |v: &toml::Value, n: usize| -> Result<Sweep> {
        v.clone()
            .try_into::<Sweep>()
            .map_err(|e| anyhow!("{origin}: sweep #{n}: {e}"))
    };
    let sweeps: Vec<Sweep> = match doc.get("sweep") {
        Some(toml::Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(i, v)| one(v, i + 1))
            .collect::<Result<_>>()?,
        Some(v @ toml::Value::Table(_)) => vec![one(v, 1)?],
        _ => bail!("{origin}: no [sweep] table"),
    };
    let mut points: Vec<RunPoint> = Vec::new();
    for s in sweeps {
        for p in expand(s, origin)? {
            if !points.contains(&p) {
                points.push(p);
            }
        }
    }
    Ok(points)
}

/// The points of one `[sweep]`.
fn expand(s: Sweep, origin: &str) -> Result<Vec<RunPoint>> {
    let origin = match &s.name {
        Some(n) => format!("{origin} (sweep {n})"),
        None => origin.to_string(),
    };
    let origin = origin.as_str();
    for (what, list) in [
        ("workloads", &s.workloads),
        ("configs", &s.configs),
        ("designs", &s.designs),
    ] {
        if list.is_empty() {
            bail!("{origin}: sweep.{what} is empty");
        }
    }
    let _ = s.timeout_seconds;
    let mut combos: Vec<Vec<String>> = vec![Vec::new()];
    for (key, values) in &s.set {
        let values: Vec<String> = match values {
            toml::Value::Array(a) => a.iter().map(set_value).collect(),
            v => vec![set_value(v)],
        };
        if values.is_empty() {
            bail!("{origin}: sweep.set.{key} has no values");
        }
        combos = combos
            .into_iter()
            .flat_map(|c| {
                values.iter().map(move |v| {
                    let mut c = c.clone();
                    c.push(format!("{key}={v}"));
                    c
                })
            })
            .collect();
    }
    if !s.points.is_empty() {
        if s.set.is_empty() {
            combos.clear();
        }
        for p in &s.points {
            combos.push(
                p.iter()
                    .map(|(k, v)| format!("{k}={}", set_value(v)))
                    .collect(),
            );
        }
    }
    // "*" is every built-in workload.
    let mut workloads: Vec<String> = Vec::new();
    for w in &s.workloads {
        if w == "*" {
            let dir =
                workloads_dir().ok_or_else(|| anyhow!("{origin}: \"*\" needs workloads/bin"))?;
            let mut names: Vec<String> = std::fs::read_dir(&dir)
                .with_context(|| format!("reading {}", dir.display()))?
                .filter_map(|e| e.ok())
                .filter(|e| e.path().is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            workloads.extend(names);
        } else {
            workloads.push(w.clone());
        }
    }
    let mut points = Vec::new();
    for w in &workloads {
        let workload: Vec<String> = w.split_whitespace().map(str::to_string).collect();
        if workload.is_empty() {
            bail!("{origin}: an empty workload in sweep.workloads");
        }
        for c in &s.configs {
            for d in &s.designs {
                for sets in &combos {
                    points.push(RunPoint {
                        workload: workload.clone(),
                        config: c.clone(),
                        design: d.clone(),
                        sets: sets.clone(),
                        run_args: s.run_args.clone(),
                    });
                }
            }
        }
    }
    Ok(points)
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

/// The program a workload names: a path as given, or `workloads/bin/<name>` under the
/// current directory or the source tree.
fn program_path(name: &str) -> Result<PathBuf> {
    if name.contains('/') {
        return Ok(PathBuf::from(name));
    }
    workloads_dir()
        .map(|d| d.join(name))
        .filter(|p| p.is_file())
        .ok_or_else(|| anyhow!("workload {name}: no workloads/bin/{name} (build it with scripts/build-workloads.sh, or give a path)"))
}

/// The built-in workloads' directory: `workloads/bin` under the current directory or
/// the source tree.
fn workloads_dir() -> Option<PathBuf> {
    [
        PathBuf::from("workloads/bin"),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads/bin"),
    ]
    .into_iter()
    .find(|p| p.is_dir())
}

/// A statistics file that holds a successful timing run.
fn finished(stats: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(stats).ok()?;
    let v: Value = serde_json::from_str(&text).ok()?;
    (v["program"]["exit_code"].as_i64() == Some(0) && v["total"]["cycles"].as_u64().is_some())
        .then_some(v)
}

/// The outcome of running the points.
pub struct Ran {
    pub points: Vec<Point>,
    /// Points that failed (their label), with the reason.
    pub failures: Vec<(String, String)>,
}

/// Runs every point (`regsim run` children, `jobs` at a time), skipping points whose
/// statistics file already holds a successful run, and reads the results back.
pub fn run_points(points: &[RunPoint], runs_dir: &Path, jobs: usize) -> Result<Ran> {
    std::fs::create_dir_all(runs_dir)
        .with_context(|| format!("creating {}", runs_dir.display()))?;
    let exe = std::env::current_exe().context("locating the regsim binary")?;
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let failures: Mutex<Vec<(RunPoint, String)>> = Mutex::new(Vec::new());
    let total = points.len();
    let worker = || {
        while let Some(p) = points.get(next.fetch_add(1, Ordering::SeqCst)) {
            let stats = runs_dir.join(format!("{}.json", p.key()));
            let outcome = if finished(&stats).is_some() {
                Ok(())
            } else {
                run_one(&exe, p, &stats, runs_dir)
            };
            let n = done.fetch_add(1, Ordering::SeqCst) + 1;
            match outcome {
                Ok(()) => eprintln!("regsim paper: [{n}/{total}] {}", p.key()),
                Err(e) => {
                    eprintln!("regsim paper: [{n}/{total}] {} FAILED: {e:#}", p.key());
                    if let Ok(mut f) = failures.lock() {
                        f.push((p.clone(), format!("{e:#}")));
                    }
                }
            }
        }
    };
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1) {
            s.spawn(worker);
        }
    });
    let mut out = Vec::new();
    for p in points {
        let stats = runs_dir.join(format!("{}.json", p.key()));
        if let Some(v) = finished(&stats) {
            out.push(Point::from_stats(v, &stats.display().to_string())?);
        }
    }
    let mut failures = failures.into_inner().unwrap_or_default();
    failures.sort_by_key(|(p, _)| p.key());
    Ok(Ran {
        points: out,
        failures: failures.into_iter().map(|(p, e)| (p.key(), e)).collect(),
    })
}

/// Runs a `regsim sweep` spec into `<out>/store.sqlite` (resuming: only points without a
/// row run), or with `slurm` submits it as a job array and returns `None`.
fn run_sweep(
    sw: &regsim::sweep::SweepSpec,
    out: &Path,
    jobs: usize,
    slurm: bool,
) -> Result<Option<Ran>> {
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

fn run_one(exe: &Path, p: &RunPoint, stats: &Path, runs_dir: &Path) -> Result<()> {
    let program = program_path(&p.workload[0])?;
    let mut cmd = Command::new(exe);
    cmd.arg("run")
        .arg("--gpu")
        .arg(&p.config)
        .arg("--rf")
        .arg(&p.design);
    for o in &p.sets {
        cmd.arg("--set").arg(o);
    }
    cmd.args(&p.run_args);
    cmd.arg("--stats").arg(stats).arg("--").arg(&program);
    cmd.args(&p.workload[1..]);
    let log = runs_dir.join(format!("{}.log", p.key()));
    let file =
        std::fs::File::create(&log).with_context(|| format!("creating {}", log.display()))?;
    let status = cmd
        .stdin(Stdio::null())
        .stdout(file.try_clone()?)
        .stderr(file)
        .status()
        .context("starting regsim run")?;
    if !status.success() {
        bail!("regsim run exited with {status} (log: {})", log.display());
    }
    Ok(())
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
    // Specs `regsim sweep` reads run through it (a store at <out>/store.sqlite); others
    // (several [[sweep]] tables) through run_points.
    let sweep_spec = regsim::sweep::SweepSpec::parse(&spec).ok();
    let text =
        std::fs::read_to_string(&spec).with_context(|| format!("reading {}", spec.display()))?;
    let all = match &sweep_spec {
        Some(_) => Vec::new(),
        None => parse_spec(&text, &spec.display().to_string())?,
    };

    // Designs the config does not know yet are left out, by name.
    let dir = find_configs_dir(std::env::current_exe().ok().as_deref());
    let mut unavailable: BTreeSet<String> = BTreeSet::new();
    let pairs: BTreeSet<(String, String)> = match &sweep_spec {
        Some(sw) => sw
            .configs
            .iter()
            .flat_map(|c| sw.designs.iter().map(move |d| (c.clone(), d.clone())))
            .collect(),
        None => all
            .iter()
            .map(|p| (p.config.clone(), p.design.clone()))
            .collect(),
    };
    for (config, design) in &pairs {
        let config = match &sweep_spec {
            Some(sw) if config.contains('/') || config.ends_with(".toml") => {
                sw.base_dir.join(config).display().to_string()
            }
            _ => config.clone(),
        };
        if !design_available(&config, design, &dir)? {
            unavailable.insert(design.clone());
        }
    }
    if !unavailable.is_empty() {
        println!(
            "regsim paper {}: designs not yet available (unknown to register_file.design): {}",
            args.paper,
            unavailable.iter().cloned().collect::<Vec<_>>().join(", ")
        );
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
    let ran = match sweep_spec {
        Some(mut sw) => {
            sw.designs.retain(|d| !unavailable.contains(d));
            if sw.designs.is_empty() {
                println!("regsim paper {}: nothing to run", args.paper);
                return Ok(ExitCode::SUCCESS);
            }
            match run_sweep(&sw, &out, jobs, args.slurm)? {
                Some(ran) => ran,
                None => return Ok(ExitCode::SUCCESS),
            }
        }
        None => {
            let points: Vec<RunPoint> = all
                .into_iter()
                .filter(|p| !unavailable.contains(&p.design))
                .collect();
            if points.is_empty() {
                println!("regsim paper {}: nothing to run", args.paper);
                return Ok(ExitCode::SUCCESS);
            }
            if args.slurm {
                bail!(
                    "--slurm: {} has several [[sweep]] tables, which `regsim sweep` does not \
                     read; run without --slurm to simulate locally",
                    spec.display()
                );
            }
            run_points(&points, &out.join("runs"), jobs)?
        }
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
    fn specs_expand_to_the_cartesian_product() {
        let text = r#"
[sweep]
workloads = ["saxpy", "bfs 100"]
configs = ["gtx480"]
designs = ["baseline", "rfc"]
[sweep.set]
"register_file.bank_latency" = [1, 4]
"sm.scheduler" = ["gto"]
"#;
        let points = parse_spec(text, "t.toml").unwrap();
        assert_eq!(points.len(), 2 * 2 * 2);
        assert_eq!(points[0].workload, ["saxpy"]);
        assert_eq!(
            points[0].sets,
            ["register_file.bank_latency=1", "sm.scheduler=gto"]
        );
        assert_eq!(points[7].workload, ["bfs", "100"]);
        assert_eq!(points[7].design, "rfc");
        assert_eq!(
            points[7].key(),
            "bfs_100__gtx480__rfc__register_file.bank_latency=4__sm.scheduler=gto"
        );
        let e = parse_spec(
            "[sweep]\nworkloads=[]\nconfigs=[\"a\"]\ndesigns=[\"b\"]\n",
            "x",
        )
        .unwrap_err();
        assert!(e.to_string().contains("sweep.workloads is empty"), "{e}");
        let text = "[sweep]\nworkloads=[\"*\"]\nconfigs=[\"g\"]\ndesigns=[\"b\"]\n\
                    run_args=[\"--max-registers\", \"32\"]\n\
                    [[sweep.points]]\n\"sm.scheduler\" = \"lrr\"\n\
                    [[sweep.points]]\n\"sm.scheduler\" = \"gto\"\n";
        let points = parse_spec(text, "x").unwrap();
        let builtins = std::fs::read_dir(workloads_dir().unwrap()).unwrap().count();
        assert_eq!(points.len(), 2 * builtins);
        assert_eq!(points[1].sets, ["sm.scheduler=gto"]);
        assert_eq!(points[1].run_args, ["--max-registers", "32"]);
        assert!(points[1]
            .key()
            .ends_with("__sm.scheduler=gto__--max-registers__32"));
        let two = "[[sweep]]\nname=\"b\"\nworkloads=[\"saxpy\"]\nconfigs=[\"g\"]\ndesigns=[\"baseline\"]\n\
                   [[sweep]]\nname=\"r\"\nworkloads=[\"saxpy\"]\nconfigs=[\"g\"]\ndesigns=[\"rfc\"]\n\
                   [sweep.set]\n\"register_file.rfc.entries_per_thread\" = [1, 6]\n";
        let points = parse_spec(two, "x").unwrap();
        assert_eq!(points.len(), 3);
        assert_eq!(points[2].sets, ["register_file.rfc.entries_per_thread=6"]);
        let e = parse_spec("[sweep]\nworkload=[]\n", "x").unwrap_err();
        assert!(e.to_string().contains("workload"), "{e}");
    }

    #[test]
    fn unknown_designs_are_reported_as_unavailable() {
        let dir = timing::config::source_configs_dir();
        assert!(design_available("gtx480", "baseline", &dir).unwrap());
        assert!(!design_available("gtx480", "no-such-design", &dir).unwrap());
        assert!(design_available("no-such-config", "baseline", &dir).is_err());
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

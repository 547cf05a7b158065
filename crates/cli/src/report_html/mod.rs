//! `regsim report --html OUT_DIR SOURCE...`: a self-contained page of figures (inline
//! SVG, no scripts, nothing fetched) from statistics files or sweep stores, and the same
//! figures as standalone SVG files for papers.
//!
//! Figures: IPC normalized to a baseline design per workload with geometric means;
//! register-file accesses by storage level per warp instruction; hit ratios (L1D, L2 and
//! every design's `<x>_hits`/`<x>_misses` counters); on-chip energy stacks by structure,
//! normalized to the baseline design's on-chip total (DRAM, priced at a placeholder, is a
//! column of the runs table instead); stall breakdowns; and a per-kernel
//! scatter of each design's cycles against the baseline's (log-log, y = x); with
//! `--reference DIR`, the correlation scatter of `regsim correlate` (the correlate
//! crate's) of the baseline runs against a reference simulator's.
//!
//! The page titles each figure; the SVGs carry no title of their own (a paper captions
//! them), print the value of every bar, and are as wide as their bars and legend.
//!
//! A *point* is one run: workload × config × design × `--set` overrides. A point's
//! baseline is the run of the same workload, config and overrides with the baseline
//! design.

pub mod svg;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use serde_json::Value;

use svg::{ScatterPoint, Series, Stack};

/// One simulation run.
#[derive(Clone, Debug)]
pub struct Point {
    pub workload: String,
    pub config: String,
    pub design: String,
    /// The `--set` overrides other than the design, space-separated.
    pub sets: String,
    pub stats: Value,
}

impl Point {
    /// A point from a `regsim run --stats` document.
    pub fn from_stats(stats: Value, origin: &str) -> Result<Point> {
        if stats["total"]["cycles"].as_u64().is_none() {
            bail!("{origin}: not a timing-mode statistics file (no total.cycles)");
        }
        let program = &stats["program"];
        let name = program["name"].as_str().map(|n| {
            Path::new(n)
                .file_name()
                .map_or(n.to_string(), |f| f.to_string_lossy().into_owned())
        });
        let workload = match name {
            Some(n) => std::iter::once(n)
                .chain(
                    program["args"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str)
                        .map(str::to_string),
                )
                .collect::<Vec<_>>()
                .join(" "),
            None => origin.to_string(),
        };
        let config = stats["gpu"]["name"].as_str().unwrap_or("?").to_string();
        let design = stats["gpu"]["config"]["register_file"]["design"]
            .as_str()
            .unwrap_or("?")
            .to_string();
        let sets = stats["gpu"]["overrides"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter(|o| !o.starts_with("register_file.design="))
            .collect::<Vec<_>>()
            .join(" ");
        Ok(Point {
            workload,
            config,
            design,
            sets,
            stats,
        })
    }

    fn total(&self) -> &Value {
        &self.stats["total"]
    }

    pub fn ipc(&self) -> Option<f64> {
        self.total()["ipc"].as_f64()
    }
}

/// Reads every source: a statistics file (`.json`) or a sweep store.
pub fn load_sources(sources: &[PathBuf]) -> Result<Vec<Point>> {
    let mut points = Vec::new();
    for s in sources {
        points.extend(load_source(s)?);
    }
    if points.is_empty() {
        bail!("no timing-mode runs in the sources");
    }
    Ok(points)
}

/// The points of the successful timing runs of sweep-store rows: workload, config,
/// design and overrides as the spec wrote them.
pub fn points_from_records(records: &[regsim::sweep::RunRecord]) -> Result<Vec<Point>> {
    let mut points = Vec::new();
    for r in records {
        if r.status != regsim::sweep::RunStatus::Ok || r.functional {
            continue;
        }
        let Some(stats) = &r.stats else { continue };
        let mut p = Point::from_stats(stats.clone(), &r.key)?;
        p.workload = r.workload.clone();
        p.config = r.config.clone();
        p.design = r.design.clone();
        p.sets = r
            .sets
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ");
        points.push(p);
    }
    Ok(points)
}

/// The points of one source: a statistics file (`.json`) or a `regsim sweep` store (any
/// other existing file: SQLite).
fn load_source(path: &Path) -> Result<Vec<Point>> {
    let is_json = path.extension().is_some_and(|e| e == "json");
    if !is_json {
        if !path.is_file() {
            bail!("{}: no such statistics file or sweep store", path.display());
        }
        let store = regsim::sweep::Store::open_read_only(path)?;
        return points_from_records(&store.records()?);
    }
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let stats: Value = serde_json::from_str(&text)
        .with_context(|| format!("{}: not valid JSON", path.display()))?;
    Ok(vec![Point::from_stats(stats, &path.display().to_string())?])
}

/// A figure: an id (the SVG file's stem), a title, a caption and the SVG.
pub struct Figure {
    pub id: &'static str,
    pub title: String,
    pub caption: String,
    pub svg: String,
}

/// The points arranged for figures: sorted workloads, variants and the baseline lookup.
pub struct Arrangement<'a> {
    pub points: &'a [Point],
    pub baseline: String,
    pub workloads: Vec<String>,
    /// (config, sets, design) of every variant, sorted, the baseline design first.
    pub variants: Vec<(String, String, String)>,
    multi_config: bool,
    /// Overrides every run has (labels leave them out).
    common_sets: BTreeSet<String>,
}

impl<'a> Arrangement<'a> {
    pub fn new(points: &'a [Point], baseline: &str) -> Arrangement<'a> {
        let workloads: BTreeSet<String> = points.iter().map(|p| p.workload.clone()).collect();
        let mut variants: Vec<(String, String, String)> = points
            .iter()
            .map(|p| (p.config.clone(), p.sets.clone(), p.design.clone()))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        variants.sort_by(|a, b| {
            (&a.0, &a.1, a.2 != baseline, &a.2).cmp(&(&b.0, &b.1, b.2 != baseline, &b.2))
        });
        let configs: BTreeSet<&str> = points.iter().map(|p| p.config.as_str()).collect();
        let mut common_sets: BTreeSet<String> = points
            .first()
            .map(|p| p.sets.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default();
        for p in points {
            let mine: BTreeSet<&str> = p.sets.split_whitespace().collect();
            common_sets.retain(|o| mine.contains(o.as_str()));
        }
        Arrangement {
            points,
            baseline: baseline.to_string(),
            workloads: workloads.into_iter().collect(),
            variants,
            multi_config: configs.len() > 1,
            common_sets,
        }
    }

    /// A variant's label: the design, then the overrides not every run has (last key
    /// component only: `orf_entries=3`), and the config when there are several.
    pub fn label(&self, v: &(String, String, String)) -> String {
        let mut s = v.2.clone();
        let own: Vec<&str> =
            v.1.split_whitespace()
                .filter(|o| !self.common_sets.contains(*o))
                .map(|o| o.rsplit_once('.').map_or(o, |(_, key)| key))
                .collect();
        if !own.is_empty() {
            s.push_str(&format!(" [{}]", own.join(" ")));
        }
        if self.multi_config {
            s.push_str(&format!(" @{}", v.0));
        }
        s
    }

    pub fn get(&self, workload: &str, v: &(String, String, String)) -> Option<&'a Point> {
        self.points
            .iter()
            .find(|p| p.workload == workload && p.config == v.0 && p.sets == v.1 && p.design == v.2)
    }

    /// The baseline run of a point: the baseline design's run of the same workload and
    /// config whose overrides are the most of the point's (all of them when there is
    /// one with the same overrides; a design's own keys have no baseline counterpart).
    pub fn baseline_of(&self, p: &Point) -> Option<&'a Point> {
        self.reference_of(p, &self.baseline, &[])
    }

    /// The run of `design` on a point's workload and config that has every override of
    /// `required` and otherwise only overrides the point has (the most of them, when
    /// several qualify): the run a point is normalized by.
    pub fn reference_of(&self, p: &Point, design: &str, required: &[String]) -> Option<&'a Point> {
        let mine: BTreeSet<&str> = p.sets.split_whitespace().collect();
        self.points
            .iter()
            .filter(|b| {
                b.workload == p.workload
                    && b.config == p.config
                    && b.design == design
                    && required
                        .iter()
                        .all(|o| b.sets.split_whitespace().any(|x| x == o))
                    && b.sets
                        .split_whitespace()
                        .all(|o| mine.contains(o) || required.iter().any(|r| r == o))
            })
            .max_by_key(|b| {
                (
                    b.sets
                        .split_whitespace()
                        .filter(|o| mine.contains(o))
                        .count(),
                    std::cmp::Reverse(&b.sets),
                )
            })
    }

    /// The variants drawn against the baseline (all but the baseline itself, unless the
    /// baseline is all there is).
    fn compared_variants(&self) -> Vec<&(String, String, String)> {
        let others: Vec<&(String, String, String)> = self
            .variants
            .iter()
            .filter(|v| v.2 != self.baseline)
            .collect();
        if others.is_empty() {
            self.variants.iter().collect()
        } else {
            others
        }
    }

    /// Every (workload, variant) with a run, in workload then variant order.
    fn runs(&self) -> Vec<(String, &'a Point)> {
        let mut out = Vec::new();
        for w in &self.workloads {
            for v in &self.variants {
                if let Some(p) = self.get(w, v) {
                    out.push((format!("{w} / {}", self.label(v)), p));
                }
            }
        }
        out
    }
}

/// Geometric mean of positive values (`None` if there are none).
pub fn geomean(values: &[f64]) -> Option<f64> {
    let v: Vec<f64> = values.iter().copied().filter(|x| *x > 0.0).collect();
    if v.is_empty() {
        None
    } else {
        Some((v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp())
    }
}

/// IPC of a point over its baseline's.
pub fn normalized_ipc(a: &Arrangement, p: &Point) -> Option<f64> {
    let b = a.baseline_of(p)?;
    match (p.ipc(), b.ipc()) {
        (Some(x), Some(y)) if y > 0.0 => Some(x / y),
        _ => None,
    }
}

fn fig_ipc(a: &Arrangement) -> Figure {
    let variants = a.compared_variants();
    let mut categories = a.workloads.clone();
    categories.push("geomean".into());
    let series: Vec<Series> = variants
        .iter()
        .map(|v| {
            let mut values: Vec<Option<f64>> = a
                .workloads
                .iter()
                .map(|w| a.get(w, v).and_then(|p| normalized_ipc(a, p)))
                .collect();
            let present: Vec<f64> = values.iter().flatten().copied().collect();
            values.push(geomean(&present));
            Series {
                name: a.label(v),
                values,
            }
        })
        .collect();
    Figure {
        id: "ipc_normalized",
        title: format!("IPC normalized to {}", a.baseline),
        caption: format!(
            "Warp instructions per cycle of each design over the {} design on the same \
             workload, config and overrides, each printed on its bar; the last group is \
             the geometric mean. Bars grow from 1 (the dashed line), and the axis spans the \
             values, not 0 to the largest.",
            a.baseline
        ),
        svg: svg::grouped_bars("", "normalized IPC", &categories, &series, Some(1.0)),
    }
}

/// Events of a run's total, as (structure, access, count).
fn events(p: &Point) -> Vec<(String, String, u64)> {
    p.total()["energy_events"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| {
            Some((
                e["structure"].as_str()?.to_string(),
                e["access"].as_str()?.to_string(),
                e["count"].as_u64()?,
            ))
        })
        .collect()
}

/// The register-file storage levels, from the main file outwards.
const LEVELS: [&str; 8] = [
    "mrf",
    "rfc",
    "orf",
    "lrf",
    "ltrf_cache",
    "cerf_data",
    "ccu",
    "bow_window",
];

fn fig_rf_accesses(a: &Arrangement) -> Figure {
    let runs = a.runs();
    let present: Vec<&str> = LEVELS
        .iter()
        .copied()
        .filter(|l| {
            runs.iter()
                .any(|(_, p)| events(p).iter().any(|(s, _, n)| s == l && *n > 0))
        })
        .collect();
    let names: Vec<String> = present.iter().map(|s| s.to_string()).collect();
    let stacks: Vec<Stack> = runs
        .iter()
        .map(|(label, p)| {
            let ev = events(p);
            let warp = p.total()["warp_instructions"]
                .as_f64()
                .unwrap_or(0.0)
                .max(1.0);
            Stack {
                label: label.clone(),
                parts: present
                    .iter()
                    .map(|l| {
                        ev.iter()
                            .filter(|(s, _, _)| s == l)
                            .map(|(_, _, n)| *n as f64)
                            .sum::<f64>()
                            / warp
                    })
                    .collect(),
            }
        })
        .collect();
    Figure {
        id: "rf_accesses",
        title: "Register-file accesses by level".into(),
        caption: "Warp-wide register reads and writes of each storage level (the energy \
                  events the design reports) per warp instruction."
            .into(),
        svg: svg::stacked_bars("", "accesses per warp instruction", &names, &stacks),
    }
}

/// Hit ratios of a run: L1D, L2, and every `<x>_hits` in the register file's extra
/// counters over `<x>_hits + <x>_misses`, or else over `<x>_operand_reads`.
fn hit_ratios(p: &Point) -> Vec<(String, f64)> {
    let mut out = Vec::new();
    let mem = &p.total()["memory"];
    for (name, key) in [("L1D", "l1d"), ("L2", "l2")] {
        let h = mem[key]["hits"].as_f64().unwrap_or(0.0);
        let m = mem[key]["misses"].as_f64().unwrap_or(0.0);
        if h + m > 0.0 {
            out.push((name.to_string(), h / (h + m)));
        }
    }
    if let Some(extra) = p.total()["register_file"]["extra"].as_object() {
        for (k, v) in extra {
            let Some(prefix) = k.strip_suffix("_hits") else {
                continue;
            };
            let Some(h) = v.as_f64() else { continue };
            let get = |suffix: &str| {
                extra
                    .get(&format!("{prefix}{suffix}"))
                    .and_then(Value::as_f64)
            };
            // Over hits and misses, or over every operand read the design served.
            let accesses = match (get("_misses"), get("_operand_reads")) {
                (Some(m), _) => Some(h + m),
                (None, reads) => reads,
            };
            if let Some(n) = accesses.filter(|n| *n > 0.0) {
                out.push((prefix.to_string(), h / n));
            }
        }
    }
    out
}

fn fig_hit_ratios(a: &Arrangement) -> Figure {
    let runs = a.runs();
    let mut names: Vec<String> = Vec::new();
    for (_, p) in &runs {
        for (n, _) in hit_ratios(p) {
            if !names.contains(&n) {
                names.push(n);
            }
        }
    }
    let categories: Vec<String> = runs.iter().map(|(l, _)| l.clone()).collect();
    let series: Vec<Series> = names
        .iter()
        .map(|n| Series {
            name: n.clone(),
            values: runs
                .iter()
                .map(|(_, p)| {
                    hit_ratios(p)
                        .into_iter()
                        .find(|(m, _)| m == n)
                        .map(|(_, v)| v)
                })
                .collect(),
        })
        .collect();
    Figure {
        id: "hit_ratios",
        title: "Hit ratios".into(),
        caption: "L1D and L2 hits over accesses that hit or missed, and every design's \
                  `<x>_hits` over `<x>_hits + <x>_misses` (or over `<x>_operand_reads`)."
            .into(),
        svg: svg::grouped_bars("", "hit ratio", &categories, &series, None),
    }
}

/// Joules per structure of a run's total.
fn structure_joules(p: &Point) -> Vec<(String, f64)> {
    p.total()["energy"]["structures"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| Some((s["structure"].as_str()?.to_string(), s["joules"].as_f64()?)))
        .collect()
}

/// The structures outside the chip: the stacks of on-chip energy leave them out.
const OFF_CHIP: [&str; 1] = ["dram"];

/// Structures whose per-event energy is a placeholder no paper gives (the energy crate's
/// DRAM and execution defaults), marked as such in the legend.
const PLACEHOLDER_PRICED: [&str; 2] = ["dram", "execute"];

/// A run's (on-chip, off-chip) joules: the statistics' own `on_chip_joules` and
/// `off_chip_joules` where they have them, else the structures split by [`OFF_CHIP`].
pub fn chip_joules(p: &Point) -> Option<(f64, f64)> {
    let e = &p.total()["energy"];
    if let (Some(on), Some(off)) = (e["on_chip_joules"].as_f64(), e["off_chip_joules"].as_f64()) {
        return Some((on, off));
    }
    let structures = structure_joules(p);
    if structures.is_empty() {
        return None;
    }
    let off: f64 = structures
        .iter()
        .filter(|(n, _)| OFF_CHIP.contains(&n.as_str()))
        .map(|(_, j)| j)
        .sum();
    let all: f64 = structures.iter().map(|(_, j)| j).sum();
    Some((all - off, off))
}

fn fig_energy(a: &Arrangement) -> Figure {
    let runs = a.runs();
    let mut names: Vec<String> = Vec::new();
    for (_, p) in &runs {
        for (n, _) in structure_joules(p) {
            if !names.contains(&n) && !OFF_CHIP.contains(&n.as_str()) {
                names.push(n);
            }
        }
    }
    names.sort();
    let stacks: Vec<Stack> = runs
        .iter()
        .map(|(label, p)| {
            let base = a
                .baseline_of(p)
                .and_then(chip_joules)
                .map(|(on, _)| on)
                .filter(|j| *j > 0.0)
                .unwrap_or(1.0);
            let js = structure_joules(p);
            Stack {
                label: label.clone(),
                parts: names
                    .iter()
                    .map(|n| {
                        js.iter()
                            .find(|(m, _)| m == n)
                            .map_or(0.0, |(_, j)| j / base)
                    })
                    .collect(),
            }
        })
        .collect();
    let legend: Vec<String> = names
        .iter()
        .map(|n| {
            if PLACEHOLDER_PRICED.contains(&n.as_str()) {
                format!("{n} (placeholder price)")
            } else {
                n.clone()
            }
        })
        .collect();
    Figure {
        id: "energy",
        title: format!("On-chip energy by structure, normalized to {}", a.baseline),
        caption: format!(
            "Joules per on-chip structure (energy crate defaults unless the config \
             overrides `energy.*`) over the {} design's on-chip total on the same workload; \
             each bar's total is printed over it. Off-chip DRAM energy, priced at a \
             placeholder no paper gives, is left out of the bars and listed per run in the \
             table above.",
            a.baseline
        ),
        svg: svg::stacked_bars("", "on-chip energy / baseline's", &legend, &stacks),
    }
}

const STALLS: [&str; 10] = [
    "issued",
    "no_ready_warp",
    "scoreboard",
    "memory",
    "register_file",
    "no_free_collector",
    "bank_conflict",
    "pipeline_busy",
    "barrier",
    "idle",
];

fn fig_stalls(a: &Arrangement) -> Figure {
    let runs = a.runs();
    let names: Vec<String> = STALLS.iter().map(|s| s.to_string()).collect();
    let stacks: Vec<Stack> = runs
        .iter()
        .map(|(label, p)| {
            let s = &p.total()["stalls"];
            let v: Vec<f64> = STALLS
                .iter()
                .map(|k| s[*k].as_f64().unwrap_or(0.0))
                .collect();
            let total: f64 = v.iter().sum::<f64>().max(1.0);
            Stack {
                label: label.clone(),
                parts: v.iter().map(|x| x / total).collect(),
            }
        })
        .collect();
    Figure {
        id: "stalls",
        title: "Scheduler cycles by outcome".into(),
        caption: "Every scheduler-cycle is an issue or exactly one stall reason (the timing \
                  model's breakdown), as a fraction."
            .into(),
        svg: svg::stacked_bars("", "fraction", &names, &stacks),
    }
}

/// Per-kernel cycles of every compared variant against its baseline run.
fn fig_scatter(a: &Arrangement) -> Figure {
    let variants = a.compared_variants();
    let names: Vec<String> = variants.iter().map(|v| a.label(v)).collect();
    let mut points = Vec::new();
    for (i, v) in variants.iter().enumerate() {
        for w in &a.workloads {
            let Some(p) = a.get(w, v) else { continue };
            let Some(b) = a.baseline_of(p) else { continue };
            let kp = p.stats["kernels"].as_array().cloned().unwrap_or_default();
            let kb = b.stats["kernels"].as_array().cloned().unwrap_or_default();
            for (n, (x, y)) in kb.iter().zip(&kp).enumerate() {
                if let (Some(x), Some(y)) = (x["cycles"].as_f64(), y["cycles"].as_f64()) {
                    points.push(ScatterPoint {
                        x,
                        y,
                        series: i,
                        label: format!("{w} kernel {n}"),
                    });
                }
            }
        }
    }
    Figure {
        id: "cycles_scatter",
        title: format!("Per-kernel cycles against {}", a.baseline),
        caption: format!(
            "Each kernel launch's cycles under a design (y) against the {} design (x), \
             matched by launch order; points below the line are faster.",
            a.baseline
        ),
        svg: svg::scatter_loglog(
            "",
            &format!("{} cycles", a.baseline),
            "design cycles",
            &names,
            &points,
        ),
    }
}

/// The correlation scatter of `regsim correlate` (the correlate crate's comparison and
/// SVG): per-kernel cycles of the baseline design's runs against a reference
/// simulator's, from `reference` (one `<program>.json` per program).
pub fn fig_correlation(points: &[Point], baseline: &str, reference: &Path) -> Result<Figure> {
    let references = correlate::load_reference_dir(reference, &Default::default())?;
    for s in &references.skipped {
        eprintln!("warning: {s}");
    }
    let runs = points
        .iter()
        .filter(|p| p.design == baseline)
        .map(|p| correlate::input::RegsimProgram::from_json(&p.stats, Path::new(&p.workload)))
        .collect::<Result<Vec<_>, _>>()?;
    let c = correlate::correlate(&references.items, &runs);
    let mut scatter = c.scatter(correlate::Metric::Cycles);
    // The page titles the figure; the SVG keeps its caption (kernels, MAPE, Pearson r).
    let title = std::mem::take(&mut scatter.title);
    Ok(Figure {
        id: "correlation",
        title,
        caption: format!(
            "Per-kernel cycles of the {baseline} runs (y) against the reference simulator's \
             in {} (x), matched by program and launch order; one colour per workload, the \
             shaded bands are within ±10% and ±25% of the reference.",
            reference.display()
        ),
        svg: correlate::svg::scatter_svg(&scatter),
    })
}

/// Every figure of the report; with `reference`, the correlation scatter too.
pub fn figures(points: &[Point], baseline: &str) -> Vec<Figure> {
    let a = Arrangement::new(points, baseline);
    vec![
        fig_ipc(&a),
        fig_rf_accesses(&a),
        fig_hit_ratios(&a),
        fig_energy(&a),
        fig_stalls(&a),
        fig_scatter(&a),
    ]
}

/// The page: a title, the list of runs, then every figure inline.
pub fn page(points: &[Point], baseline: &str, figures: &[Figure]) -> String {
    let mut out = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>regsim report</title><style>body{font-family:'DejaVu Sans',Arial,sans-serif;\
         margin:24px;color:#222}figure{display:inline-block;vertical-align:top;margin:12px 24px 12px 0;\
         max-width:100%;overflow-x:auto}figure h2{font-size:16px;margin:4px 0}figcaption{color:#555;\
         font-size:12px;max-width:36em}table{border-collapse:collapse;font-size:12px}td,th{border:1px solid \
         #ccc;padding:2px 6px;text-align:right}td:first-child,th:first-child{text-align:left}\
         </style></head><body>\n<h1>regsim report</h1>\n",
    );
    let a = Arrangement::new(points, baseline);
    let shown = a.runs().len();
    let repeated = points.len() - shown;
    let repeats = if repeated == 0 {
        String::new()
    } else {
        format!(
            " ({repeated} more run{} of a point already listed left out: the sources hold \
             the same workload, config, design and overrides more than once, and the \
             first one read is shown)",
            if repeated == 1 { "" } else { "s" }
        )
    };
    out.push_str(&format!(
        "<p>{shown} runs{repeats}; baseline design <code>{}</code>. Every figure is also a \
         standalone SVG file beside this page.</p>\n",
        svg::escape(baseline)
    ));
    out.push_str(
        "<table class=\"runs\"><tr><th>workload</th><th>config</th><th>design</th>\
         <th>overrides</th><th>cycles</th><th>IPC</th><th>IPC / baseline</th>\
         <th>on-chip energy (J)</th><th>DRAM energy (J, placeholder price)</th></tr>\n",
    );
    for w in &a.workloads {
        for v in &a.variants {
            if let Some(p) = a.get(w, v) {
                let norm = normalized_ipc(&a, p).map_or("-".into(), |x| format!("{x:.3}"));
                let (on, off) = chip_joules(p).map_or(("-".into(), "-".into()), |(on, off)| {
                    (format!("{on:.3e}"), format!("{off:.3e}"))
                });
                out.push_str(&format!(
                    "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.3}</td>\
                     <td>{norm}</td><td>{on}</td><td>{off}</td></tr>\n",
                    svg::escape(w),
                    svg::escape(&p.config),
                    svg::escape(&p.design),
                    svg::escape(&p.sets),
                    p.total()["cycles"].as_u64().unwrap_or(0),
                    p.ipc().unwrap_or(0.0),
                ));
            }
        }
    }
    out.push_str("</table>\n");
    for f in figures {
        out.push_str(&format!(
            "<figure id=\"{}\"><h2>{}</h2>\n{}<figcaption>{} (<a href=\"{}.svg\">{}.svg</a>)\
             </figcaption></figure>\n",
            f.id,
            svg::escape(&f.title),
            f.svg,
            svg::escape(&f.caption),
            f.id,
            f.id
        ));
    }
    out.push_str("</body></html>\n");
    out
}

/// Writes `OUT_DIR/index.html` and `OUT_DIR/<figure>.svg` (with `reference`, also the
/// correlation scatter against that reference directory); returns the page's path.
pub fn write(
    out_dir: &Path,
    points: &[Point],
    baseline: &str,
    reference: Option<&Path>,
) -> Result<PathBuf> {
    if !points.iter().any(|p| p.design == baseline) {
        let designs: BTreeSet<&str> = points.iter().map(|p| p.design.as_str()).collect();
        return Err(anyhow!(
            "no run has the baseline design `{baseline}` (designs in the sources: {}); \
             choose one with --baseline",
            designs.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
    std::fs::create_dir_all(out_dir).with_context(|| format!("creating {}", out_dir.display()))?;
    let mut figs = figures(points, baseline);
    if let Some(r) = reference {
        figs.push(fig_correlation(points, baseline, r)?);
    }
    for f in &figs {
        let path = out_dir.join(format!("{}.svg", f.id));
        std::fs::write(&path, &f.svg).with_context(|| format!("writing {}", path.display()))?;
    }
    let index = out_dir.join("index.html");
    std::fs::write(&index, page(points, baseline, &figs))
        .with_context(|| format!("writing {}", index.display()))?;
    Ok(index)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn point(workload: &str, design: &str, ipc: f64, cycles: u64, mrf: u64) -> Point {
        let stats = json!({
            "program": {"name": format!("/x/{workload}"), "args": []},
            "gpu": {"name": "gtx480", "overrides": [format!("register_file.design={design}")],
                    "config": {"register_file": {"design": design}}},
            "kernels": [{"cycles": cycles}],
            "total": {"cycles": cycles, "ipc": ipc, "warp_instructions": 100,
                      "stalls": {"issued": 3, "memory": 1},
                      "memory": {"l1d": {"hits": 3, "misses": 1}, "l2": {"hits": 0, "misses": 0}},
                      "register_file": {"extra": {"rfc_hits": 1, "rfc_misses": 3}},
                      "energy_events": [{"structure": "mrf", "access": "read", "count": mrf},
                                        {"structure": "rfc", "access": "read", "count": 10}],
                      "energy": {"total_joules": 2.0,
                                 "structures": [{"structure": "mrf", "joules": 1.5},
                                                {"structure": "rfc", "joules": 0.5}]}}
        });
        Point::from_stats(stats, "t").unwrap()
    }

    #[test]
    fn normalization_geomean_and_marks() {
        let pts = vec![
            point("a", "baseline", 1.0, 100, 50),
            point("a", "rfc", 2.0, 50, 20),
            point("b", "baseline", 4.0, 100, 50),
            point("b", "rfc", 2.0, 200, 20),
        ];
        let a = Arrangement::new(&pts, "baseline");
        assert_eq!(a.workloads, ["a", "b"]);
        assert_eq!(normalized_ipc(&a, &pts[1]), Some(2.0));
        assert_eq!(normalized_ipc(&a, &pts[3]), Some(0.5));
        // geomean(2, 0.5) = 1.
        assert!((geomean(&[2.0, 0.5]).unwrap() - 1.0).abs() < 1e-12);
        let figs = figures(&pts, "baseline");
        // IPC: one series (rfc) over two workloads and the geomean.
        assert_eq!(figs[0].svg.matches("class=\"bar\"").count(), 3);
        // Accesses: four runs × two levels.
        assert_eq!(figs[1].svg.matches("class=\"segment\"").count(), 8);
        // Hit ratios: L1D (3/4) and rfc (1/4) per run; L2 had no accesses.
        assert_eq!(figs[2].svg.matches("class=\"bar\"").count(), 8);
        assert_eq!(
            hit_ratios(&pts[0]),
            [("L1D".into(), 0.75), ("rfc".into(), 0.25)]
        );
        // Energy stacks: two structures per run; stalls: issued and memory per run.
        assert_eq!(figs[3].svg.matches("class=\"segment\"").count(), 8);
        assert_eq!(figs[4].svg.matches("class=\"segment\"").count(), 8);
        // Scatter: one kernel per compared run.
        assert_eq!(figs[5].svg.matches("class=\"point\"").count(), 2);
        let html = page(&pts, "baseline", &figs);
        assert_eq!(html.matches("<svg").count(), 6);
        // Self-contained: nothing to fetch, nothing to run.
        assert!(!html.contains("src=") && !html.contains("<script"));
    }

    #[test]
    fn a_baseline_is_the_run_with_the_most_of_a_points_overrides() {
        let mut pts = vec![
            point("a", "baseline", 1.0, 1, 1),
            point("a", "baseline", 2.0, 1, 1),
            point("a", "rfc", 3.0, 1, 1),
            point("a", "rfc", 4.0, 1, 1),
        ];
        pts[1].sets = "sm.scheduler=two_level".into();
        pts[2].sets = "register_file.rfc.entries=6 sm.scheduler=two_level".into();
        pts[3].sets = "register_file.rfc.entries=3 sm.scheduler=lrr".into();
        let a = Arrangement::new(&pts, "baseline");
        assert_eq!(a.baseline_of(&pts[2]).and_then(Point::ipc), Some(2.0));
        assert_eq!(a.baseline_of(&pts[3]).and_then(Point::ipc), Some(1.0));
        let v = ("gtx480".to_string(), pts[2].sets.clone(), "rfc".to_string());
        assert_eq!(a.label(&v), "rfc [entries=6 scheduler=two_level]");
    }

    #[test]
    fn a_missing_baseline_is_named() {
        let pts = vec![point("a", "rfc", 1.0, 1, 1)];
        let dir = std::env::temp_dir().join("regsim-report-html-missing-baseline");
        let e = write(&dir, &pts, "baseline", None).unwrap_err().to_string();
        assert!(e.contains("`baseline`") && e.contains("rfc"), "{e}");
    }

    #[test]
    fn on_chip_energy_leaves_dram_out_and_marks_placeholders() {
        let mut pts = vec![
            point("a", "baseline", 1.0, 100, 50),
            point("a", "rfc", 1.0, 100, 20),
        ];
        for p in &mut pts {
            p.stats["total"]["energy"]["structures"] = json!([
                {"structure": "mrf", "joules": 1.0},
                {"structure": "execute", "joules": 1.0},
                {"structure": "dram", "joules": 8.0}]);
        }
        assert_eq!(chip_joules(&pts[0]), Some((2.0, 8.0)));
        let figs = figures(&pts, "baseline");
        let energy = &figs[3].svg;
        assert!(!energy.contains(">dram"), "{energy}");
        assert!(energy.contains("execute (placeholder price)"));
        // Each run's on-chip total over the baseline's: 1 (two structures of 0.5).
        assert_eq!(energy.matches("class=\"segment\"").count(), 4);
        assert!(energy.contains("/ mrf: 0.5000"));
        // The statistics' own split, where they have it, wins.
        pts[1].stats["total"]["energy"]["on_chip_joules"] = json!(3.0);
        pts[1].stats["total"]["energy"]["off_chip_joules"] = json!(7.0);
        assert_eq!(chip_joules(&pts[1]), Some((3.0, 7.0)));
    }

    #[test]
    fn the_header_counts_the_rows_of_the_table() {
        // The same point twice (a merged report of overlapping sources): one row.
        let pts: Vec<Point> = ["baseline", "rfc", "rfc"]
            .into_iter()
            .map(|d| point("a", d, 1.0, 100, 50))
            .collect();
        let html = page(&pts, "baseline", &[]);
        assert_eq!(html.matches("<tr><td>").count(), 2);
        assert!(
            html.contains("<p>2 runs (1 more run of a point already listed left out"),
            "{html}"
        );
        let html = page(&pts[..2], "baseline", &[]);
        assert!(html.contains("<p>2 runs; baseline design"), "{html}");
    }
}

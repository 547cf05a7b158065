//! The headline figures of each paper ([`figures.toml`](figures.toml)) computed from the
//! runs: which statistic, what each run is divided by (the figure's `normalize_to`
//! reference, as the paper normalizes), the summary over workloads, and the per-workload
//! and per-class tables under each headline.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{anyhow, bail, Result};
use serde::Deserialize;

use super::classes::{Classes, Classification};
use crate::report_html::{geomean, Arrangement, Point};

/// `figures.toml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FigureFile {
    pub quick: Quick,
    pub figure: Vec<FigureDef>,
}

/// What `regsim paper X --quick` leaves out (see `figures.toml`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Quick {
    /// Workloads no quick run includes ...
    pub leave_out: Vec<String>,
    /// ... except the papers named here, whose quick runs keep these of them.
    #[serde(default)]
    pub keep: std::collections::BTreeMap<String, Vec<String>>,
}

impl Quick {
    /// The workloads `paper`'s quick run leaves out.
    pub fn leave_out_of(&self, paper: &str) -> Vec<String> {
        let keep = self.keep.get(paper);
        self.leave_out
            .iter()
            .filter(|w| !keep.is_some_and(|k| k.contains(w)))
            .cloned()
            .collect()
    }
}

/// One headline figure of a paper.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FigureDef {
    pub paper: String,
    /// The SVG file's stem (unique within the paper).
    pub id: String,
    pub title: String,
    pub source: String,
    pub metric: Metric,
    /// For `extra_ratio`: the counters summed above the line.
    #[serde(default)]
    pub numerator: Vec<String>,
    /// For `extra_ratio`: the counters summed below it (one name or a list).
    #[serde(default, deserialize_with = "one_or_many")]
    pub denominator: Vec<String>,
    /// The run each run is divided by; none: the metric as it is.
    #[serde(default)]
    pub normalize_to: Option<Reference>,
    pub summary: Summary,
    /// The classification of `workloads/classes.toml` the tables break down by.
    #[serde(default)]
    pub classes: Option<String>,
    /// A maximum-tolerable figure: each row's value per workload is the largest value
    /// of a swept key up to which the normalized metric stays at or above a ratio.
    #[serde(default)]
    pub tolerance: Option<Tolerance>,
    pub rows: Vec<RowDef>,
}

/// `tolerance = { key = "K", min_ratio = R }`: for each row, its runs that set `K` (and
/// otherwise exactly the row's `sets`) form a ladder by `K`'s value; a workload's value
/// is the largest rung such that every rung up to it has the normalized metric at or
/// above `R` (LTRF §7.2's maximum tolerable latency: `R` = 0.95), 0 when the first rung
/// fails. The ladder's top is the cap: a workload there may tolerate more, and the
/// tables say how many are.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Tolerance {
    pub key: String,
    pub min_ratio: f64,
    /// The rungs a `--quick` run keeps (every rung when empty).
    #[serde(default)]
    pub quick: Vec<String>,
}

/// The reference run of a normalized figure: for a run of workload W on config C, the
/// run of `design` on W and C whose overrides include every one of `sets` and otherwise
/// only overrides the run has itself (the most of them, when several qualify). With no
/// `sets`, that is the design's run at the same settings.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Reference {
    pub design: String,
    #[serde(default)]
    pub sets: Vec<String>,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    Ipc,
    RfEnergy,
    SmEnergy,
    TotalEnergy,
    OnChipEnergy,
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

impl Summary {
    pub fn name(self) -> &'static str {
        match self {
            Summary::Geomean => "geomean",
            Summary::Mean => "mean",
        }
    }

    /// The summary of `values` (`None` when there are none).
    pub fn of(self, values: &[f64]) -> Option<f64> {
        if values.is_empty() {
            return None;
        }
        match self {
            Summary::Geomean => geomean(values),
            Summary::Mean => Some(values.iter().sum::<f64>() / values.len() as f64),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RowDef {
    pub design: String,
    /// Only the variants with all of these overrides (the paper's configuration).
    #[serde(default)]
    pub sets: Vec<String>,
    /// The paper's value over all its workloads, in the same unit as ours.
    #[serde(default)]
    pub paper: Option<f64>,
    /// The paper's value over the workloads of one class.
    #[serde(default)]
    pub paper_by_class: BTreeMap<String, f64>,
    /// The paper's value for one workload of ours (the nearest to the paper's benchmark;
    /// the note says which benchmark): a headline row of its own beside our value.
    #[serde(default)]
    pub paper_by_workload: BTreeMap<String, f64>,
    pub note: String,
}

/// A TOML string or array of strings, as a list.
fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match OneOrMany::deserialize(d)? {
        OneOrMany::One(s) => vec![s],
        OneOrMany::Many(v) => v,
    })
}

/// Every figure definition and the quick subset (the embedded `figures.toml`).
pub fn figure_file() -> Result<FigureFile> {
    let f: FigureFile =
        toml::from_str(include_str!("figures.toml")).map_err(|e| anyhow!("figures.toml: {e}"))?;
    let mut ids = BTreeSet::new();
    for d in &f.figure {
        if !ids.insert((d.paper.as_str(), d.id.as_str())) {
            bail!(
                "figures.toml: two figures of {} have the id {:?}",
                d.paper,
                d.id
            );
        }
    }
    Ok(f)
}

/// Every figure definition.
pub fn figure_defs() -> Result<Vec<FigureDef>> {
    Ok(figure_file()?.figure)
}

/// A variant of the runs: (config, sets, design).
pub type Variant = (String, String, String);

fn has_all(sets: &str, wanted: &[String]) -> bool {
    wanted
        .iter()
        .all(|o| sets.split_whitespace().any(|x| x == o))
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
            Metric::OnChipEnergy => energy("on_chip_joules").or_else(|| {
                // Before the energy model split it out: everything but the DRAM.
                let dram: f64 = t["energy"]["structures"]
                    .as_array()?
                    .iter()
                    .filter(|s| s["structure"] == "dram")
                    .filter_map(|s| s["joules"].as_f64())
                    .sum();
                Some(energy("total_joules")? - dram)
            }),
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
                if self.denominator.is_empty() {
                    return None;
                }
                let n = self.numerator.iter().map(|k| get(k)).sum::<Option<f64>>()?;
                let d = self
                    .denominator
                    .iter()
                    .map(|k| get(k))
                    .sum::<Option<f64>>()?;
                (d > 0.0).then(|| n / d)
            }
        }
    }

    /// The run `p` is divided by (see [`Reference`]); `None` for an unnormalized figure
    /// or when the runs lack it.
    pub fn reference_of<'a>(&self, a: &Arrangement<'a>, p: &Point) -> Option<&'a Point> {
        let r = self.normalize_to.as_ref()?;
        a.reference_of(p, &r.design, &r.sets)
    }

    /// The figure's value of one run: the metric, over the reference's when normalized.
    pub fn normalized(&self, a: &Arrangement, p: &Point) -> Option<f64> {
        let x = self.value(p)?;
        if self.normalize_to.is_none() {
            return Some(x);
        }
        let b = self.value(self.reference_of(a, p)?)?;
        (b > 0.0).then(|| x / b)
    }

    /// The variants a row selects, in the arrangement's order.
    pub fn variants_of<'v>(&self, a: &'v Arrangement, r: &RowDef) -> Vec<&'v Variant> {
        a.variants
            .iter()
            .filter(|v| v.2 == r.design && has_all(&v.1, &r.sets))
            .collect()
    }

    /// What the values are divided by, in words.
    pub fn divided_by(&self) -> String {
        match &self.normalize_to {
            None => "not normalized".into(),
            Some(r) if r.sets.is_empty() => {
                format!("each run over the {} run at the same settings", r.design)
            }
            Some(r) => format!(
                "each run over the {} run with {} (and otherwise the run's own settings)",
                r.design,
                r.sets.join(" ")
            ),
        }
    }
}

/// One column of a figure: a variant a row selects, and its value per workload.
pub struct Column<'f> {
    pub row: &'f RowDef,
    /// `None`: the row selected no run.
    pub label: Option<String>,
    pub values: BTreeMap<String, f64>,
    /// A tolerance figure's cap: the largest value swept.
    pub cap: Option<f64>,
}

impl Column<'_> {
    /// Workloads whose value reached the cap.
    fn at_cap(&self) -> usize {
        self.cap
            .map_or(0, |cap| self.values.values().filter(|v| **v >= cap).count())
    }

    fn cell(&self, v: Option<f64>) -> String {
        match (v, self.cap) {
            (Some(v), Some(cap)) if v >= cap => format!(">={cap}"),
            (Some(v), Some(_)) => format!("{v}"),
            _ => f3(v),
        }
    }
}

/// The ladders of a tolerance figure's row: per config, the runs of `r`'s design that set
/// `t.key` and otherwise exactly `r.sets`, by the key's value.
fn ladders<'v>(
    a: &'v Arrangement,
    r: &RowDef,
    t: &Tolerance,
) -> BTreeMap<String, Vec<(f64, &'v Variant)>> {
    let prefix = format!("{}=", t.key);
    let wanted: BTreeSet<&str> = r.sets.iter().map(String::as_str).collect();
    let mut out: BTreeMap<String, Vec<(f64, &Variant)>> = BTreeMap::new();
    for v in a.variants.iter().filter(|v| v.2 == r.design) {
        let mut rung = None;
        let mut rest = BTreeSet::new();
        for o in v.1.split_whitespace() {
            match o.strip_prefix(prefix.as_str()) {
                Some(x) => rung = x.parse::<f64>().ok(),
                None => {
                    rest.insert(o);
                }
            }
        }
        if let Some(x) = rung.filter(|_| rest == wanted) {
            out.entry(v.0.clone()).or_default().push((x, v));
        }
    }
    for l in out.values_mut() {
        l.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    out
}

/// A tolerance figure's columns for row `r`: one per config.
fn tolerance_columns<'f>(
    def: &FigureDef,
    t: &Tolerance,
    a: &Arrangement,
    r: &'f RowDef,
) -> Vec<Column<'f>> {
    let multi = a
        .variants
        .iter()
        .map(|v| &v.0)
        .collect::<BTreeSet<_>>()
        .len()
        > 1;
    let mut cols = Vec::new();
    for (config, ladder) in ladders(a, r, t) {
        let cap = ladder.last().map_or(0.0, |l| l.0);
        let mut values = BTreeMap::new();
        for w in &a.workloads {
            let mut tolerable = None;
            for (x, v) in &ladder {
                let ok = a
                    .get(w, v)
                    .and_then(|p| def.normalized(a, p))
                    .map(|y| y >= t.min_ratio);
                match ok {
                    Some(true) => tolerable = Some(*x),
                    Some(false) => {
                        tolerable = tolerable.or(Some(0.0));
                        break;
                    }
                    None => break,
                }
            }
            if let Some(x) = tolerable {
                values.insert(w.clone(), x);
            }
        }
        let mut label = r.design.clone();
        if !r.sets.is_empty() {
            label.push_str(&format!(" [{}]", r.sets.join(" ")));
        }
        if multi {
            label.push_str(&format!(" @{config}"));
        }
        label.push_str(&format!(" (cap {cap})"));
        cols.push(Column {
            row: r,
            label: Some(label),
            values,
            cap: Some(cap),
        });
    }
    cols
}

impl Column<'_> {
    /// The values of the workloads `keep` accepts.
    fn values_where(&self, keep: impl Fn(&str) -> bool) -> Vec<f64> {
        self.values
            .iter()
            .filter(|(w, _)| keep(w))
            .map(|(_, v)| *v)
            .collect()
    }
}

/// A figure computed from the runs.
pub struct Computed<'f> {
    pub def: &'f FigureDef,
    pub columns: Vec<Column<'f>>,
    /// The figure's classification, when it has one and the classes file has it.
    pub classes: Option<&'f Classification>,
    /// Workloads with a value in some column, sorted.
    pub workloads: Vec<String>,
}

/// The figure `def` from the runs `a`.
pub fn compute<'f>(def: &'f FigureDef, a: &Arrangement, classes: &'f Classes) -> Computed<'f> {
    let mut columns = Vec::new();
    for r in &def.rows {
        if let Some(t) = &def.tolerance {
            let cols = tolerance_columns(def, t, a, r);
            if cols.is_empty() {
                columns.push(Column {
                    row: r,
                    label: None,
                    values: BTreeMap::new(),
                    cap: None,
                });
            }
            columns.extend(cols);
            continue;
        }
        let variants = def.variants_of(a, r);
        if variants.is_empty() {
            columns.push(Column {
                row: r,
                label: None,
                values: BTreeMap::new(),
                cap: None,
            });
        }
        for v in variants {
            let values = a
                .workloads
                .iter()
                .filter_map(|w| {
                    let p = a.get(w, v)?;
                    Some((w.clone(), def.normalized(a, p)?))
                })
                .collect();
            columns.push(Column {
                row: r,
                label: Some(a.label(v)),
                values,
                cap: None,
            });
        }
    }
    let workloads: BTreeSet<String> = columns
        .iter()
        .flat_map(|c| c.values.keys().cloned())
        .collect();
    Computed {
        def,
        columns,
        classes: def.classes.as_deref().and_then(|n| classes.get(n)),
        workloads: workloads.into_iter().collect(),
    }
}

/// A table: a header, rows of cells, and which columns are numbers (right-aligned).
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub numeric: Vec<bool>,
}

impl Table {
    /// Plain text (two-space indented, aligned) or Markdown.
    pub fn render(&self, markdown: bool) -> String {
        let mut out = String::new();
        if markdown {
            out.push_str(&format!("| {} |\n", self.header.join(" | ")));
            let rule: Vec<&str> = self
                .numeric
                .iter()
                .map(|n| if *n { "---:" } else { "---" })
                .collect();
            out.push_str(&format!("| {} |\n", rule.join(" | ")));
            for r in &self.rows {
                out.push_str(&format!("| {} |\n", r.join(" | ")));
            }
            return out;
        }
        let widths: Vec<usize> = (0..self.header.len())
            .map(|c| {
                self.rows
                    .iter()
                    .filter_map(|r| r.get(c))
                    .map(|s| s.chars().count())
                    .chain([self.header[c].chars().count()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let line = |cells: &[String]| {
            let s: Vec<String> = cells
                .iter()
                .enumerate()
                .map(|(c, cell)| {
                    let w = widths[c];
                    if self.numeric[c] {
                        format!("{cell:>w$}")
                    } else {
                        format!("{cell:<w$}")
                    }
                })
                .collect();
            format!("  {}\n", s.join("  ").trim_end())
        };
        out.push_str(&line(&self.header));
        for r in &self.rows {
            out.push_str(&line(r));
        }
        out
    }
}

fn f3(x: Option<f64>) -> String {
    x.map_or("-".into(), |x| format!("{x:.3}"))
}

fn range(values: &[f64]) -> String {
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if values.is_empty() {
        "-".into()
    } else {
        format!("{min:.3}..{max:.3}")
    }
}

impl Computed<'_> {
    /// One row per column (the paper's number beside ours), then, with classes, one row
    /// per column and class.
    pub fn headline(&self) -> Table {
        let s = self.def.summary;
        let mut rows = Vec::new();
        for c in &self.columns {
            let paper = c.row.paper.map_or("-".to_string(), |p| format!("{p:.3}"));
            let Some(label) = &c.label else {
                rows.push(vec![
                    c.row.design.clone(),
                    "not run".into(),
                    "-".into(),
                    "-".into(),
                    paper,
                    c.row.note.clone(),
                ]);
                continue;
            };
            let all = c.values_where(|_| true);
            let note = match c.cap {
                Some(cap) => format!(
                    "{} ({} of {} workloads at the {cap} cap)",
                    c.row.note,
                    c.at_cap(),
                    all.len()
                ),
                None => c.row.note.clone(),
            };
            rows.push(vec![
                label.clone(),
                f3(s.of(&all)),
                all.len().to_string(),
                range(&all),
                paper,
                note,
            ]);
        }
        for c in &self.columns {
            let Some(label) = &c.label else { continue };
            for (w, paper) in &c.row.paper_by_workload {
                let v: Vec<f64> = c.values.get(w).copied().into_iter().collect();
                rows.push(vec![
                    format!("{label} · {w}"),
                    f3(v.first().copied()),
                    v.len().to_string(),
                    range(&v),
                    f3(Some(*paper)),
                    String::new(),
                ]);
            }
        }
        if let Some(cl) = self.classes {
            for class in cl.class_names() {
                for c in &self.columns {
                    let Some(label) = &c.label else { continue };
                    let v = c.values_where(|w| cl.class_of(w) == Some(class));
                    let paper = c.row.paper_by_class.get(class);
                    if v.is_empty() && paper.is_none() {
                        continue;
                    }
                    rows.push(vec![
                        format!("{label} · {class}"),
                        f3(s.of(&v)),
                        v.len().to_string(),
                        range(&v),
                        f3(paper.copied()),
                        String::new(),
                    ]);
                }
            }
        }
        Table {
            header: [
                "design",
                "regsim",
                "workloads",
                "range",
                "paper",
                "paper's figure",
            ]
            .map(String::from)
            .to_vec(),
            rows,
            numeric: vec![false, true, true, true, true, false],
        }
    }

    /// Workloads × columns, then the summary, min and max of each column, and the
    /// summary of each class.
    pub fn per_workload(&self) -> Table {
        let cols: Vec<&Column> = self.columns.iter().filter(|c| c.label.is_some()).collect();
        let with_class = self.classes.is_some();
        let mut header = vec!["workload".to_string()];
        if with_class {
            header.push("class".into());
        }
        header.extend(cols.iter().filter_map(|c| c.label.clone()));
        let lead = |name: String, class: String| {
            let mut r = vec![name];
            if with_class {
                r.push(class);
            }
            r
        };
        let mut rows = Vec::new();
        for w in &self.workloads {
            let class = self
                .classes
                .and_then(|cl| cl.class_of(w))
                .unwrap_or("-")
                .to_string();
            let mut r = lead(w.clone(), class);
            r.extend(cols.iter().map(|c| c.cell(c.values.get(w).copied())));
            rows.push(r);
        }
        let s = self.def.summary;
        let summary_row = |name: String, keep: &dyn Fn(&str) -> bool| {
            let mut r = lead(name, String::new());
            r.extend(cols.iter().map(|c| f3(s.of(&c.values_where(keep)))));
            r
        };
        rows.push(summary_row(
            format!("{} ({})", s.name(), self.workloads.len()),
            &|_| true,
        ));
        for (name, pick) in [("min", f64::min as fn(f64, f64) -> f64), ("max", f64::max)] {
            let mut r = lead(name.into(), String::new());
            r.extend(cols.iter().map(|c| {
                let v = c.values_where(|_| true);
                f3(v.iter().copied().reduce(pick))
            }));
            rows.push(r);
        }
        if let Some(cl) = self.classes {
            for class in cl.class_names() {
                let n = self
                    .workloads
                    .iter()
                    .filter(|w| cl.class_of(w) == Some(class))
                    .count();
                if n == 0 {
                    continue;
                }
                rows.push(summary_row(format!("{}, {class} ({n})", s.name()), &|w| {
                    cl.class_of(w) == Some(class)
                }));
            }
        }
        let mut numeric = vec![false; if with_class { 2 } else { 1 }];
        numeric.extend(cols.iter().map(|_| true));
        Table {
            header,
            rows,
            numeric,
        }
    }
}

/// The tables of `paper` from the runs: per figure, the headline (the paper's number
/// beside ours), what it is divided by, and the per-workload table.
pub fn tables(paper: &str, points: &[Point], classes: &Classes, markdown: bool) -> Result<String> {
    let a = Arrangement::new(points, "baseline");
    let defs = figure_defs()?;
    let mut out = String::new();
    for f in defs.iter().filter(|f| f.paper == paper) {
        let c = compute(f, &a, classes);
        out.push_str(&format!("\n{} ({})\n", f.title, f.source));
        out.push_str(&format!("normalized: {}\n", f.divided_by()));
        out.push_str(&c.headline().render(markdown));
        if !c.workloads.is_empty() {
            out.push_str(&format!("\n{}, per workload\n", f.title));
            out.push_str(&c.per_workload().render(markdown));
        }
    }
    Ok(out)
}

/// Known answers: each paper's figures on a small synthetic sweep store whose rows have
/// hand-chosen ratios, so a wrong reference or a wrong mean gives a different number.
#[cfg(test)]
mod known_answers {
    use super::*;
    use regsim::sweep::{RunRecord, RunStatus, Store};
    use serde_json::{json, Value};

    /// One hand-made run: workload, design, `key=value` overrides, statistics totals.
    struct Row<'a> {
        workload: &'a str,
        config: &'a str,
        design: &'a str,
        sets: &'a [&'a str],
        total: Value,
    }

    fn row<'a>(workload: &'a str, design: &'a str, sets: &'a [&'a str], total: Value) -> Row<'a> {
        Row {
            workload,
            config: "gtx480",
            design,
            sets,
            total,
        }
    }

    /// Writes the rows into a sweep store and reads them back as points, as `regsim
    /// paper` does.
    fn through_a_store(rows: &[Row]) -> Vec<Point> {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("store.sqlite")).unwrap();
        let records: Vec<RunRecord> = rows
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let mut total = r.total.clone();
                total["cycles"] = json!(1000);
                RunRecord {
                    key: format!("k{i}"),
                    workload: r.workload.into(),
                    program: format!("/bin/{}", r.workload),
                    args: vec![],
                    config: r.config.into(),
                    design: r.design.into(),
                    sets: r
                        .sets
                        .iter()
                        .map(|o| {
                            let (k, v) = o.split_once('=').unwrap();
                            (k.to_string(), v.to_string())
                        })
                        .collect(),
                    functional: false,
                    run_args: vec![],
                    resolved_config: json!({}),
                    regsim_version: "test".into(),
                    status: RunStatus::Ok,
                    exit_code: Some(0),
                    signal: None,
                    stats: Some(json!({
                        "program": {"name": r.workload},
                        "gpu": {"name": r.config, "overrides": [],
                                "config": {"register_file": {"design": r.design}}},
                        "total": total,
                    })),
                    stderr_tail: String::new(),
                    stdout_tail: String::new(),
                    wall_seconds: 1.0,
                    cpu_seconds: None,
                    finished_at: 0.0,
                    host: "h".into(),
                    slurm_task: None,
                }
            })
            .collect();
        store.record(&records).unwrap();
        crate::report_html::points_from_records(&store.records().unwrap()).unwrap()
    }

    fn classes(name: &str, of: &[(&str, &str)]) -> Classes {
        let mut text = format!("[{name}]\ncriterion = 'c'\nmeasured = 'm'\n[{name}.workloads]\n");
        for (w, c) in of {
            text.push_str(&format!("{w} = {{ class = '{c}', measured = 'x' }}\n"));
        }
        Classes::from_text(&text, "test").unwrap()
    }

    /// A computed column: its label, its summary over all workloads, its values.
    type Col = (Option<String>, Option<f64>, BTreeMap<String, f64>);

    /// The figure `id` of `paper` computed from `points`, column by column.
    fn figure(paper: &str, id: &str, points: &[Point], cl: &Classes) -> Vec<Col> {
        let def = def_of(paper, id);
        let a = Arrangement::new(points, "baseline");
        compute(&def, &a, cl)
            .columns
            .into_iter()
            .map(|c| {
                let all: Vec<f64> = c.values.values().copied().collect();
                (c.label, def.summary.of(&all), c.values)
            })
            .collect()
    }

    /// The headline table of figure `id` of `paper`, as text.
    fn headline(paper: &str, id: &str, points: &[Point], cl: &Classes) -> String {
        let def = def_of(paper, id);
        let a = Arrangement::new(points, "baseline");
        compute(&def, &a, cl).headline().render(false)
    }

    /// The definition of figure `id` of `paper`.
    fn def_of(paper: &str, id: &str) -> FigureDef {
        figure_defs()
            .unwrap()
            .into_iter()
            .find(|f| f.paper == paper && f.id == id)
            .unwrap_or_else(|| panic!("{paper} {id}"))
    }

    /// The column labelled `label`.
    fn column<'c>(cols: &'c [Col], label: &str) -> &'c Col {
        cols.iter()
            .find(|c| c.0.as_deref() == Some(label))
            .unwrap_or_else(|| {
                panic!(
                    "{label}: {:?}",
                    cols.iter().map(|c| &c.0).collect::<Vec<_>>()
                )
            })
    }

    /// The first line of `text` that contains `needle`.
    fn line_with<'t>(text: &'t str, needle: &str) -> &'t str {
        text.lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("{needle}: {text}"))
    }

    fn close(x: Option<f64>, want: f64) -> bool {
        x.is_some_and(|x| (x - want).abs() < 1e-9)
    }

    fn ipc(x: f64) -> Value {
        json!({"ipc": x})
    }

    #[test]
    fn ltrf_divides_every_technology_by_the_baseline_1_with_16_kb() {
        let reg = ["sm.registers=69632"];
        let t6 = ["register_file.technology=6"];
        let t7 = ["register_file.technology=7"];
        let ideal = ["register_file.ideal_capacity_registers=524288"];
        let pts = through_a_store(&[
            row("a", "baseline", &reg, ipc(1.0)),
            row("b", "baseline", &reg, ipc(2.0)),
            // The baseline at the same technology: not the paper's reference.
            row("a", "baseline", &t6, ipc(0.5)),
            row("b", "baseline", &t6, ipc(1.0)),
            row("a", "ltrf", &t6, ipc(1.5)),
            row("b", "ltrf", &t6, ipc(2.0)),
            row("a", "ltrf-conf", &t7, ipc(2.0)),
            row("b", "ltrf-conf", &t7, ipc(8.0)),
            row("a", "ideal", &ideal, ipc(2.0)),
            row("b", "ideal", &ideal, ipc(2.0)),
        ]);
        let cl = classes("register_limited", &[("a", "registers"), ("b", "other")]);
        let cols = figure("ltrf", "fig14-capacity", &pts, &cl);
        let find = |label: &str| column(&cols, label);
        // BL at #6 over BL #1: 0.5, 0.5.
        assert!(close(find("baseline [technology=6]").1, 0.5));
        // LTRF at #6: 1.5 and 1.0, geomean sqrt(1.5) (over BL #6 it would be 3 and 2).
        let l6 = find("ltrf [technology=6]");
        assert!(close(l6.1, 1.5f64.sqrt()), "{:?}", l6.1);
        assert_eq!(l6.2.len(), 2);
        // LTRFconf at #7: 2 and 4, geomean sqrt(8).
        assert!(close(find("ltrf-conf [technology=7]").1, 8f64.sqrt()));
        // Ideal 8x: 2 and 1, populated (it has no technology override).
        let i8 = find("ideal [ideal_capacity_registers=524288]");
        assert!(close(i8.1, 2f64.sqrt()) && i8.2.len() == 2, "{:?}", i8);
        // Rows not run say so.
        assert!(cols.iter().any(|c| c.0.is_none()));
        // The per-class rows: ideal on the register-limited class alone is 2.0, beside
        // the paper's 1.37.
        let text = headline("ltrf", "fig14-capacity", &pts, &cl);
        let line = line_with(&text, "ideal_capacity_registers=524288] · registers");
        assert!(line.contains("2.000") && line.contains("1.370"), "{line}");
    }

    #[test]
    fn ltrf_latency_is_over_the_baseline_at_1x() {
        let l1 = ["register_file.bank_latency=1"];
        let l8 = ["register_file.bank_latency=8"];
        let pts = through_a_store(&[
            row("a", "baseline", &l1, ipc(2.0)),
            row("a", "baseline", &l8, ipc(1.0)),
            row("a", "ltrf", &l1, ipc(2.0)),
            row("a", "ltrf", &l8, ipc(1.8)),
        ]);
        let cols = figure("ltrf", "latency-8x", &pts, &Classes::default());
        let get = |l: &str| cols.iter().find(|c| c.0.as_deref() == Some(l)).unwrap().1;
        assert!(close(get("baseline [bank_latency=8]"), 0.5));
        assert!(close(get("ltrf [bank_latency=8]"), 0.9));
    }

    #[test]
    fn ltrf_max_tolerable_latency_is_the_last_rung_within_5_percent_and_states_the_cap() {
        let l = |x: u32| format!("register_file.bank_latency={x}");
        let (l1, l2, l4, l32) = (l(1), l(2), l(4), l(32));
        let s1 = [l1.as_str()];
        let s2 = [l2.as_str()];
        let s4 = [l4.as_str()];
        let s32 = [l32.as_str()];
        let t6 = [l4.as_str(), "register_file.technology=6"];
        let pts = through_a_store(&[
            row("a", "baseline", &s1, ipc(2.0)),
            row("b", "baseline", &s1, ipc(1.0)),
            row("a", "baseline", &s2, ipc(1.8)),
            // a: within 5% at 1x and 2x, not at 4x, within again at 32x: 2 (the first
            // loss ends it).
            row("a", "ltrf", &s1, ipc(2.0)),
            row("a", "ltrf", &s2, ipc(1.9)),
            row("a", "ltrf", &s4, ipc(1.8)),
            row("a", "ltrf", &s32, ipc(1.95)),
            // b: within 5% everywhere: at the cap.
            row("b", "ltrf", &s1, ipc(1.0)),
            row("b", "ltrf", &s2, ipc(1.0)),
            row("b", "ltrf", &s4, ipc(0.96)),
            row("b", "ltrf", &s32, ipc(0.951)),
            // Another key beside the ladder's: not a rung of the row.
            row("a", "ltrf", &t6, ipc(0.1)),
            // RFC loses 5% at 1x already: 0.
            row("a", "rfc", &s1, ipc(1.8)),
        ]);
        let cols = figure("ltrf", "max-tolerable-latency", &pts, &Classes::default());
        let get = |label: &str| column(&cols, label);
        let ltrf = get("ltrf (cap 32)");
        assert_eq!(ltrf.2["a"], 2.0);
        assert_eq!(ltrf.2["b"], 32.0);
        assert!(close(ltrf.1, 17.0), "mean of 2 and 32");
        // The baseline's ladder is 1x (the reference itself) then 2x at 0.9: 1.
        assert_eq!(get("baseline (cap 2)").2["a"], 1.0);
        assert_eq!(get("rfc (cap 1)").2["a"], 0.0);
        // The tables state the cap and how many workloads reach it.
        let defs = figure_defs().unwrap();
        let def = defs
            .iter()
            .find(|f| f.id == "max-tolerable-latency")
            .unwrap();
        let a = Arrangement::new(&pts, "baseline");
        let none = Classes::default();
        let c = compute(def, &a, &none);
        let text = c.headline().render(false);
        assert!(text.contains("1 of 2 workloads at the 32 cap"), "{text}");
        let text = c.per_workload().render(false);
        assert!(text.contains(">=32"), "{text}");
    }

    #[test]
    fn gebhart_divides_by_the_baseline_at_the_same_scheduler() {
        let two = ["sm.scheduler=two_level", "sm.active_warps=8"];
        let rfc6 = [
            "sm.scheduler=two_level",
            "sm.active_warps=8",
            "register_file.rfc.entries_per_thread=6",
            "register_file.rfc.lrf=false",
        ];
        let orf3 = [
            "sm.scheduler=two_level",
            "sm.active_warps=8",
            "register_file.orf_lrf.orf_entries=3",
            "register_file.orf_lrf.lrf=\"split\"",
        ];
        let rf = |j: f64, accesses: f64| {
            json!({"ipc": 1.0, "energy": {"register_file_joules": j},
                   "register_file": {"reads": accesses, "writes": 0}})
        };
        let pts = through_a_store(&[
            // A baseline under another scheduler must not be the reference.
            row("a", "baseline", &[], rf(100.0, 100.0)),
            row("a", "baseline", &two, rf(10.0, 100.0)),
            row("b", "baseline", &two, rf(20.0, 100.0)),
            row("a", "rfc", &rfc6, rf(8.0, 50.0)),
            row("b", "rfc", &rfc6, rf(10.0, 20.0)),
            row("a", "orf-lrf", &orf3, rf(4.0, 40.0)),
            row("b", "orf-lrf", &orf3, rf(10.0, 40.0)),
        ]);
        let e = figure("gebhart", "rf-energy", &pts, &Classes::default());
        // orf-lrf: 0.4, 0.5; rfc: 0.8, 0.5.
        assert!(close(e[0].1, 0.2f64.sqrt()), "{:?}", e[0]);
        assert!(close(e[1].1, 0.4f64.sqrt()), "{:?}", e[1]);
        let m = figure("gebhart", "mrf-accesses", &pts, &Classes::default());
        assert!(close(m[0].1, 0.1f64.sqrt()), "{:?}", m[0]);
    }

    #[test]
    fn cerf_is_over_the_16_kb_baseline_and_on_chip_energy_leaves_dram_out() {
        let fair = ["register_file.cerf.policy=lru-fair"];
        let big = ["l1d.size_bytes=65536"];
        let run = |ipc: f64, total: f64, dram: f64| {
            json!({"ipc": ipc, "energy": {"total_joules": total,
                   "structures": [{"structure": "dram", "joules": dram},
                                  {"structure": "mrf", "joules": total - dram}]}})
        };
        let pts = through_a_store(&[
            row("a", "baseline", &[], run(1.0, 10.0, 6.0)),
            row("a", "baseline", &big, run(4.0, 10.0, 6.0)),
            row("b", "baseline", &[], run(2.0, 10.0, 2.0)),
            row("b", "baseline", &big, run(2.0, 10.0, 2.0)),
            row("a", "cerf", &fair, run(3.0, 8.0, 6.0)),
            row("b", "cerf", &fair, run(2.0, 9.0, 1.0)),
        ]);
        let cl = classes(
            "cache_sensitivity",
            &[("a", "sensitive"), ("b", "insensitive")],
        );
        let i = figure("cerf", "ipc", &pts, &cl);
        // 3/1 and 2/2 (over the 64 KB baseline it would be 0.75).
        assert!(close(i[0].1, 3f64.sqrt()), "{:?}", i[0]);
        assert!(close(i[0].2.get("a").copied(), 3.0));
        let e = figure("cerf", "on-chip-energy", &pts, &cl);
        // On-chip: (8-6)/(10-6) = 0.5 and (9-1)/(10-2) = 1.
        assert!(close(e[0].1, 0.5f64.sqrt()), "{:?}", e[0]);
        // An on_chip_joules field, when the statistics have one, is used as it is.
        let mut with_field = pts.clone();
        for p in &mut with_field {
            p.stats["total"]["energy"]["on_chip_joules"] = json!(1.0);
        }
        let e = figure("cerf", "on-chip-energy", &with_field, &cl);
        assert!(close(e[0].1, 1.0), "{:?}", e[0]);
    }

    #[test]
    fn malekeh_ratios_and_the_mean_hit_ratio() {
        let run = |ipc: f64, rf: f64, hits: f64| {
            json!({"ipc": ipc, "energy": {"register_file_joules": rf},
                   "register_file": {"extra": {"malekeh_hits": hits, "malekeh_operand_reads": 100}}})
        };
        let pts = through_a_store(&[
            row("a", "baseline", &[], run(1.0, 10.0, 0.0)),
            row("b", "baseline", &[], run(1.0, 10.0, 0.0)),
            row("a", "malekeh", &[], run(1.44, 5.0, 20.0)),
            row("b", "malekeh", &[], run(1.0, 10.0, 60.0)),
        ]);
        let i = figure("malekeh", "ipc", &pts, &Classes::default());
        assert!(close(i[0].1, 1.2), "{:?}", i[0]);
        // The hit ratio is not normalized; its mean is arithmetic: (0.2 + 0.6) / 2.
        let h = figure("malekeh", "hit-ratio", &pts, &Classes::default());
        assert!(close(h[0].1, 0.4), "{:?}", h[0]);
        let e = figure("malekeh", "rf-energy", &pts, &Classes::default());
        assert!(close(e[0].1, 0.5f64.sqrt()), "{:?}", e[0]);
    }

    /// modern-core: each reuse-cache run over the baseline of its own config (two
    /// configs, one label each), the hit ratio over a summed denominator, and the paper's
    /// per-workload figure on a headline row of its own.
    #[test]
    fn modern_core_ratios_are_per_config_and_the_paper_sits_beside_its_workload() {
        let run = |ipc: f64, hits: [u64; 3], misses: [u64; 3]| {
            json!({"ipc": ipc, "warp_instructions": 100,
                   "register_file": {"extra": {
                       "reuse_cache_hits_slot0": hits[0], "reuse_cache_hits_slot1": hits[1],
                       "reuse_cache_hits_slot2": hits[2],
                       "reuse_cache_misses_slot0": misses[0],
                       "reuse_cache_misses_slot1": misses[1],
                       "reuse_cache_misses_slot2": misses[2],
                       "reuse_cache_conflict_bubbles": 25}}})
        };
        fn on<'a>(w: &'a str, config: &'a str, total: Value) -> Row<'a> {
            Row {
                workload: w,
                config,
                design: "reuse-cache",
                sets: &[],
                total,
            }
        }
        fn off<'a>(w: &'a str, config: &'a str, ipc: f64) -> Row<'a> {
            Row {
                workload: w,
                config,
                design: "baseline",
                sets: &[],
                total: json!({"ipc": ipc, "warp_instructions": 100}),
            }
        }
        let pts = through_a_store(&[
            off("sgemm_reg128", "rtx-a6000", 1.0),
            on(
                "sgemm_reg128",
                "rtx-a6000",
                run(1.5, [10, 20, 30], [30, 20, 10]),
            ),
            off("saxpy", "rtx-a6000", 2.0),
            on("saxpy", "rtx-a6000", run(2.0, [0, 0, 0], [10, 0, 0])),
            // h100's baseline is h100's reference, not rtx-a6000's.
            off("sgemm_reg128", "h100", 4.0),
            on("sgemm_reg128", "h100", run(5.0, [1, 0, 0], [3, 0, 0])),
        ]);
        let cl = classes(
            "operand_bound",
            &[("sgemm_reg128", "bound"), ("saxpy", "not")],
        );
        let r = figure("modern-core", "runtime-off-over-on", &pts, &cl);

        let a6000 = column(&r, "reuse-cache @rtx-a6000");
        assert!(close(a6000.1, 1.5f64.sqrt()), "{:?}", a6000);
        assert!(close(column(&r, "reuse-cache @h100").1, 1.25));
        // Hits over hits and misses, summed over the slots: 60/120 and 0/10, mean 0.25.
        let h = figure("modern-core", "hit-ratio", &pts, &cl);
        let a6000 = column(&h, "reuse-cache @rtx-a6000");
        assert!(
            close(a6000.2.get("sgemm_reg128").copied(), 0.5),
            "{:?}",
            a6000
        );
        assert!(close(a6000.1, 0.25), "{:?}", a6000);
        let b = figure("modern-core", "conflict-bubbles", &pts, &cl);
        assert!(close(column(&b, "reuse-cache @h100").1, 0.25));
        // The headline: the paper's 1.45 beside our 1.5 on sgemm_reg128.
        let text = headline("modern-core", "runtime-off-over-on", &pts, &cl);
        let line = line_with(&text, "reuse-cache @rtx-a6000 · sgemm_reg128");
        assert!(line.contains("1.500") && line.contains("1.450"), "{line}");
        // A workload the runs lack still shows the paper's number, with no value of ours.
        let line = line_with(&text, "reuse-cache @h100 · sgemm_regblock");
        assert!(line.contains(" - ") && line.contains("1.450"), "{line}");
        let line = line_with(&text, "reuse-cache @rtx-a6000 · bound");
        assert!(line.contains("1.500"), "{line}");
    }

    #[test]
    fn wir_reuse_and_energies_by_class() {
        let rlpv = ["register_file.wir.variant=\"RLPV\""];
        let rl = ["register_file.wir.variant=\"RL\""];
        let run = |reused: f64, rf: f64, exec: f64, total: f64| {
            json!({"ipc": 1.0, "warp_instructions": 100,
                   "register_file": {"extra": {"wir_reused_alu": reused, "wir_reused_sfu": 0,
                                               "wir_reused_load": 0}},
                   "energy": {"register_file_joules": rf, "execution_joules": exec,
                              "total_joules": total}})
        };
        let pts = through_a_store(&[
            row("a", "baseline", &[], run(0.0, 6.0, 4.0, 20.0)),
            row("b", "baseline", &[], run(0.0, 6.0, 4.0, 20.0)),
            row("a", "wir", &rlpv, run(40.0, 3.0, 2.0, 10.0)),
            row("b", "wir", &rlpv, run(10.0, 6.0, 4.0, 20.0)),
            // Another variant: not selected by the RLPV rows.
            row("a", "wir", &rl, run(90.0, 1.0, 1.0, 1.0)),
        ]);
        let cl = classes("wir_reuse", &[("a", "high"), ("b", "low")]);
        let r = figure("wir", "reused", &pts, &cl);
        assert_eq!(r.len(), 1);
        assert!(close(r[0].1, 0.25), "{:?}", r[0]);
        let s = figure("wir", "sm-energy", &pts, &cl);
        assert!(close(s[0].1, 0.5f64.sqrt()), "{:?}", s[0]);
        let defs = figure_defs().unwrap();
        let def = defs
            .iter()
            .find(|f| f.paper == "wir" && f.id == "gpu-energy")
            .unwrap();
        let a = Arrangement::new(&pts, "baseline");
        let c = compute(def, &a, &cl);
        let t = c.per_workload().render(false);
        // Per class: high 0.5 (paper 0.817), low 1.0 (paper 0.957).
        let line = |start: &str| {
            t.lines()
                .find(|l| l.trim_start().starts_with(start))
                .unwrap_or_else(|| panic!("{start}: {t}"))
                .to_string()
        };
        assert!(line("geomean, high (1)").ends_with("0.500"), "{t}");
        assert!(line("geomean, low (1)").ends_with("1.000"), "{t}");
        assert!(
            line("min").ends_with("0.500") && line("max").ends_with("1.000"),
            "{t}"
        );
        let h = c.headline().render(false);
        assert!(h.contains("0.817") && h.contains("0.957"), "{h}");
    }
}

//! The two kinds of input: the reference simulator's per-program files and regsim's
//! statistics files.
//!
//! A reference file (`<config>/<program>.json`, the format of
//! `reference/gpgpusim/README.md`) holds `program`, `config`, `simulator`,
//! `exit_status`, `program_verdict`, `simulator_error` and `kernels`, one per launch in
//! launch order, each with `kernel` (the mangled name), `gpu_sim_cycle` (that launch's
//! cycles), `gpu_sim_insn` and `cumulative` counters summed since the program started
//! (`L1D_total_cache_accesses`, `L1D_total_cache_misses`, `L2_total_cache_accesses`,
//! `L2_total_cache_misses`, ...). Per-launch counts are the differences of consecutive
//! launches' cumulative values. An optional `args` (a list of strings) gives the program's
//! arguments when it did not run with none; a directory may hold several runs of one
//! program with different arguments (in files of any name).
//!
//! Which reference runs are references of something is the [`VerdictRule`]'s call: by
//! default every run that completed (no simulator error, exit status 0), whatever the
//! program printed — programs that check themselves print verdicts of their own
//! ("Non-Matching CPU-GPU Outputs Beyond Error Threshold of 0.05 Percent: 0").
//!
//! A regsim statistics file (`regsim run --stats`) holds `program` (`name`, `args`,
//! `exit_code` or `signal`), `gpu.name`, `gpu.config` and `kernels` in launch order with
//! `mangled`, `name`, `cycles` and `memory.l1d` / `memory.l2` counters of that launch,
//! and `memory.l1d_reservation_fail_cycles` when its L1Ds refused accesses.
//!
//! A `.json` file of neither kind (a summary, a config dump) is skipped with a
//! [`Skipped`] note saying why, so that a glob over a results directory still compares
//! what it can; a file of the right kind that is malformed is an [`InputError`].
//!
//! # Counting like GPGPU-Sim
//! GPGPU-Sim counts one cache access per lookup, of whatever its cache is given; its
//! printed `accesses` are the lookups of status HIT, HIT_RESERVED (an MSHR hit, its
//! "pending hit"), MISS and SECTOR_MISS, its `misses` those of status MISS or SECTOR_MISS
//! (gpgpu-sim pull request #96), and reservation failures are counted apart (and the
//! request retried, every cycle: `L1D_total_cache_reservation_fails` counts each refused
//! try, so it is compared with regsim's refused cycles,
//! `memory.l1d_reservation_fail_cycles.total`, not with its attempts). What a lookup covers differs by level:
//! - **L2**: both SM2_GTX480 and SM7_QV100 have a sectored L2 (`-gpgpu_cache:dl2 S:...`);
//!   a memory sub-partition breaks each request into 32-byte sector requests before the
//!   L2 sees them (a 128-byte L1 fill request is four lookups; gpgpu-sim issue #181), so
//!   regsim's L2 is compared by its per-sector counters
//!   (`sector_accesses`, `sector_access_misses` of `timing::memory::cache::CacheStats`).
//! - **L1D**: SM2_GTX480's L1D is not sectored (`-gpgpu_cache:dl1 N:...`, coalescing
//!   arch 20: requests of up to a 128-byte line), one lookup per line a warp touches, as
//!   regsim's line-granularity counters (`reads + writes`; `misses + sector_misses`).
//!   SM7_QV100's is sectored (`S:...`, coalescing arch 70: 32-byte requests), one lookup
//!   per sector, as regsim's per-sector counters. Which one a run uses follows its own
//!   L1D config: `fetch = "line"` (line allocation) or `"sector"`.
//!
//! GPGPU-Sim's `-gpgpu_perf_sim_memcpy 1` (set in both configs; its option text: "Fill
//! the L2 cache on memcpy", gpgpu-sim issue #300) puts the data of host-to-device copies
//! in the L2; the transcriptions set regsim's `l2.fill_on_host_copy` for it, so the first
//! reads of copied data hit in both. A small data set can then have no L2 miss at all: a
//! counter that is zero in every launch is still a counter the reference has.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

/// A file that cannot be read or does not have the expected shape; names the file and the
/// place in it.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("reading {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not JSON: {source}")]
    Json {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("{path}: {what}")]
    Shape { path: PathBuf, what: String },
}

fn shape(path: &Path, what: impl Into<String>) -> InputError {
    InputError::Shape {
        path: path.to_path_buf(),
        what: what.into(),
    }
}

/// A file left out of the comparison because it is not of the kind expected there.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Skipped {
    pub path: PathBuf,
    pub why: String,
}

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: skipped: {}", self.path.display(), self.why)
    }
}

/// The files of one kind that were read, and those skipped.
#[derive(Clone, Debug, PartialEq)]
pub struct Loaded<T> {
    pub items: Vec<T>,
    pub skipped: Vec<Skipped>,
}

/// The file's JSON, or why it is not JSON at all (a reason to skip it, not an error).
fn read_json(path: &Path) -> Result<Result<Value, Skipped>, InputError> {
    let text = std::fs::read_to_string(path).map_err(|source| InputError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(serde_json::from_str(&text).map_err(|e| Skipped {
        path: path.to_path_buf(),
        why: format!("not JSON ({e})"),
    }))
}

/// A counter's value: `None` when absent or null; an integral number, also when written
/// as a float (`18801.0`, `1.2e6`); anything else is not a count.
fn count(v: &Value) -> Result<Option<u64>, String> {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53: larger floats are not exact counts
    match v {
        Value::Null => Ok(None),
        Value::Number(n) => match (n.as_u64(), n.as_f64()) {
            (Some(u), _) => Ok(Some(u)),
            (None, Some(f)) if f >= 0.0 && f.fract() == 0.0 && f <= EXACT => Ok(Some(f as u64)),
            _ => Err(format!("not a count: {n}")),
        },
        other => Err(format!("not a count: {other}")),
    }
}

/// Which completed reference runs are compared: `--verdict any|pass|REGEX`.
#[derive(Clone, Debug, Default)]
pub enum VerdictRule {
    /// Every run that completed (no simulator error, exit status 0), whatever the
    /// program printed.
    #[default]
    Any,
    /// Only those whose program printed `PASS` as its verdict.
    Pass,
    /// Only those whose verdict matches the regular expression (anywhere in the line;
    /// anchor it with `^`/`$`).
    Matches(regex::Regex),
}

impl std::str::FromStr for VerdictRule {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "any" => Ok(VerdictRule::Any),
            "pass" => Ok(VerdictRule::Pass),
            _ => regex::Regex::new(s).map(VerdictRule::Matches).map_err(|e| {
                format!("`{s}` is neither `any`, `pass` nor a regular expression: {e}")
            }),
        }
    }
}

impl std::fmt::Display for VerdictRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            VerdictRule::Any => f.write_str("any"),
            VerdictRule::Pass => f.write_str("pass"),
            VerdictRule::Matches(r) => f.write_str(r.as_str()),
        }
    }
}

impl VerdictRule {
    /// Whether a completed run's verdict (`None`: it printed none) satisfies the rule.
    pub fn accepts(&self, verdict: Option<&str>) -> bool {
        match self {
            VerdictRule::Any => true,
            VerdictRule::Pass => verdict.map(str::trim) == Some("PASS"),
            VerdictRule::Matches(r) => verdict.is_some_and(|v| r.is_match(v)),
        }
    }
}

/// Whether the reference simulator's run is a reference of something.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum ReferenceOutcome {
    /// It ran to the end (and its verdict satisfies the [`VerdictRule`]).
    Completed,
    /// It crashed, stopped on an error, or the program failed (non-zero exit): its
    /// numbers are references of nothing.
    Failed { reason: String },
    /// It completed, but the program's verdict does not satisfy the [`VerdictRule`].
    VerdictRejected { reason: String },
}

/// One launch as the reference simulator measured it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReferenceKernel {
    /// The kernel's mangled name.
    pub mangled: String,
    /// Core cycles of this launch.
    pub cycles: u64,
    /// Thread instructions of this launch.
    pub thread_instructions: u64,
    /// L1D accesses of this launch (cumulative difference), when recorded.
    pub l1d_accesses: Option<u64>,
    /// L1D misses of this launch (cumulative difference), when recorded.
    pub l1d_misses: Option<u64>,
    /// L2 (sector) accesses of this launch (cumulative difference), when recorded.
    pub l2_accesses: Option<u64>,
    /// L2 (sector) misses of this launch (cumulative difference), when recorded.
    pub l2_misses: Option<u64>,
    /// L1D reservation failures of this launch (cumulative difference), when recorded:
    /// one per cycle the LD/ST unit's retry of a refused access failed.
    pub l1d_reservation_fails: Option<u64>,
}

/// One program's reference run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReferenceProgram {
    pub program: String,
    /// The program's arguments (none for the GPGPU-Sim set).
    pub args: Vec<String>,
    /// The reference simulator's config (`SM2_GTX480`).
    pub config: String,
    /// The reference simulator and how it ran (`GPGPU-Sim 4.2.0 ...`).
    pub simulator: String,
    pub outcome: ReferenceOutcome,
    /// Launches in order (possibly some even when the outcome is a failure).
    pub kernels: Vec<ReferenceKernel>,
}

/// The outcome of a run from what the reference file records.
fn outcome(
    simulator_error: Option<&str>,
    exit_status: Option<i64>,
    verdict: Option<&str>,
    rule: &VerdictRule,
) -> ReferenceOutcome {
    let failed = |reason: String| ReferenceOutcome::Failed { reason };
    match (simulator_error, exit_status) {
        (Some(error), _) => failed(error.to_string()),
        (None, Some(0)) if rule.accepts(verdict) => ReferenceOutcome::Completed,
        (None, Some(0)) => ReferenceOutcome::VerdictRejected {
            reason: match verdict {
                Some(v) => format!("verdict `{v}` does not satisfy --verdict {rule}"),
                None => format!("no verdict printed (--verdict {rule})"),
            },
        },
        (None, Some(code)) => match verdict {
            Some(v) if v.starts_with("FAIL") => failed(format!("wrong result: {v}")),
            _ => failed(format!("exit {code}")),
        },
        (None, None) => failed("no exit status recorded".to_string()),
    }
}

/// `args` of a file: absent or null for none, else a list of strings.
fn args_of(json: &Value, at: &str, path: &Path) -> Result<Vec<String>, InputError> {
    match json {
        Value::Null => Ok(Vec::new()),
        Value::Array(a) => a
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| shape(path, format!("`{at}`: not a list of strings")))
            })
            .collect(),
        _ => Err(shape(path, format!("`{at}`: not a list of strings"))),
    }
}

/// Why `json` is not a reference file (`None`: it looks like one).
fn not_a_reference_file(json: &Value) -> Option<&'static str> {
    if json["program"].is_object() {
        Some("a regsim statistics file, not a reference file")
    } else if !json["program"].is_string() || json.get("kernels").is_none() {
        Some("not a reference file (no `program` name and `kernels` list)")
    } else {
        None
    }
}

impl ReferenceProgram {
    /// Reads one reference file, judging its outcome by `rule`.
    pub fn from_json(
        json: &Value,
        path: &Path,
        rule: &VerdictRule,
    ) -> Result<ReferenceProgram, InputError> {
        let program = json["program"]
            .as_str()
            .ok_or_else(|| shape(path, "no `program` name"))?
            .to_string();
        let text = |key: &str| json[key].as_str().unwrap_or("").to_string();
        let outcome = outcome(
            json["simulator_error"].as_str(),
            json["exit_status"].as_i64(),
            json["program_verdict"].as_str(),
            rule,
        );
        let launches = json["kernels"]
            .as_array()
            .ok_or_else(|| shape(path, "no `kernels` list"))?;
        let mut kernels = Vec::with_capacity(launches.len());
        let mut before = [Some(0u64); 5];
        for (i, k) in launches.iter().enumerate() {
            let at = |what: &str| shape(path, format!("kernels[{i}]: no `{what}`"));
            let number = |v: &Value, what: &str| {
                count(v).map_err(|e| shape(path, format!("kernels[{i}]: `{what}`: {e}")))
            };
            let mangled = k["kernel"].as_str().ok_or_else(|| at("kernel"))?;
            let cycles =
                number(&k["gpu_sim_cycle"], "gpu_sim_cycle")?.ok_or_else(|| at("gpu_sim_cycle"))?;
            let thread_instructions = number(&k["gpu_sim_insn"], "gpu_sim_insn")?.unwrap_or(0);
            let per_launch = |key: &str, before: &mut Option<u64>| -> Result<_, InputError> {
                let now = number(&k["cumulative"][key], &format!("cumulative.{key}"))?;
                let value = match (now, *before) {
                    (Some(now), Some(b)) => Some(now.checked_sub(b).ok_or_else(|| {
                        shape(
                            path,
                            format!("kernels[{i}]: cumulative `{key}` decreases ({b} to {now})"),
                        )
                    })?),
                    _ => None,
                };
                *before = now;
                Ok(value)
            };
            let [l1d_a, l1d_m, l2_a, l2_m, l1d_rf] = &mut before;
            kernels.push(ReferenceKernel {
                mangled: mangled.to_string(),
                cycles,
                thread_instructions,
                l1d_accesses: per_launch("L1D_total_cache_accesses", l1d_a)?,
                l1d_misses: per_launch("L1D_total_cache_misses", l1d_m)?,
                l2_accesses: per_launch("L2_total_cache_accesses", l2_a)?,
                l2_misses: per_launch("L2_total_cache_misses", l2_m)?,
                l1d_reservation_fails: per_launch("L1D_total_cache_reservation_fails", l1d_rf)?,
            });
        }
        Ok(ReferenceProgram {
            program,
            args: args_of(&json["args"], "args", path)?,
            config: text("config"),
            simulator: text("simulator"),
            outcome,
            kernels,
        })
    }

    /// `program` followed by its arguments, if any: how tables name the run.
    pub fn label(&self) -> String {
        program_label(&self.program, &self.args)
    }
}

/// `name` followed by `args`, space-separated.
pub fn program_label(name: &str, args: &[String]) -> String {
    std::iter::once(name)
        .chain(args.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Reads every `*.json` file of a reference directory, ordered by program name and
/// arguments, judging each run by `rule`; files that are not reference files are
/// skipped, with why.
pub fn load_reference_dir(
    dir: &Path,
    rule: &VerdictRule,
) -> Result<Loaded<ReferenceProgram>, InputError> {
    let io = |source| InputError::Io {
        path: dir.to_path_buf(),
        source,
    };
    let mut paths = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        if path.extension().is_some_and(|e| e == "json") && path.is_file() {
            paths.push(path);
        }
    }
    if paths.is_empty() {
        return Err(shape(dir, "no reference files (*.json) in this directory"));
    }
    paths.sort();
    let mut programs = Vec::new();
    let mut skipped = Vec::new();
    for p in &paths {
        let json = match read_json(p)? {
            Ok(json) => json,
            Err(s) => {
                skipped.push(s);
                continue;
            }
        };
        if let Some(why) = not_a_reference_file(&json) {
            skipped.push(Skipped {
                path: p.clone(),
                why: why.to_string(),
            });
            continue;
        }
        programs.push(ReferenceProgram::from_json(&json, p, rule)?);
    }
    if programs.is_empty() {
        return Err(shape(
            dir,
            format!(
                "no reference files among its {} *.json files ({})",
                paths.len(),
                skipped
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        ));
    }
    programs.sort_by(|a, b| (&a.program, &a.args).cmp(&(&b.program, &b.args)));
    if let Some(w) = programs
        .windows(2)
        .find(|w| (&w[0].program, &w[0].args) == (&w[1].program, &w[1].args))
    {
        return Err(shape(
            dir,
            format!("two reference files for the run `{}`", w[0].label()),
        ));
    }
    Ok(Loaded {
        items: programs,
        skipped,
    })
}

/// One launch as regsim measured it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RegsimKernel {
    /// Demangled name.
    pub name: String,
    pub mangled: String,
    pub cycles: u64,
    /// L1D accesses, per line or per sector as the run's L1D allocates (see the module
    /// docs): `reads + writes` or `sector_accesses`.
    pub l1d_accesses: u64,
    /// L1D misses at the same granularity: accesses to absent lines plus reads of present
    /// lines that needed other sectors fetched (`misses + sector_misses`), or the accessed
    /// sectors neither present nor in flight (`sector_access_misses`). MSHR merges are
    /// not misses either way.
    pub l1d_misses: u64,
    /// L2 sector accesses (`sector_accesses`).
    pub l2_accesses: u64,
    /// L2 sector misses (`sector_access_misses`).
    pub l2_misses: u64,
    /// L1D reservation failures counted per refused cycle
    /// (`memory.l1d_reservation_fail_cycles.total`; absent, as when there were none: 0).
    pub l1d_reservation_fails: u64,
}

/// One program's regsim run, from a timing-mode statistics file.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RegsimProgram {
    pub program: String,
    /// The program's arguments, matched against the reference runs'.
    pub args: Vec<String>,
    /// The GPU config's name, with its `--set` overrides.
    pub gpu: String,
    /// `ok`, `exit N` or `signal N`.
    pub status: String,
    /// Whether the L1D counts are per sector (a sector-allocating L1D) rather than per
    /// line (`gpu.config.l1d.fetch = "line"`).
    pub l1d_per_sector: bool,
    pub kernels: Vec<RegsimKernel>,
    /// The statistics file it came from.
    pub file: PathBuf,
}

impl RegsimProgram {
    /// Whether the program exited 0 under regsim.
    pub fn passed(&self) -> bool {
        self.status == "ok"
    }

    /// `program` followed by its arguments, if any.
    pub fn label(&self) -> String {
        program_label(&self.program, &self.args)
    }

    /// Reads one statistics file; functional-mode files (no cycles) are refused.
    pub fn from_json(json: &Value, path: &Path) -> Result<RegsimProgram, InputError> {
        let p = &json["program"];
        let program = p["name"].as_str().ok_or_else(|| {
            shape(
                path,
                "no `program.name` (not written by `regsim run --stats`?)",
            )
        })?;
        if json["mode"].as_str() != Some("timing") {
            return Err(shape(
                path,
                "not a timing-mode run (no cycles): run `regsim run --stats` without --functional",
            ));
        }
        let args = args_of(&p["args"], "program.args", path)?;
        let status = match (p["exit_code"].as_i64(), p["signal"].as_i64()) {
            (Some(0), _) => "ok".to_string(),
            (Some(code), _) => format!("exit {code}"),
            (None, Some(signal)) => format!("signal {signal}"),
            (None, None) => "unknown exit".to_string(),
        };
        let mut gpu = json["gpu"]["name"].as_str().unwrap_or("?").to_string();
        for o in json["gpu"]["overrides"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            gpu.push(' ');
            gpu.push_str(o);
        }
        let l1d = &json["gpu"]["config"]["l1d"];
        if !l1d.is_object() {
            return Err(shape(path, "no `gpu.config.l1d` (the run's L1D config)"));
        }
        // The serialized config omits `fetch` at its default, "sector".
        let l1d_per_sector = l1d["fetch"].as_str().unwrap_or("sector") != "line";
        let launches = json["kernels"]
            .as_array()
            .ok_or_else(|| shape(path, "no `kernels` list"))?;
        let mut kernels = Vec::with_capacity(launches.len());
        for (i, k) in launches.iter().enumerate() {
            let u = |v: &Value, what: &str| {
                v.as_u64()
                    .ok_or_else(|| shape(path, format!("kernels[{i}]: no `{what}`")))
            };
            let counter = |level: &str, names: &[&str]| -> Result<u64, InputError> {
                names.iter().try_fold(0, |sum, name| {
                    Ok(sum + u(&k["memory"][level][name], &format!("memory.{level}.{name}"))?)
                })
            };
            let (l1d_accesses, l1d_misses): (&[&str], &[&str]) = if l1d_per_sector {
                (&["sector_accesses"], &["sector_access_misses"])
            } else {
                (&["reads", "writes"], &["misses", "sector_misses"])
            };
            let mangled = k["mangled"]
                .as_str()
                .ok_or_else(|| shape(path, format!("kernels[{i}]: no `mangled`")))?;
            kernels.push(RegsimKernel {
                name: k["name"].as_str().unwrap_or(mangled).to_string(),
                mangled: mangled.to_string(),
                cycles: u(&k["cycles"], "cycles")?,
                l1d_accesses: counter("l1d", l1d_accesses)?,
                l1d_misses: counter("l1d", l1d_misses)?,
                l2_accesses: counter("l2", &["sector_accesses"])?,
                l2_misses: counter("l2", &["sector_access_misses"])?,
                l1d_reservation_fails: k["memory"]["l1d_reservation_fail_cycles"]["total"]
                    .as_u64()
                    .unwrap_or(0),
            });
        }
        Ok(RegsimProgram {
            program: program.to_string(),
            args,
            gpu,
            status,
            l1d_per_sector,
            kernels,
            file: path.to_path_buf(),
        })
    }
}

/// Why `json` is not a regsim statistics file (`None`: it looks like one).
fn not_a_stats_file(json: &Value) -> Option<&'static str> {
    if json["program"].is_string() {
        Some("a reference file, not regsim statistics")
    } else if !json["program"]["name"].is_string() {
        Some(
            "not a regsim statistics file (no `program.name`; not written by `regsim run --stats`)",
        )
    } else {
        None
    }
}

/// Reads one `regsim run --stats` file; a file that is not one is an error.
pub fn load_regsim_stats(path: &Path) -> Result<RegsimProgram, InputError> {
    let json = read_json(path)?.map_err(|s| shape(path, s.why))?;
    RegsimProgram::from_json(&json, path)
}

/// Reads `regsim run --stats` files, in the order given; `.json` files that are not
/// statistics files at all are skipped, with why. A statistics file that cannot be used
/// (a functional-mode run, a missing counter) is an error naming it.
pub fn load_regsim_files(paths: &[PathBuf]) -> Result<Loaded<RegsimProgram>, InputError> {
    let mut items = Vec::with_capacity(paths.len());
    let mut skipped = Vec::new();
    for p in paths {
        match read_json(p)? {
            Err(s) => skipped.push(s),
            Ok(json) => match not_a_stats_file(&json) {
                Some(why) => skipped.push(Skipped {
                    path: p.clone(),
                    why: why.to_string(),
                }),
                None => items.push(RegsimProgram::from_json(&json, p)?),
            },
        }
    }
    Ok(Loaded { items, skipped })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    pub(crate) fn reference_json() -> Value {
        json!({
            "exit_status": 0, "program_verdict": "PASS", "simulator_error": null,
            "program": "reduction", "config": "SM2_GTX480", "simulator": "GPGPU-Sim test",
            "kernels": [
                {"kernel": "_Z3fooPf", "gpu_sim_cycle": 4377, "gpu_sim_insn": 1000,
                 "cumulative": {"L1D_total_cache_accesses": 9000, "L1D_total_cache_misses": 2137,
                                "L2_total_cache_accesses": 300, "L2_total_cache_misses": 28,
                                "L1D_total_cache_reservation_fails": 500}},
                {"kernel": "_Z3fooPf", "gpu_sim_cycle": 1038, "gpu_sim_insn": 50,
                 "cumulative": {"L1D_total_cache_accesses": 9010, "L1D_total_cache_misses": 2140,
                                "L2_total_cache_accesses": 304, "L2_total_cache_misses": 29,
                                "L1D_total_cache_reservation_fails": 520}},
            ]
        })
    }

    /// A reference file as `load_reference_dir` reads it, under the default rule.
    fn load(j: &Value) -> Result<ReferenceProgram, InputError> {
        ReferenceProgram::from_json(j, Path::new("r.json"), &VerdictRule::Any)
    }

    #[test]
    fn reference_counts_are_per_launch_differences() {
        let r = load(&reference_json()).unwrap();
        assert_eq!(r.outcome, ReferenceOutcome::Completed);
        assert_eq!(r.config, "SM2_GTX480");
        let got: Vec<_> = r
            .kernels
            .iter()
            .map(|k| {
                (
                    k.cycles,
                    k.l1d_accesses,
                    k.l1d_misses,
                    k.l2_accesses,
                    k.l2_misses,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (4377, Some(9000), Some(2137), Some(300), Some(28)),
                (1038, Some(10), Some(3), Some(4), Some(1))
            ]
        );
        let fails: Vec<_> = r.kernels.iter().map(|k| k.l1d_reservation_fails).collect();
        assert_eq!(fails, [Some(500), Some(20)]);
    }

    #[test]
    fn a_missing_counter_gives_none_for_that_launch_and_the_next() {
        let mut j = reference_json();
        j["kernels"][0]["cumulative"] = json!({});
        let r = load(&j).unwrap();
        assert_eq!(r.kernels[0].l1d_misses, None);
        // Without the previous cumulative value the difference is unknown.
        assert_eq!(r.kernels[1].l1d_misses, None);
    }

    #[test]
    fn decreasing_cumulative_counters_are_an_error_naming_the_launch() {
        let mut j = reference_json();
        j["kernels"][1]["cumulative"]["L2_total_cache_misses"] = json!(3);
        let e = load(&j).unwrap_err();
        assert_eq!(
            e.to_string(),
            "r.json: kernels[1]: cumulative `L2_total_cache_misses` decreases (28 to 3)"
        );
    }

    #[test]
    fn reference_failures_say_why() {
        let outcome = |patch: Value| {
            let mut j = reference_json();
            for (k, v) in patch.as_object().unwrap() {
                j[k] = v.clone();
            }
            load(&j).unwrap().outcome
        };
        let failed = |reason: &str| ReferenceOutcome::Failed {
            reason: reason.to_string(),
        };
        assert_eq!(
            outcome(json!({"exit_status": 134, "program_verdict": null,
                           "simulator_error": "instructions.cc: assertion"})),
            failed("instructions.cc: assertion")
        );
        assert_eq!(
            outcome(json!({"exit_status": 1, "program_verdict": "FAIL: sums inf"})),
            failed("wrong result: FAIL: sums inf")
        );
        assert_eq!(
            outcome(json!({"exit_status": 139, "program_verdict": null})),
            failed("exit 139")
        );
    }

    /// Programs that check themselves print their own verdicts: a completed run is
    /// compared whatever it printed unless the rule says otherwise.
    #[test]
    fn the_verdict_rule_decides_which_completed_runs_count() {
        let verdict = "Non-Matching CPU-GPU Outputs Beyond Error Threshold of 0.05 Percent: 0";
        let mut j = reference_json();
        j["program_verdict"] = json!(verdict);
        let outcome = |j: &Value, rule: &str| {
            let rule: VerdictRule = rule.parse().unwrap();
            ReferenceProgram::from_json(j, Path::new("r.json"), &rule)
                .unwrap()
                .outcome
        };
        assert_eq!(outcome(&j, "any"), ReferenceOutcome::Completed);
        assert_eq!(
            outcome(&j, "pass"),
            ReferenceOutcome::VerdictRejected {
                reason: format!("verdict `{verdict}` does not satisfy --verdict pass")
            }
        );
        assert_eq!(outcome(&j, "Percent: 0$"), ReferenceOutcome::Completed);
        j["program_verdict"] = json!("Non-Matching ... Percent: 02");
        assert!(matches!(
            outcome(&j, "Percent: 0$"),
            ReferenceOutcome::VerdictRejected { .. }
        ));
        j["program_verdict"] = Value::Null;
        assert_eq!(outcome(&j, "any"), ReferenceOutcome::Completed);
        assert_eq!(
            outcome(&j, "pass"),
            ReferenceOutcome::VerdictRejected {
                reason: "no verdict printed (--verdict pass)".to_string()
            }
        );
        // A program that failed (non-zero exit) is a reference of nothing under any rule.
        j["exit_status"] = json!(1);
        j["program_verdict"] = json!("FAIL: wrong sum");
        assert_eq!(
            outcome(&j, "any"),
            ReferenceOutcome::Failed {
                reason: "wrong result: FAIL: wrong sum".to_string()
            }
        );
        let e = "a(".parse::<VerdictRule>().unwrap_err();
        assert!(
            e.starts_with("`a(` is neither `any`, `pass` nor a regular expression"),
            "{e}"
        );
    }

    #[test]
    fn counters_written_as_floats_are_counts_and_other_values_are_errors() {
        let mut j = reference_json();
        j["kernels"][0]["cumulative"]["L2_total_cache_misses"] = json!(28.0);
        j["kernels"][1]["cumulative"]["L2_total_cache_misses"] = json!(2.9e1);
        j["kernels"][1]["gpu_sim_cycle"] = json!(1038.0);
        let r = load(&j).unwrap();
        assert_eq!(r.kernels[1].l2_misses, Some(1));
        assert_eq!(r.kernels[1].cycles, 1038);
        for bad in [json!(28.5), json!(-3), json!("28")] {
            j["kernels"][0]["cumulative"]["L2_total_cache_misses"] = bad.clone();
            let e = load(&j).unwrap_err().to_string();
            assert_eq!(
                e,
                format!(
                    "r.json: kernels[0]: `cumulative.L2_total_cache_misses`: not a count: {bad}"
                )
            );
        }
    }

    #[test]
    fn reference_runs_carry_their_arguments() {
        let mut j = reference_json();
        assert!(load(&j).unwrap().args.is_empty());
        j["args"] = json!(["--large", "3"]);
        let r = load(&j).unwrap();
        assert_eq!(r.args, ["--large", "3"]);
        assert_eq!(r.label(), "reduction --large 3");
        j["args"] = json!("--large");
        assert_eq!(
            load(&j).unwrap_err().to_string(),
            "r.json: `args`: not a list of strings"
        );
    }

    /// A scratch directory of JSON files, removed when dropped.
    struct Scratch(PathBuf);
    impl Scratch {
        fn new(name: &str, files: &[(&str, String)]) -> Scratch {
            let dir =
                std::env::temp_dir().join(format!("correlate-input-{name}-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            for (f, text) in files {
                std::fs::write(dir.join(f), text).unwrap();
            }
            Scratch(dir)
        }
    }
    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn reference_dirs_skip_stray_files_and_hold_runs_with_arguments() {
        let mut large = reference_json();
        large["args"] = json!(["--large"]);
        let dir = Scratch::new(
            "dir",
            &[
                ("reduction.json", reference_json().to_string()),
                ("reduction-large.json", large.to_string()),
                ("summary.json", json!({"mean": 3}).to_string()),
                ("broken.json", "{ not json".to_string()),
                ("stats.json", regsim_json().to_string()),
            ],
        );
        let loaded = load_reference_dir(&dir.0, &VerdictRule::Any).unwrap();
        let runs: Vec<String> = loaded.items.iter().map(ReferenceProgram::label).collect();
        assert_eq!(runs, ["reduction", "reduction --large"]);
        let skipped: Vec<String> = loaded
            .skipped
            .iter()
            .map(|s| {
                let name = s.path.file_name().unwrap().to_string_lossy();
                format!("{name}: {}", s.why.split(" (").next().unwrap())
            })
            .collect();
        assert_eq!(
            skipped,
            [
                "broken.json: not JSON",
                "stats.json: a regsim statistics file, not a reference file",
                "summary.json: not a reference file"
            ]
        );
        // Two files for one run are an error naming the run.
        let dir = Scratch::new(
            "twice",
            &[("a.json", large.to_string()), ("b.json", large.to_string())],
        );
        let e = load_reference_dir(&dir.0, &VerdictRule::Any).unwrap_err();
        assert!(
            e.to_string()
                .ends_with("two reference files for the run `reduction --large`"),
            "{e}"
        );
        // Nothing but stray files: an error listing them.
        let dir = Scratch::new("stray", &[("x.json", "[]".to_string())]);
        let e = load_reference_dir(&dir.0, &VerdictRule::Any).unwrap_err();
        assert!(
            e.to_string()
                .contains("no reference files among its 1 *.json files"),
            "{e}"
        );
    }

    #[test]
    fn stray_files_among_statistics_are_skipped_and_bad_statistics_refused() {
        let mut functional = regsim_json();
        functional["mode"] = json!("functional");
        let dir = Scratch::new(
            "stats",
            &[
                ("reduction.json", regsim_json().to_string()),
                ("spec.json", json!({"workloads": ["*"]}).to_string()),
                ("ref.json", reference_json().to_string()),
                ("functional.json", functional.to_string()),
            ],
        );
        let paths =
            |names: &[&str]| -> Vec<PathBuf> { names.iter().map(|n| dir.0.join(n)).collect() };
        let loaded =
            load_regsim_files(&paths(&["spec.json", "reduction.json", "ref.json"])).unwrap();
        assert_eq!(loaded.items.len(), 1);
        assert_eq!(loaded.items[0].program, "reduction");
        let why: Vec<&str> = loaded.skipped.iter().map(|s| s.why.as_str()).collect();
        assert_eq!(
            why,
            [
                "not a regsim statistics file (no `program.name`; not written by `regsim run --stats`)",
                "a reference file, not regsim statistics"
            ]
        );
        let e = load_regsim_files(&paths(&["reduction.json", "functional.json"])).unwrap_err();
        assert!(e.to_string().contains("not a timing-mode run"), "{e}");
        let e = load_regsim_files(&paths(&["missing.json"])).unwrap_err();
        assert!(e.to_string().starts_with("reading "), "{e}");
    }

    fn regsim_json() -> Value {
        json!({
            "mode": "timing",
            "gpu": {"name": "gtx480", "overrides": ["l1d.size_bytes=65536"],
                    "config": {"l1d": {"fetch": "line"}}},
            "program": {"name": "reduction", "args": [], "exit_code": 0},
            "kernels": [{
                "name": "foo(float*)", "mangled": "_Z3fooPf", "cycles": 5000,
                "memory": {"l1d": {"reads": 5000, "writes": 400, "misses": 2000,
                                   "sector_misses": 100, "sector_accesses": 19000,
                                   "sector_access_misses": 7000},
                           "l2": {"reads": 2100, "writes": 400, "misses": 30,
                                  "sector_misses": 0, "sector_accesses": 8800,
                                  "sector_access_misses": 120}}
            }]
        })
    }

    fn counts(r: &RegsimProgram) -> (u64, u64, u64, u64) {
        let k = &r.kernels[0];
        (k.l1d_accesses, k.l1d_misses, k.l2_accesses, k.l2_misses)
    }

    #[test]
    fn regsim_l1d_counts_follow_its_allocation_and_l2_counts_are_per_sector() {
        let r = RegsimProgram::from_json(&regsim_json(), Path::new("s.json")).unwrap();
        assert_eq!(r.gpu, "gtx480 l1d.size_bytes=65536");
        assert!(r.passed());
        assert!(!r.l1d_per_sector);
        assert_eq!(r.kernels[0].cycles, 5000);
        // Line-allocating L1D: lines (reads + writes; misses + sector misses).
        assert_eq!(counts(&r), (5400, 2100, 8800, 120));
        // Sector-allocating L1D (`fetch` omitted at its default): sectors.
        let mut j = regsim_json();
        j["gpu"]["config"]["l1d"] = json!({});
        let r = RegsimProgram::from_json(&j, Path::new("s.json")).unwrap();
        assert!(r.l1d_per_sector);
        assert_eq!(counts(&r), (19000, 7000, 8800, 120)); // Reservation failures per refused cycle; a run without any leaves the section out.
        assert_eq!(r.kernels[0].l1d_reservation_fails, 0);
        j["kernels"][0]["memory"]["l1d_reservation_fail_cycles"] =
            json!({"line_alloc_fail": 30, "mshr_entry_fail": 12, "total": 42});
        let r = RegsimProgram::from_json(&j, Path::new("s.json")).unwrap();
        assert_eq!(r.kernels[0].l1d_reservation_fails, 42);
    }

    #[test]
    fn functional_stats_and_missing_fields_are_refused_by_name() {
        let mut j = regsim_json();
        j["mode"] = json!("functional");
        let e = RegsimProgram::from_json(&j, Path::new("s.json")).unwrap_err();
        assert!(
            e.to_string().starts_with("s.json: not a timing-mode run"),
            "{e}"
        );
        let mut j = regsim_json();
        j["kernels"][0]["memory"]["l2"] = json!({"sector_accesses": 1});
        let e = RegsimProgram::from_json(&j, Path::new("s.json")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "s.json: kernels[0]: no `memory.l2.sector_access_misses`"
        );
        let mut j = regsim_json();
        j["gpu"] = json!({"name": "gtx480"});
        let e = RegsimProgram::from_json(&j, Path::new("s.json")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "s.json: no `gpu.config.l1d` (the run's L1D config)"
        );
    }
}

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
//! launches' cumulative values.
//!
//! A regsim statistics file (`regsim run --stats`) holds `program` (`name`, `args`,
//! `exit_code` or `signal`), `gpu.name`, `gpu.config` and `kernels` in launch order with
//! `mangled`, `name`, `cycles` and `memory.l1d` / `memory.l2` counters of that launch.
//!
//! # Counting like GPGPU-Sim
//! GPGPU-Sim counts one cache access per lookup, of whatever its cache is given; its
//! printed `accesses` are the lookups of status HIT, HIT_RESERVED (an MSHR hit, its
//! "pending hit"), MISS and SECTOR_MISS, its `misses` those of status MISS or SECTOR_MISS
//! (gpgpu-sim pull request #96), and reservation failures are counted apart (and the
//! request retried). What a lookup covers differs by level:
//! - **L2**: both SM2_GTX480 and SM7_QV100 have a sectored L2 (`-gpgpu_cache:dl2 S:...`);
//!   a memory sub-partition breaks each request into 32-byte sector requests before the
//!   L2 sees them (a 128-byte L1 fill request is four lookups; gpgpu-sim issue #181), so
//!   regsim's L2 is compared by its per-sector counters
//!   (`sector_accesses`, `sector_access_misses` of `timing::cache::CacheStats`).
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
//! reads of copied data hit in both.

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

fn read_json(path: &Path) -> Result<Value, InputError> {
    let text = std::fs::read_to_string(path).map_err(|source| InputError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|source| InputError::Json {
        path: path.to_path_buf(),
        source,
    })
}

/// Whether the reference simulator completed a program correctly.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum ReferenceOutcome {
    /// It ran to the end and the program printed PASS.
    Completed,
    /// It crashed, stopped on an error, or the program's self-check failed: its numbers
    /// are references of nothing.
    Failed { reason: String },
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
}

/// One program's reference run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReferenceProgram {
    pub program: String,
    /// The reference simulator's config (`SM2_GTX480`).
    pub config: String,
    /// The reference simulator and how it ran (`GPGPU-Sim 4.2.0 ...`).
    pub simulator: String,
    pub outcome: ReferenceOutcome,
    /// Launches in order (possibly some even when the outcome is a failure).
    pub kernels: Vec<ReferenceKernel>,
}

impl ReferenceProgram {
    /// Reads one reference file.
    pub fn from_json(json: &Value, path: &Path) -> Result<ReferenceProgram, InputError> {
        let program = json["program"]
            .as_str()
            .ok_or_else(|| shape(path, "no `program` name"))?
            .to_string();
        let text = |key: &str| json[key].as_str().unwrap_or("").to_string();
        let exit_status = json["exit_status"].as_i64();
        let verdict = json["program_verdict"].as_str();
        let outcome = match (json["simulator_error"].as_str(), exit_status, verdict) {
            (Some(error), _, _) => ReferenceOutcome::Failed {
                reason: error.to_string(),
            },
            (None, Some(0), Some("PASS")) => ReferenceOutcome::Completed,
            (None, _, Some(v)) if v.starts_with("FAIL") => ReferenceOutcome::Failed {
                reason: format!("wrong result: {v}"),
            },
            (None, Some(code), _) if code != 0 => ReferenceOutcome::Failed {
                reason: format!("exit {code}"),
            },
            (None, code, v) => ReferenceOutcome::Failed {
                reason: format!(
                    "no PASS verdict (exit status {}, verdict {})",
                    code.map_or_else(|| "unknown".to_string(), |c| c.to_string()),
                    v.unwrap_or("none")
                ),
            },
        };
        let launches = json["kernels"]
            .as_array()
            .ok_or_else(|| shape(path, "no `kernels` list"))?;
        let mut kernels = Vec::with_capacity(launches.len());
        let mut before = [Some(0u64); 4];
        for (i, k) in launches.iter().enumerate() {
            let at = |what: &str| shape(path, format!("kernels[{i}]: no `{what}`"));
            let mangled = k["kernel"].as_str().ok_or_else(|| at("kernel"))?;
            let cycles = k["gpu_sim_cycle"]
                .as_u64()
                .ok_or_else(|| at("gpu_sim_cycle"))?;
            let thread_instructions = k["gpu_sim_insn"].as_u64().unwrap_or(0);
            let per_launch = |key: &str, before: &mut Option<u64>| -> Result<_, InputError> {
                let now = k["cumulative"][key].as_u64();
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
            let [l1d_a, l1d_m, l2_a, l2_m] = &mut before;
            kernels.push(ReferenceKernel {
                mangled: mangled.to_string(),
                cycles,
                thread_instructions,
                l1d_accesses: per_launch("L1D_total_cache_accesses", l1d_a)?,
                l1d_misses: per_launch("L1D_total_cache_misses", l1d_m)?,
                l2_accesses: per_launch("L2_total_cache_accesses", l2_a)?,
                l2_misses: per_launch("L2_total_cache_misses", l2_m)?,
            });
        }
        Ok(ReferenceProgram {
            program,
            config: text("config"),
            simulator: text("simulator"),
            outcome,
            kernels,
        })
    }
}

/// Reads every `*.json` file of a reference directory, ordered by program name.
pub fn load_reference_dir(dir: &Path) -> Result<Vec<ReferenceProgram>, InputError> {
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
    let mut programs = paths
        .iter()
        .map(|p| ReferenceProgram::from_json(&read_json(p)?, p))
        .collect::<Result<Vec<_>, _>>()?;
    programs.sort_by(|a, b| a.program.cmp(&b.program));
    if let Some(w) = programs.windows(2).find(|w| w[0].program == w[1].program) {
        return Err(shape(
            dir,
            format!("two reference files for program `{}`", w[0].program),
        ));
    }
    Ok(programs)
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
}

/// One program's regsim run, from a timing-mode statistics file.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RegsimProgram {
    pub program: String,
    /// The program's arguments (the reference runs use none).
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
        let args = p["args"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect();
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

/// Reads one `regsim run --stats` file.
pub fn load_regsim_stats(path: &Path) -> Result<RegsimProgram, InputError> {
    RegsimProgram::from_json(&read_json(path)?, path)
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
                                "L2_total_cache_accesses": 300, "L2_total_cache_misses": 28}},
                {"kernel": "_Z3fooPf", "gpu_sim_cycle": 1038, "gpu_sim_insn": 50,
                 "cumulative": {"L1D_total_cache_accesses": 9010, "L1D_total_cache_misses": 2140,
                                "L2_total_cache_accesses": 304, "L2_total_cache_misses": 29}},
            ]
        })
    }

    #[test]
    fn reference_counts_are_per_launch_differences() {
        let r = ReferenceProgram::from_json(&reference_json(), Path::new("r.json")).unwrap();
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
    }

    #[test]
    fn a_missing_counter_gives_none_for_that_launch_and_the_next() {
        let mut j = reference_json();
        j["kernels"][0]["cumulative"] = json!({});
        let r = ReferenceProgram::from_json(&j, Path::new("r.json")).unwrap();
        assert_eq!(r.kernels[0].l1d_misses, None);
        // Without the previous cumulative value the difference is unknown.
        assert_eq!(r.kernels[1].l1d_misses, None);
    }

    #[test]
    fn decreasing_cumulative_counters_are_an_error_naming_the_launch() {
        let mut j = reference_json();
        j["kernels"][1]["cumulative"]["L2_total_cache_misses"] = json!(3);
        let e = ReferenceProgram::from_json(&j, Path::new("r.json")).unwrap_err();
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
            ReferenceProgram::from_json(&j, Path::new("r.json"))
                .unwrap()
                .outcome
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
        assert_eq!(counts(&r), (19000, 7000, 8800, 120));
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

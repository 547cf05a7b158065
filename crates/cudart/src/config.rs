//! Settings the `regsim run` CLI passes to the runtime through the environment (the
//! contract is documented in the crate's top-level doc), and the GPU configuration they
//! select.

use std::path::PathBuf;

use timing::config::{default_configs_dir, GpuConfig, Override};
use timing::parallel::MAX_THREADS;

use crate::transforms::ProgramTransforms;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    #[default]
    Functional,
    Timing,
}

impl Mode {
    /// The value of `REGSIM_MODE`, as written in the statistics.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Functional => "functional",
            Mode::Timing => "timing",
        }
    }
}

/// The GPU config used when `REGSIM_GPU` is not set.
pub const DEFAULT_GPU: &str = "gtx480";

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Config {
    /// `REGSIM_GPU`: a config name (looked up in `$REGSIM_CONFIGS`, else the source
    /// tree's `configs/`) or a path to a TOML file.
    pub gpu: Option<String>,
    /// `REGSIM_SET`: `key.path=value` overrides, one per line, applied in order.
    pub overrides: Vec<String>,
    pub stats_path: Option<PathBuf>,
    pub mode: Mode,
    /// `REGSIM_SUMMARY`: print the readable statistics summary to stderr at exit.
    pub summary: bool,
    /// `REGSIM_MAX_REGISTERS`, `REGSIM_LTRF_RENUMBER`: compiler transforms applied to
    /// every module at load ([`crate::transforms`]).
    pub transforms: ProgramTransforms,
    /// `REGSIM_PROFILE_REGISTERS`: profile the executed instructions
    /// ([`crate::profiling`]).
    pub profile_registers: bool,
    /// `REGSIM_STRICT_MEMORY`: every kernel access outside an allocation faults
    /// (`emu::StrayPolicy::Fault`) instead of succeeding near one as on a GPU.
    pub strict_memory: bool,
    /// `REGSIM_MAX_CYCLES`, `REGSIM_MAX_INSTRUCTIONS`, `REGSIM_TIMEOUT`: bounds on the
    /// run (cycles: timing mode; instructions and the timeout: both modes, and the
    /// timeout also covers host code).
    pub limits: RunBounds,
    /// `REGSIM_PROGRESS`: show the running kernel, its cycles and the rate on one
    /// updating stderr line.
    pub progress: bool,
    /// `REGSIM_THREADS`: threads stepping the SMs (timing mode); `None`: one.
    pub threads: Option<usize>,
    /// Warnings about the environment itself, printed once at start-up.
    pub warnings: Vec<String>,
}

/// Bounds on a run from the environment; `None` bounds nothing.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RunBounds {
    /// Simulated cycles over the whole run.
    pub max_cycles: Option<u64>,
    /// Warp instructions over the whole run.
    pub max_instructions: Option<u64>,
    /// Wall-clock seconds from the runtime's start.
    pub timeout_seconds: Option<f64>,
}

impl RunBounds {
    fn from_lookup(lookup: &impl Fn(&str) -> Option<String>, warnings: &mut Vec<String>) -> Self {
        let mut count = |key: &str| -> Option<u64> {
            let text = lookup(key).filter(|v| !v.trim().is_empty())?;
            match text.trim().parse::<u64>() {
                Ok(0) => None,
                Ok(n) => Some(n),
                Err(_) => {
                    warnings.push(format!(
                        "{key}={text:?} is not a whole number; the run is not bounded by it"
                    ));
                    None
                }
            }
        };
        let max_cycles = count("REGSIM_MAX_CYCLES");
        let max_instructions = count("REGSIM_MAX_INSTRUCTIONS");
        let timeout_seconds = match lookup("REGSIM_TIMEOUT").filter(|v| !v.trim().is_empty()) {
            None => None,
            Some(text) => match text.trim().parse::<f64>() {
                Ok(s) if s.is_finite() && s > 0.0 && s < 1e12 => Some(s),
                Ok(0.0) => None,
                _ => {
                    warnings.push(format!(
                        "REGSIM_TIMEOUT={text:?} is not a number of seconds; the run has no \
                         time limit"
                    ));
                    None
                }
            },
        };
        RunBounds {
            max_cycles,
            max_instructions,
            timeout_seconds,
        }
    }
}

/// The GPU configuration a run simulates, and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuSelection {
    /// The config's name: `REGSIM_GPU` when it is a name, else the file's stem.
    pub name: String,
    /// `REGSIM_GPU` as given (or the default name).
    pub selector: String,
    /// The overrides applied, as given.
    pub overrides: Vec<String>,
    /// The loaded, overridden and validated config.
    pub config: GpuConfig,
}

impl Config {
    pub fn from_env() -> Config {
        let mut config = Config::from_lookup(|key| {
            std::env::var_os(key).map(|v| v.to_string_lossy().into_owned())
        });
        // A path is any bytes: read lossily, a name that is not UTF-8 would name another
        // file (its bytes replaced by U+FFFD).
        config.stats_path = std::env::var_os("REGSIM_STATS")
            .filter(|p| !p.is_empty())
            .map(PathBuf::from);
        config
    }

    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Config {
        let mut config = Config {
            gpu: lookup("REGSIM_GPU").filter(|s| !s.is_empty()),
            overrides: lookup("REGSIM_SET")
                .unwrap_or_default()
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_owned)
                .collect(),
            stats_path: lookup("REGSIM_STATS")
                .filter(|s| !s.is_empty())
                .map(PathBuf::from),
            summary: matches!(lookup("REGSIM_SUMMARY").as_deref(), Some(v) if !v.is_empty() && v != "0"),
            profile_registers: matches!(lookup("REGSIM_PROFILE_REGISTERS").as_deref(), Some(v) if !v.is_empty() && v != "0"),
            strict_memory: matches!(lookup("REGSIM_STRICT_MEMORY").as_deref(), Some(v) if !v.is_empty() && v != "0"),
            ..Config::default()
        };
        config.transforms = ProgramTransforms::from_lookup(&lookup, &mut config.warnings);
        config.limits = RunBounds::from_lookup(&lookup, &mut config.warnings);
        config.progress =
            matches!(lookup("REGSIM_PROGRESS").as_deref(), Some(v) if !v.is_empty() && v != "0");
        config.threads = match lookup("REGSIM_THREADS").filter(|v| !v.trim().is_empty()) {
            None => None,
            Some(text) => match text.trim().parse::<usize>() {
                Ok(n) if (1..=MAX_THREADS).contains(&n) => Some(n),
                _ => {
                    config.warnings.push(format!(
                        "REGSIM_THREADS={text:?} is not a thread count from 1 to {MAX_THREADS}; \
                         using one"
                    ));
                    None
                }
            },
        };
        match lookup("REGSIM_MODE").as_deref() {
            None | Some("") | Some("functional") => {}
            Some("timing") => config.mode = Mode::Timing,
            Some(other) => config.warnings.push(format!(
                "REGSIM_MODE={other:?} is not `functional` or `timing`; running in functional mode"
            )),
        }
        config
    }

    /// Loads and validates the selected GPU config with the overrides applied. The error
    /// is one line naming the offending key, name or file.
    pub fn gpu_selection(&self) -> Result<GpuSelection, String> {
        let selector = self.gpu.clone().unwrap_or_else(|| DEFAULT_GPU.to_owned());
        let overrides = self
            .overrides
            .iter()
            .map(|o| Override::parse(o))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())?;
        let config = GpuConfig::load(&selector, &default_configs_dir(), &overrides)
            .map_err(|e| e.to_string())?;
        let name = if selector.contains('/') || selector.ends_with(".toml") {
            std::path::Path::new(&selector)
                .file_stem()
                .map_or_else(|| selector.clone(), |s| s.to_string_lossy().into_owned())
        } else {
            selector.clone()
        };
        Ok(GpuSelection {
            name,
            selector,
            overrides: self.overrides.clone(),
            config,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_count_from_the_environment() {
        let with = |v: Option<&str>| {
            let v = v.map(str::to_owned);
            Config::from_lookup(move |k| (k == "REGSIM_THREADS").then(|| v.clone()).flatten())
        };
        assert_eq!(with(None).threads, None);
        assert_eq!(with(Some("")).threads, None);
        let c = with(Some(" 4 "));
        assert_eq!(c.threads, Some(4));
        assert!(c.warnings.is_empty());
        for bad in ["0", "many", "-2", "100000"] {
            let c = with(Some(bad));
            assert_eq!(c.threads, None, "{bad}");
            assert!(
                c.warnings.iter().any(|w| w.contains("REGSIM_THREADS")),
                "{bad}: {:?}",
                c.warnings
            );
        }
    }

    #[test]
    fn reads_the_contract_variables() {
        let env = |k: &str| match k {
            "REGSIM_GPU" => Some("v100.toml".to_string()),
            "REGSIM_SET" => Some("sm.max_warps=8\n\n l1d.ways = 2 \n".to_string()),
            "REGSIM_STATS" => Some("/tmp/s.json".to_string()),
            "REGSIM_MODE" => Some("timing".to_string()),
            "REGSIM_SUMMARY" => Some("1".to_string()),
            _ => None,
        };
        let c = Config::from_lookup(env);
        assert_eq!(c.gpu.as_deref(), Some("v100.toml"));
        assert_eq!(c.overrides, ["sm.max_warps=8", "l1d.ways = 2"]);
        assert_eq!(c.stats_path, Some(PathBuf::from("/tmp/s.json")));
        assert_eq!(c.mode, Mode::Timing);
        assert!(c.summary);
        assert!(c.warnings.is_empty());

        assert_eq!(c.limits, RunBounds::default());
        assert!(!c.progress);

        let env = |k: &str| match k {
            "REGSIM_MAX_CYCLES" => Some("1000000".to_string()),
            "REGSIM_MAX_INSTRUCTIONS" => Some("0".to_string()),
            "REGSIM_TIMEOUT" => Some("2.5".to_string()),
            "REGSIM_PROGRESS" => Some("1".to_string()),
            _ => None,
        };
        let c = Config::from_lookup(env);
        assert_eq!(
            c.limits,
            RunBounds {
                max_cycles: Some(1_000_000),
                max_instructions: None,
                timeout_seconds: Some(2.5),
            }
        );
        assert!(c.progress && c.warnings.is_empty());
        let c = Config::from_lookup(|k| match k {
            "REGSIM_MAX_CYCLES" => Some("lots".to_string()),
            "REGSIM_TIMEOUT" => Some("-1".to_string()),
            _ => None,
        });
        assert_eq!(c.limits, RunBounds::default());
        assert_eq!(c.warnings.len(), 2, "{:?}", c.warnings);
        assert!(
            c.warnings[0].starts_with("REGSIM_MAX_CYCLES=\"lots\""),
            "{:?}",
            c.warnings
        );

        let c = Config::from_lookup(|k| (k == "REGSIM_MODE").then(|| "fast".to_string()));
        assert_eq!(c.mode, Mode::Functional);
        assert!(!c.summary);
        assert_eq!(c.warnings.len(), 1);
    }

    #[test]
    fn selects_and_validates_the_gpu_config() {
        let c = Config::default();
        let g = c.gpu_selection().unwrap();
        assert_eq!((g.name.as_str(), g.config.gpu.num_sms), ("gtx480", 15));

        let path = timing::config::source_configs_dir().join("qv100.toml");
        let c = Config {
            gpu: Some(path.display().to_string()),
            overrides: vec!["gpu.num_sms=4".into()],
            ..Config::default()
        };
        let g = c.gpu_selection().unwrap();
        assert_eq!((g.name.as_str(), g.config.gpu.num_sms), ("qv100", 4));

        let bad = |gpu: &str, o: &str| {
            Config {
                gpu: Some(gpu.into()),
                overrides: vec![o.into()],
                ..Config::default()
            }
            .gpu_selection()
            .unwrap_err()
        };
        assert!(bad("gtx480", "sm.max_warps=0").starts_with("sm.max_warps: "));
        // An unknown key an override wrote is the override's, not the file's.
        let e = bad("gtx480", "sm.warpz=4");
        assert!(
            e.starts_with("override `sm.warpz=4`: sm.warpz: unknown field `warpz`"),
            "{e}"
        );
        let e = bad("gtx480", "nosection.key=1");
        assert!(
            e.starts_with("override `nosection.key=1`: nosection: "),
            "{e}"
        );
        // Paths in messages have no `..`.
        let dir = timing::config::source_configs_dir();
        assert!(dir.join("gtx480.toml").is_file(), "{}", dir.display());
        assert!(
            !dir.display().to_string().contains(".."),
            "{}",
            dir.display()
        );
        let e = bad("nosuch", "sm.max_warps=4");
        assert!(
            e.contains("no GPU config named `nosuch`") && e.contains(", gtx480,"),
            "{e}"
        );
    }
}

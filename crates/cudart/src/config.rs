//! Settings the `regsim run` CLI passes to the runtime through the environment (the
//! contract is documented in the crate's top-level doc).

use std::path::PathBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    #[default]
    Functional,
    Timing,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Config {
    pub gpu_config: Option<PathBuf>,
    pub stats_path: Option<PathBuf>,
    pub mode: Mode,
    /// Warnings about the environment itself, printed once at start-up.
    pub warnings: Vec<String>,
}

impl Config {
    pub fn from_env() -> Config {
        Config::from_lookup(|key| std::env::var_os(key).map(|v| v.to_string_lossy().into_owned()))
    }

    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Config {
        let mut config = Config {
            gpu_config: lookup("REGSIM_GPU")
                .filter(|s| !s.is_empty())
                .map(PathBuf::from),
            stats_path: lookup("REGSIM_STATS")
                .filter(|s| !s.is_empty())
                .map(PathBuf::from),
            ..Config::default()
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_contract_variables() {
        let env = |k: &str| match k {
            "REGSIM_GPU" => Some("v100.toml".to_string()),
            "REGSIM_STATS" => Some("/tmp/s.json".to_string()),
            "REGSIM_MODE" => Some("timing".to_string()),
            _ => None,
        };
        let c = Config::from_lookup(env);
        assert_eq!(c.gpu_config, Some(PathBuf::from("v100.toml")));
        assert_eq!(c.stats_path, Some(PathBuf::from("/tmp/s.json")));
        assert_eq!(c.mode, Mode::Timing);
        assert!(c.warnings.is_empty());

        let c = Config::from_lookup(|k| (k == "REGSIM_MODE").then(|| "fast".to_string()));
        assert_eq!(c.mode, Mode::Functional);
        assert_eq!(c.warnings.len(), 1);
    }
}

//! Workload classes (`workloads/classes.toml`): the papers' groups of benchmarks (CERF's
//! cache-sensitive and -insensitive, LTRF's register-limited, WIR's reuse classes), each
//! assignment with the measured criterion that put the workload there.
//!
//! The file is data, read at run time: one table per classification,
//!
//! ```toml
//! [cache_sensitivity]
//! criterion = "IPC grows by at least 10% with a 4x L1D"
//! measured = "scripts/cache-sensitivity.sh on gtx480 at commit ..."
//! [cache_sensitivity.workloads]
//! atax = { class = "sensitive", measured = "IPC 0.270 -> 0.375 (+38.6%)" }
//! ```
//!
//! A figure of `figures.toml` names its classification (`classes = "cache_sensitivity"`);
//! its tables then break every design down by class.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context, Result};
use serde::Deserialize;

/// One workload's class and the measurement behind it.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Assignment {
    pub class: String,
    /// The measured value that decided the class, in words.
    pub measured: String,
}

/// One classification: its rule, how it was measured, and every workload's class.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Classification {
    /// The rule that decides a class.
    pub criterion: String,
    /// How (and from what commit) the measurements were taken.
    pub measured: String,
    pub workloads: BTreeMap<String, Assignment>,
}

impl Classification {
    /// The class of a workload (`None`: not classified).
    pub fn class_of(&self, workload: &str) -> Option<&str> {
        self.workloads.get(workload).map(|a| a.class.as_str())
    }

    /// The class names, sorted.
    pub fn class_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.workloads.values().map(|a| a.class.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        names
    }
}

/// Every classification of the file, by name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Classes {
    pub by_name: BTreeMap<String, Classification>,
}

impl Classes {
    /// Parses the text of a classes file; `origin` names it in errors.
    pub fn from_text(text: &str, origin: &str) -> Result<Classes> {
        let by_name: BTreeMap<String, Classification> =
            toml::from_str(text).map_err(|e| anyhow!("{origin}: {e}"))?;
        Ok(Classes { by_name })
    }

    /// Reads `path`.
    pub fn load(path: &Path) -> Result<Classes> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        Classes::from_text(&text, &path.display().to_string())
    }

    /// The classification `name` (`None`: the file has none of that name).
    pub fn get(&self, name: &str) -> Option<&Classification> {
        self.by_name.get(name)
    }
}

/// Where the classes file is: `workloads/classes.toml` beside the built-in workloads the
/// running executable uses, or in the source tree.
pub fn classes_path() -> Option<PathBuf> {
    let beside_bin =
        regsim::sweep::spec::find_workloads_dir(std::env::current_exe().ok().as_deref())
            .parent()
            .map(|w| w.join("classes.toml"));
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads/classes.toml");
    beside_bin.into_iter().chain([source]).find(|p| p.is_file())
}

/// The classes of this checkout (none when there is no classes file).
pub fn load_default() -> Result<Classes> {
    match classes_path() {
        Some(p) => Classes::load(&p),
        None => Ok(Classes::default()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_file_parses_and_states_its_criteria() {
        let c = load_default().unwrap();
        for name in [
            "cache_sensitivity",
            "register_limited",
            "wir_reuse",
            "long_strands",
            "operand_bound",
        ] {
            let cl = c.get(name).unwrap_or_else(|| panic!("{name}"));
            assert!(
                !cl.criterion.is_empty() && !cl.measured.is_empty(),
                "{name}"
            );
            assert!(
                cl.class_names().len() >= 2,
                "{name}: {:?}",
                cl.class_names()
            );
            assert!(
                cl.workloads.values().all(|a| !a.measured.is_empty()),
                "{name}"
            );
        }
    }

    /// scripts/workload-classes.py measures every workload, so a workload added without
    /// re-deriving the classes (or one removed without it) shows up here.
    #[test]
    fn every_built_in_workload_is_classified_by_every_classification() {
        let c = load_default().unwrap();
        let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads/bin");
        let mut names: Vec<String> = std::fs::read_dir(&bin)
            .unwrap()
            .flatten()
            .filter(|e| e.path().is_file())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert!(names.len() >= 40, "{names:?}");
        for (name, cl) in &c.by_name {
            let classified: Vec<&String> = cl.workloads.keys().collect();
            assert_eq!(
                classified,
                names.iter().collect::<Vec<_>>(),
                "{name}: classified workloads differ from workloads/bin"
            );
        }
    }

    #[test]
    fn a_misspelt_field_is_refused_with_the_file_named() {
        let e = Classes::from_text(
            "[x]\ncriterion = 'c'\nmeasured = 'm'\n[x.workloads]\na = { klass = 'k', measured = 'm' }\n",
            "classes.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("classes.toml") && e.contains("klass"), "{e}");
    }
}

//! Helpers the end-to-end tests of the register-file designs share.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository's root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `regsim ARGS` run to its end, with the runtime and configs of this build.
pub fn regsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_regsim"))
        .args(args)
        .env_remove("REGSIM_CUDART")
        .env_remove("REGSIM_CONFIGS")
        .output()
        .expect("the regsim binary runs")
}

/// Every built-in workload binary, sorted.
pub fn workloads() -> Vec<PathBuf> {
    let dir = repo_root().join("workloads/bin");
    let mut bins: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.is_file())
        .collect();
    bins.sort();
    assert!(!bins.is_empty(), "no workloads in {}", dir.display());
    bins
}

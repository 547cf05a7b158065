//! Helpers the end-to-end tests of the register-file designs share.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The repository's root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
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

//! Helpers the end-to-end tests of the register-file designs share.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Every register-file design (checked against the list `regsim run` accepts).
pub const DESIGNS: [&str; 13] = [
    "baseline",
    "ideal",
    "ideal-unlimited",
    "ltrf",
    "ltrf-plus",
    "ltrf-conf",
    "rfc",
    "orf-lrf",
    "malekeh",
    "bow",
    "wir",
    "cerf",
    "reuse-cache",
];

/// The repository's root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `regsim ARGS` from the repository's root, with the built runtime and configs (the
/// environment's `REGSIM_CUDART`/`REGSIM_CONFIGS` removed).
pub fn regsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_regsim"))
        .args(args)
        .current_dir(repo_root())
        .env_remove("REGSIM_CUDART")
        .env_remove("REGSIM_CONFIGS")
        .output()
        .expect("the regsim binary runs")
}

/// `regsim run ARGS -- workloads/bin/WORKLOAD` with its statistics written to `stats`;
/// the program must print PASS. Returns the statistics.
pub fn run_workload_stats(workload: &str, args: &[&str], stats: &Path) -> serde_json::Value {
    let program = repo_root().join("workloads/bin").join(workload);
    let out = Command::new(env!("CARGO_BIN_EXE_regsim"))
        .arg("run")
        .args(["--stats", stats.to_str().expect("a UTF-8 path")])
        .args(args)
        .arg("--")
        .arg(program)
        .env_remove("REGSIM_CUDART")
        .env_remove("REGSIM_CONFIGS")
        .output()
        .expect("the regsim binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.trim_end().ends_with("PASS"),
        "{workload} {args:?}: {out:?}"
    );
    serde_json::from_str(&std::fs::read_to_string(stats).expect("stats written"))
        .expect("the statistics are JSON")
}

/// A statistics file's text without its wall-clock lines (`wall_seconds`, rates per
/// second), which differ between identical simulations.
pub fn without_wall_clock(stats: &str) -> String {
    let kept: Vec<&str> = stats
        .lines()
        .filter(|l| !l.contains("\"wall_seconds\"") && !l.contains("_per_second\""))
        .collect();
    kept.join("\n")
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

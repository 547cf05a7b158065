//! Finding PTX files for the tests that lower real compiler output.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// `workloads/ptx/` at the repository root: nvcc and clang output of the benchmark programs.
pub fn workloads_ptx_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads/ptx")
}

/// Every `.ptx` file under `dir` and its subdirectories, sorted by path.
pub fn ptx_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    collect_ptx(dir, &mut out);
    out
}

fn collect_ptx(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect_ptx(&p, out);
        } else if p.extension().is_some_and(|e| e == "ptx") {
            out.push(p);
        }
    }
}

//! Finding and loading the workloads' PTX, for the tests that run passes on real code.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// `workloads/` at the repository root.
pub fn workloads_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads")
}

/// Every `.ptx` file under `dir` and its subdirectories, sorted by path.
pub fn ptx_files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    collect_ptx(dir, &mut out);
    out
}

fn collect_ptx(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            collect_ptx(&p, out);
        } else if p.extension().is_some_and(|e| e == "ptx") {
            out.push(p);
        }
    }
}

/// The nvcc output of every workload, then the clang output (`workloads/ptx/nvcc/*.ptx`,
/// `workloads/ptx/clang/*.ptx`), each sorted by name; variants such as `nvcc-lineinfo` are
/// left out.
pub fn nvcc_and_clang_ptx() -> Vec<PathBuf> {
    let dir = workloads_dir().join("ptx");
    ["nvcc", "clang"]
        .iter()
        .flat_map(|compiler| ptx_files_under(&dir.join(compiler)))
        .collect()
}

/// Parses and lowers one PTX file; panics naming the file on any error.
pub fn load(path: &Path) -> ir::Program {
    let name = path.display().to_string();
    let source = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{name}: {e}"));
    let module = ptx::parse(&name, &source).unwrap_or_else(|e| panic!("{name}: {e}"));
    ir::lower(&module, &name, &source).unwrap_or_else(|e| panic!("{name}: {e}"))
}

//! Lowers every PTX file under `workloads/ptx/` (nvcc and clang output of the benchmark
//! programs) and verifies every function: the IR must accept what the real compilers emit.

use std::path::{Path, PathBuf};

fn ptx_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            ptx_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "ptx") {
            out.push(p);
        }
    }
}

#[test]
fn every_workload_ptx_lowers_and_verifies() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads/ptx");
    let mut files = Vec::new();
    ptx_files(&root, &mut files);
    assert!(!files.is_empty(), "no .ptx files under {}", root.display());
    let mut failures = Vec::new();
    let mut kernels = 0;
    for path in &files {
        let name = path.display().to_string();
        let source = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{name}: {e}"));
        let module = match ptx::parse(&name, &source) {
            Ok(m) => m,
            Err(e) => {
                failures.push(format!("{name}: parse error: {e}"));
                continue;
            }
        };
        let program = match ir::lower(&module, &name, &source) {
            Ok(p) => p,
            Err(e) => {
                failures.push(e.to_string());
                continue;
            }
        };
        kernels += program.kernels().count();
        for f in &program.functions {
            if let Err(errors) = ir::verify(f) {
                for e in errors {
                    failures.push(format!("{name}: {e}"));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} problems:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        kernels >= files.len(),
        "every workload file defines at least one kernel"
    );
}

//! Lowers every PTX file under `workloads/ptx/` (nvcc and clang output of the benchmark
//! programs) and verifies every function: the IR must accept what the real compilers emit.

use std::path::{Path, PathBuf};

mod common;

use common::ptx_files;

/// Lowers and verifies `files`; returns the programs in the same order.
fn lower_all(files: &[PathBuf]) -> Vec<ir::Program> {
    let mut failures = Vec::new();
    let mut programs = Vec::new();
    for path in files {
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
        for f in &program.functions {
            if let Err(errors) = ir::verify(f) {
                for e in errors {
                    failures.push(format!("{name}: {e}"));
                }
            }
        }
        programs.push(program);
    }
    assert!(
        failures.is_empty(),
        "{} problems:\n{}",
        failures.len(),
        failures.join("\n")
    );
    programs
}

#[test]
fn every_workload_ptx_lowers_and_verifies() {
    let root = common::workloads_ptx_dir();
    let files = ptx_files(&root);
    assert!(!files.is_empty(), "no .ptx files under {}", root.display());
    let programs = lower_all(&files);
    for (path, p) in files.iter().zip(&programs) {
        assert!(p.kernels().count() > 0, "{}: no kernel", path.display());
        assert!(
            p.functions.iter().any(|f| f.insts.len() > 1),
            "{}",
            path.display()
        );
    }
}

#[test]
fn intrinsics_ptx_lowers_and_verifies() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let files = ptx_files(&data);
    assert_eq!(
        files.len(),
        2,
        "tests/data holds the nvcc and the clang output"
    );
    let programs = lower_all(&files);
    let nvcc = programs
        .iter()
        .find(|p| p.file_name.contains("nvcc"))
        .expect("nvcc output");
    // Module variables: a managed int, an initialized constant table, and a pointer
    // initialized with the address of another variable.
    let managed = nvcc
        .var_by_name("managed_counter")
        .expect("managed variable");
    assert!(nvcc.variable(managed).managed);
    let cscale = nvcc.variable(nvcc.var_by_name("cscale").expect("cscale"));
    assert_eq!(cscale.space, ir::VarSpace::Const);
    assert_eq!(
        &cscale.init.as_deref().expect("initializer")[4..8],
        &2.0f32.to_le_bytes()
    );
    let gptr = nvcc.variable(nvcc.var_by_name("gptr").expect("gptr"));
    let table = nvcc.var_by_name("gtable").expect("gtable");
    assert_eq!(gptr.relocations.len(), 1);
    assert_eq!(gptr.relocations[0].symbol, ir::Symbol::Global(table));
    // A table of function pointers relocates to functions.
    let fns = nvcc.variable(nvcc.var_by_name("fns").expect("fns"));
    assert_eq!(fns.relocations.len(), 2);
    assert!(fns
        .relocations
        .iter()
        .all(|r| matches!(r.symbol, ir::Symbol::Func(_))));
    // printf calls the extern vprintf declaration.
    let vprintf = nvcc.func_by_name("vprintf").expect("vprintf");
    assert!(!nvcc.function(vprintf).has_body);
    let mut seen: Vec<&str> = nvcc
        .functions
        .iter()
        .flat_map(|f| f.insts.iter().map(|i| i.op.opcode()))
        .collect();
    seen.sort();
    seen.dedup();
    for expected in [
        "tex", "shfl", "vote", "match", "redux", "atom", "bar", "fence", "call", "cvt", "fma",
    ] {
        assert!(
            seen.contains(&expected),
            "nvcc output has no '{expected}': {seen:?}"
        );
    }
}

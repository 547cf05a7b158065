//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use ptx::ast::Module;

/// Every `.ptx` file under `dir`, recursively, sorted.
pub fn ptx_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "ptx") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

pub fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// Parses, panicking with the rendered diagnostics on error.
pub fn parse_ok(name: &str, text: &str) -> Module {
    match ptx::parse(name, text) {
        Ok(m) => m,
        Err(e) => panic!("{e}"),
    }
}

/// Checks the round-trip contract on one source text and returns the canonical print.
pub fn assert_round_trip(name: &str, text: &str) -> String {
    let mut first = parse_ok(name, text);
    let printed = ptx::print(&first);
    let mut second = match ptx::parse(&format!("{name} (printed)"), &printed) {
        Ok(m) => m,
        Err(e) => panic!("printed form of {name} does not parse:\n{e}\n--- printed ---\n{printed}"),
    };
    let reprinted = ptx::print(&second);
    first.erase_spans();
    second.erase_spans();
    assert!(
        first == second,
        "{name}: parse(print(tree)) differs from tree"
    );
    assert_eq!(printed, reprinted, "{name}: printing is not a fixpoint");
    printed
}

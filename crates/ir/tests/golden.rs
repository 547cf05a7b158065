//! Golden tests of the static analyses on lowered PTX.
//!
//! Each `tests/golden/*.ptx` file is a small PTX module, then a marker line, then the
//! expected dump of every function with a body (CFG, dominators, post-dominators, loops,
//! intervals, liveness) as `//` comment lines, so the file stays valid PTX. The test lowers
//! the module, runs the analyses and compares; with `REGSIM_BLESS=1` it rewrites the
//! expected part instead.

use std::path::{Path, PathBuf};

use ir::analysis::{dump_cfg, Analyses, AnalysisKind, AnalysisSet, Namer};
use ir::print::{block_name, inst_to_string};
use ir::{Function, Program};

const MARKER: &str = "// ---- expected analyses (REGSIM_BLESS=1 rewrites everything below) ----";

const DUMPED: AnalysisSet = AnalysisSet::of(&[
    AnalysisKind::Dominators,
    AnalysisKind::PostDominators,
    AnalysisKind::Loops,
    AnalysisKind::Intervals,
    AnalysisKind::Liveness,
]);

fn dump_function(program: &Program, f: &Function) -> String {
    let block = |b| block_name(f, b);
    let reg = |r: ir::RegId| f.reg(r).name.clone();
    let inst = |i| inst_to_string(Some(program), f, f.inst(i));
    let names = Namer {
        block: &block,
        reg: &reg,
        inst: &inst,
    };
    let mut analyses: Analyses<Function> = Analyses::new();
    let mut out = format!("function {}\n", f.name);
    out += &dump_cfg(f, &names);
    out += &analyses.dump(f, DUMPED, &names);
    out
}

/// The analyses' dump of every function with a body, or the front end's errors.
fn actual(path: &Path, source: &str) -> String {
    let name = path.display().to_string();
    let module = match ptx::parse(&name, source) {
        Ok(m) => m,
        Err(e) => return format!("parse error: {e}\n"),
    };
    let program = match ir::lower(&module, &name, source) {
        Ok(p) => p,
        Err(e) => return format!("lowering error: {e}\n"),
    };
    program
        .functions
        .iter()
        .filter(|f| f.has_body)
        .map(|f| dump_function(&program, f))
        .collect::<Vec<_>>()
        .join("\n")
}

fn as_comments(text: &str) -> String {
    text.lines()
        .map(|l| {
            if l.is_empty() {
                "//\n".to_string()
            } else {
                format!("// {l}\n")
            }
        })
        .collect()
}

fn golden_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "ptx"))
        .collect();
    files.sort();
    files
}

#[test]
fn analyses_match_golden_files() {
    let bless = std::env::var_os("REGSIM_BLESS").is_some_and(|v| v == "1");
    let files = golden_files();
    assert!(!files.is_empty(), "no golden files");
    let mut mismatches = Vec::new();
    for path in &files {
        let text =
            std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let (source, expected) = match text.split_once(MARKER) {
            Some((source, expected)) => (source, expected.strip_prefix('\n').unwrap_or(expected)),
            None => (text.as_str(), ""),
        };
        let actual = as_comments(&actual(path, source));
        if actual == expected {
            continue;
        }
        if bless {
            let mut source = source.to_string();
            if !source.ends_with('\n') {
                source.push('\n');
            }
            std::fs::write(path, format!("{source}{MARKER}\n{actual}"))
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        } else {
            mismatches.push(format!(
                "{}: analyses differ from the expected dump\n--- expected\n{expected}--- actual\n{actual}",
                path.display()
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{}\n(run with REGSIM_BLESS=1 to accept the new output)",
        mismatches.join("\n")
    );
}

//! Real PTX files: the test data written by nvcc, clang and by hand, and every workload's
//! PTX under `workloads/ptx/`, must parse, round-trip and print canonically.

mod common;

use std::path::Path;

use common::{assert_round_trip, data_dir, ptx_files};

/// The canonical print of each test-data file is checked in under `tests/data/printed/`;
/// `REGSIM_BLESS=1 cargo test -p ptx` rewrites them.
#[test]
fn test_data_round_trips_and_matches_golden_print() {
    let files = ptx_files(&data_dir());
    let files: Vec<_> = files
        .into_iter()
        .filter(|p| !p.components().any(|c| c.as_os_str() == "printed"))
        .collect();
    assert!(
        files.len() >= 9,
        "expected the checked-in test PTX, found {files:?}"
    );
    let bless = std::env::var_os("REGSIM_BLESS").is_some();
    let mut mismatches = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let printed = assert_round_trip(&name, &text);
        let golden = data_dir().join("printed").join(&name);
        if bless {
            std::fs::create_dir_all(golden.parent().unwrap()).unwrap();
            std::fs::write(&golden, &printed).unwrap();
        } else if std::fs::read_to_string(&golden).ok().as_deref() != Some(printed.as_str()) {
            mismatches.push(name);
        }
    }
    assert!(
        mismatches.is_empty(),
        "canonical print differs from tests/data/printed/ for {mismatches:?} \
         (REGSIM_BLESS=1 to accept)"
    );
}

/// Every workload's PTX (nvcc, clang, nvcc -lineinfo). Fails if there is none, so it
/// cannot pass by finding nothing.
#[test]
fn every_workload_ptx_round_trips() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads/ptx");
    let files = ptx_files(&dir);
    assert!(!files.is_empty(), "no .ptx files under {}", dir.display());
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        assert_round_trip(&path.display().to_string(), &text);
    }
}

/// Windows line endings and a `.loc` closed by `}` on its own line parse to the same tree.
#[test]
fn crlf_line_endings_parse_like_lf() {
    let path = common::data_dir().join("nvcc_lineinfo_inlined.ptx");
    let lf = std::fs::read_to_string(path).unwrap();
    let crlf = lf.replace('\n', "\r\n");
    let mut a = common::parse_ok("lf.ptx", &lf);
    let mut b = common::parse_ok("crlf.ptx", &crlf);
    a.erase_spans();
    b.erase_spans();
    // Section bodies are verbatim text, so they keep their `\r`s; nothing else may.
    for item in &mut b.items {
        if let ptx::ast::ModuleItem::Section(s) = item {
            assert!(s.body.contains('\r'));
            s.body = s.body.replace('\r', "");
        }
    }
    assert!(a == b);
    let err = ptx::parse("crlf.ptx", ".entry k()\r\n{\r\n\tfoo;\r\n}\r\n").unwrap_err();
    assert_eq!(err.first().source_line, "\tfoo;");
    let m = common::parse_ok("loc.ptx", ".entry k() { .loc 1 2 3 }");
    assert!(matches!(&m.items[0], ptx::ast::ModuleItem::Function(f)
        if matches!(&f.body.as_ref().unwrap().statements[0], ptx::ast::Statement::Loc(l) if l.rest.is_none())));
}

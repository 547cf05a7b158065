//! `tests/programs/wgmma_sparse.cu` (clang-19, sm_90a, inline PTX; build.sh): a 64 x 16 x
//! 64 GEMM with a 2:4 sparse A through two `wgmma.mma_async.sp.m64n16k32.f32.f16.f16`
//! (A and metadata in registers, B from shared memory), checked against the dense product
//! on the host: PASS on h100 functionally and under every register-file design.

mod common;

use std::path::{Path, PathBuf};

fn program() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/bin/wgmma_sparse")
}

fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let exe = program();
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--", exe.to_str().expect("UTF-8 path")]);
    let out = common::regsim(&all);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_sparse_wgmma_gemm_passes_on_h100_under_every_design() {
    let (code, so, se) = run(&["--gpu", "h100", "--functional"]);
    assert_eq!(code, Some(0), "{so}{se}");
    assert!(so.ends_with("PASS\n"), "{so}{se}");
    assert!(so.contains(": 0 wrong"), "{so}");
    for design in common::DESIGNS {
        let (code, so, se) = run(&["--gpu", "h100", "--rf", design]);
        assert_eq!(code, Some(0), "{design}: {so}{se}");
        assert!(so.ends_with("PASS\n"), "{design}: {so}{se}");
    }
}

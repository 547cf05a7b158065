//! `tests/programs/wgmma.cu` (clang-19, sm_90a, inline PTX; build.sh): a 64 x 32 x 64
//! f16 GEMM with `wgmma.mma_async` from shared-memory descriptors under each swizzle mode
//! and with A from registers, checked bit for bit on the host: PASS on h100 functionally
//! and under every register-file design; refused on gtx480, whose compute capability
//! lacks the instruction.

mod common;

use std::path::{Path, PathBuf};

fn program() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/bin/wgmma")
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
fn a_wgmma_gemm_passes_on_h100_under_every_design() {
    let (code, so, se) = run(&["--gpu", "h100", "--functional"]);
    assert_eq!(code, Some(0), "{so}{se}");
    assert!(so.ends_with("PASS\n"), "{so}{se}");
    assert!(
        se.contains("regsim: kernel void wgmma_gemm<128, true>("),
        "{se}"
    );
    for design in common::DESIGNS {
        let (code, so, se) = run(&["--gpu", "h100", "--rf", design]);
        assert_eq!(code, Some(0), "{design}: {so}{se}");
        assert!(so.ends_with("PASS\n"), "{design}: {so}{se}");
    }
}

#[test]
fn a_wgmma_gemm_is_refused_on_gtx480() {
    let (code, so, se) = run(&["--gpu", "gtx480"]);
    assert_ne!(code, Some(0), "{so}{se}");
    assert!(
        se.contains("executes wgmma.mma_async, which needs compute capability 9.0 (sm_90a)"),
        "{se}"
    );
    assert!(
        so.contains("no kernel image is available for execution on the device"),
        "{so}"
    );
}

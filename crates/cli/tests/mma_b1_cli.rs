//! `tests/programs/mma_b1.cu` (nvcc 11.8, sm_80, inline PTX; build.sh): a binary GEMM
//! through single-bit `mma.sync` (m16n8k256 AND and XOR, m16n8k128 AND, m8n8k128 XOR),
//! checked element by element against a CPU popcount on the host: PASS on rtx-a6000 and
//! h100 functionally and under every register-file design.

mod common;

use std::path::{Path, PathBuf};

fn program() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/bin/mma_b1")
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
fn a_binary_gemm_passes_on_rtx_a6000_and_h100_under_every_design() {
    for gpu in ["rtx-a6000", "h100"] {
        let (code, so, se) = run(&["--gpu", gpu, "--functional"]);
        assert_eq!(code, Some(0), "{gpu}: {so}{se}");
        assert!(so.ends_with("PASS\n"), "{gpu}: {so}{se}");
        assert!(so.contains("0 wrong"), "{gpu}: {so}");
        for design in common::DESIGNS {
            let (code, so, se) = run(&["--gpu", gpu, "--rf", design]);
            assert_eq!(code, Some(0), "{gpu} {design}: {so}{se}");
            assert!(so.ends_with("PASS\n"), "{gpu} {design}: {so}{se}");
        }
    }
}

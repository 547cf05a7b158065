//! `tests/programs/mma_sparse.cu` (nvcc 11.8, sm_80, inline PTX; build.sh): sparse GEMM
//! tiles through `mma.sp` m16n8k32 and m16n8k16 f16, m16n8k64 s8 and m16n8k8 tf32 with
//! sparsity selectors 1, 2, 0 and 3, checked element by element against a CPU product of
//! the dense A on the host: PASS on rtx-a6000 and h100 functionally and under every
//! register-file design.

mod common;

use std::path::{Path, PathBuf};

fn program() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/bin/mma_sparse")
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
fn a_sparse_gemm_passes_on_rtx_a6000_and_h100_under_every_design() {
    for gpu in ["rtx-a6000", "h100"] {
        let (code, so, se) = run(&["--gpu", gpu, "--functional"]);
        assert_eq!(code, Some(0), "{gpu}: {so}{se}");
        assert!(so.ends_with("PASS\n"), "{gpu}: {so}{se}");
        assert!(so.contains(": 0 wrong"), "{gpu}: {so}");
        for design in common::DESIGNS {
            let (code, so, se) = run(&["--gpu", gpu, "--rf", design]);
            assert_eq!(code, Some(0), "{gpu} {design}: {so}{se}");
            assert!(so.ends_with("PASS\n"), "{gpu} {design}: {so}{se}");
        }
    }
}

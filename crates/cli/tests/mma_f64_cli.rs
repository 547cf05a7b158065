//! `tests/programs/mma_f64.cu` (nvcc 11.8, sm_90, inline PTX; build.sh): an f64 GEMM
//! through `mma.sync` m16n8k16, m16n8k8, m16n8k4 (sm_90) and m8n8k4 `.f64`, exact on the
//! host: PASS on h100 functionally and under every register-file design.

mod common;

use std::path::{Path, PathBuf};

fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let exe: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/bin/mma_f64");
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
fn an_f64_gemm_passes_on_h100_under_every_design() {
    let (code, so, se) = run(&["--gpu", "h100", "--functional"]);
    assert_eq!((code, so.as_str()), (Some(0), "0 wrong\nPASS\n"), "{se}");
    for design in common::DESIGNS {
        let (code, so, se) = run(&["--gpu", "h100", "--rf", design]);
        assert_eq!(
            (code, so.as_str()),
            (Some(0), "0 wrong\nPASS\n"),
            "{design}: {se}"
        );
    }
}

//! `tests/programs/mma_volta.cu` (nvcc 11.8, sm_70, inline PTX; build.sh): Volta's
//! quad-pair `mma.sync.aligned.m8n8k4` with f16 inputs under all four `.row`/`.col`
//! combinations, with f16 and f32 accumulators, exact on the host: PASS on qv100 and
//! h100 functionally and under every register-file design.

mod common;

use std::path::{Path, PathBuf};

fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let exe: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/bin/mma_volta");
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
fn volta_quad_pair_products_pass_on_qv100_and_h100_under_every_design() {
    for gpu in ["qv100", "h100"] {
        let (code, so, se) = run(&["--gpu", gpu, "--functional"]);
        assert_eq!(
            (code, so.as_str()),
            (Some(0), "0 wrong\nPASS\n"),
            "{gpu}: {se}"
        );
        for design in common::DESIGNS {
            let (code, so, se) = run(&["--gpu", gpu, "--rf", design]);
            assert_eq!(
                (code, so.as_str()),
                (Some(0), "0 wrong\nPASS\n"),
                "{gpu} {design}: {se}"
            );
        }
    }
}

//! `st.async` and `red.async` in a CUDA program (`tests/programs/async_store.cu`, built by
//! clang-19 for sm_90 by `tests/programs/build.sh`; docs/tensor-cores.md): a ring of CTAs
//! in clusters of 4 stores and reduces into the next CTA's shared memory, completing on
//! its mbarrier; it prints PASS on h100 in functional mode and under every register-file
//! design, and a GPU without clusters refuses the launch.

mod common;

use std::path::{Path, PathBuf};

fn program() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/bin/async_store")
}

fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let exe = program();
    let mut all = vec!["run"];
    all.extend(args);
    all.extend(["--", exe.to_str().expect("a UTF-8 path")]);
    let out = common::regsim(&all);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn async_stores_pass_on_h100_functionally_and_under_every_design() {
    let (code, so, se) = run(&["--gpu", "h100", "--functional"]);
    assert_eq!((code, so.as_str()), (Some(0), "PASS\n"), "{se}");
    for design in common::DESIGNS {
        let (code, so, se) = run(&["--gpu", "h100", "--rf", design]);
        assert_eq!((code, so.as_str()), (Some(0), "PASS\n"), "{design}: {se}");
        assert!(
            se.contains("regsim: kernel ring(float const*, unsigned int*) grid (12,1,1)"),
            "{design}: {se}"
        );
    }
}

#[test]
fn a_gpu_without_clusters_refuses_the_launch() {
    let (code, so, se) = run(&["--gpu", "rtx-a6000", "--functional"]);
    assert_eq!(code, Some(1), "{so}{se}");
    assert_eq!(so, "cluster launch refused: cudaErrorNotSupported\n");
}

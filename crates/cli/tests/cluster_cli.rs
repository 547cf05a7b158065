//! A CUDA program with thread-block clusters (`tests/programs/cluster.cu`, built by
//! clang-19 for sm_90 by `tests/programs/build.sh`; docs/tensor-cores.md): clusters of 4
//! and of 1 x 2 CTAs exchange data through distributed shared memory and the cluster
//! barrier, and it prints PASS on h100 in functional mode and under every register-file
//! design; a GPU below compute capability 9.0 refuses its cluster launch with the reason.

mod common;

use std::path::{Path, PathBuf};

fn program() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/bin/cluster")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let exe = program();
    let mut all = vec!["run"];
    all.extend(args);
    all.extend(["--", exe.to_str().expect("a UTF-8 path")]);
    let out = common::regsim(&all);
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

#[test]
fn a_cluster_program_passes_on_h100_under_every_design() {
    let (code, so, se) = run(&["--gpu", "h100", "--functional"]);
    assert_eq!((code, so.as_str()), (Some(0), "PASS\n"), "{se}");
    // The cluster of 9 CTAs is above the portable limit.
    assert!(
        se.contains(
            "launch refused: a cluster of 9x1x1 = 9 CTAs; the limit is 8 (16 with \
             cudaFuncAttributeNonPortableClusterSizeAllowed)"
        ),
        "{se}"
    );
    for design in common::DESIGNS {
        let (code, so, se) = run(&["--gpu", "h100", "--rf", design]);
        assert_eq!((code, so.as_str()), (Some(0), "PASS\n"), "{design}: {se}");
        assert!(
            se.contains(
                "regsim: kernel sum_slices(float const*, float*, unsigned int*) grid (12,1,1)"
            ),
            "{design}: {se}"
        );
    }
}

#[test]
fn a_gpu_without_clusters_refuses_the_launch() {
    for (gpu, cc) in [("gtx480", "7.0"), ("rtx-a6000", "8.6")] {
        let (code, so, se) = run(&["--gpu", gpu, "--functional"]);
        assert_eq!(code, Some(1), "{gpu}: {so}{se}");
        assert_eq!(
            so, "cluster launch refused: cudaErrorNotSupported\n",
            "{gpu}"
        );
        assert!(
            se.contains(&format!(
                "launch refused: thread-block clusters (4x1x1 CTAs) need compute capability \
                 9.0 or newer; this GPU is {cc}"
            )),
            "{gpu}: {se}"
        );
    }
}

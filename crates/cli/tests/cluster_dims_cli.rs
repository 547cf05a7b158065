//! `__cluster_dims__` as nvcc 11.8 compiles it (`tests/programs/cluster_dims.cu`, built
//! for sm_90 by `tests/programs/build.sh`): nvcc emits `.explicitcluster` and
//! `.reqnctapercluster 2, 2, 1`, and regsim takes the cluster shape from the kernel under
//! a plain `<<<>>>` launch: the cluster special registers and distributed shared memory
//! agree, a grid that is not a whole number of clusters is refused, and a GPU below
//! compute capability 9.0 refuses the launch.

mod common;

use std::path::Path;

fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let exe = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/bin/cluster_dims");
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
fn the_kernels_cluster_dims_shape_its_clusters_on_h100() {
    for args in [
        &["--gpu", "h100", "--functional"][..],
        &["--gpu", "h100"],
        &["--gpu", "h100", "--rf", "ltrf"],
    ] {
        let (code, so, se) = run(args);
        assert_eq!((code, so.as_str()), (Some(0), "PASS\n"), "{args:?}: {se}");
        assert!(
            se.contains("launch refused: grid (3,4,1) is not a whole number of 2x2x1 clusters"),
            "{args:?}: {se}"
        );
    }
}

#[test]
fn a_gpu_without_clusters_refuses_it() {
    let (code, so, se) = run(&["--gpu", "rtx-a6000", "--functional"]);
    assert_eq!(code, Some(1), "{so}{se}");
    assert_eq!(so, "cluster launch refused: cudaErrorNotSupported\n");
    assert!(
        se.contains("thread-block clusters (2x2x1 CTAs) need compute capability 9.0"),
        "{se}"
    );
}

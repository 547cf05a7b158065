//! Thread-block clusters through the driver API (`tests/programs/cluster_driver.cu`,
//! host-only C++ built by g++ against CUDA 12's cuda.h, `tests/programs/build.sh`): PTX
//! loaded at run time and launched by `cuLaunchKernelEx` with the cluster dimension
//! attribute (the path `cudaLaunchKernelEx` takes), and `cuOccupancyMaxActiveClusters` /
//! `cuOccupancyMaxPotentialClusterSize` (the runtime's `cudaOccupancy*Cluster*`).

mod common;

use std::path::Path;

fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let exe = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/bin/cluster_driver");
    let mut all = vec!["run"];
    all.extend(args);
    all.extend(["--", exe.to_str().expect("a UTF-8 path")]);
    let out = common::regsim(&all);
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

#[test]
fn cu_launch_kernel_ex_runs_clusters_and_the_occupancy_calls_count_them() {
    // h100's GPCs hold 18, 18 and six times 16 SMs (gpu.gpc_sms); this kernel's
    // 256-thread CTAs fit 8 to an SM (2048 threads), so a GPC of 18 SMs holds 144/4 = 36
    // clusters of 4 and one of 16 holds 32: 2 x 36 + 6 x 32 = 264.
    let want = "a cluster of 9: CUDA_ERROR_INVALID_CLUSTER_SIZE\n\
                clusters of 4 x 256 threads resident: 264; largest cluster: 8\nPASS\n";
    for mode in ["--functional", "--summary"] {
        let (code, so, se) = run(&["--gpu", "h100", mode]);
        assert_eq!((code, so.as_str()), (Some(0), want), "{mode}: {se}");
        assert!(se.contains("regsim: kernel pairs grid (8,1,1)"), "{se}");
    }
    // Fewer SMs per GPC: two GPCs of 3 SMs hold 24/4 = 6 clusters each.
    let (code, so, se) = run(&[
        "--gpu",
        "h100",
        "--functional",
        "--set",
        "gpu.num_sms=6",
        "--set",
        "gpu.gpc_sms=[3,3]",
    ]);
    assert_eq!(code, Some(0), "{se}");
    assert!(so.contains("resident: 12; largest cluster: 8"), "{so}");
}

#[test]
fn a_gpu_without_clusters_refuses_cu_launch_kernel_ex() {
    let (code, so, se) = run(&["--gpu", "rtx-a6000", "--functional"]);
    assert_ne!(code, Some(0), "{so}");
    assert!(
        se.contains("thread-block clusters (2x1x1 CTAs) need compute capability 9.0"),
        "{se}"
    );
    assert!(so.contains("cuLaunchKernelEx"), "{so}");
}

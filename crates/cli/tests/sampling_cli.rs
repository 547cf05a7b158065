//! End to end: `regsim run --sample` and `--sample-check` on built-in workloads.

mod common;

use common::{regsim, run_workload_stats};

/// The sampled run's estimate, its bound and the full run's cycles agree: the bound
/// covers the true error, in total and for every launch simulated or estimated.
fn check_covers(workload: &str, method: &str) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let stats = dir.path().join("s.json");
    let s = run_workload_stats(workload, &["--sample-check"], &stats);
    let check = &s["sample_check"];
    assert_eq!(check["covered"], true, "{workload}: {check:#}");
    let full = check["full_cycles"].as_u64().expect("full cycles");
    assert!(full > 0);
    assert_eq!(check["estimated_cycles"], s["total"]["cycles"]);
    assert_eq!(
        s["total"]["sampling"]["estimated_cycles"],
        s["total"]["cycles"]
    );
    let launches = check["launches"].as_array().expect("launches");
    assert!(
        launches.iter().any(|l| l["method"] == method),
        "{workload}: no launch sampled as {method}: {check:#}"
    );
    for k in s["kernels"].as_array().expect("kernels") {
        let sampling = &k["sampling"];
        assert_eq!(sampling["estimated_cycles"], k["cycles"], "{k:#}");
        assert!(sampling["detailed_ctas"].as_u64() <= sampling["total_ctas"].as_u64());
    }
}

#[test]
fn a_sampled_launch_bound_covers_the_full_run() {
    // conv2d: 475 CTAs, 450 of them (5 waves of 90 on gtx480) simulated in detail.
    check_covers("conv2d", "ctas");
}

#[test]
fn estimated_repeated_launches_bound_covers_the_full_run() {
    // stencil2d: 8 launches of one kernel; 2 simulated, 6 estimated from them.
    check_covers("stencil2d", "cluster");
}

#[test]
fn sampled_statistics_are_deterministic_and_absent_without_sampling() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let strip = |mut v: serde_json::Value| {
        v.as_object_mut().expect("object").remove("simulation");
        for k in v["kernels"].as_array_mut().expect("kernels") {
            k.as_object_mut().expect("kernel").remove("simulation");
        }
        v
    };
    let a = strip(run_workload_stats(
        "stencil2d",
        &["--sample"],
        &dir.path().join("a.json"),
    ));
    let b = strip(run_workload_stats(
        "stencil2d",
        &["--sample"],
        &dir.path().join("b.json"),
    ));
    assert_eq!(a["kernels"], b["kernels"]);
    assert_eq!(a["total"], b["total"]);
    assert!(a["total"]["sampling"]["estimated_launches"].as_u64() > Some(0));
    let full = run_workload_stats("stencil2d", &[], &dir.path().join("f.json"));
    assert!(full["total"].get("sampling").is_none());
    assert!(full["kernels"][0].get("sampling").is_none());
    // Warp instructions are exact under sampling.
    assert_eq!(
        a["total"]["warp_instructions"],
        full["total"]["warp_instructions"]
    );
}

#[test]
fn too_few_waves_are_refused_naming_the_key() {
    let out = regsim(&[
        "run",
        "--sample",
        "--set",
        "sampling.waves=2",
        "--",
        "workloads/bin/saxpy",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("sampling.waves"), "{err}");
}

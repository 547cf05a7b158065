//! End to end: `regsim run --sample` and `--sample-check` on built-in workloads.

mod common;

use common::{regsim, run_workload_stats};

/// The sampled run's estimate, its bound and the full run's cycles agree: the bound
/// covers the true error, in total and for every launch simulated or estimated, and the
/// error is under `max_error`.
fn check_covers(workload: &str, args: &[&str], method: &str, max_error: f64) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let stats = dir.path().join("s.json");
    let mut all = vec!["--sample-check"];
    all.extend_from_slice(args);
    let s = run_workload_stats(workload, &all, &stats);
    let check = &s["sample_check"];
    assert_eq!(check["covered"], true, "{workload}: {check:#}");
    let error = check["error"].as_f64().expect("error");
    assert!(error.abs() <= max_error, "{workload}: {check:#}");
    for l in check["launches"].as_array().expect("launches") {
        assert_eq!(l["covered"], true, "{workload}: {l:#}");
    }
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
        // Which CTAs ran in detail: ranges in order, as many CTAs as counted.
        let ranges = sampling["detailed"].as_array().expect("detailed ranges");
        let mut covered = 0;
        let mut after = 0;
        for r in ranges {
            let (a, b) = (r[0].as_u64().expect("start"), r[1].as_u64().expect("end"));
            assert!(after <= a && a < b, "{sampling:#}");
            covered += b - a;
            after = b;
        }
        if sampling["method"] != "cluster" {
            assert_eq!(sampling["detailed_ctas"], covered, "{sampling:#}");
            assert!(after <= sampling["total_ctas"].as_u64().expect("total"));
        }
    }
}

#[test]
fn a_sampled_launch_bound_covers_the_full_run() {
    // conv2d on a gtx480 cut to 2 SMs: 475 CTAs in waves of 12; 8 strata, 216 CTAs of
    // them simulated in detail.
    check_covers("conv2d", &["--set", "gpu.num_sms=2"], "ctas", 0.05);
}

#[test]
fn estimated_repeated_launches_bound_covers_the_full_run() {
    // stencil2d: 8 launches of one kernel; 3 simulated, then every 4th repeat
    // simulated again (sampling.recheck = 4), the other 4 estimated.
    check_covers("stencil2d", &[], "cluster", 0.05);
}

#[test]
fn every_recheck_th_repeat_is_simulated_and_joins_its_cluster() {
    let methods = |args: &[&str]| -> Vec<String> {
        let dir = tempfile::tempdir().expect("temporary directory");
        let stats = dir.path().join("s.json");
        let mut all = vec!["--sample"];
        all.extend_from_slice(args);
        let s = run_workload_stats("stencil2d", &all, &stats);
        s["kernels"]
            .as_array()
            .expect("kernels")
            .iter()
            .map(|k| k["sampling"]["method"].as_str().unwrap_or("?").to_string())
            .collect()
    };
    let (f, c) = ("full", "cluster");
    assert_eq!(methods(&[]), [f, f, f, c, c, c, f, c]);
    assert_eq!(
        methods(&["--set", "sampling.recheck=0"]),
        [f, f, f, c, c, c, c, c]
    );
    assert_eq!(
        methods(&[
            "--set",
            "sampling.recheck=2",
            "--set",
            "sampling.launches=2"
        ]),
        [f, f, c, f, c, f, c, f]
    );
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

/// `--sample --set SETTING` on saxpy fails with a usage error naming `key`.
fn refused(setting: &str, key: &str) {
    let out = regsim(&[
        "run",
        "--sample",
        "--set",
        setting,
        "--",
        "workloads/bin/saxpy",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(key), "{err}");
}

#[test]
fn too_few_waves_or_strata_are_refused_naming_the_key() {
    refused("sampling.waves=1", "sampling.waves");
    refused("sampling.strata=1", "sampling.strata");
}

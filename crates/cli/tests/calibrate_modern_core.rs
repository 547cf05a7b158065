//! `regsim calibrate` on the modern core (issue 25): the LDGSTS address step of MICRO'25
//! Table 2, and h100's Hopper figures with their source.

use std::process::Command;

fn calibrate(args: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_regsim"))
        .arg("calibrate")
        .args(args)
        .arg("--json")
        .env_remove("REGSIM_CUDART")
        .env_remove("REGSIM_CONFIGS")
        .env_remove("REGSIM_CALIBRATE_PROGRAM")
        .output()
        .expect("the regsim binary runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("calibrate --json prints JSON")
}

fn row<'a>(v: &'a serde_json::Value, test: &str) -> &'a serde_json::Value {
    v["results"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["test"] == test))
        .unwrap_or_else(|| panic!("no {test} in {v}"))
}

fn measured(v: &serde_json::Value, test: &str) -> f64 {
    row(v, test)["measured"].as_f64().unwrap()
}

/// MICRO'25 Table 2: LDGSTS's WAR latency (its address computed) is 13 cycles against a
/// regular-address global load's 11, and its RAW latency is the same for every width.
/// `sm.async_copy_address_cycles` (2 on rtx-a6000) is that address step: without it
/// every LDGSTS row is exactly 2 cycles shorter, and no other row moves.
#[test]
fn the_ldgsts_address_step_adds_two_cycles_to_every_width_and_nothing_else() {
    let with = calibrate(&["--gpu", "rtx-a6000"]);
    let without = calibrate(&[
        "--gpu",
        "rtx-a6000",
        "--set",
        "sm.async_copy_address_cycles=0",
    ]);
    let widths = ["ldgsts32", "ldgsts64", "ldgsts128"];
    for t in widths {
        let d = measured(&with, t) - measured(&without, t);
        assert!((d - 2.0).abs() < 0.05, "{t}: {d}");
        let e = row(&with, t)["error"].as_f64().unwrap();
        assert!(e.abs() <= 0.10, "{t}: {e}");
    }
    assert_eq!(measured(&with, "ldgsts32"), measured(&with, "ldgsts128"));
    for t in ["ldg32", "ldg128", "lds32", "ldc32", "chase_l1", "fp32_dep"] {
        assert_eq!(measured(&with, t), measured(&without, t), "{t}");
    }
}

/// h100's L1, L2 and shared-memory rows are compared with our microbenchmark run on Hopper
/// silicon (an H200, whose SM and L2 are the H100's), its main memory with mt4g's H100 SXM5
/// sample results (the H200's HBM3e differs); each row names its source.
#[test]
fn h100_memory_rows_have_a_published_hopper_figure_with_its_source() {
    let v = calibrate(&["--gpu", "h100"]);
    for (t, published, source) in [
        ("chase_l1", 36.81, "H200"),
        ("chase_l2", 280.46, "H200"),
        ("chase_dram", 834.5, "mt4g"),
        ("chase_shared", 23.09, "H200"),
        ("mma_dep", 24.28, "H200"),
        ("atom_global_dep", 312.06, "H200"),
    ] {
        let r = row(&v, t);
        assert_eq!(r["published"].as_f64(), Some(published), "{r}");
        assert!(r["source"].as_str().unwrap().contains(source), "{r}");
        assert!(r["error"].as_f64().is_some(), "{r}");
    }
}

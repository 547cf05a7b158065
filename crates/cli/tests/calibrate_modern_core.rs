//! `regsim calibrate` on the modern core (issue 25): the LDGSTS address step of MICRO'25
//! Table 2, h100's Hopper figures with their source, and h100's latencies corrected by
//! stage against them.

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

/// h100's L1, L2, shared-memory and main-memory rows are compared with our microbenchmark
/// run on Hopper silicon (an H200, whose SM, L2 and memory controllers are the H100's; its
/// HBM3e differs); each row names its source, and the DRAM row names mt4g's H100 figure,
/// which includes TLB misses regsim does not model.
#[test]
fn h100_memory_rows_have_a_published_hopper_figure_with_its_source() {
    let v = calibrate(&["--gpu", "h100"]);
    for (t, published, source) in [
        ("chase_l1", 36.81, "H200"),
        ("chase_l2", 280.46, "H200"),
        ("chase_dram", 656.96, "H200"),
        ("chase_shared", 23.09, "H200"),
        ("mma_dep", 24.28, "H200"),
        ("atom_global_dep", 312.06, "H200"),
    ] {
        let r = row(&v, t);
        assert_eq!(r["published"].as_f64(), Some(published), "{r}");
        assert!(r["source"].as_str().unwrap().contains(source), "{r}");
        assert!(r["error"].as_f64().is_some(), "{r}");
    }
    let dram = row(&v, "chase_dram");
    assert!(dram["source"].as_str().unwrap().contains("mt4g"), "{dram}");
}

// h100's latencies corrected by stage against our microbenchmark run on Hopper silicon
// (an H200, GH100: the H100's SM and L2; 2026-11-28, calibrate/silicon/h200-2026-11-28):
// configs/h100.toml names, for each row, the stage its cycles were put in.

/// The rows whose stage could be identified are within 2% of the H200's (the bound
/// reached: each is within 1.5%), the atomics and LDGSTS with their read-modify-write and
/// shared-memory write stages.
#[test]
fn h100_rows_with_an_identified_stage_are_within_two_percent_of_silicon() {
    let v = calibrate(&["--gpu", "h100"]);
    for (t, bound) in [
        ("chase_l1", 0.02),
        ("chase_l2", 0.02),
        ("chase_shared", 0.02),
        ("chase_dram", 0.02),
        ("fp32_dep", 0.02),
        ("int_dep", 0.02),
        ("fp64_dep", 0.02),
        ("mma_dep", 0.02),
        ("atom_global_dep", 0.02),
        ("atom_shared_dep", 0.02),
        ("ldgsts32", 0.02),
        ("ldgsts64", 0.02),
        ("ldgsts128", 0.02),
    ] {
        let r = row(&v, t);
        assert!(r["source"].as_str().unwrap().contains("H200"), "{r}");
        let e = r["error"].as_f64().unwrap();
        assert!(e.abs() <= bound, "{t}: error {e} over {bound}: {r}");
    }
}

/// The L2 correction lives in the SM-to-slice path (interconnect.latency 61, each way):
/// back at 20 cycles, an L2 hit and a global atomic lose two crossings (82 cycles) and the
/// L1 and shared-memory hits, which never cross, do not move.
#[test]
fn h100s_l2_cycles_are_in_the_interconnect_both_ways() {
    let now = calibrate(&["--gpu", "h100"]);
    let before = calibrate(&["--gpu", "h100", "--set", "interconnect.latency=20"]);
    for t in ["chase_l2", "atom_global_dep"] {
        let d = measured(&now, t) - measured(&before, t);
        assert!((d - 82.0).abs() <= 1.0, "{t}: {d}");
    }
    for t in ["chase_l1", "chase_shared", "mma_dep"] {
        assert_eq!(measured(&now, t), measured(&before, t), "{t}");
    }
}

/// chase_l1's extra cycles on Hopper: MICRO'25's per-thread address (3) and 64-bit return
/// (4 at 512 bits per cycle) stages, then the L1D's own 23. Without the two stages the
/// chase is 7 cycles shorter; the shared-memory chase (no address step, one beat) is not.
#[test]
fn h100s_l1_chase_holds_the_address_and_return_stages() {
    let now = calibrate(&["--gpu", "h100"]);
    let without = calibrate(&[
        "--gpu",
        "h100",
        "--set",
        "sm.per_thread_address_cycles=0",
        "--set",
        "l1d.return_bits_per_cycle=0",
    ]);
    let d = measured(&now, "chase_l1") - measured(&without, "chase_l1");
    assert!((d - 7.0).abs() <= 0.5, "chase_l1: {d}");
    assert_eq!(
        measured(&now, "chase_shared"),
        measured(&without, "chase_shared")
    );
}

/// Not fitted (docs/calibration.md): wmma_dep runs one instruction reading 24 registers
/// where ptxas emits two independent HMMA.16816s, so it stays the tensor latency plus 9
/// operand-read cycles, 4 above mma_dep.
#[test]
fn h100s_wmma_is_mma_plus_the_extra_operand_reads() {
    let v = calibrate(&["--gpu", "h100"]);
    let d = measured(&v, "wmma_dep") - measured(&v, "mma_dep");
    assert!((d - 4.0).abs() <= 0.5, "{d}");
}

/// Where the atomics' and LDGSTS's cycles sit on h100 (silicon 2026-11-28): without
/// `l2.atomic_unit`'s latency a global atomic is exactly 33 cycles shorter, without the
/// shared write pass a shared atomic is one shared pass (23 shorter), without
/// `sm.async_copy_write_cycles` every LDGSTS width 13 shorter; and no other row moves.
#[test]
fn h100s_atomic_and_ldgsts_cycles_are_in_their_stages() {
    let now = calibrate(&["--gpu", "h100"]);
    let unchanged = [
        "chase_l1",
        "chase_l2",
        "chase_shared",
        "fp32_dep",
        "mma_dep",
    ];
    for (set, rows, cycles) in [
        (
            "l2.atomic_unit={latency=0,interval=1}",
            &["atom_global_dep"][..],
            33.0,
        ),
        (
            "shared_memory.atomic_write_latency=0",
            &["atom_shared_dep"][..],
            23.0,
        ),
        (
            "sm.async_copy_write_cycles=0",
            &["ldgsts32", "ldgsts64", "ldgsts128"][..],
            13.0,
        ),
    ] {
        let without = calibrate(&["--gpu", "h100", "--set", set]);
        for t in rows {
            let d = measured(&now, t) - measured(&without, t);
            assert!((d - cycles).abs() < 0.05, "{set}: {t} {d}");
        }
        for t in unchanged {
            assert_eq!(measured(&now, t), measured(&without, t), "{set}: {t}");
        }
    }
    // One shared pass is a shared load's trip: the atomic without its write pass reads
    // within a cycle of the shared chase.
    let one_pass = calibrate(&[
        "--gpu",
        "h100",
        "--set",
        "shared_memory.atomic_write_latency=0",
    ]);
    let d = measured(&one_pass, "atom_shared_dep") - measured(&now, "chase_shared");
    assert!(d.abs() <= 1.05, "{d}");
}

/// rtx-a6000 has the same stages with Ampere's figures: a shared atomic is two of Table 2's
/// 24-cycle shared trips plus the SM's cycle, and LDGSTS's write step ends the read step
/// at Table 2's 39 (within 1%).
#[test]
fn rtx_a6000s_shared_atomic_is_two_passes_and_ldgsts_ends_at_table_2() {
    let v = calibrate(&["--gpu", "rtx-a6000"]);
    let one = calibrate(&[
        "--gpu",
        "rtx-a6000",
        "--set",
        "shared_memory.atomic_write_latency=0",
    ]);
    let d = measured(&v, "atom_shared_dep") - measured(&one, "atom_shared_dep");
    assert!((d - 24.0).abs() < 0.05, "{d}");
    for t in ["ldgsts32", "ldgsts64", "ldgsts128"] {
        let e = row(&v, t)["error"].as_f64().unwrap();
        assert!(e.abs() <= 0.01, "{t}: {e}");
    }
}

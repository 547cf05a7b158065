//! `--rf ideal` against `--rf baseline` as a user runs them on gtx480: `ideal` has the
//! baseline's occupancy and no bank conflicts; `ideal-unlimited` drops the register limit
//! on occupancy. Where bank conflicts are what separates the two (compute-bound
//! workloads, whose cycles do not move when DRAM timing does), `ideal` is never slower.
//! Elsewhere a one-cycle change of DRAM latency moves either design's cycles by more than
//! the conflicts cost, so single runs are not ordered: docs/results/notes/ideal-vs-baseline.md
//! has the measurements. Cost (release, one core): about 10 s.

mod common;

use common::run_workload_stats;
use std::path::Path;

/// Runs a built-in workload under `flags` and returns its statistics; the program must
/// print PASS.
fn run(workload: &str, flags: &[&str]) -> serde_json::Value {
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("ideal-bound-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let stats = dir.join(format!(
        "{workload}-{}.json",
        flags.join("_").replace('/', "_")
    ));
    run_workload_stats(workload, flags, &stats)
}

fn cycles(stats: &serde_json::Value) -> u64 {
    stats["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["cycles"].as_u64().unwrap())
        .sum()
}

/// Each kernel's occupancy limits (what the config allows, not what the run achieved).
fn occupancies(stats: &serde_json::Value) -> Vec<serde_json::Value> {
    stats["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            let mut o = k["occupancy"].clone();
            let o_map = o.as_object_mut().expect("an occupancy record");
            o_map.retain(|key, _| !key.starts_with("achieved") && !key.starts_with("peak"));
            assert!(o_map.contains_key("ctas_per_sm"), "{o}");
            o
        })
        .collect()
}

/// sgemm_tiled's kernel is register-limited on gtx480 (5 CTAs per SM by registers, 6 by
/// threads): `ideal` keeps the 5, `ideal-unlimited` gets 6.
#[test]
fn ideal_has_the_baseline_occupancy_and_ideal_unlimited_does_not() {
    let base = run("sgemm_tiled", &["--rf", "baseline"]);
    let ideal = run("sgemm_tiled", &["--rf", "ideal"]);
    let unlimited = run("sgemm_tiled", &["--rf", "ideal-unlimited"]);
    let o = &base["kernels"][0]["occupancy"];
    assert_eq!(o["limited_by"], "registers");
    assert_eq!(o["ctas_per_sm"], 5);
    assert_eq!(occupancies(&ideal), occupancies(&base));
    assert_eq!(ideal["kernels"][0]["register_file"]["design"], "ideal");
    assert_eq!(
        ideal["kernels"][0]["register_file"]["read_bank_conflicts"],
        0
    );
    let u = &unlimited["kernels"][0];
    assert_eq!(u["register_file"]["design"], "ideal-unlimited");
    assert_eq!(u["occupancy"]["ctas_per_sm"], 6);
    assert_eq!(u["occupancy"]["limited_by"], "threads");
}

/// Compute-bound workloads: the baseline loses cycles to bank conflicts, and `ideal`,
/// at the same occupancy, is at least as fast (measured 1.001-1.007x over five DRAM
/// latencies; the note lists them). Measured with the papers' memory system: with
/// gtx480's own (whole-line fetch, hashed sets, L1 invalidation) blackscholes' memory
/// timing moves by more than the bank conflicts save (ideal 16,296 cycles, baseline
/// 16,267: 0.2%), the timing sensitivity docs/results/notes/ideal-vs-baseline.md describes.
#[test]
fn ideal_is_never_slower_where_bank_conflicts_are_the_difference() {
    for workload in ["blackscholes", "nbody"] {
        let paper_memory = ["--set", "memory.model=paper"];
        let base = run(
            workload,
            &[&["--rf", "baseline"][..], &paper_memory].concat(),
        );
        let ideal = run(workload, &[&["--rf", "ideal"][..], &paper_memory].concat());
        assert_eq!(occupancies(&ideal), occupancies(&base), "{workload}");
        let conflicts = base["kernels"][0]["register_file"]["read_bank_conflicts"]
            .as_u64()
            .unwrap();
        assert!(conflicts > 1000, "{workload}: {conflicts} conflicts");
        let (b, i) = (cycles(&base), cycles(&ideal));
        assert!(i < b, "{workload}: baseline {b} cycles, ideal {i}");
    }
}

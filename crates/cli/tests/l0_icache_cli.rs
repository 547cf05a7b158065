//! `sm.l0_icache` as a user sets it: a smaller L0 instruction cache misses more on a real
//! workload (sgemm_tiled on h100), and a bad size is refused naming the key.
//!
//! Cost (release build): three short timing runs of sgemm_tiled, a few seconds.

mod common;

use common::{regsim, run_workload_stats};

fn l0_misses(set: &str, name: &str) -> u64 {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("l0-icache-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let stats = dir.join(format!("{name}.json"));
    let v = run_workload_stats("sgemm_tiled", &["--gpu", "h100", "--set", set], &stats);
    v["total"]["l0_icache"]["misses"]
        .as_u64()
        .expect("l0_icache misses in the statistics")
}

#[test]
fn a_smaller_l0_misses_more() {
    // h100's own 16 KB, 4 ways; then 512 B (one set of four lines); then one line.
    let own = l0_misses("sm.l0_icache={size_bytes=16384,ways=4}", "own");
    let small = l0_misses("sm.l0_icache={size_bytes=512,ways=4}", "small");
    let one = l0_misses("sm.l0_icache={size_bytes=128,ways=1}", "one");
    assert!(own < small && small < one, "{own} {small} {one}");
}

#[test]
fn a_size_that_is_not_whole_sets_is_refused_naming_the_key() {
    let out = regsim(&[
        "calibrate",
        "--gpu",
        "h100",
        "--set",
        "sm.l0_icache={size_bytes=1000,ways=4}",
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("sm.l0_icache.size_bytes"), "{err}");
}

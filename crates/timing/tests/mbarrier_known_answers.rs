//! mbarrier producer/consumer synchronisation in timing mode: the ring of
//! `crates/emu/tests/data/modern/mbarrier_ring.sm90.ptx` (a producer warp and a consumer
//! warp, mbarrier waits in spin loops, elect.sync) delivers every block in order under
//! every register-file design and on the modern core, with deterministic statistics.

mod common;

use common::*;
use emu::LaunchConfig;
use timing::{GpuConfig, TimingSimulator};

fn ring_ptx() -> String {
    let path = format!(
        "{}/../emu/tests/data/modern/mbarrier_ring.sm90.ptx",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Runs the ring for `n` blocks per CTA on 2 CTAs; returns the cycles, the warp
/// instructions and the output.
fn run_ring(cfg: GpuConfig, n: u32) -> (u64, u64, Vec<u32>, Vec<u32>) {
    let (mut emu, k, _) = load(&ring_ptx(), "ring");
    let info = compiled_info(&emu, k, &cfg);
    let input: Vec<u32> = (0..32 * n).map(|i| i * 13 + 5).collect();
    let pin = alloc_u32(&mut emu, &input);
    let pout = alloc_u32(&mut emu, &vec![0; input.len()]);
    let p = params(&emu, k, &[pin, pout, u64::from(n)]);
    let mut sim = TimingSimulator::new(cfg);
    let s = sim
        .simulate_kernel(&mut emu, k, LaunchConfig::linear(2, 64), &p, &info)
        .unwrap_or_else(|e| panic!("{e}"));
    (
        s.cycles,
        s.warp_instructions,
        read_u32(&emu, pout, input.len()),
        input,
    )
}

#[test]
fn the_ring_delivers_every_block_under_every_design() {
    for design in DESIGNS {
        let cfg = config("gtx480", &[&format!("register_file.design=\"{design}\"")]);
        let (_, _, got, want) = run_ring(cfg, 6);
        assert_eq!(got, want, "{design}");
    }
}

#[test]
fn the_ring_runs_on_the_modern_core_with_deterministic_statistics() {
    let a = run_ring(config("h100", &[]), 6);
    let b = run_ring(config("h100", &[]), 6);
    assert_eq!(a.2, a.3, "h100 values");
    assert_eq!((a.0, a.1), (b.0, b.1), "same inputs, same statistics");
    // The consumer spins on try_wait while the producer loads: more warp instructions
    // than the ring's straight-line work (about 30 per block per warp).
    assert!(a.1 > 2 * 6 * 30, "{} warp instructions", a.1);
}

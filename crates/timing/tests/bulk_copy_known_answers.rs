//! Non-tensor bulk copies (`crates/emu/tests/data/modern/bulk_copy.sm90.ptx`) in timing
//! mode: the block copied into shared memory lands when the memory system delivers it,
//! so the threads waiting on its mbarrier spin while it travels; the values are the
//! emulator's under every register-file design and on the modern core.

mod common;

use common::*;
use emu::LaunchConfig;
use timing::{GpuConfig, KernelStats, TimingSimulator};

fn ptx() -> String {
    modern_ptx("bulk_copy.sm90.ptx")
}

/// Runs `bulk` (one CTA of 64 threads); returns the statistics, the copied block and
/// each thread's failed waits.
fn run(cfg: GpuConfig) -> (KernelStats, Vec<u32>, Vec<u32>) {
    let (mut emu, k, _) = load(&ptx(), "bulk");
    let info = compiled_info(&emu, k, &cfg);
    let input: Vec<u32> = (0..256).map(|i| 3 * i + 1).collect();
    let pin = alloc_u32(&mut emu, &input);
    let pout = alloc_u32(&mut emu, &[0; 256 + 64]);
    let p = params(&emu, k, &[pin, pout]);
    let mut sim = TimingSimulator::new(cfg);
    let s = sim
        .simulate_kernel(&mut emu, k, LaunchConfig::linear(1, 64), &p, &info)
        .unwrap_or_else(|e| panic!("{e}"));
    let out = read_u32(&emu, pout, 256 + 64);
    (s, out[..256].to_vec(), out[256..].to_vec())
}

fn check(block: &[u32], spins: &[u32], what: &str) {
    let want: Vec<u32> = (0..256).map(|i| 2 * (3 * i + 1)).collect();
    assert_eq!(block, want, "{what}");
    // The block takes a trip to memory: the second warp, which did not issue the copy,
    // found the phase incomplete at least once.
    assert!(spins[32..].iter().all(|&n| n > 0), "{what}: {spins:?}");
}

#[test]
fn a_bulk_copy_lands_when_its_data_arrive_under_every_design() {
    for design in DESIGNS {
        let cfg = config("gtx480", &[&format!("register_file.design=\"{design}\"")]);
        let (_, block, spins) = run(cfg);
        check(&block, &spins, design);
    }
}

#[test]
fn bulk_copies_run_on_the_modern_core_with_deterministic_statistics() {
    let (a, block, spins) = run(config("h100", &[]));
    let (b, _, spins_b) = run(config("h100", &[]));
    check(&block, &spins, "h100");
    assert_eq!(spins, spins_b);
    assert_eq!(
        (a.cycles, a.warp_instructions),
        (b.cycles, b.warp_instructions)
    );
}

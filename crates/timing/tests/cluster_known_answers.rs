//! A kernel declaring a cluster of one CTA (`crates/emu/tests/data/modern/
//! cluster1.sm90.ptx`: cluster special registers, `barrier.cluster.arrive/wait`, `mapa`,
//! `.shared::cluster` loads and atomics) in timing mode: the same values as the
//! emulator's known answers under every register-file design and on the modern core, and
//! deterministic statistics.

mod common;

use common::*;
use emu::LaunchConfig;
use timing::{GpuConfig, TimingSimulator};

fn cluster_ptx() -> String {
    let path = format!(
        "{}/../emu/tests/data/modern/cluster1.sm90.ptx",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

const CTAS: u32 = 4;

/// Runs 4 CTAs of 32 threads; returns the cycles, the warp instructions and the output.
fn run(cfg: GpuConfig) -> (u64, u64, Vec<u32>) {
    let (mut emu, k, _) = load(&cluster_ptx(), "cl");
    let info = compiled_info(&emu, k, &cfg);
    let pout = alloc_u32(&mut emu, &vec![0; (CTAS * 32 * 8) as usize]);
    let p = params(&emu, k, &[pout]);
    let mut sim = TimingSimulator::new(cfg);
    let s = sim
        .simulate_kernel(&mut emu, k, LaunchConfig::linear(CTAS, 32), &p, &info)
        .unwrap_or_else(|e| panic!("{e}"));
    (
        s.cycles,
        s.warp_instructions,
        read_u32(&emu, pout, (CTAS * 32 * 8) as usize),
    )
}

fn expected() -> Vec<u32> {
    let mut v = Vec::new();
    for c in 0..CTAS {
        for t in 0..32 {
            v.extend([c, CTAS, 0, 1, 0, 1, 1, 10 * ((t + 1) % 32) + 10 * t + 1]);
        }
    }
    v
}

#[test]
fn a_cluster_of_one_cta_gives_the_known_answers_under_every_design() {
    for design in DESIGNS {
        let cfg = config("gtx480", &[&format!("register_file.design=\"{design}\"")]);
        assert_eq!(run(cfg).2, expected(), "{design}");
    }
}

#[test]
fn a_cluster_of_one_cta_runs_on_the_modern_core_with_deterministic_statistics() {
    let a = run(config("h100", &[]));
    let b = run(config("h100", &[]));
    assert_eq!(a.2, expected(), "h100 values");
    assert_eq!((a.0, a.1), (b.0, b.1), "same inputs, same statistics");
}

//! Warp specialisation with `setmaxnreg` (`crates/emu/tests/data/modern/
//! setmaxnreg.sm90a.ptx`) in timing mode: a CTA's register pool lets a consumer
//! warpgroup's `setmaxnreg.inc` issue only after the producer's `setmaxnreg.dec` gave the
//! registers back; the values are the emulator's under every register-file design; a
//! `.dec` above the launch count is a located error and an `.inc` nobody can satisfy
//! stops with the waiting warps and their PTX line.

mod common;

use common::*;
use emu::LaunchConfig;
use timing::{GpuConfig, KernelStats, TimingSimulator};

fn ptx() -> String {
    modern_ptx("setmaxnreg.sm90a.ptx")
}

const THREADS: u32 = 384;
const CTAS: u32 = 1;
const SPIN: u32 = 100;

/// Runs `ws` (one CTA of 384 threads: every CTA writes the same words); returns the statistics and the output.
fn run(cfg: GpuConfig) -> (KernelStats, Vec<u32>) {
    let (mut emu, k, _) = load(&ptx(), "ws");
    let info = compiled_info(&emu, k, &cfg);
    assert_eq!(
        info.registers_per_thread, 168,
        "launch bounds 384 x 1 on sm_90a"
    );
    let pout = alloc_u32(&mut emu, &vec![0; (2 * THREADS) as usize]);
    let p = params(&emu, k, &[pout, u64::from(SPIN)]);
    let mut sim = TimingSimulator::new(cfg);
    let s = sim
        .simulate_kernel(&mut emu, k, LaunchConfig::linear(CTAS, THREADS), &p, &info)
        .unwrap_or_else(|e| panic!("{e}"));
    (s, read_u32(&emu, pout, (2 * THREADS) as usize))
}

/// The values (the clocks aside), and that every consumer read its clock after the
/// first producer warp's `.dec` (the producers read theirs just before it).
fn check(out: &[u32], what: &str) {
    let (values, clocks) = out.split_at(THREADS as usize);
    for (t, &v) in values.iter().enumerate() {
        let t = t as u32;
        assert_eq!(
            v,
            7 * (3 * (t % 128) + SPIN) + t / 128,
            "{what}: thread {t}"
        );
    }
    let first_dec = clocks[..128].iter().min().copied().unwrap_or(0);
    let first_consumer = clocks[128..].iter().min().copied().unwrap_or(0);
    assert!(
        first_consumer > first_dec,
        "{what}: a consumer ran at cycle {first_consumer}, before the producer gave \
         registers back at {first_dec}"
    );
}

#[test]
fn consumers_wait_for_the_producers_registers_under_every_design() {
    for design in DESIGNS {
        let cfg = config("qv100", &[&format!("register_file.design=\"{design}\"")]);
        let (s, out) = run(cfg);
        check(&out, design);
        if design == "baseline" {
            assert_eq!(
                s.occupancy.ctas_by_registers, 1,
                "168 x 384 registers per CTA"
            );
        }
    }
}

#[test]
fn setmaxnreg_runs_on_the_modern_core_with_deterministic_statistics() {
    let (a, out) = run(config("h100", &[]));
    let (b, _) = run(config("h100", &[]));
    check(&out, "h100");
    assert_eq!(
        (a.cycles, a.warp_instructions, a.stalls.barrier),
        (b.cycles, b.warp_instructions, b.stalls.barrier),
        "same inputs, same statistics"
    );
    assert!(
        a.stalls.barrier > 0,
        "the consumers' wait is a barrier stall"
    );
}

fn fail(name: &str, threads: u32) -> String {
    let (mut emu, k, _) = load(&ptx(), name);
    let cfg = config("h100", &[]);
    let info = compiled_info(&emu, k, &cfg);
    let p = params(&emu, k, &[]);
    let mut sim = TimingSimulator::new(cfg);
    match sim.simulate_kernel(&mut emu, k, LaunchConfig::linear(1, threads), &p, &info) {
        Ok(_) => panic!("{name} ran"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_dec_above_the_launch_count_is_a_located_error() {
    let e = fail("dec_up", 128);
    assert!(
        e.contains("setmaxnreg: .dec to 40 registers per thread from the warp's 32"),
        "{e}"
    );
    assert!(e.contains("kernel 'dec_up', at test.ptx:104"), "{e}");
}

#[test]
fn an_inc_nobody_can_satisfy_stops_naming_the_waiting_warps() {
    let e = fail("starve", 128);
    assert!(e.contains("no progress possible"), "{e}");
    assert!(
        e.contains("waits in setmaxnreg.inc (holding 64 registers"),
        "{e}"
    );
}

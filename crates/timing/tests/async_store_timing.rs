//! `st.async`/`red.async` in timing mode (`crates/emu/tests/data/modern/
//! async_store.sm90.ptx`, kernel `exchange`): the emulator's known answers under every
//! register-file design on h100 and on gtx480 (one GPC of all SMs), the instructions
//! counted as remote shared-memory stores and atomics, and deterministic statistics.

mod common;

use common::*;
use emu::LaunchConfig;
use timing::{GpuConfig, KernelStats, TimingSimulator};

const CTAS: u32 = 4;
const WORDS: usize = 430 * CTAS as usize;

#[path = "../../emu/tests/async_store_model/mod.rs"]
mod async_store_model;

fn run_exchange(cfg: GpuConfig) -> (KernelStats, Vec<u32>) {
    let (mut emu, k, _) = load(&modern_ptx("async_store.sm90.ptx"), "exchange");
    let info = compiled_info(&emu, k, &cfg);
    let pout = alloc_u32(&mut emu, &vec![0; WORDS]);
    let p = params(&emu, k, &[pout]);
    let mut sim = TimingSimulator::new(cfg);
    let s = sim
        .simulate_kernel(&mut emu, k, LaunchConfig::linear(CTAS, 32), &p, &info)
        .unwrap_or_else(|e| panic!("{e}"));
    (s, read_u32(&emu, pout, WORDS))
}

fn expected() -> Vec<u32> {
    (0..CTAS).flat_map(async_store_model::expected).collect()
}

#[test]
fn async_stores_give_the_known_answers_under_every_design() {
    for design in DESIGNS {
        let cfg = config("h100", &[&format!("register_file.design=\"{design}\"")]);
        assert_eq!(run_exchange(cfg).1, expected(), "{design}");
    }
    assert_eq!(run_exchange(config("gtx480", &[])).1, expected(), "gtx480");
}

#[test]
fn async_stores_are_timed_as_remote_shared_stores_deterministically() {
    let (a, va) = run_exchange(config("h100", &[]));
    let (b, vb) = run_exchange(config("h100", &[]));
    assert_eq!((va, vb), (expected(), expected()));
    assert_eq!(
        (a.cycles, a.warp_instructions),
        (b.cycles, b.warp_instructions)
    );
    // Each of the 4 warps issues 5 st.async, 12 red.async and 14 ld.shared of the copy
    // loop through the shared-memory banks (besides its mbarrier operations).
    let shared = &a.memory.shared_memory;
    assert!(shared.accesses >= 4 * (5 + 12 + 14), "{shared:?}");
}

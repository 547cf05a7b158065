//! Clusters of four CTAs in timing mode (`crates/emu/tests/data/modern/cluster4.sm90.ptx`,
//! kernel `dsm`): the emulator's known answers under every register-file design and on
//! h100, the cluster barrier counted as its own stall reason, the SM-to-SM latency of
//! distributed shared memory (`shared_memory.remote_latency`), co-scheduling on one GPC
//! (`gpu.gpc_sms`), and a cluster that no GPC can hold refused with the reason.

mod common;

use common::*;
use emu::LaunchConfig;
use timing::{GpuConfig, KernelStats, SimError, TimingSimulator};

fn cluster_ptx() -> String {
    let path = format!(
        "{}/../emu/tests/data/modern/cluster4.sm90.ptx",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

const CTAS: u32 = 8;
const WORDS: usize = (CTAS * 64 * 12) as usize;

fn try_run(cfg: GpuConfig) -> Result<(KernelStats, Vec<u32>), SimError> {
    let (mut emu, k, _) = load(&cluster_ptx(), "dsm");
    let info = compiled_info(&emu, k, &cfg);
    let pout = alloc_u32(&mut emu, &vec![0; WORDS]);
    let p = params(&emu, k, &[pout]);
    let mut sim = TimingSimulator::new(cfg);
    let s = sim.simulate_kernel(&mut emu, k, LaunchConfig::linear(CTAS, 64), &p, &info)?;
    Ok((s, read_u32(&emu, pout, WORDS)))
}

fn run(cfg: GpuConfig) -> (KernelStats, Vec<u32>) {
    try_run(cfg).unwrap_or_else(|e| panic!("{e}"))
}

/// The emulator test's expected words (`crates/emu/tests/clusters.rs`).
fn expected() -> Vec<u32> {
    let mut v = Vec::with_capacity(WORDS);
    for c in 0..CTAS {
        for t in 0..64 {
            let (cluster, rank) = (c / 4, c % 4);
            let next = 4 * cluster + (rank + 1) % 4;
            let prev = 4 * cluster + (rank + 3) % 4;
            v.extend([
                cluster,
                2,
                rank,
                4,
                rank,
                4,
                1,
                1000 * next + t,
                1000 * prev + 63 - t,
                4 * 64 * 3,
                if rank == 0 { 1 } else { 2 },
                7,
            ]);
        }
    }
    v
}

#[test]
fn clusters_give_the_known_answers_under_every_design() {
    for design in DESIGNS {
        let cfg = config("h100", &[&format!("register_file.design=\"{design}\"")]);
        assert_eq!(run(cfg).1, expected(), "{design}");
    }
    // A config without GPCs (one GPC of all SMs) runs them too.
    assert_eq!(run(config("gtx480", &[])).1, expected(), "gtx480");
}

#[test]
fn cluster_barrier_waits_are_their_own_stall_reason_and_statistics_are_deterministic() {
    let (a, va) = run(config("h100", &[]));
    let (b, _) = run(config("h100", &[]));
    assert_eq!(va, expected());
    assert_eq!(
        (a.cycles, a.warp_instructions),
        (b.cycles, b.warp_instructions)
    );
    assert!(
        a.stalls.cluster_barrier > 0,
        "warps waited at barrier.cluster: {:?}",
        a.stalls
    );
}

#[test]
fn remote_shared_memory_pays_the_sm_to_sm_latency() {
    let (near, v0) = run(config("h100", &["shared_memory.remote_latency=0"]));
    let (far, v1) = run(config("h100", &["shared_memory.remote_latency=500"]));
    assert_eq!((v0, v1), (expected(), expected()));
    // The kernel's critical path holds at least one remote load and one remote atomic
    // whose results are used before the next cluster barrier: each adds 500 cycles.
    assert!(
        far.cycles >= near.cycles + 1000,
        "{} cycles at 0, {} at 500",
        near.cycles,
        far.cycles
    );
}

#[test]
fn a_cluster_lives_on_one_gpc_and_waits_when_none_has_room() {
    // GPCs of 2 SMs, one CTA of the kernel per SM (forced by max_ctas): a cluster of 4
    // does not fit any GPC.
    let e = try_run(config("h100", &["gpu.gpc_sms=[2, 130]", "sm.max_ctas=1"]));
    // 130 SMs hold it: the clusters run one GPC further.
    assert_eq!(e.map(|r| r.1).ok(), Some(expected()));
    let e = try_run(config(
        "h100",
        &["gpu.num_sms=4", "gpu.gpc_sms=[2, 2]", "sm.max_ctas=1"],
    ))
    .err()
    .map(|e| e.to_string())
    .unwrap_or_default();
    assert!(
        e.contains("a cluster of 4 CTAs must be resident on one GPC")
            && e.contains("largest GPC (2 SMs) holds 2"),
        "{e}"
    );
    // 4 SMs in one GPC, one CTA each: the two clusters run one after the other.
    let (serial, v) = run(config(
        "h100",
        &["gpu.num_sms=4", "gpu.gpc_sms=[4]", "sm.max_ctas=1"],
    ));
    assert_eq!(v, expected());
    let (parallel, _) = run(config("h100", &["gpu.num_sms=8", "gpu.gpc_sms=[4, 4]"]));
    assert!(
        serial.cycles > parallel.cycles,
        "one GPC of 4 SMs: {} cycles; two GPCs: {}",
        serial.cycles,
        parallel.cycles
    );
}

#[test]
fn gpc_sizes_must_add_up_to_the_sms() {
    let o = [timing::Override::parse("gpu.gpc_sms=[16, 16]").unwrap()];
    let e = GpuConfig::load("h100", &timing::config::default_configs_dir(), &o)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        e.contains("gpu.gpc_sms") && e.contains("adds up to 32 SMs"),
        "{e}"
    );
}

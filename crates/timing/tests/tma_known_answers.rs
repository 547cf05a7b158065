//! TMA tensor copies (`crates/emu/tests/data/modern/tma.sm90a.ptx`) in timing mode: the
//! box loaded through a tensor map lands when the memory system delivers it (the bulk
//! copies' path), so the threads waiting on its mbarrier spin while it travels; values,
//! out-of-bounds fill and clipped stores are the emulator's under every register-file
//! design and on the modern core.

mod common;

use common::*;
use emu::LaunchConfig;
use timing::{GpuConfig, KernelStats, TimingSimulator};

/// The 3-D map of the test's tensor at `base` (as `crates/emu/tests/kernels.rs` makes it).
fn map(base: u64) -> [u8; 128] {
    let dims = [8, 6, 4];
    let boxes = [4, 4, 2];
    emu::tensor_map::TensorMap::tiled(
        7,
        3,
        base,
        &dims,
        &[32, 192],
        &boxes,
        &[1, 2, 1],
        0,
        0,
        0,
        1,
    )
    .unwrap()
    .encode()
}

/// Runs `tma3d`; returns the statistics, the loaded box, each thread's failed waits and
/// the stored tensor.
fn run(cfg: GpuConfig) -> (KernelStats, Vec<u32>, Vec<u32>, Vec<u32>) {
    let (mut emu, k, _) = load(&modern_ptx("tma.sm90a.ptx"), "tma3d");
    let info = compiled_info(&emu, k, &cfg);
    let tensor: Vec<u32> = (0..192).map(|i| i + 1).collect();
    let src = alloc_u32(&mut emu, &tensor);
    let dst = alloc_u32(&mut emu, &[0; 192]);
    let out = alloc_u32(&mut emu, &[0; 48]);
    let ps = emu.kernel_params(k).unwrap().to_vec();
    let mut p = vec![0u8; 264];
    for (param, bytes) in ps
        .iter()
        .zip([&map(src)[..], &map(dst)[..], &out.to_le_bytes()])
    {
        p[param.offset as usize..][..bytes.len()].copy_from_slice(bytes);
    }
    let mut sim = TimingSimulator::new(cfg);
    let s = sim
        .simulate_kernel(&mut emu, k, LaunchConfig::linear(1, 32), &p, &info)
        .unwrap_or_else(|e| panic!("{e}"));
    let o = read_u32(&emu, out, 48);
    (
        s,
        o[..16].to_vec(),
        o[16..].to_vec(),
        read_u32(&emu, dst, 192),
    )
}

fn check(boxed: &[u32], spins: &[u32], stored: &[u32], what: &str) {
    // Inside the tensor: (6, 1, 3) and (7, 1, 3), elements 4 and 5 of the box.
    let mut want = vec![0x7FFF_FFFF; 16];
    want[4] = 3 * 48 + 8 + 6 + 1;
    want[5] = 3 * 48 + 8 + 7 + 1;
    assert_eq!(boxed, want, "{what}");
    // Stored at (0, 0, 0): box element (i, j, k) at (i, 2j, k); the clipped store at
    // (6, 5, 3) writes (6, 5, 3) and (7, 5, 3) only; row y = 1 is never written.
    assert_eq!(stored[16], want[4], "{what}");
    assert_eq!(stored[17], want[5], "{what}");
    assert_eq!(stored[3 * 48 + 5 * 8 + 7], want[1], "{what}");
    assert_eq!(stored[8], 0, "{what}");
    // The box takes a trip to memory: every thread found the phase incomplete at first.
    assert!(spins.iter().all(|&n| n > 0), "{what}: {spins:?}");
}

#[test]
fn a_tensor_copy_lands_when_its_data_arrive_under_every_design() {
    for design in DESIGNS {
        let cfg = config("gtx480", &[&format!("register_file.design=\"{design}\"")]);
        let (_, boxed, spins, stored) = run(cfg);
        check(&boxed, &spins, &stored, design);
    }
}

#[test]
fn tensor_copies_run_on_the_modern_core_with_deterministic_statistics() {
    let (a, boxed, spins, stored) = run(config("h100", &[]));
    let (b, _, spins_b, _) = run(config("h100", &[]));
    check(&boxed, &spins, &stored, "h100");
    assert_eq!(spins, spins_b);
    assert_eq!(
        (a.cycles, a.warp_instructions),
        (b.cycles, b.warp_instructions)
    );
}

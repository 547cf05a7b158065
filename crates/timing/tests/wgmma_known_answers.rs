//! Warpgroup matrix products (`crates/emu/tests/data/modern/wgmma.sm90a.ptx`) in timing
//! mode: the values are the emulator's under every register-file design; the warp's
//! `wgmma.wait_group` holds it until its group's products complete on the sub-core's
//! tensor core (the `tensor` class's interval per m16n8k16-equivalent, its latency at the
//! end), a `tensor_wait` stall; GPUs below compute capability 9.0 are refused before the
//! kernel runs (wide shapes: `wgmma_wide_shapes.rs`).

mod common;

use common::*;
use emu::LaunchConfig;
use timing::{GpuConfig, KernelStats, SimError, TimingSimulator};

fn ptx() -> String {
    modern_ptx("wgmma.sm90a.ptx")
}

/// Runs `wg` (one warpgroup): the statistics, each thread's four D values and the cycles
/// from its first product's issue to its wait's end.
fn run(cfg: GpuConfig) -> (KernelStats, Vec<[f32; 4]>, Vec<u32>) {
    let (mut emu, k, _) = load(&ptx(), "wg");
    let info = compiled_info(&emu, k, &cfg);
    let pout = alloc_u32(&mut emu, &[0; 128 * 5]);
    let p = params(&emu, k, &[pout]);
    let mut sim = TimingSimulator::new(cfg);
    let s = sim
        .simulate_kernel(&mut emu, k, LaunchConfig::linear(1, 128), &p, &info)
        .unwrap_or_else(|e| panic!("{e}"));
    let out = read_u32(&emu, pout, 128 * 5);
    let d = out
        .chunks(5)
        .map(|c| [0, 1, 2, 3].map(|i| f32::from_bits(c[i])))
        .collect();
    let waits = out.chunks(5).map(|c| c[4]).collect();
    (s, d, waits)
}

fn check(d: &[[f32; 4]], what: &str) {
    for (t, v) in d.iter().enumerate() {
        let (warp, lane) = (t / 32, t % 32);
        for (e, x) in v.iter().enumerate() {
            let row = 16 * warp + lane / 4 + 8 * (e / 2);
            assert_eq!(
                *x,
                32.0 * (row % 4 + 1) as f32,
                "{what}: thread {t} element {e}"
            );
        }
    }
}

#[test]
fn the_values_under_every_design_and_the_wait_holds_the_warp() {
    for design in DESIGNS {
        let cfg = config("h100", &[&format!("register_file.design=\"{design}\"")]);
        let (s, d, waits) = run(cfg);
        check(&d, design);
        // h100: tensor = latency 19, interval 4. Two dependent m64n8k16 products (one
        // m16n8k16-equivalent per warp each): the second starts after the first's result
        // (19 cycles) and completes 19 cycles after it starts, so no warp leaves its
        // wait before 38 cycles after its first product issued.
        for (t, w) in waits.iter().enumerate() {
            assert!(*w >= 38, "{design}: thread {t} waited only {w} cycles");
        }
        if design == "baseline" {
            assert!(s.stalls.tensor_wait > 0, "{design}: {:?}", s.stalls);
        }
    }
}

#[test]
fn statistics_are_deterministic_and_larger_products_take_longer() {
    let (a, _, wa) = run(config("h100", &[]));
    let (b, _, wb) = run(config("h100", &[]));
    assert_eq!(a.cycles, b.cycles);
    assert_eq!(a.stalls, b.stalls);
    assert_eq!(wa, wb);
    // A slower tensor core (interval 4 -> 40 per product step, latency 24 -> 100): the
    // products take longer, and so does every warp's wait.
    let (c, d, wc) = run(config(
        "h100",
        &["pipeline.classes.tensor={ unit = \"dp\", latency = 100, initiation_interval = 40 }"],
    ));
    check(&d, "slow tensor core");
    assert!(c.cycles > a.cycles, "{} vs {}", c.cycles, a.cycles);
    for (t, (fast, slow)) in wa.iter().zip(&wc).enumerate() {
        assert!(
            *slow >= 200 && slow > fast,
            "thread {t}: {fast} then {slow}"
        );
    }
}

#[test]
fn old_gpus_are_refused_before_the_kernel_runs() {
    // Wide shapes: wgmma_wide_shapes.rs.
    // gtx480 (compute capability below 9.0): refused with the reason.
    let (mut emu, k, _) = load(&ptx(), "wg");
    let cfg = config("gtx480", &[]);
    let info = compiled_info(&emu, k, &cfg);
    let pout = alloc_u32(&mut emu, &[0; 128 * 5]);
    let p = params(&emu, k, &[pout]);
    let e = TimingSimulator::new(cfg)
        .simulate_kernel(&mut emu, k, LaunchConfig::linear(1, 128), &p, &info)
        .unwrap_err();
    assert!(matches!(e, SimError::UnsupportedOnTarget { .. }), "{e}");
    assert!(
        e.to_string()
            .contains("wgmma.mma_async, which needs compute capability 9.0"),
        "{e}"
    );
}

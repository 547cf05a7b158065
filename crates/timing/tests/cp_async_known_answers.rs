//! `cp.async` in timing mode: the ordering kernel of the emulator's tests
//! (`crates/emu/tests/data/modern/cp_async.nvcc-sm80.ptx`: two commit groups, waits for
//! one and then both, a zero-filling copy and `wait_all`) runs to completion with the
//! emulator's values under every register-file design and on the modern cores. A warp
//! waiting on its copies must issue again when the last one lands, even when no other
//! event of the SM wakes its scheduler (a copy has no register result to write back).

mod common;

use common::*;
use emu::LaunchConfig;
use timing::{GpuConfig, TimingSimulator};

fn cp_async_ptx() -> String {
    let path = format!(
        "{}/../emu/tests/data/modern/cp_async.nvcc-sm80.ptx",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Runs one warp of the ordering kernel; returns the cycles and the 224 output words.
fn run(cfg: GpuConfig) -> (u64, Vec<u32>, Vec<u32>) {
    let (mut emu, k, _) = load(&cp_async_ptx(), "_Z14cp_async_orderPK4int4Pi");
    let info = compiled_info(&emu, k, &cfg);
    let input: Vec<u32> = (0..256).map(|i| 1000 + i).collect();
    let pin = alloc_u32(&mut emu, &input);
    let pout = alloc_u32(&mut emu, &[0; 224]);
    let p = params(&emu, k, &[pin, pout]);
    let mut sim = TimingSimulator::new(cfg);
    let s = sim
        .simulate_kernel(&mut emu, k, LaunchConfig::linear(1, 32), &p, &info)
        .unwrap_or_else(|e| panic!("{e}"));
    (s.cycles, read_u32(&emu, pout, 224), input)
}

fn check(got: &[u32], input: &[u32], what: &str) {
    for t in 0..32usize {
        let lane = |i: usize| got[i * 32 + t] as i32;
        assert_eq!(
            (lane(0), lane(1)),
            (-1, -2),
            "{what}: lane {t} before the waits"
        );
        assert_eq!(
            lane(2),
            input[4 * t] as i32,
            "{what}: lane {t} after wait_group 1"
        );
        assert_eq!(lane(3), -2, "{what}: lane {t}: group 2 visible too early");
        assert_eq!(lane(4), input[128 + 4 * t + 3] as i32, "{what}: lane {t}");
        assert_eq!(lane(5), -3, "{what}: lane {t} before wait_all");
        let zero_filled = (input[4 * t] + input[4 * t + 1]) as i32;
        assert_eq!(lane(6), zero_filled, "{what}: lane {t} after wait_all");
    }
}

#[test]
fn waits_on_copies_finish_under_every_design() {
    for design in DESIGNS {
        let cfg = config("gtx480", &[&format!("register_file.design=\"{design}\"")]);
        let (cycles, got, input) = run(cfg);
        check(&got, &input, design);
        // Three waits on copies from DRAM, one after another: each at least a global
        // load's latency (gtx480's is several hundred cycles).
        assert!(cycles > 600, "{design}: {cycles} cycles");
    }
}

#[test]
fn waits_on_copies_finish_on_the_modern_cores_deterministically() {
    for gpu in ["rtx-a6000", "h100"] {
        let (a, got, input) = run(config(gpu, &[]));
        let (b, _, _) = run(config(gpu, &[]));
        check(&got, &input, gpu);
        assert_eq!(a, b, "{gpu}: same inputs, same cycles");
    }
}

//! Windows of cycles between merges (`--threads` 2 or more, `docs/parallel.md`, "Step 3,
//! second part"): every SM steps `W` cycles on its thread with its own memory events,
//! and the merge replays the window in the one-thread order. These kernels make the
//! windows stop (CTAs retiring inside them, device calls, a fault, the cycle limit) and
//! check that statistics, memory and errors are those of one thread.

mod common;

use common::*;
use emu::LaunchConfig;
use timing::{RunLimits, SimError, TimingSimulator};

const HEADER: &str = ".version 7.0\n.target sm_70\n.address_size 64\n";

/// `retire(a, c, out)`: CTA `b` runs `b % 5 * 3 + 1` rounds; each thread (global id `g`)
/// loads `a[g]`, calls `twice` (a device function with a global load whose value it
/// drops before returning), adds to `c[b % 4]` atomically, and stores its running sum to
/// `out[g]`. CTAs of different lengths retire at scattered cycles, inside windows.
fn retire_ptx() -> String {
    format!(
        "{HEADER}.func (.param .b32 r) twice(.param .b32 x, .param .b64 p)\n{{\n\
         .reg .b32 %t<4>;\n.reg .b64 %q<2>;\n\
         ld.param.b32 %t1, [x];\nld.param.b64 %q1, [p];\n\
         ld.global.u32 %t2, [%q1];\n\
         add.s32 %t1, %t1, %t1;\nst.param.b32 [r], %t1;\nret;\n}}\n\
         .visible .entry retire(.param .u64 a, .param .u64 c, .param .u64 out)\n{{\n\
         .reg .pred %p<3>;\n.reg .b32 %r<20>;\n.reg .b64 %rd<12>;\n\
         ld.param.u64 %rd1, [a];\nld.param.u64 %rd2, [c];\nld.param.u64 %rd3, [out];\n\
         mov.u32 %r1, %tid.x;\nmov.u32 %r2, %ctaid.x;\nmov.u32 %r3, %ntid.x;\n\
         mad.lo.u32 %r4, %r2, %r3, %r1;\n\
         rem.u32 %r5, %r2, 5;\nmul.lo.u32 %r5, %r5, 3;\nadd.u32 %r5, %r5, 1;\n\
         rem.u32 %r6, %r2, 4;\nmul.wide.u32 %rd4, %r6, 4;\nadd.u64 %rd5, %rd2, %rd4;\n\
         mul.wide.u32 %rd6, %r4, 4;\nadd.u64 %rd7, %rd1, %rd6;\nadd.u64 %rd8, %rd3, %rd6;\n\
         mov.u32 %r7, 0;\nmov.u32 %r8, 0;\n\
         LOOP:\n\
         ld.global.u32 %r9, [%rd7];\n\
         add.u32 %r9, %r9, %r8;\n\
         {{\n.param .b32 x;\nst.param.b32 [x], %r9;\n.param .b64 p;\nst.param.b64 [p], %rd7;\n\
         .param .b32 r;\ncall (r), twice, (x, p);\nld.param.b32 %r10, [r];\n}}\n\
         atom.global.add.u32 %r11, [%rd5], %r10;\n\
         add.u32 %r7, %r7, %r11;\n\
         st.global.u32 [%rd8], %r7;\n\
         add.u32 %r8, %r8, 1;\n\
         setp.lt.u32 %p1, %r8, %r5;\n\
         @%p1 bra LOOP;\n\
         ret;\n}}\n"
    )
}

const CTAS: u32 = 150;
const BLOCK: u32 = 96;

/// `retire` on `threads` threads on `gpu` with `overrides`, under `limits`: the
/// statistics without wall-clock figures (or the error), both buffers, and how many
/// windows ran.
fn run_retire(
    gpu: &str,
    overrides: &[&str],
    threads: usize,
    limits: RunLimits,
) -> (String, Vec<u32>, Vec<u32>, u64) {
    let (mut emu, k, _) = load(&retire_ptx(), "retire");
    let n = (CTAS * BLOCK) as usize;
    let a: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2654435761) >> 20)
        .collect();
    let a = alloc_u32(&mut emu, &a);
    let c = alloc_u32(&mut emu, &[0; 4]);
    let out = alloc_u32(&mut emu, &vec![0; n]);
    let p = params(&emu, k, &[a, c, out]);
    let cfg = config(gpu, overrides);
    let info = compiled_info(&emu, k, &cfg);
    let mut sim = TimingSimulator::new(cfg);
    sim.set_threads(threads).expect("threads start");
    sim.set_limits(limits);
    let result = sim.simulate_kernel(&mut emu, k, LaunchConfig::linear(CTAS, BLOCK), &p, &info);
    let text = match result {
        Ok(mut stats) => {
            stats.simulation = Default::default();
            format!("{stats:?}")
        }
        Err(SimError::Stopped {
            cycle,
            reason,
            mut stats,
            ..
        }) => {
            stats.simulation = Default::default();
            format!("stopped at {cycle}: {reason:?}: {stats:?}")
        }
        Err(e) => panic!("{gpu} {overrides:?} on {threads} threads: {e}"),
    };
    (
        text,
        read_u32(&emu, c, 4),
        read_u32(&emu, out, n),
        sim.windows_run(),
    )
}

#[test]
fn ctas_retiring_inside_windows_give_the_one_thread_statistics_and_memory() {
    let runs: [(&str, &[&str]); 7] = [
        ("gtx480", &[]),
        ("gtx480", &["register_file.design=\"cerf\""]),
        ("gtx480", &["register_file.design=\"ltrf\""]),
        ("gtx480", &["register_file.design=\"reuse-cache\""]),
        ("gtx480", &["l1d.mshrs=2"]),
        ("qv100", &[]),
        ("h100", &[]),
    ];
    for (gpu, overrides) in runs {
        let one = run_retire(gpu, overrides, 1, RunLimits::default());
        assert_eq!(one.3, 0, "one thread runs no window");
        // The kernel ran: every CTA added to its counter.
        assert!(
            one.1.iter().all(|&v| v > 0),
            "{gpu} {overrides:?}: {:?}",
            one.1
        );
        for threads in [2, 4] {
            let many = run_retire(gpu, overrides, threads, RunLimits::default());
            assert!(
                many.3 > 0,
                "{gpu} {overrides:?}: no window ran on {threads} threads"
            );
            assert!(
                one.1 == many.1 && one.2 == many.2,
                "{gpu} {overrides:?}: {threads} threads: memory differs"
            );
            assert!(
                one.0 == many.0,
                "{gpu} {overrides:?}: {threads} threads: statistics differ"
            );
        }
    }
}

#[test]
fn a_cycle_limit_inside_a_window_stops_where_one_thread_stops() {
    // Limits that fall inside windows of 20 (gtx480) and 27 (h100) cycles.
    for (gpu, limit) in [("gtx480", 2_011), ("gtx480", 3_333), ("h100", 1_999)] {
        let limits = || RunLimits {
            max_cycles: Some(limit),
            ..RunLimits::default()
        };
        let one = run_retire(gpu, &[], 1, limits());
        assert!(one.0.starts_with("stopped at"), "{gpu} {limit}: {}", one.0);
        for threads in [2, 4] {
            let many = run_retire(gpu, &[], threads, limits());
            assert!(many.3 > 0, "{gpu}: no window ran on {threads} threads");
            assert!(
                one.0 == many.0 && one.1 == many.1 && one.2 == many.2,
                "{gpu} {limit}: {threads} threads: the stop differs"
            );
        }
    }
}

/// `fault(out)`: every thread loops `ctaid % 6 + 2` rounds of stores to its word of `out`
/// (so that the kernel is well inside its windows), then thread `far` moves its address
/// far outside `out` and thread `odd` misaligns it, and they store.
fn fault_ptx((far, odd): (u32, u32)) -> String {
    format!(
        "{HEADER}.visible .entry fault(.param .u64 out)\n{{\n\
         .reg .pred %p<3>;\n.reg .b32 %r<10>;\n.reg .b64 %rd<8>;\n\
         ld.param.u64 %rd1, [out];\nmov.u32 %r1, %tid.x;\nmov.u32 %r2, %ctaid.x;\n\
         mov.u32 %r3, %ntid.x;\nmad.lo.u32 %r4, %r2, %r3, %r1;\n\
         mul.wide.u32 %rd2, %r4, 4;\nadd.u64 %rd3, %rd1, %rd2;\n\
         rem.u32 %r5, %r2, 6;\nadd.u32 %r5, %r5, 2;\nmov.u32 %r6, 0;\n\
         LOOP:\n\
         st.global.u32 [%rd3], %r6;\nld.global.u32 %r7, [%rd3];\nadd.u32 %r6, %r7, 1;\n\
         setp.lt.u32 %p1, %r6, %r5;\n@%p1 bra LOOP;\n\
         setp.eq.u32 %p2, %r4, {far};\n@%p2 add.u64 %rd3, %rd3, 1099511627776;\n\
         setp.eq.u32 %p2, %r4, {odd};\n@%p2 add.u64 %rd3, %rd3, 2;\n\
         st.global.u32 [%rd3], %r6;\n\
         ret;\n}}\n"
    )
}

fn fault_error(bad: (u32, u32), threads: usize) -> (String, u64) {
    let (mut emu, k, info) = load(&fault_ptx(bad), "fault");
    let out = alloc_u32(&mut emu, &[0; 64 * 64]);
    let p = params(&emu, k, &[out]);
    let mut sim = TimingSimulator::new(config("gtx480", &[]));
    sim.set_threads(threads).expect("threads start");
    match sim.simulate_kernel(&mut emu, k, LaunchConfig::linear(64, 64), &p, &info) {
        Ok(_) => panic!("the faulting kernel ran to its end on {threads} threads"),
        Err(e) => (e.to_string(), sim.windows_run()),
    }
}

#[test]
fn a_fault_inside_a_window_is_the_one_thread_fault() {
    // Threads of the first wave and of later ones (CTA 40 of 64: placed after retires),
    // alone or two faults on different SMs, whose order is the one-thread order.
    let none = u32::MAX;
    for bad in [
        (70, none),
        (none, 2_600),
        (4_000, none),
        (70, 200),
        (2_600, 130),
        (1_000, 4_000),
    ] {
        let (one, _) = fault_error(bad, 1);
        assert!(one.contains("st.global.u32"), "{one}");
        for threads in [2, 4, 8] {
            let (many, windows) = fault_error(bad, threads);
            assert!(windows > 0, "{bad:?}: no window ran on {threads} threads");
            assert_eq!(many, one, "{bad:?}: {threads} threads");
        }
    }
}

//! Run limits and the no-progress watchdog through emu + timing: a kernel that never ends
//! stops at the cycle or instruction bound, at a deadline or an interrupt, with its
//! statistics so far (marked incomplete) and every live warp's state; a barrier
//! deadlock and a stretch without progress are reported with each warp's state instead
//! of spinning.

mod common;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use emu::LaunchConfig;
use timing::{RunLimits, SimError, StopReason, TimingSimulator, WarpWait};

const HEADER: &str = ".version 7.0\n.target sm_70\n.address_size 64\n";

/// Every thread spins until `*flag` is non-zero, which nothing writes: it never ends.
fn spin_ptx() -> String {
    format!(
        "{HEADER}.visible .entry spin(.param .u64 flag)\n{{\n.reg .b32 %r<3>;\n.reg .b64 %rd<2>;\n\
         .reg .pred %p<2>;\nld.param.u64 %rd1, [flag];\nmov.u32 %r1, 0;\n$L_loop:\n\
         add.s32 %r1, %r1, 1;\nld.volatile.global.u32 %r2, [%rd1];\nsetp.ne.u32 %p1, %r2, 0;\n\
         @%p1 bra $L_done;\nbra $L_loop;\n$L_done:\nret;\n}}\n"
    )
}

/// Two warps of one CTA wait at different barriers, each for the whole CTA: neither
/// barrier can complete.
fn split_barrier_ptx() -> String {
    format!(
        "{HEADER}.visible .entry split()\n{{\n.reg .b32 %r<2>;\n.reg .pred %p<2>;\n\
         mov.u32 %r1, %tid.x;\nsetp.lt.u32 %p1, %r1, 32;\n@%p1 bra $L_first;\nbar.sync 1;\n\
         bra $L_end;\n$L_first:\nbar.sync 0;\n$L_end:\nret;\n}}\n"
    )
}

/// Launches `spin` (two warps on one SM) under `limits`.
fn run_spin(limits: RunLimits) -> (TimingSimulator, Result<timing::KernelStats, SimError>) {
    let (mut emu, k, info) = load(&spin_ptx(), "spin");
    let flag = alloc_u32(&mut emu, &[0]);
    let p = params(&emu, k, &[flag]);
    let mut sim = TimingSimulator::new(config("gtx480", &["gpu.num_sms=1"]));
    sim.set_limits(limits);
    let r = sim.simulate_kernel(&mut emu, k, LaunchConfig::linear(1, 64), &p, &info);
    (sim, r)
}

fn stopped(r: Result<timing::KernelStats, SimError>) -> (StopReason, u64, SimError) {
    match r {
        Err(e @ SimError::Stopped { .. }) => {
            let SimError::Stopped { reason, cycle, .. } = &e else {
                unreachable!()
            };
            (reason.clone(), *cycle, e)
        }
        other => panic!("expected a stop, got {other:?}"),
    }
}

#[test]
fn an_endless_kernel_stops_at_the_cycle_limit_with_its_statistics_so_far() {
    let limits = || RunLimits {
        max_cycles: Some(20_000),
        ..RunLimits::default()
    };
    let (sim, r) = run_spin(limits());
    let (reason, cycle, e) = stopped(r);
    assert_eq!(reason, StopReason::MaxCycles(20_000));
    // The clock stops at the limit exactly: cycles 0 to 19,999.
    assert_eq!(cycle, 19_999);
    assert_eq!(sim.now().get(), 20_000);
    let k = &sim.kernels()[0];
    assert!(!k.complete);
    assert_eq!((k.start_cycle, k.cycles), (0, 20_000));
    assert!(k.warp_instructions > 1000, "{}", k.warp_instructions);
    let json = serde_json::to_value(k).unwrap();
    assert_eq!(json["complete"], false);
    assert_eq!(sim.total().cycles, 20_000);
    let SimError::Stopped { warps, stats, .. } = &e else {
        unreachable!()
    };
    assert_eq!(stats.as_ref(), k);
    assert_eq!(warps.0.len(), 2, "{warps}");
    assert!(warps.0.iter().all(|w| w.sm == 0 && w.cta == [0, 0, 0]));
    let text = e.to_string();
    assert!(
        text.starts_with(
            "kernel spin stopped at cycle 19999: the cycle limit (20000 cycles) was reached; \
             2 warps live ("
        ),
        "{text}"
    );
    assert!(
        text.contains("SM 0 CTA (0,0,0) warp 1 (next: PTX line "),
        "{text}"
    );

    // The same stop gives the same statistics.
    let (again, _) = run_spin(limits());
    let strip = |k: &timing::KernelStats| timing::KernelStats {
        simulation: Default::default(),
        ..k.clone()
    };
    assert_eq!(strip(&again.kernels()[0]), strip(k));
}

#[test]
fn an_endless_kernel_stops_at_the_instruction_limit() {
    let (sim, r) = run_spin(RunLimits {
        max_instructions: Some(5_000),
        ..RunLimits::default()
    });
    let (reason, _, _) = stopped(r);
    assert_eq!(reason, StopReason::MaxInstructions(5_000));
    let issued = sim.kernels()[0].warp_instructions;
    // Stopped in the cycle the bound was reached: at most one cycle's issue over it.
    assert!((5_000..5_000 + 8).contains(&issued), "{issued}");
}

#[test]
fn a_deadline_or_an_interrupt_stops_an_endless_kernel() {
    let (_, r) = run_spin(RunLimits {
        deadline: Some((Instant::now(), Duration::from_secs(3))),
        ..RunLimits::default()
    });
    assert_eq!(stopped(r).0, StopReason::Timeout(Duration::from_secs(3)));
    let (mut sim, r) = run_spin(RunLimits {
        interrupt: Some(Arc::new(AtomicBool::new(true))),
        ..RunLimits::default()
    });
    assert_eq!(stopped(r).0, StopReason::Interrupted);
    // The stopped kernel still holds the SM: no other kernel starts.
    let (mut emu, k, info) = load(&spin_ptx(), "spin");
    let flag = alloc_u32(&mut emu, &[1]);
    let p = params(&emu, k, &[flag]);
    let r = sim.simulate_kernel(&mut emu, k, LaunchConfig::linear(1, 32), &p, &info);
    assert!(matches!(r, Err(SimError::AfterStop { .. })), "{r:?}");
}

#[test]
fn limits_leave_a_kernel_that_ends_in_time_alone() {
    // The flag is set: every warp leaves the loop at once.
    let (mut emu, k, info) = load(&spin_ptx(), "spin");
    let flag = alloc_u32(&mut emu, &[1]);
    let p = params(&emu, k, &[flag]);
    let run = |limits: RunLimits, emu: &mut emu::Emulator| {
        let mut sim = TimingSimulator::new(config("gtx480", &["gpu.num_sms=1"]));
        sim.set_limits(limits);
        sim.simulate_kernel(emu, k, LaunchConfig::linear(1, 64), &p, &info)
            .unwrap()
    };
    let free = run(RunLimits::default(), &mut emu);
    let bounded = run(
        RunLimits {
            max_cycles: Some(free.cycles + 1),
            max_instructions: Some(free.warp_instructions + 1),
            ..RunLimits::default()
        },
        &mut emu,
    );
    assert!(bounded.complete);
    assert_eq!(bounded.cycles, free.cycles);
    assert_eq!(bounded.warp_instructions, free.warp_instructions);
}

#[test]
fn a_two_warp_barrier_deadlock_is_reported_with_each_warps_state() {
    let (mut emu, k, info) = load(&split_barrier_ptx(), "split");
    let mut sim = TimingSimulator::new(config("gtx480", &["gpu.num_sms=1"]));
    let r = sim.simulate_kernel(&mut emu, k, LaunchConfig::linear(1, 64), &[], &info);
    let Err(SimError::Deadlock { error, warps }) = r else {
        panic!("expected a deadlock, got {r:?}");
    };
    let waits: Vec<WarpWait> = warps.0.iter().map(|w| w.wait).collect();
    assert_eq!(waits, [WarpWait::Barrier(0), WarpWait::Barrier(1)]);
    assert_eq!(
        warps.0.iter().map(|w| w.warp_in_cta).collect::<Vec<_>>(),
        [0, 1]
    );
    let text = SimError::Deadlock {
        error: error.clone(),
        warps: warps.clone(),
    }
    .to_string();
    assert!(text.contains("barrier 0 deadlock"), "{text}");
    assert!(
        text.contains(
            "2 warps live (2 at a barrier): SM 0 CTA (0,0,0) warp 0 (next: PTX line 16) waits at \
             barrier 0; SM 0 CTA (0,0,0) warp 1 (next: PTX line 12) waits at barrier 1"
        ),
        "{text}"
    );
}

#[test]
fn the_watchdog_reports_a_stretch_without_issue_or_memory_completion() {
    // Every SM evaluated every cycle: waiting for the kernel's first instruction fetch
    // from DRAM, the SM is visited for hundreds of cycles in which nothing issues and
    // nothing returns.
    let (mut emu, k, info) = load(&spin_ptx(), "spin");
    let flag = alloc_u32(&mut emu, &[0]);
    let p = params(&emu, k, &[flag]);
    let mut sim = TimingSimulator::new(config("gtx480", &["gpu.num_sms=1"]));
    sim.set_cycle_skipping(false);
    sim.set_limits(RunLimits {
        watchdog_iterations: 50,
        ..RunLimits::default()
    });
    let r = sim.simulate_kernel(&mut emu, k, LaunchConfig::linear(1, 64), &p, &info);
    let Err(SimError::NoProgress { warps, kernel, .. }) = r else {
        panic!("expected the watchdog, got {r:?}");
    };
    assert_eq!(kernel, "spin");
    assert_eq!(warps.0.len(), 2);
    assert!(warps.0.iter().all(|w| w.wait == WarpWait::Fetch), "{warps}");
}

//! Microbenchmarks with known answers (issue 4 §5), run through emu + timing: each test
//! states the figure it expects and why, from the config's numbers.

mod common;

use common::*;
use emu::LaunchConfig;
use timing::memory::{MemorySystem, ServedBy};
use timing::stats::Limiter;
use timing::{KernelInfo, KernelStats};

const HEADER: &str = ".version 7.0\n.target sm_70\n.address_size 64\n";

fn run_chain(n: usize, overrides: &[&str]) -> KernelStats {
    run_chain_on("gtx480", n, overrides)
}

fn run_chain_on(gpu: &str, n: usize, overrides: &[&str]) -> KernelStats {
    let (mut emu, k, info) = load(&add_chain(n), "chain");
    let out = alloc_u32(&mut emu, &[0]);
    let p = params(&emu, k, &[out]);
    let mut o = vec!["gpu.num_sms=1"];
    o.extend_from_slice(overrides);
    let s = run_warm(
        config(gpu, &o),
        &mut emu,
        k,
        &info,
        LaunchConfig::linear(1, 32),
        &p,
    );
    assert_eq!(read_u32(&emu, out, 1), [n as u32], "the chain computed");
    s
}

/// Cycles per link of the chain: the difference between a long and a short chain.
fn per_add(overrides: &[&str]) -> f64 {
    let (a, b) = (run_chain(16, overrides), run_chain(80, overrides));
    (b.cycles - a.cycles) as f64 / 64.0
}

#[test]
fn dependent_adds_take_n_times_the_alu_latency() {
    // gtx480: int latency 20, bank latency 1. A link is issue -> operand read (1 cycle of
    // arbitration + 1 of bank access) -> 20 in the ALU -> 1 of register write -> the
    // scoreboard releases and the next add issues: 20 + 2 x 1 + 1 = 23.
    assert_eq!(per_add(&[]), 23.0);
    // Only the ALU latency changed: 7 + 3.
    assert_eq!(per_add(&["pipeline.classes.int.latency=7"]), 10.0);
    // Bank latency 4 costs 3 more on the read and 3 more on the write.
    assert_eq!(per_add(&["register_file.bank_latency=4"]), 29.0);
    // The same on the ideal register file: no conflicts, same latency.
    assert_eq!(per_add(&["register_file.design=\"ideal\""]), 23.0);
    // Three pipeline registers between the collector and the unit: 3 more per link.
    assert_eq!(per_add(&["pipeline.dispatch_latency=3"]), 26.0);
}

#[test]
fn dependent_adds_on_the_gpgpusim_transcription_take_its_pipeline_depth() {
    // GPGPU-Sim's shader pipeline for a dependent int add (latency 4): issue, collector
    // allocation, operand read, collector output register, the unit's dispatch register,
    // its first stage, 4 cycles to the result register, writeback (which releases the
    // scoreboard in the cycle the next add issues): 4 + 6 = 10 cycles per link.
    let (a, b) = (
        run_chain_on("gpgpusim-gtx480", 16, &[]),
        run_chain_on("gpgpusim-gtx480", 80, &[]),
    );
    assert_eq!((b.cycles - a.cycles) as f64 / 64.0, 10.0);
}

/// One warp, `n` independent `fma.rn.f32` reading `%f<a>, %f<b>, %f<c>`, each writing its
/// own register (no RAW, no WAW). Run with the declaration-order stand-in mapping, so
/// `%fK` is `RK`, and `register_file.bank_mapping = "register"` (bank = K mod 8).
fn fma_block(n: usize, a: u32, b: u32, c: u32) -> KernelStats {
    let regs = 24 + n;
    let mut s = format!(
        "{HEADER}.visible .entry fmas(.param .u64 out)\n{{\n.reg .f32 %f<{regs}>;\n\
         .reg .b64 %rd<2>;\nld.param.u64 %rd1, [out];\n"
    );
    for i in 0..n {
        s.push_str(&format!("fma.rn.f32 %f{}, %f{a}, %f{b}, %f{c};\n", 24 + i));
    }
    s.push_str(&format!(
        "st.global.f32 [%rd1], %f{};\nret;\n}}\n",
        24 + n - 1
    ));
    let (mut emu, k, _) = load(&s, "fmas");
    let program = &emu.module(k.module).unwrap().program;
    let info = KernelInfo::unallocated(program, k.func).unwrap();
    let out = alloc_u32(&mut emu, &[0]);
    let p = params(&emu, k, &[out]);
    // A buffer as long as the block, so that the front end is not the bottleneck.
    let cfg = config(
        "gtx480",
        &[
            "gpu.num_sms=1",
            "register_file.bank_mapping=\"register\"",
            "sm.ibuffer_entries=128",
        ],
    );
    run_warm(cfg, &mut emu, k, &info, LaunchConfig::linear(1, 32), &p)
}

#[test]
fn operands_in_one_bank_conflict_and_spreading_them_removes_the_conflicts() {
    let n = 96;
    // R0, R8, R16: all in bank 0 of 8. Each fma needs bank 0 for three cycles, so the
    // block is read-port bound at 3 cycles per instruction: at least 2 refused requests
    // per instruction, and collectors fill up behind the conflicts.
    let same = fma_block(n, 0, 8, 16);
    // R1, R2, R3: three banks, one cycle each; the block is issue bound (1 per cycle).
    let spread = fma_block(n, 1, 2, 3);
    assert_eq!(spread.register_file.read_bank_conflicts, 0, "{spread:#?}");
    assert_eq!(spread.stalls.bank_conflict, 0);
    let conflicts = same.register_file.read_bank_conflicts;
    assert!(conflicts >= 2 * n as u64, "{conflicts} conflicts");
    assert!(same.stalls.bank_conflict > 0, "{:?}", same.stalls);
    assert_eq!(same.register_file.reads_per_bank[0], 3 * n as u64);
    // 3 cycles per fma against 1 (+ the same fixed latency in both).
    let extra = same.cycles as i64 - spread.cycles as i64;
    assert!(
        (2 * n as i64 - 8..=2 * n as i64 + 8).contains(&extra),
        "same-bank {} vs spread {} cycles",
        same.cycles,
        spread.cycles
    );
}

/// One thread follows `n` pointers, each in its own line 196608 bytes apart (L2 slice 0,
/// DRAM channel 0, bank 0, a new row each time: every load misses everywhere).
fn pointer_chase(n: usize, overrides: &[&str]) -> (KernelStats, u64) {
    let ptx = format!(
        "{HEADER}.visible .entry chase(.param .u64 start, .param .u32 n, .param .u64 out)\n{{\n\
         .reg .pred %p<2>;\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n\
         ld.param.u64 %rd1, [start];\nld.param.u32 %r1, [n];\nld.param.u64 %rd3, [out];\n\
         LOOP:\nld.global.u64 %rd1, [%rd1];\nsub.s32 %r1, %r1, 1;\n\
         setp.ne.s32 %p1, %r1, 0;\n@%p1 bra LOOP;\nst.global.u64 [%rd3], %rd1;\nret;\n}}\n"
    );
    let (mut emu, k, info) = load(&ptx, "chase");
    let stride = 196_608u64;
    let base = emu
        .memory
        .alloc(stride * (n as u64 + 1), emu::AllocKind::Device)
        .unwrap();
    // Align the chain to the stride so that every node is at `k * stride` in the
    // channel's address space, as in the memory system's own known-answer test. The
    // timing model sees the allocation at its simulated base (the first one touched is at
    // `GLOBAL_BASE`), never at the host's address, so the offset is computed from that.
    let first = base + (stride - timing::memory::address_map::GLOBAL_BASE % stride) % stride;
    for i in 0..n as u64 {
        let here = first + i * stride;
        let next = if i + 1 == n as u64 { 0 } else { here + stride };
        emu.memory.write_uint(here, 8, next).unwrap();
    }
    let out = alloc_u32(&mut emu, &[0, 0]);
    let p = params(&emu, k, &[first, n as u64, out]);
    let mut o = vec!["gpu.num_sms=1", "gpu.memory_clock_mhz=700"];
    o.extend_from_slice(overrides);
    let cfg = config("gtx480", &o);
    let miss = MemorySystem::new(&cfg)
        .unloaded_load_latency(ServedBy::Dram, 1)
        .get();
    let s = run(cfg, &mut emu, k, &info, LaunchConfig::linear(1, 1), &p);
    (s, miss)
}

#[test]
fn a_pointer_chase_shows_the_configured_dram_latency() {
    let per_load = |overrides: &[&str]| {
        let (a, miss) = pointer_chase(4, overrides);
        let (b, _) = pointer_chase(12, overrides);
        assert_eq!(b.memory.dram.reads - a.memory.dram.reads, 8);
        ((b.cycles - a.cycles) as f64 / 8.0, miss)
    };
    let (t218, miss) = per_load(&[]);
    // Each load: the unloaded miss latency, + t_rp (12) for the row left open by the
    // previous node, + the pipeline around it (address generation 4, operand read 2,
    // register write 1, the three loop instructions' issue and the dependent load).
    assert!(
        t218 >= (miss + 12) as f64 && t218 <= (miss + 12 + 40) as f64,
        "{t218} cycles per load, unloaded miss {miss}"
    );
    // 200 more cycles of DRAM latency: exactly 200 more per load.
    let (t418, _) = per_load(&["dram.latency=418"]);
    assert_eq!(t418 - t218, 200.0);
}

fn shared_stride(stride: u32) -> KernelStats {
    let ptx = format!(
        "{HEADER}.visible .entry sh(.param .u64 out, .param .u32 stride)\n{{\n\
         .shared .align 4 .b32 buf[4096];\n.reg .b32 %r<12>;\n.reg .b64 %rd<2>;\n\
         ld.param.u64 %rd1, [out];\nld.param.u32 %r2, [stride];\nmov.u32 %r1, %tid.x;\n\
         mul.lo.u32 %r3, %r1, %r2;\nshl.b32 %r3, %r3, 2;\nmov.u32 %r4, buf;\n\
         add.u32 %r5, %r4, %r3;\n\
         ld.shared.u32 %r6, [%r5];\nld.shared.u32 %r7, [%r5+4];\nld.shared.u32 %r8, [%r5+8];\n\
         ld.shared.u32 %r9, [%r5+12];\nadd.u32 %r6, %r6, %r7;\nadd.u32 %r6, %r6, %r8;\n\
         add.u32 %r6, %r6, %r9;\nst.global.u32 [%rd1], %r6;\nret;\n}}\n"
    );
    let (mut emu, k, info) = load(&ptx, "sh");
    let out = alloc_u32(&mut emu, &[0]);
    let p = params(&emu, k, &[out, u64::from(stride)]);
    run(
        config("gtx480", &["gpu.num_sms=1"]),
        &mut emu,
        k,
        &info,
        LaunchConfig::linear(1, 32),
        &p,
    )
}

#[test]
fn stride_two_shared_memory_access_has_two_way_conflicts() {
    let one = shared_stride(1);
    let two = shared_stride(2);
    let three = shared_stride(3);
    let sh = |s: &KernelStats| {
        let m = s.memory.shared_memory;
        (m.accesses, m.passes, m.bank_conflicts)
    };
    assert_eq!(sh(&one), (4, 4, 0));
    assert_eq!(sh(&two), (4, 8, 4), "two passes per access");
    assert_eq!(sh(&three), (4, 4, 0), "odd strides are conflict free");
    // The loads are independent and pipelined: the second pass of the last one shows.
    assert!(two.cycles > one.cycles);
}

#[test]
fn register_limited_occupancy_is_exactly_what_the_register_file_allows() {
    let (mut emu, k, mut info) = load(&add_chain(8), "chain");
    let out = alloc_u32(&mut emu, &[0]);
    let p = params(&emu, k, &[out]);
    // gtx480: 32768 registers, allocation unit 64 per warp; 256-thread CTAs (8 warps).
    // R registers per thread take ceil(32 R / 64) x 64 per warp.
    for (r, ctas) in [
        (10u32, 6u32),
        (21, 5),
        (32, 4),
        (42, 3),
        (63, 2),
        (64, 2),
        (127, 1),
    ] {
        info.registers_per_thread = r;
        let per_warp = (32 * r).div_ceil(64) * 64;
        assert_eq!(
            ctas.min(6),
            (32768 / (per_warp * 8)).min(6),
            "hand calculation"
        );
        let s = run(
            config("gtx480", &["gpu.num_sms=2"]),
            &mut emu,
            k,
            &info,
            LaunchConfig::linear(40, 256),
            &p,
        );
        let o = &s.occupancy;
        assert_eq!(o.ctas_per_sm, ctas, "R = {r}");
        assert_eq!(
            o.peak_warps_per_sm,
            8 * ctas,
            "R = {r}: peak resident warps"
        );
        if ctas < 6 {
            assert_eq!(o.limited_by, Limiter::Registers, "R = {r}");
        } else {
            assert_eq!(o.limited_by, Limiter::Threads, "R = {r}");
        }
    }
    // The ideal design with twice the capacity doubles the register limit.
    info.registers_per_thread = 42;
    let s = run(
        config(
            "gtx480",
            &[
                "gpu.num_sms=2",
                "register_file.design=\"ideal\"",
                "register_file.ideal_capacity_registers=65536",
            ],
        ),
        &mut emu,
        k,
        &info,
        LaunchConfig::linear(40, 256),
        &p,
    );
    assert_eq!(
        (s.occupancy.ctas_per_sm, s.occupancy.peak_warps_per_sm),
        (6, 48)
    );
    // 128 registers per thread: one 256-thread CTA needs 32768 + nothing fits beyond.
    info.registers_per_thread = 129;
    let mut sim = timing::TimingSimulator::new(config("gtx480", &[]));
    let e = sim
        .simulate_kernel(&mut emu, k, LaunchConfig::linear(1, 256), &p, &info)
        .unwrap_err();
    assert!(e.to_string().contains("(limited by sm.registers)"), "{e}");
}

#[test]
fn doubling_the_bank_latency_slows_a_register_bound_kernel_and_not_a_memory_bound_one() {
    let reg1 = run_chain(80, &[]).cycles as f64;
    let reg2 = run_chain(80, &["register_file.bank_latency=2"]).cycles as f64;
    let mem1 = pointer_chase(12, &[]).0.cycles as f64;
    let mem2 = pointer_chase(12, &["register_file.bank_latency=2"])
        .0
        .cycles as f64;
    // Register bound: +2 cycles on each of 80 links of 23 (+8.7%).
    assert!(reg2 / reg1 > 1.08, "{reg1} -> {reg2}");
    // Memory bound: a few cycles on ~500 per load.
    assert!(mem2 / mem1 < 1.02, "{mem1} -> {mem2}");
}

fn saxpy(cfg: timing::GpuConfig) -> KernelStats {
    let ptx = workload("saxpy");
    let (mut emu, k, info) = load(&ptx, "_Z5saxpyifPKfPf");
    let n = 20_000usize;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let y: Vec<f32> = (0..n).map(|i| 2.0 * i as f32).collect();
    let xa = alloc_f32(&mut emu, &x);
    let ya = alloc_f32(&mut emu, &y);
    let p = params(&emu, k, &[n as u64, u64::from(3.0f32.to_bits()), xa, ya]);
    let s = run(cfg, &mut emu, k, &info, LaunchConfig::linear(40, 128), &p);
    let out = read_u32(&emu, ya, n);
    for (i, v) in out.iter().enumerate() {
        assert_eq!(f32::from_bits(*v), 5.0 * i as f32, "element {i}");
    }
    s
}

#[test]
fn identical_runs_give_identical_statistics_and_stalls_add_up() {
    for name in [
        "gtx480",
        "maxwell-ltrf",
        "rtx2060-scaled",
        "qv100",
        "rtx-a6000",
        "h100",
    ] {
        let cfg = config(name, &[]);
        let scheduler_cycles =
            |s: &KernelStats| s.cycles * u64::from(cfg.gpu.num_sms) * u64::from(cfg.sm.schedulers);
        let mut a = saxpy(cfg.clone());
        let mut b = saxpy(cfg.clone());
        assert_eq!(
            a.stalls.total(),
            scheduler_cycles(&a),
            "{name}: {:?}",
            a.stalls
        );
        assert!(a.stalls.issued > 0);
        a.simulation = Default::default();
        b.simulation = Default::default();
        assert_eq!(a, b, "{name}");
    }
}

/// `warps` warps, each a chain of `n` dependent adds (no memory until the end).
fn chains(warps: u32, overrides: &[&str]) -> KernelStats {
    let (mut emu, k, info) = load(&add_chain(40), "chain");
    let out = alloc_u32(&mut emu, &[0]);
    let p = params(&emu, k, &[out]);
    let mut o = vec!["gpu.num_sms=1", "sm.schedulers=1"];
    o.extend_from_slice(overrides);
    run_warm(
        config("gtx480", &o),
        &mut emu,
        k,
        &info,
        LaunchConfig::linear(1, 32 * warps),
        &p,
    )
}

#[test]
fn the_two_level_scheduler_limits_the_active_set() {
    // 16 warps of pure ALU chains: under LRR all 16 interleave (16 issues per 23-cycle
    // link); with an active set of 2, only 2 do, and no warp ever blocks on a
    // long-latency operation to make room: about 8x slower.
    let lrr = chains(16, &["sm.scheduler=\"lrr\""]);
    let two = chains(16, &["sm.scheduler=\"two_level\"", "sm.active_warps=2"]);
    let ratio = two.cycles as f64 / lrr.cycles as f64;
    assert!(
        ratio > 6.0 && ratio < 9.0,
        "lrr {} two-level {}",
        lrr.cycles,
        two.cycles
    );
    // With an active set as large as the warp count, two-level is round robin.
    let all = chains(16, &["sm.scheduler=\"two_level\"", "sm.active_warps=16"]);
    assert!((all.cycles as f64 / lrr.cycles as f64 - 1.0).abs() < 0.05);
    // GTO runs one warp's chain while the others wait: same total here.
    let gto = chains(16, &["sm.scheduler=\"gto\""]);
    assert!((gto.cycles as f64 / lrr.cycles as f64 - 1.0).abs() < 0.1);
}

/// saxpy over 20,000 elements in 40 CTAs of 128 threads on `cfg`, sleeping through idle
/// cycles or evaluating every SM in every cycle; the wall-clock figures zeroed.
fn saxpy_stats(cfg: timing::GpuConfig, skip: bool) -> KernelStats {
    saxpy_run(cfg, skip).0
}

/// [`saxpy_stats`] and the cycles in which an SM was evaluated.
fn saxpy_run(cfg: timing::GpuConfig, skip: bool) -> (KernelStats, u64) {
    let ptx = workload("saxpy");
    let (mut emu, k, info) = load(&ptx, "_Z5saxpyifPKfPf");
    let n = 20_000usize;
    let xa = alloc_f32(&mut emu, &vec![1.0; n]);
    let ya = alloc_f32(&mut emu, &vec![2.0; n]);
    let p = params(&emu, k, &[n as u64, u64::from(3.0f32.to_bits()), xa, ya]);
    let mut sim = timing::TimingSimulator::new(cfg);
    sim.set_cycle_skipping(skip);
    let mut s = sim
        .simulate_kernel(&mut emu, k, LaunchConfig::linear(40, 128), &p, &info)
        .unwrap();
    s.simulation = Default::default();
    (s, sim.sm_cycles_evaluated())
}

#[test]
fn cycle_skipping_is_exact() {
    // Every SM evaluated in every cycle must give the same statistics as sleeping through
    // cycles in which nothing can happen.
    for (name, overrides) in [
        ("gtx480", vec![]),
        ("maxwell-ltrf", vec!["register_file.bank_latency=6"]),
        ("qv100", vec!["gpu.num_sms=8"]),
        // Reservation failures (16 KB L1D fetching whole lines), write acknowledgements,
        // the launch latency and hashed channels.
        ("gpgpusim-gtx480", vec![]),
        ("gpgpusim-qv100", vec!["gpu.num_sms=8"]),
        // The modern core: Allocate stages that free on their own, per-sub-core fetch.
        ("rtx-a6000", vec!["gpu.num_sms=8"]),
        (
            "rtx-a6000",
            vec!["gpu.num_sms=8", "register_file.design=\"baseline\""],
        ),
        // h100 lists its GPCs (gpu.gpc_sms), which must add up to the SMs.
        ("h100", vec!["gpu.num_sms=8", "gpu.gpc_sms=[8]"]),
        // Non-pipelined banks held for 20 cycles a grant: the SM sleeps through refused
        // requests, whose conflicts the register file counts when it wakes (every design:
        // `cycle_skipping_is_exact_under_every_design`, technology 7).
        ("gtx480", vec!["register_file.bank_latency=20"]),
        (
            "gtx480",
            vec![
                "register_file.bank_latency=20",
                "register_file.port_sharing=\"shared\"",
            ],
        ),
        (
            "h100",
            vec![
                "gpu.num_sms=8",
                "gpu.gpc_sms=[8]",
                "register_file.bank_latency=20",
            ],
        ),
    ] {
        let run_with = |skip: bool| saxpy_stats(config(name, &overrides), skip);
        assert_eq!(run_with(true), run_with(false), "{name} {overrides:?}");
    }
}

#[test]
fn the_readable_summary_names_every_figure() {
    let s = run_chain(8, &[]);
    let text = s.to_string();
    for needle in [
        "chain grid [1, 1, 1] block [32, 1, 1]",
        "cycles",
        "IPC",
        "occupancy: 8 CTAs",
        "limited by Ctas",
        "scheduler cycles: issued",
        "register file (baseline)",
        "L1D",
        "DRAM",
    ] {
        assert!(text.contains(needle), "{needle:?} missing from\n{text}");
    }
}

#[test]
fn energy_events_count_register_file_execution_and_memory() {
    // One warp: mov, 40 adds (int), st.global (mem), ret (control); ld.param is mem too.
    let s = run_chain(40, &[]);
    let count = |structure: &str, access: &str| {
        s.energy_events
            .iter()
            .find(|e| e.structure == structure && e.access == access)
            .map_or(0, |e| e.count)
    };
    // 32 active lanes per instruction: the int class has the mov and the 40 adds.
    assert_eq!(count("execute", "int"), 32 * 41);
    let lanes: u64 = s
        .energy_events
        .iter()
        .filter(|e| e.structure == "execute")
        .map(|e| e.count)
        .sum();
    assert_eq!(lanes, s.thread_instructions);
    // The register file's events are the design's counters during the kernel.
    assert_eq!(count("mrf", "read"), s.register_file.reads);
    assert_eq!(count("mrf", "write"), s.register_file.writes);
    assert_eq!(count("crossbar", "transfer"), s.register_file.reads);
    assert_eq!(count("l1d", "write"), s.memory.l1d.writes);
    assert!(s.register_file.reads >= 40, "each add reads its register");
    // Every event kind is one the energy crate prices.
    let cfg = energy::EnergyConfig::default();
    let r = cfg
        .account(s.energy_events.iter().map(|e| energy::Event {
            structure: e.structure,
            access: e.access,
            count: e.count,
        }))
        .unwrap();
    assert!(r.register_file_joules > 0.0 && r.execution_joules > 0.0);
}

#[test]
fn cerf_sleeps_through_slow_banks() {
    // CERF's L1D side takes the integrated array's bank ports at memory events the SM
    // does not see; the SM still sleeps while a register request waits for a port a
    // long bank access holds, and counts the refusals of the skipped cycles that met a
    // line's access (`cerf_register_bank_conflicts_with_lines`) when it wakes.
    let cerf = "register_file.design=\"cerf\"";
    let without_states = |mut s: KernelStats| {
        s.register_file
            .extra
            .retain(|k, _| !k.starts_with("cerf_state_"));
        s
    };
    for extra in [&[][..], &["register_file.port_sharing=\"shared\""][..]] {
        let mut o = vec![cerf, "register_file.bank_latency=20"];
        o.extend_from_slice(extra);
        let run_with = |skip: bool| without_states(saxpy_stats(config("gtx480", &o), skip));
        let (skipped, every) = (run_with(true), run_with(false));
        assert!(
            skipped.register_file.extra["cerf_register_bank_conflicts_with_lines"] > 0,
            "{extra:?}: lines must meet waiting registers for the test to mean anything"
        );
        assert_eq!(skipped, every, "{extra:?}");
    }
    // At a bank latency of 500 nearly every cycle has a register request waiting for a
    // port: evaluated every cycle, the SMs would run in most of their cycles.
    let cfg = config("gtx480", &[cerf, "register_file.bank_latency=500"]);
    let sms = cfg.gpu.num_sms;
    let (s, evaluated) = saxpy_run(cfg, true);
    let cycles = s.cycles * u64::from(sms);
    assert!(
        evaluated * 10 < cycles,
        "{evaluated} SM cycles evaluated of {cycles}: CERF steps through its bank waits"
    );
    // At 10^4 the SMs wait for ports in nearly all their cycles. They are evaluated when
    // something happens (a port frees, a fill, a load's data), not at each of CERF's
    // 64-cycle state samples: those of the cycles slept through are taken at wake-up.
    let cfg = config("gtx480", &[cerf, "register_file.bank_latency=10000"]);
    let (s, evaluated) = saxpy_run(cfg, true);
    let cycles = s.cycles * u64::from(sms);
    // Waking at every sample would evaluate about one cycle in 64 of the waits.
    assert!(
        evaluated * 200 < cycles,
        "{evaluated} SM cycles evaluated of {cycles}: CERF wakes for its state samples"
    );
}

#[test]
fn cycle_skipping_is_exact_under_every_design() {
    // The designs keep their own timers (prefetches, fills, tagging stages, reuse
    // tables); sleeping through idle cycles must not change what they do, with a fast
    // and a slow main register file. CERF samples its entries' states when the SM is
    // evaluated, so those averages (`cerf_state_*`) are left out of the comparison.
    // The third case gives the units long initiation intervals: collectors then hold
    // their operands for many cycles waiting for a unit, which a design must sleep
    // through (it learns when from the dispatch port) without changing what it does.
    let long_interval: &[&str] = &[
        "pipeline.classes.fp32.initiation_interval=97",
        "pipeline.classes.int.initiation_interval=61",
        "pipeline.classes.mem.initiation_interval=40",
    ];
    let mut differ = vec![];
    for design in DESIGNS {
        for (technology, extra) in [(1, &[][..]), (7, &[][..]), (1, long_interval)] {
            let d = format!("register_file.design=\"{design}\"");
            let t = format!("register_file.technology={technology}");
            let run_with = |skip: bool| {
                let mut o = vec![d.as_str(), t.as_str()];
                o.extend_from_slice(extra);
                let cfg = config("maxwell-ltrf", &o);
                let mut s = saxpy_stats(cfg, skip);
                s.register_file
                    .extra
                    .retain(|k, _| !k.starts_with("cerf_state_"));
                s
            };
            if run_with(true) != run_with(false) {
                differ.push(format!("{design} at technology {technology} {extra:?}"));
            }
        }
    }
    assert!(differ.is_empty(), "cycle skipping changed: {differ:?}");
}

/// The modern core reports its L0 instruction caches: every fetch of a warp instruction
/// is an L0 lookup (after `run_warm`'s first run the chain's lines are all in the L0);
/// the collector core has no L0 and reports none.
#[test]
fn the_modern_core_reports_its_l0_instruction_caches() {
    let s = run_chain_on("rtx-a6000", 200, &[]);
    let l0 = s.l0_icache.expect("rtx-a6000 runs the modern core");
    let fetches = l0.hits + l0.misses + l0.useful_prefetches;
    assert!(
        fetches >= s.warp_instructions && fetches <= s.warp_instructions + 8,
        "{l0:?} for {} warp instructions",
        s.warp_instructions
    );
    assert!(l0.hits > 200, "{l0:?}");
    assert_eq!(run_chain(200, &[]).l0_icache, None);
}

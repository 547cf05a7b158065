//! CERF known answers (issue 12): register-file holes become cache capacity; the
//! LRU-prioritized policy never spills a register; LRU-fair with a tiny array spills and
//! still computes the right result; runs are deterministic.

mod common;

use common::*;
use compiler::pipeline::{compile, LoadOptions};
use emu::{Emulator, KernelRef, LaunchConfig};
use timing::{GpuConfig, KernelInfo, KernelStats};

const HEADER: &str = ".version 7.0\n.target sm_70\n.address_size 64\n";

/// Each of `threads` threads sums `a[i * threads + tid]` over `lines` values, `passes`
/// times: every warp touches `lines` distinct 128-byte lines per pass, the CTA
/// `lines * threads * 4` bytes, with few live registers. `pad` extra registers are kept
/// live across the loop (a register-hungry kernel).
fn sweep_ptx(lines: u32, pad: usize) -> String {
    let mut keep = String::new();
    let mut use_ = String::new();
    for i in 0..pad {
        keep += &format!("add.u32 %q{i}, %r2, {i};\n");
        use_ += &format!("add.u32 %r5, %r5, %q{i};\n");
    }
    format!(
        "{HEADER}.visible .entry sweep(.param .u64 a, .param .u32 passes, .param .u64 out)\n{{\n\
         .reg .pred %p<3>;\n.reg .b32 %r<8>;\n.reg .b32 %q<{}>;\n.reg .f32 %f<4>;\n.reg .b64 %rd<6>;\n\
         ld.param.u64 %rd1, [a];\nld.param.u32 %r1, [passes];\nld.param.u64 %rd2, [out];\n\
         mov.u32 %r2, %tid.x;\nmov.u32 %r6, %ntid.x;\nmov.f32 %f1, 0f00000000;\nmov.u32 %r5, 0;\n\
         {keep}\
         PASS:\nmov.u32 %r3, 0;\n\
         LOOP:\nmad.lo.u32 %r4, %r3, %r6, %r2;\nmul.wide.u32 %rd3, %r4, 4;\n\
         add.u64 %rd4, %rd1, %rd3;\nld.global.f32 %f2, [%rd4];\nadd.f32 %f1, %f1, %f2;\n\
         add.u32 %r3, %r3, 1;\nsetp.lt.u32 %p1, %r3, {lines};\n@%p1 bra LOOP;\n\
         sub.u32 %r1, %r1, 1;\nsetp.ne.u32 %p2, %r1, 0;\n@%p2 bra PASS;\n\
         {use_}\
         cvt.rn.f32.u32 %f3, %r5;\nadd.f32 %f1, %f1, %f3;\n\
         mov.u32 %r7, %ctaid.x;\nmad.lo.u32 %r7, %r7, %r6, %r2;\nmul.wide.u32 %rd5, %r7, 4;\nadd.u64 %rd5, %rd2, %rd5;\nst.global.f32 [%rd5], %f1;\nret;\n}}\n",
        pad.max(1)
    )
}

/// The kernel's info as `regsim run` builds it for `cfg`: the load-time pipeline with the
/// design's passes (CERF: the liveness bits).
fn pipeline_info(emu: &Emulator, k: KernelRef, cfg: &GpuConfig) -> KernelInfo {
    let program = &emu.module(k.module).unwrap().program;
    let options = LoadOptions {
        max_registers: None,
        passes: timing::rf::required_passes(cfg),
    };
    let c = compile(program, &options).unwrap();
    KernelInfo::from_compiled(&c.program, &c.functions, k.func).unwrap()
}

struct Sweep {
    stats: KernelStats,
    ok: bool,
}

/// Runs the sweep on one SM with `ctas` CTAs of `threads` threads and checks every
/// thread's sum (all values are 1.0, so a thread's sum is `passes * lines` plus its
/// padding registers' sum).
fn sweep(overrides: &[&str], lines: u32, pad: usize, ctas: u32, threads: u32) -> Sweep {
    let passes = 4u32;
    let ptx = sweep_ptx(lines, pad);
    let (mut emu, k, _) = load(&ptx, "sweep");
    // CERF's paper simulated the simplified memory system.
    let mut o = vec!["gpu.num_sms=1", "memory.model=paper"];
    o.extend_from_slice(overrides);
    let cfg = config("gtx480", &o);
    let info = pipeline_info(&emu, k, &cfg);
    let a = alloc_f32(&mut emu, &vec![1.0; (lines * threads) as usize]);
    let out = alloc_u32(&mut emu, &vec![0; (ctas * threads) as usize]);
    let p = params(&emu, k, &[a, u64::from(passes), out]);
    let launch = LaunchConfig::linear(ctas, threads);
    let stats = run(cfg, &mut emu, k, &info, launch, &p);
    let got = read_u32(&emu, out, (ctas * threads) as usize);
    let ok = got.iter().enumerate().all(|(i, &bits)| {
        let tid = (i as u32 % threads) as usize;
        let pad_sum: usize = (0..pad).map(|j| tid + j).sum();
        f32::from_bits(bits) == (passes * lines) as f32 + pad_sum as f32
    });
    Sweep { stats, ok }
}

fn extra(s: &KernelStats, k: &str) -> u64 {
    s.register_file.extra.get(k).copied().unwrap_or(0)
}

#[test]
fn register_file_holes_hold_a_working_set_the_baseline_l1d_misses() {
    // 256 threads x 48 lines x 4 bytes = 48 KB: three times the baseline's 16 KB L1D
    // (an LRU sweep of it misses every time), but it fits in the 128 KB array beside the
    // 8 warps' few registers. Four passes: the last three hit in CERF.
    let base = sweep(&[], 48, 0, 1, 256);
    let cerf = sweep(&["register_file.design=\"cerf\""], 48, 0, 1, 256);
    assert!(base.ok && cerf.ok);
    let (b, c) = (&base.stats.memory.l1d, &cerf.stats.memory.l1d);
    assert_eq!(b.reads, c.reads, "same loads");
    assert!(b.hits * 20 < b.reads, "baseline L1D: {b:?}");
    assert!(c.hits * 10 > c.reads * 7, "CERF array: {c:?}");
    assert_eq!(extra(&cerf.stats, "cerf_array_hits"), c.hits);
    assert!(cerf.stats.cycles < base.stats.cycles);
    assert_eq!(extra(&cerf.stats, "cerf_spills"), 0);
    // Dead registers were returned to inactive along the way.
    assert!(extra(&cerf.stats, "cerf_reg_to_inactive") > 0);
    // Entries by state, time-averaged: the array holds the working set (384 lines) as
    // cache data for most of the run.
    let avg = |k: &str| {
        extra(&cerf.stats, k) as f64 / extra(&cerf.stats, "cerf_state_sampled_cycles") as f64
    };
    let total = avg("cerf_state_inactive_entry_cycles")
        + avg("cerf_state_reg_entry_cycles")
        + avg("cerf_state_cache_entry_cycles")
        + avg("cerf_state_dirty_entry_cycles");
    assert!((total - 1024.0).abs() < 1e-6, "{total}");
    assert!(avg("cerf_state_cache_entry_cycles") > 200.0);
    // Energy: the array's accesses are priced once, as `cerf_data`, not as L1D accesses.
    let structures = |s: &KernelStats| {
        s.energy_events
            .iter()
            .filter(|e| e.count > 0)
            .map(|e| e.structure)
            .collect::<Vec<_>>()
    };
    assert!(structures(&base.stats).contains(&"l1d"));
    assert!(!structures(&cerf.stats).contains(&"l1d"));
    assert!(structures(&cerf.stats).contains(&"cerf_data"));
}

#[test]
fn a_register_limited_kernel_never_spills_under_lru_prioritized() {
    // 40 padding registers live across the loop: about 50 registers per thread, so
    // registers (not warps or threads) limit occupancy to 2 of the 4 CTAs of 256.
    let s = sweep(
        &[
            "register_file.design=\"cerf\"",
            "register_file.cerf.policy=\"lru-prioritized\"",
        ],
        48,
        40,
        4,
        256,
    );
    assert!(s.ok);
    assert_eq!(
        s.stats.occupancy.limited_by,
        timing::stats::Limiter::Registers
    );
    assert_eq!(extra(&s.stats, "cerf_spills"), 0);
    assert_eq!(extra(&s.stats, "cerf_fills"), 0);
    assert!(extra(&s.stats, "cerf_inactive_to_reg") > 0);
}

#[test]
fn lru_fair_with_a_tiny_array_spills_fills_and_still_computes_the_sums() {
    // 16 KB array (128 lines) for ~200 warp registers and a 48 KB sweep.
    let tiny = [
        "register_file.design=\"cerf\"",
        "register_file.cerf.policy=\"lru-fair\"",
        "register_file.cerf.size_bytes=16384",
        // CERF Table III prices the register file's size only.
        "energy.cerf_data_read_pj=64",
        "energy.cerf_data_write_pj=64",
        "energy.cerf_tag_lookup_pj=10",
    ];
    let s = sweep(&tiny, 48, 20, 1, 256);
    assert!(s.ok);
    let spills = extra(&s.stats, "cerf_spills");
    let fills = extra(&s.stats, "cerf_fills");
    assert!(spills > 0 && fills > 0, "spills {spills} fills {fills}");
    assert!(fills <= spills, "only spilled registers are filled back");
    assert_eq!(
        extra(&s.stats, "cerf_cold_registers"),
        0,
        "every read register was written"
    );
    // Spills are written to the L2 (the array's write-backs) and fills read from it.
    assert!(s.stats.memory.l1d.writebacks >= spills);
    assert!(extra(&s.stats, "cerf_fill_wait_cycles") > 0);
    // Deterministic.
    let again = sweep(&tiny, 48, 20, 1, 256);
    assert_eq!(s.stats.cycles, again.stats.cycles);
    assert_eq!(s.stats.register_file, again.stats.register_file);
    assert_eq!(s.stats.memory, again.stats.memory);
}

//! Known answers for `l1d.bypass_global_loads` (Maxwell's L1 bypass for global loads,
//! issue 28): a bypassing load is served by the L2 at the L2's latency however often it
//! repeats and leaves nothing in the L1D; `ld.global.nc`, `ldu` and `.ca` loads are still
//! cached; `maxwell-ltrf` bypasses by default and `memory.model = "paper"` does not.

mod common;

use common::*;
use emu::LaunchConfig;
use std::collections::HashMap;
use timing::config::default_configs_dir;
use timing::memory::cache::{LineAddr, SectorMask};
use timing::memory::coalescer::LineAccess;
use timing::memory::{AccessKind, ServedBy, SmId, Space};
use timing::{Cycle, Cycles, GpuConfig, MemRequest, MemorySystem, Override, RequestId};

/// gtx480 with the papers' simplified memory system, whose unloaded latencies are whole
/// cycles (L1 20, L2 200, DRAM 440: `memory_known_answers.rs`).
fn gtx480_paper() -> GpuConfig {
    let o = [Override::parse("memory.model=paper").unwrap()];
    GpuConfig::load("gtx480", &default_configs_dir(), &o).unwrap()
}

/// Issues one full-line load of `line` on SM 0 at `now` (retrying on stalls) and returns
/// its latency.
fn load(mem: &mut MemorySystem, now: &mut Cycle, space: Space, line: u64) -> Cycles {
    let lines = [LineAccess {
        line: LineAddr(line),
        sectors: SectorMask(0b1111),
    }];
    let req = MemRequest {
        kind: AccessKind::Load,
        space,
        lines: &lines,
    };
    let id: RequestId = loop {
        match mem.issue(SmId(0), *now, req) {
            Ok(id) => break id,
            Err(s) => *now = s.retry_at().unwrap_or(*now + Cycles::new(1)),
        }
    };
    let start = *now;
    let mut done = HashMap::new();
    loop {
        for c in mem.completed(*now) {
            done.insert(c.id, c.at);
        }
        if let Some(&at) = done.get(&id) {
            *now = at + Cycles::new(1000);
            return at - start;
        }
        *now = mem.next_event_cycle().expect("never completes").max(*now);
    }
}

#[test]
fn a_bypassing_load_pays_the_l2_every_time_and_allocates_nothing() {
    let cfg = gtx480_paper();
    let mut mem = MemorySystem::new(&cfg);
    let l2 = mem.unloaded_load_latency(ServedBy::L2, 4);
    let l1 = mem.unloaded_load_latency(ServedBy::L1, 4);
    assert_eq!((l1, l2), (Cycles::new(20), Cycles::new(200)));
    let mut now = Cycle::ZERO;
    let a = 0x10000;
    // Cold: DRAM (440, plus a cycle or two of clock-domain rounding).
    let cold = load(&mut mem, &mut now, Space::GlobalBypass, a);
    assert!((440..=442).contains(&cold.get()), "{cold:?}");
    // Again from the same SM: the L2 hit's 200, not the L1's 20.
    assert_eq!(load(&mut mem, &mut now, Space::GlobalBypass, a), l2);
    assert_eq!(load(&mut mem, &mut now, Space::GlobalBypass, a), l2);
    assert_eq!(
        mem.stats().l1d.reads,
        0,
        "bypassing loads do not look up the L1D"
    );
    // A cached load of the same line misses the L1D (nothing was allocated), then hits.
    assert_eq!(load(&mut mem, &mut now, Space::Global, a), l2);
    assert_eq!(load(&mut mem, &mut now, Space::Global, a), l1);
    let s = mem.stats().l1d;
    assert_eq!((s.reads, s.hits, s.misses), (2, 1, 1));
    // A line in the L1D does not help a bypassing load either.
    assert_eq!(load(&mut mem, &mut now, Space::GlobalBypass, a), l2);
}

const HEADER: &str = ".version 7.0\n.target sm_70\n.address_size 64\n";

/// One warp: two loads (qualifier `q`) of the same line, their sum stored.
fn two_loads(q: &str) -> String {
    format!(
        "{HEADER}.visible .entry two(.param .u64 inp, .param .u64 out)\n{{\n\
         .reg .b32 %r<4>;\n.reg .b64 %rd<3>;\n\
         ld.param.u64 %rd1, [inp];\nld.param.u64 %rd2, [out];\n\
         ld.global{q}.u32 %r1, [%rd1];\nld.global{q}.u32 %r2, [%rd1+4];\n\
         add.s32 %r3, %r1, %r2;\nst.global.u32 [%rd2], %r3;\nret;\n}}\n"
    )
}

/// L1D reads and L2 reads of `two_loads(q)` on maxwell-ltrf (one SM) with `overrides`.
fn l1d_and_l2_reads(q: &str, overrides: &[&str]) -> (u64, u64) {
    let (mut emu, k, info) = load_ptx(&two_loads(q));
    let inp = alloc_u32(&mut emu, &[5, 7]);
    let out = alloc_u32(&mut emu, &[0]);
    let p = params(&emu, k, &[inp, out]);
    let mut o = vec!["gpu.num_sms=1"];
    o.extend_from_slice(overrides);
    let s = run(
        config("maxwell-ltrf", &o),
        &mut emu,
        k,
        &info,
        LaunchConfig::linear(1, 32),
        &p,
    );
    assert_eq!(read_u32(&emu, out, 1), [12], "{q}: the sum");
    (s.memory.l1d.reads, s.memory.l2.reads)
}

fn load_ptx(ptx: &str) -> (emu::Emulator, emu::KernelRef, timing::KernelInfo) {
    common::load(ptx, "two")
}

#[test]
fn maxwell_ltrf_keeps_default_global_loads_out_of_its_l1d() {
    // With global loads cached: two L1D reads, the second merged into or hitting the
    // first's line, so the L2 sees one read of it (plus the parameters' constant-cache
    // misses, `l2` here).
    let (l1d, l2) = l1d_and_l2_reads("", &["l1d.bypass_global_loads=false"]);
    assert_eq!(l1d, 2);
    // Default (and .cg) loads bypass: no L1D read; each of the two reaches the L2.
    for q in ["", ".cg"] {
        assert_eq!(l1d_and_l2_reads(q, &[]), (0, l2 + 1), "{q:?}");
    }
    // Read-only (.nc) and explicit .ca loads are cached as before.
    for q in [".nc", ".ca"] {
        assert_eq!(l1d_and_l2_reads(q, &[]), (2, l2), "{q:?}");
    }
    // The paper model caches every global load.
    assert_eq!(l1d_and_l2_reads("", &["memory.model=paper"]).0, 2);
}

#[test]
fn only_the_l1d_can_be_bypassed() {
    let o = [Override::parse("l2.slice.bypass_global_loads=true").unwrap()];
    let e = GpuConfig::load("maxwell-ltrf", &default_configs_dir(), &o).unwrap_err();
    assert_eq!(e.key(), Some("l2.slice.bypass_global_loads"), "{e}");
}

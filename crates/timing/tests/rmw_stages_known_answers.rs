//! Known answers for the read-modify-write stages (issue 25): an L2 slice's atomic unit
//! (`l2.atomic_unit`: its latency after the line is in the slice, its interval between
//! requests), and the validation of the new keys (`l2.atomic_unit`,
//! `shared_memory.atomic_write_latency`, `sm.l0_icache`). The shared-memory write pass has
//! its known answers beside the banks (`memory/shared_memory.rs`).

use timing::config::default_configs_dir;
use timing::memory::cache::{LineAddr, SectorMask};
use timing::memory::coalescer::LineAccess;
use timing::memory::{AccessKind, SmId, Space};
use timing::{Cycle, Cycles, GpuConfig, MemRequest, MemorySystem, Override, RequestId};

fn load(name: &str, overrides: &[&str]) -> Result<GpuConfig, String> {
    let o: Vec<Override> = overrides
        .iter()
        .map(|s| Override::parse(s).unwrap())
        .collect();
    GpuConfig::load(name, &default_configs_dir(), &o).map_err(|e| e.to_string())
}

/// gtx480's simplified memory system (interleaved slices, linear sets) with the DRAM clock
/// equal to the core clock, so that every latency is a whole number of cycles.
fn gtx480(extra: &[&str]) -> GpuConfig {
    let mut o = vec!["memory.model=paper", "gpu.memory_clock_mhz=700"];
    o.extend_from_slice(extra);
    load("gtx480", &o).unwrap()
}

const LINE: LineAccess = LineAccess {
    line: LineAddr(0x200),
    sectors: SectorMask(0b1111),
};

/// Issues `kind` on line 0x200 from `sm` at `now` (retrying while the SM's port stalls).
fn issue(mem: &mut MemorySystem, sm: u32, now: Cycle, kind: AccessKind) -> RequestId {
    let mut t = now;
    loop {
        let req = MemRequest {
            kind,
            space: Space::Global,
            lines: &[LINE],
        };
        match mem.issue(SmId(sm), t, req) {
            Ok(id) => return id,
            Err(stall) => t = stall.retry_at().unwrap_or(t + Cycles::new(1)),
        }
    }
}

/// Runs the memory system from `from` until every request in `ids` has completed; their
/// cycles.
fn finish(mem: &mut MemorySystem, from: Cycle, ids: &[RequestId]) -> Vec<Cycle> {
    let mut at = vec![None; ids.len()];
    let mut now = from;
    while at.iter().any(Option::is_none) {
        for c in mem.completed(now).collect::<Vec<_>>() {
            if let Some(i) = ids.iter().position(|&id| id == c.id) {
                at[i] = Some(c.at);
            }
        }
        if at.iter().all(Option::is_some) {
            break;
        }
        now = mem
            .next_event_cycle()
            .expect("a request never completes")
            .max(now);
    }
    at.into_iter().map(Option::unwrap).collect()
}

/// One atomic on a line the L2 holds (another SM's load brought it in), issued at the
/// load's completion: the cycles it takes.
fn warm_atomic(cfg: &GpuConfig) -> u64 {
    let mut mem = MemorySystem::new(cfg);
    let warm = issue(&mut mem, 1, Cycle::ZERO, AccessKind::Load);
    let start = finish(&mut mem, Cycle::ZERO, &[warm])[0];
    let a = issue(&mut mem, 0, start, AccessKind::Atomic);
    (finish(&mut mem, start, &[a])[0] - start).get()
}

#[test]
fn the_atomic_unit_adds_its_latency_to_a_hit_and_to_a_miss() {
    let plain = warm_atomic(&gtx480(&[]));
    // memory_known_answers: an atomic hit is an L2 hit plus its data's crossing.
    assert_eq!(plain, 204);
    let unit = warm_atomic(&gtx480(&["l2.atomic_unit={latency=33,interval=1}"]));
    assert_eq!(unit, plain + 33);
    // A cold line: the unit starts when the fill arrives, and adds the same 33.
    let cold = |cfg: &GpuConfig| {
        let mut mem = MemorySystem::new(cfg);
        let a = issue(&mut mem, 0, Cycle::ZERO, AccessKind::Atomic);
        finish(&mut mem, Cycle::ZERO, &[a])[0].get()
    };
    let without = cold(&gtx480(&[]));
    let with = cold(&gtx480(&["l2.atomic_unit={latency=33,interval=1}"]));
    assert_eq!(with, without + 33);
    assert!(without > plain, "a miss goes to DRAM: {without}");
}

#[test]
fn the_atomic_unit_takes_one_request_per_interval() {
    // Two SMs' atomics on one line, issued together once the line is in the L2: without a
    // unit their replies leave as their lookups end (d0 apart); a unit busy 40 cycles per
    // request holds the second until 40 after the first started.
    let pair = |cfg: &GpuConfig| {
        let mut mem = MemorySystem::new(cfg);
        let warm = issue(&mut mem, 2, Cycle::ZERO, AccessKind::Load);
        let start = finish(&mut mem, Cycle::ZERO, &[warm])[0];
        let a = issue(&mut mem, 0, start, AccessKind::Atomic);
        let b = issue(&mut mem, 1, start, AccessKind::Atomic);
        let t = finish(&mut mem, start, &[a, b]);
        (t[0].min(t[1]) - start, t[0].max(t[1]) - t[0].min(t[1]))
    };
    let (first0, d0) = pair(&gtx480(&[]));
    assert!(d0 < Cycles::new(40), "{d0:?}");
    let (first, d) = pair(&gtx480(&["l2.atomic_unit={latency=5,interval=40}"]));
    assert_eq!(first, first0 + Cycles::new(5));
    assert_eq!(d, Cycles::new(40));
    // An interval of 1 is shorter than their spacing: they do not wait.
    let (_, d1) = pair(&gtx480(&["l2.atomic_unit={latency=5,interval=1}"]));
    assert_eq!(d1, d0);
}

#[test]
fn the_modern_configs_have_the_stages_and_gtx480_has_none() {
    for (name, write, l0) in [
        ("h100", 23, 16384),
        ("rtx-a6000", 24, 16384),
        ("qv100", 19, 12288),
    ] {
        let c = load(name, &[]).unwrap();
        let unit = c.l2.atomic_unit.expect(name);
        assert_eq!(
            (unit.latency, unit.interval),
            (Cycles::new(33), 1),
            "{name}"
        );
        assert_eq!(c.shared_memory.atomic_write_latency, Cycles::new(write));
        let l0c = c.sm.l0_icache.expect(name);
        assert_eq!((l0c.size_bytes, l0c.ways), (l0, 4), "{name}");
    }
    assert_eq!(load("h100", &[]).unwrap().sm.async_copy_write_cycles, 13);
    assert_eq!(
        load("rtx-a6000", &[]).unwrap().sm.async_copy_write_cycles,
        2
    );
    let g = load("gtx480", &[]).unwrap();
    assert!(g.l2.atomic_unit.is_none() && g.sm.l0_icache.is_none());
    assert!(g.shared_memory.atomic_write_latency.is_zero());
    assert_eq!(g.sm.async_copy_write_cycles, 0);
    // qv100's collector core is the config it was: none of the stages.
    let c = load("qv100", &["sm.core=collector"]).unwrap();
    assert!(c.l2.atomic_unit.is_none() && c.sm.l0_icache.is_none());
    assert!(c.shared_memory.atomic_write_latency.is_zero());
}

#[test]
fn bad_values_of_the_new_keys_are_refused_naming_the_key() {
    for (name, set, key) in [
        (
            "h100",
            "sm.l0_icache={size_bytes=10000,ways=4}",
            "sm.l0_icache.size_bytes",
        ),
        (
            "h100",
            "sm.l0_icache={size_bytes=0,ways=4}",
            "sm.l0_icache.size_bytes",
        ),
        (
            "h100",
            "sm.l0_icache={size_bytes=16384,ways=0}",
            "sm.l0_icache.ways",
        ),
        (
            "h100",
            "sm.l0_icache={size_bytes=16384,ways=33}",
            "sm.l0_icache.ways",
        ),
        (
            "h100",
            "sm.l0_icache={size_bytes=2097152,ways=4}",
            "sm.l0_icache.size_bytes",
        ),
        ("h100", "sm.l0_icache={size_bytes=16384}", "ways"),
        (
            "gtx480",
            "sm.l0_icache={size_bytes=16384,ways=4}",
            "sm.l0_icache",
        ),
        (
            "h100",
            "l2.atomic_unit={latency=33,interval=0}",
            "l2.atomic_unit.interval",
        ),
        ("h100", "l2.atomic_unit={latency=33}", "interval"),
    ] {
        let e = load(name, &[set]).expect_err(set);
        assert!(e.contains(key), "{set}: {e}");
    }
    // 12 KB is three sets of four 128-byte lines... times eight: accepted.
    assert!(load("h100", &["sm.l0_icache={size_bytes=12288,ways=4}"]).is_ok());
    assert!(load("h100", &["sm.l0_icache={size_bytes=1024,ways=1}"]).is_ok());
}

//! Known answers for the L1D's reservation-failure rules through the `MemorySystem`
//! façade: failures counted per cycle as GPGPU-Sim's LD/ST unit counts its retries, by
//! kind, and the miss queue of `l1d.miss_queue_entries` (GPGPU-Sim's `-gpgpu_cache:dl1`
//! last field), on the `gpgpusim-gtx480` transcription.

use timing::config::default_configs_dir;
use timing::memory::cache::{LineAddr, SectorMask};
use timing::memory::coalescer::LineAccess;
use timing::memory::miss_queue::ReservationFailCycles;
use timing::memory::{AccessKind, SmId, Space};
use timing::{Cycle, Cycles, GpuConfig, MemRequest, MemorySystem, Override};

fn gtx480(sets: &[&str]) -> GpuConfig {
    let o: Vec<Override> = sets.iter().map(|s| Override::parse(s).unwrap()).collect();
    GpuConfig::load("gpgpusim-gtx480", &default_configs_dir(), &o).unwrap()
}

/// Issues `lines` as one load of SM 0 at the first cycle from `*now` the memory system
/// takes it, following its stalls; returns the cycle it was taken.
fn load(mem: &mut MemorySystem, now: &mut Cycle, lines: &[LineAccess]) -> Cycle {
    loop {
        let _ = mem.completed(*now).count();
        let req = MemRequest {
            kind: AccessKind::Load,
            space: Space::Global,
            lines,
        };
        match mem.issue(SmId(0), *now, req) {
            Ok(_) => return *now,
            Err(stall) => {
                let next = match stall.retry_at() {
                    Some(t) => t,
                    // A reservation failure: the SM sleeps until the façade reports the
                    // blocked request accepted.
                    None => wait_unblocked(mem),
                };
                *now = next.max(*now + Cycles::new(1));
            }
        }
    }
}

/// Runs until the façade reports a blocked request accepted; returns that cycle.
fn wait_unblocked(mem: &mut MemorySystem) -> Cycle {
    loop {
        let t = mem.run_until_report(Cycle::NEVER);
        assert!(t != Cycle::NEVER, "blocked forever");
        let _ = mem.completed(t).count();
        if let Some((_, at)) = mem.unblocked().next_back() {
            return at;
        }
    }
}

/// Runs until nothing is in flight; returns the last cycle reached.
fn drain(mem: &mut MemorySystem, mut now: Cycle) -> Cycle {
    while let Some(t) = mem.next_event_cycle() {
        now = t.max(now);
        let _ = mem.completed(now).count();
        let _ = mem.unblocked().count();
    }
    now
}

/// Lane `l` of warp `w` of the row walk (built-in `matvec_rows`) reads word `j` of row
/// `32 w + l`, rows 4 KB apart: one line per lane.
fn row_walk(warp: u64, j: u64) -> Vec<LineAccess> {
    (0..32)
        .map(|lane| {
            let addr = (32 * warp + lane) * 4096 + j * 4;
            LineAccess {
                line: LineAddr(addr & !127),
                sectors: SectorMask::sector(((addr % 128) / 32) as u32),
            }
        })
        .collect()
}

#[test]
fn a_refused_line_counts_one_failure_per_cycle_until_a_fill_frees_an_mshr() {
    // Two MSHRs: the third one-line load is refused at its lookup (cycle 2) and taken
    // when the first fill frees an entry. GPGPU-Sim retries it every cycle in between,
    // and counts each refused try: so many MSHR_ENRTY_FAIL cycles, one attempt here.
    let mut mem = MemorySystem::new(&gtx480(&["l1d.mshrs=2"]));
    let mut now = Cycle::ZERO;
    let one = |line: u64| {
        [LineAccess {
            line: LineAddr(line * 128),
            sectors: SectorMask::sector(0),
        }]
    };
    for l in 0..2 {
        load(&mut mem, &mut now, &one(l));
        now += Cycles::new(1);
    }
    assert_eq!(now, Cycle::new(2));
    // Issue takes it (the request waits inside the memory system, its port blocked).
    assert_eq!(load(&mut mem, &mut now, &one(2)), Cycle::new(2));
    let accepted = wait_unblocked(&mut mem);
    drain(&mut mem, accepted);
    let s = mem.stats();
    let cycles = accepted.saturating_since(Cycle::new(2)).get();
    // An unloaded miss to DRAM on this config takes hundreds of cycles.
    assert!(cycles > 200, "accepted at {accepted:?}");
    let f = s.l1d_reservation_fail_cycles;
    assert_eq!(f.mshr_entry_fail, cycles);
    assert_eq!(f.total, cycles);
    assert_eq!((f.line_alloc_fail, f.miss_queue_full), (0, 0));
    assert!(s.l1d.reservation_fails < 5, "{}", s.l1d.reservation_fails);
}

#[test]
fn row_walk_warps_past_the_mshrs_are_refused_for_hundreds_of_cycles_each() {
    // 64 MSHRs, one per line in flight: two warps of the row walk take them all (the
    // hash spreads their 64 rows over 16 sets), the third is refused from its first
    // lookup (cycle 64) until fills free entries, one line per freed entry.
    let mut mem = MemorySystem::new(&gtx480(&[]));
    let mut now = Cycle::ZERO;
    assert_eq!(load(&mut mem, &mut now, &row_walk(0, 0)), Cycle::new(0));
    assert_eq!(load(&mut mem, &mut now, &row_walk(1, 0)), Cycle::new(32));
    assert_eq!(load(&mut mem, &mut now, &row_walk(2, 0)), Cycle::new(64));
    let end = drain(&mut mem, now);
    let s = mem.stats();
    let f = s.l1d_reservation_fail_cycles;
    assert_eq!(f.total, f.mshr_entry_fail + f.line_alloc_fail);
    assert!(f.mshr_entry_fail > 200, "{f:?}");
    // Each blocked stretch is counted once per cycle, so never more than the run's cycles.
    assert!(f.total < end.get(), "{f:?} over {end:?}");
    assert!(s.l1d.reservation_fails < f.total / 4, "{s:?}");
}

/// `warps` warps of the row walk on SM 0 behind slow ports (1 byte a cycle: a read
/// request takes a 40-byte flit, 40 cycles; a reply four flits, 160), with `sets`: the
/// failure cycles, the cycle each warp was taken, and the cycle the last request
/// completed.
fn row_walk_behind_a_slow_port(
    warps: u64,
    sets: &[&str],
) -> (ReservationFailCycles, Vec<Cycle>, Cycle) {
    let mut all = vec!["interconnect.bytes_per_cycle=1", "l1d.mshrs=512"];
    all.extend_from_slice(sets);
    let mut mem = MemorySystem::new(&gtx480(&all));
    let mut now = Cycle::ZERO;
    let mut taken = Vec::new();
    for w in 0..warps {
        taken.push(load(&mut mem, &mut now, &row_walk(w, 1)));
        now += Cycles::new(1);
    }
    let end = drain(&mut mem, now);
    (mem.stats().l1d_reservation_fail_cycles, taken, end)
}

#[test]
fn a_backed_up_port_leaves_the_miss_queue_alone_when_the_injection_buffer_stops_issue() {
    // With `injection_backpressure = "issue"` the miss queue hands one request a cycle to
    // the injection buffer whatever the port does, and the row walk looks up one line
    // (one request) a cycle: the queue never fills, and 8 entries give the unbounded
    // queue's run exactly. The backed-up port fills the injection buffer instead, which
    // stops issue (the SM waits; no failure).
    let issue = "interconnect.injection_backpressure=issue";
    let (bounded, taken, end) = row_walk_behind_a_slow_port(4, &[issue]);
    let unbounded = row_walk_behind_a_slow_port(4, &[issue, "l1d.miss_queue_entries=0"]);
    assert_eq!(bounded.miss_queue_full, 0, "{bounded:?}");
    assert_eq!(
        (bounded, &taken, end),
        (unbounded.0, &unbounded.1, unbounded.2)
    );
    // The fourth warp waited for the injection buffer (2,560 bytes: 64 flits, each 40
    // cycles on this port) to drain.
    assert!(taken[3] > Cycle::new(1000), "{taken:?}");
}

#[test]
fn a_backed_up_port_fills_the_miss_queue_when_the_buffer_holds_its_hand_off() {
    // `injection_backpressure = "miss_queue"` (both transcriptions): a request leaves the
    // 8-entry miss queue only when the injection buffer (64 flits) has room for it. Eight
    // warps make 256 requests: the first 64 fill the buffer, and from then on each entry
    // stays until a flit has left the port (40 cycles), so the queue fills and the later
    // warps' lookups are refused as MISS_QUEUE_FULL for thousands of cycles, one failure
    // a cycle, where "issue" counts none and stops issue instead. (Allocation on fill,
    // so that the walk's sets, whose ways would all be reserved on miss, refuse nothing
    // themselves.) The replies' port (160 cycles a reply) sets the end either way.
    let on_fill = "l1d.allocation=on_fill";
    let (queue, taken, end) = row_walk_behind_a_slow_port(8, &[on_fill]);
    let (issue, issue_taken, issue_end) =
        row_walk_behind_a_slow_port(8, &[on_fill, "interconnect.injection_backpressure=issue"]);
    assert_eq!(issue.miss_queue_full, 0, "{issue:?}");
    assert!(queue.miss_queue_full > 2000, "{queue:?}");
    assert_eq!(queue.total, queue.miss_queue_full, "{queue:?}");
    // Under "issue" the eighth warp waited at issue; under "miss_queue" inside the L1D.
    assert!(issue_taken[7] > Cycle::new(1000), "{issue_taken:?}");
    assert!(taken[7] > Cycle::new(1000), "{taken:?}");
    assert!(
        end.get().abs_diff(issue_end.get()) <= 4 * 160,
        "{end} vs {issue_end}"
    );
    // Without a bound on the miss queue nothing could push back: refused at load.
    let o = [
        Override::parse("l1d.miss_queue_entries=0").unwrap(),
        Override::parse("interconnect.injection_backpressure=miss_queue").unwrap(),
    ];
    let e = GpuConfig::load("gpgpusim-gtx480", &default_configs_dir(), &o)
        .unwrap_err()
        .to_string();
    assert!(e.contains("interconnect.injection_backpressure"), "{e}");
}

#[test]
fn a_miss_queue_of_one_entry_is_refused_at_load() {
    let o = [Override::parse("l1d.miss_queue_entries=1").unwrap()];
    let e = GpuConfig::load("gpgpusim-gtx480", &default_configs_dir(), &o)
        .unwrap_err()
        .to_string();
    assert!(e.contains("l1d.miss_queue_entries"), "{e}");
}

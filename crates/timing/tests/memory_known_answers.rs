//! Known-answer tests of the memory hierarchy through the `MemorySystem` façade: latencies
//! computed by hand from the config, bandwidth limits, merges and row-buffer effects.

use std::collections::HashMap;
use timing::config::default_configs_dir;
use timing::memory::cache::{LineAddr, SectorMask};
use timing::memory::coalescer::LineAccess;
use timing::memory::{AccessKind, Completion, ServedBy, SmId, Space};
use timing::{Cycle, Cycles, GpuConfig, MemRequest, MemorySystem, Override, RequestId};

const FULL: SectorMask = SectorMask(0b1111);

/// gtx480 with the papers' simplified memory system (address interleaving, linear sets,
/// sector fetch, a cold L2), which these known answers are computed for, and `overrides`.
fn config(overrides: &[&str]) -> GpuConfig {
    let o: Vec<Override> = std::iter::once(&"memory.model=paper")
        .chain(overrides)
        .map(|s| Override::parse(s).unwrap())
        .collect();
    GpuConfig::load("gtx480", &default_configs_dir(), &o).unwrap()
}

/// gtx480 with the DRAM clock equal to the core clock, so latencies are exact integers.
fn same_clock(extra: &[&str]) -> GpuConfig {
    let mut o = vec!["gpu.memory_clock_mhz=700"];
    o.extend_from_slice(extra);
    config(&o)
}

/// Drives the façade the way the pipeline will: issue, then jump from event to event.
struct Harness {
    mem: MemorySystem,
    now: Cycle,
    /// Completions seen, in order, with the issue index of their request.
    done: Vec<(usize, Cycle)>,
    /// Issue index of each live request id.
    live: HashMap<RequestId, usize>,
    issued: usize,
    /// Cycles at which the harness called into the memory system while waiting.
    visits: usize,
}

impl Harness {
    fn new(cfg: &GpuConfig) -> Self {
        Self {
            mem: MemorySystem::new(cfg),
            now: Cycle::ZERO,
            done: vec![],
            live: HashMap::new(),
            issued: 0,
            visits: 0,
        }
    }

    fn collect(&mut self) {
        let done: Vec<Completion> = self.mem.completed(self.now).collect();
        for c in done {
            let i = self
                .live
                .remove(&c.id)
                .expect("completion of a request not in flight");
            self.done.push((i, c.at));
        }
    }

    /// Issues at the current cycle, retrying on stalls. Returns the issue index.
    fn issue(&mut self, sm: u32, kind: AccessKind, space: Space, lines: &[LineAccess]) -> usize {
        loop {
            self.collect();
            match self
                .mem
                .issue(SmId(sm), self.now, MemRequest { kind, space, lines })
            {
                Ok(id) => return self.record(id),
                Err(stall) => {
                    self.now = stall
                        .retry_at()
                        .or(self.mem.next_event_cycle())
                        .expect("stalled forever")
                        .max(self.now + Cycles::new(1));
                }
            }
        }
    }

    fn record(&mut self, id: RequestId) -> usize {
        let before = self.live.insert(id, self.issued);
        assert!(before.is_none(), "id reused while live");
        self.issued += 1;
        self.issued - 1
    }

    fn load(&mut self, sm: u32, line: u64) -> usize {
        self.issue(
            sm,
            AccessKind::Load,
            Space::Global,
            &[LineAccess {
                line: LineAddr(line),
                sectors: FULL,
            }],
        )
    }

    /// Advances until request `index` has completed; returns its completion cycle.
    fn wait(&mut self, index: usize) -> Cycle {
        loop {
            self.collect();
            if let Some(&(_, at)) = self.done.iter().find(|(i, _)| *i == index) {
                return at;
            }
            self.now = self
                .mem
                .next_event_cycle()
                .expect("request never completes")
                .max(self.now);
            self.visits += 1;
        }
    }

    fn tick(&mut self, n: u64) {
        self.now += Cycles::new(n);
    }
}

#[test]
fn gtx480_unloaded_latencies_match_wir_table_ii() {
    // WIR Table II: 200-cycle L2 and 440-cycle DRAM latency; the config splits them.
    let mut h = Harness::new(&config(&[]));
    assert_eq!(
        h.mem.unloaded_load_latency(ServedBy::L1, 4),
        Cycles::new(20)
    );
    assert_eq!(
        h.mem.unloaded_load_latency(ServedBy::L2, 4),
        Cycles::new(200)
    );
    assert_eq!(
        h.mem.unloaded_load_latency(ServedBy::Dram, 4),
        Cycles::new(440)
    );
    let a = h.load(0, 0x10000);
    let t = h.wait(a);
    // Clock-domain crossing may add a cycle or two of rounding to the 440.
    assert!((Cycle::new(440)..=Cycle::new(442)).contains(&t), "{t}");
    h.tick(1000);
    let start = h.now;
    let b = h.load(1, 0x10000); // another SM: L1 miss, L2 hit
    assert_eq!(h.wait(b) - start, Cycles::new(200));
}

#[test]
fn isolated_miss_is_the_sum_of_the_levels_and_a_pointer_chase_is_n_times_it() {
    let cfg = same_clock(&[]);
    let mut h = Harness::new(&cfg);
    // By hand from gtx480.toml: L1 20, request packet 8 B at 32 B/cycle (1) + 20,
    // L2 134, DRAM closed row t_rcd 12 + t_cl 12 + burst 128/32 = 4, controller 218,
    // reply packet 136 B (5) + 20.
    let miss = 20 + (1 + 20) + 134 + (12 + 12 + 4) + 218 + (5 + 20);
    assert_eq!(miss, 446);
    assert_eq!(
        h.mem.unloaded_load_latency(ServedBy::Dram, 4),
        Cycles::new(miss)
    );
    // Lines 196608 bytes apart share slice 0, channel 0 and bank 0, each in its own row:
    // the first finds the bank closed, the others find another row open (+ t_rp = 12).
    let stride = 196_608;
    let n = 10;
    let start = h.now;
    for k in 0..n {
        let r = h.load(0, k * stride);
        let before = h.now;
        h.now = h.wait(r);
        let expect = if k == 0 { miss } else { miss + 12 };
        assert_eq!(h.now - before, Cycles::new(expect), "access {k}");
    }
    assert_eq!(h.now - start, Cycles::new(n * miss + (n - 1) * 12));
    let s = h.mem.stats();
    assert_eq!(
        (s.dram.reads, s.dram.row_hits, s.dram.row_misses),
        (n, 0, n)
    );
    assert_eq!((s.l1d.misses, s.l2.misses), (n, n));
    // Event-driven: waiting ~4500 cycles took a handful of visits per access.
    assert!(h.visits < 10 * n as usize, "{} visits", h.visits);
}

#[test]
fn second_access_hits_in_l1_and_other_sms_hit_in_l2() {
    let mut h = Harness::new(&same_clock(&[]));
    let a = h.load(0, 0x4000);
    h.now = h.wait(a);
    let start = h.now;
    let b = h.load(0, 0x4000);
    assert_eq!(h.wait(b) - start, Cycles::new(20));
    let start = h.now;
    let c = h.load(1, 0x4000);
    assert_eq!(h.wait(c) - start, Cycles::new(200));
    let s = h.mem.stats();
    assert_eq!(
        (s.l1d.hits, s.l1d.misses, s.l2.hits, s.l2.misses),
        (1, 2, 1, 1)
    );
}

#[test]
fn dram_row_hits_are_faster_than_row_misses() {
    let mut h = Harness::new(&same_clock(&[]));
    let miss = 446;
    let a = h.load(0, 0);
    h.now = h.wait(a);
    // 0x100 * 12 = 3072: same slice, channel, bank and row (next 256-byte chunk of slice 0).
    let start = h.now;
    let b = h.load(0, 3072);
    assert_eq!(
        h.wait(b) - start,
        Cycles::new(miss - 12),
        "row hit saves t_rcd"
    );
    h.now = h.wait(b);
    let start = h.now;
    let c = h.load(0, 196_608);
    assert_eq!(
        h.wait(c) - start,
        Cycles::new(miss + 12),
        "row miss adds t_rp"
    );
    let s = h.mem.stats();
    assert_eq!((s.dram.row_hits, s.dram.row_misses), (1, 2));
}

#[test]
fn requests_to_a_line_in_flight_merge_in_the_mshrs() {
    let mut h = Harness::new(&same_clock(&[]));
    let a = h.load(0, 0x8000);
    h.tick(1);
    let b = h.load(0, 0x8000);
    h.tick(1);
    let c = h.load(1, 0x8000);
    let (ta, tb, tc) = (h.wait(a), h.wait(b), h.wait(c));
    assert_eq!(ta, tb, "the merged request completes with the fill");
    assert_eq!(ta, Cycle::new(446));
    assert!(
        tc > ta && tc < Cycle::new(446 + 10),
        "SM 1 merged at the L2: {tc}"
    );
    let s = h.mem.stats();
    assert_eq!((s.l1d.mshr_merges, s.l2.mshr_merges), (1, 1));
    assert_eq!((s.l2.misses, s.dram.reads), (1, 1));
}

#[test]
fn an_l2_hit_stream_is_limited_by_the_interconnect() {
    // L1 large enough to keep all lines in flight; 256 lines resident in the L2.
    let cfg = same_clock(&["l1d.size_bytes=65536", "l1d.mshrs=256"]);
    let mut h = Harness::new(&cfg);
    let n = 256u64;
    let warm: Vec<usize> = (0..n).map(|i| h.load(1, i * 128)).collect();
    for w in warm {
        h.wait(w);
    }
    h.now = h.mem.next_event_cycle().unwrap_or(h.now).max(h.now);
    let reqs: Vec<usize> = (0..n)
        .map(|i| {
            let r = h.load(0, i * 128);
            h.tick(1);
            r
        })
        .collect();
    let times: Vec<Cycle> = reqs.iter().map(|&r| h.wait(r)).collect();
    let first = *times.iter().min().unwrap();
    let last = *times.iter().max().unwrap();
    // Each reply is 8 + 128 bytes through SM 0's 32 B/cycle port: 4.25 cycles per line.
    let expect = (n - 1) * 136 / 32;
    let got = (last - first).get();
    assert!(
        got.abs_diff(expect) <= 1,
        "stream took {got} cycles, bandwidth bound {expect}"
    );
    let s = h.mem.stats();
    assert_eq!(s.interconnect.bytes_to_sm, 2 * n * 136);
}

#[test]
fn a_dram_stream_is_limited_by_the_channel_bus_and_enjoys_row_hits() {
    // One channel, 4 bytes per DRAM cycle: a 128-byte line holds the bus for 32 cycles.
    let mut h = Harness::new(&one_slow_channel(&[]));
    let n = 128u64;
    let reqs: Vec<usize> = (0..n).map(|i| h.load(0, i * 128)).collect();
    let times: Vec<Cycle> = reqs.iter().map(|&r| h.wait(r)).collect();
    let first = *times.iter().min().unwrap();
    let last = *times.iter().max().unwrap();
    let got = (last - first).get();
    let expect = (n - 1) * 32;
    assert!(
        got.abs_diff(expect) <= expect / 50,
        "stream took {got} cycles, bus bound {expect}"
    );
    let s = h.mem.stats();
    assert_eq!((s.dram.reads, s.dram.read_bytes), (n, n * 128));
    // 2 KB rows of 16 lines each: one activation per row.
    assert_eq!((s.dram.row_misses, s.dram.row_hits), (n / 16, n - n / 16));
}

#[test]
fn stores_complete_at_the_l1_and_write_through_to_the_l2() {
    let mut h = Harness::new(&same_clock(&[]));
    let lines = [LineAccess {
        line: LineAddr(0x100),
        sectors: SectorMask(0b0011),
    }];
    let s = h.issue(0, AccessKind::Store, Space::Global, &lines);
    assert_eq!(h.wait(s), Cycle::new(20));
    while !h.mem.is_idle() {
        h.now = h.mem.next_event_cycle().unwrap();
        h.collect();
    }
    let st = h.mem.stats();
    assert_eq!(
        st.interconnect.bytes_to_l2,
        8 + 64,
        "header and two sectors"
    );
    assert_eq!((st.l1d.writes, st.l2.writes, st.l2.misses), (1, 1, 1));
    assert_eq!(st.dram.writes, 0, "write-back L2 keeps the dirty line");
}

#[test]
fn with_write_acks_a_store_completes_when_the_l2_acknowledges_it() {
    let mut h = Harness::new(&same_clock(&["l2.write_ack=true"]));
    let lines = [LineAccess {
        line: LineAddr(0x100),
        sectors: SectorMask(0b0011),
    }];
    let s = h.issue(0, AccessKind::Store, Space::Global, &lines);
    // L1 20; 8 + 64 bytes to the L2: 3 cycles at 32 B/cycle + 20; the slice's 134; the
    // 8-byte acknowledgement back: 1 + 20.
    assert_eq!(h.wait(s), Cycle::new(20 + 3 + 20 + 134 + 1 + 20));
    let st = h.mem.stats();
    assert_eq!(st.interconnect.bytes_to_sm, 8, "one acknowledgement");
}

/// SM 1 brings `n` lines of slice 0 (3072 bytes apart) into the L2 and the harness
/// moves past its last event.
/// gtx480 at one clock with one DRAM channel of 4 bytes a DRAM cycle behind two slices
/// (a 128-byte line holds the bus 32 cycles), a large L1D, and `extra`.
fn one_slow_channel(extra: &[&str]) -> GpuConfig {
    let mut o = vec![
        "dram.channels=1",
        "l2.slices=2",
        "l2.slice.size_bytes=524288",
        "dram.bytes_per_cycle=4",
        "l1d.size_bytes=65536",
        "l1d.mshrs=256",
    ];
    o.extend_from_slice(extra);
    same_clock(&o)
}

/// A queue bound `key` changes nothing when unbounded (0) or `roomy`, and a bound of one
/// entry makes `cycles` at least `delay` longer.
fn only_a_tight_bound_delays(cycles: impl Fn(&str) -> Cycles, key: &str, roomy: u32, delay: u64) {
    let unbounded = cycles(&format!("{key}=0"));
    assert_eq!(
        cycles(&format!("{key}={roomy}")),
        unbounded,
        "{key}={roomy}"
    );
    let one = cycles(&format!("{key}=1"));
    assert!(
        one >= unbounded + Cycles::new(delay),
        "{key}: bounded {one}, unbounded {unbounded}"
    );
}

fn warm_slice_0(h: &mut Harness, n: u64) {
    let warm: Vec<usize> = (0..n).map(|i| h.load(1, i * 3072)).collect();
    for w in warm {
        h.wait(w);
    }
    h.now = h.mem.next_event_cycle().unwrap_or(h.now).max(h.now);
}

/// Cycles between the completions of consecutive L2 hits when SM 0 streams 64 lines
/// that SM 1 brought into the L2, all to slice 0 (gtx480's 12 slices interleaved every
/// 256 bytes: lines 3072 bytes apart), on gtx480 at one clock with `extra`.
fn l2_hit_stream_spacing(extra: &[&str]) -> f64 {
    let mut o = vec!["l1d.size_bytes=65536", "l1d.mshrs=256"];
    o.extend_from_slice(extra);
    let mut h = Harness::new(&same_clock(&o));
    let n = 64u64;
    warm_slice_0(&mut h, n);
    let reqs: Vec<usize> = (0..n).map(|i| h.load(0, i * 3072)).collect();
    let times: Vec<Cycle> = reqs.iter().map(|&r| h.wait(r)).collect();
    (*times.iter().max().unwrap() - *times.iter().min().unwrap()).get() as f64 / (n - 1) as f64
}

#[test]
fn an_l2_hit_stream_to_one_slice_is_limited_by_its_data_port() {
    // 8 bytes per cycle through the slice's data array: a 128-byte hit holds it 16 cycles,
    // more than the 4.25 cycles of the reply's interconnect transfer.
    assert_eq!(l2_hit_stream_spacing(&["l2.slice.data_port_bytes=8"]), 16.0);
}

#[test]
fn a_sectored_l2_looks_up_one_sector_per_cycle() {
    // With the data port and the interconnect out of the way, a stream of 4-sector hits
    // to one slice arrives one per cycle (the L1 sends one line per cycle); when the
    // slice looks up each sector on its own, each request holds it 4 cycles.
    let spacing = |extra: &str| {
        l2_hit_stream_spacing(&[
            "l2.slice.data_port_bytes=0",
            "interconnect.bytes_per_cycle=1024",
            extra,
        ])
    };
    assert_eq!(spacing("l2.sector_lookups=false"), 1.0);
    assert_eq!(spacing("l2.sector_lookups=true"), 4.0);
}

#[test]
fn atomics_are_performed_at_the_l2() {
    let mut h = Harness::new(&same_clock(&[]));
    let a = h.load(1, 0x200);
    h.now = h.wait(a);
    let start = h.now;
    let lines = [LineAccess {
        line: LineAddr(0x200),
        sectors: FULL,
    }];
    let at = h.issue(0, AccessKind::Atomic, Space::Global, &lines);
    // As an L2 hit, but the request carries the data too: 136 B take 5 cycles, not 1.
    assert_eq!(h.wait(at) - start, Cycles::new(200 + 4));
}

#[test]
fn a_request_beyond_the_mshrs_waits_and_blocks_the_next_one() {
    let mut h = Harness::new(&same_clock(&["l1d.mshrs=2"]));
    let lines: Vec<LineAccess> = (0..3)
        .map(|i| LineAccess {
            line: LineAddr(i * 128),
            sectors: FULL,
        })
        .collect();
    let r = h.issue(0, AccessKind::Load, Space::Global, &lines);
    h.tick(5);
    let next = h.mem.issue(
        SmId(0),
        h.now,
        MemRequest {
            kind: AccessKind::Load,
            space: Space::Global,
            lines: &lines[..1],
        },
    );
    assert_eq!(next.err(), Some(timing::Stall::ReservationFail));
    let t = h.wait(r);
    // The third line is sent when the first fill frees an MSHR: two misses in series.
    assert!(t >= Cycle::new(2 * 446 - 20), "{t}");
    assert!(h.mem.stats().l1d.reservation_fails >= 1);
}

#[test]
fn shared_memory_conflicts_serialize() {
    let mut mem = MemorySystem::new(&config(&[]));
    let mut addrs = [0u64; 32];
    for (l, a) in addrs.iter_mut().enumerate() {
        *a = 8 * l as u64; // stride 2 words: 2-way conflicts
    }
    let t = mem
        .port(SmId(0))
        .issue_shared(Cycle::new(10), u32::MAX, &addrs, 4, false)
        .unwrap();
    assert_eq!(t, Cycle::new(10 + 24 + 1));
    assert_eq!(mem.stats().shared_memory.bank_conflicts, 1);
}

#[test]
fn identical_runs_give_identical_results() {
    let run = || {
        let mut h = Harness::new(&config(&["gpu.num_sms=4"]));
        let mut x = 12345u64;
        for i in 0..400 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let line = (x >> 33) % 2048 * 128;
            let kind = match (x >> 20) % 5 {
                0 => AccessKind::Store,
                1 => AccessKind::Atomic,
                _ => AccessKind::Load,
            };
            let lines = [LineAccess {
                line: LineAddr(line),
                sectors: SectorMask(((x >> 8) as u32 % 15) + 1),
            }];
            h.issue((i % 4) as u32, kind, Space::Global, &lines);
            h.tick((x >> 40) % 3);
        }
        while !h.mem.is_idle() {
            h.now = h.mem.next_event_cycle().unwrap();
            h.collect();
        }
        (h.done, h.mem.stats())
    };
    let (a, sa) = run();
    let (b, sb) = run();
    assert_eq!(a.len(), 400);
    assert_eq!(a, b);
    assert_eq!(sa, sb);
}

/// Throughput of the memory model alone: `cargo test -p timing --release -- --ignored
/// --nocapture memory_model_throughput`.
#[test]
#[ignore]
fn memory_model_throughput() {
    let mut h = Harness::new(&config(&[]));
    let mut x = 99u64;
    let n = 1_000_000;
    let wall = std::time::Instant::now();
    for i in 0..n {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let line = (x >> 33) % (1 << 16) * 128;
        let lines = [LineAccess {
            line: LineAddr(line),
            sectors: FULL,
        }];
        h.issue((i % 15) as u32, AccessKind::Load, Space::Global, &lines);
        h.tick(x >> 62);
        if h.done.len() > 4096 {
            h.done.clear();
        }
    }
    let secs = wall.elapsed().as_secs_f64();
    let s = h.mem.stats();
    println!(
        "{n} warp loads ({} L1 misses, {} DRAM reads) in {secs:.2} s: {:.0} requests/s, {} cycles",
        s.l1d.misses,
        s.dram.reads,
        n as f64 / secs,
        h.now.get()
    );
}

/// `l2.fill_on_host_copy`: a host copy leaves its lines in the L2 (a later kernel's first
/// reads hit, no DRAM read), counts nothing itself, and without the key changes nothing.
#[test]
fn a_host_copy_fills_the_l2_only_with_the_key() {
    let base = 1u64 << 32;
    let n = 64u64;
    let run = |extra: &[&str]| {
        let mut h = Harness::new(&config(extra));
        let installed = h.mem.host_write(base, n * 128);
        assert_eq!(
            h.mem.stats().l2,
            Default::default(),
            "the copy counts no access"
        );
        for i in 0..n {
            let r = h.load(0, base + i * 128);
            h.wait(r);
        }
        let s = h.mem.stats();
        (installed, s.l2.hits, s.l2.misses, s.dram.reads)
    };
    assert_eq!(run(&[]), (0, 0, n, n));
    assert_eq!(run(&["l2.fill_on_host_copy=true"]), (n, n, 0, 0));
    // A copy that starts and ends inside lines installs the sectors it touches: bytes
    // 40..=200 are sectors 1-3 of the first line and sectors 0-2 of the second, so full-line
    // reads of both miss one sector each.
    let mut h = Harness::new(&config(&["l2.fill_on_host_copy=true"]));
    assert_eq!(h.mem.host_write(base + 40, 161), 2);
    for line in [base, base + 128] {
        let r = h.load(0, line);
        h.wait(r);
    }
    let s = h.mem.stats().l2;
    assert_eq!((s.sector_accesses, s.sector_access_misses), (8, 2));
}

/// A copy twice the L2's capacity leaves only its second half resident (LRU, as a
/// normal fill): gtx480's 12 x 64 KB L2, with linear set indices and slices interleaved
/// every 64 lines (one line per set, so a sequential range spreads evenly over every set),
/// holds the last 768 KB.
#[test]
fn a_host_copy_larger_than_the_l2_leaves_its_last_part() {
    let base = 1u64 << 32;
    let capacity = 12 * 65536u64;
    let mut h = Harness::new(&config(&[
        "l2.fill_on_host_copy=true",
        "l2.interleave_bytes=8192",
    ]));
    assert_eq!(h.mem.host_write(base, 2 * capacity), 2 * capacity / 128);
    let probe = |h: &mut Harness, from: u64| {
        let before = h.mem.stats().l2.misses;
        for i in 0..32 {
            let r = h.load(1, from + i * 4096);
            h.wait(r);
        }
        h.mem.stats().l2.misses - before
    };
    assert_eq!(probe(&mut h, base + capacity), 0, "the second half hits");
    assert_eq!(probe(&mut h, base + 2 * capacity - 32 * 4096), 0);
    assert_eq!(probe(&mut h, base), 32, "the first half was evicted");
}

/// A request refused because the SM's interconnect injection buffer is full says when to
/// retry: a cycle after now (so a waiting stage sleeps instead of retrying every cycle),
/// and never after a retry could succeed. With a long L1D latency the buffer fills with
/// packets still waiting out the latency, which the old retry cycle ignored.
#[test]
fn an_interconnect_full_refusal_names_a_retry_cycle_no_later_than_the_first_success() {
    let cfg = same_clock(&["l1d.latency=1000", "l1d.mshrs=256"]);
    let mut mem = MemorySystem::new(&cfg);
    let line = |i: u64| LineAccess {
        line: LineAddr(i * 128),
        sectors: FULL,
    };
    let load = |mem: &mut MemorySystem, now: Cycle, i: u64| {
        mem.issue(
            SmId(0),
            now,
            MemRequest {
                kind: AccessKind::Load,
                space: Space::Global,
                lines: &[line(i)],
            },
        )
    };
    // Miss after miss, one a cycle, until the buffer is full.
    let mut now = Cycle::ZERO;
    let mut next_line = 0;
    let until = loop {
        match load(&mut mem, now, next_line) {
            Ok(_) => next_line += 1,
            Err(timing::Stall::InterconnectFull { until }) => break until,
            Err(other) => panic!("unexpected stall {other:?} at {now}"),
        }
        now += Cycles::new(1);
        assert!(now < Cycle::new(900), "the buffer never filled");
    };
    assert!(until > now, "retry at {until}, refused at {now}");
    // The packets are still inside their 1000-cycle L1 latency: no room before the first
    // leaves, so the retry cycle is not one cycle later.
    assert!(until >= Cycle::new(1000), "{until}");
    // Every cycle before `until` is refused, and some cycle from `until` on accepts.
    let mut t = now + Cycles::new(1);
    while t < until {
        assert!(
            load(&mut mem, t, next_line).is_err(),
            "accepted at {t} < {until}"
        );
        t += Cycles::new(1);
    }
    let accepted = (0..10_000)
        .map(|k| until + Cycles::new(k))
        .find(|&t| load(&mut mem, t, next_line).is_ok())
        .expect("accepted eventually");
    assert!(accepted >= until);
}

#[test]
fn a_full_slice_input_queue_refuses_crossings_until_a_lookup_frees_room() {
    // Sector lookups: a 4-sector request holds the slice 4 cycles and takes 4 entries.
    // Unbounded, or with room for many requests, the lookups set the pace; with room for
    // one request, the next crosses only when the slice has looked the previous one up
    // (the cycle after), then spends the interconnect's 20 cycles of latency and its
    // cycle of transfer in flight: a request every 1 + 1 + 20 cycles.
    let spacing = |entries: &str| {
        l2_hit_stream_spacing(&[
            "l2.slice.data_port_bytes=0",
            "interconnect.bytes_per_cycle=1024",
            "l2.sector_lookups=true",
            entries,
        ])
    };
    assert_eq!(spacing("l2.input_queue_entries=0"), 4.0);
    assert_eq!(spacing("l2.input_queue_entries=64"), 4.0);
    assert_eq!(spacing("l2.input_queue_entries=4"), 22.0);
}

#[test]
fn a_full_slice_output_queue_stops_its_lookups() {
    // SM 0 reads 64 lines that SM 1 left in slice 0's L2; at 4 interconnect bytes a cycle
    // their 136-byte replies leave every 34 cycles, far slower than the slice looks them
    // up, so 300 cycles later about 60 wait to leave. Then SM 2 misses in the same slice.
    // With an unbounded reply queue the miss is looked up on arrival and its DRAM access
    // overlaps the backlog; with room for one reply the slice looks nothing up until the
    // backlog has drained, so the miss completes at least the L2 latency and a DRAM
    // access later. A queue longer than the backlog changes nothing.
    let miss_done = |entries: &str| {
        let mut h = Harness::new(&same_clock(&[
            "l1d.size_bytes=65536",
            "l1d.mshrs=256",
            "interconnect.bytes_per_cycle=4",
            entries,
        ]));
        let n = 64u64;
        warm_slice_0(&mut h, n);
        let _hits: Vec<usize> = (0..n).map(|i| h.load(0, i * 3072)).collect();
        h.tick(300);
        let start = h.now;
        let miss = h.load(2, n * 3072);
        h.wait(miss) - start
    };
    only_a_tight_bound_delays(miss_done, "l2.output_queue_entries", 64, 300);
}

#[test]
fn a_full_slice_dram_queue_stops_its_lookups_until_the_channel_admits_a_request() {
    // One channel of 4 bytes a DRAM cycle (a line holds its bus 32 cycles) whose scheduler
    // takes one request at a time. SM 0 sends 32 misses to slice 0 (lines 512 bytes apart:
    // 256-byte interleaving over two slices); 200 cycles later SM 2 reads a line SM 1 left
    // in slice 0's L2. Unbounded, the slice has looked the misses up long before and the
    // hit is served at once; with one entry per slice towards DRAM the slice looks up a
    // miss only when the channel has taken the previous one (a line's burst, 32 cycles),
    // so the hit waits behind the misses' lookups; 64 entries hold all 32 and change
    // nothing.
    let hit_done = |entries: &str| {
        let mut h = Harness::new(&one_slow_channel(&["dram.queue_window=1", entries]));
        let hit_line = 1 << 20;
        let warm = h.load(1, hit_line);
        h.now = h.wait(warm);
        let _misses: Vec<usize> = (0..32u64).map(|i| h.load(0, i * 512)).collect();
        h.tick(200);
        let start = h.now;
        let hit = h.load(2, hit_line);
        h.wait(hit) - start
    };
    only_a_tight_bound_delays(hit_done, "l2.dram_queue_entries", 64, 500);
}

#[test]
fn a_full_dram_return_queue_spaces_reads_by_the_return_latency() {
    // A stream of row hits on one channel (a line's burst 32 DRAM cycles = 32 core cycles
    // at one clock). With one return entry, each read's column command waits until the
    // L2 has taken the previous read's data (`dram.latency` after its burst), so
    // consecutive reads complete `latency + t_cl + 32` apart instead of 32.
    let spacing = |entries: &str| {
        let cfg = one_slow_channel(&[entries]);
        let expect = cfg.dram.latency.get() + cfg.dram.t_cl.get() + 32;
        let mut h = Harness::new(&cfg);
        // Lines 1 and 2 of one row (a row holds 16 lines): both row hits.
        let reqs: Vec<usize> = (0..3u64).map(|i| h.load(0, i * 128)).collect();
        let t: Vec<Cycle> = reqs.iter().map(|&r| h.wait(r)).collect();
        ((t[2] - t[1]).get(), expect)
    };
    assert_eq!(spacing("dram.return_queue_entries=0").0, 32);
    assert_eq!(spacing("dram.return_queue_entries=8").0, 32);
    let (one, expect) = spacing("dram.return_queue_entries=1");
    assert_eq!(one, expect);
}

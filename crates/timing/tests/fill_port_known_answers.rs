//! Known answers for the fill ports (`fill_port_bytes` of the L1 caches and the L2
//! slices), the SMs' reply FIFOs and their ejection buffers
//! (`interconnect.ejection_buffer_entries`): cycles derived by hand from the config.

use std::collections::HashMap;
use timing::config::default_configs_dir;
use timing::memory::cache::{LineAddr, SectorMask};
use timing::memory::coalescer::LineAccess;
use timing::memory::{AccessKind, Completion, SmId, Space};
use timing::{Cycle, Cycles, GpuConfig, MemRequest, MemorySystem, Override, RequestId};

/// gtx480's papers' memory system (address interleaving: 12 slices every 256 bytes, sector
/// fetch, no data port) at one clock, with `extra`.
fn config(extra: &[&str]) -> GpuConfig {
    let o: Vec<Override> = [
        "memory.model=paper",
        "gpu.memory_clock_mhz=700",
        "l1d.size_bytes=65536",
        "l1d.mshrs=256",
    ]
    .iter()
    .chain(extra)
    .map(|s| Override::parse(s).unwrap())
    .collect();
    GpuConfig::load("gtx480", &default_configs_dir(), &o).unwrap()
}

struct Harness {
    mem: MemorySystem,
    now: Cycle,
    done: HashMap<RequestId, Cycle>,
}

impl Harness {
    fn new(cfg: &GpuConfig) -> Self {
        Self {
            mem: MemorySystem::new(cfg),
            now: Cycle::ZERO,
            done: HashMap::new(),
        }
    }

    fn collect(&mut self) {
        let done: Vec<Completion> = self.mem.completed(self.now).collect();
        for c in done {
            self.done.insert(c.id, c.at);
        }
    }

    /// A full-line global load of SM `sm` at the current cycle (retried on stalls).
    fn load(&mut self, sm: u32, line: u64) -> RequestId {
        let lines = [LineAccess {
            line: LineAddr(line),
            sectors: SectorMask(0b1111),
        }];
        loop {
            self.collect();
            let req = MemRequest {
                kind: AccessKind::Load,
                space: Space::Global,
                lines: &lines,
            };
            match self.mem.issue(SmId(sm), self.now, req) {
                Ok(id) => return id,
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

    fn wait(&mut self, id: RequestId) -> Cycle {
        loop {
            self.collect();
            if let Some(&at) = self.done.get(&id) {
                return at;
            }
            self.now = self
                .mem
                .next_event_cycle()
                .expect("request never completes")
                .max(self.now);
        }
    }

    /// Loads `lines` from SM `sm` and waits for all; their completion cycles, sorted.
    fn load_all(&mut self, sm: u32, lines: &[u64]) -> Vec<Cycle> {
        let ids: Vec<RequestId> = lines.iter().map(|&l| self.load(sm, l)).collect();
        let mut t: Vec<Cycle> = ids.iter().map(|&id| self.wait(id)).collect();
        t.sort();
        t
    }
}

/// Lines 3072 bytes apart: all in slice 0 (12 slices interleaved every 256 bytes).
fn slice_0_lines(n: u64, base: u64) -> Vec<u64> {
    (0..n).map(|i| base + i * 3072).collect()
}

fn gaps(t: &[Cycle]) -> Vec<u64> {
    t.windows(2).map(|w| (w[1] - w[0]).get()).collect()
}

/// SM 0 reads 16 lines of slice 0 that SM 1 left in the L2: their completion cycles.
fn l2_hit_stream(extra: &[&str]) -> Vec<Cycle> {
    let mut h = Harness::new(&config(extra));
    let lines = slice_0_lines(16, 0);
    h.load_all(1, &lines);
    h.now += Cycles::new(1000);
    let start = h.now.get();
    h.load_all(0, &lines)
        .iter()
        .map(|t| Cycle::new(t.get() - start))
        .collect()
}

#[test]
fn an_l1_fill_port_spaces_fills_by_its_cycles() {
    // The replies (8 + 128 bytes at 32 bytes a cycle) reach SM 0 every 4 or 5 cycles.
    // A fill port of 32 bytes takes a 32-byte sector fill (the atom under sector fetch)
    // in one cycle, so it changes nothing; at 4 bytes a cycle a fill holds it 8 cycles,
    // longer than the replies' spacing, so the loads complete exactly 8 cycles apart.
    let free = l2_hit_stream(&[]);
    assert!(gaps(&free).iter().all(|&g| g == 4 || g == 5), "{free:?}");
    assert_eq!(l2_hit_stream(&["l1d.fill_port_bytes=32"]), free);
    let slow = l2_hit_stream(&["l1d.fill_port_bytes=4"]);
    assert_eq!(slow[0], free[0]);
    assert!(gaps(&slow).iter().all(|&g| g == 8), "{slow:?}");
    // A line-fetching L1 fills whole lines: 128 bytes at 32 a cycle, 4 cycles a fill,
    // and at 4 bytes a cycle 32.
    let line = l2_hit_stream(&["l1d.fetch=line", "l1d.fill_port_bytes=4"]);
    assert!(gaps(&line).iter().all(|&g| g == 32), "{line:?}");
}

#[test]
fn a_full_ejection_buffer_holds_a_slices_replies_to_every_sm() {
    // SM 0's L1 takes a fill every 32 cycles (a 32-byte sector at 1 byte a cycle). Slice 0
    // replies to SM 0's 16 hits and then to SM 2's one. With room for all 16 replies at
    // SM 0 (or no bound) SM 2's reply leaves behind SM 0's on the slice's port, 4.25
    // cycles each, before SM 0 has taken its 4th (its fills 32 cycles apart). With room for one,
    // each of SM 0's replies crosses only the cycle after SM 0 took the one before, and
    // SM 2's waits behind them at the slice (head-of-line blocking): it crosses after
    // SM 0's 16th, so it completes after SM 0's 15th fill and 25 cycles (the 136-byte
    // reply's 5 cycles and the interconnect's 20) or more after SM 0 took its 15th.
    let run = |entries: &str| {
        let mut h = Harness::new(&config(&["l1d.fill_port_bytes=1", entries]));
        let lines = slice_0_lines(16, 0);
        let last = slice_0_lines(1, 16 * 3072);
        h.load_all(1, &lines);
        h.load_all(1, &last);
        h.now += Cycles::new(1000);
        let start = h.now.get();
        let before = h.mem.stats().fill_ports;
        let ids: Vec<RequestId> = lines.iter().map(|&l| h.load(0, l)).collect();
        let sm2 = h.load(2, last[0]);
        let sm2 = h.wait(sm2).get() - start;
        let mut sm0: Vec<u64> = ids.iter().map(|&id| h.wait(id).get() - start).collect();
        sm0.sort();
        (sm2, sm0, h.mem.stats().fill_ports.since(&before))
    };
    let (free_sm2, free_sm0, s0) = run("interconnect.ejection_buffer_entries=0");
    let (roomy_sm2, roomy_sm0, s16) = run("interconnect.ejection_buffer_entries=16");
    assert_eq!((roomy_sm2, &roomy_sm0), (free_sm2, &free_sm0));
    assert_eq!((s0.ejection_refusals, s16.ejection_refusals), (0, 0));
    // SM 0's fills wait for its port: 15 of the 16 replies are taken late, 32 apart.
    assert_eq!(s0.delayed_replies, 15);
    assert!(gaps_u64(&free_sm0).iter().all(|&g| g == 32), "{free_sm0:?}");
    assert!(free_sm2 < free_sm0[3], "{free_sm2} {free_sm0:?}");
    let (one_sm2, one_sm0, s1) = run("interconnect.ejection_buffer_entries=1");
    assert!(one_sm2 >= one_sm0[14] + 25, "{one_sm2} {one_sm0:?}");
    assert!(s1.ejection_refusals >= 15, "{s1:?}");
}

fn gaps_u64(t: &[u64]) -> Vec<u64> {
    t.windows(2).map(|w| w[1] - w[0]).collect()
}

#[test]
fn an_l2_fill_port_spaces_a_slices_fills_by_its_cycles() {
    // 16 misses to slice 0, all in one DRAM row of one channel (a 128-byte burst every
    // 4 cycles). Each line's 4 sectors come back as one fill, which with sector lookups
    // is four sector fills: at 1 byte a cycle 4 x 32 = 128 cycles of the fill port per
    // line, far more than the DRAM's spacing, so the loads complete exactly 128 apart
    // after the first; at 32 bytes a cycle 4 cycles a line, no slower than the bursts.
    let misses = |extra: &[&str]| {
        let mut o = vec!["l2.sector_lookups=true"];
        o.extend_from_slice(extra);
        let mut h = Harness::new(&config(&o));
        let t = h.load_all(0, &slice_0_lines(16, 0));
        (t, h.mem.stats().fill_ports)
    };
    let (free, s) = misses(&[]);
    assert_eq!(s.delayed_l2_fills, 0);
    let (slow, s) = misses(&["l2.slice.fill_port_bytes=1"]);
    assert_eq!(slow[0], free[0]);
    assert!(gaps(&slow).iter().all(|&g| g == 128), "{slow:?}");
    assert_eq!(s.delayed_l2_fills, 15);
}

#[test]
fn with_a_fill_port_an_l2_fill_leaves_the_data_port_to_lookups() {
    // A data port of 1 byte a cycle: a 4-sector hit, and without a fill port a 4-sector
    // fill, holds it 4 x 32 = 128 cycles. SM 1 misses line A of slice 0; SM 2 reads line
    // B of slice 0 (left in the L2 by SM 3), issued so that B reaches the slice the cycle
    // after A's fill (its L1 20 + its 8-byte request 1 + the interconnect 20 = 41 cycles
    // after issue; A's fill is its reply's 136 bytes, 5 cycles, + 20 before A completes).
    // Without a fill port B's lookup waits for the fill's 127 remaining cycles; with one
    // (32 bytes a cycle) it is as fast as B alone.
    let b_latency = |extra: &[&str], with_a: bool| {
        let mut o = vec!["l2.slice.data_port_bytes=1"];
        o.extend_from_slice(extra);
        let mut h = Harness::new(&config(&o));
        let b = 3072 * 5;
        h.load_all(3, &[b]);
        h.now += Cycles::new(2000);
        let start = h.now;
        // A alone, to find its fill cycle.
        let a_done = {
            let mut h2 = Harness::new(&config(&o));
            h2.load_all(3, &[b]);
            h2.now += Cycles::new(2000);
            let start2 = h2.now;
            let a = h2.load(1, 0);
            h2.wait(a) - start2
        };
        let fill = start.get() + a_done.get() - 25;
        if with_a {
            h.load(1, 0);
        }
        h.now = Cycle::new(fill + 1 - 41);
        let issued = h.now;
        let id = h.load(2, b);
        (h.wait(id) - issued).get()
    };
    let alone = b_latency(&[], false);
    assert_eq!(b_latency(&["l2.slice.fill_port_bytes=32"], false), alone);
    assert_eq!(b_latency(&["l2.slice.fill_port_bytes=32"], true), alone);
    assert_eq!(b_latency(&[], true), alone + 127);
}

//! Known answers of the texture path through the `MemorySystem` façade: a sequence of
//! texture fetches whose hits, misses, evictions and L2 reads follow by hand from the
//! texture cache's geometry, and the latency of a hit and of a miss.

use timing::config::default_configs_dir;
use timing::memory::cache::{LineAddr, SectorMask};
use timing::memory::coalescer::LineAccess;
use timing::memory::{AccessKind, ServedBy, SmId, Space};
use timing::{Cycle, Cycles, GpuConfig, MemRequest, MemorySystem, Override};

/// gtx480 with the papers' memory system (address interleaving, a cold L2, sector
/// fetch), equal core and DRAM clocks (exact latencies) and a texture cache of 4 sets of
/// 2 ways (1 KB, linear set index: line `n` goes to set `n mod 4`).
fn config(extra: &[&str]) -> GpuConfig {
    let o: Vec<Override> = [
        "memory.model=paper",
        "gpu.memory_clock_mhz=700",
        "texture_cache.size_bytes=1024",
        "texture_cache.ways=2",
        "texture_cache.fetch=\"sector\"",
        "texture_cache.latency=7",
    ]
    .iter()
    .chain(extra)
    .map(|s| Override::parse(s).unwrap())
    .collect();
    GpuConfig::load("gtx480", &default_configs_dir(), &o).unwrap()
}

/// One texture fetch of a whole line at `now` on SM 0, run until it completes; returns
/// its completion cycle.
fn fetch(mem: &mut MemorySystem, now: Cycle, line: u64) -> Cycle {
    let lines = [LineAccess {
        line: LineAddr(line),
        sectors: SectorMask(0b1111),
    }];
    let req = MemRequest {
        kind: AccessKind::Load,
        space: Space::Texture,
        lines: &lines,
    };
    let id = mem.issue(SmId(0), now, req).expect("an idle cache accepts");
    let mut t = now;
    loop {
        if let Some(c) = mem.completed(t).find(|c| c.id == id) {
            return c.at;
        }
        t = mem
            .next_event_cycle()
            .expect("the fetch never completes")
            .max(t);
    }
}

#[test]
fn hit_miss_sequence_gives_the_hand_counted_l2_reads() {
    let cfg = config(&[]);
    let mut mem = MemorySystem::new(&cfg);
    // Lines 0, 512 and 1024 are lines 0, 4 and 8: all in set 0 of two ways (LRU).
    // 0 miss, 0 hit, 512 miss, 1024 miss (evicts 0), 0 miss (evicts 512), 1024 hit,
    // 128 miss (set 1, no eviction).
    let mut now = Cycle::ZERO;
    for line in [0, 0, 512, 1024, 0, 1024, 128] {
        now = fetch(&mut mem, now, line) + Cycles::new(1);
    }
    let s = mem.stats();
    let t = &s.texture_cache;
    assert_eq!(t.cache.reads, 7);
    assert_eq!((t.cache.hits, t.cache.misses), (2, 5));
    assert_eq!(t.cache.evictions, 2);
    assert_eq!((t.l2_reads, t.l2_read_sectors), (5, 20));
    // Every L2 read of this run came from the texture cache; the L1D saw nothing.
    assert_eq!(s.l2.reads, 5);
    assert_eq!(s.l1d.reads + s.l1d.writes, 0);
    // Four distinct lines; line 0's second read from the L2 hits there.
    assert_eq!((s.l2.misses, s.l2.hits), (4, 1));
}

#[test]
fn a_hit_takes_the_texture_latency_and_a_miss_the_round_trip() {
    let cfg = config(&[]);
    let mut mem = MemorySystem::new(&cfg);
    let start = Cycle::ZERO + Cycles::new(10);
    let miss = fetch(&mut mem, start, 4096) - start;
    // The L1D's unloaded DRAM round trip, with the texture cache's latency in place of
    // the L1D's.
    let round_trip = mem.unloaded_load_latency(ServedBy::Dram, 4).get() - cfg.l1d.latency.get();
    assert_eq!(miss, Cycles::new(round_trip + 7));
    let again = start + Cycles::new(10_000);
    let hit = fetch(&mut mem, again, 4096) - again;
    assert_eq!(hit, Cycles::new(7));
}

#[test]
fn a_texture_cache_with_lines_unlike_the_l2_is_refused_by_name() {
    let o = [Override::parse("texture_cache.line_bytes=64").unwrap()];
    let e = GpuConfig::load("gtx480", &default_configs_dir(), &o).unwrap_err();
    assert!(e.to_string().contains("texture_cache.line_bytes"), "{e}");
}

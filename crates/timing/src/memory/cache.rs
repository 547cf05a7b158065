//! A set-associative, sectored cache with MSHRs: the state model behind the L1 data
//! cache, the constant cache, the instruction cache and every L2 slice.
//!
//! The cache knows nothing of time. [`Cache::access`] classifies one line access as a hit,
//! an MSHR merge, a (sector) miss or a reservation failure and updates tags, LRU order
//! and MSHRs; [`Cache::fill`] installs arriving sectors and hands back the requests that
//! were waiting for them. The memory system adds latencies around it.
//!
//! Model:
//! - lines of `line_bytes` split into sectors of `sector_bytes`; validity and dirtiness
//!   are per sector and only the missing sectors are fetched (the Fermi/Volta rule);
//! - set index by the configured function ([`crate::memory::hashing`]: linear, XOR folding or
//!   GF(2) polynomial), optionally of the address with DRAM channel bits removed
//!   ([`Cache::set_partition`], for L2 slices);
//! - a read miss fetches the missing requested sectors, or with `fetch = "line"` every
//!   sector of the line not yet present or in flight;
//! - true LRU by a use counter, so replacement is deterministic;
//! - allocate-on-miss (victim reserved and locked until its fill) or allocate-on-fill;
//! - write-back or write-through, with or without write-allocate; writes cover whole
//!   sectors, so a write never fetches;
//! - MSHRs: one entry per line with a fetch in flight, at most `mshr_max_merge` waiting
//!   requests each. A read whose missing sectors are all in flight merges into the entry
//!   (counted in [`CacheStats::mshr_merges`]).
//!
//! # Extension point: sharing capacity with a register file (CERF)
//! A design that keeps registers in the L1D's storage (CERF, Jing et al.) takes capacity
//! from the data lines. Two hooks exist for it:
//! - [`Cache::set_data_ways`] limits memory data to the first `n` ways of every set; the
//!   remaining ways belong to the caller, which manages "register lines" in them;
//! - victim selection is one function, `choose_victim`, so a design that mixes register
//!   and data lines in the same ways can give each line a replacement priority there
//!   (CERF's LRU-prioritized policy) without touching the access and fill paths.
//!
//! [`Cache::share_with_registers`] uses the second hook: register lines (one warp
//! register per line, at a "reg-mem" address the design computes) live in the same ways
//! as data lines, written, read and released by the `*_register` methods. A register line
//! is valid and dirty in every sector, so evicting one writes it below: a register spill.
//! CERF Figure 6's entry states map onto a way as: `inactive` = empty, `reg` = register
//! line, `cache` = data line without dirty sectors, `dirty` = data line with some.

use crate::bits::Divisor;
use crate::config::{AllocationPolicy, CacheConfig, CerfPolicy, FetchGranularity, WritePolicy};
use crate::memory::hashing::Indexer;
use serde::Serialize;
use std::cell::Cell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::ops::AddAssign;

/// Most sectors a line may have (the width of [`SectorMask`]).
pub const MAX_SECTORS: u32 = 32;

/// The sectors of one line, bit `i` for sector `i`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, Debug, Serialize)]
pub struct SectorMask(pub u32);

impl SectorMask {
    /// No sectors.
    pub const EMPTY: Self = Self(0);

    /// The first `n` sectors.
    pub fn first(n: u32) -> Self {
        if n >= 32 {
            Self(u32::MAX)
        } else {
            Self((1u32 << n) - 1)
        }
    }
    /// Sector `i` alone.
    pub fn sector(i: u32) -> Self {
        Self(1 << i)
    }
    /// Whether no sector is set.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// Number of sectors set.
    pub fn count(self) -> u32 {
        self.0.count_ones()
    }
    /// Sectors in `self` or `other`.
    pub fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }
    /// Sectors in `self` but not in `other`.
    pub fn minus(self, other: Self) -> Self {
        Self(self.0 & !other.0)
    }
    /// Whether every sector of `other` is in `self`.
    pub fn contains(self, other: Self) -> bool {
        other.0 & !self.0 == 0
    }
}

/// The byte address of the first byte of a line.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Serialize)]
pub struct LineAddr(pub u64);

/// Read or write, as the cache sees it (atomics are reads that the caller then marks
/// dirty with [`Cache::mark_dirty`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum CacheOp {
    /// Read the sectors.
    Read,
    /// Overwrite the sectors entirely.
    Write,
}

/// Why an access could not be accepted; the caller retries later.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize)]
pub enum ReservationFailure {
    /// A new MSHR entry was needed and all are in use.
    MshrFull,
    /// The line's MSHR entry already has `mshr_max_merge` waiting requests.
    MergeFull,
    /// Allocate-on-miss found every way of the set locked by an outstanding fill.
    NoEvictableWay,
    /// The L1D's miss queue had no room for the request below
    /// ([`crate::memory::miss_queue`]; decided by the memory system, not the cache).
    MissQueueFull,
}

/// How an access went.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Outcome {
    /// All requested sectors were present.
    Hit,
    /// Missing sectors were all in flight already; the request waits on that entry.
    MshrMerge,
    /// The line was absent; `Access::fetch` sectors must be requested from below.
    Miss,
    /// The line was present (or in flight) without some sectors; `Access::fetch` must be
    /// requested from below.
    SectorMiss,
    /// Nothing changed; retry later.
    ReservationFail(ReservationFailure),
}

/// A line leaving the cache with dirty data that must be written below.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Eviction {
    /// The evicted line.
    pub line: LineAddr,
    /// Its dirty sectors.
    pub dirty: SectorMask,
}

/// The result of [`Cache::access`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Access {
    /// Classification.
    pub outcome: Outcome,
    /// Sectors to fetch from the next level (reads that missed only).
    pub fetch: SectorMask,
    /// A dirty victim to write back.
    pub eviction: Option<Eviction>,
    /// Whether a write must also go to the next level (write-through, or a write miss
    /// without write-allocate).
    pub forward_write: bool,
}

/// Event counts of one cache.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CacheStats {
    /// Read accesses (line granularity), reservation failures excluded.
    pub reads: u64,
    /// Write accesses (line granularity).
    pub writes: u64,
    /// Accesses that found every sector present.
    pub hits: u64,
    /// Accesses to absent lines.
    pub misses: u64,
    /// Reads to present or in-flight lines that needed a fetch of other sectors.
    pub sector_misses: u64,
    /// Reads merged into an in-flight MSHR entry.
    pub mshr_merges: u64,
    /// Accesses refused for lack of an MSHR, merge slot or evictable way.
    pub reservation_fails: u64,
    /// Valid lines replaced.
    pub evictions: u64,
    /// Evictions that carried dirty sectors.
    pub writebacks: u64,
    /// Sectors requested from the next level.
    pub sectors_fetched: u64,
    /// Sectors named by accepted reads and writes (reservation failures excluded): the
    /// access count of a cache that looks up one sector per access. GPGPU-Sim's sectored
    /// L2 (`-gpgpu_cache:dl2 S:...`) is one: a memory sub-partition breaks each request
    /// it receives into 32-byte sector requests (a 128-byte read is four) and counts one
    /// access per sector request (gpgpu-sim issue #181: read requests are divided into
    /// 32-byte units at the L2, write-backs are not; accel-sim issue #156:
    /// `L2_total_cache_accesses` counts the L2's access calls). Its accesses are the
    /// lookups of status HIT, HIT_RESERVED, MISS and SECTOR_MISS: reservation failures
    /// are counted apart and retried, as here.
    pub sector_accesses: u64,
    /// Accessed sectors neither present nor already in flight: a read's sectors that had
    /// to be fetched, a write's sectors that were not valid in the cache (written around
    /// it, or allocated by a write-allocate cache). GPGPU-Sim counts an access of status
    /// MISS (line absent) or SECTOR_MISS (line present, sector not) as a miss and an
    /// access to a sector in flight (HIT_RESERVED, a pending hit) as not (gpgpu-sim pull
    /// request #96: "Misses are all accesses of status MISS or SECTOR_MISS"); a write to
    /// an absent line under lazy fetch-on-read (dl2 write-allocate `L`) is a MISS that
    /// allocates without fetching. Sectors fetched beyond the requested ones
    /// (`fetch = "line"`) are in `sectors_fetched`, not here.
    pub sector_access_misses: u64,
    /// Accessed sectors found in flight (GPGPU-Sim's HIT_RESERVED, its "pending hits"):
    /// accesses that are neither hits nor misses.
    pub sector_pending_hits: u64,
}

impl AddAssign for CacheStats {
    fn add_assign(&mut self, o: Self) {
        self.reads += o.reads;
        self.writes += o.writes;
        self.hits += o.hits;
        self.misses += o.misses;
        self.sector_misses += o.sector_misses;
        self.mshr_merges += o.mshr_merges;
        self.reservation_fails += o.reservation_fails;
        self.evictions += o.evictions;
        self.writebacks += o.writebacks;
        self.sectors_fetched += o.sectors_fetched;
        self.sector_accesses += o.sector_accesses;
        self.sector_access_misses += o.sector_access_misses;
        self.sector_pending_hits += o.sector_pending_hits;
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct Line {
    present: bool,
    /// Waiting for a fill (allocate-on-miss): must not be evicted.
    locked: bool,
    addr: u64,
    valid: SectorMask,
    dirty: SectorMask,
    last_use: u64,
    /// A register line (CERF), not memory data.
    register: bool,
}

/// What writing a register line did ([`Cache::write_register`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct RegisterWrite {
    /// The register already had its line.
    pub hit: bool,
    /// Dirty data (or a spilled register) displaced to make room.
    pub eviction: Option<Eviction>,
}

/// Whether way `l` already holds `line` (so a fill may still be in flight for it).
fn hit_or_adopted(l: &Line, line: LineAddr) -> bool {
    l.present && l.addr == line.0
}

/// Register-line counters of a cache shared with a register file (CERF).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RegisterLineStats {
    /// Register lines written into an empty way.
    pub from_inactive: u64,
    /// Register lines written over a clean data line.
    pub from_cache: u64,
    /// Register lines written over a dirty data line (written back first).
    pub from_dirty: u64,
    /// Register lines written over another register line (a spill).
    pub from_register: u64,
    /// Register lines evicted by anything (spills), `from_register` included.
    pub spills: u64,
    /// Data lines installed over a register line (part of `spills`).
    pub data_over_register: u64,
    /// Register lines released (dead registers back to `inactive`).
    pub released: u64,
    /// Data lines promoted to register lines (a spilled register filled back).
    pub adopted: u64,
    /// Clean data lines made dirty by a store.
    pub cache_to_dirty: u64,
    /// Data lines installed into an empty way.
    pub data_into_inactive: u64,
}

#[derive(Clone, Debug)]
struct MshrEntry<T> {
    pending: SectorMask,
    /// Waiting requests with the sectors each still needs.
    targets: Vec<(T, SectorMask)>,
}

const FREE: u64 = u64::MAX;

/// No MSHR entry (in [`Cache`]'s `way_mshr`).
const NO_ENTRY: u32 = u32::MAX;

/// Caches with at least this many ways find a line's way through a hash index instead
/// of scanning its set: a 256-way L1 (qv100, h100) would compare 256 tags per lookup.
const WAY_INDEX_MIN_WAYS: usize = 32;

/// Caches with more ways than this compare every way's last use to choose a victim, as
/// caches below [`WAY_INDEX_MIN_WAYS`] do: measured (cachegrind, 2026-11-28), the use order
/// of h100's 256-way L1D cost more on its many hits than it saved on its few misses
/// (`gesummv` +2.1%, `matvec_rows` +0.4% host instructions), while rtx2060-scaled's 64-way
/// L1D, which misses on most lines, gained (`gesummv` -10%, `matvec_rows` -5%).
const LRU_ORDER_MAX_WAYS: usize = 64;

/// "No way" in [`LruOrder`]'s links.
const NIL: u32 = u32::MAX;

/// With [`WAY_INDEX_MIN_WAYS`] to [`LRU_ORDER_MAX_WAYS`] ways: each set's present lines
/// (tag not [`FREE`]) in a circular doubly linked list, least recently used first, so that
/// a victim is found by walking from the oldest line past the few locked ones instead of
/// comparing the use counters of every way (a 64-way L1D that misses on every line spent a
/// tenth of a run there). Node `w < sets * ways` is way `w`; node `sets * ways + s` is set
/// `s`'s anchor, whose `next` is the oldest line and whose `prev` the newest. Every present
/// line was made the newest when it was last touched, and `last_use` values are unique, so
/// the list's order is the order of `last_use`.
#[derive(Clone, Debug)]
struct LruOrder {
    next: Vec<u32>,
    prev: Vec<u32>,
    /// Present lines of each set.
    present: Vec<u32>,
    /// The set of a way: `way / ways`.
    set_of: Divisor,
    /// `sets * ways`: the first anchor node.
    anchors: u32,
}

impl LruOrder {
    fn new(sets: usize, ways: usize) -> Self {
        let nodes = sets * ways + sets;
        let anchors = (sets * ways) as u32;
        let mut order = Self {
            next: vec![NIL; nodes],
            prev: vec![NIL; nodes],
            present: vec![0; sets],
            set_of: Divisor::new(ways as u64),
            anchors,
        };
        for s in 0..sets as u32 {
            let a = (anchors + s) as usize;
            order.next[a] = anchors + s;
            order.prev[a] = anchors + s;
        }
        order
    }

    fn anchor(&self, way: usize) -> usize {
        self.anchors as usize + self.set_of.div(way as u64) as usize
    }

    fn unlink(&mut self, w: usize) {
        let (p, n) = (self.prev[w], self.next[w]);
        self.next[p as usize] = n;
        self.prev[n as usize] = p;
    }

    /// Links `w` (not in the list) as its set's newest line.
    fn link_newest(&mut self, w: usize) {
        let a = self.anchor(w);
        let last = self.prev[a];
        self.next[last as usize] = w as u32;
        self.prev[w] = last;
        self.next[w] = a as u32;
        self.prev[a] = w as u32;
    }

    /// Way `w`'s tag goes from `old` to `new` (either may be [`FREE`]).
    fn retag(&mut self, w: usize, old: u64, new: u64) {
        match (old == FREE, new == FREE) {
            (true, false) => {
                self.link_newest(w);
                self.present[self.set_of.div(w as u64) as usize] += 1;
            }
            (false, true) => {
                self.unlink(w);
                self.present[self.set_of.div(w as u64) as usize] -= 1;
            }
            _ => {}
        }
    }

    /// Makes present way `w` its set's newest line.
    #[inline]
    fn touch(&mut self, w: usize) {
        // Only the newest line links to the anchor (a hit on the line just used costs no
        // set lookup).
        if self.next[w] < self.anchors {
            self.unlink(w);
            self.link_newest(w);
        }
    }
}

/// Hashes a line address for the MSHR index: a multiply and a fold, which spreads
/// aligned addresses (low bits zero) over the table. Lookups only: iteration order never
/// matters.
#[derive(Default)]
struct LineHasher(u64);

impl Hasher for LineHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u64(&mut self, x: u64) {
        let h = (self.0 ^ x).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = h ^ (h >> 29);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// A sectored set-associative cache whose MSHRs hold waiting requests of type `T`.
#[derive(Clone, Debug)]
pub struct Cache<T> {
    cfg: CacheConfig,
    ways: usize,
    data_ways: usize,
    indexer: Indexer,
    /// `(start bit, channels)`: index the address with the channel removed (see
    /// [`Cache::set_partition`]).
    partition: Option<(u32, Divisor)>,
    /// The last line whose set [`Cache::set_base`] computed, and that set: a lookup is
    /// often followed by another of the same line (an L1D with a bounded miss queue asks
    /// whether the line is present, then accesses it; a refused line's set is kept; a
    /// fill compares its set with a blocked line's), and an L2 slice's set index (a
    /// division by the channel count and a hash) costs tens of instructions. Always
    /// valid: set at creation and by [`Cache::set_partition`].
    last_set: Cell<(u64, usize)>,
    line_shift: u32,
    line_fetch: bool,
    lines: Vec<Line>,
    /// The address of each way's line, [`FREE`] when the way holds none: the tag array
    /// lookups scan (compact, so that highly associative caches scan fast). Written only
    /// through [`Cache::set_tag`].
    tags: Vec<u64>,
    /// With [`WAY_INDEX_MIN_WAYS`] ways or more: the way of each line in `tags` (a line
    /// is in at most one way, and only in its own set). Lookups only: iteration order
    /// never matters.
    way_index: Option<HashMap<u64, u32, BuildHasherDefault<LineHasher>>>,
    /// With [`WAY_INDEX_MIN_WAYS`] to [`LRU_ORDER_MAX_WAYS`] ways: the present lines in
    /// order of use ([`LruOrder`]). Kept by [`Cache::set_tag`] and [`Cache::touch`].
    lru: Option<LruOrder>,
    /// The MSHR entry of the line in each way ([`NO_ENTRY`]: none), kept with
    /// [`Cache::set_tag`]: a line with a fetch in flight that has a way (every one under
    /// allocate-on-miss, which reserves the way at the miss) finds its entry by the way
    /// the lookup found anyway, without a hash of its address (the hash map's insert,
    /// lookup and removal were about 4% of a memory-bound run).
    way_mshr: Vec<u32>,
    /// The MSHR entry of each line with a fetch in flight that is in no way
    /// (allocate-on-fill, or its way was given up), by line. A hash map, not a scan of
    /// the entries: an L2 slice has hundreds. A line's entry is in exactly one of
    /// `way_mshr` and `mshr_index`.
    mshr_index: HashMap<u64, u32, BuildHasherDefault<LineHasher>>,
    /// Unused MSHR entries (a stack).
    free_entries: Vec<u32>,
    mshrs: Vec<MshrEntry<T>>,
    use_clock: u64,
    /// See [`Cache::entries_freed`].
    entries_freed: u64,
    stats: CacheStats,
    /// `Some` when register lines share the ways (CERF), with the replacement policy.
    sharing: Option<CerfPolicy>,
    register_stats: RegisterLineStats,
    /// Register lines evicted since the last [`Cache::take_evicted_registers`].
    evicted_registers: Vec<LineAddr>,
}

impl<T: Copy> Cache<T> {
    /// The bytes [`Cache::new`] allocates for `cfg` (lines, tags, MSHRs and their
    /// targets), for [`crate::limits::host_memory_estimate`].
    pub fn memory_estimate(cfg: &CacheConfig) -> u64 {
        let lines = cfg.size_bytes / u64::from(cfg.line_bytes.max(1));
        // A line, its tag and its way's MSHR entry.
        let mut per_line = (std::mem::size_of::<Line>()
            + std::mem::size_of::<u64>()
            + std::mem::size_of::<u32>()) as u64;
        if cfg.ways as usize >= WAY_INDEX_MIN_WAYS {
            // A hash table entry (line, way) and its control byte, at 7/8 load.
            per_line += 20;
        }
        if (WAY_INDEX_MIN_WAYS..=LRU_ORDER_MAX_WAYS).contains(&(cfg.ways as usize)) {
            // The way's two links in the use order.
            per_line += 8;
        }
        let per_mshr = (std::mem::size_of::<MshrEntry<T>>() + 2 * std::mem::size_of::<u64>())
            as u64
            + u64::from(cfg.mshr_max_merge) * std::mem::size_of::<(T, SectorMask)>() as u64;
        lines
            .saturating_mul(per_line)
            .saturating_add(u64::from(cfg.mshrs).saturating_mul(per_mshr))
    }

    /// An empty cache. `cfg` must have passed [`crate::config::validate_cache`].
    pub fn new(cfg: &CacheConfig) -> Self {
        let sets = cfg.sets() as usize;
        let ways = cfg.ways as usize;
        let merge = cfg.mshr_max_merge as usize;
        let cache = Self {
            cfg: cfg.clone(),
            ways,
            data_ways: ways,
            indexer: Indexer::new(&cfg.set_index, sets as u64, u64::from(cfg.line_bytes)),
            partition: None,
            last_set: Cell::new((0, 0)),
            line_shift: cfg.line_bytes.trailing_zeros(),
            line_fetch: cfg.fetch == FetchGranularity::Line,
            lines: vec![Line::default(); sets * ways],
            tags: vec![FREE; sets * ways],
            way_mshr: vec![NO_ENTRY; sets * ways],
            way_index: (ways >= WAY_INDEX_MIN_WAYS && !cfg.perfect).then(|| {
                HashMap::with_capacity_and_hasher(sets * ways, BuildHasherDefault::default())
            }),
            lru: ((WAY_INDEX_MIN_WAYS..=LRU_ORDER_MAX_WAYS).contains(&ways) && !cfg.perfect)
                .then(|| LruOrder::new(sets, ways)),
            mshr_index: HashMap::with_capacity_and_hasher(
                cfg.mshrs as usize,
                BuildHasherDefault::default(),
            ),
            free_entries: (0..cfg.mshrs).rev().collect(),
            mshrs: (0..cfg.mshrs)
                .map(|_| MshrEntry {
                    pending: SectorMask::EMPTY,
                    targets: Vec::with_capacity(merge),
                })
                .collect(),
            use_clock: 0,
            entries_freed: 0,
            stats: CacheStats::default(),
            sharing: None,
            register_stats: RegisterLineStats::default(),
            evicted_registers: Vec::new(),
        };
        cache.last_set.set((0, cache.compute_set_base(LineAddr(0))));
        cache
    }

    /// Lets register lines share the ways under `policy` (CERF).
    pub fn share_with_registers(&mut self, policy: CerfPolicy) {
        self.sharing = Some(policy);
        self.evicted_registers.reserve(64);
    }

    /// The configuration.
    pub fn config(&self) -> &CacheConfig {
        &self.cfg
    }
    /// Counters so far.
    pub fn stats(&self) -> &CacheStats {
        &self.stats
    }
    /// MSHR entries not in use.
    pub fn free_mshrs(&self) -> usize {
        self.free_entries.len()
    }
    /// The line containing byte address `addr`.
    pub fn line_of(&self, addr: u64) -> LineAddr {
        LineAddr(addr >> self.line_shift << self.line_shift)
    }

    /// Makes the set index a function of the address within its DRAM channel: with
    /// `channels` channels interleaved every `1 << start_bit` bytes, the address
    /// `((a >> start_bit) / channels) << start_bit | (a mod 2^start_bit)`. An L2 slice
    /// sees only its channel's addresses, whose channel bits would otherwise be constant
    /// and leave sets unused.
    pub fn set_partition(&mut self, start_bit: u32, channels: u64) {
        self.partition = (channels > 1).then(|| (start_bit, Divisor::new(channels)));
        self.last_set.set((0, self.compute_set_base(LineAddr(0))));
    }

    /// The first way of `line`'s set, remembered for the next call ([`Cache::last_set`]).
    #[inline]
    fn set_base(&self, line: LineAddr) -> usize {
        let (last, base) = self.last_set.get();
        if last == line.0 {
            return base;
        }
        let base = self.compute_set_base(line);
        self.last_set.set((line.0, base));
        base
    }

    fn compute_set_base(&self, line: LineAddr) -> usize {
        let addr = match self.partition {
            None => line.0,
            Some((s, ch)) => ch.div(line.0 >> s) << s | (line.0 & ((1u64 << s) - 1)),
        };
        (self.indexer.index(addr) as usize) * self.ways
    }

    fn find_way(&self, line: LineAddr) -> Option<usize> {
        self.find_way_in(self.set_base(line), line)
    }

    /// [`Self::find_way`] in the set at `base` (`line`'s: callers that also need the set
    /// compute it once).
    #[inline]
    fn find_way_in(&self, base: usize, line: LineAddr) -> Option<usize> {
        if let Some(index) = &self.way_index {
            let way = index.get(&line.0).map(|&w| w as usize);
            debug_assert!(way.is_none_or(|w| (base..base + self.ways).contains(&w)));
            return way;
        }
        let tags = &self.tags[base..base + self.ways];
        if tags.len() < 8 {
            return tags.iter().position(|&t| t == line.0).map(|w| base + w);
        }
        // Eight tags at a time without an early exit, which the compiler turns into
        // vector compares: a 256-way L1 (qv100, h100) scans its set on every access.
        let mut chunks = tags.chunks_exact(8);
        let mut at = base;
        for chunk in &mut chunks {
            let hits = chunk
                .iter()
                .enumerate()
                .fold(0u32, |m, (i, &t)| m | u32::from(t == line.0) << i);
            if hits != 0 {
                return Some(at + hits.trailing_zeros() as usize);
            }
            at += 8;
        }
        chunks
            .remainder()
            .iter()
            .position(|&t| t == line.0)
            .map(|w| at + w)
    }

    /// Makes `tag` (a line address or [`FREE`]) way `way`'s, keeping the way index.
    fn set_tag(&mut self, way: usize, tag: u64) {
        let old = std::mem::replace(&mut self.tags[way], tag);
        if old != tag {
            // An MSHR entry follows its line: out of the way the line leaves, into the
            // way it enters.
            let e = std::mem::replace(&mut self.way_mshr[way], NO_ENTRY);
            if e != NO_ENTRY {
                self.mshr_index.insert(old, e);
            }
            if tag != FREE && !self.mshr_index.is_empty() {
                if let Some(e) = self.mshr_index.remove(&tag) {
                    self.way_mshr[way] = e;
                }
            }
        }
        if let Some(lru) = &mut self.lru {
            lru.retag(way, old, tag);
        }
        if let Some(index) = &mut self.way_index {
            if old != FREE {
                index.remove(&old);
            }
            if tag != FREE {
                index.insert(tag, way as u32);
            }
        }
    }

    /// The MSHR entry of `line`, whose way (if it has one) is `way`.
    #[inline]
    fn find_mshr(&self, line: LineAddr, way: Option<usize>) -> Option<usize> {
        if let Some(w) = way {
            let e = self.way_mshr[w];
            return (e != NO_ENTRY).then_some(e as usize);
        }
        if self.mshr_index.is_empty() {
            return None;
        }
        self.mshr_index.get(&line.0).map(|&e| e as usize)
    }

    /// Whether all of `sectors` of `line` are present (no state change).
    pub fn contains(&self, line: LineAddr, sectors: SectorMask) -> bool {
        self.find_way(line)
            .is_some_and(|w| self.lines[w].valid.contains(sectors))
    }

    /// The way a new line of the set at `base` goes to: an empty data way if any, else
    /// the least recently used unlocked data way. `None` when every data way is locked.
    ///
    /// This is the replacement hook of the CERF extension point (see the module docs).
    fn choose_victim(&self, base: usize) -> Option<usize> {
        if let (Some(lru), None) = (&self.lru, self.sharing) {
            // Without register lines, only data ways hold lines.
            let set = lru.set_of.div(base as u64) as usize;
            let way = if (lru.present[set] as usize) < self.data_ways {
                self.tags[base..base + self.data_ways]
                    .iter()
                    .position(|&t| t == FREE)
                    .map(|w| base + w)
            } else {
                let anchor = lru.anchors as usize + set;
                let mut w = lru.next[anchor] as usize;
                while w != anchor && self.lines[w].locked {
                    w = lru.next[w] as usize;
                }
                (w != anchor).then_some(w)
            };
            debug_assert_eq!(way, self.choose_victim_by_scan(base));
            return way;
        }
        self.choose_victim_by_scan(base)
    }

    /// [`Self::choose_victim`] by comparing every data way.
    fn choose_victim_by_scan(&self, base: usize) -> Option<usize> {
        // CERF LRU-prioritized: memory data never displaces a register.
        let spare_registers = self.sharing == Some(CerfPolicy::LruPrioritized);
        // One pass: the first empty way wins outright; otherwise the first way with the
        // oldest use among those that may be evicted.
        let mut lru: Option<(usize, u64)> = None;
        for (i, l) in self.lines[base..base + self.data_ways].iter().enumerate() {
            if !l.present {
                return Some(base + i);
            }
            if !(l.locked || spare_registers && l.register)
                && lru.is_none_or(|(_, oldest)| l.last_use < oldest)
            {
                lru = Some((base + i, l.last_use));
            }
        }
        lru.map(|(w, _)| w)
    }

    /// The way a register line goes to: an empty way, else the least recently used
    /// unlocked line (under LRU-prioritized data lines only, registers only when the set
    /// holds nothing else). `None` when the line must wait for a fill to unlock a way.
    fn choose_register_victim(&self, base: usize) -> Option<usize> {
        let ways = base..base + self.ways;
        if let Some(w) = ways.clone().find(|&i| !self.lines[i].present) {
            return Some(w);
        }
        let lru = |data_only: bool| {
            ways.clone()
                .filter(|&i| !(self.lines[i].locked || data_only && self.lines[i].register))
                .min_by_key(|&i| self.lines[i].last_use)
        };
        if self.sharing == Some(CerfPolicy::LruPrioritized) {
            // A register waits for a data line's fill rather than spill another
            // register; only a set of nothing but registers spills one.
            let data_locked = ways.clone().any(|i| !self.lines[i].register);
            lru(true).or_else(|| if data_locked { None } else { lru(false) })
        } else {
            lru(false)
        }
    }

    fn touch(&mut self, way: usize) {
        self.use_clock += 1;
        self.lines[way].last_use = self.use_clock;
        if let Some(lru) = &mut self.lru {
            lru.touch(way);
        }
    }

    /// Puts `line` in `way`, returning the displaced dirty data if any.
    fn install(&mut self, way: usize, line: LineAddr) -> Option<Eviction> {
        let old = self.lines[way];
        if self.sharing.is_some() {
            if old.register {
                self.register_stats.spills += 1;
                self.register_stats.data_over_register += 1;
                self.evicted_registers.push(LineAddr(old.addr));
            } else if !old.present {
                self.register_stats.data_into_inactive += 1;
            }
        }
        let eviction = self.evict(old);
        self.set_tag(way, line.0);
        self.lines[way] = Line {
            present: true,
            locked: false,
            addr: line.0,
            valid: SectorMask::EMPTY,
            dirty: SectorMask::EMPTY,
            last_use: 0,
            register: false,
        };
        eviction
    }

    /// Whether register lines share the ways (CERF).
    pub fn shares_registers(&self) -> bool {
        self.sharing.is_some()
    }

    /// MSHR entries freed so far, each with its line's locked way under allocate on
    /// miss: a failure for want of an entry or a way can only clear when this changes.
    pub fn entries_freed(&self) -> u64 {
        self.entries_freed
    }

    /// The set `line` maps to (as the index of its first way): lines of the same set
    /// give the same number.
    pub fn set_of(&self, line: LineAddr) -> usize {
        self.set_base(line)
    }

    /// Counts a reservation failure the caller knows a retry would meet (nothing the
    /// failed lookup depended on has changed since).
    pub fn count_reservation_fail(&mut self) {
        self.stats.reservation_fails += 1;
    }

    /// Counts `old` leaving its way and returns its dirty data, if any, for the level
    /// below.
    fn evict(&mut self, old: Line) -> Option<Eviction> {
        if !old.present {
            return None;
        }
        self.stats.evictions += 1;
        (!old.dirty.is_empty()).then(|| {
            self.stats.writebacks += 1;
            Eviction {
                line: LineAddr(old.addr),
                dirty: old.dirty,
            }
        })
    }

    fn fail(&mut self, why: ReservationFailure) -> Access {
        self.stats.reservation_fails += 1;
        Access {
            outcome: Outcome::ReservationFail(why),
            fetch: SectorMask::EMPTY,
            eviction: None,
            forward_write: false,
        }
    }

    /// Accesses `sectors` of `line`. For a read that does not hit, `target` is recorded in
    /// the line's MSHR entry and returned by [`Cache::fill`] once its sectors arrive.
    pub fn access(
        &mut self,
        line: LineAddr,
        sectors: SectorMask,
        op: CacheOp,
        target: T,
    ) -> Access {
        match op {
            CacheOp::Read => self.read(line, sectors, target),
            CacheOp::Write => self.write(line, sectors, self.cfg.write_policy),
        }
    }

    fn read(&mut self, line: LineAddr, sectors: SectorMask, target: T) -> Access {
        if self.cfg.perfect {
            self.stats.reads += 1;
            self.stats.hits += 1;
            self.stats.sector_accesses += u64::from(sectors.count());
            return Access {
                outcome: Outcome::Hit,
                fetch: SectorMask::EMPTY,
                eviction: None,
                forward_write: false,
            };
        }
        let base = self.set_base(line);
        let way = self.find_way_in(base, line);
        let valid = way.map_or(SectorMask::EMPTY, |w| self.lines[w].valid);
        let need = sectors.minus(valid);
        let mut access = Access {
            outcome: Outcome::Hit,
            fetch: SectorMask::EMPTY,
            eviction: None,
            forward_write: false,
        };
        if need.is_empty() {
            self.stats.reads += 1;
            self.stats.hits += 1;
            self.stats.sector_accesses += u64::from(sectors.count());
            if let Some(w) = way {
                self.touch(w);
            }
            return access;
        }
        let entry = self.find_mshr(line, way);
        if let Some(e) = entry {
            if self.mshrs[e].targets.len() >= self.cfg.mshr_max_merge as usize {
                return self.fail(ReservationFailure::MergeFull);
            }
        } else if self.free_entries.is_empty() {
            return self.fail(ReservationFailure::MshrFull);
        }
        let on_miss = self.cfg.allocation == AllocationPolicy::OnMiss;
        let was_present = way.is_some();
        let mut way = way;
        if way.is_none() && on_miss {
            match self.choose_victim(base) {
                Some(victim) => {
                    access.eviction = self.install(victim, line);
                    way = Some(victim);
                }
                // CERF LRU-prioritized, a set full of registers: fetch without a
                // reserved way; the fill finds room or bypasses the array.
                None if self.sharing == Some(CerfPolicy::LruPrioritized) => {}
                None => return self.fail(ReservationFailure::NoEvictableWay),
            }
        }
        // Committed from here on.
        self.stats.reads += 1;
        let e = match entry {
            Some(e) => e,
            None => {
                // Checked above: an entry is free.
                let e = self.free_entries.pop().unwrap_or(0) as usize;
                match way {
                    Some(w) => self.way_mshr[w] = e as u32,
                    None => {
                        self.mshr_index.insert(line.0, e as u32);
                    }
                }
                self.mshrs[e].pending = SectorMask::EMPTY;
                self.mshrs[e].targets.clear();
                e
            }
        };
        let pending = self.mshrs[e].pending;
        self.count_sectors(sectors, need, pending);
        let wanted = if self.line_fetch {
            // The whole line: every sector neither present nor already on its way.
            let valid = way.map_or(SectorMask::EMPTY, |w| self.lines[w].valid);
            need.union(SectorMask::first(self.cfg.sectors_per_line()).minus(valid))
        } else {
            need
        };
        access.fetch = wanted.minus(pending);
        self.mshrs[e].pending = pending.union(access.fetch);
        self.mshrs[e].targets.push((target, need));
        if let Some(w) = way {
            if on_miss {
                self.lines[w].locked = true;
            }
            self.touch(w);
        }
        access.outcome = if access.fetch.is_empty() {
            self.stats.mshr_merges += 1;
            Outcome::MshrMerge
        } else if entry.is_some() || was_present {
            self.stats.sector_misses += 1;
            Outcome::SectorMiss
        } else {
            self.stats.misses += 1;
            Outcome::Miss
        };
        self.stats.sectors_fetched += u64::from(access.fetch.count());
        access
    }

    /// Counts an accepted access of `sectors` of which `absent` were not valid and
    /// `pending` are in flight (see [`CacheStats::sector_accesses`]).
    fn count_sectors(&mut self, sectors: SectorMask, absent: SectorMask, pending: SectorMask) {
        let missing = absent.minus(pending);
        self.stats.sector_accesses += u64::from(sectors.count());
        self.stats.sector_access_misses += u64::from(missing.count());
        self.stats.sector_pending_hits += u64::from(absent.minus(missing).count());
    }

    /// A write of `sectors` of `line` under `policy` instead of the configured write
    /// policy (an L1D that keeps thread-local data but writes global data through).
    pub fn write_with_policy(
        &mut self,
        line: LineAddr,
        sectors: SectorMask,
        policy: WritePolicy,
    ) -> Access {
        self.write(line, sectors, policy)
    }

    fn write(&mut self, line: LineAddr, sectors: SectorMask, policy: WritePolicy) -> Access {
        let write_back = policy == WritePolicy::WriteBack;
        let mut access = Access {
            outcome: Outcome::Hit,
            fetch: SectorMask::EMPTY,
            eviction: None,
            forward_write: !write_back,
        };
        let base = self.set_base(line);
        let found = self.find_way_in(base, line);
        let absent = sectors.minus(found.map_or(SectorMask::EMPTY, |w| self.lines[w].valid));
        let pending = if absent.is_empty() {
            SectorMask::EMPTY
        } else {
            self.find_mshr(line, found)
                .map_or(SectorMask::EMPTY, |e| self.mshrs[e].pending)
        };
        let way = match found {
            Some(w) => {
                self.stats.hits += 1;
                w
            }
            None if self.cfg.write_allocate => {
                let Some(victim) = self.choose_victim(base) else {
                    if self.sharing == Some(CerfPolicy::LruPrioritized) {
                        // A set full of registers: the write goes around the array.
                        self.stats.writes += 1;
                        self.stats.misses += 1;
                        self.count_sectors(sectors, absent, pending);
                        access.outcome = Outcome::Miss;
                        access.forward_write = true;
                        return access;
                    }
                    return self.fail(ReservationFailure::NoEvictableWay);
                };
                access.eviction = self.install(victim, line);
                access.outcome = Outcome::Miss;
                self.stats.misses += 1;
                victim
            }
            None => {
                self.stats.writes += 1;
                self.stats.misses += 1;
                self.count_sectors(sectors, absent, pending);
                access.outcome = Outcome::Miss;
                access.forward_write = true;
                return access;
            }
        };
        self.stats.writes += 1;
        self.count_sectors(sectors, absent, pending);
        let l = &mut self.lines[way];
        l.valid = l.valid.union(sectors);
        if write_back && l.dirty.is_empty() && self.sharing.is_some() {
            self.register_stats.cache_to_dirty += 1;
        }
        let l = &mut self.lines[way];
        if write_back {
            l.dirty = l.dirty.union(sectors);
        }
        self.touch(way);
        access
    }

    /// Installs arriving `sectors` of `line`, appends the requests whose sectors are now
    /// all present to `done` (in arrival order) and frees the MSHR entry once nothing of
    /// the line is in flight. Returns a dirty victim when allocate-on-fill displaced one.
    pub fn fill(
        &mut self,
        line: LineAddr,
        sectors: SectorMask,
        done: &mut Vec<T>,
    ) -> Option<Eviction> {
        let mut eviction = None;
        let base = self.set_base(line);
        let way = match self.find_way_in(base, line) {
            Some(w) => Some(w),
            None => self.choose_victim(base).inspect(|&v| {
                eviction = self.install(v, line);
            }),
        };
        if let Some(w) = way {
            let l = &mut self.lines[w];
            l.valid = l.valid.union(sectors);
            if l.last_use == 0 {
                self.touch(w);
            }
        }
        if let Some(e) = self.find_mshr(line, way) {
            let entry = &mut self.mshrs[e];
            entry.pending = entry.pending.minus(sectors);
            // `retain_mut` by hand (it was a call of its own per fill): the satisfied
            // targets go to `done` in order, the others keep theirs.
            let mut kept = 0;
            for i in 0..entry.targets.len() {
                let (t, need) = entry.targets[i];
                let need = need.minus(sectors);
                if need.is_empty() {
                    done.push(t);
                } else {
                    entry.targets[kept] = (t, need);
                    kept += 1;
                }
            }
            entry.targets.truncate(kept);
            if entry.pending.is_empty() {
                // Each target's needed sectors were pending, so none can be left waiting.
                debug_assert!(entry.targets.is_empty());
                match way {
                    Some(w) => self.way_mshr[w] = NO_ENTRY,
                    None => {
                        self.mshr_index.remove(&line.0);
                    }
                }
                self.free_entries.push(e as u32);
                self.entries_freed += 1;
                if let Some(w) = way {
                    self.lines[w].locked = false;
                }
            }
        }
        eviction
    }

    /// Installs `sectors` of `line` as valid, clean data written from outside the GPU (a
    /// host copy): the line is allocated as a fill would allocate it (an empty way, else
    /// the least recently used unlocked one) and becomes the most recently used. Counts
    /// no access. A line whose fetch is in flight, or a set whose ways are all locked, is
    /// left as it is (`false`). A dirty victim is returned for the caller to dispose of.
    pub fn install_clean(
        &mut self,
        line: LineAddr,
        sectors: SectorMask,
    ) -> (bool, Option<Eviction>) {
        if self.fetching(line) {
            return (false, None);
        }
        let mut eviction = None;
        let base = self.set_base(line);
        let way = match self.find_way_in(base, line) {
            Some(w) => w,
            None => match self.choose_victim(base) {
                Some(v) => {
                    eviction = self.install(v, line);
                    v
                }
                None => return (false, None),
            },
        };
        let l = &mut self.lines[way];
        l.valid = l.valid.union(sectors);
        l.dirty = l.dirty.minus(sectors);
        self.touch(way);
        (true, eviction)
    }

    /// Marks `sectors` of `line` dirty if the line is present (an atomic performed here).
    pub fn mark_dirty(&mut self, line: LineAddr, sectors: SectorMask) {
        if let Some(w) = self.find_way(line) {
            let l = &mut self.lines[w];
            l.valid = l.valid.union(sectors);
            l.dirty = l.dirty.union(sectors);
        }
    }

    /// Drops every line that has no fill outstanding, appending the dirty ones to
    /// `evicted` (the caller writes them below). Counters are kept.
    pub fn invalidate(&mut self, evicted: &mut Vec<Eviction>) {
        for l in self.lines.iter_mut() {
            if !l.locked {
                if l.present && !l.dirty.is_empty() {
                    evicted.push(Eviction {
                        line: LineAddr(l.addr),
                        dirty: l.dirty,
                    });
                }
                *l = Line::default();
            }
        }
        for w in 0..self.lines.len() {
            if !self.lines[w].present && self.tags[w] != FREE {
                self.set_tag(w, FREE);
            }
        }
    }

    /// Whether a fetch of `line` is in flight (it has an MSHR entry).
    pub fn fetching(&self, line: LineAddr) -> bool {
        self.find_mshr(line, self.find_way(line)).is_some()
    }

    /// Register-line counters (CERF).
    pub fn register_stats(&self) -> &RegisterLineStats {
        &self.register_stats
    }

    /// Ways per state, CERF Figure 6: `[inactive, reg, cache, dirty]`.
    pub fn state_counts(&self) -> [u64; 4] {
        let mut n = [0u64; 4];
        for l in &self.lines {
            let k = match (l.present, l.register, l.dirty.is_empty()) {
                (false, _, _) => 0,
                (true, true, _) => 1,
                (true, false, true) => 2,
                (true, false, false) => 3,
            };
            n[k] += 1;
        }
        n
    }

    /// Writes the register line `line` (CERF: a warp register at its reg-mem address).
    /// An absent register takes a way ([`Cache::choose_register_victim`]); a data line
    /// at that address (a spilled register being filled back) becomes the register.
    /// `None` (nothing changed) when every way of the set is locked by a fill.
    pub fn write_register(&mut self, line: LineAddr) -> Option<RegisterWrite> {
        let all = SectorMask::first(self.cfg.sectors_per_line());
        let base = self.set_base(line);
        let (way, hit, eviction) = match self.find_way_in(base, line) {
            Some(w) => {
                if !self.lines[w].register {
                    self.register_stats.adopted += 1;
                }
                (w, self.lines[w].register, None)
            }
            None => {
                let victim = self.choose_register_victim(base)?;
                let old = self.lines[victim];
                let rs = &mut self.register_stats;
                match (old.present, old.register, old.dirty.is_empty()) {
                    (false, _, _) => rs.from_inactive += 1,
                    (true, true, _) => {
                        rs.from_register += 1;
                        rs.spills += 1;
                        self.evicted_registers.push(LineAddr(old.addr));
                    }
                    (true, false, true) => rs.from_cache += 1,
                    (true, false, false) => rs.from_dirty += 1,
                }
                let eviction = self.evict(old);
                (victim, false, eviction)
            }
        };
        self.set_tag(way, line.0);
        let l = &mut self.lines[way];
        let keep_lock = hit_or_adopted(l, line) && l.locked;
        *l = Line {
            present: true,
            locked: keep_lock,
            addr: line.0,
            valid: all,
            dirty: all,
            last_use: l.last_use,
            register: true,
        };
        self.touch(way);
        Some(RegisterWrite { hit, eviction })
    }

    /// Reads the register line `line`: true (and the line is touched) when it is present
    /// with all its sectors; a filled-back data line at that address becomes the
    /// register. False when the register was spilled and is not back yet.
    pub fn read_register(&mut self, line: LineAddr) -> bool {
        let all = SectorMask::first(self.cfg.sectors_per_line());
        let Some(w) = self.find_way(line) else {
            return false;
        };
        let l = &mut self.lines[w];
        if !l.valid.contains(all) {
            return false;
        }
        if !l.register {
            l.register = true;
            l.dirty = all;
            self.register_stats.adopted += 1;
        }
        self.touch(w);
        true
    }

    /// A dead register: its line (if present) goes back to `inactive`, without a
    /// write-back.
    pub fn release_register(&mut self, line: LineAddr) {
        if let Some(w) = self.find_way(line) {
            if self.lines[w].register && !self.lines[w].locked {
                self.lines[w] = Line::default();
                self.set_tag(w, FREE);
                self.register_stats.released += 1;
            }
        }
    }

    /// Appends the register lines evicted since the last call to `out`, oldest first.
    pub fn take_evicted_registers(&mut self, out: &mut Vec<LineAddr>) {
        out.append(&mut self.evicted_registers);
    }

    /// Ways per set available to memory data (all of them unless a register file design
    /// took some with [`Cache::set_data_ways`]).
    pub fn data_ways(&self) -> usize {
        self.data_ways
    }

    /// Restricts memory data to the first `n` ways of every set (1 <= n <= ways), leaving
    /// the others to the caller (CERF extension point). Lines in the ways given up are
    /// dropped; their dirty data is appended to `evicted`. Refused (returns `false`) while
    /// any fill is outstanding, because in-flight lines may sit in those ways.
    pub fn set_data_ways(&mut self, n: usize, evicted: &mut Vec<Eviction>) -> bool {
        if n == 0 || n > self.ways || self.free_entries.len() != self.mshrs.len() {
            return false;
        }
        for base in (0..self.lines.len()).step_by(self.ways) {
            for w in base + n..base + self.ways {
                let l = self.lines[w];
                if l.present {
                    self.stats.evictions += 1;
                    if !l.dirty.is_empty() {
                        self.stats.writebacks += 1;
                        evicted.push(Eviction {
                            line: LineAddr(l.addr),
                            dirty: l.dirty,
                        });
                    }
                }
                self.lines[w] = Line::default();
                self.set_tag(w, FREE);
            }
        }
        self.data_ways = n;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(size: u64, ways: u32, mshrs: u32, merge: u32) -> CacheConfig {
        CacheConfig {
            size_bytes: size,
            ways,
            line_bytes: 128,
            sector_bytes: 32,
            latency: crate::time::Cycles::new(1),
            mshrs,
            mshr_max_merge: merge,
            write_policy: WritePolicy::WriteBack,
            write_allocate: true,
            allocation: AllocationPolicy::OnMiss,
            set_index: Default::default(),
            fetch: Default::default(),
            local_write_policy: None,
            data_port_bytes: 0,
            fill_port_bytes: 0,
            perfect: false,
            invalidate_between_kernels: false,
            bypass_global_loads: false,
            shared_carveouts: Vec::new(),
            miss_queue_entries: 0,
            return_bits_per_cycle: 0,
            banks: 0,
            bank_interleave_bytes: 32,
            bank_index: Default::default(),
        }
    }

    const ALL: SectorMask = SectorMask(0b1111);

    /// Line `i` of set `set` in a cache with `sets` sets of 128-byte lines.
    fn addr(set: u64, i: u64, sets: u64) -> LineAddr {
        LineAddr((i * sets + set) * 128)
    }

    /// The gtx480 L1D, with the given `--set`s.
    fn gtx480_l1d(sets: &[&str]) -> CacheConfig {
        let o: Vec<_> = sets
            .iter()
            .map(|s| crate::config::Override::parse(s).unwrap())
            .collect();
        crate::config::GpuConfig::load("gtx480", &crate::config::default_configs_dir(), &o)
            .unwrap()
            .l1d
    }

    /// A warp's load in the row walk (built-in `matvec_rows`): lane `l` of warp `w` reads
    /// word `j` of row `32 w + l`, rows 4 KB apart. Returns the outcomes in lane order,
    /// stopping at the first reservation failure as the LD/ST unit does.
    fn row_walk_load(c: &mut Cache<u32>, warp: u64, j: u64) -> Vec<Outcome> {
        let mut out = vec![];
        for lane in 0..32 {
            let row = 32 * warp + lane;
            let addr = row * 4096 + j * 4;
            let sector = SectorMask::sector(((addr % 128) / 32) as u32);
            let a = c.access(c.line_of(addr), sector, CacheOp::Read, row as u32);
            out.push(a.outcome);
            if let Outcome::ReservationFail(_) = a.outcome {
                break;
            }
        }
        out
    }

    #[test]
    fn row_walk_known_answers_for_the_l1d_allocation_rules() {
        use Outcome::*;
        use ReservationFailure::*;
        // Linear sets (the papers' model): the 32 rows of a warp share one 4-way set, so
        // the fifth line finds every way reserved for a fill in flight.
        let mut c: Cache<u32> = Cache::new(&gtx480_l1d(&["memory.model=paper"]));
        let w0 = row_walk_load(&mut c, 0, 0);
        assert_eq!(
            w0,
            [vec![Miss; 4], vec![ReservationFail(NoEvictableWay)]].concat()
        );

        // Fermi's XOR hash folds row bits 1, 2, 3 (address bits 13-15) and 5 (bit 17) into
        // the set: warp 0 fills sets 0-7 and warp 1 sets 8-15, four rows a set, so both
        // are accepted, and they take the 64 MSHRs (one per line in flight): warp 2 is
        // refused for want of an MSHR, which is looked for before a way.
        let mut c: Cache<u32> = Cache::new(&gtx480_l1d(&[]));
        assert_eq!(row_walk_load(&mut c, 0, 0), vec![Miss; 32]);
        assert_eq!(row_walk_load(&mut c, 1, 0), vec![Miss; 32]);
        assert_eq!(c.free_mshrs(), 0);
        assert_eq!(row_walk_load(&mut c, 2, 0), vec![ReservationFail(MshrFull)]);
        // With MSHRs to spare, warp 2 (rows 64-95) lands on warp 0's sets while their
        // fills are in flight: the reservation failure of allocate-on-miss.
        let mut c: Cache<u32> = Cache::new(&gtx480_l1d(&["l1d.mshrs=128"]));
        row_walk_load(&mut c, 0, 0);
        row_walk_load(&mut c, 1, 0);
        assert_eq!(
            row_walk_load(&mut c, 2, 0),
            vec![ReservationFail(NoEvictableWay)]
        );
        // Line fetch: each fill brings the whole row segment, so the next 31 words of
        // warp 0 hit...
        let mut done = vec![];
        for row in 0..32u64 {
            c.fill(c.line_of(row * 4096), SectorMask::first(4), &mut done);
        }
        assert_eq!(done.len(), 32);
        assert_eq!(row_walk_load(&mut c, 0, 1), vec![Hit; 32]);
        // ... unless warp 2 gets there first: its misses evict warp 0's filled lines
        // (least recently used), and warp 0 misses again.
        let mut c2: Cache<u32> = Cache::new(&gtx480_l1d(&[]));
        row_walk_load(&mut c2, 0, 0);
        for row in 0..32u64 {
            c2.fill(c2.line_of(row * 4096), SectorMask::first(4), &mut done);
        }
        assert_eq!(row_walk_load(&mut c2, 2, 0), vec![Miss; 32]);
        assert_eq!(
            row_walk_load(&mut c2, 0, 1)[0],
            ReservationFail(NoEvictableWay)
        );

        // Allocate-on-fill reserves no way: warp 2 is accepted while warp 0's fills are in
        // flight; only the MSHR count refuses it.
        let on_fill = ["l1d.allocation=on_fill", "l1d.mshrs=128"];
        let mut c: Cache<u32> = Cache::new(&gtx480_l1d(&on_fill));
        row_walk_load(&mut c, 0, 0);
        row_walk_load(&mut c, 1, 0);
        assert_eq!(row_walk_load(&mut c, 2, 0), vec![Miss; 32]);
        let mut c: Cache<u32> = Cache::new(&gtx480_l1d(&["l1d.mshrs=40"]));
        row_walk_load(&mut c, 0, 0);
        let w1 = row_walk_load(&mut c, 1, 0);
        assert_eq!(
            w1,
            [vec![Miss; 8], vec![ReservationFail(MshrFull)]].concat()
        );
    }

    #[test]
    fn miss_then_fill_then_hit() {
        let mut c: Cache<u32> = Cache::new(&cfg(4096, 4, 4, 4)); // 8 sets
        let l = LineAddr(0x1000);
        let a = c.access(l, ALL, CacheOp::Read, 7);
        assert_eq!(a.outcome, Outcome::Miss);
        assert_eq!(a.fetch, ALL);
        assert_eq!(c.free_mshrs(), 3);
        let mut done = vec![];
        c.fill(l, ALL, &mut done);
        assert_eq!(done, vec![7]);
        assert_eq!(c.free_mshrs(), 4);
        assert_eq!(
            c.access(l, SectorMask(0b10), CacheOp::Read, 8).outcome,
            Outcome::Hit
        );
        let s = c.stats();
        assert_eq!((s.reads, s.hits, s.misses, s.sectors_fetched), (2, 1, 1, 4));
    }

    #[test]
    fn merges_into_in_flight_line_and_counts_them() {
        let mut c: Cache<u32> = Cache::new(&cfg(4096, 4, 4, 3));
        let l = LineAddr(0x2000);
        assert_eq!(
            c.access(l, SectorMask(0b0011), CacheOp::Read, 1).outcome,
            Outcome::Miss
        );
        // Subset of the in-flight sectors: merge, nothing new fetched.
        let m = c.access(l, SectorMask(0b0001), CacheOp::Read, 2);
        assert_eq!(
            (m.outcome, m.fetch),
            (Outcome::MshrMerge, SectorMask::EMPTY)
        );
        // Needs one more sector: a sector miss that fetches only that one.
        let s = c.access(l, SectorMask(0b0110), CacheOp::Read, 3);
        assert_eq!(
            (s.outcome, s.fetch),
            (Outcome::SectorMiss, SectorMask(0b0100))
        );
        // Entry holds three requests: the fourth is refused.
        let f = c.access(l, SectorMask(0b0001), CacheOp::Read, 4);
        assert_eq!(
            f.outcome,
            Outcome::ReservationFail(ReservationFailure::MergeFull)
        );
        assert_eq!(c.stats().mshr_merges, 1);
        assert_eq!(c.stats().reservation_fails, 1);
        let mut done = vec![];
        c.fill(l, SectorMask(0b0011), &mut done);
        assert_eq!(done, vec![1, 2]);
        assert_eq!(c.free_mshrs(), 3, "entry stays while sector 2 is in flight");
        c.fill(l, SectorMask(0b0100), &mut done);
        assert_eq!(done, vec![1, 2, 3]);
        assert_eq!(c.free_mshrs(), 4);
    }

    #[test]
    fn mshr_full_is_a_reservation_failure_that_changes_nothing() {
        let mut c: Cache<u32> = Cache::new(&cfg(4096, 4, 2, 4));
        c.access(LineAddr(0), ALL, CacheOp::Read, 0);
        c.access(LineAddr(128), ALL, CacheOp::Read, 1);
        let f = c.access(LineAddr(256), ALL, CacheOp::Read, 2);
        assert_eq!(
            f.outcome,
            Outcome::ReservationFail(ReservationFailure::MshrFull)
        );
        assert_eq!(c.stats().reads, 2);
        assert!(!c.contains(LineAddr(256), SectorMask::EMPTY));
    }

    #[test]
    fn lru_evicts_least_recently_used_and_writes_back_dirty() {
        let sets = 8;
        let mut c: Cache<u32> = Cache::new(&cfg(4096, 4, 8, 4));
        let mut done = vec![];
        for i in 0..4 {
            let l = addr(3, i, sets);
            c.access(l, ALL, CacheOp::Read, 0);
            c.fill(l, ALL, &mut done);
        }
        c.access(addr(3, 1, sets), SectorMask(1), CacheOp::Write, 0); // dirty, and MRU
        c.access(addr(3, 0, sets), ALL, CacheOp::Read, 0); // line 0 now more recent than 2, 3
        let a = c.access(addr(3, 4, sets), ALL, CacheOp::Read, 0);
        assert_eq!(a.outcome, Outcome::Miss);
        assert_eq!(a.eviction, None, "victim is line 2 (clean)");
        assert!(!c.contains(addr(3, 2, sets), SectorMask::EMPTY));
        c.fill(addr(3, 4, sets), ALL, &mut done);
        c.access(addr(3, 5, sets), ALL, CacheOp::Read, 0); // evicts 3
        c.fill(addr(3, 5, sets), ALL, &mut done);
        c.access(addr(3, 6, sets), ALL, CacheOp::Read, 0); // evicts 1, dirty
        let e = c.access(addr(3, 7, sets), ALL, CacheOp::Read, 0).eviction; // evicts 0
        assert_eq!(e, None);
        assert_eq!(c.stats().writebacks, 1);
        assert!(!c.contains(addr(3, 1, sets), SectorMask::EMPTY));
    }

    /// The way index of a highly associative cache answers as a scan of the tags would,
    /// through misses, fills, evictions of dirty lines, data-way reservation and
    /// invalidation; and the cache behaves as one below the index threshold does.
    #[test]
    fn the_way_index_agrees_with_a_scan_of_the_tags() {
        let (ways, sets) = (WAY_INDEX_MIN_WAYS as u32 * 2, 4u64);
        let size = u64::from(ways) * sets * 128;
        let mut indexed: Cache<u32> = Cache::new(&cfg(size, ways, 512, 4));
        assert!(indexed.way_index.is_some());
        let scan = |c: &Cache<u32>, line: LineAddr| {
            let base = c.set_base(line);
            c.tags[base..base + c.ways]
                .iter()
                .position(|&t| t == line.0)
                .map(|w| base + w)
        };
        let check = |c: &Cache<u32>| {
            for i in 0..3 * u64::from(ways) {
                for set in 0..sets {
                    let line = addr(set, i, sets);
                    assert_eq!(c.find_way(line), scan(c, line), "line {line:?}");
                }
            }
        };
        let mut done = vec![];
        let mut x: u64 = 99;
        let mut filled = 0;
        for step in 0..4000u32 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let line = addr((x >> 33) % sets, (x >> 40) % (2 * u64::from(ways)), sets);
            let op = if (x >> 20).is_multiple_of(4) {
                CacheOp::Write
            } else {
                CacheOp::Read
            };
            let a = indexed.access(line, ALL, op, step);
            if matches!(a.outcome, Outcome::Miss | Outcome::SectorMiss) {
                indexed.fill(line, a.fetch, &mut done);
                filled += 1;
            }
            if step % 1000 == 999 {
                check(&indexed);
                let mut evicted = vec![];
                assert!(indexed.set_data_ways(ways as usize / 2 + step as usize % 3, &mut evicted));
                check(&indexed);
                indexed.invalidate(&mut evicted);
                check(&indexed);
            }
        }
        check(&indexed);
        assert!(filled > 1000 && indexed.stats().evictions > 100);
    }

    /// The use order of a highly associative cache picks the victim a comparison of every
    /// way's last use would, with lines locked by outstanding fills (completed out of
    /// order), empty ways after invalidation and data-way reservation, under both
    /// allocation policies.
    #[test]
    fn mshr_entries_follow_their_lines_between_ways_and_the_index() {
        // Sector misses on present lines, fills out of order, evictions of lines with a
        // fetch in flight (allocate-on-fill), invalidations: after every step, a line is
        // fetching exactly when a reference of the sectors in flight says so, and each
        // live entry is held once, by its line's way or (in no way) by the index.
        for allocation in [AllocationPolicy::OnMiss, AllocationPolicy::OnFill] {
            let (ways, sets) = (4u32, 8u64);
            let mut config = cfg(u64::from(ways) * sets * 128, ways, 12, 3);
            config.allocation = allocation;
            let mut c: Cache<u32> = Cache::new(&config);
            let universe: Vec<LineAddr> = (0..sets)
                .flat_map(|s| (0..3 * u64::from(ways)).map(move |i| addr(s, i, sets)))
                .collect();
            let mut reference: HashMap<u64, SectorMask> = HashMap::new();
            let check = |c: &Cache<u32>, reference: &HashMap<u64, SectorMask>| {
                for &line in &universe {
                    assert_eq!(
                        c.fetching(line),
                        reference.contains_key(&line.0),
                        "{line:?}"
                    );
                }
                let in_ways = c.way_mshr.iter().filter(|&&e| e != NO_ENTRY).count();
                assert_eq!(in_ways + c.mshr_index.len(), reference.len());
                assert_eq!(c.free_mshrs(), c.mshrs.len() - reference.len());
                for (w, &e) in c.way_mshr.iter().enumerate() {
                    assert!(e == NO_ENTRY || c.tags[w] != FREE);
                }
            };
            let (mut done, mut in_flight, mut evicted) = (vec![], vec![], vec![]);
            let mut x: u64 = 11;
            let mut wayless = 0;
            for step in 0..20_000u32 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                if (x >> 60) < 6 && !in_flight.is_empty() {
                    let i = (x >> 8) as usize % in_flight.len();
                    let (line, fetch): (LineAddr, SectorMask) = in_flight.swap_remove(i);
                    c.fill(line, fetch, &mut done);
                    let left = reference[&line.0].minus(fetch);
                    if left.is_empty() {
                        reference.remove(&line.0);
                    } else {
                        reference.insert(line.0, left);
                    }
                } else {
                    let line = universe[(x >> 33) as usize % universe.len()];
                    let sectors = SectorMask(((x >> 44) as u32 % 15) + 1);
                    let op = if (x >> 20).is_multiple_of(6) {
                        CacheOp::Write
                    } else {
                        CacheOp::Read
                    };
                    let a = c.access(line, sectors, op, step);
                    if !a.fetch.is_empty() {
                        in_flight.push((line, a.fetch));
                        let p = reference.entry(line.0).or_insert(SectorMask::EMPTY);
                        *p = p.union(a.fetch);
                    }
                }
                check(&c, &reference);
                wayless = wayless.max(c.mshr_index.len());
                if step % 2500 == 2499 {
                    c.invalidate(&mut evicted);
                    check(&c, &reference);
                }
            }
            assert!(c.stats().sector_misses > 100 && c.stats().evictions > 1000);
            // Allocate-on-fill keeps its entries in the index; allocate-on-miss, whose
            // lines keep their locked ways, never does.
            assert_eq!(wayless > 0, allocation == AllocationPolicy::OnFill);
        }
    }

    #[test]
    fn the_use_order_picks_the_victim_a_scan_would() {
        for allocation in [AllocationPolicy::OnMiss, AllocationPolicy::OnFill] {
            let (ways, sets) = (WAY_INDEX_MIN_WAYS as u32 * 2, 4u64);
            let mut config = cfg(u64::from(ways) * sets * 128, ways, 24, 4);
            config.allocation = allocation;
            let mut c: Cache<u32> = Cache::new(&config);
            assert!(c.lru.is_some());
            let check = |c: &Cache<u32>| {
                for base in (0..c.lines.len()).step_by(c.ways) {
                    assert_eq!(c.choose_victim(base), c.choose_victim_by_scan(base));
                }
            };
            let (mut done, mut in_flight, mut evicted) = (vec![], vec![], vec![]);
            let (mut x, mut victims): (u64, u64) = (7, 0);
            for step in 0..20_000u32 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                if (x >> 60) < 5 && !in_flight.is_empty() {
                    let (line, fetch) = in_flight.swap_remove((x >> 8) as usize % in_flight.len());
                    c.fill(line, fetch, &mut done);
                } else {
                    let line = addr((x >> 33) % sets, (x >> 40) % (3 * u64::from(ways)), sets);
                    let op = if (x >> 20).is_multiple_of(5) {
                        CacheOp::Write
                    } else {
                        CacheOp::Read
                    };
                    let a = c.access(line, ALL, op, step);
                    if !a.fetch.is_empty() {
                        in_flight.push((line, a.fetch));
                    }
                    victims += u64::from(a.eviction.is_some());
                }
                check(&c);
                if step % 2500 == 2499 {
                    c.invalidate(&mut evicted);
                    check(&c);
                    if in_flight.is_empty() {
                        let n = ways as usize / 2 + step as usize % 7;
                        assert!(c.set_data_ways(n, &mut evicted));
                        check(&c);
                    }
                }
            }
            assert!(
                c.stats().evictions > 1000 && victims > 100,
                "{:?}",
                c.stats()
            );
            assert!(c.stats().reservation_fails > 0);
        }
    }

    #[test]
    fn allocate_on_miss_locks_ways_until_fill() {
        let sets = 16;
        let mut c: Cache<u32> = Cache::new(&cfg(4096, 2, 8, 4));
        c.access(addr(0, 0, sets), ALL, CacheOp::Read, 0);
        c.access(addr(0, 1, sets), ALL, CacheOp::Read, 0);
        let f = c.access(addr(0, 2, sets), ALL, CacheOp::Read, 0);
        assert_eq!(
            f.outcome,
            Outcome::ReservationFail(ReservationFailure::NoEvictableWay)
        );
        let mut done = vec![];
        c.fill(addr(0, 0, sets), ALL, &mut done);
        assert_eq!(
            c.access(addr(0, 2, sets), ALL, CacheOp::Read, 0).outcome,
            Outcome::Miss
        );
    }

    #[test]
    fn allocate_on_fill_does_not_lock() {
        let sets = 16;
        let mut conf = cfg(4096, 2, 8, 4);
        conf.allocation = AllocationPolicy::OnFill;
        let mut c: Cache<u32> = Cache::new(&conf);
        for i in 0..3 {
            assert_eq!(
                c.access(addr(0, i, sets), ALL, CacheOp::Read, 0).outcome,
                Outcome::Miss
            );
        }
        assert!(!c.contains(addr(0, 0, sets), SectorMask(1)));
        let mut done = vec![];
        for i in 0..3 {
            c.fill(addr(0, i, sets), ALL, &mut done);
        }
        assert!(
            !c.contains(addr(0, 0, sets), SectorMask(1)),
            "first line evicted at third fill"
        );
        assert!(c.contains(addr(0, 2, sets), ALL));
    }

    #[test]
    fn write_through_no_allocate_forwards_and_does_not_allocate() {
        let mut conf = cfg(4096, 4, 4, 4);
        conf.write_policy = WritePolicy::WriteThrough;
        conf.write_allocate = false;
        let mut c: Cache<u32> = Cache::new(&conf);
        let w = c.access(LineAddr(0), SectorMask(1), CacheOp::Write, 0);
        assert_eq!((w.outcome, w.forward_write), (Outcome::Miss, true));
        assert!(!c.contains(LineAddr(0), SectorMask(1)));
        let mut done = vec![];
        c.access(LineAddr(0), ALL, CacheOp::Read, 0);
        c.fill(LineAddr(0), ALL, &mut done);
        let h = c.access(LineAddr(0), SectorMask(1), CacheOp::Write, 0);
        assert_eq!((h.outcome, h.forward_write), (Outcome::Hit, true));
        // Never dirty: evicting it writes nothing back.
        for i in 1..=4 {
            let l = LineAddr(i * 8 * 128);
            c.access(l, ALL, CacheOp::Read, 0);
            c.fill(l, ALL, &mut done);
        }
        assert_eq!(c.stats().writebacks, 0);
        assert_eq!(c.stats().evictions, 1);
    }

    #[test]
    fn write_back_allocate_write_needs_no_fetch_and_partial_read_sector_misses() {
        let mut c: Cache<u32> = Cache::new(&cfg(4096, 4, 4, 4));
        let w = c.access(LineAddr(0), SectorMask(0b0001), CacheOp::Write, 0);
        assert_eq!(
            (w.outcome, w.fetch, w.forward_write),
            (Outcome::Miss, SectorMask::EMPTY, false)
        );
        assert_eq!(
            c.access(LineAddr(0), SectorMask(0b0001), CacheOp::Read, 0)
                .outcome,
            Outcome::Hit
        );
        let s = c.access(LineAddr(0), SectorMask(0b0011), CacheOp::Read, 0);
        assert_eq!(
            (s.outcome, s.fetch),
            (Outcome::SectorMiss, SectorMask(0b0010))
        );
    }

    #[test]
    fn data_ways_can_be_reserved_for_a_register_file() {
        let sets = 8;
        let mut c: Cache<u32> = Cache::new(&cfg(4096, 4, 8, 4));
        let mut done = vec![];
        for i in 0..4 {
            c.access(addr(1, i, sets), SectorMask(1), CacheOp::Write, 0);
        }
        let mut ev = vec![];
        assert!(c.set_data_ways(1, &mut ev));
        assert_eq!(ev.len(), 3);
        c.access(addr(2, 0, sets), ALL, CacheOp::Read, 0);
        let f = c.access(addr(2, 1, sets), ALL, CacheOp::Read, 0);
        assert_eq!(
            f.outcome,
            Outcome::ReservationFail(ReservationFailure::NoEvictableWay)
        );
        assert!(
            !c.set_data_ways(4, &mut ev),
            "refused while a fill is outstanding"
        );
        c.fill(addr(2, 0, sets), ALL, &mut done);
        assert!(c.set_data_ways(4, &mut ev));
    }

    #[test]
    fn line_fetch_brings_the_whole_line_and_sector_fetch_only_what_was_asked() {
        let mut line_cfg = cfg(4096, 4, 4, 4);
        line_cfg.fetch = FetchGranularity::Line;
        let mut c: Cache<u32> = Cache::new(&line_cfg);
        let a = c.access(LineAddr(0), SectorMask(0b0010), CacheOp::Read, 1);
        assert_eq!((a.outcome, a.fetch), (Outcome::Miss, ALL));
        let mut s: Cache<u32> = Cache::new(&cfg(4096, 4, 4, 4));
        let a = s.access(LineAddr(0), SectorMask(0b0010), CacheOp::Read, 1);
        assert_eq!((a.outcome, a.fetch), (Outcome::Miss, SectorMask(0b0010)));
        // After the fill, the line cache hits on another sector; the sector cache misses.
        let mut done = vec![];
        c.fill(LineAddr(0), ALL, &mut done);
        s.fill(LineAddr(0), SectorMask(0b0010), &mut done);
        assert_eq!(
            c.access(LineAddr(0), SectorMask(0b1000), CacheOp::Read, 2)
                .outcome,
            Outcome::Hit
        );
        let b = s.access(LineAddr(0), SectorMask(0b1000), CacheOp::Read, 2);
        assert_eq!(
            (b.outcome, b.fetch),
            (Outcome::SectorMiss, SectorMask(0b1000))
        );
    }

    /// Hits after reading, twice, one line per 4 KB row of 32 rows (a warp whose lanes
    /// each walk their own row of a 1024-float matrix) in a 16 KB 4-way cache.
    fn row_walk_hits(set_index: crate::memory::hashing::IndexFunction) -> u64 {
        let mut conf = cfg(16384, 4, 64, 8); // 32 sets
        conf.set_index = set_index;
        let mut c: Cache<u32> = Cache::new(&conf);
        let mut done = vec![];
        for _pass in 0..2 {
            for row in 0..32u64 {
                let l = LineAddr(0x1_0000_0000 + row * 4096);
                if c.access(l, ALL, CacheOp::Read, 0).outcome == Outcome::Miss {
                    c.fill(l, ALL, &mut done);
                }
            }
        }
        c.stats().hits
    }

    #[test]
    fn hashed_set_index_keeps_rows_4kb_apart_that_linear_indexing_thrashes() {
        use crate::memory::hashing::IndexFunction;
        // Linear: all 32 lines in one 4-way set, LRU over 32 > 4: no hit on the reread.
        assert_eq!(row_walk_hits(IndexFunction::Linear), 0);
        // Fermi XOR hash: 8 sets x 4 ways hold all 32 lines.
        let xor = IndexFunction::Xor {
            bits: vec![13, 14, 15, 17, 19],
        };
        assert_eq!(row_walk_hits(xor), 32);
        // IPOLY: 32 sets.
        assert_eq!(
            row_walk_hits(IndexFunction::Polynomial { polynomial: 37 }),
            32
        );
    }

    #[test]
    fn partitioned_index_ignores_the_channel_bits() {
        // 6 channels interleaved every 256 bytes: a slice sees 256-byte chunks 1536 bytes
        // apart. Indexed by the raw address (line numbers 12k and 12k + 1 modulo 32) they
        // use 8 x 2 = 16 of 32 sets; by the channel-local address, where the chunks are
        // consecutive, all 32.
        let sets_used = |partition: bool| {
            let mut c: Cache<u32> = Cache::new(&cfg(16384, 4, 4, 4));
            if partition {
                c.set_partition(8, 6);
            }
            let mut seen = std::collections::BTreeSet::new();
            for k in 0..64u64 {
                for half in 0..2u64 {
                    seen.insert(c.set_base(LineAddr(k * 1536 + half * 128)) / 4);
                }
            }
            seen.len()
        };
        assert_eq!(sets_used(false), 16);
        assert_eq!(sets_used(true), 32);
    }

    #[test]
    fn perfect_cache_always_hits_and_invalidate_keeps_counters() {
        let mut conf = cfg(4096, 4, 4, 4);
        conf.perfect = true;
        let mut p: Cache<u32> = Cache::new(&conf);
        for i in 0..100 {
            let a = p.access(LineAddr(i * 128), ALL, CacheOp::Read, 0);
            assert_eq!((a.outcome, a.fetch), (Outcome::Hit, SectorMask::EMPTY));
        }
        let mut c: Cache<u32> = Cache::new(&cfg(4096, 4, 4, 4));
        let mut done = vec![];
        c.access(LineAddr(0), ALL, CacheOp::Read, 0);
        c.fill(LineAddr(0), ALL, &mut done);
        c.access(LineAddr(128), SectorMask(0b1), CacheOp::Write, 0);
        assert!(c.contains(LineAddr(0), ALL));
        let mut evicted = vec![];
        c.invalidate(&mut evicted);
        assert!(!c.contains(LineAddr(0), ALL));
        assert_eq!(
            evicted,
            [Eviction {
                line: LineAddr(128),
                dirty: SectorMask(0b1)
            }]
        );
        assert_eq!(
            (c.stats().reads, c.stats().writes, c.stats().misses),
            (1, 1, 2)
        );
    }

    /// `(sector_accesses, sector_access_misses, sector_pending_hits)`.
    fn sector_counts(c: &Cache<u32>) -> (u64, u64, u64) {
        let s = c.stats();
        (
            s.sector_accesses,
            s.sector_access_misses,
            s.sector_pending_hits,
        )
    }

    #[test]
    fn sector_counts_of_reads_miss_merge_sector_miss_hit() {
        let mut c: Cache<u32> = Cache::new(&cfg(4096, 4, 4, 4));
        let l = LineAddr(0x3000);
        // A 128-byte read of an absent line: four sector accesses, four sector misses.
        c.access(l, ALL, CacheOp::Read, 1);
        assert_eq!(sector_counts(&c), (4, 4, 0));
        // Two sectors, both in flight: two pending hits, no miss.
        c.access(l, SectorMask(0b0011), CacheOp::Read, 2);
        assert_eq!(sector_counts(&c), (6, 4, 2));
        let mut done = vec![];
        c.fill(l, ALL, &mut done);
        // A one-sector hit.
        c.access(l, SectorMask(0b1000), CacheOp::Read, 3);
        assert_eq!(sector_counts(&c), (7, 4, 2));
        // Line-level counters unchanged in meaning: 3 reads, 1 miss, 1 merge, 1 hit.
        let s = c.stats();
        assert_eq!((s.reads, s.misses, s.mshr_merges, s.hits), (3, 1, 1, 1));

        // A present line missing one of two requested sectors: one sector miss, one
        // present sector (a hit), nothing pending.
        let m = LineAddr(0x4000);
        c.access(m, SectorMask(0b0001), CacheOp::Read, 4);
        c.fill(m, SectorMask(0b0001), &mut done);
        c.access(m, SectorMask(0b0011), CacheOp::Read, 5);
        assert_eq!(sector_counts(&c), (7 + 1 + 2, 4 + 1 + 1, 2));
        assert_eq!(c.stats().sector_misses, 1);
    }

    #[test]
    fn sector_counts_in_line_fetch_mode_count_only_requested_sectors() {
        let mut conf = cfg(4096, 4, 4, 4);
        conf.fetch = FetchGranularity::Line;
        let mut c: Cache<u32> = Cache::new(&conf);
        let a = c.access(LineAddr(0x1000), SectorMask(0b0001), CacheOp::Read, 1);
        assert_eq!(a.fetch, ALL);
        assert_eq!(sector_counts(&c), (1, 1, 0));
        assert_eq!(c.stats().sectors_fetched, 4);
    }

    #[test]
    fn sector_counts_of_writes_and_reservation_failures() {
        let mut c: Cache<u32> = Cache::new(&cfg(4096, 4, 1, 4));
        let l = LineAddr(0x1000);
        // Write-allocate, absent line: two sectors written, both misses.
        c.access(l, SectorMask(0b0011), CacheOp::Write, 0);
        assert_eq!(sector_counts(&c), (2, 2, 0));
        // Same line, one valid sector and one new: one miss.
        c.access(l, SectorMask(0b0110), CacheOp::Write, 0);
        assert_eq!(sector_counts(&c), (4, 3, 0));
        // Read of sector 3 (not valid): a sector miss taking the only MSHR.
        c.access(l, SectorMask(0b1000), CacheOp::Read, 1);
        assert_eq!(sector_counts(&c), (5, 4, 0));
        // A write to the in-flight sector: a pending hit.
        c.access(l, SectorMask(0b1000), CacheOp::Write, 0);
        assert_eq!(sector_counts(&c), (6, 4, 1));
        // A read of another line finds no MSHR: refused, not counted.
        let f = c.access(LineAddr(0x8000), ALL, CacheOp::Read, 2);
        assert_eq!(
            f.outcome,
            Outcome::ReservationFail(ReservationFailure::MshrFull)
        );
        assert_eq!(sector_counts(&c), (6, 4, 1));

        // Write-through without allocation: written around the cache, all misses.
        let mut conf = cfg(4096, 4, 4, 4);
        conf.write_policy = WritePolicy::WriteThrough;
        conf.write_allocate = false;
        let mut c: Cache<u32> = Cache::new(&conf);
        c.access(l, ALL, CacheOp::Write, 0);
        c.access(l, ALL, CacheOp::Write, 0);
        assert_eq!(sector_counts(&c), (8, 8, 0));
    }
}

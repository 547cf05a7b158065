//! The modern core's front end (`sm.core = "modern"`): each sub-core fetches for its own
//! warps through its own L0 instruction cache, after Huerta et al., "Dissecting and
//! Modeling the Architecture of Modern GPU Cores" (MICRO 2025, arXiv:2503.20481, its
//! front-end section).
//!
//! Model:
//! - every cycle each sub-core picks one of its warps (round robin) whose instruction
//!   buffer has room (`sm.ibuffer_entries`) and no fetch pending, and refills the buffer:
//!   a single warp keeps one instruction per cycle flowing, which the collector core's
//!   fetch (one warp per SM, only into an empty buffer) cannot (`regsim calibrate`'s
//!   `fp32_indep`);
//! - the line of the warp's PC is looked up in the sub-core's L0 instruction cache
//!   (`sm.l0_icache`: its size and ways, by default [`L0_BYTES`], [`L0_WAYS`]-way; LRU,
//!   the SM instruction cache's line size): a hit
//!   fills the buffer the next cycle; a miss goes to the SM's instruction cache through
//!   the memory system (one line per cycle per SM; the other sub-cores retry) and the
//!   line is placed in the L0.
//!
//! - with `sm.l0_stream_buffer = N` (the modern configs: 16), a **stream buffer** of `N`
//!   lines sits beside each L0 (MICRO'25 §5.2 finds that "a simple scheme like a stream
//!   buffer that prefetches successive memory blocks when a miss occurs" explains the
//!   measured front end, with 16 entries; NVIDIA's design is not published): a fetch that
//!   misses both the L0 and the buffer goes to the SM's instruction cache and restarts
//!   the stream at the next line, dropping the buffer's lines, and the stream ends at the
//!   last line of that fetch's function (no request for lines past the code); every
//!   cycle each sub-core whose buffer has a free entry requests its stream's next line
//!   (after the demand fetches of every sub-core, through the same port of the SM's
//!   instruction cache, skipping lines its L0 holds), except in a cycle where a demand
//!   fetch was refused or a memory instruction of the SM waits for the memory system:
//!   prefetches take only what demand fetches and data accesses leave; a fetch that
//!   misses the L0 but finds its line in the
//!   buffer takes it (a **useful prefetch**, moved into the L0; the lines before it are
//!   dropped), at once if it has arrived, else when it arrives.
//!
//! Not modelled: a fetch priority that follows the issue scheduler.

use super::{inst_address, set_owner, Owner, Sm};
use crate::config::GpuConfig;
use crate::kernel_info::KernelInfo;
use crate::memory::cache::{LineAddr, SectorMask};
use crate::memory::coalescer::LineAccess;
use crate::memory::{AccessKind, MemRequest, SmPort, Space};
use crate::time::{Cycle, Cycles};
use ir::InstId;

/// L0 instruction cache capacity per sub-core without `sm.l0_icache`: 16 KB, Jia et
/// al.'s measurement on Turing ("Dissecting the NVidia Turing T4 GPU via
/// Microbenchmarking", arXiv:1903.07486).
pub const L0_BYTES: u32 = 16 * 1024;
/// Ways of the L0 without `sm.l0_icache` (assumed).
pub const L0_WAYS: u32 = 4;

/// One sub-core's L0 instruction cache: `ways` tags per set, most recently used first.
#[derive(Clone, Debug)]
struct L0Cache {
    tags: Vec<Option<u64>>,
    ways: usize,
    sets: u64,
}

impl L0Cache {
    /// `size_bytes` of `line_bytes` lines, `ways` per set (validated: a whole number of
    /// sets; the `max` calls only keep a bad value from dividing by zero).
    fn new(size_bytes: u32, ways: u32, line_bytes: u64) -> Self {
        let ways = ways.max(1) as usize;
        let lines = (u64::from(size_bytes) / line_bytes.max(1)).max(ways as u64);
        let sets = (lines / ways as u64).max(1);
        L0Cache {
            tags: vec![None; sets as usize * ways],
            ways,
            sets,
        }
    }

    /// Whether `line` (a line number) is held; a hit makes it the most recently used.
    fn hit(&mut self, line: u64) -> bool {
        let set = self.set(line);
        let Some(at) = set.iter().position(|&t| t == Some(line)) else {
            return false;
        };
        set.copy_within(0..at, 1);
        set[0] = Some(line);
        true
    }

    /// Whether `line` is held (no change to the recency order).
    fn holds(&self, line: u64) -> bool {
        let at = (line % self.sets) as usize * self.ways;
        self.tags[at..at + self.ways].contains(&Some(line))
    }

    /// Places `line` as the most recently used of its set, evicting the least.
    fn install(&mut self, line: u64) {
        let ways = self.ways;
        let set = self.set(line);
        set.copy_within(0..ways - 1, 1);
        set[0] = Some(line);
    }

    fn set(&mut self, line: u64) -> &mut [Option<u64>] {
        let at = (line % self.sets) as usize * self.ways;
        &mut self.tags[at..at + self.ways]
    }
}

/// One line of a stream buffer: requested, arrived or not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Prefetched {
    line: u64,
    arrived: bool,
    /// A fetch took it before it arrived (its warps wait in [`StreamBuffer::waiting`]).
    claimed: bool,
}

/// One sub-core's stream buffer (see the module docs): the lines requested, oldest first,
/// the next line of the stream, and the fetches waiting for a line in flight.
#[derive(Clone, Debug, Default)]
struct StreamBuffer {
    lines: Vec<Prefetched>,
    /// The next line to request; `None` before the first miss and once the stream has
    /// passed `end`.
    next: Option<u64>,
    /// The last line of the code the stream runs in (the missing fetch's function): the
    /// stream stops there instead of requesting lines that hold no instruction.
    end: u64,
    /// Warps whose fetch missed the L0 and found its line requested but not arrived.
    waiting: Vec<(u16, u64)>,
}

impl StreamBuffer {
    /// Restarts the stream after a demand miss of `line`: its lines are dropped (their
    /// requests complete for the fetches waiting on them, if any).
    fn restart(&mut self, line: u64, end: u64) {
        self.lines.clear();
        self.end = end;
        self.next = (line < end).then_some(line + 1);
    }

    /// Whether the stream has a line to request and an entry to hold it.
    fn wants(&self, cap: usize) -> bool {
        self.next.is_some() && self.lines.len() < cap
    }

    /// Takes `line` for a fetch that missed the L0: its position, with the lines before
    /// it dropped.
    fn find(&mut self, line: u64) -> Option<usize> {
        let at = self.lines.iter().position(|p| p.line == line)?;
        self.lines.drain(..at);
        Some(0)
    }
}

/// The per-sub-core fetch state of one SM.
#[derive(Clone, Debug)]
pub(super) struct FrontEnd {
    l0: Vec<L0Cache>,
    /// Per sub-core: the position among its warps to start the round robin from.
    rr: Vec<usize>,
    /// Per sub-core stream buffers; empty without `sm.l0_stream_buffer`.
    streams: Vec<StreamBuffer>,
    /// Lines per stream buffer.
    stream_lines: usize,
}

impl FrontEnd {
    /// Whether a stream buffer has a line to request (its SM must not sleep through the
    /// cycle: the request would be late).
    pub fn wants_prefetch(&self) -> bool {
        self.streams.iter().any(|b| b.wants(self.stream_lines))
    }

    pub fn new(cfg: &GpuConfig) -> Self {
        let subs = cfg.sm.schedulers.max(1) as usize;
        let stream_lines = cfg.sm.l0_stream_buffer as usize;
        let (size, ways) = cfg
            .sm
            .l0_icache
            .map_or((L0_BYTES, L0_WAYS), |l0| (l0.size_bytes, l0.ways));
        FrontEnd {
            l0: (0..subs)
                .map(|_| L0Cache::new(size, ways, u64::from(cfg.icache.line_bytes)))
                .collect(),
            rr: vec![0; subs],
            streams: if stream_lines > 0 {
                vec![StreamBuffer::default(); subs]
            } else {
                Vec::new()
            },
            stream_lines,
        }
    }
}

impl Sm {
    /// The fetch stage of the modern core (see the module docs). Returns progress.
    pub(super) fn fetch_per_sub_core(
        &mut self,
        now: Cycle,
        info: &KernelInfo,
        port: &mut SmPort<'_>,
    ) -> bool {
        let Some(mut fe) = self.front_end.take() else {
            return false;
        };
        let subs = fe.rr.len();
        let per_sub = self.warps.len().div_ceil(subs);
        let mut progress = false;
        let mut demand_refused = false;
        for s in 0..subs {
            let Some(w) = self.next_fetchable(s, subs, fe.rr[s]) else {
                continue;
            };
            let warp = &self.warps[w];
            let line = inst_address(warp.func, warp.pc) / self.icache_line;
            let hit = fe.l0[s].hit(line);
            let streamed = if hit {
                None
            } else {
                fe.streams.get_mut(s).and_then(|b| {
                    let at = b.find(line)?;
                    Some((b, at))
                })
            };
            if hit {
                self.stats.l0_icache.hits += 1;
                self.warps[w].fetch_pending = true;
                self.memory_done(Owner::Fetch(w as u16), now + Cycles::new(1));
            } else if let Some((b, at)) = streamed {
                self.stats.l0_icache.useful_prefetches += 1;
                self.warps[w].fetch_pending = true;
                if b.lines[at].arrived {
                    b.lines.remove(at);
                    fe.l0[s].install(line);
                    self.memory_done(Owner::Fetch(w as u16), now + Cycles::new(1));
                } else {
                    b.lines[at].claimed = true;
                    b.waiting.push((w as u16, line));
                    self.sync_fetchable(w);
                }
            } else if !demand_refused && self.fetch_from_icache(w, now, port) {
                self.stats.l0_icache.misses += 1;
                fe.l0[s].install(line);
                if let Some(b) = fe.streams.get_mut(s) {
                    let func = self.warps[w].func;
                    let last = info.function(func).map_or(0, |f| f.len()).max(1) - 1;
                    b.restart(
                        line,
                        inst_address(func, InstId(last as u32)) / self.icache_line,
                    );
                }
            } else {
                // The SM's instruction cache refused; the sub-core tries again. (After a
                // refusal the other sub-cores' requests of this cycle are not made: the
                // refusal is the instruction cache port's state, whatever the line, and
                // nothing changes it before the next cycle.)
                demand_refused = true;
                continue;
            }
            fe.rr[s] = (w / subs + 1) % per_sub.max(1);
            progress = true;
        }
        // Prefetches take what demand leaves: none in a cycle whose demand fetch was
        // refused, and none while the SM's data accesses wait for the memory system.
        if !demand_refused && self.ldst.is_empty() {
            for s in 0..fe.streams.len() {
                progress |= self.prefetch(&mut fe, s, now, port);
            }
        }
        self.front_end = Some(fe);
        progress
    }

    /// Sub-core `s`'s stream buffer requests its stream's next line, if it has a free
    /// entry and the SM's instruction cache takes the request. Returns progress.
    fn prefetch(&mut self, fe: &mut FrontEnd, s: usize, now: Cycle, port: &mut SmPort<'_>) -> bool {
        let cap = fe.stream_lines;
        let b = &mut fe.streams[s];
        let Some(line) = b.next else {
            return false;
        };
        if b.lines.len() >= cap {
            return false;
        }
        if line > b.end {
            b.next = None;
            return false;
        }
        if fe.l0[s].holds(line) {
            b.next = (line < b.end).then_some(line + 1);
            return true;
        }
        let lines = [LineAccess {
            line: LineAddr(line * self.icache_line),
            sectors: SectorMask::first((self.icache_line / self.icache_sector) as u32),
        }];
        let req = MemRequest {
            kind: AccessKind::Load,
            space: Space::Inst,
            lines: &lines,
        };
        let Ok(id) = port.issue(now, req) else {
            return false;
        };
        set_owner(
            &mut self.owners,
            id,
            Owner::Prefetch {
                sub: s as u16,
                line,
            },
        );
        b.lines.push(Prefetched {
            line,
            arrived: false,
            claimed: false,
        });
        b.next = (line < b.end).then_some(line + 1);
        self.stats.l0_icache.prefetches += 1;
        true
    }

    /// A line sub-core `s`'s stream buffer requested has arrived at `at`: the oldest
    /// entry of that line not yet arrived is marked; the fetches waiting for the line
    /// take it into the L0.
    pub(super) fn prefetch_arrived(&mut self, s: u16, line: u64, at: Cycle) {
        let Some(fe) = self.front_end.as_mut() else {
            return;
        };
        let Some(b) = fe.streams.get_mut(s as usize) else {
            return;
        };
        if let Some(k) = b.lines.iter().position(|p| !p.arrived && p.line == line) {
            if b.lines[k].claimed {
                b.lines.remove(k);
            } else {
                b.lines[k].arrived = true;
            }
        }
        if !b.waiting.iter().any(|&(_, l)| l == line) {
            return;
        }
        fe.l0[s as usize].install(line);
        let mut served = std::mem::take(&mut b.waiting);
        served.retain(|&(w, l)| {
            if l == line {
                self.memory_done(Owner::Fetch(w), at);
                false
            } else {
                true
            }
        });
        if let Some(b) = self
            .front_end
            .as_mut()
            .and_then(|fe| fe.streams.get_mut(s as usize))
        {
            b.waiting = served;
        }
    }

    /// Sub-core `s`'s first fetchable warp in round-robin order from its `from`-th warp
    /// slot: its slots are s, s + subs, ... (slot modulo schedulers), so the order is the
    /// fetchable slots from `s + subs * from` up, then from `s` up to there. Walks the
    /// members of the sub-core's own set (`fetchable_by_sub`), not every slot nor the
    /// other sub-cores' warps.
    fn next_fetchable(&self, s: usize, subs: usize, from: usize) -> Option<usize> {
        debug_assert_eq!(subs, self.fetchable_by_sub.len());
        let set = &self.fetchable_by_sub[s];
        set.next_member(from)
            .or_else(|| set.next_member(0).filter(|&i| i < from))
            .map(|i| s + subs * i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_l0_keeps_the_most_recent_lines_of_a_set() {
        let mut c = L0Cache::new(L0_BYTES, L0_WAYS, 128);
        let sets = c.sets;
        assert_eq!(sets, 32, "16 KB of 128 B lines, 4 ways");
        let mut access = |line| {
            let hit = c.hit(line);
            if !hit {
                c.install(line);
            }
            hit
        };
        assert!(!access(7));
        assert!(access(7));
        // Four more lines of the same set evict line 7, the least recently used.
        for k in 1..=4 {
            assert!(!access(7 + k * sets));
        }
        assert!(!access(7));
        // A line used again moves to the front and survives the next miss.
        assert!(access(7 + 4 * sets));
        assert!(!access(7 + 9 * sets));
        assert!(access(7 + 4 * sets));
    }

    #[test]
    fn the_l0_takes_its_geometry_from_the_config() {
        // qv100's 12 KB of 128 B lines in 4 ways: 24 sets, not a power of two.
        let mut c = L0Cache::new(12 * 1024, 4, 128);
        assert_eq!((c.sets, c.ways), (24, 4));
        for k in 0..4 {
            c.install(5 + k * 24);
        }
        assert!((0..4).all(|k| c.holds(5 + k * 24)));
        // A fifth line of set 5 evicts the least recently used; line 6 is another set.
        c.install(5 + 4 * 24);
        assert!(!c.holds(5) && c.holds(5 + 24) && !c.holds(6));
        // Direct mapped: each line evicts the one before it in its set.
        let mut d = L0Cache::new(1024, 1, 128);
        assert_eq!(d.sets, 8);
        d.install(3);
        d.install(11);
        assert!(!d.hit(3) && d.hit(11));
    }
}

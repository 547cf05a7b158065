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
//!   ([`L0_BYTES`], [`L0_WAYS`]-way, LRU, the SM instruction cache's line size): a hit
//!   fills the buffer the next cycle; a miss goes to the SM's instruction cache through
//!   the memory system (one line per cycle per SM; the other sub-cores retry) and the
//!   line is placed in the L0.
//!
//! Not modelled: the stream-buffer prefetcher MICRO'25 finds in front of the L0 (a miss
//! here fetches its own line only), a fetch priority that follows the issue scheduler.

use super::{inst_address, Ctx, Owner, Sm};
use crate::config::GpuConfig;
use crate::time::{Cycle, Cycles};

/// L0 instruction cache capacity per sub-core: 16 KB, Jia et al.'s measurement on
/// Turing ("Dissecting the NVidia Turing T4 GPU via Microbenchmarking", arXiv:1903.07486);
/// assumed for Ampere and Hopper, for which no figure with a source was found.
pub const L0_BYTES: u64 = 16 * 1024;
/// Ways of the L0 (assumed).
pub const L0_WAYS: usize = 4;

/// One sub-core's L0 instruction cache: tags per set, most recently used first.
#[derive(Clone, Debug)]
struct L0Cache {
    sets: Vec<[Option<u64>; L0_WAYS]>,
}

impl L0Cache {
    fn new(line_bytes: u64) -> Self {
        let lines = (L0_BYTES / line_bytes.max(1)).max(L0_WAYS as u64) as usize;
        L0Cache {
            sets: vec![[None; L0_WAYS]; lines / L0_WAYS],
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

    /// Places `line` as the most recently used of its set, evicting the least.
    fn install(&mut self, line: u64) {
        let set = self.set(line);
        set.copy_within(0..L0_WAYS - 1, 1);
        set[0] = Some(line);
    }

    fn set(&mut self, line: u64) -> &mut [Option<u64>; L0_WAYS] {
        let n = self.sets.len() as u64;
        &mut self.sets[(line % n) as usize]
    }
}

/// The per-sub-core fetch state of one SM.
#[derive(Clone, Debug)]
pub(super) struct FrontEnd {
    l0: Vec<L0Cache>,
    /// Per sub-core: the position among its warps to start the round robin from.
    rr: Vec<usize>,
}

impl FrontEnd {
    pub fn new(cfg: &GpuConfig) -> Self {
        let subs = cfg.sm.schedulers.max(1) as usize;
        FrontEnd {
            l0: (0..subs)
                .map(|_| L0Cache::new(u64::from(cfg.icache.line_bytes)))
                .collect(),
            rr: vec![0; subs],
        }
    }
}

impl Sm {
    /// The fetch stage of the modern core (see the module docs). Returns progress.
    pub(super) fn fetch_per_sub_core(&mut self, now: Cycle, ctx: &mut Ctx<'_, '_>) -> bool {
        let Some(mut fe) = self.front_end.take() else {
            return false;
        };
        let subs = fe.rr.len();
        let per_sub = self.warps.len().div_ceil(subs);
        let mut progress = false;
        for s in 0..subs {
            let Some(w) = self.next_fetchable(s, subs, fe.rr[s]) else {
                continue;
            };
            let warp = &self.warps[w];
            let line = inst_address(warp.func, warp.pc) / self.icache_line;
            if fe.l0[s].hit(line) {
                self.stats.l0_icache.hits += 1;
                self.warps[w].fetch_pending = true;
                self.memory_done(Owner::Fetch(w as u16), now + Cycles::new(1));
            } else if self.fetch_from_icache(w, now, ctx) {
                self.stats.l0_icache.misses += 1;
                fe.l0[s].install(line);
            } else {
                // The SM's instruction cache refused; the sub-core tries again.
                continue;
            }
            fe.rr[s] = (w / subs + 1) % per_sub.max(1);
            progress = true;
        }
        self.front_end = Some(fe);
        progress
    }

    /// Sub-core `s`'s first fetchable warp in round-robin order from its `from`-th warp
    /// slot: its slots are s, s + subs, ... (slot modulo schedulers), so the order is the
    /// fetchable slots from `s + subs * from` up, then from `s` up to there. Walks the
    /// members of `fetchable` (a memory-bound SM has few), not every slot.
    fn next_fetchable(&self, s: usize, subs: usize, from: usize) -> Option<usize> {
        let start = s + subs * from;
        let ours = |lo: usize, hi: usize| {
            let mut at = lo;
            while let Some(w) = self.fetchable.next_member(at).filter(|&w| w < hi) {
                if w % subs == s {
                    return Some(w);
                }
                at = w + 1;
            }
            None
        };
        let n = self.warps.len();
        ours(start, n).or_else(|| ours(s, start.min(n)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_l0_keeps_the_most_recent_lines_of_a_set() {
        let mut c = L0Cache::new(128);
        let sets = c.sets.len() as u64;
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
}

//! Shared memory (scratchpad) bank conflicts and the per-SM shared-memory port.
//!
//! `banks` banks of `bank_width_bytes`-byte words (32 x 4 bytes on Fermi and later);
//! word `w` lives in bank `w mod banks`. Lanes reading the same word are served together
//! (broadcast); distinct words in one bank are served in successive passes. An access of
//! 8 or 16 bytes per lane touches 2 or 4 consecutive words. The number of passes is the
//! largest number of distinct words any one bank must deliver.

use crate::config::{SharedMemoryConfig, WARP_SIZE};
use crate::time::{Cycle, Cycles};
use serde::Serialize;

/// Most words one warp access can touch (16 bytes per lane).
const MAX_WORDS: usize = WARP_SIZE as usize * 4;

/// Counts the serialized passes of a warp access.
#[derive(Clone, Copy, Debug)]
pub struct BankConflicts {
    banks: u64,
    word_shift: u32,
}

impl BankConflicts {
    /// A calculator for `banks` banks of `bank_width_bytes` (a power of two) each.
    pub fn new(banks: u32, bank_width_bytes: u32) -> Self {
        Self {
            banks: u64::from(banks.max(1)),
            word_shift: bank_width_bytes.trailing_zeros(),
        }
    }

    /// Passes needed by the lanes in `active_mask` each accessing `access_bytes` at
    /// `addrs[lane]`: 1 without conflicts, 0 when no lane is active.
    pub fn passes(
        &self,
        active_mask: u32,
        addrs: &[u64; WARP_SIZE as usize],
        access_bytes: u32,
    ) -> u32 {
        let words_per_lane = u64::from(access_bytes.max(1))
            .div_ceil(1 << self.word_shift)
            .min(4);
        // (bank, word) pairs, sorted so that equal words are adjacent within a bank.
        let mut pairs = [(0u64, 0u64); MAX_WORDS];
        let mut n = 0;
        let mut mask = active_mask;
        while mask != 0 {
            let lane = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            let first = addrs[lane] >> self.word_shift;
            for w in first..first + words_per_lane {
                pairs[n] = (w % self.banks, w);
                n += 1;
            }
        }
        let pairs = &mut pairs[..n];
        pairs.sort_unstable();
        let (mut best, mut run, mut prev) = (0u32, 0u32, None::<(u64, u64)>);
        for &p in pairs.iter() {
            match prev {
                Some(q) if q == p => continue,
                Some(q) if q.0 == p.0 => run += 1,
                _ => run = 1,
            }
            best = best.max(run);
            prev = Some(p);
        }
        best
    }
}

/// Shared memory counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SharedMemoryStats {
    /// Warp accesses.
    pub accesses: u64,
    /// Passes over all accesses (`accesses` if there were no conflicts).
    pub passes: u64,
    /// Extra passes caused by bank conflicts (`passes - accesses`).
    pub bank_conflicts: u64,
    /// Passes the tensor cores' `wgmma` operand reads took (not in `passes`; absent from
    /// the statistics when zero).
    #[serde(skip_serializing_if = "is_zero")]
    pub tensor_passes: u64,
    /// Write passes of atomics (`shared_memory.atomic_write_latency`; not in `passes`).
    #[serde(skip_serializing_if = "is_zero")]
    pub atomic_write_passes: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl std::ops::AddAssign for SharedMemoryStats {
    fn add_assign(&mut self, o: Self) {
        self.accesses += o.accesses;
        self.passes += o.passes;
        self.bank_conflicts += o.bank_conflicts;
        self.tensor_passes += o.tensor_passes;
        self.atomic_write_passes += o.atomic_write_passes;
    }
}

/// One SM's shared memory: a pipeline that accepts one pass per cycle.
#[derive(Clone, Debug)]
pub struct SharedMemory {
    conflicts: BankConflicts,
    latency: Cycles,
    /// `shared_memory.atomic_write_latency` (zero: atomics are one pass).
    atomic_write_latency: Cycles,
    free: Cycle,
    stats: SharedMemoryStats,
}

impl SharedMemory {
    /// Idle shared memory.
    pub fn new(cfg: &SharedMemoryConfig) -> Self {
        Self {
            conflicts: BankConflicts::new(cfg.banks, cfg.bank_width_bytes),
            latency: cfg.latency,
            atomic_write_latency: cfg.atomic_write_latency,
            free: Cycle::ZERO,
            stats: SharedMemoryStats::default(),
        }
    }

    /// Counters so far.
    pub fn stats(&self) -> &SharedMemoryStats {
        &self.stats
    }

    /// Starts a warp access at `now`. Returns the cycle its data is ready
    /// (`now + latency + passes - 1`), or `Err(c)` if the banks are busy until `c`.
    ///
    /// An `atomic` with `shared_memory.atomic_write_latency` is a read pass and then a
    /// write pass of the modified words: the banks are booked for both at once (the
    /// write's passes right after the read's: our simplification, which keeps one free
    /// cycle per SM), and the result returns when the write ends, `atomic_write_latency`
    /// plus the write's conflict passes after the read's data.
    pub fn access(
        &mut self,
        now: Cycle,
        active_mask: u32,
        addrs: &[u64; WARP_SIZE as usize],
        access_bytes: u32,
        atomic: bool,
    ) -> Result<Cycle, Cycle> {
        if self.free > now {
            return Err(self.free);
        }
        let passes = u64::from(
            self.conflicts
                .passes(active_mask, addrs, access_bytes)
                .max(1),
        );
        self.stats.accesses += 1;
        self.stats.passes += passes;
        self.stats.bank_conflicts += passes - 1;
        let read = now + self.latency + Cycles::new(passes - 1);
        if atomic && !self.atomic_write_latency.is_zero() {
            self.free = now + Cycles::new(2 * passes);
            self.stats.atomic_write_passes += passes;
            return Ok(read + self.atomic_write_latency + Cycles::new(passes - 1));
        }
        self.free = now + Cycles::new(passes);
        Ok(read)
    }

    /// A tensor core's read of `wgmma` operands from `at` (which may be a cycle the SM
    /// has passed: the banks then count from when they were last free), `passes` rows of
    /// the banks (`banks x bank width` bytes a pass, 128 on sm_90; ours: whole rows
    /// without conflicts, as the canonical layouts and swizzles exist to make the reads
    /// conflict-free, PTX ISA "Shared Memory Matrix Layout"). Returns the cycle the banks
    /// are free again; warp accesses wait for it.
    pub fn reserve_tensor_read(&mut self, at: Cycle, passes: u32) -> Cycle {
        let passes = u64::from(passes);
        self.free = self.free.max(at) + Cycles::new(passes);
        self.stats.tensor_passes += passes;
        self.free
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn passes(f: impl Fn(u64) -> u64, size: u32) -> u32 {
        let mut a = [0u64; 32];
        for (l, x) in a.iter_mut().enumerate() {
            *x = f(l as u64);
        }
        BankConflicts::new(32, 4).passes(u32::MAX, &a, size)
    }

    #[test]
    fn strides_give_the_textbook_conflict_degrees() {
        assert_eq!(passes(|l| 4 * l, 4), 1);
        assert_eq!(passes(|l| 8 * l, 4), 2);
        assert_eq!(passes(|l| 16 * l, 4), 4);
        assert_eq!(passes(|l| 128 * l, 4), 32);
        assert_eq!(passes(|l| 12 * l, 4), 1, "odd stride is conflict free");
    }

    #[test]
    fn identical_words_broadcast() {
        assert_eq!(passes(|_| 0x40, 4), 1);
        // Two distinct words in one bank, each read by 16 lanes.
        assert_eq!(passes(|l| if l % 2 == 0 { 0 } else { 128 }, 4), 2);
    }

    #[test]
    fn wide_accesses_touch_several_words() {
        assert_eq!(passes(|l| 8 * l, 8), 2);
        assert_eq!(passes(|l| 16 * l, 16), 4);
    }

    #[test]
    fn port_serializes_passes_and_counts_conflicts() {
        let cfg = SharedMemoryConfig {
            banks: 32,
            bank_width_bytes: 4,
            latency: Cycles::new(20),
            remote_latency: Cycles::ZERO,
            atomic_write_latency: Cycles::ZERO,
        };
        let mut sm = SharedMemory::new(&cfg);
        let mut a = [0u64; 32];
        for (l, x) in a.iter_mut().enumerate() {
            *x = 8 * l as u64;
        }
        assert_eq!(
            sm.access(Cycle::new(100), u32::MAX, &a, 4, false),
            Ok(Cycle::new(121))
        );
        assert_eq!(
            sm.access(Cycle::new(101), u32::MAX, &a, 4, false),
            Err(Cycle::new(102))
        );
        assert_eq!(
            sm.access(Cycle::new(102), 1, &a, 4, true),
            Ok(Cycle::new(122))
        );
        assert_eq!(sm.stats().bank_conflicts, 1);
        assert_eq!(sm.stats().passes, 3);
    }

    /// Known answers for `shared_memory.atomic_write_latency`: a read pass, then a write
    /// pass; the banks are busy for both, and the result is back when the write ends.
    #[test]
    fn an_atomic_is_a_read_pass_and_a_write_pass() {
        let cfg = SharedMemoryConfig {
            banks: 32,
            bank_width_bytes: 4,
            latency: Cycles::new(16),
            remote_latency: Cycles::ZERO,
            atomic_write_latency: Cycles::new(22),
        };
        let mut sm = SharedMemory::new(&cfg);
        let one = [0u64; 32];
        // One lane: read data at 100 + 16, write done 22 later; banks busy 2 cycles.
        assert_eq!(
            sm.access(Cycle::new(100), 1, &one, 4, true),
            Ok(Cycle::new(138))
        );
        assert_eq!(
            sm.access(Cycle::new(101), 1, &one, 4, false),
            Err(Cycle::new(102))
        );
        // A load is one pass as before.
        assert_eq!(
            sm.access(Cycle::new(102), 1, &one, 4, false),
            Ok(Cycle::new(118))
        );
        // A 2-way conflict: 2 read passes and 2 write passes (busy 4 cycles), each
        // pass's conflict cycle on the result: 200 + 16 + 1 + 22 + 1.
        let mut a = [0u64; 32];
        for (l, x) in a.iter_mut().enumerate() {
            *x = 8 * l as u64;
        }
        assert_eq!(
            sm.access(Cycle::new(200), u32::MAX, &a, 4, true),
            Ok(Cycle::new(240))
        );
        assert_eq!(
            sm.access(Cycle::new(203), 1, &one, 4, false),
            Err(Cycle::new(204))
        );
        let s = sm.stats();
        assert_eq!((s.accesses, s.passes, s.atomic_write_passes), (3, 4, 3));
        // Without the key an atomic is one pass, as a load.
        let mut plain = SharedMemory::new(&SharedMemoryConfig {
            atomic_write_latency: Cycles::ZERO,
            ..cfg
        });
        assert_eq!(
            plain.access(Cycle::new(0), 1, &one, 4, true),
            Ok(Cycle::new(16))
        );
        assert_eq!(plain.stats().atomic_write_passes, 0);
    }
}

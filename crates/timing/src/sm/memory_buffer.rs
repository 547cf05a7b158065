//! The per-sub-core memory-instruction buffer of the modern core (`sm.memory_buffer`),
//! after Huerta et al., "Dissecting and Modeling the Architecture of Modern GPU Cores"
//! (MICRO 2025, arXiv:2503.20481, memory-pipeline section; issue 25): each sub-core
//! (processing block) queues its memory instructions in a small buffer (5 entries on
//! Ampere) from which they leave for the SM's shared memory pipeline at one instruction
//! every 4 cycles. While the buffer is full the sub-core issues no memory instruction;
//! other instructions still issue.
//!
//! Model: an instruction issued at `t` leaves at `max(t, previous departure + interval)`
//! and holds an entry until then; the time it waited is added to its trip through the
//! memory pipeline (the SM delays its arrival at the LD/ST stage by it). The buffer
//! replaces the execution unit as the pacer of memory instructions, so a waiting memory
//! instruction holds no operand latch: the modern configs give the `mem` class an
//! initiation interval of 1.

use std::collections::VecDeque;

use crate::time::{Cycle, Cycles};

/// One buffer per sub-core.
#[derive(Clone, Debug)]
pub struct MemoryInstructionBuffer {
    entries: usize,
    interval: Cycles,
    /// Per sub-core: the departure cycles of the instructions it holds, oldest first.
    held: Vec<VecDeque<Cycle>>,
    /// Per sub-core: the departure of its latest instruction.
    last: Vec<Option<Cycle>>,
}

impl MemoryInstructionBuffer {
    /// Empty buffers of `entries` entries for `sub_cores` sub-cores, each releasing one
    /// instruction every `interval` cycles.
    pub fn new(sub_cores: u32, entries: u32, interval: u32) -> Self {
        let n = sub_cores.max(1) as usize;
        let entries = entries.max(1) as usize;
        MemoryInstructionBuffer {
            entries,
            interval: Cycles::new(u64::from(interval.max(1))),
            held: (0..n).map(|_| VecDeque::with_capacity(entries)).collect(),
            last: vec![None; n],
        }
    }

    /// Drops sub-core `s`'s instructions that left by `now`.
    fn drain(&mut self, s: usize, now: Cycle) {
        let q = &mut self.held[s];
        while q.front().is_some_and(|&d| d <= now) {
            q.pop_front();
        }
    }

    /// Whether sub-core `sub_core`'s buffer has no free entry at `now`.
    pub fn is_full(&mut self, sub_core: u16, now: Cycle) -> bool {
        let s = usize::from(sub_core) % self.held.len();
        self.drain(s, now);
        self.held[s].len() >= self.entries
    }

    /// Sub-core `sub_core` issued a memory instruction at `now` (its buffer not full):
    /// returns how long it waits in the buffer before it leaves.
    pub fn admit(&mut self, sub_core: u16, now: Cycle) -> Cycles {
        let s = usize::from(sub_core) % self.held.len();
        self.drain(s, now);
        let leaves = self.last[s].map_or(now, |l| (l + self.interval).max(now));
        self.last[s] = Some(leaves);
        if leaves > now {
            self.held[s].push_back(leaves);
        }
        leaves.saturating_since(now)
    }

    /// The earliest cycle after `now` at which an entry of a full buffer frees.
    pub fn next_free(&self, now: Cycle) -> Option<Cycle> {
        // A plain loop: asked at every SM evaluation that sleeps, and most buffers are
        // not full.
        let mut next: Option<Cycle> = None;
        for q in &self.held {
            if q.len() < self.entries {
                continue;
            }
            for &d in q {
                if d > now {
                    next = Some(next.map_or(d, |n| n.min(d)));
                    break;
                }
            }
        }
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_leaves_one_every_interval_and_fills_the_buffer() {
        // MICRO'25 (Ampere): five entries, one instruction leaves every 4 cycles.
        let mut b = MemoryInstructionBuffer::new(4, 5, 4);
        let t = Cycle::new(100);
        let mut waits = Vec::new();
        let mut c = t;
        while !b.is_full(0, c) {
            waits.push(b.admit(0, c).get());
            c += Cycles::new(1);
        }
        // Issued one per cycle from 100: they leave at 100 (at once, holding no entry),
        // 104, 108, ...; at 106 the five entries hold the ones leaving at 108 to 124 (the
        // one leaving at 104 has gone), so the issue at 107 finds the buffer full.
        assert_eq!(waits, vec![0, 3, 6, 9, 12, 15, 18]);
        assert_eq!(c, Cycle::new(107));
        assert_eq!(b.next_free(c), Some(Cycle::new(108)));
        assert!(
            !b.is_full(0, Cycle::new(108)),
            "the entry leaving at 108 is free"
        );
        // Another sub-core is not held.
        assert!(!b.is_full(1, c));
        assert_eq!(b.admit(1, c).get(), 0);
    }

    #[test]
    fn spaced_instructions_never_wait() {
        let mut b = MemoryInstructionBuffer::new(1, 5, 4);
        for k in 0..10 {
            let now = Cycle::new(4 * k);
            assert!(!b.is_full(0, now));
            assert_eq!(b.admit(0, now).get(), 0, "issue {k}");
        }
        assert_eq!(b.next_free(Cycle::new(40)), None);
    }
}

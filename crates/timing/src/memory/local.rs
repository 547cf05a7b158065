//! One SM's own memory events: the ones that read and write only its front end (a hit's
//! `PartDone`, an `L1Fill`, an `L1Retry`), kept in a queue per SM instead of on the
//! shared event queue (`docs/parallel.md`, "What building it takes", item 1).
//!
//! The shared queue keeps a marker (`Event::Local`) where each such event would have
//! been, so a one-thread run handles every event in the order it always did: a marker
//! runs the front of its SM's queue. That is exact because the SM's queue is ordered by
//! (cycle, order of scheduling), the order of the shared queue restricted to the SM's
//! events: each event enters its SM's queue when its marker is scheduled (or, from a
//! front end working on its own thread, in the same call that puts the marker in the
//! SM's outbox, which reaches the shared queue in that order). Windowed stepping
//! will run an SM's queue on its own thread, and put what its events schedule for the
//! shared queue at their markers at the merge.

use crate::time::Cycle;
use std::collections::VecDeque;

/// Cycles an SM's wheel covers: its events are mostly an instruction-cache hit the next
/// cycle and L1 hits and fills within a few dozen cycles (a power of two, at most 64:
/// one word of occupancy bits).
const WHEEL: usize = 64;

/// Events of type `E` of one SM, in (cycle, scheduling order): a small timing wheel (one
/// FIFO bucket per cycle for the next [`WHEEL`] cycles), as the shared queue
/// (`memory::event`), and a list in that order for the rare event beyond it.
pub(crate) struct LocalQueue<E> {
    /// Bucket `c % WHEEL` holds the events of cycle `c`, for `base <= c < base + WHEEL`.
    buckets: Vec<VecDeque<E>>,
    /// Bit `i`: bucket `i` is not empty.
    occupied: u64,
    /// The earliest cycle that may hold events.
    base: u64,
    /// Events at `base + WHEEL` or later, sorted by cycle, in scheduling order within a
    /// cycle; each enters its bucket when the wheel first covers its cycle, before any
    /// event can be scheduled into that bucket directly.
    far: VecDeque<(u64, E)>,
}

impl<E> LocalQueue<E> {
    pub(crate) fn new() -> Self {
        Self {
            buckets: (0..WHEEL).map(|_| VecDeque::new()).collect(),
            occupied: 0,
            base: 0,
            far: VecDeque::new(),
        }
    }

    /// Schedules `event` at `at`, after every pending event of the same cycle. An
    /// event for a cycle already passed runs at the earliest cycle still pending (as on
    /// the shared queue; the front ends schedule at or after the current cycle).
    #[inline]
    pub(crate) fn schedule(&mut self, at: Cycle, event: E) {
        let at = at.get().max(self.base);
        if at - self.base < WHEEL as u64 {
            let i = at as usize % WHEEL;
            self.buckets[i].push_back(event);
            self.occupied |= 1 << i;
        } else {
            let i = self
                .far
                .iter()
                .rposition(|e| e.0 <= at)
                .map_or(0, |i| i + 1);
            self.far.insert(i, (at, event));
        }
    }

    /// [`LocalQueue::schedule`], kept out of line: the callers' path with the queues off
    /// (one thread) stays as small as before the queues existed.
    #[inline(never)]
    pub(crate) fn schedule_cold(&mut self, at: Cycle, event: E) {
        self.schedule(at, event);
    }

    /// Removes and returns the earliest event, with its cycle.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<(Cycle, E)> {
        let t = self.next_cycle()?;
        self.start_cycle(t);
        let i = t.get() as usize % WHEEL;
        let event = self.buckets[i].pop_front()?;
        if self.buckets[i].is_empty() {
            self.occupied &= !(1 << i);
        }
        Some((t, event))
    }

    /// Moves the wheel to start at `t` (no event is earlier), bringing in the far
    /// events it now covers.
    fn start_cycle(&mut self, t: Cycle) {
        let t = t.get();
        if t <= self.base {
            return;
        }
        self.base = t;
        let horizon = t + WHEEL as u64;
        while self.far.front().is_some_and(|e| e.0 < horizon) {
            if let Some((at, event)) = self.far.pop_front() {
                let i = at as usize % WHEEL;
                self.buckets[i].push_back(event);
                self.occupied |= 1 << i;
            }
        }
    }

    /// The cycle of the earliest event.
    #[inline]
    pub(crate) fn next_cycle(&self) -> Option<Cycle> {
        if self.occupied != 0 {
            // Bucket order from the base's bucket, wrapping around.
            let start = self.base as usize % WHEEL;
            let offset = self.occupied.rotate_right(start as u32).trailing_zeros();
            return Some(Cycle::new(self.base + u64::from(offset)));
        }
        self.far.front().map(|e| Cycle::new(e.0))
    }

    /// Whether no event is pending.
    pub(crate) fn is_empty(&self) -> bool {
        self.occupied == 0 && self.far.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycle_order_then_scheduling_order_against_a_sorted_reference() {
        let mut q = LocalQueue::new();
        let mut reference: Vec<(u64, u32)> = vec![];
        let mut popped = vec![];
        let mut x: u64 = 987654321;
        let mut now = 0u64;
        for n in 0..5_000u32 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Like an SM's events: the next cycle (an instruction-cache hit), an L1
            // latency, a fill far ahead.
            let delay = match (x >> 33) % 4 {
                0 => 1,
                1 => 20,
                2 => 0,
                _ => (x >> 40) % 600,
            };
            q.schedule(Cycle::new(now + delay), n);
            reference.push((now + delay, n));
            if n % 5 == 0 {
                now += (x >> 20) % 7;
                while q.next_cycle().is_some_and(|t| t.get() <= now) {
                    let (t, e) = q.pop().unwrap();
                    popped.push((t.get(), e));
                }
            }
        }
        while let Some((t, e)) = q.pop() {
            popped.push((t.get(), e));
        }
        assert!(q.is_empty());
        // A stable sort by cycle: scheduling order within a cycle.
        reference.sort_by_key(|&(t, _)| t);
        assert_eq!(popped, reference);
    }
}

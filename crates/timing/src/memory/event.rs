//! The event queue of the memory system, ordered by (cycle, scheduling order), so events
//! at the same cycle run in the order they were scheduled and a run is deterministic.
//!
//! A timing wheel: one FIFO bucket per cycle for the next [`WHEEL_CYCLES`] cycles from
//! the earliest cycle that can still hold events, and a heap for the rare event beyond
//! that horizon. Almost every memory event is due within a few hundred cycles of being
//! scheduled, so scheduling and popping cost O(1) instead of a heap's O(log n) sift over
//! entries that miss the cache: with a binary heap, popping was a fifth of a
//! memory-bound simulation's time.
//!
//! Order within a cycle: a bucket is filled in scheduling order, except that events
//! from the heap enter their bucket when the wheel's window first reaches their cycle;
//! nothing can have been scheduled into that bucket before (it was beyond the horizon),
//! and the heap yields them in scheduling order, so a bucket is always in scheduling
//! order.

use crate::time::Cycle;
use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

/// Cycles the wheel covers (a power of two). Small enough that the buckets a
/// memory-bound simulation writes stay in the host's caches between two turns of the
/// wheel; large enough that nearly every event (a cache, crossbar or DRAM latency plus
/// its queueing) lands in a bucket rather than the heap.
const WHEEL_CYCLES: usize = 1024;
const WORDS: usize = WHEEL_CYCLES / 64;
// One summary word covers every word of the bitmap.
const _: () = assert!(WORDS <= 64 && WORDS * 64 == WHEEL_CYCLES);

/// An event beyond the wheel's horizon.
struct Far<E> {
    at: Cycle,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Far<E> {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl<E> Eq for Far<E> {}
impl<E> PartialOrd for Far<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Far<E> {
    // Reversed: BinaryHeap is a max-heap and we want the earliest first.
    fn cmp(&self, o: &Self) -> Ordering {
        (o.at, o.seq).cmp(&(self.at, self.seq))
    }
}

/// Events of type `E` waiting for their cycle.
pub(crate) struct EventQueue<E> {
    /// Bucket `c % WHEEL_CYCLES` holds the events of cycle `c`, for `base <= c <
    /// base + WHEEL_CYCLES`.
    buckets: Vec<VecDeque<E>>,
    /// Bit `i` set: bucket `i` is not empty.
    occupied: [u64; WORDS],
    /// Bit `w` set: `occupied[w]` is not zero.
    summary: u64,
    /// The earliest cycle that may hold events; no event is earlier.
    base: u64,
    /// Events in the buckets.
    in_wheel: usize,
    far: BinaryHeap<Far<E>>,
    seq: u64,
}

impl<E> EventQueue<E> {
    pub(crate) fn new() -> Self {
        Self {
            buckets: (0..WHEEL_CYCLES).map(|_| VecDeque::new()).collect(),
            occupied: [0; WORDS],
            summary: 0,
            base: 0,
            in_wheel: 0,
            far: BinaryHeap::new(),
            seq: 0,
        }
    }

    /// Schedules `event` at `at`. An event for a cycle already passed runs at the
    /// earliest cycle still pending (callers schedule at or after the current cycle).
    pub(crate) fn schedule(&mut self, at: Cycle, event: E) {
        let at = at.get().max(self.base);
        if at - self.base < WHEEL_CYCLES as u64 {
            self.push_bucket(at, event);
        } else {
            // Only far events compare sequence numbers (among themselves).
            self.seq += 1;
            self.far.push(Far {
                at: Cycle::new(at),
                seq: self.seq,
                event,
            });
        }
    }

    fn push_bucket(&mut self, at: u64, event: E) {
        let i = at as usize % WHEEL_CYCLES;
        self.buckets[i].push_back(event);
        self.occupied[i / 64] |= 1 << (i % 64);
        self.summary |= 1 << (i / 64);
        self.in_wheel += 1;
    }

    /// The earliest cycle with an event in the wheel.
    fn next_in_wheel(&self) -> Option<u64> {
        if self.in_wheel == 0 {
            return None;
        }
        let start = self.base as usize % WHEEL_CYCLES;
        if !self.buckets[start].is_empty() {
            // The common case: more events in the cycle being popped.
            return Some(self.base);
        }
        // In cycle order from the base: the rest of the base's word, the later words,
        // the earlier words (wrapped around), the start of the base's word.
        let (sw, sb) = (start / 64, start % 64);
        let first = |w: usize, bits: u64| w * 64 + bits.trailing_zeros() as usize;
        let i = if self.occupied[sw] & (u64::MAX << sb) != 0 {
            first(sw, self.occupied[sw] & (u64::MAX << sb))
        } else {
            let later = self.summary & (u64::MAX << sw << 1);
            let earlier = self.summary & !(u64::MAX << sw);
            let w = if later != 0 {
                later.trailing_zeros() as usize
            } else if earlier != 0 {
                earlier.trailing_zeros() as usize
            } else {
                sw
            };
            first(w, self.occupied[w])
        };
        let offset = (i + WHEEL_CYCLES - start) % WHEEL_CYCLES;
        Some(self.base + offset as u64)
    }

    /// The cycle of the earliest event.
    pub(crate) fn next_cycle(&self) -> Option<Cycle> {
        // Every wheel event is earlier than every far one.
        self.next_in_wheel()
            .map(Cycle::new)
            .or_else(|| self.far.peek().map(|f| f.at))
    }

    /// Moves the window to start at `base`, bringing in the far events it now covers.
    fn advance(&mut self, base: u64) {
        debug_assert!(base >= self.base);
        self.base = base;
        let horizon = base + WHEEL_CYCLES as u64;
        while self.far.peek().is_some_and(|f| f.at.get() < horizon) {
            if let Some(f) = self.far.pop() {
                self.push_bucket(f.at.get(), f.event);
            }
        }
    }

    /// Makes `t` the current cycle: the cycle [`Self::pop_current`] pops from and the
    /// earliest a new event can be scheduled at. No event may be pending before `t`
    /// (the caller has run them: `t` is at most [`Self::next_cycle`]).
    pub(crate) fn start_cycle(&mut self, t: Cycle) {
        debug_assert!(
            self.next_cycle().is_none_or(|n| n >= t),
            "events before {t}"
        );
        if t.get() > self.base {
            self.advance(t.get());
        }
    }

    /// Removes and returns the next event of the current cycle (see
    /// [`Self::start_cycle`]), in scheduling order; events scheduled for the current
    /// cycle while its events run come after the ones already there.
    pub(crate) fn pop_current(&mut self) -> Option<E> {
        let i = self.base as usize % WHEEL_CYCLES;
        let event = self.buckets[i].pop_front()?;
        self.in_wheel -= 1;
        if self.buckets[i].is_empty() {
            self.occupied[i / 64] &= !(1 << (i % 64));
            if self.occupied[i / 64] == 0 {
                self.summary &= !(1 << (i / 64));
            }
        }
        Some(event)
    }

    /// Removes and returns the earliest event if it is due at or before `now`.
    #[cfg(test)]
    fn pop_due(&mut self, now: Cycle) -> Option<(Cycle, E)> {
        let at = self.next_cycle()?;
        if at > now {
            self.start_cycle(now);
            return None;
        }
        self.start_cycle(at);
        self.pop_current().map(|e| (at, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(q: &mut EventQueue<u32>, now: u64) -> Vec<(u64, u32)> {
        let mut out = vec![];
        while let Some((t, e)) = q.pop_due(Cycle::new(now)) {
            out.push((t.get(), e));
        }
        out
    }

    #[test]
    fn earliest_first_then_scheduling_order() {
        let mut q = EventQueue::new();
        q.schedule(Cycle::new(5), 'a');
        q.schedule(Cycle::new(3), 'b');
        q.schedule(Cycle::new(5), 'c');
        q.schedule(Cycle::new(3), 'd');
        assert_eq!(q.next_cycle(), Some(Cycle::new(3)));
        let mut out = vec![];
        while let Some((_, e)) = q.pop_due(Cycle::new(4)) {
            out.push(e);
        }
        assert_eq!(out, vec!['b', 'd']);
        while let Some((_, e)) = q.pop_due(Cycle::new(9)) {
            out.push(e);
        }
        assert_eq!(out, vec!['b', 'd', 'a', 'c']);
        assert_eq!(q.next_cycle(), None);
    }

    #[test]
    fn far_events_keep_their_order_against_near_ones_of_the_same_cycle() {
        let mut q = EventQueue::new();
        let far = WHEEL_CYCLES as u64 + 100;
        // Scheduled while cycle `far` is beyond the horizon: goes to the heap.
        q.schedule(Cycle::new(far), 1);
        q.schedule(Cycle::new(far + 5000), 2);
        q.schedule(Cycle::new(200), 3);
        assert_eq!(q.next_cycle(), Some(Cycle::new(200)));
        assert_eq!(drain(&mut q, 200), vec![(200, 3)]);
        // Now `far` is within the window: scheduled directly, after the heap's event.
        q.schedule(Cycle::new(far), 4);
        assert_eq!(q.next_cycle(), Some(Cycle::new(far)));
        assert_eq!(drain(&mut q, far), vec![(far, 1), (far, 4)]);
        assert_eq!(q.next_cycle(), Some(Cycle::new(far + 5000)));
        assert_eq!(drain(&mut q, far + 4999), vec![]);
        assert_eq!(drain(&mut q, u64::MAX - 1), vec![(far + 5000, 2)]);
    }

    #[test]
    fn the_wheel_wraps_around_and_matches_a_sorted_reference() {
        // Pseudo-random schedule times (an LCG), popped at advancing times, against
        // the (cycle, order) sort of everything scheduled.
        let mut q = EventQueue::new();
        let mut reference: Vec<(u64, u32)> = vec![];
        let mut popped = vec![];
        let mut x: u64 = 12345;
        let mut now = 0u64;
        for n in 0..20_000u32 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let delay = match (x >> 33) % 10 {
                0 => (x >> 40) % 20_000,
                1..=3 => 0,
                _ => (x >> 40) % 300,
            };
            q.schedule(Cycle::new(now + delay), n);
            reference.push((now + delay, n));
            if n % 7 == 0 {
                now += (x >> 20) % 50;
                popped.extend(drain(&mut q, now));
            }
        }
        popped.extend(drain(&mut q, u64::MAX - 1));
        reference.sort();
        assert_eq!(popped, reference);
    }

    #[test]
    fn an_event_in_the_past_runs_at_the_earliest_pending_cycle() {
        let mut q = EventQueue::new();
        q.schedule(Cycle::new(10), 1);
        assert_eq!(drain(&mut q, 10), vec![(10, 1)]);
        q.schedule(Cycle::new(4), 2);
        assert_eq!(drain(&mut q, 10), vec![(10, 2)]);
    }
}

//! The event queue of the memory system: a binary heap ordered by (cycle, sequence
//! number), so events at the same cycle run in the order they were scheduled and a run
//! is deterministic.

use crate::time::Cycle;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

struct Entry<E> {
    at: Cycle,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Entry<E> {
    // Reversed: BinaryHeap is a max-heap and we want the earliest first.
    fn cmp(&self, o: &Self) -> Ordering {
        (o.at, o.seq).cmp(&(self.at, self.seq))
    }
}

/// Events of type `E` waiting for their cycle.
pub(crate) struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    seq: u64,
}

impl<E> EventQueue<E> {
    pub(crate) fn new() -> Self {
        Self {
            heap: BinaryHeap::with_capacity(1024),
            seq: 0,
        }
    }
    pub(crate) fn schedule(&mut self, at: Cycle, event: E) {
        self.seq += 1;
        self.heap.push(Entry {
            at,
            seq: self.seq,
            event,
        });
    }
    /// The cycle of the earliest event.
    pub(crate) fn next_cycle(&self) -> Option<Cycle> {
        self.heap.peek().map(|e| e.at)
    }
    /// Removes and returns the earliest event if it is due at or before `now`.
    pub(crate) fn pop_due(&mut self, now: Cycle) -> Option<(Cycle, E)> {
        if self.heap.peek()?.at <= now {
            self.heap.pop().map(|e| (e.at, e.event))
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}

//! The L1D's miss queue, and reservation failures counted per cycle as GPGPU-Sim counts
//! them.
//!
//! **Miss queue.** Between an L1 data cache and the interconnect sits a queue of the
//! requests the cache sends below: read misses, write-throughs and write-backs
//! (GPGPU-Sim's `m_miss_queue`, sized by the last field of `-gpgpu_cache:dl1`: 8 entries
//! on SM2_GTX480, 16 on SM7_QV100). It hands one request a cycle to the SM's interconnect
//! injection buffer; when requests arrive faster (a bank per sector: up to four sector
//! requests a cycle on Volta), the queue fills. A lookup that would add an
//! entry to a full queue is refused, a reservation failure of kind `MISS_QUEUE_FULL`, and
//! retried when the first entry leaves. GPGPU-Sim's rule, transcribed as behaviour: a
//! read that is not a hit is refused unless its entries and one more are free (room for
//! a victim's write-back), a write unless its entries are. A request takes one entry per
//! line from a line-fetch L1D (Fermi's), one per sector from a sector-fetch one (Volta's
//! L1D sends each 32-byte sector as its own request). `l1d.miss_queue_entries = 0` (the
//! default) leaves the queue unbounded.
//!
//! An entry joins the queue when its request is ready to leave the SM (after the L1's
//! latency) and leaves when the queue hands the request to the SM's interconnect
//! injection buffer: one request per cycle, in order, so an entry leaves at the later of
//! its ready cycle and the cycle after the previous hand-off (a sector-fetch L1D's
//! request for `n` sectors is `n` requests, handed off on `n` cycles). The injection
//! buffer's own bound (`interconnect.input_buffer_bytes`) stops the SM from issuing
//! memory instructions while it is full (see [`crate::memory`]); the entry does not
//! wait for the interconnect to carry its packet. A lookup is checked against the queue
//! as it stands at the lookup's cycle. (GPGPU-Sim looks a line up after its L1 latency
//! queue, so it sees the queue `l1d.latency` cycles later: the same occupancy under
//! steady back-pressure.)
//!
//! **Failures per cycle.** GPGPU-Sim's LD/ST unit retries the access at the head of its
//! L1 queue every cycle, and each refused try counts one reservation failure of its kind
//! (`L1D_total_cache_reservation_fails`; `LINE_ALLOC_FAIL`, `MISS_QUEUE_FULL`,
//! `MSHR_ENRTY_FAIL`, `MSHR_MERGE_ENRTY_FAIL` in its breakdown). regsim retries a blocked
//! line only when something it waits for changes, so [`ReservationFailCycles`] charges
//! each blocked stretch, from the failing cycle to the next try, to the kind of the
//! failure: the count GPGPU-Sim's per-cycle retries give.

use crate::memory::cache::{ReservationFailure, SectorMask};
use crate::time::Cycle;
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// One L1's miss queue: the cycles at which its current entries leave.
#[derive(Clone, Debug)]
pub struct MissQueue {
    capacity: u32,
    per_sector: bool,
    departures: BinaryHeap<Reverse<Cycle>>,
    /// The cycle of the latest hand-off (none before the first).
    last_handoff: Option<Cycle>,
}

impl MissQueue {
    /// A queue of `capacity` entries (0: unbounded). `per_sector`: the cache sends each
    /// 32-byte sector as its own request (a sectored L1D, GPGPU-Sim's `S` caches with
    /// coalescing arch 70), so a request takes an entry per sector; else one per line.
    pub fn new(capacity: u32, per_sector: bool) -> Self {
        Self {
            capacity,
            per_sector,
            departures: BinaryHeap::with_capacity(capacity.min(64) as usize),
            last_handoff: None,
        }
    }

    /// Entries a request for `sectors` takes.
    pub fn entries(&self, sectors: SectorMask) -> u32 {
        if self.per_sector {
            sectors.count().max(1)
        } else {
            1
        }
    }

    /// Whether the queue is bounded at all.
    pub fn is_bounded(&self) -> bool {
        self.capacity > 0
    }

    /// A request for `sectors` ready to leave at `ready` joins the queue: each of its
    /// entries leaves at the later of `ready` and the cycle after the previous hand-off.
    /// Requests join in the order they are ready (`ready` never decreases).
    pub fn enter(&mut self, ready: Cycle, sectors: SectorMask) {
        if !self.is_bounded() {
            return;
        }
        for _ in 0..self.entries(sectors) {
            let at = match self.last_handoff {
                Some(last) => ready.max(last + crate::time::Cycles::new(1)),
                None => ready,
            };
            self.last_handoff = Some(at);
            self.departures.push(Reverse(at));
        }
    }

    /// Whether `needed` entries are free at `now` (entries that left by `now` removed).
    pub fn has_room(&mut self, now: Cycle, needed: u32) -> bool {
        if !self.is_bounded() {
            return true;
        }
        while self.departures.peek().is_some_and(|d| d.0 <= now) {
            self.departures.pop();
        }
        // A request larger than the whole queue waits for it to empty, not forever.
        self.departures.len() as u32 + needed.min(self.capacity) <= self.capacity
    }

    /// When the first current entry leaves (none: empty).
    pub fn next_departure(&self) -> Option<Cycle> {
        self.departures.peek().map(|d| d.0)
    }
}

/// Cycles an L1D spent refusing its head access, by GPGPU-Sim's failure kinds: its
/// `L1D_total_cache_reservation_fails` is [`ReservationFailCycles::total`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ReservationFailCycles {
    /// `LINE_ALLOC_FAIL`: allocate-on-miss found every way of the set reserved.
    pub line_alloc_fail: u64,
    /// `MISS_QUEUE_FULL`: no room in the miss queue.
    pub miss_queue_full: u64,
    /// `MSHR_ENRTY_FAIL` (GPGPU-Sim's spelling): every MSHR entry in use.
    pub mshr_entry_fail: u64,
    /// `MSHR_MERGE_ENRTY_FAIL`: the line's MSHR entry holds its most merged requests.
    pub mshr_merge_entry_fail: u64,
    /// All of them.
    pub total: u64,
}

impl ReservationFailCycles {
    /// Charges `cycles` refused for `why`.
    pub fn add(&mut self, why: ReservationFailure, cycles: u64) {
        let kind = match why {
            ReservationFailure::NoEvictableWay => &mut self.line_alloc_fail,
            ReservationFailure::MissQueueFull => &mut self.miss_queue_full,
            ReservationFailure::MshrFull => &mut self.mshr_entry_fail,
            ReservationFailure::MergeFull => &mut self.mshr_merge_entry_fail,
        };
        *kind += cycles;
        self.total += cycles;
    }

    /// Every count zero (the stats file leaves the section out).
    pub fn is_zero(&self) -> bool {
        self.total == 0
    }

    /// `after - before`, counter by counter (per-kernel figures).
    pub fn since(&self, before: &Self) -> Self {
        Self {
            line_alloc_fail: self.line_alloc_fail.saturating_sub(before.line_alloc_fail),
            miss_queue_full: self.miss_queue_full.saturating_sub(before.miss_queue_full),
            mshr_entry_fail: self.mshr_entry_fail.saturating_sub(before.mshr_entry_fail),
            mshr_merge_entry_fail: self
                .mshr_merge_entry_fail
                .saturating_sub(before.mshr_merge_entry_fail),
            total: self.total.saturating_sub(before.total),
        }
    }
}

impl std::ops::AddAssign for ReservationFailCycles {
    fn add_assign(&mut self, o: Self) {
        self.line_alloc_fail += o.line_alloc_fail;
        self.miss_queue_full += o.miss_queue_full;
        self.mshr_entry_fail += o.mshr_entry_fail;
        self.mshr_merge_entry_fail += o.mshr_merge_entry_fail;
        self.total += o.total;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(c: u64) -> Cycle {
        Cycle::new(c)
    }

    const ONE: SectorMask = SectorMask(0b0001);

    #[test]
    fn a_full_queue_refuses_until_its_first_entry_leaves() {
        // Line entries (Fermi): one per request, handed off one a cycle.
        let mut q = MissQueue::new(2, false);
        q.enter(at(10), SectorMask(0b1111));
        assert!(q.has_room(at(0), 1));
        assert!(!q.has_room(at(0), 2), "a read needs two free entries");
        // Ready at 10 as well: handed off the cycle after the first, at 11.
        q.enter(at(10), ONE);
        assert!(!q.has_room(at(9), 1));
        assert_eq!(q.next_departure(), Some(at(10)));
        assert!(q.has_room(at(10), 1));
        assert!(!q.has_room(at(10), 2));
        assert!(q.has_room(at(11), 2));
        assert_eq!(q.next_departure(), None);
        // A later request leaves when ready.
        q.enter(at(20), ONE);
        assert_eq!(q.next_departure(), Some(at(20)));
    }

    #[test]
    fn an_unbounded_queue_holds_nothing_and_always_has_room() {
        let mut q = MissQueue::new(0, true);
        q.enter(at(100), ONE);
        assert!(q.has_room(at(0), 1000));
        assert_eq!(q.next_departure(), None);
    }

    #[test]
    fn a_sectored_cache_takes_an_entry_per_sector_handed_off_one_a_cycle() {
        let mut q = MissQueue::new(16, true);
        assert_eq!(q.entries(SectorMask(0b1011)), 3);
        // Three requests ready at 5, 6, 7: their 11 sector requests leave at 5..=15.
        q.enter(at(5), SectorMask(0b1111));
        q.enter(at(6), SectorMask(0b1111));
        q.enter(at(7), SectorMask(0b0111));
        assert!(q.has_room(at(4), 5));
        assert!(!q.has_room(at(4), 6));
        // By cycle 8 four have left (5, 6, 7, 8), seven remain.
        assert!(q.has_room(at(8), 9));
        assert!(!q.has_room(at(8), 10));
        assert_eq!(q.next_departure(), Some(at(9)));
        assert!(q.has_room(at(15), 16));
    }

    #[test]
    fn fail_cycles_are_charged_to_their_kind_and_subtract_per_kernel() {
        let mut c = ReservationFailCycles::default();
        c.add(ReservationFailure::NoEvictableWay, 5);
        c.add(ReservationFailure::MissQueueFull, 2);
        let before = c;
        c.add(ReservationFailure::MshrFull, 3);
        c.add(ReservationFailure::MergeFull, 1);
        assert_eq!((c.line_alloc_fail, c.miss_queue_full), (5, 2));
        assert_eq!(
            (c.mshr_entry_fail, c.mshr_merge_entry_fail, c.total),
            (3, 1, 11)
        );
        let d = c.since(&before);
        assert_eq!((d.line_alloc_fail, d.mshr_entry_fail, d.total), (0, 3, 4));
        assert!(!d.is_zero() && ReservationFailCycles::default().is_zero());
    }
}

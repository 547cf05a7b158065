//! A bandwidth resource: moves `bytes_per_cycle` bytes per cycle, first come first
//! served, as a reservation calendar (the time its last reservation ends) rather than a
//! per-cycle state machine.
//!
//! Time is tracked in byte slots (`cycle x bytes_per_cycle`), so packets that are not a
//! multiple of the bandwidth pack back to back without rounding each one up: 100 packets
//! of 48 bytes at 32 bytes per cycle take 150 cycles, not 200.

use crate::bits::Divisor;
use crate::time::{ClockDomain, Instant};

/// A bandwidth-limited resource in clock domain `D`.
#[derive(Clone, Debug)]
pub struct BandwidthPort<D: ClockDomain> {
    /// Bytes per cycle, as a divisor: every reservation converts slots to cycles.
    per_cycle: Divisor,
    free_slot: u64,
    _domain: std::marker::PhantomData<D>,
}

/// When a reserved transfer occupies the resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transfer<D: ClockDomain> {
    /// The cycle the first byte moves.
    pub start: Instant<D>,
    /// The cycle by which the last byte has moved.
    pub end: Instant<D>,
}

impl<D: ClockDomain> BandwidthPort<D> {
    /// An idle port moving `bytes_per_cycle` (at least 1) bytes per cycle.
    pub fn new(bytes_per_cycle: u32) -> Self {
        Self {
            per_cycle: Divisor::new(u64::from(bytes_per_cycle.max(1))),
            free_slot: 0,
            _domain: Default::default(),
        }
    }

    fn slot(&self, t: Instant<D>) -> u64 {
        t.get().saturating_mul(self.per_cycle.divisor())
    }

    /// The earliest slot at which a transfer ready at `ready` could start.
    pub fn start_slot(&self, ready: Instant<D>) -> u64 {
        self.slot(ready).max(self.free_slot)
    }

    /// Reserves `bytes` starting at byte slot `start_slot` (from [`Self::start_slot`],
    /// possibly delayed by another port of the same transfer).
    pub fn reserve_at(&mut self, start_slot: u64, bytes: u64) -> Transfer<D> {
        debug_assert!(start_slot >= self.free_slot);
        let end_slot = start_slot + bytes;
        self.free_slot = end_slot;
        Transfer {
            start: Instant::new(self.per_cycle.div(start_slot)),
            end: Instant::new(self.per_cycle.div_ceil(end_slot)),
        }
    }

    /// Reserves `bytes` at the earliest time at or after `ready`.
    pub fn reserve(&mut self, ready: Instant<D>, bytes: u64) -> Transfer<D> {
        let s = self.start_slot(ready);
        self.reserve_at(s, bytes)
    }

    /// Holds the resource until `t`: later reservations start at `t` at the earliest.
    pub fn hold_until(&mut self, t: Instant<D>) {
        self.free_slot = self.free_slot.max(self.slot(t));
    }

    /// Bytes reserved but not yet moved at `now`.
    pub fn backlog_bytes(&self, now: Instant<D>) -> u64 {
        self.free_slot.saturating_sub(self.slot(now))
    }

    /// The first cycle at which the backlog is at most `bytes`.
    pub fn drained_to(&self, bytes: u64) -> Instant<D> {
        Instant::new(
            self.per_cycle
                .div_ceil(self.free_slot.saturating_sub(bytes)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{Core, Cycle};

    #[test]
    fn a_stream_takes_bytes_over_bandwidth() {
        let mut p = BandwidthPort::<Core>::new(32);
        let mut last = Cycle::ZERO;
        for _ in 0..100 {
            last = p.reserve(Cycle::ZERO, 48).end;
        }
        assert_eq!(last, Cycle::new(150));
    }

    #[test]
    fn idle_gaps_are_not_banked() {
        let mut p = BandwidthPort::<Core>::new(16);
        assert_eq!(p.reserve(Cycle::new(0), 32).end, Cycle::new(2));
        let t = p.reserve(Cycle::new(10), 32);
        assert_eq!((t.start, t.end), (Cycle::new(10), Cycle::new(12)));
        assert_eq!(p.backlog_bytes(Cycle::new(11)), 16);
        assert_eq!(p.drained_to(0), Cycle::new(12));
    }
}

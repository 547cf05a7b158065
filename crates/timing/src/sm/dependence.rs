//! One warp's dependence state under the compiler's control bits
//! (`sm.dependence = "control_bits"`; Huerta et al., MICRO 2025, arXiv:2503.20481, issue
//! stage and "Control bits"): the six dependence counters SB0–SB5 and the stall count
//! of the last issued instruction. It replaces the scoreboard at issue: an instruction
//! issues when its stall-count hold is over and every counter of its wait mask is zero
//! ([`compiler::control_bits`] says how the compiler sets them).
//!
//! A counter is incremented when a variable-latency producer assigned to it issues and
//! decremented when that producer's result is written (its retirement). A counter shared
//! by two producers is zero only when both have written: a consumer of the first also
//! waits for the second (over-waiting).

use compiler::control_bits::{ControlBits, COUNTERS};

use crate::time::{Cycle, Cycles};

/// Why a warp may not issue its next instruction yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wait {
    /// A counter of the wait mask is held by a memory producer.
    Memory,
    /// A counter of the wait mask is held by another variable-latency producer (SFU).
    Counter,
    /// The previous instruction's stall count has not run out.
    Stall,
}

/// The dependence counters and stall hold of one warp.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct DependenceCounters {
    count: [u16; COUNTERS as usize],
    /// Bit `c`: counter `c` is not zero (kept with `count`, so that [`Self::wait`], asked
    /// for every warp a scheduler considers, is one mask test instead of a loop over
    /// the counters).
    nonzero: u8,
    /// Bit `c`: counter `c` has a memory producer in flight.
    memory: u8,
    /// The warp may issue again from this cycle (the last stall count).
    hold_until: Cycle,
}

impl DependenceCounters {
    /// Whether an instruction with wait mask `mask` must wait at `now`, and why. The
    /// counters are checked first: they change only when a result is written, while
    /// the hold runs out with time.
    #[inline]
    pub fn wait(&self, mask: u8, now: Cycle) -> Option<Wait> {
        let held = mask & self.nonzero;
        if held & self.memory != 0 {
            Some(Wait::Memory)
        } else if held != 0 {
            Some(Wait::Counter)
        } else if self.hold_until > now {
            Some(Wait::Stall)
        } else {
            None
        }
    }

    /// The warp issued an instruction with control bits `bits` at `now` (`memory`: it is
    /// a memory access). Returns the cycle its stall count runs out.
    #[inline]
    pub fn issued(&mut self, bits: ControlBits, now: Cycle, memory: bool) -> Cycle {
        if let Some(c) = bits.write_counter {
            let c = c % COUNTERS;
            self.count[c as usize] = self.count[c as usize].saturating_add(1);
            self.nonzero |= 1 << c;
            if memory {
                self.memory |= 1 << c;
            }
        }
        self.hold_until = now + Cycles::new(u64::from(bits.stall.max(1)));
        self.hold_until
    }

    /// A producer assigned counter `c` wrote its result.
    #[inline]
    pub fn written(&mut self, c: u8) {
        let c = c % COUNTERS;
        let n = &mut self.count[c as usize];
        *n = n.saturating_sub(1);
        if *n == 0 {
            self.nonzero &= !(1 << c);
            self.memory &= !(1 << c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bits(stall: u8, write_counter: Option<u8>, wait_mask: u8) -> ControlBits {
        ControlBits {
            stall,
            yield_: false,
            write_counter,
            wait_mask,
        }
    }

    #[test]
    fn the_stall_count_holds_the_next_instruction() {
        let mut d = DependenceCounters::default();
        let t = Cycle::new(10);
        assert_eq!(d.issued(bits(4, None, 0), t, false), Cycle::new(14));
        assert_eq!(d.wait(0, Cycle::new(13)), Some(Wait::Stall));
        assert_eq!(d.wait(0, Cycle::new(14)), None);
    }

    #[test]
    fn a_shared_counter_is_released_by_its_last_producer() {
        let mut d = DependenceCounters::default();
        d.issued(bits(1, Some(0), 0), Cycle::new(0), true);
        d.issued(bits(1, Some(0), 0), Cycle::new(1), false);
        assert_eq!(d.wait(0b1, Cycle::new(5)), Some(Wait::Memory));
        assert_eq!(d.wait(0b10, Cycle::new(5)), None);
        d.written(0);
        // The load is back but the second producer still holds SB0.
        assert_eq!(d.wait(0b1, Cycle::new(5)), Some(Wait::Memory));
        d.written(0);
        assert_eq!(d.wait(0b1, Cycle::new(5)), None);
    }
}

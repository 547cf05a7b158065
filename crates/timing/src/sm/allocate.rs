//! The Allocate stage of the modern core (`sm.core = "modern"`), after Huerta et al.,
//! "Dissecting and Modeling the Architecture of Modern GPU Cores" (MICRO 2025,
//! arXiv:2503.20481, §5.3 "Register File"): NVIDIA's cores since Volta have no operand
//! collectors. Each sub-core (processing block) issues at most one instruction per cycle
//! into an Allocate stage that reserves the read ports of the sub-core's two register
//! banks (one 1024-bit read port each: one warp register per bank per cycle) for the
//! instruction's operand reads. An instruction that needs `n` reads of its busiest bank
//! reads its sources in the three cycles after it leaves the stage, and the stage holds it
//! until each bank has enough free read-port cycles in such a three-cycle window
//! ([`AllocateStage::reserve`]): the paper's conflict *bubbles*. Its Listing 1 (an FFMA
//! with three even sources, then an FFMA with one even source and two more) takes 5, 6
//! or 7 cycles as the last two are odd/odd, even/odd or even/even, and a run of FFMAs
//! with all three sources in one bank has 2 bubbles after each (§5.3). Reads served by
//! the register-file cache (`rf/reuse_cache.rs`) need no port.
//!
//! The paper could not find one read policy that matches every case it measured (the
//! bubbles also depend on the instruction type and each operand's role) and models the
//! stage approximately, as here: port reservations per bank over the next three cycles,
//! whatever the operands' roles. A bubble is charged to the sub-core's next instruction
//! (it enters the stage that much later), not to the held instruction's own reads.
//! The operand reads themselves go through the register file's bank arbiter, which sees
//! no conflicts between the instructions of one sub-core because the stage serialises
//! them.

use crate::time::{Cycle, Cycles};

/// Extra cycles an instruction holds the Allocate stage when its busiest bank serves
/// `busiest` of its reads through `read_ports` ports (MICRO'25: 0, 1 or 2 for an FFMA's
/// three sources in two single-ported banks).
pub fn bubbles(busiest: u32, read_ports: u32) -> u32 {
    busiest.div_ceil(read_ports.max(1)).saturating_sub(1)
}

/// Cycles over which an instruction reads its sources after Allocate (MICRO'25 §5.3:
/// "all the fixed-latency instructions spend three cycles for reading source operands").
pub const READ_CYCLES: u64 = 3;

/// Cycles of read-port reservations kept per bank (a power of two, more than any window).
const RING: usize = 128;

/// Read-port reservations of one bank: `used[c % RING]` ports of cycle `c`, for cycles
/// from `base` on (cycles before `base` have passed and hold nothing).
#[derive(Clone, Debug)]
struct PortBook {
    base: u64,
    used: [u8; RING],
}

impl PortBook {
    fn new() -> Self {
        PortBook {
            base: 0,
            used: [0; RING],
        }
    }

    /// Forgets the cycles before `now`.
    fn advance(&mut self, now: u64) {
        if now <= self.base {
            return;
        }
        let passed = (now - self.base).min(RING as u64);
        for c in self.base..self.base + passed {
            self.used[(c % RING as u64) as usize] = 0;
        }
        self.base = now;
    }

    fn used(&self, c: u64) -> u8 {
        if c < self.base || c >= self.base + RING as u64 {
            0
        } else {
            self.used[(c % RING as u64) as usize]
        }
    }

    /// Free port-cycles of `ports` ports in cycles `from..from + len`.
    fn free(&self, from: u64, len: u64, ports: u8) -> u32 {
        (from..from + len)
            .map(|c| u32::from(ports.saturating_sub(self.used(c))))
            .sum()
    }

    /// Reserves the earliest `n` free port-cycles in `from..from + len`.
    fn take(&mut self, from: u64, len: u64, ports: u8, mut n: u32) {
        for c in from..from + len {
            if n == 0 {
                break;
            }
            if c >= self.base + RING as u64 {
                break;
            }
            let slot = &mut self.used[(c % RING as u64) as usize];
            let k = u32::from(ports.saturating_sub(*slot)).min(n);
            *slot += k as u8;
            n -= k;
        }
    }
}

/// One Allocate stage per sub-core, with the read-port reservations of the banks.
#[derive(Clone, Debug)]
pub struct AllocateStage {
    /// Per sub-core: the first cycle it takes another instruction.
    free_at: Vec<Cycle>,
    /// Per bank (the register file's bank index): its read ports' reservations.
    books: Vec<PortBook>,
}

impl AllocateStage {
    /// Stages for `sub_cores` sub-cores, all free.
    pub fn new(sub_cores: u32) -> Self {
        AllocateStage {
            free_at: vec![Cycle::ZERO; sub_cores.max(1) as usize],
            books: Vec::new(),
        }
    }

    /// An instruction of sub-core `sub_core` enters the stage at `now` needing
    /// `reads[i].1` port reads of bank `reads[i].0`, each bank having `read_ports` ports:
    /// it waits until every bank has that many free port-cycles in one window of
    /// [`READ_CYCLES`] cycles (longer if a bank needs more reads than a window holds),
    /// reserves the earliest of them, and holds the stage for the cycles it waited (the
    /// bubbles, returned; the sub-core's next instruction enters that much later).
    pub fn reserve(
        &mut self,
        sub_core: u16,
        reads: &[(u8, u32)],
        read_ports: u32,
        now: Cycle,
    ) -> u32 {
        let ports = read_ports.clamp(1, u32::from(u8::MAX)) as u8;
        let t = now.get();
        let need = |k: u32| u64::from(k.div_ceil(u32::from(ports)));
        let len = reads
            .iter()
            .map(|&(_, k)| need(k))
            .max()
            .unwrap_or(0)
            .clamp(READ_CYCLES, RING as u64 / 4);
        for &(b, _) in reads {
            let b = usize::from(b);
            if self.books.len() <= b {
                self.books.resize(b + 1, PortBook::new());
            }
            self.books[b].advance(t);
        }
        // The reservations of earlier instructions end within a window of them, so a
        // wait of `RING - 2 * len` cycles always finds every port free.
        let limit = (RING as u64).saturating_sub(2 * len);
        let mut wait = 0;
        while wait < limit
            && reads
                .iter()
                .any(|&(b, k)| self.books[usize::from(b)].free(t + 1 + wait, len, ports) < k)
        {
            wait += 1;
        }
        for &(b, k) in reads {
            self.books[usize::from(b)].take(t + 1 + wait, len, ports, k);
        }
        let bubbles = wait as u32;
        self.allocate(sub_core, bubbles, now);
        bubbles
    }

    /// Whether sub-core `sub_core`'s stage takes an instruction at `now`.
    pub fn is_free(&self, sub_core: u16, now: Cycle) -> bool {
        self.free_at
            .get(usize::from(sub_core))
            .is_none_or(|&t| t <= now)
    }

    /// Sub-core `sub_core` allocated an instruction with `bubbles` conflict bubbles at
    /// `now`: its next instruction may enter at `now + 1 + bubbles`.
    pub fn allocate(&mut self, sub_core: u16, bubbles: u32, now: Cycle) {
        if let Some(t) = self.free_at.get_mut(usize::from(sub_core)) {
            *t = now + Cycles::new(1 + u64::from(bubbles));
        }
    }

    /// The earliest cycle after `now` at which a busy stage frees, if one is busy.
    pub fn next_free(&self, now: Cycle) -> Option<Cycle> {
        self.free_at.iter().copied().filter(|&t| t > now).min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bubbles_follow_the_busiest_bank() {
        // MICRO'25: an FFMA's three sources in two single-ported banks.
        assert_eq!(
            bubbles(1, 1),
            0,
            "one source per bank, or two from the cache"
        );
        assert_eq!(bubbles(2, 1), 1, "two sources in one bank");
        assert_eq!(bubbles(3, 1), 2, "all three in one bank");
        assert_eq!(bubbles(0, 1), 0, "every source from the cache");
        assert_eq!(bubbles(3, 2), 1, "two ports");
    }

    /// MICRO'25 Listing 1 (section 3): CLOCK, NOP, FFMA R11, R10, R12, R14 (three even
    /// sources), FFMA R13, R16, R_X, R_Y, NOP, CLOCK takes 5, 6 or 7 cycles as R_X, R_Y
    /// are odd/odd, even/odd or even/even: 0, 1 or 2 bubbles after the second FFMA.
    #[test]
    fn listing_1_pairs_take_0_1_and_2_bubbles() {
        for (second, want) in [
            ([(0u8, 1), (1, 2)].as_slice(), 0),
            (&[(0, 2), (1, 1)], 1),
            (&[(0, 3)], 2),
        ] {
            let mut a = AllocateStage::new(4);
            let t = Cycle::new(100);
            assert_eq!(
                a.reserve(0, &[(0, 3)], 1, t),
                0,
                "the first FFMA waits for nothing"
            );
            assert!(!a.is_free(0, t), "one instruction per cycle");
            let t1 = t + Cycles::new(1);
            assert!(a.is_free(0, t1));
            assert_eq!(a.reserve(0, second, 1, t1), want, "{second:?}");
            assert!(!a.is_free(0, t1 + Cycles::new(want.into())));
            assert!(a.is_free(0, t1 + Cycles::new(1 + u64::from(want))));
        }
    }

    /// MICRO'25 §5.3: FFMAs with all three sources in one bank, one after another, have
    /// 2 bubbles each; FMULs with both sources in one bank, 1.
    #[test]
    fn a_run_of_same_bank_instructions_settles_at_one_per_bank_read() {
        for (reads, per_inst) in [(3u32, 3u64), (2, 2), (1, 1)] {
            let mut a = AllocateStage::new(1);
            let mut t = Cycle::new(7);
            let mut entries = Vec::new();
            for _ in 0..20 {
                while !a.is_free(0, t) {
                    t += Cycles::new(1);
                }
                a.reserve(0, &[(1, reads)], 1, t);
                entries.push(t.get());
            }
            // After the first few (whose reads overlap nothing), one every `per_inst`.
            for w in entries[10..].windows(2) {
                assert_eq!(w[1] - w[0], per_inst, "{reads} reads: {entries:?}");
            }
        }
    }

    #[test]
    fn banks_of_other_sub_cores_and_passed_cycles_do_not_conflict() {
        let mut a = AllocateStage::new(2);
        let t = Cycle::new(5);
        assert_eq!(a.reserve(0, &[(0, 3)], 1, t), 0);
        // Sub-core 1's banks are others: no wait.
        assert_eq!(a.reserve(1, &[(2, 3)], 1, t), 0);
        // Long after, bank 0 is free again.
        assert_eq!(a.reserve(0, &[(0, 3)], 1, Cycle::new(500)), 0);
        // Two ports: three reads fit the window twice over.
        let mut b = AllocateStage::new(1);
        assert_eq!(b.reserve(0, &[(0, 3)], 2, t), 0);
        assert_eq!(b.reserve(0, &[(0, 3)], 2, t + Cycles::new(1)), 0);
        // More reads than a window holds: a longer window, no endless wait.
        assert_eq!(b.reserve(0, &[(0, 20)], 1, Cycle::new(1000)), 0);
    }

    #[test]
    fn a_bubble_holds_only_its_own_sub_core() {
        let mut a = AllocateStage::new(4);
        let t = Cycle::new(10);
        assert!(a.is_free(0, t));
        a.allocate(0, 2, t);
        for (dt, free) in [(1, false), (2, false), (3, true)] {
            assert_eq!(a.is_free(0, t + Cycles::new(dt)), free, "+{dt}");
        }
        assert!(a.is_free(1, t + Cycles::new(1)));
        assert_eq!(a.next_free(t), Some(Cycle::new(13)));
        assert_eq!(a.next_free(Cycle::new(13)), None);
        // No bubble: the next cycle.
        a.allocate(1, 0, t);
        assert!(a.is_free(1, t + Cycles::new(1)));
    }
}

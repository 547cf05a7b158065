//! The Allocate stage of the modern core (`sm.core = "modern"`), after Huerta et al.,
//! "Dissecting and Modeling the Architecture of Modern GPU Cores" (MICRO 2025,
//! arXiv:2503.20481, §5.3 "Register File"): NVIDIA's cores since Volta have no operand
//! collectors. Each sub-core (processing block) issues at most one instruction per cycle
//! into an Allocate stage that reserves the read ports of the sub-core's two register
//! banks (one 1024-bit read port each: one warp register per bank per cycle) for the
//! instruction's operand reads. An instruction that needs `n` reads of its busiest bank
//! holds the stage for `n` cycles, so the sub-core's next instruction issues `n - 1`
//! cycles late: the paper's conflict *bubbles* (two dependent FFMAs take 5, 6 or 7 cycles
//! by their registers' parity; a third source in the same bank adds 2). Reads served by
//! the register-file cache (`rf/reuse_cache.rs`) need no port.
//!
//! The paper could not find one read policy that matches every case it measured (the
//! bubbles also depend on the instruction type and each operand's role) and models the
//! stage approximately, as here: the bubbles follow the busiest bank's read count alone.
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

/// One Allocate stage per sub-core.
#[derive(Clone, Debug)]
pub struct AllocateStage {
    /// Per sub-core: the first cycle it takes another instruction.
    free_at: Vec<Cycle>,
}

impl AllocateStage {
    /// Stages for `sub_cores` sub-cores, all free.
    pub fn new(sub_cores: u32) -> Self {
        AllocateStage {
            free_at: vec![Cycle::ZERO; sub_cores.max(1) as usize],
        }
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

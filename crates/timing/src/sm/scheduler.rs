//! Warp scheduling policies of one warp scheduler: the order in which its warps are
//! considered for issue each cycle.
//!
//! - **LRR** (loose round robin): start after the warp that issued last.
//! - **GTO** (greedy then oldest, Rogers et al. MICRO'12): the warp that issued last
//!   first, then the others oldest first (by launch order).
//! - **GTY** (greedy then youngest, Huerta et al. MICRO'25, arXiv:2503.20481, the issue
//!   scheduler of NVIDIA's cores since Volta): the warp that issued last first, then the
//!   others youngest first.
//! - **Two-level** (Narasiman et al. MICRO'11; Gebhart et al. ISCA'11 §2.2 / MICRO'11
//!   §4.1): only the *active set* (at most `sm.active_warps`) may issue, round robin.
//!   An active warp whose next instruction depends on a long-latency operation (a global
//!   or local load or an atomic, pending in the scoreboard) — or that waits at a barrier,
//!   or has exited — is demoted to the tail of the *pending set*; free active slots are
//!   refilled from the pending set in FIFO order with warps that are not so blocked.
//!   Each move is reported so the register file's activate/deactivate hooks run.
//!
//! Orders are written into a scratch vector owned by the scheduler: no allocation per
//! cycle once it has grown.

use std::collections::VecDeque;

use crate::config::SchedulerPolicy;

/// One warp scheduler's warps and policy state. Warps are SM slot numbers.
#[derive(Clone, Debug)]
pub struct WarpScheduler {
    policy: SchedulerPolicy,
    /// All warps of this scheduler, oldest first.
    warps: Vec<u16>,
    /// LRR: position in `warps` (two-level: in `active`) to start from.
    rr: usize,
    /// GTO: the warp that issued last.
    greedy: Option<u16>,
    active: Vec<u16>,
    pending: VecDeque<u16>,
    active_cap: usize,
}

/// A change of the active set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetChange {
    /// The warp entered the active set.
    Activated(u16),
    /// The warp left the active set.
    Deactivated(u16),
}

impl WarpScheduler {
    /// An empty scheduler.
    pub fn new(policy: SchedulerPolicy, active_warps: u32) -> Self {
        WarpScheduler {
            policy,
            warps: Vec::with_capacity(64),
            rr: 0,
            greedy: None,
            active: Vec::with_capacity(active_warps as usize),
            pending: VecDeque::with_capacity(64),
            active_cap: active_warps.max(1) as usize,
        }
    }

    /// Number of warps.
    pub fn len(&self) -> usize {
        self.warps.len()
    }

    /// Whether the scheduler has no warps.
    pub fn is_empty(&self) -> bool {
        self.warps.is_empty()
    }

    /// The active set (two-level only; empty otherwise).
    pub fn active(&self) -> &[u16] {
        &self.active
    }

    /// Adds a newly launched warp (the youngest).
    pub fn add(&mut self, w: u16) {
        self.warps.push(w);
        if self.policy == SchedulerPolicy::TwoLevel {
            self.pending.push_back(w);
        }
    }

    /// Removes a warp that has retired. Returns true if it was active (two-level).
    pub fn remove(&mut self, w: u16) -> bool {
        if let Some(i) = self.warps.iter().position(|&x| x == w) {
            self.warps.remove(i);
            if self.policy != SchedulerPolicy::TwoLevel && i < self.rr {
                self.rr -= 1;
            }
        }
        if self.greedy == Some(w) {
            self.greedy = None;
        }
        self.pending.retain(|&x| x != w);
        if let Some(i) = self.active.iter().position(|&x| x == w) {
            self.active.remove(i);
            if self.policy == SchedulerPolicy::TwoLevel && i < self.rr {
                self.rr -= 1;
            }
            return true;
        }
        false
    }

    /// Two-level only: demotes blocked active warps and refills the active set from the
    /// pending set. `blocked(w)` says whether a warp must not be active now; every change
    /// is passed to `changed`.
    pub fn rebalance(&mut self, blocked: impl Fn(u16) -> bool, mut changed: impl FnMut(SetChange)) {
        if self.policy != SchedulerPolicy::TwoLevel {
            return;
        }
        let mut i = 0;
        while i < self.active.len() {
            let w = self.active[i];
            if blocked(w) {
                self.active.remove(i);
                if i < self.rr {
                    self.rr -= 1;
                }
                self.pending.push_back(w);
                changed(SetChange::Deactivated(w));
            } else {
                i += 1;
            }
        }
        let mut scanned = 0;
        let n = self.pending.len();
        while self.active.len() < self.active_cap && scanned < n {
            scanned += 1;
            let Some(w) = self.pending.pop_front() else {
                break;
            };
            if blocked(w) {
                self.pending.push_back(w);
            } else {
                self.active.push(w);
                changed(SetChange::Activated(w));
            }
        }
    }

    /// The warps to consider this cycle, in priority order (allocates: the SM uses
    /// [`Self::order_into`] with a buffer it keeps).
    pub fn order(&self) -> Vec<u16> {
        let mut order = Vec::new();
        self.order_into(&mut order);
        order
    }

    /// [`Self::order`] written into `order` (replacing its contents).
    pub fn order_into(&self, order: &mut Vec<u16>) {
        order.clear();
        match self.policy {
            SchedulerPolicy::Lrr => {
                let n = self.warps.len();
                if n > 0 {
                    let start = self.rr % n;
                    order.extend_from_slice(&self.warps[start..]);
                    order.extend_from_slice(&self.warps[..start]);
                }
            }
            SchedulerPolicy::Gto => {
                if let Some(g) = self.greedy {
                    order.push(g);
                }
                let g = self.greedy;
                order.extend(self.warps.iter().copied().filter(|&w| Some(w) != g));
            }
            SchedulerPolicy::Gty => {
                if let Some(g) = self.greedy {
                    order.push(g);
                }
                let g = self.greedy;
                order.extend(self.warps.iter().rev().copied().filter(|&w| Some(w) != g));
            }
            SchedulerPolicy::TwoLevel => {
                let n = self.active.len();
                if n > 0 {
                    let start = self.rr % n;
                    order.extend_from_slice(&self.active[start..]);
                    order.extend_from_slice(&self.active[..start]);
                }
            }
        }
    }

    /// `w` issued an instruction with the yield bit (MICRO'25 control bits; the rule for
    /// setting it is ours, [`compiler::control_bits`]): it loses the greedy policies'
    /// priority, so the next pick starts from the other warps' order.
    pub fn yield_greedy(&mut self, w: u16) {
        if self.greedy == Some(w) {
            self.greedy = None;
        }
    }

    /// Records that `w` issued this cycle.
    pub fn issued(&mut self, w: u16) {
        match self.policy {
            SchedulerPolicy::Lrr => {
                if let Some(i) = self.warps.iter().position(|&x| x == w) {
                    self.rr = i + 1;
                }
            }
            SchedulerPolicy::Gto | SchedulerPolicy::Gty => self.greedy = Some(w),
            SchedulerPolicy::TwoLevel => {
                if let Some(i) = self.active.iter().position(|&x| x == w) {
                    self.rr = i + 1;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lrr_starts_after_the_last_issuer() {
        let mut s = WarpScheduler::new(SchedulerPolicy::Lrr, 0);
        for w in [0, 2, 4, 6] {
            s.add(w);
        }
        assert_eq!(s.order(), &[0, 2, 4, 6]);
        s.issued(2);
        assert_eq!(s.order(), &[4, 6, 0, 2]);
        s.remove(0);
        assert_eq!(s.order(), &[4, 6, 2]);
    }

    #[test]
    fn gto_and_gty_keep_the_greedy_warp_then_the_oldest_or_youngest() {
        for (policy, before, after) in [
            (SchedulerPolicy::Gto, [3, 1, 2], [1, 3, 2]),
            (SchedulerPolicy::Gty, [2, 1, 3], [1, 2, 3]),
        ] {
            let mut s = WarpScheduler::new(policy, 0);
            for w in [3, 1, 2] {
                s.add(w);
            }
            assert_eq!(s.order(), &before, "{policy:?}");
            s.issued(1);
            assert_eq!(s.order(), &after, "{policy:?}");
            s.remove(1);
            assert_eq!(
                s.order()[0],
                if policy == SchedulerPolicy::Gto { 3 } else { 2 }
            );
        }
    }

    #[test]
    fn two_level_limits_the_active_set_and_swaps_blocked_warps() {
        let mut s = WarpScheduler::new(SchedulerPolicy::TwoLevel, 2);
        for w in 0..5 {
            s.add(w);
        }
        let mut log = Vec::new();
        s.rebalance(|_| false, |c| log.push(c));
        assert_eq!(s.order(), &[0, 1]);
        assert_eq!(log, [SetChange::Activated(0), SetChange::Activated(1)]);
        // Warp 0 now waits on a load, and so does warp 2: 3 replaces 0.
        log.clear();
        s.rebalance(|w| w == 0 || w == 2, |c| log.push(c));
        assert_eq!(
            log,
            [SetChange::Deactivated(0), SetChange::Activated(3)],
            "2 is skipped, stays pending"
        );
        assert_eq!(s.active(), &[1, 3]);
        s.issued(1);
        assert_eq!(s.order(), &[3, 1]);
    }
}

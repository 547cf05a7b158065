//! The per-warp scoreboard on architectural registers: one pending bit per 32-bit general
//! register and per predicate register, set at issue for every register an instruction
//! writes and cleared when its write to the register file completes. An instruction may
//! issue only when none of its sources (RAW) and none of its destinations (WAW) is
//! pending. A second bit set marks registers written by long-latency memory operations,
//! which the two-level scheduler and the stall breakdown use.
//!
//! Registers beyond [`MAX_GENERAL`] (only the unallocated test stand-in produces them)
//! alias modulo that size: a conservative false dependence, never a missed one.

use crate::kernel_info::{RegFileKind, RegOperand};

/// General registers tracked exactly.
pub const MAX_GENERAL: usize = 512;
const WORDS: usize = MAX_GENERAL / 64;

/// A set of architectural registers of one warp.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RegSet {
    general: [u64; WORDS],
    preds: u64,
}

impl RegSet {
    #[inline]
    fn bit(r: u16) -> (usize, u64) {
        let r = r as usize % MAX_GENERAL;
        (r / 64, 1 << (r % 64))
    }

    /// Adds every register of `op`.
    #[inline]
    pub fn insert(&mut self, op: &RegOperand) {
        match op.file {
            RegFileKind::General => {
                for r in op.regs() {
                    let (w, b) = Self::bit(r);
                    self.general[w] |= b;
                }
            }
            RegFileKind::Predicate => self.preds |= 1 << (op.reg % 64),
        }
    }

    /// Removes every register of `op`.
    #[inline]
    pub fn remove(&mut self, op: &RegOperand) {
        match op.file {
            RegFileKind::General => {
                for r in op.regs() {
                    let (w, b) = Self::bit(r);
                    self.general[w] &= !b;
                }
            }
            RegFileKind::Predicate => self.preds &= !(1 << (op.reg % 64)),
        }
    }

    /// Whether any register of `op` is in the set.
    #[inline]
    pub fn overlaps(&self, op: &RegOperand) -> bool {
        match op.file {
            RegFileKind::General => op.regs().any(|r| {
                let (w, b) = Self::bit(r);
                self.general[w] & b != 0
            }),
            RegFileKind::Predicate => self.preds & (1 << (op.reg % 64)) != 0,
        }
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.preds == 0 && self.general.iter().all(|&w| w == 0)
    }

    /// Empties the set.
    pub fn clear(&mut self) {
        *self = RegSet::default();
    }
}

/// What a scoreboard check found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hazard {
    /// No pending register.
    None,
    /// A pending register written by a short-latency operation.
    Short,
    /// Only pending registers written by long-latency memory operations.
    Long,
}

/// One warp's scoreboard.
#[derive(Clone, Copy, Debug, Default)]
pub struct Scoreboard {
    pending: RegSet,
    long: RegSet,
    /// The last [`Scoreboard::check_memo`] answer and its instruction key, until the
    /// scoreboard changes: a warp waiting on memory is checked for the same instruction
    /// every cycle its SM is evaluated, and a memory-bound SM holds dozens of such warps.
    memo: Option<(u64, Hazard)>,
}

impl Scoreboard {
    /// Marks `dsts` pending (and long-latency if `long`).
    pub fn reserve(&mut self, dsts: &[RegOperand], long: bool) {
        self.memo = None;
        for d in dsts {
            self.pending.insert(d);
            if long {
                self.long.insert(d);
            }
        }
    }

    /// Clears `dsts`.
    pub fn release(&mut self, dsts: &[RegOperand]) {
        self.memo = None;
        for d in dsts {
            self.pending.remove(d);
            self.long.remove(d);
        }
    }

    /// RAW on `srcs` and WAW on `dsts`.
    #[inline]
    pub fn check(&self, srcs: &[RegOperand], dsts: &[RegOperand]) -> Hazard {
        let mut found = Hazard::None;
        for op in srcs.iter().chain(dsts) {
            if self.pending.overlaps(op) {
                if !self.long.overlaps(op) {
                    return Hazard::Short;
                }
                found = Hazard::Long;
            }
        }
        found
    }

    /// [`Scoreboard::check`] of the instruction identified by `key` (the same key must
    /// always come with the same operands, which `operands` yields only when the memo
    /// does not answer).
    #[inline]
    pub fn check_memo<'a>(
        &mut self,
        key: u64,
        operands: impl FnOnce() -> (&'a [RegOperand], &'a [RegOperand]),
    ) -> Hazard {
        match self.memo {
            Some((k, h)) if k == key => h,
            _ => {
                let (srcs, dsts) = operands();
                let h = self.check(srcs, dsts);
                self.memo = Some((key, h));
                h
            }
        }
    }

    /// Whether a source of the instruction waits on a long-latency operation (the
    /// two-level scheduler's demotion test).
    pub fn depends_on_long(&self, srcs: &[RegOperand]) -> bool {
        srcs.iter().any(|s| self.long.overlaps(s))
    }

    /// Whether a long-latency result is pending (strand-end descheduling).
    pub fn any_long(&self) -> bool {
        !self.long.is_empty()
    }

    /// Whether nothing is pending.
    pub fn is_clear(&self) -> bool {
        self.pending.is_empty()
    }

    /// Forgets everything (warp slot reuse).
    pub fn clear(&mut self) {
        *self = Scoreboard::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel_info::OperandHint;

    fn r(reg: u16, width: u8) -> RegOperand {
        RegOperand {
            file: RegFileKind::General,
            reg,
            width,
            hint: OperandHint::default(),
        }
    }
    fn p(reg: u16) -> RegOperand {
        RegOperand {
            file: RegFileKind::Predicate,
            reg,
            width: 1,
            hint: OperandHint::default(),
        }
    }

    #[test]
    fn raw_waw_pairs_and_predicates() {
        let mut s = Scoreboard::default();
        s.reserve(&[r(4, 2)], false);
        assert_eq!(
            s.check(&[r(5, 1)], &[]),
            Hazard::Short,
            "upper half of a pair"
        );
        assert_eq!(s.check(&[r(6, 1)], &[]), Hazard::None);
        assert_eq!(s.check(&[], &[r(4, 1)]), Hazard::Short, "WAW");
        s.reserve(&[p(1)], true);
        assert_eq!(s.check(&[p(1)], &[]), Hazard::Long);
        assert_eq!(s.check(&[p(1), r(4, 1)], &[]), Hazard::Short);
        assert!(s.depends_on_long(&[p(1)]) && !s.depends_on_long(&[r(4, 1)]));
        s.release(&[r(4, 2)]);
        s.release(&[p(1)]);
        assert!(s.is_clear());
    }

    #[test]
    fn the_memo_answers_until_the_scoreboard_changes() {
        let mut s = Scoreboard::default();
        let (r4, r5) = ([r(4, 1)], [r(5, 1)]);
        let i7 = || (&r4[..], &[][..]);
        s.reserve(&r4, true);
        assert_eq!(s.check_memo(7, i7), Hazard::Long);
        let answered = s.check_memo(7, || unreachable!("answered by the memo"));
        assert_eq!(answered, Hazard::Long);
        let other = s.check_memo(8, || (&r5[..], &[][..]));
        assert_eq!(other, Hazard::None, "another instruction");
        s.release(&r4);
        assert_eq!(s.check_memo(7, i7), Hazard::None, "after a release");
        s.reserve(&r4, false);
        assert_eq!(s.check_memo(7, i7), Hazard::Short, "after a reserve");
        s.clear();
        assert_eq!(s.check_memo(7, i7), Hazard::None, "after a clear");
    }

    #[test]
    fn high_registers_alias_conservatively() {
        let mut s = Scoreboard::default();
        s.reserve(&[r(3, 1)], false);
        assert_eq!(s.check(&[r(3 + MAX_GENERAL as u16, 1)], &[]), Hazard::Short);
    }
}

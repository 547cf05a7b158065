//! The renumbering checker: proves that a renumbered allocation computes what the original
//! did, sharing no reasoning with [`super::renumber`].
//!
//! *Dataflow.* Both allocations are run through the register allocator's checker
//! ([`crate::regalloc::check`]), an independent symbolic dataflow check that every read of
//! every virtual register finds that register's current value in the architectural
//! registers it is assigned. Both preserve the virtual-register program, so they compute
//! the same as each other.
//!
//! *Shape.* Renumbering is a renaming of registers and nothing else: predicates stay where
//! they were, nothing is spilled that was not, every general register keeps its file and
//! width and lands on an aligned block inside the registers the function already used (so
//! registers per thread cannot grow), and copies the allocator coalesced stay coalesced.
//!
//! *Permutation.* When whole registers are renamed ([`RenumberUnit::Register`]), the
//! renaming must be one map of register numbers, applied to every register of every value
//! alike, and one-to-one: old register `r` becomes new register `π(r)` wherever it
//! appears.
//!
//! *Intervals.* The intervals were formed under the old numbering. Recomputed from the
//! instructions, no interval's working set may be larger under the new numbering, so the
//! bound `N` still holds.

use ir::{Function, InstId, RegId, RegisterEffects};

use crate::regalloc::ir_input::{width_of, IrInput};
use crate::regalloc::{check, Allocation, CheckError, Location};

use super::intervals::{IntervalId, RegisterIntervals};
use super::numbering::{CellView, NumberingError};
use super::renumber::RenumberUnit;

/// Why a renumbering is rejected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RenumberCheckError {
    #[error("the original allocation fails the allocation checker: {0}")]
    Before(CheckError),
    #[error("the renumbered allocation fails the allocation checker: {0}")]
    After(CheckError),
    #[error("{vreg} moved from {before} to {after}: renumbering only renames general registers")]
    WrongKind {
        vreg: RegId,
        before: Location,
        after: Location,
    },
    #[error("{vreg} at {after} is not aligned or lies outside the {registers} registers in use")]
    OutOfPlace {
        vreg: RegId,
        after: Location,
        registers: u32,
    },
    #[error("{field} changed ({before} before, {after} after)")]
    Changed {
        field: &'static str,
        before: String,
        after: String,
    },
    #[error("copy {inst} was coalesced but its registers now differ")]
    Uncoalesced { inst: InstId },
    #[error("interval {interval}'s working set grew from {before} to {after} registers")]
    WorkingSetGrew {
        interval: IntervalId,
        before: usize,
        after: usize,
    },
    #[error("renumbered allocation: {0}")]
    Numbering(NumberingError),
    #[error(
        "not a permutation of registers: R{old} becomes R{new} in {vreg} but R{other} elsewhere"
    )]
    NotAFunction {
        vreg: RegId,
        old: u32,
        new: u32,
        other: u32,
    },
    #[error("not a permutation of registers: R{first} and R{second} both become R{new}")]
    NotOneToOne { first: u32, second: u32, new: u32 },
}

/// What the checker verified.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct RenumberCheck {
    pub registers_checked: u32,
    pub intervals_checked: u32,
}

/// Checks that `after` is a renumbering of `before` (both allocations of `func`, which has
/// no spills) that preserves `func`'s meaning and `intervals`' working-set bounds, and is a
/// permutation of registers if `unit` says whole registers were renamed.
pub fn check_renumbering(
    func: &Function,
    intervals: &RegisterIntervals,
    before: &Allocation,
    after: &Allocation,
    unit: RenumberUnit,
) -> Result<RenumberCheck, RenumberCheckError> {
    let input = IrInput::new(func);
    check(&input, before).map_err(RenumberCheckError::Before)?;

    let changed = |field: &'static str, a: String, b: String| {
        if a == b {
            Ok(())
        } else {
            Err(RenumberCheckError::Changed {
                field,
                before: a,
                after: b,
            })
        }
    };
    changed(
        "number of locations",
        before.locations.len().to_string(),
        after.locations.len().to_string(),
    )?;
    changed(
        "predicates used",
        before.predicates_used.to_string(),
        after.predicates_used.to_string(),
    )?;
    changed(
        "spill edits",
        format!("{:?}", before.edits),
        format!("{:?}", after.edits),
    )?;
    changed(
        "spill slots",
        format!("{:?}", before.spill_slots),
        format!("{:?}", after.spill_slots),
    )?;
    changed(
        "spilled operands",
        format!("{:?}", before.spilled_operands),
        format!("{:?}", after.spilled_operands),
    )?;
    changed(
        "coalesced copies",
        format!("{:?}", before.coalesced_copies),
        format!("{:?}", after.coalesced_copies),
    )?;
    if after.registers_used > before.registers_used {
        changed(
            "registers used (it may only shrink)",
            before.registers_used.to_string(),
            after.registers_used.to_string(),
        )?;
    }

    let mut registers_checked = 0;
    for (v, (&b, &a)) in before.locations.iter().zip(&after.locations).enumerate() {
        let vreg = RegId::new(v);
        match (b, a) {
            (Location::Reg(_), Location::Reg(r)) => {
                let units = width_of(func.reg(vreg).class).units();
                if r.0 % units != 0 || r.0 + units > after.registers_used {
                    return Err(RenumberCheckError::OutOfPlace {
                        vreg,
                        after: a,
                        registers: after.registers_used,
                    });
                }
                registers_checked += 1;
            }
            (b, a) if b == a && !matches!(b, Location::Reg(_)) => {}
            (before, after) => {
                return Err(RenumberCheckError::WrongKind {
                    vreg,
                    before,
                    after,
                })
            }
        }
    }
    for &inst in &after.coalesced_copies {
        let srcs = func.uses(inst);
        let dsts = func.defs(inst);
        let same = match (dsts, srcs) {
            ([d], [s]) => after.location(*d) == after.location(*s),
            _ => false,
        };
        if !same {
            return Err(RenumberCheckError::Uncoalesced { inst });
        }
    }

    check(&input, after).map_err(RenumberCheckError::After)?;
    if unit == RenumberUnit::Register {
        check_permutation(func, before, after)?;
    }

    let old = CellView::new(func, before).map_err(RenumberCheckError::Numbering)?;
    let new = CellView::new(func, after).map_err(RenumberCheckError::Numbering)?;
    for id in intervals.ids() {
        let count = |view: &CellView<'_>| {
            let mut regs: Vec<u32> = intervals
                .insts(&old, id)
                .flat_map(|i| view.touched(i).iter().copied())
                .collect();
            regs.sort_unstable();
            regs.dedup();
            regs.len()
        };
        let (b, a) = (count(&old), count(&new));
        if a > b {
            return Err(RenumberCheckError::WorkingSetGrew {
                interval: id,
                before: b,
                after: a,
            });
        }
    }
    Ok(RenumberCheck {
        registers_checked,
        intervals_checked: intervals.len() as u32,
    })
}

/// Checks that `after` renames the registers of `before` by one one-to-one map.
pub fn check_permutation(
    func: &Function,
    before: &Allocation,
    after: &Allocation,
) -> Result<(), RenumberCheckError> {
    const NONE: u32 = u32::MAX;
    let mut image = vec![NONE; before.registers_used as usize];
    let mut preimage = vec![NONE; before.registers_used.max(after.registers_used) as usize];
    for (v, (&b, &a)) in before.locations.iter().zip(&after.locations).enumerate() {
        let (Location::Reg(old), Location::Reg(new)) = (b, a) else {
            continue;
        };
        let vreg = RegId::new(v);
        for k in 0..width_of(func.reg(vreg).class).units() {
            let (o, n) = (old.0 + k, new.0 + k);
            match image[o as usize] {
                NONE => image[o as usize] = n,
                other if other != n => {
                    return Err(RenumberCheckError::NotAFunction {
                        vreg,
                        old: o,
                        new: n,
                        other,
                    })
                }
                _ => {}
            }
            match preimage[n as usize] {
                NONE => preimage[n as usize] = o,
                first if first != o => {
                    return Err(RenumberCheckError::NotOneToOne {
                        first,
                        second: o,
                        new: n,
                    })
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// Why a set of register-intervals is not a valid partition.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IntervalCheckError {
    #[error("block {block} is not covered exactly by interval pieces: {detail}")]
    Coverage { block: ir::BlockId, detail: String },
    #[error("instruction {inst} is in {listed} but interval_of says {claimed}")]
    Membership {
        inst: InstId,
        listed: IntervalId,
        claimed: IntervalId,
    },
    #[error("{interval}'s working set {recorded:?} is not the registers its instructions touch {actual:?}")]
    WorkingSet {
        interval: IntervalId,
        recorded: Vec<u32>,
        actual: Vec<u32>,
    },
    #[error("{interval} has {size} registers, more than N = {limit}")]
    TooManyRegisters {
        interval: IntervalId,
        size: usize,
        limit: u32,
    },
    #[error("{interval}: {detail}")]
    Kind {
        interval: IntervalId,
        detail: String,
    },
    #[error("{interval} is entered at {piece:?}, which is not its header")]
    SecondEntry {
        interval: IntervalId,
        piece: super::intervals::Piece,
    },
}

/// Checks that `intervals` partition `g`'s instructions into single-entry regions whose
/// working sets are exactly what their instructions touch and at most `N` registers
/// (except a lone call or a lone instruction wider than `N`), recomputing everything from
/// `g` rather than trusting how the intervals were formed.
pub fn check_intervals<G: super::intervals::IntervalInput>(
    g: &G,
    intervals: &RegisterIntervals,
) -> Result<(), IntervalCheckError> {
    use super::intervals::{IntervalKind, Piece};
    use ir::BlockId;

    let nb = g.num_blocks();
    // Pieces of each block, in order, with their interval.
    let mut by_block: Vec<Vec<(Piece, IntervalId)>> = vec![Vec::new(); nb];
    for id in intervals.ids() {
        for &p in &intervals.interval(id).pieces {
            by_block[p.block.index()].push((p, id));
        }
    }
    for (b, list) in by_block.iter_mut().enumerate() {
        let block = BlockId::new(b);
        list.sort();
        let len = g.insts_of(block).len() as u32;
        let coverage = |detail: String| IntervalCheckError::Coverage { block, detail };
        if list.is_empty() {
            return Err(coverage("no piece".into()));
        }
        let mut at = 0;
        for (p, _) in list.iter() {
            if p.start != at || (p.is_empty() && len > 0) {
                return Err(coverage(format!("piece {p:?} after position {at}")));
            }
            at = p.end;
        }
        if at != len {
            return Err(coverage(format!("pieces end at {at} of {len}")));
        }
        for &(p, id) in list.iter() {
            for &inst in &g.insts_of(block)[p.start as usize..p.end as usize] {
                let claimed = intervals.interval_of(inst);
                if claimed != id {
                    return Err(IntervalCheckError::Membership {
                        inst,
                        listed: id,
                        claimed,
                    });
                }
            }
        }
    }

    for id in intervals.ids() {
        let interval = intervals.interval(id);
        let insts: Vec<InstId> = intervals.insts(g, id).collect();
        let mut actual: Vec<u32> = insts
            .iter()
            .flat_map(|&i| g.registers(i).iter().copied())
            .collect();
        actual.sort_unstable();
        actual.dedup();
        if actual != interval.working_set {
            return Err(IntervalCheckError::WorkingSet {
                interval: id,
                recorded: interval.working_set.clone(),
                actual,
            });
        }
        let calls = insts.iter().filter(|&&i| g.is_call(i)).count();
        let kind = |detail: String| IntervalCheckError::Kind {
            interval: id,
            detail,
        };
        match interval.kind {
            IntervalKind::Normal => {
                if actual.len() > intervals.limit as usize {
                    return Err(IntervalCheckError::TooManyRegisters {
                        interval: id,
                        size: actual.len(),
                        limit: intervals.limit,
                    });
                }
                if calls > 0 {
                    return Err(kind("a call shares an interval with other code".into()));
                }
            }
            IntervalKind::Call => {
                if insts.len() != 1 || calls != 1 {
                    return Err(kind(format!(
                        "a call interval has {} instructions, {calls} calls",
                        insts.len()
                    )));
                }
            }
            IntervalKind::Oversized => {
                if insts.len() != 1 || actual.len() <= intervals.limit as usize {
                    return Err(kind(format!(
                        "an oversized interval has {} instructions and {} registers",
                        insts.len(),
                        actual.len()
                    )));
                }
            }
        }
    }

    // Single entry: every edge into a piece other than a header comes from its interval.
    let mut reachable = vec![false; nb];
    if nb > 0 {
        let mut stack = vec![g.entry()];
        reachable[g.entry().index()] = true;
        while let Some(b) = stack.pop() {
            for &s in g.successors(b) {
                if !reachable[s.index()] {
                    reachable[s.index()] = true;
                    stack.push(s);
                }
            }
        }
        let entry = by_block[g.entry().index()][0];
        if intervals.interval(entry.1).header() != entry.0 {
            return Err(IntervalCheckError::SecondEntry {
                interval: entry.1,
                piece: entry.0,
            });
        }
    }
    for (b, list) in by_block.iter().enumerate() {
        for (k, &(p, id)) in list.iter().enumerate() {
            if intervals.interval(id).header() == p {
                continue;
            }
            let from: Vec<IntervalId> = if k > 0 {
                vec![list[k - 1].1]
            } else {
                g.predecessors(BlockId::new(b))
                    .iter()
                    .filter(|q| !reachable[b] || reachable[q.index()])
                    .map(|q| by_block[q.index()].last().expect("covered").1)
                    .collect()
            };
            if from.iter().any(|&f| f != id) {
                return Err(IntervalCheckError::SecondEntry {
                    interval: id,
                    piece: p,
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use ir::{Function, RegId};

    use super::*;
    use crate::ltrf::intervals::form_register_intervals;
    use crate::regalloc::{PhysReg, PredReg};
    use crate::test_support::first_function;

    const KERNEL: &str = r#"
.version 7.8
.target sm_70
.address_size 64
.visible .entry k(.param .u32 x)
{
    .reg .u32 %r<10>;
    .reg .u64 %rd<2>;
    .reg .pred %p;
    ld.param.u32 %r1, [x];
    ld.param.u32 %r9, [x];
    add.u32 %r2, %r1, 1;
    add.u32 %r3, %r2, %r9;
    cvt.u64.u32 %rd1, %r3;
    setp.eq.u64 %p, %rd1, 0;
    @%p st.local.u32 [%r9], %r3;
    exit;
}
"#;

    fn reg(f: &Function, name: &str) -> RegId {
        RegId::new(f.regs.iter().position(|r| r.name == name).unwrap())
    }

    /// %r1 and %r2 share R0 (one dies where the other is born), %r9 is R1, %r3 shares
    /// R0 too, %rd1 is R2:R3 and there are 6 registers; %p is P0.
    fn before(f: &Function) -> Allocation {
        let mut a = Allocation {
            locations: vec![Location::Unused; f.regs.len()],
            registers_used: 6,
            predicates_used: 1,
            ..Allocation::default()
        };
        for (name, loc) in [
            ("%r1", Location::Reg(PhysReg(0))),
            ("%r2", Location::Reg(PhysReg(0))),
            ("%r3", Location::Reg(PhysReg(0))),
            ("%r9", Location::Reg(PhysReg(1))),
            ("%rd1", Location::Reg(PhysReg(2))),
            ("%p", Location::Pred(PredReg(0))),
        ] {
            a.locations[reg(f, name).index()] = loc;
        }
        a
    }

    fn check_with(
        f: &Function,
        edit: impl FnOnce(&mut Allocation),
    ) -> Result<RenumberCheck, RenumberCheckError> {
        let before = before(f);
        let view = CellView::new(f, &before).unwrap();
        let intervals = form_register_intervals(&view, 16);
        let mut after = before.clone();
        edit(&mut after);
        check_renumbering(f, &intervals, &before, &after, RenumberUnit::LiveRange)
    }

    #[test]
    fn a_consistent_renaming_passes() {
        let f = first_function(KERNEL);
        let swapped = check_with(&f, |a| {
            for name in ["%r1", "%r2", "%r3"] {
                a.locations[reg(&f, name).index()] = Location::Reg(PhysReg(1));
            }
            a.locations[reg(&f, "%r9").index()] = Location::Reg(PhysReg(0));
            a.locations[reg(&f, "%rd1").index()] = Location::Reg(PhysReg(4));
        });
        assert_eq!(swapped.map(|c| c.registers_checked), Ok(5));
    }

    #[test]
    fn a_clobbered_value_is_caught_by_the_dataflow_check() {
        let f = first_function(KERNEL);
        // %r9 is live while %r2 is written: they may not share.
        let err = check_with(&f, |a| {
            a.locations[reg(&f, "%r9").index()] = Location::Reg(PhysReg(0));
        });
        assert!(matches!(err, Err(RenumberCheckError::After(_))), "{err:?}");
    }

    #[test]
    fn a_misaligned_pair_or_a_new_register_is_out_of_place() {
        let f = first_function(KERNEL);
        let err = check_with(&f, |a| {
            a.locations[reg(&f, "%rd1").index()] = Location::Reg(PhysReg(3));
        });
        assert!(
            matches!(err, Err(RenumberCheckError::OutOfPlace { .. })),
            "{err:?}"
        );
        let err = check_with(&f, |a| {
            a.locations[reg(&f, "%r9").index()] = Location::Reg(PhysReg(6));
        });
        assert!(
            matches!(err, Err(RenumberCheckError::OutOfPlace { .. })),
            "{err:?}"
        );
        let err = check_with(&f, |a| a.registers_used = 7);
        assert!(
            matches!(err, Err(RenumberCheckError::Changed { .. })),
            "{err:?}"
        );
    }

    #[test]
    fn predicates_are_not_renamed() {
        let f = first_function(KERNEL);
        let err = check_with(&f, |a| {
            a.locations[reg(&f, "%p").index()] = Location::Pred(PredReg(1));
            a.predicates_used = 2;
        });
        assert!(
            matches!(err, Err(RenumberCheckError::Changed { .. })),
            "{err:?}"
        );
        let err = check_with(&f, |a| {
            a.locations[reg(&f, "%p").index()] = Location::Pred(PredReg(0));
            a.locations[reg(&f, "%r9").index()] = Location::Pred(PredReg(0));
        });
        assert!(
            matches!(err, Err(RenumberCheckError::WrongKind { .. })),
            "{err:?}"
        );
    }

    #[test]
    fn splitting_a_shared_register_grows_the_working_set_and_is_rejected() {
        let f = first_function(KERNEL);
        // Valid dataflow, but the interval now prefetches R0 and R5 for what R0 held.
        let err = check_with(&f, |a| {
            a.locations[reg(&f, "%r2").index()] = Location::Reg(PhysReg(5));
        });
        assert!(
            matches!(
                err,
                Err(RenumberCheckError::WorkingSetGrew {
                    before: 4,
                    after: 5,
                    ..
                })
            ),
            "{err:?}"
        );
    }

    #[test]
    fn a_permutation_must_map_each_register_one_way_and_one_to_one() {
        let f = first_function(KERNEL);
        let b = before(&f);
        // R0 and R1 exchanged, R2:R3 to R4:R5: a permutation.
        let mut a = b.clone();
        for name in ["%r1", "%r2", "%r3"] {
            a.locations[reg(&f, name).index()] = Location::Reg(PhysReg(1));
        }
        a.locations[reg(&f, "%r9").index()] = Location::Reg(PhysReg(0));
        a.locations[reg(&f, "%rd1").index()] = Location::Reg(PhysReg(4));
        assert_eq!(check_permutation(&f, &b, &a), Ok(()));
        // %r2 keeps R0 while %r1 and %r3 (also R0 before) move: a live-range renaming, not
        // a register one.
        let mut split = a.clone();
        split.locations[reg(&f, "%r2").index()] = Location::Reg(PhysReg(3));
        assert!(matches!(
            check_permutation(&f, &b, &split),
            Err(RenumberCheckError::NotAFunction { .. })
        ));
        // R0 and R1 both onto R1.
        let mut merged = a.clone();
        merged.locations[reg(&f, "%r9").index()] = Location::Reg(PhysReg(1));
        assert!(matches!(
            check_permutation(&f, &b, &merged),
            Err(RenumberCheckError::NotOneToOne { .. })
        ));
    }

    #[test]
    fn the_original_must_be_valid_too() {
        let f = first_function(KERNEL);
        let mut bad = before(&f);
        bad.locations[reg(&f, "%r9").index()] = Location::Reg(PhysReg(0));
        let view = CellView::new(&f, &bad).unwrap();
        let intervals = form_register_intervals(&view, 16);
        let err = check_renumbering(&f, &intervals, &bad, &bad, RenumberUnit::LiveRange);
        assert!(matches!(err, Err(RenumberCheckError::Before(_))), "{err:?}");
    }
}

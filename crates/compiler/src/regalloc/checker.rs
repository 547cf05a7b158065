//! The allocation checker: proves that an [`Allocation`] preserves the function's
//! virtual-register dataflow, without sharing any reasoning with the allocator (in the
//! spirit of regalloc2's checker).
//!
//! **Static part.** Every register an instruction references has a location in the right
//! file, aligned for its width and inside the reported register counts; spill slots exist
//! and fit; every reference of a spilled register names the register it occupies there.
//!
//! **Dataflow part.** A forward dataflow over the CFG tracks, for every storage cell — each
//! 32-bit register, each predicate register, each spill slot — the set of virtual
//! registers whose *current* value the cell holds. A set, not one register, because a
//! coalesced copy `d = s` leaves one cell holding both `d` and `s`. The lattice per cell
//! is: unvisited (top) / a set of vregs / empty (unknown or conflicting); paths meet by
//! intersection. Transfer per instruction: reloads before it copy a slot's set into
//! registers; every read must find the vreg in all cells of its location; a write of `v`
//! removes `v` from every cell (other copies are now stale) and puts `{v}` (for a copy, the
//! source's set plus `v`) in its own cells — except that a guarded write, whose skipped
//! lanes keep the old contents, leaves `{v}` only where the cells already held `v`, and a
//! mixture (the empty set) elsewhere, which a later read of `v` then rejects. Spills after
//! the instruction copy registers into a slot.
//!
//! **Entry.** Registers read before written on some path hold their incoming value in
//! their location at entry; which those are is found by a forward "maybe undefined"
//! dataflow of the checker's own. Two such registers sharing a cell conflict.
//!
//! After the fixpoint, a last pass over the reachable blocks in order reports the first
//! violation with its instruction, register and location.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use ir::{BlockId, InstId, RegId};

use super::{AllocInput, Allocation, Edit, Location, PhysReg, RegWidth, SpillSlot};
use ir::analysis::BitSet;

/// The contents of a cell, for error messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Held(pub Vec<RegId>);

impl fmt::Display for Held {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str(
                "no known value (never written, clobbered, or different on different paths)",
            );
        }
        for (i, r) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(" = ")?;
            }
            write!(f, "{r}")?;
        }
        Ok(())
    }
}

/// The first way an allocation fails to preserve the function's meaning.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CheckError {
    #[error("malformed function: {0}")]
    InvalidInput(String),
    #[error("{vreg} is referenced by {inst} but has no location")]
    MissingLocation { vreg: RegId, inst: InstId },
    #[error("{vreg} ({width}) is assigned {location}, in the wrong register file")]
    WrongFile {
        vreg: RegId,
        width: RegWidth,
        location: Location,
    },
    #[error("{vreg} ({width}) at {location} is not aligned to {} registers", width.units())]
    Misaligned {
        vreg: RegId,
        width: RegWidth,
        location: Location,
    },
    #[error(
        "{vreg} ({width}) at {location} lies beyond the {limit} registers the allocation reports"
    )]
    OutOfRange {
        vreg: RegId,
        width: RegWidth,
        location: Location,
        limit: u32,
    },
    #[error(
        "{vreg} ({width}) is assigned spill slot {slot}, which does not exist or has another width"
    )]
    BadSlot {
        vreg: RegId,
        width: RegWidth,
        slot: SpillSlot,
    },
    #[error("{inst} references spilled {vreg} but the allocation gives no register for it there")]
    MissingOperandRegister { inst: InstId, vreg: RegId },
    #[error("the allocation gives a register for {vreg} at {inst}, which is not a spilled register referenced there")]
    StrayOperandRegister { inst: InstId, vreg: RegId },
    #[error("edit {index} ({edit:?}) is malformed: {why}")]
    BadEdit {
        index: usize,
        edit: Edit,
        why: String,
    },
    #[error("{inst} reads {vreg} from {location}, which holds {found}")]
    ValueNotHeld {
        inst: InstId,
        vreg: RegId,
        location: Location,
        found: Held,
    },
    #[error("the reload of {vreg} before {inst} reads {slot}, which holds {found}")]
    ReloadOfWrongValue {
        inst: InstId,
        vreg: RegId,
        slot: SpillSlot,
        found: Held,
    },
    #[error("the spill of {vreg} after {inst} stores {reg}, which holds {found}")]
    SpillOfWrongValue {
        inst: InstId,
        vreg: RegId,
        reg: PhysReg,
        found: Held,
    },
}

/// Checks that `alloc` preserves the dataflow of `input`; `Ok` means every read of every
/// virtual register, on every path, finds that register's current value.
pub fn check(input: &impl AllocInput, alloc: &Allocation) -> Result<(), CheckError> {
    let shape = Shape::new(input, alloc)?;
    shape.check_static(input, alloc)?;
    let entry_live = entry_live(input);
    Dataflow::new(input, alloc, &shape, &entry_live).run()
}

/// Indices and lookups derived from the function and the allocation.
struct Shape {
    num_blocks: usize,
    num_regs: usize,
    widths: Vec<RegWidth>,
    /// Cells: `0..gprs` registers, then predicates, then spill slots.
    gprs: usize,
    preds: usize,
    slots: usize,
    operand_regs: BTreeMap<(InstId, RegId), PhysReg>,
    edits_before: BTreeMap<InstId, Vec<usize>>,
    edits_after: BTreeMap<InstId, Vec<usize>>,
}

fn invalid(msg: String) -> CheckError {
    CheckError::InvalidInput(msg)
}

impl Shape {
    fn new(input: &impl AllocInput, alloc: &Allocation) -> Result<Self, CheckError> {
        let num_blocks = input.num_blocks();
        let num_regs = input.num_regs();
        let num_insts = input.num_insts();
        if input.entry().index() >= num_blocks {
            return Err(invalid(format!("entry {} out of range", input.entry())));
        }
        for b in (0..num_blocks).map(BlockId::new) {
            if let Some(s) = input.successors(b).iter().find(|s| s.index() >= num_blocks) {
                return Err(invalid(format!("{b} has successor {s} out of range")));
            }
            for &i in input.block_insts(b) {
                if i.index() >= num_insts {
                    return Err(invalid(format!("{b} lists {i}, out of range")));
                }
                if let Some(r) = input
                    .uses(i)
                    .iter()
                    .chain(input.defs(i))
                    .find(|r| r.index() >= num_regs)
                {
                    return Err(invalid(format!("{i} references {r}, out of range")));
                }
            }
        }
        let widths = (0..num_regs)
            .map(|r| input.reg_width(RegId::new(r)))
            .collect();
        let mut operand_regs = BTreeMap::new();
        for o in &alloc.spilled_operands {
            if operand_regs.insert((o.inst, o.vreg), o.reg).is_some() {
                return Err(CheckError::StrayOperandRegister {
                    inst: o.inst,
                    vreg: o.vreg,
                });
            }
        }
        let mut edits_before: BTreeMap<InstId, Vec<usize>> = BTreeMap::new();
        let mut edits_after: BTreeMap<InstId, Vec<usize>> = BTreeMap::new();
        for (index, e) in alloc.edits.iter().enumerate() {
            match *e {
                Edit::Reload { before, .. } => edits_before.entry(before).or_default().push(index),
                Edit::Spill { after, .. } => edits_after.entry(after).or_default().push(index),
            }
        }
        Ok(Shape {
            num_blocks,
            num_regs,
            widths,
            gprs: alloc.registers_used as usize,
            preds: alloc.predicates_used as usize,
            slots: alloc.spill_slots.len(),
            operand_regs,
            edits_before,
            edits_after,
        })
    }

    fn width(&self, r: RegId) -> RegWidth {
        self.widths[r.index()]
    }

    /// A register range `base..base+units` as cells, if aligned and in range.
    fn reg_cells(&self, base: PhysReg, width: RegWidth) -> Result<std::ops::Range<usize>, bool> {
        let units = width.units();
        if width.is_predicate() {
            return Err(false);
        }
        if !base.0.is_multiple_of(units) {
            return Err(false);
        }
        let end = base.0 as usize + units as usize;
        if end > self.gprs {
            return Err(true);
        }
        Ok(base.0 as usize..end)
    }

    /// [`Self::reg_cells`] as the error that names `vreg`: beyond `limit` registers, or not
    /// aligned to its width.
    fn check_reg_placement(
        &self,
        vreg: RegId,
        width: RegWidth,
        base: PhysReg,
        limit: u32,
    ) -> Result<(), CheckError> {
        let location = Location::Reg(base);
        match self.reg_cells(base, width) {
            Ok(_) => Ok(()),
            Err(true) => Err(CheckError::OutOfRange {
                vreg,
                width,
                location,
                limit,
            }),
            Err(false) => Err(CheckError::Misaligned {
                vreg,
                width,
                location,
            }),
        }
    }

    fn slot_cell(&self, s: SpillSlot) -> usize {
        self.gprs + self.preds + s.0 as usize
    }

    fn check_static(&self, input: &impl AllocInput, alloc: &Allocation) -> Result<(), CheckError> {
        let mut referenced_at: Vec<Option<InstId>> = vec![None; self.num_regs];
        for b in (0..self.num_blocks).map(BlockId::new) {
            for &i in input.block_insts(b) {
                for &r in input.uses(i).iter().chain(input.defs(i)) {
                    referenced_at[r.index()].get_or_insert(i);
                }
            }
        }
        for (r, at) in referenced_at.iter().enumerate() {
            let Some(inst) = *at else { continue };
            let vreg = RegId::new(r);
            let width = self.width(vreg);
            let location = alloc.location(vreg);
            match location {
                Location::Unused => return Err(CheckError::MissingLocation { vreg, inst }),
                Location::Pred(p) if width.is_predicate() => {
                    if p.0 as usize >= self.preds {
                        return Err(CheckError::OutOfRange {
                            vreg,
                            width,
                            location,
                            limit: alloc.predicates_used,
                        });
                    }
                }
                Location::Reg(base) if !width.is_predicate() => {
                    self.check_reg_placement(vreg, width, base, alloc.registers_used)?;
                }
                Location::Spill(slot) if !width.is_predicate() => {
                    if alloc.spill_slots.get(slot.0 as usize).map(|s| s.width) != Some(width) {
                        return Err(CheckError::BadSlot { vreg, width, slot });
                    }
                }
                _ => {
                    return Err(CheckError::WrongFile {
                        vreg,
                        width,
                        location,
                    })
                }
            }
        }
        // Operand registers: exactly the references of spilled registers, well placed.
        let mut needed = BTreeSet::new();
        for b in (0..self.num_blocks).map(BlockId::new) {
            for &inst in input.block_insts(b) {
                for &vreg in input.uses(inst).iter().chain(input.defs(inst)) {
                    if let Location::Spill(_) = alloc.location(vreg) {
                        if !self.operand_regs.contains_key(&(inst, vreg)) {
                            return Err(CheckError::MissingOperandRegister { inst, vreg });
                        }
                        needed.insert((inst, vreg));
                    }
                }
            }
        }
        for (&(inst, vreg), &reg) in &self.operand_regs {
            if !needed.contains(&(inst, vreg)) {
                return Err(CheckError::StrayOperandRegister { inst, vreg });
            }
            self.check_reg_placement(vreg, self.width(vreg), reg, alloc.registers_used)?;
        }
        for (index, edit) in alloc.edits.iter().enumerate() {
            let (vreg, slot, reg) = match *edit {
                Edit::Reload {
                    vreg, slot, reg, ..
                }
                | Edit::Spill {
                    vreg, slot, reg, ..
                } => (vreg, slot, reg),
            };
            let bad = |why: &str| CheckError::BadEdit {
                index,
                edit: *edit,
                why: why.to_string(),
            };
            if vreg.index() >= self.num_regs {
                return Err(bad("register out of range"));
            }
            let width = self.width(vreg);
            if alloc.spill_slots.get(slot.0 as usize).map(|s| s.width) != Some(width) {
                return Err(bad("slot missing or of another width"));
            }
            if self.reg_cells(reg, width).is_err() {
                return Err(bad("register misaligned, out of range or a predicate"));
            }
        }
        Ok(())
    }
}

/// Registers read on some path from the entry before any full (unguarded) write: a
/// forward "maybe undefined" dataflow, union at joins. A guarded write leaves its register
/// maybe undefined: the lanes it skips keep whatever was there.
fn entry_live(input: &impl AllocInput) -> Vec<bool> {
    let n = input.num_blocks();
    let regs = input.num_regs();
    let all = BitSet::new_filled(regs);
    let mut undefined_in: Vec<Option<BitSet<RegId>>> = vec![None; n];
    undefined_in[input.entry().index()] = Some(all);
    let mut live = vec![false; regs];
    let mut work: BTreeSet<usize> = BTreeSet::from([input.entry().index()]);
    while let Some(b) = work.pop_first() {
        let Some(mut undefined) = undefined_in[b].clone() else {
            continue;
        };
        for &i in input.block_insts(BlockId::new(b)) {
            let partial = input.defs_are_partial(i);
            for &r in input.uses(i) {
                if undefined.contains(r) {
                    live[r.index()] = true;
                }
            }
            if !partial {
                for &d in input.defs(i) {
                    undefined.remove(d);
                }
            }
        }
        for &s in input.successors(BlockId::new(b)) {
            let changed = match &mut undefined_in[s.index()] {
                Some(existing) => existing.union_with(&undefined),
                slot @ None => {
                    *slot = Some(undefined.clone());
                    true
                }
            };
            if changed {
                work.insert(s.index());
            }
        }
    }
    live
}

/// Per cell: the vregs whose current value it holds (sorted).
type State = Vec<Vec<RegId>>;

struct Dataflow<'a, F: AllocInput> {
    input: &'a F,
    alloc: &'a Allocation,
    shape: &'a Shape,
    entry_state: State,
}

fn intersect(a: &mut Vec<RegId>, b: &[RegId]) -> bool {
    let before = a.len();
    a.retain(|r| b.binary_search(r).is_ok());
    a.len() != before
}

impl<'a, F: AllocInput> Dataflow<'a, F> {
    fn new(input: &'a F, alloc: &'a Allocation, shape: &'a Shape, entry_live: &[bool]) -> Self {
        let cells = shape.gprs + shape.preds + shape.slots;
        let mut claims: Vec<Vec<RegId>> = vec![Vec::new(); cells];
        let mut df = Dataflow {
            input,
            alloc,
            shape,
            entry_state: Vec::new(),
        };
        for (r, &live) in entry_live.iter().enumerate() {
            if !live {
                continue;
            }
            let vreg = RegId::new(r);
            let cells = match alloc.location(vreg) {
                Location::Spill(s) => vec![shape.slot_cell(s)],
                _ => df.home_cells(vreg),
            };
            for c in cells {
                claims[c].push(vreg);
            }
        }
        // A cell claimed by two incoming values holds neither for sure.
        df.entry_state = claims
            .into_iter()
            .map(|c| if c.len() == 1 { c } else { Vec::new() })
            .collect();
        df
    }

    /// Cells of a register's own location (static checks guarantee they are in range).
    fn home_cells(&self, vreg: RegId) -> Vec<usize> {
        let width = self.shape.width(vreg);
        match self.alloc.location(vreg) {
            Location::Reg(base) => self.shape.reg_cells(base, width).unwrap_or(0..0).collect(),
            Location::Pred(p) => vec![self.shape.gprs + p.0 as usize],
            Location::Spill(_) | Location::Unused => Vec::new(),
        }
    }

    /// Cells `inst` reads or writes `vreg` in, and that location.
    fn operand(&self, inst: InstId, vreg: RegId) -> (Vec<usize>, Location) {
        match self.alloc.location(vreg) {
            Location::Spill(_) => {
                let reg = self.shape.operand_regs.get(&(inst, vreg)).copied();
                let cells = reg
                    .and_then(|r| self.shape.reg_cells(r, self.shape.width(vreg)).ok())
                    .map(|r| r.collect())
                    .unwrap_or_default();
                (cells, reg.map_or(Location::Unused, Location::Reg))
            }
            loc => (self.home_cells(vreg), loc),
        }
    }

    fn edit_cells(&self, vreg: RegId, reg: PhysReg) -> Vec<usize> {
        self.shape
            .reg_cells(reg, self.shape.width(vreg))
            .map(|r| r.collect())
            .unwrap_or_default()
    }

    /// What all `cells` hold in common.
    fn common(state: &State, cells: &[usize]) -> Vec<RegId> {
        let mut iter = cells.iter();
        let Some(&first) = iter.next() else {
            return Vec::new();
        };
        let mut set = state[first].clone();
        for &c in iter {
            intersect(&mut set, &state[c]);
        }
        set
    }

    /// A plain copy as the checker understands it: unguarded, same widths, and really
    /// among the instruction's operands.
    fn copy_of(&self, inst: InstId) -> Option<(RegId, RegId)> {
        let c = self.input.copy(inst)?;
        let ok = !self.input.defs_are_partial(inst)
            && self.input.defs(inst) == [c.dst]
            && self.input.uses(inst).contains(&c.src)
            && self.shape.width(c.dst) == self.shape.width(c.src);
        ok.then_some((c.dst, c.src))
    }

    fn transfer(&self, inst: InstId, state: &mut State, report: bool) -> Result<(), CheckError> {
        if let Some(list) = self.shape.edits_before.get(&inst) {
            for &e in list {
                let Edit::Reload {
                    vreg, slot, reg, ..
                } = self.alloc.edits[e]
                else {
                    continue;
                };
                let held = state[self.shape.slot_cell(slot)].clone();
                // Only a reload for a read must bring `vreg`; one before a guarded write
                // may bring a mixture nobody reads (a later read would be caught).
                let for_read = self.input.uses(inst).contains(&vreg);
                if report && for_read && held.binary_search(&vreg).is_err() {
                    return Err(CheckError::ReloadOfWrongValue {
                        inst,
                        vreg,
                        slot,
                        found: Held(held),
                    });
                }
                for c in self.edit_cells(vreg, reg) {
                    state[c] = held.clone();
                }
            }
        }
        let partial = self.input.defs_are_partial(inst);
        for &vreg in self.input.uses(inst) {
            let (cells, location) = self.operand(inst, vreg);
            for &c in &cells {
                if report && state[c].binary_search(&vreg).is_err() {
                    return Err(CheckError::ValueNotHeld {
                        inst,
                        vreg,
                        location,
                        found: Held(state[c].clone()),
                    });
                }
            }
        }
        let copy = self.copy_of(inst);
        let copied = copy.map(|(_, src)| Self::common(state, &self.operand(inst, src).0));
        for &vreg in self.input.defs(inst) {
            let cells = self.operand(inst, vreg).0;
            // A guarded write yields the new value of `vreg` only where the lanes it skips
            // already held the old value of `vreg`; elsewhere the cells hold a mixture.
            let whole = !partial || cells.iter().all(|&c| state[c].binary_search(&vreg).is_ok());
            let mut value = match (copy, &copied) {
                (Some((dst, _)), Some(set)) if dst == vreg => set.clone(),
                _ => Vec::new(),
            };
            if whole {
                if let Err(pos) = value.binary_search(&vreg) {
                    value.insert(pos, vreg);
                }
            }
            for cell in state.iter_mut() {
                if let Ok(pos) = cell.binary_search(&vreg) {
                    cell.remove(pos);
                }
            }
            for c in cells {
                state[c] = value.clone();
            }
        }
        if let Some(list) = self.shape.edits_after.get(&inst) {
            for &e in list {
                let Edit::Spill {
                    vreg, slot, reg, ..
                } = self.alloc.edits[e]
                else {
                    continue;
                };
                let held = Self::common(state, &self.edit_cells(vreg, reg));
                // After a guarded write the register may hold a mixture, which is stored
                // as it is (a later reload for a read would be caught).
                let whole_write = !partial && self.input.defs(inst).contains(&vreg);
                if report && whole_write && held.binary_search(&vreg).is_err() {
                    return Err(CheckError::SpillOfWrongValue {
                        inst,
                        vreg,
                        reg,
                        found: Held(held),
                    });
                }
                state[self.shape.slot_cell(slot)] = held;
            }
        }
        Ok(())
    }

    fn run(&self) -> Result<(), CheckError> {
        let n = self.shape.num_blocks;
        let entry = self.input.entry().index();
        let mut state_in: Vec<Option<State>> = vec![None; n];
        state_in[entry] = Some(self.entry_state.clone());
        let mut work: BTreeSet<usize> = BTreeSet::from([entry]);
        while let Some(b) = work.pop_first() {
            let Some(mut state) = state_in[b].clone() else {
                continue;
            };
            for &i in self.input.block_insts(BlockId::new(b)) {
                self.transfer(i, &mut state, false)?;
            }
            for &s in self.input.successors(BlockId::new(b)) {
                let changed = match &mut state_in[s.index()] {
                    Some(existing) => {
                        let mut changed = false;
                        for (cell, new) in existing.iter_mut().zip(&state) {
                            changed |= intersect(cell, new);
                        }
                        changed
                    }
                    slot @ None => {
                        *slot = Some(state.clone());
                        true
                    }
                };
                if changed {
                    work.insert(s.index());
                }
            }
        }
        for (b, s) in state_in.iter().enumerate() {
            let Some(mut state) = s.clone() else {
                continue;
            };
            for &i in self.input.block_insts(BlockId::new(b)) {
                self.transfer(i, &mut state, true)?;
            }
        }
        Ok(())
    }
}

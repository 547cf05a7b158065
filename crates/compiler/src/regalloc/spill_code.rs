//! Materialises an allocation's spill edits as real instructions: every reference of a
//! spilled register gets a fresh virtual register of its own (placed where the allocation
//! put that reference), each reload becomes an `ld.local` into it just before the
//! instruction and each spill an `st.local` from it just after, all addressing one
//! function-scope `.local` array that holds the spill slots.
//!
//! The result is a new function with no spills and an allocation for it; the checker
//! verifies that pair like any other, and the IR verifier checks the new function.

use std::collections::BTreeMap;

use ir::op::{CacheOp, MemAccess, MemOrder, Space};
use ir::{
    AddrBase, Address, Function, InstId, LocalVarId, Op, Operand, RegId, Symbol, VarSpace, Variable,
};
use ptx::ast::{ScalarType, VariableType};

use super::{Allocation, Edit, Location};

/// Name of the function-scope `.local` array holding the spill slots.
pub const SPILL_AREA_NAME: &str = "__regsim_spill";

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SpillCodeError {
    #[error("the allocation does not belong to this function: {0}")]
    Mismatch(String),
    #[error("{inst} ends its block and writes spilled {vreg}: there is no place for the store")]
    StoreAfterTerminator { inst: InstId, vreg: RegId },
}

/// The bit type that moves a register of declared type `ty` to and from memory unchanged.
fn bit_type(ty: ScalarType) -> ScalarType {
    match ty.bits() {
        0..=8 => ScalarType::B8,
        9..=16 => ScalarType::B16,
        17..=32 => ScalarType::B32,
        33..=64 => ScalarType::B64,
        _ => ScalarType::B128,
    }
}

/// Returns `func` with the spill edits of `alloc` as `ld.local`/`st.local` instructions,
/// and the allocation of the new function. With no spills it returns copies of both.
pub fn insert_spill_code(
    func: &Function,
    alloc: &Allocation,
) -> Result<(Function, Allocation), SpillCodeError> {
    let mismatch = |m: String| SpillCodeError::Mismatch(m);
    if alloc.locations.len() != func.regs.len() {
        return Err(mismatch(format!(
            "{} locations for {} registers",
            alloc.locations.len(),
            func.regs.len()
        )));
    }
    let mut out = func.clone();
    let mut locations = alloc.locations.clone();
    if alloc.spill_slots.is_empty() && alloc.edits.is_empty() && alloc.spilled_operands.is_empty() {
        return Ok((out, alloc.clone()));
    }

    let area = LocalVarId::new(out.vars.len());
    out.vars.push(Variable {
        name: SPILL_AREA_NAME.to_string(),
        space: VarSpace::Local,
        linkage: None,
        ty: VariableType::Scalar(ScalarType::B8),
        elem_size: 1,
        size: u64::from(alloc.spill_bytes()),
        align: 16,
        unsized_array: false,
        managed: false,
        init: None,
        relocations: Vec::new(),
    });

    // A fresh register for every reference of a spilled register.
    let mut temp: BTreeMap<(InstId, RegId), RegId> = BTreeMap::new();
    for o in &alloc.spilled_operands {
        let info = func
            .regs
            .get(o.vreg.index())
            .ok_or_else(|| mismatch(format!("{} out of range", o.vreg)))?;
        let t = out.add_reg(format!("{}$spill{}", info.name, o.inst.0), info.ty);
        locations.push(Location::Reg(o.reg));
        temp.insert((o.inst, o.vreg), t);
    }
    for (r, loc) in alloc.locations.iter().enumerate() {
        if let Location::Spill(_) = loc {
            // Every reference now goes through a temporary.
            locations[r] = Location::Unused;
        }
    }

    let mut before: BTreeMap<InstId, Vec<&Edit>> = BTreeMap::new();
    let mut after: BTreeMap<InstId, Vec<&Edit>> = BTreeMap::new();
    for e in &alloc.edits {
        match e {
            Edit::Reload { before: i, .. } => before.entry(*i).or_default().push(e),
            Edit::Spill { after: i, .. } => after.entry(*i).or_default().push(e),
        }
    }

    let slot_address = |slot: super::SpillSlot| -> Result<Operand, SpillCodeError> {
        let info = alloc
            .spill_slots
            .get(slot.0 as usize)
            .ok_or_else(|| mismatch(format!("no spill slot {slot}")))?;
        Ok(Operand::Address(Address {
            base: AddrBase::Symbol(Symbol::Local(area)),
            offset: i64::from(info.offset),
        }))
    };
    let access = |vreg: RegId| MemAccess {
        space: Space::Local,
        ty: bit_type(func.regs[vreg.index()].ty),
        lanes: 1,
        order: MemOrder::Weak,
        cache: CacheOp::Default,
        nc: false,
        hints: Default::default(),
        complete_tx: false,
    };
    let temp_of = |inst: InstId, vreg: RegId| -> Result<RegId, SpillCodeError> {
        temp.get(&(inst, vreg))
            .copied()
            .ok_or_else(|| mismatch(format!("edit for {vreg} at {inst} has no operand register")))
    };

    out.insts.clear();
    out.operands.clear();
    let mut new_id = vec![InstId::default(); func.insts.len()];
    let mut blocks = out.blocks.clone();
    for (b, block) in func.blocks.iter().enumerate() {
        blocks[b].start = out.insts.len() as u32;
        for i in (block.start..block.end).map(InstId) {
            for e in before.get(&i).into_iter().flatten() {
                if let Edit::Reload { vreg, slot, .. } = **e {
                    let t = temp_of(i, vreg)?;
                    let addr = slot_address(slot)?;
                    out.push_inst(Op::Ld(access(vreg)), None, &[Operand::Reg(t)], &[addr]);
                }
            }
            let inst = func.inst(i);
            let remap = |r: RegId| temp.get(&(i, r)).copied().unwrap_or(r);
            let remap_operand = |o: &Operand| match *o {
                Operand::Reg(r) => Operand::Reg(remap(r)),
                Operand::NotReg(r) => Operand::NotReg(remap(r)),
                Operand::Address(Address {
                    base: AddrBase::Reg(r),
                    offset,
                }) => Operand::Address(Address {
                    base: AddrBase::Reg(remap(r)),
                    offset,
                }),
                other => other,
            };
            let dsts: Vec<Operand> = func.dsts(i).iter().map(remap_operand).collect();
            let srcs: Vec<Operand> = func.srcs(i).iter().map(remap_operand).collect();
            let guard = inst.guard.map(|mut g| {
                g.reg = remap(g.reg);
                g
            });
            let id = out.push_inst(inst.op.clone(), guard, &dsts, &srcs);
            let pushed = &mut out.insts[id.index()];
            pushed.line = inst.line;
            pushed.span = inst.span;
            new_id[i.index()] = id;
            for e in after.get(&i).into_iter().flatten() {
                if let Edit::Spill { vreg, slot, .. } = **e {
                    if inst.op.ends_block() {
                        return Err(SpillCodeError::StoreAfterTerminator { inst: i, vreg });
                    }
                    let t = temp_of(i, vreg)?;
                    let addr = slot_address(slot)?;
                    out.push_inst(Op::St(access(vreg)), None, &[], &[addr, Operand::Reg(t)]);
                }
            }
        }
        blocks[b].end = out.insts.len() as u32;
    }
    out.blocks = blocks;
    out.rebuild_cfg();

    let new_alloc = Allocation {
        locations,
        spilled_operands: Vec::new(),
        edits: Vec::new(),
        spill_slots: Vec::new(),
        registers_used: alloc.registers_used,
        predicates_used: alloc.predicates_used,
        coalesced_copies: alloc
            .coalesced_copies
            .iter()
            .filter_map(|i| new_id.get(i.index()).copied())
            .collect(),
    };
    Ok((out, new_alloc))
}

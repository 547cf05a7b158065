//! Reuse bits for the register-file cache of NVIDIA's cores since Maxwell (Huerta et al.,
//! "Dissecting and Modeling the Architecture of Modern GPU Cores", MICRO 2025, register
//! file section): the compiler marks a source operand whose value the next instruction of
//! the same warp reads again from the same operand slot, and the hardware keeps it in
//! that slot's cache entry.
//!
//! The rule, on the allocated function: source operand slot `k` of instruction `i` gets
//! its reuse bit when the instruction that follows `i` in its basic block reads the same
//! architectural register (same width) in slot `k`, and `i` does not write that register.
//! Slots number an instruction's distinct general-register sources in operand order
//! (predicates have no slot), the order the timing model's source list keeps. A block's
//! last instruction sets none: what runs next depends on the branch, and SASS's
//! scheduler does not reuse across one either.
//!
//! Where SASS differs: ptxas orders and numbers operands of its own instructions (an
//! `FFMA`'s slots are its A, B and C), schedules instructions to create reuse, and may
//! keep a value across several instructions; this pass sees PTX order and PTX operand
//! order as allocated by regsim, so its reuse is what that program offers as written.

use ir::{ControlFlowGraph, Function, InstId, RegisterEffects};

use crate::regalloc::ir_input::width_of;
use crate::regalloc::RegWidth;
use crate::{Allocation, Location};

/// Source operand slots a register-file cache entry has (MICRO'25: three sub-entries).
pub const SLOTS: usize = 3;

/// The distinct general-register sources of `inst`, in operand order: for each, its
/// index in `f.uses(inst)`, register and width.
fn slots(f: &Function, alloc: &Allocation, inst: InstId) -> Vec<(usize, u32, RegWidth)> {
    let mut out: Vec<(usize, u32, RegWidth)> = Vec::new();
    for (k, &v) in f.uses(inst).iter().enumerate() {
        let width = width_of(f.reg(v).class);
        if width == RegWidth::Pred {
            continue;
        }
        if let Location::Reg(r) = alloc.operand_location(inst, v) {
            if !out.iter().any(|&(_, reg, w)| reg == r.0 && w == width) {
                out.push((k, r.0, width));
            }
        }
    }
    out
}

/// The reuse bit of every entry of `f.uses(inst)`, per instruction (`bits[i][k]`).
pub fn compute(f: &Function, alloc: &Allocation) -> Vec<Vec<bool>> {
    let mut bits: Vec<Vec<bool>> = (0..f.num_insts())
        .map(|i| vec![false; f.uses(InstId::new(i)).len()])
        .collect();
    for b in 0..f.num_blocks() {
        let insts = f.block_insts(ir::BlockId::new(b));
        for pair in insts.windows(2) {
            let (i, next) = (pair[0], pair[1]);
            let here = slots(f, alloc, i);
            let there = slots(f, alloc, next);
            let written: Vec<u32> = f
                .defs(i)
                .iter()
                .filter_map(|&v| match alloc.operand_location(i, v) {
                    Location::Reg(r) => Some(r.0),
                    _ => None,
                })
                .collect();
            for (slot, &(k, reg, width)) in here.iter().enumerate().take(SLOTS) {
                let same_next = there
                    .get(slot)
                    .is_some_and(|&(_, r, w)| r == reg && w == width);
                if same_next && !written.contains(&reg) {
                    bits[i.index()][k] = true;
                }
            }
        }
    }
    bits
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::regalloc::IrInput;
    use crate::test_support::lower;
    use crate::{allocate, AllocConfig};

    const PTX: &str = "\
.version 7.8
.target sm_70
.address_size 64
.visible .entry k(.param .u64 p)
{
    .reg .f32 %f<8>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [p];
    ld.global.f32 %f1, [%rd1];
    ld.global.f32 %f2, [%rd1+4];
    fma.rn.f32 %f3, %f1, %f2, %f1;
    fma.rn.f32 %f4, %f1, %f2, %f3;
    fma.rn.f32 %f5, %f4, %f2, %f3;
    add.f32 %f1, %f1, %f5;
    add.f32 %f6, %f1, %f5;
    st.global.f32 [%rd1], %f6;
    ret;
}
";

    #[test]
    fn a_slot_is_kept_when_the_next_instruction_reads_the_register_there() {
        let p = lower(PTX);
        let f = &p.functions[0];
        let alloc = allocate(&IrInput::new(f), &AllocConfig::default()).unwrap();
        let bits = compute(f, &alloc);
        let fma = |n: usize| {
            (0..f.num_insts())
                .map(InstId::new)
                .filter(|&i| ir::print::inst_to_string(Some(&p), f, f.inst(i)).starts_with("fma"))
                .nth(n)
                .unwrap()
        };
        // fma1 reads f1, f2 (f1 twice: slots are distinct registers); fma2 reads f1, f2,
        // f3: slots 0 and 1 repeat.
        assert_eq!(bits[fma(0).index()], vec![true, true, false]);
        // fma2 -> fma3: slot 1 (f2) repeats; slot 2 (f3) repeats too.
        assert_eq!(bits[fma(1).index()], vec![false, true, true]);
        // fma3 -> add: add reads f1, f5 — nothing in the same slot.
        assert_eq!(bits[fma(2).index()], vec![false, false, false]);
        // `add f1, f1, f5` writes f1: its slot-0 f1 is not kept for the next add's
        // slot 0 (a new value), while f5 in slot 1 is.
        let add = (0..f.num_insts())
            .map(InstId::new)
            .find(|&i| ir::print::inst_to_string(Some(&p), f, f.inst(i)).starts_with("add"))
            .unwrap();
        assert_eq!(bits[add.index()], vec![false, true]);
    }
}

//! Reuse bits for the register-file cache of NVIDIA's cores since Maxwell (Huerta et al.,
//! "Dissecting and Modeling the Architecture of Modern GPU Cores", MICRO 2025, register
//! file section): the compiler marks a source operand whose value the warp reads again
//! from the same operand slot, and the hardware keeps it in that slot's cache entry.
//!
//! The rule, on the allocated function in the order it runs (PTX order, or the reuse
//! schedule of [`crate::reuse_schedule`]): source operand slot `k` of instruction `i`
//! gets its reuse bit when the next instruction of its basic block that reads slot `k`
//! reads the same architectural register (same width) there, and neither `i` nor an
//! instruction in between writes any part of that register. Instructions in between
//! that read no register in slot `k` leave the sub-entry alone, as in the hardware (only
//! a read of the bank and slot, or a write of the register, replaces it); one that reads
//! slot `k` with another register ends the search, whatever its bank (the pass does not
//! assume a bank mapping). Slots number an instruction's distinct general-register
//! sources in operand order (predicates have no slot), the order the timing model's
//! source list keeps. Nothing is kept across a block boundary: what runs next depends on
//! the branch, and a branch target may be reached from elsewhere.
//!
//! Memory instructions (loads, stores, atomics, `cp.async`, texture; [`uses_cache`])
//! neither set a reuse bit nor are a reader a bit is set for: MICRO'25 §6 checks the
//! register file and its cache in the Allocate stage, which only fixed-latency
//! instructions pass through (§5.3), and a memory instruction's sources are read for its
//! address calculation in the sub-core's memory unit (§5.4: the WAR latency is released
//! "when the address is computed"). Table 2's LDGSTS latency is what pins this down: a
//! chain of `LDGSTS; DEPBAR` with its sources cached past the wait runs 33.5 cycles on
//! rtx-a6000 against the published 39; read from the banks, 35.4. Such a read still
//! ends the search for its slot (it may be a read of the same bank and operand position,
//! which makes the sub-entry unavailable).
//!
//! Where SASS differs: ptxas orders and numbers operands of its own instructions (an
//! `FFMA`'s slots are its A, B and C) and may swap commutative operands to create reuse;
//! this pass sees PTX operand order as allocated by regsim.

use ir::{ControlFlowGraph, Function, InstId, RegisterEffects};

use crate::regalloc::ir_input::width_of;
use crate::regalloc::RegWidth;
use crate::{Allocation, Location};

/// Source operand slots a register-file cache entry has (MICRO'25: three sub-entries).
pub const SLOTS: usize = 3;

/// The distinct general-register sources of `inst`, in operand order: for each, its
/// index in `f.uses(inst)`, register and width.
pub(crate) fn slots(f: &Function, alloc: &Allocation, inst: InstId) -> Vec<(usize, u32, RegWidth)> {
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

/// Whether `inst` reads its sources through the register-file cache: every instruction
/// but the memory pipeline's (see the module docs).
pub(crate) fn uses_cache(f: &Function, inst: InstId) -> bool {
    !ir::exec_class(&f.inst(inst).op).is_memory()
}

/// The 32-bit registers `[lo, hi)` each general destination of `inst` writes.
pub(crate) fn written(f: &Function, alloc: &Allocation, inst: InstId) -> Vec<(u32, u32)> {
    f.defs(inst)
        .iter()
        .filter_map(|&v| match alloc.operand_location(inst, v) {
            Location::Reg(r) => Some((r.0, r.0 + width_of(f.reg(v).class).units())),
            _ => None,
        })
        .collect()
}

/// The reuse bit of every entry of `f.uses(inst)`, per instruction (`bits[i][k]`).
pub fn compute(f: &Function, alloc: &Allocation) -> Vec<Vec<bool>> {
    let mut bits: Vec<Vec<bool>> = (0..f.num_insts())
        .map(|i| vec![false; f.uses(InstId::new(i)).len()])
        .collect();
    for b in 0..f.num_blocks() {
        let insts = f.block_insts(ir::BlockId::new(b));
        let block_slots: Vec<_> = insts.iter().map(|&i| slots(f, alloc, i)).collect();
        let block_writes: Vec<_> = insts.iter().map(|&i| written(f, alloc, i)).collect();
        let overwrites = |p: usize, reg: u32, width: RegWidth| {
            block_writes[p]
                .iter()
                .any(|&(lo, hi)| reg < hi && lo < reg + width.units())
        };
        let cached: Vec<bool> = insts.iter().map(|&i| uses_cache(f, i)).collect();
        for (p, &i) in insts.iter().enumerate() {
            if !cached[p] {
                continue;
            }
            for (slot, &(k, reg, width)) in block_slots[p].iter().enumerate().take(SLOTS) {
                if overwrites(p, reg, width) {
                    continue;
                }
                for (q, later) in block_slots.iter().enumerate().skip(p + 1) {
                    if let Some(&(_, r, w)) = later.get(slot) {
                        bits[i.index()][k] = cached[q] && r == reg && w == width;
                        break;
                    }
                    if overwrites(q, reg, width) {
                        break;
                    }
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

    /// Lowers kernel `k(.param .u64 p)` with `body` after its declarations of `%f<8>` and
    /// `%rd<3>` and the load of `p` into `%rd1`.
    fn lower_body(body: &str) -> ir::Program {
        lower(&format!(
            ".version 7.8\n.target sm_70\n.address_size 64\n\
             .visible .entry k(.param .u64 p)\n{{\n\
             .reg .f32 %f<8>;\n.reg .b64 %rd<3>;\n\
             ld.param.u64 %rd1, [p];\n{body}}}\n"
        ))
    }

    /// The indices of the first function's instructions whose printed form starts with
    /// `prefix`, in order.
    fn printed_starting(p: &ir::Program, prefix: &str) -> Vec<usize> {
        let f = &p.functions[0];
        (0..f.num_insts())
            .filter(|&i| {
                ir::print::inst_to_string(Some(p), f, f.inst(InstId::new(i))).starts_with(prefix)
            })
            .collect()
    }

    /// A memory instruction neither keeps a source nor is a reader one is kept for; the
    /// arithmetic around it keeps its own.
    #[test]
    fn memory_instructions_neither_set_nor_receive_reuse_bits() {
        let p = lower_body(
            "\
             add.s64 %rd2, %rd1, 8;\n\
             ld.global.f32 %f1, [%rd1];\n\
             ld.global.f32 %f2, [%rd1+4];\n\
             add.f32 %f3, %f1, %f2;\n\
             add.f32 %f4, %f1, %f2;\n\
             st.global.f32 [%rd2], %f3;\n\
             st.global.f32 [%rd1], %f4;\n\
             ret;\n",
        );
        let f = &p.functions[0];
        let alloc = allocate(&IrInput::new(f), &AllocConfig::default()).unwrap();
        let bits = compute(f, &alloc);
        let nth = |prefix: &str, n: usize| printed_starting(&p, prefix)[n];
        // The 64-bit add's rd1 is next read in slot 0 by a load: not kept.
        assert_eq!(bits[nth("add.s64", 0)], vec![false]);
        // The first load's rd1 is read again in slot 0 by the next load: not kept either.
        assert_eq!(bits[nth("ld.global", 0)], vec![false]);
        // Between the two FP32 adds both slots repeat.
        assert_eq!(bits[nth("add.f32", 0)], vec![true, true]);
        assert!(bits[nth("st.global", 0)].iter().all(|b| !b));
    }

    /// The slot's sub-entry survives an instruction that reads nothing there, and a write
    /// of the register in between ends it.
    #[test]
    fn a_slot_is_kept_past_instructions_that_do_not_read_it_until_a_write() {
        let p = lower_body(
            "\
             ld.global.f32 %f1, [%rd1];\n\
             ld.global.f32 %f2, [%rd1+4];\n\
             fma.rn.f32 %f3, %f1, %f2, %f2;\n\
             mov.f32 %f4, 0f3F800000;\n\
             fma.rn.f32 %f5, %f1, %f4, %f2;\n\
             mov.f32 %f2, 0f40000000;\n\
             fma.rn.f32 %f6, %f5, %f4, %f2;\n\
             st.global.f32 [%rd1], %f6;\n\
             st.global.f32 [%rd1+4], %f3;\n\
             ret;\n",
        );
        let f = &p.functions[0];
        let alloc = allocate(&IrInput::new(f), &AllocConfig::default()).unwrap();
        let bits = compute(f, &alloc);
        let fmas = printed_starting(&p, "fma");
        // The first FMA's f1 (slot 0) is read again in slot 0 two instructions on: the
        // `mov` between reads no register. Its f2 (slot 1) is next read there as f4.
        assert_eq!(bits[fmas[0]], vec![true, false, false]);
        // The second's f4 (slot 1) reaches the third past the `mov` that writes f2; its
        // f2 (slot 2) does not: the third reads f2's new value.
        assert_eq!(bits[fmas[1]], vec![false, true, false]);
        assert_eq!(bits[fmas[2]], vec![false, false, false]);
    }
}

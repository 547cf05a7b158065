//! Constant-bank operands (`sm.constant_operands`, the modern configs): SASS has no load
//! for a kernel parameter or a constant at a fixed address; the instruction that uses it
//! names it as an operand, `c[bank][offset]`, read from the constant cache beside the
//! register operands (Huerta et al. MICRO'25 §5.4: fixed-latency instructions read
//! theirs through a per-sub-core L0 "FL" constant cache, `LDC` through another). PTX
//! loads the value into a register first (`ld.param`, `ld.const`), and timed as written
//! that load costs an issue slot, a dependence counter, a register write and a register
//! read.
//!
//! This pass marks, per function, each load that SASS would fold into its consumers:
//! - a scalar `ld.param` of a kernel (a device function's `.param` space carries each
//!   call's arguments, which SASS passes in registers) or a scalar `ld.const`, whose
//!   address names no register (a symbol plus an offset), with no guard predicate, and
//!   the only definition of its destination in the function;
//! - whose every consumer is an arithmetic instruction of the `sp`, `int` or `dp`
//!   classes that can take a constant operand (not memory, control, SFU, shuffles or
//!   tensor-core instructions: SASS loads a constant into a register for those), and
//!   takes no other constant operand (SASS instructions have at most one).
//!
//! The load gets [`InstHint::folded`]: the SM executes it functionally when its warp
//! reaches it, without issuing it (no issue slot, stall count, dependence counter,
//! register write or instruction-buffer entry). Each consumer's source of that register
//! is taken out of its source operands and recorded as [`InstHint::constant`]: no bank
//! read, no reuse-cache access (its operand slot is the constant's: the register sources
//! after it keep their slots), no scoreboard or wait-mask dependence; the SM reports its
//! delivery to the energy ledger as [`Source::ConstantCache`](crate::rf::ledger::Source).
//! The constant cache is assumed to hit (kernel parameters and the constants of a kernel
//! fit a few lines that every warp reads), so the operand adds no latency to its
//! consumer.
//!
//! Not modelled: the folded register is still allocated (registers per thread, and so
//! occupancy, are as the allocator computed them), and the load still occupies its
//! instruction address (fetch and the L0 see PTX's code size).

use compiler::{Allocation, Location};
use ir::op::Space;
use ir::{FuncId, InstId, Op, Program, RegisterEffects};

use crate::config::OpClass;
use crate::kernel_info::{op_class, ConstantOperand, KernelInfo, RegFileKind};

/// Whether an instruction of `class` can read one of its sources as a constant operand.
fn takes_constant(class: OpClass) -> bool {
    !matches!(
        class,
        OpClass::Shuffle | OpClass::Tensor | OpClass::IntDiv | OpClass::Fp32Div | OpClass::Fp64Div
    ) && matches!(
        class.coarse(),
        OpClass::Fp32 | OpClass::Int | OpClass::IntMul | OpClass::Fp64
    )
}

/// Whether instruction `i` of `f` is a load SASS reads as a constant operand (given its
/// consumers allow it).
fn constant_load(f: &ir::Function, i: InstId) -> bool {
    let inst = f.inst(i);
    let Op::Ld(a) = &inst.op else {
        return false;
    };
    let space_ok = match a.space {
        Space::Param => f.kind == ir::FunctionKind::Kernel,
        Space::Const => true,
        _ => false,
    };
    space_ok
        && a.lanes == 1
        && inst.guard.is_none()
        && f.uses(i).is_empty()
        && f.defs(i).len() == 1
        && !f.defs_are_partial(i)
}

/// Marks the folded loads and constant operands of every function of `info` that has an
/// allocation (`allocation_of`); see the module docs. Returns the number of loads folded.
pub fn attach<'a>(
    info: &mut KernelInfo,
    program: &Program,
    allocation_of: impl Fn(FuncId) -> Option<&'a Allocation>,
) -> usize {
    let mut folded = 0;
    for (fi_index, f) in program.functions.iter().enumerate() {
        let id = FuncId::new(fi_index);
        let Some(alloc) = allocation_of(id) else {
            continue;
        };
        if info.function(id).is_none_or(|fi| fi.is_empty()) {
            continue;
        }
        let n = f.num_insts();
        let mut defs = vec![0u32; f.regs.len()];
        let mut users: Vec<Vec<InstId>> = vec![Vec::new(); f.regs.len()];
        for i in (0..n).map(InstId::new) {
            for &v in f.defs(i) {
                defs[v.index()] += 1;
            }
            for &v in f.uses(i) {
                let u = &mut users[v.index()];
                if u.last() != Some(&i) {
                    u.push(i);
                }
            }
        }
        let mut claimed = vec![false; n];
        for i in (0..n).map(InstId::new) {
            if !constant_load(f, i) {
                continue;
            }
            let v = f.defs(i)[0];
            let consumers = &users[v.index()];
            let foldable = defs[v.index()] == 1
                && !consumers.is_empty()
                && consumers.iter().all(|&c| {
                    !claimed[c.index()]
                        && f.inst(c).guard.is_none_or(|g| g.reg != v)
                        && takes_constant(op_class(&f.inst(c).op))
                        && matches!(alloc.operand_location(c, v), Location::Reg(_))
                });
            if !foldable {
                continue;
            }
            let Some(fi) = info.function_mut(id) else {
                continue;
            };
            let mut all = true;
            for &c in consumers {
                let Location::Reg(r) = alloc.operand_location(c, v) else {
                    all = false;
                    continue;
                };
                let srcs = fi.sources(c);
                let Some(k) = srcs
                    .iter()
                    .position(|o| o.file == RegFileKind::General && u32::from(o.reg) == r.0)
                else {
                    all = false;
                    continue;
                };
                let slot = srcs[..k]
                    .iter()
                    .filter(|o| o.file == RegFileKind::General)
                    .count();
                if let Some(op) = fi.take_source(c, k) {
                    if let Some(h) = fi.inst_hint_mut(c) {
                        h.constant = Some(ConstantOperand {
                            slot: u8::try_from(slot).unwrap_or(u8::MAX),
                            width: op.width,
                        });
                    }
                }
                claimed[c.index()] = true;
            }
            debug_assert!(all, "a consumer of a foldable load reads its register");
            if let Some(h) = fi.inst_hint_mut(i) {
                h.folded = true;
                folded += 1;
            }
        }
    }
    if folded > 0 {
        info.note_folded_loads();
    }
    folded
}

#[cfg(test)]
mod tests {
    use super::*;
    use compiler::AllocConfig;

    fn compile(body: &str, params: &str) -> (Program, KernelInfo, Vec<Option<Allocation>>) {
        let src = format!(
            ".version 7.8\n.target sm_80\n.address_size 64\n.const .align 4 .f32 k[4];\n\
             .visible .entry t({params})\n{{\n{body}}}\n"
        );
        let ast = ptx::parse("t.ptx", &src).expect("test PTX parses");
        let program = ir::lower(&ast, "t.ptx", &src).expect("test PTX lowers");
        let allocs: Vec<Option<Allocation>> =
            compiler::regalloc::allocate_program(&program, &AllocConfig::default())
                .expect("allocates")
                .into_iter()
                .map(|a| a.allocation)
                .collect();
        let kernel = FuncId::new(program.functions.len() - 1);
        let info = KernelInfo::from_allocations(&program, kernel, |f| {
            allocs.get(f.index()).and_then(Option::as_ref)
        })
        .expect("kernel info");
        (program, info, allocs)
    }

    #[test]
    fn a_parameter_read_by_arithmetic_becomes_its_constant_operand() {
        let (program, mut info, allocs) = compile(
            "    .reg .f32 %f<5>;\n\
             \x20   .reg .b64 %rd<3>;\n\
             \x20   ld.param.f32 %f1, [a];\n\
             \x20   ld.param.u64 %rd1, [p];\n\
             \x20   ld.const.f32 %f4, [k+4];\n\
             \x20   mov.f32 %f2, 0f3F800000;\n\
             \x20   fma.rn.f32 %f3, %f2, %f1, %f2;\n\
             \x20   add.f32 %f3, %f3, %f4;\n\
             \x20   st.global.f32 [%rd1], %f3;\n\
             \x20   ret;\n",
            ".param .f32 a, .param .u64 p",
        );
        let f = info.kernel;
        let before: Vec<usize> = (0..8)
            .map(|i| info.srcs(f, info.inst(f, InstId::new(i))).len())
            .collect();
        let n = attach(&mut info, &program, |f| {
            allocs.get(f.index()).and_then(Option::as_ref)
        });
        // `a` (read by the fma) and `k+4` (read by the add) fold; `p` is a store's
        // address, which SASS must hold in a register.
        assert_eq!(n, 2);
        let hint = |i: usize| info.inst(f, InstId::new(i)).hint;
        assert!(hint(0).folded && !hint(1).folded && hint(2).folded);
        // The fma reads %f2 (slot 0), then a's constant (slot 1); %f2 again is slot 0.
        assert_eq!(
            hint(4).constant,
            Some(ConstantOperand { slot: 1, width: 1 })
        );
        assert_eq!(
            hint(5).constant,
            Some(ConstantOperand { slot: 1, width: 1 })
        );
        let srcs = |i: usize| info.srcs(f, info.inst(f, InstId::new(i))).len();
        assert_eq!(srcs(4), before[4] - 1);
        assert_eq!(srcs(5), before[5] - 1);
        assert_eq!(srcs(6), before[6]);
        assert_eq!(info.issue_point(f, InstId::new(0)), InstId::new(1));
        assert_eq!(info.issue_point(f, InstId::new(2)), InstId::new(3));
        assert_eq!(info.issue_point(f, InstId::new(3)), InstId::new(3));
    }

    #[test]
    fn a_value_also_stored_or_redefined_stays_a_load() {
        let (program, mut info, allocs) = compile(
            "    .reg .u32 %r<5>;\n\
             \x20   .reg .b64 %rd<3>;\n\
             \x20   ld.param.u32 %r1, [a];\n\
             \x20   ld.param.u64 %rd1, [p];\n\
             \x20   add.u32 %r2, %r1, 1;\n\
             \x20   st.global.u32 [%rd1], %r1;\n\
             \x20   ld.param.u32 %r3, [a];\n\
             \x20   add.u32 %r3, %r3, %r2;\n\
             \x20   st.global.u32 [%rd1], %r3;\n\
             \x20   ret;\n",
            ".param .u32 a, .param .u64 p",
        );
        assert_eq!(
            attach(&mut info, &program, |f| {
                allocs.get(f.index()).and_then(Option::as_ref)
            }),
            0
        );
    }
}

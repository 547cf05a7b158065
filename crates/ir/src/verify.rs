//! The IR verifier: structural invariants every lowered function keeps and every pass must
//! preserve. Passes are trusted when their output still verifies (Cranelift's verifier
//! plays the same role).
//!
//! Checked: blocks cover the instructions contiguously in layout order; branches and
//! returns only end blocks; successors are what the terminators say (branch targets
//! included) and predecessors mirror them; no block falls off the end of the function;
//! the def/use arenas match the operands; register ids exist; guards and negated operands
//! are predicates; address bases are 32/64-bit integer registers; and the registers of the
//! common operations fit the instruction type under PTX's relaxed type rules.

use std::fmt;

use thiserror::Error;

use crate::cfg;
use crate::decode::{reg_fits, widen};
use crate::entity::{BlockId, InstId};
use crate::function::{AddrBase, Address, Function, Operand, RegClass};
use crate::op::{MulMode, Op, ScalarType};

/// One violated invariant.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub struct VerifyError {
    pub function: String,
    pub block: Option<BlockId>,
    pub inst: Option<InstId>,
    pub message: String,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "in '{}'", self.function)?;
        if let Some(b) = self.block {
            write!(f, ", {b}")?;
        }
        if let Some(i) = self.inst {
            write!(f, ", {i}")?;
        }
        write!(f, ": {}", self.message)
    }
}

struct Checker<'f> {
    f: &'f Function,
    errors: Vec<VerifyError>,
}

impl Checker<'_> {
    fn error(&mut self, block: Option<BlockId>, inst: Option<InstId>, message: impl Into<String>) {
        self.errors.push(VerifyError {
            function: self.f.name.clone(),
            block,
            inst,
            message: message.into(),
        });
    }
}

/// Checks every invariant of `f`; returns all violations found.
pub fn verify(f: &Function) -> Result<(), Vec<VerifyError>> {
    let mut c = Checker {
        f,
        errors: Vec::new(),
    };
    check_layout(&mut c);
    if c.errors.is_empty() {
        // Edge checks index blocks by instruction; only meaningful on a sound layout.
        check_edges(&mut c);
    }
    check_operands(&mut c);
    if !f.effects_match_operands() {
        c.error(
            None,
            None,
            "the def/use arenas do not match the operands (call compute_effects)",
        );
    }
    if c.errors.is_empty() {
        Ok(())
    } else {
        Err(c.errors)
    }
}

fn check_layout(c: &mut Checker<'_>) {
    let f = c.f;
    let n = f.insts.len() as u32;
    if !f.has_body {
        if !f.blocks.is_empty() || n > 0 {
            c.error(None, None, "a declaration has no blocks or instructions");
        }
        return;
    }
    if f.blocks.is_empty() {
        c.error(None, None, "a function with a body has an entry block");
        return;
    }
    let mut expected_start = 0;
    for (b, block) in f.blocks.iter().enumerate() {
        let id = Some(BlockId::new(b));
        if block.start != expected_start || block.end < block.start {
            c.error(
                id,
                None,
                format!(
                    "block covers i{}..i{} but should start at i{expected_start}",
                    block.start, block.end
                ),
            );
            return;
        }
        if block.start == block.end
            && !(n == 0 || (b + 1 == f.blocks.len() && block.label.is_some()))
        {
            c.error(id, None, "empty block");
        }
        expected_start = block.end;
        for i in block.start..block.end.saturating_sub(1) {
            if f.insts
                .get(i as usize)
                .is_some_and(|inst| inst.op.ends_block())
            {
                c.error(
                    id,
                    Some(InstId(i)),
                    format!(
                        "'{}' in the middle of a block",
                        f.insts[i as usize].op.opcode()
                    ),
                );
            }
        }
    }
    if expected_start != n {
        c.error(
            None,
            None,
            format!("blocks cover i0..i{expected_start} but there are {n} instructions"),
        );
    }
}

/// Blocks reachable from the entry along the stored successor edges (whose agreement with
/// the terminators is checked separately).
fn reachable_blocks(f: &Function) -> Vec<bool> {
    let mut seen = vec![false; f.blocks.len()];
    let mut work = vec![0usize];
    while let Some(b) = work.pop() {
        if b >= seen.len() || seen[b] {
            continue;
        }
        seen[b] = true;
        work.extend(f.blocks[b].succs.iter().map(|s| s.index()));
    }
    seen
}

fn check_edges(c: &mut Checker<'_>) {
    let f = c.f;
    let num_blocks = f.blocks.len();
    // Debug-info PTX (nvcc -G, clang -g) ends every function with a `$L__func_end0:` label
    // after its `ret`: an empty, unreachable last block. Falling off the end is a fault
    // only where control can get there.
    let reachable = reachable_blocks(f);
    for (b, block) in f.blocks.iter().enumerate() {
        let id = BlockId::new(b);
        let exits = cfg::exits(f, b);
        let last = block
            .end
            .checked_sub(1)
            .filter(|&l| l >= block.start)
            .map(InstId);
        if exits.missing_target {
            c.error(Some(id), last, "branch without a block target");
        }
        for t in exits.succs.iter().filter(|t| t.index() >= num_blocks) {
            c.error(Some(id), last, format!("branch to nonexistent {t}"));
        }
        if exits.falls_off_end && reachable[b] {
            c.error(Some(id), last, "control falls off the end of the function");
        }
        let expected = exits.succs;
        if block.succs != expected {
            c.error(
                Some(id),
                None,
                format!(
                    "successors are {:?} but the terminator says {:?}",
                    block.succs, expected
                ),
            );
        }
        for s in &block.succs {
            match f.blocks.get(s.index()) {
                Some(sb) if sb.preds.contains(&id) => {}
                Some(_) => c.error(
                    Some(id),
                    None,
                    format!("{s} is a successor but does not list {id} as a predecessor"),
                ),
                None => c.error(Some(id), None, format!("successor {s} does not exist")),
            }
        }
        for p in &block.preds {
            match f.blocks.get(p.index()) {
                Some(pb) if pb.succs.contains(&id) => {}
                Some(_) => c.error(
                    Some(id),
                    None,
                    format!("{p} is a predecessor but does not list {id} as a successor"),
                ),
                None => c.error(Some(id), None, format!("predecessor {p} does not exist")),
            }
        }
        let mut sorted = block.preds.clone();
        sorted.sort();
        sorted.dedup();
        if sorted.len() != block.preds.len() {
            c.error(Some(id), None, "duplicate predecessor");
        }
    }
}

/// The type a register in a given operand slot must fit, and whether `ld`/`st`/`cvt`'s
/// wider registers are allowed there; `None` where this check does not look.
fn slot_type(op: &Op, is_dst: bool, i: usize) -> Option<(ScalarType, bool)> {
    use ScalarType::*;
    let exact = |t| Some((t, false));
    match *op {
        Op::Add { ty, .. }
        | Op::Sub { ty, .. }
        | Op::FAdd { ty, .. }
        | Op::FSub { ty, .. }
        | Op::FMul { ty, .. }
        | Op::Fma { ty, .. }
        | Op::Min { ty, .. }
        | Op::Max { ty, .. }
        | Op::FMin { ty, .. }
        | Op::FMax { ty, .. }
        | Op::Abs { ty }
        | Op::Neg { ty }
        | Op::FAbs { ty, .. }
        | Op::FNeg { ty, .. }
        | Op::And { ty }
        | Op::Or { ty }
        | Op::Xor { ty }
        | Op::Not { ty }
        | Op::Cnot { ty }
        | Op::Sad { ty }
        | Op::Div { ty }
        | Op::Rem { ty }
        | Op::FDiv { ty, .. }
        | Op::Rcp { ty, .. }
        | Op::Sqrt { ty, .. }
        | Op::Rsqrt { ty, .. }
        | Op::Ex2 { ty, .. }
        | Op::Tanh { ty }
        | Op::Copysign { ty }
        | Op::Brev { ty }
        | Op::Mul24 { ty, .. }
        | Op::Mad24 { ty, .. }
        | Op::Mov { ty } => exact(ty),
        Op::Sin { .. } | Op::Cos { .. } | Op::Lg2 { .. } => exact(F32),
        Op::Mul { ty, mode } | Op::Mad { ty, mode, .. } => {
            let wide = if mode == MulMode::Wide {
                widen(ty)?
            } else {
                ty
            };
            let is_wide_slot = is_dst || (matches!(op, Op::Mad { .. }) && i == 2);
            exact(if is_wide_slot { wide } else { ty })
        }
        Op::Shl { ty } | Op::Shr { ty } => exact(if !is_dst && i == 1 { U32 } else { ty }),
        Op::Bfe { ty } => exact(if !is_dst && i > 0 { U32 } else { ty }),
        Op::Bfi { ty } => exact(if !is_dst && i > 1 { U32 } else { ty }),
        Op::Bfind { ty, .. } | Op::Popc { ty } | Op::Clz { ty } => {
            exact(if is_dst { U32 } else { ty })
        }
        Op::Setp { ty, combine, .. } => exact(if is_dst || (combine.is_some() && i == 2) {
            Pred
        } else {
            ty
        }),
        Op::Set {
            dst_ty,
            ty,
            combine,
            ..
        } => exact(if is_dst {
            dst_ty
        } else if combine.is_some() && i == 2 {
            Pred
        } else {
            ty
        }),
        Op::Selp { ty } => exact(if !is_dst && i == 2 { Pred } else { ty }),
        Op::Testp { ty, .. } => exact(if is_dst { Pred } else { ty }),
        Op::Ld(m) | Op::Ldu(m) if is_dst => Some((m.ty, true)),
        // st.async's last source is its mbarrier's address.
        Op::St(m) if !is_dst && i > 0 && i <= usize::from(m.lanes.max(1)) => Some((m.ty, true)),
        // A tf32 result is 32 bits in f32's layout, held in any 32-bit register.
        Op::Cvt { dst: Tf32, src, .. } => Some((if is_dst { B32 } else { src }, true)),
        Op::Cvt { dst, src, .. } => Some((if is_dst { dst } else { src }, true)),
        Op::Atom(a) if is_dst || i > 0 => exact(a.ty),
        // red.async's last source (index 2) is its mbarrier's address.
        Op::Red(a) if i == 1 => exact(a.ty),
        _ => None,
    }
}

fn check_operands(c: &mut Checker<'_>) {
    let f = c.f;
    let num_regs = f.regs.len();
    for (i, inst) in f.insts.iter().enumerate() {
        let id = InstId::new(i);
        let end = inst.operands_start as usize + inst.num_dsts as usize + inst.num_srcs as usize;
        if end > f.operands.len() {
            c.error(None, Some(id), "operand range out of bounds");
            continue;
        }
        if let Some(g) = inst.guard {
            match f.regs.get(g.reg.index()) {
                Some(r) if r.class == RegClass::Pred => {}
                Some(r) => c.error(
                    None,
                    Some(id),
                    format!("guard '{}' is not a predicate", r.name),
                ),
                None => c.error(None, Some(id), format!("guard {} does not exist", g.reg)),
            }
        }
        let ops = f.operands_of(inst);
        for (k, op) in ops.iter().enumerate() {
            let is_dst = k < inst.num_dsts as usize;
            let slot = if is_dst {
                k
            } else {
                k - inst.num_dsts as usize
            };
            let Some(r) = op.reg() else { continue };
            let Some(info) = f.regs.get(r.index()) else {
                c.error(
                    None,
                    Some(id),
                    format!("register {r} does not exist ({num_regs} registers)"),
                );
                continue;
            };
            match op {
                Operand::NotReg(_) if info.class != RegClass::Pred => c.error(
                    None,
                    Some(id),
                    format!("negated operand '{}' is not a predicate", info.name),
                ),
                Operand::Address(Address {
                    base: AddrBase::Reg(_),
                    ..
                }) if !matches!(info.class, RegClass::B32 | RegClass::B64)
                    || info.ty.is_float() =>
                {
                    c.error(
                        None,
                        Some(id),
                        format!("address register '{}' is .{}", info.name, info.ty),
                    )
                }
                Operand::Reg(_) | Operand::NotReg(_) => {
                    if let Some((ty, wider)) = slot_type(&inst.op, is_dst, slot) {
                        if !reg_fits(info.ty, ty, wider) {
                            c.error(
                                None,
                                Some(id),
                                format!(
                                    "register '{}' (.{}) does not fit a .{ty} operand of '{}'",
                                    info.name, info.ty, inst.op
                                ),
                            );
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::function::{Block, FunctionKind, Guard};
    use crate::op::{Carry, FloatMode};

    /// `bb0: setp; @p bra bb2 | bb1: add | bb2: ret`, built by hand.
    fn diamond() -> Function {
        use ScalarType::*;
        let mut f = Function::new("h", FunctionKind::Kernel);
        f.has_body = true;
        let p = f.add_reg("%p1", Pred);
        let r1 = f.add_reg("%r1", B32);
        let r2 = f.add_reg("%r2", S32);
        f.add_reg("%fd1", F64);
        let cmp = Op::Setp {
            ty: S32,
            cmp: crate::op::CmpOp::Lt,
            ftz: false,
            combine: None,
        };
        f.push_inst(
            cmp,
            None,
            &[Operand::Reg(p)],
            &[Operand::Reg(r1), Operand::Imm(4)],
        );
        let guard = Some(Guard {
            reg: p,
            negated: false,
        });
        f.push_inst(
            Op::Bra { uni: false },
            guard,
            &[],
            &[Operand::Block(BlockId(2))],
        );
        let add = Op::Add {
            ty: S32,
            sat: false,
            carry: Carry::None,
        };
        f.push_inst(
            add,
            None,
            &[Operand::Reg(r2)],
            &[Operand::Reg(r1), Operand::Reg(r2)],
        );
        f.push_inst(Op::Ret { uni: false }, None, &[], &[]);
        let block = |start, end| Block {
            label: None,
            start,
            end,
            succs: vec![],
            preds: vec![],
        };
        f.blocks = vec![block(0, 2), block(2, 3), block(3, 4)];
        f.rebuild_cfg();
        f
    }

    fn messages(f: &Function) -> Vec<String> {
        match verify(f) {
            Ok(()) => Vec::new(),
            Err(errors) => errors.iter().map(|e| e.to_string()).collect(),
        }
    }

    #[track_caller]
    fn assert_caught(f: &Function, expected: &str) {
        let m = messages(f);
        assert!(
            m.iter().any(|e| e.contains(expected)),
            "expected '{expected}' among {m:#?}"
        );
    }

    #[test]
    fn a_well_formed_function_verifies() {
        let f = diamond();
        assert_eq!(messages(&f), Vec::<String>::new());
        assert_eq!(f.blocks[0].succs, [BlockId(2), BlockId(1)]);
        assert_eq!(f.blocks[2].preds, [BlockId(0), BlockId(1)]);
    }

    #[test]
    fn catches_asymmetric_edges() {
        let mut f = diamond();
        f.blocks[2].preds.retain(|&p| p != BlockId(1));
        assert_caught(
            &f,
            "bb2 is a successor but does not list bb1 as a predecessor",
        );
        let mut f = diamond();
        f.blocks[1].preds.push(BlockId(2));
        assert_caught(
            &f,
            "bb2 is a predecessor but does not list bb1 as a successor",
        );
    }

    #[test]
    fn catches_successors_that_disagree_with_the_terminator() {
        let mut f = diamond();
        let start = f.insts[1].operands_start as usize;
        f.operands[start] = Operand::Block(BlockId(1));
        assert_caught(&f, "in 'h', bb0: successors are [BlockId(2), BlockId(1)] but the terminator says [BlockId(1)]");
        let mut f = diamond();
        f.blocks[1].succs.clear();
        assert_caught(
            &f,
            "bb1: successors are [] but the terminator says [BlockId(2)]",
        );
    }

    #[test]
    fn catches_layout_gaps_and_terminators_inside_blocks() {
        let mut f = diamond();
        f.blocks[1].start = 3;
        assert_caught(&f, "block covers i3..i3 but should start at i2");
        let mut f = diamond();
        f.blocks[0].end = 3;
        f.blocks[1].start = 3;
        f.blocks.remove(1);
        assert_caught(&f, "'bra' in the middle of a block");
        let mut f = diamond();
        f.blocks.pop();
        assert_caught(&f, "blocks cover i0..i3 but there are 4 instructions");
    }

    #[test]
    fn catches_falling_off_the_end() {
        let mut f = diamond();
        f.insts[3].op = Op::FAdd {
            ty: ScalarType::F64,
            mode: FloatMode::default(),
        };
        assert_caught(&f, "bb2, i3: control falls off the end of the function");
        let mut f = diamond();
        f.insts[3].guard = Some(Guard {
            reg: crate::RegId(0),
            negated: true,
        });
        f.compute_effects();
        assert_caught(&f, "control falls off the end of the function");
    }

    fn lowered_kernel(body: &str) -> Function {
        let text = format!(".version 7.8\n.target sm_70\n.address_size 64\n.visible .entry k(.param .u32 p)\n{{\n{body}\n}}\n");
        let module = ptx::parse("t.ptx", &text).expect("test PTX parses");
        let program = crate::lower(&module, "t.ptx", &text).expect("test PTX lowers");
        program.functions.into_iter().next().expect("one kernel")
    }

    #[test]
    fn an_unreachable_label_after_the_last_ret_is_accepted() {
        // What nvcc -G and clang -g emit at the end of every function.
        let f = lowered_kernel("  ret;\n$L__func_end0:");
        assert_eq!(messages(&f), Vec::<String>::new());
    }

    #[test]
    fn a_branch_to_a_label_at_the_end_falls_off_the_function() {
        let f = lowered_kernel(
            "  .reg .pred %p;\n  .reg .b32 %r;\n  ld.param.u32 %r, [p];\n  setp.eq.s32 %p, %r, 0;\n  @%p bra $L__end;\n  ret;\n$L__end:",
        );
        assert_caught(&f, "control falls off the end of the function");
    }

    #[test]
    fn catches_stale_effects_and_bad_registers() {
        let mut f = diamond();
        let start = f.insts[2].operands_start as usize;
        f.operands[start + 2] = Operand::Reg(crate::RegId(1));
        assert_caught(&f, "the def/use arenas do not match the operands");
        f.compute_effects();
        assert_eq!(messages(&f), Vec::<String>::new());

        let mut f = diamond();
        f.insts[1].guard = Some(Guard {
            reg: crate::RegId(1),
            negated: false,
        });
        f.compute_effects();
        assert_caught(&f, "guard '%r1' is not a predicate");

        let mut f = diamond();
        f.operands[start] = Operand::Reg(crate::RegId(3));
        f.compute_effects();
        assert_caught(
            &f,
            "register '%fd1' (.f64) does not fit a .s32 operand of 'add.s32'",
        );

        let mut f = diamond();
        f.operands[start] = Operand::Reg(crate::RegId(99));
        assert_caught(&f, "register v99 does not exist");
    }

    #[test]
    fn a_declaration_has_no_blocks() {
        let f = Function::new("decl", FunctionKind::Device);
        assert_eq!(messages(&f), Vec::<String>::new());
        let mut f = diamond();
        f.has_body = false;
        assert_caught(&f, "a declaration has no blocks or instructions");
    }
}

//! The allocator's view of a lowered [`ir::Function`]: register widths from the register
//! classes (`.b16` and `.b8` values take a whole 32-bit register, as on the hardware),
//! loop depths from the IR's natural-loop analysis for spill costs, and plain `mov`s between registers of one class as copies
//! to coalesce.

use ir::analysis::{DominatorTree, LoopAnalysis};
use ir::{
    BlockId, ControlFlowGraph, Function, InstId, Op, Operand, RegClass, RegId, RegisterEffects,
};

use super::{AllocInput, Copy, RegWidth};

/// The register-file footprint of a register class.
pub fn width_of(class: RegClass) -> RegWidth {
    match class {
        RegClass::Pred => RegWidth::Pred,
        RegClass::B16 | RegClass::B32 => RegWidth::W32,
        RegClass::B64 => RegWidth::W64,
        RegClass::B128 => RegWidth::W128,
    }
}

/// A lowered function together with what the allocator needs beyond its CFG.
pub struct IrInput<'a> {
    func: &'a Function,
    loop_depth: Vec<u32>,
}

impl<'a> IrInput<'a> {
    pub fn new(func: &'a Function) -> Self {
        let domtree = DominatorTree::with_cfg(func);
        let loops = LoopAnalysis::with_cfg(func, &domtree);
        let loop_depth = (0..func.num_blocks())
            .map(|b| loops.loop_depth(BlockId::new(b)))
            .collect();
        IrInput { func, loop_depth }
    }

    pub fn function(&self) -> &'a Function {
        self.func
    }
}

impl ControlFlowGraph for IrInput<'_> {
    fn num_blocks(&self) -> usize {
        self.func.num_blocks()
    }
    fn entry(&self) -> BlockId {
        self.func.entry()
    }
    fn successors(&self, block: BlockId) -> &[BlockId] {
        self.func.successors(block)
    }
    fn predecessors(&self, block: BlockId) -> &[BlockId] {
        self.func.predecessors(block)
    }
}

impl RegisterEffects for IrInput<'_> {
    fn num_regs(&self) -> usize {
        self.func.num_regs()
    }
    fn num_insts(&self) -> usize {
        self.func.num_insts()
    }
    fn block_insts(&self, block: BlockId) -> &[InstId] {
        self.func.block_insts(block)
    }
    fn uses(&self, inst: InstId) -> &[RegId] {
        self.func.uses(inst)
    }
    fn defs(&self, inst: InstId) -> &[RegId] {
        self.func.defs(inst)
    }
    fn defs_are_partial(&self, inst: InstId) -> bool {
        self.func.defs_are_partial(inst)
    }
}

impl AllocInput for IrInput<'_> {
    fn reg_width(&self, reg: RegId) -> RegWidth {
        width_of(self.func.reg(reg).class)
    }

    fn loop_depth(&self, block: BlockId) -> u32 {
        self.loop_depth.get(block.index()).copied().unwrap_or(0)
    }

    fn copy(&self, inst: InstId) -> Option<Copy> {
        let i = self.func.inst(inst);
        let Op::Mov { ty } = i.op else {
            return None;
        };
        if i.guard.is_some() {
            return None;
        }
        match (self.func.dsts(inst), self.func.srcs(inst)) {
            ([Operand::Reg(dst)], [Operand::Reg(src)]) => {
                let (d, s) = (self.func.reg(*dst), self.func.reg(*src));
                // Only a move of every bit is a copy: `mov.b16` between `.b8` registers
                // or a narrower `mov` type would change the value.
                let whole = d.class == s.class
                    && d.ty.bits() == d.class.bits()
                    && s.ty.bits() == s.class.bits()
                    && ty.bits() == d.class.bits();
                whole.then_some(Copy {
                    dst: *dst,
                    src: *src,
                })
            }
            _ => None,
        }
    }
}

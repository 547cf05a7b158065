//! The two views that every analysis takes of a function: its control-flow graph, and which
//! registers each instruction reads and writes. Analyses are written against these traits
//! so they can be tested on synthetic graphs and reused by every pass.

use crate::entity::{BlockId, InstId, RegId};

/// A control-flow graph with one entry block. Blocks are numbered densely `0..num_blocks()`.
pub trait ControlFlowGraph {
    fn num_blocks(&self) -> usize;
    fn entry(&self) -> BlockId;
    fn successors(&self, block: BlockId) -> &[BlockId];
    fn predecessors(&self, block: BlockId) -> &[BlockId];
}

/// Register reads and writes of each instruction, and the instructions of each block in
/// execution order. Instructions are numbered densely `0..num_insts()`, registers
/// `0..num_regs()`.
pub trait RegisterEffects: ControlFlowGraph {
    fn num_regs(&self) -> usize;
    fn num_insts(&self) -> usize;
    /// The instructions of `block`, in order.
    fn block_insts(&self, block: BlockId) -> &[InstId];
    /// Registers read by `inst`, including its guard predicate and address registers.
    /// A register may appear more than once if it is read by several operands.
    fn uses(&self, inst: InstId) -> &[RegId];
    /// Registers written by `inst`.
    fn defs(&self, inst: InstId) -> &[RegId];
    /// True if `inst` writes its definitions only in some lanes or only sometimes (a guard
    /// predicate): such a write does not end the live range of the old value.
    fn defs_are_partial(&self, inst: InstId) -> bool;
}

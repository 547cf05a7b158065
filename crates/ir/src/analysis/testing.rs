//! A synthetic function for tests: a control-flow graph from an edge list and instructions
//! that are nothing but lists of defined and used registers. Every analysis is written
//! against [`ControlFlowGraph`] and [`RegisterEffects`], so it can be tested (and fuzzed)
//! on these without lowering any PTX.

use crate::entity::{BlockId, InstId, RegId};
use crate::graph::{ControlFlowGraph, RegisterEffects};

/// A function built by hand: block 0 is the entry unless [`TestFunction::set_entry`] says
/// otherwise; instructions are numbered in the order they are added.
#[derive(Clone, Debug, Default)]
pub struct TestFunction {
    entry: BlockId,
    succs: Vec<Vec<BlockId>>,
    preds: Vec<Vec<BlockId>>,
    block_insts: Vec<Vec<InstId>>,
    defs: Vec<Vec<RegId>>,
    uses: Vec<Vec<RegId>>,
    partial: Vec<bool>,
    num_regs: usize,
}

impl TestFunction {
    /// `num_blocks` empty blocks joined by `edges` (source, target); successors and
    /// predecessors keep the order of the list.
    pub fn from_edges(num_blocks: usize, edges: &[(u32, u32)]) -> Self {
        let mut f = TestFunction {
            succs: vec![Vec::new(); num_blocks],
            preds: vec![Vec::new(); num_blocks],
            block_insts: vec![Vec::new(); num_blocks],
            ..Default::default()
        };
        for &(from, to) in edges {
            assert!((from as usize) < num_blocks && (to as usize) < num_blocks);
            f.succs[from as usize].push(BlockId(to));
            f.preds[to as usize].push(BlockId(from));
        }
        f
    }

    pub fn set_entry(&mut self, entry: u32) {
        self.entry = BlockId(entry);
    }

    /// Makes the register count at least `num_regs` (it also grows with every register an
    /// instruction names).
    pub fn reserve_regs(&mut self, num_regs: usize) {
        self.num_regs = self.num_regs.max(num_regs);
    }

    /// Appends an instruction to `block` that writes `defs` in every lane and reads `uses`.
    pub fn inst(&mut self, block: u32, defs: &[u32], uses: &[u32]) -> InstId {
        self.push_inst(block, defs, uses, false)
    }

    /// Appends a guarded instruction: its writes are partial and do not kill.
    pub fn guarded_inst(&mut self, block: u32, defs: &[u32], uses: &[u32]) -> InstId {
        self.push_inst(block, defs, uses, true)
    }

    fn push_inst(&mut self, block: u32, defs: &[u32], uses: &[u32], partial: bool) -> InstId {
        let inst = InstId::new(self.defs.len());
        self.block_insts[block as usize].push(inst);
        self.defs.push(defs.iter().map(|&r| RegId(r)).collect());
        self.uses.push(uses.iter().map(|&r| RegId(r)).collect());
        self.partial.push(partial);
        let highest = defs.iter().chain(uses).map(|&r| r as usize + 1).max();
        self.num_regs = self.num_regs.max(highest.unwrap_or(0));
        inst
    }
}

impl ControlFlowGraph for TestFunction {
    fn num_blocks(&self) -> usize {
        self.succs.len()
    }
    fn entry(&self) -> BlockId {
        self.entry
    }
    fn successors(&self, block: BlockId) -> &[BlockId] {
        &self.succs[block.index()]
    }
    fn predecessors(&self, block: BlockId) -> &[BlockId] {
        &self.preds[block.index()]
    }
}

impl RegisterEffects for TestFunction {
    fn num_regs(&self) -> usize {
        self.num_regs
    }
    fn num_insts(&self) -> usize {
        self.defs.len()
    }
    fn block_insts(&self, block: BlockId) -> &[InstId] {
        &self.block_insts[block.index()]
    }
    fn uses(&self, inst: InstId) -> &[RegId] {
        &self.uses[inst.index()]
    }
    fn defs(&self, inst: InstId) -> &[RegId] {
        &self.defs[inst.index()]
    }
    fn defs_are_partial(&self, inst: InstId) -> bool {
        self.partial[inst.index()]
    }
}

/// Random functions for property tests: arbitrary (often irreducible, sometimes
/// disconnected) control flow and arbitrary register effects.
#[cfg(test)]
pub(crate) mod arbitrary {
    use super::TestFunction;
    use proptest::prelude::*;

    /// Up to `max_blocks` blocks, each with 0–3 successors anywhere (self-loops and
    /// duplicate edges included), 0–4 instructions of 0–2 defs and 0–3 uses over
    /// `max_regs` registers, a quarter of them guarded.
    pub fn function(max_blocks: usize, max_regs: u32) -> impl Strategy<Value = TestFunction> {
        (1..=max_blocks).prop_flat_map(move |n| {
            let block = (
                prop::collection::vec(0..n as u32, 0..=3),
                prop::collection::vec(
                    (
                        prop::collection::vec(0..max_regs, 0..=2),
                        prop::collection::vec(0..max_regs, 0..=3),
                        prop::bool::weighted(0.25),
                    ),
                    0..=4,
                ),
            );
            prop::collection::vec(block, n).prop_map(move |blocks| {
                let edges: Vec<(u32, u32)> = blocks
                    .iter()
                    .enumerate()
                    .flat_map(|(b, (succs, _))| succs.iter().map(move |&s| (b as u32, s)))
                    .collect();
                let mut f = TestFunction::from_edges(n, &edges);
                f.reserve_regs(max_regs as usize);
                for (b, (_, insts)) in blocks.iter().enumerate() {
                    for (defs, uses, guarded) in insts {
                        if *guarded {
                            f.guarded_inst(b as u32, defs, uses);
                        } else {
                            f.inst(b as u32, defs, uses);
                        }
                    }
                }
                f
            })
        })
    }
}

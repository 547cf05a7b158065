//! The one generic dataflow solver: a worklist fixed-point iteration over a join
//! semi-lattice, forward or backward (Kildall 1973; the design follows the shape of rustc's
//! MIR dataflow framework).
//!
//! An analysis says what its lattice values are ([`Analysis::Domain`]), which way facts flow
//! ([`Direction`]), what holds at the boundary (function entry for forward problems, blocks
//! without successors for backward ones) and what one instruction does to a value
//! ([`Analysis::apply_inst_effect`]). The solver derives each block's transfer function from
//! the instruction effects, iterates to the least fixed point visiting blocks in reverse
//! postorder (forward) or postorder (backward), and keeps one value per block: the value at
//! the block's *flow entry* (its start for forward problems, its end for backward ones).
//! Values at every other point are recomputed on demand by a [`ResultsCursor`] or a
//! [`ResultsVisitor`], so a solved analysis costs one value per block, not one per
//! instruction.
//!
//! Blocks unreachable from the entry are solved too (after the reachable ones); in a forward
//! problem nothing flows into them from the entry, so they start from bottom.

use std::marker::PhantomData;

use crate::entity::{BlockId, InstId};
use crate::graph::RegisterEffects;

use super::bitset::BitSet;
use super::traversal::BlockOrder;

/// A lattice value that can be joined with another (least upper bound).
pub trait JoinSemiLattice {
    /// `self = self ⊔ other`; true if `self` changed.
    fn join(&mut self, other: &Self) -> bool;
}

/// Which way facts flow through the control-flow graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// From the entry along edges: a block's value at its start is the join over its
    /// predecessors' values at their ends.
    Forward,
    /// Against the edges: a block's value at its end is the join over its successors'
    /// values at their starts.
    Backward,
}

/// A dataflow problem over a function `G`.
///
/// The transfer functions must be monotone and the lattice of finite height, or the solver
/// does not terminate.
pub trait Analysis<G: RegisterEffects + ?Sized> {
    type Domain: JoinSemiLattice + Clone + Eq;

    const DIRECTION: Direction;

    /// The least value: what a block holds before anything has flowed into it.
    fn bottom_value(&self, g: &G) -> Self::Domain;

    /// Joins the boundary facts into `state`: at the entry block's start (forward), or at
    /// the end of each block without successors (backward).
    fn initialize_boundary(&self, g: &G, state: &mut Self::Domain);

    /// The effect of one instruction on `state`, in the flow direction: for a backward
    /// analysis this turns the value after `inst` into the value before it.
    fn apply_inst_effect(&self, g: &G, state: &mut Self::Domain, inst: InstId);

    /// The effect of a whole block: its instructions' effects in flow order. Override only
    /// to use a precomputed summary; the result must equal the default.
    fn apply_block_effect(&self, g: &G, state: &mut Self::Domain, block: BlockId) {
        let insts = g.block_insts(block);
        match Self::DIRECTION {
            Direction::Forward => {
                for &inst in insts {
                    self.apply_inst_effect(g, state, inst);
                }
            }
            Direction::Backward => {
                for &inst in insts.iter().rev() {
                    self.apply_inst_effect(g, state, inst);
                }
            }
        }
    }
}

/// Solves `analysis` on `g` to its least fixed point.
pub fn solve<G, A>(analysis: A, g: &G) -> Results<G, A>
where
    G: RegisterEffects + ?Sized,
    A: Analysis<G>,
{
    let n = g.num_blocks();
    let bottom = analysis.bottom_value(g);
    let mut flow_entry = vec![bottom.clone(); n];
    if n == 0 {
        return Results::new(analysis, flow_entry);
    }

    // Visit order: reverse postorder for forward problems, postorder for backward ones, so
    // that in an acyclic region every block is visited after the blocks feeding it.
    let block_order = BlockOrder::compute(g);
    let mut order = block_order.all_blocks_rpo_first();
    if A::DIRECTION == Direction::Backward {
        order[..block_order.reverse_postorder().len()].reverse();
    }
    let mut position = vec![0u32; n];
    for (i, b) in order.iter().enumerate() {
        position[b.index()] = i as u32;
    }

    match A::DIRECTION {
        Direction::Forward => analysis.initialize_boundary(g, &mut flow_entry[g.entry().index()]),
        Direction::Backward => {
            for (b, state) in flow_entry.iter_mut().enumerate() {
                if g.successors(BlockId::new(b)).is_empty() {
                    analysis.initialize_boundary(g, state);
                }
            }
        }
    }

    // The worklist is a set of positions in `order`, swept from low to high: a block
    // re-dirtied behind the sweep waits for the next sweep, which is the round-robin order
    // that converges in (loop-nesting depth + 2) sweeps on reducible graphs.
    let mut dirty: BitSet = BitSet::new_filled(n);
    let mut state = bottom;
    let mut cursor = 0usize;
    while let Some(pos) = dirty.next_member(cursor).or_else(|| dirty.next_member(0)) {
        dirty.remove(pos);
        cursor = pos + 1;
        let block = order[pos];
        state.clone_from(&flow_entry[block.index()]);
        analysis.apply_block_effect(g, &mut state, block);
        let targets = match A::DIRECTION {
            Direction::Forward => g.successors(block),
            Direction::Backward => g.predecessors(block),
        };
        for &target in targets {
            if flow_entry[target.index()].join(&state) {
                dirty.insert(position[target.index()] as usize);
            }
        }
    }
    Results::new(analysis, flow_entry)
}

/// The fixed point of an analysis: one value per block, at its flow entry.
pub struct Results<G: RegisterEffects + ?Sized, A: Analysis<G>> {
    analysis: A,
    flow_entry: Vec<A::Domain>,
    marker: PhantomData<fn(&G)>,
}

impl<G, A> Results<G, A>
where
    G: RegisterEffects + ?Sized,
    A: Analysis<G>,
{
    fn new(analysis: A, flow_entry: Vec<A::Domain>) -> Self {
        Results {
            analysis,
            flow_entry,
            marker: PhantomData,
        }
    }

    pub fn analysis(&self) -> &A {
        &self.analysis
    }

    /// The value at the start of `block` for a forward analysis, at its end for a backward
    /// one.
    pub fn flow_entry_state(&self, block: BlockId) -> &A::Domain {
        &self.flow_entry[block.index()]
    }

    /// Takes the analysis and the per-block values apart.
    pub fn into_parts(self) -> (A, Vec<A::Domain>) {
        (self.analysis, self.flow_entry)
    }

    /// A cursor for querying values inside blocks.
    pub fn cursor<'r, 'g>(&'r self, g: &'g G) -> ResultsCursor<'r, 'g, G, A> {
        ResultsCursor::new(self, g)
    }

    /// Walks `block` in flow order, showing `visitor` the value at every program point.
    /// `state` is scratch space (any value of the domain); reusing it across blocks avoids
    /// allocation.
    pub fn visit_block(
        &self,
        g: &G,
        block: BlockId,
        state: &mut A::Domain,
        visitor: &mut impl ResultsVisitor<A::Domain>,
    ) {
        state.clone_from(&self.flow_entry[block.index()]);
        let insts = g.block_insts(block);
        match A::DIRECTION {
            Direction::Forward => {
                visitor.visit_block_start(block, state);
                for (index, &inst) in insts.iter().enumerate() {
                    visitor.visit_before_inst(inst, index, state);
                    self.analysis.apply_inst_effect(g, state, inst);
                    visitor.visit_after_inst(inst, index, state);
                }
                visitor.visit_block_end(block, state);
            }
            Direction::Backward => {
                visitor.visit_block_end(block, state);
                for (index, &inst) in insts.iter().enumerate().rev() {
                    visitor.visit_after_inst(inst, index, state);
                    self.analysis.apply_inst_effect(g, state, inst);
                    visitor.visit_before_inst(inst, index, state);
                }
                visitor.visit_block_start(block, state);
            }
        }
    }
}

/// Receives the values at the program points of one block, in flow order (so a backward
/// analysis reports `visit_block_end` first). The names are in program order: "before"
/// an instruction is the point control reaches just before executing it, whatever the
/// analysis's direction.
pub trait ResultsVisitor<D> {
    fn visit_block_start(&mut self, _block: BlockId, _state: &D) {}
    /// `index` is the position of `inst` within its block.
    fn visit_before_inst(&mut self, _inst: InstId, _index: usize, _state: &D) {}
    fn visit_after_inst(&mut self, _inst: InstId, _index: usize, _state: &D) {}
    fn visit_block_end(&mut self, _block: BlockId, _state: &D) {}
}

/// A position inside a block: between instructions `index - 1` and `index`, in program
/// order (0 is the block's start, `block_insts.len()` its end).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProgramPoint {
    pub block: BlockId,
    pub index: usize,
}

/// Reconstructs the value at any program point from a block's flow-entry value, moving
/// incrementally when successive queries go the analysis's way through the same block.
pub struct ResultsCursor<'r, 'g, G: RegisterEffects + ?Sized, A: Analysis<G>> {
    results: &'r Results<G, A>,
    g: &'g G,
    state: A::Domain,
    /// The block whose values `state` holds, and how many of its instructions' effects
    /// have been applied to it in flow order.
    block: Option<BlockId>,
    applied: usize,
}

impl<'r, 'g, G, A> ResultsCursor<'r, 'g, G, A>
where
    G: RegisterEffects + ?Sized,
    A: Analysis<G>,
{
    fn new(results: &'r Results<G, A>, g: &'g G) -> Self {
        let state = results.analysis.bottom_value(g);
        ResultsCursor {
            results,
            g,
            state,
            block: None,
            applied: 0,
        }
    }

    /// The value at the point the cursor was last moved to.
    pub fn get(&self) -> &A::Domain {
        &self.state
    }

    pub fn seek_to_block_start(&mut self, block: BlockId) -> &A::Domain {
        self.seek(ProgramPoint { block, index: 0 })
    }

    pub fn seek_to_block_end(&mut self, block: BlockId) -> &A::Domain {
        let index = self.g.block_insts(block).len();
        self.seek(ProgramPoint { block, index })
    }

    /// The value just before the `index`-th instruction of `block`.
    pub fn seek_before(&mut self, block: BlockId, index: usize) -> &A::Domain {
        self.seek(ProgramPoint { block, index })
    }

    /// The value just after the `index`-th instruction of `block`.
    pub fn seek_after(&mut self, block: BlockId, index: usize) -> &A::Domain {
        self.seek(ProgramPoint {
            block,
            index: index + 1,
        })
    }

    /// The value at `point`.
    pub fn seek(&mut self, point: ProgramPoint) -> &A::Domain {
        let insts = self.g.block_insts(point.block);
        assert!(
            point.index <= insts.len(),
            "program point past the end of its block"
        );
        let target = match A::DIRECTION {
            Direction::Forward => point.index,
            Direction::Backward => insts.len() - point.index,
        };
        if self.block != Some(point.block) || self.applied > target {
            self.state
                .clone_from(self.results.flow_entry_state(point.block));
            self.block = Some(point.block);
            self.applied = 0;
        }
        while self.applied < target {
            let inst = match A::DIRECTION {
                Direction::Forward => insts[self.applied],
                Direction::Backward => insts[insts.len() - 1 - self.applied],
            };
            self.results
                .analysis
                .apply_inst_effect(self.g, &mut self.state, inst);
            self.applied += 1;
        }
        &self.state
    }
}

//! Static analyses of one function, written against [`ControlFlowGraph`] and
//! [`RegisterEffects`] only (issue 2 §3).
//!
//! Each analysis is its own module with the same small life cycle (`new`, `compute`,
//! `clear`, `is_valid`) and a `dump` for golden tests. Dataflow problems (liveness,
//! reaching definitions) are small [`dataflow::Analysis`] implementations solved by the one
//! worklist solver in [`dataflow`]. [`Analyses`] owns the results for one function,
//! computes them on demand and forgets the ones a pass says it invalidated.

pub mod bitset;
pub mod dataflow;
pub mod def_use;
pub mod dominators;
pub mod intervals;
pub mod liveness;
pub mod loops;
pub mod post_dominators;
pub mod testing;
pub mod traversal;

#[cfg(test)]
mod tests;

use std::marker::PhantomData;

use crate::entity::{BlockId, InstId, RegId};
use crate::graph::{ControlFlowGraph, RegisterEffects};

pub use bitset::BitSet;
pub use dataflow::{Analysis, Direction, JoinSemiLattice, Results, ResultsCursor, ResultsVisitor};
pub use def_use::{DefUseChains, UseSite};
pub use dominators::DominatorTree;
pub use intervals::{IntervalAnalysis, IntervalId};
pub use liveness::Liveness;
pub use loops::{LoopAnalysis, LoopId};
pub use post_dominators::PostDominatorTree;

/// How dumps name blocks, registers and instructions. [`Namer::default`] uses the entity
/// ids (`bb3`, `v7`, `i12`); a lowered function can pass its own labels and register names.
pub struct Namer<'a> {
    pub block: &'a dyn Fn(BlockId) -> String,
    pub reg: &'a dyn Fn(RegId) -> String,
    pub inst: &'a dyn Fn(InstId) -> String,
}

impl Default for Namer<'_> {
    fn default() -> Self {
        Namer {
            block: &|b| b.to_string(),
            reg: &|r| r.to_string(),
            inst: &|i| i.to_string(),
        }
    }
}

impl Namer<'_> {
    fn blocks(&self, blocks: impl IntoIterator<Item = BlockId>) -> String {
        join_names(blocks.into_iter().map(|b| (self.block)(b)))
    }

    fn regs(&self, regs: impl IntoIterator<Item = RegId>) -> String {
        join_names(regs.into_iter().map(|r| (self.reg)(r)))
    }
}

/// `[a b c]`.
fn join_names(names: impl Iterator<Item = String>) -> String {
    let names: Vec<String> = names.collect();
    format!("[{}]", names.join(" "))
}

/// One of the analyses an [`Analyses`] context caches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AnalysisKind {
    Dominators,
    PostDominators,
    Loops,
    Intervals,
    Liveness,
    DefUse,
}

impl AnalysisKind {
    pub const ALL: [AnalysisKind; 6] = [
        AnalysisKind::Dominators,
        AnalysisKind::PostDominators,
        AnalysisKind::Loops,
        AnalysisKind::Intervals,
        AnalysisKind::Liveness,
        AnalysisKind::DefUse,
    ];

    fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// A set of analyses: what a pass invalidates, or what a caller wants computed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct AnalysisSet(u8);

impl AnalysisSet {
    pub const NONE: AnalysisSet = AnalysisSet(0);
    /// Everything: what a pass that changes the control-flow graph invalidates.
    pub const ALL: AnalysisSet = AnalysisSet(0b11_1111);
    /// What depends on registers but not on the shape of the graph: what a pass that
    /// renames registers or moves instructions within blocks invalidates.
    pub const REGISTERS: AnalysisSet = AnalysisSet(0b11_0000);

    pub const fn of(kinds: &[AnalysisKind]) -> AnalysisSet {
        let mut bits = 0u8;
        let mut i = 0;
        while i < kinds.len() {
            bits |= 1 << kinds[i] as u8;
            i += 1;
        }
        AnalysisSet(bits)
    }

    pub fn contains(self, kind: AnalysisKind) -> bool {
        self.0 & kind.bit() != 0
    }

    pub fn union(self, other: AnalysisSet) -> AnalysisSet {
        AnalysisSet(self.0 | other.0)
    }

    pub fn iter(self) -> impl Iterator<Item = AnalysisKind> {
        AnalysisKind::ALL
            .into_iter()
            .filter(move |&k| self.contains(k))
    }
}

/// The analyses of one function `F`, computed on demand and kept until a pass invalidates
/// them (Cranelift's `Context` life cycle). The context does not own the function: every
/// call that may compute takes it, and the caller promises it is the same function, as it
/// was when the analysis was computed, unless it invalidated that analysis since.
pub struct Analyses<F: ?Sized> {
    dominators: DominatorTree,
    post_dominators: PostDominatorTree,
    loops: LoopAnalysis,
    intervals: IntervalAnalysis,
    liveness: Liveness,
    def_use: DefUseChains,
    function: PhantomData<fn(&F)>,
}

impl<F: ?Sized> Default for Analyses<F> {
    fn default() -> Self {
        Analyses {
            dominators: DominatorTree::new(),
            post_dominators: PostDominatorTree::new(),
            loops: LoopAnalysis::new(),
            intervals: IntervalAnalysis::new(),
            liveness: Liveness::new(),
            def_use: DefUseChains::new(),
            function: PhantomData,
        }
    }
}

impl<F: RegisterEffects + ?Sized> Analyses<F> {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn is_valid(&self, kind: AnalysisKind) -> bool {
        match kind {
            AnalysisKind::Dominators => self.dominators.is_valid(),
            AnalysisKind::PostDominators => self.post_dominators.is_valid(),
            AnalysisKind::Loops => self.loops.is_valid(),
            AnalysisKind::Intervals => self.intervals.is_valid(),
            AnalysisKind::Liveness => self.liveness.is_valid(),
            AnalysisKind::DefUse => self.def_use.is_valid(),
        }
    }

    /// Computes `kind` for `f` if it is not valid (and what it depends on).
    pub fn compute(&mut self, f: &F, kind: AnalysisKind) {
        if self.is_valid(kind) {
            return;
        }
        match kind {
            AnalysisKind::Dominators => self.dominators.compute(f),
            AnalysisKind::PostDominators => self.post_dominators.compute(f),
            AnalysisKind::Loops => {
                self.compute(f, AnalysisKind::Dominators);
                self.loops.compute(f, &self.dominators);
            }
            AnalysisKind::Intervals => self.intervals.compute(f),
            AnalysisKind::Liveness => self.liveness.compute(f),
            AnalysisKind::DefUse => self.def_use.compute(f),
        }
    }

    /// Computes every analysis in `set` that is not valid.
    pub fn ensure(&mut self, f: &F, set: AnalysisSet) {
        for kind in set.iter() {
            self.compute(f, kind);
        }
    }

    /// Forgets `kind`.
    pub fn clear(&mut self, kind: AnalysisKind) {
        match kind {
            AnalysisKind::Dominators => self.dominators.clear(),
            AnalysisKind::PostDominators => self.post_dominators.clear(),
            AnalysisKind::Loops => self.loops.clear(),
            AnalysisKind::Intervals => self.intervals.clear(),
            AnalysisKind::Liveness => self.liveness.clear(),
            AnalysisKind::DefUse => self.def_use.clear(),
        }
    }

    /// Forgets what a pass says it invalidated, and whatever was computed from it.
    pub fn invalidate(&mut self, set: AnalysisSet) {
        let mut set = set;
        if set.contains(AnalysisKind::Dominators) {
            set = set.union(AnalysisSet::of(&[AnalysisKind::Loops]));
        }
        for kind in set.iter() {
            self.clear(kind);
        }
    }

    /// Forgets everything.
    pub fn clear_all(&mut self) {
        self.invalidate(AnalysisSet::ALL);
    }

    pub fn dominator_tree(&mut self, f: &F) -> &DominatorTree {
        self.compute(f, AnalysisKind::Dominators);
        &self.dominators
    }

    pub fn post_dominator_tree(&mut self, f: &F) -> &PostDominatorTree {
        self.compute(f, AnalysisKind::PostDominators);
        &self.post_dominators
    }

    pub fn loop_analysis(&mut self, f: &F) -> &LoopAnalysis {
        self.compute(f, AnalysisKind::Loops);
        &self.loops
    }

    pub fn interval_analysis(&mut self, f: &F) -> &IntervalAnalysis {
        self.compute(f, AnalysisKind::Intervals);
        &self.intervals
    }

    pub fn liveness(&mut self, f: &F) -> &Liveness {
        self.compute(f, AnalysisKind::Liveness);
        &self.liveness
    }

    pub fn def_use_chains(&mut self, f: &F) -> &DefUseChains {
        self.compute(f, AnalysisKind::DefUse);
        &self.def_use
    }

    /// The cached analyses, valid ones only, for holding several at once after
    /// [`Analyses::ensure`].
    pub fn get_dominator_tree(&self) -> Option<&DominatorTree> {
        Some(&self.dominators).filter(|a| a.is_valid())
    }

    pub fn get_post_dominator_tree(&self) -> Option<&PostDominatorTree> {
        Some(&self.post_dominators).filter(|a| a.is_valid())
    }

    pub fn get_loop_analysis(&self) -> Option<&LoopAnalysis> {
        Some(&self.loops).filter(|a| a.is_valid())
    }

    pub fn get_interval_analysis(&self) -> Option<&IntervalAnalysis> {
        Some(&self.intervals).filter(|a| a.is_valid())
    }

    pub fn get_liveness(&self) -> Option<&Liveness> {
        Some(&self.liveness).filter(|a| a.is_valid())
    }

    pub fn get_def_use_chains(&self) -> Option<&DefUseChains> {
        Some(&self.def_use).filter(|a| a.is_valid())
    }

    /// The dumps of every analysis in `set`, computing what is missing, in the order of
    /// [`AnalysisKind::ALL`]: what golden tests and `--emit` print.
    pub fn dump(&mut self, f: &F, set: AnalysisSet, names: &Namer) -> String {
        self.ensure(f, set);
        let mut out = String::new();
        for kind in set.iter() {
            out += &match kind {
                AnalysisKind::Dominators => self.dominators.dump(names),
                AnalysisKind::PostDominators => self.post_dominators.dump(names),
                AnalysisKind::Loops => self.loops.dump(names),
                AnalysisKind::Intervals => self.intervals.dump(names),
                AnalysisKind::Liveness => self.liveness.dump(f, names),
                AnalysisKind::DefUse => self.def_use.dump(f, names),
            };
        }
        out
    }
}

/// The control-flow graph itself as text: one line per block with its successors.
pub fn dump_cfg<G: ControlFlowGraph + ?Sized>(g: &G, names: &Namer) -> String {
    let mut out = String::from("cfg:\n");
    for b in 0..g.num_blocks() {
        let block = BlockId::new(b);
        let entry = if block == g.entry() { " (entry)" } else { "" };
        out += &format!(
            "  {}{entry} -> {}\n",
            (names.block)(block),
            names.blocks(g.successors(block).iter().copied())
        );
    }
    out
}

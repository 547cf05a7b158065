//! Post-dominator tree: block `a` post-dominates `b` when every path from `b` to the
//! function's exit passes through `a`. The immediate post-dominator of a block ending in a
//! divergent branch is where a SIMT stack reconverges the warp (Fung et al., "Dynamic Warp
//! Formation", MICRO 2007, §3: the immediate post-dominator reconvergence point).
//!
//! Computed as the dominator tree of the reverse graph (Cooper–Harvey–Kennedy, as in
//! [`super::dominators`]) rooted at a *virtual exit* that every block without successors
//! flows into. A block from which no exit can be reached (an infinite loop and whatever
//! leads only into it) would be left out of that tree, so each such region gets one
//! virtual edge to the exit: the regions are the terminal strongly connected components of
//! the blocks that cannot reach an exit (Tarjan 1972), and the edge leaves the component's
//! first block in reverse postorder from the entry, which for a loop is its header (blocks
//! unreachable from the entry come last, by index). Every block then has an immediate
//! post-dominator; `None` means the virtual exit, i.e. reconvergence at function exit.

use std::fmt::Write;

use serde::Serialize;

use crate::entity::BlockId;
use crate::graph::ControlFlowGraph;

use super::dominators::{immediate_dominators, Tree};
use super::traversal::{Adjacency, BlockOrder};
use super::Namer;

const NONE: u32 = u32::MAX;

/// The post-dominator tree of a control-flow graph.
#[derive(Clone, Debug, Default)]
pub struct PostDominatorTree {
    valid: bool,
    num_blocks: usize,
    /// Over `num_blocks + 1` nodes; the last is the virtual exit and the root.
    tree: Tree,
    virtual_exit_sources: Vec<BlockId>,
}

impl PostDominatorTree {
    /// An empty, invalid tree; [`PostDominatorTree::compute`] fills it.
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_cfg<G: ControlFlowGraph + ?Sized>(g: &G) -> Self {
        let mut tree = Self::new();
        tree.compute(g);
        tree
    }

    pub fn compute<G: ControlFlowGraph + ?Sized>(&mut self, g: &G) {
        let n = g.num_blocks();
        self.num_blocks = n;
        self.virtual_exit_sources = blocks_without_exit_path(g);
        let exit = n as u32;
        let mut reverse_edges = Vec::new();
        for b in 0..n {
            let block = BlockId::new(b);
            if g.successors(block).is_empty() {
                reverse_edges.push((exit, b as u32));
            }
        }
        reverse_edges.extend(self.virtual_exit_sources.iter().map(|s| (exit, s.0)));
        for b in 0..n {
            for &s in g.successors(BlockId::new(b)) {
                reverse_edges.push((s.0, b as u32));
            }
        }
        let reverse = Adjacency::from_edges(n + 1, &reverse_edges, false);
        let idom = immediate_dominators(&reverse, n);
        self.tree = Tree::from_idoms(&idom, n);
        debug_assert!((0..n).all(|b| self.tree.contains(b)));
        self.valid = true;
    }

    pub fn clear(&mut self) {
        self.tree = Tree::default();
        self.virtual_exit_sources.clear();
        self.valid = false;
    }

    pub fn is_valid(&self) -> bool {
        self.valid
    }

    /// The immediate post-dominator of `block`: where threads that diverge at a branch
    /// ending `block` reconverge. `None` means the virtual exit (reconvergence at function
    /// exit).
    pub fn immediate_post_dominator(&self, block: BlockId) -> Option<BlockId> {
        self.tree
            .parent(block.index())
            .filter(|&p| p != self.num_blocks)
            .map(BlockId::new)
    }

    /// True if every path from `b` to the (virtual) exit passes through `a`; reflexive.
    pub fn post_dominates(&self, a: BlockId, b: BlockId) -> bool {
        self.tree.is_ancestor(a.index(), b.index())
    }

    pub fn strictly_post_dominates(&self, a: BlockId, b: BlockId) -> bool {
        a != b && self.post_dominates(a, b)
    }

    /// Depth below the virtual exit: blocks that flow straight to the exit are at 1.
    pub fn depth(&self, block: BlockId) -> u32 {
        self.tree.depth(block.index()).unwrap_or(0)
    }

    /// Blocks whose immediate post-dominator is `block`, in increasing index order.
    pub fn children(&self, block: BlockId) -> impl Iterator<Item = BlockId> + '_ {
        self.tree
            .children(block.index())
            .iter()
            .map(|&b| BlockId(b))
    }

    /// Blocks given a virtual edge to the exit because no exit was reachable from them, in
    /// increasing index order.
    pub fn virtual_exit_sources(&self) -> &[BlockId] {
        &self.virtual_exit_sources
    }

    /// Numbers only, for JSON: the reconvergence block of every block (`None` for the
    /// exit) and the blocks given virtual exit edges.
    pub fn summary(&self) -> PostDominatorSummary {
        PostDominatorSummary {
            ipdom: (0..self.num_blocks)
                .map(|b| self.immediate_post_dominator(BlockId::new(b)).map(|p| p.0))
                .collect(),
            virtual_exit_sources: self.virtual_exit_sources.iter().map(|b| b.0).collect(),
        }
    }

    /// One line per block: `bb2: ipdom bb4`, or `ipdom exit`, then the virtual edges.
    pub fn dump(&self, names: &Namer) -> String {
        let mut out = String::from("post-dominators:\n");
        for b in 0..self.num_blocks {
            let block = BlockId::new(b);
            let ipdom = match self.immediate_post_dominator(block) {
                Some(p) => (names.block)(p),
                None => "exit".to_string(),
            };
            writeln!(out, "  {}: ipdom {ipdom}", (names.block)(block))
                .expect("writing to a String cannot fail");
        }
        if !self.virtual_exit_sources.is_empty() {
            let sources: Vec<String> = self
                .virtual_exit_sources
                .iter()
                .map(|&b| (names.block)(b))
                .collect();
            writeln!(out, "  virtual exit edges from: {}", sources.join(" "))
                .expect("writing to a String cannot fail");
        }
        out
    }
}

/// Serializable form of a [`PostDominatorTree`], indexed by block.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PostDominatorSummary {
    pub ipdom: Vec<Option<u32>>,
    pub virtual_exit_sources: Vec<u32>,
}

/// The blocks that get a virtual edge to the exit: one per terminal strongly connected
/// component of the blocks that cannot reach a block without successors.
fn blocks_without_exit_path<G: ControlFlowGraph + ?Sized>(g: &G) -> Vec<BlockId> {
    let n = g.num_blocks();
    // Blocks that reach an exit: backward search from the blocks without successors.
    let mut reaches_exit = vec![false; n];
    let mut stack: Vec<BlockId> = (0..n)
        .map(BlockId::new)
        .filter(|&b| g.successors(b).is_empty())
        .collect();
    for b in &stack {
        reaches_exit[b.index()] = true;
    }
    while let Some(b) = stack.pop() {
        for &p in g.predecessors(b) {
            if !reaches_exit[p.index()] {
                reaches_exit[p.index()] = true;
                stack.push(p);
            }
        }
    }
    if reaches_exit.iter().all(|&r| r) {
        return Vec::new();
    }

    // Every successor of a block that cannot reach an exit cannot either, so the
    // components found here only have edges among themselves.
    let scc = strongly_connected_components(g, &reaches_exit);
    let order = BlockOrder::compute(g);
    let key = |b: usize| match order.rpo_number(BlockId::new(b)) {
        Some(i) => i,
        None => n + b,
    };
    let num_sccs = scc
        .iter()
        .filter(|&&c| c != NONE)
        .max()
        .map_or(0, |&c| c as usize + 1);
    let mut terminal = vec![true; num_sccs];
    let mut first = vec![usize::MAX; num_sccs];
    for b in (0..n).filter(|&b| !reaches_exit[b]) {
        let c = scc[b] as usize;
        if g.successors(BlockId::new(b))
            .iter()
            .any(|s| scc[s.index()] as usize != c)
        {
            terminal[c] = false;
        }
        if first[c] == usize::MAX || key(b) < key(first[c]) {
            first[c] = b;
        }
    }
    let mut sources: Vec<BlockId> = (0..num_sccs)
        .filter(|&c| terminal[c])
        .map(|c| BlockId::new(first[c]))
        .collect();
    sources.sort();
    sources
}

/// Tarjan's strongly connected components of the blocks with `excluded[b] == false`;
/// excluded blocks get `NONE`. Iterative.
fn strongly_connected_components<G: ControlFlowGraph + ?Sized>(
    g: &G,
    excluded: &[bool],
) -> Vec<u32> {
    let n = g.num_blocks();
    let mut index = vec![NONE; n];
    let mut low = vec![NONE; n];
    let mut on_stack = vec![false; n];
    let mut component = vec![NONE; n];
    let mut stack: Vec<usize> = Vec::new();
    let mut counter = 0u32;
    let mut num_components = 0u32;
    for start in 0..n {
        if excluded[start] || index[start] != NONE {
            continue;
        }
        let mut calls: Vec<(usize, usize)> = vec![(start, 0)];
        index[start] = counter;
        low[start] = counter;
        counter += 1;
        stack.push(start);
        on_stack[start] = true;
        while let Some(&mut (v, ref mut next)) = calls.last_mut() {
            let succs = g.successors(BlockId::new(v));
            if let Some(&w) = succs.get(*next) {
                *next += 1;
                let w = w.index();
                if excluded[w] {
                    continue;
                }
                if index[w] == NONE {
                    index[w] = counter;
                    low[w] = counter;
                    counter += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    calls.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
            } else {
                calls.pop();
                if let Some(&(u, _)) = calls.last() {
                    low[u] = low[u].min(low[v]);
                }
                if low[v] == index[v] {
                    loop {
                        let w = stack.pop().expect("Tarjan stack holds the component");
                        on_stack[w] = false;
                        component[w] = num_components;
                        if w == v {
                            break;
                        }
                    }
                    num_components += 1;
                }
            }
        }
    }
    component
}

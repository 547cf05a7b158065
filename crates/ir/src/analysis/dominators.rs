//! Dominator tree: block `a` dominates `b` when every path from the entry to `b` passes
//! through `a`.
//!
//! Computed with the iterative algorithm of Cooper, Harvey and Kennedy, "A Simple, Fast
//! Dominance Algorithm" (2001): immediate dominators are refined in reverse postorder by
//! intersecting the predecessors' dominator-tree paths, using postorder numbers to walk
//! up, until nothing changes. The tree is then numbered in depth-first pre-order so that
//! `dominates(a, b)` is two comparisons.
//!
//! Only blocks reachable from the entry take part: an unreachable block has no immediate
//! dominator, dominates nothing and is dominated by nothing (not even itself).

use std::fmt::Write;

use serde::Serialize;

use crate::entity::BlockId;
use crate::graph::ControlFlowGraph;

use super::traversal::{cfg_edges, Adjacency};
use super::Namer;

const NONE: u32 = u32::MAX;

/// Immediate dominators of the nodes of `g` reachable from `root` (Cooper–Harvey–Kennedy).
/// `idom[root] == root`; unreachable nodes get `NONE`.
pub(crate) fn immediate_dominators(g: &Adjacency, root: usize) -> Vec<u32> {
    let n = g.num_nodes();
    let postorder = g.postorder(root);
    let mut po_number = vec![NONE; n];
    for (i, &node) in postorder.iter().enumerate() {
        po_number[node as usize] = i as u32;
    }
    let mut idom = vec![NONE; n];
    idom[root] = root as u32;

    let intersect = |idom: &[u32], mut a: u32, mut b: u32| {
        while a != b {
            while po_number[a as usize] < po_number[b as usize] {
                a = idom[a as usize];
            }
            while po_number[b as usize] < po_number[a as usize] {
                b = idom[b as usize];
            }
        }
        a
    };

    let mut changed = true;
    while changed {
        changed = false;
        for &node in postorder.iter().rev().skip(1) {
            let mut new_idom = NONE;
            for &pred in g.preds(node as usize) {
                if idom[pred as usize] == NONE {
                    // Not processed yet, or unreachable.
                    continue;
                }
                new_idom = if new_idom == NONE {
                    pred
                } else {
                    intersect(&idom, pred, new_idom)
                };
            }
            if idom[node as usize] != new_idom {
                idom[node as usize] = new_idom;
                changed = true;
            }
        }
    }
    idom
}

/// A rooted tree given by parent links, numbered for constant-time ancestor queries.
/// Shared by the dominator and post-dominator trees.
#[derive(Clone, Debug, Default)]
pub(crate) struct Tree {
    /// Parent of each node; `NONE` for the root and for nodes outside the tree.
    parent: Vec<u32>,
    /// Depth-first pre-order number, and the largest pre-order number in the subtree.
    pre: Vec<u32>,
    last: Vec<u32>,
    depth: Vec<u32>,
    children_start: Vec<u32>,
    children: Vec<u32>,
}

impl Tree {
    /// From immediate dominators as [`immediate_dominators`] returns them.
    pub fn from_idoms(idom: &[u32], root: usize) -> Tree {
        let n = idom.len();
        let mut parent = idom.to_vec();
        parent[root] = NONE;
        // Children in increasing node order, so every numbering below is deterministic.
        let edges: Vec<(u32, u32)> = (0..n)
            .filter(|&c| parent[c] != NONE)
            .map(|c| (parent[c], c as u32))
            .collect();
        let tree = Adjacency::from_edges(n, &edges, false);
        let mut pre = vec![NONE; n];
        let mut last = vec![NONE; n];
        let mut depth = vec![NONE; n];
        let mut counter = 0u32;
        let mut stack: Vec<(u32, usize)> = vec![(root as u32, 0)];
        pre[root] = 0;
        depth[root] = 0;
        counter += 1;
        while let Some(&mut (node, ref mut next)) = stack.last_mut() {
            if let Some(&child) = tree.succs(node as usize).get(*next) {
                *next += 1;
                pre[child as usize] = counter;
                depth[child as usize] = depth[node as usize] + 1;
                counter += 1;
                stack.push((child, 0));
            } else {
                last[node as usize] = counter - 1;
                stack.pop();
            }
        }
        let mut children_start = vec![0u32; n + 1];
        let mut children = Vec::with_capacity(edges.len());
        for node in 0..n {
            children.extend_from_slice(tree.succs(node));
            children_start[node + 1] = children.len() as u32;
        }
        Tree {
            parent,
            pre,
            last,
            depth,
            children_start,
            children,
        }
    }

    pub fn contains(&self, node: usize) -> bool {
        self.pre[node] != NONE
    }

    pub fn parent(&self, node: usize) -> Option<usize> {
        match self.parent[node] {
            NONE => None,
            p => Some(p as usize),
        }
    }

    pub fn depth(&self, node: usize) -> Option<u32> {
        match self.depth[node] {
            NONE => None,
            d => Some(d),
        }
    }

    pub fn children(&self, node: usize) -> &[u32] {
        &self.children[self.children_start[node] as usize..self.children_start[node + 1] as usize]
    }

    /// True if `a` is `b` or an ancestor of `b` (both in the tree).
    pub fn is_ancestor(&self, a: usize, b: usize) -> bool {
        self.contains(a)
            && self.contains(b)
            && self.pre[a] <= self.pre[b]
            && self.pre[b] <= self.last[a]
    }
}

/// The dominator tree of a control-flow graph.
#[derive(Clone, Debug, Default)]
pub struct DominatorTree {
    valid: bool,
    entry: BlockId,
    tree: Tree,
    /// Reachable blocks in reverse postorder.
    rpo: Vec<BlockId>,
}

impl DominatorTree {
    /// An empty, invalid tree; [`DominatorTree::compute`] fills it.
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
        self.entry = g.entry();
        if n == 0 {
            self.tree = Tree::default();
            self.rpo.clear();
            self.valid = true;
            return;
        }
        let graph = Adjacency::from_edges(n, &cfg_edges(g), false);
        let idom = immediate_dominators(&graph, self.entry.index());
        self.tree = Tree::from_idoms(&idom, self.entry.index());
        self.rpo = graph
            .postorder(self.entry.index())
            .iter()
            .rev()
            .map(|&b| BlockId(b))
            .collect();
        self.valid = true;
    }

    pub fn clear(&mut self) {
        self.tree = Tree::default();
        self.rpo.clear();
        self.valid = false;
    }

    pub fn is_valid(&self) -> bool {
        self.valid
    }

    pub fn entry(&self) -> BlockId {
        self.entry
    }

    pub fn is_reachable(&self, block: BlockId) -> bool {
        self.tree.contains(block.index())
    }

    /// The immediate dominator of `block`; `None` for the entry and unreachable blocks.
    pub fn idom(&self, block: BlockId) -> Option<BlockId> {
        self.tree.parent(block.index()).map(BlockId::new)
    }

    /// True if every path from the entry to `b` passes through `a` (so `a` dominates
    /// itself). False if either block is unreachable.
    pub fn dominates(&self, a: BlockId, b: BlockId) -> bool {
        self.tree.is_ancestor(a.index(), b.index())
    }

    /// `dominates(a, b) && a != b`.
    pub fn strictly_dominates(&self, a: BlockId, b: BlockId) -> bool {
        a != b && self.dominates(a, b)
    }

    /// Depth in the tree (the entry is 0); `None` for unreachable blocks.
    pub fn depth(&self, block: BlockId) -> Option<u32> {
        self.tree.depth(block.index())
    }

    /// Blocks immediately dominated by `block`, in increasing index order.
    pub fn children(&self, block: BlockId) -> impl Iterator<Item = BlockId> + '_ {
        self.tree
            .children(block.index())
            .iter()
            .map(|&b| BlockId(b))
    }

    /// Reachable blocks in reverse postorder: every block comes after its dominators.
    pub fn reverse_postorder(&self) -> &[BlockId] {
        &self.rpo
    }

    /// Numbers only, for JSON: the immediate dominator of every block (`None` for the
    /// entry and unreachable blocks).
    pub fn summary(&self) -> DominatorSummary {
        DominatorSummary {
            idom: (0..self.tree.parent.len())
                .map(|b| self.idom(BlockId::new(b)).map(|d| d.0))
                .collect(),
        }
    }

    /// One line per block: `bb3: idom bb1, depth 2`, or `bb5: unreachable`.
    pub fn dump(&self, names: &Namer) -> String {
        let mut out = String::from("dominators:\n");
        for b in 0..self.tree.parent.len() {
            let block = BlockId::new(b);
            let name = (names.block)(block);
            match (self.depth(block), self.idom(block)) {
                (None, _) => writeln!(out, "  {name}: unreachable"),
                (Some(_), None) => writeln!(out, "  {name}: entry"),
                (Some(depth), Some(idom)) => {
                    writeln!(out, "  {name}: idom {}, depth {depth}", (names.block)(idom))
                }
            }
            .expect("writing to a String cannot fail");
        }
        out
    }
}

/// Serializable form of a [`DominatorTree`], indexed by block.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DominatorSummary {
    pub idom: Vec<Option<u32>>,
}

//! Depth-first orders of a control-flow graph: postorder and reverse postorder from the
//! entry, the orders in which the dataflow solver and the dominator computation visit
//! blocks. Successors are explored in the order the graph lists them, so every order here
//! is a deterministic function of the graph.

use crate::entity::BlockId;
use crate::graph::ControlFlowGraph;

/// The depth-first orders of the blocks reachable from the entry.
#[derive(Clone, Debug, Default)]
pub struct BlockOrder {
    /// Reachable blocks in reverse postorder (the entry first).
    rpo: Vec<BlockId>,
    /// Position of each block in `rpo`; `u32::MAX` for unreachable blocks.
    rpo_index: Vec<u32>,
}

const UNREACHED: u32 = u32::MAX;

impl BlockOrder {
    pub fn compute<G: ControlFlowGraph + ?Sized>(g: &G) -> Self {
        let n = g.num_blocks();
        let mut rpo = postorder_from(n, g.entry(), |b| g.successors(b));
        rpo.reverse();
        let mut rpo_index = vec![UNREACHED; n];
        for (i, b) in rpo.iter().enumerate() {
            rpo_index[b.index()] = i as u32;
        }
        BlockOrder { rpo, rpo_index }
    }

    /// Reachable blocks in reverse postorder; the entry comes first, and a block comes
    /// before every block it strictly dominates.
    pub fn reverse_postorder(&self) -> &[BlockId] {
        &self.rpo
    }

    /// Position of `block` in reverse postorder, or `None` if it is unreachable.
    pub fn rpo_number(&self, block: BlockId) -> Option<usize> {
        match self.rpo_index[block.index()] {
            UNREACHED => None,
            i => Some(i as usize),
        }
    }

    pub fn is_reachable(&self, block: BlockId) -> bool {
        self.rpo_index[block.index()] != UNREACHED
    }

    /// Every block: the reachable ones in reverse postorder, then the unreachable ones in
    /// index order.
    pub fn all_blocks_rpo_first(&self) -> Vec<BlockId> {
        let mut order = self.rpo.clone();
        order.extend(
            (0..self.rpo_index.len())
                .filter(|&i| self.rpo_index[i] == UNREACHED)
                .map(BlockId::new),
        );
        order
    }
}

/// Postorder of the blocks reachable from `start` in a graph of `n` blocks, following
/// `succs`. Iterative, so deep graphs cannot overflow the stack.
pub(crate) fn postorder_from<'a>(
    n: usize,
    start: BlockId,
    succs: impl Fn(BlockId) -> &'a [BlockId],
) -> Vec<BlockId> {
    let mut order = Vec::with_capacity(n);
    if n == 0 {
        return order;
    }
    let mut visited = vec![false; n];
    let mut stack: Vec<(BlockId, usize)> = vec![(start, 0)];
    visited[start.index()] = true;
    while let Some(&mut (block, ref mut next)) = stack.last_mut() {
        let successors = succs(block);
        if let Some(&succ) = successors.get(*next) {
            *next += 1;
            if !visited[succ.index()] {
                visited[succ.index()] = true;
                stack.push((succ, 0));
            }
        } else {
            order.push(block);
            stack.pop();
        }
    }
    order
}

/// A directed graph over nodes `0..num_nodes()` in compressed adjacency form, with both
/// edge directions. The dominator and post-dominator trees, and the interval derived
/// graphs, are computed on these, so one implementation serves the CFG, its reverse with
/// a virtual exit, and graphs of intervals.
#[derive(Clone, Debug, Default)]
pub(crate) struct Adjacency {
    succ_start: Vec<u32>,
    succ: Vec<u32>,
    pred_start: Vec<u32>,
    pred: Vec<u32>,
}

impl Adjacency {
    /// The graph with `num_nodes` nodes and `edges`, kept in the given order; duplicate
    /// edges are dropped if `dedup` is set.
    pub fn from_edges(num_nodes: usize, edges: &[(u32, u32)], dedup: bool) -> Self {
        let mut edges = edges.to_vec();
        if dedup {
            let mut seen = std::collections::BTreeSet::new();
            edges.retain(|&e| seen.insert(e));
        }
        let (succ_start, succ) = group(num_nodes, edges.iter().map(|&(a, b)| (a, b)));
        let (pred_start, pred) = group(num_nodes, edges.iter().map(|&(a, b)| (b, a)));
        Adjacency {
            succ_start,
            succ,
            pred_start,
            pred,
        }
    }

    pub fn num_nodes(&self) -> usize {
        self.succ_start.len() - 1
    }

    pub fn succs(&self, n: usize) -> &[u32] {
        &self.succ[self.succ_start[n] as usize..self.succ_start[n + 1] as usize]
    }

    pub fn preds(&self, n: usize) -> &[u32] {
        &self.pred[self.pred_start[n] as usize..self.pred_start[n + 1] as usize]
    }

    /// Postorder of the nodes reachable from `root`.
    pub fn postorder(&self, root: usize) -> Vec<u32> {
        let n = self.num_nodes();
        let mut order = Vec::with_capacity(n);
        let mut visited = vec![false; n];
        let mut stack: Vec<(u32, usize)> = vec![(root as u32, 0)];
        visited[root] = true;
        while let Some(&mut (node, ref mut next)) = stack.last_mut() {
            if let Some(&succ) = self.succs(node as usize).get(*next) {
                *next += 1;
                if !visited[succ as usize] {
                    visited[succ as usize] = true;
                    stack.push((succ, 0));
                }
            } else {
                order.push(node);
                stack.pop();
            }
        }
        order
    }
}

/// Counting sort of `(key, value)` pairs by key, stable: offsets and values.
fn group(num_keys: usize, pairs: impl Iterator<Item = (u32, u32)> + Clone) -> (Vec<u32>, Vec<u32>) {
    let mut start = vec![0u32; num_keys + 1];
    for (k, _) in pairs.clone() {
        start[k as usize + 1] += 1;
    }
    for i in 0..num_keys {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut values = vec![0u32; start[num_keys] as usize];
    for (k, v) in pairs {
        values[fill[k as usize] as usize] = v;
        fill[k as usize] += 1;
    }
    (start, values)
}

/// The edges of a control-flow graph, in successor order.
pub(crate) fn cfg_edges<G: ControlFlowGraph + ?Sized>(g: &G) -> Vec<(u32, u32)> {
    (0..g.num_blocks())
        .flat_map(|b| {
            g.successors(BlockId::new(b))
                .iter()
                .map(move |s| (b as u32, s.0))
        })
        .collect()
}

//! Interval partitioning and the derived sequence of flow graphs (Allen and Cocke, "A
//! Program Data Flow Analysis Procedure", CACM 1976; Hecht, *Flow Analysis of Computer
//! Programs*, 1977, §2.3 and §3.4).
//!
//! The interval `I(h)` with header `h` is the largest single-entry region grown from `h` by
//! repeatedly adding a node all of whose predecessors are already in the region. The
//! partition starts with the entry's interval; every node outside the intervals built so
//! far with a predecessor inside one becomes the next header. Collapsing each interval to
//! one node (an edge `I → J` for every edge into `J`'s header from `I`) gives the derived
//! graph; repeating gives `G1` (the CFG), `G2`, … until a graph is its own derived graph,
//! the limit graph. The CFG is reducible exactly when the limit graph is a single node.
//!
//! Level `k` of [`IntervalAnalysis`] is the partition of `G(k+1)` (level 0 partitions the
//! blocks); its intervals are the nodes of the next level's graph. The LTRF register
//! intervals are built on these. Headers are taken first-in first-out and nodes join an
//! interval in the order their last predecessor joined it, so within an interval every
//! node comes after all of its predecessors except along edges back to the header.
//! Only blocks reachable from the entry are partitioned.

use std::collections::VecDeque;
use std::fmt::Write;

use serde::Serialize;

use crate::entity::BlockId;
use crate::graph::ControlFlowGraph;

use super::traversal::{cfg_edges, Adjacency, BlockOrder};
use super::Namer;

const NONE: u32 = u32::MAX;

/// An interval of one level, numbered in the order the partition creates them (the
/// entry's interval is 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct IntervalId(pub u32);

impl IntervalId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// The partition of one graph `G(k+1)` of the derived sequence into intervals.
#[derive(Clone, Debug, Default)]
pub struct IntervalLevel {
    /// Edges of the graph this level partitions; its nodes are blocks at level 0 and the
    /// previous level's intervals above.
    graph_edges: Vec<(u32, u32)>,
    num_nodes: usize,
    headers: Vec<u32>,
    node_start: Vec<u32>,
    nodes: Vec<u32>,
    interval_of_node: Vec<u32>,
    interval_of_block: Vec<u32>,
    header_block: Vec<BlockId>,
}

impl IntervalLevel {
    /// Nodes of the graph this level partitions (blocks at level 0, unreachable included).
    pub fn num_nodes(&self) -> usize {
        self.num_nodes
    }

    pub fn num_intervals(&self) -> usize {
        self.headers.len()
    }

    pub fn intervals(&self) -> impl Iterator<Item = IntervalId> {
        (0..self.headers.len() as u32).map(IntervalId)
    }

    /// Edges of the graph this level partitions, without duplicates.
    pub fn graph_edges(&self) -> &[(u32, u32)] {
        &self.graph_edges
    }

    /// The header node of `interval` in this level's graph.
    pub fn header_node(&self, interval: IntervalId) -> u32 {
        self.headers[interval.index()]
    }

    /// The nodes of `interval` in the order they joined it (header first).
    pub fn nodes(&self, interval: IntervalId) -> &[u32] {
        let i = interval.index();
        &self.nodes[self.node_start[i] as usize..self.node_start[i + 1] as usize]
    }

    /// The interval holding a node of this level's graph.
    pub fn interval_of_node(&self, node: u32) -> Option<IntervalId> {
        match self.interval_of_node[node as usize] {
            NONE => None,
            i => Some(IntervalId(i)),
        }
    }

    /// The interval of this level whose region contains `block`; `None` if unreachable.
    pub fn interval_of_block(&self, block: BlockId) -> Option<IntervalId> {
        match self.interval_of_block[block.index()] {
            NONE => None,
            i => Some(IntervalId(i)),
        }
    }

    /// The block through which control enters `interval`'s region.
    pub fn header_block(&self, interval: IntervalId) -> BlockId {
        self.header_block[interval.index()]
    }

    /// Blocks of `interval`'s region, increasing.
    pub fn blocks(&self, interval: IntervalId) -> Vec<BlockId> {
        (0..self.interval_of_block.len())
            .filter(|&b| self.interval_of_block[b] == interval.0)
            .map(BlockId::new)
            .collect()
    }
}

/// Intervals of every graph in the derived sequence of a CFG.
#[derive(Clone, Debug, Default)]
pub struct IntervalAnalysis {
    valid: bool,
    levels: Vec<IntervalLevel>,
}

impl IntervalAnalysis {
    /// An empty, invalid analysis; [`IntervalAnalysis::compute`] fills it.
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_cfg<G: ControlFlowGraph + ?Sized>(g: &G) -> Self {
        let mut intervals = Self::new();
        intervals.compute(g);
        intervals
    }

    pub fn compute<G: ControlFlowGraph + ?Sized>(&mut self, g: &G) {
        self.levels.clear();
        let n = g.num_blocks();
        if n == 0 {
            self.valid = true;
            return;
        }
        let order = BlockOrder::compute(g);
        // Edges out of unreachable blocks are not part of the flow graph: they would keep
        // their targets from ever joining an interval.
        let mut edges = cfg_edges(g);
        edges.retain(|&(a, _)| order.is_reachable(BlockId(a)));
        let mut graph = Adjacency::from_edges(n, &edges, true);
        let mut root = g.entry().index();
        let mut block_node: Vec<u32> = (0..n as u32)
            .map(|b| {
                if order.is_reachable(BlockId(b)) {
                    b
                } else {
                    NONE
                }
            })
            .collect();
        let mut node_header_block: Vec<BlockId> = (0..n).map(BlockId::new).collect();
        loop {
            let mut level = partition(&graph, root);
            level.graph_edges = edges.clone();
            level.graph_edges.sort_unstable();
            level.graph_edges.dedup();
            level.interval_of_block = block_node
                .iter()
                .map(|&node| {
                    if node == NONE {
                        NONE
                    } else {
                        level.interval_of_node[node as usize]
                    }
                })
                .collect();
            level.header_block = level
                .headers
                .iter()
                .map(|&h| node_header_block[h as usize])
                .collect();
            let partitioned = level
                .interval_of_node
                .iter()
                .filter(|&&i| i != NONE)
                .count();
            // A graph partitioned into single nodes is its own derived graph, the limit,
            // unless it has self-loops: the derived graph drops those (a self-loop keeps a
            // node out of its predecessor's interval, so the next graph can still shrink).
            let has_self_loop =
                (0..graph.num_nodes()).any(|v| graph.succs(v).contains(&(v as u32)));
            let shrank = level.num_intervals() < partitioned || has_self_loop;

            // The derived graph: one node per interval, an edge wherever an edge crosses
            // from one interval into another's header.
            edges = Vec::new();
            for node in 0..graph.num_nodes() {
                let from = level.interval_of_node[node];
                if from == NONE {
                    continue;
                }
                for &succ in graph.succs(node) {
                    let to = level.interval_of_node[succ as usize];
                    if to != from {
                        edges.push((from, to));
                    }
                }
            }
            block_node = level.interval_of_block.clone();
            node_header_block = level.header_block.clone();
            let num_intervals = level.num_intervals();
            self.levels.push(level);
            if !shrank {
                break;
            }
            graph = Adjacency::from_edges(num_intervals, &edges, true);
            root = 0;
        }
        self.valid = true;
    }

    pub fn clear(&mut self) {
        self.levels.clear();
        self.valid = false;
    }

    pub fn is_valid(&self) -> bool {
        self.valid
    }

    /// One level per graph of the derived sequence, the CFG's partition first and the
    /// limit graph's (every interval a single node) last.
    pub fn levels(&self) -> &[IntervalLevel] {
        &self.levels
    }

    pub fn level(&self, k: usize) -> &IntervalLevel {
        &self.levels[k]
    }

    /// Number of nodes of the limit graph (reachable blocks only).
    pub fn limit_graph_size(&self) -> usize {
        self.levels.last().map_or(0, |l| l.num_intervals())
    }

    /// True if the derived sequence ends in a single node.
    pub fn is_reducible(&self) -> bool {
        self.limit_graph_size() <= 1
    }

    /// Numbers only, for JSON: per level, each interval's header block and nodes.
    pub fn summary(&self) -> IntervalSummary {
        IntervalSummary {
            levels: self
                .levels
                .iter()
                .map(|level| {
                    level
                        .intervals()
                        .map(|i| IntervalInfo {
                            header_block: level.header_block(i).0,
                            nodes: level.nodes(i).to_vec(),
                        })
                        .collect()
                })
                .collect(),
            reducible: self.is_reducible(),
        }
    }

    /// Each level's intervals with their nodes and header blocks.
    pub fn dump(&self, names: &Namer) -> String {
        let mut out = String::from("intervals:\n");
        for (k, level) in self.levels.iter().enumerate() {
            writeln!(
                out,
                "  level {k}: {} nodes, {} intervals",
                level.num_nodes,
                level.num_intervals()
            )
            .expect("writing to a String cannot fail");
            for i in level.intervals() {
                let nodes: Vec<String> = level
                    .nodes(i)
                    .iter()
                    .map(|&node| {
                        if k == 0 {
                            (names.block)(BlockId(node))
                        } else {
                            format!("I{node}")
                        }
                    })
                    .collect();
                writeln!(
                    out,
                    "    I{}: header {}, nodes [{}]",
                    i.0,
                    (names.block)(level.header_block(i)),
                    nodes.join(" ")
                )
                .expect("writing to a String cannot fail");
            }
        }
        let verdict = if self.is_reducible() {
            "reducible"
        } else {
            "irreducible"
        };
        writeln!(
            out,
            "  limit graph: {} nodes ({verdict})",
            self.limit_graph_size()
        )
        .expect("writing to a String cannot fail");
        out
    }
}

/// Serializable form of an [`IntervalAnalysis`]: `levels[k][i]` is interval `i` of level
/// `k`, whose nodes are blocks at level 0 and intervals of level `k - 1` above.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IntervalSummary {
    pub levels: Vec<Vec<IntervalInfo>>,
    pub reducible: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IntervalInfo {
    pub header_block: u32,
    pub nodes: Vec<u32>,
}

/// Allen–Cocke partition of the nodes of `g` reachable from `root` into intervals.
fn partition(g: &Adjacency, root: usize) -> IntervalLevel {
    let n = g.num_nodes();
    let mut interval_of_node = vec![NONE; n];
    let mut headers = Vec::new();
    let mut node_start = vec![0u32];
    let mut nodes: Vec<u32> = Vec::with_capacity(n);
    let mut queued = vec![false; n];
    // Predecessors of each node already in the interval being grown.
    let mut preds_inside = vec![0u32; n];
    let mut touched = Vec::new();
    let mut worklist = VecDeque::from([root as u32]);
    queued[root] = true;
    while let Some(h) = worklist.pop_front() {
        let id = headers.len() as u32;
        headers.push(h);
        let first = nodes.len();
        nodes.push(h);
        interval_of_node[h as usize] = id;
        let mut i = first;
        while i < nodes.len() {
            let m = nodes[i];
            i += 1;
            for &s in g.succs(m as usize) {
                let su = s as usize;
                if interval_of_node[su] != NONE || su == root {
                    continue;
                }
                if preds_inside[su] == 0 {
                    touched.push(s);
                }
                preds_inside[su] += 1;
                if preds_inside[su] as usize == g.preds(su).len() {
                    interval_of_node[su] = id;
                    nodes.push(s);
                }
            }
        }
        for &t in &touched {
            preds_inside[t as usize] = 0;
        }
        touched.clear();
        for &m in &nodes[first..] {
            for &s in g.succs(m as usize) {
                if interval_of_node[s as usize] == NONE && !queued[s as usize] {
                    queued[s as usize] = true;
                    worklist.push_back(s);
                }
            }
        }
        node_start.push(nodes.len() as u32);
    }
    IntervalLevel {
        graph_edges: Vec::new(),
        num_nodes: n,
        headers,
        node_start,
        nodes,
        interval_of_node,
        interval_of_block: Vec::new(),
        header_block: Vec::new(),
    }
}

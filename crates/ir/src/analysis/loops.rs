//! Natural loops and their nesting, and the irreducible control flow that natural loops do
//! not describe.
//!
//! A back edge is an edge `a → h` whose target dominates its source; the natural loop of a
//! header `h` is `h` together with every block that reaches the source of one of `h`'s back
//! edges without passing through `h` (Aho, Sethi and Ullman, *Compilers*, §10.4; all back
//! edges into one header form one loop). Two natural loops with different headers are
//! disjoint or nested, so the loops form a forest: a loop's parent is the innermost other
//! loop containing its header.
//!
//! A retreating edge (one that goes to an ancestor in a depth-first spanning tree) that is
//! not a back edge enters a cycle somewhere other than at a dominating header; the graph is
//! reducible exactly when there is none (Hecht and Ullman 1974). Such edges are reported,
//! not turned into loops.

use std::fmt::Write;

use serde::Serialize;

use crate::entity::BlockId;
use crate::graph::ControlFlowGraph;

use super::dominators::DominatorTree;
use super::Namer;

/// Index of a loop in [`LoopAnalysis::loops`]. Loops are numbered by their header's
/// position in reverse postorder, so an outer loop comes before the loops inside it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct LoopId(pub u32);

impl LoopId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One natural loop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loop {
    pub header: BlockId,
    /// Every block of the loop, nested loops included, the header among them; increasing
    /// index order.
    pub blocks: Vec<BlockId>,
    /// Sources of the back edges to the header, increasing.
    pub latches: Vec<BlockId>,
    /// Edges leaving the loop (`from` inside, `to` outside), sorted, without duplicates.
    pub exits: Vec<(BlockId, BlockId)>,
    /// The innermost loop that contains this one.
    pub parent: Option<LoopId>,
    /// 1 for an outermost loop.
    pub depth: u32,
}

impl Loop {
    pub fn contains(&self, block: BlockId) -> bool {
        self.blocks.binary_search(&block).is_ok()
    }

    /// Blocks outside the loop that an exit edge goes to, increasing, without duplicates.
    pub fn exit_targets(&self) -> Vec<BlockId> {
        let mut targets: Vec<BlockId> = self.exits.iter().map(|&(_, to)| to).collect();
        targets.sort();
        targets.dedup();
        targets
    }
}

/// The natural loops of a function and its irreducible edges.
#[derive(Clone, Debug, Default)]
pub struct LoopAnalysis {
    valid: bool,
    loops: Vec<Loop>,
    innermost: Vec<Option<LoopId>>,
    irreducible_edges: Vec<(BlockId, BlockId)>,
}

impl LoopAnalysis {
    /// An empty, invalid analysis; [`LoopAnalysis::compute`] fills it.
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_cfg<G: ControlFlowGraph + ?Sized>(g: &G, domtree: &DominatorTree) -> Self {
        let mut loops = Self::new();
        loops.compute(g, domtree);
        loops
    }

    /// `domtree` must be valid for `g`.
    pub fn compute<G: ControlFlowGraph + ?Sized>(&mut self, g: &G, domtree: &DominatorTree) {
        debug_assert!(domtree.is_valid());
        let n = g.num_blocks();
        self.loops.clear();
        self.innermost = vec![None; n];
        self.irreducible_edges.clear();

        let mut in_body = vec![false; n];
        let mut stack = Vec::new();
        for &header in domtree.reverse_postorder() {
            let mut latches: Vec<BlockId> = g
                .predecessors(header)
                .iter()
                .copied()
                .filter(|&p| domtree.dominates(header, p))
                .collect();
            if latches.is_empty() {
                continue;
            }
            latches.sort();
            latches.dedup();

            // Backward search from the latches, stopping at the header.
            let mut blocks = vec![header];
            in_body[header.index()] = true;
            for &latch in &latches {
                if !in_body[latch.index()] {
                    in_body[latch.index()] = true;
                    blocks.push(latch);
                    stack.push(latch);
                }
            }
            while let Some(b) = stack.pop() {
                for &p in g.predecessors(b) {
                    // Unreachable predecessors are not dominated by the header.
                    if !in_body[p.index()] && domtree.is_reachable(p) {
                        in_body[p.index()] = true;
                        blocks.push(p);
                        stack.push(p);
                    }
                }
            }
            blocks.sort();
            let mut exits: Vec<(BlockId, BlockId)> = blocks
                .iter()
                .flat_map(|&b| g.successors(b).iter().map(move |&s| (b, s)))
                .filter(|&(_, s)| !in_body[s.index()])
                .collect();
            exits.sort();
            exits.dedup();
            for &b in &blocks {
                in_body[b.index()] = false;
            }

            // Loops are visited outer before inner (a header comes after the headers that
            // dominate it), so whatever loop already claims the header is the innermost
            // enclosing one.
            let id = LoopId(self.loops.len() as u32);
            let parent = self.innermost[header.index()];
            let depth = parent.map_or(1, |p| self.loops[p.index()].depth + 1);
            for &b in &blocks {
                self.innermost[b.index()] = Some(id);
            }
            self.loops.push(Loop {
                header,
                blocks,
                latches,
                exits,
                parent,
                depth,
            });
        }

        self.irreducible_edges = retreating_non_back_edges(g, domtree);
        self.valid = true;
    }

    pub fn clear(&mut self) {
        self.loops.clear();
        self.innermost.clear();
        self.irreducible_edges.clear();
        self.valid = false;
    }

    pub fn is_valid(&self) -> bool {
        self.valid
    }

    pub fn loops(&self) -> &[Loop] {
        &self.loops
    }

    pub fn get(&self, id: LoopId) -> &Loop {
        &self.loops[id.index()]
    }

    /// The innermost loop containing `block`.
    pub fn innermost_loop(&self, block: BlockId) -> Option<LoopId> {
        self.innermost[block.index()]
    }

    /// Number of loops containing `block` (0 outside any loop).
    pub fn loop_depth(&self, block: BlockId) -> u32 {
        self.innermost_loop(block).map_or(0, |l| self.get(l).depth)
    }

    pub fn is_loop_header(&self, block: BlockId) -> bool {
        self.innermost_loop(block)
            .is_some_and(|l| self.get(l).header == block)
    }

    /// Loops directly inside `id`, in id order.
    pub fn children(&self, id: LoopId) -> impl Iterator<Item = LoopId> + '_ {
        self.loops
            .iter()
            .enumerate()
            .filter(move |(_, l)| l.parent == Some(id))
            .map(|(i, _)| LoopId(i as u32))
    }

    /// Retreating edges whose target does not dominate their source, in depth-first
    /// discovery order.
    pub fn irreducible_edges(&self) -> &[(BlockId, BlockId)] {
        &self.irreducible_edges
    }

    pub fn is_reducible(&self) -> bool {
        self.irreducible_edges.is_empty()
    }

    /// Numbers only, for JSON.
    pub fn summary(&self) -> LoopSummary {
        LoopSummary {
            loops: self
                .loops
                .iter()
                .map(|l| LoopInfo {
                    header: l.header.0,
                    blocks: l.blocks.iter().map(|b| b.0).collect(),
                    latches: l.latches.iter().map(|b| b.0).collect(),
                    exits: l.exits.iter().map(|&(a, b)| (a.0, b.0)).collect(),
                    parent: l.parent.map(|p| p.0),
                    depth: l.depth,
                })
                .collect(),
            irreducible_edges: self
                .irreducible_edges
                .iter()
                .map(|&(a, b)| (a.0, b.0))
                .collect(),
        }
    }

    /// One line per loop, then the irreducible edges.
    pub fn dump(&self, names: &Namer) -> String {
        let mut out = String::from("loops:\n");
        for (i, l) in self.loops.iter().enumerate() {
            let parent = l.parent.map_or("-".to_string(), |p| format!("loop{}", p.0));
            let exits: Vec<String> = l
                .exits
                .iter()
                .map(|&(a, b)| format!("{}->{}", (names.block)(a), (names.block)(b)))
                .collect();
            writeln!(
                out,
                "  loop{i}: header {}, depth {}, parent {parent}, blocks {}, latches {}, exits [{}]",
                (names.block)(l.header),
                l.depth,
                names.blocks(l.blocks.iter().copied()),
                names.blocks(l.latches.iter().copied()),
                exits.join(" "),
            )
            .expect("writing to a String cannot fail");
        }
        if !self.irreducible_edges.is_empty() {
            let edges: Vec<String> = self
                .irreducible_edges
                .iter()
                .map(|&(a, b)| format!("{}->{}", (names.block)(a), (names.block)(b)))
                .collect();
            writeln!(out, "  irreducible edges: {}", edges.join(" "))
                .expect("writing to a String cannot fail");
        }
        out
    }
}

/// Serializable form of a [`LoopAnalysis`]; blocks and loops by number.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LoopSummary {
    pub loops: Vec<LoopInfo>,
    pub irreducible_edges: Vec<(u32, u32)>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LoopInfo {
    pub header: u32,
    pub blocks: Vec<u32>,
    pub latches: Vec<u32>,
    pub exits: Vec<(u32, u32)>,
    pub parent: Option<u32>,
    pub depth: u32,
}

/// Depth-first search from the entry, reporting each edge to a block still on the search
/// stack (a retreating edge) whose target does not dominate its source.
fn retreating_non_back_edges<G: ControlFlowGraph + ?Sized>(
    g: &G,
    domtree: &DominatorTree,
) -> Vec<(BlockId, BlockId)> {
    let n = g.num_blocks();
    let mut edges = Vec::new();
    if n == 0 {
        return edges;
    }
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Unvisited,
        OnStack,
        Done,
    }
    let mut mark = vec![Mark::Unvisited; n];
    let entry = g.entry();
    let mut stack: Vec<(BlockId, usize)> = vec![(entry, 0)];
    mark[entry.index()] = Mark::OnStack;
    while let Some(&mut (block, ref mut next)) = stack.last_mut() {
        if let Some(&succ) = g.successors(block).get(*next) {
            *next += 1;
            match mark[succ.index()] {
                Mark::Unvisited => {
                    mark[succ.index()] = Mark::OnStack;
                    stack.push((succ, 0));
                }
                Mark::OnStack => {
                    if !domtree.dominates(succ, block) {
                        edges.push((block, succ));
                    }
                }
                Mark::Done => {}
            }
        } else {
            mark[block.index()] = Mark::Done;
            stack.pop();
        }
    }
    edges
}

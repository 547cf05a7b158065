//! Register-interval formation: LTRF §3.3, Algorithm 1 (pass 1) and Algorithm 2 (pass 2).
//!
//! A register-interval is a subgraph of the CFG with one control-flow entry whose register
//! working set — every architectural register its instructions read or write — fits in a
//! warp's partition of the register-file cache: at most `N` registers. At the interval's
//! entry the warp prefetches the working set (the *prefetch bit-vector*) and then runs
//! the whole interval out of the cache, loops included.
//!
//! **Pass 1** (Algorithm 1) grows intervals from the entry block in the manner of Hecht's
//! intervals: a block joins the current interval when all its predecessors are in it and
//! its registers still fit. A block whose registers do not fit is cut before the first
//! instruction that would overflow; the rest of it starts a new interval. Every call gets
//! an interval of its own (the callee's registers are not the caller's working set): the
//! block is cut before and after it, and nothing joins a call's interval. Once an interval
//! cannot grow, every block it branches to that has no interval yet becomes the header of
//! a new one.
//!
//! **Pass 2** (Algorithm 2) does the same on the graph of intervals without ever cutting:
//! an interval joins another when all its predecessor intervals are that one and the union
//! of the two working sets fits. It repeats until a round stops shrinking the graph; each
//! round can swallow one more level of loop nesting (the paper's Figure 5).
//!
//! **The working-set bound, across sibling branches.** Algorithm 1 as printed admits a
//! block when the union of its *predecessors'* register lists fits, i.e. it counts the
//! registers along each path. A warp that diverges runs both sides of a branch, and the
//! prefetch at the interval's entry must cover every path, so two sibling branches that
//! each fit along their own path may together exceed `N` (see the test
//! `sibling_branches_share_one_budget`). Here the budget is the whole interval's working
//! set: a block is admitted, and cut, against the union of everything already in the
//! interval. Then every interval's working set is at most `N`.
//!
//! The one exception is an instruction that by itself touches more than `N` registers (a
//! wide vector access with a 64-bit address when `N` is 8, say): it becomes an interval of
//! its own, marked [`IntervalKind::Oversized`], since no cut can make it fit.
//!
//! Blocks are cut only in this analysis (an interval is a list of [`Piece`]s, runs of a
//! block's instructions); the function is not changed. Blocks unreachable from the entry
//! get intervals after the reachable ones, so every instruction has an interval.

use std::collections::VecDeque;
use std::fmt;

use ir::analysis::BitSet;
use ir::{BlockId, ControlFlowGraph, InstId, RegisterEffects};
use serde::Serialize;

use super::numbering::CellView;

const NONE: u32 = u32::MAX;

/// What interval formation needs to know of a function: its CFG, the instructions of each
/// block, which architectural registers each instruction touches, and where the calls are.
pub trait IntervalInput: ControlFlowGraph {
    /// Registers are `0..num_registers()`.
    fn num_registers(&self) -> usize;
    fn insts_of(&self, block: BlockId) -> &[InstId];
    /// The registers `inst` reads or writes, each once.
    fn registers(&self, inst: InstId) -> &[u32];
    fn is_call(&self, inst: InstId) -> bool;
}

impl IntervalInput for CellView<'_> {
    fn num_registers(&self) -> usize {
        self.general_cells() as usize
    }
    fn insts_of(&self, block: BlockId) -> &[InstId] {
        self.block_insts(block)
    }
    fn registers(&self, inst: InstId) -> &[u32] {
        self.touched(inst)
    }
    fn is_call(&self, inst: InstId) -> bool {
        CellView::is_call(self, inst)
    }
}

/// A run of consecutive instructions of one block: positions `start..end` of the block's
/// instruction list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Piece {
    pub block: BlockId,
    pub start: u32,
    pub end: u32,
}

impl Piece {
    pub fn len(&self) -> u32 {
        self.end - self.start
    }

    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }
}

/// An interval of the final partition, numbered in the order formation created them (the
/// entry's interval is 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct IntervalId(pub u32);

impl IntervalId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for IntervalId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "I{}", self.0)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum IntervalKind {
    /// Working set at most `N`.
    Normal,
    /// One call instruction.
    Call,
    /// One instruction that by itself touches more than `N` registers.
    Oversized,
}

/// One register-interval.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegisterInterval {
    /// The pieces of the interval; the first is the header, where the prefetch happens.
    pub pieces: Vec<Piece>,
    /// The prefetch bit-vector as a sorted list of registers: every register the
    /// interval's instructions read or write.
    pub working_set: Vec<u32>,
    pub instructions: u32,
    pub kind: IntervalKind,
}

impl RegisterInterval {
    pub fn header(&self) -> Piece {
        self.pieces[0]
    }

    /// The prefetch bit-vector over `num_registers` registers.
    pub fn prefetch_bits(&self, num_registers: usize) -> BitSet {
        let mut bits = BitSet::new_empty(num_registers);
        bits.extend(self.working_set.iter().map(|&r| r as usize));
        bits
    }
}

/// The register-intervals of one function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegisterIntervals {
    /// `N`, registers per interval.
    pub limit: u32,
    pub intervals: Vec<RegisterInterval>,
    /// Intervals after pass 1.
    pub pass1_intervals: u32,
    /// Runs of pass 2, the last of which did not shrink the graph.
    pub pass2_rounds: u32,
    interval_of_inst: Vec<IntervalId>,
}

impl RegisterIntervals {
    pub fn len(&self) -> usize {
        self.intervals.len()
    }

    pub fn is_empty(&self) -> bool {
        self.intervals.is_empty()
    }

    pub fn interval(&self, id: IntervalId) -> &RegisterInterval {
        &self.intervals[id.index()]
    }

    /// The interval instruction `inst` belongs to.
    pub fn interval_of(&self, inst: InstId) -> IntervalId {
        self.interval_of_inst[inst.index()]
    }

    pub fn ids(&self) -> impl Iterator<Item = IntervalId> {
        (0..self.intervals.len() as u32).map(IntervalId)
    }

    /// The instructions of interval `id`, piece by piece.
    pub fn insts<'a, G: IntervalInput>(
        &'a self,
        g: &'a G,
        id: IntervalId,
    ) -> impl Iterator<Item = InstId> + 'a {
        self.intervals[id.index()].pieces.iter().flat_map(move |p| {
            g.insts_of(p.block)[p.start as usize..p.end as usize]
                .iter()
                .copied()
        })
    }
}

/// Forms the register-intervals of `g` with at most `limit` registers each (see the
/// module docs).
pub fn form_register_intervals<G: IntervalInput>(g: &G, limit: u32) -> RegisterIntervals {
    let mut pass1 = Pass1::new(g, limit);
    pass1.run();
    let Pass1 { pieces, nodes, .. } = pass1;
    let pass1_intervals = nodes.len() as u32;

    let mut level = nodes;
    let mut rounds = 0;
    loop {
        rounds += 1;
        let next = pass2_round(g, &pieces, &level, limit);
        let shrunk = next.len() < level.len();
        level = next;
        if !shrunk {
            break;
        }
    }

    let mut interval_of_inst = vec![IntervalId(NONE); g_num_insts(g)];
    let intervals: Vec<RegisterInterval> = level
        .into_iter()
        .enumerate()
        .map(|(i, node)| {
            let mut list: Vec<Piece> = node.pieces.iter().map(|&p| pieces.piece(p)).collect();
            list[1..].sort();
            let mut instructions = 0;
            for p in &list {
                for &inst in &g.insts_of(p.block)[p.start as usize..p.end as usize] {
                    interval_of_inst[inst.index()] = IntervalId(i as u32);
                }
                instructions += p.len();
            }
            RegisterInterval {
                pieces: list,
                working_set: node.ws.iter().map(|r| r as u32).collect(),
                instructions,
                kind: node.kind,
            }
        })
        .collect();
    RegisterIntervals {
        limit,
        intervals,
        pass1_intervals,
        pass2_rounds: rounds,
        interval_of_inst,
    }
}

/// Instructions are numbered densely across blocks; the largest id tells how many.
fn g_num_insts<G: IntervalInput>(g: &G) -> usize {
    (0..g.num_blocks())
        .flat_map(|b| g.insts_of(BlockId::new(b)).iter())
        .map(|i| i.index() + 1)
        .max()
        .unwrap_or(0)
}

/// Blocks reachable from the entry.
fn reachable_blocks<G: ControlFlowGraph>(g: &G) -> Vec<bool> {
    let mut seen = vec![false; g.num_blocks()];
    if g.num_blocks() == 0 {
        return seen;
    }
    let mut stack = vec![g.entry()];
    seen[g.entry().index()] = true;
    while let Some(b) = stack.pop() {
        for &s in g.successors(b) {
            if !seen[s.index()] {
                seen[s.index()] = true;
                stack.push(s);
            }
        }
    }
    seen
}

/// The blocks cut into pieces, as a graph: within a block each piece flows into the next;
/// a block's last piece flows into the first pieces of its successor blocks.
struct PieceGraph {
    pieces: Vec<PieceNode>,
    first_of_block: Vec<u32>,
    reachable: Vec<bool>,
}

#[derive(Clone, Copy)]
struct PieceNode {
    piece: Piece,
    prev: u32,
    next: u32,
}

impl PieceGraph {
    fn new<G: IntervalInput>(g: &G) -> Self {
        let pieces = (0..g.num_blocks())
            .map(|b| PieceNode {
                piece: Piece {
                    block: BlockId::new(b),
                    start: 0,
                    end: g.insts_of(BlockId::new(b)).len() as u32,
                },
                prev: NONE,
                next: NONE,
            })
            .collect();
        PieceGraph {
            pieces,
            first_of_block: (0..g.num_blocks() as u32).collect(),
            reachable: reachable_blocks(g),
        }
    }

    fn piece(&self, p: u32) -> Piece {
        self.pieces[p as usize].piece
    }

    fn last_of_block(&self, block: BlockId) -> u32 {
        let mut p = self.first_of_block[block.index()];
        while self.pieces[p as usize].next != NONE {
            p = self.pieces[p as usize].next;
        }
        p
    }

    /// Splits piece `p` before position `at` of its block; returns the new second half.
    fn cut(&mut self, p: u32, at: u32) -> u32 {
        let node = self.pieces[p as usize];
        debug_assert!(node.piece.start < at && at < node.piece.end);
        let q = self.pieces.len() as u32;
        self.pieces.push(PieceNode {
            piece: Piece {
                block: node.piece.block,
                start: at,
                end: node.piece.end,
            },
            prev: p,
            next: node.next,
        });
        if node.next != NONE {
            self.pieces[node.next as usize].prev = q;
        }
        let first = &mut self.pieces[p as usize];
        first.piece.end = at;
        first.next = q;
        q
    }

    fn succs<G: IntervalInput>(&self, g: &G, p: u32) -> Vec<u32> {
        let node = &self.pieces[p as usize];
        if node.next != NONE {
            return vec![node.next];
        }
        g.successors(node.piece.block)
            .iter()
            .map(|s| self.first_of_block[s.index()])
            .collect()
    }

    /// Predecessors that count for a piece: a reachable piece ignores unreachable ones.
    fn preds<G: IntervalInput>(&self, g: &G, p: u32) -> Vec<u32> {
        let node = &self.pieces[p as usize];
        if node.prev != NONE {
            return vec![node.prev];
        }
        let block = node.piece.block;
        let reachable = self.reachable[block.index()];
        g.predecessors(block)
            .iter()
            .filter(|b| !reachable || self.reachable[b.index()])
            .map(|&b| self.last_of_block(b))
            .collect()
    }
}

/// An interval under construction (both passes): its pieces, working set and kind.
#[derive(Clone)]
struct Node {
    pieces: Vec<u32>,
    ws: BitSet,
    kind: IntervalKind,
}

/// Algorithm 1.
struct Pass1<'g, G> {
    g: &'g G,
    limit: u32,
    pieces: PieceGraph,
    owner: Vec<u32>,
    /// The interval that last turned a piece away (it cannot fit later: sets only grow).
    rejected_by: Vec<u32>,
    nodes: Vec<Node>,
    worklist: VecDeque<u32>,
}

impl<'g, G: IntervalInput> Pass1<'g, G> {
    fn new(g: &'g G, limit: u32) -> Self {
        let pieces = PieceGraph::new(g);
        let n = pieces.pieces.len();
        Pass1 {
            g,
            limit,
            pieces,
            owner: vec![NONE; n],
            rejected_by: vec![NONE; n],
            nodes: Vec::new(),
            worklist: VecDeque::new(),
        }
    }

    fn run(&mut self) {
        if self.g.num_blocks() == 0 {
            return;
        }
        self.start_interval(self.pieces.first_of_block[self.g.entry().index()]);
        loop {
            while let Some(header) = self.worklist.pop_front() {
                self.grow(header);
            }
            // Unreachable code, in block order.
            let next = (0..self.g.num_blocks())
                .map(|b| self.pieces.first_of_block[b])
                .find(|&p| self.owner[p as usize] == NONE);
            match next {
                Some(p) => self.start_interval(p),
                None => break,
            }
        }
    }

    fn start_interval(&mut self, header: u32) {
        let id = self.nodes.len() as u32;
        self.nodes.push(Node {
            pieces: vec![header],
            ws: BitSet::new_empty(self.g.num_registers()),
            kind: IntervalKind::Normal,
        });
        self.set_owner(header, id);
        self.worklist.push_back(header);
    }

    fn set_owner(&mut self, p: u32, id: u32) {
        let p = p as usize;
        if p >= self.owner.len() {
            self.owner.resize(p + 1, NONE);
            self.rejected_by.resize(p + 1, NONE);
        }
        self.owner[p] = id;
    }

    /// Lines 10–24: traverse the header, add blocks while they fit, then make headers of
    /// the blocks the interval branches to.
    fn grow(&mut self, header: u32) {
        let id = self.owner[header as usize];
        let joined = self.traverse(header, id, true);
        debug_assert!(joined);
        let mut candidates: VecDeque<u32> = self.pieces.succs(self.g, header).into();
        while let Some(c) = candidates.pop_front() {
            if self.nodes[id as usize].kind != IntervalKind::Normal {
                break;
            }
            if self.owner[c as usize] != NONE || self.rejected_by[c as usize] == id {
                continue;
            }
            let preds = self.pieces.preds(self.g, c);
            if !preds.iter().all(|&p| self.owner[p as usize] == id) {
                continue;
            }
            self.set_owner(c, id);
            if self.traverse(c, id, false) {
                self.nodes[id as usize].pieces.push(c);
                candidates.extend(self.pieces.succs(self.g, c));
            } else {
                self.owner[c as usize] = NONE;
                self.rejected_by[c as usize] = id;
            }
        }
        let members = self.nodes[id as usize].pieces.clone();
        for p in members {
            for s in self.pieces.succs(self.g, p) {
                if self.owner[s as usize] == NONE {
                    self.start_interval(s);
                }
            }
        }
    }

    /// `TRAVERSE`: adds piece `p`'s registers to interval `id`, cutting it before the first
    /// instruction that does not fit or is a call. A piece whose very first instruction
    /// does not fit is turned away (`false`) unless it is the interval's header, which
    /// takes that instruction alone.
    fn traverse(&mut self, p: u32, id: u32, is_header: bool) -> bool {
        let g = self.g;
        let piece = self.pieces.piece(p);
        let insts = &g.insts_of(piece.block)[piece.start as usize..piece.end as usize];
        for (k, &inst) in insts.iter().enumerate() {
            let at = piece.start + k as u32;
            let regs = g.registers(inst);
            let call = g.is_call(inst);
            let node = &mut self.nodes[id as usize];
            let grown = node.ws.count()
                + regs
                    .iter()
                    .filter(|&&r| !node.ws.contains(r as usize))
                    .count();
            let overflow = grown > self.limit as usize;
            if call || overflow {
                if k > 0 {
                    self.cut(p, at);
                    return true;
                }
                if !is_header {
                    return false;
                }
                node.kind = if call {
                    IntervalKind::Call
                } else {
                    IntervalKind::Oversized
                };
                node.ws.extend(regs.iter().map(|&r| r as usize));
                if at + 1 < piece.end {
                    self.cut(p, at + 1);
                }
                return true;
            }
            node.ws.extend(regs.iter().map(|&r| r as usize));
        }
        true
    }

    /// Lines 31–34: the rest of the piece from `at` on starts a new interval.
    fn cut(&mut self, p: u32, at: u32) {
        let q = self.pieces.cut(p, at);
        self.start_interval(q);
    }
}

/// One run of Algorithm 2 over the intervals `level`: returns the merged intervals.
fn pass2_round<G: IntervalInput>(
    g: &G,
    pieces: &PieceGraph,
    level: &[Node],
    limit: u32,
) -> Vec<Node> {
    let n = level.len();
    if n == 0 {
        return Vec::new();
    }
    let mut node_of_piece = vec![NONE; pieces.pieces.len()];
    for (i, node) in level.iter().enumerate() {
        for &p in &node.pieces {
            node_of_piece[p as usize] = i as u32;
        }
    }
    // The interval graph, without edges from an interval to itself.
    let mut succs: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut preds: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (i, node) in level.iter().enumerate() {
        for &p in &node.pieces {
            for s in pieces.succs(g, p) {
                let j = node_of_piece[s as usize];
                if j != i as u32 && !succs[i].contains(&j) {
                    succs[i].push(j);
                    preds[j as usize].push(i as u32);
                }
            }
        }
    }
    let entry = node_of_piece[pieces.first_of_block[g.entry().index()] as usize];
    let mut reachable = vec![false; n];
    let mut stack = vec![entry];
    reachable[entry as usize] = true;
    while let Some(i) = stack.pop() {
        for &s in &succs[i as usize] {
            if !reachable[s as usize] {
                reachable[s as usize] = true;
                stack.push(s);
            }
        }
    }

    const QUEUED: u32 = u32::MAX - 1;
    let mut next = vec![NONE; n];
    let mut merged: Vec<Node> = Vec::new();
    let mut worklist = VecDeque::from([entry]);
    next[entry as usize] = QUEUED;
    loop {
        while let Some(i) = worklist.pop_front() {
            let ii = merged.len() as u32;
            next[i as usize] = ii;
            let mut members = vec![i];
            let mut acc = level[i as usize].clone();
            let mut candidates: VecDeque<u32> = succs[i as usize].iter().copied().collect();
            while let Some(h) = candidates.pop_front() {
                let node = &level[h as usize];
                if next[h as usize] != NONE
                    || acc.kind != IntervalKind::Normal
                    || node.kind != IntervalKind::Normal
                {
                    continue;
                }
                let counted = |p: &&u32| !reachable[h as usize] || reachable[**p as usize];
                if !preds[h as usize]
                    .iter()
                    .filter(counted)
                    .all(|&p| next[p as usize] == ii)
                {
                    continue;
                }
                if acc.ws.union_count(&node.ws) > limit as usize {
                    continue;
                }
                next[h as usize] = ii;
                acc.ws.union_with(&node.ws);
                acc.pieces.extend_from_slice(&node.pieces);
                members.push(h);
                candidates.extend(succs[h as usize].iter().copied());
            }
            merged.push(acc);
            for m in members {
                for &s in &succs[m as usize] {
                    if next[s as usize] == NONE {
                        next[s as usize] = QUEUED;
                        worklist.push_back(s);
                    }
                }
            }
        }
        match (0..n).find(|&i| next[i] == NONE) {
            Some(i) => {
                next[i] = QUEUED;
                worklist.push_back(i as u32);
            }
            None => break,
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::ltrf::checker::check_intervals;

    /// A synthetic function: blocks of instructions, each the registers it touches and
    /// whether it is a call.
    #[derive(Debug)]
    struct Graph {
        succs: Vec<Vec<BlockId>>,
        preds: Vec<Vec<BlockId>>,
        block_insts: Vec<Vec<InstId>>,
        regs: Vec<Vec<u32>>,
        calls: Vec<bool>,
        num_regs: usize,
    }

    impl Graph {
        /// `blocks[b]` = (successors, instructions as (registers, is_call)).
        fn new(blocks: &[TestBlock<'_>]) -> Graph {
            let n = blocks.len();
            let mut g = Graph {
                succs: vec![Vec::new(); n],
                preds: vec![Vec::new(); n],
                block_insts: vec![Vec::new(); n],
                regs: Vec::new(),
                calls: Vec::new(),
                num_regs: 0,
            };
            for (b, (succs, insts)) in blocks.iter().enumerate() {
                for &s in *succs {
                    g.succs[b].push(BlockId(s));
                    g.preds[s as usize].push(BlockId::new(b));
                }
                for (regs, call) in insts.iter() {
                    g.block_insts[b].push(InstId::new(g.regs.len()));
                    let mut r = regs.to_vec();
                    r.sort_unstable();
                    r.dedup();
                    g.num_regs = g
                        .num_regs
                        .max(r.iter().map(|&x| x as usize + 1).max().unwrap_or(0));
                    g.regs.push(r);
                    g.calls.push(*call);
                }
            }
            g
        }
    }

    impl ControlFlowGraph for Graph {
        fn num_blocks(&self) -> usize {
            self.succs.len()
        }
        fn entry(&self) -> BlockId {
            BlockId(0)
        }
        fn successors(&self, block: BlockId) -> &[BlockId] {
            &self.succs[block.index()]
        }
        fn predecessors(&self, block: BlockId) -> &[BlockId] {
            &self.preds[block.index()]
        }
    }

    impl IntervalInput for Graph {
        fn num_registers(&self) -> usize {
            self.num_regs
        }
        fn insts_of(&self, block: BlockId) -> &[InstId] {
            &self.block_insts[block.index()]
        }
        fn registers(&self, inst: InstId) -> &[u32] {
            &self.regs[inst.index()]
        }
        fn is_call(&self, inst: InstId) -> bool {
            self.calls[inst.index()]
        }
    }

    /// An instruction: the registers it touches, and whether it is a call.
    type TestInst<'a> = (&'a [u32], bool);
    /// A block: its successors and instructions.
    type TestBlock<'a> = (&'a [u32], &'a [TestInst<'a>]);

    const OP: bool = false;
    const CALL: bool = true;

    fn form(g: &Graph, limit: u32) -> RegisterIntervals {
        let intervals = form_register_intervals(g, limit);
        check_intervals(g, &intervals).unwrap();
        intervals
    }

    /// Each interval as (header piece, sorted blocks, working set).
    fn shape(iv: &RegisterIntervals) -> Vec<(Piece, Vec<u32>, Vec<u32>)> {
        iv.intervals
            .iter()
            .map(|i| {
                let mut blocks: Vec<u32> = i.pieces.iter().map(|p| p.block.0).collect();
                blocks.sort_unstable();
                blocks.dedup();
                (i.header(), blocks, i.working_set.clone())
            })
            .collect()
    }

    fn piece(block: u32, start: u32, end: u32) -> Piece {
        Piece {
            block: BlockId(block),
            start,
            end,
        }
    }

    #[test]
    fn a_block_is_cut_before_the_instruction_that_overflows() {
        let g = Graph::new(&[(
            &[],
            &[
                (&[0, 1], OP),
                (&[1, 2], OP),
                (&[3, 4], OP),
                (&[4, 5], OP),
                (&[0], OP),
            ],
        )]);
        let iv = form(&g, 4);
        assert_eq!(
            shape(&iv),
            vec![
                (piece(0, 0, 2), vec![0], vec![0, 1, 2]),
                (piece(0, 2, 5), vec![0], vec![0, 3, 4, 5]),
            ]
        );
        assert_eq!(iv.interval(IntervalId(0)).instructions, 2);
        assert_eq!(iv.interval_of(InstId(2)), IntervalId(1));
    }

    /// A diamond whose two sides fit the budget along each path but not together: a warp
    /// that diverges runs both sides, so the interval's prefetch must hold both.
    #[test]
    fn sibling_branches_share_one_budget() {
        let g = Graph::new(&[
            (&[1, 2], &[(&[0, 1, 2, 3], OP)]),
            (&[3], &[(&[4, 5, 6], OP), (&[7, 8, 9], OP)]),
            (&[3], &[(&[10, 11], OP), (&[12, 13, 14], OP)]),
            (&[], &[(&[0], OP)]),
        ]);
        // The paper's rule as printed counts registers along each path: entry and one side
        // are 10 or 9 registers, so with N = 12 both sides would join and the interval would
        // hold 15 registers.
        let per_path_left = 4 + 6;
        let per_path_right = 4 + 5;
        assert!(per_path_left <= 12 && per_path_right <= 12);
        let iv = form(&g, 12);
        for i in &iv.intervals {
            assert!(i.working_set.len() <= 12, "{i:?}");
        }
        // The left side joins whole; the right side is cut after its first instruction, and
        // the rest of it starts an interval of its own.
        assert_eq!(
            shape(&iv)[0],
            (piece(0, 0, 1), vec![0, 1, 2], (0..12).collect::<Vec<u32>>())
        );
        assert_eq!(
            iv.interval(IntervalId(0)).pieces,
            vec![piece(0, 0, 1), piece(1, 0, 2), piece(2, 0, 1)]
        );
        assert_eq!(
            iv.interval(iv.interval_of(InstId(4))).header(),
            piece(2, 1, 2)
        );
        // A side whose first instruction does not fit stays out whole.
        let g = Graph::new(&[
            (&[1, 2], &[(&[0, 1, 2, 3], OP)]),
            (&[3], &[(&[4, 5, 6, 7, 8, 9], OP)]),
            (&[3], &[(&[10, 11, 12], OP)]),
            (&[], &[(&[0], OP)]),
        ]);
        let iv = form(&g, 12);
        assert_eq!(shape(&iv)[0].1, vec![0, 1]);
        assert_eq!(
            iv.interval(iv.interval_of(InstId(2))).header(),
            piece(2, 0, 1)
        );
    }

    /// LTRF Figure 5: two nested loops. Pass 1 leaves the outer header alone (its back
    /// edge comes from the inner loop); pass 2 merges the whole nest into one interval.
    #[test]
    fn pass_two_swallows_a_loop_nest() {
        // 0 -> A(1); A -> B(2); B -> C(3); C -> B, C -> D(4); D -> A, D -> exit(5)
        let g = Graph::new(&[
            (&[1], &[(&[0], OP)]),
            (&[2], &[(&[0, 1], OP)]),
            (&[3], &[(&[1, 2], OP)]),
            (&[2, 4], &[(&[2, 3], OP)]),
            (&[1, 5], &[(&[0, 3], OP)]),
            (&[], &[(&[0], OP)]),
        ]);
        let iv = form(&g, 16);
        assert!(iv.pass1_intervals >= 3, "{}", iv.pass1_intervals);
        assert!(iv.pass2_rounds >= 2);
        // Entry and the whole nest can become one interval only if the entry reaches the
        // nest by its single entry edge, which it does.
        assert_eq!(iv.len(), 1, "{:?}", shape(&iv));
        // With room for the loop but not for everything, the loop still stays whole.
        let iv = form(&g, 4);
        let loop_interval = iv.interval_of(g.block_insts[2][0]);
        assert_eq!(iv.interval_of(g.block_insts[3][0]), loop_interval);
    }

    #[test]
    fn a_loop_header_starts_an_interval_in_pass_one() {
        let g = Graph::new(&[
            (&[1], &[(&[0], OP)]),
            (&[1, 2], &[(&[0, 1], OP)]),
            (&[], &[(&[1], OP)]),
        ]);
        let iv = form(&g, 16);
        // The entry's interval, and the loop with the block after it.
        assert_eq!(iv.pass1_intervals, 2);
        // Pass 2: the loop's only predecessor interval is the entry's: merged.
        assert_eq!(iv.len(), 1);
    }

    #[test]
    fn every_call_is_an_interval_of_its_own() {
        let g = Graph::new(&[
            (&[1], &[(&[0], OP), (&[1], CALL), (&[0], OP)]),
            (&[], &[(&[0], OP)]),
        ]);
        let iv = form(&g, 16);
        assert_eq!(
            shape(&iv),
            vec![
                (piece(0, 0, 1), vec![0], vec![0]),
                (piece(0, 1, 2), vec![0], vec![1]),
                (piece(0, 2, 3), vec![0, 1], vec![0]),
            ]
        );
        assert_eq!(iv.interval(IntervalId(1)).kind, IntervalKind::Call);
        // A block that starts with a call and follows another block.
        let g = Graph::new(&[(&[1], &[(&[0], OP)]), (&[], &[(&[], CALL)])]);
        let iv = form(&g, 16);
        assert_eq!(iv.len(), 2);
        assert_eq!(iv.interval(IntervalId(1)).kind, IntervalKind::Call);
    }

    #[test]
    fn an_instruction_wider_than_n_stands_alone() {
        let g = Graph::new(&[(&[], &[(&[0], OP), (&[1, 2, 3, 4, 5], OP), (&[0], OP)])]);
        let iv = form(&g, 4);
        assert_eq!(iv.len(), 3);
        assert_eq!(iv.interval(IntervalId(1)).kind, IntervalKind::Oversized);
        assert_eq!(iv.interval(IntervalId(1)).working_set, vec![1, 2, 3, 4, 5]);
    }

    #[test]
    fn unreachable_blocks_get_intervals_after_the_reachable_ones() {
        let g = Graph::new(&[
            (&[2], &[(&[0], OP)]),
            (&[2], &[(&[1], OP)]),
            (&[], &[(&[0], OP)]),
        ]);
        let iv = form(&g, 16);
        // Block 2 has an unreachable predecessor, which does not stop it joining.
        assert_eq!(iv.interval_of(InstId(2)), IntervalId(0));
        assert_eq!(iv.interval_of(InstId(1)), IntervalId(1));
    }

    #[test]
    fn empty_blocks_and_functions() {
        let g = Graph::new(&[]);
        assert!(form(&g, 4).is_empty());
        let g = Graph::new(&[(&[1], &[]), (&[], &[(&[0], OP)])]);
        let iv = form(&g, 4);
        assert_eq!(iv.len(), 1);
        assert_eq!(iv.interval(IntervalId(0)).instructions, 1);
    }

    fn arbitrary_graph() -> impl Strategy<Value = Graph> {
        (1usize..9).prop_flat_map(|n| {
            let block = (
                proptest::collection::vec(0..n as u32, 0..3),
                proptest::collection::vec(
                    (
                        proptest::collection::vec(0u32..12, 0..5),
                        proptest::bool::weighted(0.1),
                    ),
                    0..6,
                ),
            );
            proptest::collection::vec(block, n).prop_map(|blocks| {
                type Owned = (Vec<u32>, Vec<(Vec<u32>, bool)>);
                let owned: Vec<Owned> = blocks
                    .into_iter()
                    .map(|(mut s, i)| {
                        s.sort_unstable();
                        s.dedup();
                        (s, i)
                    })
                    .collect();
                let insts: Vec<Vec<TestInst<'_>>> = owned
                    .iter()
                    .map(|(_, i)| i.iter().map(|(r, c)| (r.as_slice(), *c)).collect())
                    .collect();
                let blocks: Vec<TestBlock<'_>> = owned
                    .iter()
                    .zip(&insts)
                    .map(|((s, _), i)| (s.as_slice(), i.as_slice()))
                    .collect();
                Graph::new(&blocks)
            })
        })
    }

    proptest! {
        /// On arbitrary CFGs (irreducible ones, self loops, unreachable code included) the
        /// intervals always pass the independent interval checker.
        #[test]
        fn arbitrary_graphs_give_valid_intervals(g in arbitrary_graph(), limit in 1u32..10) {
            let iv = form_register_intervals(&g, limit);
            prop_assert!(check_intervals(&g, &iv).is_ok(), "{:?}", check_intervals(&g, &iv));
        }
    }
}

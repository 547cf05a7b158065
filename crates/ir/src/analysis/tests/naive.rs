//! Reference computations straight from the definitions: path searches and graph
//! reductions, quadratic or worse, sharing no code with the analyses they check.

// Indexing by node number reads closest to the definitions being transcribed.
#![allow(clippy::needless_range_loop)]

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::analysis::testing::TestFunction;
use crate::entity::{BlockId, InstId, RegId};
use crate::graph::{ControlFlowGraph, RegisterEffects};

fn blocks(g: &TestFunction) -> impl Iterator<Item = BlockId> {
    (0..g.num_blocks()).map(BlockId::new)
}

/// Blocks reachable from `start` by paths that do not enter `avoid` (`start` itself is
/// excluded when it is `avoid`).
pub fn reachable_avoiding(
    succs: &dyn Fn(usize) -> Vec<usize>,
    n: usize,
    start: usize,
    avoid: Option<usize>,
) -> Vec<bool> {
    let mut seen = vec![false; n];
    if Some(start) == avoid {
        return seen;
    }
    let mut queue = VecDeque::from([start]);
    seen[start] = true;
    while let Some(b) = queue.pop_front() {
        for s in succs(b) {
            if !seen[s] && Some(s) != avoid {
                seen[s] = true;
                queue.push_back(s);
            }
        }
    }
    seen
}

fn cfg_succs(g: &TestFunction) -> impl Fn(usize) -> Vec<usize> + '_ {
    move |b| {
        g.successors(BlockId::new(b))
            .iter()
            .map(|s| s.index())
            .collect()
    }
}

/// `dom[a][b]`: every path from the entry to `b` passes through `a` (reachable `b`).
pub fn dominates(g: &TestFunction) -> Vec<Vec<bool>> {
    let n = g.num_blocks();
    let succs = cfg_succs(g);
    let reach = reachable_avoiding(&succs, n, g.entry().index(), None);
    (0..n)
        .map(|a| {
            let without_a = reachable_avoiding(&succs, n, g.entry().index(), Some(a));
            (0..n)
                .map(|b| reach[a] && reach[b] && (a == b || !without_a[b]))
                .collect()
        })
        .collect()
}

/// `pdom[a][b]`: every path from `b` to the exit node passes through `a`, in the graph
/// where blocks without successors and `virtual_sources` flow into an extra exit node.
pub fn post_dominates(g: &TestFunction, virtual_sources: &[BlockId]) -> Vec<Vec<bool>> {
    let n = g.num_blocks();
    let exit = n;
    let succs = |b: usize| -> Vec<usize> {
        if b == exit {
            return Vec::new();
        }
        let block = BlockId::new(b);
        let mut s: Vec<usize> = g.successors(block).iter().map(|s| s.index()).collect();
        if s.is_empty() || virtual_sources.contains(&block) {
            s.push(exit);
        }
        s
    };
    (0..n)
        .map(|a| {
            (0..n)
                .map(|b| a == b || !reachable_avoiding(&succs, n + 1, b, Some(a))[exit])
                .collect()
        })
        .collect()
}

/// Blocks from which some block without successors can be reached.
pub fn reaches_real_exit(g: &TestFunction) -> Vec<bool> {
    let n = g.num_blocks();
    let succs = cfg_succs(g);
    (0..n)
        .map(|b| {
            let r = reachable_avoiding(&succs, n, b, None);
            (0..n).any(|x| r[x] && g.successors(BlockId::new(x)).is_empty())
        })
        .collect()
}

/// Everything reachable from `b` (including `b`).
pub fn reachable_from(g: &TestFunction, b: usize) -> Vec<bool> {
    reachable_avoiding(&cfg_succs(g), g.num_blocks(), b, None)
}

/// The natural loop of every header: header → (latches, blocks), straight from the
/// definition using the naive dominance relation.
pub fn natural_loops(
    g: &TestFunction,
) -> BTreeMap<BlockId, (BTreeSet<BlockId>, BTreeSet<BlockId>)> {
    let n = g.num_blocks();
    let dom = dominates(g);
    let mut loops = BTreeMap::new();
    for h in 0..n {
        let latches: BTreeSet<BlockId> = g
            .predecessors(BlockId::new(h))
            .iter()
            .copied()
            .filter(|p| dom[h][p.index()])
            .collect();
        if latches.is_empty() {
            continue;
        }
        let succs = cfg_succs(g);
        let mut body: BTreeSet<BlockId> = [BlockId::new(h)].into();
        for m in 0..n {
            if !dom[h][m] {
                continue;
            }
            let r = reachable_avoiding(&succs, n, m, Some(h));
            if latches.iter().any(|l| r[l.index()]) {
                body.insert(BlockId::new(m));
            }
        }
        loops.insert(BlockId::new(h), (latches, body));
    }
    loops
}

/// Reducibility by the T1/T2 transformations (Hecht and Ullman): remove self-loops, merge
/// a node with a single predecessor into it; reducible iff one node remains.
pub fn reducible_by_t1_t2(g: &TestFunction) -> bool {
    let reach = reachable_from(g, g.entry().index());
    let mut nodes: BTreeSet<usize> = (0..g.num_blocks()).filter(|&b| reach[b]).collect();
    let mut edges: BTreeSet<(usize, usize)> = blocks(g)
        .filter(|b| reach[b.index()])
        .flat_map(|b| g.successors(b).iter().map(move |s| (b.index(), s.index())))
        .collect();
    let entry = g.entry().index();
    loop {
        edges.retain(|&(a, b)| a != b);
        let candidate = nodes
            .iter()
            .copied()
            .find(|&m| m != entry && edges.iter().filter(|&&(_, b)| b == m).count() == 1);
        let Some(m) = candidate else { break };
        let p = edges
            .iter()
            .find(|&&(_, b)| b == m)
            .expect("one predecessor")
            .0;
        let moved: Vec<(usize, usize)> = edges
            .iter()
            .copied()
            .filter(|&(a, b)| a == m || b == m)
            .collect();
        for e in moved {
            edges.remove(&e);
            if e.0 == m {
                edges.insert((p, e.1));
            }
        }
        nodes.remove(&m);
    }
    nodes.len() <= 1
}

/// A point between instructions: before instruction `index` of `block` (the block's end
/// when `index` equals its length).
type Point = (usize, usize);

/// Breadth-first search over program points from `start`, moving through an instruction
/// only if `passes(inst)`, looking for a point where `found(point)`.
fn search(
    g: &TestFunction,
    start: Point,
    found: &dyn Fn(Point) -> bool,
    passes: &dyn Fn(InstId) -> bool,
) -> bool {
    let mut seen = BTreeSet::from([start]);
    let mut queue = VecDeque::from([start]);
    while let Some((b, k)) = queue.pop_front() {
        if found((b, k)) {
            return true;
        }
        let insts = g.block_insts(BlockId::new(b));
        let next: Vec<Point> = if k < insts.len() {
            if passes(insts[k]) {
                vec![(b, k + 1)]
            } else {
                vec![]
            }
        } else {
            g.successors(BlockId::new(b))
                .iter()
                .map(|s| (s.index(), 0))
                .collect()
        };
        for p in next {
            if seen.insert(p) {
                queue.push_back(p);
            }
        }
    }
    false
}

fn kills(g: &TestFunction, inst: InstId, r: RegId) -> bool {
    !g.defs_are_partial(inst) && g.defs(inst).contains(&r)
}

/// Is the value `r` holds at `point` read on some path before a full definition of `r`?
pub fn live_at(g: &TestFunction, point: Point, r: RegId) -> bool {
    let reads = |(b, k): Point| {
        let insts = g.block_insts(BlockId::new(b));
        k < insts.len() && g.uses(insts[k]).contains(&r)
    };
    search(g, point, &reads, &|inst| !kills(g, inst, r))
}

/// Does the value `r` holds at `from` reach `target` without an intervening full
/// definition of `r`? `from` is a point, so paths of length zero count.
pub fn value_reaches(g: &TestFunction, from: Point, target: Point, r: RegId) -> bool {
    search(g, from, &|p| p == target, &|inst| !kills(g, inst, r))
}

/// The point just after the instruction at `(block, index)`.
pub fn after(p: Point) -> Point {
    (p.0, p.1 + 1)
}

/// Where each instruction sits.
pub fn locations(g: &TestFunction) -> BTreeMap<InstId, Point> {
    blocks(g)
        .flat_map(|b| {
            g.block_insts(b)
                .iter()
                .enumerate()
                .map(move |(k, &i)| (i, (b.index(), k)))
        })
        .collect()
}

//! The interference graph (Chaitin): walking each block backwards from its live-out set,
//! every register an instruction writes interferes with every register live after it —
//! except that a copy's destination does not interfere with its source there, which is
//! what lets them share a register. Registers written by one instruction interfere with
//! each other, and registers live into the entry block (read before written on some path)
//! interfere pairwise, as if all were written at the entry. Predicates and general
//! registers never interfere: they live in different files.
//!
//! Live sets at block ends come from the IR's liveness analysis ([`ir::analysis::Liveness`]),
//! and the walk applies its rule inside blocks: a guarded (partial) write kills nothing, so
//! a value written under a guard and read later stays live — and keeps its register —
//! across the guarded write.
//!
//! The same walk measures register pressure — the most 32-bit registers (or predicates)
//! live at one point — which bounds any allocation from below.

use ir::{BlockId, ControlFlowGraph, InstId, RegId, RegisterEffects};

use ir::analysis::Liveness;

use super::func::AllocFunc;
use super::RegWidth;

/// A copy whose two sides the colourer tries to coalesce.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Move {
    pub dst: RegId,
    pub src: RegId,
    pub inst: InstId,
    pub weight: f64,
}

pub(crate) struct Interference {
    /// Sorted, without duplicates or self-edges.
    pub adj: Vec<Vec<RegId>>,
    pub moves: Vec<Move>,
    /// Σ over the instructions referencing each register of their weight (10^loop depth).
    pub ref_weight: Vec<f64>,
    /// Peak general-register pressure in 32-bit registers.
    pub gpr_pressure: u32,
    pub pred_pressure: u32,
    /// Position of each register's first definition, counting instructions in reverse
    /// post-order; 0 for registers live into the entry, `u32::MAX` for registers only
    /// unreachable code defines.
    pub def_order: Vec<u32>,
}

impl Interference {
    pub(crate) fn interferes(&self, a: RegId, b: RegId) -> bool {
        self.adj[a.index()].binary_search(&b).is_ok()
    }
}

struct Pressure {
    gpr: u32,
    pred: u32,
}

impl Pressure {
    fn add(&mut self, w: RegWidth) {
        if w.is_predicate() {
            self.pred += 1;
        } else {
            self.gpr += w.units();
        }
    }
    fn sub(&mut self, w: RegWidth) {
        if w.is_predicate() {
            self.pred -= 1;
        } else {
            self.gpr -= w.units();
        }
    }
}

pub(crate) fn build(f: &AllocFunc, live: &Liveness) -> Interference {
    let n = f.widths.len();
    let mut adj: Vec<Vec<RegId>> = vec![Vec::new(); n];
    let same_file = |a: RegId, b: RegId| {
        f.widths[a.index()].is_predicate() == f.widths[b.index()].is_predicate()
    };
    let mut add_edge = |a: RegId, b: RegId| {
        if a != b && same_file(a, b) {
            adj[a.index()].push(b);
            adj[b.index()].push(a);
        }
    };
    let mut moves = Vec::new();
    let mut ref_weight = vec![0.0; n];
    let (mut gpr_pressure, mut pred_pressure) = (0, 0);
    let mut note_peak = |p: &Pressure| {
        gpr_pressure = gpr_pressure.max(p.gpr);
        pred_pressure = pred_pressure.max(p.pred);
    };

    for b in (0..f.num_blocks()).map(BlockId::new) {
        let mut live_now = live.live_out(b).clone();
        let mut pressure = Pressure { gpr: 0, pred: 0 };
        for r in live_now.iter() {
            pressure.add(f.widths[r.index()]);
        }
        for &k in f.block_insts(b).iter().rev() {
            let inst = &f.insts[k.index()];
            for &r in inst.uses.iter().chain(&inst.defs) {
                ref_weight[r.index()] += inst.weight;
            }
            // Just after the instruction: everything live plus everything it writes.
            let mut after = Pressure { ..pressure };
            for &d in &inst.defs {
                if !live_now.contains(d) {
                    after.add(f.widths[d.index()]);
                }
            }
            note_peak(&after);
            let copy_src = inst.copy.map(|c| c.src);
            for &d in &inst.defs {
                for l in live_now.iter() {
                    if Some(l) != copy_src || Some(d) != inst.copy.map(|c| c.dst) {
                        add_edge(d, l);
                    }
                }
            }
            for (i, &d) in inst.defs.iter().enumerate() {
                for &e in &inst.defs[i + 1..] {
                    add_edge(d, e);
                }
            }
            if let Some(c) = inst.copy {
                if c.dst != c.src {
                    moves.push(Move {
                        dst: c.dst,
                        src: c.src,
                        inst: k,
                        weight: inst.weight,
                    });
                }
            }
            if !inst.partial {
                for &d in &inst.defs {
                    if live_now.remove(d) {
                        pressure.sub(f.widths[d.index()]);
                    }
                }
            }
            for &u in &inst.uses {
                if live_now.insert(u) {
                    pressure.add(f.widths[u.index()]);
                }
            }
            note_peak(&pressure);
        }
    }

    let entry_live: Vec<RegId> = live.live_in(f.entry()).iter().collect();
    for (i, &a) in entry_live.iter().enumerate() {
        for &b in &entry_live[i + 1..] {
            add_edge(a, b);
        }
    }
    for list in &mut adj {
        list.sort_unstable();
        list.dedup();
    }
    let mut def_order = vec![u32::MAX; n];
    let mut position = 1u32;
    for b in reverse_post_order(f) {
        for &k in f.block_insts(b) {
            for &d in &f.insts[k.index()].defs {
                def_order[d.index()] = def_order[d.index()].min(position);
            }
            position += 1;
        }
    }
    for &r in &entry_live {
        def_order[r.index()] = 0;
    }
    Interference {
        adj,
        moves,
        ref_weight,
        gpr_pressure,
        pred_pressure,
        def_order,
    }
}

/// Blocks reachable from the entry, each before its successors except along back edges.
fn reverse_post_order(f: &AllocFunc) -> Vec<BlockId> {
    let n = f.num_blocks();
    let mut visited = vec![false; n];
    let mut post = Vec::with_capacity(n);
    // Iterative DFS: (block, index of the next successor to visit).
    let mut stack = vec![(f.entry(), 0usize)];
    visited[f.entry().index()] = true;
    while let Some(&mut (b, ref mut next)) = stack.last_mut() {
        let succs = f.successors(b);
        if let Some(&s) = succs.get(*next) {
            *next += 1;
            if !visited[s.index()] {
                visited[s.index()] = true;
                stack.push((s, 0));
            }
        } else {
            post.push(b);
            stack.pop();
        }
    }
    post.reverse();
    post
}

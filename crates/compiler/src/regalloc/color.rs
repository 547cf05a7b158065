//! Graph colouring with a budget of `k` registers, after Briggs, Cooper and Torczon (TOPLAS
//! 1994), generalised to aligned multi-register values as in Smith, Ramsey and Holloway
//! (PLDI 2004):
//!
//! 1. **Conservative coalescing.** Copies, heaviest first, merge their two sides when they
//!    do not interfere and the merge cannot make the graph harder to colour (the Briggs
//!    test, or the George test).
//! 2. **Simplify.** Repeatedly remove a node that is colourable whatever its neighbours
//!    get; when none is left, remove the cheapest node to spill (cost over degree)
//!    optimistically instead of spilling it at once.
//! 3. **Select.** Colour in reverse removal order, preferring a copy partner's register,
//!    else the lowest free aligned base. Nodes left without a colour are spill candidates.
//!
//! With widths, a node `n` of `w_n` registers has `k / w_n` aligned slots; a neighbour of
//! width `w_m` can block `max(1, w_m / w_n)` of them (aligned power-of-two blocks either
//! nest or are disjoint), so `n` is trivially colourable when its neighbours' blocking sum
//! is below its slot count. That is exact, not an approximation.

use std::collections::BTreeSet;

use ir::RegId;

use super::interference::Move;
use crate::union_find::UnionFind;

/// One register file's colouring problem. Nodes are register indices; vectors are indexed
/// by register.
pub(crate) struct Problem<'a> {
    /// Registers to colour, in increasing order.
    pub nodes: &'a [RegId],
    /// Sorted neighbour lists; neighbours outside `nodes` are ignored.
    pub adj: &'a [Vec<RegId>],
    /// Registers each value occupies (a power of two; also its alignment).
    pub units: &'a [u32],
    pub moves: &'a [Move],
    /// Spill cost numerator: weighted number of references.
    pub ref_weight: &'a [f64],
    pub spillable: &'a [bool],
    /// Position of each register's first definition in reverse post-order (registers live
    /// into the entry first).
    pub def_order: &'a [u32],
}

pub(crate) struct Colouring {
    /// Base register of each node's value; `None` outside `nodes` or when it failed.
    pub color: Vec<Option<u32>>,
    /// Coalesced groups that received no colour (each the registers merged into one node).
    pub uncolored: Vec<Vec<RegId>>,
    /// Registers the colours occupy: highest base + width.
    pub used: u32,
}

/// The blocking weight of a neighbour of width `wm` for a node of width `wn`.
fn blocks(wm: u32, wn: u32) -> u32 {
    (wm / wn).max(1)
}

struct Graph<'a> {
    p: &'a Problem<'a>,
    k: u32,
    /// Representative of each register's coalesced group (itself if not merged).
    rep: UnionFind,
    members: Vec<Vec<RegId>>,
    /// Neighbours of each representative, as representatives; sorted.
    nbrs: Vec<Vec<u32>>,
    blocked: Vec<u32>,
    is_node: Vec<bool>,
}

impl<'a> Graph<'a> {
    fn new(p: &'a Problem<'a>, k: u32) -> Self {
        let n = p.adj.len();
        let mut is_node = vec![false; n];
        for &r in p.nodes {
            is_node[r.index()] = true;
        }
        let mut nbrs = vec![Vec::new(); n];
        let mut members = vec![Vec::new(); n];
        for &r in p.nodes {
            nbrs[r.index()] = p.adj[r.index()]
                .iter()
                .filter(|m| is_node[m.index()])
                .map(|m| m.0)
                .collect();
            members[r.index()] = vec![r];
        }
        let mut g = Graph {
            p,
            k,
            rep: UnionFind::new(n),
            members,
            nbrs,
            blocked: vec![0; n],
            is_node,
        };
        for &r in p.nodes {
            g.blocked[r.index()] = g.blocking_sum(r.0);
        }
        g
    }

    fn units(&self, n: u32) -> u32 {
        self.p.units[n as usize]
    }

    fn slots(&self, n: u32) -> u32 {
        self.k / self.units(n)
    }

    fn blocking_sum(&self, n: u32) -> u32 {
        let wn = self.units(n);
        self.nbrs[n as usize]
            .iter()
            .map(|&m| blocks(self.units(m), wn))
            .sum()
    }

    fn significant(&self, n: u32) -> bool {
        self.blocked[n as usize] >= self.slots(n)
    }

    fn adjacent(&self, a: u32, b: u32) -> bool {
        self.nbrs[a as usize].binary_search(&b).is_ok()
    }

    fn spillable(&self, n: u32) -> bool {
        self.members[n as usize]
            .iter()
            .all(|m| self.p.spillable[m.index()])
    }

    /// Briggs: the merged node has fewer significant neighbours (weighted) than slots.
    fn briggs_ok(&self, a: u32, b: u32) -> bool {
        let w = self.units(a);
        let mut combined: Vec<u32> = self.nbrs[a as usize]
            .iter()
            .chain(&self.nbrs[b as usize])
            .copied()
            .collect();
        combined.sort_unstable();
        combined.dedup();
        let heavy: u32 = combined
            .iter()
            .filter(|&&n| self.significant(n))
            .map(|&n| blocks(self.units(n), w))
            .sum();
        heavy < self.slots(a)
    }

    /// George: merging `b` into `a` is safe if every neighbour of `b` already interferes
    /// with `a` or is insignificant.
    fn george_ok(&self, a: u32, b: u32) -> bool {
        self.nbrs[b as usize]
            .iter()
            .all(|&t| self.adjacent(t, a) || !self.significant(t))
    }

    /// Merges representative `b` into representative `a` (same width, not adjacent).
    fn merge(&mut self, a: u32, b: u32) {
        self.rep.link(a, b);
        let moved = std::mem::take(&mut self.members[b as usize]);
        self.members[a as usize].extend(moved);
        let b_nbrs = std::mem::take(&mut self.nbrs[b as usize]);
        let wb = self.units(b);
        for &t in &b_nbrs {
            let list = &mut self.nbrs[t as usize];
            if let Ok(i) = list.binary_search(&b) {
                list.remove(i);
            }
            match list.binary_search(&a) {
                // `t` was adjacent to both: it loses one neighbour.
                Ok(_) => self.blocked[t as usize] -= blocks(wb, self.p.units[t as usize]),
                Err(i) => {
                    list.insert(i, a);
                    let pos = self.nbrs[a as usize]
                        .binary_search(&t)
                        .unwrap_or_else(|e| e);
                    self.nbrs[a as usize].insert(pos, t);
                }
            }
        }
        self.blocked[a as usize] = self.blocking_sum(a);
        self.blocked[b as usize] = 0;
    }

    fn coalesce(&mut self) {
        let mut order: Vec<&Move> = self.p.moves.iter().collect();
        order.sort_by(|x, y| {
            y.weight
                .total_cmp(&x.weight)
                .then(x.inst.cmp(&y.inst))
                .then(x.dst.cmp(&y.dst))
        });
        for m in order {
            if !self.is_node[m.dst.index()] || !self.is_node[m.src.index()] {
                continue;
            }
            let (x, y) = (self.rep.find(m.dst.0), self.rep.find(m.src.0));
            if x == y || self.units(x) != self.units(y) || self.adjacent(x, y) {
                continue;
            }
            // A merged group is spilled whole; temporaries must never be.
            if !self.spillable(x) || !self.spillable(y) {
                continue;
            }
            let (a, b) = (x.min(y), x.max(y));
            if self.briggs_ok(a, b) || self.george_ok(a, b) {
                self.merge(a, b);
            } else if self.george_ok(b, a) {
                self.merge(b, a);
            }
        }
    }

    fn spill_metric(&self, n: u32) -> f64 {
        let cost: f64 = self.members[n as usize]
            .iter()
            .map(|m| self.p.ref_weight[m.index()])
            .sum();
        cost / f64::from(self.blocked[n as usize].max(1))
    }

    /// Simplify: returns the removal order.
    fn simplify(&mut self, reps: &[u32]) -> Vec<u32> {
        let mut present = vec![false; self.rep.len()];
        let mut low = BTreeSet::new();
        for &n in reps {
            present[n as usize] = true;
            if !self.significant(n) {
                low.insert(n);
            }
        }
        let mut stack = Vec::with_capacity(reps.len());
        let mut remaining = reps.len();
        while remaining > 0 {
            let n = match low.pop_first() {
                Some(n) => n,
                None => self.pick_spill_candidate(reps, &present),
            };
            present[n as usize] = false;
            remaining -= 1;
            stack.push(n);
            let wn = self.units(n);
            for i in 0..self.nbrs[n as usize].len() {
                let m = self.nbrs[n as usize][i];
                if present[m as usize] {
                    self.blocked[m as usize] -= blocks(wn, self.units(m));
                    if !self.significant(m) {
                        low.insert(m);
                    }
                }
            }
        }
        stack
    }

    /// The cheapest spillable node per degree; unspillable nodes only when nothing else is
    /// left.
    fn pick_spill_candidate(&self, reps: &[u32], present: &[bool]) -> u32 {
        let mut best: Option<(bool, f64, u32)> = None;
        for &n in reps {
            if !present[n as usize] {
                continue;
            }
            let key = (!self.spillable(n), self.spill_metric(n), n);
            let better = match &best {
                None => true,
                Some(b) => key
                    .0
                    .cmp(&b.0)
                    .then(key.1.total_cmp(&b.1))
                    .then(key.2.cmp(&b.2))
                    .is_lt(),
            };
            if better {
                best = Some(key);
            }
        }
        best.map(|b| b.2).unwrap_or(reps[0])
    }
}

/// Lowest aligned base `b` for `units` registers with `[b, b+units)` free of `taken`
/// (sorted by start) and within `k`.
fn first_fit(taken: &[(u32, u32)], units: u32, k: u32) -> Option<u32> {
    let mut base = 0u32;
    for &(start, end) in taken {
        if end <= base {
            continue;
        }
        if start >= base.saturating_add(units) {
            break;
        }
        base = end.div_ceil(units).saturating_mul(units);
    }
    (base.saturating_add(units) <= k).then_some(base)
}

fn is_free(taken: &[(u32, u32)], base: u32, units: u32, k: u32) -> bool {
    base.is_multiple_of(units)
        && base + units <= k
        && taken.iter().all(|&(s, e)| e <= base || s >= base + units)
}

/// Colours `order` greedily: a copy partner's register if free, else the lowest free
/// aligned base. Returns the colour of each representative and the groups left over.
fn select(
    g: &Graph,
    order: impl Iterator<Item = u32>,
    partners: &[Vec<u32>],
) -> (Vec<Option<u32>>, Vec<Vec<RegId>>) {
    let k = g.k;
    let mut rep_color: Vec<Option<u32>> = vec![None; g.p.adj.len()];
    let mut uncolored = Vec::new();
    let mut taken: Vec<(u32, u32)> = Vec::new();
    for n in order {
        taken.clear();
        for &m in &g.nbrs[n as usize] {
            if let Some(c) = rep_color[m as usize] {
                taken.push((c, c + g.units(m)));
            }
        }
        taken.sort_unstable();
        let w = g.units(n);
        let preferred = partners[n as usize]
            .iter()
            .filter_map(|&q| rep_color[q as usize])
            .find(|&c| is_free(&taken, c, w, k));
        match preferred.or_else(|| first_fit(&taken, w, k)) {
            Some(c) => rep_color[n as usize] = Some(c),
            None => uncolored.push(g.members[n as usize].clone()),
        }
    }
    (rep_color, uncolored)
}

/// Colours `p` with `k` registers. Selection runs first in the reverse simplification
/// order; if that leaves nodes uncoloured it is retried in definition order, which for the mostly-SSA code that PTX
/// compilers emit is close to a perfect elimination order of the (then chordal)
/// interference graph (Hack, Grund, Goos, "Register allocation for programs in SSA form",
/// CC 2006). Spill candidates come from the first attempt, which is cost-driven.
pub(crate) fn color(p: &Problem, k: u32) -> Colouring {
    let mut g = Graph::new(p, k);
    g.coalesce();
    let mut reps: Vec<u32> = Vec::new();
    for &r in p.nodes {
        if g.rep.find(r.0) == r.0 {
            reps.push(r.0);
        }
    }
    // Copy partners of each representative, for biased selection.
    let mut partners: Vec<Vec<u32>> = vec![Vec::new(); p.adj.len()];
    for m in p.moves {
        if !g.is_node[m.dst.index()] || !g.is_node[m.src.index()] {
            continue;
        }
        let (a, b) = (g.rep.find(m.dst.0), g.rep.find(m.src.0));
        if a != b && g.units(a) == g.units(b) {
            partners[a as usize].push(b);
            partners[b as usize].push(a);
        }
    }
    let stack = g.simplify(&reps);
    let (mut rep_color, mut uncolored) = select(&g, stack.iter().rev().copied(), &partners);
    if !uncolored.is_empty() {
        // A group is defined where its first member is.
        let mut first_def = vec![u32::MAX; p.adj.len()];
        for &r in p.nodes {
            let rep = g.rep.find_const(r.0) as usize;
            first_def[rep] = first_def[rep].min(p.def_order[r.index()]);
        }
        let mut order = reps.clone();
        order.sort_by_key(|&n| (first_def[n as usize], n));
        let (alt_color, alt_uncolored) = select(&g, order.into_iter(), &partners);
        if alt_uncolored.is_empty() {
            rep_color = alt_color;
            uncolored = alt_uncolored;
        }
    }
    let mut color = vec![None; p.adj.len()];
    let mut used = 0;
    for &r in p.nodes {
        let c = rep_color[g.rep.find_const(r.0) as usize];
        if let Some(c) = c {
            used = used.max(c + p.units[r.index()]);
        }
        color[r.index()] = c;
    }
    uncolored.sort();
    Colouring {
        color,
        uncolored,
        used,
    }
}

#[cfg(test)]
mod tests {
    use super::first_fit;

    #[test]
    fn first_fit_respects_alignment_and_budget() {
        assert_eq!(first_fit(&[], 2, 4), Some(0));
        assert_eq!(first_fit(&[(0, 1)], 2, 4), Some(2));
        assert_eq!(first_fit(&[(0, 1)], 1, 4), Some(1));
        assert_eq!(first_fit(&[(0, 1), (2, 4)], 2, 4), None);
        assert_eq!(first_fit(&[(1, 2)], 4, 8), Some(4));
        assert_eq!(first_fit(&[(0, 4), (1, 2)], 1, 8), Some(4));
        assert_eq!(first_fit(&[], 4, 3), None);
    }
}

//! Bank-aware register renumbering: LTRFconf, LTRF §4.2, after register allocation and
//! register-interval formation.
//!
//! The paper's four phases:
//!
//! 1. **Register-live-ranges.** The paper's chains of definitions and uses of a register.
//!    Here a live range starts as one allocated virtual register (the allocator has
//!    already split values into those); two that share an architectural register *and* are
//!    both referenced in one register-interval are merged, so they keep sharing it and no
//!    working set grows (a coalesced copy is such a pair). A live range occupies an
//!    aligned block of 1, 2 or 4 registers (its widest member) and keeps its members'
//!    places inside the block.
//! 2. **Interval conflict graph (ICG).** Live ranges are adjacent when some
//!    register-interval references both: the registers a prefetch reads together. Edges
//!    are weighted by how many intervals the two share.
//! 3. **Colouring.** Chaitin's simplify/select (Chaitin et al., 1981) with the `B` banks as
//!    colours: simplify removes a live range whose neighbours cannot use up all banks, or
//!    else the one with most neighbours (optimistically: nothing is spilled); select gives
//!    each live range, in reverse order, a bank no neighbour has, choosing the least used
//!    such bank so that banks fill evenly (the "balanced" colouring the paper relies on);
//!    if every bank is taken by a neighbour, the one shared with the lightest neighbours.
//!    A live range of width `w` takes the `w` banks its aligned block covers.
//! 4. **Renumbering.** Registers are handed out again from scratch within the registers
//!    the allocation already uses (`R0…R(n-1)`, never more, no spill code): each live range
//!    gets a free aligned block — free meaning that no live range that *interferes* with it
//!    (is live where it is written, by the IR's liveness of virtual registers) has a block
//!    overlapping it — preferring, in order: fewer new bank conflicts in the intervals
//!    that reference it, the bank its colour names, no growth of those working sets, its
//!    old register. Should no block be free (registers are as tight as the allocator could
//!    make them), the live range takes back its old block and any live range already placed
//!    there that interferes with it is placed again; a live range that had to take back its
//!    old block keeps it, and since old blocks never overlap interfering live ranges this
//!    ends, at worst with the allocation unchanged.
//!
//! The result is a new [`Allocation`] of the same function; [`super::checker`] proves it
//! computes what the old one did.

use std::collections::VecDeque;

use ir::analysis::Liveness;
use ir::{BlockId, ControlFlowGraph, Function, RegId, RegisterEffects};
use serde::Serialize;

use crate::regalloc::{Allocation, Location, PhysReg};

use super::banks::Banks;
use super::intervals::{IntervalId, RegisterIntervals};
use super::numbering::CellView;

const NONE: u32 = u32::MAX;

/// What renumbering did to one function.
#[derive(Clone, Debug, PartialEq)]
pub struct Renumbering {
    pub allocation: Allocation,
    pub stats: RenumberStats,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RenumberStats {
    /// Register-live-ranges (nodes of the ICG).
    pub live_ranges: u32,
    /// Edges of the ICG.
    pub icg_edges: u32,
    /// Live ranges whose colour is shared by an ICG neighbour (the colouring was not
    /// proper for them).
    pub improper_colours: u32,
    /// Live ranges whose registers changed.
    pub moved: u32,
    /// Live ranges that found no free block and kept their old one.
    pub kept_for_lack_of_room: u32,
}

/// One live range: virtual registers that share an aligned block.
struct LiveRange {
    /// `(vreg, offset of its first register in the block)`.
    members: Vec<(RegId, u32)>,
    span: u32,
    old_base: u32,
    /// Per interval that references it, the block offsets it contributes to the working
    /// set, as a bit mask.
    intervals: Vec<(IntervalId, u8)>,
}

/// Renumbers `before`, an allocation of `func` without spills, so that the working set of
/// each of `intervals` (formed on `func` under `before`) spreads over `banks`.
pub fn renumber(
    func: &Function,
    before: &Allocation,
    view: &CellView<'_>,
    intervals: &RegisterIntervals,
    banks: Banks,
) -> Renumbering {
    let registers = before.registers_used;
    let ranges = live_ranges(func, before, view, intervals);
    let n = ranges.len();
    let node_of_vreg = {
        let mut map = vec![NONE; func.regs.len()];
        for (i, lr) in ranges.iter().enumerate() {
            for &(v, _) in &lr.members {
                map[v.index()] = i as u32;
            }
        }
        map
    };
    let interference = interference(func, &node_of_vreg, n);

    // Phase 2: the ICG, with edge weights.
    let mut in_interval: Vec<Vec<u32>> = vec![Vec::new(); intervals.len()];
    for (i, lr) in ranges.iter().enumerate() {
        for &(iv, _) in &lr.intervals {
            in_interval[iv.index()].push(i as u32);
        }
    }
    let mut icg_pairs: Vec<(u32, u32)> = Vec::new();
    for nodes in &in_interval {
        for (k, &a) in nodes.iter().enumerate() {
            for &b in &nodes[k + 1..] {
                icg_pairs.push((a, b));
                icg_pairs.push((b, a));
            }
        }
    }
    icg_pairs.sort_unstable();
    let mut icg: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n];
    for run in icg_pairs.chunk_by(|x, y| x == y) {
        let (a, b) = run[0];
        icg[a as usize].push((b, run.len() as u32));
    }
    let icg_edges = icg.iter().map(Vec::len).sum::<usize>() / 2;

    // Phase 3.
    let spans: Vec<u32> = ranges.iter().map(|r| r.span).collect();
    let colouring = colour(&icg, &spans, registers, banks);

    // Phase 4.
    let mut placer = Placer::new(&ranges, &interference, intervals.len(), registers, banks);
    let mut order: Vec<u32> = (0..n as u32).collect();
    order.sort_by_key(|&i| {
        let lr = &ranges[i as usize];
        (
            std::cmp::Reverse(lr.span),
            std::cmp::Reverse(interference[i as usize].len()),
            lr.old_base,
            i,
        )
    });
    let mut queue: VecDeque<u32> = order.into();
    let mut pinned = vec![false; n];
    while let Some(x) = queue.pop_front() {
        if placer.base[x as usize] != NONE {
            continue;
        }
        match placer.best_block(x, &colouring.banks[x as usize]) {
            Some(b) => placer.place(x, b),
            None => {
                pinned[x as usize] = true;
                let old = ranges[x as usize].old_base;
                for y in placer.interfering_overlaps(x, old) {
                    debug_assert!(!pinned[y as usize]);
                    placer.unplace(y);
                    queue.push_back(y);
                }
                placer.place(x, old);
            }
        }
    }

    let mut allocation = before.clone();
    let mut moved = 0;
    let mut used = 0;
    for (i, lr) in ranges.iter().enumerate() {
        let base = placer.base[i];
        if base != lr.old_base {
            moved += 1;
        }
        for &(v, offset) in &lr.members {
            allocation.locations[v.index()] = Location::Reg(PhysReg(base + offset));
        }
        used = used.max(base + lr.span);
    }
    allocation.registers_used = used;
    Renumbering {
        allocation,
        stats: RenumberStats {
            live_ranges: n as u32,
            icg_edges: icg_edges as u32,
            improper_colours: colouring.improper,
            moved,
            kept_for_lack_of_room: pinned.iter().filter(|&&p| p).count() as u32,
        },
    }
}

/// Phase 1 (see the module docs).
fn live_ranges(
    func: &Function,
    alloc: &Allocation,
    view: &CellView<'_>,
    intervals: &RegisterIntervals,
) -> Vec<LiveRange> {
    let nregs = func.regs.len();
    let mut parent: Vec<u32> = (0..nregs as u32).collect();
    fn find(parent: &mut [u32], mut x: u32) -> u32 {
        while parent[x as usize] != x {
            let up = parent[parent[x as usize] as usize];
            parent[x as usize] = up;
            x = up;
        }
        x
    }
    let is_general = |v: RegId| matches!(alloc.locations[v.index()], Location::Reg(_));

    // Virtual registers each interval references, in first-reference order.
    let mut referenced: Vec<Vec<RegId>> = vec![Vec::new(); intervals.len()];
    let mut stamp = vec![NONE; nregs];
    for id in intervals.ids() {
        for inst in intervals.insts(view, id) {
            for &v in func.uses(inst).iter().chain(func.defs(inst)) {
                if is_general(v) && stamp[v.index()] != id.0 {
                    stamp[v.index()] = id.0;
                    referenced[id.index()].push(v);
                }
            }
        }
    }
    let mut holder = vec![NONE; alloc.registers_used as usize];
    for regs in &referenced {
        let mut touched = Vec::new();
        for &v in regs {
            for c in view.cells(v) {
                match holder[c as usize] {
                    NONE => {
                        holder[c as usize] = v.0;
                        touched.push(c);
                    }
                    h => {
                        let (a, b) = (find(&mut parent, h), find(&mut parent, v.0));
                        parent[a.max(b) as usize] = a.min(b);
                    }
                }
            }
        }
        for c in touched {
            holder[c as usize] = NONE;
        }
    }

    let mut node_of_root = vec![NONE; nregs];
    let mut ranges: Vec<LiveRange> = Vec::new();
    for v in 0..nregs {
        let vreg = RegId::new(v);
        if !is_general(vreg) {
            continue;
        }
        let root = find(&mut parent, v as u32) as usize;
        if node_of_root[root] == NONE {
            node_of_root[root] = ranges.len() as u32;
            ranges.push(LiveRange {
                members: Vec::new(),
                span: 0,
                old_base: 0,
                intervals: Vec::new(),
            });
        }
        let lr = &mut ranges[node_of_root[root] as usize];
        let cells = view.cells(vreg);
        lr.members.push((vreg, cells.start));
        let units = cells.end - cells.start;
        if units > lr.span {
            lr.span = units;
            lr.old_base = cells.start;
        }
    }
    for lr in &mut ranges {
        for m in &mut lr.members {
            debug_assert!(m.1 >= lr.old_base && m.1 < lr.old_base + lr.span);
            m.1 -= lr.old_base;
        }
    }
    let mut node_of_vreg = vec![NONE; nregs];
    for (i, lr) in ranges.iter().enumerate() {
        for &(v, _) in &lr.members {
            node_of_vreg[v.index()] = i as u32;
        }
    }
    for (iv, regs) in referenced.iter().enumerate() {
        for &v in regs {
            let node = node_of_vreg[v.index()] as usize;
            let lr = &mut ranges[node];
            let cells = view.cells(v);
            let offset = cells.start - lr.old_base;
            let mask = (((1u32 << (cells.end - cells.start)) - 1) << offset) as u8;
            match lr.intervals.last_mut() {
                Some((last, m)) if last.index() == iv => *m |= mask,
                _ => lr.intervals.push((IntervalId(iv as u32), mask)),
            }
        }
    }
    ranges
}

/// Live ranges that may not share registers: a virtual register written while another is
/// live (the other would be clobbered), results of one instruction, and registers live
/// into the entry (each holds its own incoming value). Sorted adjacency lists.
fn interference(func: &Function, node_of_vreg: &[u32], n: usize) -> Vec<Vec<u32>> {
    let liveness = Liveness::with_function(func);
    let mut edges: Vec<(u32, u32)> = Vec::new();
    let mut add = |a: u32, b: u32| {
        if a != NONE && b != NONE && a != b {
            edges.push((a, b));
            edges.push((b, a));
        }
    };
    let mut state = ir::analysis::BitSet::new_empty(func.num_regs());
    for b in 0..func.num_blocks() {
        liveness.for_each_live_after(func, BlockId::new(b), &mut state, |_, inst, live| {
            let defs = func.defs(inst);
            for (k, &d) in defs.iter().enumerate() {
                let dn = node_of_vreg[d.index()];
                for r in live.iter() {
                    add(dn, node_of_vreg[r.index()]);
                }
                for &e in &defs[k + 1..] {
                    add(dn, node_of_vreg[e.index()]);
                }
            }
        });
    }
    if func.num_blocks() > 0 {
        let live_in: Vec<RegId> = liveness.live_in(func.entry()).iter().collect();
        for (k, &a) in live_in.iter().enumerate() {
            for &b in &live_in[k + 1..] {
                add(node_of_vreg[a.index()], node_of_vreg[b.index()]);
            }
        }
    }
    edges.sort_unstable();
    edges.dedup();
    let mut adj = vec![Vec::new(); n];
    for (a, b) in edges {
        adj[a as usize].push(b);
    }
    adj
}

struct Colouring {
    /// The banks each live range's block covers, first register first.
    banks: Vec<Vec<u32>>,
    improper: u32,
}

/// The banks an aligned block of `span` registers at `base` covers.
fn covered_banks(banks: Banks, base: u32, span: u32) -> Vec<u32> {
    (base..base + span).map(|r| banks.bank(r)).collect()
}

/// Phase 3 (see the module docs). A colour is the list of banks a live range's block
/// covers; the candidates are those of the aligned blocks within `registers`.
fn colour(icg: &[Vec<(u32, u32)>], spans: &[u32], registers: u32, banks: Banks) -> Colouring {
    let n = icg.len();
    // Simplify.
    let mut degree: Vec<u32> = (0..n)
        .map(|i| icg[i].iter().map(|&(m, _)| spans[m as usize]).sum())
        .collect();
    let mut removed = vec![false; n];
    let mut stack = Vec::with_capacity(n);
    for _ in 0..n {
        let pick = (0..n)
            .filter(|&i| !removed[i])
            .find(|&i| degree[i] + spans[i] <= banks.count)
            .or_else(|| {
                (0..n)
                    .filter(|&i| !removed[i])
                    .max_by_key(|&i| (degree[i], std::cmp::Reverse(i)))
            });
        let Some(x) = pick else { break };
        removed[x] = true;
        stack.push(x);
        for &(m, _) in &icg[x] {
            degree[m as usize] -= spans[x];
        }
    }

    // The colours a block of each width can have.
    let mut palettes: Vec<Vec<Vec<u32>>> = vec![Vec::new(); 5];
    for span in [1u32, 2, 4] {
        let mut base = 0;
        while base + span <= registers {
            let c = covered_banks(banks, base, span);
            if !palettes[span as usize].contains(&c) {
                palettes[span as usize].push(c);
            }
            base += span;
        }
    }

    // Select, balancing bank use.
    let mut usage = vec![0u64; banks.count as usize];
    let mut colours: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut improper = 0;
    for &x in stack.iter().rev() {
        let palette = &palettes[spans[x] as usize];
        let mut best: Option<((u64, u64, usize), usize)> = None;
        for (k, c) in palette.iter().enumerate() {
            let mut clash = 0u64;
            for &(m, w) in &icg[x] {
                let mc = &colours[m as usize];
                clash += u64::from(w) * mc.iter().filter(|b| c.contains(b)).count() as u64;
            }
            let load: u64 = c.iter().map(|&b| usage[b as usize]).sum();
            let key = (clash, load, k);
            if best.is_none_or(|(best, _)| key < best) {
                best = Some((key, k));
            }
        }
        let Some(((clash, _, _), k)) = best else {
            continue;
        };
        if clash > 0 {
            improper += 1;
        }
        for &b in &palette[k] {
            usage[b as usize] += 1;
        }
        colours[x] = palette[k].clone();
    }
    Colouring {
        banks: colours,
        improper,
    }
}

/// Phase 4's state: where each live range is, and each interval's registers by bank.
struct Placer<'a> {
    ranges: &'a [LiveRange],
    interference: &'a [Vec<u32>],
    registers: u32,
    banks: Banks,
    base: Vec<u32>,
    /// Per interval and register: how many placed live ranges put it in the working set.
    refs: Vec<Vec<u16>>,
    /// Per interval and bank: working-set registers in that bank.
    per_bank: Vec<Vec<u16>>,
}

impl<'a> Placer<'a> {
    fn new(
        ranges: &'a [LiveRange],
        interference: &'a [Vec<u32>],
        num_intervals: usize,
        registers: u32,
        banks: Banks,
    ) -> Self {
        Placer {
            ranges,
            interference,
            registers,
            banks,
            base: vec![NONE; ranges.len()],
            refs: vec![vec![0; registers as usize]; num_intervals],
            per_bank: vec![vec![0; banks.count as usize]; num_intervals],
        }
    }

    /// The best free aligned block for `x` (see the module docs), if any.
    fn best_block(&self, x: u32, colour: &[u32]) -> Option<u32> {
        let lr = &self.ranges[x as usize];
        let span = lr.span;
        let mut blocked = vec![false; self.registers as usize];
        for &y in &self.interference[x as usize] {
            let b = self.base[y as usize];
            if b != NONE {
                let ys = self.ranges[y as usize].span;
                for c in b..b + ys {
                    blocked[c as usize] = true;
                }
            }
        }
        let mut best: Option<((u32, bool, u32, bool, u32), u32)> = None;
        let mut base = 0;
        while base + span <= self.registers {
            if !(base..base + span).any(|c| blocked[c as usize]) {
                let (conflicts, growth) = self.cost(x, base);
                let key = (
                    conflicts,
                    covered_banks(self.banks, base, span) != colour,
                    growth,
                    base != lr.old_base,
                    base,
                );
                if best.is_none_or(|(k, _)| key < k) {
                    best = Some((key, base));
                }
            }
            base += span;
        }
        best.map(|(_, b)| b)
    }

    /// New bank conflicts, summed over the intervals referencing `x`, and new working-set
    /// registers, if `x` were placed at `base`.
    fn cost(&self, x: u32, base: u32) -> (u32, u32) {
        let (mut conflicts, mut growth) = (0, 0);
        let mut added = [0u32; 4];
        for &(iv, mask) in &self.ranges[x as usize].intervals {
            let refs = &self.refs[iv.index()];
            let per_bank = &self.per_bank[iv.index()];
            let old_max = per_bank.iter().copied().max().unwrap_or(0);
            let mut new_max = old_max;
            let mut k = 0;
            for o in 0..4 {
                if mask & (1 << o) == 0 {
                    continue;
                }
                let c = base + o;
                if refs[c as usize] > 0 {
                    continue;
                }
                growth += 1;
                let bank = self.banks.bank(c);
                added[k] = bank;
                k += 1;
                let same = added[..k].iter().filter(|&&b| b == bank).count() as u16;
                new_max = new_max.max(per_bank[bank as usize] + same);
            }
            conflicts += u32::from(new_max - old_max);
        }
        (conflicts, growth)
    }

    fn place(&mut self, x: u32, base: u32) {
        self.base[x as usize] = base;
        for &(iv, mask) in &self.ranges[x as usize].intervals {
            for o in 0..4 {
                if mask & (1 << o) != 0 {
                    let c = (base + o) as usize;
                    let refs = &mut self.refs[iv.index()][c];
                    *refs += 1;
                    if *refs == 1 {
                        self.per_bank[iv.index()][self.banks.bank(c as u32) as usize] += 1;
                    }
                }
            }
        }
    }

    fn unplace(&mut self, x: u32) {
        let base = self.base[x as usize];
        for &(iv, mask) in &self.ranges[x as usize].intervals {
            for o in 0..4 {
                if mask & (1 << o) != 0 {
                    let c = (base + o) as usize;
                    let refs = &mut self.refs[iv.index()][c];
                    *refs -= 1;
                    if *refs == 0 {
                        self.per_bank[iv.index()][self.banks.bank(c as u32) as usize] -= 1;
                    }
                }
            }
        }
        self.base[x as usize] = NONE;
    }

    /// Placed live ranges that interfere with `x` and overlap the block at `base`.
    fn interfering_overlaps(&self, x: u32, base: u32) -> Vec<u32> {
        let span = self.ranges[x as usize].span;
        self.interference[x as usize]
            .iter()
            .copied()
            .filter(|&y| {
                let b = self.base[y as usize];
                b != NONE && b < base + span && base < b + self.ranges[y as usize].span
            })
            .collect()
    }
}

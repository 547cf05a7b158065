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
//!    (a virtual register of one is written while one of the other is live, by the IR's
//!    liveness; compared register by register of the two blocks) overlaps it there —
//!    preferring, in order: fewer new bank conflicts in the intervals that reference it,
//!    the banks its colour names, no growth of those working sets, its old register.
//!    Should no block be free (registers are as tight as the allocator could make them),
//!    the live range takes back its old block and any live range already placed there that
//!    interferes with it is placed again; a live range that had to take back its old block
//!    keeps it, and since old blocks never clash this ends, at worst with the allocation
//!    unchanged.
//!
//! The paper stops there. With registers this tight, a greedy pass leaves conflicts that
//! single moves can remove, so the renumbered assignment is then improved by local search —
//! move a live range of a conflicting interval to a free block, or swap it with the one live
//! range of its width in the way, while that lowers the conflicts (then the pairs of
//! working-set registers sharing a bank) — iterated with random kicks from a fixed seed
//! (Lourenço, Martin and Stützle, "Iterated Local Search", 2003). The same search also
//! starts from the old numbering and, for live ranges, from the best renaming of whole
//! registers ([`RenumberUnit::Register`]: every swap of two registers is legal there, which
//! the search exploits well); the best result is kept ([`RenumberStats::start`] says which),
//! so renumbering never adds conflicts.
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

/// Kicks of the iterated local search per starting assignment, unless configured: on the
/// workloads, 1000 gain about two points of conflict-free intervals at N = 16 for three
/// times the time.
pub const DEFAULT_SEARCH_ROUNDS: u32 = 300;

/// What renumbering gives registers to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RenumberUnit {
    /// Each register-live-range gets a register of its own choosing (the paper: registers
    /// are handed out again, live range by live range, within the allocated ones).
    #[default]
    LiveRange,
    /// Each architectural register (an aligned pair or quad where wider values live) is
    /// renamed as a whole: a permutation of the allocated register numbers, applied to
    /// every operand alike.
    Register,
}

impl RenumberUnit {
    pub fn as_str(self) -> &'static str {
        match self {
            RenumberUnit::LiveRange => "live-range",
            RenumberUnit::Register => "register",
        }
    }
}

impl std::str::FromStr for RenumberUnit {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "live-range" => Ok(RenumberUnit::LiveRange),
            "register" => Ok(RenumberUnit::Register),
            _ => Err(format!(
                "unknown renumbering unit '{s}' (expected live-range or register)"
            )),
        }
    }
}

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
    /// Which assignment the local improvement that won started from.
    pub start: RenumberStart,
    /// Moves and swaps the local improvement made.
    pub local_moves: u32,
}

/// Where the registers of the renumbered allocation come from (on equal conflicts, the
/// first of these).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RenumberStart {
    /// The ICG colouring's assignment (phase 4), improved locally.
    #[default]
    Colouring,
    /// The best renaming of whole registers, improved live range by live range.
    Permutation,
    /// The old numbering, improved locally.
    Original,
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
    unit: RenumberUnit,
    search_rounds: u32,
) -> Renumbering {
    let registers = before.registers_used;
    let ranges = live_ranges(func, before, view, intervals, unit);
    let n = ranges.len();
    // Each virtual register's live range and the registers of its block it occupies.
    let mut place = vec![(NONE, 0u8); func.regs.len()];
    for (i, lr) in ranges.iter().enumerate() {
        for &(v, offset) in &lr.members {
            let units = view.cells(v).len() as u32;
            place[v.index()] = (i as u32, (((1u32 << units) - 1) << offset) as u8);
        }
    }
    let interference = match unit {
        RenumberUnit::LiveRange => interference(func, &place),
        RenumberUnit::Register => all_distinct(&ranges),
    };

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

    // Phase 4, then local improvement; the same improvement from the old numbering; the
    // better of the two.
    let coloured = place_by_colour(
        &ranges,
        &interference,
        &colouring,
        intervals.len(),
        registers,
        banks,
    );
    let mut candidates: Vec<(Placer, RenumberStart, u32)> = Vec::new();
    let kept = match coloured {
        Some((mut coloured, kept)) => {
            let moves = coloured.search(search_rounds);
            candidates.push((coloured, RenumberStart::Colouring, moves));
            kept
        }
        None => 0,
    };
    if unit == RenumberUnit::LiveRange {
        // Renaming whole registers keeps every live range's registers together and every
        // swap legal, which the search sometimes exploits better: a third start.
        let by_register = renumber(
            func,
            before,
            view,
            intervals,
            banks,
            RenumberUnit::Register,
            search_rounds,
        );
        let mut permuted = Placer::new(&ranges, &interference, intervals.len(), registers, banks);
        for (i, lr) in ranges.iter().enumerate() {
            let (v, offset) = lr.members[0];
            let Location::Reg(r) = by_register.allocation.location(v) else {
                unreachable!("general registers stay general");
            };
            permuted.place(i as u32, r.0 - offset);
        }
        let moves = permuted.search(search_rounds);
        candidates.push((permuted, RenumberStart::Permutation, moves));
    }
    let mut original = Placer::new(&ranges, &interference, intervals.len(), registers, banks);
    for (i, lr) in ranges.iter().enumerate() {
        original.place(i as u32, lr.old_base);
    }
    let moves = original.search(search_rounds);
    candidates.push((original, RenumberStart::Original, moves));
    let (placer, start, local_moves) = candidates
        .into_iter()
        .min_by_key(|(p, start, _)| (p.total(), *start))
        .expect("the original is always a candidate");

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
            kept_for_lack_of_room: kept,
            start,
            local_moves,
        },
    }
}

/// Phase 1 (see the module docs).
fn live_ranges(
    func: &Function,
    alloc: &Allocation,
    view: &CellView<'_>,
    intervals: &RegisterIntervals,
    unit: RenumberUnit,
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
    // Registers whose values must keep sharing: those one interval references, or (when
    // whole registers are renamed) all of them.
    let everything: Vec<Vec<RegId>> = match unit {
        RenumberUnit::LiveRange => Vec::new(),
        RenumberUnit::Register => vec![(0..nregs)
            .map(RegId::new)
            .filter(|&v| is_general(v))
            .collect()],
    };
    let sharing = match unit {
        RenumberUnit::LiveRange => &referenced,
        RenumberUnit::Register => &everything,
    };
    let mut holder = vec![NONE; alloc.registers_used as usize];
    for regs in sharing {
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

/// Where two live ranges may not overlap: live range `other` must keep the registers
/// `theirs` of its block off the registers `mine` of this one's block (both bit masks of
/// block offsets), because a virtual register of one interferes with one of the other.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Clash {
    other: u32,
    mine: u8,
    theirs: u8,
}

impl Clash {
    /// True if the clash bites with this live range at `base` and the other at `other_base`.
    fn bites(&self, base: u32, other_base: u32) -> bool {
        let (mine, theirs) = (u32::from(self.mine), u32::from(self.theirs));
        if other_base >= base {
            other_base - base < 8 && mine & (theirs << (other_base - base)) != 0
        } else {
            base - other_base < 8 && (mine << (base - other_base)) & theirs != 0
        }
    }
}

/// Which virtual registers may not share registers — one written while the other is live
/// (the other would be clobbered), results of one instruction, registers live into the
/// entry (each holds its own incoming value) — as clashes between the live ranges that
/// hold them, register by register of their blocks. Per live range, sorted.
fn interference(func: &Function, place: &[(u32, u8)]) -> Vec<Vec<Clash>> {
    let n = place
        .iter()
        .filter(|p| p.0 != NONE)
        .map(|p| p.0 as usize + 1)
        .max()
        .unwrap_or(0);
    let liveness = Liveness::with_function(func);
    let mut clashes: Vec<Vec<Clash>> = vec![Vec::new(); n];
    let mut add = |a: RegId, b: RegId| {
        let ((na, ma), (nb, mb)) = (place[a.index()], place[b.index()]);
        if na != NONE && nb != NONE && na != nb {
            clashes[na as usize].push(Clash {
                other: nb,
                mine: ma,
                theirs: mb,
            });
            clashes[nb as usize].push(Clash {
                other: na,
                mine: mb,
                theirs: ma,
            });
        }
    };
    let mut state = ir::analysis::BitSet::new_empty(func.num_regs());
    for b in 0..func.num_blocks() {
        liveness.for_each_live_after(func, BlockId::new(b), &mut state, |_, inst, live| {
            let defs = func.defs(inst);
            for (k, &d) in defs.iter().enumerate() {
                for r in live.iter() {
                    add(d, r);
                }
                for &e in &defs[k + 1..] {
                    add(d, e);
                }
            }
        });
    }
    if func.num_blocks() > 0 {
        let live_in: Vec<RegId> = liveness.live_in(func.entry()).iter().collect();
        for (k, &a) in live_in.iter().enumerate() {
            for &b in &live_in[k + 1..] {
                add(a, b);
            }
        }
    }
    for list in &mut clashes {
        list.sort_unstable();
        list.dedup();
    }
    clashes
}

/// Every block clashes with every other: what makes a placement a permutation.
fn all_distinct(ranges: &[LiveRange]) -> Vec<Vec<Clash>> {
    let full = |x: &LiveRange| ((1u32 << x.span) - 1) as u8;
    (0..ranges.len())
        .map(|a| {
            (0..ranges.len())
                .filter(|&b| b != a)
                .map(|b| Clash {
                    other: b as u32,
                    mine: full(&ranges[a]),
                    theirs: full(&ranges[b]),
                })
                .collect()
        })
        .collect()
}

/// How many live ranges clash with each.
fn clash_degree(clashes: &[Clash]) -> usize {
    let mut count = 0;
    let mut last = NONE;
    for c in clashes {
        if c.other != last {
            count += 1;
            last = c.other;
        }
    }
    count
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

/// Phase 4: gives each live range, in order of width, then interference, a free block,
/// preferring its colour (see the module docs). Returns the placement and how many live
/// ranges had to keep their old block; `None` if two of those clash, which a valid old
/// numbering rules out.
fn place_by_colour<'a>(
    ranges: &'a [LiveRange],
    interference: &'a [Vec<Clash>],
    colouring: &Colouring,
    num_intervals: usize,
    registers: u32,
    banks: Banks,
) -> Option<(Placer<'a>, u32)> {
    let n = ranges.len();
    let mut placer = Placer::new(ranges, interference, num_intervals, registers, banks);
    let mut order: Vec<u32> = (0..n as u32).collect();
    order.sort_by_key(|&i| {
        let lr = &ranges[i as usize];
        (
            std::cmp::Reverse(lr.span),
            std::cmp::Reverse(clash_degree(&interference[i as usize])),
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
                    if pinned[y as usize] {
                        // Old blocks never clash; if they do, the interference is not the
                        // allocation's and the safe answer is the old numbering.
                        return None;
                    }
                    placer.unplace(y);
                    queue.push_back(y);
                }
                placer.place(x, old);
            }
        }
    }
    let kept = pinned.iter().filter(|&&p| p).count() as u32;
    Some((placer, kept))
}

/// How phase 4 ranks a free block, smallest first: new bank conflicts, not the colour's
/// banks, working-set growth, not the old block, the block's first register.
type BlockPreference = (u32, bool, u32, bool, u32);

/// Phase 4's state: where each live range is, and each interval's registers by bank.
struct Placer<'a> {
    ranges: &'a [LiveRange],
    interference: &'a [Vec<Clash>],
    registers: u32,
    banks: Banks,
    base: Vec<u32>,
    /// Per interval and register: how many placed live ranges put it in the working set.
    refs: Vec<Vec<u16>>,
    /// Per interval and bank: working-set registers in that bank.
    per_bank: Vec<Vec<u16>>,
    /// Per interval, the live ranges it references.
    members: Vec<Vec<u32>>,
    /// Per interval, the fullest bank's count and the pairs of registers sharing a bank.
    fullest: Vec<u16>,
    pairs: Vec<u32>,
    /// Per interval and count `c`, how many banks hold `c` of its registers (so that the
    /// fullest count is kept up to date in constant time).
    banks_holding: Vec<Vec<u16>>,
}

impl<'a> Placer<'a> {
    fn new(
        ranges: &'a [LiveRange],
        interference: &'a [Vec<Clash>],
        num_intervals: usize,
        registers: u32,
        banks: Banks,
    ) -> Self {
        let mut members = vec![Vec::new(); num_intervals];
        for (x, lr) in ranges.iter().enumerate() {
            for &(iv, _) in &lr.intervals {
                members[iv.index()].push(x as u32);
            }
        }
        Placer {
            ranges,
            interference,
            registers,
            banks,
            base: vec![NONE; ranges.len()],
            refs: vec![vec![0; registers as usize]; num_intervals],
            per_bank: vec![vec![0; banks.count as usize]; num_intervals],
            members,
            fullest: vec![0; num_intervals],
            pairs: vec![0; num_intervals],
            banks_holding: vec![
                {
                    let mut h = vec![0; registers as usize + 2];
                    h[0] = banks.count as u16;
                    h
                };
                num_intervals
            ],
        }
    }

    /// The best free aligned block for `x` (see the module docs), if any.
    fn best_block(&self, x: u32, colour: &[u32]) -> Option<u32> {
        let lr = &self.ranges[x as usize];
        let span = lr.span;
        // Bases at which some register of `x` would land on one of a clashing live range.
        let mut blocked = vec![false; self.registers as usize];
        for clash in &self.interference[x as usize] {
            let b = self.base[clash.other as usize];
            if b == NONE {
                continue;
            }
            for j in 0..8 {
                if clash.theirs & (1 << j) == 0 {
                    continue;
                }
                for o in 0..8 {
                    if clash.mine & (1 << o) != 0 && b + j >= o && b + j - o < self.registers {
                        blocked[(b + j - o) as usize] = true;
                    }
                }
            }
        }
        let mut best: Option<(BlockPreference, u32)> = None;
        let mut base = 0;
        while base + span <= self.registers {
            if !blocked[base as usize] {
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
            let iv = iv.index();
            for o in 0..4 {
                if mask & (1 << o) == 0 {
                    continue;
                }
                let c = (base + o) as usize;
                self.refs[iv][c] += 1;
                if self.refs[iv][c] == 1 {
                    let count = &mut self.per_bank[iv][self.banks.bank(c as u32) as usize];
                    self.pairs[iv] += u32::from(*count);
                    self.banks_holding[iv][*count as usize] -= 1;
                    *count += 1;
                    self.banks_holding[iv][*count as usize] += 1;
                    self.fullest[iv] = self.fullest[iv].max(*count);
                }
            }
        }
    }

    fn unplace(&mut self, x: u32) {
        let base = self.base[x as usize];
        for &(iv, mask) in &self.ranges[x as usize].intervals {
            let iv = iv.index();
            for o in 0..4 {
                if mask & (1 << o) == 0 {
                    continue;
                }
                let c = (base + o) as usize;
                self.refs[iv][c] -= 1;
                if self.refs[iv][c] == 0 {
                    let count = &mut self.per_bank[iv][self.banks.bank(c as u32) as usize];
                    self.banks_holding[iv][*count as usize] -= 1;
                    if *count == self.fullest[iv] && self.banks_holding[iv][*count as usize] == 0 {
                        self.fullest[iv] -= 1;
                    }
                    *count -= 1;
                    self.banks_holding[iv][*count as usize] += 1;
                    self.pairs[iv] -= u32::from(*count);
                }
            }
        }
        self.base[x as usize] = NONE;
    }

    /// Bank conflicts of interval `iv` and, to tell apart assignments with equal
    /// conflicts, its pairs of working-set registers that share a bank.
    fn interval_cost(&self, iv: usize) -> (u32, u32) {
        (
            u32::from(self.fullest[iv].saturating_sub(1)),
            self.pairs[iv],
        )
    }

    /// Conflicts and same-bank pairs over all intervals.
    fn total(&self) -> (u32, u32) {
        (0..self.per_bank.len())
            .map(|iv| self.interval_cost(iv))
            .fold((0, 0), |(a, b), (c, d)| (a + c, b + d))
    }

    /// True if no placed live range that interferes with `x`, other than `except`,
    /// overlaps the block of `x`'s width at `base`.
    fn is_free(&self, x: u32, base: u32, except: u32) -> bool {
        self.interference[x as usize].iter().all(|c| {
            let b = self.base[c.other as usize];
            c.other == except || b == NONE || !c.bites(base, b)
        })
    }

    /// Local improvement: moves a live range of a conflicting interval to a free block, or
    /// swaps it with the one live range of its width that keeps it from a block, whenever
    /// that lowers (conflicts, same-bank pairs) over the intervals involved; until nothing
    /// improves. Returns the number of moves made.
    fn improve(&mut self) -> u32 {
        self.improve_from((0..self.ranges.len() as u32).collect())
    }

    /// [`Placer::improve`] starting with the live ranges `start`; a live range that moves
    /// puts those sharing an interval with it back on the list.
    fn improve_from(&mut self, start: Vec<u32>) -> u32 {
        let n = self.ranges.len();
        let mut queued = vec![false; n];
        let mut queue = VecDeque::with_capacity(start.len());
        for x in start {
            if !queued[x as usize] {
                queued[x as usize] = true;
                queue.push_back(x);
            }
        }
        let mut moves = 0;
        while let Some(x) = queue.pop_front() {
            queued[x as usize] = false;
            let conflicting = self.ranges[x as usize]
                .intervals
                .iter()
                .any(|&(iv, _)| self.interval_cost(iv.index()).1 > 0);
            if !conflicting {
                continue;
            }
            let Some(partner) = self.improve_one(x) else {
                continue;
            };
            moves += 1;
            for y in [x, partner] {
                if y == NONE {
                    continue;
                }
                for &(iv, _) in &self.ranges[y as usize].intervals {
                    for &z in &self.members[iv.index()] {
                        if !queued[z as usize] {
                            queued[z as usize] = true;
                            queue.push_back(z);
                        }
                    }
                }
            }
        }
        moves
    }

    /// How moving `x` to `to` — and, unless `y` is `NONE`, `y` from `to` to where `x` is —
    /// would change (conflicts, same-bank pairs), summed over the intervals either
    /// references; computed without moving anything.
    fn move_delta(&self, x: u32, to: u32, y: u32) -> (i64, i64) {
        let here = self.base[x as usize];
        let span = self.ranges[x as usize].span;
        let xs = &self.ranges[x as usize].intervals;
        let ys: &[(IntervalId, u8)] = if y == NONE {
            &[]
        } else {
            &self.ranges[y as usize].intervals
        };
        let (mut dc, mut dp) = (0i64, 0i64);
        let (mut i, mut j) = (0, 0);
        while i < xs.len() || j < ys.len() {
            let (iv, mx, my) = match (xs.get(i), ys.get(j)) {
                (Some(&(a, ma)), Some(&(b, mb))) if a == b => {
                    i += 1;
                    j += 1;
                    (a, ma, mb)
                }
                (Some(&(a, ma)), Some(&(b, _))) if a < b => {
                    i += 1;
                    (a, ma, 0)
                }
                (Some(&(a, ma)), None) => {
                    i += 1;
                    (a, ma, 0)
                }
                (_, Some(&(b, mb))) => {
                    j += 1;
                    (b, 0, mb)
                }
                (None, None) => unreachable!("loop condition"),
            };
            let iv = iv.index();
            let refs = &self.refs[iv];
            // Banks whose count changes, with the change (at most eight registers move).
            let mut changed = [(u32::MAX, 0i32); 8];
            let mut n = 0;
            for o in 0..span {
                let bit = |m: u8| i32::from(m >> o & 1);
                for (cell, delta) in [(here + o, bit(my) - bit(mx)), (to + o, bit(mx) - bit(my))] {
                    if delta == 0 {
                        continue;
                    }
                    let old = i32::from(refs[cell as usize]);
                    let new = old + delta;
                    let step = i32::from(new > 0) - i32::from(old > 0);
                    if step == 0 {
                        continue;
                    }
                    let bank = self.banks.bank(cell);
                    match changed[..n].iter().position(|&(b, _)| b == bank) {
                        Some(k) => changed[k].1 += step,
                        None => {
                            changed[n] = (bank, step);
                            n += 1;
                        }
                    }
                }
            }
            let per_bank = &self.per_bank[iv];
            let fullest = i32::from(self.fullest[iv]);
            let mut new_fullest = 0;
            let mut pairs = 0i64;
            let at_level = |level: i32| -> i32 {
                changed[..n]
                    .iter()
                    .filter(|&&(b, d)| d != 0 && i32::from(per_bank[b as usize]) == level)
                    .count() as i32
            };
            for &(b, d) in &changed[..n] {
                let old = i64::from(per_bank[b as usize]);
                let new = old + i64::from(d);
                pairs += new * (new - 1) / 2 - old * (old - 1) / 2;
                new_fullest = new_fullest.max(new as i32);
            }
            // The fullest bank among those that do not change.
            let mut level = fullest;
            while level > 0
                && i32::from(self.banks_holding[iv][level as usize]) - at_level(level) <= 0
            {
                level -= 1;
            }
            new_fullest = new_fullest.max(level);
            dc += i64::from((new_fullest - 1).max(0)) - i64::from((fullest - 1).max(0));
            dp += pairs;
        }
        (dc, dp)
    }

    /// Makes the best improving move of `x` and returns the live range it swapped with
    /// (`NONE` for a plain move), or `None` if nothing improves.
    fn improve_one(&mut self, x: u32) -> Option<u32> {
        let span = self.ranges[x as usize].span;
        let here = self.base[x as usize];
        let blockers = self.blockers(x);
        let mut best: Option<((i64, i64), u32, u32)> = None;
        let mut base = 0;
        while base + span <= self.registers {
            let partner = match blockers[base as usize] {
                _ if base == here => None,
                (0, _) => Some(NONE),
                (1, y) if self.ranges[y as usize].span == span && self.base[y as usize] == base => {
                    Some(y)
                }
                _ => None,
            };
            if let Some(y) = partner {
                let d = self.move_delta(x, base, y);
                // Whether `y` may take `x`'s place is the dearer test: only for a winner.
                if d < (0, 0)
                    && best.is_none_or(|(b, _, _)| d < b)
                    && (y == NONE || self.is_free(y, here, x))
                {
                    best = Some((d, base, y));
                }
            }
            base += span;
        }
        let (_, to, y) = best?;
        self.apply(x, y, to, here);
        Some(y)
    }

    /// Iterated local search (Lourenço, Martin and Stützle, "Iterated Local Search",
    /// 2003): from the best assignment so far, make two random legal moves or swaps of live
    /// ranges in conflicting intervals, improve locally around them, and keep the result if
    /// it is better; `rounds` times. The generator has a fixed seed, so the result is
    /// deterministic.
    fn search(&mut self, rounds: u32) -> u32 {
        let mut moves = self.improve();
        let mut best = self.total();
        let mut best_base = self.base.clone();
        let mut rng = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        for _ in 0..rounds {
            if best.0 == 0 {
                break;
            }
            let candidates: Vec<u32> = (0..self.ranges.len() as u32)
                .filter(|&x| {
                    self.ranges[x as usize]
                        .intervals
                        .iter()
                        .any(|&(iv, _)| self.interval_cost(iv.index()).0 > 0)
                })
                .collect();
            if candidates.is_empty() {
                break;
            }
            let mut touched = Vec::new();
            for _ in 0..2 {
                let x = candidates[(next() % candidates.len() as u64) as usize];
                let span = self.ranges[x as usize].span;
                let here = self.base[x as usize];
                let blocks = (self.registers / span).max(1);
                let to = (next() % u64::from(blocks)) as u32 * span;
                if to == here {
                    continue;
                }
                match self.interfering_overlaps(x, to)[..] {
                    [] => self.apply(x, NONE, to, here),
                    [y] if self.ranges[y as usize].span == span
                        && self.base[y as usize] == to
                        && self.is_free(y, here, x) =>
                    {
                        self.apply(x, y, to, here);
                        touched.push(y);
                    }
                    _ => continue,
                }
                touched.push(x);
            }
            let mut around = Vec::new();
            for &y in &touched {
                for &(iv, _) in &self.ranges[y as usize].intervals {
                    around.extend_from_slice(&self.members[iv.index()]);
                }
            }
            let m = self.improve_from(around);
            let total = self.total();
            if total < best {
                best = total;
                best_base.clone_from(&self.base);
                moves += m + touched.len() as u32;
            } else {
                self.reset(&best_base);
            }
        }
        moves
    }

    /// Places every live range at `bases`, moving only those that are elsewhere.
    fn reset(&mut self, bases: &[u32]) {
        let moved: Vec<u32> = (0..self.ranges.len() as u32)
            .filter(|&x| self.base[x as usize] != bases[x as usize])
            .collect();
        for &x in &moved {
            self.unplace(x);
        }
        for &x in &moved {
            self.place(x, bases[x as usize]);
        }
    }

    /// Moves `x` from `from` to `to` and, unless `partner` is `NONE`, `partner` from `to`
    /// to `from`.
    fn apply(&mut self, x: u32, partner: u32, to: u32, from: u32) {
        debug_assert_eq!(self.base[x as usize], from);
        self.unplace(x);
        if partner != NONE {
            self.unplace(partner);
            self.place(partner, from);
        }
        self.place(x, to);
    }

    /// For every base register: how many placed live ranges that interfere with `x` a
    /// block of `x` there would land on, and one of them.
    fn blockers(&self, x: u32) -> Vec<(u32, u32)> {
        let mut at = vec![(0u32, NONE); self.registers as usize];
        for clash in &self.interference[x as usize] {
            let b = self.base[clash.other as usize];
            if b == NONE {
                continue;
            }
            for j in 0..8 {
                if clash.theirs & (1 << j) == 0 {
                    continue;
                }
                for o in 0..8 {
                    if clash.mine & (1 << o) == 0 || b + j < o || b + j - o >= self.registers {
                        continue;
                    }
                    let slot = &mut at[(b + j - o) as usize];
                    // Clashes are sorted by live range, so repeats are adjacent.
                    if slot.1 != clash.other {
                        slot.0 += 1;
                        slot.1 = clash.other;
                    }
                }
            }
        }
        at
    }

    /// Placed live ranges that a register of `x` at `base` would land on while they
    /// interfere with it.
    fn interfering_overlaps(&self, x: u32, base: u32) -> Vec<u32> {
        let mut out: Vec<u32> = self.interference[x as usize]
            .iter()
            .filter(|c| {
                let b = self.base[c.other as usize];
                b != NONE && c.bites(base, b)
            })
            .map(|c| c.other)
            .collect();
        out.dedup();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ltrf::banks::BankMapping;
    use crate::ltrf::checker::check_renumbering;
    use crate::ltrf::intervals::form_register_intervals;
    use crate::ltrf::numbering::virtual_numbering;
    use crate::test_support::first_function;

    /// LTRF Listing 1 (§4.3).
    const LISTING1: &str = r#"
.version 7.8
.target sm_70
.address_size 64
.visible .entry compare(.param .u32 A, .param .u32 B)
{
    .reg .u32 %R<7>;
    .reg .pred %p, %q;
    ld.param.u32 %R0, [A];
    ld.param.u32 %R1, [B];
    mov.u32 %R2, 0;
    mov.u32 %R3, 100;
L1:
    ld.local.u32 %R4, [%R0];
    ld.local.u32 %R5, [%R1];
    setp.eq.u32 %p, %R4, %R5;
    @!%p bra L2;
    add.u32 %R0, %R0, 4;
    add.u32 %R1, %R1, 4;
    add.u32 %R2, %R2, 1;
    setp.lt.u32 %q, %R2, %R3;
    @%q bra L1;
    mov.u32 %R6, 1;
    bra L3;
L2:
    mov.u32 %R6, 0;
L3:
    st.local.u32 [%R0], %R6;
    exit;
}
"#;

    fn conflicts(view: &CellView<'_>, intervals: &RegisterIntervals, banks: Banks) -> Vec<u32> {
        intervals
            .ids()
            .map(|id| {
                let mut ws: Vec<u32> = intervals
                    .insts(view, id)
                    .flat_map(|i| view.touched(i).iter().copied())
                    .collect();
                ws.sort_unstable();
                ws.dedup();
                banks.conflicts(&ws)
            })
            .collect()
    }

    #[test]
    fn the_papers_example_becomes_conflict_free() {
        let f = first_function(LISTING1);
        let before = virtual_numbering(&f);
        let view = CellView::new(&f, &before).unwrap();
        let intervals = form_register_intervals(&view, 4);
        let banks = Banks::new(
            4,
            BankMapping::Blocked {
                registers_per_bank: 2,
            },
        );
        // Interval 1 is the loop's first block and prefetches R0 R1 R4 R5 (Figure 8).
        assert_eq!(
            intervals.interval(IntervalId(1)).working_set,
            vec![0, 1, 4, 5]
        );
        assert_eq!(conflicts(&view, &intervals, banks), vec![1, 1, 0, 1, 0]);
        let r = renumber(
            &f,
            &before,
            &view,
            &intervals,
            banks,
            RenumberUnit::LiveRange,
            DEFAULT_SEARCH_ROUNDS,
        );
        check_renumbering(
            &f,
            &intervals,
            &before,
            &r.allocation,
            RenumberUnit::LiveRange,
        )
        .unwrap();
        let after = CellView::new(&f, &r.allocation).unwrap();
        assert_eq!(conflicts(&after, &intervals, banks), vec![0; 5]);
        assert!(r.allocation.registers_used <= before.registers_used);
        // Deterministic.
        assert_eq!(
            renumber(
                &f,
                &before,
                &view,
                &intervals,
                banks,
                RenumberUnit::LiveRange,
                DEFAULT_SEARCH_ROUNDS,
            ),
            r
        );
    }

    /// Renaming whole registers gives a permutation that still resolves the example.
    #[test]
    fn the_papers_example_by_whole_registers() {
        let f = first_function(LISTING1);
        let before = virtual_numbering(&f);
        let view = CellView::new(&f, &before).unwrap();
        let intervals = form_register_intervals(&view, 4);
        let banks = Banks::new(
            4,
            BankMapping::Blocked {
                registers_per_bank: 2,
            },
        );
        let r = renumber(
            &f,
            &before,
            &view,
            &intervals,
            banks,
            RenumberUnit::Register,
            DEFAULT_SEARCH_ROUNDS,
        );
        check_renumbering(
            &f,
            &intervals,
            &before,
            &r.allocation,
            RenumberUnit::Register,
        )
        .unwrap();
        let after = CellView::new(&f, &r.allocation).unwrap();
        assert_eq!(conflicts(&after, &intervals, banks), vec![0; 5]);
        assert_eq!(r.allocation.registers_used, 7);
    }

    /// Two values that share a register inside one interval are one live range: they keep
    /// sharing, so the interval's working set cannot grow.
    #[test]
    fn values_sharing_a_register_in_an_interval_move_together() {
        let src = r#"
.version 7.8
.target sm_70
.address_size 64
.visible .entry k(.param .u32 x)
{
    .reg .u32 %r<8>;
    ld.param.u32 %r1, [x];
    add.u32 %r2, %r1, 1;
    add.u32 %r3, %r2, 1;
    add.u32 %r4, %r3, %r2;
    st.local.u32 [%r1], %r4;
    exit;
}
"#;
        let f = first_function(src);
        let alloc = crate::regalloc::allocate(
            &crate::regalloc::IrInput::new(&f),
            &crate::regalloc::AllocConfig::default(),
        )
        .unwrap();
        let view = CellView::new(&f, &alloc).unwrap();
        let intervals = form_register_intervals(&view, 16);
        let r = renumber(
            &f,
            &alloc,
            &view,
            &intervals,
            Banks::new(2, BankMapping::Interleaved),
            RenumberUnit::LiveRange,
            DEFAULT_SEARCH_ROUNDS,
        );
        check_renumbering(
            &f,
            &intervals,
            &alloc,
            &r.allocation,
            RenumberUnit::LiveRange,
        )
        .unwrap();
        for a in 0..f.regs.len() {
            for b in 0..f.regs.len() {
                let (ra, rb) = (RegId::new(a), RegId::new(b));
                if alloc.location(ra) == alloc.location(rb)
                    && matches!(alloc.location(ra), Location::Reg(_))
                {
                    assert_eq!(r.allocation.location(ra), r.allocation.location(rb));
                }
            }
        }
    }

    /// The search's cost deltas, computed without moving anything, match what moving
    /// does, for every legal move and swap of a real kernel.
    #[test]
    fn move_deltas_match_the_moves() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../workloads/ptx/nvcc/nbody.ptx"
        );
        let src = std::fs::read_to_string(path).unwrap();
        let f = first_function(&src);
        let alloc = crate::regalloc::allocate(
            &crate::regalloc::IrInput::new(&f),
            &crate::regalloc::AllocConfig::default(),
        )
        .unwrap();
        let view = CellView::new(&f, &alloc).unwrap();
        let intervals = form_register_intervals(&view, 8);
        let ranges = live_ranges(&f, &alloc, &view, &intervals, RenumberUnit::LiveRange);
        let mut place = vec![(NONE, 0u8); f.regs.len()];
        for (i, lr) in ranges.iter().enumerate() {
            for &(v, offset) in &lr.members {
                let units = view.cells(v).len() as u32;
                place[v.index()] = (i as u32, (((1u32 << units) - 1) << offset) as u8);
            }
        }
        let interference = interference(&f, &place);
        let banks = Banks::new(4, BankMapping::Interleaved);
        let mut placer = Placer::new(
            &ranges,
            &interference,
            intervals.len(),
            alloc.registers_used,
            banks,
        );
        for (i, lr) in ranges.iter().enumerate() {
            placer.place(i as u32, lr.old_base);
        }
        let mut checked = 0;
        for x in 0..ranges.len() as u32 {
            let span = ranges[x as usize].span;
            let here = placer.base[x as usize];
            let blockers = placer.blockers(x);
            let mut base = 0;
            while base + span <= alloc.registers_used {
                let partner = match blockers[base as usize] {
                    _ if base == here => None,
                    (0, _) => Some(NONE),
                    (1, y)
                        if ranges[y as usize].span == span
                            && placer.base[y as usize] == base
                            && placer.is_free(y, here, x) =>
                    {
                        Some(y)
                    }
                    _ => None,
                };
                if let Some(y) = partner {
                    let (c0, p0) = placer.total();
                    let d = placer.move_delta(x, base, y);
                    placer.apply(x, y, base, here);
                    let (c1, p1) = placer.total();
                    assert_eq!(
                        d,
                        (i64::from(c1) - i64::from(c0), i64::from(p1) - i64::from(p0))
                    );
                    placer.apply(x, y, here, base);
                    assert_eq!(placer.total(), (c0, p0));
                    checked += 1;
                }
                base += span;
            }
        }
        assert!(checked > 100, "{checked}");
    }

    #[test]
    fn clashes_compare_registers_not_blocks() {
        // A 32-bit value in the second register of a pair's block clashes with the pair's
        // first register only when the blocks line up that way.
        let c = Clash {
            other: 0,
            mine: 0b01,
            theirs: 0b10,
        };
        assert!(c.bites(3, 2));
        assert!(!c.bites(2, 2));
        assert!(!c.bites(4, 2));
        assert!(Clash {
            other: 0,
            mine: 0b11,
            theirs: 0b1111
        }
        .bites(6, 4));
        assert!(!Clash {
            other: 0,
            mine: 0b11,
            theirs: 0b1111
        }
        .bites(8, 4));
    }
}

//! The allocation loop: colour predicates once (they are never spilled), then general
//! registers in rounds. Each round rebuilds liveness and interference, and searches the
//! smallest register budget — from the peak pressure upwards — that colours without
//! spilling. If none fits under the cap, the registers left uncoloured at the cap are
//! spilled (a temporary left uncoloured spills its cheapest spillable neighbour instead)
//! and the next round starts. Spilling only ever adds spills, so the loop ends.

use std::collections::BTreeSet;

use ir::analysis::Liveness;
use ir::{BlockId, RegId, RegisterEffects};

use super::color::{self, Colouring, Problem};
use super::func::{AllocFunc, InstOrigin, VregOrigin};
use super::interference::{self, Interference};
use super::{
    AllocConfig, AllocError, AllocInput, Allocation, Edit, Location, PhysReg, PredReg, RegWidth,
    SpillSlot, SpillSlotInfo, SpilledOperand,
};

/// How many budgets above the pressure bound to try before falling back to an unbounded
/// colouring (or to the cap).
const SEARCH_SPAN: u32 = 16;
/// A budget no function reaches: colouring with it never fails.
const UNBOUNDED: u32 = 1 << 24;

/// Allocates registers for one function. Deterministic: the same input and config give
/// the same allocation.
pub fn allocate(input: &impl AllocInput, config: &AllocConfig) -> Result<Allocation, AllocError> {
    let mut f = AllocFunc::from_input(input)?;
    let referenced = f.referenced_input_regs();
    let mut spilled = vec![false; f.num_input_regs];
    let mut round0: Option<Interference> = None;
    let mut pred_colors: Option<Vec<Option<u32>>> = None;
    loop {
        let live = Liveness::with_function(&f);
        let graph = interference::build(&f, &live);
        let units: Vec<u32> = f.widths.iter().map(|w| w.units()).collect();
        let spillable: Vec<bool> = (0..f.widths.len())
            .map(|r| f.is_spillable(RegId::new(r)))
            .collect();
        let is_live_node = |r: usize| match f.origins[r] {
            VregOrigin::Input => referenced[r] && !spilled[r],
            VregOrigin::SpillTemp { .. } => true,
        };
        if pred_colors.is_none() {
            let nodes: Vec<RegId> = (0..f.widths.len())
                .filter(|&r| is_live_node(r) && f.widths[r].is_predicate())
                .map(RegId::new)
                .collect();
            let problem = Problem {
                nodes: &nodes,
                adj: &graph.adj,
                units: &units,
                moves: &graph.moves,
                ref_weight: &graph.ref_weight,
                spillable: &spillable,
                def_order: &graph.def_order,
            };
            match minimise(&problem, graph.pred_pressure, None) {
                Ok(c) => pred_colors = Some(c.color),
                Err(_) => {
                    return Err(AllocError::InvalidInput(
                        "predicate colouring failed without a cap".into(),
                    ))
                }
            }
        }
        let nodes: Vec<RegId> = (0..f.widths.len())
            .filter(|&r| is_live_node(r) && !f.widths[r].is_predicate())
            .map(RegId::new)
            .collect();
        let problem = Problem {
            nodes: &nodes,
            adj: &graph.adj,
            units: &units,
            moves: &graph.moves,
            ref_weight: &graph.ref_weight,
            spillable: &spillable,
            def_order: &graph.def_order,
        };
        let outcome = minimise(&problem, graph.gpr_pressure, config.max_registers);
        match outcome {
            Ok(colouring) => {
                let preds = pred_colors.unwrap_or_default();
                let round0 = round0.as_ref().unwrap_or(&graph);
                return Ok(assemble(
                    &f,
                    &referenced,
                    &spilled,
                    &colouring.color,
                    &preds,
                    round0,
                ));
            }
            Err(failed) => {
                let cap = config.max_registers.unwrap_or(UNBOUNDED);
                let victims = choose_spills(&f, &graph, &failed, &spilled, cap)?;
                for v in victims {
                    spilled[v.index()] = true;
                    f.spill(v);
                }
            }
        }
        if round0.is_none() {
            round0 = Some(graph);
        }
    }
}

/// The colouring with the smallest budget from `lower` upwards whose registers fit under
/// the cap, or the failed colouring at the cap.
///
/// Optimistic colouring is not monotone in the budget — a larger budget changes which
/// copies coalesce and which nodes look hard — so a colouring with budget above the cap can
/// still use no more registers than the cap; the search accepts it.
fn minimise(p: &Problem, lower: u32, cap: Option<u32>) -> Result<Colouring, Colouring> {
    let lower = lower.max(1);
    let fits = |c: &Colouring| c.uncolored.is_empty() && cap.is_none_or(|cap| c.used <= cap);
    for k in lower..=lower + SEARCH_SPAN {
        let c = color::color(p, k);
        if fits(&c) {
            return Ok(c);
        }
    }
    let c = color::color(p, cap.unwrap_or(UNBOUNDED));
    if fits(&c) {
        Ok(c)
    } else {
        Err(c)
    }
}

/// Registers to spill after a failed colouring at the cap: every uncoloured spillable
/// group whole; for an uncoloured temporary, its cheapest spillable neighbour.
fn choose_spills(
    f: &AllocFunc,
    graph: &Interference,
    failed: &Colouring,
    spilled: &[bool],
    cap: u32,
) -> Result<Vec<RegId>, AllocError> {
    let mut victims = BTreeSet::new();
    for group in &failed.uncolored {
        if group.iter().all(|&r| f.is_spillable(r)) {
            victims.extend(group.iter().copied());
            continue;
        }
        let mut best: Option<(f64, RegId)> = None;
        for &t in group {
            for &n in &graph.adj[t.index()] {
                if !f.is_spillable(n) || spilled[n.index()] || victims.contains(&n) {
                    continue;
                }
                let degree = graph.adj[n.index()].len().max(1) as f64;
                let metric = graph.ref_weight[n.index()] / degree;
                let better = match best {
                    None => true,
                    Some((m, r)) => metric.total_cmp(&m).then(n.cmp(&r)).is_lt(),
                };
                if better {
                    best = Some((metric, n));
                }
            }
        }
        match best {
            Some((_, n)) => {
                victims.insert(n);
            }
            None if !victims.is_empty() => {}
            None => {
                let inst = group
                    .iter()
                    .find_map(|t| match f.origins[t.index()] {
                        VregOrigin::SpillTemp { at, .. } => Some(at),
                        VregOrigin::Input => None,
                    })
                    .unwrap_or_default();
                return Err(AllocError::CapTooSmall {
                    inst,
                    max_registers: cap,
                });
            }
        }
    }
    Ok(victims.into_iter().collect())
}

fn assemble(
    f: &AllocFunc,
    referenced: &[bool],
    spilled: &[bool],
    gpr: &[Option<u32>],
    preds: &[Option<u32>],
    round0: &Interference,
) -> Allocation {
    let color_of = |r: RegId| -> u32 {
        gpr.get(r.index())
            .copied()
            .flatten()
            .or_else(|| preds.get(r.index()).copied().flatten())
            .unwrap_or(0)
    };
    let (slot_of, spill_slots) = assign_slots(f, spilled, round0);
    let mut locations = Vec::with_capacity(f.num_input_regs);
    for r in (0..f.num_input_regs).map(RegId::new) {
        let loc = if !referenced[r.index()] {
            Location::Unused
        } else if let Some(s) = slot_of[r.index()] {
            Location::Spill(s)
        } else if f.widths[r.index()] == RegWidth::Pred {
            Location::Pred(PredReg(color_of(r)))
        } else {
            Location::Reg(PhysReg(color_of(r)))
        };
        locations.push(loc);
    }
    let mut spilled_operands = Vec::new();
    for (t, origin) in f.origins.iter().enumerate() {
        if let VregOrigin::SpillTemp { vreg, at } = *origin {
            spilled_operands.push(SpilledOperand {
                inst: at,
                vreg,
                reg: PhysReg(color_of(RegId::new(t))),
            });
        }
    }
    spilled_operands.sort();
    let mut edits = Vec::new();
    let mut coalesced_copies = Vec::new();
    for b in (0..f.num_blocks()).map(BlockId::new) {
        for &k in f.block_insts(b) {
            let inst = &f.insts[k.index()];
            let slot = |v: RegId| slot_of[v.index()].unwrap_or_default();
            match inst.origin {
                InstOrigin::Reload { before, vreg } => edits.push(Edit::Reload {
                    before,
                    vreg,
                    slot: slot(vreg),
                    reg: PhysReg(inst.defs.first().map_or(0, |&t| color_of(t))),
                }),
                InstOrigin::Spill { after, vreg } => edits.push(Edit::Spill {
                    after,
                    vreg,
                    slot: slot(vreg),
                    reg: PhysReg(inst.uses.first().map_or(0, |&t| color_of(t))),
                }),
                InstOrigin::Input(i) => {
                    if let Some(c) = inst.copy {
                        if color_of(c.dst) == color_of(c.src) {
                            coalesced_copies.push(i);
                        }
                    }
                }
            }
        }
    }
    coalesced_copies.sort();
    let mut registers_used = 0;
    let mut predicates_used = 0;
    for (r, w) in f.widths.iter().enumerate() {
        let c = match (gpr[r], preds.get(r).copied().flatten()) {
            (Some(c), _) | (None, Some(c)) => c,
            (None, None) => continue,
        };
        if w.is_predicate() {
            predicates_used = predicates_used.max(c + 1);
        } else {
            registers_used = registers_used.max(c + w.units());
        }
    }
    Allocation {
        locations,
        spilled_operands,
        edits,
        spill_slots,
        registers_used,
        predicates_used,
        coalesced_copies,
    }
}

/// Spill slots, shared by spilled registers of one width that never interfere (in the
/// graph of the input's registers), laid out with natural alignment.
fn assign_slots(
    f: &AllocFunc,
    spilled: &[bool],
    round0: &Interference,
) -> (Vec<Option<SpillSlot>>, Vec<SpillSlotInfo>) {
    let mut slot_of = vec![None; spilled.len()];
    let mut slots: Vec<(RegWidth, Vec<RegId>)> = Vec::new();
    for v in (0..spilled.len()).filter(|&v| spilled[v]).map(RegId::new) {
        let w = f.widths[v.index()];
        let shared = slots.iter().position(|(sw, occupants)| {
            *sw == w && occupants.iter().all(|&o| !round0.interferes(o, v))
        });
        let s = match shared {
            Some(s) => s,
            None => {
                slots.push((w, Vec::new()));
                slots.len() - 1
            }
        };
        slots[s].1.push(v);
        slot_of[v.index()] = Some(SpillSlot(s as u32));
    }
    let mut offset = 0u32;
    let mut infos = Vec::with_capacity(slots.len());
    for (w, _) in &slots {
        let size = 4 * w.units();
        offset = offset.div_ceil(size) * size;
        infos.push(SpillSlotInfo { width: *w, offset });
        offset += size;
    }
    (slot_of, infos)
}

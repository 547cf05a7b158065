//! An independent check of an ORF/LRF allocation (regalloc2's checker, applied to the
//! hierarchy): a forward must-dataflow over what every ORF entry and LRF bank holds, and
//! whether the MRF holds the current value of each register, proves that every read finds
//! the current value of its register at the level its annotation names. It also enforces
//! the structural rules: entries within the configured ORF, the LRF only on the private
//! datapath, in the operand slot's bank when split and for 32-bit values only, no
//! long-latency result in the ORF or LRF, and every register operand annotated.
//!
//! The check uses only the function, the strand boundaries and the annotations, not the
//! allocator's def-use chains or regions.

use ir::analysis::dataflow::{solve, Analysis, Direction, JoinSemiLattice, ResultsVisitor};
use ir::analysis::BitSet;
use ir::{BlockId, Function, InstId, RegId, RegisterEffects};

use super::{register_units, Annotations, LrfMode, OrfLrfConfig, ReadFrom, WriteTo};
use crate::inst_info::{datapath, result_latency, OperandRef, ResultLatency};

/// A violation, naming the instruction.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{inst}: {what}")]
pub struct CheckError {
    pub inst: InstId,
    pub what: String,
}

/// What one storage slot (an ORF entry or LRF bank) holds: 32-bit part `unit` of the
/// current value of `reg`, or nothing known.
type Slot = Option<(RegId, u8)>;

#[derive(Clone, Debug, PartialEq, Eq)]
struct Contents {
    reached: bool,
    orf: Vec<Slot>,
    lrf: Vec<Slot>,
    /// Registers whose current value the MRF may not hold.
    mrf_stale: BitSet<RegId>,
}

impl JoinSemiLattice for Contents {
    fn join(&mut self, other: &Self) -> bool {
        if !other.reached {
            return false;
        }
        if !self.reached {
            self.clone_from(other);
            return true;
        }
        let mut changed = self.mrf_stale.union_with(&other.mrf_stale);
        for (a, b) in self
            .orf
            .iter_mut()
            .zip(&other.orf)
            .chain(self.lrf.iter_mut().zip(&other.lrf))
        {
            if a.is_some() && a != b {
                *a = None;
                changed = true;
            }
        }
        changed
    }
}

struct Flow<'a> {
    a: &'a Annotations,
    units: Vec<u8>,
    orf_entries: usize,
    lrf_banks: usize,
}

impl Flow<'_> {
    fn slots_mut<'s>(&self, c: &'s mut Contents) -> impl Iterator<Item = &'s mut Slot> {
        c.orf.iter_mut().chain(c.lrf.iter_mut())
    }
}

impl<G: RegisterEffects + ?Sized> Analysis<G> for Flow<'_> {
    type Domain = Contents;
    const DIRECTION: Direction = Direction::Forward;

    fn bottom_value(&self, g: &G) -> Contents {
        Contents {
            reached: false,
            orf: vec![None; self.orf_entries],
            lrf: vec![None; self.lrf_banks],
            mrf_stale: BitSet::new_empty(g.num_regs()),
        }
    }

    fn initialize_boundary(&self, _g: &G, state: &mut Contents) {
        state.reached = true;
    }

    fn apply_inst_effect(&self, g: &G, state: &mut Contents, inst: InstId) {
        if !state.reached {
            return;
        }
        // Read-operand loads fill the ORF as the operand passes.
        for (k, &r) in g.uses(inst).iter().enumerate() {
            if let Some(entry) = self.a.fills(inst)[k] {
                for unit in 0..self.units[r.index()] {
                    if let Some(slot) = state.orf.get_mut(usize::from(entry + unit)) {
                        *slot = Some((r, unit));
                    }
                }
            }
        }
        let partial = g.defs_are_partial(inst);
        for (k, &r) in g.defs(inst).iter().enumerate() {
            let w = self.a.writes(inst)[k];
            let targets: Vec<(bool, usize)> = target_slots(w, self.units[r.index()]);
            let orf_len = state.orf.len();
            // Copies of the old value elsewhere are stale in the lanes this writes.
            for (index, slot) in self.slots_mut(state).enumerate() {
                let targeted = targets
                    .iter()
                    .any(|&(lrf, i)| (if lrf { orf_len + i } else { i }) == index);
                if !targeted && matches!(slot, Some((reg, _)) if *reg == r) {
                    *slot = None;
                }
            }
            for (unit, &(lrf, i)) in targets.iter().enumerate() {
                let slot = if lrf {
                    state.lrf.get_mut(i)
                } else {
                    state.orf.get_mut(i)
                };
                if let Some(slot) = slot {
                    let new = Some((r, unit as u8));
                    // A guarded write leaves the other lanes as they were.
                    *slot = if !partial || *slot == new { new } else { None };
                }
            }
            if !w.mrf {
                state.mrf_stale.insert(r);
            } else if !partial {
                state.mrf_stale.remove(r);
            }
        }
        if self.a.strands.ends_strand(inst) {
            state.orf.iter_mut().for_each(|s| *s = None);
            state.lrf.iter_mut().for_each(|s| *s = None);
        }
    }
}

/// The (is-LRF, index) slots a write fills, one per 32-bit register.
fn target_slots(w: WriteTo, units: u8) -> Vec<(bool, usize)> {
    let mut out = Vec::new();
    if let Some(e) = w.orf {
        out.extend((0..units).map(|u| (false, usize::from(e + u))));
    }
    if let Some(b) = w.lrf {
        out.push((true, usize::from(b)));
    }
    out
}

struct Verify<'a> {
    f: &'a Function,
    a: &'a Annotations,
    config: &'a OrfLrfConfig,
    units: &'a [u8],
    errors: Vec<CheckError>,
}

impl Verify<'_> {
    fn error(&mut self, inst: InstId, what: String) {
        self.errors.push(CheckError { inst, what });
    }

    /// The rules that do not depend on dataflow.
    fn structure(&mut self, inst: InstId) {
        let f = self.f;
        let unit = datapath(&f.inst(inst).op);
        let long = result_latency(
            &f.inst(inst).op,
            self.config.strands.shared_memory_is_long_latency,
        ) == ResultLatency::Long;
        let n_orf = self.config.orf_entries;
        let banks = self.config.lrf.banks();
        // Registers an LRF entry may hold here: a 64-bit value only as halves, which only
        // integer ALU instructions produce and read.
        let lrf_units = if super::allocate::is_integer_alu(&f.inst(inst).op) {
            self.config.lrf_max_units()
        } else {
            1
        };
        let sites = self.a.sites.uses(inst);
        for (k, &r) in f.uses(inst).iter().enumerate() {
            let units = self.units[r.index()];
            let read = self.a.reads(inst)[k];
            let name = &f.reg(r).name;
            match read {
                ReadFrom::Pred if units != 0 => self.error(
                    inst,
                    format!("{name} is not a predicate but reads the predicate file"),
                ),
                ReadFrom::Mrf | ReadFrom::Orf { .. } | ReadFrom::Lrf { .. } if units == 0 => {
                    self.error(inst, format!("predicate {name} annotated {read:?}"))
                }
                ReadFrom::Orf { entry } if entry + units > n_orf => self.error(
                    inst,
                    format!("{name} reads ORF entries {entry}+{units} of {n_orf}"),
                ),
                ReadFrom::Lrf { bank } => {
                    if !unit.is_private() {
                        self.error(
                            inst,
                            format!("{name} read from the LRF by the {} unit", unit.as_str()),
                        );
                    }
                    if units == 0 || units > lrf_units || bank >= banks {
                        self.error(
                            inst,
                            format!("{name} ({units} registers) in LRF bank {bank} of {banks}"),
                        );
                    }
                    if self.config.lrf == LrfMode::Split && sites[k] != OperandRef::Src(bank) {
                        self.error(
                            inst,
                            format!(
                                "{name} read in slot {:?} from split LRF bank {bank}",
                                sites[k]
                            ),
                        );
                    }
                }
                _ => {}
            }
            if let Some(entry) = self.a.fills(inst)[k] {
                if read != ReadFrom::Mrf || entry + units > n_orf {
                    self.error(
                        inst,
                        format!("{name} fills ORF entry {entry} from {read:?}"),
                    );
                }
            }
        }
        for (k, &r) in f.defs(inst).iter().enumerate() {
            let units = self.units[r.index()];
            let w = self.a.writes(inst)[k];
            let name = &f.reg(r).name;
            if (units == 0) != w.pred {
                self.error(
                    inst,
                    format!("{name} written to the predicate file: {}", w.pred),
                );
            }
            if units == 0 {
                continue;
            }
            if w.orf.is_some() && w.lrf.is_some() {
                self.error(inst, format!("{name} written to both the ORF and the LRF"));
            }
            if (w.orf.is_some() || w.lrf.is_some()) && long {
                self.error(
                    inst,
                    format!("long-latency result {name} written to the ORF or LRF"),
                );
            }
            if let Some(e) = w.orf {
                if e + units > n_orf {
                    self.error(
                        inst,
                        format!("{name} writes ORF entries {e}+{units} of {n_orf}"),
                    );
                }
            }
            if let Some(b) = w.lrf {
                if !unit.is_private() || units == 0 || units > lrf_units || b >= banks {
                    self.error(
                        inst,
                        format!(
                            "{name} ({units} registers, {} unit) written to LRF bank {b}",
                            unit.as_str()
                        ),
                    );
                }
            }
            if !w.mrf && w.orf.is_none() && w.lrf.is_none() {
                self.error(inst, format!("{name} is written nowhere"));
            }
        }
    }
}

impl ResultsVisitor<Contents> for Verify<'_> {
    fn visit_before_inst(&mut self, inst: InstId, _index: usize, state: &Contents) {
        self.structure(inst);
        if !state.reached {
            return;
        }
        let f = self.f;
        for (k, &r) in f.uses(inst).iter().enumerate() {
            let units = self.units[r.index()];
            let name = &f.reg(r).name;
            match self.a.reads(inst)[k] {
                ReadFrom::Mrf if state.mrf_stale.contains(r) => self.error(
                    inst,
                    format!("{name} read from the MRF, which may not hold its current value"),
                ),
                ReadFrom::Orf { entry } => {
                    for unit in 0..units {
                        let slot = state.orf.get(usize::from(entry + unit)).copied().flatten();
                        if slot != Some((r, unit)) {
                            self.error(
                                inst,
                                format!(
                                    "{name} read from ORF entry {}, which holds {slot:?}",
                                    entry + unit
                                ),
                            );
                        }
                    }
                }
                ReadFrom::Lrf { bank } => {
                    let slot = state.lrf.get(usize::from(bank)).copied().flatten();
                    if slot != Some((r, 0)) {
                        self.error(
                            inst,
                            format!("{name} read from LRF bank {bank}, which holds {slot:?}"),
                        );
                    }
                }
                _ => {}
            }
        }
    }
}

/// Checks `a` against `f` (see the module docs). Returns every violation found.
pub fn check(f: &Function, a: &Annotations, config: &OrfLrfConfig) -> Result<(), Vec<CheckError>> {
    let mut errors = Vec::new();
    if a.reads.len() != a.sites.num_uses()
        || a.writes.len() != a.sites.num_defs()
        || a.sites.num_uses()
            != (0..f.num_insts())
                .map(|i| f.uses(InstId::new(i)).len())
                .sum::<usize>()
        || a.strands.num_insts() != f.num_insts()
    {
        return Err(vec![CheckError {
            inst: InstId(0),
            what: "the annotations do not belong to this function".to_string(),
        }]);
    }
    let units: Vec<u8> = f.regs.iter().map(|r| register_units(r.class)).collect();
    let flow = Flow {
        a,
        units: units.clone(),
        orf_entries: usize::from(config.orf_entries),
        lrf_banks: usize::from(config.lrf.banks()),
    };
    let results = solve(flow, f);
    let mut scratch = Contents {
        reached: false,
        orf: Vec::new(),
        lrf: Vec::new(),
        mrf_stale: BitSet::new_empty(f.num_regs()),
    };
    let mut verify = Verify {
        f,
        a,
        config,
        units: &units,
        errors: Vec::new(),
    };
    for b in 0..f.blocks.len() {
        results.visit_block(f, BlockId::new(b), &mut scratch, &mut verify);
    }
    errors.append(&mut verify.errors);
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

//! Register liveness: which registers hold a value that some later instruction may read.
//!
//! The classic backward may-analysis (Kildall 1973; Aho, Sethi and Ullman §10.6), solved
//! by [`super::dataflow`]: `live_before(i) = uses(i) ∪ (live_after(i) − defs(i))`, where a
//! partial definition (a guarded write, or one that leaves some lanes alone) removes
//! nothing, because the old value survives in the lanes it does not write.
//!
//! From the fixed point this module keeps, per block, the live-in and live-out sets, and
//! per source operand a *dead-after* bit: the value the operand reads is needed by no later
//! instruction on any path, so its register can be released (or its value bypassed to a
//! cache, as the register-file designs do) once the instruction has read it. It also
//! measures register pressure, the number of registers that must hold values at once:
//! at an instruction that is the larger of `|live_before|` (every operand is read) and
//! `|live_after ∪ defs|` (every result is written, even one nobody reads), so a result may
//! reuse the register of a source that dies at the same instruction.

use std::fmt::Write;

use serde::Serialize;

use crate::entity::{BlockId, InstId, RegId};
use crate::graph::RegisterEffects;

use super::bitset::BitSet;
use super::dataflow::{solve, Analysis, Direction, ResultsVisitor};
use super::Namer;

/// The liveness dataflow problem: backward, union, nothing live at function exit.
#[derive(Clone, Copy, Debug, Default)]
pub struct LiveRegisters;

impl<G: RegisterEffects + ?Sized> Analysis<G> for LiveRegisters {
    type Domain = BitSet<RegId>;
    const DIRECTION: Direction = Direction::Backward;

    fn bottom_value(&self, g: &G) -> BitSet<RegId> {
        BitSet::new_empty(g.num_regs())
    }

    fn initialize_boundary(&self, _g: &G, _state: &mut BitSet<RegId>) {
        // A kernel's registers die with it: nothing is live after an exit.
    }

    #[inline]
    fn apply_inst_effect(&self, g: &G, state: &mut BitSet<RegId>, inst: InstId) {
        if !g.defs_are_partial(inst) {
            for &def in g.defs(inst) {
                state.remove(def);
            }
        }
        for &used in g.uses(inst) {
            state.insert(used);
        }
    }
}

/// Liveness of every register at block boundaries, dead-after bits of every source
/// operand, and register pressure.
#[derive(Clone, Debug, Default)]
pub struct Liveness {
    valid: bool,
    live_in: Vec<BitSet<RegId>>,
    live_out: Vec<BitSet<RegId>>,
    /// Where each instruction's operands start in `dead_after`.
    operand_start: Vec<u32>,
    dead_after: BitSet,
    inst_pressure: Vec<u32>,
    block_pressure: Vec<u32>,
    max_pressure: u32,
}

impl Liveness {
    /// An empty, invalid analysis; [`Liveness::compute`] fills it.
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_function<G: RegisterEffects + ?Sized>(g: &G) -> Self {
        let mut liveness = Self::new();
        liveness.compute(g);
        liveness
    }

    pub fn compute<G: RegisterEffects + ?Sized>(&mut self, g: &G) {
        let results = solve(LiveRegisters, g);

        let mut operand_start = Vec::with_capacity(g.num_insts() + 1);
        operand_start.push(0u32);
        for i in 0..g.num_insts() {
            let next = operand_start[i] + g.uses(InstId::new(i)).len() as u32;
            operand_start.push(next);
        }
        let mut walker = Walker {
            g,
            live_in: Vec::with_capacity(g.num_blocks()),
            dead_after: BitSet::new_empty(operand_start[g.num_insts()] as usize),
            operand_start: &operand_start,
            inst_pressure: vec![0; g.num_insts()],
            block_pressure: 0,
        };
        let mut block_pressure = Vec::with_capacity(g.num_blocks());
        let mut state = BitSet::new_empty(g.num_regs());
        for b in 0..g.num_blocks() {
            walker.block_pressure = 0;
            results.visit_block(g, BlockId::new(b), &mut state, &mut walker);
            block_pressure.push(walker.block_pressure);
        }
        let Walker {
            live_in,
            dead_after,
            inst_pressure,
            ..
        } = walker;
        let (_, live_out) = results.into_parts();

        self.max_pressure = block_pressure.iter().copied().max().unwrap_or(0);
        self.live_in = live_in;
        self.live_out = live_out;
        self.operand_start = operand_start;
        self.dead_after = dead_after;
        self.inst_pressure = inst_pressure;
        self.block_pressure = block_pressure;
        self.valid = true;
    }

    pub fn clear(&mut self) {
        *self = Self::default();
    }

    pub fn is_valid(&self) -> bool {
        self.valid
    }

    /// Registers live at the start of `block`.
    pub fn live_in(&self, block: BlockId) -> &BitSet<RegId> {
        &self.live_in[block.index()]
    }

    /// Registers live at the end of `block`.
    pub fn live_out(&self, block: BlockId) -> &BitSet<RegId> {
        &self.live_out[block.index()]
    }

    /// True if the value that operand `operand` of `inst` (an index into `uses(inst)`)
    /// reads is needed by no later instruction on any path. Every operand reading the same
    /// register of one instruction gets the same answer.
    pub fn is_dead_after(&self, inst: InstId, operand: usize) -> bool {
        let start = self.operand_start[inst.index()] as usize;
        debug_assert!(start + operand < self.operand_start[inst.index() + 1] as usize);
        self.dead_after.contains(start + operand)
    }

    /// The dead-after bits of `inst`'s operands, parallel to `uses(inst)`.
    pub fn dead_after_operands(&self, inst: InstId) -> impl Iterator<Item = bool> + '_ {
        let start = self.operand_start[inst.index()] as usize;
        let end = self.operand_start[inst.index() + 1] as usize;
        (start..end).map(|k| self.dead_after.contains(k))
    }

    /// Registers that must hold values while `inst` executes (see the module docs).
    pub fn pressure_at(&self, inst: InstId) -> u32 {
        self.inst_pressure[inst.index()]
    }

    /// The largest pressure at any point of `block`, its boundaries included.
    pub fn block_pressure(&self, block: BlockId) -> u32 {
        self.block_pressure[block.index()]
    }

    /// The largest pressure anywhere in the function.
    pub fn max_pressure(&self) -> u32 {
        self.max_pressure
    }

    /// Calls `f(index, inst, live_after)` for the instructions of `block` from last to
    /// first, with the registers live just after each. `state` is scratch space, reused to
    /// avoid allocation.
    pub fn for_each_live_after<G: RegisterEffects + ?Sized>(
        &self,
        g: &G,
        block: BlockId,
        state: &mut BitSet<RegId>,
        mut f: impl FnMut(usize, InstId, &BitSet<RegId>),
    ) {
        state.clone_from(&self.live_out[block.index()]);
        for (index, &inst) in g.block_insts(block).iter().enumerate().rev() {
            f(index, inst, state);
            Analysis::<G>::apply_inst_effect(&LiveRegisters, g, state, inst);
        }
    }

    /// The registers live just after each instruction of `block`, in program order.
    pub fn live_after_each<G: RegisterEffects + ?Sized>(
        &self,
        g: &G,
        block: BlockId,
    ) -> Vec<BitSet<RegId>> {
        let mut sets = vec![BitSet::new_empty(g.num_regs()); g.block_insts(block).len()];
        let mut state = BitSet::new_empty(g.num_regs());
        self.for_each_live_after(g, block, &mut state, |index, _, live| {
            sets[index].clone_from(live);
        });
        sets
    }

    /// Numbers only, for `--emit liveness` as JSON.
    pub fn summary(&self) -> LivenessSummary {
        LivenessSummary {
            blocks: (0..self.live_in.len())
                .map(|b| BlockLiveness {
                    block: b as u32,
                    live_in: self.live_in[b].iter().map(|r| r.0).collect(),
                    live_out: self.live_out[b].iter().map(|r| r.0).collect(),
                    max_pressure: self.block_pressure[b],
                })
                .collect(),
            max_pressure: self.max_pressure,
        }
    }

    /// Per block its live-in, live-out and pressure; per instruction (`inst | uses |
    /// live-after | pressure`) its operands with `(dead)` on those read for the last time,
    /// the registers live after it, and its pressure.
    pub fn dump<G: RegisterEffects + ?Sized>(&self, g: &G, names: &Namer) -> String {
        let mut out = String::from("liveness:\n");
        for b in 0..g.num_blocks() {
            let block = BlockId::new(b);
            writeln!(
                out,
                "  {}: in {}, out {}, pressure {}",
                (names.block)(block),
                names.regs(self.live_in(block).iter()),
                names.regs(self.live_out(block).iter()),
                self.block_pressure(block)
            )
            .expect("writing to a String cannot fail");
            let live_after = self.live_after_each(g, block);
            for (&inst, live) in g.block_insts(block).iter().zip(&live_after) {
                let operands: Vec<String> = g
                    .uses(inst)
                    .iter()
                    .zip(self.dead_after_operands(inst))
                    .map(|(&r, dead)| {
                        let name = (names.reg)(r);
                        if dead {
                            format!("{name}(dead)")
                        } else {
                            name
                        }
                    })
                    .collect();
                writeln!(
                    out,
                    "    {} | uses [{}] | live-after {} | pressure {}",
                    (names.inst)(inst),
                    operands.join(" "),
                    names.regs(live.iter()),
                    self.pressure_at(inst)
                )
                .expect("writing to a String cannot fail");
            }
        }
        writeln!(out, "  max pressure {}", self.max_pressure)
            .expect("writing to a String cannot fail");
        out
    }
}

/// Serializable liveness numbers of one function.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LivenessSummary {
    pub blocks: Vec<BlockLiveness>,
    pub max_pressure: u32,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BlockLiveness {
    pub block: u32,
    pub live_in: Vec<u32>,
    pub live_out: Vec<u32>,
    pub max_pressure: u32,
}

/// Walks each block backward from its live-out set, recording what [`Liveness`] keeps.
struct Walker<'a, G: ?Sized> {
    g: &'a G,
    live_in: Vec<BitSet<RegId>>,
    operand_start: &'a [u32],
    dead_after: BitSet,
    inst_pressure: Vec<u32>,
    block_pressure: u32,
}

impl<G: RegisterEffects + ?Sized> ResultsVisitor<BitSet<RegId>> for Walker<'_, G> {
    fn visit_block_end(&mut self, _block: BlockId, live_out: &BitSet<RegId>) {
        self.block_pressure = self.block_pressure.max(live_out.count() as u32);
    }

    fn visit_after_inst(&mut self, inst: InstId, _index: usize, live_after: &BitSet<RegId>) {
        let g = self.g;
        let defs = g.defs(inst);
        let kills = !g.defs_are_partial(inst);
        let start = self.operand_start[inst.index()] as usize;
        for (k, &r) in g.uses(inst).iter().enumerate() {
            if !live_after.contains(r) || (kills && defs.contains(&r)) {
                self.dead_after.insert(start + k);
            }
        }
        // |live_after ∪ defs|, counting a register defined twice once.
        let mut written = live_after.count();
        for (k, &d) in defs.iter().enumerate() {
            if !live_after.contains(d) && !defs[..k].contains(&d) {
                written += 1;
            }
        }
        self.inst_pressure[inst.index()] = written as u32;
    }

    fn visit_before_inst(&mut self, inst: InstId, _index: usize, live_before: &BitSet<RegId>) {
        let p = &mut self.inst_pressure[inst.index()];
        *p = (*p).max(live_before.count() as u32);
        self.block_pressure = self.block_pressure.max(*p);
    }

    fn visit_block_start(&mut self, _block: BlockId, live_in: &BitSet<RegId>) {
        self.block_pressure = self.block_pressure.max(live_in.count() as u32);
        self.live_in.push(live_in.clone());
    }
}

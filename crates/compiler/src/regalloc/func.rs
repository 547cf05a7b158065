//! The allocator's own copy of the function: blocks of instructions with their register
//! effects, validated once on the way in. Spill rewriting edits this copy — each reference
//! of a spilled register becomes a fresh temporary, loaded by a reload pseudo-instruction
//! just before and stored by a spill pseudo-instruction just after — so liveness and
//! interference are simply recomputed on it in the next round.

use ir::{BlockId, ControlFlowGraph, InstId, RegId, RegisterEffects};

use super::{AllocError, AllocInput, Copy, RegWidth};

/// Where a register of [`AllocFunc`] comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum VregOrigin {
    /// A register of the input, same index.
    Input,
    /// Holds input register `vreg` around instruction `at`; never spilled itself.
    SpillTemp { vreg: RegId, at: InstId },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum InstOrigin {
    Input(InstId),
    Reload { before: InstId, vreg: RegId },
    Spill { after: InstId, vreg: RegId },
}

#[derive(Clone, Debug)]
pub(crate) struct Inst {
    pub origin: InstOrigin,
    /// Distinct registers read.
    pub uses: Vec<RegId>,
    /// Distinct registers written.
    pub defs: Vec<RegId>,
    pub partial: bool,
    pub copy: Option<Copy>,
    /// 10^loop depth: how often it runs relative to straight-line code.
    pub weight: f64,
}

#[derive(Clone, Debug)]
pub(crate) struct AllocFunc {
    entry: BlockId,
    succs: Vec<Vec<BlockId>>,
    preds: Vec<Vec<BlockId>>,
    block_insts: Vec<Vec<InstId>>,
    pub insts: Vec<Inst>,
    pub widths: Vec<RegWidth>,
    pub origins: Vec<VregOrigin>,
    /// Registers of the input: `0..num_input_regs`.
    pub num_input_regs: usize,
}

/// Deepest loop nest whose weight is distinguished; deeper loops weigh the same, which
/// keeps costs finite.
const MAX_WEIGHT_DEPTH: u32 = 8;

fn dedup_in_order(regs: &[RegId]) -> Vec<RegId> {
    let mut out: Vec<RegId> = Vec::with_capacity(regs.len());
    for &r in regs {
        if !out.contains(&r) {
            out.push(r);
        }
    }
    out
}

impl AllocFunc {
    /// Copies and validates `input`: every index in range, every instruction in exactly
    /// one block.
    pub(crate) fn from_input(input: &impl AllocInput) -> Result<Self, AllocError> {
        let bad = |msg: String| AllocError::InvalidInput(msg);
        let num_blocks = input.num_blocks();
        let num_insts = input.num_insts();
        let num_regs = input.num_regs();
        if input.entry().index() >= num_blocks {
            return Err(bad(format!("entry block {} out of range", input.entry())));
        }
        let mut succs = Vec::with_capacity(num_blocks);
        let mut preds = vec![Vec::new(); num_blocks];
        let mut block_insts = Vec::with_capacity(num_blocks);
        let mut inst_block: Vec<Option<BlockId>> = vec![None; num_insts];
        for b in (0..num_blocks).map(BlockId::new) {
            let s = dedup_blocks(input.successors(b));
            for &t in &s {
                if t.index() >= num_blocks {
                    return Err(bad(format!("{b} has successor {t} out of range")));
                }
                preds[t.index()].push(b);
            }
            succs.push(s);
            for &i in input.block_insts(b) {
                match inst_block.get_mut(i.index()) {
                    None => return Err(bad(format!("{b} lists {i}, out of range"))),
                    Some(Some(other)) => {
                        return Err(bad(format!("{i} is listed by {other} and {b}")))
                    }
                    Some(slot) => *slot = Some(b),
                }
            }
            block_insts.push(input.block_insts(b).to_vec());
        }
        let mut widths = Vec::with_capacity(num_regs);
        for r in (0..num_regs).map(RegId::new) {
            widths.push(input.reg_width(r));
        }
        let mut insts = Vec::with_capacity(num_insts);
        for i in (0..num_insts).map(InstId::new) {
            let uses = dedup_in_order(input.uses(i));
            let defs = dedup_in_order(input.defs(i));
            for &r in uses.iter().chain(&defs) {
                if r.index() >= num_regs {
                    return Err(bad(format!("{i} references {r}, out of range")));
                }
            }
            let partial = input.defs_are_partial(i);
            let copy = input.copy(i).filter(|c| {
                !partial
                    && c.dst.index() < num_regs
                    && c.src.index() < num_regs
                    && widths[c.dst.index()] == widths[c.src.index()]
                    && defs.contains(&c.dst)
                    && uses.contains(&c.src)
            });
            let depth = inst_block[i.index()]
                .map(|b| input.loop_depth(b))
                .unwrap_or(0);
            insts.push(Inst {
                origin: InstOrigin::Input(i),
                uses,
                defs,
                partial,
                copy,
                weight: 10f64.powi(depth.min(MAX_WEIGHT_DEPTH) as i32),
            });
        }
        Ok(AllocFunc {
            entry: input.entry(),
            succs,
            preds,
            block_insts,
            insts,
            origins: vec![VregOrigin::Input; num_regs],
            widths,
            num_input_regs: num_regs,
        })
    }

    pub(crate) fn num_blocks(&self) -> usize {
        self.succs.len()
    }

    /// True for input registers, which may be spilled; temporaries may not.
    pub(crate) fn is_spillable(&self, r: RegId) -> bool {
        self.origins[r.index()] == VregOrigin::Input
    }

    /// Input registers some instruction reads or writes.
    pub(crate) fn referenced_input_regs(&self) -> Vec<bool> {
        let mut seen = vec![false; self.num_input_regs];
        for inst in &self.insts {
            if let InstOrigin::Input(_) = inst.origin {
                for &r in inst.uses.iter().chain(&inst.defs) {
                    if let Some(s) = seen.get_mut(r.index()) {
                        *s = true;
                    }
                }
            }
        }
        seen
    }

    /// Rewrites every reference of input register `v` to a temporary of its own, reloaded
    /// just before the instruction if it reads `v` (or writes it only partially) and
    /// spilled just after if it writes `v`.
    pub(crate) fn spill(&mut self, v: RegId) {
        let width = self.widths[v.index()];
        for b in 0..self.block_insts.len() {
            let old = std::mem::take(&mut self.block_insts[b]);
            let mut new = Vec::with_capacity(old.len());
            for k in old {
                let inst = &self.insts[k.index()];
                let InstOrigin::Input(at) = inst.origin else {
                    new.push(k);
                    continue;
                };
                let reads = inst.uses.contains(&v);
                let writes = inst.defs.contains(&v);
                if !reads && !writes {
                    new.push(k);
                    continue;
                }
                let reload = reads || (writes && inst.partial);
                let weight = inst.weight;
                let t = RegId::new(self.widths.len());
                self.widths.push(width);
                self.origins.push(VregOrigin::SpillTemp { vreg: v, at });
                let inst = &mut self.insts[k.index()];
                for r in inst.uses.iter_mut().chain(inst.defs.iter_mut()) {
                    if *r == v {
                        *r = t;
                    }
                }
                if let Some(c) = &mut inst.copy {
                    if c.dst == v {
                        c.dst = t;
                    }
                    if c.src == v {
                        c.src = t;
                    }
                }
                if reload {
                    new.push(self.push_inst(Inst {
                        origin: InstOrigin::Reload {
                            before: at,
                            vreg: v,
                        },
                        uses: vec![],
                        defs: vec![t],
                        partial: false,
                        copy: None,
                        weight,
                    }));
                }
                new.push(k);
                if writes {
                    new.push(self.push_inst(Inst {
                        origin: InstOrigin::Spill { after: at, vreg: v },
                        uses: vec![t],
                        defs: vec![],
                        partial: false,
                        copy: None,
                        weight,
                    }));
                }
            }
            self.block_insts[b] = new;
        }
    }

    fn push_inst(&mut self, inst: Inst) -> InstId {
        self.insts.push(inst);
        InstId::new(self.insts.len() - 1)
    }
}

fn dedup_blocks(blocks: &[BlockId]) -> Vec<BlockId> {
    let mut out: Vec<BlockId> = Vec::with_capacity(blocks.len());
    for &b in blocks {
        if !out.contains(&b) {
            out.push(b);
        }
    }
    out
}

impl ControlFlowGraph for AllocFunc {
    fn num_blocks(&self) -> usize {
        self.succs.len()
    }
    fn entry(&self) -> BlockId {
        self.entry
    }
    fn successors(&self, block: BlockId) -> &[BlockId] {
        &self.succs[block.index()]
    }
    fn predecessors(&self, block: BlockId) -> &[BlockId] {
        &self.preds[block.index()]
    }
}

impl RegisterEffects for AllocFunc {
    fn num_regs(&self) -> usize {
        self.widths.len()
    }
    fn num_insts(&self) -> usize {
        self.insts.len()
    }
    fn block_insts(&self, block: BlockId) -> &[InstId] {
        &self.block_insts[block.index()]
    }
    fn uses(&self, inst: InstId) -> &[RegId] {
        &self.insts[inst.index()].uses
    }
    fn defs(&self, inst: InstId) -> &[RegId] {
        &self.insts[inst.index()].defs
    }
    fn defs_are_partial(&self, inst: InstId) -> bool {
        self.insts[inst.index()].partial
    }
}

//! Liveness bits for CERF and LTRF+: per source operand, whether the register it reads is
//! dead after the instruction, so the hardware may release the register's storage (CERF
//! §III-C "ISA and compiler assistance": one bit per source operand `sa sb sc`; LTRF §3.2:
//! the "dead operand bit" that keeps LTRF+ from writing back or refetching dead registers).
//!
//! The storage these designs release is a *warp* register — all 32 lanes at once — so a bit
//! may only be set where no lane of the warp still needs the value. Plain CFG liveness
//! ([`ir::analysis::Liveness`]) answers for one thread: after a divergent branch it says a
//! register is dead at its last read on one path even when lanes that took the other path
//! will still read it. CERF: "We conservatively declare a warp register to death only when
//! all the 32 threads reach the same post-dominant instruction that reads it for the last
//! time."
//!
//! The model is the immediate-post-dominator reconvergence stack the emulator runs (Fung
//! et al., MICRO 2007): at a divergent branch `B` the warp splits, runs one path at a time
//! and reconverges at `ipdom(B)`. While lanes run inside `B`'s region (what its successors
//! reach before `ipdom(B)`), the other lanes wait either at `ipdom(B)` (their path is done)
//! or at the start of a successor of `B` whose path has not run yet. So a register read in
//! block `X` is dead for the warp only if it is dead for the thread and, for every
//! divergent branch whose region contains `X`, it is not live into `ipdom(B)` nor into a
//! successor of `B` that the running lanes did not come through (when only one successor
//! of `B` reaches `X`, the running lanes came through that one). Nested divergence is the
//! union over the branches. A branch is divergent if it is a guarded `bra` without
//! `.uni` with two different successors; no uniformity analysis is attempted, which is
//! conservative.
//!
//! A result gets a bit too: *dead at definition* when no lane of the warp reads the value
//! it writes (the register is not live after the instruction, and no lane waiting
//! elsewhere needs the warp register, by the same rule as a source's bit). Gebhart's
//! hardware RFC uses it to drop a value nobody reads instead of writing it back at
//! eviction (MICRO'11 §2.2, §6.2: "static liveness information to inhibit the writeback
//! of dead values").
//!
//! Liveness runs on the register numbering's cells ([`crate::ltrf::numbering`]): under the
//! allocator's numbering a register shared by a coalesced copy is not dead while either
//! value is live, and a 64-bit operand is dead only when both its registers are.

use std::fmt;

use ir::analysis::{BitSet, Liveness, PostDominatorTree};
use ir::{
    BlockId, ControlFlowGraph, Function, FunctionKind, InstId, Op, Program, RegClass,
    RegisterEffects,
};
use serde::{Deserialize, Serialize};

use crate::ltrf::numbering::{CellView, NumberingError, NumberingKind};
use crate::ltrf::{numbering_for, LtrfError};
use crate::regalloc::{Allocation, Location};

/// The dead-after bits of every source operand of one function, per thread and per warp.
#[derive(Clone, Debug)]
pub struct LivenessBits {
    /// Where each instruction's operands start in the bit sets (operands are the entries
    /// of [`RegisterEffects::uses`]: the guard, then sources, addresses included).
    operand_start: Vec<u32>,
    thread_dead: BitSet,
    warp_dead: BitSet,
    /// Where each instruction's results start in `def_dead`.
    def_start: Vec<u32>,
    /// Per result ([`RegisterEffects::defs`] of the function): no lane reads the value.
    def_dead: BitSet,
    divergent_branches: u32,
}

impl LivenessBits {
    /// The bits of `func` with registers numbered by `numbering` (which spills nothing).
    pub fn compute(func: &Function, numbering: &Allocation) -> Result<Self, NumberingError> {
        let view = CellView::new(func, numbering)?;
        let liveness = Liveness::with_function(&view);
        let (waiting, divergent_branches) = waiting_live(func, &view, &liveness);

        let mut operand_start = Vec::with_capacity(func.num_insts() + 1);
        operand_start.push(0u32);
        for i in 0..func.num_insts() {
            let next = operand_start[i] + func.uses(InstId::new(i)).len() as u32;
            operand_start.push(next);
        }
        let mut def_start = Vec::with_capacity(func.num_insts() + 1);
        def_start.push(0u32);
        for i in 0..func.num_insts() {
            let next = def_start[i] + func.defs(InstId::new(i)).len() as u32;
            def_start.push(next);
        }
        let total = operand_start[func.num_insts()] as usize;
        let mut thread_dead = BitSet::new_empty(total);
        let mut warp_dead = BitSet::new_empty(total);
        let mut def_dead = BitSet::new_empty(def_start[func.num_insts()] as usize);
        let mut live_after = BitSet::new_empty(view.num_regs());
        for (b, waiting) in waiting.iter().enumerate() {
            let block = BlockId::new(b);
            liveness.for_each_live_after(&view, block, &mut live_after, |_, inst, live| {
                for (slot, &vreg) in func.defs(inst).iter().enumerate() {
                    let mut cells = view.cells(vreg).map(ir::RegId);
                    if cells.all(|c| !live.contains(c) && !waiting.contains(c)) {
                        def_dead.insert(def_start[inst.index()] as usize + slot);
                    }
                }
            });
            for &inst in func.block_insts(block) {
                let cells = view.uses(inst);
                for slot in 0..func.uses(inst).len() {
                    let range = view.slot_cells(inst, slot);
                    let dead = range.clone().all(|k| liveness.is_dead_after(inst, k));
                    if !dead {
                        continue;
                    }
                    let bit = operand_start[inst.index()] as usize + slot;
                    thread_dead.insert(bit);
                    if !range.clone().any(|k| waiting.contains(cells[k])) {
                        warp_dead.insert(bit);
                    }
                }
            }
        }
        Ok(LivenessBits {
            operand_start,
            thread_dead,
            warp_dead,
            def_start,
            def_dead,
            divergent_branches,
        })
    }

    /// The bit the hardware gets: operand `operand` of `inst` (an index into
    /// `uses(inst)`) reads a register no lane of the warp needs afterwards.
    pub fn is_dead_after(&self, inst: InstId, operand: usize) -> bool {
        self.warp_dead.contains(self.bit(inst, operand))
    }

    /// Result `def` of `inst` (an index into `defs(inst)`) writes a value no lane of the
    /// warp reads: dead at definition.
    pub fn is_dead_at_definition(&self, inst: InstId, def: usize) -> bool {
        let start = self.def_start[inst.index()] as usize;
        debug_assert!(start + def < self.def_start[inst.index() + 1] as usize);
        self.def_dead.contains(start + def)
    }

    /// Plain CFG liveness: no later instruction of this thread reads the value.
    pub fn is_dead_for_thread(&self, inst: InstId, operand: usize) -> bool {
        self.thread_dead.contains(self.bit(inst, operand))
    }

    fn bit(&self, inst: InstId, operand: usize) -> usize {
        let start = self.operand_start[inst.index()] as usize;
        debug_assert!(start + operand < self.operand_start[inst.index() + 1] as usize);
        start + operand
    }

    /// `(dead for the thread, dead for the warp)` of each operand of `inst`.
    pub fn operands(&self, inst: InstId) -> impl Iterator<Item = (bool, bool)> + '_ {
        let start = self.operand_start[inst.index()] as usize;
        let end = self.operand_start[inst.index() + 1] as usize;
        (start..end).map(|k| (self.thread_dead.contains(k), self.warp_dead.contains(k)))
    }

    /// Blocks ending in a branch the analysis treats as divergent.
    pub fn divergent_branches(&self) -> u32 {
        self.divergent_branches
    }
}

/// True if `block` ends in a branch whose lanes may go different ways.
fn is_divergent_branch(func: &Function, block: BlockId) -> bool {
    let succs = func.successors(block);
    if succs.len() < 2 || succs.iter().all(|&s| s == succs[0]) {
        return false;
    }
    match func.block_insts(block).last() {
        Some(&last) => {
            let inst = func.inst(last);
            matches!(inst.op, Op::Bra { uni: false }) && inst.guard.is_some()
        }
        None => false,
    }
}

/// Per block, the cells that lanes waiting elsewhere (at a reconvergence point or at the
/// start of a path not yet run) may still read while the block runs; and the number of
/// divergent branches.
fn waiting_live(
    func: &Function,
    view: &CellView<'_>,
    liveness: &Liveness,
) -> (Vec<BitSet<ir::RegId>>, u32) {
    let n = func.num_blocks();
    let cells = view.num_regs();
    let mut waiting = vec![BitSet::new_empty(cells); n];
    if n == 0 {
        return (waiting, 0);
    }
    let pdom = PostDominatorTree::with_cfg(func);
    let mut divergent = 0;
    for b in 0..n {
        let block = BlockId::new(b);
        if !is_divergent_branch(func, block) {
            continue;
        }
        divergent += 1;
        let ipdom = pdom.immediate_post_dominator(block);
        let mut succs: Vec<BlockId> = func.successors(block).to_vec();
        succs.dedup();
        // What each successor's path reaches before reconvergence.
        let reach: Vec<BitSet<BlockId>> = succs
            .iter()
            .map(|&s| reach_before(func, s, ipdom))
            .collect();
        for (x, waiting) in waiting.iter_mut().enumerate() {
            let from: Vec<usize> = (0..succs.len())
                .filter(|&k| reach[k].contains(BlockId::new(x)))
                .collect();
            if from.is_empty() {
                continue;
            }
            let mut live = BitSet::new_empty(cells);
            if let Some(ip) = ipdom {
                live.union_with(liveness.live_in(ip));
            }
            for (k, &s) in succs.iter().enumerate() {
                if Some(s) != ipdom && from != [k] {
                    live.union_with(liveness.live_in(s));
                }
            }
            waiting.union_with(&live);
        }
    }
    (waiting, divergent)
}

/// Blocks reachable from `start` without passing through `stop` (`start` itself unless it
/// is `stop`).
fn reach_before(func: &Function, start: BlockId, stop: Option<BlockId>) -> BitSet<BlockId> {
    let mut seen = BitSet::new_empty(func.num_blocks());
    if Some(start) == stop {
        return seen;
    }
    let mut stack = vec![start];
    seen.insert(start);
    while let Some(b) = stack.pop() {
        for &s in func.successors(b) {
            if Some(s) != stop && seen.insert(s) {
                stack.push(s);
            }
        }
    }
    seen
}

/// Options of `--pass liveness-bits`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LivenessBitsConfig {
    /// Allocated registers (default) or virtual registers.
    pub numbering: NumberingKind,
    /// Register cap for the allocator.
    pub max_registers: Option<u32>,
}

/// One source operand in the report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OperandBits {
    /// The virtual register's name, with its register under the allocated numbering
    /// (`%r3=R5`).
    pub reg: String,
    pub predicate: bool,
    pub dead_for_thread: bool,
    pub dead_after: bool,
}

/// One instruction in the report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct InstBits {
    pub inst: u32,
    /// The label of the block this instruction starts, if it starts one.
    pub block: Option<String>,
    pub text: String,
    pub operands: Vec<OperandBits>,
}

/// Counts over one function's general-register source operands (predicates apart).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct BitCounts {
    pub operands: u32,
    pub dead_for_thread: u32,
    /// Dead bits set: dead for every lane of the warp.
    pub dead_after: u32,
    /// Dead for the thread but kept because of divergence.
    pub kept_for_divergence: u32,
}

impl BitCounts {
    fn add(&mut self, o: &OperandBits) {
        self.operands += 1;
        self.dead_for_thread += u32::from(o.dead_for_thread);
        self.dead_after += u32::from(o.dead_after);
        self.kept_for_divergence += u32::from(o.dead_for_thread && !o.dead_after);
    }

    fn merge(&mut self, other: &BitCounts) {
        self.operands += other.operands;
        self.dead_for_thread += other.dead_for_thread;
        self.dead_after += other.dead_after;
        self.kept_for_divergence += other.kept_for_divergence;
    }
}

/// The pass's results for one function.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FunctionLivenessBits {
    pub name: String,
    pub kind: &'static str,
    pub divergent_branches: u32,
    pub general: BitCounts,
    pub predicates: BitCounts,
    pub instructions: Vec<InstBits>,
}

/// The report of `regsim compile FILE.ptx --pass liveness-bits`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LivenessBitsReport {
    pub config: LivenessBitsConfig,
    /// Kernels then device functions, in program order within each.
    pub functions: Vec<FunctionLivenessBits>,
    pub general: BitCounts,
    pub predicates: BitCounts,
}

/// Runs the pass on every function of `program` with a body.
pub fn liveness_bits(
    program: &Program,
    config: &LivenessBitsConfig,
) -> Result<LivenessBitsReport, LtrfError> {
    let mut functions = Vec::new();
    let order = [FunctionKind::Kernel, FunctionKind::Device];
    for kind in order {
        for f in program
            .functions
            .iter()
            .filter(|f| f.has_body && f.kind == kind)
        {
            let (g, numbering) = numbering_for(f, config.numbering, config.max_registers)?;
            let bits =
                LivenessBits::compute(&g, &numbering).map_err(|error| LtrfError::Numbering {
                    function: f.name.clone(),
                    error,
                })?;
            functions.push(function_report(program, &g, &numbering, config, &bits));
        }
    }
    let (mut general, mut predicates) = (BitCounts::default(), BitCounts::default());
    for f in &functions {
        general.merge(&f.general);
        predicates.merge(&f.predicates);
    }
    Ok(LivenessBitsReport {
        config: config.clone(),
        functions,
        general,
        predicates,
    })
}

fn function_report(
    program: &Program,
    func: &Function,
    numbering: &Allocation,
    config: &LivenessBitsConfig,
    bits: &LivenessBits,
) -> FunctionLivenessBits {
    let (mut general, mut predicates) = (BitCounts::default(), BitCounts::default());
    let mut instructions = Vec::with_capacity(func.num_insts());
    for b in 0..func.num_blocks() {
        let block = BlockId::new(b);
        for (k, &inst) in func.block_insts(block).iter().enumerate() {
            let operands: Vec<OperandBits> = func
                .uses(inst)
                .iter()
                .zip(bits.operands(inst))
                .map(|(&r, (thread, warp))| {
                    let info = func.reg(r);
                    let reg = match (config.numbering, numbering.location(r)) {
                        (
                            NumberingKind::Allocated,
                            loc @ (Location::Reg(_) | Location::Pred(_)),
                        ) => {
                            format!("{}={loc}", info.name)
                        }
                        _ => info.name.clone(),
                    };
                    OperandBits {
                        reg,
                        predicate: info.class == RegClass::Pred,
                        dead_for_thread: thread,
                        dead_after: warp,
                    }
                })
                .collect();
            for o in &operands {
                if o.predicate {
                    predicates.add(o);
                } else {
                    general.add(o);
                }
            }
            instructions.push(InstBits {
                inst: inst.0,
                block: (k == 0).then(|| ir::print::block_name(func, block)),
                text: ir::print::inst_to_string(Some(program), func, func.inst(inst)),
                operands,
            });
        }
    }
    FunctionLivenessBits {
        name: func.name.clone(),
        kind: func.kind.as_str(),
        divergent_branches: bits.divergent_branches(),
        general,
        predicates,
        instructions,
    }
}

impl fmt::Display for BitCounts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} operands, {} dead for the thread, {} dead bits set, {} kept for divergence",
            self.operands, self.dead_for_thread, self.dead_after, self.kept_for_divergence
        )
    }
}

impl fmt::Display for FunctionLivenessBits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} {}: {} divergent branches",
            self.kind, self.name, self.divergent_branches
        )?;
        writeln!(f, "  registers: {}", self.general)?;
        writeln!(f, "  predicates: {}", self.predicates)?;
        for i in &self.instructions {
            if let Some(label) = &i.block {
                writeln!(f, "  {label}:")?;
            }
            let dead: Vec<&str> = i
                .operands
                .iter()
                .filter(|o| o.dead_after)
                .map(|o| o.reg.as_str())
                .collect();
            let kept: Vec<&str> = i
                .operands
                .iter()
                .filter(|o| o.dead_for_thread && !o.dead_after)
                .map(|o| o.reg.as_str())
                .collect();
            let mut notes = String::new();
            if !dead.is_empty() {
                notes += &format!(" dead: {}", dead.join(" "));
            }
            if !kept.is_empty() {
                if !notes.is_empty() {
                    notes += ";";
                }
                notes += &format!(" live for other lanes: {}", kept.join(" "));
            }
            if notes.is_empty() {
                writeln!(f, "    i{:<4} {}", i.inst, i.text)?;
            } else {
                writeln!(f, "    i{:<4} {:<48} ;{notes}", i.inst, i.text)?;
            }
        }
        Ok(())
    }
}

impl fmt::Display for LivenessBitsReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "liveness bits (CERF, LTRF+): {} registers; a dead bit is set only where no lane of the warp needs the value",
            self.config.numbering.as_str()
        )?;
        for func in &self.functions {
            writeln!(f)?;
            write!(f, "{func}")?;
        }
        writeln!(f)?;
        writeln!(f, "total registers: {}", self.general)?;
        writeln!(f, "total predicates: {}", self.predicates)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ltrf::numbering::virtual_numbering;
    use crate::test_support::first_function;

    fn inst_on_line(f: &Function, line: u32) -> InstId {
        (0..f.num_insts())
            .map(InstId::new)
            .find(|&i| f.inst(i).line == line)
            .unwrap_or_else(|| panic!("no instruction on line {line}"))
    }

    /// `(thread, warp)` bits of the operand reading `reg` in the instruction with source
    /// line `line` of `src`.
    fn bits_at(f: &Function, bits: &LivenessBits, line: u32, reg: &str) -> (bool, bool) {
        let inst = inst_on_line(f, line);
        let slot = f
            .uses(inst)
            .iter()
            .position(|&r| f.reg(r).name == reg)
            .unwrap_or_else(|| panic!("line {line} does not read {reg}"));
        (
            bits.is_dead_for_thread(inst, slot),
            bits.is_dead_after(inst, slot),
        )
    }

    fn compute(src: &str) -> (Function, LivenessBits) {
        let f = first_function(src);
        let bits = LivenessBits::compute(&f, &virtual_numbering(&f)).unwrap();
        (f, bits)
    }

    const HEADER: &str = ".version 7.8\n.target sm_70\n.address_size 64\n";

    /// An inner divergent branch inside an outer one. `%a` is read last in the inner
    /// `then` side; the inner `else` side does not read it, but the outer `else` side
    /// does, and its lanes may still be waiting: the outer branch keeps the bit clear.
    /// `%b` is read last on the inner `else` side only and nowhere else: its bit is set.
    #[test]
    fn nested_divergence_keeps_what_any_enclosing_branch_needs() {
        let src = format!(
            "{HEADER}{}",
            r#".visible .entry k(.param .u32 x)
{
    .reg .u32 %a, %b, %c, %t;
    .reg .pred %p, %q;
    mov.u32 %t, %tid.x;
    ld.param.u32 %a, [x];
    ld.param.u32 %b, [x];
    setp.lt.u32 %p, %t, 8;
    @%p bra OUTER_ELSE;
    setp.lt.u32 %q, %t, 4;
    @%q bra INNER_ELSE;
    add.u32 %c, %a, 1;
    bra INNER_JOIN;
INNER_ELSE:
    add.u32 %c, %b, 2;
INNER_JOIN:
    bra OUTER_JOIN;
OUTER_ELSE:
    add.u32 %c, %a, 3;
OUTER_JOIN:
    st.local.u32 [%t], %c;
    exit;
}
"#
        );
        let (f, bits) = compute(&src);
        assert_eq!(bits.divergent_branches(), 2);
        // Line numbers: the header is 3 lines, `.visible` is line 4.
        assert_eq!(bits_at(&f, &bits, 15, "%a"), (true, false));
        assert_eq!(bits_at(&f, &bits, 18, "%b"), (true, true));
        assert_eq!(bits_at(&f, &bits, 22, "%a"), (true, false));
        assert_eq!(bits_at(&f, &bits, 24, "%c"), (true, true));
    }

    /// The dead-at-definition bit of the result `reg` of the instruction on `line`.
    fn def_bit_at(f: &Function, bits: &LivenessBits, line: u32, reg: &str) -> bool {
        let inst = inst_on_line(f, line);
        let slot = f
            .defs(inst)
            .iter()
            .position(|&r| f.reg(r).name == reg)
            .unwrap_or_else(|| panic!("line {line} does not write {reg}"));
        bits.is_dead_at_definition(inst, slot)
    }

    /// A value nobody reads is dead at its definition; one only other lanes may read (the
    /// `else` side's lanes wait while the `then` side overwrites `%c`) is not; a value
    /// read later is not.
    #[test]
    fn a_value_never_read_is_dead_at_definition() {
        let src = format!(
            "{HEADER}{}",
            r#".visible .entry k(.param .u32 x)
{
    .reg .u32 %a, %c, %d, %t, %u;
    .reg .pred %p;
    mov.u32 %t, %tid.x;
    ld.param.u32 %a, [x];
    add.u32 %u, %a, 1;
    mov.u32 %c, 7;
    setp.lt.u32 %p, %t, 8;
    @%p bra ELSE;
    mov.u32 %c, 5;
    mov.u32 %d, %a;
    bra JOIN;
ELSE:
    add.u32 %d, %c, 1;
JOIN:
    st.local.u32 [%t], %d;
    exit;
}
"#
        );
        let (f, bits) = compute(&src);
        assert!(def_bit_at(&f, &bits, 10, "%u"), "never read");
        assert!(!def_bit_at(&f, &bits, 9, "%a"), "read later");
        assert!(!def_bit_at(&f, &bits, 11, "%c"), "the else side reads it");
        assert!(
            !def_bit_at(&f, &bits, 14, "%c"),
            "dead for these lanes, live for the waiting ones"
        );
        assert!(!def_bit_at(&f, &bits, 15, "%d"), "the join reads it");
    }

    /// Lanes that leave through a guarded `exit` wait nowhere: that is not a divergent
    /// branch, and the bits are the thread's.
    #[test]
    fn an_early_exit_is_not_a_divergence() {
        let src = format!(
            "{HEADER}{}",
            r#".visible .entry k(.param .u32 x)
{
    .reg .u32 %a, %t;
    .reg .pred %p;
    mov.u32 %t, %tid.x;
    ld.param.u32 %a, [x];
    setp.lt.u32 %p, %t, %a;
    @%p exit;
    st.local.u32 [%t], %a;
    exit;
}
"#
        );
        let (f, bits) = compute(&src);
        assert_eq!(bits.divergent_branches(), 0);
        assert_eq!(bits_at(&f, &bits, 10, "%a"), (false, false));
        assert_eq!(bits_at(&f, &bits, 12, "%a"), (true, true));
    }

    /// The warp bit never claims more than the thread bit.
    #[test]
    fn warp_bits_imply_thread_bits_on_every_operand() {
        let src = format!(
            "{HEADER}{}",
            r#".visible .entry k(.param .u32 n)
{
    .reg .u32 %i, %n, %s, %v;
    .reg .pred %p, %q;
    ld.param.u32 %n, [n];
    mov.u32 %i, %tid.x;
    mov.u32 %s, 0;
LOOP:
    mul.lo.u32 %v, %i, %i;
    setp.lt.u32 %q, %v, 100;
    @%q bra SKIP;
    add.u32 %s, %s, %v;
SKIP:
    add.u32 %i, %i, 32;
    setp.lt.u32 %p, %i, %n;
    @%p bra LOOP;
    st.local.u32 [%n], %s;
    exit;
}
"#
        );
        let (f, bits) = compute(&src);
        for i in 0..f.num_insts() {
            for (thread, warp) in bits.operands(InstId::new(i)) {
                assert!(thread || !warp);
            }
        }
        // %v is read last on the skip-less path; lanes that skipped wait at SKIP where
        // %v is dead, so the bit is set.
        assert_eq!(bits_at(&f, &bits, 15, "%v"), (true, true));
        // The loop test's read of %i is not a last read.
        assert_eq!(bits_at(&f, &bits, 18, "%i"), (false, false));
    }
}

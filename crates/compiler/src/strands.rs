//! Strands, Gebhart, Keckler and Dally, "A Compile-Time Managed Multi-Level Register File
//! Hierarchy", MICRO'11, §4.1 (Figure 5).
//!
//! A strand is a sequence of instructions in which every dependence on a long-latency
//! instruction is on one issued in an earlier strand. The compiler sets an end-of-strand
//! bit on the last instruction of each strand; the ORF and LRF are invalidated at every
//! strand boundary, so values cross strands only through the MRF.
//!
//! Where strands end (the reasons of [`EndReason`]):
//! - before the first use of a long-latency result — a load from global, local or generic
//!   memory, an atomic on those spaces, a texture fetch or query. Writing a register whose
//!   long-latency write is still pending counts as a use (the scoreboard orders the two).
//!   The two-level scheduler deschedules the warp there until *all* its long-latency
//!   operations have completed (the paper: "the warp will be descheduled to resolve all
//!   long-latency events"), so nothing is pending afterwards.
//!   Shared-memory loads are not long-latency: Table 2 gives shared memory the SFU's 20
//!   cycles, against 400 for DRAM and textures, and the paper deschedules only on the
//!   latter; SFU results, constant and parameter loads and warp-wide operations are short
//!   too. [`StrandConfig::shared_memory_is_long_latency`] changes this for shared memory.
//! - after a backward branch, and before a block a backward branch targets. A branch is
//!   backward when its target does not come after it in layout order; every cycle of the
//!   CFG contains one, so strands are acyclic. The warp is not descheduled at these
//!   boundaries: long-latency results stay pending across them.
//! - before a block whose incoming paths disagree on which long-latency results are pending
//!   (Figure 5(b): a load used on one side of a branch and not on the other). The compiler
//!   cannot know when the warp will be descheduled in that block, so, as the paper does, it
//!   inserts a strand endpoint at the block's start; the warp resolves every pending
//!   long-latency result there. This is a forward may/must analysis of pending results: a
//!   block start is uncertain where the two differ.
//! - after a CTA barrier (the warp leaves the active set while it waits;
//!   [`StrandConfig::barriers_end_strands`]), after a call (the callee uses the ORF and
//!   LRF; the warp drains its long-latency results before entering it), and at `ret`,
//!   `exit` and `trap`.
//!
//! The bit is per instruction, so it ends the strand on every edge out of it, and a block
//! that begins a strand on one incoming edge begins one on all of them: the boundaries are
//! closed under both rules ([`EndReason::SharedEdge`] marks what the closure added). A
//! strand is then a connected region of instructions between boundaries; [`Strands`]
//! numbers them in layout order.

use std::collections::BTreeMap;
use std::fmt;

use ir::analysis::dataflow::{solve, Analysis, Direction, JoinSemiLattice, ResultsVisitor};
use ir::analysis::BitSet;
use ir::op::BarrierKind;
use ir::{
    BlockId, ControlFlowGraph, Function, InstId, Op, Operand, Program, RegId, RegisterEffects,
};
use serde::{Deserialize, Serialize};

use crate::inst_info::{result_latency, ResultLatency};

/// What counts as a strand boundary.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StrandConfig {
    /// Treat shared-memory loads and atomics as long-latency (the paper does not).
    pub shared_memory_is_long_latency: bool,
    /// End a strand after `bar.sync`/`bar.red` (the warp is descheduled while it waits).
    pub barriers_end_strands: bool,
}

impl Default for StrandConfig {
    fn default() -> Self {
        StrandConfig {
            shared_memory_is_long_latency: false,
            barriers_end_strands: true,
        }
    }
}

/// Why an instruction ends a strand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EndReason {
    /// The next instruction is the first to read (or overwrite) a pending long-latency
    /// result: the warp is descheduled until all its long-latency results arrive.
    LongLatencyUse,
    /// The next block's incoming paths disagree on which long-latency results are pending
    /// (Figure 5(b)): the warp resolves them all there.
    PendingUncertain,
    /// The instruction is a backward branch.
    BackwardBranch,
    /// The next block is the target of a backward branch.
    BackwardBranchTarget,
    /// A CTA barrier.
    Barrier,
    /// A call.
    Call,
    /// `ret`, `exit` or `trap`.
    Exit,
    /// Closure of the per-instruction bit: a successor begins a strand because of another
    /// of its incoming edges.
    SharedEdge,
}

impl EndReason {
    pub const ALL: [EndReason; 8] = [
        EndReason::LongLatencyUse,
        EndReason::PendingUncertain,
        EndReason::BackwardBranch,
        EndReason::BackwardBranchTarget,
        EndReason::Barrier,
        EndReason::Call,
        EndReason::Exit,
        EndReason::SharedEdge,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EndReason::LongLatencyUse => "long-latency-use",
            EndReason::PendingUncertain => "pending-uncertain",
            EndReason::BackwardBranch => "backward-branch",
            EndReason::BackwardBranchTarget => "backward-branch-target",
            EndReason::Barrier => "barrier",
            EndReason::Call => "call",
            EndReason::Exit => "exit",
            EndReason::SharedEdge => "shared-edge",
        }
    }

    fn bit(self) -> u8 {
        1 << self as u8
    }

    /// True if the warp waits for all its long-latency results at this boundary.
    pub fn deschedules(self) -> bool {
        matches!(
            self,
            EndReason::LongLatencyUse
                | EndReason::PendingUncertain
                | EndReason::Barrier
                | EndReason::Call
        )
    }
}

impl fmt::Display for EndReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The strands of one function.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Strands {
    /// Per instruction, the set of [`EndReason`] bits; non-zero iff the instruction ends a
    /// strand.
    end_reasons: Vec<u8>,
    /// Per instruction, the warp waits for all pending long-latency results before
    /// issuing it.
    waits_before: Vec<bool>,
    strand_of: Vec<u32>,
    num_strands: u32,
}

impl Strands {
    /// The strands of `f`.
    pub fn compute(f: &Function, config: &StrandConfig) -> Strands {
        let n = f.num_insts();
        let mut marks = Marks {
            end: vec![0; n],
            start: vec![0; n],
        };
        let waits_before = pending_waits(f, config, &mut marks);

        for (i, inst) in f.insts.iter().enumerate() {
            let id = InstId::new(i);
            match &inst.op {
                Op::Ret { .. } | Op::Exit | Op::Trap => marks.end[i] |= EndReason::Exit.bit(),
                Op::Call(_) => marks.end[i] |= EndReason::Call.bit(),
                Op::Bar {
                    kind: BarrierKind::Sync | BarrierKind::RedPopc | BarrierKind::Red(_),
                    ..
                } if config.barriers_end_strands => marks.end[i] |= EndReason::Barrier.bit(),
                Op::Bra { .. } => {
                    let Some(from) = f.block_of(id) else { continue };
                    for target in f.srcs(id).iter().filter_map(|o| match o {
                        Operand::Block(b) => Some(*b),
                        _ => None,
                    }) {
                        let Some(t) = f.blocks.get(target.index()) else {
                            continue;
                        };
                        if t.start <= f.block(from).start && t.start < t.end {
                            marks.end[i] |= EndReason::BackwardBranch.bit();
                            marks.start[t.start as usize] |= EndReason::BackwardBranchTarget.bit();
                        }
                    }
                }
                _ => {}
            }
        }
        marks.close(f);

        let (strand_of, num_strands) = number_strands(f, &marks.end);
        Strands {
            end_reasons: marks.end,
            waits_before,
            strand_of,
            num_strands,
        }
    }

    pub fn num_insts(&self) -> usize {
        self.end_reasons.len()
    }

    /// The end-of-strand bit of `inst`.
    pub fn ends_strand(&self, inst: InstId) -> bool {
        self.end_reasons[inst.index()] != 0
    }

    /// Why `inst` ends a strand (empty if it does not), in [`EndReason::ALL`] order.
    pub fn end_reasons(&self, inst: InstId) -> impl Iterator<Item = EndReason> + '_ {
        let bits = self.end_reasons[inst.index()];
        EndReason::ALL
            .into_iter()
            .filter(move |r| bits & r.bit() != 0)
    }

    /// True if the warp waits for all its pending long-latency results before `inst`.
    pub fn waits_before(&self, inst: InstId) -> bool {
        self.waits_before[inst.index()]
    }

    /// The strand `inst` belongs to (strands are numbered by their first instruction).
    pub fn strand_of(&self, inst: InstId) -> u32 {
        self.strand_of[inst.index()]
    }

    pub fn num_strands(&self) -> u32 {
        self.num_strands
    }

    /// The instructions that may execute right after `inst` within the same strand: its
    /// successors in the CFG unless `inst` ends a strand.
    pub fn successors_in_strand<'a>(
        &'a self,
        f: &'a Function,
        inst: InstId,
    ) -> impl Iterator<Item = InstId> + 'a {
        let ends = self.ends_strand(inst);
        successors(f, inst).filter(move |_| !ends)
    }
}

/// The instructions control may reach right after `inst`.
pub fn successors(f: &Function, inst: InstId) -> impl Iterator<Item = InstId> + '_ {
    let block = f.block_of(inst);
    let (next, succ_blocks): (Option<InstId>, &[BlockId]) = match block {
        Some(b) if inst.0 + 1 < f.block(b).end => (Some(InstId(inst.0 + 1)), &[]),
        Some(b) => (None, f.successors(b)),
        None => (None, &[]),
    };
    next.into_iter().chain(
        succ_blocks
            .iter()
            .filter(|s| f.block(**s).start < f.block(**s).end)
            .map(|s| InstId(f.block(*s).start)),
    )
}

/// Boundary marks while they are being placed: `end[i]` after instruction `i`, `start[i]`
/// before it.
struct Marks {
    end: Vec<u8>,
    start: Vec<u8>,
}

impl Marks {
    /// Turns starts into ends of the preceding instructions and closes the result under
    /// the two rules of the module docs.
    fn close(&mut self, f: &Function) {
        for (b, block) in f.blocks.iter().enumerate() {
            for i in block.start..block.end {
                let reasons = self.start[i as usize];
                if reasons == 0 {
                    continue;
                }
                if i > block.start {
                    self.end[i as usize - 1] |= reasons;
                } else {
                    for &p in f.predecessors(BlockId::new(b)) {
                        let pb = f.block(p);
                        if pb.end > pb.start {
                            self.end[pb.end as usize - 1] |= reasons;
                        }
                    }
                }
            }
        }
        // A block starts a strand iff one of its predecessors' last instructions ends one;
        // then all of them must.
        let mut changed = true;
        while changed {
            changed = false;
            for (b, block) in f.blocks.iter().enumerate() {
                if block.end <= block.start || self.end[block.end as usize - 1] == 0 {
                    continue;
                }
                for &s in f.successors(BlockId::new(b)) {
                    for &p in f.predecessors(s) {
                        let pb = f.block(p);
                        if pb.end > pb.start && self.end[pb.end as usize - 1] == 0 {
                            self.end[pb.end as usize - 1] = EndReason::SharedEdge.bit();
                            changed = true;
                        }
                    }
                }
            }
        }
    }
}

/// Numbers the connected regions between boundaries in layout order.
fn number_strands(f: &Function, end: &[u8]) -> (Vec<u32>, u32) {
    let n = f.num_insts();
    const NONE: u32 = u32::MAX;
    let mut strand_of = vec![NONE; n];
    let mut preds_in_strand: Vec<Vec<InstId>> = vec![Vec::new(); n];
    for (i, &e) in end.iter().enumerate() {
        let id = InstId::new(i);
        if e == 0 {
            for s in successors(f, id) {
                preds_in_strand[s.index()].push(id);
            }
        }
    }
    let mut next = 0u32;
    let mut stack = Vec::new();
    for i in 0..n {
        if strand_of[i] != NONE {
            continue;
        }
        strand_of[i] = next;
        stack.push(InstId::new(i));
        while let Some(x) = stack.pop() {
            let forward = if end[x.index()] == 0 {
                successors(f, x).collect::<Vec<_>>()
            } else {
                Vec::new()
            };
            for y in forward
                .into_iter()
                .chain(preds_in_strand[x.index()].iter().copied())
            {
                if strand_of[y.index()] == NONE {
                    strand_of[y.index()] = next;
                    stack.push(y);
                }
            }
        }
        next += 1;
    }
    (strand_of, next)
}

/// Pending long-latency results: registers that some path has a long-latency write to in
/// flight (`may`), and those every path has (`must`). `reached` is false until something
/// flows in, so that the intersection starts from the first incoming value.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Pending {
    reached: bool,
    may: BitSet<RegId>,
    must: BitSet<RegId>,
}

impl JoinSemiLattice for Pending {
    fn join(&mut self, other: &Self) -> bool {
        if !other.reached {
            return false;
        }
        if !self.reached {
            self.clone_from(other);
            return true;
        }
        let a = self.may.union_with(&other.may);
        let b = self.must.intersect_with(&other.must);
        a || b
    }
}

struct PendingResults<'a> {
    long: &'a [bool],
    /// The warp waits for everything before this instruction.
    waits_before: &'a [bool],
    /// … or after it (calls, barriers).
    waits_after: &'a [bool],
}

impl<G: RegisterEffects + ?Sized> Analysis<G> for PendingResults<'_> {
    type Domain = Pending;
    const DIRECTION: Direction = Direction::Forward;

    fn bottom_value(&self, g: &G) -> Pending {
        Pending {
            reached: false,
            may: BitSet::new_empty(g.num_regs()),
            must: BitSet::new_empty(g.num_regs()),
        }
    }

    fn initialize_boundary(&self, _g: &G, state: &mut Pending) {
        state.reached = true;
    }

    fn apply_inst_effect(&self, g: &G, state: &mut Pending, inst: InstId) {
        if !state.reached {
            return;
        }
        let i = inst.index();
        if self.waits_before[i] {
            state.may.clear();
            state.must.clear();
        }
        for &d in g.defs(inst) {
            if self.long[i] {
                state.may.insert(d);
                state.must.insert(d);
            } else if !g.defs_are_partial(inst) {
                state.may.remove(d);
                state.must.remove(d);
            }
        }
        if self.waits_after[i] {
            state.may.clear();
            state.must.clear();
        }
    }
}

/// Places the boundaries where the warp waits for its long-latency results: before every
/// instruction that touches a possibly pending result, and at every block start whose
/// incoming paths disagree on what is pending, given the waits themselves. Returns the
/// per-instruction wait bits and records their reasons in `marks.start`.
///
/// Waits change what is pending downstream, so the set is a fixed point: recomputed from
/// scratch under the previous set until it stops changing (a wait at a loop header found
/// late makes one found earlier inside the loop unnecessary, and this drops it). Should
/// that not settle within a bound, the sets are accumulated instead, which always
/// terminates (waits only shrink pending sets) with a valid, possibly larger, set.
fn pending_waits(f: &Function, config: &StrandConfig, marks: &mut Marks) -> Vec<bool> {
    let n = f.num_insts();
    let long: Vec<bool> = f
        .insts
        .iter()
        .map(|i| result_latency(&i.op, config.shared_memory_is_long_latency) == ResultLatency::Long)
        .collect();
    let waits_after: Vec<bool> = f
        .insts
        .iter()
        .map(|i| match &i.op {
            Op::Call(_) => true,
            Op::Bar {
                kind: BarrierKind::Sync | BarrierKind::RedPopc | BarrierKind::Red(_),
                ..
            } => config.barriers_end_strands,
            _ => false,
        })
        .collect();
    let mut waits = vec![false; n];
    if !long.iter().any(|&l| l) {
        return waits;
    }
    const EXACT_ROUNDS: usize = 32;
    for _ in 0..EXACT_ROUNDS {
        let (next, reasons) = detect_waits(f, &long, &waits_after, &waits);
        if next == waits {
            for (m, r) in marks.start.iter_mut().zip(reasons) {
                *m |= r;
            }
            return waits;
        }
        waits = next;
    }
    let mut all_reasons = vec![0u8; n];
    loop {
        let (next, reasons) = detect_waits(f, &long, &waits_after, &waits);
        let mut changed = false;
        for i in 0..n {
            all_reasons[i] |= reasons[i];
            if next[i] && !waits[i] {
                waits[i] = true;
                changed = true;
            }
        }
        if !changed {
            for (m, r) in marks.start.iter_mut().zip(all_reasons) {
                *m |= r;
            }
            return waits;
        }
    }
}

/// The waits that the pending results under `waits` call for, with their reasons.
fn detect_waits(
    f: &Function,
    long: &[bool],
    waits_after: &[bool],
    waits: &[bool],
) -> (Vec<bool>, Vec<u8>) {
    struct Detect<'a> {
        f: &'a Function,
        waits: Vec<bool>,
        reasons: Vec<u8>,
    }
    impl ResultsVisitor<Pending> for Detect<'_> {
        fn visit_block_start(&mut self, block: BlockId, state: &Pending) {
            let b = self.f.block(block);
            if state.reached && b.end > b.start && state.may != state.must {
                let first = b.start as usize;
                self.reasons[first] |= EndReason::PendingUncertain.bit();
                self.waits[first] = true;
            }
        }
        fn visit_before_inst(&mut self, inst: InstId, _index: usize, state: &Pending) {
            let f = self.f;
            let touches = state.reached
                && f.uses(inst)
                    .iter()
                    .chain(f.defs(inst))
                    .any(|&r| state.may.contains(r));
            if touches {
                self.reasons[inst.index()] |= EndReason::LongLatencyUse.bit();
                self.waits[inst.index()] = true;
            }
        }
    }

    let analysis = PendingResults {
        long,
        waits_before: waits,
        waits_after,
    };
    let results = solve(analysis, f);
    let mut scratch = Pending {
        reached: false,
        may: BitSet::new_empty(f.num_regs()),
        must: BitSet::new_empty(f.num_regs()),
    };
    // `visit_before_inst` sees each state before the instruction's own wait clears it.
    let mut detect = Detect {
        f,
        waits: vec![false; f.num_insts()],
        reasons: vec![0; f.num_insts()],
    };
    for b in 0..f.num_blocks() {
        results.visit_block(f, BlockId::new(b), &mut scratch, &mut detect);
    }
    (detect.waits, detect.reasons)
}

/// One instruction of a [`FunctionStrands`] listing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StrandInst {
    pub inst: u32,
    /// The block label, on the first instruction of each block.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block: Option<String>,
    pub text: String,
    pub strand: u32,
    pub end_of_strand: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub end_reasons: Vec<EndReason>,
    /// The warp waits for all its pending long-latency results before this instruction.
    pub waits: bool,
}

/// The strands of one function, for reports.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FunctionStrands {
    pub name: String,
    pub kind: String,
    pub instructions: u32,
    pub strands: u32,
    /// Instructions per strand.
    pub mean_strand_length: f64,
    /// How many strand-ending instructions have each reason (an end may have several).
    pub ends_by_reason: BTreeMap<EndReason, u32>,
    /// Instructions the warp waits before (descheduling points).
    pub waits: u32,
    pub listing: Vec<StrandInst>,
}

impl FunctionStrands {
    pub fn new(program: &Program, f: &Function, strands: &Strands) -> Self {
        let mut ends_by_reason = BTreeMap::new();
        let mut listing = Vec::with_capacity(f.num_insts());
        for (b, block) in f.blocks.iter().enumerate() {
            for i in block.start..block.end {
                let id = InstId(i);
                let reasons: Vec<EndReason> = strands.end_reasons(id).collect();
                for &r in &reasons {
                    *ends_by_reason.entry(r).or_insert(0) += 1;
                }
                listing.push(StrandInst {
                    inst: i,
                    block: (i == block.start).then(|| ir::print::block_name(f, BlockId::new(b))),
                    text: ir::print::inst_to_string(Some(program), f, f.inst(id)),
                    strand: strands.strand_of(id),
                    end_of_strand: !reasons.is_empty(),
                    end_reasons: reasons,
                    waits: strands.waits_before(id),
                });
            }
        }
        let instructions = f.num_insts() as u32;
        FunctionStrands {
            name: f.name.clone(),
            kind: f.kind.as_str().to_string(),
            instructions,
            strands: strands.num_strands(),
            mean_strand_length: ratio(instructions, strands.num_strands()),
            ends_by_reason,
            waits: listing.iter().filter(|l| l.waits).count() as u32,
            listing,
        }
    }
}

fn ratio(a: u32, b: u32) -> f64 {
    if b == 0 {
        0.0
    } else {
        f64::from(a) / f64::from(b)
    }
}

/// `regsim compile FILE --pass strands`: the strands of every function with a body.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StrandsReport {
    pub config: StrandConfig,
    pub functions: Vec<FunctionStrands>,
    pub total_instructions: u32,
    pub total_strands: u32,
    pub mean_strand_length: f64,
    pub ends_by_reason: BTreeMap<EndReason, u32>,
}

impl StrandsReport {
    pub fn new(program: &Program, config: &StrandConfig) -> Self {
        let functions: Vec<FunctionStrands> = program
            .functions
            .iter()
            .filter(|f| f.has_body)
            .map(|f| FunctionStrands::new(program, f, &Strands::compute(f, config)))
            .collect();
        let total_instructions = functions.iter().map(|f| f.instructions).sum();
        let total_strands = functions.iter().map(|f| f.strands).sum();
        let mut ends_by_reason = BTreeMap::new();
        for f in &functions {
            for (&r, &c) in &f.ends_by_reason {
                *ends_by_reason.entry(r).or_insert(0) += c;
            }
        }
        StrandsReport {
            config: config.clone(),
            functions,
            total_instructions,
            total_strands,
            mean_strand_length: ratio(total_instructions, total_strands),
            ends_by_reason,
        }
    }
}

/// `1 strand`, `2 strands`.
pub(crate) fn plural(n: impl Into<u64>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}

fn write_reasons(out: &mut fmt::Formatter<'_>, by: &BTreeMap<EndReason, u32>) -> fmt::Result {
    if by.is_empty() {
        return write!(out, "none");
    }
    let parts: Vec<String> = by.iter().map(|(r, c)| format!("{r} {c}")).collect();
    write!(out, "{}", parts.join(", "))
}

impl fmt::Display for StrandsReport {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            out,
            "strands (Gebhart MICRO'11 §4.1): shared memory {}, barriers {}",
            if self.config.shared_memory_is_long_latency {
                "long-latency"
            } else {
                "short-latency"
            },
            if self.config.barriers_end_strands {
                "end strands"
            } else {
                "do not end strands"
            },
        )?;
        for f in &self.functions {
            writeln!(
                out,
                "\n{} {}: {}, {}, {:.2} per strand, {}",
                f.kind,
                f.name,
                plural(f.strands, "strand", "strands"),
                plural(f.instructions, "instruction", "instructions"),
                f.mean_strand_length,
                plural(f.waits, "wait", "waits")
            )?;
            write!(out, "  ends: ")?;
            write_reasons(out, &f.ends_by_reason)?;
            writeln!(out)?;
            for line in &f.listing {
                if let Some(label) = &line.block {
                    writeln!(out, "  {label}:")?;
                }
                let mut notes = Vec::new();
                if line.waits {
                    notes.push("waits".to_string());
                }
                if line.end_of_strand {
                    let r: Vec<&str> = line.end_reasons.iter().map(|r| r.as_str()).collect();
                    notes.push(format!("end: {}", r.join(" ")));
                }
                let text = format!("s{:<3} i{:<4} {}", line.strand, line.inst, line.text);
                if notes.is_empty() {
                    writeln!(out, "    {text}")?;
                } else {
                    writeln!(out, "    {text:<60} ; {}", notes.join("; "))?;
                }
            }
        }
        write!(
            out,
            "\ntotal: {}, {}, {}, {:.2} per strand; ends: ",
            plural(self.functions.len() as u64, "function", "functions"),
            plural(self.total_strands, "strand", "strands"),
            plural(self.total_instructions, "instruction", "instructions"),
            self.mean_strand_length
        )?;
        write_reasons(out, &self.ends_by_reason)?;
        writeln!(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::lower;

    const CALL: &str = r#"
.version 7.8
.target sm_70
.address_size 64
.func (.param .b32 r) inc(.param .b32 x)
{
    .reg .b32 %r<3>;
    ld.param.b32 %r1, [x];
    add.s32 %r2, %r1, 1;
    st.param.b32 [r], %r2;
    ret;
}
.visible .entry k(.param .u64 a)
{
    .reg .b32 %r<6>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [a];
    ld.global.u32 %r1, [%rd1];
    ld.global.u32 %r2, [%rd1+4];
    {
    .param .b32 p0;
    st.param.b32 [p0], %r1;
    .param .b32 r0;
    call.uni (r0), inc, (p0);
    ld.param.b32 %r3, [r0];
    }
    add.s32 %r4, %r3, %r2;
    bar.sync 0;
    st.global.u32 [%rd1], %r4;
    ret;
}
"#;

    #[test]
    fn calls_and_barriers_end_strands_and_drain_pending_loads() {
        let p = lower(CALL);
        let (_, k) = p.kernels().next().expect("kernel");
        let text = |i: usize| ir::print::inst_to_string(Some(&p), k, &k.insts[i]);
        let find = |prefix: &str| {
            (0..k.insts.len())
                .find(|&i| text(i).starts_with(prefix))
                .map(InstId::new)
                .unwrap_or_else(|| panic!("no {prefix}"))
        };
        let s = Strands::compute(k, &StrandConfig::default());
        let store_arg = find("st.param");
        let call = find("call");
        let add = find("add.s32");
        let bar = find("bar");
        // The argument store is the first use of %r1: the warp waits before it.
        assert!(s.waits_before(store_arg));
        assert!(s.ends_strand(InstId(store_arg.0 - 1)));
        // The call ends a strand and drains the other load, so the add after it (which
        // reads %r2, loaded before the call) does not wait.
        assert_eq!(
            s.end_reasons(call).collect::<Vec<_>>(),
            vec![EndReason::Call]
        );
        assert!(!s.waits_before(add));
        assert_eq!(
            s.end_reasons(bar).collect::<Vec<_>>(),
            vec![EndReason::Barrier]
        );
        assert_ne!(s.strand_of(call), s.strand_of(add));

        let no_barriers = StrandConfig {
            barriers_end_strands: false,
            ..StrandConfig::default()
        };
        let s = Strands::compute(k, &no_barriers);
        assert!(!s.ends_strand(bar));

        // The device function: one strand ending at its `ret`.
        let f = &p.functions[0];
        let s = Strands::compute(f, &StrandConfig::default());
        assert_eq!(s.num_strands(), 1);
        assert!(s.ends_strand(InstId(f.insts.len() as u32 - 1)));
    }

    #[test]
    fn the_report_serialises_every_instruction() {
        let p = lower(CALL);
        let r = StrandsReport::new(&p, &StrandConfig::default());
        assert_eq!(r.functions.len(), 2);
        let json = serde_json::to_value(&r).expect("json");
        let listing = &json["functions"][1]["listing"];
        assert_eq!(
            listing.as_array().map(Vec::len),
            Some(p.functions[1].insts.len())
        );
        assert!(json["ends_by_reason"]["call"].is_u64());
        assert_eq!(
            r.total_strands,
            r.functions.iter().map(|f| f.strands).sum::<u32>()
        );
    }
}

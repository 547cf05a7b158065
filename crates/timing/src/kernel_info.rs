//! Static, per-kernel facts the timing model needs about every instruction: its opcode
//! class (which execution unit, what latency), the *architectural* registers it reads and
//! writes (bank, scoreboard and occupancy all work on architectural registers, never on
//! PTX's virtual ones), and slots for the per-operand hints of the compiler passes that
//! later register-file designs read (ORF/LRF levels, dead-after bits, reuse distances,
//! LTRF register-interval entries).
//!
//! A [`KernelInfo`] is built once per kernel from the compiler's register allocation
//! ([`KernelInfo::from_allocations`], or [`KernelInfo::compile`] which runs the allocator)
//! and covers the kernel and every function it can call: a warp executing a callee is
//! looked up by the callee's `FuncId`. [`KernelInfo::unallocated`] is a documented
//! stand-in for unit tests only: it gives each virtual register its own architectural
//! register(s), packed in declaration order, which overstates registers per thread.
//!
//! Calling convention (as the allocator's): each function is allocated from `R0`/`P0`
//! up on its own; registers per thread is the maximum over the call tree. When
//! [`KernelInfo::compile`] is given a cap that forces spills, the spill code
//! ([`compiler::Edit`]) is not in the program the emulator runs, so it is not timed and a
//! spilled value is seen in the temporary register the allocator assigns at each
//! reference. `regsim run --max-registers N` avoids that gap: the runtime rewrites the
//! program with its spill code first (`insert_spill_code`), so the loads and stores
//! execute and are timed, and this module sees an allocation without spills.

use compiler::{AllocConfig, Allocation, Location};
use ir::op::Callee;
use ir::{FuncId, InstId, Op, Program, RegClass, RegId, RegisterEffects};

use crate::config::OpClass;

/// Which register file an operand lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RegFileKind {
    /// The 32-bit general registers `R0..`: banked, counted for occupancy.
    General,
    /// The predicate registers `P0..`: a small separate file, not banked.
    Predicate,
}

/// The register-file level a compiler-managed hierarchy (Gebhart et al. MICRO'11: MRF,
/// ORF, LRF) reads an operand from or writes a result to: the compiler's type.
pub use compiler::pipeline::HierarchyLevel;

/// Compiler hints on one register operand. Designs that do not use a hint ignore it;
/// every field defaults to "no information".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct OperandHint {
    /// ORF/LRF: the level a source is read from. For a destination: the highest level
    /// it is written to (with `also_main` saying whether the MRF is written too).
    pub level: HierarchyLevel,
    /// ORF/LRF destinations: the value is written to the MRF as well.
    pub also_main: bool,
    /// ORF/LRF sources (MICRO'11 §4.4 read-operand allocation): the value read (from the
    /// MRF) is also written into the ORF for later reads in the strand.
    pub fills_orf: bool,
    /// Liveness bits. A source (CERF, LTRF+, BOW-WR, the RFC): the register is dead after
    /// this instruction. A destination (the RFC): no lane reads the value written.
    pub dead_after: bool,
    /// Malekeh: instructions of this warp until the register is next read (`None`:
    /// unknown or never).
    pub reuse_distance: Option<u16>,
    /// Register-file cache: the compiler's reuse bit (the next instruction reads this
    /// register in the same operand slot).
    pub reuse: bool,
}

/// A register operand of an instruction, after register allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RegOperand {
    /// General or predicate file.
    pub file: RegFileKind,
    /// The base register number (`R4` of the pair `R4:R5`).
    pub reg: u16,
    /// Consecutive registers covered: 1, 2 (64-bit pair) or 4 (128-bit quad).
    pub width: u8,
    /// Compiler hints.
    pub hint: OperandHint,
}

impl RegOperand {
    /// The 32-bit registers this operand covers.
    pub fn regs(&self) -> std::ops::Range<u16> {
        self.reg..self.reg + u16::from(self.width)
    }
}

/// Hints attached to a whole instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct InstHint {
    /// Gebhart §4.1: the last instruction of a strand.
    pub strand_end: bool,
    /// LTRF §3.3: this instruction starts register-interval `n` of its function
    /// (an index into [`FunctionInfo::intervals`]); the interval's working set must be
    /// resident before it issues.
    pub interval_entry: Option<u32>,
    /// WIR: what the instruction computes apart from its register sources' values, when
    /// that is all its result depends on ([`ReuseKey`]); `None` for instructions that
    /// may never reuse a result.
    pub reuse: Option<ReuseKey>,
    /// The compiler's control bits for the modern core's `sm.dependence =
    /// "control_bits"` ([`crate::control_bits`]); all zero until attached.
    pub control: compiler::control_bits::ControlBits,
    /// `sm.constant_operands`: this load is a constant-bank operand of its consumers
    /// ([`crate::constant_operands`]): the SM executes it without issuing it.
    pub folded: bool,
    /// `sm.constant_operands`: one source of this instruction is a constant-bank operand
    /// (taken out of its source registers).
    pub constant: Option<ConstantOperand>,
}

/// An instruction's constant-bank operand (SASS's `c[bank][offset]`), which was a
/// register written by a folded load.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ConstantOperand {
    /// Its operand slot: its position among the instruction's distinct general-register
    /// sources before it was taken out (the reuse cache's slot numbering).
    pub slot: u8,
    /// 32-bit values it delivers: 1, or 2 for a 64-bit parameter.
    pub width: u8,
}

/// What kind of work a reusable instruction does (WIR reports reuse by class, and loads
/// follow extra rules, §VI-A).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReuseClass {
    /// Arithmetic, logic, moves and conversions on the SP/INT/DP units.
    Alu,
    /// Special-function-unit operations.
    Sfu,
    /// A load from memory that no one writes during a kernel (`.const`, `.param`,
    /// `ld.global.nc`, `ldu`).
    ReadOnlyLoad,
    /// A `.global` load: reusable only under §VI-A's store and barrier rules.
    GlobalLoad,
    /// A `.shared` load: as global, and only within the thread block.
    SharedLoad,
}

/// The static half of WIR's reuse-buffer tag: a hash of the operation (opcode,
/// modifiers, immediates, symbols and address offsets, and which operand positions are
/// registers), so that two instructions with equal keys and equal source values compute
/// equal results. The dynamic half is the physical source registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ReuseKey {
    /// The hash (stable across runs: a fixed-key hasher).
    pub key: u64,
    /// Its class.
    pub class: ReuseClass,
    /// Part of PTX's kernel prologue, which the machine ISA does not have: a load of a
    /// kernel parameter (`ld.param`; a constant-bank operand in SASS) or an address-space
    /// conversion (`cvta`). WIR reuses these only when configured to.
    pub prologue: bool,
}

/// One instruction as the timing model sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InstInfo {
    /// Opcode class: selects the execution unit and its latency.
    pub class: OpClass,
    /// Instruction-level hints.
    pub hint: InstHint,
    /// Its part in asynchronous copies (`cp.async` and its waits).
    pub async_copy: AsyncCopyRole,
    /// `setmaxnreg`: the per-thread register count it asks its CTA's pool for.
    pub registers: RegisterRequest,
    /// Its part in `wgmma` groups.
    pub wgmma: WgmmaRole,
    /// A global load the L1D caches even under `l1d.bypass_global_loads`:
    /// `ld.global.nc`, `ldu`, or an explicit `.ca` (what `-dlcm=ca` compiles to).
    pub l1_cached_load: bool,
    srcs_start: u32,
    num_srcs: u8,
    dsts_start: u32,
    num_dsts: u8,
}

/// What an instruction does with asynchronous global-to-shared copies (Ampere's LDGSTS):
/// the copy moves data without a register result, and the wait holds its warp until the
/// warp's copies in flight have completed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AsyncCopyRole {
    #[default]
    None,
    /// `cp.async`.
    Copy,
    /// `cp.async.wait_group`/`wait_all` and `cp.async.bulk.wait_group`: waits for every
    /// copy of the warp in flight (a `wait_group n` with n > 0 is timed as `wait_group
    /// 0`, a conservative bound).
    Wait,
    /// A global-to-shared `cp.async.bulk`: its bytes land, and complete on its mbarrier,
    /// when its data arrive (no wait of its own: the mbarrier's waiters spin).
    BulkToShared,
}

impl AsyncCopyRole {
    pub fn of(op: &Op) -> AsyncCopyRole {
        match op {
            Op::CpAsync(_) => AsyncCopyRole::Copy,
            Op::CpAsyncWait { .. } | Op::CpAsyncBulkWait { .. } => AsyncCopyRole::Wait,
            Op::CpAsyncBulk(ir::op::CpAsyncBulk { direction, .. })
            | Op::CpAsyncBulkTensor(ir::op::CpAsyncBulkTensor { direction, .. }) => match direction
            {
                ir::op::BulkCopyDirection::GlobalToShared { .. }
                | ir::op::BulkCopyDirection::SharedToCluster => AsyncCopyRole::BulkToShared,
                ir::op::BulkCopyDirection::SharedToGlobal => AsyncCopyRole::Copy,
            },
            _ => AsyncCopyRole::None,
        }
    }
}

/// What an instruction does with asynchronous warpgroup matrix products (sm_90a): a
/// `wgmma.mma_async` occupies its sub-core's tensor core for `steps` m16n8kK products
/// (each the `tensor` class's initiation interval) and completes `steps - 1` intervals
/// plus the class's latency after it starts; `wgmma.commit_group` closes the warp's open
/// group; `wgmma.wait_group n` holds the warp until at most `n` of its committed groups
/// are incomplete. `smem_bytes` is the warp's share of the operands the tensor cores read
/// from shared memory through descriptors, which occupy the SM's shared-memory banks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WgmmaRole {
    #[default]
    None,
    Mma {
        steps: u16,
        smem_bytes: u16,
    },
    Commit,
    Wait(u32),
}

impl WgmmaRole {
    pub fn of(op: &Op) -> WgmmaRole {
        match op {
            // A warp's share of an m64nNkK is N/8 m16n8kK products: at the whitepaper rates
            // each takes one tensor-class interval whatever the type (K is 8 for tf32, 16
            // for f16/bf16 and 32 for 8-bit types, in step with the rates; 256 for b1,
            // timed as b1 `mma.sync` is, one interval per m16n8k256: our choice).
            //
            // A row of K elements is 32 bytes for every type (8 x tf32, 16 x f16, 32 x
            // 8-bit, 256 x b1). Ours: each warp reads its 16 rows of A when A comes from a
            // descriptor, and a quarter of B's N rows, so that the four warps of a
            // warpgroup read the instruction's A (64 x K) and B (K x N) once between them.
            // `.sp`: K doubles at the sparse tensor cores' doubled rate (A100 and H100
            // whitepapers), so the steps are the dense K/2's; A is stored as K/2 (32
            // bytes a row), B's rows are K (64 bytes).
            Op::Wgmma(w) => WgmmaRole::Mma {
                steps: w.n / 8,
                smem_bytes: if w.a_regs { 0 } else { 16 * 32 }
                    + w.n / 4 * if w.sparse.is_some() { 64 } else { 32 },
            },
            Op::WgmmaCommit => WgmmaRole::Commit,
            Op::WgmmaWait { n } => WgmmaRole::Wait(*n),
            _ => WgmmaRole::None,
        }
    }
}

/// What `setmaxnreg` asks of its CTA's register pool: the warp's per-thread register
/// count becomes the number, registers taken from the pool (`Increase`, which waits until
/// the pool holds them) or given back to it (`Decrease`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RegisterRequest {
    #[default]
    None,
    Increase(u16),
    Decrease(u16),
}

impl RegisterRequest {
    pub fn of(op: &Op) -> RegisterRequest {
        match *op {
            Op::Setmaxnreg { inc: true, count } => RegisterRequest::Increase(count),
            Op::Setmaxnreg { inc: false, count } => RegisterRequest::Decrease(count),
            _ => RegisterRequest::None,
        }
    }
}

/// The registers per thread a kernel that uses `setmaxnreg` is launched with, as ptxas
/// chooses them for sm_90a (64 K registers per SM, at most 255 per thread): the
/// `.maxnreg` directive; else the most that `.maxntid` (or `.reqntid`) threads times
/// `.minnctapersm` CTAs (1 if absent) leave per thread, in multiples of 8 (the count
/// `setmaxnreg` moves in); else the allocation's count rounded up to a multiple of 8.
/// Never fewer than the allocation uses. A warp group's `setmaxnreg.inc` can only take
/// what others gave back, so a kernel written for a launch-bounds budget (CUTLASS's 168
/// for 384 threads) needs that budget, not regsim's smaller allocation.
pub fn setmaxnreg_launch_registers(allocated: u32, perf: &ir::function::PerfDirectives) -> u32 {
    const SM90_REGISTERS: u32 = 65_536;
    const MAX_PER_THREAD: u32 = 255 / 8 * 8;
    let bound = perf.maxnreg.or_else(|| {
        let [x, y, z] = perf.maxntid.or(perf.reqntid)?;
        let threads = x
            .saturating_mul(y)
            .saturating_mul(z)
            .div_ceil(32)
            .saturating_mul(32);
        let ctas = perf.minnctapersm.unwrap_or(1).max(1);
        let per_thread = SM90_REGISTERS / threads.saturating_mul(ctas).max(1);
        Some(per_thread / 8 * 8)
    });
    let bound = bound.map_or(0, |b| b.min(MAX_PER_THREAD));
    bound.max(allocated.div_ceil(8) * 8)
}

/// The instruction a warp executes when it runs off the end of a body (the emulator's
/// implicit `exit`).
const IMPLICIT_EXIT: InstInfo = InstInfo {
    class: OpClass::Control,
    hint: InstHint {
        strand_end: false,
        interval_entry: None,
        reuse: None,
        control: compiler::control_bits::ControlBits {
            stall: 0,
            yield_: false,
            write_counter: None,
            wait_mask: 0,
        },
        folded: false,
        constant: None,
    },
    async_copy: AsyncCopyRole::None,
    registers: RegisterRequest::None,
    wgmma: WgmmaRole::None,
    l1_cached_load: false,
    srcs_start: 0,
    num_srcs: 0,
    dsts_start: 0,
    num_dsts: 0,
};

/// A register-interval (LTRF): the registers to prefetch when it is entered.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct IntervalInfo {
    /// The working set, as 32-bit general registers.
    pub working_set: Vec<u16>,
}

/// Per-function instruction table.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FunctionInfo {
    insts: Vec<InstInfo>,
    operands: Vec<RegOperand>,
    /// LTRF register-intervals, referenced by [`InstHint::interval_entry`].
    pub intervals: Vec<IntervalInfo>,
    /// LTRF: the interval (index into `intervals`) of each instruction; empty when the
    /// intervals pass did not run.
    pub interval_of: Vec<u32>,
    /// The first instruction of the newest kind only some GPUs execute.
    pub gpu_need: Option<GpuNeed>,
}

/// An instruction that GPUs below a compute capability do not execute. Ours: regsim runs
/// any PTX on any simulated GPU, except the forms that need new tensor-core hardware:
/// warpgroup products (sm_90a) and fp8 `mma.sync` (sm_89, PTX ISA "Target ISA notes";
/// ptxas 12.9: "Feature 'mma with FP8 floating point type' requires .target sm_89").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuNeed {
    /// Compute capability x 10 (89, 90).
    pub cc: u32,
    pub what: &'static str,
    /// The PTX target that has it (`sm_89`, `sm_90a`).
    pub target: &'static str,
    /// The instruction's line in the PTX file.
    pub line: u32,
}

impl GpuNeed {
    fn of(op: &Op, line: u32) -> Option<GpuNeed> {
        use ir::op::ScalarType as T;
        let (cc, what, target) = match op {
            Op::Wgmma(_) => (90, "wgmma.mma_async", "sm_90a"),
            Op::Mma(m) if !m.wmma && matches!(m.ab_ty, T::E4m3 | T::E5m2) => {
                (89, "mma.sync with fp8 (.e4m3/.e5m2) inputs", "sm_89")
            }
            _ => return None,
        };
        Some(GpuNeed {
            cc,
            what,
            target,
            line,
        })
    }
}

impl FunctionInfo {
    /// Number of instructions.
    pub fn len(&self) -> usize {
        self.insts.len()
    }
    /// True for a function without instructions (or one the kernel cannot reach).
    pub fn is_empty(&self) -> bool {
        self.insts.is_empty()
    }
    /// Hints of instruction `inst`.
    pub fn inst_hint(&self, inst: InstId) -> Option<&InstHint> {
        self.insts.get(inst.index()).map(|i| &i.hint)
    }
    /// Mutable hints of instruction `inst` (for compiler passes that annotate).
    pub fn inst_hint_mut(&mut self, inst: InstId) -> Option<&mut InstHint> {
        self.insts.get_mut(inst.index()).map(|i| &mut i.hint)
    }
    /// Mutable source and destination operands of `inst` (for compiler passes that
    /// annotate operands with hints).
    pub fn operands_mut(&mut self, inst: InstId) -> Option<(&mut [RegOperand], &mut [RegOperand])> {
        let i = *self.insts.get(inst.index())?;
        let (s, d) = (i.srcs_start as usize, i.dsts_start as usize);
        let (ns, nd) = (i.num_srcs as usize, i.num_dsts as usize);
        // Sources are stored before destinations.
        let (a, b) = self.operands.split_at_mut(d);
        Some((&mut a[s..s + ns], &mut b[..nd]))
    }
}

impl FunctionInfo {
    /// The source operands of `inst` (empty for an instruction out of range).
    pub fn sources(&self, inst: InstId) -> &[RegOperand] {
        self.insts.get(inst.index()).map_or(&[], |i| {
            let s = i.srcs_start as usize;
            &self.operands[s..s + i.num_srcs as usize]
        })
    }

    /// Takes source `k` of `inst` out of its source operands, keeping the others' order
    /// (the operand becomes a constant-bank operand, [`crate::constant_operands`]).
    /// Returns it.
    pub fn take_source(&mut self, inst: InstId, k: usize) -> Option<RegOperand> {
        let i = self.insts.get_mut(inst.index())?;
        if k >= i.num_srcs as usize {
            return None;
        }
        let s = i.srcs_start as usize;
        let n = i.num_srcs as usize;
        // The taken operand moves past the remaining sources, out of the range.
        self.operands[s + k..s + n].rotate_left(1);
        i.num_srcs -= 1;
        Some(self.operands[s + n - 1])
    }

    /// Copies the pipeline's annotations of `f` (allocated by `alloc`, from which this
    /// table was built) into the operand and instruction hints. A source register read
    /// twice by one instruction is one operand here; it takes its first read's hints.
    fn apply_annotations(
        &mut self,
        f: &ir::Function,
        alloc: &Allocation,
        ann: &compiler::pipeline::FunctionAnnotations,
    ) -> Result<(), KernelInfoError> {
        // The operand `build_function` made of `vreg` at `inst`: (file, register, width).
        let located = |inst: InstId, vreg: RegId| match alloc.operand_location(inst, vreg) {
            Location::Reg(r) => Some((RegFileKind::General, r.0, width_of(f.reg(vreg).class))),
            Location::Pred(p) => Some((RegFileKind::Predicate, p.0, 1)),
            Location::Unused | Location::Spill(_) => None,
        };
        let hint = |a: &compiler::pipeline::OperandAnnotation| OperandHint {
            level: a.level,
            also_main: a.also_main,
            fills_orf: a.fills_orf,
            dead_after: a.dead_after,
            reuse_distance: a
                .reuse_distance
                .map(|d| u16::try_from(d).unwrap_or(u16::MAX)),
            reuse: a.reuse,
        };
        for i in 0..self.insts.len().min(f.num_insts()) {
            let id = InstId::new(i);
            let a = ann.inst(id);
            self.insts[i].hint = InstHint {
                strand_end: a.strand_end,
                interval_entry: a.interval_entry,
                ..self.insts[i].hint
            };
            let (srcs, dsts) = self
                .operands_mut(id)
                .ok_or_else(|| KernelInfoError::MissingAllocation(f.name.clone()))?;
            let mut filled = 0usize;
            for (&v, a) in f.uses(id).iter().zip(ann.uses(id)) {
                let Some((file, reg, width)) = located(id, v) else {
                    continue;
                };
                // Sources were deduplicated in `build_function`, in this same order.
                let seen = srcs[..filled].iter().any(|o| {
                    o.file == file && u32::from(o.reg) == reg && u32::from(o.width) == width
                });
                if seen {
                    continue;
                }
                if let Some(op) = srcs.get_mut(filled) {
                    op.hint = hint(a);
                    filled += 1;
                }
            }
            let defs = f.defs(id).iter().zip(ann.defs(id));
            let mut k = 0usize;
            for (&v, a) in defs {
                if located(id, v).is_none() {
                    continue;
                }
                if let Some(op) = dsts.get_mut(k) {
                    op.hint = hint(a);
                    k += 1;
                }
            }
        }
        self.intervals = ann
            .intervals
            .iter()
            .map(|w| IntervalInfo {
                working_set: w.iter().map(|&r| r as u16).collect(),
            })
            .collect();
        self.interval_of = ann.interval_of.clone();
        Ok(())
    }
}

/// Why a [`KernelInfo`] could not be built.
#[derive(Debug, thiserror::Error)]
pub enum KernelInfoError {
    /// The function is not a kernel with a body.
    #[error("function {0} is not a kernel with a body")]
    NotAKernel(String),
    /// The register allocator failed.
    #[error("register allocation failed: {0}")]
    Allocation(String),
    /// A function the kernel calls has no allocation.
    #[error("no register allocation for function {0}")]
    MissingAllocation(String),
    /// An instruction has more register operands than the register-file designs model.
    #[error(
        "{function}, line {line}: '{inst}' reads {reads} and writes {writes} registers; the \
         register-file designs model at most {max} registers per instruction on each side"
    )]
    TooManyOperands {
        function: String,
        line: u32,
        inst: String,
        reads: usize,
        writes: usize,
        max: usize,
    },
    /// An operand's register does not fit the model's 16-bit register numbers.
    #[error("{function}: register number {reg} is too large")]
    RegisterTooLarge {
        /// The function.
        function: String,
        /// The register number.
        reg: u32,
    },
}

/// Everything static the timing model needs about one kernel and its callees.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelInfo {
    /// The kernel's name (mangled).
    pub name: String,
    /// The kernel's function id.
    pub kernel: FuncId,
    /// Architectural 32-bit registers per thread (the maximum over the call tree).
    pub registers_per_thread: u32,
    /// Predicate registers per thread.
    pub predicates_per_thread: u32,
    /// Values the call tree's allocations spilled to local memory (under the budget).
    pub spill_slots: u32,
    /// The call tree's registers and spills under the architecture's limit, when the
    /// program was compiled for another budget ([`crate::register_budget`]).
    pub before_budget: Option<AllocationSummary>,
    funcs: Vec<FunctionInfo>,
    /// The launch's trace-exact reuse distances (Malekeh with `reuse_distances =
    /// "trace"`), set by the runtime before each launch; `None` otherwise.
    pub reuse_trace: Option<std::sync::Arc<crate::rf::malekeh::trace::ReuseTrace>>,
    /// The instructions carry control bits ([`crate::control_bits::attach`]); without
    /// them `sm.dependence = "control_bits"` falls back to the scoreboard with stall
    /// counts (`"stall_counter"`).
    pub control_bits: bool,
    /// Some instruction is a folded load ([`InstHint::folded`], set by
    /// [`crate::constant_operands::attach`]): only then does [`KernelInfo::issue_point`]
    /// look past the warp's PC (a lookup per scheduler check otherwise).
    folds: bool,
}

/// Registers per thread and spilled values of a kernel's call tree under one budget.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct AllocationSummary {
    /// Architectural registers per thread (the maximum over the call tree).
    pub registers_per_thread: u32,
    /// Values spilled (summed over the call tree).
    pub spill_slots: u32,
}

impl AllocationSummary {
    /// The summary of `kernel`'s call tree in a compiled program.
    pub fn of(
        program: &Program,
        functions: &[Option<compiler::pipeline::CompiledFunction>],
        kernel: FuncId,
    ) -> AllocationSummary {
        let mut s = AllocationSummary::default();
        for f in call_tree(program, kernel) {
            if let Some(Some(c)) = functions.get(f.index()) {
                s.registers_per_thread = s.registers_per_thread.max(c.allocation.registers_used);
                s.spill_slots = s.spill_slots.saturating_add(c.spill_slots);
            }
        }
        s
    }
}

impl KernelInfo {
    /// Builds the info of `kernel` from the allocation of each function
    /// (`allocation_of(f)`; functions without a body may return `None`).
    pub fn from_allocations<'a>(
        program: &Program,
        kernel: FuncId,
        allocation_of: impl Fn(FuncId) -> Option<&'a Allocation>,
    ) -> Result<KernelInfo, KernelInfoError> {
        let kf = program
            .functions
            .get(kernel.index())
            .filter(|f| f.kind == ir::FunctionKind::Kernel && f.has_body)
            .ok_or_else(|| KernelInfoError::NotAKernel(format!("{kernel}")))?;
        let tree = call_tree(program, kernel);
        let mut funcs = vec![FunctionInfo::default(); program.functions.len()];
        let (mut regs, mut preds) = (0, 0);
        for &f in &tree {
            let func = program.function(f);
            if !func.has_body {
                continue;
            }
            let alloc = allocation_of(f)
                .ok_or_else(|| KernelInfoError::MissingAllocation(func.name.clone()))?;
            regs = regs.max(alloc.registers_used);
            preds = preds.max(alloc.predicates_used);
            funcs[f.index()] = build_function(func, |inst, vreg| {
                match alloc.operand_location(inst, vreg) {
                    Location::Reg(r) => Some((RegFileKind::General, r.0)),
                    Location::Pred(p) => Some((RegFileKind::Predicate, p.0)),
                    Location::Unused | Location::Spill(_) => None,
                }
            })?;
        }
        if uses_setmaxnreg(program, &tree) {
            regs = setmaxnreg_launch_registers(regs, &kf.directives);
        }
        Ok(KernelInfo {
            name: kf.name.clone(),
            kernel,
            registers_per_thread: regs,
            predicates_per_thread: preds,
            spill_slots: 0,
            before_budget: None,
            funcs,
            reuse_trace: None,
            control_bits: false,
            folds: false,
        })
    }

    /// Builds the info of `kernel` from the load-time pipeline's output: its allocations,
    /// and every annotation the pipeline's passes produced as operand and instruction
    /// hints (the LTRF register-intervals as [`FunctionInfo::intervals`]).
    /// `program` is the pipeline's output program (`CompiledProgram::program`, or the
    /// emulator's copy of it) and `functions` its compiled functions, by `FuncId`.
    pub fn from_compiled(
        program: &Program,
        functions: &[Option<compiler::pipeline::CompiledFunction>],
        kernel: FuncId,
    ) -> Result<KernelInfo, KernelInfoError> {
        let compiled = |f: FuncId| functions.get(f.index()).and_then(Option::as_ref);
        let mut info =
            Self::from_allocations(program, kernel, |f| compiled(f).map(|c| &c.allocation))?;
        for (i, func) in info.funcs.iter_mut().enumerate() {
            let Some(c) = compiled(FuncId::new(i)) else {
                continue;
            };
            if func.is_empty() {
                continue;
            }
            let f = program.function(FuncId::new(i));
            func.apply_annotations(f, &c.allocation, &c.annotations)?;
        }
        info.spill_slots = AllocationSummary::of(program, functions, kernel).spill_slots;
        Ok(info)
    }

    /// Runs the compiler's register allocator on the kernel's call tree and builds the
    /// info from its result.
    pub fn compile(
        program: &Program,
        kernel: FuncId,
        config: &AllocConfig,
    ) -> Result<KernelInfo, KernelInfoError> {
        let allocs = compiler::regalloc::allocate_program(program, config)
            .map_err(|e| KernelInfoError::Allocation(e.to_string()))?;
        Self::from_allocations(program, kernel, |f| {
            allocs.get(f.index()).and_then(|a| a.allocation.as_ref())
        })
    }

    /// TEST STAND-IN, not a register allocation: every virtual register gets its own
    /// architectural register(s), packed in declaration order with pairs and quads
    /// aligned, and predicates their own numbers. Registers per thread is therefore the
    /// total of all declared registers. Use only where the allocator is not the subject.
    pub fn unallocated(program: &Program, kernel: FuncId) -> Result<KernelInfo, KernelInfoError> {
        let kf = program
            .functions
            .get(kernel.index())
            .filter(|f| f.kind == ir::FunctionKind::Kernel && f.has_body)
            .ok_or_else(|| KernelInfoError::NotAKernel(format!("{kernel}")))?;
        let mut funcs = vec![FunctionInfo::default(); program.functions.len()];
        let (mut regs, mut preds) = (0u32, 0u32);
        let tree = call_tree(program, kernel);
        for &f in &tree {
            let func = program.function(f);
            if !func.has_body {
                continue;
            }
            let mut map = Vec::with_capacity(func.regs.len());
            let (mut next, mut next_pred) = (0u32, 0u32);
            for r in &func.regs {
                if r.class == RegClass::Pred {
                    map.push((RegFileKind::Predicate, next_pred));
                    next_pred += 1;
                } else {
                    let w = width_of(r.class);
                    next = next.div_ceil(w) * w;
                    map.push((RegFileKind::General, next));
                    next += w;
                }
            }
            regs = regs.max(next);
            preds = preds.max(next_pred);
            funcs[f.index()] = build_function(func, |_, vreg| map.get(vreg.index()).copied())?;
        }
        if uses_setmaxnreg(program, &tree) {
            regs = setmaxnreg_launch_registers(regs, &kf.directives);
        }
        Ok(KernelInfo {
            name: kf.name.clone(),
            kernel,
            registers_per_thread: regs,
            predicates_per_thread: preds,
            spill_slots: 0,
            before_budget: None,
            funcs,
            reuse_trace: None,
            control_bits: false,
            folds: false,
        })
    }

    /// The instruction `inst` of `func`; past the end of a body, the implicit exit.
    #[inline]
    /// The most general registers one instruction of the kernel's call tree reads or
    /// writes (a wide `wgmma` reads up to 134).
    pub fn widest_instruction(&self) -> usize {
        self.funcs
            .iter()
            .flat_map(|f| {
                f.insts.iter().map(move |i| {
                    let regs = |start: u32, n: u8| -> usize {
                        f.operands[start as usize..start as usize + usize::from(n)]
                            .iter()
                            .filter(|o| o.file == RegFileKind::General)
                            .map(|o| usize::from(o.width))
                            .sum()
                    };
                    regs(i.srcs_start, i.num_srcs).max(regs(i.dsts_start, i.num_dsts))
                })
            })
            .max()
            .unwrap_or(0)
    }

    /// The newest kind of instruction the kernel's call tree executes that only some GPUs
    /// have ([`GpuNeed`]), at its first line.
    pub fn gpu_need(&self) -> Option<GpuNeed> {
        self.funcs
            .iter()
            .filter_map(|f| f.gpu_need)
            .reduce(|a, b| if b.cc > a.cc { b } else { a })
    }

    /// The kernel's call tree executes `wgmma.mma_async` (sm_90a).
    pub fn uses_wgmma(&self) -> bool {
        self.funcs
            .iter()
            .flat_map(|f| &f.insts)
            .any(|i| matches!(i.wgmma, WgmmaRole::Mma { .. }))
    }

    pub fn inst(&self, func: FuncId, inst: InstId) -> &InstInfo {
        self.funcs
            .get(func.index())
            .and_then(|f| f.insts.get(inst.index()))
            .unwrap_or(&IMPLICIT_EXIT)
    }

    /// The instruction a warp at `pc` of `func` issues next: `pc`, or the first after the
    /// loads folded into constant-bank operands there ([`InstHint::folded`]), which the
    /// SM executes without issuing.
    #[inline]
    pub fn issue_point(&self, func: FuncId, pc: InstId) -> InstId {
        if !self.folds {
            return pc;
        }
        let mut at = pc;
        while self.inst(func, at).hint.folded {
            at = InstId(at.0 + 1);
        }
        at
    }

    /// [`Self::issue_point`] and its instruction, with one lookup per instruction visited
    /// (the scheduler's check under control bits needs both).
    #[inline]
    pub fn issue_inst(&self, func: FuncId, pc: InstId) -> (InstId, &InstInfo) {
        let mut at = pc;
        let mut ii = self.inst(func, at);
        if self.folds {
            while ii.hint.folded {
                at = InstId(at.0 + 1);
                ii = self.inst(func, at);
            }
        }
        (at, ii)
    }

    /// Source register operands of `inst` (guard predicate and address registers
    /// included; a register read by several operands appears once).
    #[inline]
    pub fn srcs(&self, func: FuncId, inst: &InstInfo) -> &[RegOperand] {
        self.slice(func, inst.srcs_start, inst.num_srcs)
    }

    /// Destination register operands of `inst`.
    #[inline]
    pub fn dsts(&self, func: FuncId, inst: &InstInfo) -> &[RegOperand] {
        self.slice(func, inst.dsts_start, inst.num_dsts)
    }

    fn slice(&self, func: FuncId, start: u32, n: u8) -> &[RegOperand] {
        self.funcs
            .get(func.index())
            .and_then(|f| f.operands.get(start as usize..start as usize + n as usize))
            .unwrap_or(&[])
    }

    /// The table of function `func` (empty if the kernel cannot reach it).
    pub fn function(&self, func: FuncId) -> Option<&FunctionInfo> {
        self.funcs.get(func.index())
    }

    /// Notes that some instruction is now a folded load ([`KernelInfo::issue_point`]).
    pub(crate) fn note_folded_loads(&mut self) {
        self.folds = true;
    }

    /// Mutable table of `func`, for passes that attach hints.
    pub fn function_mut(&mut self, func: FuncId) -> Option<&mut FunctionInfo> {
        self.funcs.get_mut(func.index())
    }
}

fn width_of(class: RegClass) -> u32 {
    match class {
        RegClass::Pred | RegClass::B16 | RegClass::B32 => 1,
        RegClass::B64 => 2,
        RegClass::B128 => 4,
    }
}

/// `kernel` and every function it reaches through direct calls, in id order.
fn call_tree(program: &Program, kernel: FuncId) -> Vec<FuncId> {
    let mut seen = vec![false; program.functions.len()];
    let mut work = vec![kernel];
    seen[kernel.index()] = true;
    while let Some(f) = work.pop() {
        for inst in &program.function(f).insts {
            if let Op::Call(c) = &inst.op {
                if let Callee::Direct(g) = c.callee {
                    if g.index() < seen.len() && !seen[g.index()] {
                        seen[g.index()] = true;
                        work.push(g);
                    }
                }
            }
        }
    }
    (0..seen.len())
        .filter(|&i| seen[i])
        .map(FuncId::new)
        .collect()
}

fn build_function(
    func: &ir::Function,
    locate: impl Fn(InstId, RegId) -> Option<(RegFileKind, u32)>,
) -> Result<FunctionInfo, KernelInfoError> {
    let mut out = FunctionInfo {
        insts: Vec::with_capacity(func.insts.len()),
        operands: Vec::new(),
        intervals: Vec::new(),
        interval_of: Vec::new(),
        gpu_need: None,
    };
    for inst in &func.insts {
        if let Some(n) = GpuNeed::of(&inst.op, inst.line) {
            if out.gpu_need.is_none_or(|o| n.cc > o.cc) {
                out.gpu_need = Some(n);
            }
        }
    }
    let operand = |inst: InstId, vreg: RegId| -> Result<Option<RegOperand>, KernelInfoError> {
        let Some((file, reg)) = locate(inst, vreg) else {
            return Ok(None);
        };
        let width = match file {
            RegFileKind::Predicate => 1,
            RegFileKind::General => width_of(func.reg(vreg).class),
        };
        let reg = u16::try_from(reg + width - 1)
            .map(|_| reg as u16)
            .map_err(|_| KernelInfoError::RegisterTooLarge {
                function: func.name.clone(),
                reg,
            })?;
        Ok(Some(RegOperand {
            file,
            reg,
            width: width as u8,
            hint: OperandHint::default(),
        }))
    };
    for (i, inst) in func.insts.iter().enumerate() {
        let id = InstId::new(i);
        let srcs_start = out.operands.len() as u32;
        for &v in func.uses(id) {
            if let Some(op) = operand(id, v)? {
                if !out.operands[srcs_start as usize..].contains(&op) {
                    out.operands.push(op);
                }
            }
        }
        let num_srcs = (out.operands.len() as u32 - srcs_start) as u8;
        let dsts_start = out.operands.len() as u32;
        for &v in func.defs(id) {
            if let Some(op) = operand(id, v)? {
                out.operands.push(op);
            }
        }
        let num_dsts = (out.operands.len() as u32 - dsts_start) as u8;
        {
            // The register-file designs hold at most `MAX_REGS` registers per instruction
            // on each side (the largest wgmma's); nothing the emulator accepts has more.
            let max = crate::rf::baseline::MAX_REGS;
            let regs = |ops: &[RegOperand]| -> usize {
                ops.iter()
                    .filter(|o| o.file == RegFileKind::General)
                    .map(|o| usize::from(o.width))
                    .sum()
            };
            let reads = regs(&out.operands[srcs_start as usize..dsts_start as usize]);
            let writes = regs(&out.operands[dsts_start as usize..]);
            if reads > max || writes > max {
                return Err(KernelInfoError::TooManyOperands {
                    function: func.name.clone(),
                    line: inst.line,
                    inst: inst.op.to_string(),
                    reads,
                    writes,
                    max,
                });
            }
        }
        let class = op_class(&inst.op);
        out.insts.push(InstInfo {
            class,
            hint: InstHint {
                reuse: reuse_key(func, id, class),
                ..InstHint::default()
            },
            async_copy: AsyncCopyRole::of(&inst.op),
            registers: RegisterRequest::of(&inst.op),
            wgmma: WgmmaRole::of(&inst.op),
            l1_cached_load: match &inst.op {
                Op::Ldu(_) => true,
                Op::Ld(a) => a.nc || a.cache == ir::op::CacheOp::Ca,
                _ => false,
            },
            srcs_start,
            num_srcs,
            dsts_start,
            num_dsts,
        });
    }
    Ok(out)
}

/// True when a function of the call tree executes `setmaxnreg`.
fn uses_setmaxnreg(program: &Program, tree: &[FuncId]) -> bool {
    tree.iter().any(|&f| {
        program
            .function(f)
            .insts
            .iter()
            .any(|i| matches!(i.op, Op::Setmaxnreg { .. }))
    })
}

/// WIR's [`ReuseKey`] of instruction `id` of `func`, or `None` when its result may depend
/// on more than its register sources: stores, atomics, control, textures, cross-lane
/// operations, local and generic memory (per-thread or of unknown space), volatile or
/// ordered loads, a device function's `.param` space, special registers (thread, warp and
/// CTA ids, clocks), predicate sources
/// or destinations (predicates are not renamed), and results wider than 64 bits.
pub fn reuse_key(func: &ir::Function, id: InstId, class: OpClass) -> Option<ReuseKey> {
    use ir::op::{MemOrder, Space};
    use ir::{AddrBase, Operand, Symbol};
    use std::hash::{Hash, Hasher};
    let inst = &func.insts[id.index()];
    let prologue = match &inst.op {
        Op::Ld(a) | Op::Ldu(a) => a.space == Space::Param,
        Op::Cvta { .. } => true,
        _ => false,
    };
    let reuse_class = match &inst.op {
        Op::Ld(a) | Op::Ldu(a) => {
            if !matches!(a.order, MemOrder::Weak) {
                return None;
            }
            match a.space {
                // A kernel's parameters are fixed for the launch; a device function's
                // `.param` space carries each call's arguments and results.
                Space::Param if func.kind == ir::FunctionKind::Kernel => ReuseClass::ReadOnlyLoad,
                Space::Const => ReuseClass::ReadOnlyLoad,
                Space::Global if a.nc || matches!(inst.op, Op::Ldu(_)) => ReuseClass::ReadOnlyLoad,
                Space::Global => ReuseClass::GlobalLoad,
                Space::Shared => ReuseClass::SharedLoad,
                _ => return None,
            }
        }
        _ if matches!(class, OpClass::Sfu | OpClass::Fp32Div) => ReuseClass::Sfu,
        _ if matches!(
            class,
            OpClass::Int
                | OpClass::IntSimple
                | OpClass::IntMinMax
                | OpClass::IntMul
                | OpClass::IntMad
                | OpClass::IntDiv
                | OpClass::Shuffle
                | OpClass::Fp32
                | OpClass::Fp32Simple
                | OpClass::Fp32MinMax
                | OpClass::Fp32Fma
                | OpClass::Fp64
                | OpClass::Fp64Div
                | OpClass::Fp64Simple
                | OpClass::Convert
                | OpClass::Convert64
        ) =>
        {
            ReuseClass::Alu
        }
        _ => return None,
    };
    if matches!(
        inst.op,
        Op::Shfl { .. }
            | Op::Vote { .. }
            | Op::Match { .. }
            | Op::Activemask
            | Op::Redux { .. }
            | Op::Elect
    ) {
        return None;
    }
    // Ours: WIR predates tensor cores. Matrix instructions and their fragment loads are
    // warp-wide (a lane's result depends on other lanes' registers and on the opaque
    // wmma fragment layout), so they are never reuse candidates.
    if matches!(
        inst.op,
        Op::WmmaLoad(_)
            | Op::WmmaStore(_)
            | Op::Mma(_)
            | Op::Ldmatrix(_)
            | Op::Movmatrix
            | Op::Wgmma(_)
    ) {
        return None;
    }
    let is_pred = |r: RegId| func.reg(r).class == RegClass::Pred;
    if func
        .defs(id)
        .iter()
        .any(|&r| is_pred(r) || width_of(func.reg(r).class) > 2)
        || func.defs(id).is_empty()
    {
        return None;
    }
    let guard = inst.guard.map(|g| g.reg);
    if func
        .uses(id)
        .iter()
        .any(|&r| is_pred(r) && Some(r) != guard)
    {
        return None;
    }
    let mut h = std::collections::hash_map::DefaultHasher::new();
    inst.op.hash(&mut h);
    let mut function_scoped = false;
    for (k, o) in func.operands_of(inst).iter().enumerate() {
        match o {
            Operand::Reg(_) | Operand::NotReg(_) => (k, 0u8).hash(&mut h),
            Operand::Imm(v) => (k, 1u8, v).hash(&mut h),
            Operand::Special(_) | Operand::Sink | Operand::Block(_) => return None,
            Operand::Address(a) => {
                match a.base {
                    AddrBase::Reg(_) => (k, 2u8).hash(&mut h),
                    AddrBase::Symbol(s) => {
                        function_scoped |= !matches!(s, Symbol::Global(_) | Symbol::Func(_));
                        if matches!(s, Symbol::Local(_))
                            && !matches!(reuse_class, ReuseClass::SharedLoad)
                        {
                            return None;
                        }
                        (k, 3u8, s).hash(&mut h)
                    }
                    AddrBase::Absolute => (k, 4u8).hash(&mut h),
                }
                a.offset.hash(&mut h);
            }
            Operand::SymbolAddr { symbol, offset } => {
                function_scoped |= !matches!(symbol, Symbol::Global(_) | Symbol::Func(_));
                (k, 5u8, symbol, offset).hash(&mut h);
            }
            Operand::Symbol(s) => {
                function_scoped |= !matches!(s, Symbol::Global(_) | Symbol::Func(_));
                (k, 6u8, s).hash(&mut h);
            }
        }
    }
    if function_scoped {
        // Parameters and local variables are numbered per function.
        func.name.hash(&mut h);
    }
    Some(ReuseKey {
        key: h.finish(),
        class: reuse_class,
        prologue,
    })
}

/// The opcode class of an operation: where it executes and how long it takes. A
/// projection of [`ir::ExecClass`], the classification the compiler's datapaths share:
/// FP64 arithmetic goes to [`OpClass::Fp64`] (division and roots to [`OpClass::Fp64Div`],
/// compares, selects, abs and neg to [`OpClass::Fp64Simple`]); conversions with a float
/// side to [`OpClass::Convert64`] when a side is 64 bits wide, else to
/// [`OpClass::Convert`]; transcendentals to [`OpClass::Sfu`], f32 division to
/// [`OpClass::Fp32Div`], f32 fma to [`OpClass::Fp32Fma`], f32 min/max to
/// [`OpClass::Fp32MinMax`], f32 compares, abs and neg to
/// [`OpClass::Fp32Simple`], f32 add, sub and mul to [`OpClass::Fp32`]; matrix
/// multiply-accumulates to [`OpClass::Tensor`]; integer add/sub to
/// [`OpClass::Int`], moves, logic, shifts, compares and votes to [`OpClass::IntSimple`],
/// min/max to [`OpClass::IntMinMax`], multiplies to [`OpClass::IntMul`], multiply-adds to
/// [`OpClass::IntMad`], division to [`OpClass::IntDiv`], shuffles to [`OpClass::Shuffle`];
/// memory, texture and fences to [`OpClass::Mem`]; branches, calls, barriers and exits to
/// [`OpClass::Control`]. The optional classes fall back to the base ones when a config
/// does not time them separately.
pub fn op_class(op: &Op) -> OpClass {
    use ir::ExecClass as E;
    match ir::exec_class(op) {
        E::IntSimple | E::WarpVote => OpClass::IntSimple,
        E::IntAdd => OpClass::Int,
        E::IntMinMax => OpClass::IntMinMax,
        E::IntMul => OpClass::IntMul,
        E::IntMad => OpClass::IntMad,
        E::IntDiv => OpClass::IntDiv,
        E::FloatAdd | E::FloatMul => OpClass::Fp32,
        E::FloatSimple => OpClass::Fp32Simple,
        E::FloatConvert => OpClass::Convert,
        E::DoubleSimple => OpClass::Fp64Simple,
        E::DoubleConvert => OpClass::Convert64,
        E::FloatMinMax => OpClass::Fp32MinMax,
        E::FloatFma => OpClass::Fp32Fma,
        E::FloatDiv => OpClass::Fp32Div,
        E::Transcendental => OpClass::Sfu,
        E::DoubleAdd | E::DoubleMinMax | E::DoubleMul | E::DoubleFma => OpClass::Fp64,
        E::DoubleDiv => OpClass::Fp64Div,
        E::Shuffle => OpClass::Shuffle,
        E::Tensor => OpClass::Tensor,
        E::Load | E::Store | E::Atomic | E::Prefetch | E::Texture | E::Fence => OpClass::Mem,
        E::Branch | E::Call | E::Return | E::Barrier | E::Misc => OpClass::Control,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setmaxnreg_kernels_launch_with_ptxas_s_sm90a_count() {
        use ir::function::PerfDirectives;
        let bounds = |maxntid: [u32; 3], minnctapersm: Option<u32>| PerfDirectives {
            maxntid: Some(maxntid),
            minnctapersm,
            ..PerfDirectives::default()
        };
        // CUTLASS's warp-specialised kernels: 384 threads, one CTA per SM.
        assert_eq!(
            setmaxnreg_launch_registers(40, &bounds([384, 1, 1], None)),
            168
        );
        assert_eq!(
            setmaxnreg_launch_registers(40, &bounds([128, 2, 1], Some(2))),
            128
        );
        // Capped at 255 per thread, in multiples of 8; never below the allocation.
        assert_eq!(
            setmaxnreg_launch_registers(40, &bounds([32, 1, 1], None)),
            248
        );
        assert_eq!(
            setmaxnreg_launch_registers(200, &bounds([384, 1, 1], None)),
            200
        );
        let maxnreg = PerfDirectives {
            maxnreg: Some(64),
            maxntid: Some([384, 1, 1]),
            ..PerfDirectives::default()
        };
        assert_eq!(setmaxnreg_launch_registers(10, &maxnreg), 64);
        assert_eq!(
            setmaxnreg_launch_registers(30, &PerfDirectives::default()),
            32
        );
        // A zero-thread bound cannot divide by zero.
        assert_eq!(
            setmaxnreg_launch_registers(30, &bounds([0, 1, 1], None)),
            248
        );
    }

    const PTX: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry k(.param .u64 p)
{
    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<3>;
    .reg .f64 %fd<2>;
    ld.param.u64 %rd1, [p];
    mov.u32 %r1, %tid.x;
    setp.lt.u32 %p1, %r1, 8;
    @%p1 add.s32 %r2, %r1, %r1;
    mul.wide.u32 %rd2, %r2, 4;
    add.f64 %fd1, %fd1, %fd1;
    st.global.u32 [%rd1], %r2;
    ret;
}
"#;

    fn program() -> Program {
        let ast = ptx::parse("t.ptx", PTX).unwrap();
        ir::lower(&ast, "t.ptx", PTX).unwrap()
    }

    #[test]
    fn pipeline_annotations_become_hints() {
        use compiler::pipeline::{compile, LoadOptions, PassSet};
        let p = program();
        let options = LoadOptions {
            max_registers: None,
            passes: PassSet {
                liveness_bits: true,
                reuse_distance: Some(Default::default()),
                intervals: Some(Default::default()),
                orf_lrf: Some(Default::default()),
                ..PassSet::default()
            },
        };
        let c = compile(&p, &options).unwrap();
        let (k, _) = c.program.kernels().next().unwrap();
        let info = KernelInfo::from_compiled(&c.program, &c.functions, k).unwrap();
        let plain = KernelInfo::compile(&p, k, &AllocConfig::default()).unwrap();
        assert_eq!(info.registers_per_thread, plain.registers_per_thread);
        // @%p1 add %r2, %r1, %r1: %r1 (read twice, one operand here) is dead after it,
        // and %r2 is next read by the very next instruction.
        let add = info.inst(k, InstId::new(3));
        let srcs = info.srcs(k, add);
        assert_eq!(srcs.len(), 2);
        assert!(srcs[1].hint.dead_after, "{srcs:?}");
        assert_eq!(info.dsts(k, add)[0].hint.reuse_distance, Some(1));
        // `setp %p1, %r1, 8`: %r1 is read again by the add.
        assert!(
            !info.srcs(k, info.inst(k, InstId::new(2)))[0]
                .hint
                .dead_after
        );
        // One interval covers this small kernel, entered at its first instruction.
        assert_eq!(info.inst(k, InstId::new(0)).hint.interval_entry, Some(0));
        let intervals = &info.function(k).unwrap().intervals;
        assert_eq!(intervals.len(), 1);
        assert!(intervals[0].working_set.contains(&srcs[1].reg));
        // The last instruction ends a strand.
        assert!(info.inst(k, InstId::new(7)).hint.strand_end);
        // Without passes, no hints.
        let bare = compile(&p, &LoadOptions::default()).unwrap();
        let info = KernelInfo::from_compiled(&bare.program, &bare.functions, k).unwrap();
        assert_eq!(info, plain);
    }

    #[test]
    fn classes_and_operands_follow_the_allocation() {
        let p = program();
        let (k, _) = p.kernels().next().unwrap();
        let info = KernelInfo::compile(&p, k, &AllocConfig::default()).unwrap();
        let f = k;
        let class = |i: usize| info.inst(f, InstId::new(i)).class;
        assert_eq!(class(0), OpClass::Mem);
        assert_eq!(class(1), OpClass::IntSimple);
        assert_eq!(class(3), OpClass::Int);
        assert_eq!(class(4), OpClass::IntMul);
        assert_eq!(class(5), OpClass::Fp64);
        assert_eq!(class(7), OpClass::Control);
        // @%p1 add %r2, %r1, %r1: the guard predicate and %r1 once.
        let add = info.inst(f, InstId::new(3));
        let srcs = info.srcs(f, add);
        assert_eq!(srcs.len(), 2, "{srcs:?}");
        assert_eq!(srcs[0].file, RegFileKind::Predicate);
        assert_eq!(srcs[1].file, RegFileKind::General);
        // mul.wide writes an aligned pair.
        let mul = info.inst(f, InstId::new(4));
        let d = info.dsts(f, mul)[0];
        assert_eq!((d.width, d.reg % 2), (2, 0));
        assert!(info.registers_per_thread >= 4 && info.registers_per_thread <= 12);
        // Past the end: the implicit exit.
        assert_eq!(info.inst(f, InstId::new(99)).class, OpClass::Control);
    }

    #[test]
    fn the_test_stand_in_packs_every_virtual_register() {
        let p = program();
        let (k, _) = p.kernels().next().unwrap();
        let info = KernelInfo::unallocated(&p, k).unwrap();
        // %r0..%r3 (4), %rd0..%rd2 (3 pairs), %fd0..%fd1 (2 pairs) = 4 + 6 + 4.
        assert_eq!(info.registers_per_thread, 14);
        assert_eq!(info.predicates_per_thread, 2);
    }
}

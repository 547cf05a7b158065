//! The SM core's parameters: schedulers, dependence tracking, execution units and
//! their per-class timing, the pipeline.

use super::*;
use crate::time::Cycles;
use serde::{Deserialize, Serialize};

/// Warp scheduling policy of each warp scheduler.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SchedulerPolicy {
    /// Loose round robin: start after the warp that issued last.
    Lrr,
    /// Greedy then oldest: keep issuing from one warp until it stalls, then the oldest.
    Gto,
    /// Two-level (Narasiman et al. 2011, Gebhart et al. 2011): round robin over a small
    /// active set; a warp waiting on a long-latency operation is demoted to the pending
    /// set. The active set size is `sm.active_warps`.
    TwoLevel,
    /// Greedy then youngest (Huerta et al., "Dissecting and Modeling the Architecture of
    /// Modern GPU Cores", MICRO 2025, arXiv:2503.20481, issue-scheduler section): keep
    /// issuing from one warp until it stalls, then the youngest ready warp.
    Gty,
}

/// `[sm]`: per-SM resources, occupancy limits and the front end.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SmConfig {
    /// Maximum resident warps per SM.
    pub max_warps: u32,
    /// Maximum resident threads per SM.
    pub max_threads: u32,
    /// Maximum resident CTAs (thread blocks) per SM.
    pub max_ctas: u32,
    /// Shared memory capacity per SM in bytes (occupancy limit).
    pub shared_memory_bytes: u32,
    /// Register file capacity per SM in 32-bit registers (occupancy limit: registers per
    /// thread x threads per CTA x CTAs must fit). For `register_file.design = "ideal"`,
    /// `register_file.ideal_capacity_registers` replaces it when set;
    /// `"ideal-unlimited"` has no register limit.
    pub registers: u32,
    /// Warp schedulers per SM; warps are assigned to schedulers by warp id modulo this.
    pub schedulers: u32,
    /// Warp scheduling policy.
    pub scheduler: SchedulerPolicy,
    /// Active-set size per scheduler for `scheduler = "two_level"`; ignored otherwise.
    pub active_warps: u32,
    /// Warp instructions each scheduler may issue per cycle (from one warp).
    pub issue_width: u32,
    /// Decoded-instruction buffer entries per warp.
    pub ibuffer_entries: u32,
    /// Granule of register allocation, in 32-bit registers per warp: a warp's registers
    /// (registers per thread x 32) are rounded up to a multiple of this before being
    /// counted against `sm.registers` (the CUDA occupancy calculator's "register
    /// allocation unit size", warp granularity: 64 on compute capability 2.x, 256 since).
    pub register_allocation_unit: u32,
    /// The architecture's cap on registers per thread (the ISA's register namespace:
    /// 63 on compute capability 2.x, 255 since 3.5). The allocator allocates every kernel
    /// under min(this, `--max-registers`) and spills what does not fit, as ptxas does.
    pub max_registers_per_thread: u32,
    /// Whether kernels run with their loads scheduled early in each block, as ptxas's
    /// latency scheduling places them, rather than in PTX order (default false: PTX order,
    /// as GPGPU-Sim runs it). See `compiler::load_schedule`.
    #[serde(default, skip_serializing_if = "super::memory::is_false")]
    pub load_schedule: bool,
    /// How a warp waits for a fixed-latency result (default `scoreboard`).
    #[serde(default, skip_serializing_if = "Dependence::is_scoreboard")]
    pub dependence: Dependence,
    /// Which core the SM is (default `collector`).
    #[serde(default, skip_serializing_if = "Core::is_collector")]
    pub core: Core,
    /// The modern core's per-sub-core memory-instruction buffer (absent: none; memory
    /// instructions are paced by the `mem` unit's initiation interval alone). Needs
    /// `sm.core = "modern"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_buffer: Option<MemoryBufferConfig>,
    /// Extra cycles a global, local or constant access spends on its per-thread
    /// addresses when its address comes from a general register, over one whose address
    /// is an immediate (Huerta et al. MICRO'25 §5.4, Table 2: 3 on Ampere: a 32-bit
    /// global load is ready for its consumer 32 cycles after issue with a regular address
    /// register and 29 with a uniform one, a constant load 29 and 26 with an immediate
    /// address). Shared-memory accesses compute their addresses in the shared pipeline
    /// and do not pay it. Default 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub per_thread_address_cycles: u32,
    /// Extra cycles a `cp.async` (SASS's LDGSTS) spends computing its addresses, over a
    /// global load's (Huerta et al. MICRO'25 §5.4, Table 2: LDGSTS's WAR dependence,
    /// "released when the address is computed", comes 13 cycles after issue, a global
    /// load's with a regular address register 11: 2 on Ampere). Its RAW dependence is
    /// released when its read step has finished, so the copy completes that much later.
    /// Default 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub async_copy_address_cycles: u32,
    /// Cycles a `cp.async` spends writing its data into shared memory after its global
    /// read returns, before the copy counts as complete (the end of LDGSTS's read step,
    /// which releases its dependence and a `cp.async.wait`). Default 0: the copy
    /// completes when its read returns.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub async_copy_write_cycles: u32,
    /// The modern core times a scalar `ld.param` (and an `ld.const` at a constant
    /// address) whose every consumer can take it as SASS's constant-bank operand
    /// (`c[bank][offset]`) as that operand: the load takes no issue slot and no register,
    /// its consumers read it from the constant cache instead of a bank
    /// ([`crate::constant_operands`]). Default off; needs `sm.core = "modern"`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub constant_operands: bool,
    /// Lines of the stream buffer in front of each sub-core's L0 instruction cache
    /// (Huerta et al. MICRO'25 §5.2: a miss prefetches the following lines; 16 entries);
    /// 0 (the default): none. Needs `sm.core = "modern"`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub l0_stream_buffer: u32,
    /// Each sub-core's L0 instruction cache on the modern core (absent: 16 KB, 4 ways,
    /// Jia et al.'s Turing figure; see `sm/front_end.rs`). Needs `sm.core = "modern"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l0_icache: Option<L0CacheConfig>,
    /// A modern config's own collector-core settings, `key=value` (the syntax of `--set`)
    /// or `unset key` each: applied when the config is loaded with `sm.core =
    /// "collector"` (in the file or by `--set sm.core=collector`), before the user's own
    /// `--set`s, which keep the last word. `qv100` lists here what it was before it moved
    /// to the modern core, so that its earlier results stay reproducible. May not set
    /// `sm.core` or `sm.collector`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub collector: Vec<String>,
}

/// `sm.l0_icache`: one sub-core's L0 instruction cache (lines of `icache.line_bytes`,
/// LRU within a set).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct L0CacheConfig {
    /// Capacity in bytes: a whole number of sets of `ways` lines.
    pub size_bytes: u32,
    /// Lines per set (1 to 32).
    pub ways: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// `[sm.memory_buffer]`: each sub-core queues its memory instructions in a buffer of
/// `entries` entries, from which one leaves for the shared memory pipeline every
/// `issue_interval` cycles; a sub-core whose buffer is full issues no memory instruction
/// (Huerta et al. MICRO'25, memory pipeline: 5 entries, one every 4 cycles on Ampere;
/// [`crate::sm::memory_buffer`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryBufferConfig {
    /// Entries per sub-core; 0: no buffer (as when the table is absent, e.g. to run a
    /// modern config's collector core).
    pub entries: u32,
    /// Cycles between two instructions leaving one sub-core's buffer (at least 1).
    pub issue_interval: u32,
}

/// `sm.core`: how an issued instruction reaches its register-file banks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Core {
    /// GPGPU-Sim's core: an issued instruction waits in an operand collector unit while
    /// the banks' arbiter grants its reads, so the scheduler issues past bank conflicts.
    #[default]
    Collector,
    /// NVIDIA's core since Volta as Huerta et al. (MICRO 2025, arXiv:2503.20481) model
    /// it: no operand collectors; each sub-core's Allocate stage reserves its two banks'
    /// read ports for an issued instruction, and a bank conflict stalls that sub-core's
    /// issue for its bubbles ([`crate::sm::allocate`]). Needs
    /// `sm.dependence = "stall_counter"`. Designs that are operand-collector designs
    /// (Malekeh's CCUs, BOW's windows, LTRF, CERF, the RFC, ORF/LRF, WIR) keep their
    /// collectors; `baseline` is the banks without the reuse cache.
    Modern,
}

impl Core {
    fn is_collector(&self) -> bool {
        *self == Core::Collector
    }
}

/// `sm.dependence`: when an instruction that reads a fixed-latency result may issue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dependence {
    /// The scoreboard holds every result's registers until its write to the register
    /// file completes; a consumer then reads its operands: the collector core's
    /// (GPGPU-Sim's) serialisation of writeback and operand read.
    #[default]
    Scoreboard,
    /// Compiler-set stall counts (Huerta et al. MICRO'25, issue stage): a result of a
    /// fixed-latency unit (`sp`, `int`, `dp`) releases its registers `latency` cycles
    /// after its producer issued, the published issue-to-dependent-issue latency; the
    /// consumer's operand read overlaps the producer's writeback. Memory and SFU results
    /// (variable latency, dependence counters in hardware) still wait for their write.
    StallCounter,
    /// The compiler's control bits (Huerta et al. MICRO'25, issue stage and "Control
    /// bits"; [`compiler::control_bits`]): after an instruction issues its warp waits its
    /// stall count, which covers fixed-latency results; variable-latency producers
    /// increment one of six dependence counters per warp at issue and decrement it when
    /// their result is written, and an instruction issues only when the counters of its
    /// wait mask are zero. No scoreboard check. Needs `sm.core = "modern"`.
    ControlBits,
}

impl Dependence {
    fn is_scoreboard(&self) -> bool {
        *self == Dependence::Scoreboard
    }
}

/// An execution unit type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnitKind {
    /// Single-precision floating point (and, on GPUs without an INT unit, integer) lanes.
    Sp,
    /// Integer unit.
    Int,
    /// Special function unit.
    Sfu,
    /// Double-precision unit.
    Dp,
    /// Load/store (address generation; the memory system times the access itself).
    Mem,
}

/// Number of units of each type per SM.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnitCounts {
    /// SP units (each a warp-wide pipeline).
    pub sp: u32,
    /// INT units; may be 0 if every integer class runs on `sp`.
    pub int: u32,
    /// SFU units.
    pub sfu: u32,
    /// DP units.
    pub dp: u32,
    /// MEM (load/store) units.
    pub mem: u32,
}

impl UnitCounts {
    /// Units of type `kind`.
    pub fn get(&self, kind: UnitKind) -> u32 {
        match kind {
            UnitKind::Sp => self.sp,
            UnitKind::Int => self.int,
            UnitKind::Sfu => self.sfu,
            UnitKind::Dp => self.dp,
            UnitKind::Mem => self.mem,
        }
    }
}

/// Where an opcode class executes and how long it takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClassTiming {
    /// The unit type that executes the class.
    pub unit: UnitKind,
    /// Cycles from dispatch to result writeback.
    pub latency: Cycles,
    /// Cycles before the same unit accepts another warp instruction.
    pub initiation_interval: Cycles,
}

/// An opcode class: the granularity at which execution timing is configured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OpClass {
    /// FP32 add, mul, fma, min/max, compare, conversions.
    Fp32,
    /// Integer add/sub, logic, shifts, compares, moves, selects.
    Int,
    /// Integer multiply and multiply-add.
    IntMul,
    /// Integer divide and remainder.
    IntDiv,
    /// Transcendentals and reciprocals (rcp, sqrt, rsqrt, sin, cos, ex2, lg2).
    Sfu,
    /// FP64 arithmetic.
    Fp64,
    /// Loads, stores, atomics (address generation and issue to the memory system).
    Mem,
    /// Branches, barriers, exit.
    Control,
    /// Integer moves, logic, shifts, compares, selects, warp votes (`int_simple`; falls
    /// back to `int`).
    IntSimple,
    /// Integer minimum and maximum (`int_min_max`; falls back to `int`).
    IntMinMax,
    /// Integer multiply-add (`int_mad`; falls back to `int_mul`).
    IntMad,
    /// FP32 minimum and maximum (`fp32_min_max`; falls back to `fp32`).
    Fp32MinMax,
    /// FP32 fused multiply-add (`fp32_fma`; falls back to `fp32`).
    Fp32Fma,
    /// FP32 division (`fp32_div`; falls back to `sfu`).
    Fp32Div,
    /// FP64 division, reciprocal and square roots (`fp64_div`; falls back to `fp64`).
    Fp64Div,
    /// Warp shuffles (`shuffle`; falls back to `int`).
    Shuffle,
    /// FP32 compares, selects, abs, neg (`fp32_simple`; falls back to `fp32`).
    Fp32Simple,
    /// FP64 compares, selects, abs, neg (`fp64_simple`; falls back to `fp64`).
    Fp64Simple,
    /// Conversions with a float side, both sides at most 32 bits (`cvt`; falls back to
    /// `fp32_simple`, the class they belonged to before they were timed apart).
    Convert,
    /// Conversions with a float side and a 64-bit side (`cvt64`; falls back to `fp64`).
    Convert64,
    /// Warp-level matrix multiply-accumulate on the tensor cores: `wmma.mma` and
    /// `mma.sync` (`tensor`; falls back to `fp32_fma`). One timing for every shape and
    /// type (see `ClassTimings::tensor`).
    Tensor,
}

impl OpClass {
    /// The eight original classes, in `OpClass as usize` order 0..8; [`OpClass::coarse`]
    /// maps every class onto one of them.
    pub const COARSE: usize = 8;

    /// The original class a finer one refines: the class whose timing it takes when the
    /// config gives it none ([`ClassTimings::get`]), and whose execution energy it costs.
    pub fn coarse(self) -> OpClass {
        match self {
            OpClass::IntSimple | OpClass::IntMinMax | OpClass::Shuffle => OpClass::Int,
            OpClass::IntMad => OpClass::IntMul,
            OpClass::Fp32MinMax
            | OpClass::Fp32Fma
            | OpClass::Fp32Simple
            | OpClass::Convert
            | OpClass::Tensor => OpClass::Fp32,
            OpClass::Fp32Div => OpClass::Sfu,
            OpClass::Fp64Div | OpClass::Fp64Simple | OpClass::Convert64 => OpClass::Fp64,
            c => c,
        }
    }
}

/// `[pipeline.classes]`: timing of each opcode class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClassTimings {
    /// [`OpClass::Fp32`].
    pub fp32: ClassTiming,
    /// [`OpClass::Int`].
    pub int: ClassTiming,
    /// [`OpClass::IntMul`].
    pub int_mul: ClassTiming,
    /// [`OpClass::IntDiv`].
    pub int_div: ClassTiming,
    /// [`OpClass::Sfu`].
    pub sfu: ClassTiming,
    /// [`OpClass::Fp64`].
    pub fp64: ClassTiming,
    /// [`OpClass::Mem`].
    pub mem: ClassTiming,
    /// [`OpClass::Control`].
    pub control: ClassTiming,
    /// [`OpClass::IntSimple`] (absent: `int`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub int_simple: Option<ClassTiming>,
    /// [`OpClass::IntMinMax`] (absent: `int`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub int_min_max: Option<ClassTiming>,
    /// [`OpClass::IntMad`] (absent: `int_mul`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub int_mad: Option<ClassTiming>,
    /// [`OpClass::Fp32MinMax`] (absent: `fp32`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp32_min_max: Option<ClassTiming>,
    /// [`OpClass::Fp32Fma`] (absent: `fp32`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp32_fma: Option<ClassTiming>,
    /// [`OpClass::Fp32Div`] (absent: `sfu`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp32_div: Option<ClassTiming>,
    /// [`OpClass::Fp64Div`] (absent: `fp64`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp64_div: Option<ClassTiming>,
    /// [`OpClass::Shuffle`] (absent: `int`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shuffle: Option<ClassTiming>,
    /// [`OpClass::Fp32Simple`] (absent: `fp32`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp32_simple: Option<ClassTiming>,
    /// [`OpClass::Fp64Simple`] (absent: `fp64`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp64_simple: Option<ClassTiming>,
    /// [`OpClass::Convert`] (absent: `fp32_simple`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cvt: Option<ClassTiming>,
    /// [`OpClass::Convert64`] (absent: `fp64`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cvt64: Option<ClassTiming>,
    /// [`OpClass::Tensor`] (absent: `fp32_fma`). The unit is one of the SM's unit types
    /// (regsim has no separate tensor pipe: a config names the unit whose issue slots the
    /// tensor cores share, `dp` in the shipped configs); `initiation_interval` is the
    /// cycles one unit takes per warp-wide m16n8k16 (2,048 multiply-adds) at the
    /// published dense FP16 rate, and `latency` the issue-to-result time. `wmma`
    /// m16n16k16 (twice the work) and m16n8k8 (half) take the same timing: per-shape
    /// timing is not modelled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tensor: Option<ClassTiming>,
}

impl ClassTimings {
    /// Every class with its key name, for validation and reports (optional classes that
    /// are absent resolve to their fallback).
    pub fn iter(&self) -> [(OpClass, &'static str, &ClassTiming); 21] {
        [
            (OpClass::Fp32, "fp32", &self.fp32),
            (OpClass::Int, "int", &self.int),
            (OpClass::IntMul, "int_mul", &self.int_mul),
            (OpClass::IntDiv, "int_div", &self.int_div),
            (OpClass::Sfu, "sfu", &self.sfu),
            (OpClass::Fp64, "fp64", &self.fp64),
            (OpClass::Mem, "mem", &self.mem),
            (OpClass::Control, "control", &self.control),
            (
                OpClass::IntSimple,
                "int_simple",
                self.get(OpClass::IntSimple),
            ),
            (
                OpClass::IntMinMax,
                "int_min_max",
                self.get(OpClass::IntMinMax),
            ),
            (OpClass::IntMad, "int_mad", self.get(OpClass::IntMad)),
            (
                OpClass::Fp32MinMax,
                "fp32_min_max",
                self.get(OpClass::Fp32MinMax),
            ),
            (OpClass::Fp32Fma, "fp32_fma", self.get(OpClass::Fp32Fma)),
            (OpClass::Fp32Div, "fp32_div", self.get(OpClass::Fp32Div)),
            (OpClass::Fp64Div, "fp64_div", self.get(OpClass::Fp64Div)),
            (OpClass::Shuffle, "shuffle", self.get(OpClass::Shuffle)),
            (
                OpClass::Fp32Simple,
                "fp32_simple",
                self.get(OpClass::Fp32Simple),
            ),
            (
                OpClass::Fp64Simple,
                "fp64_simple",
                self.get(OpClass::Fp64Simple),
            ),
            (OpClass::Convert, "cvt", self.get(OpClass::Convert)),
            (OpClass::Convert64, "cvt64", self.get(OpClass::Convert64)),
            (OpClass::Tensor, "tensor", self.get(OpClass::Tensor)),
        ]
    }

    /// Timing of `class`, an absent optional class resolved to its fallback.
    pub fn get(&self, class: OpClass) -> &ClassTiming {
        match class {
            OpClass::Fp32 => &self.fp32,
            OpClass::Int => &self.int,
            OpClass::IntMul => &self.int_mul,
            OpClass::IntDiv => &self.int_div,
            OpClass::Sfu => &self.sfu,
            OpClass::Fp64 => &self.fp64,
            OpClass::Mem => &self.mem,
            OpClass::Control => &self.control,
            OpClass::IntSimple => self.int_simple.as_ref().unwrap_or(&self.int),
            OpClass::IntMinMax => self.int_min_max.as_ref().unwrap_or(&self.int),
            OpClass::IntMad => self.int_mad.as_ref().unwrap_or(&self.int_mul),
            OpClass::Fp32MinMax => self.fp32_min_max.as_ref().unwrap_or(&self.fp32),
            OpClass::Fp32Fma => self.fp32_fma.as_ref().unwrap_or(&self.fp32),
            OpClass::Fp32Div => self.fp32_div.as_ref().unwrap_or(&self.sfu),
            OpClass::Fp64Div => self.fp64_div.as_ref().unwrap_or(&self.fp64),
            OpClass::Shuffle => self.shuffle.as_ref().unwrap_or(&self.int),
            OpClass::Fp32Simple => self.fp32_simple.as_ref().unwrap_or(&self.fp32),
            OpClass::Fp64Simple => self.fp64_simple.as_ref().unwrap_or(&self.fp64),
            OpClass::Convert => match &self.cvt {
                Some(t) => t,
                None => self.get(OpClass::Fp32Simple),
            },
            OpClass::Convert64 => self.cvt64.as_ref().unwrap_or(&self.fp64),
            OpClass::Tensor => match &self.tensor {
                Some(t) => t,
                None => self.get(OpClass::Fp32Fma),
            },
        }
    }
}

/// `[pipeline]`: execution units.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PipelineConfig {
    /// Units of each type per SM.
    pub units: UnitCounts,
    /// Timing per opcode class.
    pub classes: ClassTimings,
    /// Sub-cores (Volta's processing blocks): a unit type with at least one unit per
    /// scheduler is split evenly between the schedulers, and a warp dispatches only to
    /// its own scheduler's share; types with fewer units stay shared (default false:
    /// every unit serves every scheduler).
    #[serde(default, skip_serializing_if = "is_false")]
    pub sub_core: bool,
    /// Cycles between an instruction leaving its operand collector and the first stage
    /// of its execution unit: pipeline registers the dispatch passes through (GPGPU-Sim:
    /// the collector's output register, the unit's dispatch register and the entry into
    /// its pipeline, 3 cycles). Added to every dispatched instruction's latency, memory
    /// instructions' address generation included; it does not occupy the unit longer.
    /// Default 0: the unit starts in the cycle of dispatch.
    #[serde(default, skip_serializing_if = "Cycles::is_zero")]
    pub dispatch_latency: Cycles,
}

impl PipelineConfig {
    /// Timing of opcode class `class`.
    pub fn timing(&self, class: OpClass) -> &ClassTiming {
        self.classes.get(class)
    }
}

//! Decoded PTX operations: what an instruction does, with every modifier turned into a typed
//! field (PTX ISA 8.x, chapter 9 "Instruction Set").
//!
//! An [`Op`] is produced once, when the `ir` crate decodes an instruction from the syntax
//! tree, and is what the functional emulator matches on in its hot loop: variants are small
//! and `Copy`-like, and the rare bulky ones (calls, texture fetches) are boxed. Operands are
//! not part of the op; they live in the function's operand arena (see
//! [`crate::function::Inst`]) in the order documented on each variant: destinations first,
//! then sources.

use std::fmt;

pub use ptx::ast::ScalarType;

use crate::entity::FuncId;

/// Rounding modifiers: `.rn .rna .rz .rm .rp` for floating-point results, `.rni .rzi .rmi
/// .rpi` for float-to-integer rounding in `cvt`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rounding {
    Rn,
    Rna,
    Rz,
    Rm,
    Rp,
    Rni,
    Rzi,
    Rmi,
    Rpi,
    /// `.rs`: stochastic rounding (cvt to packed narrow floats only).
    Rs,
}

impl Rounding {
    pub fn as_str(self) -> &'static str {
        match self {
            Rounding::Rn => "rn",
            Rounding::Rna => "rna",
            Rounding::Rz => "rz",
            Rounding::Rm => "rm",
            Rounding::Rp => "rp",
            Rounding::Rni => "rni",
            Rounding::Rzi => "rzi",
            Rounding::Rmi => "rmi",
            Rounding::Rpi => "rpi",
            Rounding::Rs => "rs",
        }
    }

    /// True for the rounding modes that round a floating-point result (`.rn .rz .rm .rp`).
    pub fn is_float_rounding(self) -> bool {
        matches!(
            self,
            Rounding::Rn | Rounding::Rz | Rounding::Rm | Rounding::Rp
        )
    }

    /// True for the rounding modes that round to an integral value (`.rni .rzi .rmi .rpi`).
    pub fn is_integer_rounding(self) -> bool {
        matches!(
            self,
            Rounding::Rni | Rounding::Rzi | Rounding::Rmi | Rounding::Rpi
        )
    }
}

/// Carry flag use of integer add/sub/mad (`.cc` writes the carry, `addc`/`subc`/`madc` read it).
/// The carry flag is per-thread state of the emulator, not a virtual register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Carry {
    None,
    /// `add.cc`: writes CC.CF.
    Out,
    /// `addc`: reads CC.CF.
    In,
    /// `addc.cc`: reads and writes CC.CF.
    InOut,
}

impl Carry {
    /// The carry use of an instruction that does or does not read CC.CF (`addc`) and does
    /// or does not write it (`.cc`).
    pub fn new(reads: bool, writes: bool) -> Carry {
        match (reads, writes) {
            (false, false) => Carry::None,
            (false, true) => Carry::Out,
            (true, false) => Carry::In,
            (true, true) => Carry::InOut,
        }
    }

    pub fn reads(self) -> bool {
        matches!(self, Carry::In | Carry::InOut)
    }
    pub fn writes(self) -> bool {
        matches!(self, Carry::Out | Carry::InOut)
    }
}

/// Which part of the double-width product `mul`/`mad` keep.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MulMode {
    Lo,
    Hi,
    /// The whole product, in a register twice as wide as the operands.
    Wide,
}

/// Comparison operators of `setp`, `set`, `slct` (ISA §9.7.1 comparison tables).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// Unsigned `<`.
    Lo,
    /// Unsigned `<=`.
    Ls,
    /// Unsigned `>`.
    Hi,
    /// Unsigned `>=`.
    Hs,
    /// Unordered-or-equal, etc. (floats only).
    Equ,
    Neu,
    Ltu,
    Leu,
    Gtu,
    Geu,
    /// Both operands are numbers.
    Num,
    /// Either operand is NaN.
    Nan,
}

impl CmpOp {
    pub fn as_str(self) -> &'static str {
        use CmpOp::*;
        match self {
            Eq => "eq",
            Ne => "ne",
            Lt => "lt",
            Le => "le",
            Gt => "gt",
            Ge => "ge",
            Lo => "lo",
            Ls => "ls",
            Hi => "hi",
            Hs => "hs",
            Equ => "equ",
            Neu => "neu",
            Ltu => "ltu",
            Leu => "leu",
            Gtu => "gtu",
            Geu => "geu",
            Num => "num",
            Nan => "nan",
        }
    }
}

/// Boolean combination of a comparison with a third predicate (`setp.lt.and`), or the
/// operation of `bar.red`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BoolOp {
    And,
    Or,
    Xor,
}

impl BoolOp {
    pub fn as_str(self) -> &'static str {
        match self {
            BoolOp::And => "and",
            BoolOp::Or => "or",
            BoolOp::Xor => "xor",
        }
    }
}

/// Floating-point behaviour shared by add/sub/mul/fma.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct FloatMode {
    /// `None`: the default (round to nearest even, and the compiler may contract mul+add).
    pub rounding: Option<Rounding>,
    /// Flush subnormal inputs and results to sign-preserving zero.
    pub ftz: bool,
    /// Clamp the result to [0.0, 1.0] (NaN becomes 0.0).
    pub sat: bool,
}

/// How precise `div`, `rcp` and `sqrt` on floats are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Precision {
    /// `.approx`: fast approximation.
    Approx,
    /// `.full` (div only): full-range approximation, max 2 ulp.
    Full,
    /// IEEE 754 compliant with the given rounding.
    Ieee(Rounding),
}

/// `testp` classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FloatClass {
    Finite,
    Infinite,
    Number,
    NotANumber,
    Normal,
    Subnormal,
}

impl FloatClass {
    pub fn as_str(self) -> &'static str {
        match self {
            FloatClass::Finite => "finite",
            FloatClass::Infinite => "infinite",
            FloatClass::Number => "number",
            FloatClass::NotANumber => "notanumber",
            FloatClass::Normal => "normal",
            FloatClass::Subnormal => "subnormal",
        }
    }
}

/// `prmt` modes; `Generic` is the plain byte-select form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PrmtMode {
    Generic,
    F4e,
    B4e,
    Rc8,
    Ecl,
    Ecr,
    Rc16,
}

impl PrmtMode {
    pub fn as_str(self) -> &'static str {
        match self {
            PrmtMode::Generic => "",
            PrmtMode::F4e => "f4e",
            PrmtMode::B4e => "b4e",
            PrmtMode::Rc8 => "rc8",
            PrmtMode::Ecl => "ecl",
            PrmtMode::Ecr => "ecr",
            PrmtMode::Rc16 => "rc16",
        }
    }
}

/// `shf` direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShiftDir {
    Left,
    Right,
}

/// `shf` shift-amount handling.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShiftAmount {
    Clamp,
    Wrap,
}

/// A memory state space as instructions name it. `Generic` is the absence of a space
/// modifier (addresses are generic and resolved at run time).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Space {
    Generic,
    Global,
    Shared,
    /// `.shared::cluster`
    SharedCluster,
    Local,
    Const,
    /// `.param` (kernel parameters, device-function parameters and call buffers).
    Param,
}

impl Space {
    pub fn as_str(self) -> &'static str {
        match self {
            Space::Generic => "",
            Space::Global => "global",
            Space::Shared => "shared",
            Space::SharedCluster => "shared::cluster",
            Space::Local => "local",
            Space::Const => "const",
            Space::Param => "param",
        }
    }
}

/// Scope of a memory-consistency operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    Cta,
    Cluster,
    Gpu,
    Sys,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Cta => "cta",
            Scope::Cluster => "cluster",
            Scope::Gpu => "gpu",
            Scope::Sys => "sys",
        }
    }
}

/// Memory-ordering semantics of a load, store or atomic (ISA §8 memory consistency model).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemOrder {
    /// No qualifier (`.weak`): ordinary access.
    Weak,
    /// `.volatile`: relaxed at system scope that may not be cached or merged.
    Volatile,
    /// `.mmio.relaxed.sys`
    Mmio,
    Relaxed(Scope),
    Acquire(Scope),
    Release(Scope),
    AcqRel(Scope),
}

/// Cache operators of loads and stores (ISA §9.7.9.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CacheOp {
    Default,
    /// Cache at all levels.
    Ca,
    /// Cache globally (L2 only).
    Cg,
    /// Streaming, likely accessed once.
    Cs,
    /// Last use.
    Lu,
    /// Don't cache, fetch again.
    Cv,
    /// Write back.
    Wb,
    /// Write through.
    Wt,
}

impl CacheOp {
    pub fn as_str(self) -> &'static str {
        match self {
            CacheOp::Default => "",
            CacheOp::Ca => "ca",
            CacheOp::Cg => "cg",
            CacheOp::Cs => "cs",
            CacheOp::Lu => "lu",
            CacheOp::Cv => "cv",
            CacheOp::Wb => "wb",
            CacheOp::Wt => "wt",
        }
    }
}

/// A load or store: `ld{.order}{.space}{.cache}{.nc}{.hints}{.vN}.type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemAccess {
    pub space: Space,
    pub ty: ScalarType,
    /// 1, 2, 4 or 8 elements.
    pub lanes: u8,
    pub order: MemOrder,
    pub cache: CacheOp,
    /// `ld.global.nc`: through the read-only non-coherent cache.
    pub nc: bool,
    /// Eviction priorities, L2 prefetch size and cache-policy operand (sm_70+/sm_80+).
    pub hints: MemHints,
    /// `st.async{.weak}{.shared::cluster}.mbarrier::complete_tx::bytes` (PTX ISA 8.1,
    /// sm_90): the last source is the address of an mbarrier on which the store's bytes
    /// complete (`complete_tx`) when the data has landed.
    pub complete_tx: bool,
}

/// Hashes as the derived hash did before `hints` existed when the hints are the default:
/// the timing model's reuse keys (WIR's buffer index) hash operations, and a load
/// without hints must keep its key so that statistics stay those of earlier results.
impl std::hash::Hash for MemAccess {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.space.hash(h);
        self.ty.hash(h);
        self.lanes.hash(h);
        self.order.hash(h);
        self.cache.hash(h);
        self.nc.hash(h);
        if self.hints != MemHints::default() {
            self.hints.hash(h);
        }
        if self.complete_tx {
            self.complete_tx.hash(h);
        }
    }
}

/// `.L2::64B`, `.L2::128B`, `.L2::256B`: how much the L2 may prefetch around the access.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PrefetchSize {
    B64,
    B128,
    B256,
}

impl PrefetchSize {
    pub fn bytes(self) -> u32 {
        match self {
            PrefetchSize::B64 => 64,
            PrefetchSize::B128 => 128,
            PrefetchSize::B256 => 256,
        }
    }
}

/// Eviction priority of a level (ISA §9.7.9.8, "Eviction priority").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Eviction {
    Normal,
    Unchanged,
    First,
    Last,
    NoAllocate,
}

impl Eviction {
    pub const ALL: &'static [(&'static str, Eviction)] = &[
        ("evict_normal", Eviction::Normal),
        ("evict_unchanged", Eviction::Unchanged),
        ("evict_first", Eviction::First),
        ("evict_last", Eviction::Last),
        ("no_allocate", Eviction::NoAllocate),
    ];

    pub fn as_str(self) -> &'static str {
        Eviction::ALL
            .iter()
            .find(|(_, e)| *e == self)
            .map_or("?", |(s, _)| s)
    }
}

/// The performance hints of a load or store: `.L1::evict_*`, `.L2::evict_*`,
/// `.L2::64B|128B|256B` (prefetch size) and `.L2::cache_hint` (a 64-bit cache-policy
/// operand after the others). They change no value; the timing model does not model
/// eviction priorities, so they are kept for printing and reporting only.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct MemHints {
    pub l1: Option<Eviction>,
    pub l2: Option<Eviction>,
    pub l2_prefetch: Option<PrefetchSize>,
    /// `.L2::cache_hint`: the last source operand is the policy register.
    pub cache_hint: bool,
}

/// Atomic and reduction operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AtomOp {
    Add,
    Min,
    Max,
    /// `((old >= b) ? 0 : old + 1)`
    Inc,
    /// `((old == 0) || (old > b)) ? b : old - 1`
    Dec,
    And,
    Or,
    Xor,
    Exch,
    /// Compare and swap: three operands.
    Cas,
}

impl AtomOp {
    pub fn as_str(self) -> &'static str {
        match self {
            AtomOp::Add => "add",
            AtomOp::Min => "min",
            AtomOp::Max => "max",
            AtomOp::Inc => "inc",
            AtomOp::Dec => "dec",
            AtomOp::And => "and",
            AtomOp::Or => "or",
            AtomOp::Xor => "xor",
            AtomOp::Exch => "exch",
            AtomOp::Cas => "cas",
        }
    }
}

/// `atom`/`red`: `atom{.order}{.scope}{.space}.op.type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Atomic {
    pub space: Space,
    pub op: AtomOp,
    pub ty: ScalarType,
    /// `Weak` when no ordering is written (relaxed at gpu scope by the ISA's default).
    pub order: MemOrder,
    /// `red.async.relaxed.cluster{.shared::cluster}.mbarrier::complete_tx::bytes` (PTX ISA
    /// 8.1, sm_90): the last source is the address of an mbarrier on which the
    /// reduction's bytes complete.
    pub complete_tx: bool,
}

/// What a CTA barrier instruction does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BarrierKind {
    /// `bar.sync` / `barrier.sync`: arrive and wait.
    Sync,
    /// `bar.arrive`: arrive without waiting.
    Arrive,
    /// `bar.red.popc.u32`: arrive, wait, and count true predicates.
    RedPopc,
    /// `bar.red.and.pred` / `.or.pred`.
    Red(BoolOp),
}

/// `shfl` modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShuffleMode {
    Up,
    Down,
    Bfly,
    Idx,
}

impl ShuffleMode {
    pub fn as_str(self) -> &'static str {
        match self {
            ShuffleMode::Up => "up",
            ShuffleMode::Down => "down",
            ShuffleMode::Bfly => "bfly",
            ShuffleMode::Idx => "idx",
        }
    }
}

/// `vote` modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VoteMode {
    All,
    Any,
    Uni,
    Ballot,
}

impl VoteMode {
    pub fn as_str(self) -> &'static str {
        match self {
            VoteMode::All => "all",
            VoteMode::Any => "any",
            VoteMode::Uni => "uni",
            VoteMode::Ballot => "ballot",
        }
    }
}

/// `redux.sync` operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduxOp {
    Add,
    Min,
    Max,
    And,
    Or,
    Xor,
}

impl ReduxOp {
    pub fn as_str(self) -> &'static str {
        match self {
            ReduxOp::Add => "add",
            ReduxOp::Min => "min",
            ReduxOp::Max => "max",
            ReduxOp::And => "and",
            ReduxOp::Or => "or",
            ReduxOp::Xor => "xor",
        }
    }
}

/// `membar` levels and `fence` semantics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FenceSem {
    /// `membar.*` and `fence.sc.*`: sequentially consistent.
    Sc,
    /// `fence.acq_rel.*` (also what plain `fence.scope` means).
    AcqRel,
}

/// `cp.async.{ca,cg}.shared.global{.L2::cache_hint}{.L2::prefetch}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CpAsync {
    /// `.ca` (through L1) or `.cg` (L2 only; 16-byte copies).
    pub cache: CacheOp,
    /// 4, 8 or 16 bytes.
    pub size: u8,
    /// Whether a source-size operand follows the addresses.
    pub src_size: bool,
    pub hints: MemHints,
}

/// Which way a non-tensor bulk copy (`cp.async.bulk`, PTX ISA 8.0, sm_90) moves its
/// bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BulkCopyDirection {
    /// `.shared::cluster.global.mbarrier::complete_tx::bytes` (`cluster`) or
    /// `.shared::cta.global...`: global memory to the CTA's shared memory; the copy
    /// completes `size` transaction bytes on the mbarrier operand. With `multicast`
    /// (`.multicast::cluster`, only with `.shared::cluster`), a 16-bit ctaMask operand
    /// follows the mbarrier: the bytes land at the same offset in the shared memory of
    /// every CTA of the cluster the mask names, and complete on each one's mbarrier at the
    /// mbarrier's offset.
    GlobalToShared { cluster: bool, multicast: bool },
    /// `.global.shared::cta.bulk_group`: shared memory to global, completed through the
    /// thread's bulk async-groups.
    SharedToGlobal,
    /// `.shared::cluster.shared::cta.mbarrier::complete_tx::bytes` (non-tensor only): the
    /// executing CTA's shared memory to a CTA of the cluster (distributed shared memory),
    /// completing on an mbarrier of the destination's CTA.
    SharedToCluster,
}

impl BulkCopyDirection {
    /// The destination and source state spaces and the completion mechanism, as PTX
    /// spells them.
    pub fn qualifiers(self) -> (&'static str, &'static str, &'static str) {
        match self {
            BulkCopyDirection::GlobalToShared { cluster, .. } => (
                if cluster {
                    "shared::cluster"
                } else {
                    "shared::cta"
                },
                "global",
                "mbarrier::complete_tx::bytes",
            ),
            BulkCopyDirection::SharedToGlobal => ("global", "shared::cta", "bulk_group"),
            BulkCopyDirection::SharedToCluster => (
                "shared::cluster",
                "shared::cta",
                "mbarrier::complete_tx::bytes",
            ),
        }
    }

    /// True when the copy lands in shared memory and completes on an mbarrier.
    pub fn to_shared(self) -> bool {
        !matches!(self, BulkCopyDirection::SharedToGlobal)
    }

    /// True for `.multicast::cluster` (a ctaMask operand follows the mbarrier).
    pub fn multicast(self) -> bool {
        matches!(
            self,
            BulkCopyDirection::GlobalToShared {
                multicast: true,
                ..
            }
        )
    }
}

/// `cp.async.bulk.dst.src.completion{.L2::cache_hint} [dst], [src], size{, [mbar]}{,
/// policy}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CpAsyncBulk {
    pub direction: BulkCopyDirection,
    pub hints: MemHints,
}

/// `cp.async.bulk.tensor.Nd.dst.src{.tile}.completion{.L2::cache_hint}` (TMA, PTX ISA
/// 8.0, sm_90): a box of an `dims`-dimensional tensor described by a tensor map, in tile
/// mode. Operands: `[tensorMap], c0..c(dims-1), [shared]{, [mbar]}{, policy}` (the
/// shared-memory box and, global to shared, the mbarrier its bytes complete on).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CpAsyncBulkTensor {
    pub direction: BulkCopyDirection,
    /// 1 to 5.
    pub dims: u8,
    /// `.im2col` (global to shared memory, 3 to 5 dimensions): the sources after the
    /// mbarrier hold `dims - 2` 16-bit im2col offsets (W first); else `.tile`.
    pub im2col: bool,
    pub hints: MemHints,
}

/// Matrix shapes of the warp-level matrix instructions (ISA §9.7.14): `.mMnNkK`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MmaShape {
    /// `wmma` `.m16n16k16` (f16, bf16, 8-bit integers).
    M16n16k16,
    /// `wmma` `.m16n16k8` (tf32).
    M16n16k8,
    /// `wmma` `.m32n8k16` (f16, bf16, 8-bit integers).
    M32n8k16,
    /// `wmma` `.m8n32k16` (f16, bf16, 8-bit integers).
    M8n32k16,
    /// `mma.sync` `.m16n8k16`.
    M16n8k16,
    /// `mma.sync` `.m16n8k8`.
    M16n8k8,
    /// `mma.sync` `.m16n8k4` (tf32, f64).
    M16n8k4,
    /// `mma.sync` `.m16n8k32` (8-bit integers, fp8, 4-bit integers).
    M16n8k32,
    /// `mma.sync` `.m16n8k64` (4-bit integers).
    M16n8k64,
    /// `mma.sync` `.m8n8k4` (f64; f16 inputs: Volta's four quad-pair products).
    M8n8k4,
    /// `mma.sync` `.m8n8k16` (8-bit integers).
    M8n8k16,
    /// `mma.sync` `.m8n8k32` (4-bit integers).
    M8n8k32,
    /// `mma.sync` `.m8n8k128` (single-bit inputs).
    M8n8k128,
    /// `mma.sync` `.m16n8k128` (single-bit inputs).
    M16n8k128,
    /// `mma.sync` `.m16n8k256` (single-bit inputs).
    M16n8k256,
}

impl MmaShape {
    pub fn as_str(self) -> &'static str {
        match self {
            MmaShape::M16n16k16 => "m16n16k16",
            MmaShape::M16n16k8 => "m16n16k8",
            MmaShape::M32n8k16 => "m32n8k16",
            MmaShape::M8n32k16 => "m8n32k16",
            MmaShape::M16n8k16 => "m16n8k16",
            MmaShape::M16n8k8 => "m16n8k8",
            MmaShape::M16n8k4 => "m16n8k4",
            MmaShape::M16n8k32 => "m16n8k32",
            MmaShape::M16n8k64 => "m16n8k64",
            MmaShape::M8n8k4 => "m8n8k4",
            MmaShape::M8n8k16 => "m8n8k16",
            MmaShape::M8n8k32 => "m8n8k32",
            MmaShape::M8n8k128 => "m8n8k128",
            MmaShape::M16n8k128 => "m16n8k128",
            MmaShape::M16n8k256 => "m16n8k256",
        }
    }

    /// `(m, n, k)`.
    pub fn dims(self) -> (u32, u32, u32) {
        match self {
            MmaShape::M16n16k16 => (16, 16, 16),
            MmaShape::M16n16k8 => (16, 16, 8),
            MmaShape::M32n8k16 => (32, 8, 16),
            MmaShape::M8n32k16 => (8, 32, 16),
            MmaShape::M16n8k16 => (16, 8, 16),
            MmaShape::M16n8k8 => (16, 8, 8),
            MmaShape::M16n8k4 => (16, 8, 4),
            MmaShape::M16n8k32 => (16, 8, 32),
            MmaShape::M16n8k64 => (16, 8, 64),
            MmaShape::M8n8k4 => (8, 8, 4),
            MmaShape::M8n8k16 => (8, 8, 16),
            MmaShape::M8n8k32 => (8, 8, 32),
            MmaShape::M8n8k128 => (8, 8, 128),
            MmaShape::M16n8k128 => (16, 8, 128),
            MmaShape::M16n8k256 => (16, 8, 256),
        }
    }
}

/// Which matrix a `wmma.load` fills: `.a` (m x k), `.b` (k x n) or `.c` (m x n).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MatrixRole {
    A,
    B,
    C,
}

impl MatrixRole {
    pub fn as_str(self) -> &'static str {
        match self {
            MatrixRole::A => "a",
            MatrixRole::B => "b",
            MatrixRole::C => "c",
        }
    }
}

/// `.row` (elements of a row are contiguous in memory) or `.col`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MatrixLayout {
    Row,
    Col,
}

impl MatrixLayout {
    pub fn as_str(self) -> &'static str {
        match self {
            MatrixLayout::Row => "row",
            MatrixLayout::Col => "col",
        }
    }
}

/// `wmma.load.{a,b,c}.sync.aligned.layout.shape{.space}.type` and
/// `wmma.store.d.sync.aligned.layout.shape{.space}.type`: one fragment between memory and
/// registers. `ty` is the element type (A, B: `.f16`, `.bf16`, `.tf32`, `.f64`, `.s8`,
/// `.u8`, `.s4`, `.u4`, `.b1`; C, D: `.f16`, `.f32`, `.f64`, `.s32`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WmmaMemory {
    /// `None` for a store (`.d`).
    pub role: Option<MatrixRole>,
    pub layout: MatrixLayout,
    pub shape: MmaShape,
    pub space: Space,
    pub ty: ScalarType,
}

impl WmmaMemory {
    /// 32-bit registers of the fragment (per thread).
    pub fn fragment_regs(&self) -> u8 {
        fragment_regs(self.shape, self.role, self.ty)
    }
}

/// Registers per thread of a fragment: `role` `None` is the accumulator (C or D).
pub fn fragment_regs(shape: MmaShape, role: Option<MatrixRole>, ty: ScalarType) -> u8 {
    let (m, n, k) = shape.dims();
    let elements = match role {
        Some(MatrixRole::A) => m * k,
        Some(MatrixRole::B) => k * n,
        Some(MatrixRole::C) | None => m * n,
    };
    let bits = elements * ty.bits() / 32;
    // f64 elements take a 64-bit register each; everything else packs into 32 bits.
    let reg_bits = if ty.bits() == 64 { 64 } else { 32 };
    // Volta's f16 wmma multiplicand fragments hold every element twice: eight registers
    // where four carry the matrix (CUDA C++ Programming Guide, `fragment::num_elements`
    // is 16 for these fragments on every architecture).
    // The same holds for m32n8k16 and m8n32k16 (`__frag_base<__half, 16>` for A and B in
    // CUDA 11.8's mma.h; the PTX ISA's "eight .f16x2 registers"): the 4 distinct elements of
    // an m32n8k16 B or an m8n32k16 A take 2 registers, repeated 4 times.
    if ty == ScalarType::F16
        && matches!(role, Some(MatrixRole::A | MatrixRole::B))
        && matches!(
            shape,
            MmaShape::M16n16k16 | MmaShape::M32n8k16 | MmaShape::M8n32k16
        )
    {
        return 8;
    }
    // Volta's f16 m8n8k4 is four products, one per quad pair, each 8x8x4 (PTX ISA
    // "Matrix Fragments for mma.m8n8k4 with .f16 floating point type"): every fragment
    // holds four times the elements one product spreads over 32 threads.
    let quad_pairs = if shape == MmaShape::M8n8k4 && ty.bits() < 64 {
        4
    } else {
        1
    };
    (bits * quad_pairs / reg_bits) as u8
}

/// `wmma.mma.sync.aligned.alayout.blayout.shape.dtype{.atype.btype}.ctype` and
/// `mma.sync.aligned.shape.row.col.dtype.atype.btype.ctype`: `D = A x B + C` over one
/// warp. Operands: D's registers, then A's, B's and C's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MmaOp {
    /// `wmma.mma` (fragments of `wmma.load`) rather than `mma.sync`.
    pub wmma: bool,
    pub shape: MmaShape,
    pub a_layout: MatrixLayout,
    pub b_layout: MatrixLayout,
    /// `.f16`, `.f32`, `.s32` or `.f64`.
    pub d_ty: ScalarType,
    /// A's type: `.f16`, `.bf16`, `.tf32`, `.s8`, `.u8`, `.s4`, `.u4`, `.e4m3`, `.e5m2` or
    /// `.f64`.
    pub ab_ty: ScalarType,
    /// B's type: A's, except that `.s8`/`.u8`, `.s4`/`.u4` and `.e4m3`/`.e5m2` mix.
    pub b_ty: ScalarType,
    /// `.f16`, `.f32`, `.s32` or `.f64`.
    pub c_ty: ScalarType,
    /// `.satfinite` (integer types): D saturates to the s32 range instead of wrapping.
    pub satfinite: bool,
    /// `.and.popc` / `.xor.popc` of single-bit (`.b1`) inputs; `None` for every other type.
    pub bit_op: Option<MmaBitOp>,
    /// `wmma.mma`'s `.rnd` of f64 inputs (`.rn`, `.rz`, `.rm`, `.rp`: each FMA of the chain
    /// rounds so); `None` is `.rn`, and every other form has none.
    pub rnd: Option<Rounding>,
    /// `mma.sp` / `mma.sp::ordered_metadata`: A is structured sparse; `None` for dense.
    pub sparse: Option<MmaSparse>,
}

/// `mma.sp{::ordered_metadata}.sync.aligned...` (PTX ISA §9.7.14.6, sm_80; the ordered
/// form PTX ISA 8.5): A (M x K) is given compressed as M x K/2 in the A fragment of the
/// dense shape with half the K, and a metadata register (a source after C's registers)
/// places each stored element in its row: 2:4 (`.f16`, `.bf16`, 8-bit types), 1:2
/// (`.tf32`) or pairwise 4:8 (4-bit integers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MmaSparse {
    /// `::ordered_metadata`: each chunk's indices must be increasing.
    pub ordered: bool,
    /// The sparsity selector (an immediate): which threads of each group of four hold
    /// the metadata.
    pub selector: u8,
}

/// Elements of A's row one metadata nibble covers (PTX ISA "Sparse matrix storage"):
/// a 4-wide chunk (2:4), a 2-wide one (`.tf32`, 1:2) or an 8-wide one (4-bit, 4:8).
pub fn sparse_chunk_width(ty: ScalarType) -> u32 {
    match ty {
        ScalarType::Tf32 => 2,
        ScalarType::S4 | ScalarType::U4 => 8,
        _ => 4,
    }
}

/// Threads of each group of four that hold metadata for `mma.sp` of `shape` with `ty`
/// inputs: 1, 2 or 4 (each holds 16 bits, four chunks, of each of its group's two rows).
pub fn sparse_meta_threads(shape: MmaShape, ty: ScalarType) -> u32 {
    let (_, _, k) = shape.dims();
    (k / sparse_chunk_width(ty) / 4).max(1)
}

/// What a single-bit `mma` does in place of multiplying (PTX ISA "mma": `D = C +
/// popc(A-row op B-column)` over K bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MmaBitOp {
    /// `.and.popc` (sm_80).
    And,
    /// `.xor.popc` (sm_75).
    Xor,
}

impl MmaBitOp {
    pub fn as_str(self) -> &'static str {
        match self {
            MmaBitOp::And => "and",
            MmaBitOp::Xor => "xor",
        }
    }
}

impl MmaOp {
    /// The shape of A's fragment: the instruction's, or for `mma.sp` the dense shape with
    /// half its K (A's compressed M x K/2 is laid out as that shape's A).
    pub fn a_shape(&self) -> MmaShape {
        if self.sparse.is_none() {
            return self.shape;
        }
        match self.shape {
            MmaShape::M16n8k8 => MmaShape::M16n8k4,
            MmaShape::M16n8k16 => MmaShape::M16n8k8,
            MmaShape::M16n8k32 => MmaShape::M16n8k16,
            MmaShape::M16n8k64 => MmaShape::M16n8k32,
            MmaShape::M16n8k128 => MmaShape::M16n8k64,
            s => s,
        }
    }

    /// Registers per thread of A, B, C and D, in that order.
    pub fn regs(&self) -> [u8; 4] {
        [
            fragment_regs(self.a_shape(), Some(MatrixRole::A), self.ab_ty),
            fragment_regs(self.shape, Some(MatrixRole::B), self.b_ty),
            fragment_regs(self.shape, None, self.c_ty),
            fragment_regs(self.shape, None, self.d_ty),
        ]
    }
}

/// `wgmma.mma_async.sync.aligned.m64nNkK.dtype.atype.btype` (PTX ISA 8.0, sm_90a): `D =
/// A x B + (scale-d ? D : 0)` over a warpgroup (four consecutive warps, warp `w % 4`
/// holding rows `16(w % 4)..+16` of the 64-row D). Operands (sources): `scale-d` (a
/// predicate or 0/1), A (a 64-bit shared-memory matrix descriptor, or `a_regs` fragment
/// registers of the warp's 16 rows), B's 64-bit descriptor, then D's registers (read as
/// the accumulator); destinations: D's registers. The immediates are fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WgmmaOp {
    /// 8..=256, a multiple of 8 (a multiple of 16 for 8-bit integer inputs).
    pub n: u16,
    /// 8 (tf32), 16 (f16, bf16), 32 (e4m3, e5m2, s8, u8) or 256 (b1, `.and.popc`).
    pub k: u16,
    /// `.f16`, `.f32` or `.s32`.
    pub d_ty: ScalarType,
    pub a_ty: ScalarType,
    pub b_ty: ScalarType,
    /// A is a register fragment (else a descriptor).
    pub a_regs: bool,
    /// `imm-scale-a` / `imm-scale-b` of -1: the input is negated.
    pub neg_a: bool,
    pub neg_b: bool,
    /// `imm-trans-a` / `imm-trans-b` of 1: the matrix in shared memory is MN-major
    /// (transposed) rather than K-major.
    pub trans_a: bool,
    pub trans_b: bool,
    /// `.satfinite` (integer inputs).
    pub satfinite: bool,
    /// `wgmma.mma_async.sp` (PTX ISA 8.2): A is structured sparse, given as 64 x K/2
    /// (registers or descriptor, the dense layout of that K), with a metadata register
    /// (the last source) and this sparsity selector; `None` for dense.
    pub sparse: Option<u8>,
}

impl WgmmaOp {
    /// K of A as stored: half the instruction's for `.sp`.
    pub fn a_k(&self) -> u16 {
        if self.sparse.is_some() {
            self.k / 2
        } else {
            self.k
        }
    }

    /// 32-bit registers of A's fragment per thread when `a_regs` (else 0).
    pub fn a_fragment_regs(&self) -> u8 {
        if self.a_regs {
            4
        } else {
            0
        }
    }

    /// 32-bit registers of D per thread: 64·N elements over 128 threads.
    pub fn d_regs(&self) -> u16 {
        let elements = self.n / 2;
        if self.d_ty == ScalarType::F16 {
            elements / 2
        } else {
            elements
        }
    }
}

/// `ldmatrix.sync.aligned.m8n8.xN{.trans}{.shared}.b16` (and `stmatrix`, its inverse):
/// `count` 8x8 matrices of 16-bit elements between shared memory and one 32-bit register
/// of each per thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ldmatrix {
    /// 1, 2 or 4.
    pub count: u8,
    pub trans: bool,
    /// `.shared` or generic.
    pub space: Space,
}

/// What an `mbarrier` instruction does (ISA §9.7.13.15). The `.sem` and `.scope`
/// qualifiers are accepted and dropped: the emulator performs each lane's operation
/// atomically, in lane order, which every ordering the qualifiers allow includes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MbarrierKind {
    /// `; [addr], count`
    Init,
    /// `state; [addr]{, count}`, or with `expect_tx` `state; [addr], txCount`: an
    /// arrive-on operation. `drop` (`arrive_drop`) also lowers the expected count of later
    /// phases; `no_complete` (`.noComplete`) promises the arrival does not complete the
    /// phase.
    Arrive {
        drop: bool,
        no_complete: bool,
        expect_tx: bool,
    },
    /// `; [addr], txCount`
    ExpectTx,
    /// `; [addr], txCount`
    CompleteTx,
    /// `p; [addr], state` or with `parity` `p; [addr], phaseParity`, then an optional
    /// suspend-time hint (`try_wait`).
    Wait { try_wait: bool, parity: bool },
    /// `count; state`
    PendingCount,
    /// `; [addr]`
    Inval,
    /// `cp.async.mbarrier.arrive{.noinc}`: `; [addr]`: an arrive-on operation once the
    /// thread's earlier `cp.async` copies are complete.
    CpAsyncArrive { noinc: bool },
}

/// `mbarrier.*.b64` and `cp.async.mbarrier.arrive.b64` on a barrier object in `.shared`
/// (or generic) memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Mbarrier {
    pub kind: MbarrierKind,
    /// `.shared` (also `.shared::cta`) or generic.
    pub space: Space,
}

/// Which proxies a `fence.proxy` orders (ISA §9.7.13.4), or `fence.mbarrier_init`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProxyFence {
    /// `fence.proxy.alias`
    Alias,
    /// `fence.proxy.async` with no state space, `.global`, `.shared::cta` or
    /// `.shared::cluster` (the space's `as_str`; empty for all).
    Async(Space),
    /// `fence.mbarrier_init.release.cluster`
    MbarrierInit,
}

/// How `createpolicy` forms its policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PolicyKind {
    /// `.fractional.L2::primary{.L2::secondary}`: a fraction of accesses gets `primary`.
    Fractional {
        primary: Eviction,
        secondary: Option<Eviction>,
    },
    /// `.range.L2::primary{.L2::secondary}`: accesses within a range get `primary`.
    Range {
        primary: Eviction,
        secondary: Option<Eviction>,
    },
    /// `.cvt.L2`: converts a CUDA access property.
    Cvt,
}

impl PolicyKind {
    /// The opaque 64-bit policy value: which form and priorities, and (fractional) the
    /// fraction's f32 bits. Programs only pass it back to `.L2::cache_hint`, so any
    /// deterministic encoding is faithful.
    pub fn encode(self, operand: u64) -> u64 {
        let code = |e: Option<Eviction>| e.map_or(0, |e| e as u64 + 1);
        match self {
            PolicyKind::Fractional { primary, secondary } => {
                1 | code(Some(primary)) << 4 | code(secondary) << 8 | (operand & 0xFFFF_FFFF) << 32
            }
            PolicyKind::Range { primary, secondary } => {
                2 | code(Some(primary)) << 4 | code(secondary) << 8
            }
            PolicyKind::Cvt => 3 | (operand & 0xFFFF_FFFF) << 32,
        }
    }
}

/// `prefetch` targets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CacheLevel {
    L1,
    L2,
}

/// The callee of a `call`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Callee {
    /// The callee operand is `Operand::Func`.
    Direct(FuncId),
    /// The callee is the first source operand, a register holding a function address.
    Indirect,
}

/// `call{.uni} (rets), callee, (args){, prototype};` Destinations are the return
/// operands, sources are (for indirect calls) the target register followed by the arguments.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CallOp {
    pub uni: bool,
    pub callee: Callee,
    /// The `.callprototype` label of an indirect call, verbatim.
    pub prototype: Option<Box<str>>,
}

/// Texture geometries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TexGeometry {
    D1,
    D2,
    D3,
    A1d,
    A2d,
    Cube,
    ACube,
    D2ms,
    A2dms,
}

impl TexGeometry {
    pub fn as_str(self) -> &'static str {
        match self {
            TexGeometry::D1 => "1d",
            TexGeometry::D2 => "2d",
            TexGeometry::D3 => "3d",
            TexGeometry::A1d => "a1d",
            TexGeometry::A2d => "a2d",
            TexGeometry::Cube => "cube",
            TexGeometry::ACube => "acube",
            TexGeometry::D2ms => "2dms",
            TexGeometry::A2dms => "a2dms",
        }
    }

    /// Number of coordinate components the coordinate vector carries (array index included).
    pub fn coords(self) -> usize {
        match self {
            TexGeometry::D1 => 1,
            TexGeometry::D2 | TexGeometry::A1d => 2,
            TexGeometry::D3 | TexGeometry::Cube | TexGeometry::A2d | TexGeometry::D2ms => 3,
            TexGeometry::ACube | TexGeometry::A2dms => 4,
        }
    }
}

/// Mip-level selection of `tex`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TexLod {
    /// Implicit level 0.
    Base,
    /// `.level`: explicit level-of-detail operand.
    Level,
    /// `.grad`: gradient vectors.
    Grad,
}

/// `tld4` colour component.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TexComponent {
    R,
    G,
    B,
    A,
}

impl TexComponent {
    pub fn as_str(self) -> &'static str {
        match self {
            TexComponent::R => "r",
            TexComponent::G => "g",
            TexComponent::B => "b",
            TexComponent::A => "a",
        }
    }
}

/// `tex` and `tld4`. Destinations: the four (or fewer, `_`) result lanes. Sources: the
/// texture (a texture variable or a 64-bit handle register), the sampler if the
/// instruction names one, then the coordinate vector flattened into one operand per
/// component, then the extra operands that `.level`/`.grad` need.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TexOp {
    pub geometry: TexGeometry,
    pub lod: TexLod,
    /// `Some` for `tld4.{r,g,b,a}`.
    pub gather: Option<TexComponent>,
    pub dst_ty: ScalarType,
    pub coord_ty: ScalarType,
    /// Whether the instruction names a separate sampler (independent texture mode).
    pub has_sampler: bool,
    /// How many coordinate components were written.
    pub num_coords: u8,
}

/// `txq` queries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TexQuery {
    Width,
    Height,
    Depth,
    ChannelDataType,
    ChannelOrder,
    NormalizedCoords,
    FilterMode,
    AddrMode0,
    AddrMode1,
    AddrMode2,
    ArraySize,
    NumMipmapLevels,
    NumSamples,
    ForceUnnormalizedCoords,
}

impl TexQuery {
    pub const ALL: &'static [(&'static str, TexQuery)] = &[
        ("width", TexQuery::Width),
        ("height", TexQuery::Height),
        ("depth", TexQuery::Depth),
        ("channel_data_type", TexQuery::ChannelDataType),
        ("channel_order", TexQuery::ChannelOrder),
        ("normalized_coords", TexQuery::NormalizedCoords),
        ("filter_mode", TexQuery::FilterMode),
        ("addr_mode_0", TexQuery::AddrMode0),
        ("addr_mode_1", TexQuery::AddrMode1),
        ("addr_mode_2", TexQuery::AddrMode2),
        ("array_size", TexQuery::ArraySize),
        ("num_mipmap_levels", TexQuery::NumMipmapLevels),
        ("num_samples", TexQuery::NumSamples),
        (
            "force_unnormalized_coords",
            TexQuery::ForceUnnormalizedCoords,
        ),
    ];

    pub fn as_str(self) -> &'static str {
        TexQuery::ALL
            .iter()
            .find(|(_, q)| *q == self)
            .map_or("?", |(s, _)| s)
    }
}

/// A decoded operation. Field `ty` is the instruction type (the last type modifier unless
/// documented otherwise). Each variant lists its operands as `dsts; srcs`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    // ---- integer arithmetic (ISA §9.7.1) ----
    /// `d; a, b`
    Add {
        ty: ScalarType,
        sat: bool,
        carry: Carry,
    },
    /// `d; a, b`
    Sub {
        ty: ScalarType,
        sat: bool,
        carry: Carry,
    },
    /// `d; a, b` (`d` is twice as wide for `.wide`)
    Mul {
        ty: ScalarType,
        mode: MulMode,
    },
    /// `d; a, b, c`: `a*b + c` (`c` and `d` twice as wide for `.wide`).
    Mad {
        ty: ScalarType,
        mode: MulMode,
        sat: bool,
        carry: Carry,
    },
    /// `d; a, b`: 24-bit multiply.
    Mul24 {
        ty: ScalarType,
        hi: bool,
    },
    /// `d; a, b, c`
    Mad24 {
        ty: ScalarType,
        hi: bool,
        sat: bool,
    },
    /// `d; a, b, c`: `c + |a - b|`
    Sad {
        ty: ScalarType,
    },
    /// `d; a, b` (integer types)
    Div {
        ty: ScalarType,
    },
    /// `d; a, b`
    Rem {
        ty: ScalarType,
    },
    /// `d; a, b` (integer types; `.relu` clamps negative results to 0)
    Min {
        ty: ScalarType,
        relu: bool,
    },
    /// `d; a, b`
    Max {
        ty: ScalarType,
        relu: bool,
    },
    /// `d; a`
    Abs {
        ty: ScalarType,
    },
    /// `d; a`
    Neg {
        ty: ScalarType,
    },
    /// `d; a, b` — also on `.pred`.
    And {
        ty: ScalarType,
    },
    Or {
        ty: ScalarType,
    },
    Xor {
        ty: ScalarType,
    },
    /// `d; a` — also on `.pred`.
    Not {
        ty: ScalarType,
    },
    /// `d; a`: `d = (a == 0) ? 1 : 0`.
    Cnot {
        ty: ScalarType,
    },
    /// `d; a, b, c, immLut`
    Lop3 {
        ty: ScalarType,
    },
    /// `d; a, b` (`b` is a `.u32` shift amount).
    Shl {
        ty: ScalarType,
    },
    /// `d; a, b` (arithmetic for signed types).
    Shr {
        ty: ScalarType,
    },
    /// `d; a, b(pos .u32), c(len .u32)`
    Bfe {
        ty: ScalarType,
    },
    /// `d; a, b, c(pos .u32), d(len .u32)`
    Bfi {
        ty: ScalarType,
    },
    /// `d(.u32); a`
    Bfind {
        ty: ScalarType,
        shiftamt: bool,
    },
    /// `d(.u32); a`
    Popc {
        ty: ScalarType,
    },
    /// `d(.u32); a`
    Clz {
        ty: ScalarType,
    },
    /// `d; a`
    Brev {
        ty: ScalarType,
    },
    /// `d; a, b, c(selector)` (always `.b32`)
    Prmt {
        mode: PrmtMode,
    },
    /// `d; a, b, c`: four-way byte dot product plus accumulate.
    Dp4a {
        a_ty: ScalarType,
        b_ty: ScalarType,
    },
    /// `d; a, b, c`: two-way 16×8-bit dot product; `hi` selects the upper bytes of `b`.
    Dp2a {
        a_ty: ScalarType,
        b_ty: ScalarType,
        hi: bool,
    },
    /// `d; a, b, c`: funnel shift of `b:a` by `c` (always `.b32`).
    Shf {
        dir: ShiftDir,
        amount: ShiftAmount,
    },

    // ---- floating point (ISA §9.7.3, §9.7.4 half precision) ----
    /// `d; a, b`
    FAdd {
        ty: ScalarType,
        mode: FloatMode,
    },
    FSub {
        ty: ScalarType,
        mode: FloatMode,
    },
    FMul {
        ty: ScalarType,
        mode: FloatMode,
    },
    /// `d; a, b, c`: fused `a*b + c` (`fma`, and `mad` on floats, which is fused on sm_20+).
    Fma {
        ty: ScalarType,
        mode: FloatMode,
    },
    /// `d; a, b`
    FDiv {
        ty: ScalarType,
        precision: Precision,
        ftz: bool,
    },
    /// `d; a`
    Rcp {
        ty: ScalarType,
        precision: Precision,
        ftz: bool,
    },
    /// `d; a`
    Sqrt {
        ty: ScalarType,
        precision: Precision,
        ftz: bool,
    },
    /// `d; a` (approximate only)
    Rsqrt {
        ty: ScalarType,
        ftz: bool,
    },
    /// `d; a` (`.approx.f32` only)
    Sin {
        ftz: bool,
    },
    Cos {
        ftz: bool,
    },
    Lg2 {
        ftz: bool,
    },
    /// `d; a` (`.approx`; f32, f16, f16x2, bf16, bf16x2)
    Ex2 {
        ty: ScalarType,
        ftz: bool,
    },
    /// `d; a` (`.approx`)
    Tanh {
        ty: ScalarType,
    },
    /// `d; a, b`; `nan` propagates NaN instead of returning the number.
    FMin {
        ty: ScalarType,
        ftz: bool,
        nan: bool,
    },
    FMax {
        ty: ScalarType,
        ftz: bool,
        nan: bool,
    },
    /// `d; a`
    FAbs {
        ty: ScalarType,
        ftz: bool,
    },
    FNeg {
        ty: ScalarType,
        ftz: bool,
    },
    /// `d; a, b`: magnitude of `b` with the sign of `a`.
    Copysign {
        ty: ScalarType,
    },
    /// `p(.pred); a`
    Testp {
        ty: ScalarType,
        class: FloatClass,
    },

    // ---- comparison and selection (ISA §9.7.6) ----
    /// `p{, q}; a, b{, c}`: `q` (from `p|q`) receives the complement; `c` is the combine
    /// predicate, present iff `combine` is.
    Setp {
        ty: ScalarType,
        cmp: CmpOp,
        ftz: bool,
        combine: Option<BoolOp>,
    },
    /// `d; a, b{, c}`: writes 1.0/0xFFFFFFFF or 0 in type `dst_ty`.
    Set {
        dst_ty: ScalarType,
        ty: ScalarType,
        cmp: CmpOp,
        ftz: bool,
        combine: Option<BoolOp>,
    },
    /// `d; a, b, c(.pred)`: `c ? a : b`.
    Selp {
        ty: ScalarType,
    },
    /// `d; a, b, c(cmp_ty)`: `c >= 0 ? a : b`.
    Slct {
        ty: ScalarType,
        cmp_ty: ScalarType,
        ftz: bool,
    },

    // ---- data movement and conversion (ISA §9.7.8, §9.7.9) ----
    /// `d; a` where `a` is a register, immediate, special register, or a symbol's address.
    Mov {
        ty: ScalarType,
    },
    /// `d; a0, a1{, a2, a3}`: `mov.b64 %rd, {%r1, %r2}` — lane 0 is the least significant.
    Pack {
        ty: ScalarType,
        lanes: u8,
    },
    /// `d0, d1{, d2, d3}; a`: `mov.b64 {%r1, %r2}, %rd`; a `_` destination is discarded.
    Unpack {
        ty: ScalarType,
        lanes: u8,
    },
    /// `d; a` — or `d; a, b` for `cvt.f16x2.f32`/`cvt.bf16x2.f32` packing (`a` → upper half).
    Cvt {
        dst: ScalarType,
        src: ScalarType,
        rounding: Option<Rounding>,
        ftz: bool,
        sat: bool,
        relu: bool,
        /// `.satfinite` (tf32 destinations only): infinities and overflows become the
        /// largest finite value of the sign.
        satfinite: bool,
    },
    /// `d; a`: `cvta.space` (to generic) or `cvta.to.space` (from generic).
    Cvta {
        to_generic: bool,
        space: Space,
        ty: ScalarType,
    },
    /// `p(.pred); a`
    Isspacep {
        space: Space,
    },
    /// `d0..dN; [addr]`
    Ld(MemAccess),
    /// `d0..dN; [addr]`: load via the uniform cache.
    Ldu(MemAccess),
    /// `; [addr], a0..aN`
    St(MemAccess),
    /// `; [addr]`
    Prefetch {
        space: Space,
        level: CacheLevel,
        uniform: bool,
    },
    /// `d; [addr], b{, c}` (`c` only for `cas`)
    Atom(Atomic),
    /// `; [addr], b`
    Red(Atomic),

    // ---- synchronisation and warp-level operations (ISA §9.7.12, §9.7.13) ----
    /// `{d}; id{, count}{, p}`: `d` and `p` only for reductions.
    /// `barrier.cluster.arrive` (kind `Arrive`) and `barrier.cluster.wait` (kind `Sync`)
    /// have `cluster` set and no operands.
    Bar {
        kind: BarrierKind,
        aligned: bool,
        cluster: bool,
    },
    /// `d; a, rank`: `mapa{.shared::cluster}.{u32,u64}`, the address `a` of this CTA's
    /// shared memory mapped to the CTA of rank `rank` in the cluster (sm_90).
    Mapa {
        space: Space,
        ty: ScalarType,
    },
    /// `d; a`: `getctarank{.shared::cluster}.{u32,u64}`, the rank in the cluster of the
    /// CTA whose shared memory holds address `a` (generic, or `.shared::cluster`; sm_90).
    Getctarank {
        space: Space,
        ty: ScalarType,
    },
    /// `; membermask`
    BarWarpSync,
    /// `membar.{cta,gl,sys}` and `fence.{sc,acq_rel}.scope`.
    Fence {
        sem: FenceSem,
        scope: Scope,
    },
    /// `d{, p}; a, b, c{, membermask}`: membermask present iff `sync`.
    Shfl {
        mode: ShuffleMode,
        sync: bool,
    },
    /// `d; {!}a{, membermask}`: `ty` is `.pred` or `.b32` (ballot).
    Vote {
        mode: VoteMode,
        sync: bool,
    },
    /// `d{, p}; a, membermask`: `all` writes the predicate `p`.
    Match {
        all: bool,
        ty: ScalarType,
    },
    /// `d;`
    Activemask,
    /// `d; a, membermask`
    Redux {
        op: ReduxOp,
        ty: ScalarType,
    },

    // ---- control flow (ISA §9.7.12) ----
    /// `; target(Operand::Block)`
    Bra {
        uni: bool,
    },
    Call(Box<CallOp>),
    Ret {
        uni: bool,
    },
    Exit,
    Trap,
    Brkpt,
    /// `; t(.u32 nanoseconds)`
    Nanosleep,

    // ---- textures (ISA §9.7.10) ----
    Tex(Box<TexOp>),
    /// `d; [tex]`
    Txq {
        query: TexQuery,
        ty: ScalarType,
    },

    // ---- asynchronous copies and cache policies (ISA §9.7.9.16, §9.7.9.25) ----
    // Last in the enum: the derived hash numbers variants, and reuse keys hash operations.
    /// `; [dst(.shared)], [src(.global)], size{, src_size(.u32)}{, policy(.b64)}`: an
    /// asynchronous copy of `size` bytes into shared memory, zero-filled past `src_size`
    /// (ISA §9.7.9.25). The data become visible at the `cp.async.wait_group` or
    /// `cp.async.wait_all` that covers its group.
    CpAsync(CpAsync),
    /// `cp.async.commit_group`: closes the warp's open group of copies.
    CpAsyncCommit,
    /// `; n(.u32 immediate)` (`wait_group n`): waits until at most `n` committed groups
    /// are pending; `all` (`wait_all`) commits the open group and waits for every copy.
    CpAsyncWait {
        all: bool,
    },
    /// `d(.b64); fraction` (`.fractional`), `d; [a], primary, total` (`.range`) or
    /// `d; a` (`.cvt`): an L2 cache policy for `.L2::cache_hint` (ISA §9.7.9.16).
    CreatePolicy(PolicyKind),

    // ---- warp-level matrix operations (ISA §9.7.14) ----
    /// `d0..dN; [addr], stride`: a fragment from memory (`wmma.load`).
    WmmaLoad(WmmaMemory),
    /// `; [addr], a0..aN, stride`: a fragment to memory (`wmma.store`).
    WmmaStore(WmmaMemory),
    /// `d0..; a0.., b0.., c0..`: `wmma.mma` or `mma.sync` (see [`MmaOp::regs`]).
    Mma(MmaOp),
    /// `d0..d(count-1); [addr]`
    Ldmatrix(Ldmatrix),
    /// `; [addr], r0..r(count-1)`
    Stmatrix(Ldmatrix),
    /// See [`MbarrierKind`] for each kind's operands.
    Mbarrier(Mbarrier),
    /// `d, p; membermask` (`elect.sync d|p, membermask`): the leader's lane id in `d`
    /// (or `_`), true in `p` for the leader only.
    Elect,
    /// `fence.proxy.*`, `fence.mbarrier_init.*`
    FenceProxy(ProxyFence),
    /// `[dst], [src], size{, [mbar]}{, policy}`: see [`CpAsyncBulk`].
    CpAsyncBulk(CpAsyncBulk),
    /// See [`CpAsyncBulkTensor`].
    CpAsyncBulkTensor(CpAsyncBulkTensor),
    /// `cp.async.bulk.commit_group`
    CpAsyncBulkCommit,
    /// `; n` (`cp.async.bulk.wait_group{.read} n`).
    CpAsyncBulkWait {
        read: bool,
    },
    /// `griddepcontrol.wait` (`wait`) or `griddepcontrol.launch_dependents`.
    GridDepControl {
        wait: bool,
    },
    /// `setmaxnreg.{inc,dec}.sync.aligned.u32 count` (sm_90a): the executing warp's
    /// per-thread register count becomes `count` (24..=256, a multiple of 8), registers
    /// taken from (`inc`) or given back to (`dec`) its CTA's pool.
    Setmaxnreg {
        inc: bool,
        count: u16,
    },
    /// See [`WgmmaOp`].
    Wgmma(WgmmaOp),
    /// `wgmma.fence.sync.aligned`: orders the warp's register accesses before later
    /// `wgmma.mma_async` operands.
    WgmmaFence,
    /// `wgmma.commit_group.sync.aligned`: closes the warp's open group of `wgmma`s.
    WgmmaCommit,
    /// `; n` (`wgmma.wait_group.sync.aligned n`): waits until at most `n` committed groups
    /// are pending (`n` also the source immediate).
    WgmmaWait {
        n: u32,
    },
    /// `d(.b32); a(.b32)` (`movmatrix.sync.aligned.m8n8.trans.b16`): the warp's 8x8 matrix
    /// of 16-bit elements, held as `ldmatrix` without `.trans` gives it (lane `4r + c/2`
    /// holds row `r`, columns `c & !1` and `c | 1`), transposed across the lanes in
    /// registers (ISA §9.7.14.5.17).
    Movmatrix,
}

/// The oldest `.target` an instruction assembles for: `sm` (e.g. 89 for `sm_89`), or with
/// `arch_specific` exactly that architecture's `a` target (`sm_90a`). `feature` names the
/// instruction form in errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TargetNeed {
    pub sm: u32,
    pub arch_specific: bool,
    pub feature: &'static str,
}

impl TargetNeed {
    const fn new(sm: u32, feature: &'static str) -> Self {
        Self {
            sm,
            arch_specific: false,
            feature,
        }
    }

    /// `sm_89`, `sm_90a`.
    pub fn target_name(&self) -> String {
        format!(
            "sm_{}{}",
            self.sm,
            if self.arch_specific { "a" } else { "" }
        )
    }

    /// Whether a module whose `.target` is `sm_{sm}{a if arch_specific}` may use it.
    pub fn met_by(&self, sm: u32, arch_specific: bool) -> bool {
        if self.arch_specific {
            sm == self.sm && arch_specific
        } else {
            sm >= self.sm
        }
    }
}

impl Op {
    /// The `.target` the instruction needs, for the tensor-core, asynchronous-copy,
    /// cluster and half-precision atomic forms the PTX ISA's "Target ISA notes" restrict
    /// (most beyond sm_70; the `.f16x2` atomics from sm_60). The table
    /// was read from the ISA and checked form by form against ptxas 12.9, which refuses
    /// each one below the target given here ("Feature ... requires .target sm_NN or
    /// higher"). `None`: any target.
    pub fn target_need(&self) -> Option<TargetNeed> {
        use ScalarType as T;
        let need = TargetNeed::new;
        Some(match self {
            Op::Mma(m) if !m.wmma => {
                let fp8 = matches!(m.ab_ty, T::E4m3 | T::E5m2);
                match (m.shape, m.ab_ty) {
                    _ if fp8 => need(89, "mma with an fp8 (.e4m3/.e5m2) type"),
                    // PTX ISA "mma.sp": sm_80 (fp8 sm_89, above).
                    _ if m.sparse.is_some() => need(80, "mma.sp (sparse A)"),
                    // ptxas 12.9: "Feature '.b1' requires .target sm_75", "Modifier '.and'
                    // on 'mma' requires .target sm_80", "Feature '.m16n8k128' requires
                    // .target sm_80".
                    (MmaShape::M8n8k128, _) if m.bit_op == Some(MmaBitOp::Xor) => {
                        need(75, "mma with .b1 inputs")
                    }
                    (_, T::B1) if m.bit_op == Some(MmaBitOp::And) => {
                        need(80, "mma with .b1 inputs and .and.popc")
                    }
                    (_, T::B1) => need(80, "mma.m16n8k128/m16n8k256 with .b1 inputs"),
                    (MmaShape::M8n8k4, T::F16) => need(70, "mma.m8n8k4 with .f16"),
                    (MmaShape::M16n8k8, T::F16) => need(75, "mma.m16n8k8 with .f16"),
                    // PTX ISA 7.8 "Target ISA notes": the m16n8k4/k8/k16 .f64 shapes need
                    // sm_90.
                    (MmaShape::M16n8k4 | MmaShape::M16n8k8 | MmaShape::M16n8k16, T::F64) => {
                        need(90, "mma.m16n8k4/m16n8k8/m16n8k16 with .f64")
                    }
                    (MmaShape::M8n8k16 | MmaShape::M8n8k32, _) => {
                        need(75, "mma.m8n8k16/m8n8k32 (8- and 4-bit integers)")
                    }
                    _ => need(80, "mma of this shape and type"),
                }
            }
            // wmma: f16 on sm_70; 8-bit integers sm_72; 4-bit integers and b1 .xor.popc
            // sm_75; bf16/tf32/f64 and b1 .and.popc sm_80 (PTX ISA "wmma.mma", Target ISA
            // notes).
            Op::Mma(m) => match m.ab_ty {
                T::F16 => return None,
                T::S8 | T::U8 => need(72, "wmma with 8-bit integers"),
                T::S4 | T::U4 => need(75, "wmma with 4-bit integers"),
                T::B1 if m.bit_op == Some(MmaBitOp::And) => {
                    need(80, "wmma with .b1 inputs and .and.popc")
                }
                T::B1 => need(75, "wmma with .b1 inputs"),
                _ => need(80, "wmma with .bf16, .tf32 or .f64"),
            },
            // The fragments' loads and stores follow their wmma.mma (ptxas 12.9 refuses a
            // wmma.load of each below the same target).
            Op::WmmaLoad(w) | Op::WmmaStore(w) => match (w.shape, w.ty) {
                (MmaShape::M16n16k8 | MmaShape::M8n8k4, _) => {
                    need(80, "wmma.load/store of .tf32 or .f64 fragments")
                }
                (MmaShape::M8n8k32 | MmaShape::M8n8k128, _) => {
                    need(75, "wmma.load/store of .s4, .u4 or .b1 fragments")
                }
                (_, T::S8 | T::U8 | T::S32) => {
                    need(72, "wmma.load/store of 8-bit integer fragments")
                }
                _ => return None,
            },
            // `.shared::cluster` addresses (ptxas 12.9: "Feature '::cluster' requires
            // .target sm_90 or higher" for ld, st, atom, red, cvta and isspacep alike).
            // st.async/red.async: PTX ISA 8.1, "Target ISA notes: requires sm_90".
            Op::St(a) if a.complete_tx => need(90, "st.async"),
            Op::Red(a) if a.complete_tx => need(90, "red.async"),
            Op::Ld(a) | Op::Ldu(a) | Op::St(a) if a.space == Space::SharedCluster => {
                need(90, "ld/st on .shared::cluster")
            }
            Op::Cvta { space, .. } | Op::Isspacep { space } if *space == Space::SharedCluster => {
                need(90, "cvta/isspacep with .shared::cluster")
            }
            Op::Atom(a) | Op::Red(a) => match (a.space, a.ty) {
                (Space::SharedCluster, _) => need(90, "atom/red on .shared::cluster"),
                // ptxas 12.9: "Instruction 'atom.add.bf16x2.global' requires .target
                // sm_90", the same for .bf16 and for red; .f16 add and 16-bit cas sm_70,
                // .f16x2 add sm_60.
                (_, T::Bf16 | T::Bf16x2) => need(90, "atom/red add with .bf16 or .bf16x2"),
                (_, T::F16) => need(70, "atom/red add with .f16"),
                (_, T::B16) => need(70, "atom.cas with .b16"),
                (_, T::F16x2) => need(60, "atom/red add with .f16x2"),
                _ => return None,
            },
            Op::Ldmatrix(_) => need(75, "ldmatrix"),
            Op::Movmatrix => need(75, "movmatrix"),
            Op::Stmatrix(_) => need(90, "stmatrix"),
            // Not checked: cp.async (sm_80), which regsim's own calibration PTX, built for
            // sm_70, uses to time LDGSTS (scripts/build-calibrate.sh); regsim runs it.
            Op::CreatePolicy(_) => need(80, "createpolicy"),
            Op::Redux { .. } => need(80, "redux.sync"),
            Op::Mbarrier(b) => match b.kind {
                MbarrierKind::Arrive {
                    expect_tx: true, ..
                }
                | MbarrierKind::ExpectTx
                | MbarrierKind::CompleteTx
                | MbarrierKind::Wait { try_wait: true, .. } => {
                    need(90, "mbarrier with transaction counts or try_wait")
                }
                _ => need(80, "mbarrier"),
            },
            Op::CpAsyncBulk(_)
            | Op::CpAsyncBulkTensor(_)
            | Op::CpAsyncBulkCommit
            | Op::CpAsyncBulkWait { .. } => need(90, "cp.async.bulk"),
            Op::Bar { cluster: true, .. } => need(90, "barrier.cluster"),
            Op::Mapa { .. } => need(90, "mapa"),
            Op::Getctarank { .. } => need(90, "getctarank"),
            Op::Elect => need(90, "elect.sync"),
            Op::FenceProxy(ProxyFence::Async(_)) => need(90, "fence.proxy.async"),
            Op::GridDepControl { .. } => need(90, "griddepcontrol"),
            Op::Wgmma(_) | Op::WgmmaFence | Op::WgmmaCommit | Op::WgmmaWait { .. } => TargetNeed {
                arch_specific: true,
                ..need(90, "wgmma")
            },
            Op::Setmaxnreg { .. } => TargetNeed {
                arch_specific: true,
                ..need(90, "setmaxnreg")
            },
            _ => return None,
        })
    }
}

impl Op {
    /// True if the instruction may transfer control somewhere other than the next one.
    pub fn is_branch(&self) -> bool {
        matches!(self, Op::Bra { .. })
    }

    /// True for `ret`, `exit` and `trap`: execution of the thread (or function) ends here.
    pub fn is_return_like(&self) -> bool {
        matches!(self, Op::Ret { .. } | Op::Exit | Op::Trap)
    }

    /// True if a basic block must end after this instruction.
    pub fn ends_block(&self) -> bool {
        self.is_branch() || self.is_return_like()
    }

    /// The PTX opcode spelling, without modifiers.
    pub fn opcode(&self) -> &'static str {
        match self {
            Op::Add { carry, .. } if carry.reads() => "addc",
            Op::Add { .. } | Op::FAdd { .. } => "add",
            Op::Sub { carry, .. } if carry.reads() => "subc",
            Op::Sub { .. } | Op::FSub { .. } => "sub",
            Op::Mul { .. } | Op::FMul { .. } => "mul",
            Op::Mad { carry, .. } if carry.reads() => "madc",
            Op::Mad { .. } => "mad",
            Op::Mul24 { .. } => "mul24",
            Op::Mad24 { .. } => "mad24",
            Op::Sad { .. } => "sad",
            Op::Div { .. } | Op::FDiv { .. } => "div",
            Op::Rem { .. } => "rem",
            Op::Min { .. } | Op::FMin { .. } => "min",
            Op::Max { .. } | Op::FMax { .. } => "max",
            Op::Abs { .. } | Op::FAbs { .. } => "abs",
            Op::Neg { .. } | Op::FNeg { .. } => "neg",
            Op::And { .. } => "and",
            Op::Or { .. } => "or",
            Op::Xor { .. } => "xor",
            Op::Not { .. } => "not",
            Op::Cnot { .. } => "cnot",
            Op::Lop3 { .. } => "lop3",
            Op::Shl { .. } => "shl",
            Op::Shr { .. } => "shr",
            Op::Bfe { .. } => "bfe",
            Op::Bfi { .. } => "bfi",
            Op::Bfind { .. } => "bfind",
            Op::Popc { .. } => "popc",
            Op::Clz { .. } => "clz",
            Op::Brev { .. } => "brev",
            Op::Prmt { .. } => "prmt",
            Op::Dp4a { .. } => "dp4a",
            Op::Dp2a { .. } => "dp2a",
            Op::Shf { .. } => "shf",
            Op::Fma { .. } => "fma",
            Op::Rcp { .. } => "rcp",
            Op::Sqrt { .. } => "sqrt",
            Op::Rsqrt { .. } => "rsqrt",
            Op::Sin { .. } => "sin",
            Op::Cos { .. } => "cos",
            Op::Lg2 { .. } => "lg2",
            Op::Ex2 { .. } => "ex2",
            Op::Tanh { .. } => "tanh",
            Op::Copysign { .. } => "copysign",
            Op::Testp { .. } => "testp",
            Op::Setp { .. } => "setp",
            Op::Set { .. } => "set",
            Op::Selp { .. } => "selp",
            Op::Slct { .. } => "slct",
            Op::Mov { .. } | Op::Pack { .. } | Op::Unpack { .. } => "mov",
            Op::Cvt { .. } => "cvt",
            Op::Cvta { .. } => "cvta",
            Op::Isspacep { .. } => "isspacep",
            Op::Ld(_) => "ld",
            Op::Ldu(_) => "ldu",
            Op::St(_) => "st",
            Op::Prefetch { uniform: false, .. } => "prefetch",
            Op::Prefetch { uniform: true, .. } => "prefetchu",
            Op::Atom(_) => "atom",
            Op::Red(_) => "red",
            Op::Bar { cluster: true, .. } => "barrier",
            Op::Bar { .. } | Op::BarWarpSync => "bar",
            Op::Mapa { .. } => "mapa",
            Op::Getctarank { .. } => "getctarank",
            Op::Fence { .. } => "fence",
            Op::Shfl { .. } => "shfl",
            Op::Vote { .. } => "vote",
            Op::Match { .. } => "match",
            Op::Activemask => "activemask",
            Op::Redux { .. } => "redux",
            Op::Bra { .. } => "bra",
            Op::Call(_) => "call",
            Op::Ret { .. } => "ret",
            Op::Exit => "exit",
            Op::Trap => "trap",
            Op::Brkpt => "brkpt",
            Op::Nanosleep => "nanosleep",
            Op::CreatePolicy(_) => "createpolicy",
            Op::CpAsync(_) | Op::CpAsyncCommit | Op::CpAsyncWait { .. } => "cp",
            Op::CpAsyncBulk(_)
            | Op::CpAsyncBulkTensor(_)
            | Op::CpAsyncBulkCommit
            | Op::CpAsyncBulkWait { .. } => "cp",
            Op::WmmaLoad(_) | Op::WmmaStore(_) => "wmma",
            Op::Mma(m) if m.wmma => "wmma",
            Op::Mma(_) => "mma",
            Op::Ldmatrix(_) => "ldmatrix",
            Op::Stmatrix(_) => "stmatrix",
            Op::Mbarrier(b) if matches!(b.kind, MbarrierKind::CpAsyncArrive { .. }) => "cp",
            Op::Mbarrier(_) => "mbarrier",
            Op::Elect => "elect",
            Op::FenceProxy(_) => "fence",
            Op::GridDepControl { .. } => "griddepcontrol",
            Op::Setmaxnreg { .. } => "setmaxnreg",
            Op::Movmatrix => "movmatrix",
            Op::Wgmma(_) | Op::WgmmaFence | Op::WgmmaCommit | Op::WgmmaWait { .. } => "wgmma",
            Op::Tex(t) if t.gather.is_some() => "tld4",
            Op::Tex(_) => "tex",
            Op::Txq { .. } => "txq",
        }
    }
}

/// Writes `.x` for each non-empty modifier.
struct Mods<'a>(&'a mut String);

impl Mods<'_> {
    fn push(&mut self, m: &str) {
        if !m.is_empty() {
            self.0.push('.');
            self.0.push_str(m);
        }
    }
    fn flag(&mut self, on: bool, m: &str) {
        if on {
            self.push(m);
        }
    }
    fn ty(&mut self, t: ScalarType) {
        self.push(t.as_str());
    }
    fn rounding(&mut self, r: Option<Rounding>) {
        if let Some(r) = r {
            self.push(r.as_str());
        }
    }
    fn float(&mut self, m: FloatMode) {
        self.rounding(m.rounding);
        self.flag(m.ftz, "ftz");
        self.flag(m.sat, "sat");
    }
    fn precision(&mut self, p: Precision) {
        match p {
            Precision::Approx => self.push("approx"),
            Precision::Full => self.push("full"),
            Precision::Ieee(r) => self.push(r.as_str()),
        }
    }
    fn mul(&mut self, m: MulMode) {
        self.push(match m {
            MulMode::Lo => "lo",
            MulMode::Hi => "hi",
            MulMode::Wide => "wide",
        });
    }
    fn order(&mut self, o: MemOrder) {
        match o {
            MemOrder::Weak => {}
            MemOrder::Volatile => self.push("volatile"),
            MemOrder::Mmio => {
                self.push("mmio");
                self.push("relaxed");
                self.push("sys");
            }
            MemOrder::Relaxed(s) => {
                self.push("relaxed");
                self.push(s.as_str());
            }
            MemOrder::Acquire(s) => {
                self.push("acquire");
                self.push(s.as_str());
            }
            MemOrder::Release(s) => {
                self.push("release");
                self.push(s.as_str());
            }
            MemOrder::AcqRel(s) => {
                self.push("acq_rel");
                self.push(s.as_str());
            }
        }
    }
    fn hints(&mut self, h: &MemHints) {
        if let Some(e) = h.l1 {
            self.push(&format!("L1::{}", e.as_str()));
        }
        if let Some(e) = h.l2 {
            self.push(&format!("L2::{}", e.as_str()));
        }
        if h.cache_hint {
            self.push("L2::cache_hint");
        }
        if let Some(b) = h.l2_prefetch {
            self.push(&format!("L2::{}B", b.bytes()));
        }
    }
    fn mem(&mut self, m: &MemAccess) {
        self.flag(m.complete_tx, "async");
        self.order(m.order);
        self.push(m.space.as_str());
        self.push(m.cache.as_str());
        self.flag(m.nc, "nc");
        self.hints(&m.hints);
        self.flag(m.complete_tx, "mbarrier::complete_tx::bytes");
        if m.lanes > 1 {
            self.push(&format!("v{}", m.lanes));
        }
        self.ty(m.ty);
    }
}

impl fmt::Display for Op {
    /// The opcode with its modifiers in canonical order, e.g. `add.rn.ftz.f32`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::from(self.opcode());
        let mut m = Mods(&mut s);
        match self {
            Op::Add { ty, sat, carry } | Op::Sub { ty, sat, carry } => {
                m.flag(carry.writes(), "cc");
                m.flag(*sat, "sat");
                m.ty(*ty);
            }
            Op::Mul { ty, mode } => {
                m.mul(*mode);
                m.ty(*ty);
            }
            Op::Mad {
                ty,
                mode,
                sat,
                carry,
            } => {
                m.mul(*mode);
                m.flag(carry.writes(), "cc");
                m.flag(*sat, "sat");
                m.ty(*ty);
            }
            Op::Mul24 { ty, hi } => {
                m.push(if *hi { "hi" } else { "lo" });
                m.ty(*ty);
            }
            Op::Mad24 { ty, hi, sat } => {
                m.push(if *hi { "hi" } else { "lo" });
                m.flag(*sat, "sat");
                m.ty(*ty);
            }
            Op::Min { ty, relu } | Op::Max { ty, relu } => {
                m.flag(*relu, "relu");
                m.ty(*ty);
            }
            Op::Sad { ty }
            | Op::Div { ty }
            | Op::Rem { ty }
            | Op::Abs { ty }
            | Op::Neg { ty }
            | Op::And { ty }
            | Op::Or { ty }
            | Op::Xor { ty }
            | Op::Not { ty }
            | Op::Cnot { ty }
            | Op::Lop3 { ty }
            | Op::Shl { ty }
            | Op::Shr { ty }
            | Op::Bfe { ty }
            | Op::Bfi { ty }
            | Op::Popc { ty }
            | Op::Clz { ty }
            | Op::Brev { ty }
            | Op::Copysign { ty } => m.ty(*ty),
            Op::Tanh { ty } => {
                m.push("approx");
                m.ty(*ty);
            }
            Op::Bfind { ty, shiftamt } => {
                m.flag(*shiftamt, "shiftamt");
                m.ty(*ty);
            }
            Op::Prmt { mode } => {
                m.push("b32");
                m.push(mode.as_str());
            }
            Op::Dp4a { a_ty, b_ty } => {
                m.ty(*a_ty);
                m.ty(*b_ty);
            }
            Op::Dp2a { a_ty, b_ty, hi } => {
                m.push(if *hi { "hi" } else { "lo" });
                m.ty(*a_ty);
                m.ty(*b_ty);
            }
            Op::Shf { dir, amount } => {
                m.push(match dir {
                    ShiftDir::Left => "l",
                    ShiftDir::Right => "r",
                });
                m.push(match amount {
                    ShiftAmount::Clamp => "clamp",
                    ShiftAmount::Wrap => "wrap",
                });
                m.push("b32");
            }
            Op::FAdd { ty, mode }
            | Op::FSub { ty, mode }
            | Op::FMul { ty, mode }
            | Op::Fma { ty, mode } => {
                m.float(*mode);
                m.ty(*ty);
            }
            Op::FDiv { ty, precision, ftz }
            | Op::Rcp { ty, precision, ftz }
            | Op::Sqrt { ty, precision, ftz } => {
                m.precision(*precision);
                m.flag(*ftz, "ftz");
                m.ty(*ty);
            }
            Op::Rsqrt { ty, ftz } | Op::Ex2 { ty, ftz } => {
                m.push("approx");
                m.flag(*ftz, "ftz");
                m.ty(*ty);
            }
            Op::Sin { ftz } | Op::Cos { ftz } | Op::Lg2 { ftz } => {
                m.push("approx");
                m.flag(*ftz, "ftz");
                m.push("f32");
            }
            Op::FMin { ty, ftz, nan } | Op::FMax { ty, ftz, nan } => {
                m.flag(*ftz, "ftz");
                m.flag(*nan, "NaN");
                m.ty(*ty);
            }
            Op::FAbs { ty, ftz } | Op::FNeg { ty, ftz } => {
                m.flag(*ftz, "ftz");
                m.ty(*ty);
            }
            Op::Testp { ty, class } => {
                m.push(class.as_str());
                m.ty(*ty);
            }
            Op::Setp {
                ty,
                cmp,
                ftz,
                combine,
            } => {
                m.push(cmp.as_str());
                if let Some(c) = combine {
                    m.push(c.as_str());
                }
                m.flag(*ftz, "ftz");
                m.ty(*ty);
            }
            Op::Set {
                dst_ty,
                ty,
                cmp,
                ftz,
                combine,
            } => {
                m.push(cmp.as_str());
                if let Some(c) = combine {
                    m.push(c.as_str());
                }
                m.flag(*ftz, "ftz");
                m.ty(*dst_ty);
                m.ty(*ty);
            }
            Op::Selp { ty } | Op::Mov { ty } | Op::Pack { ty, .. } | Op::Unpack { ty, .. } => {
                m.ty(*ty)
            }
            Op::Slct { ty, cmp_ty, ftz } => {
                m.flag(*ftz, "ftz");
                m.ty(*ty);
                m.ty(*cmp_ty);
            }
            Op::Cvt {
                dst,
                src,
                rounding,
                ftz,
                sat,
                relu,
                satfinite,
            } => {
                m.rounding(*rounding);
                m.flag(*ftz, "ftz");
                m.flag(*sat, "sat");
                m.flag(*relu, "relu");
                m.flag(*satfinite, "satfinite");
                m.ty(*dst);
                m.ty(*src);
            }
            Op::Cvta {
                to_generic,
                space,
                ty,
            } => {
                m.flag(!to_generic, "to");
                m.push(space.as_str());
                m.ty(*ty);
            }
            Op::Isspacep { space } => m.push(space.as_str()),
            Op::Ld(a) | Op::Ldu(a) | Op::St(a) => m.mem(a),
            Op::Prefetch { space, level, .. } => {
                m.push(space.as_str());
                m.push(match level {
                    CacheLevel::L1 => "L1",
                    CacheLevel::L2 => "L2",
                });
            }
            Op::Atom(a) | Op::Red(a) => {
                m.flag(a.complete_tx, "async");
                m.order(a.order);
                m.push(a.space.as_str());
                m.flag(a.complete_tx, "mbarrier::complete_tx::bytes");
                m.push(a.op.as_str());
                m.ty(a.ty);
            }
            Op::Mapa { space, ty } | Op::Getctarank { space, ty } => {
                m.flag(*space == Space::SharedCluster, "shared::cluster");
                m.ty(*ty);
            }
            Op::Bar {
                kind,
                aligned,
                cluster,
            } => {
                m.flag(*cluster, "cluster");
                match kind {
                    BarrierKind::Sync if *cluster => m.push("wait"),
                    BarrierKind::Sync => m.push("sync"),
                    BarrierKind::Arrive => m.push("arrive"),
                    BarrierKind::RedPopc => {
                        m.push("red");
                        m.push("popc");
                    }
                    BarrierKind::Red(op) => {
                        m.push("red");
                        m.push(op.as_str());
                    }
                }
                m.flag(*aligned, "aligned");
                match kind {
                    BarrierKind::RedPopc => m.push("u32"),
                    BarrierKind::Red(_) => m.push("pred"),
                    _ => {}
                }
            }
            Op::BarWarpSync => {
                m.push("warp");
                m.push("sync");
            }
            Op::Fence { sem, scope } => {
                m.push(match sem {
                    FenceSem::Sc => "sc",
                    FenceSem::AcqRel => "acq_rel",
                });
                m.push(scope.as_str());
            }
            Op::Shfl { mode, sync } => {
                m.flag(*sync, "sync");
                m.push(mode.as_str());
                m.push("b32");
            }
            Op::Vote { mode, sync } => {
                m.flag(*sync, "sync");
                m.push(mode.as_str());
                m.push(if *mode == VoteMode::Ballot {
                    "b32"
                } else {
                    "pred"
                });
            }
            Op::Match { all, ty } => {
                m.push(if *all { "all" } else { "any" });
                m.push("sync");
                m.ty(*ty);
            }
            Op::Activemask => m.push("b32"),
            Op::Redux { op, ty } => {
                m.push("sync");
                m.push(op.as_str());
                m.ty(*ty);
            }
            Op::Bra { uni } | Op::Ret { uni } => m.flag(*uni, "uni"),
            Op::Call(c) => m.flag(c.uni, "uni"),
            Op::Exit | Op::Trap | Op::Brkpt => {}
            Op::Nanosleep => m.push("u32"),
            Op::CpAsync(c) => {
                m.push("async");
                m.push(c.cache.as_str());
                m.push("shared");
                m.push("global");
                m.hints(&c.hints);
            }
            Op::CpAsyncCommit => {
                m.push("async");
                m.push("commit_group");
            }
            Op::CpAsyncBulk(c) => {
                m.push("async");
                m.push("bulk");
                let (dst, src, completion) = c.direction.qualifiers();
                for q in [dst, src, completion] {
                    m.push(q);
                }
                if c.direction.multicast() {
                    m.push("multicast::cluster");
                }
                m.hints(&c.hints);
            }
            Op::CpAsyncBulkTensor(c) => {
                for q in [
                    "async",
                    "bulk",
                    "tensor",
                    ["1d", "2d", "3d", "4d", "5d"][usize::from(c.dims.clamp(1, 5)) - 1],
                ] {
                    m.push(q);
                }
                let (dst, src, completion) = c.direction.qualifiers();
                let mode = if c.im2col { "im2col" } else { "tile" };
                for q in [dst, src, mode, completion] {
                    m.push(q);
                }
                if c.direction.multicast() {
                    m.push("multicast::cluster");
                }
                m.hints(&c.hints);
            }
            Op::CpAsyncBulkCommit => {
                for q in ["async", "bulk", "commit_group"] {
                    m.push(q);
                }
            }
            Op::CpAsyncBulkWait { read } => {
                for q in ["async", "bulk", "wait_group"] {
                    m.push(q);
                }
                if *read {
                    m.push("read");
                }
            }
            Op::CpAsyncWait { all } => {
                m.push("async");
                m.push(if *all { "wait_all" } else { "wait_group" });
            }
            Op::WmmaLoad(w) | Op::WmmaStore(w) => {
                m.push(w.role.map_or("store", |_| "load"));
                m.push(w.role.map_or("d", MatrixRole::as_str));
                m.push("sync");
                m.push("aligned");
                m.push(w.layout.as_str());
                m.push(w.shape.as_str());
                m.push(w.space.as_str());
                m.ty(w.ty);
            }
            Op::Mma(o) => {
                // The ISA's orders: `wmma.mma{.op.popc}.sync.aligned.alayout.blayout.shape
                // {.rnd}.types{.satfinite}` and `mma.sync.aligned.shape.row.col
                // {.satfinite}.types{.op.popc}`.
                if o.wmma {
                    m.push("mma");
                    if let Some(b) = o.bit_op {
                        m.push(b.as_str());
                        m.push("popc");
                    }
                }
                match o.sparse {
                    Some(sp) if sp.ordered => m.push("sp::ordered_metadata"),
                    Some(_) => m.push("sp"),
                    None => {}
                }
                m.push("sync");
                m.push("aligned");
                if o.wmma {
                    m.push(o.a_layout.as_str());
                    m.push(o.b_layout.as_str());
                    m.push(o.shape.as_str());
                    if let Some(r) = o.rnd {
                        m.push(r.as_str());
                    }
                } else {
                    m.push(o.shape.as_str());
                    m.push(o.a_layout.as_str());
                    m.push(o.b_layout.as_str());
                    m.flag(o.satfinite, "satfinite");
                }
                m.ty(o.d_ty);
                if !o.wmma || o.ab_ty != ScalarType::F16 {
                    m.ty(o.ab_ty);
                    m.ty(o.b_ty);
                }
                m.ty(o.c_ty);
                if o.wmma {
                    m.flag(o.satfinite, "satfinite");
                } else if let Some(b) = o.bit_op {
                    m.push(b.as_str());
                    m.push("popc");
                }
            }
            Op::Mbarrier(b) => {
                match b.kind {
                    MbarrierKind::Init => m.push("init"),
                    MbarrierKind::Arrive {
                        drop,
                        no_complete,
                        expect_tx,
                    } => {
                        m.push(if drop { "arrive_drop" } else { "arrive" });
                        m.flag(no_complete, "noComplete");
                        m.flag(expect_tx, "expect_tx");
                    }
                    MbarrierKind::ExpectTx => m.push("expect_tx"),
                    MbarrierKind::CompleteTx => m.push("complete_tx"),
                    MbarrierKind::Wait { try_wait, parity } => {
                        m.push(if try_wait { "try_wait" } else { "test_wait" });
                        m.flag(parity, "parity");
                    }
                    MbarrierKind::PendingCount => m.push("pending_count"),
                    MbarrierKind::Inval => m.push("inval"),
                    MbarrierKind::CpAsyncArrive { noinc } => {
                        m.push("async");
                        m.push("mbarrier");
                        m.push("arrive");
                        m.flag(noinc, "noinc");
                    }
                }
                if b.kind != MbarrierKind::PendingCount {
                    m.push(b.space.as_str());
                }
                m.push("b64");
            }
            Op::Elect => m.push("sync"),
            Op::FenceProxy(p) => match p {
                ProxyFence::Alias => {
                    m.push("proxy");
                    m.push("alias");
                }
                ProxyFence::Async(space) => {
                    m.push("proxy");
                    m.push("async");
                    m.push(match space {
                        Space::Shared => "shared::cta",
                        s => s.as_str(),
                    });
                }
                ProxyFence::MbarrierInit => {
                    m.push("mbarrier_init");
                    m.push("release");
                    m.push("cluster");
                }
            },
            Op::GridDepControl { wait } => m.push(if *wait { "wait" } else { "launch_dependents" }),
            Op::Setmaxnreg { inc, .. } => {
                for q in [if *inc { "inc" } else { "dec" }, "sync", "aligned", "u32"] {
                    m.push(q);
                }
            }
            Op::Wgmma(o) => {
                m.push("mma_async");
                if o.sparse.is_some() {
                    m.push("sp");
                }
                for q in ["sync", "aligned"] {
                    m.push(q);
                }
                m.push(&format!("m64n{}k{}", o.n, o.k));
                m.flag(o.satfinite, "satfinite");
                m.ty(o.d_ty);
                m.ty(o.a_ty);
                m.ty(o.b_ty);
                if o.a_ty == ScalarType::B1 {
                    m.push("and");
                    m.push("popc");
                }
            }
            Op::WgmmaFence | Op::WgmmaCommit | Op::WgmmaWait { .. } => {
                m.push(match self {
                    Op::WgmmaFence => "fence",
                    Op::WgmmaCommit => "commit_group",
                    _ => "wait_group",
                });
                m.push("sync");
                m.push("aligned");
            }
            Op::Movmatrix => {
                for q in ["sync", "aligned", "m8n8", "trans", "b16"] {
                    m.push(q);
                }
            }
            Op::Ldmatrix(l) | Op::Stmatrix(l) => {
                m.push("sync");
                m.push("aligned");
                m.push("m8n8");
                m.push(&format!("x{}", l.count));
                m.flag(l.trans, "trans");
                m.push(l.space.as_str());
                m.push("b16");
            }
            Op::CreatePolicy(kind) => {
                match kind {
                    PolicyKind::Fractional { primary, secondary }
                    | PolicyKind::Range { primary, secondary } => {
                        m.push(if matches!(kind, PolicyKind::Range { .. }) {
                            "range"
                        } else {
                            "fractional"
                        });
                        m.push(&format!("L2::{}", primary.as_str()));
                        if let Some(e) = secondary {
                            m.push(&format!("L2::{}", e.as_str()));
                        }
                    }
                    PolicyKind::Cvt => {
                        m.push("cvt");
                        m.push("L2");
                    }
                }
                m.push("b64");
            }
            Op::Tex(t) => {
                if let Some(c) = t.gather {
                    m.push(c.as_str());
                }
                m.push(t.geometry.as_str());
                if t.gather.is_none() {
                    m.push("v4");
                }
                match t.lod {
                    TexLod::Base => {}
                    TexLod::Level => m.push("level"),
                    TexLod::Grad => m.push("grad"),
                }
                m.ty(t.dst_ty);
                m.ty(t.coord_ty);
            }
            Op::Txq { query, ty } => {
                m.push(query.as_str());
                m.ty(*ty);
            }
        }
        f.write_str(&s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn op_stays_small_enough_for_the_emulator_loop() {
        // One pointer for the boxed rare variants, the inline fields fit beside the tag.
        assert_eq!(std::mem::size_of::<Op>(), 16);
        assert!(std::mem::size_of::<crate::function::Inst>() <= 48);
        assert!(std::mem::size_of::<crate::function::Operand>() <= 24);
    }

    #[test]
    fn display_puts_modifiers_in_canonical_order() {
        let op = Op::FAdd {
            ty: ScalarType::F32,
            mode: FloatMode {
                rounding: Some(Rounding::Rn),
                ftz: true,
                sat: false,
            },
        };
        assert_eq!(op.to_string(), "add.rn.ftz.f32");
        let op = Op::Add {
            ty: ScalarType::U32,
            sat: false,
            carry: Carry::InOut,
        };
        assert_eq!(op.to_string(), "addc.cc.u32");
        let op = Op::Ld(MemAccess {
            space: Space::Global,
            ty: ScalarType::F32,
            lanes: 4,
            order: MemOrder::Weak,
            cache: CacheOp::Default,
            nc: true,
            hints: MemHints {
                l1: Some(Eviction::Last),
                l2_prefetch: Some(PrefetchSize::B128),
                ..MemHints::default()
            },
            complete_tx: false,
        });
        assert_eq!(
            op.to_string(),
            "ld.global.nc.L1::evict_last.L2::128B.v4.f32"
        );
        let op = Op::Cvta {
            to_generic: false,
            space: Space::Global,
            ty: ScalarType::U64,
        };
        assert_eq!(op.to_string(), "cvta.to.global.u64");
    }
}

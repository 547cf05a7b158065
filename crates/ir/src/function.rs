//! The IR data model of one PTX function: virtual registers, parameters, function-scope
//! variables, decoded instructions with their operands, and basic blocks with their
//! control-flow edges.
//!
//! Everything is stored in dense vectors indexed by the typed ids of [`crate::entity`].
//! Operands of all instructions live in one arena (`Function::operands`) and each
//! instruction names its slice; the registers each instruction reads and writes are
//! precomputed into two more flat arenas so that analyses get them as slices
//! ([`crate::graph::RegisterEffects`]). Blocks cover the instructions contiguously in
//! layout order, so a block is a range of instruction ids.

use std::fmt;

use ptx::ast::{Linkage, ScalarType, Span, VariableType};

use crate::entity::{BlockId, FuncId, InstId, LocalVarId, RegId, VarId};
use crate::graph::{ControlFlowGraph, RegisterEffects};
use crate::op::Op;

/// The storage class of a virtual register: what a register allocator must find room for.
/// 8-bit registers (`.reg .b8`) live in `B16` storage; their declared type keeps the width.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RegClass {
    Pred,
    B16,
    B32,
    B64,
    B128,
}

impl RegClass {
    /// The class a register declared with type `ty` belongs to.
    pub fn of(ty: ScalarType) -> RegClass {
        match ty.bits() {
            1 => RegClass::Pred,
            0..=16 => RegClass::B16,
            17..=32 => RegClass::B32,
            33..=64 => RegClass::B64,
            _ => RegClass::B128,
        }
    }

    /// Width of the storage in bits (a predicate counts as 1).
    pub fn bits(self) -> u32 {
        match self {
            RegClass::Pred => 1,
            RegClass::B16 => 16,
            RegClass::B32 => 32,
            RegClass::B64 => 64,
            RegClass::B128 => 128,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            RegClass::Pred => "pred",
            RegClass::B16 => "b16",
            RegClass::B32 => "b32",
            RegClass::B64 => "b64",
            RegClass::B128 => "b128",
        }
    }
}

/// A virtual register as declared.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegInfo {
    /// The source name: `%r12`, or `%v.y` for lane 1 of a vector register `%v`.
    pub name: String,
    /// The declared type (`.f32`, `.b32`, `.pred`, …): instructions are type-checked
    /// against it under PTX's relaxed rules.
    pub ty: ScalarType,
    pub class: RegClass,
}

/// A grid dimension component of a special register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dim {
    X,
    Y,
    Z,
}

impl Dim {
    pub fn as_str(self) -> &'static str {
        match self {
            Dim::X => "x",
            Dim::Y => "y",
            Dim::Z => "z",
        }
    }
}

/// Read-only special registers (ISA chapter 10). They are not virtual registers: the
/// emulator computes them, and they never appear in def/use sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SpecialReg {
    Tid(Dim),
    Ntid(Dim),
    Ctaid(Dim),
    Nctaid(Dim),
    Laneid,
    Warpid,
    Nwarpid,
    Smid,
    Nsmid,
    Gridid,
    Clock,
    ClockHi,
    Clock64,
    LanemaskEq,
    LanemaskLt,
    LanemaskLe,
    LanemaskGt,
    LanemaskGe,
    Globaltimer,
    GlobaltimerLo,
    GlobaltimerHi,
    DynamicSmemSize,
    TotalSmemSize,
    /// `%clusterid`, `%nclusterid`, `%cluster_ctaid`, `%cluster_nctaid` (sm_90).
    Clusterid(Dim),
    Nclusterid(Dim),
    ClusterCtaid(Dim),
    ClusterNctaid(Dim),
    /// `%cluster_ctarank`, `%cluster_nctarank`
    ClusterCtarank,
    ClusterNctarank,
    /// `%is_explicit_cluster` (a predicate)
    IsExplicitCluster,
    /// `%envreg0` … `%envreg31`
    Envreg(u8),
    /// `%pm0` … `%pm7`
    Pm(u8),
}

impl SpecialReg {
    /// Width in bits of the value the register holds.
    pub fn bits(self) -> u32 {
        match self {
            SpecialReg::Gridid | SpecialReg::Clock64 | SpecialReg::Globaltimer => 64,
            SpecialReg::IsExplicitCluster => 1,
            _ => 32,
        }
    }

    /// Parses a special register's name (`%tid` plus component, `%laneid`, `%envreg3`).
    pub fn from_name(name: &str, dim: Option<Dim>) -> Option<SpecialReg> {
        use SpecialReg::*;
        let with_dim = |f: fn(Dim) -> SpecialReg| dim.map(f);
        let plain = |r: SpecialReg| if dim.is_none() { Some(r) } else { None };
        match name {
            "%tid" => with_dim(Tid),
            "%ntid" => with_dim(Ntid),
            "%ctaid" => with_dim(Ctaid),
            "%nctaid" => with_dim(Nctaid),
            "%clusterid" => with_dim(Clusterid),
            "%nclusterid" => with_dim(Nclusterid),
            "%cluster_ctaid" => with_dim(ClusterCtaid),
            "%cluster_nctaid" => with_dim(ClusterNctaid),
            "%cluster_ctarank" => plain(ClusterCtarank),
            "%cluster_nctarank" => plain(ClusterNctarank),
            "%is_explicit_cluster" => plain(IsExplicitCluster),
            "%laneid" => plain(Laneid),
            "%warpid" => plain(Warpid),
            "%nwarpid" => plain(Nwarpid),
            "%smid" => plain(Smid),
            "%nsmid" => plain(Nsmid),
            "%gridid" => plain(Gridid),
            "%clock" => plain(Clock),
            "%clock_hi" => plain(ClockHi),
            "%clock64" => plain(Clock64),
            "%lanemask_eq" => plain(LanemaskEq),
            "%lanemask_lt" => plain(LanemaskLt),
            "%lanemask_le" => plain(LanemaskLe),
            "%lanemask_gt" => plain(LanemaskGt),
            "%lanemask_ge" => plain(LanemaskGe),
            "%globaltimer" => plain(Globaltimer),
            "%globaltimer_lo" => plain(GlobaltimerLo),
            "%globaltimer_hi" => plain(GlobaltimerHi),
            "%dynamic_smem_size" => plain(DynamicSmemSize),
            "%total_smem_size" => plain(TotalSmemSize),
            _ => {
                let numbered = |prefix: &str, max: u8| -> Option<u8> {
                    let n: u8 = name.strip_prefix(prefix)?.parse().ok()?;
                    (n <= max && dim.is_none()).then_some(n)
                };
                numbered("%envreg", 31)
                    .map(Envreg)
                    .or_else(|| numbered("%pm", 7).map(Pm))
            }
        }
    }
}

impl fmt::Display for SpecialReg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use SpecialReg::*;
        match self {
            Tid(d) => write!(f, "%tid.{}", d.as_str()),
            Ntid(d) => write!(f, "%ntid.{}", d.as_str()),
            Ctaid(d) => write!(f, "%ctaid.{}", d.as_str()),
            Nctaid(d) => write!(f, "%nctaid.{}", d.as_str()),
            Clusterid(d) => write!(f, "%clusterid.{}", d.as_str()),
            Nclusterid(d) => write!(f, "%nclusterid.{}", d.as_str()),
            ClusterCtaid(d) => write!(f, "%cluster_ctaid.{}", d.as_str()),
            ClusterNctaid(d) => write!(f, "%cluster_nctaid.{}", d.as_str()),
            ClusterCtarank => f.write_str("%cluster_ctarank"),
            ClusterNctarank => f.write_str("%cluster_nctarank"),
            IsExplicitCluster => f.write_str("%is_explicit_cluster"),
            Laneid => f.write_str("%laneid"),
            Warpid => f.write_str("%warpid"),
            Nwarpid => f.write_str("%nwarpid"),
            Smid => f.write_str("%smid"),
            Nsmid => f.write_str("%nsmid"),
            Gridid => f.write_str("%gridid"),
            Clock => f.write_str("%clock"),
            ClockHi => f.write_str("%clock_hi"),
            Clock64 => f.write_str("%clock64"),
            LanemaskEq => f.write_str("%lanemask_eq"),
            LanemaskLt => f.write_str("%lanemask_lt"),
            LanemaskLe => f.write_str("%lanemask_le"),
            LanemaskGt => f.write_str("%lanemask_gt"),
            LanemaskGe => f.write_str("%lanemask_ge"),
            Globaltimer => f.write_str("%globaltimer"),
            GlobaltimerLo => f.write_str("%globaltimer_lo"),
            GlobaltimerHi => f.write_str("%globaltimer_hi"),
            DynamicSmemSize => f.write_str("%dynamic_smem_size"),
            TotalSmemSize => f.write_str("%total_smem_size"),
            Envreg(n) => write!(f, "%envreg{n}"),
            Pm(n) => write!(f, "%pm{n}"),
        }
    }
}

/// A named memory object or function an operand refers to, after scope resolution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Symbol {
    /// A module-scope variable.
    Global(VarId),
    /// A function-scope variable of the function the operand belongs to.
    Local(LocalVarId),
    /// A parameter of the function the operand belongs to (index into `Function::params`).
    Param(u32),
    /// A return parameter (index into `Function::return_params`).
    ReturnParam(u32),
    Func(FuncId),
}

/// The base of a memory address operand `[base+offset]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AddrBase {
    Reg(RegId),
    Symbol(Symbol),
    /// `[100]`: the offset is the address.
    Absolute,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Address {
    pub base: AddrBase,
    pub offset: i64,
}

/// One operand of a decoded instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    Reg(RegId),
    /// `!%p`: a negated predicate source.
    NotReg(RegId),
    /// An immediate as the bit pattern of the operand's type (zero-extended to 64 bits):
    /// `-1` in a `.s32` slot is `0xFFFF_FFFF`, `1.5` in an `.f32` slot is `0x3FC0_0000`.
    Imm(u64),
    Special(SpecialReg),
    /// `[base+offset]`
    Address(Address),
    /// The address of a variable or function plus a byte offset (`mov.u64 %rd, sym+4`).
    SymbolAddr {
        symbol: Symbol,
        offset: i64,
    },
    /// A variable or function itself: call arguments and callees, texture references.
    Symbol(Symbol),
    /// A branch target.
    Block(BlockId),
    /// `_`: a discarded result.
    Sink,
}

impl Operand {
    /// The register this operand reads or writes directly or through an address.
    pub fn reg(&self) -> Option<RegId> {
        match *self {
            Operand::Reg(r) | Operand::NotReg(r) => Some(r),
            Operand::Address(Address {
                base: AddrBase::Reg(r),
                ..
            }) => Some(r),
            _ => None,
        }
    }
}

/// `@%p` / `@!%p`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Guard {
    pub reg: RegId,
    pub negated: bool,
}

/// A decoded instruction. Its operands are `Function::operands[start..start+dsts+srcs]`,
/// destinations first; use [`Function::dsts`] and [`Function::srcs`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inst {
    pub op: Op,
    pub guard: Option<Guard>,
    pub operands_start: u32,
    pub num_dsts: u8,
    pub num_srcs: u8,
    /// 1-based source line, for diagnostics.
    pub line: u32,
    /// Byte range of the instruction in the source file ([`crate::Program::inst_text`]).
    pub span: Span,
}

/// A kernel (`.entry`) or a device function (`.func`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FunctionKind {
    Kernel,
    Device,
}

impl FunctionKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FunctionKind::Kernel => "kernel",
            FunctionKind::Device => "function",
        }
    }
}

/// A parameter or return parameter with its place in the parameter buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    pub name: String,
    pub ty: ScalarType,
    /// Element count: 1 for a scalar, the product of the dimensions for an array.
    pub elements: u64,
    pub size: u64,
    pub align: u32,
    /// Byte offset in the parameter buffer (laid out in declaration order, each parameter
    /// at the next multiple of its alignment).
    pub offset: u64,
    /// `.ptr .space .align N` of a kernel pointer parameter.
    pub ptr_space: Option<crate::op::Space>,
    pub ptr_align: Option<u32>,
    /// For a `.reg` parameter of a device function: the register that carries it.
    pub reg: Option<RegId>,
}

/// Performance-tuning directives of a function (ISA §11.4).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PerfDirectives {
    pub maxntid: Option<[u32; 3]>,
    pub reqntid: Option<[u32; 3]>,
    pub maxnreg: Option<u32>,
    pub minnctapersm: Option<u32>,
    pub maxnctapersm: Option<u32>,
    /// `.reqnctapercluster`: the cluster shape (sm_90).
    pub reqnctapercluster: Option<[u32; 3]>,
    /// `.explicitcluster`
    pub explicitcluster: bool,
    /// `.maxclusterrank`
    pub maxclusterrank: Option<u32>,
}

impl PerfDirectives {
    /// True when the kernel declares a cluster (`%is_explicit_cluster`).
    pub fn explicit_cluster(&self) -> bool {
        self.explicitcluster || self.reqnctapercluster.is_some()
    }
}

/// Where a variable lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VarSpace {
    Global,
    Const,
    Shared,
    Local,
    Param,
    /// `.tex` (deprecated texture-reference space).
    Tex,
}

impl VarSpace {
    pub fn as_str(self) -> &'static str {
        match self {
            VarSpace::Global => "global",
            VarSpace::Const => "const",
            VarSpace::Shared => "shared",
            VarSpace::Local => "local",
            VarSpace::Param => "param",
            VarSpace::Tex => "tex",
        }
    }
}

/// A place in a variable's initializer that holds the address of a symbol, filled in when
/// the program is loaded (`.global .u64 p = sym+8;`, `generic(sym)`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Relocation {
    /// Byte offset in the variable.
    pub offset: u64,
    /// Size of the address in bytes (4 or 8).
    pub size: u8,
    pub symbol: Symbol,
    pub addend: i64,
    /// `generic(sym)`: the generic address rather than the state-space address.
    pub generic: bool,
}

/// A module-scope or function-scope variable with its computed layout.
#[derive(Clone, Debug, PartialEq)]
pub struct Variable {
    pub name: String,
    pub space: VarSpace,
    pub linkage: Option<Linkage>,
    pub ty: VariableType,
    /// Size in bytes of one element (vector lanes included).
    pub elem_size: u64,
    /// Total size in bytes; 0 for an unsized `.extern` array.
    pub size: u64,
    pub align: u32,
    /// `true` for `[]` arrays whose size comes from elsewhere (dynamic shared memory).
    pub unsized_array: bool,
    /// `__managed__` variable.
    pub managed: bool,
    /// Initial bytes (`size` long, relocation slots zero), if the variable has an initializer.
    pub init: Option<Vec<u8>>,
    pub relocations: Vec<Relocation>,
}

/// A basic block: a non-empty (except for an empty function body) run of instructions
/// in layout order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    /// The label the block starts at (the first one if several labels coincide).
    pub label: Option<String>,
    /// First instruction.
    pub start: u32,
    /// One past the last instruction.
    pub end: u32,
    pub succs: Vec<BlockId>,
    pub preds: Vec<BlockId>,
}

/// One lowered function.
#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    pub name: String,
    pub kind: FunctionKind,
    pub linkage: Option<Linkage>,
    pub params: Vec<Param>,
    pub return_params: Vec<Param>,
    /// Size of the parameter buffer (end of the last parameter).
    pub param_size: u64,
    pub return_size: u64,
    pub directives: PerfDirectives,
    pub noreturn: bool,
    /// `false` for a declaration without a body (e.g. `.extern .func vprintf`).
    pub has_body: bool,
    pub regs: Vec<RegInfo>,
    /// Function-scope variables, by [`LocalVarId`].
    pub vars: Vec<Variable>,
    pub insts: Vec<Inst>,
    pub operands: Vec<Operand>,
    pub blocks: Vec<Block>,
    /// `InstId(i)` at index `i`: the storage that `block_insts` slices.
    inst_ids: Vec<InstId>,
    use_starts: Vec<u32>,
    uses: Vec<RegId>,
    def_starts: Vec<u32>,
    defs: Vec<RegId>,
}

impl Function {
    /// An empty function with no body; lowering and tests fill it in.
    pub fn new(name: impl Into<String>, kind: FunctionKind) -> Function {
        Function {
            name: name.into(),
            kind,
            linkage: None,
            params: Vec::new(),
            return_params: Vec::new(),
            param_size: 0,
            return_size: 0,
            directives: PerfDirectives::default(),
            noreturn: false,
            has_body: false,
            regs: Vec::new(),
            vars: Vec::new(),
            insts: Vec::new(),
            operands: Vec::new(),
            blocks: Vec::new(),
            inst_ids: Vec::new(),
            use_starts: vec![0],
            uses: Vec::new(),
            def_starts: vec![0],
            defs: Vec::new(),
        }
    }

    pub fn inst(&self, inst: InstId) -> &Inst {
        &self.insts[inst.index()]
    }

    pub fn reg(&self, reg: RegId) -> &RegInfo {
        &self.regs[reg.index()]
    }

    pub fn block(&self, block: BlockId) -> &Block {
        &self.blocks[block.index()]
    }

    /// All operands of `inst`, destinations first.
    #[inline]
    pub fn operands_of(&self, inst: &Inst) -> &[Operand] {
        let start = inst.operands_start as usize;
        &self.operands[start..start + inst.num_dsts as usize + inst.num_srcs as usize]
    }

    #[inline]
    pub fn dsts(&self, inst: InstId) -> &[Operand] {
        let i = &self.insts[inst.index()];
        let start = i.operands_start as usize;
        &self.operands[start..start + i.num_dsts as usize]
    }

    #[inline]
    pub fn srcs(&self, inst: InstId) -> &[Operand] {
        let i = &self.insts[inst.index()];
        let start = i.operands_start as usize + i.num_dsts as usize;
        &self.operands[start..start + i.num_srcs as usize]
    }

    /// Appends an instruction with its operands (`dsts` then `srcs`) and returns its id.
    /// Blocks and register effects are not updated: set the block ranges and call
    /// [`Function::rebuild_cfg`] when done.
    ///
    /// # Panics
    /// If `dsts` or `srcs` has more than 255 operands (an instruction's limit).
    pub fn push_inst(
        &mut self,
        op: Op,
        guard: Option<Guard>,
        dsts: &[Operand],
        srcs: &[Operand],
    ) -> InstId {
        assert!(dsts.len() <= u8::MAX as usize && srcs.len() <= u8::MAX as usize);
        let id = InstId::new(self.insts.len());
        let start = self.operands.len() as u32;
        self.operands.extend_from_slice(dsts);
        self.operands.extend_from_slice(srcs);
        self.insts.push(Inst {
            op,
            guard,
            operands_start: start,
            num_dsts: dsts.len() as u8,
            num_srcs: srcs.len() as u8,
            line: 0,
            span: Span::default(),
        });
        id
    }

    /// Adds a register and returns its id.
    pub fn add_reg(&mut self, name: impl Into<String>, ty: ScalarType) -> RegId {
        let id = RegId::new(self.regs.len());
        self.regs.push(RegInfo {
            name: name.into(),
            ty,
            class: RegClass::of(ty),
        });
        id
    }

    /// The block containing `inst` (binary search over the block ranges).
    pub fn block_of(&self, inst: InstId) -> Option<BlockId> {
        let i = inst.0;
        let idx = self.blocks.partition_point(|b| b.end <= i);
        let b = self.blocks.get(idx)?;
        (b.start <= i && i < b.end).then(|| BlockId::new(idx))
    }

    /// Recomputes the use and def arenas from the instructions' guards and operands.
    /// Uses: the guard, then every source register (addresses and negated predicates
    /// included); defs: every destination register.
    pub fn compute_effects(&mut self) {
        let (use_starts, uses, def_starts, defs) = effects_of(self);
        self.use_starts = use_starts;
        self.uses = uses;
        self.def_starts = def_starts;
        self.defs = defs;
        self.inst_ids = (0..self.insts.len()).map(InstId::new).collect();
    }

    /// Arenas as [`Function::compute_effects`] would build them, for the verifier.
    pub(crate) fn effects_match_operands(&self) -> bool {
        let (use_starts, uses, def_starts, defs) = effects_of(self);
        use_starts == self.use_starts
            && uses == self.uses
            && def_starts == self.def_starts
            && defs == self.defs
            && self.inst_ids.len() == self.insts.len()
    }

    /// Recomputes the control-flow edges from the block ranges and terminators (see
    /// [`crate::cfg`]) and the register-effect arenas, after a pass changed instructions.
    pub fn rebuild_cfg(&mut self) {
        crate::cfg::compute_edges(self);
        self.compute_effects();
    }

    /// Entry `kind 'name'` as diagnostics name the function.
    pub fn describe(&self) -> String {
        format!("{} '{}'", self.kind.as_str(), self.name)
    }
}

type EffectArenas = (Vec<u32>, Vec<RegId>, Vec<u32>, Vec<RegId>);

fn effects_of(f: &Function) -> EffectArenas {
    let mut use_starts = Vec::with_capacity(f.insts.len() + 1);
    let mut def_starts = Vec::with_capacity(f.insts.len() + 1);
    let mut uses = Vec::new();
    let mut defs = Vec::new();
    use_starts.push(0);
    def_starts.push(0);
    for inst in &f.insts {
        if let Some(g) = inst.guard {
            uses.push(g.reg);
        }
        let ops = f.operands_of(inst);
        let (d, s) = ops.split_at(inst.num_dsts as usize);
        for op in d {
            match *op {
                Operand::Reg(r) => defs.push(r),
                // A destination that is an address (none today) would read its base.
                _ => uses.extend(op.reg()),
            }
        }
        uses.extend(s.iter().filter_map(Operand::reg));
        use_starts.push(uses.len() as u32);
        def_starts.push(defs.len() as u32);
    }
    (use_starts, uses, def_starts, defs)
}

impl ControlFlowGraph for Function {
    fn num_blocks(&self) -> usize {
        self.blocks.len()
    }
    fn entry(&self) -> BlockId {
        BlockId(0)
    }
    fn successors(&self, block: BlockId) -> &[BlockId] {
        &self.blocks[block.index()].succs
    }
    fn predecessors(&self, block: BlockId) -> &[BlockId] {
        &self.blocks[block.index()].preds
    }
}

impl RegisterEffects for Function {
    fn num_regs(&self) -> usize {
        self.regs.len()
    }
    fn num_insts(&self) -> usize {
        self.insts.len()
    }
    fn block_insts(&self, block: BlockId) -> &[InstId] {
        let b = &self.blocks[block.index()];
        &self.inst_ids[b.start as usize..b.end as usize]
    }
    fn uses(&self, inst: InstId) -> &[RegId] {
        let i = inst.index();
        &self.uses[self.use_starts[i] as usize..self.use_starts[i + 1] as usize]
    }
    fn defs(&self, inst: InstId) -> &[RegId] {
        let i = inst.index();
        &self.defs[self.def_starts[i] as usize..self.def_starts[i + 1] as usize]
    }
    fn defs_are_partial(&self, inst: InstId) -> bool {
        self.insts[inst.index()].guard.is_some()
    }
}

//! The PTX syntax tree: what the source says, with byte spans, and nothing more.
//!
//! The tree is *syntactic*: an instruction is an opcode, its modifiers in source order and
//! its operands. Which modifiers an opcode accepts, and what `.lo` means on `setp` versus on
//! `mul`, is decided when the `ir` crate decodes instructions. Keeping the parser free of
//! that knowledge is what lets it accept every modifier order the PTX ISA allows and give
//! the tree back unchanged when printed.
//!
//! Every node carries a [`Span`]; trees compare equal only if their spans match too, so
//! round-trip tests compare trees after [`Module::erase_spans`].

use std::fmt;

/// A half-open byte range `[start, end)` into the source text of one file.
#[derive(serde::Serialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub const fn new(start: u32, end: u32) -> Self {
        Span { start, end }
    }
    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span::new(self.start.min(other.start), self.end.max(other.end))
    }
}

/// A name as written: a register (`%r1`), a label (`$L__BB0_2`), a function or variable.
#[derive(serde::Serialize, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

/// A whole `.ptx` file.
#[derive(serde::Serialize, Clone, Debug, PartialEq)]
pub struct Module {
    /// `.version major.minor`
    pub version: Option<(u32, u32)>,
    /// `.target sm_70, texmode_independent, debug`
    pub target: Vec<Ident>,
    /// `.address_size 32|64`
    pub address_size: Option<u32>,
    pub items: Vec<ModuleItem>,
    pub span: Span,
}

#[derive(serde::Serialize, Clone, Debug, PartialEq)]
pub enum ModuleItem {
    Function(Function),
    Variable(VariableDecl),
    /// `.file 1 "path" [, timestamp, size]`
    File(FileDirective),
    /// `.section .debug_xxx { ... }`: kept as raw text between the braces.
    Section(SectionDirective),
    /// `.pragma "text";`
    Pragma(Pragma),
}

#[derive(serde::Serialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Linkage {
    Visible,
    Extern,
    Weak,
    Common,
}

#[derive(serde::Serialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FunctionKind {
    /// `.entry`: a kernel.
    Entry,
    /// `.func`: a device function.
    Func,
}

#[derive(serde::Serialize, Clone, Debug, PartialEq)]
pub struct Function {
    pub linkage: Option<Linkage>,
    pub kind: FunctionKind,
    /// `.func (.param .b32 retval0) name (...)`: empty for entries and void functions.
    pub return_params: Vec<Param>,
    pub name: Ident,
    pub params: Vec<Param>,
    /// `.noreturn` attribute.
    pub noreturn: bool,
    /// `.maxntid`, `.reqntid`, `.minnctapersm`, `.maxnreg`, `.maxnctapersm`, the cluster
    /// directives and `.pragma` before the body.
    pub directives: Vec<PerformanceDirective>,
    /// `None` for a declaration (prototype) without a body.
    pub body: Option<Block>,
    pub span: Span,
}

#[derive(serde::Serialize, Clone, Debug, PartialEq)]
pub enum PerformanceDirective {
    MaxNtid(Vec<u32>),
    ReqNtid(Vec<u32>),
    MinNctaPerSm(u32),
    MaxNctaPerSm(u32),
    MaxNreg(u32),
    /// `.reqnctapercluster X[, Y[, Z]]` (sm_90): the cluster shape the kernel needs.
    ReqNctaPerCluster(Vec<u32>),
    /// `.explicitcluster` (sm_90): the kernel must be launched with a cluster shape.
    ExplicitCluster,
    /// `.maxclusterrank N` (sm_90): at most N CTAs per cluster.
    MaxClusterRank(u32),
    Pragma(Pragma),
}

/// A function parameter: `.param .align 8 .b8 p[16]`, `.param .u64 .ptr .global .align 4 p`,
/// or (for `.func`) `.reg .b32 x`.
#[derive(serde::Serialize, Clone, Debug, PartialEq)]
pub struct Param {
    pub space: StateSpace,
    pub align: Option<u32>,
    pub ty: ScalarType,
    /// `.ptr [.space] [.align N]` attribute of kernel pointer parameters.
    pub ptr: Option<PtrAttribute>,
    pub name: Ident,
    /// Array dimensions; `None` for an unsized `[]` dimension.
    pub array: Vec<Option<u64>>,
    pub span: Span,
}

#[derive(serde::Serialize, Clone, Debug, PartialEq, Eq)]
pub struct PtrAttribute {
    pub space: Option<StateSpace>,
    pub align: Option<u32>,
}

/// `{ statements }`: a function body or a nested scope.
#[derive(serde::Serialize, Clone, Debug, PartialEq)]
pub struct Block {
    pub statements: Vec<Statement>,
    pub span: Span,
}

#[derive(serde::Serialize, Clone, Debug, PartialEq)]
pub enum Statement {
    Label(Ident),
    Instruction(Instruction),
    /// `.reg .b32 %r<42>;`, `.reg .pred %p, %q;`, `.reg .v2 .f32 %v;`
    RegDecl(RegDecl),
    /// `.local`, `.shared`, `.param` (call arguments), `.const` variables inside a function.
    Variable(VariableDecl),
    /// A nested `{ ... }` scope, as both compilers emit around call sequences.
    Block(Block),
    Pragma(Pragma),
    /// `.loc file line column [, function_name label, inlined_at f l c]`
    Loc(LocDirective),
    /// `prototype_0 : .callprototype (.param .b32 _) _ (.param .b64 _);`: the signature an
    /// indirect `call` names as its last operand. Added by the parser: both compilers emit
    /// it inside the call-sequence scope of every call through a function pointer.
    CallPrototype(CallPrototype),
    /// `tbl: .branchtargets $L1, $L2;` or `tgts: .calltargets f, g;`: the candidate list
    /// that `brx.idx` or an indirect `call` may name. Added by the parser.
    TargetList(TargetList),
}

/// `label: .callprototype (return params) _ (params) [.noreturn];`
#[derive(serde::Serialize, Clone, Debug, PartialEq)]
pub struct CallPrototype {
    pub label: Ident,
    /// Empty both for `()_` (what nvcc writes for a void prototype) and for a bare `_`.
    pub return_params: Vec<Param>,
    /// Parameter names are usually `_`.
    pub params: Vec<Param>,
    pub noreturn: bool,
    pub span: Span,
}

#[derive(serde::Serialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TargetListKind {
    /// `.branchtargets`: labels, for `brx.idx`.
    Branch,
    /// `.calltargets`: functions, for an indirect `call`.
    Call,
}

/// `label: .branchtargets a, b, c;`
#[derive(serde::Serialize, Clone, Debug, PartialEq)]
pub struct TargetList {
    pub label: Ident,
    pub kind: TargetListKind,
    pub targets: Vec<Ident>,
    pub span: Span,
}

#[derive(serde::Serialize, Clone, Debug, PartialEq)]
pub struct RegDecl {
    pub vector: Option<VectorWidth>,
    pub ty: ScalarType,
    pub names: Vec<RegDeclarator>,
    pub span: Span,
}

/// One declared name: `%r` with range `<42>` declares `%r0` … `%r41`.
#[derive(serde::Serialize, Clone, Debug, PartialEq)]
pub struct RegDeclarator {
    pub name: Ident,
    pub range: Option<u32>,
}

/// A variable in any state space: module scope or function scope.
#[derive(serde::Serialize, Clone, Debug, PartialEq)]
pub struct VariableDecl {
    pub linkage: Option<Linkage>,
    pub space: StateSpace,
    /// `.attribute(.managed)`: a `__managed__` variable (nvcc writes it for CUDA managed
    /// memory). Added by the parser; `.attribute(.unified(...))` is not supported.
    pub managed: bool,
    pub align: Option<u32>,
    pub vector: Option<VectorWidth>,
    pub ty: VariableType,
    pub name: Ident,
    /// Array dimensions; `None` for an unsized `[]` dimension (e.g. `.extern .shared` arrays).
    pub array: Vec<Option<u64>>,
    pub init: Option<Initializer>,
    pub span: Span,
}

/// The element type of a variable: a scalar or one of the opaque handle types.
#[derive(serde::Serialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VariableType {
    Scalar(ScalarType),
    TexRef,
    SamplerRef,
    SurfRef,
}

#[derive(serde::Serialize, Clone, Debug, PartialEq)]
pub enum Initializer {
    Value(InitValue),
    /// `{ a, b, { c, d } }`
    List(Vec<Initializer>),
}

#[derive(serde::Serialize, Clone, Debug, PartialEq)]
pub enum InitValue {
    Immediate(Immediate),
    /// `sym`, `sym+4`: the address of another variable (or function).
    Symbol {
        name: Ident,
        offset: i64,
    },
    /// `generic(sym)`, `generic(sym)+4`
    Generic {
        name: Ident,
        offset: i64,
    },
}

#[derive(serde::Serialize, Clone, Debug, PartialEq)]
pub struct FileDirective {
    pub index: u32,
    /// The text between the quotes, verbatim (escapes are not processed).
    pub path: String,
    /// Optional `, timestamp, size`.
    pub timestamp_and_size: Option<(u64, u64)>,
    pub span: Span,
}

#[derive(serde::Serialize, Clone, Debug, PartialEq)]
pub struct SectionDirective {
    /// The section's name without its leading dot: `debug_info` for `.section .debug_info`.
    pub name: String,
    /// The text between the braces, verbatim.
    pub body: String,
    pub span: Span,
}

#[derive(serde::Serialize, Clone, Debug, PartialEq)]
pub struct Pragma {
    /// The text between the quotes, verbatim (escapes are not processed).
    pub text: String,
    pub span: Span,
}

#[derive(serde::Serialize, Clone, Debug, PartialEq)]
pub struct LocDirective {
    pub file: u32,
    pub line: u32,
    pub column: u32,
    /// Anything after the three numbers (`, function_name $L, inlined_at 1 2 3`), verbatim.
    pub rest: Option<String>,
    pub span: Span,
}

/// One instruction: `@!%p1 add.rn.ftz.f32 %f1, %f2, %f3;`
#[derive(serde::Serialize, Clone, Debug, PartialEq)]
pub struct Instruction {
    pub guard: Option<Guard>,
    pub opcode: Opcode,
    /// Every `.modifier` after the opcode, in source order.
    pub modifiers: Vec<Modifier>,
    pub operands: Vec<Operand>,
    pub span: Span,
}

/// `@%p` or `@!%p`.
#[derive(serde::Serialize, Clone, Debug, PartialEq)]
pub struct Guard {
    pub negated: bool,
    pub predicate: Ident,
}

#[derive(serde::Serialize, Clone, Debug, PartialEq)]
pub enum Operand {
    /// A register, special register, variable, function or label, optionally with a vector
    /// component: `%r1`, `%tid.x`, `%v.y`, `$L__BB0_3`, `_Z3fooPf_param_0`.
    Name {
        name: Ident,
        component: Option<VectorComponent>,
    },
    /// `!%p` (setp/selp/vote predicate inputs).
    Not(Box<Operand>),
    /// `%p|%q`: setp's two predicate destinations (also `shfl.sync`'s value and predicate).
    /// Either side may be the sink `_`, kept as an `Ident` named `_`.
    PredicatePair(Ident, Ident),
    Immediate(Immediate, Span),
    /// `[%rd1+8]`, `[sym+4]`, `[sym]`, `[100]`
    Address(Address),
    /// `{%f1, %f2, _, %f4}`
    Vector(Vec<Operand>, Span),
    /// `(retval0)`, `(param0, param1)` in `call`.
    List(Vec<Operand>, Span),
    /// `_`: a sink.
    Sink(Span),
    /// `sym+4` used directly (e.g. `mov.u64 %rd1, sym+4`).
    SymbolOffset {
        name: Ident,
        offset: i64,
    },
    /// `[texref, {%f1, %f2}]`, `[texref, sampler, {%f1, %f2}]`: the bracketed handle and
    /// coordinate operand of `tex`, `tld4`, `suld`, `sust` and `sured`. The first element is
    /// always a `Name`. (A lone `[texref]`, as `txq` takes it, is an [`Address`].) Added by
    /// the parser: nvcc emits it for every texture fetch.
    TextureAddress(Vec<Operand>, Span),
}

#[derive(serde::Serialize, Clone, Debug, PartialEq)]
pub struct Address {
    pub base: AddressBase,
    pub offset: i64,
    pub span: Span,
}

#[derive(serde::Serialize, Clone, Debug, PartialEq)]
pub enum AddressBase {
    /// A register or a variable name: which one is resolved later.
    Name(Ident),
    /// `[100]`: an absolute address.
    Absolute,
}

#[derive(serde::Serialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VectorComponent {
    X,
    Y,
    Z,
    W,
}

/// A literal. Floats are kept as their bit patterns so printing is exact.
#[derive(serde::Serialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Immediate {
    /// Integer literal, two's complement in 64 bits (`0xFFFFFFFFFFFFFFFF` and `-1` are equal).
    Int(i64),
    /// `0fXXXXXXXX`
    F32(u32),
    /// `0dXXXXXXXXXXXXXXXX`, or a decimal floating literal (which PTX treats as f64).
    F64(u64),
}

#[derive(serde::Serialize, Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum VectorWidth {
    V2,
    V4,
    V8,
}

impl VectorWidth {
    pub fn lanes(self) -> u32 {
        match self {
            VectorWidth::V2 => 2,
            VectorWidth::V4 => 4,
            VectorWidth::V8 => 8,
        }
    }
}

/// A state space, with the `::` sub-qualifiers that newer PTX uses.
#[derive(serde::Serialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StateSpace {
    Reg,
    Sreg,
    Const,
    Global,
    Local,
    Param,
    /// `.param::entry`
    ParamEntry,
    /// `.param::func`
    ParamFunc,
    Shared,
    /// `.shared::cta`
    SharedCta,
    /// `.shared::cluster`
    SharedCluster,
    Tex,
}

/// The fundamental types of PTX (ISA §5.2) plus the packed and narrow float formats.
#[derive(serde::Serialize, Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ScalarType {
    S8,
    S16,
    S32,
    S64,
    U8,
    U16,
    U32,
    U64,
    B8,
    B16,
    B32,
    B64,
    B128,
    F16,
    F16x2,
    Bf16,
    Bf16x2,
    Tf32,
    E4m3,
    E5m2,
    F32,
    F64,
    S4,
    U4,
    /// `.b1`: single-bit elements, only in `mma`'s A and B types (PTX ISA "mma",
    /// `.s32.b1.b1.s32.{and,xor}.popc`); no register or variable has this type.
    B1,
    Pred,
}

/// Declares an enum of keywords with a bidirectional mapping to their spelling.
macro_rules! keyword_enum {
    ($(#[$meta:meta])* $vis:vis enum $name:ident { $($variant:ident = $text:literal,)* }) => {
        $(#[$meta])*
        #[derive(serde::Serialize, Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        $vis enum $name { $($variant,)* }

        impl $name {
            /// Every keyword, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// The keyword's spelling in PTX source (without the leading dot).
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text,)* }
            }

            /// Looks a spelling up; `None` if it is not a keyword of this kind.
            pub fn from_name(text: &str) -> Option<$name> {
                match text { $($text => Some($name::$variant),)* _ => None }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

keyword_enum! {
    /// Every instruction opcode of the PTX ISA (8.x) that a parser must accept. Multi-part
    /// opcodes (`bar.sync`, `cp.async`, `mbarrier.init`) are an opcode plus modifiers.
    pub enum Opcode {
        Abs = "abs",
        Activemask = "activemask",
        Add = "add",
        Addc = "addc",
        Alloca = "alloca",
        And = "and",
        Applypriority = "applypriority",
        Atom = "atom",
        Bar = "bar",
        Barrier = "barrier",
        Bfe = "bfe",
        Bfi = "bfi",
        Bfind = "bfind",
        Bmsk = "bmsk",
        Bra = "bra",
        Brev = "brev",
        Brkpt = "brkpt",
        Brx = "brx",
        Call = "call",
        Clz = "clz",
        Cnot = "cnot",
        Copysign = "copysign",
        Cos = "cos",
        Cp = "cp",
        Createpolicy = "createpolicy",
        Cvt = "cvt",
        Cvta = "cvta",
        Discard = "discard",
        Div = "div",
        Dp2a = "dp2a",
        Dp4a = "dp4a",
        Elect = "elect",
        Ex2 = "ex2",
        Exit = "exit",
        Fence = "fence",
        Fma = "fma",
        Fns = "fns",
        Getctarank = "getctarank",
        Griddepcontrol = "griddepcontrol",
        Isspacep = "isspacep",
        Istypeof = "istypeof",
        Ld = "ld",
        Ldmatrix = "ldmatrix",
        Ldu = "ldu",
        Lg2 = "lg2",
        Lop3 = "lop3",
        Mad = "mad",
        Mad24 = "mad24",
        Madc = "madc",
        Mapa = "mapa",
        Match = "match",
        Max = "max",
        Mbarrier = "mbarrier",
        Membar = "membar",
        Min = "min",
        Mma = "mma",
        Mov = "mov",
        Movmatrix = "movmatrix",
        Mul = "mul",
        Mul24 = "mul24",
        Multimem = "multimem",
        Nanosleep = "nanosleep",
        Neg = "neg",
        Not = "not",
        Or = "or",
        Pmevent = "pmevent",
        Popc = "popc",
        Prefetch = "prefetch",
        Prefetchu = "prefetchu",
        Prmt = "prmt",
        Rcp = "rcp",
        Red = "red",
        Redux = "redux",
        Rem = "rem",
        Ret = "ret",
        Rsqrt = "rsqrt",
        Sad = "sad",
        Selp = "selp",
        Set = "set",
        Setmaxnreg = "setmaxnreg",
        Setp = "setp",
        Shf = "shf",
        Shfl = "shfl",
        Shl = "shl",
        Shr = "shr",
        Sin = "sin",
        Slct = "slct",
        Sqrt = "sqrt",
        St = "st",
        Stackrestore = "stackrestore",
        Stacksave = "stacksave",
        Stmatrix = "stmatrix",
        Sub = "sub",
        Subc = "subc",
        Suld = "suld",
        Suq = "suq",
        Sured = "sured",
        Sust = "sust",
        Szext = "szext",
        Tanh = "tanh",
        Testp = "testp",
        Tex = "tex",
        Tld4 = "tld4",
        Trap = "trap",
        Txq = "txq",
        Vabsdiff = "vabsdiff",
        Vabsdiff2 = "vabsdiff2",
        Vabsdiff4 = "vabsdiff4",
        Vadd = "vadd",
        Vadd2 = "vadd2",
        Vadd4 = "vadd4",
        Vavrg2 = "vavrg2",
        Vavrg4 = "vavrg4",
        Vmad = "vmad",
        Vmax = "vmax",
        Vmax2 = "vmax2",
        Vmax4 = "vmax4",
        Vmin = "vmin",
        Vmin2 = "vmin2",
        Vmin4 = "vmin4",
        Vote = "vote",
        Vset = "vset",
        Vset2 = "vset2",
        Vset4 = "vset4",
        Vshl = "vshl",
        Vshr = "vshr",
        Vsub = "vsub",
        Vsub2 = "vsub2",
        Vsub4 = "vsub4",
        Wgmma = "wgmma",
        Wmma = "wmma",
        Xor = "xor",
    }
}

keyword_enum! {
    /// Every instruction modifier word other than types, vector widths and state spaces.
    /// One spelling, one variant: `.lo` is [`Modifier::Lo`](Flag::Lo) whether it later means
    /// "unsigned lower" on `setp` or "low half" on `mul`.
    pub enum Flag {
        // rounding
        Rn = "rn", Rz = "rz", Rm = "rm", Rp = "rp", Rna = "rna", Rs = "rs",
        Rni = "rni", Rzi = "rzi", Rmi = "rmi", Rpi = "rpi",
        // float behaviour
        Ftz = "ftz", Sat = "sat", Satfinite = "satfinite", Approx = "approx", Full = "full",
        Relu = "relu", Nan = "NaN", Xorsign = "xorsign", Oob = "oob",
        // comparisons (setp, set, slct, vset) and test kinds (testp)
        Eq = "eq", Ne = "ne", Lt = "lt", Le = "le", Gt = "gt", Ge = "ge",
        Lo = "lo", Ls = "ls", Hi = "hi", Hs = "hs",
        Equ = "equ", Neu = "neu", Ltu = "ltu", Leu = "leu", Gtu = "gtu", Geu = "geu",
        Num = "num", NanCmp = "nan",
        Finite = "finite", Infinite = "infinite", Number = "number", Notanumber = "notanumber",
        Normal = "normal", Subnormal = "subnormal",
        // boolean / atomic / reduction operations
        And = "and", Or = "or", Xor = "xor", Add = "add", Min = "min", Max = "max",
        Inc = "inc", Dec = "dec", Cas = "cas", Exch = "exch", Popc = "popc",
        // integer arithmetic
        Wide = "wide", Cc = "cc", Shiftamt = "shiftamt",
        // control flow and warp-synchronous
        Uni = "uni", Sync = "sync", Aligned = "aligned", Arrive = "arrive", Red = "red",
        All = "all", Any = "any", Ballot = "ballot",
        Up = "up", Down = "down", Bfly = "bfly", Idx = "idx",
        // memory consistency and scopes
        Volatile = "volatile", Relaxed = "relaxed", Acquire = "acquire", Release = "release",
        AcqRel = "acq_rel", Sc = "sc", Weak = "weak", Mmio = "mmio",
        Cta = "cta", Gpu = "gpu", Sys = "sys", Cluster = "cluster",
        // caching
        Nc = "nc", Ca = "ca", Cg = "cg", Cs = "cs", Lu = "lu", Cv = "cv", Wb = "wb", Wt = "wt",
        // conversions and addressing
        To = "to",
        // funnel shift, prmt modes, bfind
        L = "l", R = "r", Clamp = "clamp", Wrap = "wrap",
        F4e = "f4e", B4e = "b4e", Rc8 = "rc8", Ecl = "ecl", Ecr = "ecr", Rc16 = "rc16",
        // texture geometries and channels
        Dim1d = "1d", Dim2d = "2d", Dim3d = "3d", A1d = "a1d", A2d = "a2d", Cube = "cube",
        Acube = "acube", TwoDms = "2dms", A2dms = "a2dms",
        Level = "level", Grad = "grad", Base = "base",
        // dp2a/dp4a halves, slct, isspacep
        Trap = "trap", Zero = "zero",
    }
}

/// One `.modifier` after an opcode.
#[derive(serde::Serialize, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Modifier {
    Type(ScalarType),
    Vector(VectorWidth),
    Space(StateSpace),
    Flag(Flag),
    /// A modifier this parser has no variant for (`.m16n8k16`, `.row`, `.L2::cache_hint`,
    /// `.b0`, …), kept verbatim without its leading dot. Decoding decides whether the opcode
    /// accepts it.
    Other(String),
}

impl ScalarType {
    pub fn as_str(self) -> &'static str {
        use ScalarType::*;
        match self {
            S8 => "s8",
            S16 => "s16",
            S32 => "s32",
            S64 => "s64",
            U8 => "u8",
            U16 => "u16",
            U32 => "u32",
            U64 => "u64",
            B8 => "b8",
            B16 => "b16",
            B32 => "b32",
            B64 => "b64",
            B128 => "b128",
            F16 => "f16",
            F16x2 => "f16x2",
            Bf16 => "bf16",
            Bf16x2 => "bf16x2",
            Tf32 => "tf32",
            E4m3 => "e4m3",
            E5m2 => "e5m2",
            F32 => "f32",
            F64 => "f64",
            S4 => "s4",
            U4 => "u4",
            B1 => "b1",
            Pred => "pred",
        }
    }

    pub fn from_name(text: &str) -> Option<ScalarType> {
        use ScalarType::*;
        Some(match text {
            "s8" => S8,
            "s16" => S16,
            "s32" => S32,
            "s64" => S64,
            "u8" => U8,
            "u16" => U16,
            "u32" => U32,
            "u64" => U64,
            "b8" => B8,
            "b16" => B16,
            "b32" => B32,
            "b64" => B64,
            "b128" => B128,
            "f16" => F16,
            "f16x2" => F16x2,
            "bf16" => Bf16,
            "bf16x2" => Bf16x2,
            "tf32" => Tf32,
            "e4m3" => E4m3,
            "e5m2" => E5m2,
            "f32" => F32,
            "f64" => F64,
            "s4" => S4,
            "u4" => U4,
            "b1" => B1,
            "pred" => Pred,
            _ => return None,
        })
    }

    /// Width in bits (a predicate counts as 1).
    pub fn bits(self) -> u32 {
        use ScalarType::*;
        match self {
            Pred | B1 => 1,
            S4 | U4 => 4,
            S8 | U8 | B8 | E4m3 | E5m2 => 8,
            S16 | U16 | B16 | F16 | Bf16 => 16,
            S32 | U32 | B32 | F32 | F16x2 | Bf16x2 | Tf32 => 32,
            S64 | U64 | B64 | F64 => 64,
            B128 => 128,
        }
    }

    pub fn is_signed_int(self) -> bool {
        matches!(
            self,
            ScalarType::S4 | ScalarType::S8 | ScalarType::S16 | ScalarType::S32 | ScalarType::S64
        )
    }

    pub fn is_float(self) -> bool {
        use ScalarType::*;
        matches!(
            self,
            F16 | F16x2 | Bf16 | Bf16x2 | Tf32 | E4m3 | E5m2 | F32 | F64
        )
    }
}

impl fmt::Display for ScalarType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl StateSpace {
    pub fn as_str(self) -> &'static str {
        use StateSpace::*;
        match self {
            Reg => "reg",
            Sreg => "sreg",
            Const => "const",
            Global => "global",
            Local => "local",
            Param => "param",
            ParamEntry => "param::entry",
            ParamFunc => "param::func",
            Shared => "shared",
            SharedCta => "shared::cta",
            SharedCluster => "shared::cluster",
            Tex => "tex",
        }
    }

    pub fn from_name(text: &str) -> Option<StateSpace> {
        use StateSpace::*;
        Some(match text {
            "reg" => Reg,
            "sreg" => Sreg,
            "const" => Const,
            "global" => Global,
            "local" => Local,
            "param" => Param,
            "param::entry" => ParamEntry,
            "param::func" => ParamFunc,
            "shared" => Shared,
            "shared::cta" => SharedCta,
            "shared::cluster" => SharedCluster,
            "tex" => Tex,
            _ => return None,
        })
    }
}

impl fmt::Display for StateSpace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Modifier {
    /// Classifies a modifier's spelling (without the dot). Never fails: unknown words
    /// become [`Modifier::Other`].
    pub fn from_name(text: &str) -> Modifier {
        if let Some(t) = ScalarType::from_name(text) {
            return Modifier::Type(t);
        }
        match text {
            "v2" => return Modifier::Vector(VectorWidth::V2),
            "v4" => return Modifier::Vector(VectorWidth::V4),
            "v8" => return Modifier::Vector(VectorWidth::V8),
            _ => {}
        }
        if let Some(s) = StateSpace::from_name(text) {
            return Modifier::Space(s);
        }
        if let Some(f) = Flag::from_name(text) {
            return Modifier::Flag(f);
        }
        Modifier::Other(text.to_string())
    }
}

impl fmt::Display for Modifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Modifier::Type(t) => write!(f, ".{t}"),
            Modifier::Vector(v) => write!(f, ".v{}", v.lanes()),
            Modifier::Space(s) => write!(f, ".{s}"),
            Modifier::Flag(k) => write!(f, ".{k}"),
            Modifier::Other(s) => write!(f, ".{s}"),
        }
    }
}

impl Instruction {
    /// The first type modifier (`add.s32` → `S32`; `cvt.f32.s32` → `F32`).
    pub fn first_type(&self) -> Option<ScalarType> {
        self.types().next()
    }

    /// All type modifiers in source order (`cvt.f32.s32` → `F32, S32`).
    pub fn types(&self) -> impl Iterator<Item = ScalarType> + '_ {
        self.modifiers.iter().filter_map(|m| match m {
            Modifier::Type(t) => Some(*t),
            _ => None,
        })
    }

    pub fn has_flag(&self, flag: Flag) -> bool {
        self.modifiers.contains(&Modifier::Flag(flag))
    }

    pub fn space(&self) -> Option<StateSpace> {
        self.modifiers.iter().find_map(|m| match m {
            Modifier::Space(s) => Some(*s),
            _ => None,
        })
    }

    pub fn vector(&self) -> Option<VectorWidth> {
        self.modifiers.iter().find_map(|m| match m {
            Modifier::Vector(v) => Some(*v),
            _ => None,
        })
    }
}

impl Module {
    /// Sets every [`Span`] in the tree to `Span::default()`, so that trees parsed from
    /// differently formatted text compare equal when they say the same thing.
    pub fn erase_spans(&mut self) {
        self.span = Span::default();
        for ident in &mut self.target {
            ident.span = Span::default();
        }
        for item in &mut self.items {
            item.erase_spans();
        }
    }
}

impl ModuleItem {
    fn erase_spans(&mut self) {
        match self {
            ModuleItem::Function(f) => f.erase_spans(),
            ModuleItem::Variable(v) => v.erase_spans(),
            ModuleItem::File(f) => f.span = Span::default(),
            ModuleItem::Section(s) => s.span = Span::default(),
            ModuleItem::Pragma(p) => p.span = Span::default(),
        }
    }
}

impl Function {
    fn erase_spans(&mut self) {
        self.span = Span::default();
        self.name.span = Span::default();
        for p in self.return_params.iter_mut().chain(&mut self.params) {
            p.erase_spans();
        }
        for d in &mut self.directives {
            if let PerformanceDirective::Pragma(p) = d {
                p.span = Span::default();
            }
        }
        if let Some(body) = &mut self.body {
            body.erase_spans();
        }
    }
}

impl Param {
    fn erase_spans(&mut self) {
        self.span = Span::default();
        self.name.span = Span::default();
    }
}

impl VariableDecl {
    fn erase_spans(&mut self) {
        self.span = Span::default();
        self.name.span = Span::default();
        if let Some(init) = &mut self.init {
            init.erase_spans();
        }
    }
}

impl Initializer {
    fn erase_spans(&mut self) {
        match self {
            Initializer::Value(InitValue::Immediate(_)) => {}
            Initializer::Value(InitValue::Symbol { name, .. })
            | Initializer::Value(InitValue::Generic { name, .. }) => name.span = Span::default(),
            Initializer::List(items) => items.iter_mut().for_each(Initializer::erase_spans),
        }
    }
}

impl Block {
    fn erase_spans(&mut self) {
        self.span = Span::default();
        for s in &mut self.statements {
            s.erase_spans();
        }
    }
}

impl Statement {
    fn erase_spans(&mut self) {
        match self {
            Statement::Label(l) => l.span = Span::default(),
            Statement::Instruction(i) => i.erase_spans(),
            Statement::RegDecl(r) => {
                r.span = Span::default();
                for d in &mut r.names {
                    d.name.span = Span::default();
                }
            }
            Statement::Variable(v) => v.erase_spans(),
            Statement::Block(b) => b.erase_spans(),
            Statement::Pragma(p) => p.span = Span::default(),
            Statement::Loc(l) => l.span = Span::default(),
            Statement::CallPrototype(c) => {
                c.span = Span::default();
                c.label.span = Span::default();
                for p in c.return_params.iter_mut().chain(&mut c.params) {
                    p.erase_spans();
                }
            }
            Statement::TargetList(t) => {
                t.span = Span::default();
                t.label.span = Span::default();
                for target in &mut t.targets {
                    target.span = Span::default();
                }
            }
        }
    }
}

impl Instruction {
    fn erase_spans(&mut self) {
        self.span = Span::default();
        if let Some(g) = &mut self.guard {
            g.predicate.span = Span::default();
        }
        for op in &mut self.operands {
            op.erase_spans();
        }
    }
}

impl Operand {
    fn erase_spans(&mut self) {
        match self {
            Operand::Name { name, .. } | Operand::SymbolOffset { name, .. } => {
                name.span = Span::default()
            }
            Operand::Not(inner) => inner.erase_spans(),
            Operand::PredicatePair(a, b) => {
                a.span = Span::default();
                b.span = Span::default();
            }
            Operand::Immediate(_, span) | Operand::Sink(span) => *span = Span::default(),
            Operand::Address(a) => {
                a.span = Span::default();
                if let AddressBase::Name(n) = &mut a.base {
                    n.span = Span::default();
                }
            }
            Operand::Vector(items, span)
            | Operand::List(items, span)
            | Operand::TextureAddress(items, span) => {
                *span = Span::default();
                items.iter_mut().for_each(Operand::erase_spans);
            }
        }
    }
}

impl Operand {
    /// The operand's source range, for diagnostics. For `Name` and `SymbolOffset` it is the
    /// identifier's (without `.x` or `+4`), and for `Not` the negated operand's (without `!`).
    pub fn span(&self) -> Span {
        match self {
            Operand::Name { name, .. } => name.span,
            Operand::SymbolOffset { name, .. } => name.span,
            Operand::Not(inner) => inner.span(),
            Operand::PredicatePair(a, b) => a.span.to(b.span),
            Operand::Immediate(_, span)
            | Operand::Sink(span)
            | Operand::Vector(_, span)
            | Operand::List(_, span)
            | Operand::TextureAddress(_, span) => *span,
            Operand::Address(a) => a.span,
        }
    }
}

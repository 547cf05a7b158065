//! Instruction decoding: opcode + modifiers (in any order) + operands of the syntax tree
//! into a typed [`Op`] and resolved [`Operand`]s (PTX ISA 8.x chapter 9).
//!
//! Every modifier is either consumed by the opcode's decoder or reported as
//! `unsupported modifier '.x' on 'op'`; nothing is silently ignored. Operands are checked
//! against the instruction type with PTX's type rules (ISA §6.4, "Operand Type
//! Information", and the relaxed rules for bit-size types), which were cross-checked
//! against `ptxas`: a `.bN` register or instruction type fits any type of the same size,
//! signed and unsigned integers of the same size fit each other, floats fit only their own
//! type, and `ld`/`st`/`cvt` also accept integer or bit registers wider than the type.

use ptx::ast::{self, Flag, Immediate, Modifier, Opcode, ScalarType, StateSpace, VectorComponent};

use crate::entity::BlockId;
use crate::function::{AddrBase, Address, Dim, Operand, SpecialReg, Symbol};
use crate::lower::{space_of, DecodeError, FnLower, Resolved};
use crate::op::*;

type Result<T> = std::result::Result<T, DecodeError>;

use ScalarType::*;

/// The modifiers of one instruction, with a record of which ones the decoder consumed.
struct Mods<'i> {
    list: &'i [Modifier],
    used: u64,
    opcode: &'static str,
}

impl<'i> Mods<'i> {
    fn new(inst: &'i ast::Instruction) -> Result<Mods<'i>> {
        if inst.modifiers.len() > 64 {
            return Err(DecodeError::new("too many modifiers"));
        }
        Ok(Mods {
            list: &inst.modifiers,
            used: 0,
            opcode: inst.opcode.as_str(),
        })
    }

    fn take(&mut self, pred: impl Fn(&Modifier) -> bool) -> Option<&'i Modifier> {
        let list = self.list;
        for (i, m) in list.iter().enumerate() {
            if self.used & (1 << i) == 0 && pred(m) {
                self.used |= 1 << i;
                return Some(m);
            }
        }
        None
    }

    fn flag(&mut self, f: Flag) -> bool {
        self.take(|m| *m == Modifier::Flag(f)).is_some()
    }

    fn other(&mut self, s: &str) -> bool {
        self.take(|m| matches!(m, Modifier::Other(o) if o == s))
            .is_some()
    }

    /// The first unused modifier among `table`'s flags.
    fn pick<T: Copy>(&mut self, table: &[(Flag, T)]) -> Option<T> {
        let m =
            self.take(|m| matches!(m, Modifier::Flag(f) if table.iter().any(|(t, _)| t == f)))?;
        table
            .iter()
            .find(|(t, _)| Modifier::Flag(*t) == *m)
            .map(|(_, v)| *v)
    }

    fn pick_other<T: Copy>(&mut self, table: &[(&str, T)]) -> Option<T> {
        let m =
            self.take(|m| matches!(m, Modifier::Other(o) if table.iter().any(|(t, _)| t == o)))?;
        table
            .iter()
            .find(|(t, _)| matches!(m, Modifier::Other(o) if o == t))
            .map(|(_, v)| *v)
    }

    fn ty(&mut self) -> Option<ScalarType> {
        match self.take(|m| matches!(m, Modifier::Type(_))) {
            Some(Modifier::Type(t)) => Some(*t),
            _ => None,
        }
    }

    fn need_ty(&mut self) -> Result<ScalarType> {
        self.ty()
            .ok_or_else(|| DecodeError::new(format!("missing type on '{}'", self.opcode)))
    }

    fn space(&mut self) -> Option<StateSpace> {
        match self.take(|m| matches!(m, Modifier::Space(_))) {
            Some(Modifier::Space(s)) => Some(*s),
            _ => None,
        }
    }

    fn vector(&mut self) -> Option<u8> {
        match self.take(|m| matches!(m, Modifier::Vector(_))) {
            Some(Modifier::Vector(v)) => Some(v.lanes() as u8),
            _ => None,
        }
    }

    fn rounding(&mut self) -> Option<Rounding> {
        self.pick(&[
            (Flag::Rn, Rounding::Rn),
            (Flag::Rna, Rounding::Rna),
            (Flag::Rz, Rounding::Rz),
            (Flag::Rm, Rounding::Rm),
            (Flag::Rp, Rounding::Rp),
            (Flag::Rni, Rounding::Rni),
            (Flag::Rzi, Rounding::Rzi),
            (Flag::Rmi, Rounding::Rmi),
            (Flag::Rpi, Rounding::Rpi),
            (Flag::Rs, Rounding::Rs),
        ])
    }

    fn scope(&mut self) -> Option<Scope> {
        self.pick(&[
            (Flag::Cta, Scope::Cta),
            (Flag::Cluster, Scope::Cluster),
            (Flag::Gpu, Scope::Gpu),
            (Flag::Sys, Scope::Sys),
        ])
    }

    /// Errors on the first modifier the decoder did not consume.
    fn finish(&self) -> Result<()> {
        for (i, m) in self.list.iter().enumerate() {
            if self.used & (1 << i) == 0 {
                let repeated = self.list[..i].contains(m);
                let what = if repeated { "repeated" } else { "unsupported" };
                return Err(DecodeError::new(format!(
                    "{what} modifier '{m}' on '{}'",
                    self.opcode
                )));
            }
        }
        Ok(())
    }
}

/// `.L1::evict_*`, `.L2::evict_*`, `.L2::cache_hint` and `.L2::{64,128,256}B`.
fn mem_hints(m: &mut Mods<'_>) -> MemHints {
    use Eviction as E;
    MemHints {
        l1: m.pick_other(&[
            ("L1::evict_normal", E::Normal),
            ("L1::evict_unchanged", E::Unchanged),
            ("L1::evict_first", E::First),
            ("L1::evict_last", E::Last),
            ("L1::no_allocate", E::NoAllocate),
        ]),
        l2: m.pick_other(&[
            ("L2::evict_normal", E::Normal),
            ("L2::evict_first", E::First),
            ("L2::evict_last", E::Last),
        ]),
        l2_prefetch: m.pick_other(&[
            ("L2::64B", PrefetchSize::B64),
            ("L2::128B", PrefetchSize::B128),
            ("L2::256B", PrefetchSize::B256),
        ]),
        cache_hint: m.other("L2::cache_hint"),
    }
}

/// How strictly a register must match the instruction type.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fit {
    /// Same size; bit types fit anything of their size, integers fit integers.
    Exact,
    /// `ld`, `st`, `cvt`: integer or bit registers may also be wider than the type.
    Wider,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Pred,
    Bits,
    Int,
    Float,
}

/// `mMnNkK`: a matrix shape modifier.
/// `.and.popc` or `.xor.popc`, which a single-bit `mma` must name (PTX ISA "mma":
/// `.bitOp.popc`, `.bitOp = {.xor, .and}`).
/// Every `wmma` shape (PTX ISA "wmma.load", "wmma.mma").
const WMMA_SHAPES: &[MmaShape] = &[
    MmaShape::M16n16k16,
    MmaShape::M32n8k16,
    MmaShape::M8n32k16,
    MmaShape::M16n16k8,
    MmaShape::M8n8k4,
    MmaShape::M8n8k32,
    MmaShape::M8n8k128,
];

fn mma_bit_op(m: &mut Mods<'_>) -> Result<MmaBitOp> {
    let op = m.pick(&[(Flag::And, MmaBitOp::And), (Flag::Xor, MmaBitOp::Xor)]);
    match (op, m.flag(Flag::Popc)) {
        (Some(op), true) => Ok(op),
        _ => Err(DecodeError::new(
            "'mma' with .b1 inputs needs .and.popc or .xor.popc after its types",
        )),
    }
}

fn is_shape(o: &str) -> bool {
    let rest = match o.strip_prefix('m') {
        Some(r) => r,
        None => return false,
    };
    let parts: Vec<&str> = rest.split(['n', 'k']).collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

fn kind(t: ScalarType) -> Kind {
    match t {
        Pred => Kind::Pred,
        B8 | B16 | B32 | B64 | B128 => Kind::Bits,
        _ if t.is_float() => Kind::Float,
        _ => Kind::Int,
    }
}

/// Whether a register declared `reg` may be an operand of type `ty`.
pub(crate) fn reg_fits(reg: ScalarType, ty: ScalarType, wider_ok: bool) -> bool {
    let (rk, tk) = (kind(reg), kind(ty));
    if rk == Kind::Pred || tk == Kind::Pred {
        return rk == tk;
    }
    if reg.bits() == ty.bits() {
        return rk == Kind::Bits
            || tk == Kind::Bits
            || (rk == Kind::Int && tk == Kind::Int)
            || reg == ty;
    }
    wider_ok
        && reg.bits() > ty.bits()
        && (rk == Kind::Bits || (rk == Kind::Int && tk != Kind::Float))
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// The bit pattern of an immediate in an operand of type `ty` (ptxas's rules): integers
/// fit integer and bit types (truncated to the width) and predicates (non-zero is true);
/// float literals fit float types (converted between f32 and f64 as needed) and bit types
/// of their own width (`0f` in `.b32`, `0d` in `.b64`, as raw bits).
pub(crate) fn immediate_bits(imm: Immediate, ty: ScalarType) -> std::result::Result<u64, String> {
    let bad = || format!("immediate {} does not fit a .{ty} operand", show_imm(imm));
    match (imm, kind(ty)) {
        (Immediate::Int(v), Kind::Pred) => Ok((v != 0) as u64),
        (Immediate::Int(v), Kind::Int | Kind::Bits) => Ok(v as u64 & mask(ty.bits())),
        (Immediate::F32(b), _) => match ty {
            F32 | B32 => Ok(b as u64),
            F64 => Ok((f32::from_bits(b) as f64).to_bits()),
            _ => Err(bad()),
        },
        (Immediate::F64(b), _) => match ty {
            F64 | B64 => Ok(b),
            F32 => Ok((f64::from_bits(b) as f32).to_bits() as u64),
            _ => Err(bad()),
        },
        _ => Err(bad()),
    }
}

fn show_imm(imm: Immediate) -> String {
    match imm {
        Immediate::Int(v) => v.to_string(),
        Immediate::F32(b) => format!("0f{b:08X}"),
        Immediate::F64(b) => format!("0d{b:016X}"),
    }
}

fn is_float(t: ScalarType) -> bool {
    matches!(t, F32 | F64 | F16 | F16x2 | Bf16 | Bf16x2)
}
fn is_half(t: ScalarType) -> bool {
    matches!(t, F16 | F16x2 | Bf16 | Bf16x2)
}
const INTS: &[ScalarType] = &[S16, U16, S32, U32, S64, U64];
const INT32_64: &[ScalarType] = &[S32, U32, S64, U64];
const BITS: &[ScalarType] = &[B16, B32, B64];
const BITS_PRED: &[ScalarType] = &[B16, B32, B64, Pred];
const FLOATS: &[ScalarType] = &[F32, F64];
const ALL_16_64: &[ScalarType] = &[B16, B32, B64, S16, U16, S32, U32, S64, U64, F16, F32, F64];

/// `atom`'s and `red`'s operations; the first [`REDUCTION_OPS`] are also `red.async`'s
/// (it has no `.exch` or `.cas`).
const ATOM_OPS: &[(Flag, AtomOp)] = &[
    (Flag::Add, AtomOp::Add),
    (Flag::Min, AtomOp::Min),
    (Flag::Max, AtomOp::Max),
    (Flag::Inc, AtomOp::Inc),
    (Flag::Dec, AtomOp::Dec),
    (Flag::And, AtomOp::And),
    (Flag::Or, AtomOp::Or),
    (Flag::Xor, AtomOp::Xor),
    (Flag::Exch, AtomOp::Exch),
    (Flag::Cas, AtomOp::Cas),
];
const REDUCTION_OPS: usize = 8;

pub(crate) fn widen(t: ScalarType) -> Option<ScalarType> {
    Some(match t {
        S16 => S32,
        U16 => U32,
        S32 => S64,
        U32 => U64,
        _ => return None,
    })
}

fn component_index(c: VectorComponent) -> u32 {
    match c {
        VectorComponent::X => 0,
        VectorComponent::Y => 1,
        VectorComponent::Z => 2,
        VectorComponent::W => 3,
    }
}

fn dim_of(c: VectorComponent) -> Option<Dim> {
    match c {
        VectorComponent::X => Some(Dim::X),
        VectorComponent::Y => Some(Dim::Y),
        VectorComponent::Z => Some(Dim::Z),
        VectorComponent::W => None,
    }
}

/// Splits a name such as `%tid.x` written as one identifier into base and component.
fn split_component(name: &str) -> (&str, Option<VectorComponent>) {
    if let Some((base, c)) = name.rsplit_once('.') {
        let comp = match c {
            "x" => Some(VectorComponent::X),
            "y" => Some(VectorComponent::Y),
            "z" => Some(VectorComponent::Z),
            "w" => Some(VectorComponent::W),
            _ => None,
        };
        if comp.is_some() {
            return (base, comp);
        }
    }
    (name, None)
}

impl FnLower<'_, '_> {
    fn need_count(&self, inst: &ast::Instruction, n: usize) -> Result<()> {
        if inst.operands.len() != n {
            return Err(DecodeError::new(format!(
                "'{}' expects {n} operands, found {}",
                inst.opcode,
                inst.operands.len()
            )));
        }
        Ok(())
    }

    fn check_fit(
        &self,
        reg: crate::RegId,
        ty: ScalarType,
        fit: Fit,
        span: ast::Span,
    ) -> Result<()> {
        let info = self.f.reg(reg);
        if reg_fits(info.ty, ty, fit == Fit::Wider) {
            Ok(())
        } else {
            Err(DecodeError::at(
                span,
                format!(
                    "register '{}' of type .{} does not fit a .{ty} operand",
                    info.name, info.ty
                ),
            ))
        }
    }

    /// A name that must be one (scalar or vector-lane) register.
    fn name_reg(
        &self,
        name: &ast::Ident,
        component: Option<VectorComponent>,
    ) -> Result<crate::RegId> {
        match (self.resolve(&name.name), component) {
            (Some(Resolved::Reg(r)), None) => Ok(r),
            (Some(Resolved::VecReg(first, lanes)), Some(c))
                if component_index(c) < lanes as u32 =>
            {
                Ok(crate::RegId(first.0 + component_index(c)))
            }
            (Some(Resolved::VecReg(..)), _) => Err(DecodeError::at(
                name.span,
                format!(
                    "vector register '{}' needs a valid component here",
                    name.name
                ),
            )),
            (Some(Resolved::Reg(_)), Some(_)) => Err(DecodeError::at(
                name.span,
                format!("'{}' is not a vector register", name.name),
            )),
            (Some(_), _) => Err(DecodeError::at(
                name.span,
                format!("'{}' is not a register", name.name),
            )),
            (None, component) => {
                let (base, c) = match component {
                    Some(c) => (name.name.as_str(), Some(c)),
                    None => split_component(&name.name),
                };
                if let Some(s) = SpecialReg::from_name(base, c.and_then(dim_of)) {
                    Err(DecodeError::at(
                        name.span,
                        format!("special register '{s}' is only allowed in 'mov' and 'cvt'"),
                    ))
                } else {
                    Err(DecodeError::at(
                        name.span,
                        format!("undefined register '{}'", name.name),
                    ))
                }
            }
        }
    }

    fn special(&self, name: &ast::Ident, component: Option<VectorComponent>) -> Option<SpecialReg> {
        if self.resolve(&name.name).is_some() {
            return None;
        }
        let (base, c) = match component {
            Some(c) => (name.name.as_str(), Some(c)),
            None => split_component(&name.name),
        };
        let dim = match c {
            Some(c) => Some(dim_of(c)?),
            None => None,
        };
        SpecialReg::from_name(base, dim)
    }

    /// A destination register of type `ty`.
    fn dst(&self, op: &ast::Operand, ty: ScalarType, fit: Fit) -> Result<Operand> {
        match op {
            // LLVM's NVPTX back end writes scalar loads and stores as `{ %r1 }`.
            ast::Operand::Vector(items, _) if items.len() == 1 => self.dst(&items[0], ty, fit),
            ast::Operand::Name { name, component } => {
                let r = self.name_reg(name, *component)?;
                self.check_fit(r, ty, fit, name.span)?;
                Ok(Operand::Reg(r))
            }
            _ => Err(DecodeError::at(
                op.span(),
                "expected a destination register",
            )),
        }
    }

    /// A destination register or `_`.
    fn dst_or_sink(&self, op: &ast::Operand, ty: ScalarType, fit: Fit) -> Result<Operand> {
        match op {
            ast::Operand::Sink(_) => Ok(Operand::Sink),
            _ => self.dst(op, ty, fit),
        }
    }

    /// A source register, immediate or (for predicates) negated predicate of type `ty`.
    fn src(&self, op: &ast::Operand, ty: ScalarType, fit: Fit) -> Result<Operand> {
        match op {
            ast::Operand::Vector(items, _) if items.len() == 1 => self.src(&items[0], ty, fit),
            ast::Operand::Name { name, component } => {
                let r = self.name_reg(name, *component)?;
                self.check_fit(r, ty, fit, name.span)?;
                Ok(Operand::Reg(r))
            }
            ast::Operand::Immediate(imm, span) => immediate_bits(*imm, ty)
                .map(Operand::Imm)
                .map_err(|m| DecodeError::at(*span, m)),
            ast::Operand::Not(inner) if ty == Pred => match self.src(inner, Pred, fit)? {
                Operand::Reg(r) => Ok(Operand::NotReg(r)),
                _ => Err(DecodeError::at(op.span(), "'!' needs a predicate register")),
            },
            _ => Err(DecodeError::at(
                op.span(),
                "expected a register or an immediate",
            )),
        }
    }

    /// A source that may also be a special register or a symbol's address (`mov`, `cvt`, `cvta`).
    fn src_value(
        &self,
        op: &ast::Operand,
        ty: ScalarType,
        fit: Fit,
        symbols: bool,
    ) -> Result<Operand> {
        match op {
            ast::Operand::Name { name, component } => {
                if let Some(s) = self.special(name, *component) {
                    let ok = match s.bits() {
                        1 => kind(ty) == Kind::Pred,
                        64 => ty.bits() == 64 || fit == Fit::Wider,
                        _ => matches!(ty.bits(), 16 | 32) || (fit == Fit::Wider && ty.bits() == 64),
                    };
                    if !ok || kind(ty) == Kind::Float || kind(ty) == Kind::Pred && s.bits() != 1 {
                        return Err(DecodeError::at(
                            name.span,
                            format!("special register '{s}' does not fit a .{ty} operand"),
                        ));
                    }
                    return Ok(Operand::Special(s));
                }
                if symbols && component.is_none() {
                    if let Some(Resolved::Symbol(symbol)) = self.resolve(&name.name) {
                        self.check_address_type(ty, name.span)?;
                        return Ok(Operand::SymbolAddr { symbol, offset: 0 });
                    }
                }
                self.src(op, ty, fit)
            }
            ast::Operand::SymbolOffset { name, offset } if symbols => {
                match self.resolve(&name.name) {
                    Some(Resolved::Symbol(symbol)) => {
                        self.check_address_type(ty, name.span)?;
                        Ok(Operand::SymbolAddr {
                            symbol,
                            offset: *offset,
                        })
                    }
                    _ => Err(DecodeError::at(
                        name.span,
                        format!("undefined symbol '{}'", name.name),
                    )),
                }
            }
            _ => self.src(op, ty, fit),
        }
    }

    fn check_address_type(&self, ty: ScalarType, span: ast::Span) -> Result<()> {
        if matches!(kind(ty), Kind::Int | Kind::Bits) && matches!(ty.bits(), 32 | 64) {
            Ok(())
        } else {
            Err(DecodeError::at(
                span,
                format!("an address does not fit a .{ty} operand"),
            ))
        }
    }

    /// `[reg+off]`, `[sym+off]`, `[imm]`.
    fn address(&self, op: &ast::Operand) -> Result<Operand> {
        let ast::Operand::Address(a) = op else {
            return Err(DecodeError::at(
                op.span(),
                "expected an address operand '[...]'",
            ));
        };
        let base = match &a.base {
            ast::AddressBase::Absolute => AddrBase::Absolute,
            ast::AddressBase::Name(n) => match self.resolve(&n.name) {
                Some(Resolved::Reg(r)) => {
                    let info = self.f.reg(r);
                    if !matches!(kind(info.ty), Kind::Int | Kind::Bits)
                        || !matches!(info.ty.bits(), 32 | 64)
                    {
                        return Err(DecodeError::at(
                            n.span,
                            format!(
                                "address register '{}' must be 32 or 64 bits wide, not .{}",
                                info.name, info.ty
                            ),
                        ));
                    }
                    AddrBase::Reg(r)
                }
                Some(Resolved::Symbol(s)) => AddrBase::Symbol(s),
                Some(Resolved::VecReg(..)) | Some(Resolved::Prototype) => {
                    return Err(DecodeError::at(
                        n.span,
                        format!("'{}' cannot be an address", n.name),
                    ))
                }
                None => {
                    return Err(DecodeError::at(
                        n.span,
                        format!("undefined symbol or register '{}'", n.name),
                    ))
                }
            },
        };
        Ok(Operand::Address(Address {
            base,
            offset: a.offset,
        }))
    }

    /// The registers of a vector operand `{a, b, ...}` (or a vector register), `lanes` long.
    fn vector(
        &self,
        op: &ast::Operand,
        lanes: u8,
        ty: ScalarType,
        fit: Fit,
        is_dst: bool,
    ) -> Result<Vec<Operand>> {
        let items: Vec<Operand> = match op {
            ast::Operand::Vector(items, _) => items
                .iter()
                .map(|item| {
                    if is_dst {
                        self.dst_or_sink(item, ty, fit)
                    } else {
                        self.src(item, ty, fit)
                    }
                })
                .collect::<Result<_>>()?,
            ast::Operand::Name {
                name,
                component: None,
            } => match self.resolve(&name.name) {
                Some(Resolved::VecReg(first, n)) => {
                    let regs: Vec<Operand> = (0..n as u32)
                        .map(|i| Operand::Reg(crate::RegId(first.0 + i)))
                        .collect();
                    for r in &regs {
                        if let Operand::Reg(r) = r {
                            self.check_fit(*r, ty, fit, name.span)?;
                        }
                    }
                    regs
                }
                _ => {
                    return Err(DecodeError::at(
                        op.span(),
                        format!("expected a vector of {lanes} registers"),
                    ))
                }
            },
            _ => {
                return Err(DecodeError::at(
                    op.span(),
                    format!("expected a vector of {lanes} registers"),
                ))
            }
        };
        if items.len() != lanes as usize {
            return Err(DecodeError::at(
                op.span(),
                format!(
                    "expected a vector of {lanes} elements, found {}",
                    items.len()
                ),
            ));
        }
        Ok(items)
    }

    /// The common shape: all destinations then all sources, registers or immediates.
    fn regular(
        &mut self,
        inst: &ast::Instruction,
        dsts: &[ScalarType],
        srcs: &[ScalarType],
    ) -> Result<()> {
        self.need_count(inst, dsts.len() + srcs.len())?;
        let (d, s) = inst.operands.split_at(dsts.len());
        for (op, ty) in d.iter().zip(dsts) {
            let o = self.dst(op, *ty, Fit::Exact)?;
            self.dsts.push(o);
        }
        for (op, ty) in s.iter().zip(srcs) {
            let o = self.src(op, *ty, Fit::Exact)?;
            self.srcs.push(o);
        }
        Ok(())
    }

    fn check_ty(
        &self,
        inst: &ast::Instruction,
        ty: ScalarType,
        allowed: &[ScalarType],
    ) -> Result<()> {
        if allowed.contains(&ty) {
            Ok(())
        } else {
            Err(DecodeError::new(format!(
                "type .{ty} is not supported by '{}'",
                inst.opcode
            )))
        }
    }

    /// Decodes one instruction: returns its op and leaves its operands in
    /// `self.dsts`/`self.srcs`.
    pub(crate) fn decode(&mut self, inst: &ast::Instruction) -> Result<Op> {
        let mut m = Mods::new(inst)?;
        // `.b1` is a type of mma's, wmma's and wgmma's A and B only; refused here for
        // every other opcode.
        if !matches!(inst.opcode, Opcode::Mma | Opcode::Wmma | Opcode::Wgmma)
            && inst.modifiers.contains(&Modifier::Type(B1))
        {
            return Err(DecodeError::new(format!(
                "type .b1 is not supported by '{}' (only mma's, wmma's and wgmma's A and B are .b1)",
                inst.opcode
            )));
        }
        let op = self.decode_op(inst, &mut m)?;
        m.finish()?;
        Ok(op)
    }

    fn decode_op(&mut self, inst: &ast::Instruction, m: &mut Mods<'_>) -> Result<Op> {
        use Opcode as O;
        let opc = inst.opcode;
        Ok(match opc {
            O::Add | O::Sub | O::Addc | O::Subc => {
                let sat = m.flag(Flag::Sat);
                let cc = m.flag(Flag::Cc);
                let ty = m.need_ty()?;
                if is_float(ty) && matches!(opc, O::Add | O::Sub) && !cc {
                    let mode = float_mode(m, ty, sat)?;
                    self.regular(inst, &[ty], &[ty, ty])?;
                    return Ok(if opc == O::Add {
                        Op::FAdd { ty, mode }
                    } else {
                        Op::FSub { ty, mode }
                    });
                }
                let carry = Carry::new(matches!(opc, O::Addc | O::Subc), cc);
                if carry == Carry::None {
                    self.check_ty(inst, ty, INTS)?;
                } else {
                    self.check_ty(inst, ty, INT32_64)?;
                }
                if sat && (ty != S32 || carry != Carry::None) {
                    return Err(DecodeError::new(format!(
                        "'.sat' on '{opc}' needs .s32 without carry"
                    )));
                }
                self.regular(inst, &[ty], &[ty, ty])?;
                match opc {
                    O::Add | O::Addc => Op::Add { ty, sat, carry },
                    _ => Op::Sub { ty, sat, carry },
                }
            }
            O::Mul | O::Mad | O::Madc => {
                let mode = m.pick(&[
                    (Flag::Lo, MulMode::Lo),
                    (Flag::Hi, MulMode::Hi),
                    (Flag::Wide, MulMode::Wide),
                ]);
                let sat = m.flag(Flag::Sat);
                let cc = m.flag(Flag::Cc);
                let ty = m.need_ty()?;
                if is_float(ty) && opc != O::Madc && mode.is_none() && !cc {
                    let fm = float_mode(m, ty, sat)?;
                    return Ok(if opc == O::Mul {
                        self.regular(inst, &[ty], &[ty, ty])?;
                        Op::FMul { ty, mode: fm }
                    } else {
                        if fm.rounding.is_none()
                            && ty != F16
                            && ty != F16x2
                            && ty != Bf16
                            && ty != Bf16x2
                        {
                            return Err(DecodeError::new(format!(
                                "'{opc}.{ty}' needs a rounding modifier"
                            )));
                        }
                        self.regular(inst, &[ty], &[ty, ty, ty])?;
                        Op::Fma { ty, mode: fm }
                    });
                }
                self.check_ty(inst, ty, INTS)?;
                let mode = mode.ok_or_else(|| {
                    DecodeError::new(format!("'{opc}' on integers needs .lo, .hi or .wide"))
                })?;
                let wide_ty = match mode {
                    MulMode::Wide => widen(ty).ok_or_else(|| {
                        DecodeError::new(format!("'.wide' is not supported for .{ty}"))
                    })?,
                    _ => ty,
                };
                if opc == O::Mul {
                    if sat || cc {
                        return Err(DecodeError::new("'mul' takes neither .sat nor .cc"));
                    }
                    self.regular(inst, &[wide_ty], &[ty, ty])?;
                    return Ok(Op::Mul { ty, mode });
                }
                let carry = Carry::new(opc == O::Madc, cc);
                if sat && !(ty == S32 && mode == MulMode::Hi && carry == Carry::None) {
                    return Err(DecodeError::new("'.sat' on 'mad' needs .hi.s32"));
                }
                if carry != Carry::None && mode == MulMode::Wide {
                    return Err(DecodeError::new("carry is not supported with 'mad.wide'"));
                }
                self.regular(inst, &[wide_ty], &[ty, ty, wide_ty])?;
                Op::Mad {
                    ty,
                    mode,
                    sat,
                    carry,
                }
            }
            O::Mul24 | O::Mad24 => {
                let hi = match m.pick(&[(Flag::Lo, false), (Flag::Hi, true)]) {
                    Some(h) => h,
                    None => return Err(DecodeError::new(format!("'{opc}' needs .lo or .hi"))),
                };
                let sat = opc == O::Mad24 && m.flag(Flag::Sat);
                let ty = m.need_ty()?;
                self.check_ty(inst, ty, &[S32, U32])?;
                if opc == O::Mul24 {
                    self.regular(inst, &[ty], &[ty, ty])?;
                    Op::Mul24 { ty, hi }
                } else {
                    self.regular(inst, &[ty], &[ty, ty, ty])?;
                    Op::Mad24 { ty, hi, sat }
                }
            }
            O::Sad => {
                let ty = m.need_ty()?;
                self.check_ty(inst, ty, INTS)?;
                self.regular(inst, &[ty], &[ty, ty, ty])?;
                Op::Sad { ty }
            }
            O::Div => {
                let ty = m.need_ty()?;
                if is_float(ty) {
                    let (precision, ftz) = precision(m, ty, opc)?;
                    self.check_ty(inst, ty, FLOATS)?;
                    self.regular(inst, &[ty], &[ty, ty])?;
                    return Ok(Op::FDiv { ty, precision, ftz });
                }
                self.check_ty(inst, ty, INTS)?;
                self.regular(inst, &[ty], &[ty, ty])?;
                Op::Div { ty }
            }
            O::Rem => {
                let ty = m.need_ty()?;
                self.check_ty(inst, ty, INTS)?;
                self.regular(inst, &[ty], &[ty, ty])?;
                Op::Rem { ty }
            }
            O::Min | O::Max => {
                let ftz = m.flag(Flag::Ftz);
                let nan = m.flag(Flag::Nan);
                let relu = m.flag(Flag::Relu);
                let ty = m.need_ty()?;
                if is_float(ty) {
                    if relu {
                        return Err(DecodeError::new(format!(
                            "'.relu' on float '{opc}' is not supported"
                        )));
                    }
                    self.regular(inst, &[ty], &[ty, ty])?;
                    return Ok(if opc == O::Min {
                        Op::FMin { ty, ftz, nan }
                    } else {
                        Op::FMax { ty, ftz, nan }
                    });
                }
                if ftz || nan {
                    return Err(DecodeError::new(format!(
                        "'.ftz'/'.NaN' need a float type on '{opc}'"
                    )));
                }
                self.check_ty(inst, ty, INTS)?;
                if relu && ty != S32 {
                    return Err(DecodeError::new("'.relu' needs .s32"));
                }
                self.regular(inst, &[ty], &[ty, ty])?;
                if opc == O::Min {
                    Op::Min { ty, relu }
                } else {
                    Op::Max { ty, relu }
                }
            }
            O::Abs | O::Neg => {
                let ftz = m.flag(Flag::Ftz);
                let ty = m.need_ty()?;
                self.regular(inst, &[ty], &[ty])?;
                if is_float(ty) {
                    return Ok(if opc == O::Abs {
                        Op::FAbs { ty, ftz }
                    } else {
                        Op::FNeg { ty, ftz }
                    });
                }
                if ftz {
                    return Err(DecodeError::new(format!(
                        "'.ftz' needs a float type on '{opc}'"
                    )));
                }
                self.check_ty(inst, ty, &[S16, S32, S64])?;
                if opc == O::Abs {
                    Op::Abs { ty }
                } else {
                    Op::Neg { ty }
                }
            }
            O::And | O::Or | O::Xor => {
                let ty = m.need_ty()?;
                self.check_ty(inst, ty, BITS_PRED)?;
                self.regular(inst, &[ty], &[ty, ty])?;
                match opc {
                    O::And => Op::And { ty },
                    O::Or => Op::Or { ty },
                    _ => Op::Xor { ty },
                }
            }
            O::Not | O::Cnot => {
                let ty = m.need_ty()?;
                self.check_ty(inst, ty, if opc == O::Not { BITS_PRED } else { BITS })?;
                self.regular(inst, &[ty], &[ty])?;
                if opc == O::Not {
                    Op::Not { ty }
                } else {
                    Op::Cnot { ty }
                }
            }
            O::Lop3 => {
                let ty = m.need_ty()?;
                self.check_ty(inst, ty, &[B32])?;
                self.regular(inst, &[B32], &[B32, B32, B32, B32])?;
                if !matches!(self.srcs[3], Operand::Imm(v) if v <= 0xFF) {
                    return Err(DecodeError::at(
                        inst.operands[4].span(),
                        "'lop3' needs an 8-bit immediate lookup table",
                    ));
                }
                Op::Lop3 { ty }
            }
            O::Shl | O::Shr => {
                let ty = m.need_ty()?;
                let allowed: &[ScalarType] = if opc == O::Shl {
                    BITS
                } else {
                    &[B16, B32, B64, S16, U16, S32, U32, S64, U64]
                };
                self.check_ty(inst, ty, allowed)?;
                self.regular(inst, &[ty], &[ty, U32])?;
                if opc == O::Shl {
                    Op::Shl { ty }
                } else {
                    Op::Shr { ty }
                }
            }
            O::Bfe => {
                let ty = m.need_ty()?;
                self.check_ty(inst, ty, INT32_64)?;
                self.regular(inst, &[ty], &[ty, U32, U32])?;
                Op::Bfe { ty }
            }
            O::Bfi => {
                let ty = m.need_ty()?;
                self.check_ty(inst, ty, &[B32, B64])?;
                self.regular(inst, &[ty], &[ty, ty, U32, U32])?;
                Op::Bfi { ty }
            }
            O::Bfind => {
                let shiftamt = m.flag(Flag::Shiftamt);
                let ty = m.need_ty()?;
                self.check_ty(inst, ty, INT32_64)?;
                self.regular(inst, &[U32], &[ty])?;
                Op::Bfind { ty, shiftamt }
            }
            O::Popc | O::Clz => {
                let ty = m.need_ty()?;
                self.check_ty(inst, ty, &[B32, B64])?;
                self.regular(inst, &[U32], &[ty])?;
                if opc == O::Popc {
                    Op::Popc { ty }
                } else {
                    Op::Clz { ty }
                }
            }
            O::Brev => {
                let ty = m.need_ty()?;
                self.check_ty(inst, ty, &[B32, B64])?;
                self.regular(inst, &[ty], &[ty])?;
                Op::Brev { ty }
            }
            O::Prmt => {
                let ty = m.need_ty()?;
                self.check_ty(inst, ty, &[B32])?;
                let mode = m
                    .pick(&[
                        (Flag::F4e, PrmtMode::F4e),
                        (Flag::B4e, PrmtMode::B4e),
                        (Flag::Rc8, PrmtMode::Rc8),
                        (Flag::Ecl, PrmtMode::Ecl),
                        (Flag::Ecr, PrmtMode::Ecr),
                        (Flag::Rc16, PrmtMode::Rc16),
                    ])
                    .unwrap_or(PrmtMode::Generic);
                self.regular(inst, &[B32], &[B32, B32, B32])?;
                Op::Prmt { mode }
            }
            O::Dp4a | O::Dp2a => {
                let hi = if opc == O::Dp2a {
                    m.pick(&[(Flag::Lo, false), (Flag::Hi, true)])
                        .ok_or_else(|| DecodeError::new("'dp2a' needs .lo or .hi"))?
                } else {
                    false
                };
                let a_ty = m.need_ty()?;
                let b_ty = m.need_ty()?;
                self.check_ty(inst, a_ty, &[S32, U32])?;
                self.check_ty(inst, b_ty, &[S32, U32])?;
                let d_ty = if a_ty == U32 && b_ty == U32 { U32 } else { S32 };
                self.regular(inst, &[d_ty], &[a_ty, b_ty, d_ty])?;
                if opc == O::Dp4a {
                    Op::Dp4a { a_ty, b_ty }
                } else {
                    Op::Dp2a { a_ty, b_ty, hi }
                }
            }
            O::Shf => {
                let dir = m
                    .pick(&[(Flag::L, ShiftDir::Left), (Flag::R, ShiftDir::Right)])
                    .ok_or_else(|| DecodeError::new("'shf' needs .l or .r"))?;
                let amount = m
                    .pick(&[
                        (Flag::Clamp, ShiftAmount::Clamp),
                        (Flag::Wrap, ShiftAmount::Wrap),
                    ])
                    .ok_or_else(|| DecodeError::new("'shf' needs .clamp or .wrap"))?;
                let ty = m.need_ty()?;
                self.check_ty(inst, ty, &[B32])?;
                self.regular(inst, &[B32], &[B32, B32, U32])?;
                Op::Shf { dir, amount }
            }

            O::Fma => {
                let sat = m.flag(Flag::Sat);
                let ty = m.need_ty()?;
                if !is_float(ty) {
                    return Err(DecodeError::new(format!(
                        "type .{ty} is not supported by 'fma'"
                    )));
                }
                let mode = float_mode(m, ty, sat)?;
                if mode.rounding.is_none() {
                    return Err(DecodeError::new("'fma' needs a rounding modifier"));
                }
                self.regular(inst, &[ty], &[ty, ty, ty])?;
                Op::Fma { ty, mode }
            }
            O::Rcp | O::Sqrt => {
                let ty = m.need_ty()?;
                self.check_ty(inst, ty, FLOATS)?;
                let (precision, ftz) = precision(m, ty, opc)?;
                self.regular(inst, &[ty], &[ty])?;
                if opc == O::Rcp {
                    Op::Rcp { ty, precision, ftz }
                } else {
                    Op::Sqrt { ty, precision, ftz }
                }
            }
            O::Rsqrt | O::Sin | O::Cos | O::Lg2 | O::Ex2 | O::Tanh => {
                if !m.flag(Flag::Approx) {
                    return Err(DecodeError::new(format!("'{opc}' needs .approx")));
                }
                let ftz = opc != O::Tanh && m.flag(Flag::Ftz);
                let ty = m.need_ty()?;
                let allowed: &[ScalarType] = match opc {
                    O::Rsqrt => FLOATS,
                    O::Ex2 | O::Tanh => &[F32, F16, F16x2, Bf16, Bf16x2],
                    _ => &[F32],
                };
                self.check_ty(inst, ty, allowed)?;
                self.regular(inst, &[ty], &[ty])?;
                match opc {
                    O::Rsqrt => Op::Rsqrt { ty, ftz },
                    O::Sin => Op::Sin { ftz },
                    O::Cos => Op::Cos { ftz },
                    O::Lg2 => Op::Lg2 { ftz },
                    O::Ex2 => Op::Ex2 { ty, ftz },
                    _ => Op::Tanh { ty },
                }
            }
            O::Copysign => {
                let ty = m.need_ty()?;
                self.check_ty(inst, ty, FLOATS)?;
                self.regular(inst, &[ty], &[ty, ty])?;
                Op::Copysign { ty }
            }
            O::Testp => {
                let class = m
                    .pick(&[
                        (Flag::Finite, FloatClass::Finite),
                        (Flag::Infinite, FloatClass::Infinite),
                        (Flag::Number, FloatClass::Number),
                        (Flag::Notanumber, FloatClass::NotANumber),
                        (Flag::Normal, FloatClass::Normal),
                        (Flag::Subnormal, FloatClass::Subnormal),
                    ])
                    .ok_or_else(|| {
                        DecodeError::new("'testp' needs a class (.finite, .number, ...)")
                    })?;
                let ty = m.need_ty()?;
                self.check_ty(inst, ty, FLOATS)?;
                self.regular(inst, &[Pred], &[ty])?;
                Op::Testp { ty, class }
            }

            O::Setp | O::Set => {
                let cmp = m
                    .pick(CMP_OPS)
                    .ok_or_else(|| DecodeError::new(format!("'{opc}' needs a comparison")))?;
                let combine = m.pick(&[
                    (Flag::And, BoolOp::And),
                    (Flag::Or, BoolOp::Or),
                    (Flag::Xor, BoolOp::Xor),
                ]);
                let ftz = m.flag(Flag::Ftz);
                let dst_ty = if opc == O::Set {
                    Some(m.need_ty()?)
                } else {
                    None
                };
                let ty = m.need_ty()?;
                self.check_ty(inst, ty, ALL_16_64)?;
                check_cmp(cmp, ty)?;
                let n = 3 + combine.is_some() as usize;
                self.need_count(inst, n)?;
                match (&inst.operands[0], dst_ty) {
                    (ast::Operand::PredicatePair(p, q), None) => {
                        let p = self.pred_dst(p)?;
                        let q = self.pred_dst(q)?;
                        self.dsts.extend([p, q]);
                    }
                    (op, None) => {
                        let p = self.dst(op, Pred, Fit::Exact)?;
                        self.dsts.push(p);
                    }
                    (op, Some(d)) => {
                        self.check_ty(inst, d, &[U32, S32, F32])?;
                        let o = self.dst(op, d, Fit::Exact)?;
                        self.dsts.push(o);
                    }
                }
                for op in &inst.operands[1..3] {
                    let o = self.src(op, ty, Fit::Exact)?;
                    self.srcs.push(o);
                }
                if combine.is_some() {
                    let o = self.src(&inst.operands[3], Pred, Fit::Exact)?;
                    self.srcs.push(o);
                }
                match dst_ty {
                    None => Op::Setp {
                        ty,
                        cmp,
                        ftz,
                        combine,
                    },
                    Some(dst_ty) => Op::Set {
                        dst_ty,
                        ty,
                        cmp,
                        ftz,
                        combine,
                    },
                }
            }
            O::Selp => {
                let ty = m.need_ty()?;
                self.check_ty(inst, ty, ALL_16_64)?;
                self.regular(inst, &[ty], &[ty, ty, Pred])?;
                Op::Selp { ty }
            }
            O::Slct => {
                let ftz = m.flag(Flag::Ftz);
                let ty = m.need_ty()?;
                let cmp_ty = m.need_ty()?;
                self.check_ty(inst, ty, ALL_16_64)?;
                self.check_ty(inst, cmp_ty, &[S32, F32])?;
                self.regular(inst, &[ty], &[ty, ty, cmp_ty])?;
                Op::Slct { ty, cmp_ty, ftz }
            }

            O::Mov => self.decode_mov(inst, m)?,
            O::Cvt => self.decode_cvt(inst, m)?,
            O::Cvta => {
                let to_generic = !m.flag(Flag::To);
                let space = m
                    .space()
                    .and_then(space_of)
                    .filter(|s| !matches!(s, Space::Generic))
                    .ok_or_else(|| DecodeError::new("'cvta' needs a state space"))?;
                let ty = m.need_ty()?;
                self.check_ty(inst, ty, &[U32, U64, B32, B64])?;
                self.need_count(inst, 2)?;
                let d = self.dst(&inst.operands[0], ty, Fit::Exact)?;
                let a = self.src_value(&inst.operands[1], ty, Fit::Exact, true)?;
                self.dsts.push(d);
                self.srcs.push(a);
                Op::Cvta {
                    to_generic,
                    space,
                    ty,
                }
            }
            O::Isspacep => {
                let space = m
                    .space()
                    .and_then(space_of)
                    .ok_or_else(|| DecodeError::new("'isspacep' needs a state space"))?;
                self.need_count(inst, 2)?;
                let p = self.dst(&inst.operands[0], Pred, Fit::Exact)?;
                let a = self.src(&inst.operands[1], B64, Fit::Exact)?;
                self.dsts.push(p);
                self.srcs.push(a);
                Op::Isspacep { space }
            }
            O::Ld | O::Ldu | O::St => self.decode_ld_st(inst, m)?,
            O::Prefetch | O::Prefetchu => {
                let uniform = opc == O::Prefetchu;
                let space = match m.space() {
                    None => Space::Generic,
                    Some(s) => match space_of(s) {
                        Some(sp @ (Space::Global | Space::Local)) if !uniform => sp,
                        _ => {
                            return Err(DecodeError::new(format!("'{opc}' does not support .{s}")))
                        }
                    },
                };
                let level = m
                    .pick_other(&[("L1", CacheLevel::L1), ("L2", CacheLevel::L2)])
                    .ok_or_else(|| DecodeError::new(format!("'{opc}' needs .L1 or .L2")))?;
                self.need_count(inst, 1)?;
                let a = self.address(&inst.operands[0])?;
                self.srcs.push(a);
                Op::Prefetch {
                    space,
                    level,
                    uniform,
                }
            }
            O::Atom | O::Red => self.decode_atomic(inst, m)?,

            O::Bar | O::Barrier => self.decode_barrier(inst, m)?,
            O::Mapa => self.decode_mapa(inst, m)?,
            O::Getctarank => self.decode_getctarank(inst, m)?,
            O::Membar => {
                let scope = if m.flag(Flag::Cta) {
                    Scope::Cta
                } else if m.other("gl") {
                    Scope::Gpu
                } else if m.flag(Flag::Sys) {
                    Scope::Sys
                } else {
                    return Err(DecodeError::new("'membar' needs .cta, .gl or .sys"));
                };
                self.need_count(inst, 0)?;
                Op::Fence {
                    sem: FenceSem::Sc,
                    scope,
                }
            }
            O::Fence if m.other("proxy") => self.decode_fence_proxy(inst, m)?,
            O::Fence if m.other("mbarrier_init") => {
                // The only form (ISA 8.0): `fence.mbarrier_init.release.cluster`.
                if !(m.flag(Flag::Release) && m.flag(Flag::Cluster)) {
                    return Err(DecodeError::new(
                        "'fence.mbarrier_init' needs .release.cluster",
                    ));
                }
                self.need_count(inst, 0)?;
                Op::FenceProxy(ProxyFence::MbarrierInit)
            }
            O::Fence => {
                let sem = if m.flag(Flag::Sc) {
                    FenceSem::Sc
                } else {
                    m.flag(Flag::AcqRel);
                    FenceSem::AcqRel
                };
                let scope = m
                    .scope()
                    .ok_or_else(|| DecodeError::new("'fence' needs a scope"))?;
                self.need_count(inst, 0)?;
                Op::Fence { sem, scope }
            }
            O::Shfl => {
                let sync = m.flag(Flag::Sync);
                let mode = m
                    .pick(&[
                        (Flag::Up, ShuffleMode::Up),
                        (Flag::Down, ShuffleMode::Down),
                        (Flag::Bfly, ShuffleMode::Bfly),
                        (Flag::Idx, ShuffleMode::Idx),
                    ])
                    .ok_or_else(|| DecodeError::new("'shfl' needs .up, .down, .bfly or .idx"))?;
                let ty = m.need_ty()?;
                self.check_ty(inst, ty, &[B32])?;
                self.need_count(inst, 4 + sync as usize)?;
                self.value_and_pred_dst(&inst.operands[0], B32)?;
                for (op, ty) in inst.operands[1..].iter().zip([B32, U32, U32, U32]) {
                    let o = self.src(op, ty, Fit::Exact)?;
                    self.srcs.push(o);
                }
                Op::Shfl { mode, sync }
            }
            O::Vote => {
                let sync = m.flag(Flag::Sync);
                let mode = m
                    .pick(&[
                        (Flag::All, VoteMode::All),
                        (Flag::Any, VoteMode::Any),
                        (Flag::Uni, VoteMode::Uni),
                        (Flag::Ballot, VoteMode::Ballot),
                    ])
                    .ok_or_else(|| DecodeError::new("'vote' needs .all, .any, .uni or .ballot"))?;
                let ty = m.need_ty()?;
                let d_ty = if mode == VoteMode::Ballot { B32 } else { Pred };
                self.check_ty(inst, ty, &[d_ty])?;
                if sync {
                    self.regular(inst, &[d_ty], &[Pred, U32])?;
                } else {
                    self.regular(inst, &[d_ty], &[Pred])?;
                }
                Op::Vote { mode, sync }
            }
            O::Match => {
                let all = m
                    .pick(&[(Flag::Any, false), (Flag::All, true)])
                    .ok_or_else(|| DecodeError::new("'match' needs .any or .all"))?;
                if !m.flag(Flag::Sync) {
                    return Err(DecodeError::new("'match' needs .sync"));
                }
                let ty = m.need_ty()?;
                self.check_ty(inst, ty, &[B32, B64])?;
                self.need_count(inst, 3)?;
                if all {
                    self.value_and_pred_dst(&inst.operands[0], B32)?;
                } else {
                    let d = self.dst(&inst.operands[0], B32, Fit::Exact)?;
                    self.dsts.push(d);
                }
                let a = self.src(&inst.operands[1], ty, Fit::Exact)?;
                let mask = self.src(&inst.operands[2], U32, Fit::Exact)?;
                self.srcs.extend([a, mask]);
                Op::Match { all, ty }
            }
            O::Activemask => {
                let ty = m.need_ty()?;
                self.check_ty(inst, ty, &[B32])?;
                self.regular(inst, &[B32], &[])?;
                Op::Activemask
            }
            O::Redux => {
                if !m.flag(Flag::Sync) {
                    return Err(DecodeError::new("'redux' needs .sync"));
                }
                let op = m
                    .pick(&[
                        (Flag::Add, ReduxOp::Add),
                        (Flag::Min, ReduxOp::Min),
                        (Flag::Max, ReduxOp::Max),
                        (Flag::And, ReduxOp::And),
                        (Flag::Or, ReduxOp::Or),
                        (Flag::Xor, ReduxOp::Xor),
                    ])
                    .ok_or_else(|| DecodeError::new("'redux.sync' needs an operation"))?;
                let ty = m.need_ty()?;
                let allowed: &[ScalarType] = match op {
                    ReduxOp::Add | ReduxOp::Min | ReduxOp::Max => &[U32, S32],
                    _ => &[B32],
                };
                self.check_ty(inst, ty, allowed)?;
                self.regular(inst, &[ty], &[ty, U32])?;
                Op::Redux { op, ty }
            }

            O::Bra => {
                let uni = m.flag(Flag::Uni);
                self.need_count(inst, 1)?;
                let target = match &inst.operands[0] {
                    ast::Operand::Name {
                        name,
                        component: None,
                    } => self.label(&name.name).ok_or_else(|| {
                        DecodeError::at(name.span, format!("undefined label '{}'", name.name))
                    })?,
                    op => return Err(DecodeError::at(op.span(), "'bra' needs a label")),
                };
                self.srcs.push(Operand::Block(BlockId(target)));
                Op::Bra { uni }
            }
            O::Call => self.decode_call(inst, m)?,
            O::Ret => {
                let uni = m.flag(Flag::Uni);
                self.need_count(inst, 0)?;
                Op::Ret { uni }
            }
            O::Exit | O::Trap | O::Brkpt => {
                self.need_count(inst, 0)?;
                match opc {
                    O::Exit => Op::Exit,
                    O::Trap => Op::Trap,
                    _ => Op::Brkpt,
                }
            }
            O::Nanosleep => {
                let ty = m.need_ty()?;
                self.check_ty(inst, ty, &[U32])?;
                self.regular(inst, &[], &[U32])?;
                Op::Nanosleep
            }
            O::Createpolicy => self.decode_createpolicy(inst, m)?,
            O::Cp => self.decode_cp(inst, m)?,
            O::Wmma => self.decode_wmma(inst, m)?,
            O::Mma => self.decode_mma(inst, m)?,
            O::Ldmatrix => self.decode_matrix8x8(inst, m, false)?,
            O::Movmatrix => self.decode_movmatrix(inst, m)?,
            O::Stmatrix => self.decode_matrix8x8(inst, m, true)?,
            O::Mbarrier => self.decode_mbarrier(inst, m)?,
            O::Elect => {
                if !m.flag(Flag::Sync) {
                    return Err(DecodeError::new("'elect' needs .sync"));
                }
                self.need_count(inst, 2)?;
                match &inst.operands[0] {
                    ast::Operand::PredicatePair(..) => {
                        self.value_and_pred_dst(&inst.operands[0], B32)?
                    }
                    op => {
                        return Err(DecodeError::at(
                            op.span(),
                            "'elect.sync' needs 'd|p' destinations",
                        ))
                    }
                }
                let mask = self.src(&inst.operands[1], U32, Fit::Exact)?;
                self.srcs.push(mask);
                Op::Elect
            }
            O::Griddepcontrol => {
                let wait = m
                    .pick_other(&[("wait", true), ("launch_dependents", false)])
                    .ok_or_else(|| {
                        DecodeError::new("'griddepcontrol' needs .wait or .launch_dependents")
                    })?;
                self.need_count(inst, 0)?;
                Op::GridDepControl { wait }
            }
            O::Setmaxnreg => self.decode_setmaxnreg(inst, m)?,
            O::Wgmma => self.decode_wgmma(inst, m)?,
            O::Tex | O::Tld4 => self.decode_tex(inst, m)?,
            O::Txq => {
                let query = m.pick_other(TexQuery::ALL).ok_or_else(|| {
                    DecodeError::new("'txq' needs a query (.width, .height, ...)")
                })?;
                let ty = m.need_ty()?;
                self.check_ty(inst, ty, &[B32])?;
                self.need_count(inst, 2)?;
                let d = self.dst(&inst.operands[0], B32, Fit::Exact)?;
                let t = match &inst.operands[1] {
                    ast::Operand::Address(a) => match &a.base {
                        ast::AddressBase::Name(n) if a.offset == 0 => self.texture_ref(n)?,
                        _ => {
                            return Err(DecodeError::at(a.span, "'txq' needs a texture reference"))
                        }
                    },
                    op => return Err(DecodeError::at(op.span(), "'txq' needs '[texref]'")),
                };
                self.dsts.push(d);
                self.srcs.push(t);
                Op::Txq { query, ty }
            }
            _ => return Err(DecodeError::new(format!("unsupported instruction '{opc}'"))),
        })
    }

    /// The `.mMnNkK` modifier, which must be one of `allowed`.
    fn mma_shape(
        &self,
        inst: &ast::Instruction,
        m: &mut Mods<'_>,
        allowed: &[MmaShape],
    ) -> Result<MmaShape> {
        let table: Vec<(&str, MmaShape)> = allowed.iter().map(|s| (s.as_str(), *s)).collect();
        if let Some(s) = m.pick_other(&table) {
            return Ok(s);
        }
        let supported: Vec<String> = allowed.iter().map(|s| format!(".{}", s.as_str())).collect();
        let found = inst.modifiers.iter().find_map(|x| match x {
            Modifier::Other(o) if is_shape(o) => Some(o.as_str()),
            _ => None,
        });
        Err(DecodeError::new(match found {
            Some(o) => format!(
                "unsupported shape '.{o}' on '{}' (supported: {})",
                inst.opcode,
                supported.join(", ")
            ),
            None => format!("'{}' needs a shape ({})", inst.opcode, supported.join(", ")),
        }))
    }

    fn matrix_layout(&self, inst: &ast::Instruction, m: &mut Mods<'_>) -> Result<MatrixLayout> {
        m.pick_other(&[("row", MatrixLayout::Row), ("col", MatrixLayout::Col)])
            .ok_or_else(|| DecodeError::new(format!("'{}' needs .row or .col", inst.opcode)))
    }

    /// `.sync.aligned`, which every warp-level matrix instruction carries.
    fn sync_aligned(&self, inst: &ast::Instruction, m: &mut Mods<'_>) -> Result<()> {
        if m.flag(Flag::Sync) && m.flag(Flag::Aligned) {
            Ok(())
        } else {
            Err(DecodeError::new(format!(
                "'{}' needs .sync.aligned",
                inst.opcode
            )))
        }
    }

    /// `.global`, `.shared{::cta}` or none (generic).
    fn matrix_space(&self, inst: &ast::Instruction, m: &mut Mods<'_>) -> Result<Space> {
        if m.other("shared::cta") {
            return Ok(Space::Shared);
        }
        match m.space() {
            None => Ok(Space::Generic),
            Some(StateSpace::Global) => Ok(Space::Global),
            Some(StateSpace::Shared | StateSpace::SharedCta) => Ok(Space::Shared),
            Some(s) => Err(DecodeError::new(format!(
                "'{}' cannot access .{s}",
                inst.opcode
            ))),
        }
    }

    /// A fragment operand: `n` registers holding elements of `ty` (32-bit registers,
    /// `.f32` for f32 elements, `.b32` pairs of 16-bit elements otherwise).
    fn fragment(&mut self, op: &ast::Operand, n: u8, ty: ScalarType, is_dst: bool) -> Result<()> {
        let reg_ty = match ty {
            F32 | F64 => ty,
            _ => B32,
        };
        let regs = self.vector(op, n, reg_ty, Fit::Exact, is_dst)?;
        if is_dst {
            self.dsts.extend(regs);
        } else {
            self.srcs.extend(regs);
        }
        Ok(())
    }

    fn decode_wmma(&mut self, inst: &ast::Instruction, m: &mut Mods<'_>) -> Result<Op> {
        let load = m.other("load");
        let store = !load && m.other("store");
        let mma = !load && !store && m.other("mma");
        if !(load || store || mma) {
            return Err(DecodeError::new(
                "unsupported instruction 'wmma' (wmma.load, wmma.store and wmma.mma are supported)",
            ));
        }
        if mma {
            return self.decode_matrix_multiply(inst, m, true, None);
        }
        let role = if load {
            Some(
                m.pick_other(&[
                    ("a", MatrixRole::A),
                    ("b", MatrixRole::B),
                    ("c", MatrixRole::C),
                ])
                .ok_or_else(|| DecodeError::new("'wmma.load' needs .a, .b or .c"))?,
            )
        } else {
            if !m.other("d") {
                return Err(DecodeError::new("'wmma.store' needs .d"));
            }
            None
        };
        self.sync_aligned(inst, m)?;
        let layout = self.matrix_layout(inst, m)?;
        let shape = self.mma_shape(inst, m, WMMA_SHAPES)?;
        let space = self.matrix_space(inst, m)?;
        let ty = m.need_ty()?;
        let what = if load { "load" } else { "store" };
        // The element types of each shape's fragments (PTX ISA "wmma.load").
        use MmaShape as S;
        let allowed: &[ScalarType] = match (shape, role) {
            (S::M16n16k16 | S::M32n8k16 | S::M8n32k16, Some(MatrixRole::A | MatrixRole::B)) => {
                &[F16, Bf16, S8, U8]
            }
            (S::M16n16k16 | S::M32n8k16 | S::M8n32k16, _) => &[F16, F32, S32],
            (S::M16n16k8, Some(MatrixRole::A | MatrixRole::B)) => &[Tf32],
            (S::M16n16k8, _) => &[F32],
            (S::M8n8k4, _) => &[F64],
            (S::M8n8k32, Some(MatrixRole::A | MatrixRole::B)) => &[S4, U4],
            (S::M8n8k128, Some(MatrixRole::A | MatrixRole::B)) => &[B1],
            _ => &[S32],
        };
        if !allowed.contains(&ty) {
            return Err(DecodeError::new(format!(
                "type .{ty} is not supported by 'wmma.{what}.{}' (supported: {})",
                shape.as_str(),
                allowed
                    .iter()
                    .map(|t| format!(".{t}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        // Sub-byte A and B are stored along K: A row-major, B column-major (ISA "wmma.load").
        let sub_byte = matches!(ty, S4 | U4 | B1);
        match role {
            Some(MatrixRole::A) if sub_byte && layout != MatrixLayout::Row => {
                return Err(DecodeError::new(format!(
                    "'wmma.load.a' of .{ty} needs .row"
                )))
            }
            Some(MatrixRole::B) if sub_byte && layout != MatrixLayout::Col => {
                return Err(DecodeError::new(format!(
                    "'wmma.load.b' of .{ty} needs .col"
                )))
            }
            _ => {}
        }
        let w = WmmaMemory {
            role,
            layout,
            shape,
            space,
            ty,
        };
        let n = inst.operands.len();
        if !(2..=3).contains(&n) {
            return Err(DecodeError::new(format!(
                "'wmma.{}' expects 2 or 3 operands, found {n}",
                if load { "load" } else { "store" }
            )));
        }
        let (frag, addr) = if load {
            (&inst.operands[0], &inst.operands[1])
        } else {
            (&inst.operands[1], &inst.operands[0])
        };
        let a = self.address(addr)?;
        self.srcs.push(a);
        self.fragment(frag, w.fragment_regs(), ty, load)?;
        if n == 3 {
            let s = self.src(&inst.operands[2], U32, Fit::Exact)?;
            self.srcs.push(s);
        } else {
            // Without a stride the matrix is packed: its leading dimension.
            let (rows, cols, k) = shape.dims();
            let (r, c) = match role {
                Some(MatrixRole::A) => (rows, k),
                Some(MatrixRole::B) => (k, cols),
                _ => (rows, cols),
            };
            let ld = if layout == MatrixLayout::Row { c } else { r };
            self.srcs.push(Operand::Imm(u64::from(ld)));
        }
        Ok(if load {
            Op::WmmaLoad(w)
        } else {
            Op::WmmaStore(w)
        })
    }

    fn decode_mma(&mut self, inst: &ast::Instruction, m: &mut Mods<'_>) -> Result<Op> {
        let sparse = if m.other("sp::ordered_metadata") {
            Some(true)
        } else if m.other("sp") {
            Some(false)
        } else {
            None
        };
        self.decode_matrix_multiply(inst, m, false, sparse)
    }

    /// `wmma.mma` (`wmma` true), `mma.sync` and (`sparse` `Some(ordered)`) `mma.sp`.
    fn decode_matrix_multiply(
        &mut self,
        inst: &ast::Instruction,
        m: &mut Mods<'_>,
        wmma: bool,
        sparse: Option<bool>,
    ) -> Result<Op> {
        let name = if wmma {
            "wmma.mma"
        } else if sparse.is_some() {
            "mma.sp"
        } else {
            "mma"
        };
        self.sync_aligned(inst, m)?;
        let shape = if wmma {
            self.mma_shape(inst, m, WMMA_SHAPES)?
        } else if sparse.is_some() {
            self.mma_shape(
                inst,
                m,
                &[
                    MmaShape::M16n8k16,
                    MmaShape::M16n8k32,
                    MmaShape::M16n8k8,
                    MmaShape::M16n8k64,
                    MmaShape::M16n8k128,
                ],
            )?
        } else {
            self.mma_shape(
                inst,
                m,
                &[
                    MmaShape::M16n8k16,
                    MmaShape::M16n8k8,
                    MmaShape::M16n8k4,
                    MmaShape::M16n8k32,
                    MmaShape::M16n8k64,
                    MmaShape::M8n8k4,
                    MmaShape::M8n8k16,
                    MmaShape::M8n8k32,
                    MmaShape::M8n8k128,
                    MmaShape::M16n8k128,
                    MmaShape::M16n8k256,
                ],
            )?
        };
        let a_layout = self.matrix_layout(inst, m)?;
        let b_layout = self.matrix_layout(inst, m)?;
        // Volta's f16 m8n8k4 takes any combination (checked once the types are known).
        if !wmma
            && shape != MmaShape::M8n8k4
            && (a_layout, b_layout) != (MatrixLayout::Row, MatrixLayout::Col)
        {
            return Err(DecodeError::new(format!(
                "'mma.{}' needs .row.col",
                shape.as_str()
            )));
        }
        let satfinite = m.flag(Flag::Satfinite);
        // wmma.mma's `.rnd` (f64 only, checked below).
        let rnd = if wmma { m.rounding() } else { None };
        let mut tys = Vec::with_capacity(4);
        while let Some(t) = m.ty() {
            tys.push(t);
        }
        let int8 = |t: ScalarType| matches!(t, S8 | U8);
        let int4 = |t: ScalarType| matches!(t, S4 | U4);
        let fp8 = |t: ScalarType| matches!(t, E4m3 | E5m2);
        // A and B of one family mix: s8/u8, s4/u4, e4m3/e5m2 (ISA "mma" syntax).
        let mixes = |a, b| int8(a) && int8(b) || int4(a) && int4(b) || fp8(a) && fp8(b);
        let (d_ty, ab_ty, b_ty, c_ty) = match tys[..] {
            [d, c] if wmma => (d, F16, F16, c),
            [d, a, b, c] if a == b || (!wmma && mixes(a, b)) => (d, a, b, c),
            [_, a, b, _] => {
                return Err(DecodeError::new(format!(
                    "'{name}' with .{a} A and .{b} B is not supported (A and B must have one type)"
                )))
            }
            _ => {
                return Err(DecodeError::new(format!(
                    "'{name}' needs its types: .dtype{} .ctype",
                    if wmma {
                        " {.atype .btype}"
                    } else {
                        " .atype .btype"
                    }
                )))
            }
        };
        use MmaShape as S;
        // (shapes, accumulator types) each input type supports.
        let (shapes, accumulators): (&[MmaShape], &[ScalarType]) = match ab_ty {
            // mma.sp (PTX ISA "mma.sp"): K twice the dense shapes'; fp8 m16n8k64 (sm_89)
            // with f32 accumulators; no .b1 or .f64.
            F16 if sparse.is_some() => (&[S::M16n8k16, S::M16n8k32], &[F16, F32]),
            Bf16 if sparse.is_some() => (&[S::M16n8k16, S::M16n8k32], &[F32]),
            Tf32 if sparse.is_some() => (&[S::M16n8k8, S::M16n8k16], &[F32]),
            S8 | U8 if sparse.is_some() => (&[S::M16n8k32, S::M16n8k64], &[S32]),
            S4 | U4 if sparse.is_some() => (&[S::M16n8k64, S::M16n8k128], &[S32]),
            E4m3 | E5m2 if sparse.is_some() => (&[S::M16n8k64], &[F32]),
            F64 | B1 if sparse.is_some() => {
                return Err(DecodeError::new(format!(
                    "type .{ab_ty} is not supported by 'mma.sp' (supported: .f16, .bf16, \
                     .tf32, .s8, .u8, .s4, .u4, .e4m3, .e5m2)"
                )))
            }
            F16 if wmma => (&[S::M16n16k16, S::M32n8k16, S::M8n32k16], &[F16, F32]),
            Bf16 if wmma => (&[S::M16n16k16, S::M32n8k16, S::M8n32k16], &[F32]),
            // m8n8k4: Volta's quad-pair shape (PTX ISA 6.4, sm_70).
            F16 => (&[S::M16n8k16, S::M16n8k8, S::M8n8k4], &[F16, F32]),
            Bf16 => (&[S::M16n8k16, S::M16n8k8], &[F32]),
            Tf32 if wmma => (&[S::M16n16k8], &[F32]),
            S8 | U8 if wmma => (&[S::M16n16k16, S::M32n8k16, S::M8n32k16], &[S32]),
            S4 | U4 if wmma => (&[S::M8n8k32], &[S32]),
            F64 if wmma => (&[S::M8n8k4], &[F64]),
            B1 if wmma => (&[S::M8n8k128], &[S32]),
            Tf32 => (&[S::M16n8k8, S::M16n8k4], &[F32]),
            S8 | U8 => (&[S::M8n8k16, S::M16n8k16, S::M16n8k32], &[S32]),
            S4 | U4 => (&[S::M8n8k32, S::M16n8k32, S::M16n8k64], &[S32]),
            // PTX ISA 8.4 (m16n8k32, sm_89) and 8.7 (m16n8k16, f16 accumulators).
            E4m3 | E5m2 if !wmma => (&[S::M16n8k16, S::M16n8k32], &[F16, F32]),
            // m16n8k4/k8/k16: PTX ISA 7.8, sm_90.
            F64 => (&[S::M8n8k4, S::M16n8k4, S::M16n8k8, S::M16n8k16], &[F64]),
            B1 => (&[S::M8n8k128, S::M16n8k128, S::M16n8k256], &[S32]),
            _ => {
                return Err(DecodeError::new(format!(
                    "type .{ab_ty} is not supported by '{name}' (supported: .f16, .bf16, \
                     .tf32, .s8, .u8, .s4, .u4{}, .f64, .b1)",
                    if wmma { "" } else { ", .e4m3, .e5m2" }
                )))
            }
        };
        if !shapes.contains(&shape) {
            return Err(DecodeError::new(format!(
                "'{name}' with .{ab_ty} inputs does not support .{} (supported: {})",
                shape.as_str(),
                shapes
                    .iter()
                    .map(|s| format!(".{}", s.as_str()))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        let accumulators_ok = accumulators.contains(&d_ty)
            && accumulators.contains(&c_ty)
            && (!matches!(ab_ty, Bf16 | E4m3 | E5m2) || d_ty == c_ty);
        if !accumulators_ok {
            return Err(DecodeError::new(format!(
                "'{name}' with .{ab_ty} inputs does not support .{d_ty} D with .{c_ty} C"
            )));
        }
        // mma's f64 m8n8k4 is .row.col only; wmma's takes every layout.
        if !wmma
            && shape == MmaShape::M8n8k4
            && ab_ty != F16
            && (a_layout, b_layout) != (MatrixLayout::Row, MatrixLayout::Col)
        {
            return Err(DecodeError::new(format!(
                "'{name}.m8n8k4' with .{ab_ty} inputs needs .row.col"
            )));
        }
        if satfinite && !int8(ab_ty) && !int4(ab_ty) {
            return Err(DecodeError::new(format!(
                "'{name}' with .{ab_ty} inputs does not take .satfinite"
            )));
        }
        if let Some(r) = rnd {
            if ab_ty != F64
                || !matches!(r, Rounding::Rn | Rounding::Rz | Rounding::Rm | Rounding::Rp)
            {
                return Err(DecodeError::new(format!(
                    "'{name}' with .{ab_ty} inputs does not take .{} (only .f64 takes .rn, .rz, \
                     .rm or .rp)",
                    r.as_str()
                )));
            }
        }
        // Sub-byte wmma.mma multiplies a row-major A by a column-major B (ISA "wmma.mma").
        if wmma
            && matches!(ab_ty, S4 | U4 | B1)
            && (a_layout, b_layout) != (MatrixLayout::Row, MatrixLayout::Col)
        {
            return Err(DecodeError::new(format!(
                "'wmma.mma' with .{ab_ty} inputs needs .row.col"
            )));
        }
        let bit_op = if ab_ty == B1 {
            Some(mma_bit_op(m)?)
        } else {
            None
        };
        let sparse = match sparse {
            None => None,
            Some(ordered) => {
                self.need_count(inst, 6)?;
                // The selector's values per shape (PTX ISA "Sparse matrix storage"): one
                // thread of four holds metadata (0..=3), a pair (0 or 1) or all four (0).
                // Other values are undefined behaviour there; regsim refuses them.
                let threads = sparse_meta_threads(shape, ab_ty);
                let max = 4 / threads - 1;
                let sel_op = &inst.operands[5];
                let selector = match sel_op {
                    ast::Operand::Immediate(Immediate::Int(v), _)
                        if (0..=i64::from(max)).contains(v) =>
                    {
                        *v as u8
                    }
                    op => {
                        return Err(DecodeError::at(
                            op.span(),
                            format!(
                                "'mma.sp.{}' with .{ab_ty} inputs needs a sparsity selector \
                                 constant from 0 to {max} (metadata threads per group of \
                                 four: {threads})",
                                shape.as_str()
                            ),
                        ))
                    }
                };
                Some(MmaSparse { ordered, selector })
            }
        };
        let op = MmaOp {
            wmma,
            shape,
            a_layout,
            b_layout,
            d_ty,
            ab_ty,
            b_ty,
            c_ty,
            satfinite,
            bit_op,
            rnd,
            sparse,
        };
        if sparse.is_none() {
            self.need_count(inst, 4)?;
        }
        let [na, nb, nc, nd] = op.regs();
        self.fragment(&inst.operands[0], nd, d_ty, true)?;
        self.fragment(&inst.operands[1], na, ab_ty, false)?;
        self.fragment(&inst.operands[2], nb, b_ty, false)?;
        self.fragment(&inst.operands[3], nc, c_ty, false)?;
        if sparse.is_some() {
            let e = self.src(&inst.operands[4], B32, Fit::Exact)?;
            self.srcs.push(e);
        }
        Ok(Op::Mma(op))
    }

    /// `wgmma.fence`, `wgmma.commit_group`, `wgmma.wait_group N` and
    /// `wgmma.mma_async.sync.aligned.m64nNkK{.satfinite}.dtype.atype.btype d, a, b-desc,
    /// scale-d{, imm-scale-a, imm-scale-b{, imm-trans-a}{, imm-trans-b}}` (PTX ISA 8.0,
    /// sm_90a, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate Instructions").
    fn decode_wgmma(&mut self, inst: &ast::Instruction, m: &mut Mods<'_>) -> Result<Op> {
        let kind = m
            .pick_other(&[
                ("mma_async", 0u8),
                ("fence", 1),
                ("commit_group", 2),
                ("wait_group", 3),
            ])
            .ok_or_else(|| {
                DecodeError::new(
                    "unsupported instruction 'wgmma' (wgmma.mma_async{.sp}, .fence, \
                     .commit_group and .wait_group are supported)",
                )
            })?;
        let sparse = kind == 0 && m.other("sp");
        self.sync_aligned(inst, m)?;
        match kind {
            1 => {
                self.need_count(inst, 0)?;
                return Ok(Op::WgmmaFence);
            }
            2 => {
                self.need_count(inst, 0)?;
                return Ok(Op::WgmmaCommit);
            }
            3 => {
                self.need_count(inst, 1)?;
                let n = match &inst.operands[0] {
                    ast::Operand::Immediate(Immediate::Int(v), _) if *v >= 0 => *v,
                    op => {
                        return Err(DecodeError::at(
                            op.span(),
                            "'wgmma.wait_group' needs a non-negative integer constant",
                        ))
                    }
                };
                let n = u32::try_from(n).map_err(|_| {
                    DecodeError::new("'wgmma.wait_group': the count does not fit 32 bits")
                })?;
                self.srcs.push(Operand::Imm(u64::from(n)));
                return Ok(Op::WgmmaWait { n });
            }
            _ => {}
        }
        let satfinite = m.flag(Flag::Satfinite);
        let shape = inst.modifiers.iter().find_map(|x| match x {
            Modifier::Other(o) if is_shape(o) => Some(o.clone()),
            _ => None,
        });
        let Some(shape) = shape else {
            return Err(DecodeError::new(
                "'wgmma.mma_async' needs a shape (.m64nNkK)",
            ));
        };
        let _ = m.other(&shape);
        let dims: Vec<u32> = shape[1..]
            .split(['n', 'k'])
            .map(|p| p.parse().unwrap_or(0))
            .collect();
        let (mm, n, k) = (dims[0], dims[1], dims[2]);
        let mut tys = Vec::with_capacity(3);
        while let Some(t) = m.ty() {
            tys.push(t);
        }
        let [d_ty, a_ty, b_ty] = tys[..] else {
            return Err(DecodeError::new(
                "'wgmma.mma_async' needs its types: .dtype .atype .btype",
            ));
        };
        let fp8 = |t: ScalarType| matches!(t, E4m3 | E5m2);
        let int8 = |t: ScalarType| matches!(t, S8 | U8);
        // (K, accumulator types) of each input type ("Matrix shape" and "Data types" of
        // wgmma.mma_async): A and B have one type, except that e4m3/e5m2 and s8/u8 mix.
        let (want_k, accumulators): (u32, &[ScalarType]) = match (a_ty, b_ty) {
            (F16, F16) => (16, &[F16, F32]),
            (Bf16, Bf16) => (16, &[F32]),
            (Tf32, Tf32) => (8, &[F32]),
            (a, b) if fp8(a) && fp8(b) => (32, &[F16, F32]),
            (a, b) if int8(a) && int8(b) => (32, &[S32]),
            // `.s32.b1.b1.and.popc` (PTX ISA 8.0): the only bit operation wgmma has.
            (B1, B1) => (256, &[S32]),
            _ => {
                return Err(DecodeError::new(format!(
                    "'wgmma.mma_async' with .{a_ty} A and .{b_ty} B is not supported \
                     (supported: .f16, .bf16, .tf32, .e4m3/.e5m2, .s8/.u8, .b1)"
                )))
            }
        };
        // b1 counts like the 8-bit integers below (N, no scales or transposes).
        let int8 = |t: ScalarType| int8(t) || t == B1;
        // `.sp` (PTX ISA 8.2 "wgmma.mma_async.sp"): K twice the dense one; no b1.
        if sparse && a_ty == B1 {
            return Err(DecodeError::new(
                "'wgmma.mma_async.sp' does not take .b1 inputs",
            ));
        }
        let want_k = if sparse { 2 * want_k } else { want_k };
        if a_ty == B1 {
            let op = m.pick(&[(Flag::And, 0u8), (Flag::Xor, 1)]);
            if op != Some(0) || !m.flag(Flag::Popc) {
                return Err(DecodeError::new(
                    "'wgmma.mma_async' with .b1 inputs needs .and.popc after its types \
                     (wgmma has no .xor.popc)",
                ));
            }
        }
        // N: multiples of 8 up to 256; integer inputs 8, 16, 24 and multiples of 16.
        let n_ok = (8..=256).contains(&n) && n % 8 == 0 && (!int8(a_ty) || n <= 24 || n % 16 == 0);
        if mm != 64 || k != want_k || !n_ok {
            return Err(DecodeError::new(format!(
                "unsupported shape '.{shape}' on 'wgmma.mma_async' with .{a_ty} inputs \
                 (supported: .m64nNk{want_k}, N from 8 to 256 in steps of 8{})",
                if int8(a_ty) { ", 16 above 24" } else { "" }
            )));
        }
        if !accumulators.contains(&d_ty) {
            return Err(DecodeError::new(format!(
                "'wgmma.mma_async' with .{a_ty} inputs does not support a .{d_ty} D"
            )));
        }
        if satfinite && !matches!(a_ty, S8 | U8) {
            return Err(DecodeError::new(format!(
                "'wgmma.mma_async' with .{a_ty} inputs does not take .satfinite"
            )));
        }
        let a_regs = matches!(inst.operands.get(1), Some(ast::Operand::Vector(..)));
        // Operand counts: integers take no scales; only f16/bf16 take transposes; `.sp`
        // adds sp-meta and sp-sel after b-desc.
        let transposes = matches!(a_ty, F16 | Bf16);
        let off = if sparse { 2 } else { 0 };
        let count = off
            + if int8(a_ty) {
                4
            } else if transposes {
                if a_regs {
                    7
                } else {
                    8
                }
            } else {
                6
            };
        self.need_count(inst, count)?;
        // The sparsity selector: a thread pair (0 or 1) for f16/bf16/tf32, all four
        // threads (0) for 8-bit inputs (the ISA's table of sp-sel values).
        let sparse = if sparse {
            let max = if int8(a_ty) || fp8(a_ty) { 0 } else { 1 };
            match &inst.operands[4] {
                ast::Operand::Immediate(Immediate::Int(v), _) if (0..=max).contains(v) => {
                    Some(*v as u8)
                }
                op => {
                    return Err(DecodeError::at(
                        op.span(),
                        format!(
                            "'wgmma.mma_async.sp' with .{a_ty} inputs needs a sparsity \
                             selector constant from 0 to {max}"
                        ),
                    ))
                }
            }
        } else {
            None
        };
        let imm = |i: usize, allowed: &[i64]| -> Result<i64> {
            match &inst.operands[i] {
                ast::Operand::Immediate(Immediate::Int(v), _) if allowed.contains(v) => Ok(*v),
                op => Err(DecodeError::at(
                    op.span(),
                    format!(
                        "'wgmma.mma_async' needs an integer constant ({}) here",
                        allowed
                            .iter()
                            .map(|v| v.to_string())
                            .collect::<Vec<_>>()
                            .join(" or ")
                    ),
                )),
            }
        };
        let (mut neg_a, mut neg_b, mut trans_a, mut trans_b) = (false, false, false, false);
        if count - off >= 6 {
            neg_a = imm(4 + off, &[1, -1])? == -1;
            neg_b = imm(5 + off, &[1, -1])? == -1;
        }
        if count - off == 8 {
            trans_a = imm(6 + off, &[0, 1])? == 1;
            trans_b = imm(7 + off, &[0, 1])? == 1;
        } else if count - off == 7 {
            trans_b = imm(6 + off, &[0, 1])? == 1;
        }
        let op = WgmmaOp {
            n: n as u16,
            k: k as u16,
            d_ty,
            a_ty,
            b_ty,
            a_regs,
            neg_a,
            neg_b,
            trans_a,
            trans_b,
            satfinite,
            sparse,
        };
        // scale-d: a predicate, or the constant 0 or 1.
        let scale_d = match &inst.operands[3 + off] {
            ast::Operand::Immediate(Immediate::Int(v), _) if matches!(v, 0 | 1) => {
                Operand::Imm(*v as u64)
            }
            o => self.src(o, Pred, Fit::Exact)?,
        };
        self.srcs.push(scale_d);
        if a_regs {
            self.fragment(&inst.operands[1], 4, B32, false)?;
        } else {
            let a = self.src(&inst.operands[1], B64, Fit::Exact)?;
            self.srcs.push(a);
        }
        let b = self.src(&inst.operands[2], B64, Fit::Exact)?;
        self.srcs.push(b);
        let nd = op.d_regs();
        if nd > u16::from(u8::MAX) {
            return Err(DecodeError::new("'wgmma.mma_async': too many D registers"));
        }
        // D is the accumulator read (scale-d) and the result written.
        let d_reg_ty = if d_ty == F16 { B32 } else { d_ty };
        self.fragment(&inst.operands[0], nd as u8, d_reg_ty, false)?;
        self.fragment(&inst.operands[0], nd as u8, d_reg_ty, true)?;
        if op.sparse.is_some() {
            // sp-meta: the last source (after D's registers).
            let e = self.src(&inst.operands[3], B32, Fit::Exact)?;
            self.srcs.push(e);
        }
        Ok(Op::Wgmma(op))
    }

    /// `ldmatrix.sync.aligned.m8n8.xN{.trans}{.shared{::cta}}.b16 {d..}, [p]` and
    /// (`store`) `stmatrix.sync.aligned.m8n8.xN{.trans}{.shared{::cta}}.b16 [p], {r..}`
    /// (ISA 7.8).
    fn decode_matrix8x8(
        &mut self,
        inst: &ast::Instruction,
        m: &mut Mods<'_>,
        store: bool,
    ) -> Result<Op> {
        let name = if store { "stmatrix" } else { "ldmatrix" };
        self.sync_aligned(inst, m)?;
        if !m.other("m8n8") {
            return Err(DecodeError::new(format!(
                "'{name}' supports the .m8n8 shape only"
            )));
        }
        let count = m
            .pick_other(&[("x1", 1u8), ("x2", 2), ("x4", 4)])
            .ok_or_else(|| DecodeError::new(format!("'{name}' needs .x1, .x2 or .x4")))?;
        let trans = m.other("trans");
        let space = self.matrix_space(inst, m)?;
        if space == Space::Global {
            return Err(DecodeError::new(format!(
                "'{name}' accesses .shared memory"
            )));
        }
        let ty = m.need_ty()?;
        if ty != B16 {
            return Err(DecodeError::new(format!(
                "type .{ty} is not supported by '{name}' (supported: .b16)"
            )));
        }
        self.need_count(inst, 2)?;
        let (regs, addr) = if store {
            (&inst.operands[1], &inst.operands[0])
        } else {
            (&inst.operands[0], &inst.operands[1])
        };
        let a = self.address(addr)?;
        self.srcs.push(a);
        let r = self.vector(regs, count, B32, Fit::Exact, !store)?;
        let l = Ldmatrix {
            count,
            trans,
            space,
        };
        Ok(if store {
            self.srcs.extend(r);
            Op::Stmatrix(l)
        } else {
            self.dsts.extend(r);
            Op::Ldmatrix(l)
        })
    }

    /// `movmatrix.sync.aligned.m8n8.trans.b16 d, a` (ISA 7.8): the only shape, type and
    /// direction the ISA defines.
    fn decode_movmatrix(&mut self, inst: &ast::Instruction, m: &mut Mods<'_>) -> Result<Op> {
        self.sync_aligned(inst, m)?;
        if !m.other("m8n8") {
            return Err(DecodeError::new(
                "'movmatrix' supports the .m8n8 shape only",
            ));
        }
        if !m.other("trans") {
            return Err(DecodeError::new("'movmatrix' needs .trans"));
        }
        let ty = m.need_ty()?;
        if ty != B16 {
            return Err(DecodeError::new(format!(
                "type .{ty} is not supported by 'movmatrix' (supported: .b16)"
            )));
        }
        self.need_count(inst, 2)?;
        let d = self.dst(&inst.operands[0], B32, Fit::Exact)?;
        self.dsts.push(d);
        let a = self.src(&inst.operands[1], B32, Fit::Exact)?;
        self.srcs.push(a);
        Ok(Op::Movmatrix)
    }

    /// `fence.proxy.alias` and `fence.proxy.async{.global, .shared::{cta,cluster}}`.
    fn decode_fence_proxy(&mut self, inst: &ast::Instruction, m: &mut Mods<'_>) -> Result<Op> {
        let fence = if m.other("alias") {
            ProxyFence::Alias
        } else if m.other("async") {
            let space = if m.other("shared::cta") {
                Space::Shared
            } else {
                match m.space() {
                    None => Space::Generic,
                    Some(StateSpace::Global) => Space::Global,
                    Some(StateSpace::Shared | StateSpace::SharedCta) => Space::Shared,
                    Some(StateSpace::SharedCluster) => Space::SharedCluster,
                    Some(s) => {
                        return Err(DecodeError::new(format!(
                            "'fence.proxy.async' cannot name .{s}"
                        )))
                    }
                }
            };
            ProxyFence::Async(space)
        } else {
            return Err(DecodeError::new(
                "unsupported 'fence.proxy' form (.alias and .async are supported; \
                 tensormap proxies are not modelled)",
            ));
        };
        self.need_count(inst, 0)?;
        Ok(Op::FenceProxy(fence))
    }

    /// `mbarrier.{init, arrive, arrive_drop, expect_tx, complete_tx, test_wait, try_wait,
    /// pending_count, inval}` (ISA §9.7.13.15).
    fn decode_mbarrier(&mut self, inst: &ast::Instruction, m: &mut Mods<'_>) -> Result<Op> {
        let arrive = m.flag(Flag::Arrive);
        let kind = if arrive || m.other("arrive_drop") {
            MbarrierKind::Arrive {
                drop: !arrive,
                no_complete: m.other("noComplete"),
                expect_tx: m.other("expect_tx"),
            }
        } else if let Some(k) = m.pick_other(&[
            ("init", MbarrierKind::Init),
            ("expect_tx", MbarrierKind::ExpectTx),
            ("complete_tx", MbarrierKind::CompleteTx),
            ("pending_count", MbarrierKind::PendingCount),
            ("inval", MbarrierKind::Inval),
        ]) {
            k
        } else if let Some(try_wait) = m.pick_other(&[("test_wait", false), ("try_wait", true)]) {
            MbarrierKind::Wait {
                try_wait,
                parity: m.other("parity"),
            }
        } else {
            return Err(DecodeError::new(
                "unsupported instruction 'mbarrier' (init, arrive, arrive_drop, expect_tx, \
                 complete_tx, test_wait, try_wait, pending_count and inval are supported)",
            ));
        };
        // Ordering qualifiers: see `MbarrierKind`.
        m.pick(&[
            (Flag::Release, ()),
            (Flag::Acquire, ()),
            (Flag::Relaxed, ()),
        ]);
        m.pick(&[(Flag::Cta, ()), (Flag::Cluster, ())]);
        // PTX ISA 8.0: an arrive may name an mbarrier of another CTA of the cluster
        // (`.shared::cluster`, with the sink `_` as destination).
        let remote_arrive = matches!(kind, MbarrierKind::Arrive { .. });
        let space = if kind == MbarrierKind::PendingCount {
            Space::Generic
        } else {
            self.mbarrier_space(inst, m, remote_arrive)?
        };
        let ty = m.need_ty()?;
        self.check_ty(inst, ty, &[B64])?;
        let n = inst.operands.len();
        let ops = &inst.operands;
        let count_ok = match kind {
            MbarrierKind::Init | MbarrierKind::ExpectTx | MbarrierKind::CompleteTx => n == 2,
            MbarrierKind::Arrive {
                expect_tx: true, ..
            } => n == 3,
            MbarrierKind::Arrive { no_complete, .. } => n == 3 || (n == 2 && !no_complete),
            MbarrierKind::Wait { try_wait, .. } => n == 3 || (try_wait && n == 4),
            MbarrierKind::PendingCount => n == 2,
            MbarrierKind::Inval => n == 1,
            MbarrierKind::CpAsyncArrive { .. } => n == 1,
        };
        if !count_ok {
            return Err(DecodeError::new(format!(
                "wrong number of operands ({n}) for '{}'",
                Op::Mbarrier(Mbarrier { kind, space })
            )));
        }
        match kind {
            MbarrierKind::PendingCount => {
                let d = self.dst(&ops[0], U32, Fit::Exact)?;
                let s = self.src(&ops[1], B64, Fit::Exact)?;
                self.dsts.push(d);
                self.srcs.push(s);
            }
            MbarrierKind::Arrive { .. } => {
                let d = self.dst_or_sink(&ops[0], B64, Fit::Exact)?;
                self.dsts.push(d);
                let a = self.address(&ops[1])?;
                self.srcs.push(a);
                if n == 3 {
                    let c = self.src(&ops[2], U32, Fit::Exact)?;
                    self.srcs.push(c);
                }
            }
            MbarrierKind::Wait { parity, .. } => {
                let p = match &ops[0] {
                    ast::Operand::Name { name, .. } => self.pred_dst(name)?,
                    op => {
                        return Err(DecodeError::at(
                            op.span(),
                            "expected a predicate destination",
                        ))
                    }
                };
                self.dsts.push(p);
                let a = self.address(&ops[1])?;
                let s = self.src(&ops[2], if parity { U32 } else { B64 }, Fit::Exact)?;
                self.srcs.extend([a, s]);
                if n == 4 {
                    let h = self.src(&ops[3], U32, Fit::Exact)?;
                    self.srcs.push(h);
                }
            }
            _ => {
                let a = self.address(&ops[0])?;
                self.srcs.push(a);
                if n == 2 {
                    let c = self.src(&ops[1], U32, Fit::Exact)?;
                    self.srcs.push(c);
                }
            }
        }
        Ok(Op::Mbarrier(Mbarrier { kind, space }))
    }

    /// An mbarrier's state space: `.shared{::cta}` or generic.
    fn mbarrier_space(
        &self,
        inst: &ast::Instruction,
        m: &mut Mods<'_>,
        cluster: bool,
    ) -> Result<Space> {
        if m.other("shared::cta") {
            return Ok(Space::Shared);
        }
        if cluster && m.other("shared::cluster") {
            return Ok(Space::SharedCluster);
        }
        match m.space() {
            None => Ok(Space::Generic),
            Some(StateSpace::SharedCluster) if cluster => Ok(Space::SharedCluster),
            Some(StateSpace::Shared | StateSpace::SharedCta) => Ok(Space::Shared),
            Some(s) => Err(DecodeError::new(format!(
                "'{}' on .{s} is not supported (mbarriers live in .shared memory; only \
                 an arrive may name another CTA's, with .shared::cluster)",
                inst.opcode
            ))),
        }
    }

    fn decode_cp(&mut self, inst: &ast::Instruction, m: &mut Mods<'_>) -> Result<Op> {
        if !m.other("async") {
            return Err(DecodeError::new(
                "unsupported instruction 'cp' (only cp.async is supported)",
            ));
        }
        if m.other("mbarrier") {
            if !m.flag(Flag::Arrive) {
                return Err(DecodeError::new("'cp.async.mbarrier' needs .arrive"));
            }
            let noinc = m.other("noinc");
            let space = self.mbarrier_space(inst, m, false)?;
            let ty = m.need_ty()?;
            self.check_ty(inst, ty, &[B64])?;
            self.need_count(inst, 1)?;
            let a = self.address(&inst.operands[0])?;
            self.srcs.push(a);
            return Ok(Op::Mbarrier(Mbarrier {
                kind: MbarrierKind::CpAsyncArrive { noinc },
                space,
            }));
        }
        if m.other("bulk") {
            return self.decode_cp_async_bulk(inst, m);
        }
        if m.other("commit_group") {
            self.need_count(inst, 0)?;
            return Ok(Op::CpAsyncCommit);
        }
        if m.other("wait_all") {
            self.need_count(inst, 0)?;
            return Ok(Op::CpAsyncWait { all: true });
        }
        if m.other("wait_group") {
            self.group_count(inst, "cp.async.wait_group", 255)?;
            return Ok(Op::CpAsyncWait { all: false });
        }
        let cache = m
            .pick(&[(Flag::Ca, CacheOp::Ca), (Flag::Cg, CacheOp::Cg)])
            .ok_or_else(|| DecodeError::new("'cp.async' needs .ca or .cg"))?;
        let shared = m
            .take(|x| *x == Modifier::Space(StateSpace::Shared))
            .is_some()
            || m.other("shared::cta");
        if !shared
            || m.take(|x| *x == Modifier::Space(StateSpace::Global))
                .is_none()
        {
            return Err(DecodeError::new("'cp.async' copies .shared.global only"));
        }
        let hints = mem_hints(m);
        if hints.l1.is_some() || hints.l2.is_some() {
            return Err(DecodeError::new("'cp.async' takes no eviction priority"));
        }
        let n = inst.operands.len() - hints.cache_hint as usize;
        if !(3..=4).contains(&n) {
            return Err(DecodeError::new(format!(
                "'cp.async' expects {} or {} operands, found {}",
                3 + hints.cache_hint as usize,
                4 + hints.cache_hint as usize,
                inst.operands.len()
            )));
        }
        let d = self.address(&inst.operands[0])?;
        let a = self.address(&inst.operands[1])?;
        let size = match &inst.operands[2] {
            ast::Operand::Immediate(Immediate::Int(n @ (4 | 8 | 16)), _) => *n as u8,
            op => {
                return Err(DecodeError::at(
                    op.span(),
                    "'cp.async' copies 4, 8 or 16 bytes",
                ))
            }
        };
        if cache == CacheOp::Cg && size != 16 {
            return Err(DecodeError::new("'cp.async.cg' copies 16 bytes"));
        }
        self.srcs.extend([d, a, Operand::Imm(size as u64)]);
        let src_size = n == 4;
        if src_size {
            let s = self.src(&inst.operands[3], U32, Fit::Exact)?;
            self.srcs.push(s);
        }
        self.cache_policy_operand(inst, hints)?;
        Ok(Op::CpAsync(CpAsync {
            cache,
            size,
            src_size,
            hints,
        }))
    }

    /// `setmaxnreg.{inc,dec}.sync.aligned.u32 imm` (PTX ISA 8.0, sm_90a): the count is an
    /// integer constant from 24 to 256, a multiple of 8.
    fn decode_setmaxnreg(&mut self, inst: &ast::Instruction, m: &mut Mods<'_>) -> Result<Op> {
        let inc = m
            .pick(&[(Flag::Inc, true), (Flag::Dec, false)])
            .ok_or_else(|| DecodeError::new("'setmaxnreg' needs .inc or .dec"))?;
        self.sync_aligned(inst, m)?;
        let ty = m.need_ty()?;
        self.check_ty(inst, ty, &[U32])?;
        self.need_count(inst, 1)?;
        let count = match &inst.operands[0] {
            ast::Operand::Immediate(Immediate::Int(n), _)
                if (24..=256).contains(n) && n % 8 == 0 =>
            {
                *n as u16
            }
            op => {
                return Err(DecodeError::at(
                    op.span(),
                    "'setmaxnreg' needs an integer constant from 24 to 256, a multiple of 8 \
                     (the per-thread register count)",
                ))
            }
        };
        self.srcs.push(Operand::Imm(u64::from(count)));
        Ok(Op::Setmaxnreg { inc, count })
    }

    /// The one operand of a `wait_group`: the groups that may stay pending, an integer
    /// constant from 0 to `max`.
    fn group_count(&mut self, inst: &ast::Instruction, what: &str, max: i64) -> Result<()> {
        self.need_count(inst, 1)?;
        match &inst.operands[0] {
            ast::Operand::Immediate(Immediate::Int(n), _) if (0..=max).contains(n) => {
                self.srcs.push(Operand::Imm(*n as u64));
                Ok(())
            }
            op => Err(DecodeError::at(
                op.span(),
                format!("'{what}' needs an integer constant 0..{max}"),
            )),
        }
    }

    /// `cp.async.bulk` without `.tensor` (PTX ISA 8.0): global to the CTA's shared memory
    /// completing on an mbarrier, shared memory to global in bulk async-groups, and the
    /// groups' `commit_group`/`wait_group{.read}`.
    fn decode_cp_async_bulk(&mut self, inst: &ast::Instruction, m: &mut Mods<'_>) -> Result<Op> {
        if m.other("commit_group") {
            self.need_count(inst, 0)?;
            return Ok(Op::CpAsyncBulkCommit);
        }
        if m.other("wait_group") {
            let read = m.other("read");
            self.group_count(inst, "cp.async.bulk.wait_group", 63)?;
            return Ok(Op::CpAsyncBulkWait { read });
        }
        if m.other("prefetch") {
            return Err(DecodeError::new(
                "unsupported instruction 'cp.async.bulk.prefetch' (not modelled)",
            ));
        }
        if m.other("tensor") {
            return self.decode_cp_async_bulk_tensor(inst, m);
        }
        let (direction, mbarrier, hints) = bulk_direction(inst, m, "cp.async.bulk")?;
        let multicast = direction.multicast();
        let n = 3 + usize::from(mbarrier) + usize::from(multicast) + usize::from(hints.cache_hint);
        self.need_count(inst, n)?;
        let d = self.address(&inst.operands[0])?;
        let a = self.address(&inst.operands[1])?;
        if let ast::Operand::Immediate(Immediate::Int(s), _) = &inst.operands[2] {
            if *s <= 0 || s % 16 != 0 {
                return Err(DecodeError::at(
                    inst.operands[2].span(),
                    "'cp.async.bulk' copies a positive multiple of 16 bytes",
                ));
            }
        }
        let size = self.src(&inst.operands[2], U32, Fit::Exact)?;
        self.srcs.extend([d, a, size]);
        if mbarrier {
            let b = self.address(&inst.operands[3])?;
            self.srcs.push(b);
        }
        if multicast {
            self.cta_mask_operand(&inst.operands[4])?;
        }
        self.cache_policy_operand(inst, hints)?;
        Ok(Op::CpAsyncBulk(CpAsyncBulk { direction, hints }))
    }

    /// `cp.async.bulk.tensor.Nd` in tile mode (PTX ISA 8.0, sm_90): global to the CTA's
    /// shared memory completing on an mbarrier, or shared memory to global in bulk
    /// async-groups; the box comes from the tensor map operand `[map, {c0, ...}]`.
    fn decode_cp_async_bulk_tensor(
        &mut self,
        inst: &ast::Instruction,
        m: &mut Mods<'_>,
    ) -> Result<Op> {
        const NOT_MODELLED: [(&str, &str); 7] = [
            ("im2col::w", "im2col::w mode"),
            ("im2col::w::128", "im2col::w::128 mode"),
            ("im2col_no_offs", "im2col mode without offsets"),
            ("tile::gather4", "gather4 mode"),
            ("tile::scatter4", "scatter4 mode"),
            ("cta_group::1", "CTA-pair copies (sm_100)"),
            ("cta_group::2", "CTA-pair copies (sm_100)"),
        ];
        for (q, what) in NOT_MODELLED {
            if m.other(q) {
                return Err(DecodeError::new(format!(
                    "'cp.async.bulk.tensor' with .{q} is not supported ({what}; regsim \
                     models tile and im2col modes)"
                )));
            }
        }
        let dims = m
            .pick(&[(Flag::Dim1d, 1u8), (Flag::Dim2d, 2), (Flag::Dim3d, 3)])
            .or_else(|| m.pick_other(&[("4d", 4), ("5d", 5)]))
            .ok_or_else(|| {
                DecodeError::new("'cp.async.bulk.tensor' needs a dimension (.1d to .5d)")
            })?;
        let im2col = m.other("im2col");
        if !im2col {
            m.other("tile");
        }
        let (direction, mbarrier, hints) = bulk_direction(inst, m, "cp.async.bulk.tensor")?;
        let multicast = direction.multicast();
        if im2col && (!mbarrier || dims < 3) {
            return Err(DecodeError::new(
                "'cp.async.bulk.tensor' with .im2col copies a 3- to 5-D tensor from global \
                 to shared memory (.shared::cluster.global.mbarrier::complete_tx::bytes)",
            ));
        }
        let n = 2
            + usize::from(mbarrier)
            + usize::from(im2col)
            + usize::from(multicast)
            + usize::from(hints.cache_hint);
        self.need_count(inst, n)?;
        let to_shared = mbarrier;
        let (map_op, shared_op) = if to_shared {
            (&inst.operands[1], &inst.operands[0])
        } else {
            (&inst.operands[0], &inst.operands[1])
        };
        let expected = "expected '[tensorMap, {coordinates}]'";
        let ast::Operand::TextureAddress(items, span) = map_op else {
            return Err(DecodeError::at(map_op.span(), expected));
        };
        let [ast::Operand::Name {
            name,
            component: None,
        }, ast::Operand::Vector(coords, cspan)] = items.as_slice()
        else {
            return Err(DecodeError::at(*span, expected));
        };
        if coords.len() != usize::from(dims) {
            return Err(DecodeError::at(
                *cspan,
                format!(
                    "'cp.async.bulk.tensor.{dims}d' needs {dims} coordinates, found {}",
                    coords.len()
                ),
            ));
        }
        let map = self.address(&ast::Operand::Address(ast::Address {
            base: ast::AddressBase::Name(name.clone()),
            offset: 0,
            span: name.span,
        }))?;
        self.srcs.push(map);
        for c in coords {
            let c = self.src(c, S32, Fit::Exact)?;
            self.srcs.push(c);
        }
        let shared = self.address(shared_op)?;
        self.srcs.push(shared);
        if mbarrier {
            let b = self.address(&inst.operands[2])?;
            self.srcs.push(b);
        }
        // PTX ISA order: [dst], [map, coords], [mbar] {, im2colOffsets} {, ctaMask}
        // {, cache-policy}.
        if im2col {
            self.im2col_offsets(&inst.operands[3], dims)?;
        }
        if multicast {
            self.cta_mask_operand(&inst.operands[3 + usize::from(im2col)])?;
        }
        self.cache_policy_operand(inst, hints)?;
        Ok(Op::CpAsyncBulkTensor(CpAsyncBulkTensor {
            direction,
            dims,
            im2col,
            hints,
        }))
    }

    /// The 16-bit ctaMask of a `.multicast::cluster` bulk copy (PTX ISA 8.0,
    /// `cp.async.bulk`): bit `r` names the CTA of rank `r` in the cluster.
    fn cta_mask_operand(&mut self, op: &ast::Operand) -> Result<()> {
        if let ast::Operand::Immediate(Immediate::Int(v), span) = op {
            if !(0..=0xFFFF).contains(v) {
                return Err(DecodeError::at(
                    *span,
                    "the ctaMask of a .multicast::cluster copy is a 16-bit value",
                ));
            }
        }
        let mask = self.src(op, B16, Fit::Exact)?;
        self.srcs.push(mask);
        Ok(())
    }

    /// The im2col offsets of a `.Nd` tensor copy: a vector of `N - 2` 16-bit values
    /// (registers or constants), W first (PTX ISA "cp.async.bulk.tensor": `im2colInfo`).
    fn im2col_offsets(&mut self, op: &ast::Operand, dims: u8) -> Result<()> {
        let want = usize::from(dims) - 2;
        let ast::Operand::Vector(items, span) = op else {
            return Err(DecodeError::at(
                op.span(),
                format!(
                    "'cp.async.bulk.tensor.{dims}d.im2col' needs {want} im2col offsets in braces"
                ),
            ));
        };
        if items.len() != want {
            return Err(DecodeError::at(
                *span,
                format!(
                    "'cp.async.bulk.tensor.{dims}d.im2col' needs {want} im2col offsets, found {}",
                    items.len()
                ),
            ));
        }
        for item in items {
            let o = self.src(item, B16, Fit::Exact)?;
            self.srcs.push(o);
        }
        Ok(())
    }

    fn decode_createpolicy(&mut self, inst: &ast::Instruction, m: &mut Mods<'_>) -> Result<Op> {
        use Eviction as E;
        let form = m
            .pick_other(&[("fractional", 0), ("range", 1), ("cvt", 2)])
            .ok_or_else(|| DecodeError::new("'createpolicy' needs .fractional, .range or .cvt"))?;
        let ty = m.need_ty()?;
        self.check_ty(inst, ty, &[B64])?;
        let d = self.dst(
            inst.operands
                .first()
                .ok_or_else(|| DecodeError::new("'createpolicy' needs a destination"))?,
            B64,
            Fit::Exact,
        )?;
        self.dsts.push(d);
        let kind = if form == 2 {
            if !m.other("L2") {
                return Err(DecodeError::new("'createpolicy.cvt' needs .L2"));
            }
            self.need_count(inst, 2)?;
            let a = self.src(&inst.operands[1], B64, Fit::Exact)?;
            self.srcs.push(a);
            PolicyKind::Cvt
        } else {
            let primary = m
                .pick_other(&[
                    ("L2::evict_last", E::Last),
                    ("L2::evict_normal", E::Normal),
                    ("L2::evict_first", E::First),
                    ("L2::evict_unchanged", E::Unchanged),
                ])
                .ok_or_else(|| DecodeError::new("'createpolicy' needs a primary priority"))?;
            let secondary = m.pick_other(&[
                ("L2::evict_first", E::First),
                ("L2::evict_unchanged", E::Unchanged),
            ]);
            if form == 0 {
                m.take(|x| *x == Modifier::Space(StateSpace::Global));
                match inst.operands.len() {
                    1 => self.srcs.push(Operand::Imm(1.0f32.to_bits() as u64)),
                    2 => {
                        let f = self.src(&inst.operands[1], F32, Fit::Exact)?;
                        self.srcs.push(f);
                    }
                    n => {
                        return Err(DecodeError::new(format!(
                            "'createpolicy.fractional' expects 1 or 2 operands, found {n}"
                        )))
                    }
                }
                PolicyKind::Fractional { primary, secondary }
            } else {
                m.take(|x| *x == Modifier::Space(StateSpace::Global));
                self.need_count(inst, 4)?;
                let a = self.address(&inst.operands[1])?;
                let p = self.src(&inst.operands[2], U32, Fit::Exact)?;
                let t = self.src(&inst.operands[3], U32, Fit::Exact)?;
                self.srcs.extend([a, p, t]);
                PolicyKind::Range { primary, secondary }
            }
        };
        Ok(Op::CreatePolicy(kind))
    }

    fn pred_dst(&self, name: &ast::Ident) -> Result<Operand> {
        if name.name == "_" {
            return Ok(Operand::Sink);
        }
        let r = self.name_reg(name, None)?;
        self.check_fit(r, Pred, Fit::Exact, name.span)?;
        Ok(Operand::Reg(r))
    }

    /// `d` or `d|p` destinations (shfl, match.all).
    fn value_and_pred_dst(&mut self, op: &ast::Operand, ty: ScalarType) -> Result<()> {
        match op {
            ast::Operand::PredicatePair(d, p) => {
                let d = if d.name == "_" {
                    Operand::Sink
                } else {
                    let r = self.name_reg(d, None)?;
                    self.check_fit(r, ty, Fit::Exact, d.span)?;
                    Operand::Reg(r)
                };
                let p = self.pred_dst(p)?;
                self.dsts.extend([d, p]);
            }
            _ => {
                let d = self.dst_or_sink(op, ty, Fit::Exact)?;
                self.dsts.push(d);
            }
        }
        Ok(())
    }

    fn decode_mov(&mut self, inst: &ast::Instruction, m: &mut Mods<'_>) -> Result<Op> {
        let ty = m.need_ty()?;
        if matches!(ty, S4 | U4 | E4m3 | E5m2 | Tf32 | B128) {
            return Err(DecodeError::new(format!(
                "type .{ty} is not supported by 'mov'"
            )));
        }
        self.need_count(inst, 2)?;
        let (d, a) = (&inst.operands[0], &inst.operands[1]);
        if let ast::Operand::Vector(items, _) = d {
            let lanes = items.len() as u8;
            let elem = self.pack_elem(ty, lanes)?;
            self.dsts = self.vector(d, lanes, elem, Fit::Exact, true)?;
            let a = self.src(a, ty, Fit::Exact)?;
            self.srcs.push(a);
            return Ok(Op::Unpack { ty, lanes });
        }
        if let ast::Operand::Vector(items, _) = a {
            let lanes = items.len() as u8;
            let elem = self.pack_elem(ty, lanes)?;
            let d = self.dst(d, ty, Fit::Exact)?;
            self.dsts.push(d);
            self.srcs = self.vector(a, lanes, elem, Fit::Exact, false)?;
            return Ok(Op::Pack { ty, lanes });
        }
        let dst = self.dst(d, ty, Fit::Exact)?;
        let src = self.src_value(a, ty, Fit::Exact, true)?;
        self.dsts.push(dst);
        self.srcs.push(src);
        Ok(Op::Mov { ty })
    }

    /// Element type of `mov.bN` vector packing: N / lanes bits.
    fn pack_elem(&self, ty: ScalarType, lanes: u8) -> Result<ScalarType> {
        let bits = ty.bits() / lanes.max(1) as u32;
        let elem = match bits {
            8 => B8,
            16 => B16,
            32 => B32,
            _ => {
                return Err(DecodeError::new(format!(
                    "cannot split .{ty} into {lanes} lanes"
                )))
            }
        };
        if kind(ty) != Kind::Bits || !matches!(lanes, 2 | 4) {
            return Err(DecodeError::new(format!(
                "vector 'mov' needs a .b32 or .b64 type, not .{ty}"
            )));
        }
        Ok(elem)
    }

    fn decode_cvt(&mut self, inst: &ast::Instruction, m: &mut Mods<'_>) -> Result<Op> {
        let rounding = m.rounding();
        let ftz = m.flag(Flag::Ftz);
        let sat = m.flag(Flag::Sat);
        let relu = m.flag(Flag::Relu);
        let satfinite = m.flag(Flag::Satfinite);
        let dst = m.need_ty()?;
        let src = m.need_ty()?;
        if dst == Tf32 {
            return self.decode_cvt_tf32(inst, src, rounding, ftz || sat, relu, satfinite);
        }
        if satfinite {
            return Err(DecodeError::new("'.satfinite' on 'cvt' is not supported"));
        }
        let supported = |t: ScalarType| {
            matches!(
                t,
                S8 | S16 | S32 | S64 | U8 | U16 | U32 | U64 | F16 | Bf16 | F32 | F64
            ) || (t == F16x2 || t == Bf16x2) && t == dst
        };
        if !supported(dst) || !supported(src) || src.is_float() && matches!(src, F16x2 | Bf16x2) {
            return Err(DecodeError::new(format!(
                "'cvt.{dst}.{src}' is not supported"
            )));
        }
        let (df, sf) = (dst.is_float(), src.is_float());
        let needs = if df && sf {
            if dst.bits() < src.bits() || matches!(dst, F16x2 | Bf16x2) {
                Some(true)
            } else if dst == src {
                None
            } else {
                Some(false)
            }
        } else if df || sf {
            Some(true)
        } else {
            Some(false)
        };
        match (needs, rounding) {
            // Float results need a float rounding; float-to-int needs an integer rounding.
            (Some(true), Some(r)) if df && r.is_float_rounding() => {}
            (Some(true), Some(r)) if !df && r.is_integer_rounding() => {}
            (Some(true), _) => {
                return Err(DecodeError::new(format!(
                    "'cvt.{dst}.{src}' needs a valid rounding modifier"
                )))
            }
            (Some(false), None) => {}
            (Some(false), Some(r)) => {
                return Err(DecodeError::new(format!(
                    "'.{}' is not allowed on 'cvt.{dst}.{src}'",
                    r.as_str()
                )))
            }
            (None, None) => {}
            (None, Some(r)) if r.is_integer_rounding() => {}
            (None, Some(r)) => {
                return Err(DecodeError::new(format!(
                    "'.{}' is not allowed on 'cvt.{dst}.{src}'",
                    r.as_str()
                )))
            }
        }
        if relu && !matches!(dst, F16 | F16x2 | Bf16 | Bf16x2) {
            return Err(DecodeError::new(
                "'.relu' on 'cvt' needs a half-precision destination",
            ));
        }
        let packed = matches!(dst, F16x2 | Bf16x2);
        self.need_count(inst, if packed { 3 } else { 2 })?;
        let d = self.dst(&inst.operands[0], dst, Fit::Wider)?;
        self.dsts.push(d);
        for op in &inst.operands[1..] {
            let a = self.src_value(op, src, Fit::Wider, false)?;
            self.srcs.push(a);
        }
        Ok(Op::Cvt {
            dst,
            src,
            rounding,
            ftz,
            sat,
            relu,
            satfinite: false,
        })
    }

    /// `cvt.rna{.satfinite}.tf32.f32 d, a` (sm_80) and `cvt.{rn,rz}{.satfinite}{.relu}.tf32.f32
    /// d, a` (sm_90; `.rn.satfinite` sm_100): `d` is a 32-bit register holding the tf32
    /// value in f32's layout.
    fn decode_cvt_tf32(
        &mut self,
        inst: &ast::Instruction,
        src: ScalarType,
        rounding: Option<Rounding>,
        ftz_or_sat: bool,
        relu: bool,
        satfinite: bool,
    ) -> Result<Op> {
        if src != F32 {
            return Err(DecodeError::new(format!(
                "'cvt.tf32.{src}' is not supported (tf32 converts from .f32 only)"
            )));
        }
        match rounding {
            Some(Rounding::Rna | Rounding::Rn | Rounding::Rz) => {}
            Some(r) => {
                return Err(DecodeError::new(format!(
                    "'.{}' is not allowed on 'cvt.tf32.f32' (use .rna, .rn or .rz)",
                    r.as_str()
                )))
            }
            None => {
                return Err(DecodeError::new(
                    "'cvt.tf32.f32' needs a rounding modifier (.rna, .rn or .rz)",
                ))
            }
        }
        if ftz_or_sat {
            return Err(DecodeError::new(
                "'.ftz' and '.sat' are not allowed on 'cvt.tf32.f32'",
            ));
        }
        if relu && rounding == Some(Rounding::Rna) {
            return Err(DecodeError::new(
                "'.relu' is not allowed on 'cvt.rna.tf32.f32' (only with .rn or .rz)",
            ));
        }
        self.need_count(inst, 2)?;
        let d = self.dst(&inst.operands[0], B32, Fit::Exact)?;
        self.dsts.push(d);
        let a = self.src_value(&inst.operands[1], F32, Fit::Exact, false)?;
        self.srcs.push(a);
        Ok(Op::Cvt {
            dst: Tf32,
            src: F32,
            rounding,
            ftz: false,
            sat: false,
            relu,
            satfinite,
        })
    }

    /// `.volatile`, `.mmio.relaxed.sys`, or `.sem.scope`. Atomics may write a scope alone
    /// (`atom.sys.add`), which is relaxed at that scope.
    fn mem_order(&self, m: &mut Mods<'_>, scope_alone: bool) -> Result<MemOrder> {
        let volatile = m.flag(Flag::Volatile);
        let weak = m.flag(Flag::Weak);
        let mmio = m.flag(Flag::Mmio);
        let sem = m.pick(&[
            (Flag::Relaxed, 0),
            (Flag::Acquire, 1),
            (Flag::Release, 2),
            (Flag::AcqRel, 3),
        ]);
        let scope = m.scope();
        Ok(match (volatile, weak, mmio, sem, scope) {
            (false, _, false, None, None) => MemOrder::Weak,
            (true, false, false, None, None) => MemOrder::Volatile,
            (false, false, true, Some(0), Some(Scope::Sys)) => MemOrder::Mmio,
            (false, false, false, Some(s), Some(scope)) => match s {
                0 => MemOrder::Relaxed(scope),
                1 => MemOrder::Acquire(scope),
                2 => MemOrder::Release(scope),
                _ => MemOrder::AcqRel(scope),
            },
            (false, false, false, None, Some(scope)) if scope_alone => MemOrder::Relaxed(scope),
            (false, false, false, Some(_), None) => {
                return Err(DecodeError::new(
                    "a memory-ordering qualifier needs a scope",
                ))
            }
            _ => return Err(DecodeError::new("conflicting memory-ordering qualifiers")),
        })
    }

    fn decode_ld_st(&mut self, inst: &ast::Instruction, m: &mut Mods<'_>) -> Result<Op> {
        let opc = inst.opcode;
        if opc == Opcode::St && m.other("async") {
            return self.decode_st_async(inst, m);
        }
        let order = self.mem_order(m, false)?;
        let space = match m.space() {
            None => Space::Generic,
            Some(s) => space_of(s)
                .ok_or_else(|| DecodeError::new(format!("'{opc}' cannot access .{s}")))?,
        };
        let cache = m
            .pick(&[
                (Flag::Ca, CacheOp::Ca),
                (Flag::Cg, CacheOp::Cg),
                (Flag::Cs, CacheOp::Cs),
                (Flag::Lu, CacheOp::Lu),
                (Flag::Cv, CacheOp::Cv),
                (Flag::Wb, CacheOp::Wb),
                (Flag::Wt, CacheOp::Wt),
            ])
            .unwrap_or(CacheOp::Default);
        let nc = opc == Opcode::Ld && m.flag(Flag::Nc);
        let hints = mem_hints(m);
        let lanes = m.vector().unwrap_or(1);
        let ty = m.need_ty()?;
        if matches!(ty, Pred | S4 | U4 | B128 | Tf32 | E4m3 | E5m2) {
            return Err(DecodeError::new(format!(
                "type .{ty} is not supported by '{opc}'"
            )));
        }
        let is_load = opc != Opcode::St;
        let cache_ok = match cache {
            CacheOp::Default => true,
            CacheOp::Ca | CacheOp::Lu | CacheOp::Cv => is_load,
            CacheOp::Wb | CacheOp::Wt => !is_load,
            CacheOp::Cg | CacheOp::Cs => true,
        };
        if !cache_ok {
            return Err(DecodeError::new(format!(
                "cache operator '.{}' is not valid on '{opc}'",
                cache.as_str()
            )));
        }
        if nc && space != Space::Global {
            return Err(DecodeError::new("'.nc' needs .global"));
        }
        if opc == Opcode::Ldu && !matches!(space, Space::Global | Space::Generic) {
            return Err(DecodeError::new("'ldu' reads .global memory only"));
        }
        if order != MemOrder::Weak && (nc || cache != CacheOp::Default || opc == Opcode::Ldu) {
            return Err(DecodeError::new(
                "memory-ordering qualifiers exclude cache operators and .nc",
            ));
        }
        match order {
            MemOrder::Acquire(_) if !is_load => {
                return Err(DecodeError::new("'st' cannot be .acquire"))
            }
            MemOrder::Release(_) if is_load => {
                return Err(DecodeError::new("'ld' cannot be .release"))
            }
            MemOrder::AcqRel(_) => {
                return Err(DecodeError::new(format!("'{opc}' cannot be .acq_rel")))
            }
            _ => {}
        }
        self.need_count(inst, 2 + hints.cache_hint as usize)?;
        let access = MemAccess {
            space,
            ty,
            lanes,
            order,
            cache,
            nc,
            hints,
            complete_tx: false,
        };
        if is_load {
            if lanes == 1 {
                let d = self.dst(&inst.operands[0], ty, Fit::Wider)?;
                self.dsts.push(d);
            } else {
                self.dsts = self.vector(&inst.operands[0], lanes, ty, Fit::Wider, true)?;
            }
            let a = self.address(&inst.operands[1])?;
            self.srcs.push(a);
            self.cache_policy_operand(inst, hints)?;
            Ok(if opc == Opcode::Ld {
                Op::Ld(access)
            } else {
                Op::Ldu(access)
            })
        } else {
            let a = self.address(&inst.operands[0])?;
            self.srcs.push(a);
            if lanes == 1 {
                let v = self.src(&inst.operands[1], ty, Fit::Wider)?;
                self.srcs.push(v);
            } else {
                let v = self.vector(&inst.operands[1], lanes, ty, Fit::Wider, false)?;
                self.srcs.extend(v);
            }
            self.cache_policy_operand(inst, hints)?;
            Ok(Op::St(access))
        }
    }

    /// With `.L2::cache_hint`, the last operand is the 64-bit cache policy: a source.
    fn cache_policy_operand(&mut self, inst: &ast::Instruction, hints: MemHints) -> Result<()> {
        if hints.cache_hint {
            if let Some(op) = inst.operands.last() {
                let p = self.src(op, B64, Fit::Exact)?;
                self.srcs.push(p);
            }
        }
        Ok(())
    }

    /// The `.shared::cluster` (or generic) destination and the completion mechanism of
    /// `st.async` and `red.async` (PTX ISA 8.1).
    fn async_store_space(m: &mut Mods<'_>, what: &str) -> Result<Space> {
        if m.flag(Flag::Mmio) {
            return Err(DecodeError::new(format!(
                "'{what}.mmio' (a store to .global, PTX ISA 8.7, sm_100) is not supported"
            )));
        }
        let space = match m.space() {
            None => Space::Generic,
            Some(StateSpace::SharedCluster) => Space::SharedCluster,
            Some(s) => {
                return Err(DecodeError::new(format!(
                    "'{what}' writes .shared::cluster memory, not .{s}"
                )))
            }
        };
        if !m.other("mbarrier::complete_tx::bytes") {
            return Err(DecodeError::new(format!(
                "'{what}' needs .mbarrier::complete_tx::bytes"
            )));
        }
        Ok(space)
    }

    /// `st.async{.weak}{.cluster}{.shared::cluster}.mbarrier::complete_tx::bytes{.v2,.v4}.type
    /// [a], b, [mbar]` (PTX ISA 8.1, sm_90): `.type` is `.b32`, `.b64`, `.u32`, `.u64`,
    /// `.s32`, `.s64`, `.f32` or `.f64`.
    fn decode_st_async(&mut self, inst: &ast::Instruction, m: &mut Mods<'_>) -> Result<Op> {
        if m.flag(Flag::Mmio) {
            return Err(DecodeError::new(
                "'st.async.mmio' (a store to .global, PTX ISA 8.7, sm_100) is not supported",
            ));
        }
        let weak = m.flag(Flag::Weak);
        match m.scope() {
            None => {}
            // ptxas 12.9: "Modifier '.weak' cannot be combined with modifier '.cluster'".
            Some(Scope::Cluster) if weak => {
                return Err(DecodeError::new(
                    "'st.async' takes .weak or .cluster, not both (as ptxas)",
                ))
            }
            Some(Scope::Cluster) => {}
            Some(s) => {
                return Err(DecodeError::new(format!(
                    "'st.async' takes the .cluster scope only, not .{}",
                    s.as_str()
                )))
            }
        }
        let space = Self::async_store_space(m, "st.async")?;
        let lanes = m.vector().unwrap_or(1);
        if lanes > 4 {
            return Err(DecodeError::new("'st.async' takes .v2 or .v4 only"));
        }
        let ty = m.need_ty()?;
        self.check_ty(inst, ty, &[B32, B64, U32, U64, S32, S64, F32, F64])?;
        // ptxas 12.9: "Vector type too large, exceeds 128 bit limit".
        if u32::from(lanes) * ty.bits() > 128 {
            return Err(DecodeError::new(format!(
                "'st.async' stores at most 128 bits: .v{lanes}.{ty} is {} (as ptxas)",
                u32::from(lanes) * ty.bits()
            )));
        }
        self.need_count(inst, 3)?;
        let a = self.address(&inst.operands[0])?;
        self.srcs.push(a);
        if lanes == 1 {
            let v = self.src(&inst.operands[1], ty, Fit::Wider)?;
            self.srcs.push(v);
        } else {
            let v = self.vector(&inst.operands[1], lanes, ty, Fit::Wider, false)?;
            self.srcs.extend(v);
        }
        let mbar = self.address(&inst.operands[2])?;
        self.srcs.push(mbar);
        Ok(Op::St(MemAccess {
            space,
            ty,
            lanes,
            order: MemOrder::Weak,
            cache: CacheOp::Default,
            nc: false,
            hints: MemHints::default(),
            complete_tx: true,
        }))
    }

    /// `red.async.relaxed.cluster{.shared::cluster}.mbarrier::complete_tx::bytes.op.type
    /// [a], b, [mbar]` (PTX ISA 8.1, sm_90): `.inc`/`.dec` `.u32`; `.min`/`.max` `.u32`,
    /// `.s32`; `.and`/`.or`/`.xor` `.b32`; `.add` `.u32`, `.s32`, `.u64` (and `.s64`, which
    /// ptxas 12.9 accepts too; it refuses 64-bit `.min`/`.max` and `.and.b64`).
    fn decode_red_async(&mut self, inst: &ast::Instruction, m: &mut Mods<'_>) -> Result<Op> {
        let order = self.mem_order(m, false)?;
        if order != MemOrder::Relaxed(Scope::Cluster) {
            return Err(DecodeError::new("'red.async' needs .relaxed.cluster"));
        }
        let space = Self::async_store_space(m, "red.async")?;
        let op = m.pick(&ATOM_OPS[..REDUCTION_OPS]).ok_or_else(|| {
            DecodeError::new("'red.async' needs .add, .min, .max, .inc, .dec, .and, .or or .xor")
        })?;
        let ty = m.need_ty()?;
        let allowed: &[ScalarType] = match op {
            AtomOp::Inc | AtomOp::Dec => &[U32],
            AtomOp::Min | AtomOp::Max => &[U32, S32],
            AtomOp::And | AtomOp::Or | AtomOp::Xor => &[B32],
            _ => &[U32, S32, U64, S64],
        };
        self.check_ty(inst, ty, allowed)?;
        self.need_count(inst, 3)?;
        let a = self.address(&inst.operands[0])?;
        self.srcs.push(a);
        let b = self.src(&inst.operands[1], ty, Fit::Exact)?;
        self.srcs.push(b);
        let mbar = self.address(&inst.operands[2])?;
        self.srcs.push(mbar);
        Ok(Op::Red(Atomic {
            space,
            op,
            ty,
            order,
            complete_tx: true,
        }))
    }

    fn decode_atomic(&mut self, inst: &ast::Instruction, m: &mut Mods<'_>) -> Result<Op> {
        let opc = inst.opcode;
        if opc == Opcode::Red && m.other("async") {
            return self.decode_red_async(inst, m);
        }
        let order = match self.mem_order(m, true)? {
            MemOrder::Weak => MemOrder::Relaxed(Scope::Gpu),
            o @ (MemOrder::Relaxed(_)
            | MemOrder::Acquire(_)
            | MemOrder::Release(_)
            | MemOrder::AcqRel(_)) => o,
            _ => {
                return Err(DecodeError::new(format!(
                    "'{opc}' cannot be .volatile or .mmio"
                )))
            }
        };
        let space = match m.space() {
            None => Space::Generic,
            Some(s) => match space_of(s) {
                Some(sp @ (Space::Global | Space::Shared | Space::SharedCluster)) => sp,
                _ => return Err(DecodeError::new(format!("'{opc}' cannot access .{s}"))),
            },
        };
        let op = m.pick(ATOM_OPS).ok_or_else(|| {
            DecodeError::new(format!("'{opc}' needs an operation (.add, .cas, ...)"))
        })?;
        let noftz = m.other("noftz");
        let ty = m.need_ty()?;
        let allowed: &[ScalarType] = match op {
            AtomOp::Add => &[U32, S32, U64, F32, F64, F16, F16x2, Bf16, Bf16x2],
            AtomOp::Min | AtomOp::Max => &[U32, S32, U64, S64],
            AtomOp::Inc | AtomOp::Dec => &[U32],
            AtomOp::And | AtomOp::Or | AtomOp::Xor => &[B32, B64],
            AtomOp::Exch | AtomOp::Cas => &[B32, B64, B16],
        };
        self.check_ty(inst, ty, allowed)?;
        if noftz != is_half(ty) {
            return Err(DecodeError::new(
                "half-precision atomic add needs '.noftz' (and only it takes it)",
            ));
        }
        if opc == Opcode::Red && matches!(op, AtomOp::Cas | AtomOp::Exch) {
            return Err(DecodeError::new(format!(
                "'red' does not support .{}",
                op.as_str()
            )));
        }
        let srcs = if op == AtomOp::Cas { 2 } else { 1 };
        if opc == Opcode::Atom {
            self.need_count(inst, 2 + srcs)?;
            let d = self.dst(&inst.operands[0], ty, Fit::Exact)?;
            self.dsts.push(d);
        } else {
            self.need_count(inst, 1 + srcs)?;
        }
        let first = (opc == Opcode::Atom) as usize;
        let a = self.address(&inst.operands[first])?;
        self.srcs.push(a);
        for op in &inst.operands[first + 1..] {
            let o = self.src(op, ty, Fit::Exact)?;
            self.srcs.push(o);
        }
        let atomic = Atomic {
            space,
            op,
            ty,
            order,
            complete_tx: false,
        };
        Ok(if opc == Opcode::Atom {
            Op::Atom(atomic)
        } else {
            Op::Red(atomic)
        })
    }

    /// `barrier.cluster.arrive{.release,.relaxed}{.aligned}` and
    /// `barrier.cluster.wait{.acquire}{.aligned}` (sm_90).
    fn decode_cluster_barrier(&mut self, inst: &ast::Instruction, m: &mut Mods<'_>) -> Result<Op> {
        let kind = if m.flag(Flag::Arrive) {
            m.pick(&[(Flag::Release, ()), (Flag::Relaxed, ())]);
            BarrierKind::Arrive
        } else if m.other("wait") {
            m.flag(Flag::Acquire);
            BarrierKind::Sync
        } else {
            return Err(DecodeError::new("'barrier.cluster' needs .arrive or .wait"));
        };
        let aligned = m.flag(Flag::Aligned);
        if !inst.operands.is_empty() {
            return Err(DecodeError::new("'barrier.cluster' takes no operands"));
        }
        Ok(Op::Bar {
            kind,
            aligned,
            cluster: true,
        })
    }

    /// `mapa{.shared::cluster}.{u32,u64} d, a, rank` (sm_90).
    fn decode_mapa(&mut self, inst: &ast::Instruction, m: &mut Mods<'_>) -> Result<Op> {
        let space = match m.space() {
            None => Space::Generic,
            Some(StateSpace::SharedCluster) => Space::SharedCluster,
            Some(s) => return Err(DecodeError::new(format!("'mapa' cannot map .{s}"))),
        };
        let ty = m.need_ty()?;
        self.check_ty(inst, ty, &[U32, U64])?;
        if space == Space::Generic && ty != U64 {
            return Err(DecodeError::new("generic 'mapa' needs .u64"));
        }
        self.regular(inst, &[ty], &[ty, U32])?;
        Ok(Op::Mapa { space, ty })
    }

    /// `getctarank{.shared::cluster}.{u32,u64} d, a` (PTX ISA 7.8, sm_90): `d` (32 bits)
    /// is the rank of the CTA whose shared memory holds `a`.
    fn decode_getctarank(&mut self, inst: &ast::Instruction, m: &mut Mods<'_>) -> Result<Op> {
        let space = match m.space() {
            None => Space::Generic,
            Some(StateSpace::SharedCluster) => Space::SharedCluster,
            Some(s) => return Err(DecodeError::new(format!("'getctarank' cannot take .{s}"))),
        };
        let ty = m.need_ty()?;
        self.check_ty(inst, ty, &[U32, U64])?;
        if space == Space::Generic && ty != U64 {
            return Err(DecodeError::new("generic 'getctarank' needs .u64"));
        }
        self.regular(inst, &[U32], &[ty])?;
        Ok(Op::Getctarank { space, ty })
    }

    fn decode_barrier(&mut self, inst: &ast::Instruction, m: &mut Mods<'_>) -> Result<Op> {
        if inst.opcode == Opcode::Bar && m.other("warp") {
            if !m.flag(Flag::Sync) {
                return Err(DecodeError::new("'bar.warp' needs .sync"));
            }
            self.regular(inst, &[], &[U32])?;
            return Ok(Op::BarWarpSync);
        }
        if inst.opcode == Opcode::Barrier && m.flag(Flag::Cluster) {
            return self.decode_cluster_barrier(inst, m);
        }
        m.flag(Flag::Cta);
        // `bar` is `barrier.aligned`.
        let mut aligned = inst.opcode == Opcode::Bar;
        let kind = if m.flag(Flag::Sync) {
            BarrierKind::Sync
        } else if m.flag(Flag::Arrive) {
            BarrierKind::Arrive
        } else if m.flag(Flag::Red) {
            if m.flag(Flag::Popc) {
                BarrierKind::RedPopc
            } else {
                let op = m
                    .pick(&[(Flag::And, BoolOp::And), (Flag::Or, BoolOp::Or)])
                    .ok_or_else(|| DecodeError::new("'bar.red' needs .popc, .and or .or"))?;
                BarrierKind::Red(op)
            }
        } else {
            return Err(DecodeError::new(format!(
                "'{}' needs .sync, .arrive or .red",
                inst.opcode
            )));
        };
        aligned |= m.flag(Flag::Aligned);
        let n = inst.operands.len();
        match kind {
            BarrierKind::Sync | BarrierKind::Arrive => {
                let max_ok = if kind == BarrierKind::Arrive {
                    n == 2
                } else {
                    (1..=2).contains(&n)
                };
                if !max_ok {
                    return Err(DecodeError::new(format!(
                        "'{}' has the wrong number of operands ({n})",
                        inst.opcode
                    )));
                }
                for op in &inst.operands {
                    let o = self.src(op, U32, Fit::Exact)?;
                    self.srcs.push(o);
                }
            }
            BarrierKind::RedPopc | BarrierKind::Red(_) => {
                let (ty, d_ty) = match kind {
                    BarrierKind::RedPopc => (U32, U32),
                    _ => (Pred, Pred),
                };
                let t = m.need_ty()?;
                self.check_ty(inst, t, &[ty])?;
                if !(3..=4).contains(&n) {
                    return Err(DecodeError::new(format!(
                        "'bar.red' expects 3 or 4 operands, found {n}"
                    )));
                }
                let d = self.dst(&inst.operands[0], d_ty, Fit::Exact)?;
                self.dsts.push(d);
                for op in &inst.operands[1..n - 1] {
                    let o = self.src(op, U32, Fit::Exact)?;
                    self.srcs.push(o);
                }
                let p = self.src(&inst.operands[n - 1], Pred, Fit::Exact)?;
                self.srcs.push(p);
            }
        }
        Ok(Op::Bar {
            kind,
            aligned,
            cluster: false,
        })
    }

    /// A call argument or return slot: a `.param` variable, a register or an immediate.
    fn call_arg(&self, op: &ast::Operand, is_ret: bool) -> Result<Operand> {
        match op {
            ast::Operand::Name {
                name,
                component: None,
            } => match self.resolve(&name.name) {
                Some(Resolved::Symbol(
                    s @ (Symbol::Local(_) | Symbol::Param(_) | Symbol::ReturnParam(_)),
                )) => Ok(Operand::Symbol(s)),
                Some(Resolved::Reg(r)) => Ok(Operand::Reg(r)),
                _ => Err(DecodeError::at(
                    name.span,
                    format!("'{}' is not a parameter or register", name.name),
                )),
            },
            ast::Operand::Immediate(Immediate::Int(v), _) if !is_ret => Ok(Operand::Imm(*v as u64)),
            ast::Operand::Immediate(Immediate::F32(b), _) if !is_ret => Ok(Operand::Imm(*b as u64)),
            ast::Operand::Immediate(Immediate::F64(b), _) if !is_ret => Ok(Operand::Imm(*b)),
            _ => Err(DecodeError::at(
                op.span(),
                "expected a parameter or register",
            )),
        }
    }

    fn decode_call(&mut self, inst: &ast::Instruction, m: &mut Mods<'_>) -> Result<Op> {
        let uni = m.flag(Flag::Uni);
        let ops = &inst.operands;
        let mut i = 0;
        if let Some(ast::Operand::List(rets, _)) = ops.first() {
            for r in rets {
                let o = self.call_arg(r, true)?;
                self.dsts.push(o);
            }
            i = 1;
        }
        let callee = match ops.get(i) {
            Some(ast::Operand::Name {
                name,
                component: None,
            }) => match self.resolve(&name.name) {
                Some(Resolved::Symbol(Symbol::Func(f))) => {
                    self.srcs.push(Operand::Symbol(Symbol::Func(f)));
                    Callee::Direct(f)
                }
                Some(Resolved::Reg(r)) => {
                    self.check_fit(r, B64, Fit::Exact, name.span)
                        .or_else(|_| self.check_fit(r, B32, Fit::Exact, name.span))?;
                    self.srcs.push(Operand::Reg(r));
                    Callee::Indirect
                }
                _ => {
                    return Err(DecodeError::at(
                        name.span,
                        format!("undefined function '{}'", name.name),
                    ))
                }
            },
            _ => return Err(DecodeError::new("'call' needs a function name or register")),
        };
        i += 1;
        if let Some(ast::Operand::List(args, _)) = ops.get(i) {
            for a in args {
                let o = self.call_arg(a, false)?;
                self.srcs.push(o);
            }
            i += 1;
        }
        let mut prototype = None;
        if let Some(op) = ops.get(i) {
            match op {
                ast::Operand::Name {
                    name,
                    component: None,
                } if callee == Callee::Indirect
                    && matches!(self.resolve(&name.name), Some(Resolved::Prototype)) =>
                {
                    prototype = Some(name.name.clone().into_boxed_str());
                }
                _ => {
                    return Err(DecodeError::at(
                        op.span(),
                        "unexpected 'call' operand (call target lists are not supported)",
                    ))
                }
            }
            i += 1;
        }
        if i != ops.len() || (callee == Callee::Indirect && prototype.is_none()) {
            return Err(DecodeError::new(
                "malformed 'call' (an indirect call needs a .callprototype)",
            ));
        }
        Ok(Op::Call(Box::new(CallOp {
            uni,
            callee,
            prototype,
        })))
    }

    fn texture_ref(&self, name: &ast::Ident) -> Result<Operand> {
        match self.resolve(&name.name) {
            Some(Resolved::Symbol(
                s @ (Symbol::Global(_) | Symbol::Param(_) | Symbol::Local(_)),
            )) => Ok(Operand::Symbol(s)),
            Some(Resolved::Reg(r)) => {
                self.check_fit(r, B64, Fit::Exact, name.span)?;
                Ok(Operand::Reg(r))
            }
            _ => Err(DecodeError::at(
                name.span,
                format!("'{}' is not a texture reference", name.name),
            )),
        }
    }

    fn decode_tex(&mut self, inst: &ast::Instruction, m: &mut Mods<'_>) -> Result<Op> {
        let gather = if inst.opcode == Opcode::Tld4 {
            let c = if m.flag(Flag::R) {
                TexComponent::R
            } else {
                m.pick_other(&[
                    ("g", TexComponent::G),
                    ("b", TexComponent::B),
                    ("a", TexComponent::A),
                ])
                .ok_or_else(|| DecodeError::new("'tld4' needs .r, .g, .b or .a"))?
            };
            Some(c)
        } else {
            None
        };
        let geometry = m
            .pick(&[
                (Flag::Dim1d, TexGeometry::D1),
                (Flag::Dim2d, TexGeometry::D2),
                (Flag::Dim3d, TexGeometry::D3),
                (Flag::A1d, TexGeometry::A1d),
                (Flag::A2d, TexGeometry::A2d),
                (Flag::Cube, TexGeometry::Cube),
                (Flag::Acube, TexGeometry::ACube),
                (Flag::TwoDms, TexGeometry::D2ms),
                (Flag::A2dms, TexGeometry::A2dms),
            ])
            .ok_or_else(|| DecodeError::new(format!("'{}' needs a geometry", inst.opcode)))?;
        if m.vector() != Some(4) {
            return Err(DecodeError::new(format!("'{}' needs .v4", inst.opcode)));
        }
        let lod = if gather.is_some() {
            TexLod::Base
        } else if m.flag(Flag::Level) {
            TexLod::Level
        } else if m.flag(Flag::Grad) {
            TexLod::Grad
        } else {
            m.flag(Flag::Base);
            TexLod::Base
        };
        let dst_ty = m.need_ty()?;
        let coord_ty = m.need_ty()?;
        self.check_ty(inst, dst_ty, &[U32, S32, F32])?;
        self.check_ty(inst, coord_ty, &[S32, F32])?;
        let extra = match lod {
            TexLod::Base => 0,
            TexLod::Level => 1,
            TexLod::Grad => 2,
        };
        self.need_count(inst, 2 + extra)?;
        self.dsts = self.vector(&inst.operands[0], 4, dst_ty, Fit::Exact, true)?;
        let ast::Operand::TextureAddress(items, span) = &inst.operands[1] else {
            return Err(DecodeError::at(
                inst.operands[1].span(),
                "expected '[texture, {coordinates}]'",
            ));
        };
        let (tex, sampler, coords) = match items.as_slice() {
            [t, c] => (t, None, c),
            [t, s, c] => (t, Some(s), c),
            _ => {
                return Err(DecodeError::at(
                    *span,
                    "expected '[texture, {coordinates}]'",
                ))
            }
        };
        let tex_name = match tex {
            ast::Operand::Name {
                name,
                component: None,
            } => name,
            op => return Err(DecodeError::at(op.span(), "expected a texture reference")),
        };
        let t = self.texture_ref(tex_name)?;
        self.srcs.push(t);
        if let Some(s) = sampler {
            match s {
                ast::Operand::Name {
                    name,
                    component: None,
                } => {
                    let s = self.texture_ref(name)?;
                    self.srcs.push(s);
                }
                op => return Err(DecodeError::at(op.span(), "expected a sampler")),
            }
        }
        let num_coords = match coords {
            ast::Operand::Vector(v, _) => v.len(),
            _ => 1,
        };
        if num_coords < geometry.coords() || num_coords > 4 {
            return Err(DecodeError::at(
                coords.span(),
                format!(
                    "'{}' needs {} coordinates",
                    geometry.as_str(),
                    geometry.coords()
                ),
            ));
        }
        match coords {
            ast::Operand::Vector(v, _) => {
                for c in v {
                    let o = self.src(c, coord_ty, Fit::Exact)?;
                    self.srcs.push(o);
                }
            }
            c => {
                let o = self.src(c, coord_ty, Fit::Exact)?;
                self.srcs.push(o);
            }
        }
        for op in &inst.operands[2..] {
            match op {
                ast::Operand::Vector(v, _) => {
                    for c in v {
                        let o = self.src(c, F32, Fit::Exact)?;
                        self.srcs.push(o);
                    }
                }
                _ => {
                    let o = self.src(op, coord_ty, Fit::Exact)?;
                    self.srcs.push(o);
                }
            }
        }
        Ok(Op::Tex(Box::new(TexOp {
            geometry,
            lod,
            gather,
            dst_ty,
            coord_ty,
            has_sampler: sampler.is_some(),
            num_coords: num_coords as u8,
        })))
    }
}

const CMP_OPS: &[(Flag, CmpOp)] = &[
    (Flag::Eq, CmpOp::Eq),
    (Flag::Ne, CmpOp::Ne),
    (Flag::Lt, CmpOp::Lt),
    (Flag::Le, CmpOp::Le),
    (Flag::Gt, CmpOp::Gt),
    (Flag::Ge, CmpOp::Ge),
    (Flag::Lo, CmpOp::Lo),
    (Flag::Ls, CmpOp::Ls),
    (Flag::Hi, CmpOp::Hi),
    (Flag::Hs, CmpOp::Hs),
    (Flag::Equ, CmpOp::Equ),
    (Flag::Neu, CmpOp::Neu),
    (Flag::Ltu, CmpOp::Ltu),
    (Flag::Leu, CmpOp::Leu),
    (Flag::Gtu, CmpOp::Gtu),
    (Flag::Geu, CmpOp::Geu),
    (Flag::Num, CmpOp::Num),
    (Flag::NanCmp, CmpOp::Nan),
];

/// Which comparisons each type family allows (ptxas: "mismatch between instruction type
/// and comparison qualifier").
fn check_cmp(cmp: CmpOp, ty: ScalarType) -> Result<()> {
    use CmpOp::*;
    let ok = match kind(ty) {
        Kind::Bits => matches!(cmp, Eq | Ne),
        Kind::Int if ty.is_signed_int() => matches!(cmp, Eq | Ne | Lt | Le | Gt | Ge),
        Kind::Int => matches!(cmp, Eq | Ne | Lt | Le | Gt | Ge | Lo | Ls | Hi | Hs),
        Kind::Float => !matches!(cmp, Lo | Ls | Hi | Hs),
        Kind::Pred => false,
    };
    if ok {
        Ok(())
    } else {
        Err(DecodeError::new(format!(
            "comparison '.{}' is not valid for .{ty}",
            cmp.as_str()
        )))
    }
}

/// Rounding, ftz and sat of add/sub/mul/fma on floats.
fn float_mode(m: &mut Mods<'_>, ty: ScalarType, sat: bool) -> Result<FloatMode> {
    let rounding = m.rounding();
    let ftz = m.flag(Flag::Ftz);
    if let Some(r) = rounding {
        if !r.is_float_rounding() || (is_half(ty) && r != Rounding::Rn) {
            return Err(DecodeError::new(format!(
                "rounding '.{}' is not valid for .{ty}",
                r.as_str()
            )));
        }
    }
    if ty == F64 && (ftz || sat) {
        return Err(DecodeError::new("'.ftz' and '.sat' are not valid for .f64"));
    }
    Ok(FloatMode { rounding, ftz, sat })
}

/// `.approx`, `.full` or a rounding mode, plus `.ftz`, for div/rcp/sqrt.
fn precision(m: &mut Mods<'_>, ty: ScalarType, opcode: Opcode) -> Result<(Precision, bool)> {
    let approx = m.flag(Flag::Approx);
    let full = opcode == Opcode::Div && m.flag(Flag::Full);
    let rounding = m.rounding();
    let ftz = m.flag(Flag::Ftz);
    let p = match (approx, full, rounding) {
        (true, false, None) => Precision::Approx,
        (false, true, None) => Precision::Full,
        (false, false, Some(r)) if r.is_float_rounding() => Precision::Ieee(r),
        (false, false, None) => {
            return Err(DecodeError::new(format!(
                "a rounding modifier or .approx is required for .{ty}"
            )))
        }
        _ => return Err(DecodeError::new("conflicting precision modifiers")),
    };
    // The only approximate f64 form is `rcp.approx.ftz.f64`.
    let approx_f64_ok = opcode == Opcode::Rcp && ftz;
    if ty == F64 && (p == Precision::Full || (p == Precision::Approx && !approx_f64_ok)) {
        return Err(DecodeError::new(
            "f64 needs a rounding modifier (or .approx.ftz for rcp)",
        ));
    }
    Ok((p, ftz))
}

/// The direction of a bulk copy from its state spaces (the destination's first) and
/// completion mechanism, whether it completes on an mbarrier, and its cache hints (only
/// `.L2::cache_hint`).
fn bulk_direction(
    inst: &ast::Instruction,
    m: &mut Mods<'_>,
    what: &str,
) -> Result<(BulkCopyDirection, bool, MemHints)> {
    let multicast = m.other("multicast::cluster");
    let spaces: Vec<&'static str> = inst
        .modifiers
        .iter()
        .filter_map(|x| match x {
            Modifier::Space(StateSpace::Global) => Some("global"),
            Modifier::Space(StateSpace::Shared | StateSpace::SharedCta) => Some("shared::cta"),
            Modifier::Space(StateSpace::SharedCluster) => Some("shared::cluster"),
            Modifier::Other(o) if o == "shared::cta" => Some("shared::cta"),
            Modifier::Other(o) if o == "shared::cluster" => Some("shared::cluster"),
            _ => None,
        })
        .collect();
    for _ in &spaces {
        m.take(|x| {
            matches!(
                x,
                Modifier::Space(
                    StateSpace::Global
                        | StateSpace::Shared
                        | StateSpace::SharedCta
                        | StateSpace::SharedCluster
                )
            ) || matches!(x, Modifier::Other(o) if o == "shared::cta" || o == "shared::cluster")
        });
    }
    let mbarrier = m.other("mbarrier::complete_tx::bytes");
    let group = m.other("bulk_group");
    let direction = match (spaces.as_slice(), mbarrier, group) {
        (["shared::cluster", "global"], true, false) => BulkCopyDirection::GlobalToShared {
            cluster: true,
            multicast,
        },
        (["shared::cta", "global"], true, false) if !multicast => {
            BulkCopyDirection::GlobalToShared {
                cluster: false,
                multicast,
            }
        }
        (["global", "shared::cta"], false, true) if !multicast => BulkCopyDirection::SharedToGlobal,
        (["shared::cluster", "shared::cta"], true, false)
            if !multicast && what == "cp.async.bulk" =>
        {
            BulkCopyDirection::SharedToCluster
        }
        _ if multicast => {
            return Err(DecodeError::new(format!(
                "'{what}' with .multicast::cluster copies .shared::cluster.global with \
                 .mbarrier::complete_tx::bytes"
            )))
        }
        _ => {
            return Err(DecodeError::new(format!(
                "'{what}' copies .shared::cluster.global (or .shared::cta.global) with \
                 .mbarrier::complete_tx::bytes, .global.shared::cta with .bulk_group{}",
                if what == "cp.async.bulk" {
                    ", or .shared::cluster.shared::cta with .mbarrier::complete_tx::bytes"
                } else {
                    ""
                }
            )))
        }
    };
    let hints = mem_hints(m);
    if hints.l1.is_some() || hints.l2.is_some() || hints.l2_prefetch.is_some() {
        return Err(DecodeError::new(format!(
            "'{what}' takes only .L2::cache_hint"
        )));
    }
    if direction == BulkCopyDirection::SharedToCluster && hints.cache_hint {
        return Err(DecodeError::new(format!(
            "'{what}.shared::cluster.shared::cta' takes no cache hint"
        )));
    }
    Ok((direction, mbarrier, hints))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_fit_follows_ptxas() {
        // Same size: bit types and integers mix, floats only with their own type or bits.
        assert!(reg_fits(B32, F32, false));
        assert!(reg_fits(F32, B32, false));
        assert!(reg_fits(U32, S32, false));
        assert!(!reg_fits(F32, U32, false));
        assert!(!reg_fits(U32, F32, false));
        assert!(!reg_fits(F16x2, F32, false));
        // Sizes differ: only ld/st/cvt, and only integer or bit registers.
        assert!(!reg_fits(B32, U16, false));
        assert!(reg_fits(B32, U16, true));
        assert!(reg_fits(U64, U8, true));
        assert!(reg_fits(B32, F16, true));
        assert!(!reg_fits(F64, F32, true));
        assert!(!reg_fits(U32, F16, true));
        assert!(!reg_fits(U16, U32, true));
        assert!(!reg_fits(Pred, B16, true));
        assert!(reg_fits(Pred, Pred, false));
    }

    #[test]
    fn immediates_become_bit_patterns_of_the_operand_type() {
        assert_eq!(immediate_bits(Immediate::Int(-1), S32), Ok(0xFFFF_FFFF));
        assert_eq!(immediate_bits(Immediate::Int(-1), U16), Ok(0xFFFF));
        assert_eq!(immediate_bits(Immediate::Int(0x1_0000_0005), U32), Ok(5));
        assert_eq!(immediate_bits(Immediate::Int(2), Pred), Ok(1));
        assert_eq!(
            immediate_bits(Immediate::F32(0x3F80_0000), F32),
            Ok(0x3F80_0000)
        );
        assert_eq!(
            immediate_bits(Immediate::F32(0x3F80_0000), F64),
            Ok(1.0f64.to_bits())
        );
        assert_eq!(
            immediate_bits(Immediate::F64(1.5f64.to_bits()), F32),
            Ok(1.5f32.to_bits() as u64)
        );
        assert_eq!(
            immediate_bits(Immediate::F32(0x3F80_0000), B32),
            Ok(0x3F80_0000)
        );
        assert!(immediate_bits(Immediate::Int(1), F32).is_err());
        assert!(immediate_bits(Immediate::F32(0x3F80_0000), U32).is_err());
        assert!(immediate_bits(Immediate::F32(0x3F80_0000), B64).is_err());
        assert!(immediate_bits(Immediate::F64(0), B32).is_err());
        assert!(immediate_bits(Immediate::F32(0x3F80_0000), F16).is_err());
    }
}

#[cfg(test)]
#[path = "decode_tests.rs"]
mod decode_tests;

#[cfg(test)]
#[path = "decode_tests_cluster_copies.rs"]
mod decode_tests_cluster_copies;

#[cfg(test)]
#[path = "decode_tests_sparse_mma.rs"]
mod decode_tests_sparse_mma;

//! Canonical PTX text for a syntax tree.
//!
//! The output parses back to the same tree (after [`Module::erase_spans`]) for every tree
//! the parser can produce; that is the printer's contract, checked by property tests. The
//! layout follows nvcc's: tabs, one statement per line, labels one level out.
//!
//! Choices where the source had several spellings for one tree: integers print in signed
//! decimal, floats as `0f`/`0d` bit patterns, a zero address offset is omitted, a negative
//! one prints as `+-N`, and a void call prototype prints as `()_`.

use std::fmt::{self, Write};

use crate::ast::*;

/// Prints a module as PTX text.
pub fn print(module: &Module) -> String {
    module.to_string()
}

impl fmt::Display for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some((major, minor)) = self.version {
            writeln!(f, ".version {major}.{minor}")?;
        }
        if !self.target.is_empty() {
            f.write_str(".target ")?;
            write_joined(f, self.target.iter().map(|t| &t.name), ", ")?;
            f.write_char('\n')?;
        }
        if let Some(size) = self.address_size {
            writeln!(f, ".address_size {size}")?;
        }
        for item in &self.items {
            f.write_char('\n')?;
            match item {
                ModuleItem::Function(func) => write!(f, "{func}")?,
                ModuleItem::Variable(v) => writeln!(f, "{v}")?,
                ModuleItem::File(file) => writeln!(f, "{file}")?,
                ModuleItem::Section(s) => writeln!(f, ".section .{}\n{{{}}}", s.name, s.body)?,
                ModuleItem::Pragma(p) => writeln!(f, "{p}")?,
            }
        }
        Ok(())
    }
}

fn write_joined<T: fmt::Display>(
    f: &mut fmt::Formatter<'_>,
    items: impl IntoIterator<Item = T>,
    sep: &str,
) -> fmt::Result {
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            f.write_str(sep)?;
        }
        write!(f, "{item}")?;
    }
    Ok(())
}

impl fmt::Display for Linkage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Linkage::Visible => ".visible",
            Linkage::Extern => ".extern",
            Linkage::Weak => ".weak",
            Linkage::Common => ".common",
        })
    }
}

impl fmt::Display for Function {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(l) = self.linkage {
            write!(f, "{l} ")?;
        }
        f.write_str(match self.kind {
            FunctionKind::Entry => ".entry ",
            FunctionKind::Func => ".func ",
        })?;
        if !self.return_params.is_empty() {
            f.write_char('(')?;
            write_joined(f, &self.return_params, ", ")?;
            f.write_str(") ")?;
        }
        write!(f, "{}(", self.name.name)?;
        for (i, p) in self.params.iter().enumerate() {
            f.write_str(if i == 0 { "\n\t" } else { ",\n\t" })?;
            write!(f, "{p}")?;
        }
        f.write_str(if self.params.is_empty() {
            ")\n"
        } else {
            "\n)\n"
        })?;
        if self.noreturn {
            f.write_str(".noreturn\n")?;
        }
        for d in &self.directives {
            writeln!(f, "{d}")?;
        }
        match &self.body {
            Some(body) => {
                write_block(f, body, 0)?;
                f.write_char('\n')
            }
            None => f.write_str(";\n"),
        }
    }
}

impl fmt::Display for PerformanceDirective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PerformanceDirective::MaxNtid(dims) => {
                f.write_str(".maxntid ")?;
                write_joined(f, dims, ", ")
            }
            PerformanceDirective::ReqNtid(dims) => {
                f.write_str(".reqntid ")?;
                write_joined(f, dims, ", ")
            }
            PerformanceDirective::MinNctaPerSm(n) => write!(f, ".minnctapersm {n}"),
            PerformanceDirective::MaxNctaPerSm(n) => write!(f, ".maxnctapersm {n}"),
            PerformanceDirective::MaxNreg(n) => write!(f, ".maxnreg {n}"),
            PerformanceDirective::ReqNctaPerCluster(dims) => {
                f.write_str(".reqnctapercluster ")?;
                write_joined(f, dims, ", ")
            }
            PerformanceDirective::ExplicitCluster => f.write_str(".explicitcluster"),
            PerformanceDirective::MaxClusterRank(n) => write!(f, ".maxclusterrank {n}"),
            PerformanceDirective::Pragma(p) => write!(f, "{p}"),
        }
    }
}

fn write_dims(f: &mut fmt::Formatter<'_>, dims: &[Option<u64>]) -> fmt::Result {
    for d in dims {
        match d {
            Some(n) => write!(f, "[{n}]")?,
            None => f.write_str("[]")?,
        }
    }
    Ok(())
}

impl fmt::Display for Param {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, ".{}", self.space)?;
        if let Some(a) = self.align {
            write!(f, " .align {a}")?;
        }
        write!(f, " .{}", self.ty)?;
        if let Some(ptr) = &self.ptr {
            f.write_str(" .ptr")?;
            if let Some(s) = ptr.space {
                write!(f, " .{s}")?;
            }
            if let Some(a) = ptr.align {
                write!(f, " .align {a}")?;
            }
        }
        write!(f, " {}", self.name.name)?;
        write_dims(f, &self.array)
    }
}

impl fmt::Display for VariableDecl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(l) = self.linkage {
            write!(f, "{l} ")?;
        }
        write!(f, ".{}", self.space)?;
        if self.managed {
            f.write_str(" .attribute(.managed)")?;
        }
        if let Some(a) = self.align {
            write!(f, " .align {a}")?;
        }
        if let Some(v) = self.vector {
            write!(f, " .v{}", v.lanes())?;
        }
        match self.ty {
            VariableType::Scalar(t) => write!(f, " .{t}")?,
            VariableType::TexRef => f.write_str(" .texref")?,
            VariableType::SamplerRef => f.write_str(" .samplerref")?,
            VariableType::SurfRef => f.write_str(" .surfref")?,
        }
        write!(f, " {}", self.name.name)?;
        write_dims(f, &self.array)?;
        if let Some(init) = &self.init {
            write!(f, " = {init}")?;
        }
        f.write_char(';')
    }
}

fn write_offset(f: &mut fmt::Formatter<'_>, offset: i64) -> fmt::Result {
    if offset < 0 {
        // `-(i64::MIN)` overflows; print the magnitude as unsigned.
        write!(f, "-{}", offset.unsigned_abs())
    } else {
        write!(f, "+{offset}")
    }
}

impl fmt::Display for Initializer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Initializer::List(items) => {
                f.write_char('{')?;
                write_joined(f, items, ", ")?;
                f.write_char('}')
            }
            Initializer::Value(InitValue::Immediate(imm)) => write!(f, "{imm}"),
            Initializer::Value(InitValue::Symbol { name, offset }) => {
                f.write_str(&name.name)?;
                if *offset != 0 {
                    write_offset(f, *offset)?;
                }
                Ok(())
            }
            Initializer::Value(InitValue::Generic { name, offset }) => {
                write!(f, "generic({})", name.name)?;
                if *offset != 0 {
                    write_offset(f, *offset)?;
                }
                Ok(())
            }
        }
    }
}

impl fmt::Display for Immediate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Immediate::Int(v) => write!(f, "{v}"),
            Immediate::F32(bits) => write!(f, "0f{bits:08X}"),
            Immediate::F64(bits) => write!(f, "0d{bits:016X}"),
        }
    }
}

impl fmt::Display for FileDirective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, ".file {} \"{}\"", self.index, self.path)?;
        if let Some((ts, size)) = self.timestamp_and_size {
            write!(f, ", {ts}, {size}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Pragma {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, ".pragma \"{}\";", self.text)
    }
}

fn indent(f: &mut fmt::Formatter<'_>, level: usize) -> fmt::Result {
    for _ in 0..level {
        f.write_char('\t')?;
    }
    Ok(())
}

/// Writes `{`, the statements one level in, and `}` at `level` (no trailing newline).
fn write_block(f: &mut fmt::Formatter<'_>, block: &Block, level: usize) -> fmt::Result {
    f.write_str("{\n")?;
    for s in &block.statements {
        write_statement(f, s, level + 1)?;
    }
    indent(f, level)?;
    f.write_char('}')
}

fn write_statement(f: &mut fmt::Formatter<'_>, s: &Statement, level: usize) -> fmt::Result {
    match s {
        Statement::Label(l) => {
            indent(f, level - 1)?;
            return writeln!(f, "{}:", l.name);
        }
        Statement::Block(b) => {
            indent(f, level)?;
            write_block(f, b, level)?;
        }
        _ => {
            indent(f, level)?;
            match s {
                Statement::Instruction(i) => write!(f, "{i}")?,
                Statement::RegDecl(r) => write!(f, "{r}")?,
                Statement::Variable(v) => write!(f, "{v}")?,
                Statement::Pragma(p) => write!(f, "{p}")?,
                Statement::Loc(l) => write!(f, "{l}")?,
                Statement::CallPrototype(c) => write!(f, "{c}")?,
                Statement::TargetList(t) => write!(f, "{t}")?,
                Statement::Label(_) | Statement::Block(_) => {}
            }
        }
    }
    f.write_char('\n')
}

impl fmt::Display for Statement {
    /// A statement on its own, without indentation (a block prints on several lines).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Statement::Label(l) => write!(f, "{}:", l.name),
            Statement::Instruction(i) => write!(f, "{i}"),
            Statement::RegDecl(r) => write!(f, "{r}"),
            Statement::Variable(v) => write!(f, "{v}"),
            Statement::Block(b) => write_block(f, b, 0),
            Statement::Pragma(p) => write!(f, "{p}"),
            Statement::Loc(l) => write!(f, "{l}"),
            Statement::CallPrototype(c) => write!(f, "{c}"),
            Statement::TargetList(t) => write!(f, "{t}"),
        }
    }
}

impl fmt::Display for RegDecl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(".reg")?;
        if let Some(v) = self.vector {
            write!(f, " .v{}", v.lanes())?;
        }
        write!(f, " .{} ", self.ty)?;
        for (i, d) in self.names.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(&d.name.name)?;
            if let Some(n) = d.range {
                write!(f, "<{n}>")?;
            }
        }
        f.write_char(';')
    }
}

impl fmt::Display for LocDirective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, ".loc {} {} {}", self.file, self.line, self.column)?;
        if let Some(rest) = &self.rest {
            write!(f, " {rest}")?;
        }
        Ok(())
    }
}

impl fmt::Display for CallPrototype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: .callprototype (", self.label.name)?;
        write_joined(f, &self.return_params, ", ")?;
        f.write_str(") _ (")?;
        write_joined(f, &self.params, ", ")?;
        f.write_char(')')?;
        if self.noreturn {
            f.write_str(" .noreturn")?;
        }
        f.write_char(';')
    }
}

impl fmt::Display for TargetList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            TargetListKind::Branch => ".branchtargets",
            TargetListKind::Call => ".calltargets",
        };
        write!(f, "{}: {kind} ", self.label.name)?;
        write_joined(f, self.targets.iter().map(|t| &t.name), ", ")?;
        f.write_char(';')
    }
}

impl fmt::Display for Instruction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(g) = &self.guard {
            let bang = if g.negated { "!" } else { "" };
            write!(f, "@{bang}{} ", g.predicate.name)?;
        }
        f.write_str(self.opcode.as_str())?;
        for m in &self.modifiers {
            write!(f, "{m}")?;
        }
        if !self.operands.is_empty() {
            f.write_char('\t')?;
            write_joined(f, &self.operands, ", ")?;
        }
        f.write_char(';')
    }
}

impl fmt::Display for VectorComponent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            VectorComponent::X => "x",
            VectorComponent::Y => "y",
            VectorComponent::Z => "z",
            VectorComponent::W => "w",
        })
    }
}

impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Operand::Name { name, component } => {
                f.write_str(&name.name)?;
                if let Some(c) = component {
                    write!(f, ".{c}")?;
                }
                Ok(())
            }
            Operand::Not(inner) => write!(f, "!{inner}"),
            Operand::PredicatePair(a, b) => write!(f, "{}|{}", a.name, b.name),
            Operand::Immediate(imm, _) => write!(f, "{imm}"),
            Operand::Address(a) => {
                f.write_char('[')?;
                match &a.base {
                    AddressBase::Name(n) => {
                        f.write_str(&n.name)?;
                        if a.offset > 0 {
                            write!(f, "+{}", a.offset)?;
                        } else if a.offset < 0 {
                            write!(f, "+-{}", a.offset.unsigned_abs())?;
                        }
                    }
                    AddressBase::Absolute => write!(f, "{}", a.offset)?,
                }
                f.write_char(']')
            }
            Operand::Vector(items, _) => {
                f.write_char('{')?;
                write_joined(f, items, ", ")?;
                f.write_char('}')
            }
            Operand::List(items, _) => {
                f.write_char('(')?;
                write_joined(f, items, ", ")?;
                f.write_char(')')
            }
            Operand::TextureAddress(items, _) => {
                f.write_char('[')?;
                write_joined(f, items, ", ")?;
                f.write_char(']')
            }
            Operand::Sink(_) => f.write_char('_'),
            Operand::SymbolOffset { name, offset } => {
                f.write_str(&name.name)?;
                write_offset(f, *offset)
            }
        }
    }
}

//! Human- and tool-readable forms of a lowered function: a PTX-like text dump of the CFG
//! (`regsim ... --emit cfg`), a Graphviz graph, and a serde form for JSON. All three are
//! deterministic: blocks, edges and instructions appear in id order.

use std::fmt::Write;

use serde::Serialize;

use crate::entity::{BlockId, InstId};
use crate::function::{AddrBase, Address, Function, Inst, Operand, Symbol};
use crate::graph::RegisterEffects;
use crate::op::{BulkCopyDirection, Callee, Op, ScalarType};
use crate::program::Program;

/// Names of module-level symbols when a [`Program`] is at hand; ids otherwise.
fn symbol_name(program: Option<&Program>, f: &Function, s: Symbol) -> String {
    match s {
        Symbol::Local(v) => f
            .vars
            .get(v.index())
            .map_or_else(|| v.to_string(), |v| v.name.clone()),
        Symbol::Param(i) => f
            .params
            .get(i as usize)
            .map_or_else(|| format!("param{i}"), |p| p.name.clone()),
        Symbol::ReturnParam(i) => f
            .return_params
            .get(i as usize)
            .map_or_else(|| format!("retparam{i}"), |p| p.name.clone()),
        Symbol::Global(v) => program
            .and_then(|p| p.variables.get(v.index()))
            .map_or_else(|| v.to_string(), |v| v.name.clone()),
        Symbol::Func(id) => program
            .and_then(|p| p.functions.get(id.index()))
            .map_or_else(|| id.to_string(), |f| f.name.clone()),
    }
}

/// The label a block is printed with.
pub fn block_name(f: &Function, b: BlockId) -> String {
    f.blocks
        .get(b.index())
        .and_then(|blk| blk.label.clone())
        .unwrap_or_else(|| b.to_string())
}

/// The type immediates of `op` are printed in (floats as `0f…`/`0d…`).
fn immediate_type(op: &Op) -> Option<ScalarType> {
    match op {
        Op::FAdd { ty, .. }
        | Op::FSub { ty, .. }
        | Op::FMul { ty, .. }
        | Op::Fma { ty, .. }
        | Op::FDiv { ty, .. }
        | Op::FMin { ty, .. }
        | Op::FMax { ty, .. }
        | Op::Setp { ty, .. }
        | Op::Set { ty, .. }
        | Op::Selp { ty }
        | Op::Mov { ty }
        | Op::Add { ty, .. }
        | Op::Sub { ty, .. }
        | Op::Mul { ty, .. }
        | Op::Mad { ty, .. }
        | Op::Min { ty, .. }
        | Op::Max { ty, .. }
        | Op::Div { ty }
        | Op::Rem { ty } => Some(*ty),
        Op::St(m) => Some(m.ty),
        Op::Atom(a) | Op::Red(a) => Some(a.ty),
        Op::Cvt { src, .. } => Some(*src),
        _ => None,
    }
}

fn write_imm(out: &mut String, v: u64, ty: Option<ScalarType>) {
    let _ = match ty {
        Some(ScalarType::F32) => write!(out, "0f{v:08X}"),
        Some(ScalarType::F64) => write!(out, "0d{v:016X}"),
        Some(t) if t.is_signed_int() && t.bits() <= 64 => {
            let shift = 64 - t.bits();
            write!(out, "{}", ((v << shift) as i64) >> shift)
        }
        _ if v > 0xFFFF => write!(out, "0x{v:X}"),
        _ => write!(out, "{v}"),
    };
}

fn write_operand(
    out: &mut String,
    program: Option<&Program>,
    f: &Function,
    op: &Operand,
    imm_ty: Option<ScalarType>,
) {
    let reg = |r: crate::RegId| {
        f.regs
            .get(r.index())
            .map_or_else(|| r.to_string(), |i| i.name.clone())
    };
    match *op {
        Operand::Reg(r) => out.push_str(&reg(r)),
        Operand::NotReg(r) => {
            out.push('!');
            out.push_str(&reg(r));
        }
        Operand::Imm(v) => write_imm(out, v, imm_ty),
        Operand::Special(s) => {
            let _ = write!(out, "{s}");
        }
        Operand::Address(Address { base, offset }) => {
            out.push('[');
            match base {
                AddrBase::Reg(r) => out.push_str(&reg(r)),
                AddrBase::Symbol(s) => out.push_str(&symbol_name(program, f, s)),
                AddrBase::Absolute => {
                    let _ = write!(out, "{offset}");
                }
            }
            if base != AddrBase::Absolute && offset != 0 {
                let _ = write!(out, "{offset:+}");
            }
            out.push(']');
        }
        Operand::SymbolAddr { symbol, offset } => {
            out.push_str(&symbol_name(program, f, symbol));
            if offset != 0 {
                let _ = write!(out, "{offset:+}");
            }
        }
        Operand::Symbol(s) => out.push_str(&symbol_name(program, f, s)),
        Operand::Block(b) => out.push_str(&block_name(f, b)),
        Operand::Sink => out.push('_'),
    }
}

fn write_list(
    out: &mut String,
    program: Option<&Program>,
    f: &Function,
    ops: &[Operand],
    imm_ty: Option<ScalarType>,
    sep: &str,
) {
    for (i, op) in ops.iter().enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        write_operand(out, program, f, op, imm_ty);
    }
}

/// One instruction in PTX syntax with register names, e.g. `@!%p1 add.s32 %r1, %r2, -1;`.
pub fn inst_to_string(program: Option<&Program>, f: &Function, inst: &Inst) -> String {
    let mut out = String::new();
    if let Some(g) = inst.guard {
        out.push('@');
        if g.negated {
            out.push('!');
        }
        out.push_str(
            &f.regs
                .get(g.reg.index())
                .map_or_else(|| g.reg.to_string(), |r| r.name.clone()),
        );
        out.push(' ');
    }
    let _ = write!(out, "{}", inst.op);
    let ops = f.operands_of(inst);
    let (dsts, srcs) = ops.split_at((inst.num_dsts as usize).min(ops.len()));
    let imm_ty = immediate_type(&inst.op);
    let p = program;
    let vector = |out: &mut String, ops: &[Operand]| {
        out.push('{');
        write_list(out, p, f, ops, imm_ty, ", ");
        out.push('}');
    };
    if !ops.is_empty() {
        out.push(' ');
    }
    match &inst.op {
        Op::Ld(m) | Op::Ldu(m) if m.lanes > 1 => {
            vector(&mut out, dsts);
            out.push_str(", ");
            write_list(&mut out, p, f, srcs, imm_ty, ", ");
        }
        Op::St(m) if m.lanes > 1 && !srcs.is_empty() => {
            write_operand(&mut out, p, f, &srcs[0], imm_ty);
            out.push_str(", ");
            // st.async: the vector, then the mbarrier's address.
            let end = if m.complete_tx {
                (1 + usize::from(m.lanes)).min(srcs.len())
            } else {
                srcs.len()
            };
            vector(&mut out, &srcs[1..end]);
            if end < srcs.len() {
                out.push_str(", ");
                write_list(&mut out, p, f, &srcs[end..], imm_ty, ", ");
            }
        }
        Op::Pack { .. } => {
            write_list(&mut out, p, f, dsts, imm_ty, ", ");
            out.push_str(", ");
            vector(&mut out, srcs);
        }
        Op::Unpack { .. } => {
            vector(&mut out, dsts);
            out.push_str(", ");
            write_list(&mut out, p, f, srcs, imm_ty, ", ");
        }
        Op::Call(c) => {
            if !dsts.is_empty() {
                out.push('(');
                write_list(&mut out, p, f, dsts, None, ", ");
                out.push_str("), ");
            }
            if let Some((callee, args)) = srcs.split_first() {
                write_operand(&mut out, p, f, callee, None);
                if !args.is_empty() || c.callee == Callee::Indirect {
                    out.push_str(", (");
                    write_list(&mut out, p, f, args, None, ", ");
                    out.push(')');
                }
            }
            if let Some(proto) = &c.prototype {
                let _ = write!(out, ", {proto}");
            }
        }
        Op::Tex(t) => {
            vector(&mut out, dsts);
            out.push_str(", [");
            let handles = 1 + t.has_sampler as usize;
            let (h, rest) = srcs.split_at(handles.min(srcs.len()));
            write_list(&mut out, p, f, h, None, ", ");
            let (coords, extra) = rest.split_at((t.num_coords as usize).min(rest.len()));
            out.push_str(", ");
            vector(&mut out, coords);
            out.push(']');
            for e in extra {
                out.push_str(", ");
                write_operand(&mut out, p, f, e, None);
            }
        }
        Op::WmmaLoad(_) | Op::Ldmatrix(_) if !srcs.is_empty() => {
            vector(&mut out, dsts);
            out.push_str(", ");
            write_list(&mut out, p, f, srcs, imm_ty, ", ");
        }
        Op::WmmaStore(w) if srcs.len() >= 2 => {
            let n = (w.fragment_regs() as usize).min(srcs.len() - 1);
            write_operand(&mut out, p, f, &srcs[0], imm_ty);
            out.push_str(", ");
            vector(&mut out, &srcs[1..1 + n]);
            for e in &srcs[1 + n..] {
                out.push_str(", ");
                write_operand(&mut out, p, f, e, imm_ty);
            }
        }
        Op::Mma(m) => {
            vector(&mut out, dsts);
            let [na, nb, _, _] = m.regs().map(usize::from);
            let (a, rest) = srcs.split_at(na.min(srcs.len()));
            let (b, rest) = rest.split_at(nb.min(rest.len()));
            let nc = if m.sparse.is_some() {
                rest.len().saturating_sub(1)
            } else {
                rest.len()
            };
            let (c, meta) = rest.split_at(nc);
            for part in [a, b, c] {
                out.push_str(", ");
                vector(&mut out, part);
            }
            if let Some(sp) = m.sparse {
                for e in meta {
                    out.push_str(", ");
                    write_operand(&mut out, p, f, e, imm_ty);
                }
                out.push_str(&format!(", {}", sp.selector));
            }
        }
        Op::Stmatrix(_) if !srcs.is_empty() => {
            write_operand(&mut out, p, f, &srcs[0], imm_ty);
            out.push_str(", ");
            vector(&mut out, &srcs[1..]);
        }
        Op::CpAsyncBulkTensor(c) if srcs.len() > usize::from(c.dims) + 1 => {
            let n = usize::from(c.dims);
            let mut map = String::new();
            write_operand(&mut map, p, f, &srcs[0], None);
            let map = map.trim_start_matches('[').trim_end_matches(']');
            let mut tensor = format!("[{map}, ");
            vector(&mut tensor, &srcs[1..=n]);
            tensor.push(']');
            let shared = &srcs[n + 1];
            let rest = &srcs[n + 2..];
            if matches!(c.direction, BulkCopyDirection::SharedToGlobal) {
                out.push_str(&tensor);
                out.push_str(", ");
                write_operand(&mut out, p, f, shared, imm_ty);
            } else {
                write_operand(&mut out, p, f, shared, imm_ty);
                out.push_str(", ");
                out.push_str(&tensor);
            }
            // im2col: the mbarrier, then the offsets as a vector.
            let offsets = if c.im2col { n.saturating_sub(2) } else { 0 };
            let (head, tail) = rest.split_at(rest.len().min(1));
            for e in head {
                out.push_str(", ");
                write_operand(&mut out, p, f, e, imm_ty);
            }
            if offsets > 0 && tail.len() >= offsets {
                out.push_str(", ");
                vector(&mut out, &tail[..offsets]);
            }
            for e in &tail[offsets.min(tail.len())..] {
                out.push_str(", ");
                write_operand(&mut out, p, f, e, imm_ty);
            }
        }
        Op::Txq { .. } => {
            write_list(&mut out, p, f, dsts, None, ", ");
            out.push_str(", [");
            write_list(&mut out, p, f, srcs, None, ", ");
            out.push(']');
        }
        _ => {
            let pair = matches!(
                inst.op,
                Op::Setp { .. } | Op::Shfl { .. } | Op::Match { .. } | Op::Elect
            ) && dsts.len() == 2;
            write_list(&mut out, p, f, dsts, imm_ty, if pair { "|" } else { ", " });
            if !dsts.is_empty() && !srcs.is_empty() {
                out.push_str(", ");
            }
            write_list(&mut out, p, f, srcs, imm_ty, ", ");
        }
    }
    out.push(';');
    out
}

fn block_list(blocks: &[BlockId]) -> String {
    if blocks.is_empty() {
        return "-".to_string();
    }
    blocks
        .iter()
        .map(|b| b.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The text form of a function's CFG: a header, then each block with its label, its
/// predecessors and successors, and its instructions.
pub fn function_to_string(program: Option<&Program>, f: &Function) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} {} ({} params, {} regs, {} blocks, {} insts)",
        if f.kind == crate::FunctionKind::Kernel {
            ".entry"
        } else {
            ".func"
        },
        f.name,
        f.params.len(),
        f.regs.len(),
        f.blocks.len(),
        f.insts.len()
    );
    let params = f
        .return_params
        .iter()
        .map(|p| ("return", p))
        .chain(f.params.iter().map(|p| ("param", p)));
    for (what, p) in params {
        let _ = write!(out, "    {what} {}: .{}", p.name, p.ty);
        if p.elements > 1 {
            let _ = write!(out, "[{}]", p.elements);
        }
        match p.reg {
            Some(_) => out.push_str(" in a register\n"),
            None => {
                let _ = writeln!(
                    out,
                    ", offset {}, size {}, align {}",
                    p.offset, p.size, p.align
                );
            }
        }
    }
    for (i, v) in f.vars.iter().enumerate() {
        let _ = writeln!(
            out,
            "    var {} {}: .{}, size {}, align {}",
            crate::LocalVarId::new(i),
            v.name,
            v.space.as_str(),
            v.size,
            v.align
        );
    }
    if !f.has_body {
        out.push_str("    (declaration)\n");
        return out;
    }
    for (b, block) in f.blocks.iter().enumerate() {
        let id = BlockId::new(b);
        let _ = writeln!(
            out,
            "{}:  // {id}  preds: {}  succs: {}",
            block_name(f, id),
            block_list(&block.preds),
            block_list(&block.succs)
        );
        for i in block.start..block.end {
            if let Some(inst) = f.insts.get(i as usize) {
                let _ = writeln!(out, "    {}", inst_to_string(program, f, inst));
            }
        }
    }
    out
}

fn dot_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\l"),
            _ => out.push(c),
        }
    }
    out
}

/// The CFG as a Graphviz `digraph`, one box per block listing its instructions.
pub fn to_dot(program: Option<&Program>, f: &Function) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "digraph \"{}\" {{", dot_escape(&f.name));
    out.push_str("    node [shape=box, fontname=\"monospace\"];\n");
    for (b, block) in f.blocks.iter().enumerate() {
        let id = BlockId::new(b);
        let mut label = format!("{id}: {}\n", block_name(f, id));
        for i in block.start..block.end {
            if let Some(inst) = f.insts.get(i as usize) {
                label.push_str(&inst_to_string(program, f, inst));
                label.push('\n');
            }
        }
        let _ = writeln!(out, "    {id} [label=\"{}\"];", dot_escape(&label));
    }
    for (b, block) in f.blocks.iter().enumerate() {
        for s in &block.succs {
            let _ = writeln!(out, "    {} -> {s};", BlockId::new(b));
        }
    }
    out.push_str("}\n");
    out
}

/// The serde form of a function's CFG (`--emit cfg --format json`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CfgJson {
    pub name: String,
    pub kind: &'static str,
    pub entry: u32,
    pub registers: Vec<RegJson>,
    pub blocks: Vec<BlockJson>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RegJson {
    pub name: String,
    pub ty: &'static str,
    pub class: &'static str,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BlockJson {
    pub id: u32,
    pub label: Option<String>,
    pub preds: Vec<u32>,
    pub succs: Vec<u32>,
    pub insts: Vec<InstJson>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct InstJson {
    pub id: u32,
    pub line: u32,
    pub text: String,
    /// Register ids written.
    pub defs: Vec<u32>,
    /// Register ids read.
    pub uses: Vec<u32>,
}

impl CfgJson {
    pub fn new(program: Option<&Program>, f: &Function) -> CfgJson {
        let ids = |v: &[BlockId]| v.iter().map(|b| b.0).collect();
        CfgJson {
            name: f.name.clone(),
            kind: f.kind.as_str(),
            entry: 0,
            registers: f
                .regs
                .iter()
                .map(|r| RegJson {
                    name: r.name.clone(),
                    ty: r.ty.as_str(),
                    class: r.class.as_str(),
                })
                .collect(),
            blocks: f
                .blocks
                .iter()
                .enumerate()
                .map(|(b, block)| BlockJson {
                    id: b as u32,
                    label: block.label.clone(),
                    preds: ids(&block.preds),
                    succs: ids(&block.succs),
                    insts: (block.start..block.end)
                        .filter_map(|i| {
                            let inst = f.insts.get(i as usize)?;
                            let id = InstId(i);
                            Some(InstJson {
                                id: i,
                                line: inst.line,
                                text: inst_to_string(program, f, inst),
                                defs: f.defs(id).iter().map(|r| r.0).collect(),
                                uses: f.uses(id).iter().map(|r| r.0).collect(),
                            })
                        })
                        .collect(),
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "\
.version 7.8
.target sm_70
.address_size 64
.visible .entry k(.param .u32 n)
{
  .reg .pred %p<2>;
  .reg .b32 %r<3>;
  ld.param.u32 %r1, [n];
  setp.eq.s32 %p1, %r1, 0;
  @%p1 bra $L_done;
  add.s32 %r2, %r1, -1;
$L_done:
  ret;
}
";

    fn program() -> Program {
        let m = ptx::parse("p.ptx", SRC).expect("parses");
        crate::lower(&m, "p.ptx", SRC).expect("lowers")
    }

    #[test]
    fn text_dump_lists_blocks_edges_and_instructions() {
        let p = program();
        let expected = "\
.entry k (1 params, 5 regs, 3 blocks, 5 insts)
    param n: .u32, offset 0, size 4, align 4
bb0:  // bb0  preds: -  succs: bb2 bb1
    ld.param.u32 %r1, [n];
    setp.eq.s32 %p1, %r1, 0;
    @%p1 bra $L_done;
bb1:  // bb1  preds: bb0  succs: bb2
    add.s32 %r2, %r1, -1;
$L_done:  // bb2  preds: bb0 bb1  succs: -
    ret;
";
        assert_eq!(function_to_string(Some(&p), &p.functions[0]), expected);
    }

    #[test]
    fn dot_is_deterministic_graphviz() {
        let p = program();
        let expected = "\
digraph \"k\" {
    node [shape=box, fontname=\"monospace\"];
    bb0 [label=\"bb0: bb0\\lld.param.u32 %r1, [n];\\lsetp.eq.s32 %p1, %r1, 0;\\l@%p1 bra $L_done;\\l\"];
    bb1 [label=\"bb1: bb1\\ladd.s32 %r2, %r1, -1;\\l\"];
    bb2 [label=\"bb2: $L_done\\lret;\\l\"];
    bb0 -> bb2;
    bb0 -> bb1;
    bb1 -> bb2;
}
";
        assert_eq!(to_dot(Some(&p), &p.functions[0]), expected);
    }

    #[test]
    fn json_form_carries_edges_and_effects() {
        let p = program();
        let cfg = CfgJson::new(Some(&p), &p.functions[0]);
        assert_eq!(cfg.blocks.len(), 3);
        assert_eq!(cfg.blocks[0].succs, [2, 1]);
        assert_eq!(cfg.blocks[2].label.as_deref(), Some("$L_done"));
        let add = &cfg.blocks[1].insts[0];
        assert_eq!(add.text, "add.s32 %r2, %r1, -1;");
        assert_eq!(
            (add.defs.as_slice(), add.uses.as_slice(), add.line),
            (&[4][..], &[3][..], 11)
        );
        let bra = &cfg.blocks[0].insts[2];
        assert_eq!(bra.uses, [1], "the guard is a use");
        assert_eq!(cfg.registers[1].class, "pred");
        let json = serde_json::to_value(&cfg).expect("serialises");
        assert_eq!(json["blocks"][2]["preds"], serde_json::json!([0, 1]));
        assert_eq!(
            json["blocks"][0]["insts"][0]["text"],
            "ld.param.u32 %r1, [n];"
        );
        assert_eq!(json["kind"], "kernel");
    }
}

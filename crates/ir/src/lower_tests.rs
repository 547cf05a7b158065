//! Lowering tests: module structure, parameter and variable layout, scoping, registers,
//! blocks and edges, and module-level errors.

use crate::function::{AddrBase, Address, Operand, RegClass, Relocation, Symbol, VarSpace};
use crate::graph::{ControlFlowGraph, RegisterEffects};
use crate::op::{Op, ScalarType, Space};
use crate::{
    lower, verify, BlockId, FuncId, FunctionKind, InstId, LocalVarId, Program, RegId, VarId,
};

fn lower_src(src: &str) -> Result<Program, String> {
    let module = ptx::parse("t.ptx", src).map_err(|e| format!("parse: {e}"))?;
    lower(&module, "t.ptx", src).map_err(|e| e.to_string())
}

fn ok(src: &str) -> Program {
    let p = lower_src(src).unwrap_or_else(|e| panic!("{e}"));
    for f in &p.functions {
        verify(f).unwrap_or_else(|e| panic!("{}: {e:?}", f.name));
    }
    p
}

const HEAD: &str = ".version 7.8\n.target sm_70\n.address_size 64\n";

#[test]
fn module_header_and_function_table() {
    let p = ok(&format!(
        "{HEAD}
.extern .func (.param .b32 func_retval0) vprintf(.param .b64 a, .param .b64 b);
.func helper(.param .b32 x) {{ ret; }}
.visible .entry k1() {{ ret; }}
.visible .entry k2() .maxntid 128, 1, 1 .minnctapersm 2 {{ exit; }}
"
    ));
    assert_eq!(p.version, Some((7, 8)));
    assert_eq!(p.target, vec!["sm_70".to_string()]);
    assert_eq!(p.address_size, 64);
    let names: Vec<&str> = p.functions.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["vprintf", "helper", "k1", "k2"]);
    assert_eq!(p.func_by_name("k2"), Some(FuncId(3)));
    assert!(!p.functions[0].has_body);
    assert!(p.functions[0].blocks.is_empty());
    assert_eq!(p.functions[0].return_params.len(), 1);
    assert_eq!(p.functions[1].kind, FunctionKind::Device);
    let kernels: Vec<&str> = p.kernels().map(|(_, f)| f.name.as_str()).collect();
    assert_eq!(kernels, ["k1", "k2"]);
    assert_eq!(p.functions[3].directives.maxntid, Some([128, 1, 1]));
    assert_eq!(p.functions[3].directives.minnctapersm, Some(2));
}

#[test]
fn a_declaration_then_a_definition_is_one_function() {
    let p = ok(&format!(
        "{HEAD}
.func f(.param .b32 x);
.visible .entry k() {{ .param .b32 a; st.param.b32 [a], 1; call.uni f, (a); ret; }}
.func f(.param .b32 x) {{ ret; }}
"
    ));
    assert_eq!(p.functions.len(), 2);
    assert!(p.functions[0].has_body);
    let k = &p.functions[1];
    let call = InstId(1);
    assert!(
        matches!(&k.inst(call).op, Op::Call(c) if c.callee == crate::op::Callee::Direct(FuncId(0)))
    );
    assert_eq!(
        k.srcs(call),
        [
            Operand::Symbol(Symbol::Func(FuncId(0))),
            Operand::Symbol(Symbol::Local(LocalVarId(0)))
        ]
    );
}

#[test]
fn kernel_parameters_are_laid_out_with_natural_alignment() {
    let p = ok(&format!(
        "{HEAD}
.visible .entry k(.param .u32 a, .param .u64 b, .param .u8 c, .param .align 16 .b8 s[20], .param .f32 d) {{ ret; }}
"
    ));
    let f = &p.functions[0];
    let layout: Vec<(u64, u64, u32)> = f
        .params
        .iter()
        .map(|p| (p.offset, p.size, p.align))
        .collect();
    assert_eq!(
        layout,
        [(0, 4, 4), (8, 8, 8), (16, 1, 1), (32, 20, 16), (52, 4, 4)]
    );
    assert_eq!(f.param_size, 56);
    assert_eq!(f.params[3].elements, 20);
}

#[test]
fn pointer_parameter_attributes_are_kept() {
    let p = ok(&format!(
        "{HEAD}.visible .entry k(.param .u64 .ptr .global .align 16 p) {{ ret; }}\n"
    ));
    let param = &p.functions[0].params[0];
    assert_eq!(param.ptr_space, Some(Space::Global));
    assert_eq!(param.ptr_align, Some(16));
}

#[test]
fn module_variables_get_size_alignment_and_initial_bytes() {
    let p = ok(&format!(
        "{HEAD}
.global .align 4 .u32 table[4] = {{1, 2, 0xFFFFFFFF}};
.const .f32 scale = 0f40000000;
.global .f64 half = 0.5;
.global .v2 .u16 pairs[2] = {{ {{1, 2}}, {{3, 4}} }};
.global .u64 ptrs[2] = {{table, generic(table)+8}};
.extern .shared .align 16 .b8 dyn[];
.global .u32 inferred[] = {{7, 8, 9}};
.global .texref tex0;
"
    ));
    let table = p.variable(VarId(0));
    assert_eq!(
        (table.space, table.size, table.align, table.elem_size),
        (VarSpace::Global, 16, 4, 4)
    );
    assert_eq!(
        table.init.as_deref(),
        Some(&[1, 0, 0, 0, 2, 0, 0, 0, 255, 255, 255, 255, 0, 0, 0, 0][..])
    );
    let scale = p.variable(VarId(1));
    assert_eq!(scale.space, VarSpace::Const);
    assert_eq!(scale.init.as_deref(), Some(&2.0f32.to_le_bytes()[..]));
    assert_eq!(
        p.variable(VarId(2)).init.as_deref(),
        Some(&0.5f64.to_le_bytes()[..])
    );
    let pairs = p.variable(VarId(3));
    assert_eq!((pairs.size, pairs.align), (8, 4));
    assert_eq!(pairs.init.as_deref(), Some(&[1, 0, 2, 0, 3, 0, 4, 0][..]));
    let ptrs = p.variable(VarId(4));
    assert_eq!(ptrs.init.as_deref(), Some(&[0u8; 16][..]));
    assert_eq!(
        ptrs.relocations,
        [
            Relocation {
                offset: 0,
                size: 8,
                symbol: Symbol::Global(VarId(0)),
                addend: 0,
                generic: false
            },
            Relocation {
                offset: 8,
                size: 8,
                symbol: Symbol::Global(VarId(0)),
                addend: 8,
                generic: true
            },
        ]
    );
    let dynamic = p.variable(VarId(5));
    assert!(dynamic.unsized_array);
    assert_eq!(
        (dynamic.size, dynamic.align, dynamic.space),
        (0, 16, VarSpace::Shared)
    );
    assert_eq!(p.variable(VarId(6)).size, 12);
    assert_eq!(p.variable(VarId(7)).size, 8);
    assert_eq!(p.var_by_name("dyn"), Some(VarId(5)));
}

#[test]
fn registers_ranges_vectors_and_classes() {
    let p = ok(&format!(
        "{HEAD}
.visible .entry k() {{
  .reg .pred %p<2>;
  .reg .f32 %f<3>;
  .reg .b64 %rd1;
  .reg .v4 .f32 %v;
  .reg .b16 %h;
  .reg .b8 %c;
  mov.f32 %v.y, %f2;
  add.f32 %v.w, %v.y, %v.x;
  ret;
}}
"
    ));
    let f = &p.functions[0];
    let names: Vec<&str> = f.regs.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        names,
        ["%p0", "%p1", "%f0", "%f1", "%f2", "%rd1", "%v.x", "%v.y", "%v.z", "%v.w", "%h", "%c"]
    );
    let classes: Vec<RegClass> = f.regs.iter().map(|r| r.class).collect();
    use RegClass::*;
    assert_eq!(
        classes,
        [Pred, Pred, B32, B32, B32, B64, B32, B32, B32, B32, B16, B16]
    );
    assert_eq!(f.regs[11].ty, ScalarType::B8);
    assert_eq!(f.defs(InstId(0)), [RegId(7)]);
    assert_eq!(f.uses(InstId(1)), [RegId(7), RegId(6)]);
}

/// `.reg .b32 %r<4000000000>;` expanded four billion registers: `ptx check` ran for
/// minutes, gigabytes deep. A function's registers are bounded, the error located.
#[test]
fn an_absurd_register_count_is_refused_at_its_declaration() {
    let body = |decls: &str| format!("{HEAD}.visible .entry k() {{\n{decls}\n  ret;\n}}\n");
    let e = lower_src(&body("  .reg .b32 %r<4000000000>;")).unwrap_err();
    assert!(
        e.contains("t.ptx:5:")
            && e.contains("4000000000 registers '%r<4000000000>'")
            && e.contains("more than the 1048576 supported"),
        "{e}"
    );
    // The bound is the function's: vectors count their lanes, declarations add up.
    let e = lower_src(&body("  .reg .b32 %r<8>;\n  .reg .v4 .b32 %v<262143>;")).unwrap_err();
    assert!(
        e.contains("t.ptx:6:") && e.contains("make 1048580 in the function"),
        "{e}"
    );
    let p = ok(&body("  .reg .b32 %r<4>;\n  .reg .v4 .b32 %v<262143>;"));
    assert_eq!(p.functions[0].regs.len(), 4 + 4 * 262_143);
}

#[test]
fn nested_scopes_shadow_and_get_unique_ids() {
    let p = ok(&format!(
        "{HEAD}
.func (.param .b32 rv) g(.param .b32 x) {{ st.param.b32 [rv], 1; ret; }}
.visible .entry k() {{
  .reg .b32 %r<3>;
  .local .align 4 .b8 buf[16];
  {{
    .reg .b32 %r1;
    .param .b32 param0;
    .param .b32 retval0;
    st.param.b32 [param0], %r1;
    call.uni (retval0), g, (param0);
    ld.param.b32 %r2, [retval0];
  }}
  {{
    .param .b32 param0;
    st.param.b32 [param0], %r1;
  }}
  st.local.u32 [buf+4], %r2;
  ret;
}}
"
    ));
    let k = &p.functions[1];
    let var_names: Vec<&str> = k.vars.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(var_names, ["buf", "param0", "retval0", "param0"]);
    assert_eq!(k.vars[0].space, VarSpace::Local);
    assert_eq!(k.vars[0].size, 16);
    // The inner %r1 shadows the outer one.
    let inner_r1 = RegId(3);
    assert_eq!(k.regs[3].name, "%r1");
    assert_eq!(k.srcs(InstId(0))[1], Operand::Reg(inner_r1));
    assert_eq!(k.srcs(InstId(3))[1], Operand::Reg(RegId(1)));
    // The second scope's param0 is a different variable.
    let addr = |i| match k.srcs(InstId(i))[0] {
        Operand::Address(Address {
            base: AddrBase::Symbol(s),
            ..
        }) => s,
        other => panic!("{other:?}"),
    };
    assert_eq!(addr(0), Symbol::Local(LocalVarId(1)));
    assert_eq!(addr(3), Symbol::Local(LocalVarId(3)));
    assert_eq!(addr(4), Symbol::Local(LocalVarId(0)));
    assert_eq!(
        k.dsts(InstId(1)),
        [Operand::Symbol(Symbol::Local(LocalVarId(2)))]
    );
    // In the callee, the return parameter resolves as such.
    let g = &p.functions[0];
    assert_eq!(
        g.srcs(InstId(0))[0],
        Operand::Address(Address {
            base: AddrBase::Symbol(Symbol::ReturnParam(0)),
            offset: 0
        })
    );
}

#[test]
fn indirect_calls_need_a_prototype() {
    let p = ok(&format!(
        "{HEAD}
.func (.param .b32 r) f(.param .b32 x) {{ st.param.b32 [r], 0; ret; }}
.visible .entry k() {{
  .reg .b64 %rd<2>;
  .reg .b32 %r<2>;
  mov.u64 %rd1, f;
  {{
    .param .b32 p0;
    .param .b32 r0;
    st.param.b32 [p0], 5;
    proto: .callprototype (.param .b32 _) _ (.param .b32 _);
    call (r0), %rd1, (p0), proto;
    ld.param.b32 %r1, [r0];
  }}
  ret;
}}
"
    ));
    let k = &p.functions[1];
    assert_eq!(
        k.srcs(InstId(0)),
        [Operand::SymbolAddr {
            symbol: Symbol::Func(FuncId(0)),
            offset: 0
        }]
    );
    let call = InstId(2);
    assert!(matches!(&k.inst(call).op, Op::Call(c) if c.prototype.as_deref() == Some("proto")));
    assert_eq!(k.uses(call), [RegId(1)]);
    let printed = crate::print::inst_to_string(Some(&p), k, k.inst(call));
    assert_eq!(printed, "call (r0), %rd1, (p0), proto;");
}

#[test]
fn blocks_follow_labels_and_terminators() {
    let p = ok(&format!(
        "{HEAD}
.visible .entry k(.param .u32 n) {{
  .reg .pred %p<3>;
  .reg .b32 %r<4>;
  ld.param.u32 %r1, [n];
  setp.eq.s32 %p1, %r1, 0;
  @%p1 bra $L_exit;
  mov.u32 %r2, 0;
$L_loop:
$L_alias:
  add.s32 %r2, %r2, 1;
  setp.lt.s32 %p2, %r2, %r1;
  @%p2 bra $L_loop;
  bra.uni $L_exit;
  mov.u32 %r3, 1;
$L_exit:
  @%p1 ret;
  exit;
}}
"
    ));
    let f = &p.functions[0];
    type Shape<'a> = (Option<&'a str>, u32, u32, Vec<u32>, Vec<u32>);
    let shape: Vec<Shape> = f
        .blocks
        .iter()
        .map(|b| {
            (
                b.label.as_deref(),
                b.start,
                b.end,
                b.succs.iter().map(|s| s.0).collect(),
                b.preds.iter().map(|s| s.0).collect(),
            )
        })
        .collect();
    assert_eq!(
        shape,
        [
            (None, 0, 3, vec![5, 1], vec![]),
            (None, 3, 4, vec![2], vec![0]),
            (Some("$L_loop"), 4, 7, vec![2, 3], vec![1, 2]),
            (None, 7, 8, vec![5], vec![2]),
            // Unreachable, kept.
            (None, 8, 9, vec![5], vec![]),
            (Some("$L_exit"), 9, 10, vec![6], vec![0, 3, 4]),
            (None, 10, 11, vec![], vec![5]),
        ]
    );
    assert_eq!(f.entry(), BlockId(0));
    assert_eq!(f.block_insts(BlockId(2)), [InstId(4), InstId(5), InstId(6)]);
    assert_eq!(f.block_of(InstId(8)), Some(BlockId(4)));
    // A branch to the second of two coinciding labels lands on the same block.
    assert!(f.insts[6].guard.is_some());
    assert!(f.defs_are_partial(InstId(6)));
    assert!(!f.defs_are_partial(InstId(5)));
}

#[test]
fn guard_and_address_registers_are_uses() {
    let p = ok(&format!(
        "{HEAD}
.visible .entry k() {{
  .reg .pred %p1;
  .reg .b64 %rd<3>;
  .reg .f32 %f1;
  @!%p1 ld.global.f32 %f1, [%rd1+4];
  st.global.f32 [%rd2], %f1;
  ret;
}}
"
    ));
    let f = &p.functions[0];
    assert_eq!(f.uses(InstId(0)), [RegId(0), RegId(2)]);
    assert_eq!(f.defs(InstId(0)), [RegId(4)]);
    assert_eq!(f.uses(InstId(1)), [RegId(3), RegId(4)]);
    assert!(f.defs(InstId(1)).is_empty());
    assert!(f.insts[0].guard.is_some_and(|g| g.negated));
}

#[test]
fn source_lines_and_text_are_kept() {
    let src =
        format!("{HEAD}.visible .entry k() {{\n  .reg .b32 %r1;\n  mov.u32 %r1, 7;\n  ret;\n}}\n");
    let p = ok(&src);
    let f = &p.functions[0];
    assert_eq!(f.insts[0].line, 6);
    assert_eq!(
        p.inst_text(&f.insts[0]).trim_end_matches(';'),
        "mov.u32 %r1, 7"
    );
}

#[test]
fn module_level_errors_are_reported() {
    let cases: &[(&str, &str)] = &[
        (
            ".func f() { ret; }\n.func f() { ret; }",
            "function 'f' is defined twice",
        ),
        (
            ".global .u32 x;\n.global .u32 x;",
            "variable 'x' is declared twice",
        ),
        (".global .u64 p = nosuch;", "undefined symbol 'nosuch'"),
        (
            ".global .u32 a[2] = {1, 2, 3};",
            "too many initializers for 'a'",
        ),
        (
            ".visible .entry k() { .reg .b32 %r1; .reg .b32 %r1; ret; }",
            "'%r1' is declared twice in one scope",
        ),
        (
            ".visible .entry k() { $L: ret; $L: ret; }",
            "label '$L' is defined twice",
        ),
        (
            ".visible .entry k(.param .b8 a[]) { ret; }",
            "parameter array needs a size",
        ),
        (
            ".func f(.param .b32 x) { ret; }\n.visible .entry k() { call.uni f, (); ret; }",
            "call to 'f' passes 0 argument(s) and 0 return value(s), but it takes 1 and returns 0",
        ),
    ];
    for (body, expected) in cases {
        let e = lower_src(&format!("{HEAD}{body}\n")).expect_err(body);
        assert!(
            e.contains(expected),
            "{body}:\n  got: {e}\n  expected: {expected}"
        );
        assert!(e.starts_with("t.ptx:"), "{e}");
    }
}

#[test]
fn register_parameters_of_device_functions_are_registers() {
    let p = ok(&format!(
        "{HEAD}
.func (.reg .b32 out) f(.reg .b32 x) {{ add.s32 out, x, 1; ret; }}
"
    ));
    let f = &p.functions[0];
    assert_eq!(f.params[0].reg, Some(RegId(0)));
    assert_eq!(f.return_params[0].reg, Some(RegId(1)));
    assert_eq!(f.param_size, 0);
    assert_eq!(f.defs(InstId(0)), [RegId(1)]);
    assert_eq!(f.uses(InstId(0)), [RegId(0)]);
}

#[test]
fn a_branch_to_the_first_instruction_gives_the_entry_block_a_predecessor() {
    let p = ok(&format!(
        "{HEAD}
.visible .entry k() {{
  .reg .pred %p1;
$L_top:
  setp.eq.s32 %p1, 0, 0;
  @%p1 bra $L_top;
  ret;
}}
"
    ));
    let f = &p.functions[0];
    assert_eq!(f.blocks[0].label.as_deref(), Some("$L_top"));
    assert_eq!(f.predecessors(BlockId(0)), [BlockId(0)]);
    assert_eq!(f.successors(BlockId(0)), [BlockId(0), BlockId(1)]);
}

#[test]
fn an_empty_body_has_one_empty_entry_block() {
    let p = lower_src(&format!("{HEAD}.visible .entry k() {{ }}\n")).expect("lowers");
    let f = &p.functions[0];
    assert_eq!(f.blocks.len(), 1);
    assert!(f.block_insts(BlockId(0)).is_empty());
    // It falls off the end: the verifier says so.
    let errors = verify(f).expect_err("no ret");
    assert!(
        errors[0].to_string().contains("control falls off the end"),
        "{errors:?}"
    );
}

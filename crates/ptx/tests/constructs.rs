//! What the tree says for each PTX construct: literals, addresses, operands,
//! declarations, calls and directives.

mod common;

use common::{assert_round_trip, parse_ok};
use ptx::ast::*;

/// The statements of a kernel whose body is `body`.
fn body(body: &str) -> Vec<Statement> {
    let text =
        format!(".version 7.8\n.target sm_70\n.address_size 64\n.entry k()\n{{\n{body}\n}}\n");
    assert_round_trip("body.ptx", &text);
    let mut m = parse_ok("body.ptx", &text);
    m.erase_spans();
    match m.items.pop() {
        Some(ModuleItem::Function(Function { body: Some(b), .. })) => b.statements,
        other => panic!("expected a kernel, got {other:?}"),
    }
}

fn instruction(text: &str) -> Instruction {
    match body(text).pop() {
        Some(Statement::Instruction(i)) => i,
        other => panic!("expected an instruction, got {other:?}"),
    }
}

fn operands(text: &str) -> Vec<Operand> {
    instruction(text).operands
}

fn items(text: &str) -> Vec<ModuleItem> {
    assert_round_trip("items.ptx", text);
    let mut m = parse_ok("items.ptx", text);
    m.erase_spans();
    m.items
}

fn id(name: &str) -> Ident {
    Ident {
        name: name.to_string(),
        span: Span::default(),
    }
}

fn name(n: &str) -> Operand {
    Operand::Name {
        name: id(n),
        component: None,
    }
}

fn imm(i: Immediate) -> Operand {
    Operand::Immediate(i, Span::default())
}

fn addr(base: Option<&str>, offset: i64) -> Operand {
    Operand::Address(Address {
        base: base.map_or(AddressBase::Absolute, |b| AddressBase::Name(id(b))),
        offset,
        span: Span::default(),
    })
}

#[test]
fn integer_literals_in_every_base() {
    let cases: &[(&str, i64)] = &[
        ("42", 42),
        ("0x2A", 42),
        ("0X2a", 42),
        ("052", 42),
        ("0b101010", 42),
        ("42U", 42),
        ("0x2AU", 42),
        ("0", 0),
        ("-42", -42),
        ("0xFFFFFFFF", 0xFFFF_FFFF),
        ("0xFFFFFFFFFFFFFFFF", -1),
        ("18446744073709551615", -1),
        ("-9223372036854775808", i64::MIN),
    ];
    for (text, value) in cases {
        assert_eq!(
            operands(&format!("mov.u32 %r1, {text};"))[1],
            imm(Immediate::Int(*value)),
            "{text}"
        );
    }
}

#[test]
fn float_literals_keep_their_bits() {
    let cases: &[(&str, Immediate)] = &[
        ("0f3F800000", Immediate::F32(0x3F80_0000)),
        ("0F3f800000", Immediate::F32(0x3F80_0000)),
        ("-0f3F800000", Immediate::F32(0xBF80_0000)),
        ("0d3FF8000000000000", Immediate::F64(0x3FF8_0000_0000_0000)),
        ("1.5", Immediate::F64(1.5f64.to_bits())),
        ("1e-3", Immediate::F64(1e-3f64.to_bits())),
        ("2.5E+2", Immediate::F64(250f64.to_bits())),
        ("-0.5", Immediate::F64((-0.5f64).to_bits())),
    ];
    for (text, value) in cases {
        assert_eq!(
            operands(&format!("mov.f32 %f1, {text};"))[1],
            imm(*value),
            "{text}"
        );
    }
}

#[test]
fn address_forms() {
    let cases: &[(&str, Option<&str>, i64)] = &[
        ("[%rd1]", Some("%rd1"), 0),
        ("[%rd1+8]", Some("%rd1"), 8),
        ("[%rd1+-8]", Some("%rd1"), -8),
        ("[%rd1-8]", Some("%rd1"), -8),
        ("[%rd1 + 0x10]", Some("%rd1"), 16),
        ("[sym]", Some("sym"), 0),
        ("[sym+4]", Some("sym"), 4),
        ("[param0+0]", Some("param0"), 0),
        ("[100]", None, 100),
        ("[-4]", None, -4),
    ];
    for (text, base, offset) in cases {
        assert_eq!(
            operands(&format!("ld.u32 %r1, {text};"))[1],
            addr(*base, *offset),
            "{text}"
        );
    }
}

#[test]
fn special_registers_are_names_with_components() {
    assert_eq!(
        operands("mov.u32 %r1, %tid.x;")[1],
        Operand::Name {
            name: id("%tid"),
            component: Some(VectorComponent::X)
        }
    );
    assert_eq!(
        operands("mov.u32 %r1, %ctaid.w;")[1],
        Operand::Name {
            name: id("%ctaid"),
            component: Some(VectorComponent::W)
        }
    );
    assert_eq!(operands("mov.u32 %r1, %laneid;")[1], name("%laneid"));
}

#[test]
fn predicates_guards_pairs_and_negation() {
    let i = instruction("@!%p1 setp.lt.s32 %p2|%p3, %r1, 0;");
    assert_eq!(
        i.guard,
        Some(Guard {
            negated: true,
            predicate: id("%p1")
        })
    );
    assert_eq!(i.operands[0], Operand::PredicatePair(id("%p2"), id("%p3")));
    let ops = operands("selp.b32 %r1, 1, 0, !%p2;");
    assert_eq!(ops[3], Operand::Not(Box::new(name("%p2"))));
    assert!(instruction("@%p bra $L__BB0_2;")
        .guard
        .is_some_and(|g| !g.negated));
}

#[test]
fn vector_operands_with_sinks() {
    assert_eq!(
        operands("ld.global.v4.f32 {%f1, %f2, _, %f4}, [%rd7];")[0],
        Operand::Vector(
            vec![
                name("%f1"),
                name("%f2"),
                Operand::Sink(Span::default()),
                name("%f4")
            ],
            Span::default()
        )
    );
}

#[test]
fn texture_operands() {
    let ops = operands("tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [tref, samp, {%f5, %f6}];");
    assert_eq!(
        ops[1],
        Operand::TextureAddress(
            vec![
                name("tref"),
                name("samp"),
                Operand::Vector(vec![name("%f5"), name("%f6")], Span::default())
            ],
            Span::default()
        )
    );
    assert_eq!(
        operands("txq.width.b32 %r1, [tref];")[1],
        addr(Some("tref"), 0)
    );
}

#[test]
fn symbol_plus_offset_operand() {
    assert_eq!(
        operands("mov.u64 %rd1, words+4;")[1],
        Operand::SymbolOffset {
            name: id("words"),
            offset: 4
        }
    );
}

#[test]
fn modifiers_in_source_order_including_double_colon_words() {
    let i =
        instruction("ld.global.nc.L1::evict_last.L2::cache_hint.v2.f32 {%f1, %f2}, [%rd1], %rd2;");
    assert_eq!(i.opcode, Opcode::Ld);
    assert_eq!(
        i.modifiers,
        vec![
            Modifier::Space(StateSpace::Global),
            Modifier::Flag(Flag::Nc),
            Modifier::Other("L1::evict_last".into()),
            Modifier::Other("L2::cache_hint".into()),
            Modifier::Vector(VectorWidth::V2),
            Modifier::Type(ScalarType::F32),
        ]
    );
    assert_eq!(
        instruction("ld.shared::cta.u32 %r1, [s];").modifiers[0],
        Modifier::Space(StateSpace::SharedCta)
    );
    assert_eq!(
        instruction("tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [t, {%f5, %f6}];").modifiers[0],
        Modifier::Flag(Flag::Dim2d)
    );
}

#[test]
fn both_call_forms() {
    let ops = operands("call.uni (retval0), _Z3fooi, (param0, param1);");
    assert_eq!(
        ops,
        vec![
            Operand::List(vec![name("retval0")], Span::default()),
            name("_Z3fooi"),
            Operand::List(vec![name("param0"), name("param1")], Span::default()),
        ]
    );
    let ops = operands("call (retval0), %rd5, (param0), prototype_0;");
    assert_eq!(ops.len(), 4);
    assert_eq!(ops[3], name("prototype_0"));
    assert_eq!(
        operands("call.uni vprintf, ();")[1],
        Operand::List(vec![], Span::default())
    );
}

#[test]
fn call_prototypes_and_target_lists() {
    let stmts = body(
        "p0 : .callprototype (.param .b32 _) _ (.param .b32 _, .param .align 8 .b8 _[16]);\n\
         p1 : .callprototype ()_ (.param .b64 _);\n\
         p2 : .callprototype _ () .noreturn;\n\
         ts: .branchtargets $L1, $L2;\n\
         cs: .calltargets f, g;",
    );
    let Statement::CallPrototype(p0) = &stmts[0] else {
        panic!("{:?}", stmts[0])
    };
    assert_eq!(p0.label, id("p0"));
    assert_eq!(p0.return_params.len(), 1);
    assert_eq!(p0.params.len(), 2);
    assert_eq!(p0.params[1].align, Some(8));
    assert_eq!(p0.params[1].array, vec![Some(16)]);
    let Statement::CallPrototype(p1) = &stmts[1] else {
        panic!()
    };
    assert!(p1.return_params.is_empty() && p1.params.len() == 1 && !p1.noreturn);
    let Statement::CallPrototype(p2) = &stmts[2] else {
        panic!()
    };
    assert!(p2.noreturn && p2.params.is_empty());
    assert_eq!(
        stmts[3],
        Statement::TargetList(TargetList {
            label: id("ts"),
            kind: TargetListKind::Branch,
            targets: vec![id("$L1"), id("$L2")],
            span: Span::default()
        })
    );
    let Statement::TargetList(cs) = &stmts[4] else {
        panic!()
    };
    assert_eq!(cs.kind, TargetListKind::Call);
}

#[test]
fn register_declarations() {
    let stmts = body(".reg .b32 %r<42>, %q;\n.reg .v4 .f32 %v;\n.reg .pred %p<3>;");
    let Statement::RegDecl(r) = &stmts[0] else {
        panic!()
    };
    assert_eq!(r.ty, ScalarType::B32);
    assert_eq!(r.names[0].range, Some(42));
    assert_eq!(
        r.names[1],
        RegDeclarator {
            name: id("%q"),
            range: None
        }
    );
    let Statement::RegDecl(v) = &stmts[1] else {
        panic!()
    };
    assert_eq!((v.vector, v.ty), (Some(VectorWidth::V4), ScalarType::F32));
}

#[test]
fn nested_call_scopes_are_blocks() {
    let stmts = body(
        "{ // callseq 0, 0\n.reg .b32 temp_param_reg;\n.param .b32 param0;\n\
         st.param.b32 [param0+0], %r1;\ncall.uni _Z3fooi, (param0);\n} // callseq 0",
    );
    let Statement::Block(b) = &stmts[0] else {
        panic!("{stmts:?}")
    };
    assert_eq!(b.statements.len(), 4);
    assert!(matches!(&b.statements[1], Statement::Variable(v) if v.space == StateSpace::Param));
}

#[test]
fn labels_and_instructions_on_one_line() {
    let stmts = body("$L__a: $L__b: bar.sync 0;");
    assert_eq!(stmts[0], Statement::Label(id("$L__a")));
    assert_eq!(stmts[1], Statement::Label(id("$L__b")));
    assert!(matches!(&stmts[2], Statement::Instruction(i) if i.opcode == Opcode::Bar));
}

#[test]
fn loc_and_pragma_statements() {
    let stmts = body(
        ".loc 1 12 3\n.loc 2 91 5, function_name $L__info_string0, inlined_at 1 13 3 // comment\n\
         .pragma \"nounroll\";",
    );
    assert_eq!(
        stmts[0],
        Statement::Loc(LocDirective {
            file: 1,
            line: 12,
            column: 3,
            rest: None,
            span: Span::default()
        })
    );
    let Statement::Loc(l) = &stmts[1] else {
        panic!()
    };
    assert_eq!(
        l.rest.as_deref(),
        Some(", function_name $L__info_string0, inlined_at 1 13 3")
    );
    assert!(matches!(&stmts[2], Statement::Pragma(p) if p.text == "nounroll"));
}

#[test]
fn module_header() {
    let m = parse_ok(
        "h.ptx",
        "// c\n.version 7.10\n.target sm_86, texmode_independent\n.address_size 32\n",
    );
    assert_eq!(m.version, Some((7, 10)));
    assert_eq!(
        m.target.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
        ["sm_86", "texmode_independent"]
    );
    assert_eq!(m.address_size, Some(32));
    assert!(m.items.is_empty());
}

#[test]
fn empty_and_comment_only_files_are_empty_modules() {
    for text in ["", "   \n\t", "// nothing\n/* at all */"] {
        let m = parse_ok("e.ptx", text);
        assert_eq!((m.version, m.items.len()), (None, 0));
    }
}

#[test]
fn variables_with_initializers() {
    let items = items(
        ".global .align 8 .u64 tab[3] = {generic(a), generic(a)+4, b+8};\n\
         .global .u32 m[2][2] = {{1, 2}, {3, 4}};\n\
         .const .f32 one = 0f3F800000;\n\
         .extern .shared .align 16 .b8 smem[];\n\
         .visible .global .attribute(.managed) .align 4 .u32 mv;\n\
         .shared .b8 x, y[4];\n\
         .global .texref t;\n\
         .tex .u64 legacy;",
    );
    let vars: Vec<&VariableDecl> = items
        .iter()
        .map(|i| match i {
            ModuleItem::Variable(v) => v,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(vars.len(), 9);
    assert_eq!(
        vars[0].init,
        Some(Initializer::List(vec![
            Initializer::Value(InitValue::Generic {
                name: id("a"),
                offset: 0
            }),
            Initializer::Value(InitValue::Generic {
                name: id("a"),
                offset: 4
            }),
            Initializer::Value(InitValue::Symbol {
                name: id("b"),
                offset: 8
            }),
        ]))
    );
    assert_eq!(vars[1].array, vec![Some(2), Some(2)]);
    assert!(
        matches!(&vars[1].init, Some(Initializer::List(l)) if matches!(&l[1], Initializer::List(_)))
    );
    assert_eq!(
        vars[2].init,
        Some(Initializer::Value(InitValue::Immediate(Immediate::F32(
            0x3F80_0000
        ))))
    );
    assert_eq!(
        (
            vars[3].linkage,
            vars[3].space,
            vars[3].align,
            vars[3].array.clone()
        ),
        (
            Some(Linkage::Extern),
            StateSpace::Shared,
            Some(16),
            vec![None]
        )
    );
    assert!(vars[4].managed && vars[4].linkage == Some(Linkage::Visible));
    assert_eq!(
        (vars[5].name.name.as_str(), vars[6].name.name.as_str()),
        ("x", "y")
    );
    assert_eq!(vars[6].array, vec![Some(4)]);
    assert_eq!(vars[7].ty, VariableType::TexRef);
    assert_eq!(
        (vars[8].space, vars[8].ty),
        (StateSpace::Tex, VariableType::Scalar(ScalarType::U64))
    );
}

#[test]
fn function_headers() {
    let items = items(
        ".extern .func (.param .b32 func_retval0) vprintf(.param .b64 a, .param .b64 b);\n\
         .weak .func abort_now() .noreturn { trap; }\n\
         .visible .entry k(.param .u64 .ptr .global .align 16 out, .param .align 8 .b8 s[24])\n\
         .maxntid 256, 1, 1\n.minnctapersm 2\n.maxnreg 32\n.pragma \"nounroll\";\n{ ret; }\n\
         .func f(.reg .b32 x) { ret; }",
    );
    let fs: Vec<&Function> = items
        .iter()
        .map(|i| match i {
            ModuleItem::Function(f) => f,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(fs[0].linkage, Some(Linkage::Extern));
    assert_eq!(fs[0].return_params[0].name, id("func_retval0"));
    assert!(fs[0].body.is_none());
    assert!(fs[1].noreturn && fs[1].body.is_some() && fs[1].linkage == Some(Linkage::Weak));
    assert_eq!(fs[2].kind, FunctionKind::Entry);
    assert_eq!(
        fs[2].params[0].ptr,
        Some(PtrAttribute {
            space: Some(StateSpace::Global),
            align: Some(16)
        })
    );
    assert_eq!(fs[2].params[1].array, vec![Some(24)]);
    assert_eq!(
        fs[2].directives,
        vec![
            PerformanceDirective::MaxNtid(vec![256, 1, 1]),
            PerformanceDirective::MinNctaPerSm(2),
            PerformanceDirective::MaxNreg(32),
            PerformanceDirective::Pragma(Pragma {
                text: "nounroll".into(),
                span: Span::default()
            }),
        ]
    );
    assert_eq!(fs[3].params[0].space, StateSpace::Reg);
}

#[test]
fn file_and_section_directives() {
    let items = items(
        ".file 1 \"/tmp/a.cu\"\n.file 2 \"b.h\", 1700000000, 1234\n\
         .section .debug_info\n{\n.b32 10 // }\n.b8 1, {2}\n}\n.section .debug_loc { }",
    );
    assert!(matches!(&items[0], ModuleItem::File(f) if f.index == 1 && f.path == "/tmp/a.cu"));
    assert!(
        matches!(&items[1], ModuleItem::File(f) if f.timestamp_and_size == Some((1_700_000_000, 1234)))
    );
    let ModuleItem::Section(s) = &items[2] else {
        panic!()
    };
    assert_eq!(s.name, "debug_info");
    assert_eq!(s.body, "\n.b32 10 // }\n.b8 1, {2}\n");
    assert!(matches!(&items[3], ModuleItem::Section(s) if s.body == " "));
}

#[test]
fn spans_point_at_the_source() {
    let text = ".entry k()\n{\n\tadd.s32 %r1, %r2, 7;\n}\n";
    let m = parse_ok("s.ptx", text);
    let ModuleItem::Function(f) = &m.items[0] else {
        panic!()
    };
    assert_eq!(
        &text[f.span.start as usize..f.span.end as usize],
        text.trim_end()
    );
    let Statement::Instruction(i) = &f.body.as_ref().unwrap().statements[0] else {
        panic!()
    };
    let slice = |s: Span| &text[s.start as usize..s.end as usize];
    assert_eq!(slice(i.span), "add.s32 %r1, %r2, 7;");
    assert_eq!(slice(i.operands[1].span()), "%r2");
    assert_eq!(slice(i.operands[2].span()), "7");
    let index = ptx::LineIndex::new(text);
    assert_eq!(index.line_col(i.span.start), (3, 2));
}

#[test]
fn cluster_directives_of_sm_90() {
    let items = items(
        ".visible .entry k() .reqnctapercluster 2, 1 .explicitcluster .maxclusterrank 8\n\
         .maxntid 128\n{ ret; }",
    );
    let ModuleItem::Function(f) = &items[0] else {
        panic!("{:?}", items[0])
    };
    assert_eq!(
        f.directives,
        vec![
            PerformanceDirective::ReqNctaPerCluster(vec![2, 1]),
            PerformanceDirective::ExplicitCluster,
            PerformanceDirective::MaxClusterRank(8),
            PerformanceDirective::MaxNtid(vec![128]),
        ]
    );
}

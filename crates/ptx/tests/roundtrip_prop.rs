//! Property: for random (valid-ish) trees, `parse(print(tree)) == tree` after erasing
//! spans, and printing is a fixpoint.

use proptest::prelude::*;
use ptx::ast::*;

const NO_SPAN: Span = Span { start: 0, end: 0 };

fn ident() -> impl Strategy<Value = Ident> {
    prop_oneof![
        "%[a-z]{1,3}[0-9]{0,3}",
        "\\$L__BB[0-9]_[0-9]{1,2}",
        "[a-zA-Z_][a-zA-Z0-9_$]{0,10}",
    ]
    .prop_filter("'_' is the sink, 'generic' a keyword", |s| {
        s != "_" && s != "generic"
    })
    .prop_map(|name| Ident {
        name,
        span: NO_SPAN,
    })
}

/// A side of `%p|%q`: a name or the sink `_`.
fn pred_side() -> impl Strategy<Value = Ident> {
    prop_oneof![
        3 => ident(),
        1 => Just(Ident { name: "_".into(), span: NO_SPAN }),
    ]
}

fn pick<T: Copy + std::fmt::Debug + 'static>(all: &'static [T]) -> impl Strategy<Value = T> {
    prop::sample::select(all)
}

const SCALAR_TYPES: &[ScalarType] = &[
    ScalarType::S8,
    ScalarType::S16,
    ScalarType::S32,
    ScalarType::S64,
    ScalarType::U8,
    ScalarType::U16,
    ScalarType::U32,
    ScalarType::U64,
    ScalarType::B8,
    ScalarType::B16,
    ScalarType::B32,
    ScalarType::B64,
    ScalarType::B128,
    ScalarType::F16,
    ScalarType::F16x2,
    ScalarType::Bf16,
    ScalarType::Bf16x2,
    ScalarType::Tf32,
    ScalarType::E4m3,
    ScalarType::E5m2,
    ScalarType::F32,
    ScalarType::F64,
    ScalarType::S4,
    ScalarType::U4,
    ScalarType::Pred,
];

const SPACES: &[StateSpace] = &[
    StateSpace::Reg,
    StateSpace::Sreg,
    StateSpace::Const,
    StateSpace::Global,
    StateSpace::Local,
    StateSpace::Param,
    StateSpace::ParamEntry,
    StateSpace::ParamFunc,
    StateSpace::Shared,
    StateSpace::SharedCta,
    StateSpace::SharedCluster,
    StateSpace::Tex,
];

/// Spaces a variable declaration can have: `.reg` starts a register declaration instead.
const VARIABLE_SPACES: &[StateSpace] = &[
    StateSpace::Sreg,
    StateSpace::Const,
    StateSpace::Global,
    StateSpace::Local,
    StateSpace::Param,
    StateSpace::ParamEntry,
    StateSpace::ParamFunc,
    StateSpace::Shared,
    StateSpace::SharedCta,
    StateSpace::SharedCluster,
    StateSpace::Tex,
];

const WIDTHS: &[VectorWidth] = &[VectorWidth::V2, VectorWidth::V4, VectorWidth::V8];
const LINKAGES: &[Linkage] = &[
    Linkage::Visible,
    Linkage::Extern,
    Linkage::Weak,
    Linkage::Common,
];
const COMPONENTS: &[VectorComponent] = &[
    VectorComponent::X,
    VectorComponent::Y,
    VectorComponent::Z,
    VectorComponent::W,
];

fn scalar_type() -> impl Strategy<Value = ScalarType> {
    pick(SCALAR_TYPES)
}

fn align() -> impl Strategy<Value = u32> {
    (0u32..32).prop_map(|k| 1 << k)
}

fn immediate() -> impl Strategy<Value = Immediate> {
    prop_oneof![
        any::<i64>().prop_map(Immediate::Int),
        (-1000i64..1000).prop_map(Immediate::Int),
        any::<u32>().prop_map(Immediate::F32),
        any::<u64>().prop_map(Immediate::F64),
    ]
}

fn modifier() -> impl Strategy<Value = Modifier> {
    prop_oneof![
        scalar_type().prop_map(Modifier::Type),
        pick(WIDTHS).prop_map(Modifier::Vector),
        pick(SPACES).prop_map(Modifier::Space),
        pick(Flag::ALL).prop_map(Modifier::Flag),
        // Arbitrary words, `::`-joined ones included; `from_name` classifies them.
        "[a-zA-Z0-9_]{1,8}(::[a-zA-Z0-9_]{1,6})?".prop_map(|w| Modifier::from_name(&w)),
    ]
}

fn operand() -> impl Strategy<Value = Operand> {
    let leaf = prop_oneof![
        (ident(), prop::option::of(pick(COMPONENTS)))
            .prop_map(|(name, component)| Operand::Name { name, component }),
        immediate().prop_map(|i| Operand::Immediate(i, NO_SPAN)),
        Just(Operand::Sink(NO_SPAN)),
        (prop::option::of(ident()), any::<i64>()).prop_map(|(base, offset)| {
            Operand::Address(Address {
                base: base.map_or(AddressBase::Absolute, AddressBase::Name),
                offset,
                span: NO_SPAN,
            })
        }),
        (pred_side(), pred_side()).prop_map(|(a, b)| Operand::PredicatePair(a, b)),
        (ident(), any::<i64>()).prop_map(|(name, offset)| Operand::SymbolOffset { name, offset }),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            inner.clone().prop_map(|o| Operand::Not(Box::new(o))),
            prop::collection::vec(inner.clone(), 1..4).prop_map(|v| Operand::Vector(v, NO_SPAN)),
            prop::collection::vec(inner.clone(), 0..3).prop_map(|v| Operand::List(v, NO_SPAN)),
            (ident(), prop::collection::vec(inner, 1..3)).prop_map(|(handle, rest)| {
                let mut items = vec![Operand::Name {
                    name: handle,
                    component: None,
                }];
                items.extend(rest);
                Operand::TextureAddress(items, NO_SPAN)
            }),
        ]
    })
}

fn instruction() -> impl Strategy<Value = Instruction> {
    (
        prop::option::of((any::<bool>(), ident())),
        pick(Opcode::ALL),
        prop::collection::vec(modifier(), 0..4),
        prop::collection::vec(operand(), 0..5),
    )
        .prop_map(|(guard, opcode, modifiers, operands)| Instruction {
            guard: guard.map(|(negated, predicate)| Guard { negated, predicate }),
            opcode,
            modifiers,
            operands,
            span: NO_SPAN,
        })
}

fn dims() -> impl Strategy<Value = Vec<Option<u64>>> {
    prop::collection::vec(prop::option::of(any::<u64>()), 0..3)
}

fn param() -> impl Strategy<Value = Param> {
    (
        pick(&[StateSpace::Param, StateSpace::Reg][..]),
        prop::option::of(align()),
        scalar_type(),
        prop::option::of((prop::option::of(pick(SPACES)), prop::option::of(align()))),
        ident(),
        dims(),
    )
        .prop_map(|(space, align, ty, ptr, name, array)| Param {
            space,
            align,
            ty,
            ptr: ptr.map(|(space, align)| PtrAttribute { space, align }),
            name,
            array,
            span: NO_SPAN,
        })
}

fn initializer() -> impl Strategy<Value = Initializer> {
    let value = prop_oneof![
        immediate().prop_map(InitValue::Immediate),
        (ident(), any::<i64>()).prop_map(|(name, offset)| InitValue::Symbol { name, offset }),
        (ident(), any::<i64>()).prop_map(|(name, offset)| InitValue::Generic { name, offset }),
    ]
    .prop_map(Initializer::Value);
    value.prop_recursive(3, 20, 4, |inner| {
        prop::collection::vec(inner, 0..4).prop_map(Initializer::List)
    })
}

fn variable() -> impl Strategy<Value = VariableDecl> {
    let ty = prop_oneof![
        4 => scalar_type().prop_map(VariableType::Scalar),
        1 => pick(&[VariableType::TexRef, VariableType::SamplerRef, VariableType::SurfRef][..]),
    ];
    (
        prop::option::of(pick(LINKAGES)),
        pick(VARIABLE_SPACES),
        any::<bool>(),
        prop::option::of(align()),
        prop::option::of(pick(WIDTHS)),
        ty,
        ident(),
        dims(),
        prop::option::of(initializer()),
    )
        .prop_map(
            |(linkage, space, managed, align, vector, ty, name, array, init)| VariableDecl {
                linkage,
                space,
                managed,
                align,
                vector,
                ty,
                name,
                array,
                init,
                span: NO_SPAN,
            },
        )
}

fn pragma() -> impl Strategy<Value = Pragma> {
    "[a-z0-9 ;]{0,12}".prop_map(|text| Pragma {
        text,
        span: NO_SPAN,
    })
}

fn simple_statement() -> impl Strategy<Value = Statement> {
    let proto_param = || {
        param().prop_map(|p| Param {
            name: Ident {
                name: "_".into(),
                span: NO_SPAN,
            },
            ..p
        })
    };
    prop_oneof![
        2 => ident().prop_map(Statement::Label),
        8 => instruction().prop_map(Statement::Instruction),
        1 => (
            prop::option::of(pick(WIDTHS)),
            scalar_type(),
            prop::collection::vec((ident(), prop::option::of(any::<u32>())), 1..4),
        )
            .prop_map(|(vector, ty, names)| {
                Statement::RegDecl(RegDecl {
                    vector,
                    ty,
                    names: names
                        .into_iter()
                        .map(|(name, range)| RegDeclarator { name, range })
                        .collect(),
                    span: NO_SPAN,
                })
            }),
        1 => variable().prop_map(Statement::Variable),
        1 => pragma().prop_map(Statement::Pragma),
        1 => (
            any::<u32>(),
            any::<u32>(),
            any::<u32>(),
            prop::option::of(prop::sample::select(vec![
                ", function_name $L__info_string0, inlined_at 1 13 3",
                ", inlined_at 2 4 6",
                "// not a comment-free rest? it is: comments are dropped",
            ])),
        )
            .prop_map(|(file, line, column, rest)| {
                // A rest that is only a comment parses as no rest at all.
                let rest = rest.filter(|r| !r.starts_with("//")).map(str::to_string);
                Statement::Loc(LocDirective { file, line, column, rest, span: NO_SPAN })
            }),
        1 => (
            ident(),
            prop::collection::vec(proto_param(), 0..2),
            prop::collection::vec(proto_param(), 0..3),
            any::<bool>(),
        )
            .prop_map(|(label, return_params, params, noreturn)| {
                Statement::CallPrototype(CallPrototype { label, return_params, params, noreturn, span: NO_SPAN })
            }),
        1 => (
            ident(),
            pick(&[TargetListKind::Branch, TargetListKind::Call][..]),
            prop::collection::vec(ident(), 1..4),
        )
            .prop_map(|(label, kind, targets)| {
                Statement::TargetList(TargetList { label, kind, targets, span: NO_SPAN })
            }),
    ]
}

fn block() -> impl Strategy<Value = Block> {
    let statement = simple_statement().prop_recursive(3, 40, 8, |inner| {
        prop::collection::vec(inner, 0..6).prop_map(|statements| {
            Statement::Block(Block {
                statements,
                span: NO_SPAN,
            })
        })
    });
    prop::collection::vec(statement, 0..12).prop_map(|statements| Block {
        statements,
        span: NO_SPAN,
    })
}

fn directive() -> impl Strategy<Value = PerformanceDirective> {
    prop_oneof![
        prop::collection::vec(any::<u32>(), 1..4).prop_map(PerformanceDirective::MaxNtid),
        prop::collection::vec(any::<u32>(), 1..4).prop_map(PerformanceDirective::ReqNtid),
        any::<u32>().prop_map(PerformanceDirective::MinNctaPerSm),
        any::<u32>().prop_map(PerformanceDirective::MaxNctaPerSm),
        any::<u32>().prop_map(PerformanceDirective::MaxNreg),
        pragma().prop_map(PerformanceDirective::Pragma),
    ]
}

fn function() -> impl Strategy<Value = Function> {
    (
        prop::option::of(pick(LINKAGES)),
        pick(&[FunctionKind::Entry, FunctionKind::Func][..]),
        prop::collection::vec(param(), 0..2),
        ident(),
        prop::collection::vec(param(), 0..4),
        any::<bool>(),
        prop::collection::vec(directive(), 0..3),
        prop::option::of(block()),
    )
        .prop_map(
            |(linkage, kind, return_params, name, params, noreturn, directives, body)| Function {
                linkage,
                kind,
                return_params,
                name,
                params,
                noreturn,
                directives,
                body,
                span: NO_SPAN,
            },
        )
}

fn module_item() -> impl Strategy<Value = ModuleItem> {
    prop_oneof![
        4 => function().prop_map(ModuleItem::Function),
        3 => variable().prop_map(ModuleItem::Variable),
        1 => (any::<u32>(), "[a-zA-Z0-9/._ -]{0,20}", prop::option::of((any::<u64>(), any::<u64>())))
            .prop_map(|(index, path, timestamp_and_size)| {
                ModuleItem::File(FileDirective { index, path, timestamp_and_size, span: NO_SPAN })
            }),
        1 => ("[a-z_]{1,12}", prop::sample::select(vec!["", " ", "\n\t.b8 1\n", "\n.b32 { 2, {3} } // }\n"]))
            .prop_map(|(name, body)| {
                ModuleItem::Section(SectionDirective { name, body: body.to_string(), span: NO_SPAN })
            }),
        1 => pragma().prop_map(ModuleItem::Pragma),
    ]
}

fn module() -> impl Strategy<Value = Module> {
    (
        prop::option::of((any::<u32>(), any::<u32>())),
        prop::collection::vec(
            "[a-z][a-z0-9_]{0,8}".prop_map(|name| Ident {
                name,
                span: NO_SPAN,
            }),
            0..3,
        ),
        prop::option::of(any::<u32>()),
        prop::collection::vec(module_item(), 0..6),
    )
        .prop_map(|(version, target, address_size, items)| Module {
            version,
            target,
            address_size,
            items,
            span: NO_SPAN,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn print_then_parse_gives_the_tree_back(tree in module()) {
        let text = ptx::print(&tree);
        let mut parsed = match ptx::parse("generated.ptx", &text) {
            Ok(m) => m,
            Err(e) => return Err(TestCaseError::fail(format!("{e}\n--- text ---\n{text}"))),
        };
        parsed.erase_spans();
        prop_assert_eq!(&parsed, &tree, "text:\n{}", text);
        prop_assert_eq!(ptx::print(&parsed), text);
    }
}

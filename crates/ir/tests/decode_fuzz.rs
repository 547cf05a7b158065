//! Random instructions (any opcode, any mix of modifiers and operands) must never make
//! lowering panic, and whatever lowering accepts must pass the verifier: the decoder's
//! type rules and the verifier's independent checks agree.

use proptest::prelude::*;

const HEADER: &str = "\
.version 7.8
.target sm_80
.address_size 64
.global .align 4 .b8 gbuf[64];
.global .texref tref;
.func (.param .b32 r) f(.param .b32 x) { st.param.b32 [r], 0; ret; }
.visible .entry k(.param .u64 k_param_0)
{
  .reg .pred %p<3>;
  .reg .b16 %h<3>;
  .reg .b32 %r<5>;
  .reg .f32 %f<5>;
  .reg .b64 %rd<3>;
  .reg .f64 %fd<3>;
  .reg .u32 %u<3>;
  .reg .s64 %sd<3>;
  .reg .b8 %c<2>;
  .param .b32 param0;
  .param .b32 retval0;
";

const MODIFIERS: &[&str] = &[
    "rn", "rz", "rm", "rp", "rni", "rzi", "ftz", "sat", "approx", "full", "relu", "NaN", "eq",
    "ne", "lt", "ge", "lo", "hs", "equ", "nan", "finite", "and", "or", "xor", "add", "min", "max",
    "inc", "cas", "exch", "popc", "wide", "hi", "cc", "shiftamt", "uni", "sync", "aligned",
    "arrive", "red", "all", "any", "ballot", "up", "down", "bfly", "idx", "volatile", "relaxed",
    "acquire", "release", "acq_rel", "sc", "cta", "gpu", "sys", "nc", "ca", "cg", "cs", "lu", "cv",
    "wb", "wt", "to", "l", "r", "clamp", "wrap", "f4e", "2d", "1d", "level", "s8", "s16", "s32",
    "s64", "u8", "u16", "u32", "u64", "b8", "b16", "b32", "b64", "f16", "f16x2", "bf16", "f32",
    "f64", "pred", "v2", "v4", "global", "shared", "local", "const", "param", "L1", "L2", "gl",
    "warp", "noftz", "width", "g", "bogus",
];

const OPCODES: &[&str] = &[
    "add",
    "sub",
    "addc",
    "subc",
    "mul",
    "mad",
    "madc",
    "mul24",
    "mad24",
    "sad",
    "div",
    "rem",
    "min",
    "max",
    "abs",
    "neg",
    "and",
    "or",
    "xor",
    "not",
    "cnot",
    "lop3",
    "shl",
    "shr",
    "bfe",
    "bfi",
    "bfind",
    "popc",
    "clz",
    "brev",
    "prmt",
    "dp4a",
    "dp2a",
    "shf",
    "fma",
    "rcp",
    "sqrt",
    "rsqrt",
    "sin",
    "cos",
    "ex2",
    "lg2",
    "tanh",
    "copysign",
    "testp",
    "setp",
    "set",
    "selp",
    "slct",
    "mov",
    "cvt",
    "cvta",
    "isspacep",
    "ld",
    "ldu",
    "st",
    "prefetch",
    "prefetchu",
    "atom",
    "red",
    "bar",
    "barrier",
    "membar",
    "fence",
    "shfl",
    "vote",
    "match",
    "activemask",
    "redux",
    "bra",
    "call",
    "ret",
    "exit",
    "trap",
    "brkpt",
    "nanosleep",
    "tex",
    "tld4",
    "txq",
    "wmma",
    "cp",
];

const OPERANDS: &[&str] = &[
    "%r1",
    "%r2",
    "%f1",
    "%f2",
    "%rd1",
    "%fd1",
    "%h1",
    "%u1",
    "%sd1",
    "%c1",
    "%p1",
    "!%p2",
    "0",
    "-1",
    "255",
    "0f3F800000",
    "1.5",
    "0d3FF0000000000000",
    "[%rd1]",
    "[%r1+4]",
    "[gbuf]",
    "[k_param_0+8]",
    "[param0]",
    "[100]",
    "{%f1, %f2}",
    "{%r1, %r2, %r3, %r4}",
    "{%h1, %h2}",
    "%tid.x",
    "%clock64",
    "%laneid",
    "gbuf",
    "gbuf+4",
    "$L1",
    "_",
    "%p1|%p2",
    "%r1|%p1",
    "(param0)",
    "(retval0)",
    "f",
    "[tref, {%f1, %f2}]",
    "[tref]",
    "%undefined",
    "tref",
];

fn instruction() -> impl Strategy<Value = String> {
    let guard = prop::option::of(prop::sample::select(&["@%p1 ", "@!%p2 ", "@%r1 "][..]));
    let opcode = prop::sample::select(OPCODES);
    let mods = prop::collection::vec(prop::sample::select(MODIFIERS), 0..5);
    let ops = prop::collection::vec(prop::sample::select(OPERANDS), 0..6);
    (guard, opcode, mods, ops).prop_map(|(g, op, mods, ops)| {
        let mut s = g.unwrap_or("").to_string();
        s.push_str(op);
        for m in mods {
            s.push('.');
            s.push_str(m);
        }
        if !ops.is_empty() {
            s.push(' ');
            s.push_str(&ops.join(", "));
        }
        s.push(';');
        s
    })
}

/// Valid instructions as (opcode with modifiers, operands), to mutate.
const SEEDS: &[(&str, &[&str])] = &[
    ("add.s32", &["%r1", "%r2", "-1"]),
    ("add.rn.ftz.f32", &["%f1", "%f2", "%f3"]),
    ("addc.cc.u32", &["%r1", "%r2", "%r3"]),
    ("mul.wide.s32", &["%rd1", "%r2", "4"]),
    ("mad.lo.s32", &["%r1", "%r2", "%r3", "%r4"]),
    ("fma.rn.f64", &["%fd1", "%fd2", "%fd1", "%fd2"]),
    ("div.rn.f32", &["%f1", "%f2", "%f3"]),
    ("shl.b64", &["%rd1", "%rd2", "3"]),
    ("bfe.u32", &["%r1", "%r2", "8", "4"]),
    ("setp.lt.and.s32", &["%p1|%p2", "%r1", "%r2", "!%p1"]),
    ("selp.f32", &["%f1", "%f2", "0f3F800000", "%p1"]),
    ("mov.u32", &["%r1", "%tid.x"]),
    ("mov.u64", &["%rd1", "gbuf"]),
    ("mov.b64", &["%rd1", "{%r1, %r2}"]),
    ("cvt.rn.f32.s32", &["%f1", "%r1"]),
    ("cvt.u64.u32", &["%rd1", "%r1"]),
    ("cvta.to.global.u64", &["%rd1", "%rd2"]),
    ("ld.global.nc.v2.f32", &["{%f1, %f2}", "[%rd1]"]),
    ("ld.param.u64", &["%rd1", "[k_param_0]"]),
    ("st.shared.u32", &["[%r1+4]", "%r2"]),
    ("atom.global.cas.b32", &["%r1", "[%rd1]", "%r2", "%r3"]),
    ("red.global.add.f32", &["[%rd1]", "%f1"]),
    ("bar.sync", &["0"]),
    ("bar.red.popc.u32", &["%r1", "0", "%p1"]),
    ("shfl.sync.bfly.b32", &["%r1|%p1", "%r2", "1", "31", "-1"]),
    ("vote.sync.ballot.b32", &["%r1", "%p1", "-1"]),
    ("match.all.sync.b32", &["%r1|%p1", "%r2", "-1"]),
    ("redux.sync.min.u32", &["%r1", "%r2", "-1"]),
    ("bra.uni", &["$L1"]),
    ("call.uni", &["(retval0)", "f", "(param0)"]),
    (
        "tex.2d.v4.f32.f32",
        &["{%f1, %f2, %f3, %f4}", "[tref, {%f1, %f2}]"],
    ),
    ("txq.width.b32", &["%r1", "[tref]"]),
    ("testp.finite.f64", &["%p1", "%fd1"]),
    ("prmt.b32", &["%r1", "%r2", "%r3", "0x3210"]),
    ("exit", &[]),
];

/// A valid instruction with one random change (or none).
fn mutated() -> impl Strategy<Value = String> {
    let seed = prop::sample::select(SEEDS);
    let change = 0..4usize;
    let index = any::<prop::sample::Index>();
    let modifier = prop::sample::select(MODIFIERS);
    let operand = prop::sample::select(OPERANDS);
    let guard = prop::option::of(prop::sample::select(&["@%p1 ", "@!%p2 "][..]));
    (seed, change, index, modifier, operand, guard).prop_map(
        |((head, ops), change, index, m, o, g)| {
            let mut mods: Vec<&str> = head.split('.').collect();
            let mut ops: Vec<&str> = ops.to_vec();
            match change {
                1 if !ops.is_empty() => {
                    let i = index.index(ops.len());
                    ops[i] = o;
                }
                2 => {
                    let i = 1 + index.index(mods.len());
                    mods.insert(i.min(mods.len()), m);
                }
                3 if mods.len() > 1 => {
                    let i = 1 + index.index(mods.len() - 1);
                    mods.remove(i);
                }
                _ => {}
            }
            let mut s = format!("{}{}", g.unwrap_or(""), mods.join("."));
            if !ops.is_empty() {
                s.push(' ');
                s.push_str(&ops.join(", "));
            }
            s.push(';');
            s
        },
    )
}

fn check(insts: &[String]) -> Result<(), TestCaseError> {
    let src = format!("{HEADER}  {}\n$L1:\n  ret;\n}}\n", insts.join("\n  "));
    let Ok(module) = ptx::parse("fuzz.ptx", &src) else {
        return Ok(());
    };
    match ir::lower(&module, "fuzz.ptx", &src) {
        Ok(program) => {
            for f in &program.functions {
                if let Err(e) = ir::verify(f) {
                    prop_assert!(false, "{src}\nlowered but does not verify: {e:?}");
                }
                // Printing never panics either.
                let _ = ir::print::function_to_string(Some(&program), f);
            }
        }
        Err(errors) => {
            for e in &errors.0 {
                prop_assert!(e.file == "fuzz.ptx" && e.line > 0 && !e.message.is_empty());
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn random_instructions_never_panic(insts in prop::collection::vec(instruction(), 1..4)) {
        check(&insts)?;
    }

    #[test]
    fn mutated_valid_instructions_lower_consistently(insts in prop::collection::vec(mutated(), 1..3)) {
        check(&insts)?;
    }
}

//! Decoding tests: each instruction is lowered inside a small kernel and printed back; the
//! printed form shows the decoded op, its modifiers in canonical order and the resolved
//! operands. Negative cases assert the located error message.

use crate::exec_class::{exec_class, ExecClass};
use crate::op::*;
use crate::print::inst_to_string;
use crate::{lower, Function, Operand, Program};

const HEADER: &str = "\
.version 7.8
.target sm_90a
.address_size 64
.global .align 4 .b8 gbuf[64];
.global .texref tref;
.visible .entry k(.param .u64 k_param_0, .param .u32 k_param_1)
{
  .reg .pred %p<4>;
  .reg .b16 %h<4>;
  .reg .b32 %r<8>;
  .reg .f32 %f<8>;
  .reg .b64 %rd<8>;
  .reg .f64 %fd<4>;
  .reg .u32 %u<4>;
  .reg .s32 %s<4>;
  .reg .u64 %ud<4>;
  .reg .b8 %c<2>;
  .reg .f16x2 %hh<2>;
  .shared .align 4 .b8 sbuf[128];
";

/// Source of a kernel whose body is `body` followed by `ret`.
fn kernel_source(body: &str) -> String {
    format!("{HEADER}{body}\n  ret;\n}}\n")
}

fn lower_body(body: &str) -> Result<Program, String> {
    let src = kernel_source(body);
    let module = ptx::parse("t.ptx", &src).map_err(|e| format!("parse: {e}"))?;
    lower(&module, "t.ptx", &src).map_err(|e| e.to_string())
}

fn kernel(p: &Program) -> &Function {
    &p.functions[0]
}

/// Decodes one instruction and prints it back.
fn roundtrip(inst: &str) -> String {
    let p = lower_body(inst).unwrap_or_else(|e| panic!("{inst}: {e}"));
    let f = kernel(&p);
    assert_eq!(f.insts.len(), 2, "{inst}");
    crate::verify(f).unwrap_or_else(|e| panic!("{inst}: {e:?}"));
    inst_to_string(Some(&p), f, &f.insts[0])
}

fn op_of(inst: &str) -> Op {
    let p = lower_body(inst).unwrap_or_else(|e| panic!("{inst}: {e}"));
    kernel(&p).insts[0].op.clone()
}

fn error_of(inst: &str) -> String {
    match lower_body(inst) {
        Ok(_) => panic!("{inst}: lowered without error"),
        Err(e) => e,
    }
}

#[track_caller]
fn check_all(cases: &[(&str, &str)]) {
    for (input, expected) in cases {
        assert_eq!(roundtrip(input), *expected, "input: {input}");
    }
}

#[test]
fn integer_arithmetic() {
    check_all(&[
        ("add.s32 %r1, %r2, -1;", "add.s32 %r1, %r2, -1;"),
        ("add.sat.s32 %s1, %r2, 5;", "add.sat.s32 %s1, %r2, 5;"),
        ("add.cc.u32 %r1, %r2, %r3;", "add.cc.u32 %r1, %r2, %r3;"),
        ("addc.cc.u32 %r1, %r2, %r3;", "addc.cc.u32 %r1, %r2, %r3;"),
        ("addc.u32 %r1, %r2, %r3;", "addc.u32 %r1, %r2, %r3;"),
        (
            "sub.cc.u64 %rd1, %rd2, %rd3;",
            "sub.cc.u64 %rd1, %rd2, %rd3;",
        ),
        ("subc.u64 %rd1, %rd2, 1;", "subc.u64 %rd1, %rd2, 1;"),
        ("add.u16 %h1, %h2, 0xFFFF;", "add.u16 %h1, %h2, 65535;"),
        ("mul.lo.s32 %r1, %r2, %r3;", "mul.lo.s32 %r1, %r2, %r3;"),
        ("mul.hi.u32 %r1, %r2, %r3;", "mul.hi.u32 %r1, %r2, %r3;"),
        ("mul.wide.s32 %rd1, %r2, 4;", "mul.wide.s32 %rd1, %r2, 4;"),
        ("mul.wide.u16 %r1, %h2, %h3;", "mul.wide.u16 %r1, %h2, %h3;"),
        (
            "mad.lo.s32 %r1, %r2, %r3, %r4;",
            "mad.lo.s32 %r1, %r2, %r3, %r4;",
        ),
        (
            "mad.wide.u32 %rd1, %r2, %r3, %rd4;",
            "mad.wide.u32 %rd1, %r2, %r3, %rd4;",
        ),
        (
            "mad.hi.sat.s32 %r1, %r2, %r3, %r4;",
            "mad.hi.sat.s32 %r1, %r2, %r3, %r4;",
        ),
        (
            "mad.lo.cc.u32 %r1, %r2, %r3, %r4;",
            "mad.lo.cc.u32 %r1, %r2, %r3, %r4;",
        ),
        (
            "madc.hi.cc.u32 %r1, %r2, %r3, %r4;",
            "madc.hi.cc.u32 %r1, %r2, %r3, %r4;",
        ),
        ("mul24.lo.u32 %r1, %r2, %r3;", "mul24.lo.u32 %r1, %r2, %r3;"),
        (
            "mad24.hi.sat.s32 %r1, %r2, %r3, %r4;",
            "mad24.hi.sat.s32 %r1, %r2, %r3, %r4;",
        ),
        ("sad.u32 %r1, %r2, %r3, %r4;", "sad.u32 %r1, %r2, %r3, %r4;"),
        ("div.u32 %r1, %r2, %r3;", "div.u32 %r1, %r2, %r3;"),
        ("div.s64 %rd1, %rd2, %rd3;", "div.s64 %rd1, %rd2, %rd3;"),
        ("rem.s32 %r1, %r2, 7;", "rem.s32 %r1, %r2, 7;"),
        ("min.u32 %r1, %r2, %r3;", "min.u32 %r1, %r2, %r3;"),
        ("max.relu.s32 %r1, %r2, %r3;", "max.relu.s32 %r1, %r2, %r3;"),
        ("abs.s32 %r1, %r2;", "abs.s32 %r1, %r2;"),
        ("neg.s64 %rd1, %rd2;", "neg.s64 %rd1, %rd2;"),
    ]);
}

#[test]
fn logic_and_bit_manipulation() {
    check_all(&[
        ("and.b32 %r1, %r2, 255;", "and.b32 %r1, %r2, 255;"),
        ("or.pred %p1, %p2, %p3;", "or.pred %p1, %p2, %p3;"),
        ("and.pred %p1, !%p2, %p3;", "and.pred %p1, !%p2, %p3;"),
        ("xor.b64 %rd1, %rd2, %rd3;", "xor.b64 %rd1, %rd2, %rd3;"),
        ("not.b32 %r1, %r2;", "not.b32 %r1, %r2;"),
        ("not.pred %p1, %p2;", "not.pred %p1, %p2;"),
        ("cnot.b32 %r1, %r2;", "cnot.b32 %r1, %r2;"),
        (
            "lop3.b32 %r1, %r2, %r3, %r4, 0x96;",
            "lop3.b32 %r1, %r2, %r3, %r4, 150;",
        ),
        ("shl.b32 %r1, %r2, 3;", "shl.b32 %r1, %r2, 3;"),
        ("shr.s32 %r1, %r2, %r3;", "shr.s32 %r1, %r2, %r3;"),
        ("shr.u64 %rd1, %rd2, %r3;", "shr.u64 %rd1, %rd2, %r3;"),
        ("bfe.u32 %r1, %r2, 8, 4;", "bfe.u32 %r1, %r2, 8, 4;"),
        (
            "bfi.b32 %r1, %r2, %r3, 0, 8;",
            "bfi.b32 %r1, %r2, %r3, 0, 8;",
        ),
        ("bfind.u32 %r1, %r2;", "bfind.u32 %r1, %r2;"),
        (
            "bfind.shiftamt.s64 %r1, %rd2;",
            "bfind.shiftamt.s64 %r1, %rd2;",
        ),
        ("popc.b64 %r1, %rd2;", "popc.b64 %r1, %rd2;"),
        ("clz.b32 %r1, %r2;", "clz.b32 %r1, %r2;"),
        ("brev.b32 %r1, %r2;", "brev.b32 %r1, %r2;"),
        (
            "prmt.b32 %r1, %r2, %r3, 0x3210;",
            "prmt.b32 %r1, %r2, %r3, 12816;",
        ),
        (
            "prmt.b32.f4e %r1, %r2, %r3, %r4;",
            "prmt.b32.f4e %r1, %r2, %r3, %r4;",
        ),
        (
            "dp4a.u32.u32 %r1, %r2, %r3, %r4;",
            "dp4a.u32.u32 %r1, %r2, %r3, %r4;",
        ),
        (
            "dp4a.s32.u32 %r1, %r2, %r3, %r4;",
            "dp4a.s32.u32 %r1, %r2, %r3, %r4;",
        ),
        (
            "dp2a.hi.s32.s32 %r1, %r2, %r3, %r4;",
            "dp2a.hi.s32.s32 %r1, %r2, %r3, %r4;",
        ),
        (
            "shf.l.wrap.b32 %r1, %r2, %r3, %r4;",
            "shf.l.wrap.b32 %r1, %r2, %r3, %r4;",
        ),
        (
            "shf.r.clamp.b32 %r1, %r2, %r3, 5;",
            "shf.r.clamp.b32 %r1, %r2, %r3, 5;",
        ),
    ]);
}

#[test]
fn floating_point() {
    check_all(&[
        (
            "add.f32 %f1, %f2, 0f3F800000;",
            "add.f32 %f1, %f2, 0f3F800000;",
        ),
        (
            "add.ftz.rn.f32 %f1, %f2, %f3;",
            "add.rn.ftz.f32 %f1, %f2, %f3;",
        ),
        (
            "sub.rz.f64 %fd1, %fd2, %fd3;",
            "sub.rz.f64 %fd1, %fd2, %fd3;",
        ),
        (
            "mul.rn.sat.f32 %f1, %f2, %f3;",
            "mul.rn.sat.f32 %f1, %f2, %f3;",
        ),
        (
            "fma.rn.f32 %f1, %f2, %f3, %f4;",
            "fma.rn.f32 %f1, %f2, %f3, %f4;",
        ),
        (
            "mad.rn.f64 %fd1, %fd2, %fd3, %fd1;",
            "fma.rn.f64 %fd1, %fd2, %fd3, %fd1;",
        ),
        (
            "add.rn.f16x2 %hh1, %hh1, %r1;",
            "add.rn.f16x2 %hh1, %hh1, %r1;",
        ),
        (
            "fma.rn.f16 %h1, %h2, %h3, %h1;",
            "fma.rn.f16 %h1, %h2, %h3, %h1;",
        ),
        ("div.rn.f32 %f1, %f2, %f3;", "div.rn.f32 %f1, %f2, %f3;"),
        (
            "div.approx.ftz.f32 %f1, %f2, %f3;",
            "div.approx.ftz.f32 %f1, %f2, %f3;",
        ),
        ("div.full.f32 %f1, %f2, %f3;", "div.full.f32 %f1, %f2, %f3;"),
        (
            "div.rn.f64 %fd1, %fd2, %fd3;",
            "div.rn.f64 %fd1, %fd2, %fd3;",
        ),
        ("rcp.rn.f32 %f1, %f2;", "rcp.rn.f32 %f1, %f2;"),
        (
            "rcp.approx.ftz.f64 %fd1, %fd2;",
            "rcp.approx.ftz.f64 %fd1, %fd2;",
        ),
        ("sqrt.approx.f32 %f1, %f2;", "sqrt.approx.f32 %f1, %f2;"),
        ("sqrt.rn.f64 %fd1, %fd2;", "sqrt.rn.f64 %fd1, %fd2;"),
        (
            "rsqrt.approx.ftz.f32 %f1, %f2;",
            "rsqrt.approx.ftz.f32 %f1, %f2;",
        ),
        ("sin.approx.f32 %f1, %f2;", "sin.approx.f32 %f1, %f2;"),
        (
            "cos.approx.ftz.f32 %f1, %f2;",
            "cos.approx.ftz.f32 %f1, %f2;",
        ),
        (
            "ex2.approx.ftz.f32 %f1, %f2;",
            "ex2.approx.ftz.f32 %f1, %f2;",
        ),
        ("lg2.approx.f32 %f1, %f2;", "lg2.approx.f32 %f1, %f2;"),
        ("tanh.approx.f32 %f1, %f2;", "tanh.approx.f32 %f1, %f2;"),
        ("min.f32 %f1, %f2, %f3;", "min.f32 %f1, %f2, %f3;"),
        ("max.NaN.f32 %f1, %f2, %f3;", "max.NaN.f32 %f1, %f2, %f3;"),
        ("abs.ftz.f32 %f1, %f2;", "abs.ftz.f32 %f1, %f2;"),
        ("neg.f64 %fd1, %fd2;", "neg.f64 %fd1, %fd2;"),
        ("copysign.f32 %f1, %f2, %f3;", "copysign.f32 %f1, %f2, %f3;"),
        ("testp.finite.f32 %p1, %f2;", "testp.finite.f32 %p1, %f2;"),
        // Decimal (f64) literals in f32 slots are rounded to f32; 0f literals widen to f64.
        ("mov.f32 %f1, 1.5;", "mov.f32 %f1, 0f3FC00000;"),
        (
            "mov.f64 %fd1, 0f3F800000;",
            "mov.f64 %fd1, 0d3FF0000000000000;",
        ),
        // Bit registers carry floats.
        ("add.f32 %f1, %r1, %f2;", "add.f32 %f1, %r1, %f2;"),
    ]);
}

#[test]
fn comparison_and_selection() {
    check_all(&[
        ("setp.ge.s32 %p1, %r1, %r2;", "setp.ge.s32 %p1, %r1, %r2;"),
        ("setp.lo.u32 %p1, %r1, 5;", "setp.lo.u32 %p1, %r1, 5;"),
        ("setp.ne.b32 %p1, %r1, 0;", "setp.ne.b32 %p1, %r1, 0;"),
        (
            "setp.gtu.ftz.f32 %p1, %f1, %f2;",
            "setp.gtu.ftz.f32 %p1, %f1, %f2;",
        ),
        (
            "setp.lt.and.s32 %p1|%p2, %r1, %r2, !%p3;",
            "setp.lt.and.s32 %p1|%p2, %r1, %r2, !%p3;",
        ),
        (
            "setp.nan.f64 %p1, %fd1, %fd2;",
            "setp.nan.f64 %p1, %fd1, %fd2;",
        ),
        (
            "set.eq.u32.s32 %r1, %r2, %r3;",
            "set.eq.u32.s32 %r1, %r2, %r3;",
        ),
        (
            "set.lt.or.f32.f32 %f1, %f2, %f3, %p1;",
            "set.lt.or.f32.f32 %f1, %f2, %f3, %p1;",
        ),
        (
            "selp.b32 %r1, %r2, %r3, %p1;",
            "selp.b32 %r1, %r2, %r3, %p1;",
        ),
        (
            "selp.f32 %f1, %f2, 0f00000000, !%p1;",
            "selp.f32 %f1, %f2, 0f00000000, !%p1;",
        ),
        (
            "slct.s32.f32 %r1, %r2, %r3, %f1;",
            "slct.s32.f32 %r1, %r2, %r3, %f1;",
        ),
    ]);
}

#[test]
fn moves_and_conversions() {
    check_all(&[
        ("mov.u32 %r1, %tid.x;", "mov.u32 %r1, %tid.x;"),
        ("mov.u32 %r1, %ctaid.z;", "mov.u32 %r1, %ctaid.z;"),
        ("mov.u16 %h1, %ntid.y;", "mov.u16 %h1, %ntid.y;"),
        ("mov.u32 %r1, %laneid;", "mov.u32 %r1, %laneid;"),
        ("mov.u32 %r1, %lanemask_lt;", "mov.u32 %r1, %lanemask_lt;"),
        ("mov.u64 %rd1, %clock64;", "mov.u64 %rd1, %clock64;"),
        ("mov.u64 %rd1, %globaltimer;", "mov.u64 %rd1, %globaltimer;"),
        ("mov.u32 %r1, %envreg3;", "mov.u32 %r1, %envreg3;"),
        (
            "mov.u32 %r1, %dynamic_smem_size;",
            "mov.u32 %r1, %dynamic_smem_size;",
        ),
        ("mov.b64 %rd1, {%r1, %r2};", "mov.b64 %rd1, {%r1, %r2};"),
        ("mov.b64 {%r1, %r2}, %rd1;", "mov.b64 {%r1, %r2}, %rd1;"),
        ("mov.b32 {%h1, _}, %r1;", "mov.b32 {%h1, _}, %r1;"),
        ("mov.u64 %rd1, gbuf;", "mov.u64 %rd1, gbuf;"),
        ("mov.u32 %r1, sbuf;", "mov.u32 %r1, sbuf;"),
        ("mov.u64 %rd1, gbuf+8;", "mov.u64 %rd1, gbuf+8;"),
        ("mov.u64 %rd1, k_param_0;", "mov.u64 %rd1, k_param_0;"),
        ("mov.pred %p1, 1;", "mov.pred %p1, 1;"),
        ("cvt.rn.f32.s32 %f1, %r1;", "cvt.rn.f32.s32 %f1, %r1;"),
        ("cvt.rzi.s32.f32 %r1, %f1;", "cvt.rzi.s32.f32 %r1, %f1;"),
        ("cvt.rni.f32.f32 %f1, %f2;", "cvt.rni.f32.f32 %f1, %f2;"),
        ("cvt.f64.f32 %fd1, %f1;", "cvt.f64.f32 %fd1, %f1;"),
        (
            "cvt.rn.ftz.sat.f32.f64 %f1, %fd1;",
            "cvt.rn.ftz.sat.f32.f64 %f1, %fd1;",
        ),
        ("cvt.u64.u32 %rd1, %r1;", "cvt.u64.u32 %rd1, %r1;"),
        ("cvt.s32.s8 %r1, %r2;", "cvt.s32.s8 %r1, %r2;"),
        ("cvt.u32.u16 %r1, %h1;", "cvt.u32.u16 %r1, %h1;"),
        ("cvt.u16.u32 %h1, %r1;", "cvt.u16.u32 %h1, %r1;"),
        ("cvt.u64.u32 %rd1, %tid.x;", "cvt.u64.u32 %rd1, %tid.x;"),
        ("cvt.f32.f16 %f1, %h1;", "cvt.f32.f16 %f1, %h1;"),
        ("cvt.rn.f16.f32 %h1, %f1;", "cvt.rn.f16.f32 %h1, %f1;"),
        (
            "cvt.rn.f16x2.f32 %r1, %f1, %f2;",
            "cvt.rn.f16x2.f32 %r1, %f1, %f2;",
        ),
        (
            "cvt.rn.relu.bf16.f32 %h1, %f1;",
            "cvt.rn.relu.bf16.f32 %h1, %f1;",
        ),
        (
            "cvta.to.global.u64 %rd1, %rd2;",
            "cvta.to.global.u64 %rd1, %rd2;",
        ),
        ("cvta.shared.u64 %rd1, %rd2;", "cvta.shared.u64 %rd1, %rd2;"),
        ("cvta.global.u64 %rd1, gbuf;", "cvta.global.u64 %rd1, gbuf;"),
        ("isspacep.shared %p1, %rd1;", "isspacep.shared %p1, %rd1;"),
    ]);
}

#[test]
fn memory_access() {
    check_all(&[
        (
            "ld.param.u64 %rd1, [k_param_0];",
            "ld.param.u64 %rd1, [k_param_0];",
        ),
        (
            "ld.param.u32 %r1, [k_param_1];",
            "ld.param.u32 %r1, [k_param_1];",
        ),
        (
            "ld.global.f32 %f1, [%rd1+16];",
            "ld.global.f32 %f1, [%rd1+16];",
        ),
        (
            "ld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1];",
            "ld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1];",
        ),
        (
            "ld.shared.v2.u32 {%r1, _}, [%r2+-4];",
            "ld.shared.v2.u32 {%r1, _}, [%r2-4];",
        ),
        (
            "ld.shared.f32 %f1, [sbuf+4];",
            "ld.shared.f32 %f1, [sbuf+4];",
        ),
        ("ld.local.u8 %r1, [%rd1];", "ld.local.u8 %r1, [%rd1];"),
        ("ld.global.u8 %c1, [%rd1];", "ld.global.u8 %c1, [%rd1];"),
        ("ld.const.u32 %r1, [100];", "ld.const.u32 %r1, [100];"),
        ("ld.u32 %r1, [%rd1];", "ld.u32 %r1, [%rd1];"),
        (
            "ld.volatile.shared.u32 %r1, [%r2];",
            "ld.volatile.shared.u32 %r1, [%r2];",
        ),
        (
            "ld.acquire.gpu.global.u32 %r1, [%rd2];",
            "ld.acquire.gpu.global.u32 %r1, [%rd2];",
        ),
        (
            "ld.relaxed.sys.u64 %rd1, [%rd2];",
            "ld.relaxed.sys.u64 %rd1, [%rd2];",
        ),
        (
            "ld.global.cg.u32 %r1, [%rd2];",
            "ld.global.cg.u32 %r1, [%rd2];",
        ),
        (
            "ld.global.cs.u32 %r1, [%rd2];",
            "ld.global.cs.u32 %r1, [%rd2];",
        ),
        ("ld.global.u32 %rd1, [%rd2];", "ld.global.u32 %rd1, [%rd2];"),
        ("ldu.global.f32 %f1, [%rd1];", "ldu.global.f32 %f1, [%rd1];"),
        ("st.global.f32 [%rd1], %f1;", "st.global.f32 [%rd1], %f1;"),
        ("st.global.u32 [%rd1], 5;", "st.global.u32 [%rd1], 5;"),
        (
            "st.shared.v2.f32 [%r1+8], {%f1, %f2};",
            "st.shared.v2.f32 [%r1+8], {%f1, %f2};",
        ),
        ("st.global.u8 [%rd1], %rd2;", "st.global.u8 [%rd1], %rd2;"),
        (
            "st.release.gpu.global.u32 [%rd1], %r1;",
            "st.release.gpu.global.u32 [%rd1], %r1;",
        ),
        (
            "st.volatile.global.u32 [%rd1], %r1;",
            "st.volatile.global.u32 [%rd1], %r1;",
        ),
        (
            "st.global.wt.u32 [%rd1], %r1;",
            "st.global.wt.u32 [%rd1], %r1;",
        ),
        (
            "st.global.f32 [%rd1], 0f3F800000;",
            "st.global.f32 [%rd1], 0f3F800000;",
        ),
        ("prefetch.global.L2 [%rd1];", "prefetch.global.L2 [%rd1];"),
        ("prefetchu.L1 [%rd1];", "prefetchu.L1 [%rd1];"),
    ]);
}

#[test]
fn atomics_and_reductions() {
    check_all(&[
        (
            "atom.global.add.u32 %r1, [%rd1], 1;",
            "atom.relaxed.gpu.global.add.u32 %r1, [%rd1], 1;",
        ),
        (
            "atom.shared.add.f32 %f1, [%r1], %f2;",
            "atom.relaxed.gpu.shared.add.f32 %f1, [%r1], %f2;",
        ),
        (
            "atom.add.u64 %rd1, [%rd2], %rd3;",
            "atom.relaxed.gpu.add.u64 %rd1, [%rd2], %rd3;",
        ),
        (
            "atom.global.cas.b32 %r1, [%rd1], %r2, %r3;",
            "atom.relaxed.gpu.global.cas.b32 %r1, [%rd1], %r2, %r3;",
        ),
        (
            "atom.global.exch.b64 %rd1, [%rd2], %rd3;",
            "atom.relaxed.gpu.global.exch.b64 %rd1, [%rd2], %rd3;",
        ),
        (
            "atom.global.inc.u32 %r1, [%rd1], 15;",
            "atom.relaxed.gpu.global.inc.u32 %r1, [%rd1], 15;",
        ),
        (
            "atom.global.max.s32 %r1, [%rd1], %r2;",
            "atom.relaxed.gpu.global.max.s32 %r1, [%rd1], %r2;",
        ),
        (
            "atom.sys.global.or.b32 %r1, [%rd1], %r2;",
            "atom.relaxed.sys.global.or.b32 %r1, [%rd1], %r2;",
        ),
        (
            "atom.acq_rel.gpu.global.add.u32 %r1, [%rd1], %r2;",
            "atom.acq_rel.gpu.global.add.u32 %r1, [%rd1], %r2;",
        ),
        (
            "atom.global.add.noftz.f16 %h1, [%rd1], %h2;",
            "atom.relaxed.gpu.global.add.f16 %h1, [%rd1], %h2;",
        ),
        (
            "red.global.add.u32 [%rd1], %r1;",
            "red.relaxed.gpu.global.add.u32 [%rd1], %r1;",
        ),
        (
            "red.shared.min.s32 [%r1], %r2;",
            "red.relaxed.gpu.shared.min.s32 [%r1], %r2;",
        ),
    ]);
}

#[test]
fn synchronisation_and_warp_operations() {
    check_all(&[
        ("bar.sync 0;", "bar.sync.aligned 0;"),
        ("bar.sync 1, 64;", "bar.sync.aligned 1, 64;"),
        ("barrier.sync %r1;", "bar.sync %r1;"),
        ("barrier.sync.aligned 0;", "bar.sync.aligned 0;"),
        ("bar.arrive 1, 64;", "bar.arrive.aligned 1, 64;"),
        (
            "bar.red.popc.u32 %r1, 0, %p1;",
            "bar.red.popc.aligned.u32 %r1, 0, %p1;",
        ),
        (
            "bar.red.and.pred %p1, 0, !%p2;",
            "bar.red.and.aligned.pred %p1, 0, !%p2;",
        ),
        ("bar.warp.sync -1;", "bar.warp.sync 0xFFFFFFFF;"),
        ("membar.gl;", "fence.sc.gpu;"),
        ("membar.cta;", "fence.sc.cta;"),
        ("fence.acq_rel.sys;", "fence.acq_rel.sys;"),
        (
            "shfl.sync.idx.b32 %r1, %r2, 0, 31, -1;",
            "shfl.sync.idx.b32 %r1, %r2, 0, 31, 0xFFFFFFFF;",
        ),
        (
            "shfl.sync.down.b32 %r1|%p1, %r2, 1, 31, %r3;",
            "shfl.sync.down.b32 %r1|%p1, %r2, 1, 31, %r3;",
        ),
        (
            "shfl.bfly.b32 %r1, %r2, 1, 31;",
            "shfl.bfly.b32 %r1, %r2, 1, 31;",
        ),
        (
            "vote.sync.ballot.b32 %r1, %p1, -1;",
            "vote.sync.ballot.b32 %r1, %p1, 0xFFFFFFFF;",
        ),
        (
            "vote.sync.all.pred %p1, !%p2, %r1;",
            "vote.sync.all.pred %p1, !%p2, %r1;",
        ),
        ("vote.any.pred %p1, %p2;", "vote.any.pred %p1, %p2;"),
        (
            "vote.sync.uni.pred %p1, %p2, -1;",
            "vote.sync.uni.pred %p1, %p2, 0xFFFFFFFF;",
        ),
        (
            "match.any.sync.b32 %r1, %r2, -1;",
            "match.any.sync.b32 %r1, %r2, 0xFFFFFFFF;",
        ),
        (
            "match.all.sync.b64 %r1|%p1, %rd2, %r3;",
            "match.all.sync.b64 %r1|%p1, %rd2, %r3;",
        ),
        ("activemask.b32 %r1;", "activemask.b32 %r1;"),
        (
            "redux.sync.add.s32 %r1, %r2, -1;",
            "redux.sync.add.s32 %r1, %r2, 0xFFFFFFFF;",
        ),
        (
            "redux.sync.xor.b32 %r1, %r2, %r3;",
            "redux.sync.xor.b32 %r1, %r2, %r3;",
        ),
        ("nanosleep.u32 100;", "nanosleep.u32 100;"),
        ("brkpt;", "brkpt;"),
    ]);
}

#[test]
fn textures() {
    check_all(&[
        (
            "tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [tref, {%f5, %f6}];",
            "tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [tref, {%f5, %f6}];",
        ),
        (
            "tex.1d.v4.s32.s32 {%r1, %r2, %r3, %r4}, [%rd1, {%r5}];",
            "tex.1d.v4.s32.s32 {%r1, %r2, %r3, %r4}, [%rd1, {%r5}];",
        ),
        (
            "tex.level.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [tref, {%f5, %f6}], %f7;",
            "tex.2d.v4.level.f32.f32 {%f1, %f2, %f3, %f4}, [tref, {%f5, %f6}], %f7;",
        ),
        (
            "tld4.r.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [tref, {%f5, %f6}];",
            "tld4.r.2d.f32.f32 {%f1, %f2, %f3, %f4}, [tref, {%f5, %f6}];",
        ),
        ("txq.width.b32 %r1, [tref];", "txq.width.b32 %r1, [tref];"),
    ]);
}

#[test]
fn decoded_fields_are_typed() {
    assert_eq!(
        op_of("setp.lt.and.ftz.f32 %p1, %f1, %f2, %p2;"),
        Op::Setp {
            ty: ScalarType::F32,
            cmp: CmpOp::Lt,
            ftz: true,
            combine: Some(BoolOp::And)
        }
    );
    assert_eq!(
        op_of("ld.global.nc.v2.u64 {%rd1, %rd2}, [%rd3];"),
        Op::Ld(MemAccess {
            space: Space::Global,
            ty: ScalarType::U64,
            lanes: 2,
            order: MemOrder::Weak,
            cache: CacheOp::Default,
            nc: true,
            hints: Default::default(),
            complete_tx: false,
        })
    );
    assert_eq!(
        op_of("cvt.rzi.sat.u8.f32 %r1, %f1;"),
        Op::Cvt {
            dst: ScalarType::U8,
            src: ScalarType::F32,
            rounding: Some(Rounding::Rzi),
            ftz: false,
            sat: true,
            relu: false,
            satfinite: false
        }
    );
    assert_eq!(
        op_of("atom.acquire.sys.shared.exch.b32 %r1, [%r2], %r3;"),
        Op::Atom(Atomic {
            space: Space::Shared,
            op: AtomOp::Exch,
            ty: ScalarType::B32,
            order: MemOrder::Acquire(Scope::Sys),
            complete_tx: false,
        })
    );
    assert_eq!(
        op_of("mul.wide.u32 %rd1, %r1, %r2;"),
        Op::Mul {
            ty: ScalarType::U32,
            mode: MulMode::Wide
        }
    );
    assert_eq!(
        op_of("div.approx.f32 %f1, %f2, %f3;"),
        Op::FDiv {
            ty: ScalarType::F32,
            precision: Precision::Approx,
            ftz: false
        }
    );
}

#[test]
fn immediates_are_normalised_to_the_operand_type() {
    let p = lower_body(
        "add.s32 %r1, %r2, -1;\n add.u64 %rd1, %rd2, -1;\n mov.f32 %f1, 0d3FF8000000000000;",
    )
    .expect("lowers");
    let f = kernel(&p);
    assert_eq!(f.srcs(crate::InstId(0))[1], Operand::Imm(0xFFFF_FFFF));
    assert_eq!(f.srcs(crate::InstId(1))[1], Operand::Imm(u64::MAX));
    assert_eq!(
        f.srcs(crate::InstId(2))[0],
        Operand::Imm(1.5f32.to_bits() as u64)
    );
}

#[test]
fn modifiers_are_accepted_in_any_order() {
    assert_eq!(
        roundtrip("add.f32.rn.ftz %f1, %f2, %f3;"),
        "add.rn.ftz.f32 %f1, %f2, %f3;"
    );
    assert_eq!(
        roundtrip("ld.v2.global.f32 {%f1, %f2}, [%rd1];"),
        "ld.global.v2.f32 {%f1, %f2}, [%rd1];"
    );
    assert_eq!(
        roundtrip("shfl.idx.sync.b32 %r1, %r2, 0, 31, -1;"),
        "shfl.sync.idx.b32 %r1, %r2, 0, 31, 0xFFFFFFFF;"
    );
}

#[test]
fn rejected_instructions_name_the_problem() {
    let cases: &[(&str, &str)] = &[
        (
            "add.bar.s32 %r1, %r2, %r3;",
            "unsupported modifier '.bar' on 'add'",
        ),
        (
            "add.rn.rn.f32 %f1, %f2, %f3;",
            "repeated modifier '.rn' on 'add'",
        ),
        ("add.s32 %r1, %r2;", "'add' expects 3 operands, found 2"),
        ("add.s32 %r1, %r2, %r99;", "undefined register '%r99'"),
        (
            "add.u32 %r1, %f1, %r2;",
            "register '%f1' of type .f32 does not fit a .u32 operand",
        ),
        (
            "add.u32 %rd1, %r1, %r2;",
            "register '%rd1' of type .b64 does not fit a .u32 operand",
        ),
        ("mov.u32 %r1, %rd1;", "does not fit a .u32 operand"),
        (
            "ld.global.f32 %fd1, [%rd1];",
            "register '%fd1' of type .f64 does not fit a .f32 operand",
        ),
        ("mov.f32 %f1, 1;", "immediate 1 does not fit a .f32 operand"),
        (
            "add.u32 %r1, %r1, 0f3F800000;",
            "does not fit a .u32 operand",
        ),
        (
            "add.u32 %r1, %tid.x, 1;",
            "special register '%tid.x' is only allowed in 'mov' and 'cvt'",
        ),
        (
            "mov.u64 %rd1, %tid.x;",
            "special register '%tid.x' does not fit a .u64 operand",
        ),
        ("bra $L_nowhere;", "undefined label '$L_nowhere'"),
        (
            "wmma.load.a.sync.aligned.row.m16n16k16.f16 {%r1}, [%rd1], 16;",
            "expected a vector of 8 elements, found 1",
        ),
        (
            "wmma.load.a.sync.aligned.row.m16n8k16.f16 {%r1}, [%rd1], 16;",
            "unsupported shape '.m16n8k16' on 'wmma' (supported: .m16n16k16, .m32n8k16, .m8n32k16, .m16n16k8, .m8n8k4, .m8n8k32, .m8n8k128)",
        ),
        (
            "wmma.load.a.sync.aligned.row.m32n8k16.tf32 {%r1}, [%rd1], 16;",
            "type .tf32 is not supported by 'wmma.load.m32n8k16' (supported: .f16, .bf16, .s8, .u8)",
        ),
        (
            "mma.sync.aligned.m8n8k256.row.col.s32.b1.b1.s32.and.popc {%r0, %r1}, {%r2}, {%r3}, {%r0, %r1};",
            "unsupported shape '.m8n8k256' on 'mma' (supported: .m16n8k16, .m16n8k8, .m16n8k4, .m16n8k32, .m16n8k64, .m8n8k4, .m8n8k16, .m8n8k32, .m8n8k128, .m16n8k128, .m16n8k256)",
        ),
        (
            "mma.sync.aligned.m16n8k16.row.col.s32.e4m3.e4m3.s32 {%r0, %r1, %r2, %r3}, {%r4, %r5}, {%r6}, {%r0, %r1, %r2, %r3};",
            "'mma' with .e4m3 inputs does not support .s32 D with .s32 C",
        ),
        (
            "mma.sync.aligned.m16n8k16.row.col.f16.bf16.bf16.f32 {%r0, %r1}, {%r0, %r1, %r2, %r3}, {%r4, %r5}, {%f4, %f5, %f6, %f7};",
            "'mma' with .bf16 inputs does not support .f16 D with .f32 C",
        ),
        (
            "mma.sync.aligned.m16n8k16.col.row.f32.f16.f16.f32 {%f0, %f1, %f2, %f3}, {%r0, %r1, %r2, %r3}, {%r4, %r5}, {%f4, %f5, %f6, %f7};",
            "'mma.m16n8k16' needs .row.col",
        ),
        (
            "mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f0, %f1, %f2, %f3}, {%r0, %r1}, {%r4, %r5}, {%f4, %f5, %f6, %f7}, %r6, 4;",
            "needs a sparsity selector constant from 0 to 3",
        ),
        (
            "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r0, %r1}, [%r2];",
            "expected a vector of 4 elements, found 2",
        ),
        (
            "ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8 {%r0}, [%r2];",
            "'ldmatrix' supports the .m8n8 shape only",
        ),
        (
            "movmatrix.sync.aligned.m8n8.b16 %r0, %r1;",
            "'movmatrix' needs .trans",
        ),
        (
            "movmatrix.sync.m8n8.trans.b16 %r0, %r1;",
            "'movmatrix' needs .sync.aligned",
        ),
        (
            "movmatrix.sync.aligned.m16n16.trans.b16 %r0, %r1;",
            "'movmatrix' supports the .m8n8 shape only",
        ),
        (
            "movmatrix.sync.aligned.m8n8.trans.b32 %r0, %r1;",
            "type .b32 is not supported by 'movmatrix' (supported: .b16)",
        ),
        (
            "movmatrix.sync.aligned.m8n8.trans.b16 %r0, %rd1;",
            "register '%rd1' of type .b64 does not fit a .b32 operand",
        ),
        (
            "div.f32 %f1, %f2, %f3;",
            "a rounding modifier or .approx is required",
        ),
        (
            "cvt.f32.s32 %f1, %r1;",
            "'cvt.f32.s32' needs a valid rounding modifier",
        ),
        (
            "cvt.rn.f64.f32 %fd1, %f1;",
            "'.rn' is not allowed on 'cvt.f64.f32'",
        ),
        (
            "setp.lo.s32 %p1, %r1, %r2;",
            "comparison '.lo' is not valid for .s32",
        ),
        (
            "mul.s32 %r1, %r2, %r3;",
            "'mul' on integers needs .lo, .hi or .wide",
        ),
        (
            "fma.f32 %f1, %f2, %f3, %f4;",
            "'fma' needs a rounding modifier",
        ),
        (
            "sqrt.approx.ftz.f64 %fd1, %fd2;",
            "f64 needs a rounding modifier",
        ),
        (
            "div.full.f64 %fd1, %fd2, %fd3;",
            "f64 needs a rounding modifier",
        ),
        (
            "ld.global.L1::evict_bogus.u32 %r1, [%rd1];",
            "unsupported modifier '.L1::evict_bogus' on 'ld'",
        ),
        (
            "ld.global.L2::cache_hint.u32 %r1, [%rd1];",
            "'ld' expects 3 operands, found 2",
        ),
        (
            "ld.global.u32 {%r1, %r2}, [%rd1];",
            "expected a destination register",
        ),
        (
            "createpolicy.fractional.b64 %rd1, 0f3F800000;",
            "'createpolicy' needs a primary priority",
        ),
        (
            "ld.param.u32 %r1, [nosuch];",
            "undefined symbol or register 'nosuch'",
        ),
        ("@%r1 bra $L_x;", "guard '%r1' is not a predicate register"),
        (
            "st.global.ca.u32 [%rd1], %r1;",
            "cache operator '.ca' is not valid on 'st'",
        ),
        (
            "red.global.cas.b32 [%rd1], %r1;",
            "'red' does not support .cas",
        ),
        (
            "ld.global.f32 %f1, [%f2];",
            "address register '%f2' must be 32 or 64 bits wide",
        ),
    ];
    for (inst, expected) in cases {
        let e = error_of(inst);
        assert!(
            e.contains(expected),
            "{inst}:\n  got: {e}\n  expected: {expected}"
        );
        assert!(e.starts_with("t.ptx:"), "{e}");
        assert!(e.contains("in kernel 'k'"), "{e}");
    }
}

#[test]
fn errors_are_located_at_line_and_column() {
    // The header has 21 lines; the body starts on line 22.
    let e = error_of("add.s32 %r1, %r2, 1;\n  add.s32 %r1, %r2, %nope;");
    let first_line = HEADER.lines().count() as u32 + 2;
    let col = "  add.s32 %r1, %r2, ".len() + 1;
    assert!(
        e.starts_with(&format!(
            "t.ptx:{first_line}:{col}: in kernel 'k': undefined register '%nope'"
        )),
        "{e}"
    );
    assert!(e.ends_with("(in `add.s32 %r1, %r2, %nope;`)"), "{e}");
}

#[test]
fn all_errors_are_reported() {
    let e = error_of("add.bogus.s32 %r1, %r2, %r3;\n  mul.s32 %r1, %r2, %r3;\n  bra $L_none;");
    assert_eq!(e.lines().count(), 3, "{e}");
}

#[test]
fn modern_compiler_forms_of_loads_and_stores() {
    // LLVM's NVPTX back end: one-element vectors and spaces inside the brackets.
    assert_eq!(
        roundtrip("@%p1 ld.global.b32 { %r1 }, [ %rd1 + 0 ];"),
        "@%p1 ld.global.b32 %r1, [%rd1];"
    );
    assert_eq!(
        roundtrip("st.global.b32 [ %rd1 + 4 ], { %r1 };"),
        "st.global.b32 [%rd1+4], %r1;"
    );
    // Eviction priorities, prefetch sizes and the cache-policy operand (a source).
    assert_eq!(
        roundtrip("ld.global.L1::evict_last.L2::128B.v2.u32 {%r1, %r2}, [%rd1];"),
        "ld.global.L1::evict_last.L2::128B.v2.u32 {%r1, %r2}, [%rd1];"
    );
    assert_eq!(
        roundtrip("ld.global.nc.L1::no_allocate.L2::cache_hint.u32 %r1, [%rd1], %rd2;"),
        "ld.global.nc.L1::no_allocate.L2::cache_hint.u32 %r1, [%rd1], %rd2;"
    );
    assert_eq!(
        roundtrip("st.global.L1::no_allocate.L2::cache_hint.u32 [%rd1], %r1, %rd2;"),
        "st.global.L1::no_allocate.L2::cache_hint.u32 [%rd1], %r1, %rd2;"
    );
    assert_eq!(
        roundtrip("ld.global.L2::256B.u32 %r1, [%rd1];"),
        "ld.global.L2::256B.u32 %r1, [%rd1];"
    );
}

#[test]
fn createpolicy_forms_decode() {
    assert_eq!(
        roundtrip("createpolicy.fractional.L2::evict_last.b64 %rd1, 0f3F800000;"),
        "createpolicy.fractional.L2::evict_last.b64 %rd1, 0x3F800000;"
    );
    assert_eq!(
        op_of("createpolicy.fractional.L2::evict_first.L2::evict_unchanged.b64 %rd1;"),
        Op::CreatePolicy(PolicyKind::Fractional {
            primary: Eviction::First,
            secondary: Some(Eviction::Unchanged)
        })
    );
    assert_eq!(
        op_of("createpolicy.range.global.L2::evict_last.b64 %rd1, [%rd2], %r1, %r2;"),
        Op::CreatePolicy(PolicyKind::Range {
            primary: Eviction::Last,
            secondary: None
        })
    );
    assert_eq!(
        op_of("createpolicy.cvt.L2.b64 %rd1, %rd2;"),
        Op::CreatePolicy(PolicyKind::Cvt)
    );
    // Different policies encode differently; the encoding keeps the fraction.
    let half = PolicyKind::Fractional {
        primary: Eviction::Last,
        secondary: None,
    }
    .encode(0.5f32.to_bits() as u64);
    assert_eq!(half >> 32, 0.5f32.to_bits() as u64);
    assert_ne!(half, PolicyKind::Cvt.encode(0.5f32.to_bits() as u64));
}

#[test]
fn unsupported_instructions_are_reported_once_per_kernel_and_opcode() {
    let e = error_of(
        "wmma.bogus.x %r1;\n  wmma.bogus.y %r1;\n  wmma.bogus.z %r1;\n  \
         add.bogus.s32 %r1, %r2, %r3;\n  add.bogus.s32 %r1, %r2, %r3;",
    );
    assert_eq!(e.lines().count(), 2, "{e}");
    assert!(e.contains("[and 2 more in this kernel]"), "{e}");
    assert!(e.contains("[and 1 more in this kernel]"), "{e}");
}

#[test]
fn cp_async_forms_decode() {
    assert_eq!(
        roundtrip("cp.async.cg.shared.global [%r1], [%rd1], 16, %r2;"),
        "cp.async.cg.shared.global [%r1], [%rd1], 16, %r2;"
    );
    assert_eq!(
        op_of("cp.async.ca.shared.global.L2::cache_hint.L2::128B [%r1], [%rd1], 4, %rd2;"),
        Op::CpAsync(CpAsync {
            cache: CacheOp::Ca,
            size: 4,
            src_size: false,
            hints: MemHints {
                cache_hint: true,
                l2_prefetch: Some(PrefetchSize::B128),
                ..MemHints::default()
            }
        })
    );
    assert_eq!(op_of("cp.async.commit_group;"), Op::CpAsyncCommit);
    assert_eq!(op_of("cp.async.wait_all;"), Op::CpAsyncWait { all: true });
    assert_eq!(
        roundtrip("cp.async.wait_group 2;"),
        "cp.async.wait_group 2;"
    );
    check_errors(&[
        (
            "cp.async.cg.shared.global [%r1], [%rd1], 8;",
            "'cp.async.cg' copies 16 bytes",
        ),
        (
            "cp.async.ca.shared.global [%r1], [%rd1], 12;",
            "copies 4, 8 or 16 bytes",
        ),
        ("cp.async.wait_group %r1;", "needs an integer constant"),
        (
            "cp.async.ca.shared.local [%r1], [%rd1], 4;",
            "copies .shared.global only",
        ),
    ]);
}

/// Each instruction fails to lower with an error containing its text.
#[track_caller]
fn check_errors(cases: &[(&str, &str)]) {
    for (inst, expected) in cases {
        let e = error_of(inst);
        assert!(e.contains(expected), "{inst}: {e}");
    }
}

#[test]
fn matrix_instructions_decode_with_every_fragment_register() {
    let a8 = "{%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7}";
    let f8 = "{%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7}";
    let load = format!("wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {a8}, [%rd1], %r0;");
    assert_eq!(
        roundtrip(&load),
        format!("wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {a8}, [%rd1], %r0;")
    );
    // Without a stride the leading dimension is the packed one.
    let store = format!("wmma.store.d.sync.aligned.col.m16n16k16.shared.f32 [%rd1], {f8};");
    assert_eq!(
        roundtrip(&store),
        format!("wmma.store.d.sync.aligned.col.m16n16k16.shared.f32 [%rd1], {f8}, 16;")
    );
    let bf16 = "wmma.load.b.sync.aligned.col.m16n16k16.bf16 {%r0, %r1, %r2, %r3}, [%rd1], 32;";
    assert_eq!(roundtrip(bf16), bf16);
    let mma = format!("wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 {f8}, {a8}, {a8}, {f8};");
    assert_eq!(roundtrip(&mma), mma);
    let p = lower_body(&mma).unwrap();
    let f = kernel(&p);
    // D's 8 registers written; A's and B's 8 each and C's 8 read (repeats included).
    assert_eq!((f.insts[0].num_dsts, f.insts[0].num_srcs), (8, 24));
    let sync = "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f0, %f1, %f2, %f3}, \
                {%r0, %r1, %r2, %r3}, {%r4, %r5}, {%f4, %f5, %f6, %f7};";
    assert_eq!(
        op_of(sync),
        Op::Mma(MmaOp {
            wmma: false,
            shape: MmaShape::M16n8k16,
            a_layout: MatrixLayout::Row,
            b_layout: MatrixLayout::Col,
            d_ty: ScalarType::F32,
            ab_ty: ScalarType::Bf16,
            b_ty: ScalarType::Bf16,
            c_ty: ScalarType::F32,
            satfinite: false,
            bit_op: None,
            rnd: None,
            sparse: None,
        })
    );
    let k8 = "mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16 {%r0, %r1}, {%r2, %r3}, {%r4}, {%r5, %r6};";
    assert_eq!(roundtrip(k8), k8);
    let ld = "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%r0, %r1, %r2, %r3}, [%r4];";
    assert_eq!(roundtrip(ld), ld);
    let mv = "movmatrix.sync.aligned.m8n8.trans.b16 %r0, %r1;";
    assert_eq!(roundtrip(mv), mv);
    assert_eq!(op_of(mv), Op::Movmatrix);
    assert_eq!(
        op_of("ldmatrix.sync.aligned.m8n8.x2.shared::cta.b16 {%r0, %r1}, [%r4];"),
        Op::Ldmatrix(Ldmatrix {
            count: 2,
            trans: false,
            space: Space::Shared
        })
    );
}

#[test]
fn unsupported_matrix_forms_name_the_kernel_and_instruction() {
    let e = error_of("wmma.load.a.sync.aligned.row.m16n8k8.f16 {%r1}, [%rd1], 16;");
    assert!(
        e.contains("in kernel 'k': unsupported shape '.m16n8k8' on 'wmma'"),
        "{e}"
    );
    assert!(e.contains("(in `wmma.load.a.sync"), "{e}");
}

#[test]
fn mbarrier_elect_proxy_fences_and_griddepcontrol() {
    check_all(&[
        (
            "mbarrier.init.shared::cta.b64 [%rd1], 32;",
            "mbarrier.init.shared.b64 [%rd1], 32;",
        ),
        (
            "mbarrier.arrive.release.cta.shared::cta.b64 %rd2, [%rd1];",
            "mbarrier.arrive.shared.b64 %rd2, [%rd1];",
        ),
        (
            "mbarrier.arrive.shared.b64 %rd2, [%rd1], %r1;",
            "mbarrier.arrive.shared.b64 %rd2, [%rd1], %r1;",
        ),
        (
            "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%rd1], 128;",
            "mbarrier.arrive.expect_tx.shared.b64 _, [%rd1], 128;",
        ),
        (
            "mbarrier.arrive_drop.noComplete.b64 %rd2, [%rd1], 2;",
            "mbarrier.arrive_drop.noComplete.b64 %rd2, [%rd1], 2;",
        ),
        (
            "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%rd1], %r1;",
            "mbarrier.expect_tx.shared.b64 [%rd1], %r1;",
        ),
        (
            "mbarrier.complete_tx.shared.b64 [%rd1], 16;",
            "mbarrier.complete_tx.shared.b64 [%rd1], 16;",
        ),
        (
            "mbarrier.test_wait.shared.b64 %p1, [%rd1], %rd2;",
            "mbarrier.test_wait.shared.b64 %p1, [%rd1], %rd2;",
        ),
        (
            "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p1, [%rd1], %r1, 1000;",
            "mbarrier.try_wait.parity.shared.b64 %p1, [%rd1], %r1, 1000;",
        ),
        (
            "mbarrier.pending_count.b64 %r1, %rd2;",
            "mbarrier.pending_count.b64 %r1, %rd2;",
        ),
        (
            "mbarrier.inval.shared.b64 [%rd1];",
            "mbarrier.inval.shared.b64 [%rd1];",
        ),
        (
            "cp.async.mbarrier.arrive.noinc.shared.b64 [%rd1];",
            "cp.async.mbarrier.arrive.noinc.shared.b64 [%rd1];",
        ),
        ("elect.sync %r1|%p1, -1;", "elect.sync %r1|%p1, 0xFFFFFFFF;"),
        ("elect.sync _|%p1, %r2;", "elect.sync _|%p1, %r2;"),
        ("fence.proxy.async;", "fence.proxy.async;"),
        (
            "fence.proxy.async.shared::cta;",
            "fence.proxy.async.shared::cta;",
        ),
        ("fence.proxy.async.global;", "fence.proxy.async.global;"),
        ("fence.proxy.alias;", "fence.proxy.alias;"),
        (
            "fence.mbarrier_init.release.cluster;",
            "fence.mbarrier_init.release.cluster;",
        ),
        ("griddepcontrol.wait;", "griddepcontrol.wait;"),
        (
            "griddepcontrol.launch_dependents;",
            "griddepcontrol.launch_dependents;",
        ),
        (
            "stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%rd1], {%r1, %r2};",
            "stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%rd1], {%r1, %r2};",
        ),
    ]);
    assert_eq!(
        exec_class(&op_of(
            "mbarrier.try_wait.parity.shared.b64 %p1, [%rd1], %r1;"
        )),
        ExecClass::Load
    );
    assert_eq!(
        exec_class(&op_of("mbarrier.arrive.shared.b64 %rd2, [%rd1];")),
        ExecClass::Atomic
    );
    assert_eq!(
        exec_class(&op_of("elect.sync %r1|%p1, -1;")),
        ExecClass::WarpVote
    );
}

#[test]
fn unsupported_mbarrier_and_fence_forms_are_named() {
    for (inst, want) in [
        (
            "mbarrier.test_wait.shared::cluster.b64 %p1, [%rd1], %rd2;",
            "only an arrive may name another CTA's",
        ),
        ("mbarrier.init.shared.b32 [%rd1], 1;", "type .b32"),
        (
            "mbarrier.test_wait.shared.b64 %p1, [%rd1];",
            "wrong number of operands",
        ),
        (
            "mbarrier.arrive.noComplete.shared.b64 %rd2, [%rd1];",
            "wrong number of operands",
        ),
        (
            "fence.proxy.tensormap::generic.release.gpu;",
            "tensormap proxies are not modelled",
        ),
        ("fence.mbarrier_init.cluster;", "needs .release.cluster"),
        ("elect.sync %r1, -1;", "'d|p' destinations"),
        ("griddepcontrol;", ".wait or .launch_dependents"),
        (
            "stmatrix.sync.aligned.m16n8.x1.trans.shared.b8 [%rd1], {%r1};",
            "m8n8 shape only",
        ),
    ] {
        let e = error_of(inst);
        assert!(e.contains(want), "{inst}: {e}");
    }
}

#[test]
fn mma_tf32_integer_and_f64_shapes() {
    check_all(&[
        (
            "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%f0, %f1, %f2, %f3}, {%r0, %r1, %r2, %r3}, {%r4, %r5}, {%f4, %f5, %f6, %f7};",
            "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%f0, %f1, %f2, %f3}, {%r0, %r1, %r2, %r3}, {%r4, %r5}, {%f4, %f5, %f6, %f7};",
        ),
        (
            "mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 {%f0, %f1, %f2, %f3}, {%r0, %r1}, {%r2}, {%f4, %f5, %f6, %f7};",
            "mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 {%f0, %f1, %f2, %f3}, {%r0, %r1}, {%r2}, {%f4, %f5, %f6, %f7};",
        ),
        (
            "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.u8.s8.s32 {%r0, %r1, %r2, %r3}, {%r4, %r5, %r6, %r7}, {%s0, %s1}, {%s2, %s3, %r0, %r1};",
            "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.u8.s8.s32 {%r0, %r1, %r2, %r3}, {%r4, %r5, %r6, %r7}, {%s0, %s1}, {%s2, %s3, %r0, %r1};",
        ),
        (
            "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%fd0, %fd1}, {%fd2}, {%fd3}, {%fd0, %fd1};",
            "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%fd0, %fd1}, {%fd2}, {%fd3}, {%fd0, %fd1};",
        ),
        (
            "mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.xor.popc {%r0, %r1}, {%r4}, {%r6}, {%r0, %r1};",
            "mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.xor.popc {%r0, %r1}, {%r4}, {%r6}, {%r0, %r1};",
        ),
        (
            "mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc {%r0, %r1, %r2, %r3}, {%r4, %r5, %r6, %r7}, {%s0, %s1}, {%r0, %r1, %r2, %r3};",
            "mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc {%r0, %r1, %r2, %r3}, {%r4, %r5, %r6, %r7}, {%s0, %s1}, {%r0, %r1, %r2, %r3};",
        ),
    ]);
    let Op::Mma(o) = op_of(
        "mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.xor.popc {%r0, %r1, %r2, %r3}, {%r4, %r5, %r6, %r7}, {%s0, %s1}, {%r0, %r1, %r2, %r3};",
    ) else {
        panic!("not an mma")
    };
    // A: 4 registers of 32 bits, B: 2, C and D: 4 s32.
    assert_eq!(o.regs(), [4, 2, 4, 4]);
    assert_eq!(o.bit_op, Some(MmaBitOp::Xor));
    let Op::Mma(o) = op_of(
        "mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {%r0, %r1, %r2, %r3}, {%r4, %r5}, {%r6}, {%r0, %r1, %r2, %r3};",
    ) else {
        panic!("not an mma")
    };
    // A: 2 registers of four s8, B: 1, C and D: 4 s32.
    assert_eq!(o.regs(), [2, 1, 4, 4]);
    for (inst, want) in [
        (
            "mma.sync.aligned.m16n8k16.row.col.f32.tf32.tf32.f32 {%f0, %f1, %f2, %f3}, {%r0, %r1, %r2, %r3}, {%r4, %r5}, {%f4, %f5, %f6, %f7};",
            "with .tf32 inputs does not support .m16n8k16 (supported: .m16n8k8, .m16n8k4)",
        ),
        (
            "mma.sync.aligned.m16n8k8.row.col.satfinite.f32.tf32.tf32.f32 {%f0, %f1, %f2, %f3}, {%r0, %r1, %r2, %r3}, {%r4, %r5}, {%f4, %f5, %f6, %f7};",
            "does not take .satfinite",
        ),
        (
            "mma.sync.aligned.m16n8k16.row.col.f32.s8.s8.s32 {%f0, %f1, %f2, %f3}, {%r4, %r5}, {%r6}, {%r0, %r1, %r2, %r3};",
            "does not support .f32 D with .s32 C",
        ),
        (
            "mma.sync.aligned.m16n8k128.row.col.s32.b1.b1.s32 {%r0, %r1, %r2, %r3}, {%r4, %r5}, {%r6}, {%r0, %r1, %r2, %r3};",
            "'mma' with .b1 inputs needs .and.popc or .xor.popc after its types",
        ),
        (
            "mma.sync.aligned.m16n8k64.row.col.s32.s8.s8.s32 {%r0, %r1, %r2, %r3}, {%r4, %r5, %r6, %r7}, {%r0, %r1}, {%r0, %r1, %r2, %r3};",
            "with .s8 inputs does not support .m16n8k64",
        ),
    ] {
        let e = error_of(inst);
        assert!(e.contains(want), "{inst}: {e}");
    }
}

#[test]
fn cvt_to_tf32_forms_and_their_errors() {
    check_all(&[
        ("cvt.rna.tf32.f32 %r1, %f1;", "cvt.rna.tf32.f32 %r1, %f1;"),
        // CUTLASS for sm_90 passes the f32 in a .b32 register ("r" constraint).
        ("cvt.rn.tf32.f32 %r1, %r1;", "cvt.rn.tf32.f32 %r1, %r1;"),
        (
            "cvt.rz.relu.tf32.f32 %u1, %f2;",
            "cvt.rz.relu.tf32.f32 %u1, %f2;",
        ),
        (
            "cvt.rna.satfinite.tf32.f32 %r1, %f1;",
            "cvt.rna.satfinite.tf32.f32 %r1, %f1;",
        ),
        (
            "cvt.rn.satfinite.relu.tf32.f32 %r1, %f1;",
            "cvt.rn.relu.satfinite.tf32.f32 %r1, %f1;",
        ),
    ]);
    assert_eq!(
        op_of("cvt.rna.satfinite.tf32.f32 %r1, %f1;"),
        Op::Cvt {
            dst: ScalarType::Tf32,
            src: ScalarType::F32,
            rounding: Some(Rounding::Rna),
            ftz: false,
            sat: false,
            relu: false,
            satfinite: true
        }
    );
    // ptxas makes .rna integer work on the bits (FSETP, IADD, LOP3) and .rn/.rz one F2FP.
    for (inst, class) in [
        ("cvt.rna.tf32.f32 %r1, %f1;", ExecClass::IntSimple),
        ("cvt.rn.tf32.f32 %r1, %f1;", ExecClass::FloatConvert),
    ] {
        assert_eq!(exec_class(&op_of(inst)), class, "{inst}");
    }
    check_errors(&[
        (
            "cvt.tf32.f32 %r1, %f1;",
            "needs a rounding modifier (.rna, .rn or .rz)",
        ),
        (
            "cvt.rm.tf32.f32 %r1, %f1;",
            "'.rm' is not allowed on 'cvt.tf32.f32'",
        ),
        (
            "cvt.rna.relu.tf32.f32 %r1, %f1;",
            "'.relu' is not allowed on 'cvt.rna.tf32.f32'",
        ),
        (
            "cvt.rna.ftz.tf32.f32 %r1, %f1;",
            "'.ftz' and '.sat' are not allowed",
        ),
        (
            "cvt.rna.tf32.f16 %r1, %h1;",
            "'cvt.tf32.f16' is not supported",
        ),
        ("cvt.rna.tf32.f32 %rd1, %f1;", "%rd1"),
        (
            "cvt.rn.f32.tf32 %f1, %r1;",
            "'cvt.f32.tf32' is not supported",
        ),
    ]);
}

#[test]
fn cluster_barriers_mapa_and_special_registers() {
    check_all(&[
        (
            "barrier.cluster.arrive.relaxed.aligned;",
            "barrier.cluster.arrive.aligned;",
        ),
        ("barrier.cluster.arrive.release;", "barrier.cluster.arrive;"),
        ("barrier.cluster.wait.acquire;", "barrier.cluster.wait;"),
        (
            "barrier.cluster.wait.aligned;",
            "barrier.cluster.wait.aligned;",
        ),
        (
            "mapa.shared::cluster.u32 %r1, %r2, %r3;",
            "mapa.shared::cluster.u32 %r1, %r2, %r3;",
        ),
        ("mapa.u64 %rd1, %rd2, 1;", "mapa.u64 %rd1, %rd2, 1;"),
        (
            "ld.shared::cluster.u32 %r1, [%r2];",
            "ld.shared::cluster.u32 %r1, [%r2];",
        ),
        (
            "atom.shared::cluster.add.u32 %r1, [%r2], 1;",
            "atom.relaxed.gpu.shared::cluster.add.u32 %r1, [%r2], 1;",
        ),
        ("mov.u32 %r1, %clusterid.y;", "mov.u32 %r1, %clusterid.y;"),
        ("mov.u32 %r1, %nclusterid.z;", "mov.u32 %r1, %nclusterid.z;"),
        (
            "mov.u32 %r1, %cluster_ctaid.x;",
            "mov.u32 %r1, %cluster_ctaid.x;",
        ),
        (
            "mov.u32 %r1, %cluster_nctaid.x;",
            "mov.u32 %r1, %cluster_nctaid.x;",
        ),
        (
            "mov.u32 %r1, %cluster_ctarank;",
            "mov.u32 %r1, %cluster_ctarank;",
        ),
        (
            "mov.u32 %r1, %cluster_nctarank;",
            "mov.u32 %r1, %cluster_nctarank;",
        ),
        (
            "mov.pred %p1, %is_explicit_cluster;",
            "mov.pred %p1, %is_explicit_cluster;",
        ),
    ]);
    for (inst, class) in [
        ("barrier.cluster.wait;", ExecClass::Barrier),
        ("barrier.cluster.arrive;", ExecClass::Barrier),
        ("mapa.u64 %rd1, %rd2, 0;", ExecClass::IntSimple),
    ] {
        assert_eq!(exec_class(&op_of(inst)), class, "{inst}");
    }
    check_errors(&[
        ("barrier.cluster.sync;", "needs .arrive or .wait"),
        ("barrier.cluster.wait 0;", "takes no operands"),
        ("mapa.shared.u32 %r1, %r2, 0;", "'mapa' cannot map .shared"),
        ("mapa.u32 %r1, %r2, 0;", "generic 'mapa' needs .u64"),
        (
            "mov.u32 %r1, %is_explicit_cluster;",
            "does not fit a .u32 operand",
        ),
        (
            "mov.pred %p1, %cluster_ctarank;",
            "does not fit a .pred operand",
        ),
    ]);
}

#[test]
fn clusters_above_16_ctas_are_refused_at_the_kernel() {
    let src = ".version 7.8\n.target sm_90\n.address_size 64\n\
               .visible .entry k() .reqnctapercluster 4, 4, 2 { ret; }\n\
               .visible .entry one() .reqnctapercluster 1 .explicitcluster { ret; }\n";
    let module = ptx::parse("t.ptx", src).unwrap();
    let e = lower(&module, "t.ptx", src).unwrap_err().to_string();
    assert!(e.contains("t.ptx:4"), "{e}");
    assert!(
        e.contains(
            "cluster shape '.reqnctapercluster 4, 4, 2' is 32 CTAs; a cluster holds 1 to 16"
        ),
        "{e}"
    );
    assert!(!e.contains("in one"), "{e}");
    let ok = ".version 7.8\n.target sm_90\n.address_size 64\n\
              .visible .entry one() .reqnctapercluster 4, 2 .explicitcluster .maxclusterrank 8 { ret; }\n";
    let module = ptx::parse("t.ptx", ok).unwrap();
    let p = lower(&module, "t.ptx", ok).unwrap();
    let d = &p.functions[0].directives;
    assert_eq!(d.reqnctapercluster, Some([4, 2, 1]));
    assert!(d.explicitcluster && d.explicit_cluster());
    assert_eq!(d.maxclusterrank, Some(8));
}

#[test]
fn setmaxnreg_forms_and_their_errors() {
    check_all(&[
        (
            "setmaxnreg.inc.sync.aligned.u32 232;",
            "setmaxnreg.inc.sync.aligned.u32 232;",
        ),
        (
            "setmaxnreg.dec.sync.aligned.u32 24;",
            "setmaxnreg.dec.sync.aligned.u32 24;",
        ),
        (
            "setmaxnreg.inc.sync.aligned.u32 256;",
            "setmaxnreg.inc.sync.aligned.u32 256;",
        ),
    ]);
    assert_eq!(
        op_of("setmaxnreg.dec.sync.aligned.u32 40;"),
        Op::Setmaxnreg {
            inc: false,
            count: 40
        }
    );
    assert_eq!(
        exec_class(&op_of("setmaxnreg.inc.sync.aligned.u32 232;")),
        ExecClass::Barrier
    );
    for (inst, want) in [
        ("setmaxnreg.inc.sync.aligned.u32 16;", "from 24 to 256"),
        ("setmaxnreg.inc.sync.aligned.u32 264;", "from 24 to 256"),
        ("setmaxnreg.dec.sync.aligned.u32 100;", "a multiple of 8"),
        ("setmaxnreg.dec.sync.aligned.u32 %r1;", "integer constant"),
        ("setmaxnreg.dec.sync.aligned.u32 40, 48;", "operands"),
        ("setmaxnreg.sync.aligned.u32 40;", ".inc or .dec"),
        ("setmaxnreg.inc.u32 40;", "needs .sync.aligned"),
        ("setmaxnreg.inc.sync.aligned.s32 40;", "type .s32"),
        ("setmaxnreg.inc.sync.aligned.u32.relaxed 40;", "relaxed"),
    ] {
        let e = error_of(inst);
        assert!(e.contains(want), "{inst}: {e}");
    }
}

#[test]
fn tensor_copy_forms_and_their_errors() {
    check_all(&[
        (
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r3}], [%r4];",
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r3}], [%r4];",
        ),
        (
            "cp.async.bulk.tensor.1d.shared::cta.global.mbarrier::complete_tx::bytes.L2::cache_hint [%r1], [%rd1, {%r2}], [%r4], %rd2;",
            "cp.async.bulk.tensor.1d.shared::cta.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint [%r1], [%rd1, {%r2}], [%r4], %rd2;",
        ),
        (
            "cp.async.bulk.tensor.5d.global.shared::cta.tile.bulk_group [%rd1, {%r1, %r2, %r3, %r4, 7}], [%r5];",
            "cp.async.bulk.tensor.5d.global.shared::cta.tile.bulk_group [%rd1, {%r1, %r2, %r3, %r4, 7}], [%r5];",
        ),
        (
            "cp.async.bulk.tensor.4d.global.shared::cta.bulk_group [%rd1, {%r1, %r2, %r3, %r4}], [%r5];",
            "cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group [%rd1, {%r1, %r2, %r3, %r4}], [%r5];",
        ),
    ]);
    for (inst, class) in [
        (
            "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r3, %r4}], [%r5];",
            ExecClass::Load,
        ),
        (
            "cp.async.bulk.tensor.1d.global.shared::cta.bulk_group [%rd1, {%r1}], [%r5];",
            ExecClass::Store,
        ),
    ] {
        assert_eq!(exec_class(&op_of(inst)), class, "{inst}");
    }
    for (inst, want) in [
        (
            "cp.async.bulk.tensor.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2}], [%r4];",
            "needs a dimension",
        ),
        (
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2}], [%r4];",
            "needs 2 coordinates, found 1",
        ),
        (
            "cp.async.bulk.tensor.3d.shared::cluster.global.im2col::w.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r3, %r5}], [%r4], {%h1, %h2};",
            ".im2col::w is not supported",
        ),
        (
            "cp.async.bulk.tensor.2d.global.shared::cta.mbarrier::complete_tx::bytes [%rd1, {%r2, %r3}], [%r4], [%r5];",
            "copies .shared::cluster.global",
        ),
        (
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r3}];",
            "operands",
        ),
        (
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1, {%rd2, %r3}], [%r4];",
            "%rd2",
        ),
        (
            "cp.async.bulk.tensor.1d.global.shared::cta.bulk_group.L2::evict_last [%rd1, {%r1}], [%r5];",
            "only .L2::cache_hint",
        ),
        (
            "cp.async.bulk.prefetch.tensor.2d.L2.global [%rd1, {%r1, %r2}];",
            "cp.async.bulk.prefetch",
        ),
    ] {
        let e = error_of(inst);
        assert!(e.contains(want), "{inst}: {e}");
    }
}

#[test]
fn bulk_copy_forms_and_their_errors() {
    check_all(&[
        (
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1], 1024, [%r2];",
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1], 1024, [%r2];",
        ),
        (
            "cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes.L2::cache_hint [%r1], [%rd1], %r3, [%r2], %rd2;",
            "cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes.L2::cache_hint [%r1], [%rd1], %r3, [%r2], %rd2;",
        ),
        (
            "cp.async.bulk.global.shared::cta.bulk_group [%rd1], [%r1], 256;",
            "cp.async.bulk.global.shared::cta.bulk_group [%rd1], [%r1], 256;",
        ),
        ("cp.async.bulk.commit_group;", "cp.async.bulk.commit_group;"),
        ("cp.async.bulk.wait_group 2;", "cp.async.bulk.wait_group 2;"),
        ("cp.async.bulk.wait_group.read 0;", "cp.async.bulk.wait_group.read 0;"),
    ]);
    assert_eq!(
        exec_class(&op_of(
            "cp.async.bulk.global.shared::cta.bulk_group [%rd1], [%r1], 256;"
        )),
        ExecClass::Store
    );
    for (inst, want) in [
        (
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1], 40, [%r2];",
            "positive multiple of 16",
        ),
        (
            "cp.async.bulk.shared::cluster.global.bulk_group [%r1], [%rd1], 64;",
            "copies .shared::cluster.global",
        ),
        (
            "cp.async.bulk.global.shared::cta.mbarrier::complete_tx::bytes [%rd1], [%r1], 64, [%r2];",
            "copies .shared::cluster.global",
        ),
        (
            "cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r1], [%rd1], [%r3];",
            "expected '[tensorMap, {coordinates}]'",
        ),
        (
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1], 64;",
            "operands",
        ),
        ("cp.async.bulk.wait_group %r1;", "integer constant 0..63"),
        (
            "cp.async.bulk.global.shared::cta.bulk_group.L2::evict_last [%rd1], [%r1], 64;",
            "only .L2::cache_hint",
        ),
    ] {
        let e = error_of(inst);
        assert!(e.contains(want), "{inst}: {e}");
    }
}

#[test]
fn im2col_tensor_copies_round_trip() {
    check_all(&[
        (
            "cp.async.bulk.tensor.3d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r3, %r5}], [%r4], {%h1};",
            "cp.async.bulk.tensor.3d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r3, %r5}], [%r4], {%h1};",
        ),
        (
            "cp.async.bulk.tensor.5d.shared::cta.global.im2col.mbarrier::complete_tx::bytes.L2::cache_hint [%r1], [%rd1, {%r2, %r3, %r5, %r6, %r7}], [%r4], {%h1, 2, %h3}, %rd2;",
            "cp.async.bulk.tensor.5d.shared::cta.global.im2col.mbarrier::complete_tx::bytes.L2::cache_hint [%r1], [%rd1, {%r2, %r3, %r5, %r6, %r7}], [%r4], {%h1, 2, %h3}, %rd2;",
        ),
    ]);
    let Op::CpAsyncBulkTensor(c) = op_of(
        "cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r3, %r5, %r6}], [%r4], {%h1, %h2};",
    ) else {
        panic!("not a tensor copy")
    };
    assert!(c.im2col);
    assert_eq!(exec_class(&Op::CpAsyncBulkTensor(c)), ExecClass::Load);
}

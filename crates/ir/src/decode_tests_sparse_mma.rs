//! Decoding of `mma.sp` / `mma.sp::ordered_metadata` (PTX ISA §9.7.14.6): the compressed
//! A fragment's register count, the metadata register as the last source, the selector as
//! a field, and the printed form round-tripping.

use crate::op::*;
use crate::print::inst_to_string;
use crate::{lower, Program};

fn lower_body(body: &str) -> Result<Program, String> {
    let src = format!(
        ".version 8.5\n.target sm_89\n.address_size 64\n.visible .entry k()\n{{\n\
         .reg .b32 %r<40>;\n.reg .f32 %f<8>;\n{body}\n  ret;\n}}\n"
    );
    let module = ptx::parse("t.ptx", &src).map_err(|e| format!("parse: {e}"))?;
    lower(&module, "t.ptx", &src).map_err(|e| e.to_string())
}

#[test]
fn sparse_forms_round_trip_with_their_operands() {
    for (inst, a_regs, srcs, sel, ordered) in [
        (
            "mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f0, %f1, %f2, %f3}, {%r0, %r1}, {%r2, %r3}, {%f4, %f5, %f6, %f7}, %r9, 3;",
            2,
            2 + 2 + 4 + 1,
            3,
            false,
        ),
        (
            "mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f16.f16.f16.f32 {%r0, %r1}, {%r2, %r3, %r4, %r5}, {%r6, %r7, %r8, %r9}, {%f4, %f5, %f6, %f7}, %r12, 1;",
            4,
            4 + 4 + 4 + 1,
            1,
            true,
        ),
        (
            "mma.sp.sync.aligned.m16n8k128.row.col.satfinite.s32.u4.s4.s32 {%r0, %r1, %r2, %r3}, {%r4, %r5, %r6, %r7}, {%r8, %r9, %r10, %r11}, {%r12, %r13, %r14, %r15}, %r16, 0;",
            4,
            4 + 4 + 4 + 1,
            0,
            false,
        ),
        (
            "mma.sp.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%f0, %f1, %f2, %f3}, {%r0, %r1}, {%r2, %r3}, {%f4, %f5, %f6, %f7}, %r9, 2;",
            2,
            2 + 2 + 4 + 1,
            2,
            false,
        ),
        (
            "mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.f32.e4m3.e5m2.f32 {%f0, %f1, %f2, %f3}, {%r0, %r1, %r2, %r3}, {%r4, %r5, %r6, %r7}, {%f4, %f5, %f6, %f7}, %r9, 0;",
            4,
            4 + 4 + 4 + 1,
            0,
            true,
        ),
    ] {
        let p = lower_body(inst).unwrap_or_else(|e| panic!("{inst}: {e}"));
        let f = &p.functions[0];
        crate::verify(f).unwrap_or_else(|e| panic!("{inst}: {e:?}"));
        let i = &f.insts[0];
        assert_eq!(inst_to_string(Some(&p), f, i), inst);
        let Op::Mma(o) = &i.op else {
            panic!("{inst}: {:?}", i.op)
        };
        assert_eq!(o.regs()[0], a_regs, "{inst}");
        assert_eq!(usize::from(i.num_srcs), srcs, "{inst}");
        assert_eq!(o.sparse, Some(MmaSparse { ordered, selector: sel }), "{inst}");
    }
}

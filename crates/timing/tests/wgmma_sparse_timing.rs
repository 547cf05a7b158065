//! Sparse `wgmma.mma_async.sp...m64n8k32.f32.f16.f16` (sm_90a) in a kernel: A (all ones,
//! indices 0 and 1 of every chunk) in registers with its metadata, B (all ones) written to
//! shared memory by the warpgroup and read through a descriptor; two products (scale-d 0,
//! then 1), so every D element is 2 x 16. The values under every register-file design on
//! h100 and functionally. Timing: the dense m64n8k16's steps (the sparse tensor cores'
//! doubled rate, A100 and H100 whitepapers), B's K rows of 64 bytes through the banks.

mod common;

use common::*;
use emu::LaunchConfig;

fn ptx() -> String {
    ".version 8.2\n.target sm_90a\n.address_size 64\n\
     .visible .entry k(.param .u64 out)\n{\n\
     .reg .b32 %r<40>;\n.reg .f32 %f<8>;\n.reg .b64 %rd<8>;\n\
     .shared .align 128 .b8 sb[512];\n\
     ld.param.u64 %rd0, [out];\n\
     mov.u32 %r1, %tid.x;\n\
     shl.b32 %r2, %r1, 2;\nmov.u32 %r6, sb;\nadd.u32 %r7, %r6, %r2;\n\
     mov.b32 %r3, 0x3C003C00;\nst.shared.u32 [%r7], %r3;\n\
     bar.sync 0;\n\
     shr.u32 %r8, %r6, 4;\nand.b32 %r8, %r8, 16383;\ncvt.u64.u32 %rd1, %r8;\n\
     or.b64 %rd1, %rd1, 68720001024;\n\
     mov.b32 %r10, %r3;\nmov.b32 %r11, %r3;\nmov.b32 %r12, %r3;\nmov.b32 %r13, %r3;\n\
     mov.b32 %r14, 0x44444444;\n\
     wgmma.fence.sync.aligned;\n\
     wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.f16.f16 {%f0,%f1,%f2,%f3}, {%r10,%r11,%r12,%r13}, %rd1, %r14, 1, 0, 1, 1, 0;\n\
     wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.f16.f16 {%f0,%f1,%f2,%f3}, {%r10,%r11,%r12,%r13}, %rd1, %r14, 1, 1, 1, 1, 0;\n\
     wgmma.commit_group.sync.aligned;\n\
     wgmma.wait_group.sync.aligned 0;\n\
     mul.wide.u32 %rd2, %r1, 16;\nadd.s64 %rd3, %rd0, %rd2;\n\
     st.global.v4.f32 [%rd3], {%f0,%f1,%f2,%f3};\n\
     ret;\n}\n"
        .to_string()
}

fn check(out: &[u32], what: &str) {
    for (i, v) in out.iter().enumerate() {
        assert_eq!(
            f32::from_bits(*v),
            32.0,
            "{what}: thread {} element {}",
            i / 4,
            i % 4
        );
    }
}

#[test]
fn sparse_wgmma_values_under_every_design_on_h100() {
    for design in DESIGNS {
        let cfg = config("h100", &[&format!("register_file.design=\"{design}\"")]);
        let (mut emu, k, _) = load(&ptx(), "k");
        let info = compiled_info(&emu, k, &cfg);
        let out = alloc_u32(&mut emu, &[0; 512]);
        let p = params(&emu, k, &[out]);
        let s = run(cfg, &mut emu, k, &info, LaunchConfig::linear(1, 128), &p);
        check(&read_u32(&emu, out, 512), design);
        // Two dependent products: at least two h100 tensor latencies (19 each).
        assert!(s.cycles >= 38, "{design}: {}", s.cycles);
    }
    let (mut emu, k, _) = load(&ptx(), "k");
    let out = alloc_u32(&mut emu, &[0; 512]);
    let p = params(&emu, k, &[out]);
    emu.run(k, LaunchConfig::linear(1, 128), &p).unwrap();
    check(&read_u32(&emu, out, 512), "functional");
}

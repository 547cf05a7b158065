//! Single-bit `wgmma.mma_async...m64n8k256.s32.b1.b1.and.popc` (sm_90a) in a kernel: A
//! all ones in registers, B's bits written to shared memory by the warpgroup and read
//! through a descriptor (K-major, no swizzle), so every D element is its column's
//! popcount. The values under every register-file design on h100 and functionally; a
//! dependent pair of products waits at least two tensor latencies; GPUs below 9.0 refuse
//! it; the decoder's refusals at their line. Timing is the other wgmma types': N/8
//! m16n8k256 steps of one `tensor` interval each (b1 `mma`'s choice: one tensor-class
//! interval per m16n8k256, no published rate to cite).

mod common;

use common::*;
use emu::{Emulator, LaunchConfig};
use timing::TimingSimulator;

fn ptx() -> String {
    // lbo = 128 bytes (bits 16-29: 8), sbo = 256 bytes (bits 32-45: 16).
    ".version 8.0\n.target sm_90a\n.address_size 64\n\
     .visible .entry k(.param .u64 out)\n{\n\
     .reg .b32 %r<40>;\n.reg .b64 %rd<8>;\n\
     .shared .align 128 .b8 sb[256];\n\
     ld.param.u64 %rd0, [out];\n\
     mov.u32 %r1, %tid.x;\n\
     shl.b32 %r2, %r1, 1;\n\
     mad.lo.u32 %r3, %r2, 37, 11;\nand.b32 %r3, %r3, 255;\n\
     add.u32 %r4, %r2, 1;\nmad.lo.u32 %r5, %r4, 37, 11;\nand.b32 %r5, %r5, 255;\n\
     mov.u32 %r6, sb;\nadd.u32 %r7, %r6, %r2;\n\
     st.shared.u8 [%r7], %r3;\nst.shared.u8 [%r7+1], %r5;\n\
     bar.sync 0;\n\
     shr.u32 %r8, %r6, 4;\nand.b32 %r8, %r8, 16383;\ncvt.u64.u32 %rd1, %r8;\n\
     or.b64 %rd1, %rd1, 68720001024;\n\
     mov.b32 %r10, -1;\nmov.b32 %r11, -1;\nmov.b32 %r12, -1;\nmov.b32 %r13, -1;\n\
     wgmma.fence.sync.aligned;\n\
     wgmma.mma_async.sync.aligned.m64n8k256.s32.b1.b1.and.popc {%r20,%r21,%r22,%r23}, {%r10,%r11,%r12,%r13}, %rd1, 0;\n\
     wgmma.mma_async.sync.aligned.m64n8k256.s32.b1.b1.and.popc {%r20,%r21,%r22,%r23}, {%r10,%r11,%r12,%r13}, %rd1, 1;\n\
     wgmma.commit_group.sync.aligned;\n\
     wgmma.wait_group.sync.aligned 0;\n\
     mul.wide.u32 %rd2, %r1, 16;\nadd.s64 %rd3, %rd0, %rd2;\n\
     st.global.v4.u32 [%rd3], {%r20,%r21,%r22,%r23};\n\
     ret;\n}\n"
        .to_string()
}

/// Expected D for thread `t`'s element `e`: twice (two products, scale-d 0 then 1) the
/// popcount of its column of B.
fn want(t: usize, e: usize) -> u32 {
    let byte = |i: u64| ((i * 37 + 11) & 255) as u8;
    let lane = t % 32;
    let col = 2 * (lane % 4) as u64 + (e % 2) as u64;
    // Column j's byte kb at j*16 + kb%16 + (kb/16)*128 (no swizzle, K-major).
    let popc: u32 = (0..32u64)
        .map(|kb| byte(col * 16 + kb % 16 + (kb / 16) * 128).count_ones())
        .sum();
    2 * popc
}

fn check(out: &[u32], what: &str) {
    for t in 0..128 {
        for e in 0..4 {
            assert_eq!(out[4 * t + e], want(t, e), "{what}: thread {t} element {e}");
        }
    }
}

#[test]
fn single_bit_wgmma_values_under_every_design_on_h100() {
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
    // Functional.
    let (mut emu, k, _) = load(&ptx(), "k");
    let out = alloc_u32(&mut emu, &[0; 512]);
    let p = params(&emu, k, &[out]);
    emu.run(k, LaunchConfig::linear(1, 128), &p).unwrap();
    check(&read_u32(&emu, out, 512), "functional");
}

#[test]
fn gpus_below_9_0_refuse_it() {
    let cfg = config("rtx-a6000", &[]);
    let (mut emu, k, _) = load(&ptx(), "k");
    let info = compiled_info(&emu, k, &cfg);
    let out = alloc_u32(&mut emu, &[0; 512]);
    let p = params(&emu, k, &[out]);
    let e = TimingSimulator::new(cfg)
        .simulate_kernel(&mut emu, k, LaunchConfig::linear(1, 128), &p, &info)
        .unwrap_err();
    assert!(e.to_string().contains("9.0"), "{e}");
}

#[test]
fn the_decoder_refuses_what_the_isa_does_not_define() {
    let decode = |target: &str, inst: &str| {
        let text = format!(
            ".version 8.0\n.target {target}\n.address_size 64\n.visible .entry k()\n{{\n\
             .reg .b32 %r<40>;\n.reg .b64 %rd<4>;\n{inst}\nret;\n}}\n"
        );
        Emulator::new()
            .load_ptx("d.ptx", &text)
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    let ok = "wgmma.mma_async.sync.aligned.m64n8k256.s32.b1.b1.and.popc {%r0,%r1,%r2,%r3}, %rd1, %rd2, 1;";
    decode("sm_90a", ok).unwrap();
    let e = decode("sm_90", ok).unwrap_err();
    assert!(e.contains("d.ptx:8:") && e.contains("sm_90a"), "{e}");
    for (inst, what) in [
        ("wgmma.mma_async.sync.aligned.m64n8k256.s32.b1.b1.xor.popc {%r0,%r1,%r2,%r3}, %rd1, %rd2, 1;", "needs .and.popc"),
        ("wgmma.mma_async.sync.aligned.m64n8k256.s32.b1.b1 {%r0,%r1,%r2,%r3}, %rd1, %rd2, 1;", "needs .and.popc"),
        ("wgmma.mma_async.sync.aligned.m64n8k128.s32.b1.b1.and.popc {%r0,%r1,%r2,%r3}, %rd1, %rd2, 1;", "m64nNk256"),
        ("wgmma.mma_async.sync.aligned.m64n40k256.s32.b1.b1.and.popc {%r0,%r1,%r2,%r3,%r4,%r5,%r6,%r7,%r8,%r9,%r10,%r11,%r12,%r13,%r14,%r15,%r16,%r17,%r18,%r19}, %rd1, %rd2, 1;", "16 above 24"),
        ("wgmma.mma_async.sync.aligned.m64n8k256.satfinite.s32.b1.b1.and.popc {%r0,%r1,%r2,%r3}, %rd1, %rd2, 1;", "does not take .satfinite"),
        ("wgmma.mma_async.sync.aligned.m64n8k256.f32.b1.b1.and.popc {%r0,%r1,%r2,%r3}, %rd1, %rd2, 1;", "does not support a .f32 D"),
        ("wgmma.mma_async.sync.aligned.m64n8k256.s32.b1.b1.and.popc {%r0,%r1,%r2,%r3}, %rd1, %rd2, 1, 1, 1;", "expects 4 operands"),
    ] {
        let e = decode("sm_90a", inst).expect_err(inst);
        assert!(e.contains(what), "{inst}: {e}");
        assert!(e.contains("d.ptx:8:"), "{inst}: {e}");
    }
}

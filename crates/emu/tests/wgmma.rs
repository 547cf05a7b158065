//! `wgmma` (sm_90a) end to end in the emulator: `data/modern/wgmma.sm90a.ptx` computes
//! a warpgroup product from shared-memory descriptors (and accumulates a second with a
//! predicate scale-d), and its broken kernels are located errors; the decoder's forms and
//! refusals.

use emu::{Emulator, KernelRef, LaunchConfig};

fn params(emu: &Emulator, k: KernelRef, values: &[u64]) -> Vec<u8> {
    let ps = emu.kernel_params(k).expect("kernel");
    let size = ps.iter().map(|p| p.offset + p.size).max().unwrap_or(0) as usize;
    let mut buf = vec![0u8; size];
    for (p, v) in ps.iter().zip(values) {
        let o = p.offset as usize;
        buf[o..o + p.size as usize].copy_from_slice(&v.to_le_bytes()[..p.size as usize]);
    }
    buf
}

fn ptx() -> String {
    let path = format!(
        "{}/tests/data/modern/wgmma.sm90a.ptx",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn a_warpgroup_product_from_descriptors_and_its_errors() {
    let mut emu = Emulator::new();
    let m = emu
        .load_ptx("wgmma.ptx", &ptx())
        .unwrap_or_else(|e| panic!("{e}"));
    let k = emu.kernel(m, "wg").unwrap();
    let out = emu.memory.alloc(128 * 20, emu::AllocKind::Device).unwrap();
    let p = params(&emu, k, &[out]);
    emu.run(k, LaunchConfig::linear(1, 128), &p).unwrap();
    for t in 0..128u64 {
        let (warp, lane) = (t / 32, t % 32);
        for e in 0..4u64 {
            let row = 16 * warp + lane / 4 + 8 * (e / 2);
            let v = emu.memory.read_uint(out + 20 * t + 4 * e, 4).unwrap() as u32;
            // Two products of 16 (row % 4 + 1): scale-d 0, then scale-d true.
            assert_eq!(
                f32::from_bits(v),
                32.0 * (row % 4 + 1) as f32,
                "thread {t} element {e}"
            );
        }
    }
    for (name, want, line) in [
        (
            "diverge",
            "lanes 0x0000ffff of warp 0 execute wgmma.mma_async",
            89,
        ),
        ("far", "A's element (0, 0) at shared address 0x3ff00", 100),
    ] {
        let k = emu.kernel(m, name).unwrap();
        let e = emu.run(k, LaunchConfig::linear(1, 128), &[]).unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("wgmma: ") && text.contains(want),
            "{name}: {text}"
        );
        assert_eq!(e.location.line, line, "{name}: {text}");
    }
}

fn decode(body: &str) -> Result<(), String> {
    let text = format!(
        ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{{\n\
         .reg .pred %p<2>;\n.reg .b32 %r<200>;\n.reg .f32 %f<200>;\n.reg .b64 %rd<4>;\n\
         {body}\nret;\n}}\n"
    );
    Emulator::new()
        .load_ptx("d.ptx", &text)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

fn regs(prefix: &str, n: usize) -> String {
    let r: Vec<String> = (0..n).map(|i| format!("{prefix}{i}")).collect();
    format!("{{{}}}", r.join(", "))
}

#[test]
fn every_form_decodes_and_the_rest_is_refused_with_the_reason() {
    let d = |n: usize| regs("%f", n);
    let r = |n: usize| regs("%r", n);
    let ok = [
        "wgmma.fence.sync.aligned;".to_string(),
        "wgmma.commit_group.sync.aligned;".into(),
        "wgmma.wait_group.sync.aligned 3;".into(),
        format!(
            "wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.f16.f16 {}, %rd1, %rd2, %r1, 1, 0, 1, 1, 0, 0;",
            d(4)
        ),
        format!(
            "wgmma.mma_async.sp.sync.aligned.m64n16k64.satfinite.s32.s8.u8 {}, {}, %rd2, %r1, 0, %p1;",
            r(8),
            r(4)
        ),
        format!(
            "wgmma.mma_async.sp.sync.aligned.m64n8k16.f32.tf32.tf32 {}, %rd1, %rd2, %r1, 1, 1, 1, -1;",
            d(4)
        ),
        format!(
            "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {}, %rd1, %rd2, %p1, 1, -1, 0, 1;",
            d(4)
        ),
        format!(
            "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {}, %rd1, %rd2, 1, 1, 1, 1, 0;",
            d(128)
        ),
        format!(
            "wgmma.mma_async.sync.aligned.m64n128k16.f16.f16.f16 {}, {}, %rd2, %p1, 1, 1, 1;",
            r(32),
            r(4)
        ),
        format!(
            "wgmma.mma_async.sync.aligned.m64n24k8.f32.tf32.tf32 {}, %rd1, %rd2, 0, 1, 1;",
            d(12)
        ),
        format!(
            "wgmma.mma_async.sync.aligned.m64n16k32.f16.e4m3.e5m2 {}, {}, %rd2, 1, -1, 1;",
            r(4),
            r(4)
        ),
        format!(
            "wgmma.mma_async.sync.aligned.m64n48k32.satfinite.s32.s8.u8 {}, %rd1, %rd2, %p1;",
            r(24)
        ),
        format!(
            "wgmma.mma_async.sync.aligned.m64n24k32.s32.u8.u8 {}, {}, %rd2, 0;",
            r(12),
            r(4)
        ),
    ];
    for body in &ok {
        decode(body).unwrap_or_else(|e| panic!("{body}: {e}"));
    }
    for (body, want) in [
        (format!("wgmma.mma_async.sync.aligned.m64n12k16.f32.f16.f16 {}, %rd1, %rd2, 0, 1, 1, 0, 0;", d(6)), "unsupported shape '.m64n12k16'"),
        (format!("wgmma.mma_async.sync.aligned.m64n40k32.s32.s8.s8 {}, %rd1, %rd2, 0;", r(20)), "16 above 24"),
        (format!("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {}, %rd1, %rd2, 0, 1, 1, 0, 0;", d(3)), "vector"),
        (format!("wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.f16 {}, %rd1, %rd2, 0, 1, 1, 0, 0;", d(4)), "with .bf16 A and .f16 B is not supported"),
        (format!("wgmma.mma_async.sync.aligned.m64n8k16.f16.bf16.bf16 {}, %rd1, %rd2, 0, 1, 1, 0, 0;", r(2)), "does not support a .f16 D"),
        (format!("wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 {}, %rd1, %rd2, 0, 1, 1, 0, 0;", d(4)), "expects 6 operands"),
        (format!("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {}, %rd1, %rd2, 0, 2, 1, 0, 0;", d(4)), "integer constant (1 or -1)"),
        (format!("wgmma.mma_async.sync.aligned.m64n8k16.satfinite.f32.f16.f16 {}, %rd1, %rd2, 0, 1, 1, 0, 0;", d(4)), "does not take .satfinite"),
        (format!("wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.f16.f16 {}, %rd1, %rd2, %r1, 2, 0, 1, 1, 0, 0;", d(4)), "sparsity selector constant from 0 to 1"),
        (format!("wgmma.mma_async.sp.sync.aligned.m64n8k16.f32.f16.f16 {}, %rd1, %rd2, %r1, 0, 0, 1, 1, 0, 0;", d(4)), "m64nNk32"),
        ("wgmma.wait_group.sync.aligned %r1;".to_string(), "non-negative integer constant"),
        ("wgmma.fence;".to_string(), "needs .sync.aligned"),
    ] {
        let e = decode(&body).expect_err(&body);
        assert!(e.contains(want), "{body}: {e}");
    }
}

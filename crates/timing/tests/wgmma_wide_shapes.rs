//! Wide warpgroup products in timing mode: m64n64, m64n128 and m64n256 with f32
//! accumulators (32, 64 and 128 D registers per thread), A from shared memory or from
//! registers (the widest, m64n256 with A in registers, reads 134 registers), under every
//! register-file design on h100: the values are the products', the statistics are
//! deterministic, and a wider product takes longer. CERF and Malekeh, whose per-operand
//! state is a 32-bit mask, refuse a product of more than 32 registers before it runs.

mod common;

use common::*;
use emu::LaunchConfig;
use timing::{KernelStats, SimError, TimingSimulator};

/// One warpgroup: A (64 x 16, A[m][k] = m % 4 + 1) from shared memory (`a_regs` false,
/// the layout of `wgmma.sm90a.ptx`) or from registers, B (16 x `n`) all 1.0 in shared
/// memory; two products (the second with scale-d true), so every D element of row m is
/// 32 (m % 4 + 1). Thread t stores its n / 2 D values at out + 4 (t n / 2 + e).
fn kernel(n: usize, a_regs: bool) -> String {
    let nd = n / 2;
    let d: Vec<String> = (0..nd).map(|i| format!("%d{i}")).collect();
    let d = d.join(", ");
    let mut s = format!(
        ".version 8.0\n.target sm_90a\n.address_size 64\n\
         .visible .entry wide(.param .u64 out)\n{{\n\
         .reg .pred %p<2>;\n.reg .b16 %h<4>;\n.reg .b32 %r<32>;\n.reg .f32 %f<8>;\n\
         .reg .f32 %d<{nd}>;\n.reg .b64 %rd<16>;\n\
         .shared .align 1024 .b8 sm[{}];\n\
         mov.u32 %r1, %tid.x;\n\
         shr.u32 %r2, %r1, 1;\nand.b32 %r3, %r1, 1;\nshr.u32 %r4, %r2, 3;\n\
         shl.b32 %r4, %r4, 8;\nshl.b32 %r5, %r3, 7;\nadd.u32 %r4, %r4, %r5;\n\
         and.b32 %r5, %r2, 7;\nshl.b32 %r5, %r5, 4;\nadd.u32 %r4, %r4, %r5;\n\
         mov.u32 %r6, sm;\nadd.u32 %r7, %r6, %r4;\nand.b32 %r8, %r2, 3;\n\
         add.u32 %r8, %r8, 1;\ncvt.rn.f32.u32 %f1, %r8;\ncvt.rn.f16.f32 %h1, %f1;\n\
         mov.b32 %r9, {{%h1, %h1}};\nst.shared.v4.b32 [%r7], {{%r9, %r9, %r9, %r9}};\n\
         mov.u32 %r11, 0x3C003C00;\n",
        2048 + 32 * n
    );
    // B: 32 n bytes of 1.0 from sm + 2048, 16 bytes per store, n / 64 per thread.
    for i in 0..n / 64 {
        s += &format!(
            "add.u32 %r10, %r1, {};\nshl.b32 %r10, %r10, 4;\nadd.u32 %r10, %r10, 2048;\n\
             add.u32 %r10, %r6, %r10;\nst.shared.v4.b32 [%r10], {{%r11, %r11, %r11, %r11}};\n",
            128 * i
        );
    }
    s += "bar.sync 0;\nfence.proxy.async.shared::cta;\n\
          cvt.u64.u32 %rd1, %r6;\nshr.u64 %rd1, %rd1, 4;\nand.b64 %rd1, %rd1, 0x3FFF;\n\
          or.b64 %rd1, %rd1, 0x0000001000080000;\nadd.u64 %rd2, %rd1, 128;\n";
    let a = if a_regs {
        // A's fragment: rows 16 warp + lane / 4 (+ 8), so m % 4 = (lane / 4) % 4.
        s += "and.b32 %r12, %r1, 31;\nshr.u32 %r12, %r12, 2;\nand.b32 %r12, %r12, 3;\n\
              add.u32 %r12, %r12, 1;\ncvt.rn.f32.u32 %f2, %r12;\ncvt.rn.f16.f32 %h2, %f2;\n\
              mov.b32 %r13, {%h2, %h2};\nmov.b32 %r14, %r13;\nmov.b32 %r15, %r13;\n\
              mov.b32 %r16, %r13;\n";
        ("{%r13, %r14, %r15, %r16}", "1, 1, 0")
    } else {
        ("%rd1", "1, 1, 0, 0")
    };
    s += "wgmma.fence.sync.aligned;\nsetp.eq.u32 %p1, %r1, %r1;\n";
    for scale in ["0", "%p1"] {
        s += &format!(
            "wgmma.mma_async.sync.aligned.m64n{n}k16.f32.f16.f16 {{{d}}}, {}, %rd2, {scale}, {};\n",
            a.0, a.1
        );
    }
    s += &format!(
        "wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;\n\
         ld.param.u64 %rd3, [out];\nmul.wide.u32 %rd4, %r1, {};\nadd.u64 %rd4, %rd3, %rd4;\n",
        4 * nd
    );
    for e in 0..nd {
        s += &format!("st.global.f32 [%rd4+{}], %d{e};\n", 4 * e);
    }
    s + "ret;\n}\n"
}

fn run(design: &str, n: usize, a_regs: bool) -> Result<KernelStats, SimError> {
    let (mut emu, k, _) = load(&kernel(n, a_regs), "wide");
    let cfg = config("h100", &[&format!("register_file.design=\"{design}\"")]);
    let info = compiled_info(&emu, k, &cfg);
    let nd = n / 2;
    let pout = alloc_u32(&mut emu, &vec![0; 128 * nd]);
    let p = params(&emu, k, &[pout]);
    let s = TimingSimulator::new(cfg).simulate_kernel(
        &mut emu,
        k,
        LaunchConfig::linear(1, 128),
        &p,
        &info,
    )?;
    let out = read_u32(&emu, pout, 128 * nd);
    for (t, v) in out.chunks(nd).enumerate() {
        let want = 32.0 * ((t % 32 / 4) % 4 + 1) as f32;
        for (e, x) in v.iter().enumerate() {
            assert_eq!(
                f32::from_bits(*x),
                want,
                "{design} m64n{n} (A from registers: {a_regs}): thread {t} element {e}"
            );
        }
    }
    Ok(s)
}

#[test]
fn wide_products_are_timed_under_every_design_with_their_values() {
    for a_regs in [false, true] {
        for design in DESIGNS {
            let mut cycles = Vec::new();
            for n in [64, 128, 256] {
                match run(design, n, a_regs) {
                    Ok(s) => {
                        let again = run(design, n, a_regs).unwrap();
                        assert_eq!(s.cycles, again.cycles, "{design} m64n{n}");
                        assert_eq!(s.stalls, again.stalls, "{design} m64n{n}");
                        assert_eq!(s.register_file, again.register_file, "{design} m64n{n}");
                        cycles.push(s.cycles);
                    }
                    Err(e) if matches!(design, "cerf" | "malekeh") => {
                        let m = e.to_string();
                        assert!(matches!(e, SimError::TooWideForDesign { .. }), "{m}");
                        assert!(
                            m.contains(&format!("register_file.design = {design}"))
                                && m.contains("wgmma.mma_async")
                                && m.contains("at most 32"),
                            "{m}"
                        );
                    }
                    Err(e) => panic!("{design} m64n{n} (A from registers: {a_regs}): {e}"),
                }
            }
            if !matches!(design, "cerf" | "malekeh") {
                assert!(
                    cycles[0] < cycles[1] && cycles[1] < cycles[2],
                    "{design}: {cycles:?}"
                );
            }
        }
    }
}

#[test]
fn the_widest_product_loads_with_its_134_registers() {
    // m64n256 with f32 D and A from registers: 128 D, 4 A and the 64-bit B descriptor
    // (the predicate is not a general register), fewer where the allocator gives A's
    // four equal registers one; the designs' bound is 136.
    let (emu, k, _) = load(&kernel(256, true), "wide");
    let info = compiled_info(&emu, k, &config("h100", &[]));
    let w = info.widest_instruction();
    assert!((131..=134).contains(&w), "{w}");
}

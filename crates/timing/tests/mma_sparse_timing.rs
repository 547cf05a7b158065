//! Sparse `mma.sp` in timing mode: values under every register-file design on rtx-a6000
//! and h100, and its cost. A sparse m16n8k32 does the work of a dense m16n8k32 (two
//! m16n8k16) at the sparse tensor core's doubled rate (NVIDIA A100 Tensor Core GPU
//! Architecture whitepaper, 2020: "Sparse Tensor Cores ... 2x"; H100 whitepaper, 2022,
//! the same for Hopper), so regsim times it as the dense m16n8k16: one `tensor`-class
//! instruction, the config's latency and interval. A chain of sparse products therefore
//! takes as long as the same chain of dense m16n8k16, not twice as long.

mod common;

use common::*;
use emu::LaunchConfig;

const CHAIN: usize = 8;

/// A kernel `k(.param .u64 out)`: `CHAIN` dependent products (D feeds C) of an all-ones
/// A and B, then each thread stores its four D values and the cycles of the chain.
/// `sparse`: mma.sp m16n8k32 (every chunk stores indices 0 and 1: 16 ones a row);
/// else mma.sync m16n8k16 (16 ones a row). Each product adds 16 to every element.
fn ptx(sparse: bool) -> String {
    let inst = if sparse {
        "mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32 \
         {%f0,%f1,%f2,%f3}, {%r0,%r1,%r2,%r3}, {%r4,%r5,%r6,%r7}, {%f0,%f1,%f2,%f3}, %r8, 1;"
    } else {
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 \
         {%f0,%f1,%f2,%f3}, {%r0,%r1,%r2,%r3}, {%r4,%r5}, {%f0,%f1,%f2,%f3};"
    };
    let chain = [inst; CHAIN].join("\n");
    format!(
        ".version 8.5\n.target sm_80\n.address_size 64\n\
         .visible .entry k(.param .u64 out)\n{{\n\
         .reg .b32 %r<12>;\n.reg .f32 %f<6>;\n.reg .b64 %rd<6>;\n\
         ld.param.u64 %rd0, [out];\nmov.u32 %r9, %tid.x;\n\
         mul.wide.u32 %rd1, %r9, 20;\nadd.s64 %rd0, %rd0, %rd1;\n\
         mov.b32 %r0, 0x3C003C00;\nmov.b32 %r1, %r0;\nmov.b32 %r2, %r0;\nmov.b32 %r3, %r0;\n\
         mov.b32 %r4, %r0;\nmov.b32 %r5, %r0;\nmov.b32 %r6, %r0;\nmov.b32 %r7, %r0;\n\
         mov.b32 %r8, 0x44444444;\n\
         mov.f32 %f0, 0f00000000;\nmov.f32 %f1, %f0;\nmov.f32 %f2, %f0;\nmov.f32 %f3, %f0;\n\
         mov.u64 %rd2, %clock64;\n{chain}\nadd.f32 %f4, %f0, %f3;\nmov.u64 %rd3, %clock64;\n\
         sub.s64 %rd4, %rd3, %rd2;\ncvt.u32.u64 %r10, %rd4;\n\
         st.global.f32 [%rd0], %f0;\nst.global.f32 [%rd0+4], %f1;\n\
         st.global.f32 [%rd0+8], %f2;\nst.global.f32 [%rd0+12], %f4;\n\
         st.global.u32 [%rd0+16], %r10;\nret;\n}}\n"
    )
}

/// The chain's cycles (lane 0) after checking every thread's values.
fn run_one(gpu: &str, design: &str, sparse: bool) -> u32 {
    let cfg = config(gpu, &[&format!("register_file.design=\"{design}\"")]);
    let (mut emu, k, _) = load(&ptx(sparse), "k");
    let info = compiled_info(&emu, k, &cfg);
    let out = alloc_u32(&mut emu, &[0; 32 * 5]);
    let p = params(&emu, k, &[out]);
    run(cfg, &mut emu, k, &info, LaunchConfig::linear(1, 32), &p);
    let v = read_u32(&emu, out, 32 * 5);
    let want = (16 * CHAIN) as f32;
    for t in 0..32 {
        let w = &v[5 * t..5 * t + 5];
        let what = format!("{gpu} {design} sparse {sparse} thread {t}");
        assert_eq!(f32::from_bits(w[0]), want, "{what}");
        assert_eq!(f32::from_bits(w[1]), want, "{what}");
        assert_eq!(f32::from_bits(w[2]), want, "{what}");
        assert_eq!(f32::from_bits(w[3]), 2.0 * want, "{what}");
    }
    v[4]
}

#[test]
fn sparse_products_give_their_values_under_every_design_at_the_dense_rate() {
    for gpu in ["rtx-a6000", "h100"] {
        for design in DESIGNS {
            let sparse = run_one(gpu, design, true);
            let dense = run_one(gpu, design, false);
            println!("{gpu} {design}: sparse chain {sparse} cycles, dense m16n8k16 chain {dense}");
            // Timed as the dense m16n8k16; the sparse one reads 3 more registers (B's
            // extra two and the metadata), which may cost a few cycles of bank reads
            // per product, never a second product's time (a dependent chain pays a
            // tensor latency, at least 8 cycles in every config, per product).
            assert!(dense >= CHAIN as u32 * 8, "{gpu} {design}: {dense}");
            assert!(
                sparse.abs_diff(dense) <= CHAIN as u32 * 4,
                "{gpu} {design}: sparse {sparse} vs dense {dense}"
            );
        }
    }
}

#[test]
fn statistics_are_deterministic() {
    assert_eq!(
        run_one("h100", "baseline", true),
        run_one("h100", "baseline", true)
    );
}

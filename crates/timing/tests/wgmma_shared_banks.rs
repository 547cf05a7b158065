//! The tensor cores' `wgmma` operand reads occupy the SM's shared-memory banks: each
//! warp's product from descriptors books ceil((16 rows of A + N/4 rows of B) x 32 bytes /
//! 128 bytes a pass) passes from its issue, so a warp's `ld.shared` meanwhile waits for
//! them; fp8 `mma.sync` is refused on GPUs below compute capability 8.9 at launch, with
//! its line.

mod common;

use common::*;
use emu::LaunchConfig;
use timing::{KernelStats, SimError, TimingSimulator};

/// Warps 0-3 (one warpgroup) run `iters` m64n8k16 f16 products from descriptors, one
/// committed group each, waiting for each; warp 4 meanwhile walks a chain of 64
/// dependent `ld.shared` (every word is 0: each address is the last value plus `sm`)
/// and stores the cycles it took.
const KERNEL: &str = "\
.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 iters)
{
    .reg .pred %p<4>;
    .reg .b32 %r<32>;
    .reg .f32 %f<8>;
    .reg .b64 %rd<16>;
    .shared .align 1024 .b8 sm[4096];
    mov.u32 %r1, %tid.x;
    ld.param.u32 %r2, [iters];
    mov.u32 %r6, sm;
    bar.sync 0;
    setp.ge.u32 %p1, %r1, 128;
    @%p1 bra READER;
    cvt.u64.u32 %rd1, %r6;
    shr.u64 %rd1, %rd1, 4;
    and.b64 %rd1, %rd1, 0x3FFF;
    or.b64 %rd1, %rd1, 0x0000001000080000;
    add.u64 %rd2, %rd1, 128;
    mov.f32 %f2, 0f00000000;
    mov.f32 %f3, 0f00000000;
    mov.f32 %f4, 0f00000000;
    mov.f32 %f5, 0f00000000;
    mov.u32 %r3, 0;
    setp.eq.u32 %p2, %r2, 0;
    @%p2 bra WDONE;
LOOP:
    wgmma.fence.sync.aligned;
    wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f2, %f3, %f4, %f5}, %rd1, %rd2, 0, 1, 1, 0, 0;
    wgmma.commit_group.sync.aligned;
    wgmma.wait_group.sync.aligned 0;
    add.u32 %r3, %r3, 1;
    setp.lt.u32 %p2, %r3, %r2;
    @%p2 bra LOOP;
WDONE:
    ret;
READER:
    mov.u32 %r11, 0;
    mov.u32 %r12, 0;
    mov.u32 %r10, %clock;
RLOOP:
    add.u32 %r13, %r6, %r12;
    ld.shared.u32 %r12, [%r13];
    add.u32 %r11, %r11, 1;
    setp.lt.u32 %p3, %r11, 64;
    @%p3 bra RLOOP;
    mov.u32 %r14, %clock;
    sub.u32 %r15, %r14, %r10;
    ld.param.u64 %rd3, [out];
    st.global.u32 [%rd3], %r15;
    ret;
}
";

/// The statistics and the reader's cycles.
fn run(iters: u64, overrides: &[&str]) -> (KernelStats, u32) {
    let (mut emu, k, _) = load(KERNEL, "k");
    let cfg = config("h100", overrides);
    let info = compiled_info(&emu, k, &cfg);
    let pout = alloc_u32(&mut emu, &[0]);
    let p = params(&emu, k, &[pout, iters]);
    let s = TimingSimulator::new(cfg)
        .simulate_kernel(&mut emu, k, LaunchConfig::linear(1, 160), &p, &info)
        .unwrap_or_else(|e| panic!("{e}"));
    (s, read_u32(&emu, pout, 1)[0])
}

#[test]
fn each_product_books_its_operand_passes_and_the_reader_waits_for_them() {
    let (idle, quiet) = run(0, &[]);
    let (busy, contended) = run(100, &[]);
    // 512 bytes of A + 2 rows of B (64 bytes) = 576 bytes: 5 passes of 128 bytes, for
    // each of 4 warps and 100 products.
    assert_eq!(idle.memory.shared_memory.tensor_passes, 0);
    assert_eq!(busy.memory.shared_memory.tensor_passes, 100 * 4 * 5);
    // The warp accesses are the reader's 64 loads either way.
    assert_eq!(
        idle.memory.shared_memory.accesses,
        busy.memory.shared_memory.accesses
    );
    assert_eq!(busy.memory.shared_memory.accesses, 64);
    // Alone, each load of the chain takes the shared-memory latency and the loop's
    // instructions; beside the products some find the banks busy.
    assert!(quiet >= 64 * 16, "{quiet}");
    assert!(contended > quiet, "{contended} vs {quiet}");
    // Narrower banks (8 x 4 bytes = 32 bytes a pass): 18 passes per warp's product.
    let (narrow, slower) = run(100, &["shared_memory.banks=8"]);
    assert_eq!(narrow.memory.shared_memory.tensor_passes, 100 * 4 * 18);
    assert!(slower > contended, "{slower} vs {contended}");
    // Deterministic.
    let (again, c2) = run(100, &[]);
    assert_eq!((again.cycles, c2), (busy.cycles, contended));
}

#[test]
fn each_kernel_counts_its_own_passes() {
    // Two launches on one simulator: the second kernel's statistics hold its passes only.
    let (mut emu, k, _) = load(KERNEL, "k");
    let cfg = config("h100", &[]);
    let info = compiled_info(&emu, k, &cfg);
    let pout = alloc_u32(&mut emu, &[0]);
    let p = params(&emu, k, &[pout, 10]);
    let mut sim = TimingSimulator::new(cfg);
    for _ in 0..2 {
        let s = sim
            .simulate_kernel(&mut emu, k, LaunchConfig::linear(1, 160), &p, &info)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.memory.shared_memory.tensor_passes, 10 * 4 * 5);
    }
}

const FP8: &str = "\
.version 8.7
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out)
{
    .reg .b32 %r<16>;
    .reg .f32 %f<8>;
    .reg .b64 %rd<4>;
    mov.u32 %r0, 0x38383838;
    mov.f32 %f4, 0f00000000;
    mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%f0,%f1,%f2,%f3}, {%r0,%r0,%r0,%r0}, {%r0,%r0}, {%f4,%f4,%f4,%f4};
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 4;
    add.u64 %rd1, %rd1, %rd2;
    st.global.f32 [%rd1], %f0;
    ret;
}
";

#[test]
fn fp8_mma_needs_compute_capability_8_9() {
    let launch = |gpu: &str| {
        let (mut emu, k, _) = load(FP8, "k");
        let cfg = config(gpu, &[]);
        let info = compiled_info(&emu, k, &cfg);
        let pout = alloc_u32(&mut emu, &[0; 32]);
        let p = params(&emu, k, &[pout]);
        TimingSimulator::new(cfg)
            .simulate_kernel(&mut emu, k, LaunchConfig::linear(1, 32), &p, &info)
            .map(|_| read_u32(&emu, pout, 1)[0])
    };
    // h100 (9.0) runs it: 32 products of 1.0 (e4m3 0x38) x 1.0 = 32.
    assert_eq!(
        launch("h100").unwrap_or_else(|e| panic!("{e}")),
        32f32.to_bits()
    );
    // rtx-a6000 (8.6) refuses it, naming the instruction's line (11).
    let e = launch("rtx-a6000").unwrap_err();
    assert!(matches!(e, SimError::UnsupportedOnTarget { .. }), "{e}");
    assert!(
        e.to_string().contains(
            "it executes mma.sync with fp8 (.e4m3/.e5m2) inputs, which needs compute \
             capability 8.9 (sm_89); the simulated GPU has 8.6 (gpu.compute_capability); \
             first at line 11 of the PTX"
        ),
        "{e}"
    );
    // A GPU configured as 8.9 runs it.
    let (mut emu, k, _) = load(FP8, "k");
    let cfg = config("rtx-a6000", &["gpu.compute_capability=89"]);
    let info = compiled_info(&emu, k, &cfg);
    let pout = alloc_u32(&mut emu, &[0; 32]);
    let p = params(&emu, k, &[pout]);
    TimingSimulator::new(cfg)
        .simulate_kernel(&mut emu, k, LaunchConfig::linear(1, 32), &p, &info)
        .unwrap_or_else(|e| panic!("{e}"));
}

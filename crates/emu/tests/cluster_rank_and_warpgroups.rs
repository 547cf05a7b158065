//! `getctarank` (PTX ISA 7.8, sm_90: the cluster rank of the CTA owning a shared-memory
//! address) on `.shared::cluster` and generic addresses, own and `mapa`-ed, with the error
//! for an address outside shared memory; and the warpgroup rule of `wgmma.mma_async`
//! (all four warps of a warpgroup execute it; a CTA of whole warpgroups), whose breaches
//! are errors naming the kernel and the PTX line.

use emu::{Emulator, LaunchConfig};

const PTX: &str = r#".version 8.0
.target sm_90a
.address_size 64

// Thread t of CTA c writes 4 words at out[4 (64 c + t)]: getctarank of its own .shared
// address, of that address mapa-ed to rank + 1, of its generic address mapa-ed to
// rank + 3, and of the unmapped generic address (clusters of 4).
.visible .entry ranks(.param .u64 pout) .reqnctapercluster 4, 1, 1
{
  .reg .b32 %r<20>;
  .reg .b64 %rd<10>;
  .shared .align 4 .b32 s[64];
  ld.param.u64 %rd1, [pout];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %cluster_ctarank;
  shl.b32 %r4, %r2, 6;
  add.u32 %r4, %r4, %r1;
  mul.wide.u32 %rd2, %r4, 16;
  add.s64 %rd3, %rd1, %rd2;
  mov.u32 %r5, s;
  getctarank.shared::cluster.u32 %r6, %r5;
  add.u32 %r7, %r3, 1;
  and.b32 %r7, %r7, 3;
  mapa.shared::cluster.u32 %r8, %r5, %r7;
  getctarank.shared::cluster.u32 %r9, %r8;
  mov.u64 %rd4, s;
  cvta.shared.u64 %rd5, %rd4;
  add.u32 %r10, %r3, 3;
  and.b32 %r10, %r10, 3;
  mapa.u64 %rd6, %rd5, %r10;
  getctarank.u64 %r11, %rd6;
  getctarank.u64 %r12, %rd5;
  st.global.v4.u32 [%rd3], {%r6, %r9, %r11, %r12};
  ret;
}

.visible .entry not_shared(.param .u64 pout)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [pout];
  getctarank.u64 %r1, %rd1;
  ret;
}

// Every warp of the CTA executes one wgmma (A and B from descriptor 0 of zeroed shared
// memory), except, when %r2 (the parameter) is nonzero, the warps at or above warp 3.
.visible .entry wg(.param .u32 skip)
{
  .reg .pred %p<3>;
  .reg .b32 %r<4>;
  .reg .f32 %f<8>;
  .reg .b64 %rd<4>;
  .shared .align 1024 .b8 sm[4096];
  ld.param.u32 %r2, [skip];
  mov.u32 %r1, %tid.x;
  setp.ge.u32 %p1, %r1, 96;
  setp.ne.u32 %p2, %r2, 0;
  and.pred %p1, %p1, %p2;
  mov.u64 %rd1, 0;
  @%p1 bra done;
  wgmma.fence.sync.aligned;
  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f2, %f3, %f4, %f5}, %rd1, %rd1, 0, 1, 1, 0, 0;
  wgmma.commit_group.sync.aligned;
  wgmma.wait_group.sync.aligned 0;
done:
  ret;
}
"#;

fn line_of(needle: &str) -> u32 {
    PTX.lines()
        .position(|l| l.contains(needle))
        .expect("a line") as u32
        + 1
}

fn params(emu: &Emulator, k: emu::KernelRef, values: &[u64]) -> Vec<u8> {
    let ps = emu.kernel_params(k).expect("kernel");
    let size = ps.iter().map(|p| p.offset + p.size).max().unwrap_or(0) as usize;
    let mut buf = vec![0u8; size];
    for (p, v) in ps.iter().zip(values) {
        let o = p.offset as usize;
        buf[o..o + p.size as usize].copy_from_slice(&v.to_le_bytes()[..p.size as usize]);
    }
    buf
}

#[test]
fn getctarank_names_the_owner_of_own_and_mapped_addresses() {
    let mut emu = Emulator::new();
    let m = emu.load_ptx("r.ptx", PTX).unwrap_or_else(|e| panic!("{e}"));
    let k = emu.kernel(m, "ranks").unwrap();
    let ctas = 8u64;
    let out = emu
        .memory
        .alloc(16 * 64 * ctas, emu::AllocKind::Device)
        .unwrap();
    let p = params(&emu, k, &[out]);
    emu.run(k, LaunchConfig::linear(ctas as u32, 64), &p)
        .unwrap();
    for c in 0..ctas {
        let rank = c % 4;
        for t in 0..64 {
            let at = out + 16 * (64 * c + t);
            let got: Vec<u64> = (0..4)
                .map(|i| emu.memory.read_uint(at + 4 * i, 4).unwrap())
                .collect();
            assert_eq!(
                got,
                [rank, (rank + 1) % 4, (rank + 3) % 4, rank],
                "CTA {c} thread {t}"
            );
        }
    }
    // An address outside shared memory is an error at its line.
    let k = emu.kernel(m, "not_shared").unwrap();
    let p = params(&emu, k, &[out]);
    let e = emu.run(k, LaunchConfig::linear(1, 32), &p).unwrap_err();
    let text = e.to_string();
    assert!(text.contains("getctarank of the generic address"), "{text}");
    assert!(text.contains("not in shared memory"), "{text}");
    assert_eq!(
        e.location.line,
        line_of("getctarank.u64 %r1, %rd1"),
        "{text}"
    );
    // Without .shared::cluster the address must be 64-bit.
    let bad = PTX.replace("getctarank.u64 %r1, %rd1", "getctarank.u32 %r1, %r2");
    let e = Emulator::new()
        .load_ptx("b.ptx", &bad)
        .unwrap_err()
        .to_string();
    assert!(e.contains("generic 'getctarank' needs .u64"), "{e}");
}

#[test]
fn every_warp_of_a_warpgroup_executes_wgmma_or_it_is_an_error() {
    let mut emu = Emulator::new();
    let m = emu.load_ptx("w.ptx", PTX).unwrap_or_else(|e| panic!("{e}"));
    let k = emu.kernel(m, "wg").unwrap();
    let wgmma_line = line_of("wgmma.mma_async");
    // Two whole warpgroups, every warp executing it: fine.
    let p = params(&emu, k, &[0]);
    emu.run(k, LaunchConfig::linear(2, 256), &p).unwrap();
    // Warps 3 and 7 skip it: an error at the wgmma line naming the warps.
    let p = params(&emu, k, &[1]);
    let e = emu.run(k, LaunchConfig::linear(1, 128), &p).unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("of warpgroup 0 executed wgmma.mma_async 1 time and warp 3 0 times"),
        "{text}"
    );
    assert!(
        text.contains("in kernel 'wg'") || e.location.kernel == "wg",
        "{text}"
    );
    assert_eq!(e.location.line, wgmma_line, "{text}");
    // A CTA of 96 threads has no whole warpgroup.
    let p = params(&emu, k, &[0]);
    let e = emu.run(k, LaunchConfig::linear(1, 96), &p).unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("its warpgroup 0 has 96 of its 128 threads (a CTA of 96)"),
        "{text}"
    );
    assert_eq!(e.location.line, wgmma_line, "{text}");
}

//! Thread-block clusters of several CTAs (`data/modern/cluster4.sm90.ptx`): special
//! registers, distributed shared memory through `mapa` and `.shared::cluster` accesses
//! (loads, generic loads, atomics, reductions, a remote mbarrier arrive), the cluster
//! barrier across CTAs, and the errors a broken rule gives.

use emu::{Emulator, KernelRef, LaunchConfig, ModuleId};

fn modern_data(name: &str) -> String {
    let path = format!("{}/tests/data/modern/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

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

fn load(emu: &mut Emulator) -> ModuleId {
    emu.load_ptx("cluster4.ptx", &modern_data("cluster4.sm90.ptx"))
        .unwrap_or_else(|e| panic!("{e}"))
}

fn zeros(emu: &mut Emulator, words: usize) -> u64 {
    let a = emu
        .memory
        .alloc(4 * words as u64, emu::AllocKind::Device)
        .unwrap();
    emu.memory.memset(a, 0, 4 * words as u64).unwrap();
    a
}

fn read_u32s(emu: &Emulator, addr: u64, n: usize) -> Vec<u32> {
    (0..n)
        .map(|i| emu.memory.read_uint(addr + 4 * i as u64, 4).unwrap() as u32)
        .collect()
}

/// What thread `t` of CTA `c` of `dsm` (clusters of 4, 64 threads) writes.
pub fn dsm_expected(c: u32, t: u32) -> [u32; 12] {
    let (cluster, rank) = (c / 4, c % 4);
    let next = 4 * cluster + (rank + 1) % 4;
    let prev = 4 * cluster + (rank + 3) % 4;
    [
        cluster,
        2,
        rank,
        4,
        rank,
        4,
        1,
        1000 * next + t,
        1000 * prev + 63 - t,
        // 4 CTAs x 64 threads, each adding 1 and 2.
        4 * 64 * 3,
        if rank == 0 { 1 } else { 2 },
        7,
    ]
}

#[test]
fn clusters_of_four_share_memory_and_a_barrier() {
    let mut emu = Emulator::new();
    let m = load(&mut emu);
    let k = emu.kernel(m, "dsm").unwrap();
    let ctas = 8u32;
    let out = zeros(&mut emu, (ctas * 64 * 12) as usize);
    let p = params(&emu, k, &[out]);
    emu.run(k, LaunchConfig::linear(ctas, 64), &p).unwrap();
    let got = read_u32s(&emu, out, (ctas * 64 * 12) as usize);
    for c in 0..ctas {
        for t in 0..64 {
            let row = &got[12 * (64 * c + t) as usize..][..12];
            assert_eq!(row, dsm_expected(c, t), "CTA {c} thread {t}");
        }
    }
}

#[test]
fn a_launch_shape_makes_clusters_of_a_kernel_without_one() {
    let mut emu = Emulator::new();
    let m = load(&mut emu);
    let k = emu.kernel(m, "pair").unwrap();
    let out = zeros(&mut emu, 2 * 32 * 8);
    let p = params(&emu, k, &[out]);
    let cfg = LaunchConfig {
        grid: [2, 4, 1],
        block: [32, 1, 1],
        dynamic_shared: 0,
        cluster: Some([1, 2, 1]),
    };
    emu.run(k, cfg, &p).unwrap();
    let got = read_u32s(&emu, out, 2 * 32 * 8);
    for y in 0..4u32 {
        for x in 0..2u32 {
            for t in 0..32u32 {
                let i = 2 * (32 * (2 * y + x) + t) as usize;
                let partner = y ^ 1;
                assert_eq!(
                    &got[i..i + 2],
                    [y % 2, 100 * x + 10 * partner + t],
                    "CTA ({x}, {y}) thread {t}"
                );
            }
        }
    }
}

#[test]
fn broken_cluster_rules_stop_the_kernel_with_the_reason() {
    let mut emu = Emulator::new();
    let m = load(&mut emu);
    let out = zeros(&mut emu, 64);
    let run = |emu: &mut Emulator, name: &str, cfg: LaunchConfig| {
        let k = emu.kernel(m, name).unwrap();
        let p = params(emu, k, &[out]);
        emu.run(k, cfg, &p).unwrap_err().to_string()
    };
    let e = run(&mut emu, "far", LaunchConfig::linear(4, 32));
    assert!(
        e.contains("mapa to CTA rank 4, outside the cluster of 4 CTAs") && e.contains("far"),
        "{e}"
    );
    let e = run(&mut emu, "gone", LaunchConfig::linear(2, 32));
    assert!(
        e.contains("CTA rank 1 of the cluster, which has exited"),
        "{e}"
    );
    assert!(e.contains("ld.shared::cluster"), "{e}");
    let e = run(&mut emu, "nowait", LaunchConfig::linear(2, 32));
    assert!(
        e.contains("barrier.cluster.wait by threads that did not execute"),
        "{e}"
    );
    // Launch shapes: a grid that is not whole clusters, a shape that contradicts the
    // kernel's, and one above 16 CTAs.
    let e = run(&mut emu, "dsm", LaunchConfig::linear(6, 64));
    assert!(
        e.contains("is not a whole number of clusters of [4, 1, 1]"),
        "{e}"
    );
    let mut cfg = LaunchConfig::linear(8, 64);
    cfg.cluster = Some([2, 1, 1]);
    let e = run(&mut emu, "dsm", cfg);
    assert!(e.contains("declares .reqnctapercluster [4, 1, 1]"), "{e}");
    let mut cfg = LaunchConfig::linear(32, 32);
    cfg.cluster = Some([32, 1, 1]);
    let e = run(&mut emu, "pair", cfg);
    assert!(e.contains("is not from 1 to 16 CTAs"), "{e}");
}

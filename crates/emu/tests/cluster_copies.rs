//! Bulk copies that reach other CTAs of a cluster (`data/modern/cluster_copies.sm90.ptx`,
//! PTX ISA 8.0): a `.multicast::cluster` copy lands the same block at the same offset in
//! every CTA its ctaMask names and completes on each one's mbarrier, leaving the others
//! alone; a `.shared::cluster.shared::cta` copy moves a block into the next rank's shared
//! memory; broken operands stop the kernel with the reason.

use emu::{Emulator, KernelRef, LaunchConfig, ModuleId};

fn ptx() -> String {
    let path = format!(
        "{}/tests/data/modern/cluster_copies.sm90.ptx",
        env!("CARGO_MANIFEST_DIR")
    );
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
    emu.load_ptx("cluster_copies.ptx", &ptx())
        .unwrap_or_else(|e| panic!("{e}"))
}

fn alloc(emu: &mut Emulator, words: &[u32]) -> u64 {
    let a = emu
        .memory
        .alloc(4 * words.len() as u64, emu::AllocKind::Device)
        .unwrap();
    for (i, w) in words.iter().enumerate() {
        emu.memory
            .write_uint(a + 4 * i as u64, 4, u64::from(*w))
            .unwrap();
    }
    a
}

fn read_u32s(emu: &Emulator, addr: u64, n: usize) -> Vec<u32> {
    (0..n)
        .map(|i| emu.memory.read_uint(addr + 4 * i as u64, 4).unwrap() as u32)
        .collect()
}

/// The CPU reference of `mcast`: rank r's buffer holds `in` when the mask names r, else
/// the sentinel.
pub fn mcast_expected(input: &[u32], mask: u32) -> Vec<u32> {
    (0..4u32)
        .flat_map(|r| {
            (0..64u32).map(move |t| {
                if mask >> r & 1 == 1 {
                    input[t as usize]
                } else {
                    0xdead_0000 + t
                }
            })
        })
        .collect()
}

/// The CPU reference of `peer`: rank r receives rank (r + 3) % 4's 1000 (r + 3) % 4 + t.
pub fn peer_expected() -> Vec<u32> {
    (0..4u32)
        .flat_map(|r| (0..64u32).map(move |t| 1000 * ((r + 3) % 4) + t))
        .collect()
}

fn run(emu: &mut Emulator, name: &str, args: &[u64], block: u32) -> Result<(), String> {
    let m = load(emu);
    let k = emu.kernel(m, name).unwrap();
    let p = params(emu, k, args);
    emu.run(k, LaunchConfig::linear(4, block), &p)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[test]
fn a_multicast_copy_lands_in_every_cta_its_mask_names() {
    let input: Vec<u32> = (0..64).map(|i| 7 * i + 3).collect();
    for mask in [0b1111u32, 0b1011, 0b0100, 0b0001] {
        let mut emu = Emulator::new();
        let pin = alloc(&mut emu, &input);
        let pout = alloc(&mut emu, &[0; 512]);
        run(&mut emu, "mcast", &[pin, pout, u64::from(mask)], 64).unwrap();
        let got = read_u32s(&emu, pout, 256);
        assert_eq!(got, mcast_expected(&input, mask), "mask {mask:#b}");
    }
}

#[test]
fn a_copy_into_the_next_ranks_shared_memory_completes_on_its_mbarrier() {
    let mut emu = Emulator::new();
    let pout = alloc(&mut emu, &[0; 512]);
    run(&mut emu, "peer", &[pout, 256], 64).unwrap();
    assert_eq!(read_u32s(&emu, pout, 256), peer_expected());
}

/// The 16 x 8 u32 tensor at `base` (element i holds 5 i + 1), boxes of 8 x 4.
fn tensor_map(base: u64) -> [u8; 128] {
    emu::tensor_map::TensorMap::tiled(7, 2, base, &[16, 8], &[64], &[8, 4], &[1, 1], 0, 0, 0, 0)
        .unwrap()
        .encode()
}

/// The CPU reference of `tmcast`: the box at (4, 2) in every CTA the mask names.
pub fn tmcast_expected(mask: u32) -> Vec<u32> {
    (0..4u32)
        .flat_map(|r| {
            (0..32u32).map(move |t| {
                if mask >> r & 1 == 1 {
                    5 * ((2 + t / 8) * 16 + 4 + t % 8) + 1
                } else {
                    0xdead_0000 + t
                }
            })
        })
        .collect()
}

#[test]
fn a_multicast_tensor_copy_lands_the_box_in_every_named_cta() {
    for mask in [0b1111u32, 0b0110] {
        let mut emu = Emulator::new();
        let m = load(&mut emu);
        let k = emu.kernel(m, "tmcast").unwrap();
        let tensor: Vec<u32> = (0..128).map(|i| 5 * i + 1).collect();
        let src = alloc(&mut emu, &tensor);
        let out = alloc(&mut emu, &[0; 128]);
        let ps = emu.kernel_params(k).unwrap().to_vec();
        let mut p = vec![0u8; ps.iter().map(|p| p.offset + p.size).max().unwrap() as usize];
        for (param, bytes) in ps.iter().zip([
            &tensor_map(src)[..],
            &out.to_le_bytes()[..],
            &mask.to_le_bytes()[..],
        ]) {
            p[param.offset as usize..][..bytes.len()].copy_from_slice(bytes);
        }
        emu.run(k, LaunchConfig::linear(4, 32), &p)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            read_u32s(&emu, out, 128),
            tmcast_expected(mask),
            "{mask:#b}"
        );
    }
}

#[test]
fn bad_operands_stop_the_kernel_with_the_reason() {
    let input = vec![0u32; 64];
    let mcast = |mask: u64| {
        let mut emu = Emulator::new();
        let pin = alloc(&mut emu, &input);
        let pout = alloc(&mut emu, &[0; 512]);
        run(&mut emu, "mcast", &[pin, pout, mask], 64).unwrap_err()
    };
    let e = mcast(0b1_0011);
    assert!(
        e.contains("ctaMask 0x0013 names CTA rank 4, outside the cluster of 4 CTAs")
            && e.contains("mcast"),
        "{e}"
    );
    let e = mcast(0);
    assert!(e.contains("names no CTA"), "{e}");
    let mut emu = Emulator::new();
    let pout = alloc(&mut emu, &[0; 512]);
    let e = run(&mut emu, "peer", &[pout, 24], 64).unwrap_err();
    assert!(
        e.contains("size 24 is not a positive multiple of 16"),
        "{e}"
    );
    let e = run(&mut emu, "peer", &[pout, 4096], 64).unwrap_err();
    assert!(e.contains("shared"), "{e}");
    let mut emu = Emulator::new();
    let m = load(&mut emu);
    let k = emu.kernel(m, "peer_wrong_barrier").unwrap();
    let e = emu
        .run(k, LaunchConfig::linear(2, 32), &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("must be in the same CTA"), "{e}");
}

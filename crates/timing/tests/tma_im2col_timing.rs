//! im2col tensor copies (`crates/emu/tests/data/modern/tma_im2col.sm90.ptx`) in timing
//! mode: the column loaded through an im2col map lands when the memory system delivers it
//! (the tiled copies' path) with the emulator's values, under every register-file design
//! and on the modern core, with deterministic statistics.

mod common;

use common::*;
use emu::LaunchConfig;
use timing::{GpuConfig, KernelStats, TimingSimulator};

/// NHWC: 16 u16 channels, 6 x 5 pixels, 2 images; element i holds i + 1.
const C: i64 = 16;
const W: i64 = 6;
const H: i64 = 5;

fn map(base: u64) -> [u8; 128] {
    emu::tensor_map::TensorMap::im2col(
        1,
        4,
        base,
        &[16, 6, 5, 2],
        &[32, 192, 960],
        &[-1, -1],
        &[-1, -1],
        8,
        32,
        &[1, 1, 1, 1],
        0,
        0,
        0,
        0,
    )
    .unwrap()
    .encode()
}

/// Output pixels 4..36 of a 3x3 convolution with one pixel of padding, filter tap (1, 2),
/// channels 8..16: the base of pixel 4 is (3, -1), the offsets (2, 1).
fn want() -> Vec<u32> {
    let mut v = Vec::new();
    for q in 4..36i64 {
        let (img, rest) = (q / (W * H), q % (W * H));
        let (iy, ix) = (rest / W - 1 + 1, rest % W - 1 + 2);
        for ch in 8..16 {
            let inside = (0..H).contains(&iy) && (0..W).contains(&ix);
            v.push(if inside {
                (((img * H + iy) * W + ix) * C + ch + 1) as u16
            } else {
                0
            });
        }
    }
    v.chunks(2)
        .map(|p| u32::from(p[0]) | u32::from(p[1]) << 16)
        .collect()
}

fn run(cfg: GpuConfig) -> (KernelStats, Vec<u32>) {
    let (mut emu, k, _) = load(&modern_ptx("tma_im2col.sm90.ptx"), "im2col");
    let info = compiled_info(&emu, k, &cfg);
    let tensor: Vec<u32> = (0..(16 * 6 * 5 * 2) / 2)
        .map(|i| (2 * i + 1) | (2 * i + 2) << 16)
        .collect();
    let src = alloc_u32(&mut emu, &tensor);
    let out = alloc_u32(&mut emu, &[0xABAB_ABAB; 128]);
    let ps = emu.kernel_params(k).unwrap().to_vec();
    let size = ps.iter().map(|p| p.offset + p.size).max().unwrap() as usize;
    let mut p = vec![0u8; size];
    let values: [&[u8]; 8] = [
        &map(src),
        &out.to_le_bytes(),
        &8i32.to_le_bytes(),
        &3i32.to_le_bytes(),
        &(-1i32).to_le_bytes(),
        &0i32.to_le_bytes(),
        &2u16.to_le_bytes(),
        &1u16.to_le_bytes(),
    ];
    for (param, bytes) in ps.iter().zip(values) {
        p[param.offset as usize..][..bytes.len()].copy_from_slice(bytes);
    }
    let mut sim = TimingSimulator::new(cfg);
    let s = sim
        .simulate_kernel(&mut emu, k, LaunchConfig::linear(1, 32), &p, &info)
        .unwrap_or_else(|e| panic!("{e}"));
    (s, read_u32(&emu, out, 128))
}

#[test]
fn an_im2col_column_lands_with_its_values_under_every_design() {
    let want = want();
    for design in DESIGNS {
        let cfg = config("gtx480", &[&format!("register_file.design=\"{design}\"")]);
        let (_, got) = run(cfg);
        assert_eq!(got, want, "{design}");
    }
    let (a, got) = run(config("h100", &[]));
    let (b, _) = run(config("h100", &[]));
    assert_eq!(got, want, "h100");
    assert_eq!(
        (a.cycles, a.warp_instructions),
        (b.cycles, b.warp_instructions)
    );
}

//! im2col tensor copies (`cp.async.bulk.tensor.4d.shared::cluster.global.im2col`, PTX
//! ISA 8.0 §5.5.4): a kernel loads a column of pixels through an im2col tensor map in a
//! kernel parameter and writes it out; the bytes are checked against a CPU im2col of the
//! convolution the map serves (3x3 filter, one pixel of padding), for several output
//! pixels, filter taps and channel offsets; and the located errors of broken copies.

use emu::tensor_map::TensorMap;
use emu::{Emulator, LaunchConfig};

const KERNEL: &str = include_str!("data/modern/tma_im2col.sm90.ptx");

/// The NHWC tensor: 16 channels of u16, 6 x 5 pixels, 2 images; element i holds i + 1.
const C: i64 = 16;
const W: i64 = 6;
const H: i64 = 5;
const N: i64 = 2;

fn map(base: u64, lower: i32, upper: i32) -> [u8; 128] {
    TensorMap::im2col(
        1,
        4,
        base,
        &[C as u64, W as u64, H as u64, N as u64],
        &[2 * C as u64, 2 * (C * W) as u64, 2 * (C * W * H) as u64],
        &[lower, lower],
        &[upper, upper],
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

/// A CPU im2col: 32 output pixels of a 3x3 convolution with one pixel of padding from
/// output pixel `first` (row-major over n, y, x), filter tap (r, s), channels c0..c0+8.
fn cpu(first: i64, (r, s): (i64, i64), c0: i64) -> Vec<u16> {
    let (ow, oh) = (W, H);
    let mut out = Vec::new();
    for q in first..first + 32 {
        let (img, rest) = (q / (ow * oh), q % (ow * oh));
        let (iy, ix) = (rest / ow - 1 + r, rest % ow - 1 + s);
        for ch in c0..c0 + 8 {
            let inside = img < N && (0..H).contains(&iy) && (0..W).contains(&ix) && ch < C;
            out.push(if inside {
                (((img * H + iy) * W + ix) * C + ch + 1) as u16
            } else {
                0
            });
        }
    }
    out
}

struct Run {
    emu: Emulator,
    kernel: emu::KernelRef,
    src: u64,
    out: u64,
}

fn setup() -> Run {
    let mut emu = Emulator::new();
    let module = emu.load_ptx("im2col.ptx", KERNEL).unwrap();
    let kernel = emu.kernel(module, "im2col").unwrap();
    let tensor: Vec<u8> = (0..C * W * H * N)
        .flat_map(|i| ((i + 1) as u16).to_le_bytes())
        .collect();
    let src = emu
        .memory
        .alloc(tensor.len() as u64, emu::AllocKind::Device)
        .unwrap();
    emu.memory.write(src, &tensor).unwrap();
    let out = emu.memory.alloc(512, emu::AllocKind::Device).unwrap();
    Run {
        emu,
        kernel,
        src,
        out,
    }
}

impl Run {
    fn copy(
        &mut self,
        map: &[u8; 128],
        coords: [i32; 4],
        offsets: [u16; 2],
    ) -> Result<Vec<u16>, String> {
        let ps = self.emu.kernel_params(self.kernel).expect("kernel");
        let size = ps.iter().map(|p| p.offset + p.size).max().unwrap_or(0) as usize;
        let mut buf = vec![0u8; size];
        let mut values: Vec<Vec<u8>> = vec![map.to_vec(), self.out.to_le_bytes().to_vec()];
        values.extend(coords.iter().map(|c| c.to_le_bytes().to_vec()));
        values.extend(offsets.iter().map(|o| o.to_le_bytes().to_vec()));
        for (p, v) in ps.iter().zip(&values) {
            let o = p.offset as usize;
            assert_eq!(p.size as usize, v.len());
            buf[o..o + v.len()].copy_from_slice(v);
        }
        self.emu.memory.write(self.out, &[0xAB; 512]).unwrap();
        self.emu
            .run(self.kernel, LaunchConfig::linear(1, 32), &buf)
            .map_err(|e| e.to_string())?;
        Ok((0..256)
            .map(|i| self.emu.memory.read_uint(self.out + 2 * i, 2).unwrap() as u16)
            .collect())
    }
}

#[test]
fn im2col_copies_match_a_cpu_im2col() {
    let mut run = setup();
    let m = map(run.src, -1, -1);
    for first in [0i64, 4, 27] {
        // The filter base of output pixel `first`, in the tensor's coordinates.
        let (img, rest) = (first / (W * H), first % (W * H));
        let (bx, by) = (rest % W - 1, rest / W - 1);
        for (r, s) in [(0, 0), (1, 1), (2, 0), (0, 2), (2, 2)] {
            for c0 in [0i64, 8] {
                let got = run
                    .copy(
                        &m,
                        [c0 as i32, bx as i32, by as i32, img as i32],
                        [s as u16, r as u16],
                    )
                    .unwrap();
                assert_eq!(
                    got,
                    cpu(first, (r, s), c0),
                    "first {first} tap {r},{s} c0 {c0}"
                );
            }
        }
    }
}

#[test]
fn broken_copies_are_located_errors() {
    let mut run = setup();
    let m = map(run.src, -1, -1);
    // A filter base left of the bounding box (W from -1).
    let e = run.copy(&m, [0, -2, 0, 0], [0, 0]).unwrap_err();
    assert!(e.contains("outside the bounding box -1..=4"), "{e}");
    assert!(e.contains("im2col.ptx:"), "{e}");
    // An offset past the 4-D range.
    let e = run.copy(&m, [0, 0, 0, 0], [300, 0]).unwrap_err();
    assert!(e.contains("im2col offset 300 is above 255"), "{e}");
    // A tiled map given to an im2col copy.
    let tiled = TensorMap::tiled(
        1,
        4,
        run.src,
        &[C as u64, W as u64, H as u64, N as u64],
        &[32, 192, 960],
        &[8, 4, 1, 1],
        &[1, 1, 1, 1],
        0,
        0,
        0,
        0,
    )
    .unwrap()
    .encode();
    let e = run.copy(&tiled, [0, 0, 0, 0], [0, 0]).unwrap_err();
    assert!(e.contains("is tiled, the copy .im2col"), "{e}");
}

fn decode(body: &str) -> Result<(), String> {
    let text = format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .align 64 .b8 map[128])\n{{\n\
         .reg .b32 %r<8>;\n.reg .b16 %rs<4>;\n.shared .align 128 .b8 col[512];\n.shared .align 8 .b64 bar;\n{body}\nret;\n}}\n"
    );
    Emulator::new()
        .load_ptx("d.ptx", &text)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[test]
fn the_decoder_takes_im2col_forms_and_refuses_the_others_at_their_line() {
    decode(
        "cp.async.bulk.tensor.3d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes \
         [col], [map, {%r0, %r1, %r2}], [bar], {%rs0};",
    )
    .unwrap();
    decode(
        "cp.async.bulk.tensor.5d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes \
         [col], [map, {%r0, %r1, %r2, %r3, %r4}], [bar], {%rs0, 1, 2};",
    )
    .unwrap();
    for (body, want) in [
        (
            "cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes \
             [col], [map, {%r0, %r1, %r2, %r3}], [bar], {%rs0};",
            "needs 2 im2col offsets, found 1",
        ),
        (
            "cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes \
             [col], [map, {%r0, %r1, %r2, %r3}], [bar];",
            "expects",
        ),
        (
            "cp.async.bulk.tensor.2d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes \
             [col], [map, {%r0, %r1}], [bar];",
            "copies a 3- to 5-D tensor from global to shared memory",
        ),
        (
            "cp.async.bulk.tensor.3d.global.shared::cta.im2col.bulk_group [map, {%r0, %r1, %r2}], [col];",
            "copies a 3- to 5-D tensor from global to shared memory",
        ),
        (
            "cp.async.bulk.tensor.3d.shared::cluster.global.im2col::w.mbarrier::complete_tx::bytes \
             [col], [map, {%r0, %r1, %r2}], [bar], {%rs0, %rs1};",
            "im2col::w mode",
        ),
    ] {
        let e = decode(body).expect_err(body);
        assert!(e.contains(want), "{body}: {e}");
        assert!(e.contains("d.ptx:10:"), "{body}: {e}");
    }
}

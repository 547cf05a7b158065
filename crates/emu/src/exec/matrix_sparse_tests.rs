//! Known answers for `mma.sp`: every shape and type, every selector, both metadata forms,
//! against a CPU product whose fragments and metadata are written case by case from the
//! ISA's sparse tables (not from `coords`).

use super::*;
use crate::semantics::exact::Rounding;
use crate::semantics::half::{self, HalfKind};
use ir::op::{sparse_meta_threads, MatrixLayout, MmaShape, MmaSparse};
use ScalarType::*;

fn op(shape: MmaShape, d: ScalarType, ab: ScalarType, ordered: bool, selector: u8) -> MmaOp {
    MmaOp {
        wmma: false,
        shape,
        a_layout: MatrixLayout::Row,
        b_layout: MatrixLayout::Col,
        d_ty: d,
        ab_ty: ab,
        b_ty: ab,
        c_ty: d,
        satfinite: false,
        bit_op: None,
        rnd: None,
        sparse: Some(MmaSparse { ordered, selector }),
    }
}

/// (shape, input type, accumulator type): every form the decoder takes.
const FORMS: [(MmaShape, ScalarType, ScalarType); 15] = [
    (MmaShape::M16n8k16, F16, F32),
    (MmaShape::M16n8k16, F16, F16),
    (MmaShape::M16n8k32, F16, F32),
    (MmaShape::M16n8k32, F16, F16),
    (MmaShape::M16n8k16, Bf16, F32),
    (MmaShape::M16n8k32, Bf16, F32),
    (MmaShape::M16n8k8, Tf32, F32),
    (MmaShape::M16n8k16, Tf32, F32),
    (MmaShape::M16n8k32, S8, S32),
    (MmaShape::M16n8k64, U8, S32),
    (MmaShape::M16n8k64, S4, S32),
    (MmaShape::M16n8k128, U4, S32),
    (MmaShape::M16n8k64, E4m3, F32),
    (MmaShape::M16n8k64, E5m2, F32),
    (MmaShape::M16n8k64, S8, S32),
];

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn bits_of(ty: ScalarType) -> u32 {
    match ty {
        F16 | Bf16 => 16,
        Tf32 | F32 | S32 => 32,
        S4 | U4 => 4,
        _ => 8,
    }
}

/// A random input element's raw bits and value (exact in every type; tf32 keeps random
/// low bits, which the tensor core ignores).
fn random_input(rng: &mut Rng, ty: ScalarType) -> (u64, f64) {
    let small = rng.below(17) as f64 - 8.0;
    match ty {
        F16 | Bf16 => {
            let kind = if ty == F16 {
                HalfKind::F16
            } else {
                HalfKind::Bf16
            };
            let x = small * 0.5;
            let b = half::from_f32(x as f32, kind, Rounding::NearestEven);
            (u64::from(b), x)
        }
        Tf32 => {
            let x = (small * 0.25) as f32;
            let b = x.to_bits() | (rng.next() as u32 & 0x1FFF);
            (u64::from(b), f64::from(x))
        }
        S8 => {
            let v = rng.below(256) as i64 - 128;
            (v as u8 as u64, v as f64)
        }
        U8 => {
            let v = rng.below(256);
            (v, v as f64)
        }
        S4 => {
            let v = rng.below(16) as i64 - 8;
            ((v as u64) & 0xF, v as f64)
        }
        U4 => {
            let v = rng.below(16);
            (v, v as f64)
        }
        // (bits, value) from the OCP FP8 formats' definitions.
        E4m3 => [
            (0x38, 1.0),
            (0x40, 2.0),
            (0x30, 0.5),
            (0xB8, -1.0),
            (0x44, 3.0),
        ][rng.below(5) as usize],
        E5m2 => [
            (0x3C, 1.0),
            (0x40, 2.0),
            (0x38, 0.5),
            (0xBC, -1.0),
            (0x42, 3.0),
        ][rng.below(5) as usize],
        _ => unreachable!(),
    }
}

/// The ISA's sparse A layouts ("Matrix Fragments for sparse mma.m16n8kK ..."): row of
/// stored element `i` of lane (g, t), and its column among the row's K/2 stored ones.
fn isa_a(shape: MmaShape, ty: ScalarType, g: u32, t: u32, i: u32) -> (u32, u32) {
    let k = shape.dims().2;
    match (ty, k) {
        // f16/bf16 m16n8k16: a0,a1 row g, a2,a3 row g+8; chunk t.
        (F16 | Bf16, 16) => (g + 8 * (i / 2), 2 * t + i % 2),
        // m16n8k32: a0,a1,a4,a5 row g; firstcol 4t (i < 4), 4t + 16.
        (F16 | Bf16, 32) => (g + 8 * ((i / 2) % 2), 2 * t + i % 2 + 8 * (i / 4)),
        // tf32 m16n8k8: a0 row g, a1 row g+8; chunk t.
        (Tf32, 8) => (g + 8 * i, t),
        // tf32 m16n8k16: a0,a2 row g, a1,a3 g+8; firstcol 2t (a0,a1), 2t + 8.
        (Tf32, 16) => (g + 8 * (i % 2), t + 4 * (i / 2)),
        // 8-bit m16n8k32: a0..a3 row g, a4..a7 g+8; firstcol 8t.
        (S8 | U8, 32) => (g + 8 * (i / 4), 4 * t + i % 4),
        // 8-bit m16n8k64: row g for i < 4 or 8 <= i < 12; firstcol 8t (i < 8), 8t + 32.
        (S8 | U8 | E4m3 | E5m2, 64) => (g + 8 * ((i / 4) % 2), 4 * t + i % 4 + 16 * (i / 8)),
        // 4-bit m16n8k64: a0..a7 row g, a8..a15 g+8; firstcol 16t.
        (S4 | U4, 64) => (g + 8 * (i / 8), 8 * t + i % 8),
        // 4-bit m16n8k128: row g for i < 8 or 16 <= i < 24; firstcol 16t (i < 16), +64.
        (S4 | U4, 128) => (g + 8 * ((i / 8) % 2), 8 * t + i % 8 + 32 * (i / 16)),
        _ => unreachable!("{shape:?} {ty:?}"),
    }
}

/// B's row (k) of element `i` of lane (g, t); its column is g (the dense tables and the
/// sparse ones' B figures).
fn isa_b(shape: MmaShape, ty: ScalarType, t: u32, i: u32) -> u32 {
    match ty {
        F16 | Bf16 => 2 * t + i % 2 + 8 * (i / 2),
        Tf32 => t + 4 * i,
        S8 | U8 | E4m3 | E5m2 => 4 * t + i % 4 + 16 * (i / 4),
        S4 | U4 => 8 * t + i % 8 + 32 * (i / 8),
        _ => unreachable!("{shape:?}"),
    }
}

/// Packs element `i` (raw bits of `ty`) into registers.
fn put(regs: &mut [u64; 8], ty: ScalarType, i: u32, v: u64) {
    let bits = bits_of(ty);
    let per = 32 / bits;
    let shift = bits * (i % per);
    let mask = if bits == 32 {
        0xFFFF_FFFF
    } else {
        (1u64 << bits) - 1
    };
    regs[(i / per) as usize] |= (v & mask) << shift;
}

/// One random sparse problem checked against the CPU product. Unselected lanes' metadata
/// registers hold invalid nibbles, which must be ignored.
fn check(shape: MmaShape, ty: ScalarType, acc: ScalarType, ordered: bool, sel: u8, seed: u64) {
    let (m, n, k) = shape.dims();
    let (m, n, k) = (m as usize, n as usize, k as usize);
    let o = op(shape, acc, ty, ordered, sel);
    let mut rng = Rng(seed);
    let width = match ty {
        Tf32 => 2,
        S4 | U4 => 8,
        _ => 4,
    };
    let chunks = k / width;
    // Dense A with its pattern: per row and chunk, the chosen nibble.
    let mut nib = vec![vec![0u32; chunks]; m];
    let mut dense = vec![vec![0f64; k]; m];
    // stored[r] = the row's K/2 stored elements (bits, value), in order.
    let mut stored = vec![Vec::new(); m];
    for r in 0..m {
        for q in 0..chunks {
            let v = if ty == Tf32 {
                [0b0100, 0b1110][rng.below(2) as usize]
            } else {
                loop {
                    let (i0, i1) = (rng.below(4) as u32, rng.below(4) as u32);
                    let fp8 = matches!(ty, E4m3 | E5m2);
                    if i0 != i1 && (i0 < i1 || !(ordered || fp8)) {
                        break i0 | i1 << 2;
                    }
                }
            };
            nib[r][q] = v;
            if ty == Tf32 {
                let (bits, x) = random_input(&mut rng, ty);
                dense[r][width * q + usize::from(v == 0b1110)] = x;
                stored[r].push(bits);
            } else {
                let unit = width / 4;
                for slot in 0..2 {
                    let idx = ((v >> (2 * slot)) & 3) as usize;
                    for sub in 0..unit {
                        let (bits, x) = random_input(&mut rng, ty);
                        dense[r][width * q + idx * unit + sub] = x;
                        stored[r].push(bits);
                    }
                }
            }
        }
    }
    let mut bm = vec![vec![0f64; n]; k];
    let mut b_bits = vec![vec![0u64; n]; k];
    for kk in 0..k {
        for j in 0..n {
            let (bits, x) = random_input(&mut rng, ty);
            bm[kk][j] = x;
            b_bits[kk][j] = bits;
        }
    }
    let mut cm = vec![vec![0f64; n]; m];
    let mut c_bits = vec![vec![0u64; n]; m];
    for i in 0..m {
        for j in 0..n {
            let v = rng.below(64) as i64 - 32;
            cm[i][j] = v as f64;
            c_bits[i][j] = match acc {
                F32 => u64::from((v as f32).to_bits()),
                F16 => u64::from(half::from_f32(
                    v as f32,
                    HalfKind::F16,
                    Rounding::NearestEven,
                )),
                _ => u64::from(v as i32 as u32),
            };
        }
    }
    // Fragments from the ISA's tables.
    let (mut a, mut b, mut c) = ([[0u64; 8]; 32], [[0u64; 8]; 32], [[0u64; 8]; 32]);
    let a_elems = (m * k / 2 / 32) as u32;
    let b_elems = (k * n / 32) as u32;
    for lane in 0..32u32 {
        let (g, t) = (lane / 4, lane % 4);
        for i in 0..a_elems {
            let (r, col) = isa_a(shape, ty, g, t, i);
            put(
                &mut a[lane as usize],
                ty,
                i,
                stored[r as usize][col as usize],
            );
        }
        for i in 0..b_elems {
            let kk = isa_b(shape, ty, t, i) as usize;
            put(&mut b[lane as usize], ty, i, b_bits[kk][g as usize]);
        }
        for i in 0..4u32 {
            let (r, col) = ((g + 8 * (i / 2)) as usize, (2 * t + i % 2) as usize);
            put(&mut c[lane as usize], acc, i, c_bits[r][col]);
        }
    }
    // Metadata: lane 4g + sel*threads + j holds chunks 4j..4j+3 of rows g (bits 0-15)
    // and g+8 (bits 16-31).
    let threads = chunks / 4;
    let mut meta = [0xFFFF_FFFFu32; 32];
    for g in 0..8usize {
        for j in 0..threads {
            let mut v = 0u32;
            for half_ in 0..2 {
                for i in 0..4 {
                    v |= nib[g + 8 * half_][4 * j + i] << (16 * half_ + 4 * i);
                }
            }
            meta[4 * g + usize::from(sel) * threads + j] = v;
        }
    }
    let d = multiply(&o, &a, &b, &c, &meta).unwrap_or_else(|e| panic!("{shape:?} {ty:?}: {e:?}"));
    for lane in 0..32u32 {
        let (g, t) = (lane / 4, lane % 4);
        for i in 0..4u32 {
            let (r, col) = ((g + 8 * (i / 2)) as usize, (2 * t + i % 2) as usize);
            let want: u64 = match acc {
                S32 => {
                    let s = (0..k).fold(cm[r][col] as i64, |s, kk| {
                        s + dense[r][kk] as i64 * bm[kk][col] as i64
                    });
                    u64::from(s as i32 as u32)
                }
                _ => {
                    let f = (0..k).fold(cm[r][col] as f32, |s, kk| {
                        (dense[r][kk] as f32).mul_add(bm[kk][col] as f32, s)
                    });
                    if acc == F16 {
                        u64::from(half::from_f32(f, HalfKind::F16, Rounding::NearestEven))
                    } else {
                        u64::from(f.to_bits())
                    }
                }
            };
            let per = if acc == F16 { 2 } else { 1 };
            let bits = if acc == F16 { 16 } else { 32 };
            let got = (d[lane as usize][(i / per) as usize] >> (bits * (i % per)))
                & if bits == 16 { 0xFFFF } else { 0xFFFF_FFFF };
            assert_eq!(
                got, want,
                "{shape:?} {ty:?} {acc:?} ordered {ordered} sel {sel}: D[{r}][{col}] (lane {lane})"
            );
        }
    }
}

#[test]
fn every_form_selector_and_metadata_kind_matches_the_cpu_product() {
    for (shape, ty, acc) in FORMS {
        let threads = sparse_meta_threads(shape, ty);
        for sel in 0..(4 / threads) as u8 {
            for ordered in [false, true] {
                for seed in 1..4u64 {
                    check(shape, ty, acc, ordered, sel, seed * 7919 + u64::from(sel));
                }
            }
        }
    }
}

#[test]
fn one_element_placed_by_hand() {
    // f16 m16n8k16, selector 2: row 9, chunk 3 stores 2.0 as its second element at
    // index 2 (dense column 14). Row 9 is g = 1 + 8: lane 4 + t with t = 3 (lane 7)
    // holds it as a3 (the high half of its register 1). Metadata: lane 4*1 + 2 = 6,
    // bits 28-31 (row g+8, nibble 3) = 0b1000; every other nibble 0b0100.
    let o = op(MmaShape::M16n8k16, F32, F16, false, 2);
    let mut a = [[0u64; 8]; 32];
    a[7][1] = u64::from(half::from_f32(2.0, HalfKind::F16, Rounding::NearestEven)) << 16;
    let mut meta = [0u32; 32]; // lanes that do not hold metadata: invalid, ignored
    for g in 0..8 {
        meta[4 * g + 2] = 0x4444_4444;
    }
    meta[6] = 0x8444_4444;
    // B[k][n] = k + 10n (B's m16n8k16 layout: row 2t + i%2 + 8(i/2), column g).
    let mut b = [[0u64; 8]; 32];
    for lane in 0..32u32 {
        let (g, t) = (lane / 4, lane % 4);
        for i in 0..4 {
            let v = (2 * t + i % 2 + 8 * (i / 2) + 10 * g) as f32;
            put(
                &mut b[lane as usize],
                F16,
                i,
                u64::from(half::from_f32(v, HalfKind::F16, Rounding::NearestEven)),
            );
        }
    }
    let d = multiply(&o, &a, &b, &[[0u64; 8]; 32], &meta).unwrap();
    for (lane, regs) in d.iter().enumerate() {
        let (g, t) = (lane / 4, lane % 4);
        for (i, reg) in regs.iter().enumerate().take(4) {
            let (r, col) = (g + 8 * (i / 2), 2 * t + i % 2);
            let want = if r == 9 {
                2.0 * (14 + 10 * col) as f32
            } else {
                0.0
            };
            assert_eq!(f32::from_bits(*reg as u32), want, "D[{r}][{col}]");
        }
    }
}

#[test]
fn undefined_metadata_is_a_located_error_and_unordered_indices_may_decrease() {
    let a = [[0x3C00_3C00u64; 8]; 32]; // every stored f16 element 1.0
    let b = [[0x3C00_3C00u64; 8]; 32];
    let c = [[0u64; 8]; 32];
    // Equal indices (0b0101) in lane 4's row-1 chunk 2 (selector 0): undefined.
    let mut meta = [0x4444_4444u32; 32];
    meta[4] = 0x4444_4544;
    let (lane, msg) = multiply(
        &op(MmaShape::M16n8k16, F32, F16, false, 0),
        &a,
        &b,
        &c,
        &meta,
    )
    .unwrap_err();
    assert_eq!(lane, 4);
    assert!(
        msg.contains("row 1, chunk 2") && msg.contains("0b0101"),
        "{msg}"
    );
    // 0b0001 (indices 1 then 0): meaningful for mma.sp, undefined for ::ordered_metadata.
    meta[4] = 0x4444_4144;
    assert!(multiply(
        &op(MmaShape::M16n8k16, F32, F16, false, 0),
        &a,
        &b,
        &c,
        &meta
    )
    .is_ok());
    let (_, msg) = multiply(
        &op(MmaShape::M16n8k16, F32, F16, true, 0),
        &a,
        &b,
        &c,
        &meta,
    )
    .unwrap_err();
    assert!(msg.contains("::ordered_metadata"), "{msg}");
    // tf32: only 0b0100 and 0b1110.
    let mut meta = [0x4444_4444u32; 32];
    meta[1] = 0x4444_8444; // selector 1 of m16n8k8: lane 4g + 1
    let (lane, _) = multiply(
        &op(MmaShape::M16n8k8, F32, Tf32, false, 1),
        &a,
        &b,
        &c,
        &meta,
    )
    .unwrap_err();
    assert_eq!(lane, 1);
}

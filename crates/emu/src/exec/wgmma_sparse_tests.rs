//! `wgmma.mma_async.sp`: every warp's 16 rows against a CPU product of the dense A, for
//! f16 (k32), bf16 (k32), tf32 (k16), e4m3 and s8 (k64), both selectors where the ISA has
//! two, A from registers (the dense wgmma A fragment of K/2, from the ISA's tables) and
//! from a descriptor (the canonical K-major layout of K/2), B from a descriptor; the
//! metadata of the lanes the selector does not pick is invalid and ignored.

#![allow(clippy::needless_range_loop)] // index arithmetic mirrors the ISA's tables

use super::*;
use ir::op::WgmmaOp;

struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) % n
    }
}

fn op(n: u16, k: u16, d: ScalarType, a: ScalarType, a_regs: bool, sel: u8) -> WgmmaOp {
    WgmmaOp {
        n,
        k,
        d_ty: d,
        a_ty: a,
        b_ty: a,
        a_regs,
        neg_a: false,
        neg_b: false,
        trans_a: false,
        trans_b: false,
        satfinite: false,
        sparse: Some(sel),
    }
}

/// (bits, value) of a random element.
fn input(rng: &mut Rng, ty: ScalarType) -> (u64, f64) {
    let s = rng.below(15) as i64 - 7;
    match ty {
        ScalarType::F16 => {
            let x = s as f32 * 0.5;
            let b = half::from_f32(
                x,
                HalfKind::F16,
                crate::semantics::exact::Rounding::NearestEven,
            );
            (u64::from(b), f64::from(x))
        }
        ScalarType::Bf16 => {
            let x = s as f32 * 0.5;
            (u64::from(x.to_bits() >> 16), f64::from(x))
        }
        ScalarType::Tf32 => {
            let x = s as f32 * 0.25;
            (
                u64::from(x.to_bits() | rng.below(0x2000) as u32),
                f64::from(x),
            )
        }
        ScalarType::S8 => ((s * 17) as u8 as u64, (s * 17) as f64),
        // OCP FP8 E4M3: 1.0, 2.0, 0.5, -1.0, 3.0.
        _ => [
            (0x38, 1.0),
            (0x40, 2.0),
            (0x30, 0.5),
            (0xB8, -1.0),
            (0x44, 3.0),
        ][rng.below(5) as usize],
    }
}

/// Dense A fragment of K/2 (the ISA's wgmma A register layouts, as mma's): row and
/// column of element `e` of lane (g, t).
fn a_frag(ty: ScalarType, g: u32, t: u32, e: u32) -> (u32, u32) {
    match ty {
        ScalarType::F16 | ScalarType::Bf16 => (g + 8 * ((e / 2) % 2), 2 * t + e % 2 + 8 * (e / 4)),
        ScalarType::Tf32 => (g + 8 * (e % 2), t + 4 * (e / 2)),
        _ => (g + 8 * ((e / 4) % 2), 4 * t + e % 4 + 16 * (e / 8)),
    }
}

fn check(ty: ScalarType, k: u16, n: u16, a_regs: bool, sel: u8, seed: u64) {
    let mut rng = Rng(seed);
    let es = element_bytes(ty);
    let (kk, nn) = (usize::from(k), usize::from(n));
    let width = match ty {
        ScalarType::Tf32 => 2,
        _ => 4,
    };
    let chunks = kk / width;
    let int = ty == ScalarType::S8;
    let d_ty = if int {
        ScalarType::S32
    } else {
        ScalarType::F32
    };
    // 64 rows: nibbles, dense values, stored (bits) per row.
    let mut nib = vec![vec![0u32; chunks]; 64];
    let mut dense = vec![vec![0f64; kk]; 64];
    let mut stored: Vec<Vec<u64>> = vec![Vec::new(); 64];
    for r in 0..64 {
        for q in 0..chunks {
            let v = if ty == ScalarType::Tf32 {
                [0b0100, 0b1110][rng.below(2) as usize]
            } else {
                loop {
                    let (i0, i1) = (rng.below(4) as u32, rng.below(4) as u32);
                    if i0 != i1 {
                        break i0 | i1 << 2;
                    }
                }
            };
            nib[r][q] = v;
            let cols: Vec<usize> = if ty == ScalarType::Tf32 {
                vec![width * q + usize::from(v == 0b1110)]
            } else {
                vec![width * q + (v & 3) as usize, width * q + (v >> 2) as usize]
            };
            for col in cols {
                let (b, x) = input(&mut rng, ty);
                dense[r][col] = x;
                stored[r].push(b);
            }
        }
    }
    let b: Vec<Vec<(u64, f64)>> = (0..kk)
        .map(|_| (0..nn).map(|_| input(&mut rng, ty)).collect())
        .collect();
    // Shared memory: A (64 x K/2) at 0, B (N x K, K-major) at 0x8000; no swizzle,
    // LBO 128 bytes between 16-byte K chunks, SBO 2048 between 8-row groups.
    let (lbo, sbo) = (128u64, 2048u64);
    let at = |mn: u64, kc: u64| {
        let t = 16 / es;
        (mn % 8) * 16 + (mn / 8) * sbo + (kc % t) * es + (kc / t) * lbo
    };
    let mut smem = vec![0u8; 0x10000];
    let mut put = |addr: u64, bits: u64| {
        for i in 0..es {
            smem[(addr + i) as usize] = (bits >> (8 * i)) as u8;
        }
    };
    for r in 0..64u64 {
        for c in 0..(kk / 2) as u64 {
            put(at(r, c), stored[r as usize][c as usize]);
        }
    }
    for j in 0..nn as u64 {
        for x in 0..kk as u64 {
            put(0x8000 + at(j, x), b[x as usize][j as usize].0);
        }
    }
    let desc = |start: u64| {
        Descriptor {
            start,
            lbo,
            sbo,
            base_offset: 0,
            swizzle_bytes: 0,
        }
        .encode()
    };
    // Threads of a group holding metadata: four chunks (16 bits) of each row each.
    let threads = chunks / 4;
    let o = op(n, k, d_ty, ty, a_regs, sel);
    for quarter in 0..4u32 {
        let q0 = 16 * quarter as usize;
        let mut regs = [[0u32; 4]; 32];
        let mut meta = [0xFFFF_FFFFu32; 32];
        let per = (4 / es) as u32;
        for lane in 0..32u32 {
            let (g, t) = (lane / 4, lane % 4);
            for e in 0..(16 * kk as u32 / 2 / 32) {
                let (r, c) = a_frag(ty, g, t, e);
                let bits = stored[q0 + r as usize][c as usize] as u32;
                regs[lane as usize][(e / per) as usize] |= bits << (8 * es as u32 * (e % per));
            }
            let j = t as usize;
            let base = usize::from(sel) * threads;
            if (base..base + threads).contains(&j) {
                let jj = j - base;
                let mut v = 0;
                for x in 0..8 {
                    let row = q0 + g as usize + 8 * (x / 4);
                    v |= nib[row][4 * jj + x % 4] << (4 * x);
                }
                meta[lane as usize] = v;
            }
        }
        let c: Vec<Vec<u32>> = (0..32).map(|_| vec![0u32; nn / 2]).collect();
        let a = if a_regs {
            ASource::Regs(&regs)
        } else {
            ASource::Desc(desc(0))
        };
        let mut read = |addr: u64, bytes: u32| -> Result<u64, String> {
            Ok((0..u64::from(bytes)).fold(0, |v, i| {
                v | u64::from(smem[(addr + i) as usize]) << (8 * i)
            }))
        };
        let d = multiply_sparse(&o, quarter, a, desc(0x8000), &c, false, &meta, &mut read)
            .unwrap_or_else(|e| panic!("{ty:?} k{k} sel {sel}: {e}"));
        for lane in 0..32usize {
            let (g, t) = (lane / 4, lane % 4);
            for e in 0..nn / 2 {
                let row = q0 + g + 8 * ((e / 2) % 2);
                let col = 2 * t + e % 2 + 8 * (e / 4);
                let want = if int {
                    let s: i64 = (0..kk)
                        .map(|x| dense[row][x] as i64 * b[x][col].1 as i64)
                        .sum();
                    s as i32 as u32
                } else {
                    (0..kk)
                        .fold(0f32, |s, x| {
                            (dense[row][x] as f32).mul_add(b[x][col].1 as f32, s)
                        })
                        .to_bits()
                };
                assert_eq!(
                    d[lane][e], want,
                    "{ty:?} k{k} n{n} regs {a_regs} sel {sel} q {quarter}: D[{row}][{col}]"
                );
            }
        }
    }
}

#[test]
fn sparse_warpgroup_products_match_the_dense_product() {
    let mut seed = 5;
    for (ty, k, sels) in [
        (ScalarType::F16, 32u16, 2u8),
        (ScalarType::Bf16, 32, 2),
        (ScalarType::Tf32, 16, 2),
        (ScalarType::S8, 64, 1),
        (ScalarType::E4m3, 64, 1),
    ] {
        for n in [8u16, 16] {
            for a_regs in [true, false] {
                for sel in 0..sels {
                    seed += 1;
                    check(ty, k, n, a_regs, sel, seed * 0x9E37_79B9);
                }
            }
        }
    }
}

#[test]
fn undefined_metadata_names_the_lane() {
    let o = op(8, 32, ScalarType::F32, ScalarType::F16, true, 1);
    let regs = [[0u32; 4]; 32];
    let mut meta = [0x4444_4444u32; 32];
    meta[6] = 0x4444_4445; // lane 6 = group 1, thread 2 (selector 1): row 1, chunk 0
    let c: Vec<Vec<u32>> = (0..32).map(|_| vec![0u32; 4]).collect();
    let mut read = |_: u64, _: u32| -> Result<u64, String> { Ok(0) };
    let e =
        multiply_sparse(&o, 0, ASource::Regs(&regs), 0, &c, true, &meta, &mut read).unwrap_err();
    assert!(
        e.contains("lane 6") && e.contains("row 1, chunk 0") && e.contains("0b0101"),
        "{e}"
    );
}

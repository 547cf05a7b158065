//! Single-bit `wgmma.mma_async...m64nNk256.s32.b1.b1.s32.and.popc`: every warp's rows
//! against a CPU popcount, A from registers (mma.m16n8k256's A fragment, from the ISA's
//! table: a0..a31 row g at columns 32t.., a32..a63 row g+8, a64..a127 the same rows at
//! 128 + 32t..) and from descriptors without swizzle and with the 32-byte swizzle, B from
//! descriptors; scale-d 0 and 1; the accumulator wrapping.

use super::*;
use ir::op::WgmmaOp;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn op(n: u16, a_regs: bool) -> WgmmaOp {
    WgmmaOp {
        n,
        k: 256,
        d_ty: ScalarType::S32,
        a_ty: ScalarType::B1,
        b_ty: ScalarType::B1,
        a_regs,
        neg_a: false,
        neg_b: false,
        trans_a: false,
        trans_b: false,
        satfinite: false,
        sparse: None,
    }
}

/// Byte offset of byte `kb` (bits 8kb..8kb+7 along K) of row `mn` in the canonical
/// K-major layout (PTX ISA "Shared Memory Matrix Layout": no swizzle, 8 rows of 16 bytes
/// a core matrix, core matrices LBO apart along K and SBO apart along M/N; 32-byte
/// swizzle, rows 32 bytes apart, 8-row groups SBO apart, then bit 4 ^= bit 7).
fn offset(swizzle: bool, sbo: u64, lbo: u64, mn: u64, kb: u64) -> u64 {
    if swizzle {
        let a = (mn % 8) * 32 + (mn / 8) * sbo + kb;
        a ^ (((a >> 7) & 1) << 4)
    } else {
        (mn % 8) * 16 + (mn / 8) * sbo + (kb % 16) + (kb / 16) * lbo
    }
}

fn check(n: u16, quarter: u32, a_regs: bool, swizzle: bool, scale_d: bool, seed: u64) {
    let mut rng = Rng(seed);
    let (nn, k) = (usize::from(n), 256usize);
    // Bits of A (64 x 256) and B (256 x N), densities varying by row.
    let a: Vec<Vec<u8>> = (0..64)
        .map(|r| {
            (0..k)
                .map(|_| u8::from(rng.next() % 4 < (r % 4) as u64))
                .collect()
        })
        .collect();
    let b: Vec<Vec<u8>> = (0..k)
        .map(|_| (0..nn).map(|_| (rng.next() & 1) as u8).collect())
        .collect();
    let (sbo, lbo) = if swizzle { (256, 0) } else { (256, 128) };
    let (a_base, b_base) = (0u64, 0x4000u64);
    let mut smem = vec![0u8; 0x4000 + 0x4000];
    for r in 0..64u64 {
        for kb in 0..32u64 {
            let byte = (0..8).fold(0u8, |v, i| v | a[r as usize][(8 * kb + i) as usize] << i);
            smem[(a_base + offset(swizzle, sbo, lbo, r, kb)) as usize] = byte;
        }
    }
    for j in 0..u64::from(n) {
        for kb in 0..32u64 {
            let byte = (0..8).fold(0u8, |v, i| v | b[(8 * kb + i) as usize][j as usize] << i);
            smem[(b_base + offset(swizzle, sbo, lbo, j, kb)) as usize] = byte;
        }
    }
    let desc = |start: u64| {
        Descriptor {
            start,
            lbo,
            sbo,
            base_offset: 0,
            swizzle_bytes: if swizzle { 32 } else { 0 },
        }
        .encode()
    };
    let mut regs = [[0u32; 4]; 32];
    for (lane, r) in regs.iter_mut().enumerate() {
        let (g, t) = (lane / 4, lane % 4);
        for i in 0..128usize {
            let row = 16 * quarter as usize + g + if (i / 32) % 2 == 1 { 8 } else { 0 };
            let col = 32 * t + i % 32 + if i >= 64 { 128 } else { 0 };
            r[i / 32] |= u32::from(a[row][col]) << (i % 32);
        }
    }
    let d_regs = usize::from(n / 2);
    let c: Vec<Vec<u32>> = (0..32)
        .map(|l| {
            (0..d_regs)
                .map(|i| {
                    if (l + i) % 5 == 0 {
                        0x7FFF_FFF0
                    } else {
                        rng.next() as u32
                    }
                })
                .collect()
        })
        .collect();
    let src = if a_regs {
        ASource::Regs(&regs)
    } else {
        ASource::Desc(desc(a_base))
    };
    let mut read = |addr: u64, bytes: u32| -> Result<u64, String> {
        Ok((0..bytes as u64).fold(0u64, |v, i| {
            v | u64::from(smem[(addr + i) as usize]) << (8 * i)
        }))
    };
    let d = multiply(
        &op(n, a_regs),
        quarter,
        src,
        desc(b_base),
        &c,
        scale_d,
        &mut read,
    )
    .unwrap();
    let mut wrapped = 0;
    for lane in 0..32usize {
        let (g, t) = (lane / 4, lane % 4);
        for e in 0..d_regs {
            // D element e of N/2: row g + 8((e/2)%2), column 2t + e%2 + 8(e/4).
            let row = 16 * quarter as usize + g + 8 * ((e / 2) % 2);
            let col = 2 * t + e % 2 + 8 * (e / 4);
            let popc: u32 = (0..k).map(|kk| u32::from(a[row][kk] & b[kk][col])).sum();
            let base = if scale_d { c[lane][e] } else { 0 };
            let want = base.wrapping_add(popc);
            wrapped += usize::from(scale_d && base == 0x7FFF_FFF0 && (want as i32) < 0);
            assert_eq!(
                d[lane][e], want,
                "n {n} q {quarter} regs {a_regs} swz {swizzle}: D[{row}][{col}]"
            );
        }
    }
    if scale_d {
        assert!(wrapped > 0, "nothing wrapped");
    }
}

#[test]
fn single_bit_products_match_a_cpu_popcount() {
    let mut seed = 77;
    for n in [8u16, 24, 64, 256] {
        for quarter in 0..4 {
            for (a_regs, swizzle) in [(true, false), (false, false), (false, true)] {
                for scale_d in [false, true] {
                    seed += 1;
                    check(n, quarter, a_regs, swizzle, scale_d, seed * 0x9E37_79B9);
                }
            }
        }
    }
}

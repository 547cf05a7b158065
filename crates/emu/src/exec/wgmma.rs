//! `wgmma.mma_async` (PTX ISA 8.0, sm_90a, "Asynchronous Warpgroup Level Matrix
//! Multiply-Accumulate Instructions"): `D = A x B + (scale-d ? D : 0)` with M = 64 over a
//! warpgroup of four warps. Warp `w % 4` of the group holds rows `16(w % 4)..+16` of A
//! (when A is in registers) and of D, so each warp computes its own rows from its own
//! registers and shared memory: the emulator executes the instruction warp by warp, at
//! issue (the timing model decides when its result may be read, through
//! `wgmma.commit_group`/`wait_group`).
//!
//! Register fragments ("Register Fragments and Shared Memory Matrix Layouts" of wgmma):
//! with `g = lane / 4`, `t = lane % 4`, a warp's A fragment is `mma.sync`'s A fragment of
//! m16n8k16 (f16, bf16), m16n8k8 (tf32) or m16n8k32 (8-bit types) over its 16 rows; D
//! element `e` (of N/2 per thread) is at row `g + 8·((e/2)%2)`, column `2t + e%2 +
//! 8·(e/4)`, one per register for f32/s32 and two per register (low half first) for f16.
//!
//! Shared-memory matrices are given by 64-bit descriptors ("Matrix Descriptor Format"):
//! bits 0-13 the start address >> 4, 16-29 the leading-dimension byte offset (LBO) >> 4,
//! 32-45 the stride-dimension byte offset (SBO) >> 4, 49-51 the base offset, 62-63 the
//! swizzle (0 none, 1 128 B, 2 64 B, 3 32 B). An element's address follows the ISA's
//! "Canonical Layouts" table (in CuTe notation, T = 16 bytes / element size, strides in
//! elements with LBO and SBO in bytes):
//!
//! | major | none | 32/64/128-byte swizzle (W bytes) |
//! | --- | --- | --- |
//! | K (no transpose) | `((8,m),(T,2k)):((1T,SBO),(1,LBO))` | `((8,m),(T,2k)):((W/16·T,SBO),(1,T))` |
//! | MN (transposed) | `((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))` | `((T,W/16,m),(8,k)):((1,T,LBO),(W/16·T,SBO))` |
//!
//! then the swizzle `Swizzle<b,4,3>` (b = 1, 2, 3) on the address: bits [4, 4+b) XOR bits
//! [7, 7+b), the pattern TMA writes (`tensor_map::swizzle_address`). The ISA's base offset
//! is `(pattern start >> 7) & 7` when a pattern does not start on its 256/512/1024-byte
//! boundary; regsim reads it as the row phase of the pattern, XORing with
//! `((addr >> 7) - base_offset) & (2^b - 1)` (our reading; no GPU was at hand to check
//! a nonzero base offset). A is M x K and B is K x N as matrices; "K-major" B is stored
//! with K contiguous (each of B's columns, N of them, is a row of the canonical layout).
//!
//! Arithmetic: as `mma.sync` (see `matrix.rs`): `d = scale-d ? c : 0`, then
//! `d = fma(a_k, b_k, d)` in f32 for `k = 0…K-1` (products of f16, bf16, tf32, e4m3 and
//! e5m2 values are exact in f32; one rounding to nearest even per step), an f16 D rounded
//! once from that f32; `imm-scale-a/b = -1` negate A/B exactly. 8-bit integers sum
//! exactly; D wraps to s32, or saturates with `.satfinite`. tf32 inputs ignore their 13
//! low mantissa bits. The hardware truncates partial sums (Fasi et al. 2021), so the
//! last bit can differ from a GPU, as for `mma.sync`.

use ir::op::{ScalarType, WgmmaOp};

use crate::semantics::half::{self, HalfKind};

/// A decoded matrix descriptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Descriptor {
    /// Shared-memory byte address of the matrix's start.
    pub start: u64,
    /// Leading-dimension byte offset.
    pub lbo: u64,
    /// Stride-dimension byte offset.
    pub sbo: u64,
    pub base_offset: u64,
    /// 0 none, else the swizzle width in bytes (32, 64, 128).
    pub swizzle_bytes: u64,
}

impl Descriptor {
    pub fn decode(d: u64) -> Descriptor {
        let field = |shift: u32| ((d >> shift) & 0x3FFF) << 4;
        Descriptor {
            start: field(0),
            lbo: field(16),
            sbo: field(32),
            base_offset: (d >> 49) & 7,
            swizzle_bytes: match d >> 62 {
                1 => 128,
                2 => 64,
                3 => 32,
                _ => 0,
            },
        }
    }

    /// The descriptor's encoding (for tests and programs that build one).
    pub fn encode(&self) -> u64 {
        let enc = |x: u64| (x & 0x3FFFF) >> 4;
        let mode = match self.swizzle_bytes {
            128 => 1,
            64 => 2,
            32 => 3,
            _ => 0,
        };
        enc(self.start)
            | enc(self.lbo) << 16
            | enc(self.sbo) << 32
            | (self.base_offset & 7) << 49
            | mode << 62
    }

    /// Shared-memory byte address of element (`mn`, `k`) of an operand with `esize`-byte
    /// elements: `mn` the row of A or the column of B, `k` along K; `mn_major` for an
    /// MN-major (transposed) matrix (see the module docs).
    pub fn address(&self, mn_major: bool, mn: u64, k: u64, esize: u64) -> u64 {
        let t = 16 / esize;
        let w = self.swizzle_bytes;
        let off = match (mn_major, w) {
            (false, 0) => {
                (mn % 8) * 16 + (mn / 8) * self.sbo + (k % t) * esize + (k / t) * self.lbo
            }
            (false, w) => (mn % 8) * w + (mn / 8) * self.sbo + k * esize,
            (true, 0) => (mn % t) * esize + (mn / t) * self.sbo + (k % 8) * 16 + (k / 8) * self.lbo,
            (true, w) => {
                let per = w / esize;
                (mn % per) * esize + (mn / per) * self.lbo + (k % 8) * w + (k / 8) * self.sbo
            }
        };
        let addr = self.start + off;
        let b = match w {
            128 => 3,
            64 => 2,
            32 => 1,
            _ => return addr,
        };
        let mask = (1u64 << b) - 1;
        let phase = ((addr >> 7).wrapping_sub(self.base_offset)) & mask;
        addr ^ (phase << 4)
    }
}

/// Bytes of one element of `ty` in shared memory and registers.
pub fn element_bytes(ty: ScalarType) -> u64 {
    match ty {
        ScalarType::F16 | ScalarType::Bf16 => 2,
        ScalarType::Tf32 | ScalarType::F32 => 4,
        _ => 1,
    }
}

/// The value of an input element (every type converts exactly).
pub fn value(bits: u64, ty: ScalarType) -> f64 {
    match ty {
        ScalarType::F16 => f64::from(half::to_f32(bits as u16, HalfKind::F16)),
        ScalarType::Bf16 => f64::from(half::to_f32(bits as u16, HalfKind::Bf16)),
        ScalarType::Tf32 => f64::from(f32::from_bits(bits as u32 & 0xFFFF_E000)),
        ScalarType::S8 => f64::from(bits as u8 as i8),
        ScalarType::U8 => f64::from(bits as u8),
        ScalarType::E4m3 => fp8(bits as u8, 3, 7, false),
        ScalarType::E5m2 => fp8(bits as u8, 2, 15, true),
        _ => f64::from(f32::from_bits(bits as u32)),
    }
}

/// An 8-bit float with `mbits` mantissa bits and exponent bias `bias` (PTX ISA "Alternate
/// Floating Point Data Formats": e4m3 has no infinity and one NaN pattern per sign,
/// S.1111.111; e5m2 is IEEE-like with infinities and NaNs).
fn fp8(b: u8, mbits: u32, bias: i32, ieee: bool) -> f64 {
    let sign = if b & 0x80 != 0 { -1.0 } else { 1.0 };
    let ebits = 7 - mbits;
    let e = i32::from((b >> mbits) & ((1 << ebits) - 1) as u8);
    let m = f64::from(b & ((1 << mbits) - 1) as u8);
    let emax = (1 << ebits) - 1;
    if ieee && e == emax {
        return if m == 0.0 {
            sign * f64::INFINITY
        } else {
            f64::NAN
        };
    }
    if !ieee && e == emax && m == f64::from((1u8 << mbits) - 1) {
        return f64::NAN;
    }
    let scale = f64::from(1u32 << mbits);
    if e == 0 {
        sign * m / scale * 2f64.powi(1 - bias)
    } else {
        sign * (1.0 + m / scale) * 2f64.powi(e - bias)
    }
}

/// The MmaShape whose A fragment is the warp's A fragment of `op` (see the module docs).
fn a_fragment_shape(op: &WgmmaOp) -> ir::op::MmaShape {
    match op.a_k() {
        8 => ir::op::MmaShape::M16n8k8,
        16 => ir::op::MmaShape::M16n8k16,
        256 => ir::op::MmaShape::M16n8k256,
        _ => ir::op::MmaShape::M16n8k32,
    }
}

/// Where A comes from.
pub enum ASource<'a> {
    /// Every lane's four fragment registers.
    Regs(&'a [[u32; 4]; 32]),
    Desc(u64),
}

/// `D` for the 16 rows of warp `quarter` (0..4) of the warpgroup: `c[lane]` holds the
/// lane's D registers before the instruction (`op.d_regs()` of them); returns them after.
/// `read(addr, bytes)` reads shared memory.
pub fn multiply(
    op: &WgmmaOp,
    quarter: u32,
    a: ASource<'_>,
    b_desc: u64,
    c: &[Vec<u32>],
    scale_d: bool,
    read: &mut dyn FnMut(u64, u32) -> Result<u64, String>,
) -> Result<Vec<Vec<u32>>, String> {
    multiply_sparse(op, quarter, a, b_desc, c, scale_d, &[0; 32], read)
}

/// [`multiply`] with the warp's metadata registers `meta` for `wgmma.mma_async.sp`
/// (ignored when dense). A's stored 16 x K/2 (registers: the dense wgmma A fragment of
/// K/2; descriptor: the dense canonical layout of K/2, our reading of the ISA's sparse
/// storage section) is decompressed as `mma.sp` of the warp's 16 rows and K does
/// (`super::matrix_sparse`: the same chunks, nibbles, and selector thread sets, the ISA's
/// sp-sel table giving a pair for f16/bf16/tf32 and all four threads for 8-bit types).
#[allow(clippy::too_many_arguments)]
pub fn multiply_sparse(
    op: &WgmmaOp,
    quarter: u32,
    a: ASource<'_>,
    b_desc: u64,
    c: &[Vec<u32>],
    scale_d: bool,
    meta: &[u32; 32],
    read: &mut dyn FnMut(u64, u32) -> Result<u64, String>,
) -> Result<Vec<Vec<u32>>, String> {
    let (n, k) = (usize::from(op.n), usize::from(op.a_k()));
    let int = matches!(op.a_ty, ScalarType::S8 | ScalarType::U8 | ScalarType::B1);
    // `.b1` (`.and.popc`): elements are bits, 0 or 1, so the integer path's sum of
    // products is popc(A-row AND B-column). In registers they are mma.m16n8k256's A
    // fragment (32 a register, bit 0 first); in shared memory each byte of the canonical
    // K-major layout holds 8 consecutive K elements, bit 0 first (a 16-byte core-matrix
    // row is 128 elements; our reading of the ISA's "T = 128 / sizeof-bits" layouts).
    let b1 = op.a_ty == ScalarType::B1;
    let es_of = |ty: ScalarType| if b1 { 1 } else { element_bytes(ty) };
    let per_read = if b1 { 8 } else { 1 };
    // A's 16 rows and B, row-major, as exact values.
    let mut am = vec![0f64; 16 * k];
    match a {
        ASource::Regs(regs) => {
            let shape = a_fragment_shape(op);
            let bits = if b1 {
                1
            } else {
                8 * element_bytes(op.a_ty) as u32
            };
            let per = 32 / bits;
            for (lane, r) in regs.iter().enumerate() {
                for e in 0..(16 * k as u32 / 32) {
                    let (row, col) = super::matrix::coords(
                        super::matrix::Frag::A,
                        shape,
                        match bits {
                            8 => ScalarType::S8,
                            _ => op.a_ty,
                        },
                        lane as u32,
                        e,
                    );
                    let word = r[(e / per) as usize];
                    let mask = if bits == 32 {
                        u32::MAX
                    } else {
                        (1 << bits) - 1
                    };
                    let v = (word >> (bits * (e % per))) & mask;
                    am[row as usize * k + col as usize] = if b1 {
                        f64::from(v)
                    } else {
                        value(u64::from(v), op.a_ty)
                    };
                }
            }
        }
        ASource::Desc(d) => {
            let desc = Descriptor::decode(d);
            let es = es_of(op.a_ty);
            for r in 0..16 {
                for kk in (0..k).step_by(per_read) {
                    let mn = u64::from(16 * quarter) + r as u64;
                    let at = desc.address(op.trans_a, mn, (kk / per_read) as u64, es);
                    let v = read(at, es as u32).map_err(|m| {
                        format!("A's element ({mn}, {kk}) at shared address {at:#x}: {m}")
                    })?;
                    if b1 {
                        for bit in 0..8 {
                            am[r * k + kk + bit] = ((v >> bit) & 1) as f64;
                        }
                    } else {
                        am[r * k + kk] = value(v, op.a_ty);
                    }
                }
            }
        }
    }
    let (am, k) = match op.sparse {
        None => (am, k),
        Some(selector) => {
            let kd = usize::from(op.k);
            let sp = super::matrix_sparse::Sparse {
                ty: op.a_ty,
                k: u32::from(op.k),
                ordered: false,
                fp8_ordered: false,
                selector: u32::from(selector),
                meta,
                what: format!("wgmma.mma_async.sp.m64n{}k{}.{}", op.n, op.k, op.a_ty),
            };
            let mut dense = vec![0f64; 16 * kd];
            for r in 0..16 {
                for cc in 0..k {
                    let col = sp
                        .dense_col(r as u32, cc as u32)
                        .map_err(|(lane, m)| format!("lane {lane}: {m}"))?;
                    dense[r * kd + col as usize] = am[r * k + cc];
                }
            }
            (dense, kd)
        }
    };
    let desc = Descriptor::decode(b_desc);
    let es = es_of(op.b_ty);
    let mut bm = vec![0f64; k * n];
    for j in 0..n {
        for kk in (0..k).step_by(per_read) {
            let at = desc.address(op.trans_b, j as u64, (kk / per_read) as u64, es);
            let v = read(at, es as u32)
                .map_err(|m| format!("B's element ({kk}, {j}) at shared address {at:#x}: {m}"))?;
            if b1 {
                for bit in 0..8 {
                    bm[(kk + bit) * n + j] = ((v >> bit) & 1) as f64;
                }
            } else {
                bm[kk * n + j] = value(v, op.b_ty);
            }
        }
    }
    let sa = if op.neg_a { -1.0 } else { 1.0 };
    let sb = if op.neg_b { -1.0 } else { 1.0 };
    let mut d: Vec<Vec<u32>> = c.to_vec();
    for (lane, regs) in d.iter_mut().enumerate() {
        let (g, t) = (lane / 4, lane % 4);
        for e in 0..n / 2 {
            let row = g + 8 * ((e / 2) % 2);
            let col = 2 * t + e % 2 + 8 * (e / 4);
            let f16 = op.d_ty == ScalarType::F16;
            let (ri, shift) = if f16 { (e / 2, 16 * (e % 2)) } else { (e, 0) };
            let Some(reg) = regs.get_mut(ri) else {
                continue;
            };
            let old = if f16 { (*reg >> shift) & 0xFFFF } else { *reg };
            let arow = &am[row * k..(row + 1) * k];
            let bits = if int {
                let mut acc: i64 = if scale_d { i64::from(old as i32) } else { 0 };
                for (kk, x) in arow.iter().enumerate() {
                    acc += (*x as i64) * (bm[kk * n + col] as i64);
                }
                if op.satfinite {
                    acc.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32 as u32
                } else {
                    acc as i32 as u32
                }
            } else {
                let mut acc = if !scale_d {
                    0.0f32
                } else if f16 {
                    half::to_f32(old as u16, HalfKind::F16)
                } else {
                    f32::from_bits(old)
                };
                for (kk, x) in arow.iter().enumerate() {
                    let y = bm[kk * n + col];
                    acc = ((sa * x) as f32).mul_add((sb * y) as f32, acc);
                }
                if f16 {
                    u32::from(half::from_f32(
                        acc,
                        HalfKind::F16,
                        crate::semantics::exact::Rounding::NearestEven,
                    ))
                } else {
                    acc.to_bits()
                }
            };
            if f16 {
                *reg = (*reg & !(0xFFFF << shift)) | (bits << shift);
            } else {
                *reg = bits;
            }
        }
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::semantics::exact::Rounding;

    /// A CuTe layout `(shape):(stride)` flattened: each mode a list of (size, stride)
    /// sub-modes, evaluated colexicographically (first sub-mode fastest).
    fn cute(modes: &[(u64, u64)], mut coord: u64) -> u64 {
        let mut off = 0;
        for &(size, stride) in modes {
            off += (coord % size) * stride;
            coord /= size;
        }
        off
    }

    fn swz(addr: u64, b: u32) -> u64 {
        addr ^ (((addr >> 7) & ((1 << b) - 1)) << 4)
    }

    /// The ISA's "exact layout" examples of the canonical-layouts section (elements;
    /// LBO/SBO in elements as the figures give them): every element's address.
    #[test]
    fn the_isa_examples_of_canonical_layouts() {
        struct Ex {
            mn_major: bool,
            swizzle: u64,
            esize: u64,
            lbo: u64,
            sbo: u64,
            mn: Vec<(u64, u64)>,
            k: Vec<(u64, u64)>,
        }
        let examples = [
            // K-major, no swizzle, tf32: ((8,2),(4,4)):((4,32),(1,64)), LBO 64, SBO 32.
            Ex {
                mn_major: false,
                swizzle: 0,
                esize: 4,
                lbo: 64,
                sbo: 32,
                mn: vec![(8, 4), (2, 32)],
                k: vec![(4, 1), (4, 64)],
            },
            // K-major, 32B swizzle, tf32: ((8,2),(4,4)):((8,64),(1,4)), SBO 64.
            Ex {
                mn_major: false,
                swizzle: 32,
                esize: 4,
                // Not used; "assumed 1" (16 bytes) in the encoding.
                lbo: 4,
                sbo: 64,
                mn: vec![(8, 8), (2, 64)],
                k: vec![(4, 1), (4, 4)],
            },
            // MN-major, no swizzle, bf16: ((8,1,2),(8,2)):((1,8,64),(8,128)), LBO 128, SBO 64.
            Ex {
                mn_major: true,
                swizzle: 0,
                esize: 2,
                lbo: 128,
                sbo: 64,
                mn: vec![(8, 1), (1, 8), (2, 64)],
                k: vec![(8, 8), (2, 128)],
            },
            // MN-major, 32B swizzle, bf16: ((8,2,2),(8,2)):((1,8,128),(16,256)).
            Ex {
                mn_major: true,
                swizzle: 32,
                esize: 2,
                lbo: 128,
                sbo: 256,
                mn: vec![(8, 1), (2, 8), (2, 128)],
                k: vec![(8, 16), (2, 256)],
            },
            // MN-major, 64B swizzle, bf16: ((8,4,2),(8,2)):((1,8,256),(32,512)).
            Ex {
                mn_major: true,
                swizzle: 64,
                esize: 2,
                lbo: 256,
                sbo: 512,
                mn: vec![(8, 1), (4, 8), (2, 256)],
                k: vec![(8, 32), (2, 512)],
            },
        ];
        for ex in &examples {
            let d = Descriptor {
                start: 0x2000,
                lbo: ex.lbo * ex.esize,
                sbo: ex.sbo * ex.esize,
                base_offset: 0,
                swizzle_bytes: ex.swizzle,
            };
            // The encoding round-trips.
            assert_eq!(Descriptor::decode(d.encode()), d);
            let b = match ex.swizzle {
                32 => 1,
                64 => 2,
                128 => 3,
                _ => 0,
            };
            let mns: u64 = ex.mn.iter().map(|m| m.0).product();
            let ks: u64 = ex.k.iter().map(|m| m.0).product();
            for mn in 0..mns {
                for k in 0..ks {
                    let want = swz(0x2000 + (cute(&ex.mn, mn) + cute(&ex.k, k)) * ex.esize, b);
                    assert_eq!(
                        d.address(ex.mn_major, mn, k, ex.esize),
                        want,
                        "mn-major {} swizzle {} element ({mn}, {k})",
                        ex.mn_major,
                        ex.swizzle
                    );
                }
            }
        }
    }

    /// The canonical layout of the ISA's table, in bytes, for any parameters.
    fn canonical(mn_major: bool, w: u64, esize: u64, lbo: u64, sbo: u64, mn: u64, k: u64) -> u64 {
        let t = 16 / esize;
        let elems = |b: u64| b / esize;
        let off = match (mn_major, w) {
            (false, 0) => {
                cute(&[(8, t), (64, elems(sbo))], mn) + cute(&[(t, 1), (64, elems(lbo))], k)
            }
            (false, w) => {
                cute(&[(8, w / 16 * t), (64, elems(sbo))], mn) + cute(&[(t, 1), (64, t)], k)
            }
            (true, 0) => {
                cute(&[(t, 1), (1, t), (64, elems(sbo))], mn) + cute(&[(8, t), (64, elems(lbo))], k)
            }
            (true, w) => {
                cute(&[(t, 1), (w / 16, t), (64, elems(lbo))], mn)
                    + cute(&[(8, w / 16 * t), (64, elems(sbo))], k)
            }
        };
        off * esize
    }

    fn f16(x: f64) -> u64 {
        u64::from(half::from_f32(
            x as f32,
            HalfKind::F16,
            Rounding::NearestEven,
        ))
    }

    fn bf16(x: f64) -> u64 {
        u64::from(half::from_f32(
            x as f32,
            HalfKind::Bf16,
            Rounding::NearestEven,
        ))
    }

    /// The bits of `ty` for `x` (exactly representable in the tests).
    fn encode(x: f64, ty: ScalarType) -> u64 {
        match ty {
            ScalarType::F16 => f16(x),
            ScalarType::Bf16 => bf16(x),
            ScalarType::Tf32 | ScalarType::F32 => u64::from((x as f32).to_bits()),
            ScalarType::S8 => u64::from(x as i8 as u8),
            ScalarType::U8 => u64::from(x as u8),
            // Every code, by value: the e4m3/e5m2 decoder is checked separately.
            t => (0..256u64)
                .find(|&c| value(c, t) == x)
                .expect("representable"),
        }
    }

    #[test]
    fn fp8_values_follow_the_formats() {
        use ScalarType::{E4m3, E5m2};
        assert_eq!(value(0x38, E4m3), 1.0); // 0.0111.000
        assert_eq!(value(0x7E, E4m3), 448.0); // the largest e4m3
        assert!(value(0x7F, E4m3).is_nan());
        assert_eq!(value(0x01, E4m3), 2f64.powi(-9)); // the smallest subnormal
        assert_eq!(value(0xC0, E4m3), -2.0);
        assert_eq!(value(0x3C, E5m2), 1.0); // 0.01111.00
        assert_eq!(value(0x7B, E5m2), 57344.0); // the largest e5m2
        assert_eq!(value(0x7C, E5m2), f64::INFINITY);
        assert!(value(0x7D, E5m2).is_nan());
        assert_eq!(value(0x01, E5m2), 2f64.powi(-16));
    }

    struct Case {
        op: WgmmaOp,
        swizzle: u64,
    }

    fn op(n: u16, d: ScalarType, a: ScalarType, b: ScalarType) -> WgmmaOp {
        let k = match a {
            ScalarType::Tf32 => 8,
            ScalarType::F16 | ScalarType::Bf16 => 16,
            _ => 32,
        };
        WgmmaOp {
            n,
            k,
            d_ty: d,
            a_ty: a,
            b_ty: b,
            a_regs: false,
            neg_a: false,
            neg_b: false,
            trans_a: false,
            trans_b: false,
            satfinite: false,
            sparse: None,
        }
    }

    /// A small exactly representable value for element `i` of a matrix of `ty`.
    fn sample(i: u64, salt: u64, ty: ScalarType) -> f64 {
        let h = (i.wrapping_mul(2654435761).wrapping_add(salt * 97)) >> 7;
        match ty {
            ScalarType::U8 => (h % 200) as f64,
            ScalarType::S8 => (h % 200) as f64 - 100.0,
            _ => ((h % 15) as f64 - 7.0) * 0.25,
        }
    }

    /// Runs `case` on the 64 x N x K problem through a shared-memory image built with the
    /// ISA's canonical layouts, for each warp of the group, and checks D against a CPU
    /// product computed element by element (D = A·B + C in the documented order).
    fn check(case: &Case, scale_d: bool, a_in_regs: bool) {
        let mut o = case.op;
        o.a_regs = a_in_regs;
        let (n, k) = (u64::from(o.n), u64::from(o.k));
        let (ea, eb) = (element_bytes(o.a_ty), element_bytes(o.b_ty));
        let w = case.swizzle;
        // A at 0 (64 rows), B at 0x4000; rows 8 at a time, SBO the 8-row block's bytes.
        let lay = |mn_major: bool, es: u64, mns: u64| -> (u64, u64) {
            // (LBO, SBO) for a dense tile of `mns` x K.
            let t = 16 / es;
            match (mn_major, w) {
                (false, 0) => (8 * 16, 8 * 16 * (k / t)),
                (false, w) => (16, 8 * w),
                (true, 0) => (16 * 8 * (mns / t), 8 * 16),
                (true, w) => (8 * w, 8 * w * (mns * es / w).max(1)),
            }
        };
        let (alo, aso) = lay(o.trans_a, ea, 64);
        let (blo, bso) = lay(o.trans_b, eb, n);
        let ad = Descriptor {
            start: 0,
            lbo: alo,
            sbo: aso,
            base_offset: 0,
            swizzle_bytes: w,
        };
        let bd = Descriptor {
            start: 0x4000,
            lbo: blo,
            sbo: bso,
            base_offset: 0,
            swizzle_bytes: w,
        };
        let mut smem = vec![0u8; 0x10000];
        let b_sw = match w {
            32 => 1,
            64 => 2,
            128 => 3,
            _ => 0,
        };
        let mut put = |addr: u64, bits: u64, es: u64| {
            for i in 0..es {
                smem[(addr + i) as usize] = (bits >> (8 * i)) as u8;
            }
        };
        let av = |m: u64, kk: u64| sample(m * k + kk, 1, o.a_ty);
        let bv = |kk: u64, j: u64| sample(kk * n + j, 2, o.b_ty);
        for m in 0..64 {
            for kk in 0..k {
                let at = swz(canonical(o.trans_a, w, ea, alo, aso, m, kk), b_sw);
                put(at, encode(av(m, kk), o.a_ty), ea);
            }
        }
        for j in 0..n {
            for kk in 0..k {
                let at = swz(0x4000 + canonical(o.trans_b, w, eb, blo, bso, j, kk), b_sw);
                put(at, encode(bv(kk, j), o.b_ty), eb);
            }
        }
        let int = matches!(o.a_ty, ScalarType::S8 | ScalarType::U8);
        let cv = |m: u64, j: u64| -> f64 {
            if int {
                (m as f64) * 1000.0 - (j as f64)
            } else {
                ((m * 3 + j) % 9) as f64 * 0.5 - 2.0
            }
        };
        let f16d = o.d_ty == ScalarType::F16;
        for q in 0..4u32 {
            // The warp's fragments: A (ISA formulas) and C.
            let mut a_regs = [[0u32; 4]; 32];
            let mut c = vec![vec![0u32; usize::from(o.d_regs())]; 32];
            for lane in 0..32u64 {
                let (g, t) = (lane / 4, lane % 4);
                let per = 4 / ea;
                for e in 0..(16 * k / 32) {
                    let (r, col) = match ea {
                        2 => (g + 8 * ((e / 2) % 2), 2 * t + e % 2 + 8 * (e / 4)),
                        4 => (g + 8 * (e % 2), t + 4 * (e / 2)),
                        _ => (g + 8 * ((e / 4) % 2), 4 * t + e % 4 + 16 * (e / 8)),
                    };
                    let bits = encode(av(16 * u64::from(q) + r, col), o.a_ty) as u32;
                    a_regs[lane as usize][(e / per) as usize] |= bits << (8 * ea * (e % per));
                }
                for e in 0..n / 2 {
                    let (r, col) = (g + 8 * ((e / 2) % 2), 2 * t + e % 2 + 8 * (e / 4));
                    let v = cv(16 * u64::from(q) + r, col);
                    if f16d {
                        c[lane as usize][(e / 2) as usize] |= (f16(v) as u32) << (16 * (e % 2));
                    } else if int {
                        c[lane as usize][e as usize] = v as i32 as u32;
                    } else {
                        c[lane as usize][e as usize] = (v as f32).to_bits();
                    }
                }
            }
            let a = if a_in_regs {
                ASource::Regs(&a_regs)
            } else {
                ASource::Desc(ad.encode())
            };
            let mut read = |at: u64, bytes: u32| -> Result<u64, String> {
                let mut v = 0u64;
                for i in 0..u64::from(bytes) {
                    v |= u64::from(smem[(at + i) as usize]) << (8 * i);
                }
                Ok(v)
            };
            let d = multiply(&o, q, a, bd.encode(), &c, scale_d, &mut read).unwrap();
            for lane in 0..32u64 {
                let (g, t) = (lane / 4, lane % 4);
                for e in 0..n / 2 {
                    let (r, col) = (g + 8 * ((e / 2) % 2), 2 * t + e % 2 + 8 * (e / 4));
                    let m = 16 * u64::from(q) + r;
                    let sa = if o.neg_a { -1.0 } else { 1.0 };
                    let sb = if o.neg_b { -1.0 } else { 1.0 };
                    let want = if int {
                        let mut acc: i64 = if scale_d { cv(m, col) as i64 } else { 0 };
                        for kk in 0..k {
                            acc += av(m, kk) as i64 * bv(kk, col) as i64;
                        }
                        u64::from(acc as i32 as u32)
                    } else {
                        let mut acc: f32 = if scale_d { cv(m, col) as f32 } else { 0.0 };
                        for kk in 0..k {
                            acc = ((sa * av(m, kk)) as f32).mul_add((sb * bv(kk, col)) as f32, acc);
                        }
                        if f16d {
                            f16(f64::from(acc))
                        } else {
                            u64::from(acc.to_bits())
                        }
                    };
                    let got = if f16d {
                        u64::from((d[lane as usize][(e / 2) as usize] >> (16 * (e % 2))) & 0xFFFF)
                    } else {
                        u64::from(d[lane as usize][e as usize])
                    };
                    assert_eq!(
                        got, want,
                        "{o:?} swizzle {w} scale-d {scale_d} A in registers {a_in_regs}: D[{m}][{col}]"
                    );
                }
            }
        }
    }

    #[test]
    fn every_type_matches_a_cpu_product_from_shared_memory_and_registers() {
        use ScalarType::*;
        let ops = [
            op(24, F32, F16, F16),
            op(16, F16, F16, F16),
            op(32, F32, Bf16, Bf16),
            op(16, F32, Tf32, Tf32),
            op(16, F32, E4m3, E5m2),
            op(8, F16, E5m2, E4m3),
            op(16, S32, S8, U8),
            op(24, S32, U8, S8),
        ];
        for o in ops {
            for swizzle in [0, 32, 64, 128] {
                let case = Case { op: o, swizzle };
                for scale_d in [true, false] {
                    check(&case, scale_d, false);
                    check(&case, scale_d, true);
                }
            }
        }
    }

    #[test]
    fn transposed_and_negated_operands() {
        use ScalarType::*;
        for (ta, tb) in [(true, false), (false, true), (true, true)] {
            for ty in [F16, Bf16] {
                for swizzle in [0, 32, 64, 128] {
                    let mut o = op(64, F32, ty, ty);
                    o.trans_a = ta;
                    o.trans_b = tb;
                    o.neg_a = ta;
                    o.neg_b = !tb;
                    check(&Case { op: o, swizzle }, true, false);
                    if !ta {
                        check(&Case { op: o, swizzle }, true, true);
                    }
                }
            }
        }
    }

    #[test]
    fn accumulation_rounds_each_step_and_integers_saturate() {
        // One row: 1 + 2^-24 + 2^-24 ... in f32 steps: each fma rounds to nearest even, so
        // C = 1 and products 2^-24 vanish one by one (a wider sum would keep them).
        use ScalarType::*;
        let mut o = op(8, F32, F16, F16);
        o.a_regs = true;
        let tiny = f16(2f64.powi(-12)) as u32;
        let mut a = [[0u32; 4]; 32];
        for r in a.iter_mut() {
            *r = [tiny | tiny << 16; 4];
        }
        let bd = Descriptor {
            start: 0,
            lbo: 128,
            sbo: 256,
            base_offset: 0,
            swizzle_bytes: 0,
        };
        let smem_b = f16(2f64.powi(-12)); // every B element
        let mut read = |_: u64, _: u32| -> Result<u64, String> { Ok(smem_b) };
        let c = vec![vec![1f32.to_bits(); 4]; 32];
        let d = multiply(&o, 0, ASource::Regs(&a), bd.encode(), &c, true, &mut read).unwrap();
        assert_eq!(
            f32::from_bits(d[0][0]),
            1.0,
            "each step rounds: 16 x 2^-24 is lost"
        );
        // Saturation: s8 -128 x -128 x 32 = 524288 plus C near the top.
        let mut o = op(8, S32, S8, S8);
        o.satfinite = true;
        let mut read = |_: u64, _: u32| -> Result<u64, String> { Ok(0x80) };
        let c = vec![vec![i32::MAX as u32 - 5; 4]; 32];
        let d = multiply(&o, 1, ASource::Desc(0), bd.encode(), &c, true, &mut read).unwrap();
        assert_eq!(d[3][2], i32::MAX as u32);
        o.satfinite = false;
        let d = multiply(&o, 1, ASource::Desc(0), bd.encode(), &c, true, &mut read).unwrap();
        assert_eq!(d[3][2], (i64::from(i32::MAX) - 5 + 524288) as i32 as u32);
    }

    #[test]
    fn a_read_error_names_the_element() {
        let o = op(8, ScalarType::F32, ScalarType::F16, ScalarType::F16);
        let c = vec![vec![0u32; 4]; 32];
        let mut read = |at: u64, _: u32| -> Result<u64, String> {
            if at >= 0x100 {
                Err("past the end of shared memory".into())
            } else {
                Ok(0)
            }
        };
        let desc = Descriptor {
            start: 0x80,
            lbo: 128,
            sbo: 256,
            base_offset: 0,
            swizzle_bytes: 0,
        };
        let e = multiply(&o, 0, ASource::Desc(desc.encode()), 0, &c, true, &mut read).unwrap_err();
        assert!(
            e.starts_with("A's element (") && e.contains("past the end"),
            "{e}"
        );
    }
}

#[cfg(test)]
#[path = "wgmma_bank_tests.rs"]
mod bank_tests;

#[cfg(test)]
#[path = "wgmma_b1_tests.rs"]
mod b1_tests;

#[cfg(test)]
#[path = "wgmma_sparse_tests.rs"]
mod sparse_tests;

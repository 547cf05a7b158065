//! Warp-level matrix operations (PTX ISA §9.7.14): `wmma.load`/`wmma.store`/`wmma.mma`,
//! `mma.sync` and `ldmatrix`. Each is one warp-wide operation: a lane's result depends on
//! registers of other lanes.
//!
//! Fragment layouts. `mma.sync`'s are the ISA's ("Matrix Fragments for mma.m16n8k16" and
//! "…m16n8k8" with floating-point types): with `g = lane / 4` and `t = lane % 4`,
//! - A (m16n8k16): element `e` of 8 is at row `g + 8·((e/2)%2)`, column
//!   `2t + e%2 + 8·(e/4)`; (m16n8k8): 4 elements, row `g + 8·(e/2)`, column `2t + e%2`;
//! - B (m16n8k16): 4 elements, row (k) `2t + e%2 + 8·(e/2)`, column (n) `g`;
//!   (m16n8k8): 2 elements, row `2t + e`, column `g`;
//! - C and D: 4 elements, row `g + 8·(e/2)`, column `2t + e%2`.
//!
//! `wmma` fragments are opaque in PTX ("the mapping of matrix elements into fragments is
//! unspecified"); regsim gives the m16n16k16 fragments the layout of two m16n8k16
//! fragments side by side (A: the m16n8k16 A; B and C/D: n-block `e/4`, so element `e`
//! of 8 is m16n8k16's element `e%4` of the n-block of columns `8·(e/4)…`). Volta's f16
//! A and B fragments are 8 registers for 8 distinct elements: registers 4–7 repeat
//! registers 0–3, and `wmma.mma` reads the first copy (it still reads all eight
//! registers, as the register file sees them).
//!
//! Elements are packed two per 32-bit register for 16-bit types (element `2i` in the low
//! half of register `i`) and one per register for f32.
//!
//! Arithmetic. The ISA does not fix the order or rounding of the dot products; regsim
//! computes `d[i][j] = c[i][j]`, then `d = fma(a[i][k], b[k][j], d)` in f32 for `k = 0…K-1`
//! (each product exact, one rounding to nearest even per step) and rounds an f16 D from
//! that f32 value to nearest even. f16 and bf16 inputs convert to f32 exactly. The
//! hardware's adders truncate partial sums instead (Fasi et al., "Numerical behavior of
//! NVIDIA tensor cores", 2021); programs that check results against a float reference
//! with a tolerance see no difference, and this definition is what the known-answer tests
//! pin.

use ir::op::{Ldmatrix, MatrixLayout, MatrixRole, MmaOp, MmaShape, ScalarType};

use crate::semantics::exact::Rounding;
use crate::semantics::half::{self, HalfKind};

/// Which fragment of `D = A x B + C`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Frag {
    A,
    B,
    /// C or D.
    Acc,
}

impl Frag {
    pub(super) fn of(role: Option<MatrixRole>) -> Frag {
        match role {
            Some(MatrixRole::A) => Frag::A,
            Some(MatrixRole::B) => Frag::B,
            Some(MatrixRole::C) | None => Frag::Acc,
        }
    }

    /// `(rows, columns)` of the matrix.
    pub(super) fn dims(self, shape: MmaShape) -> (u32, u32) {
        let (m, n, k) = shape.dims();
        match self {
            Frag::A => (m, k),
            Frag::B => (k, n),
            Frag::Acc => (m, n),
        }
    }

    /// Distinct elements each lane holds.
    pub(super) fn elements(self, shape: MmaShape) -> u32 {
        let (r, c) = self.dims(shape);
        r * c / 32
    }
}

/// `(row, column)` of element `e` of `lane`'s fragment (see the module docs).
pub(super) fn coords(frag: Frag, shape: MmaShape, lane: u32, e: u32) -> (u32, u32) {
    let (g, t) = (lane / 4, lane % 4);
    match (frag, shape) {
        (Frag::A, MmaShape::M16n8k16 | MmaShape::M16n16k16) => {
            (g + 8 * ((e / 2) % 2), 2 * t + e % 2 + 8 * (e / 4))
        }
        (Frag::A, MmaShape::M16n8k8) => (g + 8 * (e / 2), 2 * t + e % 2),
        (Frag::B, MmaShape::M16n8k16) => (2 * t + e % 2 + 8 * (e / 2), g),
        (Frag::B, MmaShape::M16n8k8) => (2 * t + e, g),
        (Frag::B, MmaShape::M16n16k16) => {
            let (k, n) = coords(Frag::B, MmaShape::M16n8k16, lane, e % 4);
            (k, n + 8 * (e / 4))
        }
        (Frag::Acc, MmaShape::M16n16k16) => {
            let (r, c) = coords(Frag::Acc, MmaShape::M16n8k16, lane, e % 4);
            (r, c + 8 * (e / 4))
        }
        (Frag::Acc, _) => (g + 8 * (e / 2), 2 * t + e % 2),
    }
}

/// Element `e` of a fragment from its registers' values (`regs[i]` is register `i`).
#[inline]
pub(super) fn get(regs: &[u32], ty: ScalarType, e: u32) -> u32 {
    let e = e as usize;
    if ty == ScalarType::F32 {
        regs.get(e).copied().unwrap_or(0)
    } else {
        regs.get(e / 2)
            .map_or(0, |r| (r >> (16 * (e % 2))) & 0xFFFF)
    }
}

/// Sets element `e` (the raw bits of `ty`) in the registers' values.
#[inline]
pub(super) fn set(regs: &mut [u32], ty: ScalarType, e: u32, bits: u32) {
    let e = e as usize;
    if ty == ScalarType::F32 {
        if let Some(r) = regs.get_mut(e) {
            *r = bits;
        }
    } else if let Some(r) = regs.get_mut(e / 2) {
        let shift = 16 * (e % 2);
        *r = (*r & !(0xFFFF << shift)) | ((bits & 0xFFFF) << shift);
    }
}

/// Fills the replicated registers of a fragment (Volta's f16 multiplicands) from the
/// first copy.
pub(super) fn replicate(regs: &mut [u32], distinct_regs: usize) {
    if distinct_regs == 0 {
        return;
    }
    for i in distinct_regs..regs.len() {
        regs[i] = regs[i % distinct_regs];
    }
}

/// 32-bit registers holding the distinct elements of a fragment.
pub(super) fn distinct_regs(frag: Frag, shape: MmaShape, ty: ScalarType) -> usize {
    let per = if ty == ScalarType::F32 { 1 } else { 2 };
    (frag.elements(shape) / per) as usize
}

fn to_f32(bits: u32, ty: ScalarType) -> f32 {
    match ty {
        ScalarType::F32 => f32::from_bits(bits),
        ScalarType::Bf16 => half::to_f32(bits as u16, HalfKind::Bf16),
        _ => half::to_f32(bits as u16, HalfKind::F16),
    }
}

fn from_f32(x: f32, ty: ScalarType) -> u32 {
    match ty {
        ScalarType::F32 => x.to_bits(),
        _ => u32::from(half::from_f32(x, HalfKind::F16, Rounding::NearestEven)),
    }
}

/// Memory offset in elements of `(row, col)` in a matrix stored with `layout` and leading
/// dimension `ld`.
#[inline]
pub(super) fn element_offset(layout: MatrixLayout, ld: u64, row: u32, col: u32) -> u64 {
    match layout {
        MatrixLayout::Row => u64::from(row) * ld + u64::from(col),
        MatrixLayout::Col => u64::from(col) * ld + u64::from(row),
    }
}

/// `D = A x B + C` for the whole warp: `a`, `b` and `c` are every lane's source registers
/// (`[lane][register]`); returns every lane's D registers.
pub(super) fn multiply(
    op: &MmaOp,
    a: &[[u32; 8]; 32],
    b: &[[u32; 8]; 32],
    c: &[[u32; 8]; 32],
) -> [[u32; 8]; 32] {
    let shape = op.shape;
    let (m, n, k) = shape.dims();
    let (m, n, k) = (m as usize, n as usize, k as usize);
    // Matrices row-major in f32, at most 16 x 16.
    let mut am = [0f32; 256];
    let mut bm = [0f32; 256];
    let mut cm = [0f32; 256];
    for lane in 0..32u32 {
        let l = lane as usize;
        for e in 0..Frag::A.elements(shape) {
            let (r, col) = coords(Frag::A, shape, lane, e);
            am[r as usize * k + col as usize] = to_f32(get(&a[l], op.ab_ty, e), op.ab_ty);
        }
        for e in 0..Frag::B.elements(shape) {
            let (r, col) = coords(Frag::B, shape, lane, e);
            bm[r as usize * n + col as usize] = to_f32(get(&b[l], op.ab_ty, e), op.ab_ty);
        }
        for e in 0..Frag::Acc.elements(shape) {
            let (r, col) = coords(Frag::Acc, shape, lane, e);
            cm[r as usize * n + col as usize] = to_f32(get(&c[l], op.c_ty, e), op.c_ty);
        }
    }
    let mut dm = [0f32; 256];
    for i in 0..m {
        for j in 0..n {
            let mut acc = cm[i * n + j];
            for kk in 0..k {
                acc = am[i * k + kk].mul_add(bm[kk * n + j], acc);
            }
            dm[i * n + j] = acc;
        }
    }
    let mut d = [[0u32; 8]; 32];
    for lane in 0..32u32 {
        for e in 0..Frag::Acc.elements(shape) {
            let (r, col) = coords(Frag::Acc, shape, lane, e);
            let v = from_f32(dm[r as usize * n + col as usize], op.d_ty);
            set(&mut d[lane as usize], op.d_ty, e, v);
        }
    }
    d
}

/// `ldmatrix`: `rows[i]` is the 16 bytes of row `i % 8` of matrix `i / 8` (the row whose
/// address lane `i` gave); returns lane `lane`'s register for matrix `j`.
pub(super) fn ldmatrix_reg(l: &Ldmatrix, rows: &[[u16; 8]; 32], lane: u32, j: u32) -> u32 {
    let (g, t) = (lane / 4, lane % 4);
    let base = 8 * j as usize;
    let (lo, hi) = if l.trans {
        // The transpose: the thread holds column g, rows 2t and 2t+1.
        (
            rows[base + 2 * t as usize][g as usize],
            rows[base + 2 * t as usize + 1][g as usize],
        )
    } else {
        (
            rows[base + g as usize][2 * t as usize],
            rows[base + g as usize][2 * t as usize + 1],
        )
    };
    u32::from(lo) | (u32::from(hi) << 16)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ScalarType::*;

    fn op(shape: MmaShape, d: ScalarType, ab: ScalarType, c: ScalarType) -> MmaOp {
        MmaOp {
            wmma: shape == MmaShape::M16n16k16,
            shape,
            a_layout: MatrixLayout::Row,
            b_layout: MatrixLayout::Col,
            d_ty: d,
            ab_ty: ab,
            c_ty: c,
        }
    }

    #[test]
    fn every_element_of_every_fragment_has_exactly_one_owner() {
        for shape in [MmaShape::M16n8k16, MmaShape::M16n8k8, MmaShape::M16n16k16] {
            for frag in [Frag::A, Frag::B, Frag::Acc] {
                let (r, c) = frag.dims(shape);
                let mut seen = vec![0u32; (r * c) as usize];
                for lane in 0..32 {
                    for e in 0..frag.elements(shape) {
                        let (i, j) = coords(frag, shape, lane, e);
                        assert!(i < r && j < c, "{frag:?} {shape:?} lane {lane} e {e}");
                        seen[(i * c + j) as usize] += 1;
                    }
                }
                assert!(seen.iter().all(|&n| n == 1), "{frag:?} {shape:?}: {seen:?}");
            }
        }
    }

    #[test]
    fn the_isa_layouts_of_m16n8k16() {
        // Lane 5: groupID 1, threadID_in_group 1. a2 is row g+8, column 2t; a5 is row g,
        // column 2t+1+8; b3 is row 2t+1+8, column g; c3 is row g+8, column 2t+1.
        assert_eq!(coords(Frag::A, MmaShape::M16n8k16, 5, 2), (9, 2));
        assert_eq!(coords(Frag::A, MmaShape::M16n8k16, 5, 5), (1, 11));
        assert_eq!(coords(Frag::B, MmaShape::M16n8k16, 5, 3), (11, 1));
        assert_eq!(coords(Frag::Acc, MmaShape::M16n8k16, 5, 3), (9, 3));
        assert_eq!(coords(Frag::B, MmaShape::M16n8k8, 5, 1), (3, 1));
    }

    /// Builds every lane's registers of a fragment from a row-major matrix of raw bits.
    fn pack(frag: Frag, shape: MmaShape, ty: ScalarType, m: &[u32]) -> [[u32; 8]; 32] {
        let (_, cols) = frag.dims(shape);
        let mut out = [[0u32; 8]; 32];
        for lane in 0..32 {
            for e in 0..frag.elements(shape) {
                let (i, j) = coords(frag, shape, lane, e);
                set(&mut out[lane as usize], ty, e, m[(i * cols + j) as usize]);
            }
        }
        out
    }

    fn f16(x: f32) -> u32 {
        u32::from(half::from_f32(x, HalfKind::F16, Rounding::NearestEven))
    }
    fn bf16(x: f32) -> u32 {
        u32::from(half::from_f32(x, HalfKind::Bf16, Rounding::NearestEven))
    }

    /// Known answers against a CPU reference, for each shape and input type.
    #[test]
    fn products_match_a_cpu_reference_bit_for_bit() {
        let cases = [
            (MmaShape::M16n8k16, F32, F16, F32),
            (MmaShape::M16n8k16, F16, F16, F16),
            (MmaShape::M16n8k16, F32, Bf16, F32),
            (MmaShape::M16n8k8, F32, F16, F32),
            (MmaShape::M16n8k8, F32, Bf16, F32),
            (MmaShape::M16n16k16, F32, F16, F32),
            (MmaShape::M16n16k16, F16, F16, F32),
        ];
        for (shape, d_ty, ab_ty, c_ty) in cases {
            let o = op(shape, d_ty, ab_ty, c_ty);
            let (m, n, k) = shape.dims();
            let val = |i: u32, j: u32, s: u32| ((i * 7 + j * 3 + s) % 11) as f32 * 0.25 - 1.0;
            let enc = |x: f32, t: ScalarType| match t {
                F32 => x.to_bits(),
                Bf16 => bf16(x),
                _ => f16(x),
            };
            let a: Vec<u32> = (0..m * k)
                .map(|x| enc(val(x / k, x % k, 1), ab_ty))
                .collect();
            let b: Vec<u32> = (0..k * n)
                .map(|x| enc(val(x / n, x % n, 2), ab_ty))
                .collect();
            let c: Vec<u32> = (0..m * n)
                .map(|x| enc(val(x / n, x % n, 5) * 3.0, c_ty))
                .collect();
            let d = multiply(
                &o,
                &pack(Frag::A, shape, ab_ty, &a),
                &pack(Frag::B, shape, ab_ty, &b),
                &pack(Frag::Acc, shape, c_ty, &c),
            );
            for i in 0..m {
                for j in 0..n {
                    let mut acc = to_f32(c[(i * n + j) as usize], c_ty);
                    for kk in 0..k {
                        let x = to_f32(a[(i * k + kk) as usize], ab_ty);
                        let y = to_f32(b[(kk * n + j) as usize], ab_ty);
                        acc = x.mul_add(y, acc);
                    }
                    let want = from_f32(acc, d_ty);
                    // Find the lane and element holding D[i][j].
                    let (lane, e) = (0..32)
                        .flat_map(|l| (0..Frag::Acc.elements(shape)).map(move |e| (l, e)))
                        .find(|&(l, e)| coords(Frag::Acc, shape, l, e) == (i, j))
                        .unwrap();
                    assert_eq!(get(&d[lane as usize], d_ty, e), want, "{shape:?} {i},{j}");
                }
            }
        }
        // A hand-computed value: all-ones A and B with C = 0.5 give k + 0.5.
        let o = op(MmaShape::M16n8k16, F32, F16, F32);
        let ones = [[0x3C00_3C00u32; 8]; 32];
        let c = [[0.5f32.to_bits(); 8]; 32];
        let d = multiply(&o, &ones, &ones, &c);
        assert_eq!(f32::from_bits(d[31][3]), 16.5);
    }

    #[test]
    fn f16_accumulators_round_to_nearest_even_once() {
        // 2048 + 1 is not an f16; the f32 sum is exact and rounds to 2048 (even).
        let o = op(MmaShape::M16n8k8, F16, F16, F16);
        let mut a = [[0u32; 8]; 32];
        let mut b = [[0u32; 8]; 32];
        // Lane 0 holds A[0][0..2] and B[0..2][0].
        a[0][0] = f16(1.0);
        b[0][0] = f16(1.0);
        let c = [[f16(2048.0) | f16(2048.0) << 16; 8]; 32];
        let d = multiply(&o, &a, &b, &c);
        assert_eq!(get(&d[0], F16, 0), f16(2048.0));
        a[0][0] = f16(3.0);
        let d = multiply(&o, &a, &b, &c);
        assert_eq!(get(&d[0], F16, 0), f16(2052.0));
    }

    #[test]
    fn ldmatrix_distributes_rows_and_their_transpose() {
        let mut rows = [[0u16; 8]; 32];
        for (i, r) in rows.iter_mut().enumerate() {
            for (j, x) in r.iter_mut().enumerate() {
                *x = (i * 8 + j) as u16;
            }
        }
        let plain = Ldmatrix {
            count: 4,
            trans: false,
            space: ir::op::Space::Shared,
        };
        // Lane 6 (g = 1, t = 2), matrix 2: row 1 of matrix 2 (row 17), columns 4 and 5.
        assert_eq!(
            ldmatrix_reg(&plain, &rows, 6, 2),
            (17 * 8 + 4) | ((17 * 8 + 5) << 16)
        );
        let trans = Ldmatrix {
            trans: true,
            ..plain
        };
        // Transposed: column 1, rows 4 and 5 of matrix 2 (rows 20 and 21).
        assert_eq!(
            ldmatrix_reg(&trans, &rows, 6, 2),
            (20 * 8 + 1) | ((21 * 8 + 1) << 16)
        );
    }
}

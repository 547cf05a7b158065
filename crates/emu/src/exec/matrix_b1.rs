//! Single-bit `mma.sync` (PTX ISA "mma", `.s32.b1.b1.s32.{and,xor}.popc`, shapes
//! m8n8k128, m16n8k128 and m16n8k256): in place of multiplying, each element of D is
//! `C + popc(A-row op B-column)`, the population count of the bitwise AND or XOR of a
//! K-bit row of A and a K-bit column of B. The sum is exact and D wraps to s32 (the ISA
//! gives `.b1` no `.satfinite`).
//!
//! Fragments are the ISA's ("Matrix Fragments for mma.m8n8k128 / m16n8k128 /
//! m16n8k256"): 32 single-bit elements per 32-bit register, element 0 in bit 0, placed by
//! [`super::matrix::coords`]; C and D are the s32 fragments of the integer shapes.

use ir::op::{MmaBitOp, MmaOp, ScalarType};

use super::matrix::{coords, get_bits, set_bits, Frag};

/// Bits of a row of A or a column of B (K is at most 256).
type BitRow = [u64; 4];

/// `D = C + popc(A op B)` for the whole warp: `a`, `b` and `c` are every lane's source
/// registers (`[lane][register]`); returns every lane's D registers.
pub(super) fn multiply(
    op: &MmaOp,
    a: &[[u64; 8]; 32],
    b: &[[u64; 8]; 32],
    c: &[[u64; 8]; 32],
) -> [[u64; 8]; 32] {
    let shape = op.shape;
    let (_, n, _) = shape.dims();
    let n = n as usize;
    // Rows of A (at most 16) and columns of B (8), bit k of K in word k / 64.
    let mut rows = [[0u64; 4]; 16];
    let mut cols = [[0u64; 4]; 8];
    let mut acc = [0i32; 128];
    let set = |v: &mut BitRow, k: u32| v[(k / 64) as usize] |= 1 << (k % 64);
    for lane in 0..32u32 {
        let l = lane as usize;
        for e in 0..Frag::A.elements(shape) {
            if get_bits(&a[l], ScalarType::B1, e) != 0 {
                let (r, k) = coords(Frag::A, shape, ScalarType::B1, lane, e);
                set(&mut rows[r as usize], k);
            }
        }
        for e in 0..Frag::B.elements(shape) {
            if get_bits(&b[l], ScalarType::B1, e) != 0 {
                let (k, col) = coords(Frag::B, shape, ScalarType::B1, lane, e);
                set(&mut cols[col as usize], k);
            }
        }
        for e in 0..Frag::Acc.elements(shape) {
            let (r, col) = coords(Frag::Acc, shape, op.c_ty, lane, e);
            acc[r as usize * n + col as usize] = get_bits(&c[l], op.c_ty, e) as u32 as i32;
        }
    }
    let bit_op = op.bit_op.unwrap_or(MmaBitOp::Xor);
    let mut d = [[0u64; 8]; 32];
    for lane in 0..32u32 {
        for e in 0..Frag::Acc.elements(shape) {
            let (r, col) = coords(Frag::Acc, shape, op.d_ty, lane, e);
            let (row, column) = (&rows[r as usize], &cols[col as usize]);
            let count: u32 = row
                .iter()
                .zip(column)
                .map(|(x, y)| match bit_op {
                    MmaBitOp::And => (x & y).count_ones(),
                    MmaBitOp::Xor => (x ^ y).count_ones(),
                })
                .sum();
            let v = acc[r as usize * n + col as usize].wrapping_add(count as i32);
            set_bits(&mut d[lane as usize], op.d_ty, e, u64::from(v as u32));
        }
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use ir::op::{MatrixLayout, MmaShape};

    fn op(shape: MmaShape, bit_op: MmaBitOp) -> MmaOp {
        MmaOp {
            wmma: false,
            shape,
            a_layout: MatrixLayout::Row,
            b_layout: MatrixLayout::Col,
            d_ty: ScalarType::S32,
            ab_ty: ScalarType::B1,
            b_ty: ScalarType::B1,
            c_ty: ScalarType::S32,
            satfinite: false,
            bit_op: Some(bit_op),
            rnd: None,
            sparse: None,
        }
    }

    /// A small deterministic generator (xorshift64).
    struct Bits(u64);
    impl Bits {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
    }

    /// Lane `lane`'s fragment registers from whole matrices, written case by case from
    /// the ISA's tables (not through `coords`): `a[i][k]`, `b[k][j]` are bits, `c[i][j]`.
    struct Fragments {
        a: [[u64; 8]; 32],
        b: [[u64; 8]; 32],
        c: [[u64; 8]; 32],
    }

    fn fragments(shape: MmaShape, a: &[Vec<u8>], b: &[Vec<u8>], c: &[Vec<i32>]) -> Fragments {
        let mut f = Fragments {
            a: [[0; 8]; 32],
            b: [[0; 8]; 32],
            c: [[0; 8]; 32],
        };
        for lane in 0..32usize {
            let (g, t) = (lane / 4, lane % 4);
            // A: register `reg` bit `i`.
            let a_regs = match shape {
                MmaShape::M8n8k128 => 1,
                MmaShape::M16n8k128 => 2,
                _ => 4,
            };
            for reg in 0..a_regs {
                for i in 0..32 {
                    // m8n8k128: row g, column 32t + i. m16n8k128: a0..a31 row g,
                    // a32..a63 row g + 8; column 32t + i. m16n8k256: as m16n8k128 for
                    // a0..a63, and a64..a127 the same rows at columns 128 + 32t + i.
                    let row = if reg % 2 == 1 { g + 8 } else { g };
                    let col = 32 * t + i + if reg >= 2 { 128 } else { 0 };
                    f.a[lane][reg] |= u64::from(a[row][col]) << i;
                }
            }
            let b_regs = if shape == MmaShape::M16n8k256 { 2 } else { 1 };
            for reg in 0..b_regs {
                for i in 0..32 {
                    // b0..b31: row 32t + i; m16n8k256's b32..b63: row 128 + 32t + i.
                    let row = 32 * t + i + 128 * reg;
                    f.b[lane][reg] |= u64::from(b[row][g]) << i;
                }
            }
            // C: m8n8: c0, c1 at row g, columns 2t, 2t+1; m16n8 adds c2, c3 at row g + 8.
            let c_regs = if shape == MmaShape::M8n8k128 { 2 } else { 4 };
            for reg in 0..c_regs {
                let row = g + 8 * (reg / 2);
                let col = 2 * t + reg % 2;
                f.c[lane][reg] = u64::from(c[row][col] as u32);
            }
        }
        f
    }

    #[test]
    fn every_shape_and_operation_matches_a_cpu_product() {
        let mut rng = Bits(0x9E37_79B9_7F4A_7C15);
        for shape in [MmaShape::M8n8k128, MmaShape::M16n8k128, MmaShape::M16n8k256] {
            let (m, n, k) = shape.dims();
            let (m, n, k) = (m as usize, n as usize, k as usize);
            for bit_op in [MmaBitOp::And, MmaBitOp::Xor] {
                for round in 0..4 {
                    // Densities from sparse to dense so that counts cover 0..=K.
                    let density = [1u64, 4, 8, 15][round];
                    let mut bit = || u8::from(rng.next() % 16 < density);
                    let a: Vec<Vec<u8>> = (0..m).map(|_| (0..k).map(|_| bit()).collect()).collect();
                    let b: Vec<Vec<u8>> = (0..k).map(|_| (0..n).map(|_| bit()).collect()).collect();
                    let c: Vec<Vec<i32>> = (0..m)
                        .map(|_| (0..n).map(|_| rng.next() as i32 >> 8).collect())
                        .collect();
                    let f = fragments(shape, &a, &b, &c);
                    let d = multiply(&op(shape, bit_op), &f.a, &f.b, &f.c);
                    // The reference: D = C + sum over k of (a & b) or (a ^ b), wrapping.
                    let reference: Vec<Vec<i32>> = (0..m)
                        .map(|i| {
                            (0..n)
                                .map(|j| {
                                    let count: i32 = (0..k)
                                        .map(|kk| match bit_op {
                                            MmaBitOp::And => i32::from(a[i][kk] & b[kk][j]),
                                            MmaBitOp::Xor => i32::from(a[i][kk] ^ b[kk][j]),
                                        })
                                        .sum();
                                    c[i][j].wrapping_add(count)
                                })
                                .collect()
                        })
                        .collect();
                    let want = fragments(shape, &a, &b, &reference);
                    assert_eq!(d, want.c, "{shape:?} {bit_op:?} round {round}");
                }
            }
        }
    }

    #[test]
    fn every_element_of_every_fragment_has_exactly_one_owner() {
        for shape in [MmaShape::M8n8k128, MmaShape::M16n8k128, MmaShape::M16n8k256] {
            for (frag, ty) in [
                (Frag::A, ScalarType::B1),
                (Frag::B, ScalarType::B1),
                (Frag::Acc, ScalarType::S32),
            ] {
                let (r, c) = frag.dims(shape);
                let mut seen = vec![0u32; (r * c) as usize];
                for lane in 0..32 {
                    for e in 0..frag.elements(shape) {
                        let (i, j) = coords(frag, shape, ty, lane, e);
                        assert!(i < r && j < c, "{frag:?} {shape:?} lane {lane} e {e}");
                        seen[(i * c + j) as usize] += 1;
                    }
                }
                assert!(seen.iter().all(|&n| n == 1), "{frag:?} {shape:?}");
            }
        }
    }

    #[test]
    fn one_bit_lands_at_the_isa_position() {
        // m16n8k256: A element a100 of lane 6 (g = 1, t = 2) is register 3 bit 4:
        // row g + 8 = 9, column 128 + 64 + 4 = 196. B element b40 of lane 13 (g = 3,
        // t = 1) is register 1 bit 8: row 128 + 32 + 8 = 168, column 3.
        let shape = MmaShape::M16n8k256;
        let mut a = [[0u64; 8]; 32];
        let mut b = [[0u64; 8]; 32];
        let c = [[0u64; 8]; 32];
        a[6][3] = 1 << 4;
        // B column 3 has bit 196 set (lane 4·3 + 2 = 14 holds rows 192..224 of column
        // 3 in register 1, bit 196 - 128 - 64 = 4) and bit 168 (lane 13, register 1,
        // bit 8), which A's row 9 does not have.
        b[14][1] = 1 << 4;
        b[13][1] = 1 << 8;
        let and = multiply(&op(shape, MmaBitOp::And), &a, &b, &c);
        // D[9][3]: lane 4·1 + 1 = 5 (g = 1, t = 1: columns 2, 3), register 3 (row g + 8,
        // column 2t + 1).
        for (lane, regs) in and.iter().enumerate() {
            for (r, &v) in regs.iter().enumerate() {
                let want = u64::from(lane == 5 && r == 3);
                assert_eq!(v, want, "and: lane {lane} register {r}");
            }
        }
        let xor = multiply(&op(shape, MmaBitOp::Xor), &a, &b, &c);
        // XOR: row 9 against column 3 differs at bit 168 only; row 9 against the other
        // (empty) columns at bit 196; other rows against column 3 at 168 and 196.
        assert_eq!(xor[5][3], 1);
        assert_eq!(xor[5][2], 1, "row 9, column 2");
        assert_eq!(xor[5][1], 2, "row 1, column 3");
        assert_eq!(xor[0][0], 0, "row 0, column 0");
    }

    #[test]
    fn the_accumulator_wraps_to_s32() {
        let shape = MmaShape::M8n8k128;
        let a = [[u64::from(u32::MAX); 8]; 32];
        let b = [[u64::from(u32::MAX); 8]; 32];
        let c = [[u64::from(i32::MAX as u32); 8]; 32];
        let d = multiply(&op(shape, MmaBitOp::And), &a, &b, &c);
        // 128 set bits: i32::MAX + 128 wraps to i32::MIN + 127.
        assert_eq!(d[0][0], u64::from((i32::MIN + 127) as u32));
        assert_eq!(d[31][1], u64::from((i32::MIN + 127) as u32));
        let x = multiply(&op(shape, MmaBitOp::Xor), &a, &b, &c);
        assert_eq!(x[0][0], u64::from(i32::MAX as u32));
    }
}

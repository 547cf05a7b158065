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
//! registers, as the register file sees them). The other `wmma` shapes tile `mma.sync`'s
//! fragments of their type the same way (our choice; `wmma.load`, `wmma.mma` and
//! `wmma.store` share the map, which is all a program can observe): tf32 m16n16k8 is two
//! m16n8k8s side by side, 8-bit m32n8k16 two m16n8k16s stacked, m8n32k16 an m8n8k16 A with
//! four m16n8k16 Bs and four m8n8 accumulators side by side; f64 m8n8k4, s4/u4 m8n8k32 and
//! b1 m8n8k128 are the `mma.sync` shapes themselves.
//!
//! Elements are packed two per 32-bit register for 16-bit types (element `2i` in the low
//! half of register `i`), four for 8-bit types (s8, u8, e4m3, e5m2), eight for 4-bit
//! integers (low bits first), and one per register for f32. The 8- and 4-bit inputs share
//! one layout family (see `coords`).
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

use crate::semantics::exact::{self, Format, Rounding};
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

/// `(row, column)` of element `e` of `lane`'s fragment whose elements are of type `ty`
/// (see the module docs).
pub(super) fn coords(frag: Frag, shape: MmaShape, ty: ScalarType, lane: u32, e: u32) -> (u32, u32) {
    use MmaShape as S;
    use ScalarType::Tf32;
    let (g, t) = (lane / 4, lane % 4);
    // 8- and 4-bit inputs (integers and fp8): one layout family, `p` elements per 32-bit
    // register ("…for mma.m8n8k16", "…m8n8k32", "…m16n8k16 with integer type",
    // "…m16n8k32", "…m16n8k64"): A's element `e` is at row `g` (m8 shapes) or
    // `g + 8·((e/p)%2)` (m16), column `p·t + e%p + 4p·(e/2p)`; B's at row
    // `p·t + e%p + 4p·(e/p)`, column `g`.
    let packed = |p: u32| match frag {
        Frag::A if shape.dims().0 == 8 => (g, p * t + e),
        Frag::A => (g + 8 * ((e / p) % 2), p * t + e % p + 4 * p * (e / (2 * p))),
        _ => (p * t + e % p + 4 * p * (e / p), g),
    };
    // wmma's shapes tile mma.sync's fragments below (an 8-bit m16n16k16 A is m16n8k16's).
    let wmma_tiles = matches!(shape, S::M16n16k8 | S::M32n8k16 | S::M8n32k16)
        || (shape == S::M16n16k16 && frag == Frag::B);
    if let (Some(p), Frag::A | Frag::B, false) = (packed_per_register(ty), frag, wmma_tiles) {
        return packed(p);
    }
    match (frag, shape) {
        // wmma's own shapes: tiles of the mma.sync fragments of the same type (module docs).
        // tf32 m16n16k8: A is m16n8k8's; B two m16n8k8 Bs side by side (n-block e/2).
        (Frag::A, S::M16n16k8) => coords(Frag::A, S::M16n8k8, Tf32, lane, e),
        (Frag::B, S::M16n16k8) => {
            let (k, n) = coords(Frag::B, S::M16n8k8, Tf32, lane, e % 2);
            (k, n + 8 * (e / 2))
        }
        // m32n8k16: A two m16n8k16 As stacked (m-block e/8), B m16n8k16's, C/D two
        // m16n8 accumulators stacked (m-block e/4).
        (Frag::A, S::M32n8k16) => {
            let (r, c) = coords(Frag::A, S::M16n8k16, ty, lane, e % 8);
            (r + 16 * (e / 8), c)
        }
        (Frag::B, S::M32n8k16) => coords(Frag::B, S::M16n8k16, ty, lane, e),
        (Frag::Acc, S::M32n8k16) => {
            let (r, c) = coords(Frag::Acc, S::M16n8k16, ty, lane, e % 4);
            (r + 16 * (e / 4), c)
        }
        // m8n32k16: A m8n8k16's, B four m16n8k16 Bs side by side (n-block e/4), C/D four
        // m8n8 accumulators side by side (n-block e/2).
        (Frag::A, S::M8n32k16) => coords(Frag::A, S::M8n8k16, ty, lane, e),
        (Frag::B, S::M8n32k16) => {
            let (k, n) = coords(Frag::B, S::M16n8k16, ty, lane, e % 4);
            (k, n + 8 * (e / 4))
        }
        (Frag::Acc, S::M8n32k16) => {
            let (r, c) = coords(Frag::Acc, S::M8n8k16, ty, lane, e % 2);
            (r, c + 8 * (e / 2))
        }
        // tf32 ("Matrix Fragments for mma.m16n8k8", ".tf32"; "…for mma.m16n8k4").
        (Frag::A, S::M16n8k8) if ty == Tf32 => (g + 8 * (e % 2), t + 4 * (e / 2)),
        (Frag::B, S::M16n8k8) if ty == Tf32 => (t + 4 * e, g),
        // Sparse tf32 m16n8k16's B (PTX ISA "Matrix Fragments for sparse mma.m16n8k16
        // with .tf32"): four registers, the m16n8k8 family's rows t + 4e.
        (Frag::B, S::M16n8k16) if ty == Tf32 => (t + 4 * e, g),
        // f64 (sm_90) with one element a register in the same places as tf32 ("…for
        // mma.m16n8k4 / m16n8k8 / m16n8k16 with .f64").
        (Frag::A, S::M16n8k8 | S::M16n8k16) if ty == ScalarType::F64 => {
            (g + 8 * (e % 2), t + 4 * (e / 2))
        }
        (Frag::B, S::M16n8k8 | S::M16n8k16) if ty == ScalarType::F64 => (t + 4 * e, g),
        (Frag::A, S::M16n8k4) => (g + 8 * e, t),
        (Frag::B, S::M16n8k4) => (t, g),
        // f64 ("…for mma.m8n8k4 with .f64 floating point type").
        (Frag::A, S::M8n8k4) => (g, t),
        (Frag::B, S::M8n8k4) => (t, g),
        // Every m8n8 accumulator: row g, column 2t + e (f64 m8n8k4; s32 m8n8k16/k32).
        (Frag::Acc, S::M8n8k4 | S::M8n8k16 | S::M8n8k32 | S::M8n8k128) => (g, 2 * t + e),
        // 16-bit floating-point inputs.
        (Frag::A, S::M16n8k16 | S::M16n16k16) => {
            (g + 8 * ((e / 2) % 2), 2 * t + e % 2 + 8 * (e / 4))
        }
        (Frag::A, S::M16n8k8) => (g + 8 * (e / 2), 2 * t + e % 2),
        // Sparse m16n8k32's B with 16-bit inputs (eight elements) continues m16n8k16's.
        (Frag::B, S::M16n8k16) => (2 * t + e % 2 + 8 * (e / 2), g),
        (Frag::B, S::M16n8k32) if matches!(ty, ScalarType::F16 | ScalarType::Bf16) => {
            (2 * t + e % 2 + 8 * (e / 2), g)
        }
        (Frag::B, S::M16n8k8) => (2 * t + e, g),
        // m16n16k16 (16- and 8-bit): two m16n8k16 Bs side by side (n-block e/4).
        (Frag::B, S::M16n16k16) => {
            let (k, n) = coords(Frag::B, S::M16n8k16, ty, lane, e % 4);
            (k, n + 8 * (e / 4))
        }
        (Frag::Acc, S::M16n16k16 | S::M16n16k8) => {
            let (r, c) = coords(Frag::Acc, S::M16n8k16, ty, lane, e % 4);
            (r, c + 8 * (e / 4))
        }
        // Shapes only 8- and 4-bit inputs have (the decoder's rule), handled above.
        (Frag::A | Frag::B, S::M16n8k32 | S::M16n8k64 | S::M8n8k16 | S::M8n8k32) => packed(4),
        // Single-bit shapes (32 elements a register), handled above for `.b1`.
        (Frag::A | Frag::B, S::M8n8k128 | S::M16n8k128 | S::M16n8k256) => packed(32),
        (Frag::Acc, _) => (g + 8 * (e / 2), 2 * t + e % 2),
    }
}

/// Elements per 32-bit register of the 8-, 4- and 1-bit input types, `None` for the
/// others. The single-bit fragments ("Matrix Fragments for mma.m8n8k128", "…m16n8k128",
/// "…m16n8k256") follow the same family with 32 elements a register: A's element `e` at
/// row `g` (m8n8k128) or `g + 8·((e/32)%2)`, column `32t + e%32 + 128·(e/64)`; B's at row
/// `32t + e%32 + 128·(e/32)`, column `g`.
fn packed_per_register(ty: ScalarType) -> Option<u32> {
    use ScalarType::{E4m3, E5m2, B1, S4, S8, U4, U8};
    match ty {
        S8 | U8 | E4m3 | E5m2 => Some(4),
        S4 | U4 => Some(8),
        B1 => Some(32),
        _ => None,
    }
}

/// Bits of one element of `ty` in a fragment register.
pub(super) fn element_bits(ty: ScalarType) -> u32 {
    match ty {
        ScalarType::B1 => 1,
        ScalarType::S4 | ScalarType::U4 => 4,
        ScalarType::S8 | ScalarType::U8 | ScalarType::E4m3 | ScalarType::E5m2 => 8,
        ScalarType::F16 | ScalarType::Bf16 => 16,
        ScalarType::F64 => 64,
        _ => 32,
    }
}

/// Element `e` of an `mma.sync` fragment from its registers' values (`regs[i]` is
/// register `i`): 8- and 16-bit elements pack low to high into 32-bit registers, wider
/// ones take a register each (4-bit elements: eight per register, element 0 in bits 0-3).
#[inline]
pub(super) fn get_bits(regs: &[u64], ty: ScalarType, e: u32) -> u64 {
    let bits = element_bits(ty);
    let per = (32 / bits).max(1);
    let r = regs.get((e / per) as usize).copied().unwrap_or(0);
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    };
    (r >> (bits * (e % per))) & mask
}

/// Sets element `e` (the raw bits of `ty`) in the registers' values.
#[inline]
pub(super) fn set_bits(regs: &mut [u64], ty: ScalarType, e: u32, v: u64) {
    let bits = element_bits(ty);
    let per = (32 / bits).max(1);
    if let Some(r) = regs.get_mut((e / per) as usize) {
        let mask = if bits == 64 {
            u64::MAX
        } else {
            (1 << bits) - 1
        };
        let shift = bits * (e % per);
        *r = (*r & !(mask << shift)) | ((v & mask) << shift);
    }
}

/// Fills the replicated registers of a fragment (Volta's f16 multiplicands) from the
/// first copy.
pub(super) fn replicate(regs: &mut [u64], distinct_regs: usize) {
    if distinct_regs == 0 {
        return;
    }
    for i in distinct_regs..regs.len() {
        regs[i] = regs[i % distinct_regs];
    }
}

/// 32-bit registers holding the distinct elements of a fragment.
pub(super) fn distinct_regs(frag: Frag, shape: MmaShape, ty: ScalarType) -> usize {
    let bits = element_bits(ty);
    if bits == 64 {
        return frag.elements(shape) as usize;
    }
    (frag.elements(shape) * bits).div_ceil(32) as usize
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

/// The value of an input or accumulator element. Every type converts to f64 exactly:
/// tf32 is f32 with its 13 low mantissa bits ignored (the tensor core reads 19 bits), and
/// 8-bit and 32-bit integers are integers below 2^53.
fn value(bits: u64, ty: ScalarType) -> f64 {
    match ty {
        ScalarType::F64 => f64::from_bits(bits),
        ScalarType::Tf32 => f64::from(f32::from_bits(bits as u32 & 0xFFFF_E000)),
        ScalarType::S8 => f64::from(bits as u8 as i8),
        ScalarType::U8 => f64::from(bits as u8),
        // 4-bit two's complement: shift the nibble to the top of a byte and back.
        ScalarType::S4 => f64::from(((bits as u8) << 4) as i8 >> 4),
        ScalarType::U4 => f64::from(bits as u8 & 0xF),
        ScalarType::E4m3 | ScalarType::E5m2 => super::wgmma::value(bits, ty),
        ScalarType::S32 => f64::from(bits as u32 as i32),
        t => f64::from(to_f32(bits as u32, t)),
    }
}

/// `D = A x B + C` for the whole warp: `a`, `b` and `c` are every lane's source registers
/// (`[lane][register]`); returns every lane's D registers.
///
/// f16, bf16, tf32, e4m3 and e5m2 inputs accumulate in f32 (an f32 FMA chain, see the
/// module docs; each product of two of them is exact in f32), f64 in an f64 FMA chain;
/// 8- and 4-bit integers exactly, then D wraps to s32 or, with `.satfinite`, saturates
/// to its range.
pub(super) fn multiply(
    op: &MmaOp,
    a: &[[u64; 8]; 32],
    b: &[[u64; 8]; 32],
    c: &[[u64; 8]; 32],
) -> [[u64; 8]; 32] {
    if op.bit_op.is_some() {
        return super::matrix_b1::multiply(op, a, b, c);
    }
    if op.shape == MmaShape::M8n8k4 && op.ab_ty == ScalarType::F16 {
        return volta_m8n8k4(op, a, b, c);
    }
    let shape = op.shape;
    let k = shape.dims().2 as usize;
    let mut am = [0f64; A_MAX];
    for lane in 0..32u32 {
        for e in 0..Frag::A.elements(shape) {
            let (r, col) = coords(Frag::A, shape, op.ab_ty, lane, e);
            am[r as usize * k + col as usize] = a_value(a, op.ab_ty, lane, e);
        }
    }
    product(op, &am, b, c)
}

/// Elements of the largest A (16 x 128, sparse 4-bit m16n8k128, decompressed).
pub(super) const A_MAX: usize = 2048;

/// Element `e` of `lane`'s A fragment, as a number.
pub(super) fn a_value(a: &[[u64; 8]; 32], ty: ScalarType, lane: u32, e: u32) -> f64 {
    value(get_bits(&a[lane as usize], ty, e), ty)
}

/// `D = A x B + C` with A given as a row-major M x K matrix `am` (see [`multiply`]).
pub(super) fn product(
    op: &MmaOp,
    am: &[f64; A_MAX],
    b: &[[u64; 8]; 32],
    c: &[[u64; 8]; 32],
) -> [[u64; 8]; 32] {
    let shape = op.shape;
    let (_, n, k) = shape.dims();
    let (n, k) = (n as usize, k as usize);
    // B and C row-major, at most 128 x 8 or 16 x 16 (B), 16 x 16 (C).
    let mut bm = [0f64; 1024];
    let mut cm = [0f64; 256];
    for lane in 0..32u32 {
        let l = lane as usize;
        for e in 0..Frag::B.elements(shape) {
            let (r, col) = coords(Frag::B, shape, op.b_ty, lane, e);
            bm[r as usize * n + col as usize] = value(get_bits(&b[l], op.b_ty, e), op.b_ty);
        }
        for e in 0..Frag::Acc.elements(shape) {
            let (r, col) = coords(Frag::Acc, shape, op.c_ty, lane, e);
            cm[r as usize * n + col as usize] = value(get_bits(&c[l], op.c_ty, e), op.c_ty);
        }
    }
    let element = |i: usize, j: usize| -> u64 {
        let (row, col) = (&am[i * k..(i + 1) * k], (0..k).map(|kk| bm[kk * n + j]));
        let cv = cm[i * n + j];
        match op.d_ty {
            // wmma's `.rz`/`.rm`/`.rp`: each FMA of the chain rounds so.
            ScalarType::F64 => match op.rnd.and_then(directed) {
                Some(mode) => row.iter().zip(col).fold(cv.to_bits(), |acc, (x, y)| {
                    exact::fma(x.to_bits(), y.to_bits(), acc, Format::F64, mode)
                }),
                None => row
                    .iter()
                    .zip(col)
                    .fold(cv, |acc, (x, y)| x.mul_add(y, acc))
                    .to_bits(),
            },
            ScalarType::S32 => {
                let sum = row
                    .iter()
                    .zip(col)
                    .fold(cv as i64, |acc, (x, y)| acc + (*x as i64) * (y as i64));
                let d = if op.satfinite {
                    sum.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
                } else {
                    sum as i32
                };
                u64::from(d as u32)
            }
            t => {
                let acc = row
                    .iter()
                    .zip(col)
                    .fold(cv as f32, |acc, (x, y)| (*x as f32).mul_add(y as f32, acc));
                u64::from(from_f32(acc, t))
            }
        }
    };
    let mut d = [[0u64; 8]; 32];
    for lane in 0..32u32 {
        for e in 0..Frag::Acc.elements(shape) {
            let (r, col) = coords(Frag::Acc, shape, op.d_ty, lane, e);
            let v = element(r as usize, col as usize);
            set_bits(&mut d[lane as usize], op.d_ty, e, v);
        }
    }
    d
}

/// The emulator's rounding of an f64 `wmma.mma`'s `.rz`, `.rm`, `.rp`; `None` for `.rn`
/// (the host's `mul_add`).
fn directed(r: ir::op::Rounding) -> Option<Rounding> {
    match r {
        ir::op::Rounding::Rz => Some(Rounding::Zero),
        ir::op::Rounding::Rm => Some(Rounding::Down),
        ir::op::Rounding::Rp => Some(Rounding::Up),
        _ => None,
    }
}

/// `(row, column)` of element `i` of Volta's f16 m8n8k4 fragments (PTX ISA "Matrix
/// Fragments for mma.m8n8k4 with .f16 floating point type"), for the lane's place in its
/// quad pair: `q = lane % 4`, `hi = lane >= 16` (quad pair `(lane / 4) % 4` holds lanes
/// `4p..4p+3` and `4p+16..4p+19`). A (8 x 4, 4 elements): `.row` row `q + 4hi`, column
/// `i`; `.col` row `i + 4hi`, column `q`. B (4 x 8): `.row` row `q`, column `i + 4hi`;
/// `.col` row `i`, column `q + 4hi`. C/D f16 (8 elements): row `q + 4hi`, column `i`;
/// f32: row `(q & 1) + (i & 2) + 4hi`, column `(q & 2) + (i & 1) + (i & 4)`.
pub(super) fn volta_coords(
    frag: Frag,
    layout: MatrixLayout,
    ty: ScalarType,
    lane: u32,
    i: u32,
) -> (u32, u32) {
    let (q, h) = (lane % 4, 4 * u32::from(lane >= 16));
    match (frag, layout) {
        (Frag::A, MatrixLayout::Row) => (q + h, i),
        (Frag::A, MatrixLayout::Col) => (i + h, q),
        (Frag::B, MatrixLayout::Row) => (q, i + h),
        (Frag::B, MatrixLayout::Col) => (i, q + h),
        (Frag::Acc, _) if ty == ScalarType::F32 => {
            ((q & 1) + (i & 2) + h, (q & 2) + (i & 1) + (i & 4))
        }
        (Frag::Acc, _) => (q + h, i),
    }
}

/// Volta's `mma.sync.aligned.m8n8k4.alayout.blayout.dtype.f16.f16.ctype`: each quad pair
/// computes its own `D = A x B + C` (8 x 8 x 4) with the f32 FMA chain of the module docs.
fn volta_m8n8k4(
    op: &MmaOp,
    a: &[[u64; 8]; 32],
    b: &[[u64; 8]; 32],
    c: &[[u64; 8]; 32],
) -> [[u64; 8]; 32] {
    let mut d = [[0u64; 8]; 32];
    let reg = |regs: &[u64; 8], ty: ScalarType, i: u32| -> f32 {
        to_f32(get_bits(regs, ty, i) as u32, ty)
    };
    for pair in 0..4u32 {
        let lanes = [0, 1, 2, 3, 16, 17, 18, 19].map(|l| l + 4 * pair);
        let (mut am, mut bm, mut cm) = ([[0f32; 4]; 8], [[0f32; 8]; 4], [[0f32; 8]; 8]);
        for &lane in &lanes {
            let l = lane as usize;
            for i in 0..4 {
                let (r, col) = volta_coords(Frag::A, op.a_layout, op.ab_ty, lane, i);
                am[r as usize][col as usize] = reg(&a[l], op.ab_ty, i);
                let (r, col) = volta_coords(Frag::B, op.b_layout, op.b_ty, lane, i);
                bm[r as usize][col as usize] = reg(&b[l], op.b_ty, i);
            }
            for i in 0..8 {
                let (r, col) = volta_coords(Frag::Acc, MatrixLayout::Row, op.c_ty, lane, i);
                cm[r as usize][col as usize] = reg(&c[l], op.c_ty, i);
            }
        }
        for &lane in &lanes {
            let mut regs = [0u64; 8];
            for i in 0..8 {
                let (r, col) = volta_coords(Frag::Acc, MatrixLayout::Row, op.d_ty, lane, i);
                let (r, col) = (r as usize, col as usize);
                let v = (0..4).fold(cm[r][col], |acc, k| am[r][k].mul_add(bm[k][col], acc));
                set_bits(&mut regs, op.d_ty, i, u64::from(from_f32(v, op.d_ty)));
            }
            d[lane as usize] = regs;
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

/// `movmatrix.sync.aligned.m8n8.trans.b16`: lane `lane`'s result from every lane's source
/// register `a`. The source is an 8x8 matrix in `ldmatrix`'s layout (with `g = lane / 4`,
/// `t = lane % 4`: row `g`, columns `2t` and `2t + 1`, the lower column in the low half);
/// the result is its transpose in the same layout, so lane `lane` gets column `g`, rows
/// `2t` and `2t + 1` of the source (ISA §9.7.14.5.17, Figures "movmatrix source/result
/// matrix fragment layout").
pub(super) fn movmatrix_reg(a: &[u32; 32], lane: u32) -> u32 {
    let (g, t) = (lane / 4, lane % 4);
    // Source row r, column c is in lane 4r + c/2, half c % 2; here c = g, r = 2t and 2t+1.
    let element = |r: u32| (a[(4 * r + g / 2) as usize] >> (16 * (g % 2))) & 0xFFFF;
    element(2 * t) | element(2 * t + 1) << 16
}

/// `stmatrix`: the 16-bit element at row `r`, column `c` of matrix `j` as stored, from
/// every lane's registers (`regs[lane][j]`); the inverse of [`ldmatrix_reg`].
pub(super) fn stmatrix_element(l: &Ldmatrix, regs: &[[u32; 4]; 32], j: u32, r: u32, c: u32) -> u16 {
    // Without .trans lane 4r + c/2 holds row r, columns c & !1 and c | 1; with .trans
    // lane 4c + r/2 holds column c, rows r & !1 and r | 1.
    let (lane, half) = if l.trans {
        (4 * c + r / 2, r % 2)
    } else {
        (4 * r + c / 2, c % 2)
    };
    let v = regs[lane as usize][j as usize];
    (v >> (16 * half)) as u16
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
            b_ty: ab,
            c_ty: c,
            satfinite: false,
            bit_op: None,
            rnd: None,
            sparse: None,
        }
    }

    /// Every (shape, input type) `mma.sync`/`wmma` supports.
    const SHAPES: [(MmaShape, ScalarType); 23] = [
        (MmaShape::M16n16k8, Tf32),
        (MmaShape::M16n16k16, S8),
        (MmaShape::M32n8k16, U8),
        (MmaShape::M8n32k16, S8),
        (MmaShape::M8n8k32, U4),
        (MmaShape::M8n8k128, B1),
        (MmaShape::M16n8k16, F16),
        (MmaShape::M16n8k8, F16),
        (MmaShape::M16n16k16, F16),
        (MmaShape::M16n8k8, Tf32),
        (MmaShape::M16n8k4, Tf32),
        (MmaShape::M16n8k16, S8),
        (MmaShape::M16n8k32, U8),
        (MmaShape::M8n8k4, F64),
        (MmaShape::M16n8k16, Bf16),
        (MmaShape::M16n8k8, Bf16),
        (MmaShape::M8n8k16, S8),
        (MmaShape::M8n8k32, S4),
        (MmaShape::M16n8k32, U4),
        (MmaShape::M16n8k64, S4),
        (MmaShape::M16n8k32, E4m3),
        (MmaShape::M16n8k16, E5m2),
        (MmaShape::M16n8k32, S8),
    ];

    #[test]
    fn every_element_of_every_fragment_has_exactly_one_owner() {
        for (shape, ty) in SHAPES {
            for frag in [Frag::A, Frag::B, Frag::Acc] {
                let (r, c) = frag.dims(shape);
                let mut seen = vec![0u32; (r * c) as usize];
                for lane in 0..32 {
                    for e in 0..frag.elements(shape) {
                        let (i, j) = coords(frag, shape, ty, lane, e);
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
        assert_eq!(coords(Frag::A, MmaShape::M16n8k16, F16, 5, 2), (9, 2));
        assert_eq!(coords(Frag::A, MmaShape::M16n8k16, F16, 5, 5), (1, 11));
        assert_eq!(coords(Frag::B, MmaShape::M16n8k16, F16, 5, 3), (11, 1));
        assert_eq!(coords(Frag::Acc, MmaShape::M16n8k16, F32, 5, 3), (9, 3));
        assert_eq!(coords(Frag::B, MmaShape::M16n8k8, F16, 5, 1), (3, 1));
    }

    #[test]
    fn the_isa_layouts_of_tf32_integer_and_f64_shapes() {
        // Lane 6: groupID 1, threadID_in_group 2, from the ISA's row/column formulas.
        // m16n8k8 .tf32: a1 row g+8, col t; a2 row g, col t+4; b1 row t+4, col g.
        assert_eq!(coords(Frag::A, MmaShape::M16n8k8, Tf32, 6, 1), (9, 2));
        assert_eq!(coords(Frag::A, MmaShape::M16n8k8, Tf32, 6, 2), (1, 6));
        assert_eq!(coords(Frag::B, MmaShape::M16n8k8, Tf32, 6, 1), (6, 1));
        // m16n8k4 .tf32: a1 row g+8, col t; b0 row t, col g.
        assert_eq!(coords(Frag::A, MmaShape::M16n8k4, Tf32, 6, 1), (9, 2));
        assert_eq!(coords(Frag::B, MmaShape::M16n8k4, Tf32, 6, 0), (2, 1));
        // m16n8k16 .s8: a5 row g+8, col 4t+1; b3 row 4t+3, col g.
        assert_eq!(coords(Frag::A, MmaShape::M16n8k16, S8, 6, 5), (9, 9));
        assert_eq!(coords(Frag::B, MmaShape::M16n8k16, S8, 6, 3), (11, 1));
        // m16n8k32 .u8: a6 row g+8, col 4t+2; a9 row g, col 4t+1+16; a13 row g+8,
        // col 4t+1+16; b6 row 4t+2+16, col g.
        assert_eq!(coords(Frag::A, MmaShape::M16n8k32, U8, 6, 6), (9, 10));
        assert_eq!(coords(Frag::A, MmaShape::M16n8k32, U8, 6, 9), (1, 25));
        assert_eq!(coords(Frag::A, MmaShape::M16n8k32, U8, 6, 13), (9, 25));
        assert_eq!(coords(Frag::B, MmaShape::M16n8k32, U8, 6, 6), (26, 1));
        // m16n8k32 C/D .s32: c3 row g+8, col 2t+1.
        assert_eq!(coords(Frag::Acc, MmaShape::M16n8k32, S32, 6, 3), (9, 5));
        // m8n8k4 .f64: a0 row g, col t; b0 row t, col g; c1 row g, col 2t+1.
        assert_eq!(coords(Frag::A, MmaShape::M8n8k4, F64, 6, 0), (1, 2));
        assert_eq!(coords(Frag::B, MmaShape::M8n8k4, F64, 6, 0), (2, 1));
        assert_eq!(coords(Frag::Acc, MmaShape::M8n8k4, F64, 6, 1), (1, 5));
    }

    /// Builds every lane's registers of a fragment from a row-major matrix of raw bits.
    fn pack(frag: Frag, shape: MmaShape, ty: ScalarType, m: &[u64]) -> [[u64; 8]; 32] {
        let (_, cols) = frag.dims(shape);
        let mut out = [[0u64; 8]; 32];
        for lane in 0..32 {
            for e in 0..frag.elements(shape) {
                let (i, j) = coords(frag, shape, ty, lane, e);
                set_bits(&mut out[lane as usize], ty, e, m[(i * cols + j) as usize]);
            }
        }
        out
    }

    /// D's raw bits at (i, j), wherever the layout puts them.
    fn d_at(d: &[[u64; 8]; 32], shape: MmaShape, ty: ScalarType, i: u32, j: u32) -> u64 {
        let (lane, e) = (0..32)
            .flat_map(|l| (0..Frag::Acc.elements(shape)).map(move |e| (l, e)))
            .find(|&(l, e)| coords(Frag::Acc, shape, ty, l, e) == (i, j))
            .unwrap();
        get_bits(&d[lane as usize], ty, e)
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
            let a: Vec<u64> = (0..m * k)
                .map(|x| u64::from(enc(val(x / k, x % k, 1), ab_ty)))
                .collect();
            let b: Vec<u64> = (0..k * n)
                .map(|x| u64::from(enc(val(x / n, x % n, 2), ab_ty)))
                .collect();
            let c: Vec<u64> = (0..m * n)
                .map(|x| u64::from(enc(val(x / n, x % n, 5) * 3.0, c_ty)))
                .collect();
            let d = multiply(
                &o,
                &pack(Frag::A, shape, ab_ty, &a),
                &pack(Frag::B, shape, ab_ty, &b),
                &pack(Frag::Acc, shape, c_ty, &c),
            );
            for i in 0..m {
                for j in 0..n {
                    let mut acc = to_f32(c[(i * n + j) as usize] as u32, c_ty);
                    for kk in 0..k {
                        let x = to_f32(a[(i * k + kk) as usize] as u32, ab_ty);
                        let y = to_f32(b[(kk * n + j) as usize] as u32, ab_ty);
                        acc = x.mul_add(y, acc);
                    }
                    let want = u64::from(from_f32(acc, d_ty));
                    assert_eq!(d_at(&d, shape, d_ty, i, j), want, "{shape:?} {i},{j}");
                }
            }
        }
        // A hand-computed value: all-ones A and B with C = 0.5 give k + 0.5.
        let o = op(MmaShape::M16n8k16, F32, F16, F32);
        let ones = [[0x3C00_3C00u64; 8]; 32];
        let c = [[u64::from(0.5f32.to_bits()); 8]; 32];
        let d = multiply(&o, &ones, &ones, &c);
        assert_eq!(f32::from_bits(d[31][3] as u32), 16.5);
    }

    #[test]
    fn f16_accumulators_round_to_nearest_even_once() {
        // 2048 + 1 is not an f16; the f32 sum is exact and rounds to 2048 (even).
        let o = op(MmaShape::M16n8k8, F16, F16, F16);
        let mut a = [[0u64; 8]; 32];
        let mut b = [[0u64; 8]; 32];
        // Lane 0 holds A[0][0..2] and B[0..2][0].
        a[0][0] = u64::from(f16(1.0));
        b[0][0] = u64::from(f16(1.0));
        let c = [[u64::from(f16(2048.0) | f16(2048.0) << 16); 8]; 32];
        let d = multiply(&o, &a, &b, &c);
        assert_eq!(get_bits(&d[0], F16, 0), u64::from(f16(2048.0)));
        a[0][0] = u64::from(f16(3.0));
        let d = multiply(&o, &a, &b, &c);
        assert_eq!(get_bits(&d[0], F16, 0), u64::from(f16(2052.0)));
    }

    /// Runs `op` on row-major matrices of raw element bits; returns D row-major.
    fn run(o: &MmaOp, a: &[u64], b: &[u64], c: &[u64]) -> Vec<u64> {
        let s = o.shape;
        let d = multiply(
            o,
            &pack(Frag::A, s, o.ab_ty, a),
            &pack(Frag::B, s, o.b_ty, b),
            &pack(Frag::Acc, s, o.c_ty, c),
        );
        let (m, n, _) = s.dims();
        (0..m * n)
            .map(|x| d_at(&d, s, o.d_ty, x / n, x % n))
            .collect()
    }

    #[test]
    fn tf32_inputs_ignore_their_low_13_mantissa_bits() {
        for shape in [MmaShape::M16n8k8, MmaShape::M16n8k4] {
            let o = op(shape, F32, Tf32, F32);
            let (m, n, k) = shape.dims();
            // A = 1 + 2^-20 (below tf32's precision: read as 1), B = 1.5 + 2^-10 (kept).
            let a = vec![u64::from((1.0f32 + 2f32.powi(-20)).to_bits()); (m * k) as usize];
            let b = vec![u64::from((1.5f32 + 2f32.powi(-10)).to_bits()); (k * n) as usize];
            let c = vec![u64::from(0.25f32.to_bits()); (m * n) as usize];
            let want = k as f32 * (1.5 + 2f32.powi(-10)) + 0.25;
            for (x, d) in run(&o, &a, &b, &c).into_iter().enumerate() {
                assert_eq!(f32::from_bits(d as u32), want, "{shape:?} element {x}");
            }
        }
    }

    #[test]
    fn integer_products_are_exact_and_wrap_or_saturate() {
        for (shape, a_ty, b_ty) in [
            (MmaShape::M16n8k16, S8, S8),
            (MmaShape::M16n8k32, S8, U8),
            (MmaShape::M16n8k32, U8, U8),
        ] {
            let mut o = op(shape, S32, a_ty, S32);
            o.b_ty = b_ty;
            let (m, n, k) = shape.dims();
            // A[i][kk] = (i + kk) % 7 - 3 (or as u8: + 3), B[kk][j] = 200 - kk - j.
            let av = |i: u32, kk: u32| {
                let v = ((i + kk) % 7) as i64 - 3;
                if a_ty == U8 {
                    v + 3
                } else {
                    v
                }
            };
            let bv = |kk: u32, j: u32| {
                let v = 200 - kk as i64 - j as i64;
                if b_ty == S8 {
                    v - 128
                } else {
                    v
                }
            };
            let a: Vec<u64> = (0..m * k).map(|x| av(x / k, x % k) as u8 as u64).collect();
            let b: Vec<u64> = (0..k * n).map(|x| bv(x / n, x % n) as u8 as u64).collect();
            let cv = |i: u32, j: u32| i as i64 * 1000 - j as i64;
            let c: Vec<u64> = (0..m * n)
                .map(|x| cv(x / n, x % n) as i32 as u32 as u64)
                .collect();
            let d = run(&o, &a, &b, &c);
            for i in 0..m {
                for j in 0..n {
                    let want = (0..k).fold(cv(i, j), |acc, kk| acc + av(i, kk) * bv(kk, j));
                    assert_eq!(
                        d[(i * n + j) as usize] as u32 as i32 as i64,
                        want,
                        "{shape:?} {a_ty:?}x{b_ty:?} D[{i}][{j}]"
                    );
                }
            }
        }
        // Near the s32 limit: 2^31 - 10 + 16 * (1 * 1) wraps, or saturates with .satfinite.
        let mut o = op(MmaShape::M16n8k16, S32, S8, S32);
        let ones = vec![1u64; 256];
        let c = vec![u64::from((i32::MAX - 10) as u32); 128];
        assert_eq!(run(&o, &ones, &ones, &c)[0] as u32, (i32::MIN + 5) as u32);
        o.satfinite = true;
        assert_eq!(run(&o, &ones, &ones, &c)[0] as u32, i32::MAX as u32);
        let minus = vec![u64::from((-1i8) as u8); 256];
        let c = vec![u64::from((i32::MIN + 3) as u32); 128];
        assert_eq!(run(&o, &minus, &ones, &c)[0] as u32, i32::MIN as u32);
    }

    #[test]
    fn f64_m8n8k4_is_an_f64_fma_chain() {
        let o = op(MmaShape::M8n8k4, F64, F64, F64);
        let av = |i: u32, kk: u32| 1.0 + f64::from(i * 4 + kk) * 2f64.powi(-40);
        let bv = |kk: u32, j: u32| f64::from(kk + 1) / 3.0 + f64::from(j);
        let a: Vec<u64> = (0..32).map(|x| av(x / 4, x % 4).to_bits()).collect();
        let b: Vec<u64> = (0..32).map(|x| bv(x / 8, x % 8).to_bits()).collect();
        let c: Vec<u64> = (0..64).map(|x| (f64::from(x) * 0.1).to_bits()).collect();
        let d = run(&o, &a, &b, &c);
        for i in 0..8 {
            for j in 0..8 {
                let want = (0..4).fold(f64::from(i * 8 + j) * 0.1, |acc, kk| {
                    av(i, kk).mul_add(bv(kk, j), acc)
                });
                assert_eq!(f64::from_bits(d[(i * 8 + j) as usize]), want, "D[{i}][{j}]");
            }
        }
        // Hand-computed: all-ones A and B, C = 0.5: k + 0.5.
        let one = vec![1f64.to_bits(); 64];
        let half = vec![0.5f64.to_bits(); 64];
        assert!(run(&o, &one, &one, &half)
            .iter()
            .all(|&x| f64::from_bits(x) == 4.5));
    }

    /// The CPU reference of movmatrix: the matrix written out row-major, transposed as
    /// an array, and handed back in ldmatrix's layout.
    fn fragments_of(m: &[[u16; 8]; 8]) -> [u32; 32] {
        std::array::from_fn(|lane| {
            let (g, t) = (lane / 4, lane % 4);
            u32::from(m[g][2 * t]) | u32::from(m[g][2 * t + 1]) << 16
        })
    }

    #[test]
    fn movmatrix_transposes_the_warps_8x8_matrix() {
        // Distinct elements whose halves differ, so a swapped half or lane shows.
        let m: [[u16; 8]; 8] = std::array::from_fn(|r| {
            std::array::from_fn(|c| (0x1000 * (r as u16 + 1)) | (0x10 * c as u16) | 7)
        });
        let mt: [[u16; 8]; 8] = std::array::from_fn(|r| std::array::from_fn(|c| m[c][r]));
        let a = fragments_of(&m);
        let want = fragments_of(&mt);
        for lane in 0..32 {
            assert_eq!(movmatrix_reg(&a, lane), want[lane as usize], "lane {lane}");
        }
        // Known answers straight from the layout: lane 0 holds column 0, rows 0 and 1;
        // lane 13 (g = 3, t = 1) column 3, rows 2 and 3.
        assert_eq!(
            movmatrix_reg(&a, 0),
            u32::from(m[0][0]) | u32::from(m[1][0]) << 16
        );
        assert_eq!(movmatrix_reg(&a, 13), 0x4037_3037);
        // Transposing the transpose gives the source back.
        let again: [u32; 32] = std::array::from_fn(|l| movmatrix_reg(&want, l as u32));
        assert_eq!(again, a);
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

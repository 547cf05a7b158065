//! `mma.sp` and `mma.sp::ordered_metadata` (PTX ISA §9.7.14.6, "Matrix multiply-accumulate
//! operation using mma.sp instruction with sparse matrix A"): A is decompressed with its
//! metadata into the dense M x K matrix and the product is the dense `mma`'s
//! ([`super::matrix::product`]), bit for bit.
//!
//! Storage (ISA "Sparse matrix storage"). Each row of A is cut into chunks: 4-wide with
//! 2 non-zeros (`.f16`, `.bf16`, `.s8`, `.u8`, `.e4m3`, `.e5m2`), 2-wide with 1 (`.tf32`)
//! or 8-wide with two non-zero pairs (`.s4`, `.u4`). The stored K/2 elements of a row
//! are A's fragment of the dense shape with half the K (the ISA's sparse A layouts:
//! `firstcol` is twice that shape's column), in order, chunk by chunk. A chunk's 4-bit
//! metadata holds two 2-bit indices, the first stored element's in bits 0-1 and the
//! second's in bits 2-3: the position of each (4-bit types: of each pair) in the chunk.
//! `.tf32`'s nibble counts 16-bit halves: 0b0100 is the chunk's element 0, 0b1110 its
//! element 1.
//!
//! Metadata registers ("Matrix fragments for multiply-accumulate operation with sparse
//! matrix A", the metadata figures; the sparsity selector's list in "Sparse matrix
//! storage"). A group of four threads (lanes 4g..4g+3) holds rows g and g+8; a row has K/w
//! chunks (w the chunk width), 4, 8 or 16 nibbles, so one thread, a pair or all four hold
//! the group's metadata, each 16 bits of each row: bits 0-15 row g, bits 16-31 row g+8,
//! nibble `i` (bits 4i..4i+3 of the half) the row's chunk `4j + i` for the `j`-th
//! thread of the selected set. The selector picks the set: lane `4g + sel` (one thread),
//! lanes `4g + 2 sel + j` (a pair), lanes `4g + j` (all; sel = 0). Our reading of the
//! figures, which are images; the pair layout agrees with LLVM's sm_80 integration test of
//! m16n8k32 f16 (`mlir/test/Integration/GPU/CUDA/sm80/sparse-mma-2-4-f16.mlir`: the
//! thread pair's lower 16 bits are row g's K-half, the upper row g+8's).
//!
//! Invalid metadata. The ISA leaves it undefined: `mma.sp` chunks whose two indices are
//! equal (0b0000, 0b0101, 0b1010, 0b1111); for `::ordered_metadata` (and for fp8) any
//! chunk whose indices do not increase; for `.tf32` any nibble but 0b0100 and 0b1110.
//! regsim stops the kernel with an `mma.sp:` error naming the lane holding the nibble,
//! the row, the chunk and its value (our choice: a located error rather than an invented
//! result, so that a wrong metadata computation is found where it happens).

use ir::op::{sparse_chunk_width, MmaOp, ScalarType};

use super::matrix::{a_value, coords, product, Frag, A_MAX};

/// The lane holding `row`'s metadata nibble for `chunk`, and the nibble's bit position,
/// for a product of K `k` with `ty` inputs.
pub(super) fn meta_place(
    ty: ScalarType,
    k: u32,
    selector: u32,
    row: u32,
    chunk: u32,
) -> (u32, u32) {
    let threads = (k / sparse_chunk_width(ty) / 4).max(1);
    let lane = 4 * (row % 8) + selector * threads + chunk / 4;
    (lane, 16 * (row / 8) + 4 * (chunk % 4))
}

/// Whether a nibble is meaningful (see the module docs); `fp8_ordered`: mma.sp's fp8
/// forms, whose list has the increasing pairs only.
fn nibble_ok(ty: ScalarType, ordered: bool, fp8_ordered: bool, v: u32) -> bool {
    let (i0, i1) = (v & 3, v >> 2);
    match ty {
        ScalarType::Tf32 => v == 0b0100 || v == 0b1110,
        ScalarType::E4m3 | ScalarType::E5m2 if fp8_ordered => i0 < i1,
        _ if ordered => i0 < i1,
        _ => i0 != i1,
    }
}

/// How one sparse product reads its metadata.
pub(super) struct Sparse<'a> {
    pub ty: ScalarType,
    /// The dense K of the rows (a warp's 16).
    pub k: u32,
    pub ordered: bool,
    pub fp8_ordered: bool,
    pub selector: u32,
    pub meta: &'a [u32; 32],
    /// The instruction, for messages (`mma.sp.m16n8k16.f16`).
    pub what: String,
}

impl Sparse<'_> {
    /// The dense column of the stored element at row `r` (0..16), column `c` of the
    /// compressed K/2; `Err((lane, message))` for a nibble the ISA leaves undefined.
    pub(super) fn dense_col(&self, r: u32, c: u32) -> Result<u32, (usize, String)> {
        let ty = self.ty;
        let width = sparse_chunk_width(ty);
        let stored = (width / 2).max(1);
        let unit = if matches!(ty, ScalarType::S4 | ScalarType::U4) {
            2
        } else {
            1
        };
        let chunk = c / stored;
        let (holder, shift) = meta_place(ty, self.k, self.selector, r, chunk);
        let nibble = (self.meta[holder as usize] >> shift) & 0xF;
        if !nibble_ok(ty, self.ordered, self.fp8_ordered, nibble) {
            return Err((
                holder as usize,
                format!(
                    "the metadata of row {r}, chunk {chunk} (bits {}..{} of lane {holder}'s \
                     metadata register) is {nibble:#06b}, which the PTX ISA leaves undefined \
                     for {}",
                    shift + 3,
                    shift,
                    self.what,
                ),
            ));
        }
        Ok(if ty == ScalarType::Tf32 {
            2 * chunk + u32::from(nibble == 0b1110)
        } else {
            let p = c % stored;
            let (slot, sub) = (p / unit, p % unit);
            let index = (nibble >> (2 * slot)) & 3;
            chunk * width + index * unit + sub
        })
    }
}

/// Dense A (row-major, M x K) from every lane's compressed A registers and metadata
/// register; `Err((lane, message))` for a nibble the ISA leaves undefined.
pub(super) fn decompress(
    op: &MmaOp,
    a: &[[u64; 8]; 32],
    meta: &[u32; 32],
) -> Result<[f64; A_MAX], (usize, String)> {
    let sp = op.sparse.expect("decompress of a dense mma");
    let ty = op.ab_ty;
    let k = op.shape.dims().2;
    let s = Sparse {
        ty,
        k,
        ordered: sp.ordered,
        fp8_ordered: true,
        selector: u32::from(sp.selector),
        meta,
        what: format!(
            "mma.sp{}.{}.{ty}",
            if sp.ordered { "::ordered_metadata" } else { "" },
            op.shape.as_str()
        ),
    };
    let a_shape = op.a_shape();
    let mut am = [0f64; A_MAX];
    for lane in 0..32u32 {
        for e in 0..Frag::A.elements(a_shape) {
            let (r, c) = coords(Frag::A, a_shape, ty, lane, e);
            let col = s.dense_col(r, c)?;
            am[(r * k + col) as usize] = a_value(a, ty, lane, e);
        }
    }
    Ok(am)
}

/// `mma.sp`: D = decompress(A) x B + C for the whole warp.
pub(super) fn multiply(
    op: &MmaOp,
    a: &[[u64; 8]; 32],
    b: &[[u64; 8]; 32],
    c: &[[u64; 8]; 32],
    meta: &[u32; 32],
) -> Result<[[u64; 8]; 32], (usize, String)> {
    let am = decompress(op, a, meta)?;
    Ok(product(op, &am, b, c))
}

#[cfg(test)]
#[path = "matrix_sparse_tests.rs"]
mod tests;

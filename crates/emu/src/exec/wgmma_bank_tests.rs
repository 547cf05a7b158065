//! Bank behaviour of the tensor cores' shared-memory reads under the matrix descriptor's
//! layouts (PTX ISA 8.0, wgmma "Shared Memory Matrix Layout", "Matrix Descriptor
//! Format"): why the timing model books a warp's `wgmma` operands as whole 128-byte passes
//! without conflicts (`shared_memory.tensor_passes`).
//!
//! Our model of a read (the ISA and NVIDIA are silent on the grouping): the tensor core
//! reads one core matrix (8 rows of 16 bytes) per pass from 32 banks of 4 bytes, that is
//! 8 groups of 4 banks, one 16-byte chunk each; chunks in the same group are served in
//! successive passes. Under every swizzle mode and both majors, [`Descriptor::address`]
//! puts the 8 rows of each core matrix in 8 distinct groups (no swizzle: the 8 rows are
//! 128 contiguous bytes; 32/64/128-byte swizzles: rows W bytes apart, permuted by the XOR
//! of bits [7, 7+b) into bits [4, 4+b)), so one pass each. A conflict needs a layout the
//! descriptor cannot express, such as a plain row-major tile with 128-byte rows.

use super::Descriptor;

/// Passes one core matrix takes: the most chunks in one 16-byte bank group.
fn passes(chunks: &[u64]) -> u32 {
    let mut groups = [0u32; 8];
    for a in chunks {
        groups[((a >> 4) & 7) as usize] += 1;
    }
    groups.into_iter().max().unwrap_or(0)
}

/// Every core matrix of a 64 x 64 (MN x K) region of f16 (2-byte) elements in `d`'s
/// layout: the pass count of each.
fn core_matrix_passes(d: &Descriptor, mn_major: bool) -> Vec<u32> {
    let esize = 2;
    let t = 16 / esize;
    let mut out = Vec::new();
    for mn0 in (0..64).step_by(if mn_major { t as usize } else { 8 }) {
        for k0 in (0..64).step_by(if mn_major { 8 } else { t as usize }) {
            let chunks: Vec<u64> = (0..8)
                .map(|i| {
                    if mn_major {
                        d.address(true, mn0, k0 + i, esize)
                    } else {
                        d.address(false, mn0 + i, k0, esize)
                    }
                })
                .collect();
            // Each row of the core matrix is one aligned 16-byte chunk.
            assert!(chunks.iter().all(|a| a % 16 == 0), "{d:?}: {chunks:x?}");
            out.push(passes(&chunks));
        }
    }
    out
}

#[test]
fn every_swizzle_mode_reads_a_core_matrix_in_one_pass() {
    for w in [0u64, 32, 64, 128] {
        for mn_major in [false, true] {
            // Canonical offsets: unswizzled core matrices 128 bytes apart along the
            // leading dimension; swizzled atoms 8 rows of W bytes.
            let (lbo, sbo) = match (mn_major, w) {
                (_, 0) => (128, 8 * 128),
                (false, w) => (16, 8 * w),
                (true, w) => (8 * w, 8 * w * 8),
            };
            let d = Descriptor {
                start: 0x2000,
                lbo,
                sbo,
                base_offset: 0,
                swizzle_bytes: w,
            };
            let p = core_matrix_passes(&d, mn_major);
            assert!(!p.is_empty());
            assert!(
                p.iter().all(|&n| n == 1),
                "swizzle {w} B, mn_major {mn_major}: {p:?}"
            );
        }
    }
}

#[test]
fn a_row_major_tile_the_descriptor_cannot_express_would_conflict() {
    // 8 rows of a plain tile with 128-byte rows, read at the same column: one bank group,
    // 8 passes; the 128-byte swizzle of the same rows spreads them over all 8 groups.
    let plain: Vec<u64> = (0..8).map(|r| 0x2000 + 128 * r).collect();
    assert_eq!(passes(&plain), 8);
    let swizzled: Vec<u64> = plain
        .iter()
        .map(|&a| crate::tensor_map::swizzle_address(a, 3))
        .collect();
    assert_eq!(passes(&swizzled), 1);
    // A 64-byte pitch: two rows per 128-byte bank row, so 4-way.
    let half: Vec<u64> = (0..8).map(|r| 0x2000 + 64 * r).collect();
    assert_eq!(passes(&half), 4);
}

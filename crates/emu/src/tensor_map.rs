//! Tensor maps for TMA (`cp.async.bulk.tensor`, PTX ISA 8.0, sm_90): what the driver
//! API's `cuTensorMapEncodeTiled` records in the 128-byte `CUtensorMap` a program passes
//! to its kernel, and the box a tiled copy moves.
//!
//! The `CUtensorMap` is opaque to programs; regsim writes its own encoding (below), which
//! the runtime ([`TensorMap::encode`]) and the emulator ([`TensorMap::decode`]) share, so
//! a map made any other way is refused with the reason. The requirements checked are the
//! ones `cuTensorMapEncodeTiled`'s documentation states (CUDA 12.9 `cuda.h`).
//!
//! Encoding (little-endian): bytes 0-3 the magic `b"RSTM"`, 4 the rank, 5 the data type,
//! 6 interleave, 7 swizzle, 8 L2 promotion, 9 out-of-bounds fill, 16-23 the global
//! address, 24-63 the five global dimensions (u64), 64-95 the strides of dimensions 1-4
//! in bytes (u64), 96-105 the box (u16 each), 106-110 the element strides (u8 each).

/// The data types of `CUtensorMapDataType` regsim moves: the element size in bytes and
/// whether it is a floating-point type (for the NaN fill).
fn data_type(code: u32) -> Option<(&'static str, u32, bool)> {
    Some(match code {
        0 => ("UINT8", 1, false),
        1 => ("UINT16", 2, false),
        2 => ("UINT32", 4, false),
        3 => ("INT32", 4, false),
        4 => ("UINT64", 8, false),
        5 => ("INT64", 8, false),
        6 => ("FLOAT16", 2, true),
        7 => ("FLOAT32", 4, true),
        8 => ("FLOAT64", 8, true),
        9 => ("BFLOAT16", 2, true),
        10 => ("FLOAT32_FTZ", 4, true),
        11 => ("TFLOAT32", 4, true),
        12 => ("TFLOAT32_FTZ", 4, true),
        _ => return None,
    })
}

const MAGIC: &[u8; 4] = b"RSTM";

/// A tiled tensor map: a tensor of `rank` dimensions (dimension 0 innermost) in global
/// memory and the box one copy moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorMap {
    pub rank: u32,
    /// `CUtensorMapDataType`.
    pub data_type: u32,
    pub global_address: u64,
    pub dims: [u64; 5],
    /// The byte strides of dimensions 1..rank (`strides[0]` is unused: elements are
    /// contiguous).
    pub strides: [u64; 5],
    pub box_dims: [u32; 5],
    pub element_strides: [u32; 5],
    /// `CUtensorMapInterleave` (only NONE is accepted).
    pub interleave: u32,
    /// `CUtensorMapSwizzle`: 0 none, 1, 2, 3 for 32, 64, 128 bytes.
    pub swizzle: u32,
    pub l2_promotion: u32,
    /// `CUtensorMapFloatOOBfill`: 0 zeros, 1 NaN.
    pub oob_fill: u32,
    /// A map of `cuTensorMapEncodeIm2col` (`crate::tensor_map_im2col`); `None` when tiled.
    pub im2col: Option<crate::tensor_map_im2col::Im2col>,
}

/// An element of a box: its byte offset in the box's dense shared-memory image and its
/// global address, `None` when it lies outside the tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BoxElement {
    pub offset: u64,
    pub global: Option<u64>,
}

impl TensorMap {
    /// The arguments of `cuTensorMapEncodeTiled`, checked. `global_strides` holds
    /// `rank - 1` values, the others `rank`. The error names the argument and the rule.
    #[allow(clippy::too_many_arguments)]
    pub fn tiled(
        data_type: u32,
        rank: u32,
        global_address: u64,
        global_dims: &[u64],
        global_strides: &[u64],
        box_dims: &[u32],
        element_strides: &[u32],
        interleave: u32,
        swizzle: u32,
        l2_promotion: u32,
        oob_fill: u32,
    ) -> Result<TensorMap, String> {
        let mut m = TensorMap {
            rank,
            data_type,
            global_address,
            dims: [1; 5],
            strides: [0; 5],
            box_dims: [1; 5],
            element_strides: [1; 5],
            interleave,
            swizzle,
            l2_promotion,
            oob_fill,
            im2col: None,
        };
        let n = rank as usize;
        if (1..=5).contains(&rank) {
            m.dims[..n].copy_from_slice(global_dims.get(..n).unwrap_or(&[]));
            m.strides[1..n].copy_from_slice(global_strides.get(..n - 1).unwrap_or(&[]));
            m.box_dims[..n].copy_from_slice(box_dims.get(..n).unwrap_or(&[]));
            m.element_strides[..n].copy_from_slice(element_strides.get(..n).unwrap_or(&[]));
        }
        m.check()?;
        Ok(m)
    }

    /// The element size in bytes.
    pub fn element_size(&self) -> u32 {
        data_type(self.data_type).map_or(1, |t| t.1)
    }

    /// The swizzle span in bytes (0 without swizzling).
    pub fn swizzle_span(&self) -> u32 {
        match self.swizzle {
            1 => 32,
            2 => 64,
            3 => 128,
            _ => 0,
        }
    }

    /// How many elements the box holds along dimension `i`: `ceil(box / stride)` (the
    /// element stride of dimension 0 is ignored).
    fn box_count(&self, i: usize) -> u64 {
        let s = if i == 0 { 1 } else { self.element_strides[i] };
        u64::from(self.box_dims[i]).div_ceil(u64::from(s.max(1)))
    }

    /// The bytes one copy moves (what it completes on the mbarrier).
    pub fn box_bytes(&self) -> u64 {
        if let Some(ic) = self.im2col {
            return u64::from(ic.channels_per_pixel)
                * u64::from(ic.pixels_per_column)
                * u64::from(self.element_size());
        }
        (0..self.rank as usize)
            .map(|i| self.box_count(i))
            .product::<u64>()
            * u64::from(self.element_size())
    }

    /// The box's elements in shared-memory order (dimension 0 fastest) for a box whose
    /// first element is at tensor coordinates `coords`.
    pub fn box_elements(&self, coords: &[i32]) -> impl Iterator<Item = BoxElement> + '_ {
        let n = self.rank as usize;
        let counts: Vec<u64> = (0..5)
            .map(|i| if i < n { self.box_count(i) } else { 1 })
            .collect();
        let total: u64 = counts.iter().product();
        let esize = u64::from(self.element_size());
        let origin: Vec<i64> = (0..5)
            .map(|i| coords.get(i).map_or(0, |&c| i64::from(c)))
            .collect();
        (0..total).map(move |e| {
            let mut rest = e;
            let mut addr = self.global_address;
            let mut inside = true;
            for i in 0..n {
                let k = rest % counts[i];
                rest /= counts[i];
                let step = if i == 0 { 1 } else { self.element_strides[i] };
                let c = origin[i] + (k * u64::from(step)) as i64;
                if c < 0 || c as u64 >= self.dims[i] {
                    inside = false;
                } else {
                    let stride = if i == 0 { esize } else { self.strides[i] };
                    addr = addr.wrapping_add(c as u64 * stride);
                }
            }
            BoxElement {
                offset: e * esize,
                global: inside.then_some(addr),
            }
        })
    }

    /// The bytes of one out-of-bounds element: zero, or with the NaN fill a quiet NaN of
    /// the element's format (regsim's choice; the driver does not document its constant).
    pub fn fill_value(&self) -> u64 {
        if self.oob_fill != 1 {
            return 0;
        }
        match self.data_type {
            6 | 9 => 0x7FFF,
            8 => 0x7FFF_FFFF_FFFF_FFFF,
            _ => 0x7FFF_FFFF,
        }
    }

    /// The documented requirements of `cuTensorMapEncodeTiled`, and regsim's limits.
    fn check(&self) -> Result<(), String> {
        let n = self.rank as usize;
        if !(1..=5).contains(&self.rank) {
            return Err(format!("tensorRank {} is not from 1 to 5", self.rank));
        }
        let Some((ty, esize, float)) = data_type(self.data_type) else {
            return Err(if (13..=15).contains(&self.data_type) {
                format!(
                    "tensorDataType {} (a packed 4- or 6-bit type) is not supported by the \
                     simulator",
                    self.data_type
                )
            } else {
                format!(
                    "tensorDataType {} is not a CUtensorMapDataType",
                    self.data_type
                )
            });
        };
        match self.interleave {
            0 => {}
            1 | 2 => {
                return Err(format!(
                    "interleave {} (an interleaved layout) is not supported by the simulator; \
                     use CU_TENSOR_MAP_INTERLEAVE_NONE",
                    self.interleave
                ))
            }
            i => return Err(format!("interleave {i} is not a CUtensorMapInterleave")),
        }
        match self.swizzle {
            0..=3 => {}
            4..=6 => {
                return Err(format!(
                    "swizzle {} (a 128-byte swizzle of 32- or 64-byte atoms) is not supported \
                     by the simulator",
                    self.swizzle
                ))
            }
            s => return Err(format!("swizzle {s} is not a CUtensorMapSwizzle")),
        }
        if self.l2_promotion > 3 {
            return Err(format!(
                "l2Promotion {} is not a CUtensorMapL2promotion",
                self.l2_promotion
            ));
        }
        match self.oob_fill {
            0 => {}
            1 if float => {}
            1 => {
                return Err(format!(
                    "oobFill NAN_REQUEST_ZERO_FMA needs a floating-point tensorDataType, not \
                     {ty}"
                ))
            }
            f => return Err(format!("oobFill {f} is not a CUtensorMapFloatOOBfill")),
        }
        if !self.global_address.is_multiple_of(16) {
            return Err(format!(
                "globalAddress {:#x} is not 16-byte aligned",
                self.global_address
            ));
        }
        for i in 0..n {
            let d = self.dims[i];
            if d == 0 || d > 1 << 32 {
                return Err(format!("globalDim[{i}] = {d} is not from 1 to 2^32"));
            }
            let b = self.box_dims[i];
            if b == 0 || b > 256 {
                return Err(format!("boxDim[{i}] = {b} is not from 1 to 256"));
            }
            let e = self.element_strides[i];
            if e == 0 || e > 8 {
                return Err(format!("elementStrides[{i}] = {e} is not from 1 to 8"));
            }
        }
        for i in 1..n {
            let s = self.strides[i];
            if !s.is_multiple_of(16) || s >= 1 << 40 {
                return Err(format!(
                    "globalStrides[{}] = {s} is not a multiple of 16 below 2^40",
                    i - 1
                ));
            }
        }
        let inner = u64::from(self.box_dims[0]) * u64::from(esize);
        if !inner.is_multiple_of(16) {
            return Err(format!(
                "boxDim[0] * {esize} bytes ({ty}) = {inner} bytes is not a multiple of 16"
            ));
        }
        let span = u64::from(self.swizzle_span());
        if span != 0 && inner > span {
            return Err(format!(
                "the box's inner dimension ({inner} bytes) is wider than the {span}-byte swizzle"
            ));
        }
        Ok(())
    }

    /// The 128 bytes of a `CUtensorMap` in regsim's encoding.
    pub fn encode(&self) -> [u8; 128] {
        let mut b = [0u8; 128];
        b[0..4].copy_from_slice(MAGIC);
        b[4] = self.rank as u8;
        b[5] = self.data_type as u8;
        b[6] = self.interleave as u8;
        b[7] = self.swizzle as u8;
        b[8] = self.l2_promotion as u8;
        b[9] = self.oob_fill as u8;
        b[16..24].copy_from_slice(&self.global_address.to_le_bytes());
        for i in 0..5 {
            b[24 + 8 * i..32 + 8 * i].copy_from_slice(&self.dims[i].to_le_bytes());
            if i > 0 {
                b[64 + 8 * (i - 1)..72 + 8 * (i - 1)]
                    .copy_from_slice(&self.strides[i].to_le_bytes());
            }
            b[96 + 2 * i..98 + 2 * i].copy_from_slice(&(self.box_dims[i] as u16).to_le_bytes());
            b[106 + i] = self.element_strides[i] as u8;
        }
        crate::tensor_map_im2col::encode(self, &mut b);
        b
    }

    /// A `CUtensorMap` read back: refused, with the reason, unless it is a valid map in
    /// regsim's encoding.
    pub fn decode(b: &[u8; 128]) -> Result<TensorMap, String> {
        if &b[0..4] != MAGIC {
            return Err("it is not a tensor map made by cuTensorMapEncodeTiled".into());
        }
        let u64_at = |o: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&b[o..o + 8]);
            u64::from_le_bytes(w)
        };
        let mut m = TensorMap {
            rank: u32::from(b[4]),
            data_type: u32::from(b[5]),
            global_address: u64_at(16),
            dims: [1; 5],
            strides: [0; 5],
            box_dims: [1; 5],
            element_strides: [1; 5],
            interleave: u32::from(b[6]),
            swizzle: u32::from(b[7]),
            l2_promotion: u32::from(b[8]),
            oob_fill: u32::from(b[9]),
            im2col: None,
        };
        for i in 0..5 {
            m.dims[i] = u64_at(24 + 8 * i);
            if i > 0 {
                m.strides[i] = u64_at(64 + 8 * (i - 1));
            }
            m.box_dims[i] = u32::from(u16::from_le_bytes([b[96 + 2 * i], b[97 + 2 * i]]));
            m.element_strides[i] = u32::from(b[106 + i]);
        }
        crate::tensor_map_im2col::decode(&mut m, b)
            .map_err(|e| format!("the tensor map is corrupt: {e}"))?;
        m.check()
            .map_err(|e| format!("the tensor map is corrupt: {e}"))?;
        Ok(m)
    }
}

/// The shared-memory address of the 16-byte chunk at `addr` under a swizzle of
/// `swizzle` (0 none, 1..3 for 32, 64, 128 bytes): address bits [4, 4+b) XOR bits
/// [7, 7+b), the pattern CUTLASS names `Swizzle<b, 4, 3>`.
pub fn swizzle_address(addr: u64, swizzle: u32) -> u64 {
    let b = swizzle.min(3);
    addr ^ (((addr >> 7) & ((1 << b) - 1)) << 4)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map_2d(swizzle: u32, oob_fill: u32) -> Result<TensorMap, String> {
        // 10 rows of 20 floats, rows 96 bytes apart; a box of 8 x 4.
        TensorMap::tiled(
            7,
            2,
            0x1000,
            &[20, 10],
            &[96],
            &[8, 4],
            &[1, 1],
            0,
            swizzle,
            0,
            oob_fill,
        )
    }

    #[test]
    fn encoding_round_trips_and_rejects_other_bytes() {
        let m = map_2d(1, 1).unwrap();
        assert_eq!(TensorMap::decode(&m.encode()), Ok(m));
        assert_eq!(m.box_bytes(), 8 * 4 * 4);
        let err = TensorMap::decode(&[0u8; 128]).unwrap_err();
        assert!(
            err.contains("not a tensor map made by cuTensorMapEncodeTiled"),
            "{err}"
        );
        let mut b = m.encode();
        b[4] = 9;
        assert!(TensorMap::decode(&b).unwrap_err().contains("tensorRank 9"));
    }

    #[test]
    fn each_documented_requirement_is_checked() {
        let bad = [
            (
                TensorMap::tiled(7, 0, 0, &[], &[], &[], &[], 0, 0, 0, 0),
                "tensorRank 0",
            ),
            (
                TensorMap::tiled(13, 1, 0, &[16], &[], &[16], &[1], 0, 0, 0, 0),
                "packed",
            ),
            (
                TensorMap::tiled(99, 1, 0, &[16], &[], &[16], &[1], 0, 0, 0, 0),
                "not a CUtensorMapDataType",
            ),
            (
                TensorMap::tiled(7, 1, 8, &[16], &[], &[16], &[1], 0, 0, 0, 0),
                "16-byte aligned",
            ),
            (
                TensorMap::tiled(7, 1, 0, &[0], &[], &[16], &[1], 0, 0, 0, 0),
                "globalDim[0] = 0",
            ),
            (
                TensorMap::tiled(7, 1, 0, &[16], &[], &[257], &[1], 0, 0, 0, 0),
                "boxDim[0] = 257",
            ),
            (
                TensorMap::tiled(7, 1, 0, &[16], &[], &[6], &[1], 0, 0, 0, 0),
                "multiple of 16",
            ),
            (
                TensorMap::tiled(7, 1, 0, &[16], &[], &[16], &[9], 0, 0, 0, 0),
                "elementStrides[0] = 9",
            ),
            (
                TensorMap::tiled(7, 2, 0, &[16, 4], &[72], &[16, 4], &[1, 1], 0, 0, 0, 0),
                "globalStrides[0] = 72",
            ),
            (
                TensorMap::tiled(7, 1, 0, &[64], &[], &[16], &[1], 0, 1, 0, 0),
                "wider than the 32-byte swizzle",
            ),
            (
                TensorMap::tiled(7, 1, 0, &[16], &[], &[16], &[1], 1, 0, 0, 0),
                "interleave 1",
            ),
            (
                TensorMap::tiled(7, 1, 0, &[16], &[], &[16], &[1], 0, 4, 0, 0),
                "swizzle 4",
            ),
            (
                TensorMap::tiled(7, 1, 0, &[16], &[], &[16], &[1], 0, 0, 4, 0),
                "l2Promotion 4",
            ),
            (
                TensorMap::tiled(3, 1, 0, &[16], &[], &[16], &[1], 0, 0, 0, 1),
                "floating-point",
            ),
        ];
        for (r, want) in bad {
            let e = r.unwrap_err();
            assert!(e.contains(want), "{e} lacks {want}");
        }
    }

    #[test]
    fn a_box_past_the_edges_has_no_address_there() {
        let m = map_2d(0, 0).unwrap();
        // The box at (16, 8): columns 16..24 and rows 8..12 of a 20 x 10 tensor.
        let els: Vec<BoxElement> = m.box_elements(&[16, 8]).collect();
        assert_eq!(els.len(), 32);
        assert_eq!(els[0].global, Some(0x1000 + 8 * 96 + 16 * 4));
        assert_eq!(els[3].global, Some(0x1000 + 8 * 96 + 19 * 4));
        assert_eq!(els[4].global, None); // column 20
        assert_eq!(els[9].global, Some(0x1000 + 9 * 96 + 17 * 4));
        assert!(els[16..].iter().all(|e| e.global.is_none())); // rows 10, 11
        assert_eq!(els[31].offset, 31 * 4);
        // Negative coordinates are outside too.
        assert_eq!(m.box_elements(&[-1, 0]).next().unwrap().global, None);
        // Element strides: every second row, so a box of 4 rows holds 2.
        let s = TensorMap::tiled(7, 2, 0, &[20, 10], &[96], &[8, 4], &[1, 2], 0, 0, 0, 0).unwrap();
        assert_eq!(s.box_bytes(), 8 * 2 * 4);
        assert_eq!(s.box_elements(&[0, 0]).nth(8).unwrap().global, Some(2 * 96));
        assert_eq!(map_2d(0, 1).unwrap().fill_value(), 0x7FFF_FFFF);
    }

    #[test]
    fn swizzles_permute_16_byte_chunks_within_their_span() {
        // 128 B: row r of 128 bytes has its chunks XORed with r % 8.
        assert_eq!(swizzle_address(3 * 128 + 16, 3), 3 * 128 + (1 ^ 3) * 16);
        assert_eq!(
            swizzle_address(9 * 128 + 5 * 16 + 4, 3),
            9 * 128 + (5 ^ 1) * 16 + 4
        );
        // 64 B: bits [4,6) XOR bits [7,9); 32 B: bit 4 XOR bit 7.
        assert_eq!(swizzle_address(2 * 128 + 16, 2), 2 * 128 + (1 ^ 2) * 16);
        assert_eq!(swizzle_address(128, 1), 128 + 16);
        assert_eq!(swizzle_address(128 + 16, 1), 128);
        assert_eq!(swizzle_address(7 * 128 + 48, 0), 7 * 128 + 48);
    }
}

//! The im2col mode of tensor copies (PTX ISA 8.0 §5.5.4, "im2col mode";
//! `cuTensorMapEncodeIm2col`): a 3-, 4- or 5-D tensor is a batch of images (NWC, NHWC,
//! NDHWC; dimension 0 is C, then W, H, D, and N last), and one copy loads
//! `pixels_per_column` pixels of `channels_per_pixel` channels each, a row of channels per
//! pixel in shared memory.
//!
//! From the ISA: the Bounding Box lives in DHW space between its Lower- and Upper-Corner;
//! the instruction's coordinates give the starting channel (C), the image (N) and, in DHW,
//! the convolution filter's base, which must lie within the Bounding Box; the im2col
//! offsets are added to the filter base to give the pixel that is read; the number of
//! pixels is Pixels-per-Column (the corners bound, they do not count); traversal strides
//! step D, H and W; pixels past the image batch, and pixels outside the tensor, are filled
//! (zero or the NaN fill).
//!
//! Our reading where the ISA's text leaves it to its figures (not compared with an H100):
//! the Lower-Corner is a coordinate of the tensor (so -1 is one pixel of padding before
//! it) and the Upper-Corner is relative to the last pixel, the box spanning
//! `lower ..= size - 1 + upper` in each of D, H, W (the ISA's examples: corners -1/-1 for a
//! 3x3 filter with one pixel of padding, 0/-2 for one without); the filter base walks W
//! first, then H, then D, each restarting at the box's lower corner, and then the next
//! image N.

use crate::tensor_map::{BoxElement, TensorMap};

/// The im2col fields of a tensor map (`cuTensorMapEncodeIm2col`'s arguments).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Im2col {
    /// `pixelBoxLowerCorner`, W first (index 0 is W, 1 H, 2 D).
    pub lower: [i32; 3],
    /// `pixelBoxUpperCorner`, W first.
    pub upper: [i32; 3],
    pub channels_per_pixel: u32,
    pub pixels_per_column: u32,
}

/// The corners' limit by rank (ISA: [-2^15, 2^15-1] for 3-D, [-2^7, 2^7-1] 4-D,
/// [-2^4, 2^4-1] 5-D), and the im2col offsets' upper bound (2^16-1, 2^8-1, 2^5-1).
fn limits(rank: u32) -> (i32, u32) {
    match rank {
        3 => (1 << 15, (1 << 16) - 1),
        4 => (1 << 7, (1 << 8) - 1),
        _ => (1 << 4, (1 << 5) - 1),
    }
}

impl TensorMap {
    /// The arguments of `cuTensorMapEncodeIm2col`, checked. The corners hold `rank - 2`
    /// values in the driver's order: W first (the tensor's dimension 1). The error names
    /// the argument and the rule.
    #[allow(clippy::too_many_arguments)]
    pub fn im2col(
        data_type: u32,
        rank: u32,
        global_address: u64,
        global_dims: &[u64],
        global_strides: &[u64],
        lower: &[i32],
        upper: &[i32],
        channels_per_pixel: u32,
        pixels_per_column: u32,
        element_strides: &[u32],
        interleave: u32,
        swizzle: u32,
        l2_promotion: u32,
        oob_fill: u32,
    ) -> Result<TensorMap, String> {
        if !(3..=5).contains(&rank) {
            return Err(format!(
                "tensorRank {rank} is not from 3 to 5 (im2col needs a batch of images)"
            ));
        }
        if !(1..=1024).contains(&pixels_per_column) {
            return Err(format!(
                "pixelsPerColumn = {pixels_per_column} is not from 1 to 1024"
            ));
        }
        let spatial = rank as usize - 2;
        let (limit, _) = limits(rank);
        let mut corners = [[0i32; 3]; 2];
        for (k, (name, src)) in [
            ("pixelBoxLowerCorner", lower),
            ("pixelBoxUpperCorner", upper),
        ]
        .into_iter()
        .enumerate()
        {
            for (i, corner) in corners[k].iter_mut().enumerate().take(spatial) {
                let v = src.get(i).copied().unwrap_or(0);
                if !(-limit..limit).contains(&v) {
                    return Err(format!(
                        "{name}[{i}] = {v} is not from {} to {} for a {rank}-D tensor",
                        -limit,
                        limit - 1
                    ));
                }
                *corner = v;
            }
        }
        // The box of the tiled checks: channels by pixels (channels within 1..256, their
        // bytes a multiple of 16 and within the swizzle span, as for a tiled box's rows).
        let mut m = TensorMap::tiled(
            data_type,
            rank,
            global_address,
            global_dims,
            global_strides,
            &[channels_per_pixel, 1, 1, 1, 1][..rank as usize],
            element_strides,
            interleave,
            swizzle,
            l2_promotion,
            oob_fill,
        )
        .map_err(|e| e.replace("boxDim[0]", "channelsPerPixel"))?;
        m.im2col = Some(Im2col {
            lower: corners[0],
            upper: corners[1],
            channels_per_pixel,
            pixels_per_column,
        });
        Ok(m)
    }

    /// The elements one im2col copy moves, in shared-memory order (channels of a pixel
    /// contiguous, then the next pixel): `coords` are the instruction's tensor coordinates
    /// (C, W, H, D, N in the tensor's order), `offsets` its im2col offsets (W first).
    /// An error names what is wrong (a map that is not im2col, an offset out of range, a
    /// filter base outside the Bounding Box).
    pub fn im2col_elements(
        &self,
        coords: &[i32],
        offsets: &[u32],
    ) -> Result<Vec<BoxElement>, String> {
        let Some(ic) = self.im2col else {
            return Err("it is a tiled map, the copy .im2col".into());
        };
        let rank = self.rank as usize;
        let spatial = rank - 2;
        let (_, max_offset) = limits(self.rank);
        if let Some(o) = offsets.iter().find(|&&o| o > max_offset) {
            return Err(format!(
                "im2col offset {o} is above {max_offset}, the largest for a {rank}-D tensor"
            ));
        }
        let dim = |i: usize| self.dims[i] as i64;
        // The box in each of W, H, D: lower ..= size - 1 + upper.
        let lo = |s: usize| i64::from(ic.lower[s]);
        let hi = |s: usize| dim(s + 1) - 1 + i64::from(ic.upper[s]);
        let mut base = [0i64; 3];
        for (s, b) in base.iter_mut().enumerate().take(spatial) {
            *b = i64::from(coords.get(s + 1).copied().unwrap_or(0));
            if *b < lo(s) || *b > hi(s) {
                return Err(format!(
                    "the filter base {} in dimension {} is outside the bounding box {}..={} \
                     (the ISA: it must lie within it)",
                    *b,
                    s + 1,
                    lo(s),
                    hi(s)
                ));
            }
        }
        let mut n = i64::from(coords.get(rank - 1).copied().unwrap_or(0));
        let c0 = i64::from(coords.first().copied().unwrap_or(0));
        let esize = u64::from(self.element_size());
        let channels = u64::from(ic.channels_per_pixel);
        let mut out = Vec::with_capacity((channels * u64::from(ic.pixels_per_column)) as usize);
        for q in 0..u64::from(ic.pixels_per_column) {
            // The pixel read: the filter base plus the offsets, in image n.
            let mut addr = self.global_address;
            let mut inside = (0..dim(rank - 1)).contains(&n);
            if inside {
                addr = addr.wrapping_add(n as u64 * self.strides[rank - 1]);
            }
            for (s, b) in base.iter().enumerate().take(spatial) {
                let p = b + i64::from(offsets.get(s).copied().unwrap_or(0));
                if (0..dim(s + 1)).contains(&p) {
                    addr = addr.wrapping_add(p as u64 * self.strides[s + 1]);
                } else {
                    inside = false;
                }
            }
            for ch in 0..channels {
                let c = c0 + ch as i64;
                let here = inside && (0..dim(0)).contains(&c);
                out.push(BoxElement {
                    offset: (q * channels + ch) * esize,
                    global: here.then(|| addr.wrapping_add(c as u64 * esize)),
                });
            }
            // The next filter base: W by its traversal stride; past the box's upper
            // corner back to its lower corner and on in H, then D, then the next image.
            let mut s = 0;
            loop {
                if s == spatial {
                    n += 1;
                    break;
                }
                base[s] += i64::from(self.element_strides[s + 1].max(1));
                if base[s] <= hi(s) {
                    break;
                }
                base[s] = lo(s);
                s += 1;
            }
        }
        Ok(out)
    }
}

/// Bytes 111..124 of the encoding: a mode byte (1: im2col) and the corners (i16 each, W
/// first); the channels and pixels are stored as the box's dimensions 0 and 1.
pub(crate) fn encode(m: &TensorMap, b: &mut [u8; 128]) {
    let Some(ic) = m.im2col else { return };
    b[111] = 1;
    for s in 0..3 {
        b[112 + 2 * s..114 + 2 * s].copy_from_slice(&(ic.lower[s] as i16).to_le_bytes());
        b[118 + 2 * s..120 + 2 * s].copy_from_slice(&(ic.upper[s] as i16).to_le_bytes());
    }
    b[96..98].copy_from_slice(&(ic.channels_per_pixel as u16).to_le_bytes());
    b[98..100].copy_from_slice(&(ic.pixels_per_column as u16).to_le_bytes());
}

/// The im2col fields of an encoded map (`None` for a tiled one), its box reset to the
/// tiled checks' shape.
pub(crate) fn decode(m: &mut TensorMap, b: &[u8; 128]) -> Result<(), String> {
    match b[111] {
        0 => Ok(()),
        1 => {
            let i16_at = |o: usize| i32::from(i16::from_le_bytes([b[o], b[o + 1]]));
            let ic = Im2col {
                lower: [i16_at(112), i16_at(114), i16_at(116)],
                upper: [i16_at(118), i16_at(120), i16_at(122)],
                channels_per_pixel: m.box_dims[0],
                pixels_per_column: m.box_dims[1],
            };
            m.box_dims[1] = 1;
            let again = TensorMap::im2col(
                m.data_type,
                m.rank,
                m.global_address,
                &m.dims,
                &m.strides[1..],
                &ic.lower,
                &ic.upper,
                ic.channels_per_pixel,
                ic.pixels_per_column,
                &m.element_strides,
                m.interleave,
                m.swizzle,
                m.l2_promotion,
                m.oob_fill,
            )?;
            *m = again;
            Ok(())
        }
        k => Err(format!("mode byte {k} is not tiled (0) or im2col (1)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An NHWC tensor of u16 elements: C channels, W x H pixels, N images, packed.
    #[allow(clippy::too_many_arguments)]
    fn nhwc(
        c: u64,
        w: u64,
        h: u64,
        n: u64,
        lower: [i32; 2],
        upper: [i32; 2],
        pixels: u32,
        stride: u32,
    ) -> TensorMap {
        let row = c * 2;
        TensorMap::im2col(
            1,
            4,
            0x10000,
            &[c, w, h, n],
            &[row, row * w, row * w * h],
            &lower,
            &upper,
            8,
            pixels,
            &[1, stride, stride, 1],
            0,
            0,
            0,
            0,
        )
        .unwrap()
    }

    /// A CPU im2col: the (channel, pixel) each element of a copy reads, written from the
    /// convolution it serves: output pixels of a filter of `k` x `k` with `pad` pixels of
    /// padding and stride `stride`, in row-major order of (n, oh, ow), from output pixel
    /// `first`; filter tap (r, s); channels c0..c0+8.
    #[allow(clippy::too_many_arguments)]
    fn cpu_im2col(
        (c, w, h, n): (i64, i64, i64, i64),
        k: i64,
        pad: i64,
        stride: i64,
        first: i64,
        pixels: i64,
        (r, s): (i64, i64),
        c0: i64,
    ) -> Vec<Option<u64>> {
        let ow = (w + 2 * pad - k) / stride + 1;
        let oh = (h + 2 * pad - k) / stride + 1;
        let mut out = Vec::new();
        for q in first..first + pixels {
            let (img, rest) = (q / (ow * oh), q % (ow * oh));
            let (y, x) = (rest / ow, rest % ow);
            let (iy, ix) = (y * stride - pad + r, x * stride - pad + s);
            for ch in c0..c0 + 8 {
                let inside = img < n && (0..h).contains(&iy) && (0..w).contains(&ix) && ch < c;
                out.push(inside.then(|| 0x10000 + 2 * (((img * h + iy) * w + ix) * c + ch) as u64));
            }
        }
        out
    }

    #[test]
    fn copies_match_a_cpu_im2col_for_every_filter_tap() {
        // 16 channels, 7 x 5 pixels, 2 images; 3x3 filters with padding 1 (corners -1/-1),
        // without padding (0/-2), and with padding 1 and stride 2 (corners -1/-1: the
        // bases -1, 1, 3, 5 of a row).
        for (pad, upper, stride) in [(1, -1, 1), (0, -2, 1), (1, -1, 2)] {
            let (c, w, h, n) = (16i64, 7i64, 5i64, 2i64);
            let m = nhwc(16, 7, 5, 2, [-pad as i32; 2], [upper; 2], 40, stride);
            let ow = (w + 2 * pad - 3) / stride as i64 + 1;
            for first in [0i64, 3, ow + 1] {
                let (x, y) = (first % ow, first / ow);
                let base = [x * stride as i64 - pad, y * stride as i64 - pad];
                for (r, s) in [(0, 0), (1, 2), (2, 1), (2, 2)] {
                    let got = m
                        .im2col_elements(
                            &[8, base[0] as i32, base[1] as i32, 0],
                            &[s as u32, r as u32],
                        )
                        .unwrap();
                    let want =
                        cpu_im2col((c, w, h, n), 3, pad, stride as i64, first, 40, (r, s), 8);
                    let got_addrs: Vec<Option<u64>> = got.iter().map(|e| e.global).collect();
                    assert_eq!(
                        got_addrs, want,
                        "pad {pad} stride {stride} first {first} tap {r},{s}"
                    );
                    assert!(got
                        .iter()
                        .enumerate()
                        .all(|(i, e)| e.offset == 2 * i as u64));
                }
            }
        }
    }

    #[test]
    fn the_isa_example_1_walks_w_then_h_from_the_filter_base() {
        // PTX ISA example 1: sizes (64, 9, 14, 64), 64 pixels of 8 channels, corners -1,
        // coordinates (7, 7, 4, 0), offsets (0, 0). The box's W runs -1..=9 - 1 - 1 = 7,
        // so the first base is its last in row h = 4, and the walk goes on at h = 5 from
        // w = -1.
        // (The ISA does not give the element type: u16 here, so that 8 channels are the
        // 16 bytes a row needs.)
        let m = TensorMap::im2col(
            1,
            4,
            0,
            &[64, 9, 14, 64],
            &[128, 128 * 9, 128 * 9 * 14],
            &[-1, -1],
            &[-1, -1],
            8,
            64,
            &[1, 1, 1, 1],
            0,
            0,
            0,
            0,
        )
        .unwrap();
        assert_eq!(m.box_bytes(), 64 * 8 * 2);
        let els = m.im2col_elements(&[7, 7, 4, 0], &[0, 0]).unwrap();
        let pixel = |q: usize| els[8 * q].global;
        assert_eq!(pixel(0), Some(2 * (4 * 64 * 9 + 7 * 64 + 7)));
        // Pixel 1: w wraps to the lower corner -1 (outside the tensor: filled), h = 5.
        assert_eq!(pixel(1), None);
        assert_eq!(pixel(2), Some(2 * (5 * 64 * 9 + 7)));
        // 9 bases a row (w = -1..=7): pixel 1 + 9 = 10 is h = 6, w = -1, and pixel 11 is
        // (0, 6) again inside.
        assert_eq!(pixel(10), None);
        assert_eq!(pixel(11), Some(2 * (6 * 64 * 9 + 7)));
        assert_eq!(els.len(), 64 * 8);
    }

    #[test]
    fn errors_name_the_rule() {
        let m = nhwc(16, 7, 5, 2, [-1, -1], [-1, -1], 8, 1);
        let e = m.im2col_elements(&[0, -2, 0, 0], &[0, 0]).unwrap_err();
        assert!(e.contains("outside the bounding box -1..=5"), "{e}");
        let e = m.im2col_elements(&[0, 0, 0, 0], &[256, 0]).unwrap_err();
        assert!(e.contains("im2col offset 256 is above 255"), "{e}");
        let tiled = TensorMap::tiled(
            1,
            4,
            0,
            &[16, 7, 5, 2],
            &[32, 224, 1120],
            &[8, 1, 1, 1],
            &[1; 4],
            0,
            0,
            0,
            0,
        )
        .unwrap();
        assert!(tiled.im2col_elements(&[0; 4], &[0, 0]).is_err());
        let bad = |lower: i32, pixels: u32, rank: u32| {
            TensorMap::im2col(
                1,
                rank,
                0,
                &[16, 7, 5, 2, 2],
                &[32, 224, 1120, 2240],
                &[lower; 3],
                &[0; 3],
                8,
                pixels,
                &[1; 5],
                0,
                0,
                0,
                0,
            )
            .unwrap_err()
        };
        assert!(bad(-129, 8, 4).contains("pixelBoxLowerCorner[0] = -129 is not from -128 to 127"));
        assert!(bad(-17, 8, 5).contains("from -16 to 15"));
        assert!(bad(0, 1025, 4).contains("pixelsPerColumn = 1025"));
        assert!(bad(0, 8, 2).contains("tensorRank 2 is not from 3 to 5"));
        let e = TensorMap::im2col(
            1,
            3,
            0,
            &[8, 7, 2],
            &[16, 112],
            &[0],
            &[0],
            4,
            8,
            &[1; 3],
            0,
            0,
            0,
            0,
        )
        .unwrap_err();
        assert!(e.contains("channelsPerPixel * 2 bytes"), "{e}");
    }

    #[test]
    fn the_encoding_round_trips() {
        let m = nhwc(16, 7, 5, 2, [-1, -2], [-1, -3], 40, 2);
        assert_eq!(TensorMap::decode(&m.encode()), Ok(m));
        assert_eq!(m.box_bytes(), 40 * 8 * 2);
    }
}

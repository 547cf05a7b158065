//! Texture bindings the runtime fills (`cudaBindTexture*`, `cudaCreateTextureObject`) and
//! the sampling they describe: point and linear filtering, clamp/wrap/border addressing,
//! normalized or unnormalized coordinates, over linear or pitched global memory; `tld4`
//! gathers and the `txq` attributes a binding knows.

use std::collections::HashMap;

use crate::memory::GlobalMemory;

/// Element format of one texel channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChannelFormat {
    Signed8,
    Unsigned8,
    Signed16,
    Unsigned16,
    Signed32,
    Unsigned32,
    Float16,
    Float32,
}

impl ChannelFormat {
    pub fn bytes(self) -> u64 {
        match self {
            ChannelFormat::Signed8 | ChannelFormat::Unsigned8 => 1,
            ChannelFormat::Signed16 | ChannelFormat::Unsigned16 | ChannelFormat::Float16 => 2,
            _ => 4,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddressMode {
    Clamp,
    Wrap,
    Mirror,
    Border,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FilterMode {
    Point,
    Linear,
}

/// The coordinates of one texture fetch, for [`TextureBinding::fetch_address`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TexCoords {
    /// Integer texel coordinates (no filtering).
    Int(i32, i32),
    /// Float coordinates; `footprint`: a `tld4` gather (the 2x2 footprint whatever the
    /// filter mode).
    Float {
        u: f32,
        v: f32,
        two_d: bool,
        footprint: bool,
    },
}

/// One bound texture: where its texels are and how to sample them.
#[derive(Clone, Debug, PartialEq)]
pub struct TextureBinding {
    /// Global address of texel (0, 0).
    pub base: u64,
    pub width: u64,
    /// 1 for 1D textures.
    pub height: u64,
    /// Bytes between rows.
    pub pitch: u64,
    pub format: ChannelFormat,
    /// 1, 2 or 4 channels.
    pub channels: u32,
    pub address_mode: [AddressMode; 2],
    pub filter: FilterMode,
    pub normalized_coords: bool,
    /// Integer texels are returned as floats in [0, 1] / [-1, 1].
    pub read_normalized: bool,
}

/// Bindings by texture-reference name (legacy references) and by object handle.
#[derive(Clone, Debug, Default)]
pub struct TextureTable {
    pub by_name: HashMap<String, TextureBinding>,
    pub by_handle: HashMap<u64, TextureBinding>,
}

impl TextureBinding {
    /// Raw channel values of texel (x, y) as f32 (or integer bits for integer reads).
    fn texel(
        &self,
        mem: &GlobalMemory,
        x: i64,
        y: i64,
    ) -> Result<[f32; 4], crate::memory::MemError> {
        let cb = self.format.bytes();
        let addr = self.base + y as u64 * self.pitch + x as u64 * cb * self.channels as u64;
        let mut out = [0f32; 4];
        for (c, o) in out.iter_mut().enumerate().take(self.channels as usize) {
            let raw = mem.read_uint(addr + c as u64 * cb, cb as u32)?;
            *o = match self.format {
                ChannelFormat::Float32 => f32::from_bits(raw as u32),
                ChannelFormat::Float16 => crate::semantics::half::to_f32(
                    raw as u16,
                    crate::semantics::half::HalfKind::F16,
                ),
                ChannelFormat::Unsigned8 if self.read_normalized => raw as f32 / 255.0,
                ChannelFormat::Signed8 if self.read_normalized => {
                    ((raw as u8 as i8) as f32 / 127.0).max(-1.0)
                }
                ChannelFormat::Unsigned16 if self.read_normalized => raw as f32 / 65535.0,
                ChannelFormat::Signed16 if self.read_normalized => {
                    ((raw as u16 as i16) as f32 / 32767.0).max(-1.0)
                }
                ChannelFormat::Signed8 => f32::from_bits((raw as u8 as i8) as i32 as u32),
                ChannelFormat::Signed16 => f32::from_bits((raw as u16 as i16) as i32 as u32),
                ChannelFormat::Signed32 | ChannelFormat::Unsigned32 => f32::from_bits(raw as u32),
                ChannelFormat::Unsigned8 | ChannelFormat::Unsigned16 => f32::from_bits(raw as u32),
            };
        }
        Ok(out)
    }

    fn wrap_coord(&self, i: i64, n: u64, mode: AddressMode) -> Option<i64> {
        let n = n.max(1) as i64;
        match mode {
            AddressMode::Clamp => Some(i.clamp(0, n - 1)),
            AddressMode::Wrap => Some(i.rem_euclid(n)),
            AddressMode::Mirror => {
                let p = i.rem_euclid(2 * n);
                Some(if p < n { p } else { 2 * n - 1 - p })
            }
            AddressMode::Border => (0..n).contains(&i).then_some(i),
        }
    }

    fn fetch(
        &self,
        mem: &GlobalMemory,
        x: i64,
        y: i64,
    ) -> Result<[f32; 4], crate::memory::MemError> {
        match (
            self.wrap_coord(x, self.width, self.address_mode[0]),
            self.wrap_coord(y, self.height, self.address_mode[1]),
        ) {
            (Some(x), Some(y)) => self.texel(mem, x, y),
            _ => Ok([0.0; 4]),
        }
    }

    /// Samples at float coordinates (`tex.1d/2d` with `.f32` coordinates).
    pub fn sample(
        &self,
        mem: &GlobalMemory,
        u: f32,
        v: f32,
        two_d: bool,
    ) -> Result<[f32; 4], crate::memory::MemError> {
        let (mut x, mut y) = (u, if two_d { v } else { 0.0 });
        if self.normalized_coords {
            x *= self.width as f32;
            y *= self.height as f32;
        }
        match self.filter {
            FilterMode::Point => self.fetch(
                mem,
                x.floor() as i64,
                if two_d { y.floor() as i64 } else { 0 },
            ),
            FilterMode::Linear => {
                // Texel centres sit at +0.5; weights use 8 fractional bits like the hardware.
                let xb = x - 0.5;
                let x0 = xb.floor();
                let a = ((xb - x0) * 256.0).round() / 256.0;
                let (y0, b) = if two_d {
                    let yb = y - 0.5;
                    let y0 = yb.floor();
                    (y0, ((yb - y0) * 256.0).round() / 256.0)
                } else {
                    (0.0, 0.0)
                };
                let (x0, y0) = (x0 as i64, y0 as i64);
                let t00 = self.fetch(mem, x0, y0)?;
                let t10 = self.fetch(mem, x0 + 1, y0)?;
                let (t01, t11) = if two_d {
                    (
                        self.fetch(mem, x0, y0 + 1)?,
                        self.fetch(mem, x0 + 1, y0 + 1)?,
                    )
                } else {
                    (t00, t10)
                };
                let mut out = [0f32; 4];
                for c in 0..4 {
                    out[c] = (1.0 - a) * (1.0 - b) * t00[c]
                        + a * (1.0 - b) * t10[c]
                        + (1.0 - a) * b * t01[c]
                        + a * b * t11[c];
                }
                Ok(out)
            }
        }
    }

    /// `tld4.comp.2d`: one channel (`component`, 0..4 for r, g, b, a) of each of the four
    /// texels the bilinear filter would weigh at (u, v), whatever the binding's filter mode.
    /// PTX ISA §9.7.10.4: the samples come in counter-clockwise order starting at the lower
    /// left, with rows growing downwards: (x0, y0+1), (x0+1, y0+1), (x0+1, y0), (x0, y0),
    /// where (x0, y0) is the texel whose centre is up and to the left of the point.
    pub fn gather(
        &self,
        mem: &GlobalMemory,
        u: f32,
        v: f32,
        component: usize,
    ) -> Result<[f32; 4], crate::memory::MemError> {
        let (mut x, mut y) = (u, v);
        if self.normalized_coords {
            x *= self.width as f32;
            y *= self.height as f32;
        }
        let x0 = (x - 0.5).floor() as i64;
        let y0 = (y - 0.5).floor() as i64;
        let footprint = [(x0, y0 + 1), (x0 + 1, y0 + 1), (x0 + 1, y0), (x0, y0)];
        let mut out = [0f32; 4];
        for (o, (tx, ty)) in out.iter_mut().zip(footprint) {
            *o = self.fetch(mem, tx, ty)?[component];
        }
        Ok(out)
    }

    /// The `txq` attribute, or `None` where the binding does not know it (third-dimension
    /// addressing, array size, samples, forced unnormalized coordinates). Channel type and
    /// order use the OpenCL `CLK_*` codes that NVPTX shares with OpenCL; addressing modes
    /// count in the order the ISA lists them (wrap, mirror, clamp_ogl, clamp_to_edge,
    /// clamp_to_border) and CUDA's clamp is clamp_to_edge.
    pub fn query(&self, query: ir::op::TexQuery) -> Option<u32> {
        use ir::op::TexQuery as Q;
        let addr = |m: AddressMode| match m {
            AddressMode::Wrap => 0,
            AddressMode::Mirror => 1,
            AddressMode::Clamp => 3,
            AddressMode::Border => 4,
        };
        Some(match query {
            Q::Width => self.width as u32,
            Q::Height => self.height as u32,
            // Bindings are 1D or 2D: one layer deep, one mipmap level.
            Q::Depth | Q::NumMipmapLevels => 1,
            Q::ChannelDataType => {
                let norm = self.read_normalized;
                match self.format {
                    ChannelFormat::Signed8 if norm => 0x10D0,
                    ChannelFormat::Signed16 if norm => 0x10D1,
                    ChannelFormat::Unsigned8 if norm => 0x10D2,
                    ChannelFormat::Unsigned16 if norm => 0x10D3,
                    ChannelFormat::Signed8 => 0x10D7,
                    ChannelFormat::Signed16 => 0x10D8,
                    ChannelFormat::Signed32 => 0x10D9,
                    ChannelFormat::Unsigned8 => 0x10DA,
                    ChannelFormat::Unsigned16 => 0x10DB,
                    ChannelFormat::Unsigned32 => 0x10DC,
                    ChannelFormat::Float16 => 0x10DD,
                    ChannelFormat::Float32 => 0x10DE,
                }
            }
            Q::ChannelOrder => match self.channels {
                1 => 0x10B0, // R
                2 => 0x10B2, // RG
                _ => 0x10B5, // RGBA
            },
            Q::NormalizedCoords => self.normalized_coords as u32,
            Q::FilterMode => match self.filter {
                FilterMode::Point => 0,
                FilterMode::Linear => 1,
            },
            Q::AddrMode0 => addr(self.address_mode[0]),
            Q::AddrMode1 => addr(self.address_mode[1]),
            Q::AddrMode2 | Q::ArraySize | Q::NumSamples | Q::ForceUnnormalizedCoords => {
                return None
            }
        })
    }

    /// Where a fetch reads, for the timing model's texture cache: the address of the
    /// first texel of its footprint after addressing (the point-sampled texel, or the
    /// upper-left one of a bilinear or `tld4` footprint, whose other texels are its
    /// neighbours), or `base` when that texel lies outside a border-mode texture.
    /// `coords` are the fetch's coordinates as [`Self::sample`], [`Self::gather`]
    /// (`footprint` true) or [`Self::fetch_int`] (`TexCoords::Int`) take them.
    pub fn fetch_address(&self, coords: TexCoords) -> u64 {
        let (x, y) = match coords {
            TexCoords::Int(x, y) => (i64::from(x), i64::from(y)),
            TexCoords::Float {
                u,
                v,
                two_d,
                footprint,
            } => {
                let (mut x, mut y) = (u, if two_d { v } else { 0.0 });
                if self.normalized_coords {
                    x *= self.width as f32;
                    y *= self.height as f32;
                }
                let corner = footprint || self.filter == FilterMode::Linear;
                let (x, y) = if corner { (x - 0.5, y - 0.5) } else { (x, y) };
                (x.floor() as i64, if two_d { y.floor() as i64 } else { 0 })
            }
        };
        match (
            self.wrap_coord(x, self.width, self.address_mode[0]),
            self.wrap_coord(y, self.height, self.address_mode[1]),
        ) {
            (Some(x), Some(y)) => self.base + y as u64 * self.pitch + x as u64 * self.texel_bytes(),
            _ => self.base,
        }
    }

    /// Texels across and rows of a fetch's footprint: 1 x 1 when point-sampled, 2 x 1
    /// for a bilinear 1D fetch, 2 x 2 for a bilinear 2D fetch or a `tld4` gather.
    pub fn footprint(&self, coords: TexCoords) -> (u64, u64) {
        match coords {
            TexCoords::Int(..) => (1, 1),
            TexCoords::Float {
                two_d, footprint, ..
            } => {
                if footprint || self.filter == FilterMode::Linear {
                    (2, if two_d { 2 } else { 1 })
                } else {
                    (1, 1)
                }
            }
        }
    }

    /// Bytes of one texel (all channels).
    pub fn texel_bytes(&self) -> u64 {
        self.format.bytes() * u64::from(self.channels)
    }

    /// Fetches at integer coordinates (`tex` with `.s32` coordinates: no filtering).
    pub fn fetch_int(
        &self,
        mem: &GlobalMemory,
        x: i32,
        y: i32,
    ) -> Result<[f32; 4], crate::memory::MemError> {
        self.fetch(mem, x as i64, y as i64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::AllocKind;

    fn binding(mem: &mut GlobalMemory, texels: &[f32], width: u64, height: u64) -> TextureBinding {
        let base = mem
            .alloc(4 * texels.len() as u64, AllocKind::Device)
            .unwrap();
        for (i, t) in texels.iter().enumerate() {
            mem.write_uint(base + 4 * i as u64, 4, t.to_bits() as u64)
                .unwrap();
        }
        binding_at(base, width, height)
    }

    #[test]
    fn point_sampling_and_address_modes() {
        let mut mem = GlobalMemory::new();
        let mut b = binding(&mut mem, &[10.0, 20.0, 30.0, 40.0], 4, 1);
        assert_eq!(b.sample(&mem, 1.5, 0.0, false).unwrap()[0], 20.0);
        assert_eq!(b.sample(&mem, 7.0, 0.0, false).unwrap()[0], 40.0, "clamp");
        assert_eq!(b.sample(&mem, -3.0, 0.0, false).unwrap()[0], 10.0, "clamp");
        b.address_mode = [AddressMode::Wrap; 2];
        assert_eq!(b.sample(&mem, 5.2, 0.0, false).unwrap()[0], 20.0, "wrap");
        b.address_mode = [AddressMode::Border; 2];
        assert_eq!(b.sample(&mem, 4.5, 0.0, false).unwrap()[0], 0.0, "border");
        b.normalized_coords = true;
        b.address_mode = [AddressMode::Clamp; 2];
        assert_eq!(
            b.sample(&mem, 0.6, 0.0, false).unwrap()[0],
            30.0,
            "normalized"
        );
        assert_eq!(b.fetch_int(&mem, 3, 0).unwrap()[0], 40.0);
    }

    #[test]
    fn linear_filtering_1d_and_2d() {
        let mut mem = GlobalMemory::new();
        let mut b = binding(&mut mem, &[0.0, 10.0, 20.0, 30.0], 4, 1);
        b.filter = FilterMode::Linear;
        // Texel centres at 0.5, 1.5, …: x = 1.0 is halfway between texels 0 and 1.
        assert_eq!(b.sample(&mem, 1.0, 0.0, false).unwrap()[0], 5.0);
        assert_eq!(b.sample(&mem, 2.5, 0.0, false).unwrap()[0], 20.0);
        assert_eq!(
            b.sample(&mem, 0.0, 0.0, false).unwrap()[0],
            0.0,
            "clamped at the edge"
        );
        let mut b2 = binding(&mut mem, &[0.0, 10.0, 100.0, 110.0], 2, 2);
        b2.filter = FilterMode::Linear;
        assert_eq!(b2.sample(&mem, 1.0, 1.0, true).unwrap()[0], 55.0);
    }

    /// A 4×3 RGBA float texture whose channel c of texel (x, y) is 100·c + 10·y + x, so
    /// every texel and every component of a gather is distinguishable.
    fn rgba_binding(mem: &mut GlobalMemory) -> TextureBinding {
        let (w, h) = (4u64, 3u64);
        let base = mem.alloc(16 * w * h, AllocKind::Device).unwrap();
        for y in 0..h {
            for x in 0..w {
                for c in 0..4 {
                    let v = (100 * c + 10 * y + x) as f32;
                    let addr = base + 16 * (y * w + x) + 4 * c;
                    mem.write_uint(addr, 4, v.to_bits() as u64).unwrap();
                }
            }
        }
        TextureBinding {
            channels: 4,
            pitch: 16 * w,
            ..binding_at(base, w, h)
        }
    }

    #[test]
    fn fetch_address_is_the_footprints_first_texel_after_addressing() {
        // 8 x 4 texels of 4 bytes in rows of 64 bytes, at 0x1000.
        let mut b = binding_at(0x1000, 8, 4);
        b.pitch = 64;
        let float = |u, v, footprint| TexCoords::Float {
            u,
            v,
            two_d: true,
            footprint,
        };
        // Point sampling: the texel containing (3.7, 2.2).
        assert_eq!(
            b.fetch_address(float(3.7, 2.2, false)),
            0x1000 + 2 * 64 + 3 * 4
        );
        assert_eq!(b.footprint(float(3.7, 2.2, false)), (1, 1));
        // Bilinear or tld4: the upper-left texel, centres at +0.5 (x0 = 3, y0 = 1).
        assert_eq!(b.fetch_address(float(3.7, 2.2, true)), 0x1000 + 64 + 3 * 4);
        b.filter = FilterMode::Linear;
        assert_eq!(b.fetch_address(float(3.7, 2.2, false)), 0x1000 + 64 + 3 * 4);
        assert_eq!(b.footprint(float(3.7, 2.2, false)), (2, 2));
        // Clamp, wrap and border at the edges; integer coordinates are texels.
        assert_eq!(b.fetch_address(TexCoords::Int(-5, 9)), 0x1000 + 3 * 64);
        assert_eq!(b.footprint(TexCoords::Int(-5, 9)), (1, 1));
        b.address_mode = [AddressMode::Wrap; 2];
        assert_eq!(b.fetch_address(TexCoords::Int(9, 5)), 0x1000 + 64 + 4);
        b.address_mode = [AddressMode::Border; 2];
        assert_eq!(
            b.fetch_address(TexCoords::Int(8, 0)),
            0x1000,
            "outside: the base"
        );
    }

    fn binding_at(base: u64, width: u64, height: u64) -> TextureBinding {
        TextureBinding {
            base,
            width,
            height,
            pitch: 4 * width,
            format: ChannelFormat::Float32,
            channels: 1,
            address_mode: [AddressMode::Clamp; 2],
            filter: FilterMode::Point,
            normalized_coords: false,
            read_normalized: false,
        }
    }

    #[test]
    fn gather_returns_the_footprint_counter_clockwise_from_lower_left() {
        let mut mem = GlobalMemory::new();
        let mut b = rgba_binding(&mut mem);
        // (2, 2) sits on the corner shared by texels (1..=2, 1..=2): x0 = y0 = 1.
        assert_eq!(
            b.gather(&mem, 2.0, 2.0, 0).unwrap(),
            [21.0, 22.0, 12.0, 11.0]
        );
        assert_eq!(
            b.gather(&mem, 2.0, 2.0, 1).unwrap(),
            [121.0, 122.0, 112.0, 111.0]
        );
        assert_eq!(
            b.gather(&mem, 2.0, 2.0, 2).unwrap(),
            [221.0, 222.0, 212.0, 211.0]
        );
        assert_eq!(
            b.gather(&mem, 2.4, 2.4, 3).unwrap(),
            [321.0, 322.0, 312.0, 311.0]
        );
        // Just past a texel centre moves the footprint by one.
        assert_eq!(b.gather(&mem, 2.6, 1.4, 0).unwrap(), [12.0, 13.0, 3.0, 2.0]);
        // The filter mode does not matter, normalized coordinates scale as for `tex`.
        b.filter = FilterMode::Linear;
        b.normalized_coords = true;
        // (0.5, 0.5) of a 4×3 texture is (2, 1.5): x0 = 1, y0 = 1.
        assert_eq!(
            b.gather(&mem, 0.5, 0.5, 0).unwrap(),
            [21.0, 22.0, 12.0, 11.0]
        );
    }

    #[test]
    fn gather_addresses_each_texel_at_the_edges() {
        let mut mem = GlobalMemory::new();
        let mut b = rgba_binding(&mut mem);
        // x0 = -1, y0 = 0: the left column clamps onto column 0 …
        assert_eq!(b.gather(&mem, 0.2, 1.0, 0).unwrap(), [10.0, 10.0, 0.0, 0.0]);
        // … wraps onto column 3, or reads zero outside a border.
        b.address_mode = [AddressMode::Wrap; 2];
        assert_eq!(b.gather(&mem, 0.2, 1.0, 0).unwrap(), [13.0, 10.0, 0.0, 3.0]);
        // Bottom-right corner: x0 = 3, y0 = 2; row 3 wraps to row 0, column 4 to column 0.
        assert_eq!(
            b.gather(&mem, 4.0, 3.0, 1).unwrap(),
            [103.0, 100.0, 120.0, 123.0]
        );
        b.address_mode = [AddressMode::Border; 2];
        assert_eq!(b.gather(&mem, 4.0, 3.0, 1).unwrap(), [0.0, 0.0, 0.0, 123.0]);
    }

    #[test]
    fn txq_reports_what_the_binding_knows() {
        use ir::op::TexQuery as Q;
        let mut mem = GlobalMemory::new();
        let mut b = rgba_binding(&mut mem);
        b.filter = FilterMode::Linear;
        b.address_mode = [AddressMode::Wrap, AddressMode::Border];
        assert_eq!(b.query(Q::Width), Some(4));
        assert_eq!(b.query(Q::Height), Some(3));
        assert_eq!(b.query(Q::Depth), Some(1));
        assert_eq!(b.query(Q::NumMipmapLevels), Some(1));
        assert_eq!(b.query(Q::ChannelDataType), Some(0x10DE), "CLK_FLOAT");
        assert_eq!(b.query(Q::ChannelOrder), Some(0x10B5), "CLK_RGBA");
        assert_eq!(b.query(Q::NormalizedCoords), Some(0));
        assert_eq!(b.query(Q::FilterMode), Some(1));
        assert_eq!(b.query(Q::AddrMode0), Some(0), "wrap");
        assert_eq!(b.query(Q::AddrMode1), Some(4), "clamp_to_border");
        assert_eq!(b.query(Q::AddrMode2), None);
        assert_eq!(b.query(Q::ArraySize), None);
        let mut bytes = binding_at(0, 16, 1);
        bytes.format = ChannelFormat::Unsigned8;
        bytes.channels = 2;
        bytes.normalized_coords = true;
        assert_eq!(
            bytes.query(Q::ChannelDataType),
            Some(0x10DA),
            "CLK_UNSIGNED_INT8"
        );
        bytes.read_normalized = true;
        assert_eq!(
            bytes.query(Q::ChannelDataType),
            Some(0x10D2),
            "CLK_UNORM_INT8"
        );
        assert_eq!(bytes.query(Q::ChannelOrder), Some(0x10B2), "CLK_RG");
        assert_eq!(bytes.query(Q::NormalizedCoords), Some(1));
        assert_eq!(bytes.query(Q::AddrMode0), Some(3), "clamp_to_edge");
    }
}

//! Texture bindings the runtime fills (`cudaBindTexture*`, `cudaCreateTextureObject`) and
//! the sampling they describe: point and linear filtering, clamp/wrap/border addressing,
//! normalized or unnormalized coordinates, over linear or pitched global memory.

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
}

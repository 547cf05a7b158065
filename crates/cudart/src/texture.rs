//! Texture descriptions as the CUDA API gives them — a channel descriptor plus sampling
//! attributes from a `textureReference` (legacy references) or a `cudaTextureDesc`
//! (texture objects) — turned into the emulator's [`emu::TextureBinding`].

use emu::texture::{AddressMode, ChannelFormat, FilterMode};

use crate::error::CudaError;
use crate::runtime::{ArrayFormat, CudaResult};

/// How a texture is sampled: the fields shared by `textureReference` and `cudaTextureDesc`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Sampler {
    /// Coordinates in [0, 1) instead of texels.
    pub normalized_coords: bool,
    /// `cudaTextureFilterMode`: 0 point, 1 linear.
    pub filter_mode: i32,
    /// `cudaTextureAddressMode` for x and y: 0 wrap, 1 clamp, 2 mirror, 3 border.
    pub address_mode: [i32; 2],
    /// `cudaReadModeNormalizedFloat`: integer texels read as floats in [0, 1] / [-1, 1].
    pub read_normalized: bool,
}

/// Where the texels are: `height` rows of `width` texels, `pitch` bytes apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TexelLayout {
    pub base: u64,
    pub width: usize,
    pub height: usize,
    pub pitch: usize,
}

/// Number of channels and the format of each, or `InvalidChannelDescriptor` for what the
/// hardware has no texture format for (three channels, mixed widths, odd bit counts).
pub fn channel_format(format: ArrayFormat) -> CudaResult<(ChannelFormat, u32)> {
    let channels = format.bits.iter().take_while(|&&b| b != 0).count();
    let first = format.bits[0];
    if !matches!(channels, 1 | 2 | 4)
        || format.bits[..channels].iter().any(|&b| b != first)
        || format.bits[channels..].iter().any(|&b| b != 0)
    {
        return Err(CudaError::InvalidChannelDescriptor);
    }
    let cf = match (format.kind, first) {
        (0, 8) => ChannelFormat::Signed8,
        (0, 16) => ChannelFormat::Signed16,
        (0, 32) => ChannelFormat::Signed32,
        (1, 8) => ChannelFormat::Unsigned8,
        (1, 16) => ChannelFormat::Unsigned16,
        (1, 32) => ChannelFormat::Unsigned32,
        (2, 16) => ChannelFormat::Float16,
        (2, 32) => ChannelFormat::Float32,
        _ => return Err(CudaError::InvalidChannelDescriptor),
    };
    Ok((cf, channels as u32))
}

/// Bytes of one texel.
pub fn texel_bytes(format: ArrayFormat) -> CudaResult<usize> {
    let (cf, channels) = channel_format(format)?;
    Ok(cf.bytes() as usize * channels as usize)
}

fn address_mode(mode: i32) -> CudaResult<AddressMode> {
    Ok(match mode {
        0 => AddressMode::Wrap,
        1 => AddressMode::Clamp,
        2 => AddressMode::Mirror,
        3 => AddressMode::Border,
        _ => return Err(CudaError::InvalidValue),
    })
}

pub fn binding(
    format: ArrayFormat,
    sampler: &Sampler,
    layout: TexelLayout,
) -> CudaResult<emu::TextureBinding> {
    let (cf, channels) = channel_format(format)?;
    let filter = match sampler.filter_mode {
        0 => FilterMode::Point,
        1 => FilterMode::Linear,
        _ => return Err(CudaError::InvalidValue),
    };
    // Linear filtering of integer texels needs normalized-float reads, as on CUDA.
    let integer = !matches!(cf, ChannelFormat::Float16 | ChannelFormat::Float32);
    if filter == FilterMode::Linear && integer && !sampler.read_normalized {
        return Err(CudaError::InvalidValue);
    }
    Ok(emu::TextureBinding {
        base: layout.base,
        width: layout.width as u64,
        height: layout.height.max(1) as u64,
        pitch: layout.pitch as u64,
        format: cf,
        channels,
        address_mode: [
            address_mode(sampler.address_mode[0])?,
            address_mode(sampler.address_mode[1])?,
        ],
        filter,
        normalized_coords: sampler.normalized_coords,
        read_normalized: sampler.read_normalized && integer,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(bits: [i32; 4], kind: i32) -> ArrayFormat {
        ArrayFormat { bits, kind }
    }

    #[test]
    fn channel_descriptors() {
        assert_eq!(
            channel_format(fmt([32, 0, 0, 0], 2)),
            Ok((ChannelFormat::Float32, 1))
        );
        assert_eq!(
            channel_format(fmt([8, 8, 8, 8], 1)),
            Ok((ChannelFormat::Unsigned8, 4))
        );
        assert_eq!(texel_bytes(fmt([16, 16, 0, 0], 0)), Ok(4));
        for bad in [
            fmt([32, 32, 32, 0], 2),
            fmt([8, 16, 0, 0], 1),
            fmt([0, 0, 0, 0], 1),
            fmt([8, 0, 0, 0], 2),
            fmt([32, 0, 32, 0], 2),
        ] {
            assert_eq!(
                channel_format(bad),
                Err(CudaError::InvalidChannelDescriptor),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn sampler_attributes_reach_the_binding() {
        let layout = TexelLayout {
            base: 0x1000,
            width: 64,
            height: 8,
            pitch: 512,
        };
        let s = Sampler {
            normalized_coords: true,
            filter_mode: 1,
            address_mode: [0, 3],
            read_normalized: false,
        };
        let b = binding(fmt([32, 0, 0, 0], 2), &s, layout).unwrap();
        assert_eq!(b.filter, FilterMode::Linear);
        assert_eq!(b.address_mode, [AddressMode::Wrap, AddressMode::Border]);
        assert!(b.normalized_coords);
        assert_eq!((b.width, b.height, b.pitch), (64, 8, 512));
        assert_eq!(
            binding(fmt([8, 0, 0, 0], 1), &s, layout),
            Err(CudaError::InvalidValue),
            "linear filtering of element-type integer reads"
        );
        let s = Sampler {
            read_normalized: true,
            ..s
        };
        assert!(
            binding(fmt([8, 0, 0, 0], 1), &s, layout)
                .unwrap()
                .read_normalized
        );
    }
}

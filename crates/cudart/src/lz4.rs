//! Decoder for the LZ4 *block* format, which nvcc's fatbinary tool uses for compressed
//! entries (entry flag `COMPRESSED`; the payload is one raw block, no frame header).
//!
//! A block is a sequence of sequences. Each sequence starts with a token byte: its high
//! nibble is the literal length, its low nibble the match length minus 4; a nibble of 15
//! is continued by bytes that are added while they are 255. The literals follow, then a
//! little-endian u16 offset back into the output and the match is copied from there
//! (it may overlap the bytes it produces). The last sequence has literals only.

use thiserror::Error;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum Lz4Error {
    #[error("compressed data ends in the middle of a sequence at byte {0}")]
    Truncated(usize),
    #[error("match at byte {at} refers {offset} bytes back, before the start of the output")]
    BadOffset { at: usize, offset: usize },
    #[error("decompressed data would exceed the declared size of {0} bytes")]
    TooLong(usize),
}

/// Decompresses one LZ4 block. `max_len` is the size the container declares; the output
/// never grows beyond it, so hostile input cannot make us allocate without bound.
pub fn decompress_block(src: &[u8], max_len: usize) -> Result<Vec<u8>, Lz4Error> {
    let mut out = Vec::with_capacity(max_len);
    let mut pos = 0usize;
    while pos < src.len() {
        let token = src[pos];
        pos += 1;

        let literals = read_length(src, &mut pos, usize::from(token >> 4))?;
        let end = pos
            .checked_add(literals)
            .filter(|&e| e <= src.len())
            .ok_or(Lz4Error::Truncated(pos))?;
        if out.len() + literals > max_len {
            return Err(Lz4Error::TooLong(max_len));
        }
        out.extend_from_slice(&src[pos..end]);
        pos = end;
        if pos == src.len() {
            break;
        }

        let offset_bytes = src.get(pos..pos + 2).ok_or(Lz4Error::Truncated(pos))?;
        let offset = usize::from(u16::from_le_bytes([offset_bytes[0], offset_bytes[1]]));
        let at = pos;
        pos += 2;
        if offset == 0 || offset > out.len() {
            return Err(Lz4Error::BadOffset { at, offset });
        }
        let match_len = read_length(src, &mut pos, usize::from(token & 0x0f))? + 4;
        if out.len() + match_len > max_len {
            return Err(Lz4Error::TooLong(max_len));
        }
        let start = out.len() - offset;
        // Overlapping copies repeat the last `offset` bytes, so copy byte by byte.
        for i in 0..match_len {
            let byte = out[start + i];
            out.push(byte);
        }
    }
    Ok(out)
}

fn read_length(src: &[u8], pos: &mut usize, nibble: usize) -> Result<usize, Lz4Error> {
    let mut len = nibble;
    if nibble == 15 {
        loop {
            let byte = *src.get(*pos).ok_or(Lz4Error::Truncated(*pos))?;
            *pos += 1;
            len += usize::from(byte);
            if byte != 255 {
                break;
            }
        }
    }
    Ok(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_only() {
        assert_eq!(decompress_block(b"\x30abc", 16).unwrap(), b"abc");
    }

    #[test]
    fn overlapping_match_repeats_a_run() {
        // One literal 'x', then a match of 3+4 bytes at offset 1: eight 'x' in total,
        // then a final literal 'y'.
        let block = [0x13, b'x', 0x01, 0x00, 0x10, b'y'];
        assert_eq!(decompress_block(&block, 64).unwrap(), b"xxxxxxxxy");
    }

    #[test]
    fn long_literal_length_uses_continuation_bytes() {
        let text: Vec<u8> = (0..300u32).map(|i| b'a' + (i % 26) as u8).collect();
        let mut block = vec![0xf0, 255, (300 - 15 - 255) as u8];
        block.extend_from_slice(&text);
        assert_eq!(decompress_block(&block, 300).unwrap(), text);
    }

    #[test]
    fn hostile_inputs_are_errors() {
        assert_eq!(
            decompress_block(&[0x50, b'a'], 64),
            Err(Lz4Error::Truncated(1))
        );
        assert_eq!(
            decompress_block(&[0x10, b'a', 0x05, 0x00], 64),
            Err(Lz4Error::BadOffset { at: 2, offset: 5 })
        );
        assert_eq!(
            decompress_block(&[0x1f, b'a', 0x01, 0x00, 0xff, 0xff, 0x10], 1 << 20).map(|v| v.len()),
            Ok(1 + 15 + 255 + 255 + 16 + 4)
        );
        assert_eq!(
            decompress_block(&[0x1f, b'a', 0x01, 0x00, 0xff], 64),
            Err(Lz4Error::Truncated(5))
        );
        assert_eq!(
            decompress_block(&[0x1f, b'a', 0x01, 0x00, 0x10], 8),
            Err(Lz4Error::TooLong(8))
        );
    }
}

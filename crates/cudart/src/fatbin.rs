//! The fatbinary that nvcc embeds in a program, and the choice of the PTX we run.
//!
//! Layout (little-endian; learned from nvcc 11.8 output and cross-checked against
//! `cuobjdump`):
//!
//! * The host object passes `__cudaRegisterFatBinary` a *wrapper* (`__fatBinC_Wrapper_t`,
//!   section `.nvFatBinSegment`): `u32 magic = 0x466243b1`, `u32 version` (1; 2 means a
//!   relocatable, prelinked image), `u64 data` pointing at a container, `u64` filename or
//!   prelinked-fatbin list.
//! * A *container* (section `.nv_fatbin`, 8-byte aligned): 16-byte header `u32 magic =
//!   0xBA55ED50`, `u16 version = 1`, `u16 header_size`, `u64 size` of the entries that
//!   follow the header.
//! * Each *entry*: `u16 kind` (1 PTX, 2 ELF cubin, others such as LTO IR are skipped),
//!   `u16 version`, `u32 header_size`, `u64 payload_size` (padded to 8), `u32
//!   compressed_size`, `u32` (offset of an options string in PTX headers), `u16 minor`,
//!   `u16 major` (PTX ISA or cubin version), `u32 arch` (70 for sm_70 / compute_70), `u32
//!   name_offset`, `u32 name_size`, `u64 flags`, `u64` reserved, `u64 uncompressed_size`.
//!   The payload starts `header_size` bytes after the entry; the next entry follows it.
//! * Flags: `0x1` 64-bit code, `0x10` Linux host, `0x2000` the payload is compressed. A
//!   compressed payload is one raw LZ4 block of `compressed_size` bytes that expands to
//!   `uncompressed_size` bytes (PTX text is NUL-terminated). nvcc 11.8 compresses PTX by
//!   default and cubins too with `-Xfatbin -compress-all`.
//!
//! Everything here reads untrusted bytes: every offset and size is checked and errors are
//! values, never panics.

use std::borrow::Cow;

use thiserror::Error;

use crate::lz4::{self, Lz4Error};

pub const WRAPPER_MAGIC: u32 = 0x4662_43b1;
pub const CONTAINER_MAGIC: u32 = 0xBA55_ED50;
pub const WRAPPER_SIZE: usize = 24;
pub const CONTAINER_HEADER_SIZE: usize = 16;
const ENTRY_HEADER_MIN: usize = 0x40;

pub const FLAG_64BIT: u64 = 0x1;
pub const FLAG_HOST_LINUX: u64 = 0x10;
pub const FLAG_COMPRESSED: u64 = 0x2000;

/// Architecture numbers are what `sm_XX` / `compute_XX` say: 70 for Volta.
pub const DEFAULT_TARGET_ARCH: u32 = 70;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum FatbinError {
    #[error("fatbinary wrapper has magic {0:#010x}, expected {WRAPPER_MAGIC:#010x}")]
    BadWrapperMagic(u32),
    #[error("fatbinary container has magic {0:#010x}, expected {CONTAINER_MAGIC:#010x}")]
    BadContainerMagic(u32),
    #[error("fatbinary is truncated: {what} needs bytes {start}..{end} of {len}")]
    Truncated {
        what: &'static str,
        start: usize,
        end: usize,
        len: usize,
    },
    #[error("fatbinary entry at byte {at} declares a header of {size} bytes")]
    BadEntryHeader { at: usize, size: usize },
    #[error("compressed fatbinary entry (arch {arch}) is corrupt: {source}")]
    Decompress { arch: u32, source: Lz4Error },
    #[error("PTX for compute_{arch} is not UTF-8 text")]
    PtxNotText { arch: u32 },
    #[error(
        "the program carries no PTX{}: regsim runs kernels from PTX. Rebuild it with PTX \
         included, e.g. `nvcc -arch=sm_70` (which embeds compute_70 PTX) or \
         `-gencode arch=compute_70,code=compute_70`",
        describe_cubins(.cubin_archs)
    )]
    NoPtx { cubin_archs: Vec<u32> },
}

fn describe_cubins(archs: &[u32]) -> String {
    if archs.is_empty() {
        String::new()
    } else {
        let names: Vec<String> = archs.iter().map(|a| format!("sm_{a}")).collect();
        format!(" (only machine code for {})", names.join(", "))
    }
}

/// The `__fatBinC_Wrapper_t` that the host code registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wrapper {
    pub version: u32,
    /// Address of the container (a host pointer in the running program).
    pub data: u64,
}

impl Wrapper {
    pub fn parse(bytes: &[u8]) -> Result<Wrapper, FatbinError> {
        let magic = read_u32(bytes, 0, "wrapper")?;
        if magic != WRAPPER_MAGIC {
            return Err(FatbinError::BadWrapperMagic(magic));
        }
        Ok(Wrapper {
            version: read_u32(bytes, 4, "wrapper")?,
            data: read_u64(bytes, 8, "wrapper")?,
        })
    }
}

/// Total size in bytes (header included) of the container that starts at `bytes`, read
/// from its header alone: the register call only gives us a pointer.
pub fn container_size(header: &[u8]) -> Result<usize, FatbinError> {
    let magic = read_u32(header, 0, "container header")?;
    if magic != CONTAINER_MAGIC {
        return Err(FatbinError::BadContainerMagic(magic));
    }
    let header_size = usize::from(read_u16(header, 6, "container header")?);
    let body = read_u64(header, 8, "container header")?;
    usize::try_from(body)
        .ok()
        .and_then(|b| b.checked_add(header_size))
        .ok_or(FatbinError::Truncated {
            what: "container",
            start: 0,
            end: usize::MAX,
            len: header.len(),
        })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    Ptx,
    Cubin,
    Other(u16),
}

impl EntryKind {
    fn from_raw(kind: u16) -> EntryKind {
        match kind {
            1 => EntryKind::Ptx,
            2 => EntryKind::Cubin,
            other => EntryKind::Other(other),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry<'a> {
    pub kind: EntryKind,
    /// 70 for `compute_70` PTX or `sm_70` cubins.
    pub arch: u32,
    /// PTX ISA version for PTX (e.g. 7.8), ELF ABI version for cubins.
    pub version: (u16, u16),
    pub flags: u64,
    pub uncompressed_size: u64,
    /// The payload as stored: compressed when `is_compressed`, trailing padding removed.
    pub payload: &'a [u8],
}

impl Entry<'_> {
    pub fn is_compressed(&self) -> bool {
        self.flags & FLAG_COMPRESSED != 0
    }

    /// The payload after decompression.
    pub fn contents(&self) -> Result<Cow<'_, [u8]>, FatbinError> {
        if !self.is_compressed() {
            return Ok(Cow::Borrowed(self.payload));
        }
        let limit = usize::try_from(self.uncompressed_size).unwrap_or(usize::MAX);
        let bytes = lz4::decompress_block(self.payload, limit).map_err(|source| {
            FatbinError::Decompress {
                arch: self.arch,
                source,
            }
        })?;
        Ok(Cow::Owned(bytes))
    }

    /// PTX source text without the terminating NUL.
    pub fn ptx_text(&self) -> Result<String, FatbinError> {
        let contents = self.contents()?;
        let end = contents
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(contents.len());
        String::from_utf8(contents[..end].to_vec())
            .map_err(|_| FatbinError::PtxNotText { arch: self.arch })
    }
}

/// The entries of one container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FatBinary<'a> {
    pub entries: Vec<Entry<'a>>,
}

impl<'a> FatBinary<'a> {
    /// Parses the container at the start of `bytes` (anything after it is ignored).
    pub fn parse(bytes: &'a [u8]) -> Result<FatBinary<'a>, FatbinError> {
        let total = container_size(bytes)?;
        let header_size = usize::from(read_u16(bytes, 6, "container header")?);
        let body = slice(bytes, header_size, total, "container")?;
        let mut entries = Vec::new();
        let mut at = 0usize;
        // Entries are 8-byte aligned; a tail shorter than a header is padding.
        while body.len().saturating_sub(at) >= ENTRY_HEADER_MIN {
            let (entry, next) = parse_entry(body, at, header_size)?;
            entries.push(entry);
            at = next;
        }
        Ok(FatBinary { entries })
    }

    /// Parses every container laid end to end, as in a program's `.nv_fatbin` section.
    pub fn parse_section(mut bytes: &'a [u8]) -> Result<Vec<FatBinary<'a>>, FatbinError> {
        let mut out = Vec::new();
        while bytes.len() >= CONTAINER_HEADER_SIZE {
            out.push(FatBinary::parse(bytes)?);
            let size = container_size(bytes)?;
            let next = size.next_multiple_of(8).min(bytes.len());
            bytes = &bytes[next..];
        }
        Ok(out)
    }

    /// Chooses the PTX to run on a GPU of architecture `target` (70 for sm_70).
    ///
    /// Policy: the PTX of the highest virtual architecture ≤ `target`, which is what the
    /// real driver would JIT. If the program only carries PTX for newer architectures we
    /// still take the oldest of those (flagged in the result so the caller can warn): the
    /// emulator interprets PTX and reports any instruction it cannot execute, which is more
    /// useful than refusing to start. No PTX at all is an error that says how to rebuild.
    pub fn select_ptx(&self, target: u32) -> Result<PtxChoice<'_, 'a>, FatbinError> {
        let ptx = || self.entries.iter().filter(|e| e.kind == EntryKind::Ptx);
        if let Some(entry) = ptx().filter(|e| e.arch <= target).max_by_key(|e| e.arch) {
            return Ok(PtxChoice {
                entry,
                newer_than_target: false,
            });
        }
        if let Some(entry) = ptx().min_by_key(|e| e.arch) {
            return Ok(PtxChoice {
                entry,
                newer_than_target: true,
            });
        }
        let mut cubin_archs: Vec<u32> = self
            .entries
            .iter()
            .filter(|e| e.kind == EntryKind::Cubin)
            .map(|e| e.arch)
            .collect();
        cubin_archs.sort_unstable();
        cubin_archs.dedup();
        Err(FatbinError::NoPtx { cubin_archs })
    }
}

#[derive(Debug, Clone, Copy)]
pub struct PtxChoice<'f, 'a> {
    pub entry: &'f Entry<'a>,
    /// The program has no PTX for the target or older; this is for a newer architecture.
    pub newer_than_target: bool,
}

/// Parses the entry at `at` in `body` and returns it with the offset of the next entry.
/// `base` is the body's offset in the container, for error messages.
fn parse_entry(body: &[u8], at: usize, base: usize) -> Result<(Entry<'_>, usize), FatbinError> {
    let kind = EntryKind::from_raw(read_u16(body, at, "entry header")?);
    let header_size =
        usize::try_from(read_u32(body, at + 4, "entry header")?).unwrap_or(usize::MAX);
    if header_size < ENTRY_HEADER_MIN {
        return Err(FatbinError::BadEntryHeader {
            at: base + at,
            size: header_size,
        });
    }
    let payload_size = to_usize(read_u64(body, at + 8, "entry header")?);
    let compressed_size = to_usize(u64::from(read_u32(body, at + 0x10, "entry header")?));
    let minor = read_u16(body, at + 0x18, "entry header")?;
    let major = read_u16(body, at + 0x1a, "entry header")?;
    let arch = read_u32(body, at + 0x1c, "entry header")?;
    let flags = read_u64(body, at + 0x28, "entry header")?;
    let uncompressed_size = read_u64(body, at + 0x38, "entry header")?;

    let start = at.saturating_add(header_size);
    let end = start.saturating_add(payload_size);
    let padded = slice(body, start, end, "entry payload")?;
    let stored = if flags & FLAG_COMPRESSED != 0 && compressed_size <= padded.len() {
        &padded[..compressed_size]
    } else {
        padded
    };
    let entry = Entry {
        kind,
        arch,
        version: (major, minor),
        flags,
        uncompressed_size,
        payload: stored,
    };
    Ok((entry, end))
}

fn to_usize(v: u64) -> usize {
    usize::try_from(v).unwrap_or(usize::MAX)
}

fn slice<'a>(
    bytes: &'a [u8],
    start: usize,
    end: usize,
    what: &'static str,
) -> Result<&'a [u8], FatbinError> {
    bytes.get(start..end).ok_or(FatbinError::Truncated {
        what,
        start,
        end,
        len: bytes.len(),
    })
}

fn read_u16(bytes: &[u8], at: usize, what: &'static str) -> Result<u16, FatbinError> {
    let s = slice(bytes, at, at.saturating_add(2), what)?;
    Ok(u16::from_le_bytes([s[0], s[1]]))
}

fn read_u32(bytes: &[u8], at: usize, what: &'static str) -> Result<u32, FatbinError> {
    let s = slice(bytes, at, at.saturating_add(4), what)?;
    Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

fn read_u64(bytes: &[u8], at: usize, what: &'static str) -> Result<u64, FatbinError> {
    let s = slice(bytes, at, at.saturating_add(8), what)?;
    let mut b = [0u8; 8];
    b.copy_from_slice(s);
    Ok(u64::from_le_bytes(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds a container from (kind, arch, flags, payload, uncompressed size) entries.
    fn container(entries: &[(u16, u32, u64, &[u8], u64)]) -> Vec<u8> {
        let mut body = Vec::new();
        for &(kind, arch, flags, payload, usize_) in entries {
            let padded = payload.len().next_multiple_of(8);
            body.extend_from_slice(&kind.to_le_bytes());
            body.extend_from_slice(&0x0101u16.to_le_bytes());
            body.extend_from_slice(&0x40u32.to_le_bytes());
            body.extend_from_slice(&(padded as u64).to_le_bytes());
            body.extend_from_slice(&(payload.len() as u32).to_le_bytes());
            body.extend_from_slice(&0u32.to_le_bytes());
            body.extend_from_slice(&8u16.to_le_bytes());
            body.extend_from_slice(&7u16.to_le_bytes());
            body.extend_from_slice(&arch.to_le_bytes());
            body.extend_from_slice(&[0; 8]);
            body.extend_from_slice(&flags.to_le_bytes());
            body.extend_from_slice(&[0; 8]);
            body.extend_from_slice(&usize_.to_le_bytes());
            body.extend_from_slice(payload);
            body.resize(body.len() + padded - payload.len(), 0);
        }
        let mut out = Vec::new();
        out.extend_from_slice(&CONTAINER_MAGIC.to_le_bytes());
        out.extend_from_slice(&1u16.to_le_bytes());
        out.extend_from_slice(&16u16.to_le_bytes());
        out.extend_from_slice(&(body.len() as u64).to_le_bytes());
        out.extend_from_slice(&body);
        out
    }

    #[test]
    fn selects_highest_ptx_not_above_target() {
        let bytes = container(&[
            (1, 52, 0x11, b"ptx52\0", 0),
            (2, 70, 0x11, b"\x7fELF", 0),
            (1, 80, 0x11, b"ptx80\0", 0),
            (1, 61, 0x11, b"ptx61\0", 0),
        ]);
        let fb = FatBinary::parse(&bytes).unwrap();
        assert_eq!(fb.entries.len(), 4);
        let choice = fb.select_ptx(70).unwrap();
        assert_eq!(choice.entry.ptx_text().unwrap(), "ptx61");
        assert!(!choice.newer_than_target);
        assert_eq!(fb.select_ptx(86).unwrap().entry.arch, 80);
    }

    #[test]
    fn only_newer_ptx_is_taken_and_flagged() {
        let bytes = container(&[(1, 90, 0x11, b"a", 0), (1, 86, 0x11, b"b", 0)]);
        let fb = FatBinary::parse(&bytes).unwrap();
        let choice = fb.select_ptx(70).unwrap();
        assert_eq!(choice.entry.arch, 86);
        assert!(choice.newer_than_target);
    }

    #[test]
    fn no_ptx_names_the_cubins_and_the_fix() {
        let bytes = container(&[(2, 80, 0x11, b"\x7fELF", 0), (2, 70, 0x11, b"\x7fELF", 0)]);
        let err = FatBinary::parse(&bytes)
            .unwrap()
            .select_ptx(70)
            .unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("only machine code for sm_70, sm_80"), "{msg}");
        assert!(msg.contains("code=compute_70"), "{msg}");
    }

    #[test]
    fn compressed_entry_is_expanded() {
        let bytes = container(&[(1, 70, 0x2011, &[0x13, b'x', 0x01, 0x00, 0x10, 0], 10)]);
        let fb = FatBinary::parse(&bytes).unwrap();
        assert!(fb.entries[0].is_compressed());
        assert_eq!(fb.entries[0].ptx_text().unwrap(), "xxxxxxxx");
    }

    #[test]
    fn truncation_and_bad_magic_are_errors() {
        let bytes = container(&[(1, 70, 0x11, b"ptx\0", 0)]);
        for cut in [0, 3, 15, 20, bytes.len() - 1] {
            assert!(FatBinary::parse(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut bad = bytes.clone();
        bad[0] ^= 1;
        assert!(matches!(
            FatBinary::parse(&bad),
            Err(FatbinError::BadContainerMagic(_))
        ));
        let mut huge = bytes.clone();
        huge[0x18..0x20].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(FatBinary::parse(&huge).is_err());
    }

    #[test]
    fn wrapper_fields() {
        let mut w = Vec::new();
        w.extend_from_slice(&WRAPPER_MAGIC.to_le_bytes());
        w.extend_from_slice(&1u32.to_le_bytes());
        w.extend_from_slice(&0x1234u64.to_le_bytes());
        w.extend_from_slice(&0u64.to_le_bytes());
        assert_eq!(
            Wrapper::parse(&w),
            Ok(Wrapper {
                version: 1,
                data: 0x1234
            })
        );
        assert_eq!(
            Wrapper::parse(&w[..8]).map_err(|e| matches!(e, FatbinError::Truncated { .. })),
            Err(true)
        );
    }
}

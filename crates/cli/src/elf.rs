//! Just enough of ELF64 to tell, before running a program, whether it will load our CUDA
//! runtime: the shared libraries it needs (`DT_NEEDED`) and whether it embeds a CUDA
//! fatbinary (section `.nv_fatbin`). Every offset is bounds-checked: a malformed file is an
//! error, never a panic.

use std::fmt;

/// What `regsim run` needs to know about an executable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElfSummary {
    /// `DT_NEEDED` entries, in file order.
    pub needed: Vec<String>,
    /// Whether the file has a `.nv_fatbin` section (device code).
    pub has_fatbin: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ElfError {
    NotElf,
    /// ELF, but not 64-bit little-endian (the only kind regsim's runtime can be loaded by).
    UnsupportedClass,
    Malformed(&'static str),
}

impl fmt::Display for ElfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ElfError::NotElf => write!(f, "not an ELF file"),
            ElfError::UnsupportedClass => write!(f, "not a 64-bit little-endian ELF file"),
            ElfError::Malformed(what) => write!(f, "malformed ELF file ({what})"),
        }
    }
}

const SHT_DYNAMIC: u32 = 6;
const SHT_GNU_VERDEF: u32 = 0x6fff_fffd;
const DT_NULL: u64 = 0;
const DT_NEEDED: u64 = 1;
const DT_SONAME: u64 = 14;

struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn bytes(&self, at: u64, len: u64, what: &'static str) -> Result<&[u8], ElfError> {
        let start = usize::try_from(at).map_err(|_| ElfError::Malformed(what))?;
        let len = usize::try_from(len).map_err(|_| ElfError::Malformed(what))?;
        start
            .checked_add(len)
            .and_then(|end| self.0.get(start..end))
            .ok_or(ElfError::Malformed(what))
    }
    fn u16(&self, at: u64, what: &'static str) -> Result<u64, ElfError> {
        let b = self.bytes(at, 2, what)?;
        Ok(u64::from(u16::from_le_bytes([b[0], b[1]])))
    }
    fn u32(&self, at: u64, what: &'static str) -> Result<u64, ElfError> {
        let b = self.bytes(at, 4, what)?;
        Ok(u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])))
    }
    fn u64(&self, at: u64, what: &'static str) -> Result<u64, ElfError> {
        let b = self.bytes(at, 8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }
    /// The NUL-terminated string at `at`.
    fn c_str(&self, at: u64, what: &'static str) -> Result<String, ElfError> {
        let start = usize::try_from(at).map_err(|_| ElfError::Malformed(what))?;
        let tail = self.0.get(start..).ok_or(ElfError::Malformed(what))?;
        let end = tail
            .iter()
            .position(|&b| b == 0)
            .ok_or(ElfError::Malformed(what))?;
        Ok(String::from_utf8_lossy(&tail[..end]).into_owned())
    }
}

/// One section header's fields that matter here.
struct Section {
    name: u64,
    kind: u32,
    offset: u64,
    size: u64,
    link: u64,
}

/// The section table of a 64-bit little-endian ELF file.
struct Sections<'a> {
    r: Reader<'a>,
    shoff: u64,
    shentsize: u64,
    count: u64,
    names_index: u64,
}

impl<'a> Sections<'a> {
    fn of(file: &'a [u8]) -> Result<Sections<'a>, ElfError> {
        if file.get(..4) != Some(b"\x7fELF".as_slice()) {
            return Err(ElfError::NotElf);
        }
        // EI_CLASS 2 = 64-bit, EI_DATA 1 = little-endian.
        if file.get(4) != Some(&2) || file.get(5) != Some(&1) {
            return Err(ElfError::UnsupportedClass);
        }
        let r = Reader(file);
        let s = Sections {
            shoff: r.u64(0x28, "section header offset")?,
            shentsize: r.u16(0x3a, "section header size")?,
            count: r.u16(0x3c, "section count")?,
            names_index: r.u16(0x3e, "section name table index")?,
            r,
        };
        if s.count > 0 && s.shentsize < 0x40 {
            return Err(ElfError::Malformed("section header size"));
        }
        Ok(s)
    }

    fn get(&self, i: u64) -> Result<Section, ElfError> {
        let r = &self.r;
        let at = i
            .checked_mul(self.shentsize)
            .and_then(|o| o.checked_add(self.shoff))
            .ok_or(ElfError::Malformed("section header offset"))?;
        Ok(Section {
            name: r.u32(at, "section header")?,
            kind: r.u32(at + 4, "section header")? as u32,
            offset: r.u64(at + 0x18, "section header")?,
            size: r.u64(at + 0x20, "section header")?,
            link: r.u32(at + 0x28, "section header")?,
        })
    }
}

pub fn summarize(file: &[u8]) -> Result<ElfSummary, ElfError> {
    let table = Sections::of(file)?;
    let r = Reader(file);
    let (shnum, shstrndx) = (table.count, table.names_index);
    let section = |i: u64| table.get(i);
    let names = if shstrndx < shnum {
        Some(section(shstrndx)?)
    } else {
        None
    };
    let mut summary = ElfSummary {
        needed: Vec::new(),
        has_fatbin: false,
    };
    for i in 0..shnum {
        let s = section(i)?;
        if let Some(names) = &names {
            let name = r.c_str(names.offset.saturating_add(s.name), "section name")?;
            summary.has_fatbin |= name == ".nv_fatbin";
        }
        if s.kind != SHT_DYNAMIC {
            continue;
        }
        let strtab = section(s.link)?;
        let entries = r.bytes(s.offset, s.size, "dynamic section")?;
        for entry in entries.chunks_exact(16) {
            let mut tag = [0u8; 8];
            tag.copy_from_slice(&entry[..8]);
            let mut val = [0u8; 8];
            val.copy_from_slice(&entry[8..]);
            match u64::from_le_bytes(tag) {
                DT_NULL => break,
                DT_NEEDED => {
                    let at = strtab.offset.saturating_add(u64::from_le_bytes(val));
                    summary.needed.push(r.c_str(at, "needed library name")?);
                }
                _ => {}
            }
        }
    }
    Ok(summary)
}

/// A copy of regsim's runtime library (linked as `libcudart.so.11.0`) that CUDA 12
/// programs load as `libcudart.so.12`: the version definition named `libcudart.so.11.0`
/// (name and `vd_hash`), the soname, and the library's API marker
/// (`cudart::soname::MARK_11`) rewritten. The new name is shorter: it is written over the
/// old string and padded with NULs, so no table moves.
pub fn retag_cudart(lib: &[u8]) -> Result<Vec<u8>, ElfError> {
    use cudart::soname::{CUDART_11, CUDART_12, MARK_11, MARK_12};
    let table = Sections::of(lib)?;
    let r = Reader(lib);
    let mut out = lib.to_vec();
    let old = [CUDART_11.as_bytes(), b"\0"].concat();
    let new = CUDART_12.as_bytes();
    // Offsets of strings that hold the old name, and of the hashes to rewrite.
    let mut names = Vec::new();
    let mut hashes = Vec::new();
    for i in 0..table.count {
        let s = table.get(i)?;
        if s.kind == SHT_GNU_VERDEF {
            let strtab = table.get(s.link)?.offset;
            let end = s.offset.saturating_add(s.size);
            let mut at = s.offset;
            loop {
                // Elf64_Verdef: version, flags, ndx, cnt (2 bytes each), hash, aux, next.
                let aux = r.u32(at + 12, "version definition")?;
                let next = r.u32(at + 16, "version definition")?;
                let name = strtab.saturating_add(r.u32(at + aux, "version name")?);
                if r.bytes(name, old.len() as u64, "version name").ok() == Some(&old[..]) {
                    names.push(name);
                    hashes.push(at + 8);
                }
                if next == 0 {
                    break;
                }
                at = at.saturating_add(next);
                if at >= end {
                    return Err(ElfError::Malformed("version definition chain"));
                }
            }
        } else if s.kind == SHT_DYNAMIC {
            let strtab = table.get(s.link)?.offset;
            let entries = r.bytes(s.offset, s.size, "dynamic section")?;
            for (k, _) in entries.chunks_exact(16).enumerate() {
                let at = s.offset + 16 * k as u64;
                match r.u64(at, "dynamic entry")? {
                    DT_NULL => break,
                    DT_SONAME => names.push(strtab.saturating_add(r.u64(at + 8, "soname")?)),
                    _ => {}
                }
            }
        }
    }
    if hashes.is_empty() {
        return Err(ElfError::Malformed(
            "no version definition libcudart.so.11.0",
        ));
    }
    let at = |offset: u64| usize::try_from(offset).map_err(|_| ElfError::Malformed("offset"));
    for hash in hashes {
        let hash = at(hash)?;
        out[hash..hash + 4].copy_from_slice(&elf_hash(new).to_le_bytes());
    }
    for name in names {
        let name = at(name)?;
        if out.get(name..name + old.len()) == Some(&old[..]) {
            out[name..name + old.len()].fill(0);
            out[name..name + new.len()].copy_from_slice(new);
        }
    }
    let mut marks = out
        .windows(MARK_11.len())
        .enumerate()
        .filter(|(_, w)| w == MARK_11)
        .map(|(i, _)| i);
    match (marks.next(), marks.next()) {
        (Some(mark), None) => out[mark..mark + MARK_12.len()].copy_from_slice(MARK_12),
        _ => {
            return Err(ElfError::Malformed(
                "not regsim's runtime library (API marker)",
            ))
        }
    }
    Ok(out)
}

/// The System V ABI's ELF hash, which `vd_hash` holds for a version name.
fn elf_hash(name: &[u8]) -> u32 {
    let mut h: u32 = 0;
    for &c in name {
        h = (h << 4).wrapping_add(u32::from(c));
        let g = h & 0xf000_0000;
        if g != 0 {
            h ^= g >> 24;
        }
        h &= !g;
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal ELF64 with section names, a string table, a dynamic section needing
    /// `libs`, and optionally a `.nv_fatbin` section.
    fn elf(libs: &[&str], fatbin: bool) -> Vec<u8> {
        let mut shstr = b"\0.shstrtab\0.dynstr\0.dynamic\0.nv_fatbin\0".to_vec();
        shstr.resize(48, 0);
        let mut dynstr = vec![0u8];
        let mut dynamic = Vec::new();
        for lib in libs {
            dynamic.extend_from_slice(&DT_NEEDED.to_le_bytes());
            dynamic.extend_from_slice(&(dynstr.len() as u64).to_le_bytes());
            dynstr.extend_from_slice(lib.as_bytes());
            dynstr.push(0);
        }
        dynamic.extend_from_slice(&[0u8; 16]);
        dynstr.resize(dynstr.len().next_multiple_of(8), 0);
        let shstr_off = 0x40u64;
        let dynstr_off = shstr_off + shstr.len() as u64;
        let dynamic_off = dynstr_off + dynstr.len() as u64;
        let sh_off = dynamic_off + dynamic.len() as u64;
        let mut sections = vec![
            (0u32, 0u32, 0u64, 0u64, 0u32),
            (1, 3, shstr_off, shstr.len() as u64, 0),
            (11, 3, dynstr_off, dynstr.len() as u64, 0),
            (19, SHT_DYNAMIC, dynamic_off, dynamic.len() as u64, 2),
        ];
        if fatbin {
            sections.push((28, 1, 0, 0, 0));
        }
        let mut f = vec![0u8; 0x40];
        f[..4].copy_from_slice(b"\x7fELF");
        f[4] = 2;
        f[5] = 1;
        f[0x28..0x30].copy_from_slice(&sh_off.to_le_bytes());
        f[0x3a..0x3c].copy_from_slice(&0x40u16.to_le_bytes());
        f[0x3c..0x3e].copy_from_slice(&(sections.len() as u16).to_le_bytes());
        f[0x3e..0x40].copy_from_slice(&1u16.to_le_bytes());
        f.extend_from_slice(&shstr);
        f.extend_from_slice(&dynstr);
        f.extend_from_slice(&dynamic);
        for (name, kind, off, size, link) in sections {
            let mut sh = [0u8; 0x40];
            sh[..4].copy_from_slice(&name.to_le_bytes());
            sh[4..8].copy_from_slice(&kind.to_le_bytes());
            sh[0x18..0x20].copy_from_slice(&off.to_le_bytes());
            sh[0x20..0x28].copy_from_slice(&size.to_le_bytes());
            sh[0x28..0x2c].copy_from_slice(&link.to_le_bytes());
            f.extend_from_slice(&sh);
        }
        f
    }

    #[test]
    fn needed_libraries_and_fatbin() {
        let s = summarize(&elf(&["libcudart.so.11.0", "libc.so.6"], true)).unwrap();
        assert_eq!(s.needed, ["libcudart.so.11.0", "libc.so.6"]);
        assert!(s.has_fatbin);
        let s = summarize(&elf(&["libc.so.6"], false)).unwrap();
        assert_eq!(s.needed, ["libc.so.6"]);
        assert!(!s.has_fatbin);
    }

    #[test]
    fn other_files_are_errors_not_panics() {
        assert_eq!(summarize(b"#!/bin/sh\necho hi\n"), Err(ElfError::NotElf));
        assert_eq!(summarize(b""), Err(ElfError::NotElf));
        let mut e32 = elf(&[], false);
        e32[4] = 1;
        assert_eq!(summarize(&e32), Err(ElfError::UnsupportedClass));
        let full = elf(&["libcudart.so.11.0"], true);
        for cut in 0..full.len() {
            // Any truncation is a clean error (or, if only padding was cut, a result).
            let _ = summarize(&full[..cut]);
        }
        let mut bad = full.clone();
        bad[0x28..0x30].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(matches!(summarize(&bad), Err(ElfError::Malformed(_))));
    }

    #[test]
    fn elf_hash_of_known_version_names() {
        // vd_hash values readelf -V prints for these names.
        assert_eq!(elf_hash(b"GLIBC_2.2.5"), 0x09691a75);
        assert_eq!(elf_hash(b"libcudart.so.11.0"), 0x03db_2de0);
    }

    #[test]
    fn retagging_refuses_other_files() {
        assert_eq!(retag_cudart(b"text"), Err(ElfError::NotElf));
        // An ELF file with no libcudart.so.11.0 version definition.
        assert!(matches!(
            retag_cudart(&elf(&["libc.so.6"], false)),
            Err(ElfError::Malformed(_))
        ));
    }

    #[test]
    fn a_real_workload_binary() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../workloads/bin/saxpy");
        let file = std::fs::read(path).expect("committed workload binary");
        let s = summarize(&file).unwrap();
        assert!(s.needed.iter().any(|n| n == "libcudart.so.11.0"), "{s:?}");
        assert!(s.has_fatbin);
    }
}

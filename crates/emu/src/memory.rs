//! The simulated GPU's memory: device global memory as a table of host allocations, and
//! the per-CTA shared, per-thread local and per-launch parameter spaces.
//!
//! # Identity mapping of global memory
//!
//! Every global allocation (`cudaMalloc`, `cudaMallocManaged`, `cudaMallocHost`, module
//! `.global`/`.const` variables) is a block this module obtains from the host allocator,
//! and its *device address is the host pointer* of that block. The runtime hands those
//! addresses to the program, so managed and pinned memory are the same bytes on both
//! sides and a device pointer printed by the program looks like one. Regions never
//! overlap because the host allocator never returns overlapping live blocks; they are
//! kept sorted by base address and found by binary search, with the last hit cached
//! (consecutive accesses almost always fall in the same allocation).
//!
//! Soundness: region bytes are reached only through raw pointers after a bounds check
//! against the region's size, so an access never leaves the allocation. The host program
//! may also write those bytes through the pointers it was given (managed/pinned memory),
//! but only while no kernel runs: the runtime executes kernels synchronously on the
//! calling thread, so there are no concurrent accesses from Rust references. We never
//! create Rust references (`&[u8]`) into region memory that outlive one copy.
//!
//! # Generic addressing windows
//!
//! Shared and local addresses are offsets from zero in their own space. A *generic*
//! address to them (`cvta.shared`, `cvta.local`, or an address taken in a generic
//! context) lies in a window far above any user-space pointer: x86-64 user space ends
//! below `0x0000_8000_0000_0000` (4-level paging) or `0x0100_0000_0000_0000` (5-level),
//! so the windows at [`SHARED_WINDOW`] and [`LOCAL_WINDOW`], in the kernel half of the
//! address space, can never collide with an allocation of this module.

use std::alloc::{self, Layout};
use std::cell::Cell;
use std::fmt;
use std::ptr::NonNull;

/// Base of the generic-address window onto the current CTA's shared memory.
pub const SHARED_WINDOW: u64 = 0xFE00_0000_0000_0000;
/// Base of the generic-address window onto the current thread's local memory.
pub const LOCAL_WINDOW: u64 = 0xFF00_0000_0000_0000;
/// Base of the generic-address window onto the kernel's parameter buffer.
pub const PARAM_WINDOW: u64 = 0xFF80_0000_0000_0000;
/// Base of the addresses that stand for functions (indirect calls).
pub const FUNC_WINDOW: u64 = 0xFFF0_0000_0000_0000;
/// Size of each window (and the largest shared or local space a kernel may use).
pub const WINDOW_SIZE: u64 = 1 << 40;

/// Alignment of every global allocation (cudaMalloc guarantees 256 bytes).
pub const ALLOC_ALIGN: usize = 256;

/// What a global allocation is for; reported in diagnostics and used by the runtime.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AllocKind {
    /// `cudaMalloc`, `cudaMallocPitch`, `cudaMallocArray`.
    Device,
    /// `cudaMallocManaged`.
    Managed,
    /// `cudaMallocHost`, `cudaHostAlloc`.
    Host,
    /// A module-scope `.global` variable.
    GlobalVariable,
    /// A module-scope `.const` variable.
    ConstVariable,
}

/// A memory fault, with the nearest allocation for context.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MemError {
    #[error("address {addr:#x} ({size} bytes) is outside every allocation{}", near_text(*nearest))]
    Unallocated {
        addr: u64,
        size: u64,
        nearest: Option<(u64, u64)>,
    },
    #[error("access of {size} bytes at {addr:#x} runs past the end of the allocation at {base:#x} ({len} bytes)")]
    OutOfBounds {
        addr: u64,
        size: u64,
        base: u64,
        len: u64,
    },
    #[error("misaligned {size}-byte access at {addr:#x}")]
    Misaligned { addr: u64, size: u64 },
    #[error("free of {addr:#x}, which is not the start of a live allocation{}", near_text(*nearest))]
    BadFree {
        addr: u64,
        nearest: Option<(u64, u64)>,
    },
    #[error("allocation of {size} bytes failed")]
    OutOfMemory { size: u64 },
    #[error("{space} access of {size} bytes at offset {addr:#x} is past its {limit} bytes")]
    SpaceOverflow {
        space: &'static str,
        addr: u64,
        size: u64,
        limit: u64,
    },
}

fn near_text(n: Option<(u64, u64)>) -> String {
    match n {
        Some((b, l)) => format!(" (nearest allocation: {b:#x}, {l} bytes)"),
        None => String::new(),
    }
}

/// One global allocation.
struct Region {
    base: u64,
    len: u64,
    kind: AllocKind,
    ptr: NonNull<u8>,
    layout: Layout,
}

/// Device global memory (including `.const` variables): the allocation table.
pub struct GlobalMemory {
    regions: Vec<Region>,
    last_hit: Cell<usize>,
    bytes_allocated: u64,
}

// SAFETY: the raw pointers are owned exclusively by this table (see module docs); moving
// the table to another thread moves that ownership with it.
unsafe impl Send for GlobalMemory {}

impl Default for GlobalMemory {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for GlobalMemory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GlobalMemory")
            .field("allocations", &self.regions.len())
            .field("bytes", &self.bytes_allocated)
            .finish()
    }
}

impl GlobalMemory {
    pub fn new() -> Self {
        GlobalMemory {
            regions: Vec::new(),
            last_hit: Cell::new(0),
            bytes_allocated: 0,
        }
    }

    /// Allocates `size` zeroed bytes aligned to [`ALLOC_ALIGN`]; returns the address.
    pub fn alloc(&mut self, size: u64, kind: AllocKind) -> Result<u64, MemError> {
        let bytes = usize::try_from(size.max(1)).map_err(|_| MemError::OutOfMemory { size })?;
        let layout = Layout::from_size_align(bytes, ALLOC_ALIGN)
            .map_err(|_| MemError::OutOfMemory { size })?;
        // SAFETY: layout has nonzero size.
        let raw = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).ok_or(MemError::OutOfMemory { size })?;
        let base = raw as u64;
        let at = self.regions.partition_point(|r| r.base < base);
        self.regions.insert(
            at,
            Region {
                base,
                len: size,
                kind,
                ptr,
                layout,
            },
        );
        self.bytes_allocated += size;
        Ok(base)
    }

    /// Frees the allocation starting at `addr`.
    pub fn free(&mut self, addr: u64) -> Result<(), MemError> {
        let at = self.regions.partition_point(|r| r.base < addr);
        match self.regions.get(at) {
            Some(r) if r.base == addr => {
                let r = self.regions.remove(at);
                self.bytes_allocated -= r.len;
                self.last_hit.set(0);
                // SAFETY: allocated in `alloc` with exactly this layout, freed once
                // (the region was just removed from the table).
                unsafe { alloc::dealloc(r.ptr.as_ptr(), r.layout) };
                Ok(())
            }
            _ => Err(MemError::BadFree {
                addr,
                nearest: self.nearest(addr),
            }),
        }
    }

    /// The kind of the allocation containing `addr`, if any.
    pub fn kind_of(&self, addr: u64) -> Option<AllocKind> {
        self.find(addr, 0).ok().map(|i| self.regions[i].kind)
    }

    /// `(base, size)` of the allocation containing `addr`.
    pub fn allocation_of(&self, addr: u64) -> Option<(u64, u64)> {
        self.find(addr, 0)
            .ok()
            .map(|i| (self.regions[i].base, self.regions[i].len))
    }

    /// `(base, size)` of every live allocation, in address order. The timing model maps
    /// them to simulated addresses that do not depend on where the host allocator put
    /// them, so that cache and DRAM behaviour is the same from run to run.
    pub fn allocations(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.regions.iter().map(|r| (r.base, r.len))
    }

    pub fn bytes_allocated(&self) -> u64 {
        self.bytes_allocated
    }

    /// The allocation nearest to `addr` (for diagnostics).
    fn nearest(&self, addr: u64) -> Option<(u64, u64)> {
        let at = self.regions.partition_point(|r| r.base <= addr);
        let before = at.checked_sub(1).map(|i| &self.regions[i]);
        let after = self.regions.get(at);
        let dist = |r: &Region| {
            if addr < r.base {
                r.base - addr
            } else {
                addr.saturating_sub(r.base + r.len)
            }
        };
        match (before, after) {
            (Some(b), Some(a)) => Some(if dist(b) <= dist(a) { b } else { a }),
            (Some(r), None) | (None, Some(r)) => Some(r),
            (None, None) => None,
        }
        .map(|r| (r.base, r.len))
    }

    /// Index of the region holding `[addr, addr + size)`.
    #[inline]
    fn find(&self, addr: u64, size: u64) -> Result<usize, MemError> {
        let hit = self.last_hit.get();
        let i = match self.regions.get(hit) {
            Some(r) if addr >= r.base && addr < r.base + r.len.max(1) => hit,
            _ => {
                let at = self.regions.partition_point(|r| r.base <= addr);
                match at.checked_sub(1) {
                    Some(i) if addr < self.regions[i].base + self.regions[i].len.max(1) => i,
                    _ => {
                        return Err(MemError::Unallocated {
                            addr,
                            size,
                            nearest: self.nearest(addr),
                        })
                    }
                }
            }
        };
        let r = &self.regions[i];
        if addr
            .checked_add(size)
            .is_none_or(|end| end > r.base + r.len)
        {
            return Err(MemError::OutOfBounds {
                addr,
                size,
                base: r.base,
                len: r.len,
            });
        }
        self.last_hit.set(i);
        Ok(i)
    }

    /// Copies `buf.len()` bytes from device address `addr`.
    #[inline]
    pub fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), MemError> {
        let i = self.find(addr, buf.len() as u64)?;
        let r = &self.regions[i];
        // SAFETY: `find` checked [addr, addr+len) lies inside the region's live block.
        unsafe {
            let src = r.ptr.as_ptr().add((addr - r.base) as usize);
            std::ptr::copy_nonoverlapping(src, buf.as_mut_ptr(), buf.len());
        }
        Ok(())
    }

    /// Copies `buf` to device address `addr`.
    #[inline]
    pub fn write(&mut self, addr: u64, buf: &[u8]) -> Result<(), MemError> {
        let i = self.find(addr, buf.len() as u64)?;
        let r = &self.regions[i];
        // SAFETY: as in `read`; `&mut self` excludes other accesses through this table.
        unsafe {
            let dst = r.ptr.as_ptr().add((addr - r.base) as usize);
            std::ptr::copy_nonoverlapping(buf.as_ptr(), dst, buf.len());
        }
        Ok(())
    }

    /// Reads a little-endian unsigned value of 1, 2, 4 or 8 bytes.
    #[inline]
    pub fn read_uint(&self, addr: u64, size: u32) -> Result<u64, MemError> {
        let mut b = [0u8; 8];
        self.read(addr, &mut b[..size as usize])?;
        Ok(u64::from_le_bytes(b))
    }

    /// Writes the low `size` bytes of `value`, little-endian.
    #[inline]
    pub fn write_uint(&mut self, addr: u64, size: u32, value: u64) -> Result<(), MemError> {
        self.write(addr, &value.to_le_bytes()[..size as usize])
    }

    /// Device-to-device copy (regions may be the same; overlapping ranges are handled).
    pub fn memcpy(&mut self, dst: u64, src: u64, len: u64) -> Result<(), MemError> {
        let si = self.find(src, len)?;
        let di = self.find(dst, len)?;
        let (s, d) = (&self.regions[si], &self.regions[di]);
        // SAFETY: both ranges checked; `copy` tolerates overlap.
        unsafe {
            std::ptr::copy(
                s.ptr.as_ptr().add((src - s.base) as usize),
                d.ptr.as_ptr().add((dst - d.base) as usize),
                len as usize,
            );
        }
        Ok(())
    }

    /// Fills `len` bytes at `addr` with `byte`.
    pub fn memset(&mut self, addr: u64, byte: u8, len: u64) -> Result<(), MemError> {
        let i = self.find(addr, len)?;
        let r = &self.regions[i];
        // SAFETY: range checked.
        unsafe {
            std::ptr::write_bytes(
                r.ptr.as_ptr().add((addr - r.base) as usize),
                byte,
                len as usize,
            )
        };
        Ok(())
    }
}

impl Drop for GlobalMemory {
    fn drop(&mut self) {
        for r in self.regions.drain(..) {
            // SAFETY: each region was allocated with its layout and is freed once here.
            unsafe { alloc::dealloc(r.ptr.as_ptr(), r.layout) };
        }
    }
}

/// Checks PTX's natural-alignment rule for an access of `size` bytes.
#[inline]
pub fn check_aligned(addr: u64, size: u32) -> Result<(), MemError> {
    if addr & (size as u64 - 1) != 0 {
        Err(MemError::Misaligned {
            addr,
            size: size as u64,
        })
    } else {
        Ok(())
    }
}

/// A flat byte space with a fixed size: shared memory of one CTA, local memory of one
/// thread, a parameter buffer.
#[derive(Clone, Debug, Default)]
pub struct FlatSpace {
    pub bytes: Vec<u8>,
}

impl FlatSpace {
    pub fn new(size: usize) -> Self {
        FlatSpace {
            bytes: vec![0; size],
        }
    }

    #[inline]
    fn range(
        &self,
        space: &'static str,
        addr: u64,
        size: u32,
    ) -> Result<std::ops::Range<usize>, MemError> {
        let end = addr.checked_add(size as u64);
        match end {
            Some(end) if end <= self.bytes.len() as u64 => Ok(addr as usize..end as usize),
            _ => Err(MemError::SpaceOverflow {
                space,
                addr,
                size: size as u64,
                limit: self.bytes.len() as u64,
            }),
        }
    }

    #[inline]
    pub fn read_uint(&self, space: &'static str, addr: u64, size: u32) -> Result<u64, MemError> {
        let r = self.range(space, addr, size)?;
        let mut b = [0u8; 8];
        b[..size as usize].copy_from_slice(&self.bytes[r]);
        Ok(u64::from_le_bytes(b))
    }

    #[inline]
    pub fn write_uint(
        &mut self,
        space: &'static str,
        addr: u64,
        size: u32,
        value: u64,
    ) -> Result<(), MemError> {
        let r = self.range(space, addr, size)?;
        self.bytes[r].copy_from_slice(&value.to_le_bytes()[..size as usize]);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alloc_read_write_free() {
        let mut m = GlobalMemory::new();
        let a = m.alloc(100, AllocKind::Device).unwrap();
        let b = m.alloc(64, AllocKind::Managed).unwrap();
        assert_eq!(a % ALLOC_ALIGN as u64, 0);
        m.write_uint(a + 96, 4, 0xDEAD_BEEF).unwrap();
        assert_eq!(m.read_uint(a + 96, 4).unwrap(), 0xDEAD_BEEF);
        assert_eq!(m.read_uint(a, 8).unwrap(), 0, "fresh memory is zeroed");
        // Identity mapping: the address is the host pointer.
        m.write_uint(b, 8, 0x0102_0304_0506_0708).unwrap();
        let host = unsafe { std::ptr::read_unaligned(b as *const u64) };
        assert_eq!(host, 0x0102_0304_0506_0708);
        assert_eq!(m.kind_of(b + 3), Some(AllocKind::Managed));
        let e = m.read_uint(a + 98, 4).unwrap_err();
        assert_eq!(
            e,
            MemError::OutOfBounds {
                addr: a + 98,
                size: 4,
                base: a,
                len: 100
            }
        );
        m.free(a).unwrap();
        assert!(matches!(m.free(a), Err(MemError::BadFree { .. })));
        assert!(matches!(
            m.read_uint(a, 4),
            Err(MemError::Unallocated { .. })
        ));
        assert!(
            matches!(m.free(b + 8), Err(MemError::BadFree { nearest: Some((x, 64)), .. }) if x == b)
        );
    }

    #[test]
    fn unallocated_error_names_nearest_allocation() {
        let mut m = GlobalMemory::new();
        let a = m.alloc(16, AllocKind::Device).unwrap();
        match m.read_uint(a + 40, 4) {
            Err(MemError::Unallocated {
                nearest: Some((base, 16)),
                ..
            }) => assert_eq!(base, a),
            other => panic!("{other:?}"),
        }
        assert!(m
            .read_uint(0, 4)
            .unwrap_err()
            .to_string()
            .contains("nearest allocation"));
    }

    #[test]
    fn many_regions_are_found_by_binary_search() {
        let mut m = GlobalMemory::new();
        let addrs: Vec<u64> = (0..200)
            .map(|i| m.alloc(8 + i, AllocKind::Device).unwrap())
            .collect();
        for (i, &a) in addrs.iter().enumerate() {
            m.write_uint(a, 8, i as u64).unwrap();
        }
        for (i, &a) in addrs.iter().enumerate().rev() {
            assert_eq!(m.read_uint(a, 8).unwrap(), i as u64);
            assert_eq!(m.allocation_of(a + 7), Some((a, 8 + i as u64)));
        }
    }

    #[test]
    fn memcpy_memset_and_alignment() {
        let mut m = GlobalMemory::new();
        let a = m.alloc(32, AllocKind::Device).unwrap();
        let b = m.alloc(32, AllocKind::Device).unwrap();
        m.memset(a, 0xAB, 32).unwrap();
        m.memcpy(b + 8, a, 16).unwrap();
        assert_eq!(m.read_uint(b, 8).unwrap(), 0);
        assert_eq!(m.read_uint(b + 8, 8).unwrap(), 0xABAB_ABAB_ABAB_ABAB);
        assert!(m.memcpy(b + 20, a, 16).is_err());
        assert!(check_aligned(a + 2, 4).is_err());
        assert!(check_aligned(a + 4, 4).is_ok());
    }

    // The windows sit above 5-level-paging user space and do not overlap.
    const _: () = assert!(SHARED_WINDOW > 0x0100_0000_0000_0000);
    const _: () = assert!(SHARED_WINDOW + WINDOW_SIZE <= LOCAL_WINDOW);
    const _: () = assert!(LOCAL_WINDOW + WINDOW_SIZE <= PARAM_WINDOW);
    const _: () = assert!(PARAM_WINDOW.checked_add(WINDOW_SIZE).is_some());

    #[test]
    fn flat_space_bounds() {
        let mut s = FlatSpace::new(16);
        s.write_uint("shared", 12, 4, 7).unwrap();
        assert_eq!(s.read_uint("shared", 12, 4).unwrap(), 7);
        assert!(matches!(
            s.read_uint("shared", 14, 4),
            Err(MemError::SpaceOverflow { limit: 16, .. })
        ));
    }
}

//! The simulated GPU's memory: device global memory as a table of allocations at
//! simulated addresses, and the per-CTA shared, per-thread local and per-launch parameter
//! spaces.
//!
//! # Simulated device addresses
//!
//! Every global allocation (`cudaMalloc`, `cudaMallocManaged`, `cudaMallocHost`, module
//! `.global`/`.const` variables, device-side `malloc`) gets its device address from the
//! fixed layout of [`address_space`], first-fit from the lowest free address, so a program
//! sees the same pointers in every run on every machine whatever the host allocator does
//! (address randomisation, earlier host allocations); register values that hold pointers,
//! and everything computed from them, are the same from run to run. The bytes live in a
//! host block per allocation, and the emulator translates a device address to its block:
//!
//! - device memory ([`AllocKind::Device`], module variables) lives in a host heap block the
//!   program never sees, as device memory is not host memory on a GPU either; the runtime
//!   copies through [`GlobalMemory::host_ptr`];
//! - memory the host program dereferences itself (managed, pinned, `__managed__`
//!   variables: [`AllocKind::is_host_visible`]) is mapped in the host process *at its
//!   device address* (the host-visible space of [`address_space`]), so the pointer the
//!   program gets works on both sides, as with unified memory.
//!
//! Regions never overlap (the layout gives each its own range); they are kept sorted by
//! base address and found by binary search, with the last hit cached (consecutive
//! accesses almost always fall in the same allocation).
//!
//! Soundness: region bytes are reached only through raw pointers after a bounds check
//! against the region's size, so an access never leaves the allocation. The host program
//! may also write host-visible bytes through the pointers it was given, but only while no
//! kernel runs: the runtime executes kernels synchronously on the calling thread, so there
//! are no concurrent accesses from Rust references. We never create Rust references
//! (`&[u8]`) into region memory that outlive one copy.
//!
//! # Stray accesses near an allocation
//!
//! A GPU does not trap an access a little outside an allocation: the driver carves
//! allocations out of much larger pages, so the bytes around one are mapped memory (a
//! neighbour's, or unused). Every region therefore reserves [`STRAY_WINDOW`] bytes of
//! zeroed padding on each side of the allocation, which no other region can own. With
//! [`StrayPolicy::Allow`] (what `regsim run` uses unless `--strict-memory`) a kernel access
//! that lies in that padding succeeds: reads return the padding's contents (zero until
//! something writes there, so deterministic), writes land there, and the access is
//! recorded for the emulator to report ([`GlobalMemory::take_stray`]). Anything farther
//! away still faults. With [`StrayPolicy::Fault`] (the default here) the padding is never
//! reachable and every access outside an allocation faults precisely. Host-side copies
//! (`memcpy`, `memset`) are always precise.
//!
//! # Generic addressing windows
//!
//! Shared and local addresses are offsets from zero in their own space. A *generic*
//! address to them (`cvta.shared`, `cvta.local`, or an address taken in a generic
//! context) lies in a window far above the global allocations' space (which ends at
//! [`address_space::SPACE_END`]) and above any user-space pointer: x86-64 user space ends
//! below `0x0000_8000_0000_0000` (4-level paging) or `0x0100_0000_0000_0000` (5-level),
//! so the windows at [`SHARED_WINDOW`] and [`LOCAL_WINDOW`], in the kernel half of the
//! address space, can never collide with a global allocation. They are fixed too.

pub mod address_space;
pub mod local;
pub mod snapshot;

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

/// How far outside an allocation a kernel access may stray and still find mapped memory:
/// the device-memory page the CUDA driver maps allocations with. NVIDIA GPUs map video
/// memory with 4 KB, 64 KB ("big page") and, since Pascal, 2 MB pages, and the driver's
/// allocator sub-allocates `cudaMalloc` blocks from 2 MB chunks (the granularity
/// `cuMemGetAllocationGranularity` reports for device memory). 64 KB, the big-page size of
/// every generation regsim models (Fermi through Turing), is the smallest neighbourhood
/// that is mapped around any allocation on all of them; it keeps the padding every region
/// reserves (twice this) small.
pub const STRAY_WINDOW: u64 = 64 << 10;

/// What a kernel access just outside an allocation does (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StrayPolicy {
    /// Fault precisely, as a memory checker would (`regsim run --strict-memory`).
    #[default]
    Fault,
    /// Succeed within [`STRAY_WINDOW`] of an allocation, as on a GPU, and record it.
    Allow,
}

/// A kernel access that succeeded only because of [`StrayPolicy::Allow`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StrayAccess {
    pub addr: u64,
    pub size: u64,
    /// The allocation whose padding it reached.
    pub base: u64,
    pub len: u64,
}

impl fmt::Display for StrayAccess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let end = self.base + self.len;
        let (distance, side) = if self.addr < self.base {
            (self.base - self.addr, "before")
        } else {
            (self.addr + self.size - end, "past the end of")
        };
        write!(
            f,
            "{}-byte access at {:#x} is {distance} bytes {side} the allocation at {:#x} \
             ({} bytes)",
            self.size, self.addr, self.base, self.len
        )
    }
}

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
    /// A module-scope `.global .attribute(.managed)` variable (`__managed__`).
    ManagedVariable,
}

impl AllocKind {
    /// Whether the host program dereferences this memory itself, so that it must be host
    /// memory at its device address (see the module docs).
    pub fn is_host_visible(self) -> bool {
        matches!(
            self,
            AllocKind::Managed | AllocKind::Host | AllocKind::ManagedVariable
        )
    }
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

/// Where a region's host block came from, and how to give it back.
#[derive(Clone, Copy)]
enum Backing {
    /// The host heap, for device memory at a device-space address.
    Heap(Layout),
    /// A host mapping at the device address itself, of this many bytes.
    HostVisible(u64),
}

/// One global allocation. Its device addresses, and its host block, start
/// [`STRAY_WINDOW`] bytes before `base` and end [`STRAY_WINDOW`] bytes after the
/// allocation (rounded up to [`ALLOC_ALIGN`]).
struct Region {
    base: u64,
    len: u64,
    kind: AllocKind,
    /// The host block (padding included).
    block: NonNull<u8>,
    backing: Backing,
}

impl Region {
    /// Pointer to device address `addr`, which must lie in the block.
    #[inline]
    fn at(&self, addr: u64) -> *mut u8 {
        // SAFETY (of callers' use): `addr - (base - STRAY_WINDOW)` is within the block.
        unsafe {
            self.block
                .as_ptr()
                .add((addr - (self.base - STRAY_WINDOW)) as usize)
        }
    }
}

/// A stray access the emulator allowed, where it happened (first occurrence per kernel
/// and instruction).
#[derive(Clone, Debug, PartialEq)]
pub struct StrayWarning {
    pub location: crate::Location,
    pub access: StrayAccess,
}

/// Device global memory (including `.const` variables): the allocation table.
pub struct GlobalMemory {
    regions: Vec<Region>,
    /// Device-space addresses (padding included) of the allocations not host-visible.
    space: address_space::SpaceAllocator,
    last_hit: Cell<usize>,
    bytes_allocated: u64,
    /// What kernel accesses just outside an allocation do.
    pub stray_policy: StrayPolicy,
    /// The first stray access since the last [`GlobalMemory::take_stray`].
    stray: Cell<Option<StrayAccess>>,
    /// Every allowed stray access, once per kernel and instruction, in the order met.
    pub stray_warnings: Vec<StrayWarning>,
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
        address_space::reserve();
        GlobalMemory {
            regions: Vec::new(),
            space: address_space::SpaceAllocator::new(
                address_space::DEVICE_SPACE,
                address_space::HOST_VISIBLE_SPACE,
            ),
            last_hit: Cell::new(0),
            bytes_allocated: 0,
            stray_policy: StrayPolicy::default(),
            stray: Cell::new(None),
            stray_warnings: Vec::new(),
        }
    }

    /// Allocates `size` zeroed bytes aligned to [`ALLOC_ALIGN`], with the stray-access
    /// padding around them, at the lowest free address of the kind's space (see the module
    /// docs); returns the address.
    pub fn alloc(&mut self, size: u64, kind: AllocKind) -> Result<u64, MemError> {
        let oom = MemError::OutOfMemory { size };
        let padded = size
            .max(1)
            .checked_next_multiple_of(ALLOC_ALIGN as u64)
            .and_then(|n| n.checked_add(2 * STRAY_WINDOW))
            .ok_or(oom.clone())?;
        let (block, backing, start) = if kind.is_host_visible() {
            let (block, len) = address_space::map_host_visible(padded).ok_or(oom)?;
            (block, Backing::HostVisible(len), block.as_ptr() as u64)
        } else {
            let bytes = usize::try_from(padded).map_err(|_| oom.clone())?;
            let layout = Layout::from_size_align(bytes, ALLOC_ALIGN).map_err(|_| oom.clone())?;
            let start = self.space.take(padded).ok_or(oom.clone())?;
            // SAFETY: layout has nonzero size.
            let raw = unsafe { alloc::alloc_zeroed(layout) };
            let Some(block) = NonNull::new(raw) else {
                self.space.give_back(start, padded);
                return Err(oom);
            };
            (block, Backing::Heap(layout), start)
        };
        let base = start + STRAY_WINDOW;
        let at = self.regions.partition_point(|r| r.base < base);
        self.regions.insert(
            at,
            Region {
                base,
                len: size,
                kind,
                block,
                backing,
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
                self.release(&r);
                Ok(())
            }
            _ => Err(MemError::BadFree {
                addr,
                nearest: self.nearest(addr),
            }),
        }
    }

    /// Gives a removed region's block and addresses back.
    fn release(&mut self, r: &Region) {
        match r.backing {
            Backing::Heap(layout) => {
                // SAFETY: allocated in `alloc` with exactly this layout, freed once (the
                // region has been removed from the table).
                unsafe { alloc::dealloc(r.block.as_ptr(), layout) };
                self.space
                    .give_back(r.base - STRAY_WINDOW, layout.size() as u64);
            }
            Backing::HostVisible(len) => address_space::unmap_host_visible(r.block, len),
        }
    }

    /// The host bytes behind `[addr, addr + len)`, which must lie inside one allocation
    /// (precisely: no stray padding): where the runtime copies to and from device memory.
    /// Valid until that allocation is freed.
    pub fn host_ptr(&self, addr: u64, len: u64) -> Result<*mut u8, MemError> {
        let i = self.find(addr, len)?;
        Ok(self.regions[i].at(addr))
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
        // The common case, inlined: the access lies inside the region of the last one
        // (the lanes of a warp access mostly touch one allocation).
        let hit = self.last_hit.get();
        if let Some(r) = self.regions.get(hit) {
            let offset = addr.wrapping_sub(r.base);
            if addr >= r.base && offset < r.len && size <= r.len - offset {
                return Ok(hit);
            }
        }
        self.find_any(addr, size)
    }

    /// [`Self::find`] by a search of the regions.
    #[inline(never)]
    fn find_any(&self, addr: u64, size: u64) -> Result<usize, MemError> {
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

    /// Index of the region whose block holds `[addr, addr + size)`: the allocation itself,
    /// or under [`StrayPolicy::Allow`] its padding (recorded as a stray access).
    #[inline]
    fn find_kernel(&self, addr: u64, size: u64) -> Result<usize, MemError> {
        match self.find(addr, size) {
            Ok(i) => Ok(i),
            Err(e) if self.stray_policy == StrayPolicy::Fault => Err(e),
            Err(e) => self.find_stray(addr, size).ok_or(e),
        }
    }

    #[cold]
    fn find_stray(&self, addr: u64, size: u64) -> Option<usize> {
        let end = addr.checked_add(size)?;
        // Blocks do not overlap, so at most the regions either side of `addr` can hold it.
        let at = self.regions.partition_point(|r| r.base <= addr);
        let candidates = [at.checked_sub(1), Some(at)];
        let i = candidates.into_iter().flatten().find(|&i| {
            self.regions.get(i).is_some_and(|r| {
                let padded_end = r.base + r.len.max(1).next_multiple_of(ALLOC_ALIGN as u64);
                addr >= r.base - STRAY_WINDOW && end <= padded_end + STRAY_WINDOW
            })
        })?;
        let r = &self.regions[i];
        if self.stray.get().is_none() {
            self.stray.set(Some(StrayAccess {
                addr,
                size,
                base: r.base,
                len: r.len,
            }));
        }
        Some(i)
    }

    /// Whether a stray access happened since the last [`GlobalMemory::take_stray`].
    #[inline]
    pub fn has_stray(&self) -> bool {
        self.stray.get().is_some()
    }

    /// The first stray access since the last call, if any (see [`StrayPolicy::Allow`]).
    #[inline]
    pub fn take_stray(&self) -> Option<StrayAccess> {
        self.stray.take()
    }

    /// Copies `buf.len()` bytes from device address `addr` (a kernel's access: see
    /// [`StrayPolicy`]).
    #[inline]
    pub fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), MemError> {
        let i = self.find_kernel(addr, buf.len() as u64)?;
        let r = &self.regions[i];
        // SAFETY: `find_kernel` checked [addr, addr+len) lies inside the region's block.
        unsafe {
            std::ptr::copy_nonoverlapping(r.at(addr), buf.as_mut_ptr(), buf.len());
        }
        Ok(())
    }

    /// Copies `buf` to device address `addr` (a kernel's access: see [`StrayPolicy`]).
    #[inline]
    pub fn write(&mut self, addr: u64, buf: &[u8]) -> Result<(), MemError> {
        let i = self.find_kernel(addr, buf.len() as u64)?;
        let r = &self.regions[i];
        // SAFETY: as in `read`; `&mut self` excludes other accesses through this table.
        unsafe {
            std::ptr::copy_nonoverlapping(buf.as_ptr(), r.at(addr), buf.len());
        }
        Ok(())
    }

    /// Reads a little-endian unsigned value of 1, 2, 4 or 8 bytes.
    ///
    /// Every lane of a load comes here: 4 and 8 bytes are one host load each, in place
    /// (a copy of a length known only at run time was a call to `memcpy` per lane).
    #[inline(always)]
    pub fn read_uint(&self, addr: u64, size: u32) -> Result<u64, MemError> {
        let i = self.find_kernel(addr, u64::from(size))?;
        let p = self.regions[i].at(addr).cast_const();
        // SAFETY: `find_kernel` checked [addr, addr + size) lies inside the region's
        // block; the reads are unaligned ones.
        unsafe {
            Ok(match size {
                4 => u64::from(u32::from_le(p.cast::<u32>().read_unaligned())),
                8 => u64::from_le(p.cast::<u64>().read_unaligned()),
                _ => {
                    let mut b = [0u8; 8];
                    let dst = &mut b[..size as usize];
                    std::ptr::copy_nonoverlapping(p, dst.as_mut_ptr(), dst.len());
                    u64::from_le_bytes(b)
                }
            })
        }
    }

    /// The bytes `[addr, addr + len)` when they lie inside one allocation: an access there
    /// can neither fault nor stray (a warp's load whose lanes all fall in one allocation
    /// looks up its region once). `None` otherwise, and nothing recorded.
    #[inline]
    pub fn span(&self, addr: u64, len: u64) -> Option<&[u8]> {
        let i = self.find(addr, len).ok()?;
        let r = &self.regions[i];
        // SAFETY: `find` checked that [addr, addr + len) lies inside the allocation, which
        // lies inside the region's block; writes need `&mut self`, excluded while the
        // slice lives.
        Some(unsafe { std::slice::from_raw_parts(r.at(addr).cast_const(), len as usize) })
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
            std::ptr::copy(s.at(src), d.at(dst), len as usize);
        }
        Ok(())
    }

    /// Fills `len` bytes at `addr` with `byte`.
    pub fn memset(&mut self, addr: u64, byte: u8, len: u64) -> Result<(), MemError> {
        let i = self.find(addr, len)?;
        let r = &self.regions[i];
        // SAFETY: range checked.
        unsafe { std::ptr::write_bytes(r.at(addr), byte, len as usize) };
        Ok(())
    }
}

impl Drop for GlobalMemory {
    fn drop(&mut self) {
        for r in std::mem::take(&mut self.regions) {
            self.release(&r);
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
        // Managed memory is host memory at its device address.
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
    fn device_addresses_follow_the_fixed_layout_whatever_the_host_does() {
        let sequence = |m: &mut GlobalMemory| -> Vec<u64> {
            let a = m.alloc(100, AllocKind::Device).unwrap();
            let b = m.alloc(5000, AllocKind::GlobalVariable).unwrap();
            m.free(a).unwrap();
            let c = m.alloc(64, AllocKind::Device).unwrap();
            let d = m.alloc(1 << 20, AllocKind::Device).unwrap();
            vec![a, b, c, d]
        };
        let mut first = GlobalMemory::new();
        let addrs = sequence(&mut first);
        let start = address_space::DEVICE_SPACE + STRAY_WINDOW;
        assert_eq!(addrs[0], start, "the lowest device address");
        assert_eq!(
            addrs[1],
            start + 256 + 2 * STRAY_WINDOW,
            "right after, padded"
        );
        assert_eq!(addrs[2], addrs[0], "first fit: a freed range is reused");
        // A large unrelated host allocation moves the host heap, not device addresses.
        let ballast = vec![1u8; 64 << 20];
        let mut second = GlobalMemory::new();
        assert_eq!(sequence(&mut second), addrs);
        drop(ballast);
        // The bytes live elsewhere on the host: the emulator translates.
        second.write_uint(addrs[3] + 8, 8, 42).unwrap();
        let host = second.host_ptr(addrs[3] + 8, 8).unwrap();
        assert_ne!(host as u64, addrs[3] + 8);
        // SAFETY: `host_ptr` checked the 8 bytes lie inside the allocation.
        assert_eq!(unsafe { std::ptr::read_unaligned(host as *const u64) }, 42);
        assert!(second.host_ptr(addrs[3] + (1 << 20) - 4, 8).is_err());
        // Host-visible memory is in its own space when this process could reserve it.
        let m = second.alloc(16, AllocKind::Managed).unwrap();
        if address_space::host_visible_addresses_fixed() {
            assert!((address_space::HOST_VISIBLE_SPACE..address_space::SPACE_END).contains(&m));
        }
        assert_eq!(second.host_ptr(m, 16).unwrap() as u64, m, "identity");
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
    fn stray_accesses_near_an_allocation_follow_the_policy() {
        let mut m = GlobalMemory::new();
        let a = m.alloc(100, AllocKind::Device).unwrap();
        // Precise by default: 512 bytes before and just past the end fault.
        assert!(matches!(
            m.read_uint(a - 512, 4),
            Err(MemError::Unallocated { .. })
        ));
        assert!(matches!(
            m.write_uint(a + 100, 4, 1),
            Err(MemError::Unallocated { .. })
        ));
        assert_eq!(m.take_stray(), None);
        m.stray_policy = StrayPolicy::Allow;
        // The padding reads as zeros, keeps what is written and is reported once per take.
        assert_eq!(m.read_uint(a - 512, 4).unwrap(), 0);
        let stray = m.take_stray().unwrap();
        assert_eq!(
            stray,
            StrayAccess {
                addr: a - 512,
                size: 4,
                base: a,
                len: 100
            }
        );
        assert!(stray
            .to_string()
            .contains("is 512 bytes before the allocation"));
        m.write_uint(a + 100, 4, 0xCAFE).unwrap();
        assert_eq!(m.read_uint(a + 100, 4).unwrap(), 0xCAFE, "writes land");
        assert_eq!(m.take_stray().map(|s| s.addr), Some(a + 100));
        m.write_uint(a + 96, 8, 0x1234_5678_0000_0007).unwrap(); // straddles the end
        assert_eq!(m.read_uint(a + 100, 4).unwrap(), 0x1234_5678);
        assert_eq!(m.read_uint(a + 96, 4).unwrap(), 7, "the allocation itself");
        let stray = m.take_stray().unwrap();
        assert_eq!(
            (stray.addr, stray.size),
            (a + 96, 8),
            "the first one is kept"
        );
        assert!(stray.to_string().contains("4 bytes past the end"));
        assert_eq!(m.take_stray(), None);
        // The window's edges: the last padding word succeeds, one byte farther faults.
        let last = a + 256 + STRAY_WINDOW - 4;
        m.write_uint(last, 4, 9).unwrap();
        assert_eq!(m.read_uint(last, 4).unwrap(), 9);
        assert!(m.read_uint(last + 4, 4).is_err());
        assert!(m.read_uint(a - STRAY_WINDOW, 4).is_ok());
        assert!(m.read_uint(a - STRAY_WINDOW - 4, 4).is_err());
        // Wild addresses and host copies stay precise.
        assert!(m.read_uint(16, 4).is_err());
        assert!(m.memset(a + 96, 0, 8).is_err());
        assert_eq!(m.allocation_of(a + 100), None);
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
    fn values_of_every_size_round_trip_little_endian_at_any_offset() {
        let mut m = GlobalMemory::new();
        let a = m.alloc(64, AllocKind::Device).unwrap();
        for size in [1u32, 2, 3, 4, 8] {
            for offset in [0u64, 1, 7] {
                let addr = a + 16 + offset;
                m.memset(a, 0xAA, 64).unwrap();
                m.write_uint(addr, size, 0x0102_0304_0506_0708).unwrap();
                let mask = u64::MAX >> (64 - 8 * size);
                assert_eq!(
                    m.read_uint(addr, size).unwrap(),
                    0x0102_0304_0506_0708 & mask
                );
                let mut bytes = [0u8; 10];
                m.read(addr - 1, &mut bytes).unwrap();
                assert_eq!(bytes[0], 0xAA, "the byte before is untouched");
                assert_eq!(bytes[1], 0x08, "the lowest byte comes first");
                assert_eq!(
                    bytes[1 + size as usize],
                    0xAA,
                    "the byte after is untouched"
                );
            }
        }
        assert!(matches!(
            m.read_uint(a + 60, 8),
            Err(MemError::OutOfBounds { .. })
        ));
        assert!(matches!(
            m.write_uint(a + 62, 4, 1),
            Err(MemError::OutOfBounds { .. })
        ));
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

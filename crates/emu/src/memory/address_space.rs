//! The simulated device address space: a fixed layout, the same in every run on every
//! machine, that does not depend on where the host allocator puts anything.
//!
//! ```text
//!  0x1000_0000_0000 ┬ DEVICE_SPACE: device memory (cudaMalloc, module variables, device
//!                   │ malloc, texture arrays); addresses only, the bytes live in host
//!                   │ blocks the emulator translates to
//!  0x1800_0000_0000 ┼ HOST_VISIBLE_SPACE: memory the host program dereferences itself
//!                   │ (cudaMallocManaged, cudaMallocHost, `__managed__` variables), mapped
//!                   │ in the host process at the very same addresses
//!  0x2000_0000_0000 ┴
//! ```
//!
//! Both ranges lie in x86-64 user space below where Linux puts position-independent
//! executables (0x55…) and shared libraries (0x7f…), and above where a non-PIE program's
//! heap starts. The process reserves the whole range once ([`reserve`]: one inaccessible
//! mapping, no memory behind it), as the CUDA driver reserves its unified address range,
//! so no host pointer can ever equal a device address: the runtime tells device from host
//! pointers by their value, as unified addressing does.
//!
//! Each space hands out ranges first-fit from its lowest address ([`SpaceAllocator`]), so
//! the same sequence of allocations and frees gives the same addresses every run. The
//! device space belongs to one [`super::GlobalMemory`]; the host-visible space is one per
//! process (host mappings are), which the CUDA runtime, one per process, uses alone.
//! When the reservation fails (the range is taken, or an address-space limit forbids it)
//! host-visible memory is mapped wherever the kernel puts it and
//! [`host_visible_addresses_fixed`] says so.

use std::ptr::NonNull;
use std::sync::Mutex;

/// Start of device memory's addresses.
pub const DEVICE_SPACE: u64 = 0x1000_0000_0000;
/// Start of host-visible memory's addresses (end of device memory's).
pub const HOST_VISIBLE_SPACE: u64 = 0x1800_0000_0000;
/// End of the simulated address space.
pub const SPACE_END: u64 = 0x2000_0000_0000;

/// Whether `addr` lies in the simulated address space (device or host-visible), where no
/// host pointer can be (see the module docs).
pub fn contains(addr: u64) -> bool {
    (DEVICE_SPACE..SPACE_END).contains(&addr)
}

/// Granularity of host-visible mappings: a multiple of every page size Linux uses on the
/// machines regsim runs on (4 KB, 16 KB, 64 KB).
const HOST_PAGE: u64 = 64 << 10;

/// First-fit allocation of address ranges from `[start, end)`, lowest address first.
#[derive(Clone, Debug)]
pub struct SpaceAllocator {
    /// Free ranges below `top`, `(start, len)`, sorted and never adjacent.
    holes: Vec<(u64, u64)>,
    /// Everything from here to `end` is free.
    top: u64,
    end: u64,
}

impl SpaceAllocator {
    pub const fn new(start: u64, end: u64) -> Self {
        SpaceAllocator {
            holes: Vec::new(),
            top: start,
            end,
        }
    }

    /// The lowest free range of `len` bytes (`len` a multiple of the caller's alignment,
    /// as every range handed out and back is).
    pub fn take(&mut self, len: u64) -> Option<u64> {
        if let Some(i) = self.holes.iter().position(|&(_, l)| l >= len) {
            let (start, l) = self.holes[i];
            if l == len {
                self.holes.remove(i);
            } else {
                self.holes[i] = (start + len, l - len);
            }
            return Some(start);
        }
        let start = self.top;
        let top = start.checked_add(len).filter(|&t| t <= self.end)?;
        self.top = top;
        Some(start)
    }

    /// Returns a range [`SpaceAllocator::take`] gave out.
    pub fn give_back(&mut self, start: u64, len: u64) {
        let i = self.holes.partition_point(|&(s, _)| s < start);
        self.holes.insert(i, (start, len));
        // Merge with the following hole, then with the preceding one.
        if let Some(&(next, next_len)) = self.holes.get(i + 1) {
            if start + len == next {
                self.holes[i].1 += next_len;
                self.holes.remove(i + 1);
            }
        }
        let i = if i > 0 && self.holes[i - 1].0 + self.holes[i - 1].1 == start {
            self.holes[i - 1].1 += self.holes[i].1;
            self.holes.remove(i);
            i - 1
        } else {
            i
        };
        // A hole that reaches the top is just more free space at the top.
        if self.holes[i].0 + self.holes[i].1 == self.top {
            self.top = self.holes[i].0;
            self.holes.remove(i);
        }
    }
}

struct HostVisible {
    /// Whether the range is reserved in this process (addresses fixed).
    fixed: bool,
    space: SpaceAllocator,
}

static HOST_VISIBLE: Mutex<Option<HostVisible>> = Mutex::new(None);

fn host_visible<R>(f: impl FnOnce(&mut HostVisible) -> R) -> R {
    // A panic elsewhere cannot leave the allocator half-updated: every update is one
    // call on it. So a poisoned lock's contents are still good.
    let mut guard = HOST_VISIBLE.lock().unwrap_or_else(|e| e.into_inner());
    let state = guard.get_or_insert_with(|| HostVisible {
        fixed: reserve_range(),
        space: SpaceAllocator::new(HOST_VISIBLE_SPACE, SPACE_END),
    });
    f(state)
}

/// Reserves the simulated address space in this process (once; later calls do nothing).
pub fn reserve() {
    host_visible(|_| ());
}

/// Whether host-visible memory gets its fixed addresses in this process (see the module
/// docs); `false` when the range could not be reserved.
pub fn host_visible_addresses_fixed() -> bool {
    host_visible(|h| h.fixed)
}

fn reserve_range() -> bool {
    let len = (SPACE_END - DEVICE_SPACE) as usize;
    // SAFETY: an anonymous mapping that must not replace anything (NOREPLACE); the result
    // is checked below.
    let p = unsafe {
        libc::mmap(
            DEVICE_SPACE as *mut libc::c_void,
            len,
            libc::PROT_NONE,
            libc::MAP_PRIVATE
                | libc::MAP_ANONYMOUS
                | libc::MAP_NORESERVE
                | libc::MAP_FIXED_NOREPLACE,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return false;
    }
    if p as u64 != DEVICE_SPACE {
        // A kernel older than 4.17 treats the address as a hint and maps elsewhere.
        // SAFETY: the mapping just made, unmapped once.
        unsafe { libc::munmap(p, len) };
        return false;
    }
    true
}

/// `len` zeroed, readable and writable bytes the host can dereference at the address
/// returned, which is also their device address: in the reserved host-visible space when
/// it is reserved, anywhere otherwise. `None` when out of memory.
pub(crate) fn map_host_visible(len: u64) -> Option<(NonNull<u8>, u64)> {
    let len = len.checked_next_multiple_of(HOST_PAGE)?;
    let bytes = usize::try_from(len).ok()?;
    host_visible(|h| {
        let fixed_at = if h.fixed { h.space.take(len) } else { None };
        let (addr, flags) = match fixed_at {
            // Replaces part of our own reservation, nothing else.
            Some(at) => (at as *mut libc::c_void, libc::MAP_FIXED),
            None => (std::ptr::null_mut(), 0),
        };
        // SAFETY: an anonymous mapping, either new or over our own reservation.
        let p = unsafe {
            libc::mmap(
                addr,
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | flags,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            if let Some(at) = fixed_at {
                h.space.give_back(at, len);
            }
            return None;
        }
        NonNull::new(p.cast::<u8>()).map(|p| (p, len))
    })
}

/// Unmaps what [`map_host_visible`] returned (`len` as it returned it).
pub(crate) fn unmap_host_visible(ptr: NonNull<u8>, len: u64) {
    let at = ptr.as_ptr() as u64;
    host_visible(|h| {
        let bytes = len as usize;
        if h.fixed && (HOST_VISIBLE_SPACE..SPACE_END).contains(&at) {
            // Back to an inaccessible reservation: the pages are dropped and the range
            // stays ours.
            // SAFETY: the range is part of our reservation and no longer referenced.
            unsafe {
                libc::mmap(
                    ptr.as_ptr().cast(),
                    bytes,
                    libc::PROT_NONE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_FIXED,
                    -1,
                    0,
                )
            };
            h.space.give_back(at, len);
        } else {
            // SAFETY: a mapping of ours of exactly this length, unmapped once.
            unsafe { libc::munmap(ptr.as_ptr().cast(), bytes) };
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_fit_reuses_the_lowest_hole_and_merges_neighbours() {
        let mut s = SpaceAllocator::new(0x1000, 0x10000);
        let a = s.take(0x100).unwrap();
        let b = s.take(0x200).unwrap();
        let c = s.take(0x100).unwrap();
        assert_eq!((a, b, c), (0x1000, 0x1100, 0x1300));
        s.give_back(b, 0x200);
        assert_eq!(s.take(0x100), Some(0x1100), "first fit, lowest address");
        assert_eq!(
            s.take(0x200),
            Some(0x1400),
            "the rest of the hole is too small"
        );
        // The hole left is 0x1200..0x1300; a and 0x1100 merge with it into one.
        s.give_back(a, 0x100);
        s.give_back(0x1100, 0x100);
        assert_eq!(s.take(0x300), Some(0x1000));
        // Giving back the highest ranges lowers the top: the space is as new.
        s.give_back(0x1400, 0x200);
        s.give_back(c, 0x100);
        s.give_back(0x1000, 0x300);
        assert_eq!(s.take(0xF000), Some(0x1000));
        assert_eq!(s.take(1), None, "full");
    }

    #[test]
    fn host_visible_memory_is_zeroed_host_memory_in_its_space() {
        let (p, len) = map_host_visible(100).unwrap();
        assert_eq!(len, HOST_PAGE);
        let at = p.as_ptr() as u64;
        if host_visible_addresses_fixed() {
            assert!((HOST_VISIBLE_SPACE..SPACE_END).contains(&at), "{at:#x}");
        }
        // SAFETY: the mapping is `len` bytes, readable and writable.
        unsafe {
            assert_eq!(p.as_ptr().add(len as usize - 1).read(), 0);
            p.as_ptr().write(7);
            assert_eq!(p.as_ptr().read(), 7);
        }
        unmap_host_visible(p, len);
    }
}

//! Simulated device addresses.
//!
//! The emulator's global addresses are host pointers (its identity mapping), so they
//! differ from run to run; cache sets, L2 slices and DRAM banks computed from them would
//! too, and identical runs would not give identical statistics. The timing model
//! therefore times every global access at a *simulated* address: each emulator
//! allocation gets a simulated base, in the order the simulation first touches it
//! (deterministic, because the simulation is), aligned to [`ALLOC_ALIGN`] like
//! `cudaMalloc`, so offsets within an allocation — and with them coalescing — are
//! unchanged. The table persists across kernels (warm caches stay warm); an allocation
//! that is gone when a kernel starts is forgotten. Addresses outside every allocation
//! known at launch (device-side `malloc` during the kernel) keep their value.
//!
//! Local memory is interleaved per thread as on NVIDIA GPUs: word `k` of every lane of a
//! warp is one 128-byte line, so lanes reading the same local variable coalesce.

/// Alignment of simulated allocation bases (cudaMalloc's guarantee).
pub const ALLOC_ALIGN: u64 = 256;
/// Where simulated global allocations start.
pub const GLOBAL_BASE: u64 = 1 << 32;
/// Where the interleaved local memory of all warps is placed.
pub const LOCAL_BASE: u64 = 0x7D00_0000_0000_0000;

#[derive(Clone, Copy, Debug)]
struct Mapping {
    host: u64,
    len: u64,
    sim: u64,
}

/// Host allocations to simulated bases. See the module docs.
#[derive(Clone, Debug, Default)]
pub struct AddressMap {
    /// Allocations live at the current launch, sorted by host base; `sim` is 0 until
    /// first touched.
    live: Vec<Mapping>,
    next: u64,
}

impl AddressMap {
    /// An empty map.
    pub fn new() -> Self {
        AddressMap {
            live: Vec::new(),
            next: GLOBAL_BASE,
        }
    }

    /// Refreshes the table at a kernel launch from the emulator's allocations
    /// (`(base, size)`, any order): forgets allocations that are gone, adds new ones
    /// (unmapped until touched).
    pub fn refresh(&mut self, allocations: impl Iterator<Item = (u64, u64)>) {
        let mut fresh: Vec<Mapping> = allocations
            .map(|(host, len)| Mapping { host, len, sim: 0 })
            .collect();
        fresh.sort_by_key(|m| m.host);
        for m in fresh.iter_mut() {
            if let Ok(i) = self.live.binary_search_by_key(&m.host, |o| o.host) {
                if self.live[i].len == m.len {
                    m.sim = self.live[i].sim;
                }
            }
        }
        self.live = fresh;
    }

    /// The simulated address of global address `addr`.
    pub fn global(&mut self, addr: u64) -> u64 {
        let i = self.live.partition_point(|m| m.host <= addr);
        let Some(m) = i.checked_sub(1).and_then(|i| self.live.get_mut(i)) else {
            return addr;
        };
        if addr - m.host >= m.len.max(1) {
            return addr;
        }
        if m.sim == 0 {
            m.sim = self.next;
            self.next = (self.next + m.len.max(1)).div_ceil(ALLOC_ALIGN) * ALLOC_ALIGN;
        }
        m.sim + (addr - m.host)
    }

    /// The simulated address of byte `offset` of the local memory of `lane` of the warp
    /// numbered `warp` (unique on the GPU).
    pub fn local(warp: u64, lane: u32, offset: u64) -> u64 {
        LOCAL_BASE + (warp << 24) + (offset / 4) * 128 + u64::from(lane) * 4 + offset % 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_touch_order_decides_and_offsets_are_kept() {
        let mut a = AddressMap::new();
        a.refresh([(0x9000_0100, 1000), (0x5000_0000, 64)].into_iter());
        let x = a.global(0x9000_0100 + 130);
        let y = a.global(0x5000_0000 + 4);
        assert_eq!(x, GLOBAL_BASE + 130);
        assert_eq!(
            y,
            GLOBAL_BASE + 1024 + 4,
            "next base after 1000 bytes, aligned"
        );
        // Same allocations at other host addresses, touched in the same order: same
        // simulated addresses.
        let mut b = AddressMap::new();
        b.refresh([(0x1000, 1000), (0x8000, 64)].into_iter());
        assert_eq!(b.global(0x1000 + 130), x);
        assert_eq!(b.global(0x8000 + 4), y);
        // Outside any allocation: unchanged.
        assert_eq!(b.global(0x1000 + 1000), 0x1000 + 1000);
        // A refresh keeps live mappings and forgets freed ones.
        b.refresh([(0x8000, 64)].into_iter());
        assert_eq!(b.global(0x8000 + 4), y);
        assert_eq!(b.global(0x1000), 0x1000);
    }

    #[test]
    fn local_memory_is_interleaved_by_lane() {
        let l0 = AddressMap::local(3, 0, 8);
        let l1 = AddressMap::local(3, 1, 8);
        assert_eq!(l1 - l0, 4);
        assert_eq!(AddressMap::local(3, 0, 12) - l0, 128);
        assert_eq!(
            l0 / 128,
            AddressMap::local(3, 31, 8) / 128,
            "one line per word"
        );
    }
}

//! Simulated device addresses as the memory system sees them.
//!
//! The emulator's global addresses are already deterministic (the fixed layout of
//! `emu::memory::address_space`, the same in every run), and this map could be the
//! identity. It is kept as the memory system's own placement so that statistics stay
//! those of every earlier result: each emulator allocation gets a simulated base, in the
//! order the simulation first touches it (deterministic, because the simulation is),
//! aligned to [`ALLOC_ALIGN`] like `cudaMalloc`, so offsets within an allocation — and
//! with them coalescing — are unchanged; touched allocations are packed from
//! [`GLOBAL_BASE`] without the emulator's stray-access padding between them. The table
//! persists across kernels (warm caches stay warm); an allocation that is gone when a
//! kernel starts is forgotten. Addresses outside every allocation known at launch
//! (device-side `malloc` during the kernel) keep their emulator address, which is
//! deterministic too.
//!
//! Local memory is interleaved per thread as on NVIDIA GPUs: word `k` of every lane of a
//! warp is one 128-byte line, so lanes reading the same local variable coalesce. Each warp
//! slot of the GPU owns one contiguous region, as large as the kernel's local memory per
//! thread needs ([`local_bytes_per_thread`]: the deepest chain of call frames) times 32
//! lanes, and the regions of consecutive slots are adjacent, as when the driver sizes local
//! memory for a kernel. (Spacing the regions by the emulator's 512 KB-per-thread limit
//! instead put word `k` of every warp in the same L1 set and, with a power-of-two slice
//! count, the same L2 slice: local memory ran up to 7x slower than it should.)

use emu::memory::STRAY_WINDOW;
use emu::LoadedModule;
use ir::op::{Callee, Op};
use ir::FuncId;

/// Alignment of simulated allocation bases (cudaMalloc's guarantee).
pub const ALLOC_ALIGN: u64 = 256;
/// Where simulated global allocations start.
pub const GLOBAL_BASE: u64 = 1 << 32;
/// Where the interleaved local memory of all warps is placed.
pub const LOCAL_BASE: u64 = 0x7D00_0000_0000_0000;

#[derive(Clone, Copy, Debug)]
struct Mapping {
    /// The emulator's base address.
    emu: u64,
    len: u64,
    sim: u64,
}

/// Emulator allocations to simulated bases. See the module docs.
#[derive(Clone, Debug, Default)]
pub struct AddressMap {
    /// Allocations live at the current launch, sorted by emulator base; `sim` is 0 until
    /// first touched.
    live: Vec<Mapping>,
    /// The allocation of the last address inside one (lanes of a warp mostly hit the
    /// same allocation, so it is tried before the search).
    last: usize,
    next: u64,
    /// Bytes of local memory per warp slot in the current kernel.
    local_stride: u64,
    /// `memory.local_interleave = "gpu"`: the current kernel's layout (else `None`).
    gpu_local: Option<GpuLocal>,
}

/// Where a warp runs, for [`AddressMap::local_in`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LocalSlot {
    /// The warp slot, unique on the GPU.
    pub warp: u64,
    /// Its SM.
    pub sm: u32,
    /// Its CTA slot on the SM.
    pub cta: u32,
    /// Its index within its CTA.
    pub in_cta: u32,
}

/// A kernel's GPU-wide local memory layout (`memory.local_interleave = "gpu"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuLocal {
    /// Threads per CTA, rounded up to whole warps.
    pub threads_per_cta: u64,
    /// CTAs resident per SM for the kernel.
    pub ctas_per_sm: u64,
    /// SMs of the GPU.
    pub sms: u64,
}

impl AddressMap {
    /// An empty map.
    pub fn new() -> Self {
        AddressMap {
            live: Vec::new(),
            last: 0,
            next: GLOBAL_BASE,
            local_stride: 128,
            gpu_local: None,
        }
    }

    /// Refreshes the table at a kernel launch from the emulator's allocations
    /// (`(base, size)`, any order): forgets allocations that are gone, adds new ones
    /// (unmapped until touched).
    pub fn refresh(&mut self, allocations: impl Iterator<Item = (u64, u64)>) {
        let mut fresh: Vec<Mapping> = allocations
            .map(|(emu, len)| Mapping { emu, len, sim: 0 })
            .collect();
        fresh.sort_by_key(|m| m.emu);
        for m in fresh.iter_mut() {
            if let Ok(i) = self.live.binary_search_by_key(&m.emu, |o| o.emu) {
                if self.live[i].len == m.len {
                    m.sim = self.live[i].sim;
                }
            }
        }
        self.live = fresh;
    }

    /// The simulated address of global address `addr`. An address in the stray-access
    /// padding around an allocation (`emu::memory::STRAY_WINDOW`) is placed at the same
    /// distance from the allocation's simulated base, so a program that strays times the
    /// same from run to run too.
    pub fn global(&mut self, addr: u64) -> u64 {
        self.allocated(addr).unwrap_or(addr)
    }

    /// The simulated address of `addr` if it lies in (or in the stray padding of) an
    /// allocation known since the last [`AddressMap::refresh`], assigning the
    /// allocation's simulated base on first touch; `None` otherwise.
    pub fn allocated(&mut self, addr: u64) -> Option<u64> {
        let within = |m: &Mapping| addr.wrapping_sub(m.emu) < m.len.max(1);
        // Allocations do not overlap: the one holding `addr` is the search's answer too.
        if let Some(m) = self.live.get(self.last).filter(|m| within(m) && m.sim != 0) {
            return Some(m.sim.wrapping_add(addr - m.emu));
        }
        let j = self.holder(addr)?;
        if within(&self.live[j]) {
            self.last = j;
        }
        let m = &mut self.live[j];
        if m.sim == 0 {
            m.sim = self.next;
            self.next = (self.next + m.len.max(1)).div_ceil(ALLOC_ALIGN) * ALLOC_ALIGN;
        }
        Some(m.sim.wrapping_add(addr.wrapping_sub(m.emu)))
    }

    /// What [`AddressMap::global`] would answer for `addr`, without changing the map:
    /// `None` where it would assign an allocation's simulated base (its first touch).
    pub fn global_if_placed(&self, addr: u64) -> Option<u64> {
        let Some(j) = self.holder(addr) else {
            return Some(addr);
        };
        let m = &self.live[j];
        (m.sim != 0).then(|| m.sim.wrapping_add(addr.wrapping_sub(m.emu)))
    }

    /// The allocation holding `addr` or whose stray padding does.
    fn holder(&self, addr: u64) -> Option<usize> {
        let within = |m: &Mapping| addr.wrapping_sub(m.emu) < m.len.max(1);
        let i = self.live.partition_point(|m| m.emu <= addr);
        let near_end =
            |m: &Mapping| addr - m.emu < m.len.max(1).next_multiple_of(ALLOC_ALIGN) + STRAY_WINDOW;
        match i.checked_sub(1) {
            Some(j) if within(&self.live[j]) => Some(j),
            Some(j) if near_end(&self.live[j]) => Some(j),
            _ => match self.live.get(i) {
                Some(m) if m.emu - addr <= STRAY_WINDOW => Some(i),
                _ => None,
            },
        }
    }

    /// Sizes the local memory regions for a kernel that uses `bytes_per_thread` bytes of
    /// local memory per thread (at most).
    pub fn set_local_bytes_per_thread(&mut self, bytes_per_thread: u64) {
        self.local_stride = bytes_per_thread.div_ceil(4).max(1) * 128;
    }

    /// Sets the current kernel's layout for `memory.local_interleave = "gpu"` (`None`:
    /// the default layout by warp slot).
    pub fn set_gpu_local(&mut self, layout: Option<GpuLocal>) {
        self.gpu_local = layout;
    }

    /// The simulated address of byte `offset` of the local memory of `lane` of the warp
    /// at `slot`: [`AddressMap::local`], or with a GPU-wide layout
    /// ([`AddressMap::set_gpu_local`]) word `d` of every thread the GPU can hold for the
    /// kernel in one contiguous row: the threads of a CTA in order, the CTAs of one CTA
    /// slot on successive SMs, then the next slot's (GPGPU-Sim's local memory
    /// translation, as its documentation states it: `D * N + T mod nTpC + nTpC * C`).
    pub fn local_in(&self, slot: LocalSlot, lane: u32, offset: u64) -> u64 {
        let Some(g) = self.gpu_local else {
            return self.local(slot.warp, lane, offset);
        };
        let row = g.threads_per_cta * g.ctas_per_sm * g.sms;
        let hw_cta = g.sms * u64::from(slot.cta) + u64::from(slot.sm);
        let thread = hw_cta * g.threads_per_cta + u64::from(slot.in_cta) * 32 + u64::from(lane);
        LOCAL_BASE + ((offset / 4) * row + thread) * 4 + offset % 4
    }

    /// The simulated address of byte `offset` of the local memory of `lane` of the warp
    /// slot numbered `warp` (unique on the GPU).
    pub fn local(&self, warp: u64, lane: u32, offset: u64) -> u64 {
        LOCAL_BASE
            + warp * self.local_stride
            + (offset / 4) * 128
            + u64::from(lane) * 4
            + offset % 4
    }
}

/// Local memory per thread `kernel` may use: its frame plus the deepest chain of callee
/// frames. An indirect call may reach any function with a body; recursion (a cycle in
/// the call graph) makes the depth unbounded, and then `limit` (the emulator's limit)
/// is the answer.
pub fn local_bytes_per_thread(module: &LoadedModule, kernel: FuncId, limit: u64) -> u64 {
    #[derive(Clone, Copy, PartialEq)]
    enum Visit {
        New,
        Active,
        Done(u64),
    }
    let program = &module.program;
    let n = program.functions.len();
    let frame = |f: usize| module.funcs.get(f).map_or(0, |e| e.frame_size);
    let callees = |f: usize| -> Vec<usize> {
        let mut out = Vec::new();
        for inst in &program.functions[f].insts {
            if let Op::Call(c) = &inst.op {
                match c.callee {
                    Callee::Direct(g) => out.push(g.index()),
                    Callee::Indirect => {
                        out.extend((0..n).filter(|&g| program.functions[g].has_body))
                    }
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    };
    // Iterative depth-first search (call chains may be deep).
    let mut state = vec![Visit::New; n];
    let mut stack: Vec<(usize, Vec<usize>, u64)> = Vec::new();
    if kernel.index() >= n {
        return limit;
    }
    state[kernel.index()] = Visit::Active;
    stack.push((kernel.index(), callees(kernel.index()), 0));
    while let Some((f, pending, deepest)) = stack.last_mut() {
        let f = *f;
        match pending.pop() {
            Some(g) if g < n => match state[g] {
                Visit::Active => return limit,
                Visit::Done(d) => *deepest = (*deepest).max(d),
                Visit::New => {
                    state[g] = Visit::Active;
                    let next = callees(g);
                    stack.push((g, next, 0));
                }
            },
            Some(_) => {}
            None => {
                let total = frame(f) + *deepest;
                state[f] = Visit::Done(total);
                stack.pop();
                if let Some((_, _, d)) = stack.last_mut() {
                    *d = (*d).max(total);
                }
            }
        }
    }
    match state[kernel.index()] {
        Visit::Done(d) => d.min(limit),
        _ => limit,
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
        // Far outside any allocation: unchanged.
        let far = 0x8000 + 256 + STRAY_WINDOW;
        assert_eq!(b.global(far), far);
        assert_eq!(b.allocated(far), None);
        assert_eq!(b.allocated(0x8000 + 4), Some(y));
        // A refresh keeps live mappings and forgets freed ones.
        b.refresh([(0x8000, 64)].into_iter());
        assert_eq!(b.global(0x8000 + 4), y);
        b.refresh([(0x8000 + 2 * STRAY_WINDOW, 64)].into_iter());
        assert_eq!(b.global(0x1000), 0x1000);
    }

    #[test]
    fn stray_addresses_keep_their_distance_from_the_allocation() {
        let host = 0x7000_0000_0100;
        let mut a = AddressMap::new();
        a.refresh([(0x10_0000, 64), (host, 65536)].into_iter());
        // 512 bytes before the allocation, touched first: it gets the first base.
        assert_eq!(a.global(host - 512), GLOBAL_BASE - 512);
        assert_eq!(a.global(host), GLOBAL_BASE);
        // Past the end of the other allocation, within its padding.
        assert_eq!(a.global(0x10_0000 + 64 + 8), GLOBAL_BASE + 65536 + 64 + 8);
        // Beyond the padding on either side: unchanged.
        assert_eq!(a.global(host - STRAY_WINDOW - 4), host - STRAY_WINDOW - 4);
    }

    #[test]
    fn the_gpu_wide_local_layout_puts_a_word_of_every_thread_in_one_row() {
        let mut a = AddressMap::new();
        a.set_local_bytes_per_thread(40);
        // 2 SMs, 3 CTAs each, 64 threads a CTA: a row of 384 threads, 1536 bytes.
        a.set_gpu_local(Some(GpuLocal {
            threads_per_cta: 64,
            ctas_per_sm: 3,
            sms: 2,
        }));
        let at = |sm, cta, in_cta, lane, offset| {
            a.local_in(
                LocalSlot {
                    warp: 0,
                    sm,
                    cta,
                    in_cta,
                },
                lane,
                offset,
            )
        };
        let base = at(0, 0, 0, 0, 0);
        assert_eq!(base, LOCAL_BASE);
        assert_eq!(at(0, 0, 0, 1, 0) - base, 4, "lanes adjacent");
        assert_eq!(at(0, 0, 1, 0, 0) - base, 128, "warps of a CTA adjacent");
        assert_eq!(at(1, 0, 0, 0, 0) - base, 256, "the next SM's CTA next");
        assert_eq!(at(0, 1, 0, 0, 0) - base, 512, "then the next CTA slot");
        assert_eq!(at(0, 0, 0, 0, 4) - base, 1536, "the next word a row later");
        assert_eq!(at(0, 0, 0, 0, 7) - base, 1539);
        // Without the layout, the warp-slot mapping.
        a.set_gpu_local(None);
        let slot = LocalSlot {
            warp: 3,
            sm: 1,
            cta: 2,
            in_cta: 1,
        };
        assert_eq!(a.local_in(slot, 5, 8), a.local(3, 5, 8));
    }

    #[test]
    fn local_memory_is_interleaved_by_lane_and_warp_regions_are_adjacent() {
        let mut a = AddressMap::new();
        a.set_local_bytes_per_thread(40);
        let l0 = a.local(3, 0, 8);
        let l1 = a.local(3, 1, 8);
        assert_eq!(l1 - l0, 4);
        assert_eq!(a.local(3, 0, 12) - l0, 128);
        assert_eq!(l0 / 128, a.local(3, 31, 8) / 128, "one line per word");
        // 40 bytes per thread are 10 words: 10 lines per warp, the next warp right after.
        assert_eq!(a.local(4, 0, 0) - a.local(3, 0, 0), 10 * 128);
        assert_eq!(
            a.local(4, 0, 0),
            a.local(3, 0, 39) - 3 + 128,
            "right after the last word"
        );
        // So word 0 of consecutive warps falls in different sets of a 32-set cache.
        let sets: std::collections::BTreeSet<u64> =
            (0..32).map(|w| a.local(w, 0, 0) / 128 % 32).collect();
        assert!(sets.len() >= 16, "{sets:?}");
    }

    const CALLS: &str = "
.version 7.8
.target sm_70
.address_size 64
.func leaf() { .local .align 4 .b8 a[100]; ret; }
.func mid() { .local .align 4 .b8 b[20]; call.uni leaf; ret; }
.func other() { .local .align 4 .b8 c[8]; ret; }
.entry k() { .local .align 4 .b8 d[4]; call.uni mid; call.uni other; ret; }
.func rec() { .local .align 4 .b8 e[4]; call.uni rec; ret; }
.entry r() { call.uni rec; ret; }
";

    #[test]
    fn local_memory_per_thread_is_the_deepest_chain_of_frames() {
        let mut emu = emu::Emulator::new();
        let id = emu.load_ptx("t.ptx", CALLS).unwrap();
        let m = emu.module(id).unwrap();
        let f = |name: &str| m.program.func_by_name(name).unwrap();
        let frame = |name: &str| m.funcs[f(name).index()].frame_size;
        // Frames round up to 16 bytes: k 16, mid 32, leaf 112, other 16.
        assert_eq!((frame("k"), frame("mid"), frame("leaf")), (16, 32, 112));
        assert_eq!(local_bytes_per_thread(m, f("k"), 1 << 19), 16 + 32 + 112);
        assert_eq!(local_bytes_per_thread(m, f("leaf"), 1 << 19), 112);
        assert_eq!(
            local_bytes_per_thread(m, f("r"), 1 << 19),
            1 << 19,
            "recursion"
        );
    }
}

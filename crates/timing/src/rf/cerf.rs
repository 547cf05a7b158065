//! CERF (Jing et al., "Cache-Emulated Register File: An Integrated On-Chip Memory
//! Architecture for High Performance GPGPUs", MICRO 2016, §III–§IV): one set-associative
//! array per SM holds both the registers and the L1D lines.
//!
//! Model:
//! - **The integrated array is the memory system's L1D** ([`GpuConfig::l1d_array`]):
//!   under `design = "cerf"` it is built with `register_file.cerf.size_bytes` (default
//!   the register file's 128 KB) and `.ways` (4), so global loads look the array up with
//!   the L1D's MSHRs, latency and write policy, and register lines share its ways
//!   ([`crate::memory::cache::Cache::share_with_registers`]). Figure 6's states are the ways'
//!   (`inactive` empty, `reg`, `cache` clean data, `dirty` data).
//! - **Register re-indexing** (§III.C): warp register `r` of a warp is register address
//!   `base + r`, where `base` is the warp's first register address, allocated first-fit
//!   at launch (the RGen of the traditional RF, which packs resident warps' registers
//!   contiguously: the addresses of all resident warps fit in the register file), shifted by the 128-byte line and prefixed by an
//!   isolated per-SM "reg-mem" region ([`REG_MEM_BASE`]); its set is the low address bits,
//!   exactly as for memory lines, so consecutive registers go to consecutive sets.
//!   With gtx480's 128 KB register file that is §III.C's geometry: 1,024 warp registers
//!   (a 10-bit register address), 256 sets, register address `a` in set `a mod 256`
//!   (the paper's 2 tag-bank bits and 6 set bits next to the block offset); resident
//!   warps' addresses never exceed the register file's warp registers (tested), and the
//!   per-address flags are sized for 256 registers per warp slot only as a bound.
//! - **Banking and bandwidth** (§III.B, §IV "the data access bandwidth in the integrated
//!   memory is set equal to the RF bandwidth"; `register_file.cerf.banking`): under the
//!   default `"integrated"`, register reads and writes, spills, fills and the L1D's line
//!   accesses share the array's data banks (`register_file.banks`, with the register
//!   file's ports), and every tag lookup, a register's or a line's, takes a slot of one
//!   of `register_file.cerf.tag_banks` tag banks ([`crate::rf::cerf_banks`]). A line's
//!   banks follow its set, registers included, so a register's data bank is its
//!   register address modulo the bank count (not the MRF's `bank_mapping`). The
//!   baseline's collectors and arbiter ([`Baseline`]) grant the registers' accesses in
//!   the ports the cycle's line accesses left; line accesses that find their banks busy
//!   go later and their data is late. `"separate"` is the model before issue 22 (the
//!   MRF's banks for registers, the L1D's own port for lines, unlimited tag lookups), for
//!   comparison.
//! - **Write policy** (`register_file.cerf.writes`): `[l1d]`'s by default (gtx480:
//!   write-through, never dirty); `"write-back"` makes the array write-back with
//!   write-allocate, so stores reach Figure 6's `dirty` state and dirty lines are written
//!   to the L2 when evicted.
//! - **Tagging stage** (§III.B): one cycle between issue and operand read, in which the
//!   registers' tags are looked up ([`Baseline::accept_after`]); register writes look up
//!   their tags too (the entry is allocated then, off the write's critical path).
//! - **Replacement** (§III.D): `lru-fair` evicts the least recently used line whatever it
//!   holds; an evicted register is written to the L2 at its reg-mem address (a spill, a
//!   write packet of the memory system) and filled back as a `Local` load the design
//!   issues through [`RfCycle::memory`] when next read, holding the instruction's operand
//!   reads until the line is back. `lru-prioritized` never lets data evict a register;
//!   registers take inactive, then cache entries. With the default full mapping (array =
//!   register file) it never spills.
//! - **Liveness** (§III.D): a source operand marked `dead_after` (the liveness-bits pass)
//!   returns its entry to `inactive` after its tag lookup (`register_file.cerf.release_dead`);
//!   a warp's registers are released when it exits.
//! - **Partial writes**: a warp register is one 128-byte line, so a write by a warp with
//!   some lanes inactive (divergence or a guard) must keep the other lanes' values. A
//!   register in the array (or never written, or released as dead, whose other lanes are
//!   never read) is written in place. A *spilled* register's line is first filled back
//!   from its reg-mem address, like a read miss, and the write merges into it once it is
//!   back; reads of the register wait for that. A write of every lane of the warp (the
//!   lanes it launched with) overwrites the line and needs no fill; a write of no lane
//!   (every guard false) leaves the register as it is, spilled or not. The paper does not
//!   discuss the case; this is what a cache with write-allocate of partial lines must do
//!   (`cerf_partial_writes`, `cerf_partial_write_fills`, `cerf_empty_writes`).
//!
//! Simplifications: the entries-by-state averages
//! are sampled every [`SAMPLE_PERIOD`] cycles the design runs, weighted by the time since
//! the previous sample; register lines are never written back except on eviction.

use crate::config::{CerfBanking, CerfPolicy, GpuConfig};
use crate::kernel_info::{RegFileKind, RegOperand};
use crate::memory::cache::{CacheStats, LineAddr, RegisterLineStats, SectorMask};
use crate::memory::coalescer::LineAccess;
use crate::memory::{AccessKind, MemRequest, SmId, SmPort, Space};
use crate::rf::baseline::{Baseline, WriteKind, MAX_REGS};
use crate::rf::cerf_banks::{ArrayBankStats, ArrayGeometry};
use crate::rf::ledger::{Charge, Ledger, Sink};
use crate::rf::{
    Candidate, IssuedInst, RegisterFile, RfCycle, RfStall, RfStats, WarpLaunch, WarpSlot,
    WriteRequest,
};
use crate::time::{Cycle, Cycles};

/// Start of the reg-mem region: above the local-memory window
/// ([`crate::memory::address_map::LOCAL_BASE`]), far from any global allocation; SM `s`'s
/// registers live at `REG_MEM_BASE + s << 32`.
pub const REG_MEM_BASE: u64 = 0x7E00_0000_0000_0000;
/// Bytes of one warp register (and of one array line).
const LINE_BYTES: u64 = 128;
/// Cycles between samples of the entries by state.
pub const SAMPLE_PERIOD: u64 = 64;
/// Cycles the tagging stage adds in front of operand reads.
const TAG_STAGE: u64 = 1;

/// Which lanes of a warp register a write covers (CERF keeps a warp register in one
/// 128-byte line, so a write by a partly active warp must keep the other lanes' values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WriteLanes {
    /// Every lane of the warp: the line is overwritten whole.
    All,
    /// Some lanes: the line's other lanes must be present (a spilled register is filled
    /// back before the write merges into it).
    Some,
    /// No lane (the guard was false for every lane): the register is not written.
    None,
}

/// A register write waiting for its tag lookup and allocation.
#[derive(Clone, Copy, Debug)]
struct PendingWrite {
    addr: u32,
    lanes: WriteLanes,
    /// Its tag was looked up (retries only retry the allocation or the merge).
    looked_up: bool,
}

/// A register reference waiting for its tag lookup: its register addresses and which
/// die after this read.
#[derive(Clone, Copy, Debug)]
struct TagLookup {
    token: crate::rf::InstToken,
    at: Cycle,
    regs: [u32; MAX_REGS],
    n: u8,
    /// Bit `k`: `regs[k]` is dead after this read.
    dead: u32,
    /// Held for a fill or a tag bank since this cycle.
    held_since: Option<Cycle>,
    /// Bit `k`: `regs[k]`'s tag was looked up (its tag bank had a slot).
    looked: u32,
    /// Some register was not in the array (the hold waits for a fill or an allocation).
    missed: bool,
    /// Bit `k`: `regs[k]` was found in the array (its value is latched in the collector,
    /// so a later eviction no longer matters to this instruction).
    got: u32,
}

/// The CERF design of one SM. See the module docs.
pub struct Cerf {
    inner: Baseline,
    policy: CerfPolicy,
    /// Registers and lines share the array's banks (`banking = "integrated"`).
    integrated: bool,
    geometry: ArrayGeometry,
    release_dead: bool,
    regs_per_thread: Vec<u32>,
    /// Per warp slot: the first register address of its registers (§III.C's RGen).
    base: Vec<u32>,
    /// Per warp slot: resident.
    live: Vec<bool>,
    /// Per warp slot: the lanes the warp has (every lane active at some instruction; its
    /// first instruction, at the kernel's entry, has them all).
    lanes: Vec<u32>,
    lookups: Vec<TagLookup>,
    /// Register writes waiting for their tag lookup/allocation (or for the fill a
    /// partial write of a spilled register needs).
    writes: Vec<PendingWrite>,
    /// Per register address: the lanes its in-flight write covers (set at issue, read at
    /// writeback; the scoreboard keeps one write per register in flight).
    dst_lanes: Vec<WriteLanes>,
    /// Register ranges `(base, n)` of exited warps to release.
    exits: Vec<(u32, u32)>,
    /// Per register address: spilled (evicted and not written since).
    spilled: Vec<bool>,
    /// Per register address: a fill is in flight.
    filling: Vec<bool>,
    evicted: Vec<LineAddr>,
    sm: Option<SmId>,
    all_sectors: SectorMask,
    // Counters.
    operand_reads: u64,
    operand_writes: u64,
    tag_lookups: u64,
    register_hits: u64,
    register_misses: u64,
    cold_registers: u64,
    fills: u64,
    partial_writes: u64,
    partial_write_fills: u64,
    empty_writes: u64,
    fill_wait_cycles: u64,
    tagging_cycles: u64,
    state_integral: [u64; 4],
    sampled_cycles: u64,
    last_sample: Cycle,
    /// The SM went to sleep with a register request waiting for a port of the
    /// integrated array: the samples of the cycles it skips are taken when it wakes.
    port_wait: bool,
    array: CacheStats,
    lines: RegisterLineStats,
    banks: ArrayBankStats,
}

impl Cerf {
    /// The design for a validated config.
    pub fn new(cfg: &GpuConfig) -> Self {
        let mut inner = Baseline::new(cfg);
        inner.banks_hold_cerf_array();
        inner.rename_design("cerf");
        let c = &cfg.register_file.cerf;
        if c.banking == CerfBanking::Integrated {
            inner.keep_skipped_refusals();
        }
        // Addresses stay below the register file's warp registers when every resident
        // warp fits (occupancy guarantees it); 256 registers per thread bound the rest.
        let max_addr = cfg.sm.max_warps as usize * 256;
        Cerf {
            inner,
            policy: c.policy,
            integrated: c.banking == CerfBanking::Integrated,
            geometry: ArrayGeometry::new(cfg),
            release_dead: c.release_dead,
            regs_per_thread: vec![0; cfg.sm.max_warps as usize],
            base: vec![0; cfg.sm.max_warps as usize],
            live: vec![false; cfg.sm.max_warps as usize],
            lanes: vec![0; cfg.sm.max_warps as usize],
            lookups: Vec::with_capacity(64),
            writes: Vec::with_capacity(256),
            dst_lanes: vec![WriteLanes::All; max_addr],
            exits: Vec::with_capacity(8),
            spilled: vec![false; max_addr],
            filling: vec![false; max_addr],
            evicted: Vec::with_capacity(64),
            sm: None,
            all_sectors: SectorMask::first(cfg.l1d.sectors_per_line()),
            operand_reads: 0,
            operand_writes: 0,
            tag_lookups: 0,
            register_hits: 0,
            register_misses: 0,
            cold_registers: 0,
            fills: 0,
            partial_writes: 0,
            partial_write_fills: 0,
            empty_writes: 0,
            fill_wait_cycles: 0,
            tagging_cycles: 0,
            state_integral: [0; 4],
            sampled_cycles: 0,
            last_sample: Cycle::ZERO,
            port_wait: false,
            array: CacheStats::default(),
            lines: RegisterLineStats::default(),
            banks: ArrayBankStats::default(),
        }
    }

    /// The data bank of register address `a` (its line's set, like any line's).
    fn bank_of_addr(&self, a: u32) -> u8 {
        let sm = self.sm.unwrap_or(SmId(0));
        self.geometry.data_bank(Self::reg_mem_line(sm, a)) as u8
    }

    /// The replacement policy.
    pub fn policy(&self) -> CerfPolicy {
        self.policy
    }

    /// Register address of `reg` of `warp` (§III.C's RGen).
    fn reg_addr(&self, warp: WarpSlot, reg: u16) -> u32 {
        self.base.get(warp.index()).copied().unwrap_or(0) + u32::from(reg)
    }

    /// The lowest register address from which `n` addresses overlap no resident warp's
    /// (first fit, like a register file allocating warps' registers contiguously).
    fn first_fit(&self, n: u32) -> u32 {
        let overlaps = |b: u32| {
            (0..self.live.len()).any(|w| {
                self.live[w] && b < self.base[w] + self.regs_per_thread[w] && self.base[w] < b + n
            })
        };
        if !overlaps(0) {
            return 0;
        }
        (0..self.live.len())
            .filter(|&w| self.live[w])
            .map(|w| self.base[w] + self.regs_per_thread[w])
            .filter(|&b| !overlaps(b))
            .min()
            .unwrap_or(0)
    }

    /// The reg-mem line of register address `a` in SM `sm`.
    pub fn reg_mem_line(sm: SmId, a: u32) -> LineAddr {
        LineAddr(REG_MEM_BASE + (u64::from(sm.0) << 32) + u64::from(a) * LINE_BYTES)
    }

    fn addr_of_line(sm: SmId, line: LineAddr) -> u32 {
        ((line.0 - REG_MEM_BASE - (u64::from(sm.0) << 32)) / LINE_BYTES) as u32
    }

    fn flag(v: &mut [bool], a: u32, x: bool) {
        if let Some(f) = v.get_mut(a as usize) {
            *f = x;
        }
    }

    fn collect(
        &self,
        ops: &[RegOperand],
        warp: WarpSlot,
        regs: &mut [u32; MAX_REGS],
        dead: &mut u32,
    ) -> u8 {
        let mut n = 0;
        for op in ops.iter().filter(|o| o.file == RegFileKind::General) {
            for r in op.regs() {
                let a = self.reg_addr(warp, r);
                if n < MAX_REGS && !regs[..n].contains(&a) {
                    if op.hint.dead_after {
                        *dead |= 1 << n;
                    }
                    regs[n] = a;
                    n += 1;
                }
            }
        }
        n as u8
    }

    /// The tag lookups of one instruction at the tagging stage: true when every register
    /// is in the array (else fills are started or awaited).
    fn look_up(&mut self, k: usize, sm: SmId, c: &mut RfCycle<'_>) -> bool {
        let l = self.lookups[k];
        let mut all = true;
        let mut got = l.got;
        let mut looked = l.looked;
        let mut missed = l.missed;
        for i in 0..l.n as usize {
            if got & (1 << i) != 0 {
                continue;
            }
            let a = l.regs[i];
            let line = Self::reg_mem_line(sm, a);
            if looked & (1 << i) == 0 {
                // The tag bank serves a fixed number of lookups per cycle (§III.B).
                if let Some(banks) = c.memory.array_banks_mut() {
                    if !banks.register_tag_lookup(line, c.now) {
                        all = false;
                        continue;
                    }
                }
                looked |= 1 << i;
                self.tag_lookups += 1;
                self.inner.ledger_mut().charge(Charge::CerfTagLookup, 1);
            }
            got |= 1 << i;
            if c.memory.read_register(line) {
                if self.filling.get(a as usize).copied().unwrap_or(false) {
                    Self::flag(&mut self.filling, a, false);
                    Self::flag(&mut self.spilled, a, false);
                }
                continue;
            }
            // Evictions by this cycle's own allocations count too.
            self.note_evictions(sm, &mut c.memory);
            let spilled = self.spilled.get(a as usize).copied().unwrap_or(false);
            let filling = self.filling.get(a as usize).copied().unwrap_or(false);
            if filling && !c.memory.l1d_fetching(line) {
                // The fill came back but the line did not stay (a set full of registers
                // under LRU-prioritized): the value is here, it becomes the register.
                if c.memory.write_register(c.now, line).is_some() {
                    Self::flag(&mut self.filling, a, false);
                    Self::flag(&mut self.spilled, a, false);
                    continue;
                }
                got &= !(1 << i);
                all = false;
                missed = true;
            } else if spilled && !filling {
                self.register_misses += 1;
                self.start_fill(sm, a, c);
                got &= !(1 << i);
                all = false;
                missed = true;
            } else if spilled || filling || self.writes.iter().any(|w| w.addr == a) {
                // Being filled, or written (its allocation waits for a locked set).
                got &= !(1 << i);
                all = false;
                missed = true;
            } else {
                // Never written (or written by a load still in flight): the entry is
                // allocated now, with nothing to fetch.
                self.cold_registers += 1;
                if c.memory.write_register(c.now, line).is_none() {
                    got &= !(1 << i);
                    all = false;
                    missed = true;
                }
            }
        }
        self.lookups[k].got = got;
        self.lookups[k].looked = looked;
        self.lookups[k].missed = missed;
        if all {
            self.register_hits += u64::from(l.n);
            if self.release_dead {
                for i in 0..l.n as usize {
                    if l.dead & (1 << i) != 0 {
                        c.memory.release_register(Self::reg_mem_line(sm, l.regs[i]));
                    }
                }
            }
        }
        all
    }

    /// Issues the fill of spilled register address `a` (a `Local` load of its reg-mem
    /// line, §III.D's spill datapath); true when the memory system took it (else it is
    /// retried next cycle).
    fn start_fill(&mut self, sm: SmId, a: u32, c: &mut RfCycle<'_>) -> bool {
        let req = MemRequest {
            kind: AccessKind::Load,
            space: Space::Local,
            lines: &[LineAccess {
                line: Self::reg_mem_line(sm, a),
                sectors: self.all_sectors,
            }],
        };
        let issued = c.memory.issue(c.now, req).is_ok();
        if issued {
            self.fills += 1;
            Self::flag(&mut self.filling, a, true);
        }
        issued
    }

    /// One pending register write at its tag lookup: true when it is done. A write of
    /// every lane allocates (or hits) the register's line; a write of some lanes to a
    /// spilled register first fills the line back and merges into it; a write of no lane
    /// changes nothing.
    fn write(&mut self, w: PendingWrite, sm: SmId, c: &mut RfCycle<'_>) -> bool {
        let a = w.addr;
        let line = Self::reg_mem_line(sm, a);
        // Registers displaced by this cycle's earlier allocations count as spilled.
        self.note_evictions(sm, &mut c.memory);
        let spilled = self.spilled.get(a as usize).copied().unwrap_or(false);
        let filling = self.filling.get(a as usize).copied().unwrap_or(false);
        match w.lanes {
            WriteLanes::None => return true,
            WriteLanes::Some if spilled && filling && c.memory.l1d_fetching(line) => return false,
            // The whole line is in the array after all (rewritten since it was evicted):
            // the merge reads it there.
            WriteLanes::Some if spilled && !filling && c.memory.read_register(line) => {}
            WriteLanes::Some if spilled && !filling => {
                if self.start_fill(sm, a, c) {
                    self.partial_write_fills += 1;
                }
                return false;
            }
            // A full write, a partial write to a register in the array (or never
            // written, or released as dead: no lane of it is read again), or one whose
            // fill is back: the line (a filled-back data line is adopted) becomes the
            // register, dirty.
            _ => {}
        }
        if c.memory.write_register(c.now, line).is_some() {
            Self::flag(&mut self.spilled, a, false);
            if !c.memory.l1d_fetching(line) {
                Self::flag(&mut self.filling, a, false);
            }
            true
        } else {
            false
        }
    }

    fn note_evictions(&mut self, sm: SmId, memory: &mut SmPort<'_>) {
        memory.take_evicted_registers(&mut self.evicted);
        for k in 0..self.evicted.len() {
            let a = Self::addr_of_line(sm, self.evicted[k]);
            Self::flag(&mut self.spilled, a, true);
        }
        self.evicted.clear();
    }

    fn sample(&mut self, c: &RfCycle<'_>) {
        if c.now.get() < self.last_sample.get() + SAMPLE_PERIOD {
            return;
        }
        let dt = (c.now - self.last_sample).get();
        let counts = c.memory.l1d_state_counts();
        for (acc, n) in self.state_integral.iter_mut().zip(counts) {
            *acc += n * dt;
        }
        self.sampled_cycles += dt;
        self.last_sample = c.now;
    }

    /// The samples an SM evaluated in every cycle of a wait for a port would have taken
    /// in the cycles it slept through, before `now`: one every [`SAMPLE_PERIOD`] cycles
    /// after the last, each of the ways per state at its cycle. The L1D events of the
    /// sleep logged the ways per state before each of their cycles
    /// ([`crate::rf::cerf_banks::ArrayBanks::watch_states`]); after the last of them they are `current`.
    fn catch_up_samples(&mut self, log: &[(Cycle, [u64; 4])], current: [u64; 4], now: Cycle) {
        let ends = log.iter().map(|&(t, n)| (t.min(now), n));
        for (end, counts) in ends.chain(std::iter::once((now, current))) {
            // Samples at `last_sample + k * SAMPLE_PERIOD < end`, k >= 1: each of the
            // ways per state before the first event at or after it.
            let span = end.get().saturating_sub(self.last_sample.get() + 1);
            let dt = span / SAMPLE_PERIOD * SAMPLE_PERIOD;
            for (acc, n) in self.state_integral.iter_mut().zip(counts) {
                *acc += n * dt;
            }
            self.sampled_cycles += dt;
            self.last_sample += Cycles::new(dt);
        }
    }
}

impl RegisterFile for Cerf {
    fn name(&self) -> &'static str {
        "cerf"
    }

    fn warp_launched(&mut self, w: WarpLaunch) {
        let i = w.warp.index();
        if i < self.live.len() {
            let n = w.registers_per_thread;
            self.base[i] = self.first_fit(n);
            self.regs_per_thread[i] = n;
            self.live[i] = true;
            self.lanes[i] = 0;
        }
        self.inner.warp_launched(w);
    }

    fn warp_exited(&mut self, warp: WarpSlot) {
        let i = warp.index();
        if i < self.live.len() {
            self.exits.push((self.base[i], self.regs_per_thread[i]));
            self.live[i] = false;
        }
        self.inner.warp_exited(warp);
    }

    fn can_accept(&mut self, c: &Candidate<'_>, now: Cycle) -> Result<(), RfStall> {
        self.inner.can_accept(c, now)
    }

    fn accept(&mut self, i: IssuedInst<'_>, now: Cycle) {
        let mut l = TagLookup {
            token: i.token,
            at: now + Cycles::new(TAG_STAGE),
            regs: [0; MAX_REGS],
            n: 0,
            dead: 0,
            held_since: None,
            got: 0,
            looked: 0,
            missed: false,
        };
        l.n = self.collect(i.inst.srcs, i.inst.warp, &mut l.regs, &mut l.dead);
        let lanes = match self.lanes.get_mut(i.inst.warp.index()) {
            Some(w) => {
                *w |= i.step.active_mask;
                *w
            }
            None => u32::MAX,
        };
        let written = i.step.exec_mask & lanes;
        let kind = if written == 0 {
            WriteLanes::None
        } else if written == lanes {
            WriteLanes::All
        } else {
            WriteLanes::Some
        };
        for op in i
            .inst
            .dsts
            .iter()
            .filter(|o| o.file == RegFileKind::General)
        {
            for r in op.regs() {
                let a = self.reg_addr(i.inst.warp, r);
                if let Some(d) = self.dst_lanes.get_mut(a as usize) {
                    *d = kind;
                }
            }
        }
        self.operand_reads += u64::from(l.n);
        self.tagging_cycles += TAG_STAGE;
        // The baseline first arbitrates a collector's reads in the cycle after
        // acceptance; the tagging stage moves that `TAG_STAGE` cycles later.
        let extra = Cycles::new(1 + TAG_STAGE);
        if self.integrated {
            // The reads go to the registers' lines' data banks.
            let mut banks = [0u8; MAX_REGS];
            for (b, &a) in banks.iter_mut().zip(&l.regs[..usize::from(l.n)]) {
                *b = self.bank_of_addr(a);
            }
            self.inner
                .accept_banks(i.token, i.inst.unit, &banks[..usize::from(l.n)], now);
            self.inner.start_reads_after(i.token, now, extra);
        } else {
            self.inner.accept_after(i, now, extra);
        }
        if l.n > 0 {
            self.lookups.push(l);
        }
    }

    fn request_write(&mut self, w: WriteRequest<'_>, now: Cycle) {
        let mut banks = [0u8; MAX_REGS];
        let mut n = 0;
        for op in w.dsts.iter().filter(|o| o.file == RegFileKind::General) {
            for r in op.regs() {
                let a = self.reg_addr(w.warp, r);
                if n < MAX_REGS {
                    banks[n] = self.bank_of_addr(a);
                    n += 1;
                }
                let lanes = self
                    .dst_lanes
                    .get(a as usize)
                    .copied()
                    .unwrap_or(WriteLanes::All);
                match lanes {
                    WriteLanes::All => {}
                    WriteLanes::Some => self.partial_writes += 1,
                    WriteLanes::None => self.empty_writes += 1,
                }
                self.writes.push(PendingWrite {
                    addr: a,
                    lanes,
                    looked_up: false,
                });
                self.operand_writes += 1;
            }
        }
        if self.integrated {
            // Written into the registers' lines' data banks.
            self.inner.ledger_mut().write(Sink::CerfArray, n as u64);
            self.inner
                .push_write_to_banks(w.token, &banks[..n], now, WriteKind::Result);
        } else {
            self.inner.request_write(w, now);
        }
    }

    fn skip_to(&mut self, now: Cycle) {
        self.inner.skip_to(now);
    }

    fn cycle(&mut self, c: &mut RfCycle<'_>) {
        let sm = c.sm;
        self.sm = Some(sm);
        let now = c.now;

        if std::mem::take(&mut self.port_wait) {
            let current = c.memory.l1d_state_counts();
            if let Some(banks) = c.memory.array_banks_mut() {
                self.catch_up_samples(banks.state_log(), current, now);
                banks.stop_watching_states();
            }
        }

        // Registers the array evicted (spilled) since the last cycle.
        self.note_evictions(sm, &mut c.memory);

        // Exited warps: their entries become holes.
        for k in 0..self.exits.len() {
            let (base, n) = self.exits[k];
            for a in base..base + n {
                c.memory.release_register(Self::reg_mem_line(sm, a));
                Self::flag(&mut self.spilled, a, false);
                Self::flag(&mut self.filling, a, false);
            }
        }
        self.exits.clear();

        // Register writes: tag lookup (once per write) and allocation (a written register
        // is no longer spilled). A set whose ways are all locked by fills, or a partial
        // write waiting for its register's fill, retries next cycle; reads of that
        // register wait for it.
        let mut kept = 0;
        for k in 0..self.writes.len() {
            let mut w = self.writes[k];
            if !w.looked_up {
                let line = Self::reg_mem_line(sm, w.addr);
                let slot = c
                    .memory
                    .array_banks_mut()
                    .is_none_or(|b| b.register_tag_lookup(line, now));
                if !slot {
                    // No tag bank slot this cycle: retry next cycle.
                    self.writes[kept] = w;
                    kept += 1;
                    continue;
                }
                self.tag_lookups += 1;
                self.inner.ledger_mut().charge(Charge::CerfTagLookup, 1);
                w.looked_up = true;
            }
            if !self.write(w, sm, c) {
                self.writes[kept] = w;
                kept += 1;
            }
        }
        self.writes.truncate(kept);

        // Tagging stage of accepted instructions.
        let mut k = 0;
        while k < self.lookups.len() {
            if self.lookups[k].at > now {
                k += 1;
                continue;
            }
            let token = self.lookups[k].token;
            if self.look_up(k, sm, c) {
                if let Some(since) = self.lookups[k].held_since {
                    if self.lookups[k].missed {
                        self.fill_wait_cycles += (now - since).get();
                    }
                    // Reads go ahead next cycle, like after the tagging stage.
                    self.inner.hold_reads(token, now + Cycles::new(1));
                }
                self.lookups.swap_remove(k);
            } else {
                if self.lookups[k].held_since.is_none() {
                    self.lookups[k].held_since = Some(now);
                    self.inner.hold_reads(token, Cycle::NEVER);
                }
                k += 1;
            }
        }

        // The data banks' ports that this cycle's line accesses took are not the
        // registers' to take; the registers' grants are then the lines' to respect.
        if self.integrated {
            if let Some(banks) = c.memory.array_banks() {
                // Refusals of the cycles the SM slept through (a register request
                // waiting for a port a long bank access holds) that met a line's access
                // of the same bank, as if the SM had been evaluated in each.
                self.inner.take_skipped_refusals(|refused| {
                    refused
                        .iter()
                        .map(|&(b, from, until)| banks.line_ports_taken_in(b, from, until))
                        .sum()
                });
                let (r, w) = self.inner.ports_taken_elsewhere();
                banks.ports_taken(now, r, w);
            }
        }
        self.inner.cycle(c);
        if self.integrated {
            if let Some(banks) = c.memory.array_banks_mut() {
                let (used, taken) = self.inner.ports_used();
                banks.register_grants(now, used, taken);
                banks.forget_line_bookings_through(now);
            }
        }
        self.sample(c);
        if self.integrated && self.inner.waits_for_ports(now) {
            // The SM may sleep until a port frees; its samples of the cycles it skips
            // are taken when it wakes, of the array's states the L1D events log.
            if let Some(banks) = c.memory.array_banks_mut() {
                banks.watch_states();
                self.port_wait = true;
            }
        }
        self.array = *c.memory.l1d_stats();
        self.lines = c.memory.l1d_register_stats();
        if let Some(b) = c.memory.array_banks() {
            self.banks = *b.stats();
        }
    }

    fn next_event(&self, now: Cycle) -> Option<Cycle> {
        let soon = now + Cycles::new(1);
        let mut next = self.inner.next_event(now);
        let mut at = |t: Cycle| next = Some(next.map_or(t, |n: Cycle| n.min(t)));
        if !self.writes.is_empty() || !self.exits.is_empty() {
            at(soon);
        }
        for l in &self.lookups {
            // Held lookups poll for their fill every cycle.
            at(l.at.max(soon));
        }
        next
    }

    fn is_idle(&self) -> bool {
        self.inner.is_idle() && self.lookups.is_empty() && self.writes.is_empty()
    }

    fn stats(&self, now: Cycle) -> RfStats {
        let mut s = self.inner.stats(now);
        let a = &self.array;
        let l = &self.lines;
        let b = &self.banks;
        let [inactive, reg, cache, dirty] = self.state_integral;
        for (k, v) in [
            ("cerf_operand_reads", self.operand_reads),
            ("cerf_operand_writes", self.operand_writes),
            ("cerf_tag_lookups", self.tag_lookups + b.line_tag_lookups),
            ("cerf_register_tag_lookups", self.tag_lookups),
            ("cerf_register_hits", self.register_hits),
            ("cerf_register_misses", self.register_misses),
            ("cerf_cold_registers", self.cold_registers),
            ("cerf_fills", self.fills),
            ("cerf_partial_writes", self.partial_writes),
            ("cerf_partial_write_fills", self.partial_write_fills),
            ("cerf_empty_writes", self.empty_writes),
            ("cerf_fill_wait_cycles", self.fill_wait_cycles),
            ("cerf_spills", l.spills),
            ("cerf_tagging_stage_cycles", self.tagging_cycles),
            ("cerf_array_reads", a.reads),
            ("cerf_array_writes", a.writes),
            ("cerf_array_hits", a.hits),
            ("cerf_array_misses", a.misses + a.sector_misses),
            ("cerf_state_inactive_entry_cycles", inactive),
            ("cerf_state_reg_entry_cycles", reg),
            ("cerf_state_cache_entry_cycles", cache),
            ("cerf_state_dirty_entry_cycles", dirty),
            ("cerf_state_sampled_cycles", self.sampled_cycles),
            ("cerf_inactive_to_reg", l.from_inactive),
            ("cerf_cache_to_reg", l.from_cache),
            ("cerf_dirty_to_reg", l.from_dirty),
            ("cerf_reg_to_reg", l.from_register),
            ("cerf_reg_to_cache", l.data_over_register),
            ("cerf_reg_to_inactive", l.released),
            ("cerf_inactive_to_cache", l.data_into_inactive),
            ("cerf_cache_to_dirty", l.cache_to_dirty),
            ("cerf_filled_to_reg", l.adopted),
            ("cerf_line_tag_lookups", b.line_tag_lookups),
            ("cerf_line_data_reads", b.line_data_reads),
            ("cerf_line_data_writes", b.line_data_writes),
            ("cerf_line_tag_bank_conflicts", b.line_tag_conflicts),
            ("cerf_line_tag_delay_cycles", b.line_tag_delay_cycles),
            ("cerf_line_data_bank_conflicts", b.line_data_conflicts),
            ("cerf_line_data_delay_cycles", b.line_data_delay_cycles),
            ("cerf_register_tag_bank_conflicts", b.register_tag_conflicts),
            (
                "cerf_register_bank_conflicts_with_lines",
                self.inner.refused_where_taken(),
            ),
            ("cerf_bank_window_overflows", b.overflows),
        ] {
            s.extra.insert(k.to_owned(), v);
        }
        s
    }

    /// The register side's ledger (reads and writes through the baseline's banks, which
    /// hold the integrated array; register tag lookups) and the array's L1D side: read
    /// hits, written data and fills of the data array, and every L1D tag lookup (the
    /// memory system's `l1d` events are left out under CERF, so each is charged once).
    fn ledger(&self) -> Ledger {
        let mut l = self.inner.ledger();
        let b = &self.banks;
        l.charge(Charge::CerfDataRead, b.line_data_reads);
        l.charge(Charge::CerfDataWrite, b.line_data_writes);
        l.charge(Charge::CerfTagLookup, b.line_tag_lookups);
        l
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{default_configs_dir, CacheConfig, OpClass, UnitKind, WritePolicy};
    use crate::kernel_info::{InstHint, OperandHint};
    use crate::memory::cache::{Cache, CacheOp, Outcome};
    use crate::memory::MemorySystem;
    use crate::rf::RfStats;
    use crate::rf::{Dispatch, DispatchPort, InstToken};
    use crate::Override;

    /// One set of two 128-byte ways, write-back with write-allocate (so stores make
    /// lines dirty, the `cache -> dirty` transition).
    fn one_set(policy: CerfPolicy) -> Cache<u32> {
        let mut c = Cache::new(&CacheConfig {
            size_bytes: 256,
            ways: 2,
            line_bytes: 128,
            sector_bytes: 32,
            latency: Cycles::new(1),
            mshrs: 4,
            mshr_max_merge: 4,
            write_policy: WritePolicy::WriteBack,
            write_allocate: true,
            allocation: crate::config::AllocationPolicy::OnMiss,
            set_index: Default::default(),
            fetch: Default::default(),
            local_write_policy: None,
            data_port_bytes: 0,
            fill_port_bytes: 0,
            perfect: false,
            invalidate_between_kernels: false,
            bypass_global_loads: false,
            shared_carveouts: Vec::new(),
            miss_queue_entries: 0,
            return_bits_per_cycle: 0,
            banks: 0,
            bank_interleave_bytes: 32,
            bank_index: Default::default(),
        });
        c.share_with_registers(policy);
        c
    }

    const ALL: SectorMask = SectorMask(0xf);
    fn line(i: u64) -> LineAddr {
        LineAddr(i * 128)
    }
    fn reg(i: u64) -> LineAddr {
        LineAddr(REG_MEM_BASE + i * 128)
    }
    fn load(c: &mut Cache<u32>, l: LineAddr) -> Outcome {
        let a = c.access(l, ALL, CacheOp::Read, 0);
        let mut done = Vec::new();
        c.fill(l, ALL, &mut done);
        a.outcome
    }

    #[test]
    fn every_figure_6_transition_happens_under_lru_prioritized() {
        let mut c = one_set(CerfPolicy::LruPrioritized);
        // inactive -> reg.
        assert!(!c.write_register(reg(0)).unwrap().hit);
        assert_eq!(c.state_counts(), [1, 1, 0, 0]);
        // inactive -> cache (a load), cache -> dirty (a store, write-back).
        assert_eq!(load(&mut c, line(1)), Outcome::Miss);
        c.access(line(1), ALL, CacheOp::Write, 0);
        assert_eq!(c.state_counts(), [0, 1, 0, 1]);
        // dirty -> reg: the dirty line is written back first.
        let w = c.write_register(reg(2)).unwrap();
        assert_eq!(w.eviction.map(|e| e.line), Some(line(1)));
        assert_eq!(c.state_counts(), [0, 2, 0, 0]);
        // reg -> inactive (a dead register), then inactive -> cache -> reg.
        c.release_register(reg(0));
        assert_eq!(c.state_counts(), [1, 1, 0, 0]);
        load(&mut c, line(3));
        assert!(c.contains(line(3), ALL));
        let w = c.write_register(reg(4)).unwrap();
        assert_eq!(w.eviction, None, "a clean line is dropped silently");
        // A set full of registers: data is fetched but never displaces one.
        assert_eq!(load(&mut c, line(5)), Outcome::Miss);
        assert!(!c.contains(line(5), ALL));
        assert!(c.read_register(reg(2)) && c.read_register(reg(4)));
        let s = *c.register_stats();
        assert_eq!(
            (
                s.from_inactive,
                s.data_into_inactive,
                s.cache_to_dirty,
                s.from_dirty
            ),
            (1, 2, 1, 1)
        );
        assert_eq!((s.released, s.from_cache, s.spills), (1, 1, 0));
    }

    #[test]
    fn lru_fair_spills_registers_to_data_and_to_registers_and_fills_them_back() {
        let mut c = one_set(CerfPolicy::LruFair);
        c.write_register(reg(0)).unwrap();
        c.write_register(reg(2)).unwrap();
        assert!(c.read_register(reg(2)));
        // reg -> cache: the LRU register (reg 0) is evicted as dirty data (its spill).
        let a = c.access(line(1), ALL, CacheOp::Read, 0);
        assert_eq!(a.eviction.map(|e| (e.line, e.dirty)), Some((reg(0), ALL)));
        let mut out = Vec::new();
        c.take_evicted_registers(&mut out);
        assert_eq!(out, [reg(0)]);
        assert!(!c.read_register(reg(0)), "spilled");
        // reg -> reg: a register displaces the LRU register.
        c.fill(line(1), ALL, &mut Vec::new());
        assert!(c.read_register(reg(2)));
        c.access(line(1), ALL, CacheOp::Read, 0);
        c.write_register(reg(4)).unwrap();
        c.take_evicted_registers(&mut out);
        assert_eq!(out, [reg(0), reg(2)]);
        // The spilled register filled back as a data line becomes the register again.
        load(&mut c, reg(0));
        assert!(c.read_register(reg(0)));
        let s = *c.register_stats();
        assert_eq!(
            (s.data_over_register, s.from_register, s.spills),
            (1, 1, 2),
            "{s:?}"
        );
        assert_eq!(s.adopted, 1);
        assert_eq!(c.state_counts()[1], 2);
    }

    /// An SM that slept through a wait for a port takes, at wake-up, the samples an SM
    /// evaluated in every cycle would have taken: one every 64 cycles, each of the ways
    /// per state at its cycle (logged before each L1D event of the sleep; after the last
    /// one, those at wake-up).
    #[test]
    fn the_samples_of_a_slept_wait_follow_the_logged_states() {
        let mut rf = Cerf::new(&cfg(&["register_file.design=\"cerf\""]));
        rf.last_sample = Cycle::new(100);
        let log = [
            (Cycle::new(150), [4, 0, 0, 0]),
            (Cycle::new(228), [3, 1, 0, 0]),
            (Cycle::new(300), [2, 2, 0, 0]),
        ];
        // Samples at 164 (before the event of 228), 228 and 292 (before 300), 356 and
        // 420 (after the last event).
        rf.catch_up_samples(&log, [1, 3, 0, 0], Cycle::new(421));
        assert_eq!(
            rf.state_integral,
            [64 * (3 + 2 * 2 + 2), 64 * (1 + 2 * 2 + 3 * 2), 0, 0]
        );
        assert_eq!((rf.sampled_cycles, rf.last_sample), (320, Cycle::new(420)));
        // Woken at a sample's cycle: that sample is the cycle's own ([`Cerf::sample`]).
        rf.catch_up_samples(&[], [0, 4, 0, 0], Cycle::new(484));
        assert_eq!((rf.sampled_cycles, rf.last_sample), (320, Cycle::new(420)));
        // An event at the wake-up's cycle: the samples before it see the state before.
        rf.catch_up_samples(
            &[(Cycle::new(549), [4, 0, 0, 0])],
            [0, 0, 4, 0],
            Cycle::new(549),
        );
        assert_eq!(rf.state_integral[0], 64 * (3 + 2 * 2 + 2 + 4 * 2));
        assert_eq!((rf.sampled_cycles, rf.last_sample), (448, Cycle::new(548)));
    }

    fn cfg(overrides: &[&str]) -> GpuConfig {
        crate::rf::test_support::config("gtx480", overrides)
    }

    struct Units(Vec<(InstToken, u64)>, u64);
    impl DispatchPort for Units {
        fn try_dispatch(&mut self, d: Dispatch) -> bool {
            self.0.push((d.token, self.1));
            true
        }
    }

    fn r(reg: u16, dead: bool) -> RegOperand {
        RegOperand {
            file: RegFileKind::General,
            reg,
            width: 1,
            hint: OperandHint {
                dead_after: dead,
                ..OperandHint::default()
            },
        }
    }

    /// One cycle `t` of SM 0's register file; `units` dispatch at once.
    fn tick(rf: &mut dyn RegisterFile, mem: &mut MemorySystem, units: &mut Units, t: u64) {
        units.1 = t;
        rf.cycle(&mut RfCycle {
            now: Cycle::new(t),
            sm: SmId(0),
            memory: mem.port(SmId(0)),
            dispatch: units,
            writes_done: &mut Vec::new(),
        });
    }

    /// Issues one instruction reading `srcs` at cycle 10 on warp 1 (8 registers per
    /// thread) and returns the dispatch cycle.
    fn dispatch_cycle(
        rf: &mut dyn RegisterFile,
        mem: &mut MemorySystem,
        srcs: &[RegOperand],
    ) -> u64 {
        rf.warp_launched(WarpLaunch {
            warp: WarpSlot(1),
            scheduler: 0,
            registers_per_thread: 8,
            cta: 0,
        });
        let c = Candidate {
            warp: WarpSlot(1),
            scheduler: 0,
            unit: UnitKind::Sp,
            class: OpClass::Fp32,
            srcs,
            dsts: &[],
            hint: InstHint::default(),
        };
        assert!(rf.can_accept(&c, Cycle::new(10)).is_ok());
        let step = emu::WarpStep::default();
        rf.accept(
            IssuedInst {
                token: InstToken(3),
                inst: c,
                step: &step,
            },
            Cycle::new(10),
        );
        let mut units = Units(Vec::new(), 0);
        for t in 11..40 {
            tick(rf, mem, &mut units, t);
        }
        assert_eq!(units.0.len(), 1);
        units.0[0].1
    }

    #[test]
    fn the_tagging_stage_costs_one_cycle_and_dead_registers_become_holes() {
        let base_cfg = cfg(&[]);
        let mut base = Baseline::new(&base_cfg);
        let b = dispatch_cycle(&mut base, &mut MemorySystem::new(&base_cfg), &[r(1, false)]);
        let c = cfg(&["register_file.design=\"cerf\""]);
        let mut mem = MemorySystem::new(&c);
        let mut cerf = Cerf::new(&c);
        let t = dispatch_cycle(&mut cerf, &mut mem, &[r(1, false), r(2, true)]);
        assert_eq!(t, b + TAG_STAGE);
        // R1 stays a register entry, R2 (dead after the read) is a hole again.
        let line = |reg: u32| Cerf::reg_mem_line(SmId(0), reg);
        assert!(mem.port(SmId(0)).read_register(line(1)));
        assert!(!mem.port(SmId(0)).read_register(line(2)));
        let s = cerf.stats(Cycle::new(40));
        assert_eq!(s.design, "cerf");
        assert_eq!(s.extra["cerf_register_tag_lookups"], 2);
        assert_eq!(s.extra["cerf_cold_registers"], 2);
        assert_eq!(s.extra["cerf_reg_to_inactive"], 1);
        assert_eq!(s.reads, 2, "register reads are bank reads of the array");
    }

    /// Issues an instruction of warp 1 writing `dst` with `exec_mask` at `now` and hands
    /// its result to the register file in the same cycle.
    fn write(rf: &mut Cerf, dst: u16, exec_mask: u32, token: u32, now: u64) {
        write_lanes(rf, dst, u32::MAX, exec_mask, token, now)
    }

    fn write_lanes(rf: &mut Cerf, dst: u16, active: u32, exec_mask: u32, token: u32, now: u64) {
        let dsts = [r(dst, false)];
        let c = Candidate {
            warp: WarpSlot(1),
            scheduler: 0,
            unit: UnitKind::Sp,
            class: OpClass::Fp32,
            srcs: &[],
            dsts: &dsts,
            hint: InstHint::default(),
        };
        let step = emu::WarpStep {
            active_mask: active,
            exec_mask,
            ..emu::WarpStep::default()
        };
        rf.accept(
            IssuedInst {
                token: InstToken(token),
                inst: c,
                step: &step,
            },
            Cycle::new(now),
        );
        rf.request_write(
            WriteRequest {
                token: InstToken(token),
                warp: WarpSlot(1),
                scheduler: 0,
                dsts: &dsts,
            },
            Cycle::new(now),
        );
    }

    /// Runs the design and the memory system over cycles `from..to`; returns the first
    /// cycle at whose end register address `probe` is in the array, if any.
    fn run(rf: &mut Cerf, mem: &mut MemorySystem, from: u64, to: u64, probe: u32) -> Option<u64> {
        let mut units = Units(Vec::new(), 0);
        let mut present = None;
        for t in from..to {
            mem.completed(Cycle::new(t)).for_each(drop);
            tick(rf, mem, &mut units, t);
            let done = rf.writes.is_empty() && rf.spilled.get(probe as usize) == Some(&false);
            if present.is_none() && done {
                present = Some(t);
            }
        }
        present
    }

    /// Under lru-fair with a one-set array: R1 is written, then four newer registers
    /// evict (spill) it. Rewriting it with every lane needs nothing from memory; with
    /// half the lanes, the other half must come back first: the write waits for a fill
    /// of R1's reg-mem line, and so does a read of R1.
    #[test]
    fn a_partial_write_to_a_spilled_register_fills_it_first() {
        let spilled_then = |mask: u32| {
            let c = cfg(&[
                "register_file.design=\"cerf\"",
                "register_file.cerf.policy=\"lru-fair\"",
                "register_file.cerf.size_bytes=512",
                // Table III prices the register file's size only.
                "energy.cerf_data_read_pj=64",
                "energy.cerf_data_write_pj=64",
                "energy.cerf_tag_lookup_pj=10",
            ]);
            let mut mem = MemorySystem::new(&c);
            let mut rf = Cerf::new(&c);
            rf.warp_launched(WarpLaunch {
                warp: WarpSlot(1),
                scheduler: 0,
                registers_per_thread: 8,
                cta: 0,
            });
            write(&mut rf, 1, u32::MAX, 0, 10);
            run(&mut rf, &mut mem, 10, 12, 1);
            for (k, reg) in (2..6).enumerate() {
                write(&mut rf, reg, u32::MAX, 1 + k as u32, 12 + k as u64);
                run(&mut rf, &mut mem, 12 + k as u64, 13 + k as u64, 1);
            }
            run(&mut rf, &mut mem, 16, 20, 1);
            assert!(rf.spilled[1], "R1 was evicted by R2..R5");
            assert_eq!(rf.stats(Cycle::new(16)).extra["cerf_spills"], 1);
            write(&mut rf, 1, mask, 9, 100);
            let back = run(&mut rf, &mut mem, 100, 2000, 1);
            let in_array = mem
                .port(SmId(0))
                .read_register(Cerf::reg_mem_line(SmId(0), 1));
            assert_eq!(in_array, back.is_some());
            (back, rf.stats(Cycle::new(2000)))
        };
        let (full, s) = spilled_then(u32::MAX);
        assert_eq!(full, Some(100), "a full write needs no fill");
        assert_eq!(
            (s.extra["cerf_fills"], s.extra["cerf_partial_writes"]),
            (0, 0)
        );
        let (partial, s) = spilled_then(0x0000_ffff);
        let partial = partial.expect("the partial write completes once R1 is back");
        // The fill goes to the L2 and back (gtx480: L1 20, interconnect 2 x 20, L2 134
        // cycles at least).
        assert!(partial > 100 + 190, "merged at cycle {partial}");
        assert_eq!(
            (
                s.extra["cerf_partial_writes"],
                s.extra["cerf_partial_write_fills"],
                s.extra["cerf_fills"]
            ),
            (1, 1, 1)
        );
        // A write with no lane active leaves the spilled register where it is.
        let (none, s) = spilled_then(0);
        assert_eq!(none, None);
        assert_eq!(
            (s.extra["cerf_empty_writes"], s.extra["cerf_fills"]),
            (1, 0)
        );
    }

    /// A write is partial against the lanes the warp has: every lane of a 16-thread warp
    /// is a full write, also in a slot a 32-thread warp had before.
    #[test]
    fn a_warp_with_fewer_threads_writes_all_its_lanes() {
        let c = cfg(&["register_file.design=\"cerf\""]);
        let mut rf = Cerf::new(&c);
        let launch = |rf: &mut Cerf| {
            rf.warp_launched(WarpLaunch {
                warp: WarpSlot(1),
                scheduler: 0,
                registers_per_thread: 8,
                cta: 0,
            })
        };
        launch(&mut rf);
        write_lanes(&mut rf, 1, u32::MAX, u32::MAX, 0, 10);
        write_lanes(&mut rf, 2, u32::MAX, 0xffff, 1, 11);
        rf.warp_exited(WarpSlot(1));
        launch(&mut rf);
        write_lanes(&mut rf, 1, 0xffff, 0xffff, 2, 12);
        write_lanes(&mut rf, 2, 0xffff, 0x00ff, 3, 13);
        assert_eq!(rf.stats(Cycle::new(14)).extra["cerf_partial_writes"], 2);
    }

    /// §III.C: the RGen packs resident warps' registers, so 48 warps of 21 registers
    /// (1,008 of gtx480's 1,024 warp registers) get addresses 0..1008, no two warps
    /// overlap, and a warp launched into an exited warp's slot reuses its addresses.
    #[test]
    fn resident_warps_register_addresses_fit_the_register_file() {
        let c = cfg(&["register_file.design=\"cerf\""]);
        let mut rf = Cerf::new(&c);
        let launch = |rf: &mut Cerf, w: u16| {
            rf.warp_launched(WarpLaunch {
                warp: WarpSlot(w),
                scheduler: 0,
                registers_per_thread: 21,
                cta: 0,
            })
        };
        for w in 0..48 {
            launch(&mut rf, w);
        }
        let mut used = vec![0u32; 1024];
        for w in 0..48u16 {
            for reg in 0..21 {
                used[rf.reg_addr(WarpSlot(w), reg) as usize] += 1;
            }
        }
        assert_eq!(used.iter().filter(|&&n| n == 1).count(), 48 * 21);
        assert!(used.iter().all(|&n| n <= 1));
        assert_eq!(rf.reg_addr(WarpSlot(47), 20), 1007);
        let before = rf.reg_addr(WarpSlot(5), 0);
        rf.warp_exited(WarpSlot(5));
        launch(&mut rf, 5);
        assert_eq!(rf.reg_addr(WarpSlot(5), 0), before);
    }

    #[test]
    fn reg_mem_addresses_index_the_sets_like_memory_lines() {
        let c = cfg(&["register_file.design=\"cerf\""]);
        let a = c.l1d_array();
        assert_eq!((a.size_bytes, a.ways, a.sets()), (131072, 4, 256));
        // Register addresses 0..1024 (the whole 128 KB RF) fill every set with 4.
        let mut per_set = vec![0; 256];
        for ra in 0..1024 {
            let l = Cerf::reg_mem_line(SmId(3), ra);
            per_set[((l.0 >> 7) % 256) as usize] += 1;
            assert_eq!(Cerf::addr_of_line(SmId(3), l), ra);
        }
        assert!(per_set.iter().all(|&n| n == 4));
        let bad = GpuConfig::load(
            "gtx480",
            &default_configs_dir(),
            &[
                Override::parse("register_file.design=\"cerf\"").unwrap(),
                Override::parse("register_file.cerf.ways=3").unwrap(),
            ],
        );
        assert!(format!("{}", bad.unwrap_err()).contains("register_file.cerf.ways"));
    }

    fn global(kind: AccessKind, line: LineAddr) -> MemRequest<'static> {
        let lines: &'static [LineAccess] = Box::leak(Box::new([LineAccess {
            line,
            sectors: SectorMask(0xf),
        }]));
        MemRequest {
            kind,
            space: Space::Global,
            lines,
        }
    }

    /// The cycle at which a load of `line` issued at cycle 0 completes (its fill).
    fn fill_cycle(c: &GpuConfig, line: LineAddr) -> u64 {
        let mut mem = MemorySystem::new(c);
        assert!(mem
            .issue(SmId(0), Cycle::ZERO, global(AccessKind::Load, line))
            .is_ok());
        (1..5000)
            .find(|&t| mem.completed(Cycle::new(t)).count() > 0)
            .expect("the load completes")
    }

    /// Warp 1 (8 registers, addresses 0..8) reads `src` in an instruction accepted at
    /// `at` (its reads are arbitrated from `at + 2`, after the tagging stage); a load of
    /// `line` is issued at each cycle of `loads`. Returns the dispatch cycle, the last
    /// completion of a load after `at`, and the stats.
    fn read_beside_line(
        c: &GpuConfig,
        src: u16,
        at: u64,
        loads: &[u64],
        line: LineAddr,
    ) -> (u64, Option<u64>, RfStats) {
        let mut mem = MemorySystem::new(c);
        let mut rf = Cerf::new(c);
        let mut units = Units(Vec::new(), 0);
        rf.warp_launched(WarpLaunch {
            warp: WarpSlot(1),
            scheduler: 0,
            registers_per_thread: 8,
            cta: 0,
        });
        let srcs = [r(src, false)];
        let cand = Candidate {
            warp: WarpSlot(1),
            scheduler: 0,
            unit: UnitKind::Sp,
            class: OpClass::Fp32,
            srcs: &srcs,
            dsts: &[],
            hint: InstHint::default(),
        };
        let mut done_after = None;
        for t in 0..at + 40 {
            if loads.contains(&t) {
                mem.completed(Cycle::new(t)).for_each(drop);
                assert!(mem
                    .issue(SmId(0), Cycle::new(t), global(AccessKind::Load, line))
                    .is_ok());
            }
            for d in mem.completed(Cycle::new(t)) {
                if t > at {
                    done_after = Some(d.at.get());
                }
            }
            tick(&mut rf, &mut mem, &mut units, t);
            if t == at {
                assert!(rf.can_accept(&cand, Cycle::new(at)).is_ok());
                let step = emu::WarpStep::default();
                rf.accept(
                    IssuedInst {
                        token: InstToken(3),
                        inst: cand,
                        step: &step,
                    },
                    Cycle::new(at),
                );
            }
        }
        assert_eq!(units.0.len(), 1);
        (units.0[0].1, done_after, rf.stats(Cycle::new(at + 40)))
    }

    /// With one port per bank shared by reads and writes (GPGPU-Sim's single-ported
    /// banks), a line fill into data bank 1 and the read of register address 1 (bank 1)
    /// in the same cycle serialize: the read goes a cycle later. Register address 2
    /// (bank 2) does not wait, and under `banking = "separate"` nothing waits.
    #[test]
    fn register_reads_and_line_fills_to_the_same_bank_in_the_same_cycle_serialize() {
        let shared = [
            "register_file.design=\"cerf\"",
            "register_file.port_sharing=\"shared\"",
        ];
        let c = cfg(&shared);
        // Set 1 of the 256: data bank 1, like register address 1.
        let line = LineAddr(0x4000_0080);
        let fill = fill_cycle(&c, line);
        assert!(fill > 100, "a miss to the L2 and back: {fill}");
        let at = fill - 2;
        let (alone, ..) = read_beside_line(&c, 1, at, &[], line);
        let (same, _, s) = read_beside_line(&c, 1, at, &[0], line);
        assert_eq!(same, alone + 1, "the fill takes bank 1's port at {fill}");
        assert_eq!(s.extra["cerf_register_bank_conflicts_with_lines"], 1);
        assert_eq!(s.read_bank_conflicts, 1);
        assert_eq!(s.extra["cerf_line_data_writes"], 1);
        let (other_alone, ..) = read_beside_line(&c, 2, at, &[], line);
        let (other, ..) = read_beside_line(&c, 2, at, &[0], line);
        assert_eq!(other, other_alone, "bank 2 is free");

        let mut separate = shared.to_vec();
        separate.push("register_file.cerf.banking=\"separate\"");
        let c = cfg(&separate);
        let (alone, ..) = read_beside_line(&c, 1, at, &[], line);
        let (same, _, s) = read_beside_line(&c, 1, at, &[0], line);
        assert_eq!(same, alone, "the pre-issue-22 model: bandwidth for free");
        assert_eq!(s.read_bank_conflicts, 0);
    }

    /// With separate read and write ports (gtx480), a line hit (a data read) and a
    /// register read of the same bank in the same cycle serialize, and the hit's data is
    /// not late: line accesses of a cycle come first (the LD/ST stage runs before operand
    /// collection).
    #[test]
    fn a_line_hit_and_a_register_read_of_one_bank_serialize() {
        let c = cfg(&["register_file.design=\"cerf\""]);
        let line = LineAddr(0x4000_0080);
        let fill = fill_cycle(&c, line);
        // The first load brings the line in; the second hits at `at + 2`, when the
        // register's read is arbitrated.
        let at = fill + 50;
        let (alone, none, _) = read_beside_line(&c, 1, at, &[0], line);
        assert_eq!(none, None);
        let (read, hit, s) = read_beside_line(&c, 1, at, &[0, at + 2], line);
        assert_eq!(read, alone + 1);
        assert_eq!(
            hit,
            Some(at + 2 + c.l1d.latency.get()),
            "the hit is on time"
        );
        assert_eq!(s.extra["cerf_register_bank_conflicts_with_lines"], 1);
        assert_eq!(s.extra["cerf_line_data_reads"], 1);
    }

    /// Two registers in one tag bank (addresses 0 and 4 of gtx480's 4 tag banks) with
    /// one lookup per tag bank per cycle: the second lookup waits a cycle.
    #[test]
    fn register_tag_lookups_in_one_tag_bank_serialize() {
        let c = cfg(&[
            "register_file.design=\"cerf\"",
            "register_file.cerf.tag_lookups_per_bank=1",
        ]);
        let mut mem = MemorySystem::new(&c);
        let mut rf = Cerf::new(&c);
        let same = dispatch_cycle(&mut rf, &mut mem, &[r(0, false), r(4, false)]);
        assert_eq!(
            rf.stats(Cycle::new(40)).extra["cerf_register_tag_bank_conflicts"],
            1
        );
        let mut mem = MemorySystem::new(&c);
        let mut rf = Cerf::new(&c);
        let apart = dispatch_cycle(&mut rf, &mut mem, &[r(0, false), r(1, false)]);
        assert_eq!(
            rf.stats(Cycle::new(40)).extra["cerf_register_tag_bank_conflicts"],
            0
        );
        assert_eq!(same, apart + 1);
        // The default (two lookups per tag bank: the data banks' rate) does not wait.
        let c = cfg(&["register_file.design=\"cerf\""]);
        let mut mem = MemorySystem::new(&c);
        let mut rf = Cerf::new(&c);
        assert_eq!(
            dispatch_cycle(&mut rf, &mut mem, &[r(0, false), r(4, false)]),
            apart
        );
    }

    /// Under `writes = "write-back"` a store makes its line `dirty` (write-allocate), and
    /// registers taking the set's ways evict it: it is written back to the L2. Under the
    /// default (gtx480's write-through without allocation) the store leaves nothing.
    #[test]
    fn a_write_back_line_reaches_the_dirty_state_and_is_written_back_on_eviction() {
        let one_set = |writes: &str| {
            cfg(&[
                "register_file.design=\"cerf\"",
                &format!("register_file.cerf.writes=\"{writes}\""),
                "register_file.cerf.size_bytes=512",
                "energy.cerf_data_read_pj=64",
                "energy.cerf_data_write_pj=64",
                "energy.cerf_tag_lookup_pj=10",
            ])
        };
        let c = one_set("write-back");
        let mut mem = MemorySystem::new(&c);
        let mut rf = Cerf::new(&c);
        rf.warp_launched(WarpLaunch {
            warp: WarpSlot(1),
            scheduler: 0,
            registers_per_thread: 8,
            cta: 0,
        });
        let x = LineAddr(0x4000_0000);
        assert!(mem
            .issue(SmId(0), Cycle::ZERO, global(AccessKind::Store, x))
            .is_ok());
        run(&mut rf, &mut mem, 0, 50, 0);
        assert_eq!(
            mem.port(SmId(0)).l1d_state_counts(),
            [3, 0, 0, 1],
            "x is dirty"
        );
        assert_eq!(mem.stats().l2.writes, 0, "nothing written through");
        // Four registers take the set's four ways: lru-prioritized takes the inactive
        // ones, then x's, which is written back.
        for (k, reg) in (1..5).enumerate() {
            let t = 50 + k as u64;
            write(&mut rf, reg, u32::MAX, k as u32, t);
            run(&mut rf, &mut mem, t, t + 1, 0);
        }
        run(&mut rf, &mut mem, 60, 1000, 0);
        assert_eq!(mem.port(SmId(0)).l1d_state_counts(), [0, 4, 0, 0]);
        let s = rf.stats(Cycle::new(1000));
        assert_eq!(
            (s.extra["cerf_cache_to_dirty"], s.extra["cerf_dirty_to_reg"]),
            (1, 1)
        );
        assert_eq!(mem.port(SmId(0)).l1d_stats().writebacks, 1);
        assert_eq!(mem.stats().l2.writes, 1, "the dirty line reached the L2");
        // Its data was read out of the array (a data bank read), the store wrote it.
        assert_eq!(
            (
                s.extra["cerf_line_data_reads"],
                s.extra["cerf_line_data_writes"]
            ),
            (1, 1)
        );

        let c = one_set("as-l1d");
        let mut mem = MemorySystem::new(&c);
        assert!(mem
            .issue(SmId(0), Cycle::ZERO, global(AccessKind::Store, x))
            .is_ok());
        for t in 0..1000 {
            mem.completed(Cycle::new(t)).for_each(drop);
        }
        assert_eq!(mem.port(SmId(0)).l1d_state_counts(), [4, 0, 0, 0]);
        assert_eq!(mem.stats().l2.writes, 1, "written through");
    }
}

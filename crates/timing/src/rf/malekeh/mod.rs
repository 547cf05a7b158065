//! Malekeh (Abaie Shoushtary, Arnau, Tubella, González: "Lightweight Register File
//! Caching in Collector Units for GPUs"): the operand collector units become small
//! register caches, *caching collector units* (CCUs), steered by the compiler's
//! near/far reuse hints, with a cache-aware issue scheduler and a stall threshold STHLD.
//!
//! Model, per SM (section numbers are the paper's):
//! - The banks, ports, arbiter (writes first) and collectors are the baseline's
//!   ([`Baseline`], composed, not copied): every CCU is one of its collector units, and
//!   only the source registers that miss in the CCU are requested from the banks.
//! - **CCU (§3.2)**: besides the instruction it collects, a CCU keeps a cache table (CT)
//!   of `register_file.malekeh.entries` slots (8 in the paper: 3-bit indices and LRU),
//!   each a warp-wide 32-bit register of the CCU's *owner* warp with the fields of §3.2:
//!   valid, lock, the near/far bit and an LRU rank (kept as a last-use stamp, which
//!   orders the slots as the 3-bit ranks do). A 64-bit operand takes two slots.
//! - **Allocation (§6)**: a warp that owns a CCU issues into it (and waits while its own
//!   previous instruction is still in it); otherwise it takes a free CCU, preferring one
//!   holding no valid value, then one holding only far values, then — only once the
//!   core's stall counter has reached STHLD — one with near values; least recently used
//!   first within each kind. Taking a CCU from another warp flushes its CT (the warp id
//!   mismatches, step 1 of §3.2). A warp owns at most one CCU: with specialised
//!   collectors, issuing into a CCU of another kind releases (flushes) the old one.
//! - **Sources (§3.2 steps 3-10)**: each distinct source register is looked up; hits are
//!   ready at once, misses get a slot by the **replacement policy of §4.1** (an invalid
//!   slot if any; else, excluding locked slots, a uniformly random far one from a seeded
//!   generator, else the least recently used near one) and are read from the banks. All
//!   source slots stay locked until the instruction is dispatched. Every source sets its
//!   slot's near/far bit from its own hint: the distance to the register's next read.
//!   An instruction with more distinct sources than unlocked slots reads the rest from
//!   the banks without caching them.
//! - **Reuse distances**: the compiler's static hints by default; with
//!   `reuse_distances = "trace"`, exact distances on each warp's executed stream from a
//!   functional profiling pass the runtime runs before each launch ([`trace`]; the paper
//!   annotated its traces with precise distances, §8).
//! - **Destinations (§4.2)**: every result is written to the banks. The owner's CCU has
//!   one write port: in a cycle, the first write request reaching it with a near
//!   destination keeps that destination (a hit updates the slot, a miss takes one by the
//!   replacement policy); other destinations that cycle, and far ones, are not cached,
//!   and a stale copy of such a register in the CT is invalidated. A warp without a CCU
//!   writes only the banks.
//! - **Issue (§5)**: with `cache_aware_issue`, the scheduler's candidates are ranked:
//!   warps owning a CCU first, and within a category the scheduler's last issued warp
//!   first; ties keep GTO's (oldest first) order — GTO with the cache-aware categories.
//! - **STHLD (§6)**: one counter per core. While every free CCU a warp could take holds
//!   near values, the allocator refuses ([`RfStall::Design`]) and the counter runs, one
//!   per cycle; once it is higher than STHLD the replacement is allowed (STHLD = 0: after
//!   one cycle). Any allocation of a CCU to a warp that had none ends the wait and resets
//!   the counter. Cycles spent waiting are `malekeh_sthld_stall_cycles`. STHLD is fixed by
//!   default (`register_file.malekeh.sthld`, 0; see [`MalekehConfig::sthld`]).
//! - **Adaptive STHLD (§7), an option of ours**: with `adaptive = true`, each core's
//!   [`sthld::SthldController`]
//!   sets STHLD at the end of every `interval` cycles from the core's IPC in it (the paper
//!   keeps one IPC per chip; a core's own IPC is what a per-core counter can see without
//!   chip-wide wires). The trajectory is in [`RfStats::series`] as
//!   `malekeh_sthld_sm<N>`: `(cycle, sthld)` at the start and at every change.
//!
//! Energy: the ledger's rules ([`crate::rf::ledger`]) with the CCU as the operand
//! buffer: a CT hit is a CCU read; a miss a bank read, a crossbar transfer, a CCU write
//! and read; a kept destination a crossbar transfer (port D) and a CCU write; every bank
//! access an arbiter request. Statistics keys: see [`Malekeh::stats`].

pub mod sthld;
pub mod trace;

use serde::{Deserialize, Serialize};

use crate::config::{GpuConfig, UnitKind};
use crate::kernel_info::{OperandHint, RegFileKind, RegOperand};
use crate::rf::baseline::{Baseline, MAX_REGS};
use crate::rf::ledger::{Charge, Ledger, OperandBuffer, Sink, Source};
use crate::rf::{
    Candidate, IssuedInst, RegisterFile, RfCycle, RfStall, RfStats, SchedulerEvent, WarpLaunch,
    WarpSlot, WriteRequest,
};
use crate::time::{Cycle, Cycles};
use sthld::SthldController;

/// Most cache-table slots a CCU may be configured with.
pub const MAX_ENTRIES: usize = 32;

/// `[register_file.malekeh]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MalekehConfig {
    /// Cache-table slots per CCU (§3.2: 8, with 3-bit LRU and indices).
    pub entries: u32,
    /// RTHLD: a reuse distance (instructions of the warp until the register's next read)
    /// at most this is near. The paper gives no value; 8 is ours, as in
    /// `compiler::reuse_distance` (one per CT slot).
    pub rthld: u32,
    /// STHLD in cycles: the fixed threshold, or the adaptive controller's first value.
    /// §6: "Only when the counter is higher than STHLD will the CCU be replaced.
    /// Otherwise, the CCU allocator is stalled and the counter is incremented", so a
    /// threshold `s` holds a warp `s + 1` cycles. The text gives no number; 0 (the
    /// default) is the one fixed value its IPC curve supports for every program: §7
    /// and Figure 3b put the flat region of every curve at the low thresholds ("as the
    /// STHLD increases ... the IPC increases slightly. However, after some point, the
    /// IPC begins to drop"), with the knee program-dependent (§6: "This optimum value
    /// depends on the characteristics of the code being executed"), and 0 still waits
    /// one cycle, as §6's "Malekeh tries to wait for some cycles" asks.
    pub sthld: u32,
    /// Adapt STHLD every `interval` cycles (§7) with [`sthld::SthldController`]; false
    /// (the default) keeps `sthld` fixed. The controller's states and deltas are OUR
    /// design: the paper's Figure 4 is not in its text (see `sthld.rs`).
    pub adaptive: bool,
    /// Cycles per interval of the adaptive controller (§7: 10,000).
    pub interval: u64,
    /// The controller's step in cycles (ours; the paper's deltas are in its Figure 4,
    /// which our text lacks). 4: on the built-in workloads the fixed-STHLD sweep puts the
    /// IPC knee between 0 and 16 cycles, so a coarser step jumps past it in one interval.
    pub step: u32,
    /// The largest STHLD the controller may set.
    pub max_sthld: u32,
    /// A relative IPC change between intervals below this is "small" (ours).
    pub small_ipc_change: f64,
    /// Rank candidates cache-aware (§5); false leaves the scheduler's order.
    pub cache_aware_issue: bool,
    /// Seed of the random choice among far slots (§4.1).
    pub seed: u64,
    /// Where the near/far bits come from: `"static"` (the compiler's shortest CFG
    /// distances, `compiler::reuse_distance`) or `"trace"` (distances on each warp's
    /// executed stream from a functional profiling pass before each launch, §8's "precise
    /// reuse distances"; [`trace`]).
    pub reuse_distances: ReuseDistances,
}

/// The source of Malekeh's reuse distances.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReuseDistances {
    /// The compiler's hints (shortest distance over CFG paths).
    #[default]
    Static,
    /// Trace-exact distances from a functional profiling pass.
    Trace,
}

impl Default for MalekehConfig {
    fn default() -> Self {
        MalekehConfig {
            entries: 8,
            rthld: 8,
            sthld: 0,
            adaptive: false,
            interval: 10_000,
            step: 4,
            max_sthld: 1024,
            small_ipc_change: 0.05,
            cache_aware_issue: true,
            seed: 0x6d61_6c65_6b65_6800,
            reuse_distances: ReuseDistances::Static,
        }
    }
}

impl MalekehConfig {
    /// Checks the values; the error names the key and says why.
    pub fn validate(&self) -> Result<(), (String, String)> {
        let key = |k: &str| format!("register_file.malekeh.{k}");
        if self.entries == 0 || self.entries as usize > MAX_ENTRIES {
            return Err((key("entries"), format!("must be 1 to {MAX_ENTRIES}")));
        }
        if self.interval == 0 {
            return Err((key("interval"), "must be non-zero".into()));
        }
        if self.step == 0 {
            return Err((key("step"), "must be non-zero".into()));
        }
        if self.sthld > self.max_sthld {
            return Err((key("sthld"), "must not exceed max_sthld".into()));
        }
        if !(self.small_ipc_change > 0.0 && self.small_ipc_change < 1.0) {
            return Err((key("small_ipc_change"), "must be between 0 and 1".into()));
        }
        Ok(())
    }

    /// Whether an operand's hint says near.
    fn near(&self, h: &OperandHint) -> bool {
        h.reuse_distance.is_some_and(|d| u32::from(d) <= self.rthld)
    }

    /// Whether the runtime must profile each launch for trace-exact distances.
    pub fn wants_trace(&self) -> bool {
        self.reuse_distances == ReuseDistances::Trace
    }
}

const NO_WARP: u16 = u16::MAX;
const NO_CCU: u16 = u16::MAX;

#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    valid: bool,
    locked: bool,
    near: bool,
    reg: u16,
    last_use: u64,
}

#[derive(Clone, Debug)]
struct Ccu {
    owner: u16,
    slots: [Slot; MAX_ENTRIES],
    /// An instruction of the owner holds locks (until dispatch).
    locked: bool,
    /// The cycle the destination write port was last used.
    write_port_at: Option<Cycle>,
    /// When the owner last issued into it (for LRU among CCUs).
    last_issue: Cycle,
    /// Bit `i`: slot `i` is valid; and valid and near (kept by [`Ccu::sync`], so that
    /// the allocator classifies a CCU without scanning its slots).
    valid_mask: u32,
    near_mask: u32,
}

impl Ccu {
    /// Updates the masks after slot `i` changed.
    fn sync(&mut self, i: usize) {
        let bit = 1u32 << i;
        let s = &self.slots[i];
        self.valid_mask = (self.valid_mask & !bit) | if s.valid { bit } else { 0 };
        self.near_mask = (self.near_mask & !bit) | if s.valid && s.near { bit } else { 0 };
    }
}

/// What the allocator can do for a warp's instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Choice {
    /// The warp's own CCU, free.
    Own(usize),
    /// The warp's own CCU still holds its previous instruction.
    OwnBusy(usize),
    /// A free CCU to take; `near`: it holds near values (STHLD applies).
    Take { idx: usize, near: bool },
    /// No free CCU of the kind.
    None,
}

#[derive(Clone, Copy, Debug, Default)]
struct Counters {
    operand_reads: u64,
    operand_writes: u64,
    hits: u64,
    reads_near: u64,
    hits_near: u64,
    reads_far: u64,
    hits_far: u64,
    fills: u64,
    uncached_reads: u64,
    dest_kept: u64,
    dest_port_conflicts: u64,
    invalidations: u64,
    evictions_far: u64,
    evictions_lru: u64,
    allocations: u64,
    allocations_near: u64,
    flushes: u64,
    sthld_stall_cycles: u64,
    sthld_waits: u64,
    intervals: u64,
    trace_insts: u64,
    trace_mismatches: u64,
    trace_missing: u64,
    hint_agree: u64,
    hint_disagree: u64,
}

/// A warp slot's position in its recorded stream.
#[derive(Clone, Copy, Debug)]
struct TraceCursor {
    /// Index of the stream in the trace; [`NO_STREAM`] when the warp follows the static
    /// hints.
    stream: u32,
    pos: u32,
}

const NO_STREAM: u32 = u32::MAX;
/// `dst_near[token]`: the bits are the trace's (else the static hints apply).
const DST_FROM_TRACE: u8 = 0x80;

/// Malekeh's caching collector units over the baseline's banks. See the module docs.
pub struct Malekeh {
    cfg: MalekehConfig,
    inner: Baseline,
    ccus: Vec<Ccu>,
    /// Per warp slot: the CCU it owns, or [`NO_CCU`].
    owner_of: Vec<u16>,
    /// Per warp slot: its scheduler.
    scheduler_of: Vec<u16>,
    /// Per scheduler: the last warp it issued.
    last_issued: Vec<u16>,
    /// Per warp slot and register (256 per warp): the near/far class the register's last
    /// access gave it (0 none, 1 near, 2 far); classifies reads for the statistics.
    class_of: Vec<u8>,
    sthld: u32,
    controller: Option<SthldController>,
    interval_end: u64,
    interval_insts: u64,
    waiting_since: Option<Cycle>,
    stamp: u64,
    rng: u64,
    sm: Option<u32>,
    trajectory: Vec<(u64, u64)>,
    n: Counters,
    /// The launch's trace-exact distances, with `reuse_distances = "trace"`.
    trace: Option<std::sync::Arc<trace::ReuseTrace>>,
    /// Per warp slot.
    cursor: Vec<TraceCursor>,
    /// Per in-flight instruction token: its destinations' near bits from the trace
    /// ([`DST_FROM_TRACE`] set), or 0.
    dst_near: Vec<u8>,
}

const REGS_PER_WARP: usize = 256;

impl Malekeh {
    /// The design for a validated config.
    pub fn new(cfg: &GpuConfig) -> Self {
        let m = cfg.register_file.malekeh.clone();
        let mut inner = Baseline::new(cfg);
        inner.set_operand_buffer(OperandBuffer::Ccu);
        let ccus = (0..inner.collector_count())
            .map(|_| Ccu {
                owner: NO_WARP,
                slots: [Slot::default(); MAX_ENTRIES],
                locked: false,
                write_port_at: None,
                last_issue: Cycle::ZERO,
                valid_mask: 0,
                near_mask: 0,
            })
            .collect();
        let warps = cfg.sm.max_warps as usize;
        let controller = m
            .adaptive
            .then(|| SthldController::new(m.sthld, m.step, m.max_sthld, m.small_ipc_change));
        Malekeh {
            sthld: m.sthld,
            interval_end: m.interval,
            rng: m.seed,
            cfg: m,
            inner,
            ccus,
            owner_of: vec![NO_CCU; warps],
            scheduler_of: vec![0; warps],
            last_issued: vec![NO_WARP; cfg.sm.schedulers as usize],
            class_of: vec![0; warps * REGS_PER_WARP],
            controller,
            interval_insts: 0,
            waiting_since: None,
            stamp: 0,
            sm: None,
            trajectory: vec![(0, u64::from(cfg.register_file.malekeh.sthld))],
            n: Counters::default(),
            trace: None,
            cursor: vec![
                TraceCursor {
                    stream: NO_STREAM,
                    pos: 0
                };
                warps
            ],
            dst_near: Vec::new(),
        }
    }

    /// The stall threshold in force.
    pub fn sthld(&self) -> u32 {
        self.sthld
    }

    fn entries(&self) -> usize {
        self.cfg.entries as usize
    }

    /// splitmix64: a deterministic generator for the random far-slot choice.
    fn random(&mut self) -> u64 {
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn choose(&self, warp: WarpSlot, unit: UnitKind) -> Choice {
        let own = self.owner_of[warp.index()];
        let scheduler = self.scheduler_of[warp.index()];
        if own != NO_CCU {
            let i = own as usize;
            if self.inner.collector_kind_fits(i, unit, scheduler) {
                return if self.inner.collector_free_for(i, unit, scheduler) {
                    Choice::Own(i)
                } else {
                    Choice::OwnBusy(i)
                };
            }
        }
        // (kind: 0 empty, 1 far only, 2 near; last issue) — the smallest wins.
        let mut best: Option<(u8, Cycle, usize)> = None;
        for (i, c) in self.ccus.iter().enumerate() {
            if !self.inner.collector_free_for(i, unit, scheduler) {
                continue;
            }
            let kind = if c.owner == NO_WARP || c.valid_mask == 0 {
                0
            } else if c.near_mask != 0 {
                2
            } else {
                1
            };
            let key = (kind, c.last_issue, i);
            if best.is_none_or(|b| key < b) {
                best = Some(key);
            }
        }
        match best {
            Some((kind, _, idx)) => Choice::Take {
                idx,
                near: kind == 2,
            },
            None => Choice::None,
        }
    }

    /// Whether the STHLD counter allows replacing a CCU with near values at `now`: the
    /// counter (cycles stalled so far) is higher than STHLD (§6).
    fn sthld_allows(&self, now: Cycle) -> bool {
        let since = self.waiting_since.unwrap_or(now);
        (now - since).get() > u64::from(self.sthld)
    }

    fn flush(&mut self, idx: usize) {
        let c = &mut self.ccus[idx];
        if c.owner != NO_WARP {
            if c.valid_mask != 0 {
                self.n.flushes += 1;
            }
            self.owner_of[c.owner as usize] = NO_CCU;
        }
        c.owner = NO_WARP;
        for s in c.slots.iter_mut() {
            s.valid = false;
            s.locked = false;
        }
        c.valid_mask = 0;
        c.near_mask = 0;
    }

    /// A slot of CCU `idx` for a new value (§4.1), or `None` when every slot is locked.
    fn victim(&mut self, idx: usize) -> Option<usize> {
        let e = self.entries();
        let slots = &self.ccus[idx].slots[..e];
        if let Some(i) = slots.iter().position(|s| !s.valid) {
            return Some(i);
        }
        let far = slots.iter().filter(|s| !s.locked && !s.near).count();
        if far > 0 {
            let pick = (self.random() % far as u64) as usize;
            let i = (0..e)
                .filter(|&i| {
                    let s = &self.ccus[idx].slots[i];
                    !s.locked && !s.near
                })
                .nth(pick)?;
            self.n.evictions_far += 1;
            return Some(i);
        }
        let i = (0..e)
            .filter(|&i| !self.ccus[idx].slots[i].locked)
            .min_by_key(|&i| self.ccus[idx].slots[i].last_use)?;
        self.n.evictions_lru += 1;
        Some(i)
    }

    fn find(&self, idx: usize, reg: u16) -> Option<usize> {
        self.ccus[idx].slots[..self.entries()]
            .iter()
            .position(|s| s.valid && s.reg == reg)
    }

    fn class_slot(&mut self, warp: WarpSlot, reg: u16) -> Option<&mut u8> {
        let r = reg as usize;
        (r < REGS_PER_WARP).then(|| &mut self.class_of[warp.index() * REGS_PER_WARP + r])
    }

    /// Closes the adaptive controller's intervals that ended by `now`.
    fn roll_intervals(&mut self, now: Cycle) {
        while now.get() >= self.interval_end {
            if let Some(c) = self.controller.as_mut() {
                let ipc = self.interval_insts as f64 / self.cfg.interval as f64;
                let s = c.end_interval(ipc);
                if s != self.sthld {
                    self.sthld = s;
                    self.trajectory.push((self.interval_end, u64::from(s)));
                }
                self.n.intervals += 1;
            }
            self.interval_insts = 0;
            self.interval_end += self.cfg.interval;
        }
    }

    /// Ends an STHLD wait at `now` (an allocation happened).
    fn end_wait(&mut self, now: Cycle) {
        if let Some(since) = self.waiting_since.take() {
            let waited = (now - since).get();
            if waited > 0 {
                self.n.sthld_stall_cycles += waited;
                self.n.sthld_waits += 1;
            }
        }
    }
}

impl Malekeh {
    /// The near/far bit of an operand: the trace's when it has one, else the hint's.
    /// Counts how often the two agree.
    #[inline]
    fn operand_near(&mut self, hint: &OperandHint, exact: Option<bool>) -> bool {
        let fixed = self.cfg.near(hint);
        match exact {
            None => fixed,
            Some(e) => {
                if e == fixed {
                    self.n.hint_agree += 1;
                } else {
                    self.n.hint_disagree += 1;
                }
                e
            }
        }
    }

    /// The warp's next recorded instruction, if it follows its recorded stream; a warp
    /// that departs from it follows the static hints from then on.
    #[inline]
    fn trace_entry(&mut self, warp: WarpSlot, step: &emu::WarpStep) -> Option<trace::TraceEntry> {
        let t = self.trace.as_ref()?;
        let c = &mut self.cursor[warp.index()];
        if c.stream == NO_STREAM {
            return None;
        }
        match t.entry(c.stream as usize, c.pos as usize) {
            Some(e) if e.is(step.func, step.inst) => {
                c.pos += 1;
                self.n.trace_insts += 1;
                Some(*e)
            }
            _ => {
                c.stream = NO_STREAM;
                self.n.trace_mismatches += 1;
                None
            }
        }
    }
}

impl RegisterFile for Malekeh {
    fn name(&self) -> &'static str {
        "malekeh"
    }

    fn warp_launched(&mut self, w: WarpLaunch) {
        self.scheduler_of[w.warp.index()] = w.scheduler;
        let base = w.warp.index() * REGS_PER_WARP;
        self.class_of[base..base + REGS_PER_WARP].fill(0);
    }

    fn kernel_started(&mut self, info: &crate::kernel_info::KernelInfo) {
        self.trace = info.reuse_trace.clone();
    }

    fn warp_placed(&mut self, warp: WarpSlot, cta: [u32; 3], warp_in_cta: u32) {
        let stream = self.trace.as_ref().map(|t| t.find(cta, warp_in_cta));
        if stream == Some(None) {
            self.n.trace_missing += 1;
        }
        self.cursor[warp.index()] = TraceCursor {
            stream: stream.flatten().map_or(NO_STREAM, |s| s as u32),
            pos: 0,
        };
    }

    fn warp_exited(&mut self, warp: WarpSlot) {
        let own = self.owner_of[warp.index()];
        if own != NO_CCU {
            self.flush(own as usize);
        }
        for l in self.last_issued.iter_mut() {
            if *l == warp.0 {
                *l = NO_WARP;
            }
        }
    }

    fn scheduler_event(&mut self, e: SchedulerEvent) {
        if let SchedulerEvent::Issued(w) = e {
            let s = self.scheduler_of[w.index()] as usize;
            if let Some(l) = self.last_issued.get_mut(s) {
                *l = w.0;
            }
        }
    }

    fn ranks_warps(&self) -> bool {
        self.cfg.cache_aware_issue
    }

    fn rank(&self, c: &Candidate<'_>) -> u32 {
        let owns = self.owner_of[c.warp.index()] != NO_CCU;
        let last = self
            .last_issued
            .get(c.scheduler as usize)
            .is_some_and(|&l| l == c.warp.0);
        2 * u32::from(owns) + u32::from(last)
    }

    fn can_accept(&mut self, c: &Candidate<'_>, now: Cycle) -> Result<(), RfStall> {
        match self.choose(c.warp, c.unit) {
            Choice::Own(_) | Choice::Take { near: false, .. } => Ok(()),
            Choice::OwnBusy(i) => Err(self.inner.busy_reason(i)),
            Choice::Take { near: true, .. } => {
                // The allocator's stall counter starts with the first cycle it waits.
                self.waiting_since.get_or_insert(now);
                if self.sthld_allows(now) {
                    Ok(())
                } else {
                    Err(RfStall::Design)
                }
            }
            Choice::None => match self.inner.can_accept(c, now) {
                Err(e) => Err(e),
                Ok(()) => Err(RfStall::NoFreeCollector),
            },
        }
    }

    fn accept(&mut self, i: IssuedInst<'_>, now: Cycle) {
        let warp = i.inst.warp;
        let idx = match self.choose(warp, i.inst.unit) {
            Choice::Own(idx) => idx,
            Choice::Take { idx, near } => {
                if near {
                    self.n.allocations_near += 1;
                }
                self.n.allocations += 1;
                self.end_wait(now);
                let old = self.owner_of[warp.index()];
                if old != NO_CCU {
                    self.flush(old as usize);
                }
                self.flush(idx);
                self.ccus[idx].owner = warp.0;
                self.owner_of[warp.index()] = idx as u16;
                idx
            }
            Choice::OwnBusy(_) | Choice::None => {
                debug_assert!(false, "accept without a CCU");
                return;
            }
        };
        self.interval_insts += 1;
        self.ccus[idx].last_issue = now;
        let exact = self.trace_entry(warp, i.step);
        let t = i.token.0 as usize;
        if self.dst_near.len() <= t {
            self.dst_near.resize(t + 1, 0);
        }
        self.dst_near[t] = exact.map_or(0, |e| DST_FROM_TRACE | e.dst_bits());
        let mut seen = [0u16; MAX_REGS];
        let mut n_seen = 0;
        let mut reads = [RegOperand {
            file: RegFileKind::General,
            reg: 0,
            width: 1,
            hint: OperandHint::default(),
        }; MAX_REGS];
        let mut n_reads = 0;
        for (k, op) in i.inst.srcs.iter().enumerate() {
            if op.file != RegFileKind::General {
                continue;
            }
            let near = self.operand_near(&op.hint, exact.and_then(|e| e.src_near(k)));
            for reg in op.regs() {
                if seen[..n_seen].contains(&reg) || n_seen == MAX_REGS {
                    continue;
                }
                seen[n_seen] = reg;
                n_seen += 1;
                self.n.operand_reads += 1;
                self.stamp += 1;
                let stamp = self.stamp;
                let class = self.class_slot(warp, reg).map_or(0, |c| {
                    let was = *c;
                    *c = if near { 1 } else { 2 };
                    was
                });
                let hit = if let Some(s) = self.find(idx, reg) {
                    let slot = &mut self.ccus[idx].slots[s];
                    slot.locked = true;
                    slot.near = near;
                    slot.last_use = stamp;
                    self.ccus[idx].sync(s);
                    true
                } else {
                    if let Some(s) = self.victim(idx) {
                        self.ccus[idx].slots[s] = Slot {
                            valid: true,
                            locked: true,
                            near,
                            reg,
                            last_use: stamp,
                        };
                        self.ccus[idx].sync(s);
                        self.n.fills += 1;
                    } else {
                        self.n.uncached_reads += 1;
                    }
                    reads[n_reads].reg = reg;
                    n_reads += 1;
                    false
                };
                if class == 1 {
                    self.n.reads_near += 1;
                    self.n.hits_near += u64::from(hit);
                } else {
                    self.n.reads_far += 1;
                    self.n.hits_far += u64::from(hit);
                }
                self.n.hits += u64::from(hit);
                if hit {
                    self.inner.ledger_mut().deliver(Source::OperandBuffer, 1);
                }
            }
        }
        self.ccus[idx].locked = true;
        self.inner
            .accept_into(idx, i.token, &i.inst, &reads[..n_reads], now);
    }

    fn request_write(&mut self, w: WriteRequest<'_>, now: Cycle) {
        self.inner.request_write(w, now);
        let own = self.owner_of[w.warp.index()];
        let mut port_free = own != NO_CCU && self.ccus[own as usize].write_port_at != Some(now);
        let bits = self.dst_near.get(w.token.0 as usize).copied().unwrap_or(0);
        for (k, op) in w.dsts.iter().enumerate() {
            if op.file != RegFileKind::General {
                continue;
            }
            let exact = (bits & DST_FROM_TRACE != 0 && k < trace::TRACE_DST_BITS)
                .then(|| bits & (1 << k) != 0);
            let near = self.operand_near(&op.hint, exact);
            for reg in op.regs() {
                self.n.operand_writes += 1;
                if let Some(c) = self.class_slot(w.warp, reg) {
                    *c = if near { 1 } else { 2 };
                }
            }
            if own == NO_CCU {
                continue;
            }
            let idx = own as usize;
            let keep = near && port_free;
            if keep {
                port_free = false;
                self.ccus[idx].write_port_at = Some(now);
            } else if near {
                self.n.dest_port_conflicts += 1;
            }
            for reg in op.regs() {
                let found = self.find(idx, reg);
                if keep {
                    self.stamp += 1;
                    let stamp = self.stamp;
                    let s = match found {
                        Some(s) => Some(s),
                        None => self.victim(idx),
                    };
                    if let Some(s) = s {
                        let locked = self.ccus[idx].slots[s].locked && found.is_some();
                        self.ccus[idx].slots[s] = Slot {
                            valid: true,
                            locked,
                            near: true,
                            reg,
                            last_use: stamp,
                        };
                        self.ccus[idx].sync(s);
                        self.n.dest_kept += 1;
                        self.inner.ledger_mut().write(Sink::OperandBuffer, 1);
                    }
                } else if let Some(s) = found {
                    // The CT must not keep the old value of a register written now.
                    self.ccus[idx].slots[s].valid = false;
                    self.ccus[idx].slots[s].locked = false;
                    self.ccus[idx].sync(s);
                    self.n.invalidations += 1;
                }
            }
        }
    }

    fn skip_to(&mut self, now: Cycle) {
        self.inner.skip_to(now);
    }

    fn cycle(&mut self, c: &mut RfCycle<'_>) {
        self.sm = Some(c.sm.0);
        self.roll_intervals(c.now);
        self.inner.cycle(c);
        for idx in 0..self.ccus.len() {
            if self.ccus[idx].locked && !self.inner.collector_busy(idx) {
                let ccu = &mut self.ccus[idx];
                ccu.locked = false;
                for s in ccu.slots.iter_mut() {
                    s.locked = false;
                }
            }
        }
    }

    fn next_event(&self, now: Cycle) -> Option<Cycle> {
        let inner = self.inner.next_event(now);
        // A warp refused by STHLD at `now` is allowed once the counter reaches it.
        let wake = self
            .waiting_since
            .map(|s| s + Cycles::new(u64::from(self.sthld) + 1))
            .filter(|&t| t > now);
        match (inner, wake) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn is_idle(&self) -> bool {
        self.inner.is_idle()
    }

    /// The baseline's counters (bank accesses, conflicts, collector occupancy) and, in
    /// `extra`: `malekeh_operand_reads`/`_writes` (32-bit registers the instructions
    /// asked for), `malekeh_hits` (source reads served by the CT, = the bank reads
    /// avoided, `malekeh_bank_reads_avoided`), `malekeh_reads_near`/`_hits_near` and
    /// `_far` (reads classified by the class the register's previous access gave it),
    /// `malekeh_fills`, `malekeh_uncached_reads`, `malekeh_dest_kept`,
    /// `malekeh_dest_port_conflicts` (near destinations dropped for the write port),
    /// `malekeh_invalidations`, `malekeh_evictions_far`/`_lru`, `malekeh_allocations`
    /// (`_near`: of a CCU holding near values), `malekeh_flushes`,
    /// `malekeh_sthld_stall_cycles`, `malekeh_sthld_waits`, `malekeh_intervals`,
    /// with trace-exact distances `malekeh_trace_insts` (instructions whose bits came
    /// from the trace), `_trace_mismatches` (warps that departed from their recorded
    /// stream), `_trace_missing` (warps without one), `_trace_hint_agree`/`_disagree`
    /// (operands whose static bit equals/differs from the exact one),
    /// `malekeh_ccu_reads`/`_writes`, `malekeh_crossbar_transfers`,
    /// `malekeh_arbiter_requests`; in `series`, the STHLD trajectory.
    fn stats(&self, now: Cycle) -> RfStats {
        let mut s = self.inner.stats(now);
        s.design = "malekeh".into();
        let n = &self.n;
        let l = self.inner.ledger();
        let ongoing = self
            .waiting_since
            .map_or(0, |t| now.saturating_since(t).get());
        let e = |k: &str| format!("malekeh_{k}");
        for (k, v) in [
            ("operand_reads", n.operand_reads),
            ("operand_writes", n.operand_writes),
            ("hits", n.hits),
            ("bank_reads_avoided", n.hits),
            ("reads_near", n.reads_near),
            ("hits_near", n.hits_near),
            ("reads_far", n.reads_far),
            ("hits_far", n.hits_far),
            ("fills", n.fills),
            ("uncached_reads", n.uncached_reads),
            ("dest_kept", n.dest_kept),
            ("dest_port_conflicts", n.dest_port_conflicts),
            ("invalidations", n.invalidations),
            ("evictions_far", n.evictions_far),
            ("evictions_lru", n.evictions_lru),
            ("allocations", n.allocations),
            ("allocations_near", n.allocations_near),
            ("flushes", n.flushes),
            ("sthld_stall_cycles", n.sthld_stall_cycles + ongoing),
            ("sthld_waits", n.sthld_waits),
            ("intervals", n.intervals),
            ("trace_insts", n.trace_insts),
            ("trace_mismatches", n.trace_mismatches),
            ("trace_missing", n.trace_missing),
            ("trace_hint_agree", n.hint_agree),
            ("trace_hint_disagree", n.hint_disagree),
            ("ccu_reads", l.count(Charge::CcuRead)),
            ("ccu_writes", l.count(Charge::CcuWrite)),
            ("crossbar_transfers", l.count(Charge::CrossbarTransfer)),
            ("arbiter_requests", l.count(Charge::ArbiterRequest)),
        ] {
            s.extra.insert(e(k), v);
        }
        if let Some(sm) = self.sm {
            s.series
                .insert(format!("malekeh_sthld_sm{sm}"), self.trajectory.clone());
        }
        s
    }

    fn ledger(&self) -> Ledger {
        self.inner.ledger()
    }
}

#[cfg(test)]
mod tests;

//! WIR: warp instruction reuse with warp register renaming (Kim and Ro, "WIR: Warp
//! Instruction Reuse to Minimize Repeated Computations in GPUs", HPCA'18, §IV–§VI).
//!
//! The model, per SM, on top of the baseline's banks, collectors and arbiter
//! ([`Baseline`], which here is addressed with *physical* register numbers):
//! - **Rename** (§V-B): each warp has a rename table from its logical registers to
//!   physical warp registers of a shared pool (`sm.registers / 32` of them; §V-E's
//!   max-register policy, or capped at the resident warps' logical registers for the
//!   `RLPVc` variant). A physical register returns to the pool when no rename table, VSB
//!   entry, reuse-buffer entry or instruction in flight refers to it.
//! - **Reuse** (§V-C, Figure 9): the tag of a convergent instruction is its operation
//!   ([`ReuseKey`]: opcode, modifiers, immediates) and its physical source registers;
//!   a hit bypasses operand read, execution and the register write
//!   ([`Dispatch::bypass_execution`]) and the destination is renamed to the recorded
//!   result register. Divergent instructions neither look up nor record (§V-D).
//! - **Register allocation at retire** (§V-A): a convergent result's value signature is
//!   looked up in the VSB; a match is confirmed by a *verify read* of the matched register
//!   (a bank read, or a verify-cache hit in the V variants) and the destination is mapped
//!   onto it instead of written; otherwise a new register is allocated and written. A
//!   divergent result goes to a register dedicated to its logical register (pin bit),
//!   whose inactive lanes a dummy MOV copies from the old register (a bank read and an
//!   extra write).
//! - **Loads** (§VI-A, variants with L): loads of read-only spaces reuse like arithmetic;
//!   `.global` and `.shared` loads reuse only entries recorded at the warp's current
//!   barrier count and only while the warp has not stored to that space since its last
//!   barrier; `.shared` loads only within their thread block.
//! - **Pending-retry** (§VI-B, P): a miss reserves its entry at once; later instructions
//!   with the same tag wait in a queue for the result instead of executing.
//! - **Extra stages**: rename and reuse add `front_stages` cycles before operand read,
//!   register allocation `allocation_stages` cycles to every write (2 + 2: the 4 cycles
//!   of §VII-E).
//! - **VSB organisation**: the paper's direct-mapped VSB with 32-bit H3 signatures by
//!   default, our fully associative one as `vsb = "fully-associative"`
//!   ([`VsbOrganisation`]). Device addresses are the same in every run
//!   (`emu::memory::address_space`), so values that hold pointers, and with them which
//!   entries signatures conflict in, are too.
//! - **PTX prologue**: `ld.param` of kernel parameters and `cvta` are not reused unless
//!   `reuse_prologue` is set: the paper simulates PTXplus, where they do not exist
//!   (parameters are constant-bank operands), so reusing them would count work the
//!   paper's machine never does.
//!
//! regsim executes instructions when they issue, so the design knows every result value;
//! it keeps the value of every physical register and accepts a reuse hit only when the
//! recorded result equals the emulator's (a mismatch of an arithmetic instruction would
//! be a modelling error, counted as `wir_value_mismatches`; a global or shared load whose
//! memory changed in a way §VI-A's rules did not foresee is counted as `wir_stale_loads`
//! and executed). Choices of ours where the paper is silent: calls and returns drop the
//! warp's rename mappings (each function's registers are numbered from R0, so a name
//! stands for another value across them); results wider than 64 bits
//! per operand are renamed without value tracking; a pinned register is overwritten in
//! place only while its rename mapping is its only reference (otherwise a reuse-buffer tag
//! naming it would go stale); the reuse buffer and VSB are flushed when the SM has no
//! resident warp left (kernel parameters and memory change between kernels).

mod config;
mod tables;

use std::collections::VecDeque;

pub use config::{VsbOrganisation, WirConfig, WirVariant};

use crate::config::{GpuConfig, UnitKind};
use crate::kernel_info::{RegFileKind, RegOperand, ReuseClass, ReuseKey};
use crate::rf::baseline::Baseline;
use crate::rf::ledger::{Charge, Ledger, Sink, Source, Transfer};
use crate::rf::{
    Candidate, Dispatch, InstToken, IssuedInst, RegisterFile, RfCycle, RfStall, RfStats,
    WarpLaunch, WarpSlot, WriteRequest,
};
use crate::time::{Cycle, Cycles};
use emu::{AccessKind, MemSpace, StepEvent, WarpStep};
use tables::{
    Mapping, PhysRegs, ReuseBuffer, ReuseTag, ValueSignatureBuffer, VerifyCache, WarpValue,
    MAX_RESULTS, MAX_TAG_SRCS, NO_REG,
};

/// Logical registers per warp the rename tables cover (register numbers are `u16`, the
/// allocator never exceeds 255).
const LOGICAL_REGS: usize = 256;

/// Per-warp state besides the rename table.
#[derive(Clone, Copy, Debug, Default)]
struct WarpState {
    live: bool,
    scheduler: u16,
    registers: u32,
    /// Thread block: SM slot in the low 16 bits, generation above.
    block: u32,
    /// Barriers this warp has passed.
    barriers: u32,
    /// §VI-A store flags, cleared at a barrier.
    stored_shared: bool,
    stored_global: bool,
    /// Calls and returns this warp has made: results of instructions issued in another
    /// frame do not rename this frame's registers.
    frame: u32,
}

/// What happens to an accepted instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Route {
    /// Free token slot.
    Idle,
    /// Reused: dispatched past the backend, destinations renamed at retire.
    Reused,
    /// Waiting for a pending reuse-buffer entry (§VI-B).
    Queued,
    /// Needs a collector that was not free when it was accepted.
    WaitingCollector,
    /// Executed through the collectors and units.
    Executed,
}

/// An instruction between acceptance and the end of its write.
#[derive(Clone, Copy, Debug)]
struct Flight {
    route: Route,
    warp: WarpSlot,
    /// The warp's frame count when it issued ([`WarpState::frame`]).
    frame: u32,
    unit: UnitKind,
    convergent: bool,
    /// The reuse tag, when the instruction may reuse or record.
    tag: Option<ReuseTag>,
    /// The reuse-buffer index this instruction fills at retire (reserved when pending).
    fill: Option<usize>,
    /// Physical sources (bank addresses of the reads), `NO_REG` where unmapped.
    srcs: [u32; 20],
    num_srcs: u8,
    /// Logical destination registers (32-bit) and their values after the instruction.
    dst_regs: [u16; MAX_RESULTS],
    num_dsts: u8,
    values_known: bool,
    values: [WarpValue; MAX_RESULTS],
    /// Reused: the result registers (held by this flight until retire).
    results: [u32; MAX_RESULTS],
    /// Write completion.
    waiting_bank_write: bool,
    side_reads: u8,
    done_at: Cycle,
}

impl Flight {
    const IDLE: Flight = Flight {
        route: Route::Idle,
        warp: WarpSlot(0),
        frame: 0,
        unit: UnitKind::Sp,
        convergent: false,
        tag: None,
        fill: None,
        srcs: [NO_REG; 20],
        num_srcs: 0,
        dst_regs: [0; MAX_RESULTS],
        num_dsts: 0,
        values_known: false,
        values: [[0; 32]; MAX_RESULTS],
        results: [NO_REG; MAX_RESULTS],
        waiting_bank_write: false,
        side_reads: 0,
        done_at: Cycle::ZERO,
    };
}

/// Counters reported in `RfStats::extra`.
#[derive(Clone, Debug, Default)]
struct WirStats {
    reused_alu: u64,
    reused_sfu: u64,
    reused_load: u64,
    reuse_lookups: u64,
    reuse_hits: u64,
    pending_hits: u64,
    retry_queue_full: u64,
    reuse_buffer_writes: u64,
    vsb_lookups: u64,
    vsb_hits: u64,
    vsb_false_positives: u64,
    vsb_writes: u64,
    verify_reads: u64,
    verify_cache_lookups: u64,
    verify_cache_hits: u64,
    dummy_movs: u64,
    allocations: u64,
    low_register_evictions: u64,
    rename_reads: u64,
    rename_writes: u64,
    reads_avoided: u64,
    writes_avoided: u64,
    value_mismatches: u64,
    stale_loads: u64,
    operand_reads: u64,
    operand_writes: u64,
    sharing_samples: u64,
    sharing_logical_sum: u64,
    sharing_physical_sum: u64,
    /// Prologue instructions (`ld.param`, `cvta`) executed without reuse because
    /// `reuse_prologue` is off.
    prologue_not_reused: u64,
}

/// The WIR design. See the module docs.
pub struct Wir {
    cfg: WirConfig,
    base: Baseline,
    regs: PhysRegs,
    rename: Vec<Mapping>,
    warps: Vec<WarpState>,
    /// Per CTA slot: live warps and generation.
    blocks: Vec<(u32, u32)>,
    logical_in_use: u32,
    /// Logical registers with a mapping, over all warps.
    mapped_logical: u64,
    vsb: ValueSignatureBuffer,
    reuse: ReuseBuffer,
    verify: VerifyCache,
    flights: Vec<Flight>,
    bypass: VecDeque<(InstToken, Cycle)>,
    queued: Vec<InstToken>,
    waiting_collector: VecDeque<InstToken>,
    completing: Vec<InstToken>,
    evict_cursor: usize,
    stats: WirStats,
}

impl Wir {
    /// The design for a validated config.
    pub fn new(cfg: &GpuConfig) -> Self {
        let wir = cfg.register_file.wir.clone();
        let mut base = Baseline::new(cfg);
        base.rename_design("wir");
        let warps = cfg.sm.max_warps as usize;
        Wir {
            base,
            regs: PhysRegs::new(cfg.sm.registers / crate::config::WARP_SIZE),
            rename: vec![Mapping::INVALID; warps * LOGICAL_REGS],
            warps: vec![WarpState::default(); warps],
            blocks: vec![(0, 0); cfg.sm.max_ctas as usize],
            logical_in_use: 0,
            mapped_logical: 0,
            vsb: ValueSignatureBuffer::new(wir.vsb_entries, wir.vsb),
            reuse: ReuseBuffer::new(wir.reuse_buffer_entries),
            verify: VerifyCache::new(wir.verify_cache_entries),
            flights: Vec::new(),
            bypass: VecDeque::new(),
            queued: Vec::new(),
            waiting_collector: VecDeque::new(),
            completing: Vec::new(),
            evict_cursor: 0,
            stats: WirStats::default(),
            cfg: wir,
        }
    }

    fn mapping(&self, w: WarpSlot, r: u16) -> Mapping {
        self.rename[w.index() * LOGICAL_REGS + r as usize]
    }

    fn flight(&mut self, t: InstToken) -> &mut Flight {
        let i = t.0 as usize;
        if i >= self.flights.len() {
            self.flights.resize(i + 1, Flight::IDLE);
        }
        &mut self.flights[i]
    }

    /// The reuse tag of `c` for warp state `ws`, if the instruction may reuse now:
    /// convergent, all sources mapped, and (for loads) allowed by §VI-A.
    fn tag_of(&self, c: &Candidate<'_>, key: ReuseKey) -> Option<ReuseTag> {
        if key.prologue && !self.cfg.reuse_prologue {
            return None;
        }
        let ws = &self.warps[c.warp.index()];
        let load_ok = match key.class {
            ReuseClass::Alu | ReuseClass::Sfu => true,
            ReuseClass::ReadOnlyLoad => self.cfg.variant.load_reuse(),
            ReuseClass::GlobalLoad => self.cfg.variant.load_reuse() && !ws.stored_global,
            ReuseClass::SharedLoad => self.cfg.variant.load_reuse() && !ws.stored_shared,
        };
        if !load_ok {
            return None;
        }
        let mut tag = ReuseTag {
            key: key.key,
            class: key.class,
            srcs: [NO_REG; MAX_TAG_SRCS],
            num_srcs: 0,
            num_results: 0,
            block: if key.class == ReuseClass::SharedLoad {
                ws.block
            } else {
                0
            },
            barrier: if matches!(key.class, ReuseClass::GlobalLoad | ReuseClass::SharedLoad) {
                ws.barriers
            } else {
                0
            },
        };
        for op in c.srcs.iter().filter(|o| o.file == RegFileKind::General) {
            for r in op.regs() {
                let m = self.mapping(c.warp, r);
                if m.phys == NO_REG || tag.num_srcs as usize == MAX_TAG_SRCS {
                    return None;
                }
                tag.srcs[tag.num_srcs as usize] = m.phys;
                tag.num_srcs += 1;
            }
        }
        for op in c.dsts {
            if op.file == RegFileKind::General {
                tag.num_results += op.width;
            }
        }
        (tag.num_results as usize <= MAX_RESULTS && tag.num_results > 0).then_some(tag)
    }

    /// Allocates a physical register, evicting buffer entries in low-register mode.
    fn alloc(&mut self) -> u32 {
        self.stats.allocations += 1;
        let capped = self.cfg.variant.capped_registers();
        loop {
            let over_cap = capped && self.regs.in_use() >= self.logical_in_use.max(1);
            if !over_cap {
                if let Some(p) = self.regs.alloc() {
                    return p;
                }
            }
            if !self.evict_one() {
                if let Some(p) = self.regs.alloc() {
                    return p;
                }
                return self.regs.grow();
            }
        }
    }

    /// Low-register mode (§V-E): drops one buffer entry, reuse buffer first, round robin.
    fn evict_one(&mut self) -> bool {
        let (nr, nv) = (self.reuse.entries.len(), self.vsb.len());
        for _ in 0..nr + nv {
            let i = self.evict_cursor % (nr + nv);
            self.evict_cursor = (self.evict_cursor + 1) % (nr + nv);
            let freed = if i < nr {
                self.reuse.evict(i, &mut self.regs)
            } else if let Some(p) = self.vsb.evict(i - nr) {
                self.regs.release(p);
                true
            } else {
                false
            };
            if freed {
                self.stats.low_register_evictions += 1;
                return true;
            }
        }
        false
    }

    fn remap(&mut self, w: WarpSlot, r: u16, m: Mapping) {
        let i = w.index() * LOGICAL_REGS + r as usize;
        let old = self.rename[i];
        if m.phys != NO_REG {
            self.regs.map(m.phys);
            self.mapped_logical += 1;
        }
        if old.phys != NO_REG {
            self.regs.unmap(old.phys);
            self.mapped_logical -= 1;
        }
        self.rename[i] = m;
        self.stats.rename_writes += 1;
    }

    /// Whether reusing `entry`'s results gives exactly `f`'s values.
    fn results_match(&self, results: &[u32], f: &Flight) -> bool {
        f.values_known
            && results
                .iter()
                .zip(&f.values[..f.num_dsts as usize])
                .all(|(&p, v)| self.regs.value(p) == Some(v))
    }

    /// A hit on `results`: the instruction takes them (held until retire).
    fn take_results(&mut self, t: InstToken, results: [u32; MAX_RESULTS], class: ReuseClass) {
        let n = self.flights[t.0 as usize].num_dsts as usize;
        for &p in &results[..n] {
            self.regs.retain(p);
        }
        let f = &mut self.flights[t.0 as usize];
        f.results = results;
        f.route = Route::Reused;
        let reads = u64::from(f.num_srcs);
        self.base.ledger_mut().deliver(Source::ReuseBuffer, reads);
        self.stats.reuse_hits += 1;
        self.stats.reads_avoided += reads;
        self.stats.writes_avoided += n as u64;
        match class {
            ReuseClass::Alu => self.stats.reused_alu += 1,
            ReuseClass::Sfu => self.stats.reused_sfu += 1,
            _ => self.stats.reused_load += 1,
        }
    }

    /// Counts a recorded result that differs from the emulator's and forgets the entry.
    fn mismatch(&mut self, i: usize, class: ReuseClass) {
        if matches!(class, ReuseClass::GlobalLoad | ReuseClass::SharedLoad) {
            self.stats.stale_loads += 1;
        } else {
            debug_assert!(
                false,
                "WIR: a reuse hit of class {class:?} has another value"
            );
            self.stats.value_mismatches += 1;
        }
        self.reuse.evict(i, &mut self.regs);
    }

    /// Hands an instruction to the collectors with its sources at their physical
    /// registers; false if no collector of its kind is free.
    fn execute(&mut self, t: InstToken, now: Cycle, extra: Cycles) -> bool {
        let f = self.flights[t.0 as usize];
        let probe = Candidate {
            warp: WarpSlot(0),
            scheduler: self.warps[f.warp.index()].scheduler,
            unit: f.unit,
            class: crate::config::OpClass::Int,
            srcs: &[],
            dsts: &[],
            hint: Default::default(),
        };
        if self.base.can_accept(&probe, now).is_err() {
            return false;
        }
        let mut ops = [PHYS_OPERAND; 20];
        for (o, &p) in ops.iter_mut().zip(&f.srcs[..f.num_srcs as usize]) {
            o.reg = p as u16;
        }
        let step = WarpStep::default();
        self.base.accept_after(
            IssuedInst {
                token: t,
                inst: Candidate {
                    srcs: &ops[..f.num_srcs as usize],
                    ..probe
                },
                step: &step,
            },
            now,
            extra,
        );
        self.flights[t.0 as usize].route = Route::Executed;
        true
    }

    /// Effects of the executed step on the warp's §VI-A state.
    fn observe(&mut self, w: WarpSlot, step: &WarpStep) {
        let ws = &mut self.warps[w.index()];
        if let Some(m) = step.mem {
            if matches!(m.kind, AccessKind::Store | AccessKind::Atomic) {
                match m.space {
                    MemSpace::Shared => ws.stored_shared = true,
                    MemSpace::Global => ws.stored_global = true,
                    _ => {}
                }
            }
        }
        match step.event {
            StepEvent::BarrierWait { .. } | StepEvent::BarrierRelease { .. } => {
                ws.barriers += 1;
                ws.stored_shared = false;
                ws.stored_global = false;
            }
            // Each function's registers are numbered from R0 (the allocator's calling
            // convention), while the emulator keeps a frame per call: across a call or
            // a return the logical names no longer stand for the same values, so the
            // warp's mappings are dropped (reads of unmapped registers never reuse).
            StepEvent::Call { .. } | StepEvent::Return => {
                ws.frame = ws.frame.wrapping_add(1);
                self.unmap_warp(w);
            }
            _ => {}
        }
    }

    /// Drops every rename mapping of warp `w`.
    fn unmap_warp(&mut self, w: WarpSlot) {
        for r in 0..LOGICAL_REGS as u16 {
            if self.mapping(w, r).phys != NO_REG {
                self.remap(w, r, Mapping::INVALID);
            }
        }
    }

    /// The destination registers and their values after the step, into `f`.
    fn record_values(f: &mut Flight, dsts: &[RegOperand], step: &WarpStep) {
        f.num_dsts = 0;
        f.values_known = step.num_dsts as usize == dsts.len();
        for (k, op) in dsts.iter().enumerate() {
            if op.file != RegFileKind::General {
                continue;
            }
            for (j, r) in op.regs().enumerate() {
                let n = f.num_dsts as usize;
                if n == MAX_RESULTS {
                    f.values_known = false;
                    break;
                }
                f.dst_regs[n] = r;
                if j < 2 && k < step.num_dsts as usize {
                    let lanes = &step.dst_values[k];
                    for (lane, v) in f.values[n].iter_mut().enumerate() {
                        *v = (lanes[lane] >> (32 * j)) as u32;
                    }
                } else {
                    f.values_known = false;
                }
                f.num_dsts += 1;
            }
        }
    }

    /// Drops the references a flight without pending-retry held on its tag's sources
    /// from acceptance to retire.
    fn release_held_sources(&mut self, f: &Flight) {
        if let (Some(tag), Some(_), false) = (f.tag, f.fill, self.cfg.variant.pending_retry()) {
            for &p in &tag.srcs[..tag.num_srcs as usize] {
                self.regs.release(p);
            }
        }
    }

    fn flush_buffers(&mut self) {
        for i in 0..self.reuse.entries.len() {
            self.reuse.evict(i, &mut self.regs);
        }
        for i in 0..self.vsb.len() {
            if let Some(p) = self.vsb.evict(i) {
                self.regs.release(p);
            }
        }
        self.verify.clear();
    }
}

/// A physical register as a baseline operand (bank address only).
const PHYS_OPERAND: RegOperand = RegOperand {
    file: RegFileKind::General,
    reg: 0,
    width: 1,
    hint: crate::kernel_info::OperandHint {
        level: crate::kernel_info::HierarchyLevel::Main,
        also_main: false,
        fills_orf: false,
        dead_after: false,
        reuse_distance: None,
        reuse: false,
    },
};

impl RegisterFile for Wir {
    fn name(&self) -> &'static str {
        "wir"
    }

    fn warp_launched(&mut self, w: WarpLaunch) {
        let b = &mut self.blocks[w.cta as usize];
        if b.0 == 0 {
            b.1 += 1;
        }
        b.0 += 1;
        let block = u32::from(w.cta) | (b.1 << 16);
        self.warps[w.warp.index()] = WarpState {
            live: true,
            scheduler: w.scheduler,
            registers: w.registers_per_thread,
            block,
            ..WarpState::default()
        };
        self.logical_in_use += w.registers_per_thread;
    }

    fn warp_exited(&mut self, warp: WarpSlot) {
        let ws = self.warps[warp.index()];
        self.unmap_warp(warp);
        self.logical_in_use -= ws.registers;
        let b = &mut self.blocks[(ws.block & 0xffff) as usize];
        b.0 = b.0.saturating_sub(1);
        self.warps[warp.index()].live = false;
        if !self.warps.iter().any(|w| w.live) {
            self.flush_buffers();
        }
    }

    fn can_accept(&mut self, c: &Candidate<'_>, now: Cycle) -> Result<(), RfStall> {
        if let Some(tag) = c.hint.reuse.and_then(|k| self.tag_of(c, k)) {
            if let Some((_, e)) = self.reuse.find(&tag) {
                if !e.pending {
                    return Ok(());
                }
                if self.cfg.variant.pending_retry()
                    && self.queued.len() < self.cfg.retry_queue_entries as usize
                {
                    return Ok(());
                }
            }
        }
        if !self.waiting_collector.is_empty() {
            return Err(RfStall::NoFreeCollector);
        }
        self.base.can_accept(c, now)
    }

    fn accept(&mut self, i: IssuedInst<'_>, now: Cycle) {
        let c = &i.inst;
        let step = i.step;
        let convergent = step.exec_mask == u32::MAX && step.active_mask == u32::MAX;
        if !self.cfg.reuse_prologue && c.hint.reuse.is_some_and(|k| k.prologue) {
            self.stats.prologue_not_reused += 1;
        }
        let tag = if convergent {
            c.hint.reuse.and_then(|k| self.tag_of(c, k))
        } else {
            None
        };
        // Rename: the physical sources.
        let mut srcs = [NO_REG; 20];
        let mut n = 0usize;
        for op in c.srcs.iter().filter(|o| o.file == RegFileKind::General) {
            for r in op.regs() {
                if n < srcs.len() {
                    let p = self.mapping(c.warp, r).phys;
                    // An unmapped register (never written) is read at its logical number.
                    srcs[n] = if p == NO_REG { u32::from(r) } else { p };
                    n += 1;
                }
            }
        }
        self.stats.rename_reads += n as u64;
        self.stats.operand_reads += n as u64;
        {
            let frame = self.warps[c.warp.index()].frame;
            let f = self.flight(i.token);
            *f = Flight {
                route: Route::Executed,
                warp: c.warp,
                frame,
                unit: c.unit,
                convergent,
                tag,
                srcs,
                num_srcs: n as u8,
                ..Flight::IDLE
            };
            Wir::record_values(f, c.dsts, step);
        }
        self.observe(c.warp, step);

        let Some(tag) = tag else {
            if !self.execute(i.token, now, Cycles::new(u64::from(self.cfg.front_stages))) {
                self.flights[i.token.0 as usize].route = Route::WaitingCollector;
                self.waiting_collector.push_back(i.token);
            }
            return;
        };
        self.stats.reuse_lookups += 1;
        let found = self.reuse.find(&tag).map(|(idx, e)| (idx, *e));
        let f = self.flights[i.token.0 as usize];
        match found {
            Some((idx, e)) if !e.pending => {
                if self.results_match(&e.results[..f.num_dsts as usize], &f) {
                    self.take_results(i.token, e.results, tag.class);
                    let at = now + Cycles::new(u64::from(self.cfg.front_stages));
                    self.bypass.push_back((i.token, at));
                    return;
                }
                self.mismatch(idx, tag.class);
            }
            Some(_)
                if self.cfg.variant.pending_retry()
                    && self.queued.len() < self.cfg.retry_queue_entries as usize =>
            {
                self.stats.pending_hits += 1;
                self.flights[i.token.0 as usize].route = Route::Queued;
                self.queued.push(i.token);
                return;
            }
            Some(_) => {
                self.stats.retry_queue_full += 1;
            }
            None => {}
        }
        // A miss: reserve the entry (§VI-B) or remember where to record at retire.
        let fill = if self.cfg.variant.pending_retry() {
            if found.is_some_and(|(_, e)| e.pending) {
                None
            } else {
                self.stats.reuse_buffer_writes += 1;
                Some(self.reuse.reserve(tag, i.token, &mut self.regs))
            }
        } else {
            // Recorded at retire with these sources: hold them until then, so that no
            // in-place write of a pinned register changes what the tag stands for.
            for &p in &tag.srcs[..tag.num_srcs as usize] {
                self.regs.retain(p);
            }
            Some(self.reuse.index_of(&tag))
        };
        self.flights[i.token.0 as usize].fill = fill;
        if !self.execute(i.token, now, Cycles::new(u64::from(self.cfg.front_stages))) {
            self.flights[i.token.0 as usize].route = Route::WaitingCollector;
            self.waiting_collector.push_back(i.token);
        }
    }

    fn request_write(&mut self, w: WriteRequest<'_>, now: Cycle) {
        let t = w.token;
        let f = self.flights[t.0 as usize];
        let warp = f.warp;
        self.stats.operand_writes += u64::from(f.num_dsts);
        let mut bank_writes = [PHYS_OPERAND; 2 * MAX_RESULTS + 4];
        let mut nw = 0usize;
        let mut side_reads = 0u8;
        let mut results = [NO_REG; MAX_RESULTS];
        let stale = f.frame != self.warps[warp.index()].frame;
        if stale {
            // Issued in another frame (before a call or a return): its results are that
            // frame's registers. They are written where the names point, unrenamed.
            if f.route == Route::Reused {
                for &p in &f.results[..f.num_dsts as usize] {
                    self.regs.release(p);
                }
            }
            for k in 0..f.num_dsts as usize {
                if nw < bank_writes.len() {
                    bank_writes[nw].reg = f.dst_regs[k];
                    nw += 1;
                    self.base.ledger_mut().write(Sink::MrfBank, 1);
                }
            }
            if let Some(idx) = f.fill.filter(|_| self.cfg.variant.pending_retry()) {
                if self.reuse.entries[idx].is_some_and(|e| e.pending && e.owner == t) {
                    self.reuse.evict(idx, &mut self.regs);
                }
            }
        } else if f.route == Route::Reused {
            self.base
                .ledger_mut()
                .write(Sink::Renamed, u64::from(f.num_dsts));
            for k in 0..f.num_dsts as usize {
                let m = Mapping {
                    phys: f.results[k],
                    pinned: false,
                };
                self.remap(warp, f.dst_regs[k], m);
                self.regs.release(f.results[k]);
            }
        } else {
            let n = f.num_dsts as usize;
            for (k, result) in results.iter_mut().enumerate().take(n) {
                let r = f.dst_regs[k];
                let value = f.values_known.then_some(&f.values[k]);
                let old = self.mapping(warp, r);
                let phys = if !f.convergent {
                    // §V-D: a register dedicated to the logical register.
                    if old.pinned && self.regs.only_reference_is_one_mapping(old.phys) {
                        old.phys
                    } else {
                        let p = self.alloc();
                        if old.phys != NO_REG {
                            self.stats.dummy_movs += 1;
                            let bank = self.base.bank_of(old.phys as u16, WarpSlot(0), 0);
                            self.base
                                .request_side_read(t, bank, Transfer::MrfToDatapath);
                            self.base.ledger_mut().transfer(Transfer::DatapathToMrf, 1);
                            side_reads += 1;
                            bank_writes[nw].reg = p as u16;
                            nw += 1;
                        }
                        self.remap(
                            warp,
                            r,
                            Mapping {
                                phys: p,
                                pinned: true,
                            },
                        );
                        self.regs.release(p);
                        p
                    }
                } else {
                    let hash = value.map(|v| self.vsb.signature(v));
                    let matched = match (self.cfg.variant.value_signatures(), hash) {
                        (true, Some(h)) => {
                            self.stats.vsb_lookups += 1;
                            self.vsb.lookup(h)
                        }
                        _ => None,
                    };
                    let verified = matched.filter(|&p| {
                        self.stats.vsb_hits += 1;
                        // The verify read: the verify cache, else the register's bank.
                        let cached = self.cfg.variant.verify_cache() && {
                            self.stats.verify_cache_lookups += 1;
                            self.verify
                                .access(p, self.cfg.verify_cache_entries as usize)
                        };
                        if cached {
                            self.stats.verify_cache_hits += 1;
                        } else {
                            self.stats.verify_reads += 1;
                            let bank = self.base.bank_of(p as u16, WarpSlot(0), 0);
                            self.base
                                .request_side_read(t, bank, Transfer::MrfToDatapath);
                            side_reads += 1;
                        }
                        let same = self.regs.value(p) == value;
                        if !same {
                            self.stats.vsb_false_positives += 1;
                        }
                        same
                    });
                    match verified {
                        Some(p) => {
                            self.stats.writes_avoided += 1;
                            self.base.ledger_mut().write(Sink::Renamed, 1);
                            self.remap(
                                warp,
                                r,
                                Mapping {
                                    phys: p,
                                    pinned: false,
                                },
                            );
                            *result = p;
                            continue;
                        }
                        None => {
                            let p = self.alloc();
                            if let (Some(h), true, None) =
                                (hash, self.cfg.variant.value_signatures(), matched)
                            {
                                self.stats.vsb_writes += 1;
                                self.regs.retain(p);
                                if let Some(old) = self.vsb.insert(h, p) {
                                    self.regs.release(old);
                                }
                            }
                            self.remap(
                                warp,
                                r,
                                Mapping {
                                    phys: p,
                                    pinned: false,
                                },
                            );
                            self.regs.release(p);
                            p
                        }
                    }
                };
                self.regs.set_value(phys, value);
                self.verify.invalidate(phys);
                self.base.ledger_mut().write(Sink::MrfBank, 1);
                bank_writes[nw].reg = phys as u16;
                nw += 1;
                *result = phys;
            }
            // Record the result for reuse (§V-C), or complete the reservation (§VI-B).
            if let (Some(idx), Some(tag), true) = (f.fill, f.tag, f.values_known) {
                let res = &results[..f.num_dsts as usize];
                if self.cfg.variant.pending_retry() {
                    self.reuse.complete(idx, t, res, &mut self.regs);
                } else {
                    let i = self.reuse.reserve(tag, t, &mut self.regs);
                    self.reuse.complete(i, t, res, &mut self.regs);
                    self.stats.reuse_buffer_writes += 1;
                }
            } else if let Some(idx) = f.fill.filter(|_| self.cfg.variant.pending_retry()) {
                // Nothing to record: free the reservation for others.
                if self.reuse.entries[idx].is_some_and(|e| e.pending && e.owner == t) {
                    self.reuse.evict(idx, &mut self.regs);
                }
            }
        }
        self.release_held_sources(&f);
        // Predicate destinations go to the predicate file as in the baseline.
        for op in w.dsts.iter().filter(|o| o.file == RegFileKind::Predicate) {
            if nw < bank_writes.len() {
                bank_writes[nw] = *op;
                nw += 1;
            }
        }
        let sched = self.warps[warp.index()].scheduler;
        let fl = &mut self.flights[t.0 as usize];
        fl.side_reads = side_reads;
        fl.done_at = now + Cycles::new(u64::from(self.cfg.allocation_stages));
        fl.waiting_bank_write = nw > 0;
        if nw > 0 {
            // Each register's write is in the ledger already (results, dummy moves).
            self.base.push_write(
                WriteRequest {
                    token: t,
                    warp: WarpSlot(0),
                    scheduler: sched,
                    dsts: &bank_writes[..nw],
                },
                now,
                true,
            );
        }
        self.completing.push(t);
        self.stats.sharing_samples += 1;
        self.stats.sharing_logical_sum += self.mapped_logical;
        self.stats.sharing_physical_sum += self.regs.mapped();
    }

    fn skip_to(&mut self, now: Cycle) {
        self.base.skip_to(now);
    }

    fn cycle(&mut self, c: &mut RfCycle<'_>) {
        let now = c.now;
        // Queued instructions whose entry has its result (§VI-B), or lost it.
        let mut k = 0;
        while k < self.queued.len() {
            let t = self.queued[k];
            let f = self.flights[t.0 as usize];
            let Some(tag) = f.tag else {
                self.queued.swap_remove(k);
                continue;
            };
            match self.reuse.find(&tag).map(|(i, e)| (i, *e)) {
                Some((_, e)) if e.pending => k += 1,
                Some((idx, e)) => {
                    self.queued.remove(k);
                    if self.results_match(&e.results[..f.num_dsts as usize], &f) {
                        self.take_results(t, e.results, tag.class);
                        self.bypass.push_back((t, now));
                    } else {
                        self.mismatch(idx, tag.class);
                        self.flights[t.0 as usize].route = Route::WaitingCollector;
                        self.waiting_collector.push_back(t);
                    }
                }
                None => {
                    self.queued.remove(k);
                    self.flights[t.0 as usize].route = Route::WaitingCollector;
                    self.waiting_collector.push_back(t);
                }
            }
        }
        while let Some(&t) = self.waiting_collector.front() {
            if !self.execute(t, now, Cycles::ZERO) {
                break;
            }
            self.waiting_collector.pop_front();
        }
        while let Some(&(t, at)) = self.bypass.front() {
            if at > now {
                break;
            }
            let unit = self.flights[t.0 as usize].unit;
            let d = Dispatch {
                token: t,
                unit,
                bypass_execution: true,
            };
            if !c.dispatch.try_dispatch(d) {
                break;
            }
            self.bypass.pop_front();
        }

        // The baseline reports bank writes done; an instruction's write is done when its
        // verify reads and the allocation stage are too.
        let before = c.writes_done.len();
        self.base.cycle(c);
        for &t in &c.writes_done[before..] {
            self.flights[t.0 as usize].waiting_bank_write = false;
        }
        c.writes_done.truncate(before);
        let flights = &mut self.flights;
        self.base.take_side_reads_done(now, |t| {
            let f = &mut flights[t.0 as usize];
            f.side_reads = f.side_reads.saturating_sub(1);
        });
        let mut k = 0;
        while k < self.completing.len() {
            let t = self.completing[k];
            let f = &mut self.flights[t.0 as usize];
            if !f.waiting_bank_write && f.side_reads == 0 && f.done_at <= now {
                f.route = Route::Idle;
                c.writes_done.push(t);
                self.completing.swap_remove(k);
            } else {
                k += 1;
            }
        }
    }

    fn next_event(&self, now: Cycle) -> Option<Cycle> {
        let soon = now + Cycles::new(1);
        let mut next = self.base.next_event(now);
        let mut at = |t: Cycle| next = Some(next.map_or(t, |n: Cycle| n.min(t)));
        if let Some(&(_, t)) = self.bypass.front() {
            at(t.max(soon));
        }
        // A queued instruction waits for its entry's producer to retire or the entry to
        // go, and one waiting for a collector for a collector to dispatch: each happens in
        // a cycle with progress, after which the SM is evaluated anyway. Asking every
        // cycle would make a long initiation interval cost host time per cycle.
        if let Some(&t) = self.waiting_collector.front() {
            let f = &self.flights[t.0 as usize];
            let sched = self.warps[f.warp.index()].scheduler;
            if (0..self.base.collector_count())
                .any(|i| self.base.collector_free_for(i, f.unit, sched))
            {
                at(soon);
            }
        }
        // One still waiting for its bank write or verify reads completes in the cycle they
        // do (the baseline's events).
        for &t in &self.completing {
            let f = &self.flights[t.0 as usize];
            if !f.waiting_bank_write && f.side_reads == 0 {
                at(f.done_at.max(soon));
            }
        }
        next
    }

    fn is_idle(&self) -> bool {
        self.base.is_idle()
            && self.bypass.is_empty()
            && self.queued.is_empty()
            && self.waiting_collector.is_empty()
            && self.completing.is_empty()
    }

    fn stats(&self, now: Cycle) -> RfStats {
        let mut s = self.base.stats(now);
        let w = &self.stats;
        for (k, v) in [
            ("wir_reused_alu", w.reused_alu),
            ("wir_reused_sfu", w.reused_sfu),
            ("wir_reused_load", w.reused_load),
            ("wir_reuse_lookups", w.reuse_lookups),
            ("wir_reuse_hits", w.reuse_hits),
            ("wir_pending_hits", w.pending_hits),
            ("wir_retry_queue_full", w.retry_queue_full),
            ("wir_reuse_buffer_writes", w.reuse_buffer_writes),
            ("wir_vsb_lookups", w.vsb_lookups),
            ("wir_vsb_hits", w.vsb_hits),
            ("wir_vsb_false_positives", w.vsb_false_positives),
            ("wir_vsb_writes", w.vsb_writes),
            ("wir_verify_reads", w.verify_reads),
            ("wir_verify_cache_lookups", w.verify_cache_lookups),
            ("wir_verify_cache_hits", w.verify_cache_hits),
            ("wir_dummy_movs", w.dummy_movs),
            ("wir_register_allocations", w.allocations),
            ("wir_low_register_evictions", w.low_register_evictions),
            ("wir_register_reads_avoided", w.reads_avoided),
            ("wir_register_writes_avoided", w.writes_avoided),
            ("wir_value_mismatches", w.value_mismatches),
            ("wir_stale_loads", w.stale_loads),
            ("wir_operand_reads", w.operand_reads),
            ("wir_operand_writes", w.operand_writes),
            ("wir_sharing_samples", w.sharing_samples),
            ("wir_sharing_logical_sum", w.sharing_logical_sum),
            ("wir_sharing_physical_sum", w.sharing_physical_sum),
            ("wir_pool_overflow", self.regs.overflow),
            ("wir_prologue_not_reused", w.prologue_not_reused),
            (
                "wir_physical_registers_in_use",
                u64::from(self.regs.in_use()),
            ),
        ] {
            s.extra.insert(k.to_string(), v);
        }
        s
    }

    /// The baseline's ledger (operands, results, verify reads and dummy moves were
    /// recorded as they happened) and the accesses of WIR's tables (Table III).
    fn ledger(&self) -> Ledger {
        let w = &self.stats;
        let mut l = self.base.ledger();
        for (c, n) in [
            (Charge::WirReuseBufferLookup, w.reuse_lookups),
            (Charge::WirReuseBufferWrite, w.reuse_buffer_writes),
            (Charge::WirRenameTableRead, w.rename_reads),
            (Charge::WirRenameTableWrite, w.rename_writes),
            (Charge::WirVsbLookup, w.vsb_lookups),
            (Charge::WirVsbWrite, w.vsb_writes),
            (Charge::WirVerifyCacheLookup, w.verify_cache_lookups),
        ] {
            l.charge(c, n);
        }
        l
    }
}

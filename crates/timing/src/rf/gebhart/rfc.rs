//! `--rf rfc`: the hardware register-file cache (RFC) of Gebhart et al. ISCA'11, as
//! MICRO'11 §2.2 describes it and §6 evaluates it, with its two-level warp scheduler, and
//! the three-level hardware variant of MICRO'11 §6.3 ("HW LRF" in Figure 13).
//!
//! Model, per warp slot (an RFC bank is private to a SIMT lane and holds the same
//! registers for every thread of the warp, so one warp-wide state stands for its lanes):
//! - `register_file.rfc.entries_per_thread` entries, each one 32-bit register (a 64-bit
//!   result takes two). Only warps in the two-level scheduler's active set hold entries
//!   ("Only the active threads have RFC entries allocated"); with another scheduling
//!   policy every resident warp is active.
//! - Every result of an active warp is written into the RFC, except results of
//!   long-latency operations (global/local loads and atomics, the SM's definition), which
//!   go to the MRF (§6.1: "all instructions, except long latency instructions, write
//!   their results to the RFC"); a result that arrives after its warp left the active
//!   set goes to the MRF too. Writing a register drops any older copy of it in the RFC.
//! - Sources are looked up in the RFC first; misses are read from the MRF banks and are
//!   not allocated.
//! - Replacement is FIFO in allocation order. An evicted value is read out of the RFC and
//!   written back to the MRF through the bank arbiter (timed, taking write ports, so it
//!   can conflict) unless the compiler's liveness bit said it is dead (§6.2: "static
//!   liveness information to inhibit the writeback of dead values"): a source operand
//!   with [`crate::kernel_info::OperandHint::dead_after`] marks the cached value dead,
//!   and a result with the bit (no lane reads the value) is cached dead from the start.
//!   A dead result is still written into the RFC: the hardware writes every result
//!   there, and the bit only elides the writeback.
//! - Leaving the active set (a dependence on a long-latency result, a barrier, the exit)
//!   flushes the warp's live entries to the MRF the same way. A warp whose last lanes
//!   exited drops its entries: every value is dead. With
//!   `register_file.rfc.flush_at_backward_branches` a taken backward branch flushes the
//!   warp's entries the same way (MICRO'11 §7's variant).
//! - With `register_file.rfc.lrf = true`, a one-entry last result file per thread sits in
//!   front of the RFC: results of the private datapath (ALUs) that are one register wide
//!   are written there; the value it displaces moves into the RFC (an LRF read and an RFC
//!   write), which may evict to the MRF, unless it is dead: then it is dropped (the same
//!   liveness rule, §6.2: "When a value is evicted from the LRF, it is written back to the
//!   RFC"). Shared-datapath results (SFU, memory) and wide
//!   results go to the RFC directly. The shared units cannot reach the LRF; the paper's
//!   compiler makes such values "available in the RFC or MRF", which we model by moving an
//!   LRF value into the RFC when a shared-datapath instruction reads it (the same LRF read
//!   and RFC write), then reading it from the RFC. Deactivation writes back both levels.
//!
//! Tags (MICRO'11 §3.1: "the RFC must track the register names from the larger MRF
//! namespace with tags and lookups"): every register an instruction reads or writes is
//! looked up in the tags (a read to find it, a write to drop the older copy and tag the
//! new one; the HW LRF's one tag is compared in the same lookup). With
//! `register_file.rfc.charge_tag_lookups` (the default) each is a `rfc_tag` lookup in
//! the ledger, priced by `energy.rfc_tag_lookup_pj`.
//!
//! Timing: RFC and LRF accesses have no conflicts and take the MRF's one cycle; only MRF
//! traffic (misses, long-latency results, writebacks) meets the bank arbiter. Writebacks
//! are queued with the baseline's writes (which the arbiter serves first), so a later miss
//! of the same register reads its bank after the writeback was granted.
//!
//! Statistics in `RfStats::extra` (32-bit warp-wide register accesses): `rfc_operand_reads`
//! / `rfc_operand_writes` (what the instructions asked for), `rfc_reads` / `rfc_writes`
//! (RFC bank accesses: hits, writeback reads, allocations), `rfc_read_hits` /
//! `rfc_read_misses` and per source slot `rfc_hits_src{0,1,2}` / `rfc_misses_src{0,1,2}`
//! (slot 2 counts the third and later operands), `rfc_evictions`,
//! `rfc_writebacks_eviction`, `rfc_writebacks_deactivation`, `rfc_dead_not_written_back`,
//! (with the backward-branch flush, `rfc_backward_flushes` and
//! `rfc_writebacks_backward_branch`),
//! `rfc_results_to_mrf`, `rfc_results_dead` (results written with the dead bit),
//! `rfc_tag_lookups`, `rfc_activations`, `rfc_deactivations`, and with the LRF
//! `rfc_lrf_reads`, `rfc_lrf_writes`, `rfc_lrf_hits`, `rfc_lrf_demotions` (LRF values
//! moved into the RFC) and `rfc_lrf_dead_dropped` (displaced dead LRF values, not moved;
//! also in `rfc_dead_not_written_back`). Energy events: `mrf`, `collector`, `rfc` and
//! `lrf` reads and writes, `rfc_tag` lookups.

use crate::config::{GpuConfig, OpClass, SchedulerPolicy};
use emu::StepEvent;

use crate::kernel_info::{RegFileKind, RegOperand};
use crate::rf::baseline::Baseline;
use crate::rf::gebhart::{private_datapath, slot, OperandList, UpperWrites};
use crate::rf::ledger::{Charge, Ledger, Sink, Source, Transfer};
use crate::rf::{
    Candidate, IssuedInst, RegisterFile, RfCycle, RfStall, RfStats, WarpLaunch, WarpSlot,
    WriteRequest,
};
use crate::time::Cycle;

/// Entries per thread the model supports (Table 3's largest ORF/RFC).
const MAX_ENTRIES: usize = 8;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Entry {
    reg: u16,
    /// The liveness bit said no later instruction reads the value.
    dead: bool,
}

#[derive(Clone, Copy, Debug, Default)]
struct WarpCache {
    active: bool,
    /// The whole warp has exited: its values are dead.
    exited: bool,
    scheduler: u16,
    /// Oldest first.
    fifo: [Entry; MAX_ENTRIES],
    len: u8,
    lrf: Option<Entry>,
}

impl WarpCache {
    fn find(&self, reg: u16) -> Option<usize> {
        self.fifo[..self.len as usize]
            .iter()
            .position(|e| e.reg == reg)
    }

    fn remove(&mut self, i: usize) -> Entry {
        let e = self.fifo[i];
        let n = self.len as usize;
        self.fifo.copy_within(i + 1..n, i);
        self.len -= 1;
        e
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct TokenInfo {
    long_latency: bool,
    private: bool,
}

#[derive(Clone, Copy, Debug, Default)]
struct Counters {
    operand_reads: u64,
    operand_writes: u64,
    rfc_reads: u64,
    rfc_writes: u64,
    hits: [u64; 3],
    misses: [u64; 3],
    evictions: u64,
    writebacks_eviction: u64,
    writebacks_deactivation: u64,
    writebacks_backward_branch: u64,
    backward_flushes: u64,
    dead_dropped: u64,
    results_to_mrf: u64,
    activations: u64,
    deactivations: u64,
    lrf_reads: u64,
    lrf_writes: u64,
    lrf_hits: u64,
    lrf_demotions: u64,
    lrf_dead_dropped: u64,
    results_dead: u64,
    tag_lookups: u64,
}

/// Why a value leaves the upper levels for the MRF.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Writeback {
    Eviction,
    Deactivation,
    BackwardBranch,
}

/// Why the LRF's value leaves it for the RFC.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Demotion {
    /// A new private-datapath result displaces it: a dead value is dropped.
    Displaced,
    /// A shared-datapath instruction reads it (the shared units cannot reach the LRF):
    /// it moves whatever its bit says, since it is being read.
    SharedRead,
}

/// The hardware RFC (and optional LRF) in front of the baseline's MRF. See the module
/// docs.
pub struct Rfc {
    mrf: Baseline,
    entries: usize,
    lrf: bool,
    charge_tag_lookups: bool,
    flush_at_backward_branches: bool,
    all_active: bool,
    warps: Vec<WarpCache>,
    tokens: Vec<TokenInfo>,
    upper: UpperWrites,
    n: Counters,
    now: Cycle,
}

impl Rfc {
    /// The design for a validated config.
    pub fn new(cfg: &GpuConfig) -> Self {
        let mut mrf = Baseline::new(cfg);
        mrf.rename_design("rfc");
        let rfc = &cfg.register_file.rfc;
        Rfc {
            mrf,
            entries: usize::from(rfc.entries_per_thread).min(MAX_ENTRIES),
            lrf: rfc.lrf,
            charge_tag_lookups: rfc.charge_tag_lookups,
            flush_at_backward_branches: rfc.flush_at_backward_branches,
            all_active: cfg.sm.scheduler != SchedulerPolicy::TwoLevel,
            warps: vec![WarpCache::default(); cfg.sm.max_warps as usize],
            tokens: Vec::with_capacity(256),
            upper: UpperWrites::default(),
            n: Counters::default(),
            now: Cycle::ZERO,
        }
    }

    /// Sends one value of `warp` to the MRF (unless dead): a read of the level it leaves
    /// and a timed MRF write.
    fn write_back(&mut self, w: usize, e: Entry, from_lrf: bool, why: Writeback) {
        if e.dead {
            self.n.dead_dropped += 1;
            return;
        }
        if from_lrf {
            self.n.lrf_reads += 1;
            self.mrf.ledger_mut().transfer(Transfer::LrfToMrf, 1);
        } else {
            self.n.rfc_reads += 1;
            self.mrf.ledger_mut().transfer(Transfer::RfcToMrf, 1);
        }
        match why {
            Writeback::Eviction => self.n.writebacks_eviction += 1,
            Writeback::Deactivation => self.n.writebacks_deactivation += 1,
            Writeback::BackwardBranch => self.n.writebacks_backward_branch += 1,
        }
        let sched = self.warps[w].scheduler;
        self.mrf
            .request_writeback(e.reg, WarpSlot(w as u16), sched, self.now);
    }

    /// Allocates `e` at the tail of the RFC FIFO of warp `w` (an RFC write), evicting the
    /// oldest entry when full. The register must not be cached already.
    fn insert_rfc(&mut self, w: usize, e: Entry) {
        self.n.rfc_writes += 1;
        if self.warps[w].len as usize >= self.entries {
            let old = self.warps[w].remove(0);
            self.n.evictions += 1;
            self.write_back(w, old, false, Writeback::Eviction);
        }
        let c = &mut self.warps[w];
        c.fifo[c.len as usize] = e;
        c.len += 1;
    }

    /// Moves the LRF's value of warp `w` into the RFC (an LRF read, an RFC write); a
    /// displaced dead value is dropped instead.
    fn demote_lrf(&mut self, w: usize, why: Demotion) {
        if let Some(e) = self.warps[w].lrf.take() {
            if e.dead && why == Demotion::Displaced {
                self.n.lrf_dead_dropped += 1;
                self.n.dead_dropped += 1;
                return;
            }
            self.n.lrf_demotions += 1;
            self.n.lrf_reads += 1;
            self.mrf.ledger_mut().transfer(Transfer::LrfToRfc, 1);
            self.insert_rfc(w, e);
        }
    }

    /// Forgets any cached copy of `reg` (it is being overwritten).
    fn invalidate(&mut self, w: usize, reg: u16) {
        let c = &mut self.warps[w];
        if c.lrf.is_some_and(|e| e.reg == reg) {
            c.lrf = None;
        }
        if let Some(i) = c.find(reg) {
            c.remove(i);
        }
    }

    /// `n` registers looked up in the tags (none when there is no RFC).
    fn look_up_tags(&mut self, n: u64) {
        if self.entries == 0 {
            return;
        }
        self.n.tag_lookups += n;
        if self.charge_tag_lookups {
            self.mrf.ledger_mut().charge(Charge::RfcTagLookup, n);
        }
    }

    /// Writes back every live value of warp `w` and empties its levels.
    fn flush(&mut self, w: usize, why: Writeback) {
        if let Some(e) = self.warps[w].lrf.take() {
            self.write_back(w, e, true, why);
        }
        for i in 0..self.warps[w].len as usize {
            let e = self.warps[w].fifo[i];
            self.write_back(w, e, false, why);
        }
        self.warps[w].len = 0;
    }

    /// Empties warp `w`'s levels without writing anything back (all values dead).
    fn discard(&mut self, w: usize) {
        let c = &mut self.warps[w];
        self.n.dead_dropped += u64::from(c.len) + u64::from(c.lrf.is_some());
        c.len = 0;
        c.lrf = None;
    }
}

impl RegisterFile for Rfc {
    fn name(&self) -> &'static str {
        "rfc"
    }

    fn warp_launched(&mut self, l: WarpLaunch) {
        let c = slot(&mut self.warps, l.warp.index());
        *c = WarpCache {
            active: self.all_active,
            scheduler: l.scheduler,
            ..WarpCache::default()
        };
        self.mrf.warp_launched(l);
    }

    fn warp_exited(&mut self, warp: WarpSlot) {
        self.discard(warp.index());
        self.warps[warp.index()].active = false;
        self.mrf.warp_exited(warp);
    }

    fn warp_activated(&mut self, warp: WarpSlot) {
        self.n.activations += 1;
        slot(&mut self.warps, warp.index()).active = true;
    }

    fn warp_deactivated(&mut self, warp: WarpSlot) {
        self.n.deactivations += 1;
        let w = warp.index();
        self.flush(w, Writeback::Deactivation);
        slot(&mut self.warps, w).active = false;
    }

    fn can_accept(&mut self, c: &Candidate<'_>, now: Cycle) -> Result<(), RfStall> {
        self.mrf.can_accept(c, now)
    }

    fn accept(&mut self, i: IssuedInst<'_>, now: Cycle) {
        self.now = now;
        let w = i.inst.warp.index();
        let private = private_datapath(i.inst.class);
        let long_latency = crate::sm::is_long_latency(i.step);
        *slot(&mut self.tokens, i.token.0 as usize) = TokenInfo {
            long_latency,
            private,
        };
        let mut misses = OperandList::new();
        let reads_before = self.n.operand_reads;
        for (src_slot, op) in i
            .inst
            .srcs
            .iter()
            .filter(|o| o.file == RegFileKind::General)
            .enumerate()
        {
            let k = src_slot.min(2);
            for reg in op.regs() {
                self.n.operand_reads += 1;
                let dead = op.hint.dead_after;
                if self.lrf && self.warps[w].lrf.is_some_and(|e| e.reg == reg) {
                    if private {
                        self.n.lrf_reads += 1;
                        self.mrf.ledger_mut().deliver(Source::Lrf, 1);
                        self.n.lrf_hits += 1;
                        self.n.hits[k] += 1;
                        if let Some(e) = self.warps[w].lrf.as_mut() {
                            e.dead |= dead;
                        }
                        continue;
                    }
                    self.demote_lrf(w, Demotion::SharedRead);
                }
                match self.warps[w].find(reg) {
                    Some(idx) if self.entries > 0 => {
                        self.n.rfc_reads += 1;
                        self.mrf.ledger_mut().deliver(Source::Rfc, 1);
                        self.n.hits[k] += 1;
                        self.warps[w].fifo[idx].dead |= dead;
                    }
                    _ => {
                        self.n.misses[k] += 1;
                        // Registers of a wide operand are cached independently.
                        misses.push(RegOperand {
                            reg,
                            width: 1,
                            ..*op
                        });
                    }
                }
            }
        }
        self.look_up_tags(self.n.operand_reads - reads_before);
        if self.flush_at_backward_branches && i.inst.class == OpClass::Control {
            let backward = i
                .step
                .next_pc
                .is_some_and(|(f, next)| f == i.step.func && next.0 <= i.step.inst.0);
            if backward {
                self.n.backward_flushes += 1;
                self.flush(w, Writeback::BackwardBranch);
            }
        }
        if matches!(i.step.event, StepEvent::Exit { done: true }) {
            self.discard(w);
            self.warps[w].exited = true;
        }
        let inst = Candidate {
            srcs: misses.as_slice(),
            ..i.inst
        };
        self.mrf.accept(
            IssuedInst {
                token: i.token,
                inst,
                step: i.step,
            },
            now,
        );
    }

    fn request_write(&mut self, wr: WriteRequest<'_>, now: Cycle) {
        self.now = now;
        let w = wr.warp.index();
        let info = self
            .tokens
            .get(wr.token.0 as usize)
            .copied()
            .unwrap_or_default();
        let general = || wr.dsts.iter().filter(|o| o.file == RegFileKind::General);
        let writes_before = self.n.operand_writes;
        for op in general() {
            for reg in op.regs() {
                self.n.operand_writes += 1;
                self.invalidate(w, reg);
            }
        }
        self.look_up_tags(self.n.operand_writes - writes_before);
        if general().next().is_none() {
            // Predicates only: the predicate file, as in the baseline.
            self.mrf.request_write(wr, now);
            return;
        }
        let to_upper = self.entries > 0 && self.warps[w].active && !info.long_latency;
        if !to_upper {
            self.n.results_to_mrf += general().map(|o| u64::from(o.width)).sum::<u64>();
            self.mrf.request_write(wr, now);
            return;
        }
        if self.warps[w].exited {
            // The warp's last lanes exited: nobody reads the value.
            let n = general().map(|o| u64::from(o.width)).sum::<u64>();
            self.n.dead_dropped += n;
            self.mrf.ledger_mut().write(Sink::Dropped, n);
            self.upper.push(wr.token, now);
            return;
        }
        for op in general() {
            // The result's own bit: no lane reads the value (dead at definition).
            let dead = op.hint.dead_after;
            if dead {
                self.n.results_dead += u64::from(op.width);
            }
            if self.lrf && info.private && op.width == 1 {
                self.demote_lrf(w, Demotion::Displaced);
                self.n.lrf_writes += 1;
                self.mrf.ledger_mut().write(Sink::Lrf, 1);
                self.warps[w].lrf = Some(Entry { reg: op.reg, dead });
            } else {
                for reg in op.regs() {
                    self.mrf.ledger_mut().write(Sink::Rfc, 1);
                    self.insert_rfc(w, Entry { reg, dead });
                }
            }
        }
        self.upper.push(wr.token, now);
    }

    fn skip_to(&mut self, now: Cycle) {
        self.mrf.skip_to(now);
    }

    fn cycle(&mut self, c: &mut RfCycle<'_>) {
        self.now = c.now;
        self.mrf.cycle(c);
        self.upper.complete(c.now, c.writes_done);
    }

    fn next_event(&self, now: Cycle) -> Option<Cycle> {
        match (self.mrf.next_event(now), self.upper.next_event(now)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn is_idle(&self) -> bool {
        self.mrf.is_idle() && self.upper.is_empty()
    }

    fn stats(&self, now: Cycle) -> RfStats {
        let mut s = self.mrf.stats(now);
        let n = &self.n;
        let hits: u64 = n.hits.iter().sum();
        let misses: u64 = n.misses.iter().sum();
        let mut put = |k: &str, v: u64| {
            s.extra.insert(format!("rfc_{k}"), v);
        };
        put("operand_reads", n.operand_reads);
        put("operand_writes", n.operand_writes);
        put("reads", n.rfc_reads);
        put("writes", n.rfc_writes);
        put("read_hits", hits);
        put("read_misses", misses);
        for k in 0..3 {
            put(&format!("hits_src{k}"), n.hits[k]);
            put(&format!("misses_src{k}"), n.misses[k]);
        }
        put("evictions", n.evictions);
        put("writebacks_eviction", n.writebacks_eviction);
        put("writebacks_deactivation", n.writebacks_deactivation);
        if self.flush_at_backward_branches {
            put("writebacks_backward_branch", n.writebacks_backward_branch);
            put("backward_flushes", n.backward_flushes);
        }
        put("dead_not_written_back", n.dead_dropped);
        put("results_to_mrf", n.results_to_mrf);
        put("results_dead", n.results_dead);
        put("tag_lookups", n.tag_lookups);
        put("activations", n.activations);
        put("deactivations", n.deactivations);
        if self.lrf {
            put("lrf_reads", n.lrf_reads);
            put("lrf_writes", n.lrf_writes);
            put("lrf_hits", n.lrf_hits);
            put("lrf_demotions", n.lrf_demotions);
            put("lrf_dead_dropped", n.lrf_dead_dropped);
        }
        s
    }

    fn ledger(&self) -> Ledger {
        self.mrf.ledger()
    }
}

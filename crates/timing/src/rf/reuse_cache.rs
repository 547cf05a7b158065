//! The register-file cache of NVIDIA's cores since Maxwell, as Huerta et al. describe it
//! for Ampere ("Dissecting and Modeling the Architecture of Modern GPU Cores", MICRO 2025,
//! register-file section; issue 25 quotes its findings): each processing block has two
//! register banks with one 1024-bit read and one 1024-bit write port, and **one cache
//! entry per bank, with three sub-entries, one per source operand slot**. A source whose
//! compiler reuse bit is set ([`compiler::reuse_bits`]) is kept in its bank's sub-entry
//! of its slot; the next read of that bank and slot hits only if it is the same warp and
//! register, and any other read there replaces (invalidates) it.
//!
//! Model, on the baseline's banks and arbiter (a [`Baseline`] inside):
//! - at accept, for each distinct general source register in slot `k < 3` (the
//!   instruction's distinct general-register sources in operand order; further operands
//!   are never cached), with bank `b`: a sub-entry `(b, k)` holding this warp's register
//!   is a **hit** (no bank read; the ledger records `Source::OperandBuffer`, the value
//!   waiting by the datapath); otherwise a **miss**, read from the bank, and a valid
//!   sub-entry of another warp or register is **invalidated**. Afterwards the sub-entry
//!   holds the register if its reuse bit is set, and is empty if not;
//! - a result written to a cached register invalidates its sub-entries (the cached value
//!   is stale), counted apart;
//! - **conflict bubbles**: an instruction whose bank reads need `n` read cycles in its
//!   busiest bank (one port: `n` reads) waits `n - 1` extra cycles; the baseline's
//!   arbiter produces the timing, this counts them per instruction (MICRO'25: a pair of
//!   dependent FFMAs takes 5, 6 or 7 cycles by register parity; a third source in the
//!   same bank adds 2).
//!
//! On the modern core (`sm.core = "modern"`) the bubbles stall the sub-core's issue
//! through its Allocate stage ([`crate::sm::allocate`]): the sub-core issues nothing else
//! until the instruction's reads have their ports. The baseline's collectors remain as
//! the latches between the reads and the execution units (`collector_units`); on the
//! collector core they buffer the instruction while the scheduler issues past it. On the
//! modern core, `register_file.design = "baseline"` is this design with the cache off
//! (every source read from its bank, the same Allocate stage): the reuse cache's
//! "off" against "on".
//!
//! With `register_file.result_queue` (the modern configs), a variable-latency result
//! (any unit but `sp`, `int` and `dp`: memory, SFU) waits in the result queue for its
//! banks' write ports behind the fixed-latency results of the same cycle (MICRO'25: a
//! load's write is delayed by a colliding fixed-latency result, whose write time the
//! compiler's stall counts assume); its delays are counted.

use crate::config::{Core, GpuConfig, OpClass, UnitKind};
use crate::kernel_info::RegFileKind;
use crate::rf::baseline::{Baseline, MAX_REGS};
use crate::rf::ledger::{Ledger, Source};
use crate::rf::{
    Candidate, IssuedInst, RegisterFile, RfCycle, RfStall, RfStats, WarpLaunch, WarpSlot,
    WriteRequest,
};
use crate::sm::allocate::{self, AllocateStage};
use crate::time::Cycle;

/// Operand slots with a sub-entry (MICRO'25: three per entry).
pub const SLOTS: usize = 3;

/// What a sub-entry holds: the warp and register whose value it kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Held {
    warp: u16,
    reg: u16,
}

/// Counters of the cache.
#[derive(Clone, Copy, Debug, Default)]
struct Counts {
    hits: [u64; SLOTS],
    misses: [u64; SLOTS],
    /// Valid sub-entries replaced by another warp's or register's read.
    invalidations: u64,
    /// Sub-entries dropped because their register was written.
    write_invalidations: u64,
    /// Sub-entries filled (reuse bit set).
    fills: u64,
    /// Extra read cycles instructions needed for bank conflicts.
    conflict_bubbles: u64,
    /// Instructions with one and with two or more bubbles.
    one_bubble: u64,
    two_bubbles: u64,
    /// Memory instructions that went to the memory queue past the Allocate stage.
    queued: u64,
    /// Of `invalidations`, those by a queued memory instruction's read.
    queued_invalidations: u64,
}

/// Whether an instruction of class `class` skips the modern core's Allocate stage:
/// MICRO'25 §5.1.1, "Variable-latency instructions (e.g., memory instructions) are
/// delivered directly to a queue after going through the Control stage (without going
/// through the Allocate stage)", and §6, "the Allocate stage, in which fixed-latency
/// instructions check for conflicts in the access to the register file and the register
/// file cache". So a memory instruction neither holds its sub-core's issue with
/// conflict bubbles nor hits or fills the cache; its reads take the banks' leftover
/// ports ([`Baseline::accept_banks_yielding`]). Our choice where the paper is silent:
/// SFU and tensor-core instructions (variable latency in our control bits) keep the
/// Allocate path, since the paper caches tensor-core operands in the register-file
/// cache, and the compiler sets reuse bits for them
/// ([`compiler::reuse_bits`]' `uses_cache`, which excludes memory instructions only).
fn bypasses_allocate(class: OpClass) -> bool {
    class == OpClass::Mem
}

/// The reuse-bit register-file cache in front of the baseline's banks.
pub struct ReuseCache {
    inner: Baseline,
    /// Per MRF bank, per slot.
    entries: Vec<[Option<Held>; SLOTS]>,
    read_ports: u32,
    c: Counts,
    /// False: every source is read from its bank (the modern core's `baseline`).
    cache: bool,
    /// The modern core's Allocate stages; `None` on the collector core.
    allocate: Option<AllocateStage>,
    /// `register_file.result_queue`: variable-latency results write after fixed ones.
    result_queue: bool,
    /// By instruction token: whether its result has variable latency (set at accept).
    variable_latency: Vec<bool>,
}

impl ReuseCache {
    pub fn new(cfg: &GpuConfig) -> Self {
        let mut inner = Baseline::new(cfg);
        inner.rename_design("reuse-cache");
        ReuseCache {
            cache: true,
            allocate: (cfg.sm.core == Core::Modern).then(|| AllocateStage::new(cfg.sm.schedulers)),
            result_queue: cfg.register_file.result_queue,
            variable_latency: Vec::new(),
            inner,
            // One entry per bank the baseline numbers (the technology's multiplier included).
            entries: vec![[None; SLOTS]; cfg.register_file.mrf_banks() as usize],
            read_ports: cfg.register_file.read_ports_per_bank.max(1),
            c: Counts::default(),
        }
    }

    /// The modern core's `baseline`: the same banks and Allocate stage, no cache.
    pub fn without_cache(cfg: &GpuConfig) -> Self {
        let mut rf = ReuseCache::new(cfg);
        rf.inner.rename_design("baseline");
        rf.cache = false;
        rf
    }
}

impl RegisterFile for ReuseCache {
    fn name(&self) -> &'static str {
        if self.cache {
            "reuse-cache"
        } else {
            "baseline"
        }
    }

    fn warp_launched(&mut self, w: WarpLaunch) {
        self.inner.warp_launched(w);
    }

    fn warp_exited(&mut self, warp: WarpSlot) {
        // A slot's next warp must not hit on its predecessor's values.
        for e in &mut self.entries {
            for s in e.iter_mut() {
                if s.is_some_and(|h| h.warp == warp.0) {
                    *s = None;
                }
            }
        }
        self.inner.warp_exited(warp);
    }

    fn can_accept(&mut self, c: &Candidate<'_>, now: Cycle) -> Result<(), RfStall> {
        if let Some(a) = &self.allocate {
            // A memory instruction goes from the Control stage to its queue, past an
            // Allocate stage that holds a fixed-latency instruction (MICRO'25 §5.1.1).
            if !bypasses_allocate(c.class) && !a.is_free(c.scheduler, now) {
                return Err(RfStall::BankConflict);
            }
        }
        self.inner.can_accept(c, now)
    }

    fn accept(&mut self, i: IssuedInst<'_>, now: Cycle) {
        let warp = i.inst.warp;
        // The modern core's memory instructions skip the Allocate stage and its cache
        // check (see `bypasses_allocate`).
        let queued = self.allocate.is_some() && bypasses_allocate(i.inst.class);
        if self.result_queue {
            let t = i.token.0 as usize;
            if self.variable_latency.len() <= t {
                self.variable_latency.resize(t + 1, false);
            }
            self.variable_latency[t] =
                !matches!(i.inst.unit, UnitKind::Sp | UnitKind::Int | UnitKind::Dp);
        }
        let mut seen = [0u16; MAX_REGS];
        let mut n_seen = 0;
        let mut banks = [0u8; MAX_REGS];
        let mut n_banks = 0;
        // The banks read, in first-read order, and how many reads each (a short list:
        // an instruction reads few banks, so no table indexed by bank to clear).
        let mut touched = [(0u8, 0u32); MAX_REGS];
        let mut n_touched = 0;
        let generals = i
            .inst
            .srcs
            .iter()
            .filter(|o| o.file == RegFileKind::General);
        // A constant-bank operand (`sm.constant_operands`) holds its slot: the register
        // sources after it keep theirs.
        let constant_slot = i
            .inst
            .hint
            .constant
            .map_or(usize::MAX, |c| usize::from(c.slot));
        for (k, op) in generals.enumerate() {
            let slot = if k >= constant_slot { k + 1 } else { k };
            for reg in op.regs() {
                if seen[..n_seen].contains(&reg) || n_seen == MAX_REGS {
                    continue;
                }
                seen[n_seen] = reg;
                n_seen += 1;
                let bank = self.inner.bank_of(reg, warp, i.inst.scheduler);
                let me = Held { warp: warp.0, reg };
                let hit = if self.cache && slot < SLOTS && queued {
                    // No lookup and no fill; the read still makes the bank and slot's
                    // sub-entry unavailable (MICRO'25 §5.3.1: "after a read request
                    // arrives to the same bank and operand position").
                    let entry = &mut self.entries[bank][slot];
                    if entry.take().is_some() {
                        self.c.invalidations += 1;
                        self.c.queued_invalidations += 1;
                    }
                    false
                } else if self.cache && slot < SLOTS {
                    let entry = &mut self.entries[bank][slot];
                    let hit = *entry == Some(me);
                    if hit {
                        self.c.hits[slot] += 1;
                    } else {
                        self.c.misses[slot] += 1;
                        if entry.is_some() {
                            self.c.invalidations += 1;
                        }
                    }
                    *entry = if op.hint.reuse {
                        self.c.fills += u64::from(!hit);
                        Some(me)
                    } else {
                        None
                    };
                    hit
                } else {
                    false
                };
                if hit {
                    self.inner.ledger_mut().deliver(Source::OperandBuffer, 1);
                } else {
                    banks[n_banks] = bank as u8;
                    n_banks += 1;
                    let b = bank as u8;
                    match touched[..n_touched].iter_mut().find(|t| t.0 == b) {
                        Some(t) => t.1 += 1,
                        None => {
                            touched[n_touched] = (b, 1);
                            n_touched += 1;
                        }
                    }
                }
            }
        }
        let busiest = touched[..n_touched].iter().map(|t| t.1).max().unwrap_or(0);
        if queued {
            // Its reads wait for the ports the fixed-latency instructions leave free.
            self.c.queued += 1;
            self.inner
                .accept_banks_yielding(i.token, i.inst.unit, &banks[..n_banks], now);
            return;
        }
        let b = if let Some(a) = &mut self.allocate {
            // The modern core: reservations over the next three cycles (MICRO'25 §5.3).
            a.reserve(
                i.inst.scheduler,
                &touched[..n_touched],
                self.read_ports,
                now,
            )
        } else {
            allocate::bubbles(busiest, self.read_ports)
        };
        let bubbles = u64::from(b);
        self.c.conflict_bubbles += bubbles;
        match bubbles {
            0 => {}
            1 => self.c.one_bubble += 1,
            _ => self.c.two_bubbles += 1,
        }
        self.inner
            .accept_banks(i.token, i.inst.unit, &banks[..n_banks], now);
    }

    fn request_write(&mut self, w: WriteRequest<'_>, now: Cycle) {
        for op in w.dsts.iter().filter(|o| o.file == RegFileKind::General) {
            for reg in op.regs() {
                let bank = self.inner.bank_of(reg, w.warp, w.scheduler);
                let me = Some(Held {
                    warp: w.warp.0,
                    reg,
                });
                for s in self.entries[bank].iter_mut() {
                    if *s == me {
                        *s = None;
                        self.c.write_invalidations += 1;
                    }
                }
            }
        }
        let queued = self.result_queue
            && self
                .variable_latency
                .get(w.token.0 as usize)
                .copied()
                .unwrap_or(false);
        if queued {
            self.inner.request_queued_write(w, now);
        } else {
            self.inner.request_write(w, now);
        }
    }

    fn skip_to(&mut self, now: Cycle) {
        self.inner.skip_to(now);
    }

    fn cycle(&mut self, c: &mut RfCycle<'_>) {
        self.inner.cycle(c);
    }

    fn next_event(&self, now: Cycle) -> Option<Cycle> {
        let stage = self.allocate.as_ref().and_then(|a| a.next_free(now));
        match (self.inner.next_event(now), stage) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn is_idle(&self) -> bool {
        self.inner.is_idle()
    }

    /// Adds `reuse_cache_hits_slot<k>` / `reuse_cache_misses_slot<k>`,
    /// `reuse_cache_invalidations` (another read of the bank and slot),
    /// `reuse_cache_write_invalidations`, `reuse_cache_fills`,
    /// `reuse_cache_conflict_bubbles`, the instructions with one and with two or more
    /// bubbles, and `reuse_cache_queued_invalidations` (the invalidations by memory
    /// instructions' reads); on the modern core also `memory_queue_insts` (memory
    /// instructions that went past the Allocate stage), with or without the cache.
    fn stats(&self, now: Cycle) -> RfStats {
        let mut s = self.inner.stats(now);
        let c = &self.c;
        if self.result_queue {
            s.extra.insert(
                "result_queue_write_delays".to_string(),
                self.inner.queued_write_delays(),
            );
        }
        if self.allocate.is_some() {
            s.extra.insert("memory_queue_insts".to_string(), c.queued);
        }
        if !self.cache {
            return s;
        }
        for k in 0..SLOTS {
            s.extra
                .insert(format!("reuse_cache_hits_slot{k}"), c.hits[k]);
            s.extra
                .insert(format!("reuse_cache_misses_slot{k}"), c.misses[k]);
        }
        for (name, v) in [
            ("reuse_cache_invalidations", c.invalidations),
            ("reuse_cache_write_invalidations", c.write_invalidations),
            ("reuse_cache_fills", c.fills),
            ("reuse_cache_conflict_bubbles", c.conflict_bubbles),
            ("reuse_cache_one_bubble_insts", c.one_bubble),
            ("reuse_cache_two_bubble_insts", c.two_bubbles),
            ("reuse_cache_queued_invalidations", c.queued_invalidations),
        ] {
            s.extra.insert(name.to_string(), v);
        }
        s
    }

    fn ledger(&self) -> Ledger {
        self.inner.ledger()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{OpClass, UnitKind};
    use crate::kernel_info::{InstHint, RegOperand};
    use crate::memory::{MemorySystem, SmId};
    use crate::rf::{Dispatch, DispatchPort, InstToken};

    fn cfg() -> GpuConfig {
        crate::rf::test_support::config("rtx-a6000", &["register_file.design=\"reuse-cache\""])
    }

    fn r(reg: u16, reuse: bool) -> RegOperand {
        let mut o = crate::rf::test_support::general(reg);
        o.hint.reuse = reuse;
        o
    }

    struct Units {
        taken: Vec<(InstToken, u64)>,
        now: u64,
    }
    impl DispatchPort for Units {
        fn try_dispatch(&mut self, d: Dispatch) -> bool {
            self.taken.push((d.token, self.now));
            true
        }
    }

    fn issue(rf: &mut ReuseCache, token: u32, warp: u16, srcs: &[RegOperand], now: u64) {
        let c = Candidate {
            warp: WarpSlot(warp),
            scheduler: 0,
            unit: UnitKind::Sp,
            class: OpClass::Fp32,
            srcs,
            dsts: &[],
            hint: InstHint::default(),
        };
        assert!(crate::rf::test_support::try_accept(rf, token, c, now));
    }

    /// Issues `srcs` at 10 and runs to 30: the dispatch cycle.
    fn dispatch_cycle(rf: &mut ReuseCache, token: u32, srcs: &[RegOperand], at: u64) -> u64 {
        let c = cfg();
        let mut mem = MemorySystem::new(&c);
        let mut units = Units {
            taken: Vec::new(),
            now: 0,
        };
        issue(rf, token, 0, srcs, at);
        for t in at + 1..at + 20 {
            units.now = t;
            rf.cycle(&mut RfCycle {
                now: Cycle::new(t),
                sm: SmId(0),
                memory: mem.port(SmId(0)),
                dispatch: &mut units,
                writes_done: &mut Vec::new(),
            });
        }
        assert_eq!(units.taken.len(), 1);
        units.taken[0].1
    }

    fn extra(rf: &ReuseCache, k: &str) -> u64 {
        rf.stats(Cycle::new(100)).extra[k]
    }

    /// Two banks per processing block, the bank the register's parity (rtx-a6000):
    /// R0, R2, R4 share bank 0, R1 is bank 1.
    #[test]
    fn one_and_two_bubble_conflicts_delay_dispatch_by_one_and_two_cycles() {
        let mut rf = ReuseCache::new(&cfg());
        // R0 and R1: two banks, no bubble: granted at 11, delivered at 12.
        assert_eq!(
            dispatch_cycle(&mut rf, 1, &[r(0, false), r(1, false)], 10),
            12
        );
        // R0, R2 (bank 0) and R1: one bubble.
        assert_eq!(
            dispatch_cycle(&mut rf, 2, &[r(0, false), r(2, false), r(1, false)], 40),
            13 + 30
        );
        // R0, R2, R4 all bank 0: two.
        assert_eq!(
            dispatch_cycle(&mut rf, 3, &[r(0, false), r(2, false), r(4, false)], 70),
            14 + 60
        );
        // Each alone reads in its own three read cycles: no Allocate bubble (MICRO'25
        // Listing 1's first FFMA; the bubbles come from a following instruction).
        assert_eq!(extra(&rf, "reuse_cache_conflict_bubbles"), 0);
    }

    /// MICRO'25: a load's write waits in the result queue behind a fixed-latency result
    /// that wants the same bank's write port in the same cycle. Returns the cycles the
    /// load's and the FFMA's writes completed, and the queue's delays.
    fn load_and_ffma_write_to_one_bank(queue: bool) -> (u64, u64, u64) {
        let o = format!("register_file.result_queue={queue}");
        let c = crate::rf::test_support::config("rtx-a6000", &[o.as_str()]);
        let mut rf = ReuseCache::new(&c);
        let mut mem = MemorySystem::new(&c);
        let mut units = Units {
            taken: Vec::new(),
            now: 0,
        };
        let step = emu::WarpStep::default();
        for (token, unit, class) in [
            (1, UnitKind::Mem, OpClass::Mem),
            (2, UnitKind::Sp, OpClass::Fp32),
        ] {
            let inst = Candidate {
                warp: WarpSlot(0),
                scheduler: 0,
                unit,
                class,
                srcs: &[],
                dsts: &[],
                hint: InstHint::default(),
            };
            rf.accept(
                IssuedInst {
                    token: InstToken(token),
                    inst,
                    step: &step,
                },
                Cycle::new(10 + u64::from(token)),
            );
        }
        let mut done = [0u64; 3];
        for t in 12..40 {
            units.now = t;
            if t == 20 {
                // Both write R2's bank; the load asks first.
                for (token, reg) in [(1, 2), (2, 2)] {
                    let dsts = [crate::rf::test_support::general(reg)];
                    rf.request_write(
                        WriteRequest {
                            token: InstToken(token),
                            warp: WarpSlot(0),
                            scheduler: 0,
                            dsts: &dsts,
                        },
                        Cycle::new(t),
                    );
                }
            }
            let mut writes = Vec::new();
            rf.cycle(&mut RfCycle {
                now: Cycle::new(t),
                sm: SmId(0),
                memory: mem.port(SmId(0)),
                dispatch: &mut units,
                writes_done: &mut writes,
            });
            for w in writes {
                done[w.0 as usize] = t;
            }
        }
        let delays = rf
            .stats(Cycle::new(40))
            .extra
            .get("result_queue_write_delays")
            .copied();
        assert_eq!(delays.is_some(), queue);
        assert!(done[1] > 0 && done[2] > 0, "both written: {done:?}");
        (done[1], done[2], delays.unwrap_or(0))
    }

    #[test]
    fn a_fixed_latency_result_delays_a_colliding_load_write() {
        let (load, ffma, delays) = load_and_ffma_write_to_one_bank(false);
        assert_eq!(
            (ffma - load, delays),
            (1, 0),
            "oldest first: the load writes first"
        );
        let (load, ffma, delays) = load_and_ffma_write_to_one_bank(true);
        assert_eq!((load - ffma, delays), (1, 1), "the FFMA's write goes first");
    }

    fn candidate(scheduler: u16, srcs: &[RegOperand]) -> Candidate<'_> {
        Candidate {
            warp: WarpSlot(scheduler),
            scheduler,
            unit: UnitKind::Sp,
            class: OpClass::Fp32,
            srcs,
            dsts: &[],
            hint: InstHint::default(),
        }
    }

    /// MICRO'25 §5.3: no collectors on the modern core; a conflict's bubbles stall the
    /// sub-core's issue, not only the instruction. An instruction reserves its banks'
    /// read ports for the three cycles after Allocate; the next one waits until its own
    /// reads fit (Listing 1: 0, 1 or 2 bubbles).
    #[test]
    fn on_the_modern_core_bubbles_hold_the_sub_cores_issue() {
        let mut rf = ReuseCache::new(&cfg());
        let srcs = [r(1, false)];
        // R0, R2, R4 all in bank 0: its reads take bank 0 in cycles 11-13, no bubble.
        issue(&mut rf, 1, 0, &[r(0, false), r(2, false), r(4, false)], 10);
        assert!(rf.can_accept(&candidate(0, &srcs), Cycle::new(11)).is_ok());
        // R6, R8, R10 (bank 0) next: bank 0 is free only at 14 of 12-14, so it waits
        // two cycles (reads at 14-16): two bubbles.
        issue(&mut rf, 2, 0, &[r(6, false), r(8, false), r(10, false)], 11);
        for (t, free) in [(12, false), (13, false), (14, true)] {
            let got = rf.can_accept(&candidate(0, &srcs), Cycle::new(t));
            assert_eq!(got.is_ok(), free, "cycle {t}: {got:?}");
            if !free {
                assert_eq!(got, Err(RfStall::BankConflict));
            }
        }
        assert_eq!(extra(&rf, "reuse_cache_two_bubble_insts"), 1);
        // Another sub-core has its own banks and stage.
        assert!(rf.can_accept(&candidate(1, &srcs), Cycle::new(12)).is_ok());
        // The SM sleeps until the stage frees.
        assert!(rf.next_event(Cycle::new(12)) <= Some(Cycle::new(14)));
        // One bubble: after a bank-0 triple, two bank-0 reads and one bank-1 read (a
        // fresh register file: nothing here runs the cycles that free its latches).
        let mut rf = ReuseCache::new(&cfg());
        issue(&mut rf, 3, 0, &[r(0, false), r(2, false), r(4, false)], 30);
        issue(&mut rf, 4, 0, &[r(0, false), r(2, false), r(1, false)], 31);
        assert!(rf.can_accept(&candidate(0, &srcs), Cycle::new(32)).is_err());
        assert!(rf.can_accept(&candidate(0, &srcs), Cycle::new(33)).is_ok());
        assert_eq!(extra(&rf, "reuse_cache_one_bubble_insts"), 1);
        assert_eq!(extra(&rf, "reuse_cache_conflict_bubbles"), 1);
        // No bubble: after a bank-0 triple, one bank-0 read and two bank-1 reads.
        let mut rf = ReuseCache::new(&cfg());
        issue(&mut rf, 5, 0, &[r(0, false), r(2, false), r(4, false)], 50);
        issue(&mut rf, 6, 0, &[r(6, false), r(1, false), r(3, false)], 51);
        assert!(rf.can_accept(&candidate(0, &srcs), Cycle::new(52)).is_ok());
        assert_eq!(extra(&rf, "reuse_cache_conflict_bubbles"), 0);
    }

    #[test]
    fn on_the_collector_core_the_scheduler_issues_past_the_bubbles() {
        let c = crate::rf::test_support::config(
            "rtx-a6000",
            &[
                "sm.core=\"collector\"",
                "sm.dependence=\"stall_counter\"",
                "register_file.design=\"reuse-cache\"",
                "register_file.result_queue=false",
                "sm.memory_buffer.entries=0",
                "sm.constant_operands=false",
                "sm.l0_stream_buffer=0",
            ],
        );
        let mut rf = ReuseCache::new(&c);
        issue(&mut rf, 1, 0, &[r(0, false), r(2, false), r(4, false)], 10);
        assert!(rf
            .can_accept(&candidate(0, &[r(1, false)]), Cycle::new(11))
            .is_ok());
    }

    /// The modern core's `baseline`: the same stage, every source from its bank.
    #[test]
    fn the_modern_baseline_is_the_stage_without_the_cache() {
        let c =
            crate::rf::test_support::config("rtx-a6000", &["register_file.design=\"baseline\""]);
        let rf = crate::rf::build(&c);
        assert_eq!(rf.name(), "baseline");
        let mut rf = ReuseCache::without_cache(&c);
        // Reuse bits set, but nothing is kept: R0 and R2 conflict again.
        dispatch_cycle(&mut rf, 1, &[r(0, true), r(2, true), r(1, false)], 10);
        assert_eq!(
            dispatch_cycle(&mut rf, 2, &[r(0, false), r(2, false), r(1, false)], 40),
            43
        );
        // Right behind a bank-0 triple, its two bank-0 reads cost a bubble.
        issue(&mut rf, 3, 0, &[r(0, true), r(2, true), r(4, true)], 70);
        issue(&mut rf, 4, 0, &[r(0, false), r(2, false), r(1, false)], 71);
        assert!(rf
            .can_accept(&candidate(0, &[r(1, false)]), Cycle::new(72))
            .is_err());
        assert_eq!(rf.ledger().delivered(Source::OperandBuffer), 0);
        let s = rf.stats(Cycle::new(100));
        assert_eq!(s.design, "baseline");
        assert!(!s.extra.contains_key("reuse_cache_hits_slot0"));
    }

    #[test]
    fn a_reused_operand_hits_in_its_slot_and_saves_the_bank_conflict() {
        let mut rf = ReuseCache::new(&cfg());
        // R0 (slot 0) and R2 (slot 1) kept; the next instruction reads them in the same
        // slots with R4: only R4 is read, no bubble, where three bank-0 reads take two.
        dispatch_cycle(&mut rf, 1, &[r(0, true), r(2, true), r(1, false)], 10);
        assert_eq!(
            dispatch_cycle(&mut rf, 2, &[r(0, false), r(2, false), r(4, false)], 40),
            42
        );
        assert_eq!(extra(&rf, "reuse_cache_hits_slot0"), 1);
        assert_eq!(extra(&rf, "reuse_cache_hits_slot1"), 1);
        assert_eq!(extra(&rf, "reuse_cache_misses_slot2"), 2);
        // Each alone, neither has an Allocate bubble; the saving shows in the reads.
        assert_eq!(extra(&rf, "reuse_cache_conflict_bubbles"), 0);
        // Reuse bits not set on the second: the entries are empty now, so a third read
        // misses.
        dispatch_cycle(&mut rf, 3, &[r(0, false)], 70);
        assert_eq!(extra(&rf, "reuse_cache_misses_slot0"), 2);
        assert_eq!(rf.ledger().delivered(Source::OperandBuffer), 2);
    }

    #[test]
    fn another_read_of_the_bank_and_slot_invalidates_and_other_slots_miss() {
        let mut rf = ReuseCache::new(&cfg());
        dispatch_cycle(&mut rf, 1, &[r(0, true)], 10);
        // R0 in slot 1 instead: a miss (slot 0's entry is not slot 1's); slot 0 kept.
        dispatch_cycle(&mut rf, 2, &[r(1, false), r(0, false)], 40);
        assert_eq!(extra(&rf, "reuse_cache_misses_slot1"), 1);
        // R2 (bank 0) in slot 0: replaces R0, an invalidation.
        dispatch_cycle(&mut rf, 3, &[r(2, false)], 70);
        assert_eq!(extra(&rf, "reuse_cache_invalidations"), 1);
        // R0 in slot 0 again: a miss now.
        dispatch_cycle(&mut rf, 4, &[r(0, false)], 100);
        assert_eq!(extra(&rf, "reuse_cache_hits_slot0"), 0);
        // Slot 0 missed four times: R0, R1, R2, R0.
        assert_eq!(extra(&rf, "reuse_cache_misses_slot0"), 4);
        // Another warp's read of the same register and slot misses too.
        let mut rf = ReuseCache::new(&cfg());
        dispatch_cycle(&mut rf, 1, &[r(0, true)], 10);
        let step = emu::WarpStep::default();
        let srcs = [r(0, false)];
        let c = Candidate {
            warp: WarpSlot(4),
            scheduler: 0,
            unit: UnitKind::Sp,
            class: OpClass::Fp32,
            srcs: &srcs,
            dsts: &[],
            hint: InstHint::default(),
        };
        rf.accept(
            IssuedInst {
                token: InstToken(9),
                inst: c,
                step: &step,
            },
            Cycle::new(40),
        );
        assert_eq!(extra(&rf, "reuse_cache_hits_slot0"), 0);
        assert_eq!(extra(&rf, "reuse_cache_invalidations"), 1);
    }

    fn memory(scheduler: u16, srcs: &[RegOperand]) -> Candidate<'_> {
        Candidate {
            warp: WarpSlot(scheduler),
            scheduler,
            unit: UnitKind::Mem,
            class: OpClass::Mem,
            srcs,
            dsts: &[],
            hint: InstHint::default(),
        }
    }

    fn accept_at(rf: &mut ReuseCache, token: u32, c: Candidate<'_>, now: u64) {
        assert!(crate::rf::test_support::try_accept(rf, token, c, now));
    }

    /// MICRO'25 §5.1.1 and §6: only fixed-latency instructions pass the Allocate stage.
    /// A memory instruction issues while the stage holds a fixed-latency instruction,
    /// reserves no read ports there (the next fixed-latency instruction has no bubble
    /// for its reads), and neither hits nor fills the cache, though its read of a bank
    /// and slot makes that sub-entry unavailable.
    #[test]
    fn memory_instructions_skip_the_allocate_stage_and_the_cache_lookup() {
        let mut rf = ReuseCache::new(&cfg());
        let srcs = [r(1, false)];
        // Two bank-0 triples: the second holds the stage for two bubbles (12 and 13).
        issue(&mut rf, 1, 0, &[r(0, false), r(2, false), r(4, false)], 10);
        issue(&mut rf, 2, 0, &[r(6, false), r(8, false), r(10, false)], 11);
        assert_eq!(
            rf.can_accept(&candidate(0, &srcs), Cycle::new(12)),
            Err(RfStall::BankConflict)
        );
        assert!(
            rf.can_accept(&memory(0, &srcs), Cycle::new(12)).is_ok(),
            "a memory instruction goes past the held stage"
        );
        // A memory instruction's reads of bank 0 reserve nothing: a bank-0 triple right
        // after it enters the stage without a bubble.
        let mut rf = ReuseCache::new(&cfg());
        let addr = [r(0, false), r(2, false), r(4, false)];
        accept_at(&mut rf, 1, memory(0, &addr), 10);
        issue(&mut rf, 2, 0, &[r(6, false), r(8, false), r(10, false)], 11);
        assert!(rf.can_accept(&candidate(0, &srcs), Cycle::new(12)).is_ok());
        assert_eq!(extra(&rf, "reuse_cache_conflict_bubbles"), 0);
        assert_eq!(extra(&rf, "memory_queue_insts"), 1);
        // No hit, no fill, no miss counted; the sub-entry is gone all the same.
        let mut rf = ReuseCache::new(&cfg());
        issue(&mut rf, 1, 0, &[r(0, true)], 10);
        accept_at(&mut rf, 2, memory(0, &[r(0, true)]), 11);
        assert_eq!(extra(&rf, "reuse_cache_hits_slot0"), 0);
        assert_eq!(
            extra(&rf, "reuse_cache_misses_slot0"),
            1,
            "the first read only"
        );
        assert_eq!(extra(&rf, "reuse_cache_fills"), 1, "the first read only");
        assert_eq!(extra(&rf, "reuse_cache_queued_invalidations"), 1);
        issue(&mut rf, 3, 0, &[r(0, false)], 12);
        assert_eq!(extra(&rf, "reuse_cache_hits_slot0"), 0, "invalidated");
        assert_eq!(rf.ledger().delivered(Source::OperandBuffer), 0);
        // The modern core's `baseline` (no cache) counts them too.
        let c =
            crate::rf::test_support::config("rtx-a6000", &["register_file.design=\"baseline\""]);
        let mut rf = ReuseCache::without_cache(&c);
        accept_at(&mut rf, 1, memory(0, &addr), 10);
        assert_eq!(extra(&rf, "memory_queue_insts"), 1);
    }

    /// MICRO'25 §5.1.1: "Fixed-latency instructions are given priority over
    /// variable-latency instructions to allocate register file ports". A memory
    /// instruction and a fixed-latency one accepted in the same cycle both read bank 0:
    /// the fixed-latency read goes first, the memory instruction's two reads follow.
    #[test]
    fn fixed_latency_reads_go_before_a_queued_memory_instructions_reads() {
        let c = cfg();
        let mut mem = MemorySystem::new(&c);
        for fixed_first in [false, true] {
            let mut rf = ReuseCache::new(&c);
            let mut units = Units {
                taken: Vec::new(),
                now: 0,
            };
            let addr = [r(0, false), r(2, false)];
            let fixed = [r(4, false)];
            if fixed_first {
                issue(&mut rf, 2, 0, &fixed, 10);
                accept_at(&mut rf, 1, memory(0, &addr), 10);
            } else {
                accept_at(&mut rf, 1, memory(0, &addr), 10);
                issue(&mut rf, 2, 0, &fixed, 10);
            }
            for t in 11..30 {
                units.now = t;
                rf.cycle(&mut RfCycle {
                    now: Cycle::new(t),
                    sm: SmId(0),
                    memory: mem.port(SmId(0)),
                    dispatch: &mut units,
                    writes_done: &mut Vec::new(),
                });
            }
            let at = |tok: u32| {
                units
                    .taken
                    .iter()
                    .find(|(t, _)| t.0 == tok)
                    .map(|&(_, c)| c)
            };
            // The FFMA's read at 11, delivered at 12; the load's reads at 12 and 13.
            assert_eq!(at(2), Some(12), "fixed first: {fixed_first}");
            assert_eq!(at(1), Some(14), "fixed first: {fixed_first}");
        }
    }
}

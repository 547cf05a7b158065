//! BOW, "Breathing Operand Windows" (Asghari Esfeden et al., MICRO 2020), as Malekeh's
//! comparison point (Malekeh §8-9: "BOW replaces OCUs with buffers that keep the source
//! operand values of instructions in a sliding window", a window of three instructions).
//! The BOW paper itself is not in our reference texts; this model follows Malekeh's
//! description of it and issue 13.
//!
//! **What is reconstruction.** Malekeh's text gives BOW three facts: operand buffers
//! that keep the source values of the instructions in a sliding window, forwarding of
//! register values between the window's instructions instead of bank reads, a window
//! of three instructions (§9), and a flush "every time a branch jumps to a new sliding
//! window" (§9.2). Everything else here is ours, not BOW's: that results enter the window
//! too (a written-back result forwarded like a source), the BOW-WR write bypass and its
//! use of our liveness bits, that the window sits on top of the baseline's collector
//! units (an instruction still takes one), how many windows an SM has
//! (`register_file.bow.windows`) and how they are assigned, the flush rule on any
//! non-sequential next PC, and the timing of forwarding (below).
//!
//! Model, per SM:
//! - The banks, ports, arbiter and collector units are the baseline's ([`Baseline`],
//!   composed): an instruction still takes a collector unit to wait for its operands and
//!   an execution unit, and the registers it cannot get from its window are read from the
//!   banks.
//! - **Window**: per warp, the last `register_file.bow.window` instructions *including
//!   the one issuing* (3: an instruction can take operands from the two before it). An
//!   entry holds the instruction's source registers (their values arrive with it) and
//!   its destination registers (valid once its result is written back). A source register
//!   whose newest mention in the window's older entries is a source, or a written-back
//!   destination, is *forwarded*: no bank read. The newest mention decides, so a register
//!   rewritten inside the window is forwarded with its new value. A value forwarded from
//!   an older entry's source is available only when that entry's value is: the
//!   instruction dispatches no earlier than the older entry's operands have all arrived
//!   (its bank reads, or its own forwarded values), whole entry at a time.
//! - **Windows** (`register_file.bow.windows`): 0, the default, gives every warp slot a
//!   window; `n` gives the SM `n`, held by a warp from its first instruction while it
//!   has none free until its window empties (a flush, or exit). A warp that finds none
//!   free issues without one: every source from the banks, every result to them.
//! - **Flush**: when the warp's control flow leaves the straight line (the issued
//!   instruction's next PC is not the following instruction: a taken branch, call,
//!   return or reconvergence jump) the window empties, since the instructions that
//!   follow are not the ones the window was built for.
//! - **BOW-WR** (`write_bypass`): a result whose instruction is still in the window goes
//!   to the window only; its bank write is *deferred*. If the compiler's liveness bits say
//!   the value dies inside the window (a later instruction in the window reads it with
//!   `dead_after`, or overwrites the register, before the writer leaves the window) the
//!   bank write never happens; otherwise it is issued when the writer leaves the window
//!   (slides out or is flushed). The scoreboard is released when the value reaches the
//!   window, one cycle after writeback. Deferred writes are queued before the bank reads
//!   of the instruction whose issue pushed the writer out, and writes have priority, so
//!   a later reader outside the window is ordered after them.
//!
//! Energy: the ledger's rules ([`crate::rf::ledger`]) with the window as the operand
//! buffer: a forwarded source is a window read; a bank read also a crossbar transfer and
//! a window write; a result written into the window crosses the crossbar as Malekeh's
//! kept destinations do (one rule for both designs) and is a window write; a deferred
//! write leaving the window a window read and an MRF write.

use serde::{Deserialize, Serialize};

use crate::config::GpuConfig;
use crate::kernel_info::{OperandHint, RegFileKind, RegOperand};
use crate::rf::baseline::{Baseline, MAX_REGS};
use crate::rf::ledger::{Charge, Ledger, OperandBuffer, Sink, Source, Transfer};
use crate::rf::{
    Candidate, InstToken, IssuedInst, RegisterFile, RfCycle, RfStall, RfStats, WarpLaunch,
    WarpSlot, WriteRequest,
};
use crate::time::{Cycle, Cycles};

/// Largest window supported.
pub const MAX_WINDOW: usize = 8;
/// Most windows per SM a config may ask for.
pub const MAX_WINDOWS: u32 = 4096;

/// `[register_file.bow]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BowConfig {
    /// Instructions in a warp's window, the issuing one included (Malekeh §9: 3).
    pub window: u32,
    /// BOW-WR: results that die inside the window are not written to the banks.
    pub write_bypass: bool,
    /// Windows per SM, each held by one warp at a time; 0: one for every warp slot.
    /// Malekeh's text does not say how many BOW has (ours).
    pub windows: u32,
}

impl Default for BowConfig {
    fn default() -> Self {
        BowConfig {
            window: 3,
            write_bypass: false,
            windows: 0,
        }
    }
}

impl BowConfig {
    /// Checks the values; the error names the key and says why.
    pub fn validate(&self) -> Result<(), (String, String)> {
        if self.windows > MAX_WINDOWS {
            return Err((
                "register_file.bow.windows".into(),
                format!("must be at most {MAX_WINDOWS}"),
            ));
        }
        if self.window == 0 || self.window as usize > MAX_WINDOW {
            return Err((
                "register_file.bow.window".into(),
                format!("must be 1 to {MAX_WINDOW}"),
            ));
        }
        Ok(())
    }
}

/// State of a destination register in a window entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dst {
    /// Not written back yet.
    Pending,
    /// In the window and in the banks (or on its way there).
    Written,
    /// In the window only: the bank write is deferred (BOW-WR).
    Deferred,
    /// Deferred, then found dead inside the window: never written to the banks.
    Dead,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    token: InstToken,
    /// The collector that took it and that collector's epoch (its operands' arrival is
    /// what a value forwarded from its sources waits for).
    collector: (usize, u32),
    srcs: [u16; MAX_REGS],
    n_srcs: u8,
    dsts: [(u16, Dst); MAX_REGS],
    n_dsts: u8,
}

const EMPTY: Entry = Entry {
    token: InstToken(u32::MAX),
    collector: (usize::MAX, 0),
    srcs: [0; MAX_REGS],
    n_srcs: 0,
    dsts: [(0, Dst::Pending); MAX_REGS],
    n_dsts: 0,
};

/// One warp's window: a ring of entries, `len` valid, `head` the newest.
#[derive(Clone, Debug)]
struct Window {
    entries: [Entry; MAX_WINDOW],
    head: usize,
    len: usize,
    scheduler: u16,
    /// The warp holds this window (always, with one window per warp slot).
    held: bool,
}

impl Window {
    /// The `k`-th newest entry (0 = newest).
    fn nth(&self, k: usize) -> usize {
        (self.head + MAX_WINDOW - k) % MAX_WINDOW
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct Counters {
    operand_reads: u64,
    operand_writes: u64,
    forwarded: u64,
    forwarded_results: u64,
    flushes: u64,
    window_writes: u64,
    writes_deferred: u64,
    writes_bypassed: u64,
    writes_late: u64,
    forward_waits: u64,
    no_window: u64,
}

/// The bypassing operand window over the baseline's banks. See the module docs.
pub struct Bow {
    inner: Baseline,
    window: usize,
    write_bypass: bool,
    windows: Vec<Window>,
    /// Results that went to the window only: their tokens are reported done at the cycle.
    bypassed: Vec<(InstToken, Cycle)>,
    /// Windows the SM has (`register_file.bow.windows`; every warp slot's when 0) and
    /// how many are held.
    limit: usize,
    held: usize,
    n: Counters,
}

impl Bow {
    /// The design for a validated config.
    pub fn new(cfg: &GpuConfig) -> Self {
        let b = &cfg.register_file.bow;
        let mut inner = Baseline::new(cfg);
        inner.set_operand_buffer(OperandBuffer::BowWindow);
        Bow {
            inner,
            window: b.window as usize,
            write_bypass: b.write_bypass,
            windows: vec![
                Window {
                    entries: [EMPTY; MAX_WINDOW],
                    head: 0,
                    len: 0,
                    scheduler: 0,
                    held: false,
                };
                cfg.sm.max_warps as usize
            ],
            bypassed: Vec::with_capacity(16),
            limit: if b.windows == 0 {
                cfg.sm.max_warps as usize
            } else {
                b.windows as usize
            },
            held: 0,
            n: Counters::default(),
        }
    }

    /// Whether `reg` of `warp` can be forwarded from its window: its newest mention is
    /// a source (`Some(Some(collector))`: of the entry in that collector, whose value
    /// arrives with its operands) or a written-back result (`Some(None)`).
    fn lookup(&self, warp: usize, reg: u16) -> Option<Option<(usize, u32)>> {
        let w = &self.windows[warp];
        for k in 0..w.len {
            let e = &w.entries[w.nth(k)];
            if let Some(&(_, d)) = e.dsts[..e.n_dsts as usize].iter().find(|d| d.0 == reg) {
                return (d != Dst::Pending).then_some(None);
            }
            if e.srcs[..e.n_srcs as usize].contains(&reg) {
                return Some(Some(e.collector));
            }
        }
        None
    }

    /// BOW-WR: the deferred result `reg` of `warp` is dead (read for the last time or
    /// overwritten) inside the window.
    fn kill(&mut self, warp: usize, reg: u16) {
        let w = &mut self.windows[warp];
        for k in 0..w.len {
            let i = w.nth(k);
            let e = &mut w.entries[i];
            if let Some(d) = e.dsts[..e.n_dsts as usize].iter_mut().find(|d| d.0 == reg) {
                if d.1 == Dst::Deferred {
                    d.1 = Dst::Dead;
                    self.n.writes_bypassed += 1;
                }
                return;
            }
        }
    }

    /// The oldest entry of `warp` leaves the window: its deferred results go to the banks.
    fn retire_oldest(&mut self, warp: usize, now: Cycle) {
        let w = &mut self.windows[warp];
        if w.len == 0 {
            return;
        }
        let i = w.nth(w.len - 1);
        w.len -= 1;
        let e = w.entries[i];
        let scheduler = w.scheduler;
        for &(reg, d) in &e.dsts[..e.n_dsts as usize] {
            if d == Dst::Deferred {
                self.n.writes_late += 1;
                self.inner
                    .ledger_mut()
                    .transfer(Transfer::OperandBufferToMrf, 1);
                let op = [RegOperand {
                    file: RegFileKind::General,
                    reg,
                    width: 1,
                    hint: OperandHint::default(),
                }];
                self.inner.push_write(
                    WriteRequest {
                        token: e.token,
                        warp: WarpSlot(warp as u16),
                        scheduler,
                        dsts: &op,
                    },
                    now,
                    false,
                );
            }
        }
    }

    fn flush(&mut self, warp: usize, now: Cycle) {
        if self.windows[warp].len > 0 {
            self.n.flushes += 1;
        }
        while self.windows[warp].len > 0 {
            self.retire_oldest(warp, now);
        }
        self.release(warp);
    }

    /// The warp's window is empty: with fewer windows than warp slots it goes back.
    fn release(&mut self, warp: usize) {
        let limited = self.limit < self.windows.len();
        let w = &mut self.windows[warp];
        if w.held && limited {
            w.held = false;
            self.held -= 1;
        }
    }

    /// Whether `warp` holds a window, taking a free one if it has none.
    fn hold(&mut self, warp: usize) -> bool {
        let w = &mut self.windows[warp];
        if !w.held && self.held < self.limit {
            w.held = true;
            self.held += 1;
        }
        w.held
    }
}

impl RegisterFile for Bow {
    fn name(&self) -> &'static str {
        "bow"
    }

    fn warp_launched(&mut self, w: WarpLaunch) {
        let win = &mut self.windows[w.warp.index()];
        win.len = 0;
        win.scheduler = w.scheduler;
    }

    fn warp_exited(&mut self, warp: WarpSlot) {
        // Its registers die with it: nothing deferred needs writing.
        self.windows[warp.index()].len = 0;
        self.release(warp.index());
    }

    fn can_accept(&mut self, c: &Candidate<'_>, now: Cycle) -> Result<(), RfStall> {
        self.inner.can_accept(c, now)
    }

    fn accept(&mut self, i: IssuedInst<'_>, now: Cycle) {
        let inst = &i.inst;
        let warp = inst.warp.index();
        let Some(idx) = (0..self.inner.collector_count())
            .find(|&k| self.inner.collector_free_for(k, inst.unit, inst.scheduler))
        else {
            debug_assert!(false, "accept without a free collector");
            return;
        };
        let windowed = self.hold(warp);
        if !windowed {
            self.n.no_window += 1;
        }
        // The older entries of the window (the issuing instruction is its newest).
        while self.windows[warp].len >= self.window.max(1) {
            self.retire_oldest(warp, now);
        }
        let mut producers = [(0usize, 0u32); MAX_WINDOW];
        let mut n_producers = 0;
        let mut e = EMPTY;
        e.token = i.token;
        let mut reads = [RegOperand {
            file: RegFileKind::General,
            reg: 0,
            width: 1,
            hint: OperandHint::default(),
        }; MAX_REGS];
        let mut n_reads = 0;
        for op in inst.srcs.iter().filter(|o| o.file == RegFileKind::General) {
            for reg in op.regs() {
                let n = e.n_srcs as usize;
                if e.srcs[..n].contains(&reg) || n == MAX_REGS {
                    continue;
                }
                e.srcs[n] = reg;
                e.n_srcs += 1;
                self.n.operand_reads += 1;
                match self.lookup(warp, reg).filter(|_| windowed) {
                    Some(from) => {
                        self.inner.ledger_mut().deliver(Source::OperandBuffer, 1);
                        self.n.forwarded += 1;
                        self.n.forwarded_results += u64::from(from.is_none());
                        if let Some(p) = from {
                            if !producers[..n_producers].contains(&p) && n_producers < MAX_WINDOW {
                                producers[n_producers] = p;
                                n_producers += 1;
                            }
                        }
                    }
                    None => {
                        reads[n_reads].reg = reg;
                        n_reads += 1;
                    }
                }
                if self.write_bypass && op.hint.dead_after {
                    self.kill(warp, reg);
                }
            }
        }
        for op in inst.dsts.iter().filter(|o| o.file == RegFileKind::General) {
            for reg in op.regs() {
                let n = e.n_dsts as usize;
                if n < MAX_REGS {
                    if self.write_bypass {
                        // The old value is overwritten here.
                        self.kill(warp, reg);
                    }
                    e.dsts[n] = (reg, Dst::Pending);
                    e.n_dsts += 1;
                }
            }
        }
        let win = &mut self.windows[warp];
        if self.window > 0 && windowed {
            win.head = (win.head + 1) % MAX_WINDOW;
            let h = win.head;
            win.entries[h] = e;
            win.len += 1;
        }
        self.inner
            .accept_into(idx, i.token, inst, &reads[..n_reads], now);
        if self.window > 0 && windowed {
            let h = self.windows[warp].head;
            self.windows[warp].entries[h].collector = (idx, self.inner.collector_epoch(idx));
        }
        for &p in &producers[..n_producers] {
            if self.inner.wait_for(idx, p, now) {
                self.n.forward_waits += 1;
            }
        }
        let sequential = i
            .step
            .next_pc
            .is_some_and(|(f, next)| f == i.step.func && next.0 == i.step.inst.0.wrapping_add(1));
        if !sequential {
            self.flush(warp, now);
        }
    }

    fn request_write(&mut self, w: WriteRequest<'_>, now: Cycle) {
        let warp = w.warp.index();
        let win = &mut self.windows[warp];
        let entry = (0..win.len)
            .map(|k| win.nth(k))
            .find(|&i| win.entries[i].token == w.token);
        let mut any_general = false;
        for op in w.dsts.iter().filter(|o| o.file == RegFileKind::General) {
            any_general = true;
            self.n.operand_writes += u64::from(op.width);
        }
        let Some(i) = entry else {
            self.inner.request_write(w, now);
            return;
        };
        let e = &mut win.entries[i];
        let state = if self.write_bypass {
            Dst::Deferred
        } else {
            Dst::Written
        };
        for d in e.dsts[..e.n_dsts as usize].iter_mut() {
            d.1 = state;
        }
        self.n.window_writes += u64::from(e.n_dsts);
        self.inner
            .ledger_mut()
            .write(Sink::OperandBuffer, u64::from(e.n_dsts));
        if self.write_bypass && any_general {
            self.n.writes_deferred += u64::from(e.n_dsts);
            // Predicate results (unbanked) need no write either.
            self.bypassed.push((w.token, now + Cycles::new(1)));
        } else {
            self.inner.request_write(w, now);
        }
    }

    fn skip_to(&mut self, now: Cycle) {
        self.inner.skip_to(now);
    }

    fn cycle(&mut self, c: &mut RfCycle<'_>) {
        let now = c.now;
        let mut k = 0;
        while k < self.bypassed.len() {
            if self.bypassed[k].1 <= now {
                c.writes_done.push(self.bypassed[k].0);
                self.bypassed.swap_remove(k);
            } else {
                k += 1;
            }
        }
        self.inner.cycle(c);
    }

    fn next_event(&self, now: Cycle) -> Option<Cycle> {
        let mine = self
            .bypassed
            .iter()
            .map(|b| b.1.max(now + Cycles::new(1)))
            .min();
        match (self.inner.next_event(now), mine) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn is_idle(&self) -> bool {
        self.inner.is_idle() && self.bypassed.is_empty()
    }

    /// The baseline's counters and, in `extra`: `bow_operand_reads`/`_writes`,
    /// `bow_forwarded` (source reads served by the window, = bank reads avoided,
    /// `bow_bank_reads_avoided`; `bow_forwarded_results`: of them, results), `bow_flushes`,
    /// `bow_window_reads`/`_writes`, `bow_writes_deferred`, `bow_writes_bypassed` (never
    /// written to the banks), `bow_writes_late` (deferred, then written),
    /// `bow_forward_waits` (forwarded sources whose older entry's operands had not all
    /// arrived at issue), `bow_no_window` (instructions issued without a window),
    /// `bow_crossbar_transfers`, `bow_arbiter_requests`.
    fn stats(&self, now: Cycle) -> RfStats {
        let mut s = self.inner.stats(now);
        s.design = "bow".into();
        let n = &self.n;
        let l = self.inner.ledger();
        for (k, v) in [
            ("operand_reads", n.operand_reads),
            ("operand_writes", n.operand_writes),
            ("forwarded", n.forwarded),
            ("bank_reads_avoided", n.forwarded),
            ("forwarded_results", n.forwarded_results),
            ("flushes", n.flushes),
            ("window_reads", l.count(Charge::BowWindowRead)),
            ("window_writes", l.count(Charge::BowWindowWrite)),
            ("writes_deferred", n.writes_deferred),
            ("writes_bypassed", n.writes_bypassed),
            ("writes_late", n.writes_late),
            ("forward_waits", n.forward_waits),
            ("no_window", n.no_window),
            ("crossbar_transfers", l.count(Charge::CrossbarTransfer)),
            ("arbiter_requests", l.count(Charge::ArbiterRequest)),
        ] {
            s.extra.insert(format!("bow_{k}"), v);
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
    use crate::kernel_info::InstHint;
    use crate::memory::{MemorySystem, SmId};
    use crate::rf::{Dispatch, DispatchPort};
    use ir::{FuncId, InstId};

    fn cfg(overrides: &[&str]) -> GpuConfig {
        crate::rf::test_support::config("rtx2060-scaled", overrides)
    }

    fn r(reg: u16) -> RegOperand {
        crate::rf::test_support::general(reg)
    }

    fn dead(reg: u16) -> RegOperand {
        let mut o = r(reg);
        o.hint.dead_after = true;
        o
    }

    /// Takes every dispatch, recording the token and the cycle.
    struct Units(Vec<(InstToken, u64)>, u64);
    impl DispatchPort for Units {
        fn try_dispatch(&mut self, d: Dispatch) -> bool {
            self.0.push((d.token, self.1));
            true
        }
    }

    struct Harness {
        rf: Bow,
        mem: MemorySystem,
        now: u64,
        token: u32,
        pc: u32,
        done: Vec<InstToken>,
        units: Units,
        /// The warp `issue` issues for.
        warp: u16,
    }

    impl Harness {
        fn new(overrides: &[&str]) -> Self {
            let c = cfg(overrides);
            let mut rf = Bow::new(&c);
            for w in 0..2 {
                rf.warp_launched(WarpLaunch {
                    warp: WarpSlot(w),
                    scheduler: 0,
                    registers_per_thread: 32,
                    cta: 0,
                });
            }
            Harness {
                rf,
                mem: MemorySystem::new(&c),
                now: 0,
                token: 0,
                pc: 0,
                done: Vec::new(),
                units: Units(Vec::new(), 0),
                warp: 0,
            }
        }

        fn step(&mut self) {
            let mut writes = Vec::new();
            self.rf.cycle(&mut RfCycle {
                now: Cycle::new(self.now),
                sm: SmId(0),
                memory: self.mem.port(SmId(0)),
                dispatch: &mut self.units,
                writes_done: &mut writes,
            });
            self.done.extend(writes);
            self.now += 1;
            self.units.1 = self.now;
        }

        /// Issues one instruction of `self.warp` (sequential unless `jump`), runs 3
        /// cycles.
        fn issue(&mut self, srcs: &[RegOperand], dsts: &[RegOperand], jump: bool) -> InstToken {
            self.issue_then(srcs, dsts, jump, 3)
        }

        /// As `issue`, running `cycles` cycles after it.
        fn issue_then(
            &mut self,
            srcs: &[RegOperand],
            dsts: &[RegOperand],
            jump: bool,
            cycles: u32,
        ) -> InstToken {
            let step = emu::WarpStep {
                func: FuncId(0),
                inst: InstId(self.pc),
                next_pc: Some((FuncId(0), InstId(if jump { 0 } else { self.pc + 1 }))),
                ..Default::default()
            };
            self.pc += 1;
            let c = Candidate {
                warp: WarpSlot(self.warp),
                scheduler: 0,
                unit: UnitKind::Sp,
                class: OpClass::Fp32,
                srcs,
                dsts,
                hint: InstHint::default(),
            };
            let now = Cycle::new(self.now);
            assert!(self.rf.can_accept(&c, now).is_ok());
            let token = InstToken(self.token);
            self.token += 1;
            self.rf.accept(
                IssuedInst {
                    token,
                    inst: c,
                    step: &step,
                },
                now,
            );
            for _ in 0..cycles {
                self.step();
            }
            token
        }

        /// The cycle `t` was dispatched in.
        fn dispatched(&self, t: InstToken) -> Option<u64> {
            self.units.0.iter().find(|d| d.0 == t).map(|d| d.1)
        }

        fn write(&mut self, token: InstToken, dsts: &[RegOperand]) {
            self.rf.request_write(
                WriteRequest {
                    token,
                    warp: WarpSlot(self.warp),
                    scheduler: 0,
                    dsts,
                },
                Cycle::new(self.now),
            );
            for _ in 0..3 {
                self.step();
            }
        }

        fn extra(&self, k: &str) -> u64 {
            self.rf.stats(Cycle::new(self.now)).extra[k]
        }
    }

    #[test]
    fn a_window_of_three_forwards_to_the_next_two_instructions_and_not_beyond() {
        // R1 read by instruction 0; read again at distance 1, 2, 3 (fillers read R9..).
        for (distance, forwarded) in [(1u64, 1u64), (2, 1), (3, 0), (4, 0)] {
            let mut h = Harness::new(&[]);
            h.issue(&[r(1)], &[], false);
            for k in 1..distance {
                h.issue(&[r(8 + k as u16)], &[], false);
            }
            h.issue(&[r(1)], &[], false);
            assert_eq!(h.extra("bow_forwarded"), forwarded, "distance {distance}");
            assert_eq!(
                h.rf.stats(Cycle::new(h.now)).reads,
                distance + 1 - forwarded,
                "distance {distance}: bank reads"
            );
        }
        // A window of 5 reaches distance 4.
        let mut h = Harness::new(&["register_file.bow.window=5"]);
        h.issue(&[r(1)], &[], false);
        for k in 1..4 {
            h.issue(&[r(8 + k)], &[], false);
        }
        h.issue(&[r(1)], &[], false);
        assert_eq!(h.extra("bow_forwarded"), 1);
    }

    #[test]
    fn a_forwarded_source_waits_for_the_older_entrys_bank_read() {
        let mut h = Harness::new(&["register_file.bank_latency=6"]);
        // Both read R1; the second issues the next cycle, while the first's read of R1
        // is still on its way from the bank.
        let a = h.issue_then(&[r(1), r(2)], &[], false, 1);
        let b = h.issue_then(&[r(1)], &[], false, 12);
        assert_eq!(h.extra("bow_forwarded"), 1);
        assert_eq!(h.extra("bow_forward_waits"), 1);
        let (da, db) = (h.dispatched(a).unwrap(), h.dispatched(b).unwrap());
        // The first's read of R1 arrives after the bank latency; the second, with
        // nothing of its own to read, would have gone two cycles after its issue.
        assert!(da >= 6, "first dispatched at {da}");
        assert!(db >= da, "second at {db}, before the first's value ({da})");
        // A value forwarded from an entry whose operands have arrived costs no wait.
        let c = h.issue(&[r(2)], &[], false);
        assert_eq!(h.extra("bow_forward_waits"), 1);
        assert!(h.dispatched(c).is_some());
    }

    #[test]
    fn with_one_window_per_sm_a_second_warp_waits_for_a_flush() {
        let mut h = Harness::new(&["register_file.bow.windows=1"]);
        h.issue(&[r(1)], &[], false);
        h.warp = 1;
        h.issue(&[r(1)], &[], false);
        h.issue(&[r(1)], &[], false);
        assert_eq!(h.extra("bow_forwarded"), 0, "warp 1 has no window");
        assert_eq!(h.extra("bow_no_window"), 2);
        // Warp 0 jumps: its window empties and goes back.
        h.warp = 0;
        h.issue(&[r(3)], &[], true);
        h.warp = 1;
        h.issue(&[r(1)], &[], false);
        h.issue(&[r(1)], &[], false);
        assert_eq!(h.extra("bow_forwarded"), 1);
        assert_eq!(h.extra("bow_no_window"), 2);
        // The default gives every warp slot its own.
        let mut h = Harness::new(&[]);
        h.issue(&[r(1)], &[], false);
        h.warp = 1;
        h.issue(&[r(1)], &[], false);
        h.issue(&[r(1)], &[], false);
        assert_eq!(h.extra("bow_forwarded"), 1);
        assert_eq!(h.extra("bow_no_window"), 0);
    }

    #[test]
    fn results_are_forwarded_and_a_taken_branch_flushes_the_window() {
        let mut h = Harness::new(&[]);
        let t = h.issue(&[r(1)], &[r(2)], false);
        h.write(t, &[r(2)]);
        assert_eq!(h.done, [t], "the bank write completed");
        h.issue(&[r(2)], &[], false);
        assert_eq!(
            (h.extra("bow_forwarded"), h.extra("bow_forwarded_results")),
            (1, 1)
        );
        // A jump: the next instruction finds nothing.
        h.issue(&[r(5)], &[], true);
        h.issue(&[r(5), r(2)], &[], false);
        assert_eq!(h.extra("bow_forwarded"), 1);
        assert_eq!(h.extra("bow_flushes"), 1);
    }

    #[test]
    fn bow_wr_skips_the_bank_write_of_a_value_that_dies_in_the_window() {
        // Without the option every result is written.
        for (bypass, bank_writes, bypassed) in [(false, 2, 0), (true, 1, 1)] {
            let mut h = Harness::new(&[&format!("register_file.bow.write_bypass={bypass}")]);
            // R2 = f(R1); R3 = g(R2) with R2 dead after: R2 never reaches the banks.
            let a = h.issue(&[r(1)], &[r(2)], false);
            h.write(a, &[r(2)]);
            assert_eq!(h.done, [a], "the scoreboard is released either way");
            let b = h.issue(&[dead(2)], &[r(3)], false);
            h.write(b, &[r(3)]);
            // R3 is not dead: it reaches the banks when it leaves the window.
            h.issue(&[r(7)], &[], false);
            h.issue(&[r(8)], &[], false);
            h.issue(&[r(9)], &[], false);
            for _ in 0..4 {
                h.step();
            }
            let s = h.rf.stats(Cycle::new(h.now));
            assert_eq!(s.writes, bank_writes, "write_bypass={bypass}");
            assert_eq!(s.extra["bow_writes_bypassed"], bypassed);
            assert_eq!(h.done, [a, b]);
            assert!(h.rf.is_idle());
        }
    }
}

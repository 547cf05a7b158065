//! `--rf orf-lrf`: the compile-time managed register-file hierarchy of Gebhart, Keckler
//! and Dally, MICRO'11 §3–§4: a last result file (LRF, one entry per thread, unified or
//! one per operand slot), an operand register file (ORF, `orf_entries` per thread) and
//! the banked MRF, with every operand's level chosen by the compiler.
//!
//! When this design is selected the load-time pipeline runs the ORF/LRF allocation pass
//! ([`compiler::orf_lrf`], configured by `register_file.orf_lrf`, which is also this
//! design's config) and its strands pass, and [`crate::kernel_info::KernelInfo`] carries
//! the result: each source operand's [`crate::kernel_info::OperandHint::level`], each
//! destination's level and [`crate::kernel_info::OperandHint::also_main`], and
//! [`crate::kernel_info::InstHint::strand_end`]. The design follows them:
//! - a source at [`HierarchyLevel::Operand`] / [`HierarchyLevel::LastResult`] is read from
//!   the ORF / LRF and never requested from the MRF banks; a `Main` source is, and with
//!   [`crate::kernel_info::OperandHint::fills_orf`] (§4.4 read-operand allocation) the
//!   value read is also written into the ORF (an ORF write, counted in `orf_lrf_orf_fills`
//!   too);
//! - a destination at `Operand` / `LastResult` is written there, and to the MRF as well
//!   when `also_main`; a `Main` destination is written to the MRF only. A result written
//!   only to the upper levels completes after one cycle, like an uncontended MRF write;
//! - the compiler decides where a warp leaves the active set
//!   ([`RegisterFile::deschedules_at_strand_ends`]): after the last instruction of a
//!   strand while any long-latency result of the warp is pending, staying out until all
//!   have arrived (§4.1: "the warp will be descheduled ... to resolve all long-latency
//!   events"), and at barriers and exits (which end strands too); the hardware's
//!   dependence rule is off. The strand bit does not say why a strand ends; at a
//!   backward-branch end with loads still in flight we deschedule too (the paper says the
//!   warp "need not" be), so no ORF/LRF value is ever expected across a deactivation.
//! - leaving the active set loses the warp's ORF and LRF contents (the entries go to
//!   another warp). A strand end by itself wipes nothing: values do not cross strands by
//!   the compiler's contract, not by hardware action.
//!
//! Entries are not named in the hints (only levels), so the model tracks validity per
//! register: a value written to the ORF/LRF is valid until the warp next leaves the
//! active set. A read the compiler sent to the ORF/LRF that finds no valid value there is
//! counted in `orf_lrf_stale_reads`. The compiler reasons per thread; the warp runs
//! divergent paths one after the other, so when one path ends a strand with a load and is
//! descheduled, lanes waiting on the other path lose ORF values the compiler kept for
//! them: a hazard of the design under SIMT divergence that the paper does not discuss,
//! which this counter measures. `orf_lrf_midstrand_deactivations` counts deactivations
//! that did not follow a strand end. Values come from the emulator either way: a stale
//! read changes no result.
//!
//! Predicates live in their own file, outside the hierarchy, as in the pass.
//!
//! Statistics in `RfStats::extra` (32-bit warp-wide register accesses):
//! `orf_lrf_operand_reads` / `orf_lrf_operand_writes` (what the instructions asked for),
//! `orf_lrf_orf_reads` / `_orf_writes`, `orf_lrf_lrf_reads` / `_lrf_writes`,
//! `orf_lrf_mrf_operand_reads` / `_mrf_operand_writes` (the operands the MRF served),
//! `orf_lrf_orf_fills` (ORF writes by read-operand allocation, included in `_orf_writes`),
//! `orf_lrf_strand_ends`, `orf_lrf_activations`, `orf_lrf_deactivations`,
//! `orf_lrf_midstrand_deactivations`, `orf_lrf_stale_reads`. Energy events: `mrf`,
//! `collector`, `orf`, `lrf` reads and writes.
//!
//! Where the hierarchy's reads come from (issue 21 item 5: why the LRF and ORF serve
//! fewer operands than the paper's): source registers by the width of their value,
//! `orf_lrf_w32_*` (32-bit values) and `orf_lrf_w64_*` (64-bit and wider, which never fit
//! the one-entry LRF and take two ORF entries), each `_reads`, `_orf_reads`,
//! `_lrf_reads`, `_mrf_reads`; and by the length of the dynamic strand they were read in
//! (the warp's instructions from one strand end to the next), `orf_lrf_strand_<len>_*`
//! for lengths 1, 2_3, 4_7, 8_15, 16_31, 32up: `_strands`, `_instructions` and the same
//! four read counts.

use crate::config::GpuConfig;
use crate::kernel_info::{HierarchyLevel, RegFileKind};
use crate::rf::baseline::Baseline;
use crate::rf::gebhart::{slot, OperandList, UpperWrites};
use crate::rf::ledger::{Ledger, Sink, Source, Transfer};
use crate::rf::{
    Candidate, IssuedInst, RegisterFile, RfCycle, RfStall, RfStats, WarpLaunch, WarpSlot,
    WriteRequest,
};
use crate::time::Cycle;

/// Source registers by the level that served them.
#[derive(Clone, Copy, Debug, Default)]
struct ServedBy {
    reads: u64,
    orf: u64,
    lrf: u64,
    mrf: u64,
}

impl ServedBy {
    #[inline]
    fn add(&mut self, level: HierarchyLevel, n: u64) {
        self.reads += n;
        match level {
            HierarchyLevel::Main => self.mrf += n,
            HierarchyLevel::Operand => self.orf += n,
            HierarchyLevel::LastResult => self.lrf += n,
        }
    }

    fn accumulate(&mut self, o: &ServedBy) {
        self.reads += o.reads;
        self.orf += o.orf;
        self.lrf += o.lrf;
        self.mrf += o.mrf;
    }

    fn put(&self, prefix: &str, extra: &mut std::collections::BTreeMap<String, u64>) {
        for (k, v) in [
            ("reads", self.reads),
            ("orf_reads", self.orf),
            ("lrf_reads", self.lrf),
            ("mrf_reads", self.mrf),
        ] {
            extra.insert(format!("orf_lrf_{prefix}_{k}"), v);
        }
    }
}

/// Names of the strand-length buckets: powers of two of instructions, 32 and up last.
const STRAND_BUCKETS: [&str; 6] = ["1", "2_3", "4_7", "8_15", "16_31", "32up"];

/// The bucket of a strand of `len` instructions.
fn strand_bucket(len: u32) -> usize {
    (31 - len.max(1).leading_zeros()).min(5) as usize
}

/// One strand-length bucket: strands, their instructions and their source registers.
#[derive(Clone, Copy, Debug, Default)]
struct StrandBucket {
    strands: u64,
    instructions: u64,
    served: ServedBy,
}

/// Per warp slot: the current activation's number and, per register, the activation in
/// which its ORF/LRF copy was written (`u32::MAX`: none).
#[derive(Clone, Debug, Default)]
struct WarpLevels {
    epoch: u32,
    orf: Vec<u32>,
    lrf: Vec<u32>,
    /// The last accepted instruction ended a strand.
    at_strand_end: bool,
    /// The dynamic strand in progress: its instructions and source registers so far.
    strand_instructions: u32,
    strand_served: ServedBy,
}

impl WarpLevels {
    fn valid(stamps: &[u32], reg: u16, epoch: u32) -> bool {
        stamps.get(reg as usize) == Some(&epoch)
    }

    fn stamp(stamps: &mut Vec<u32>, reg: u16, epoch: u32) {
        let i = reg as usize;
        if stamps.len() <= i {
            stamps.resize(i + 1, u32::MAX);
        }
        stamps[i] = epoch;
    }

    fn invalidate(&mut self) {
        // Skip u32::MAX, the "never written" stamp.
        self.epoch = (self.epoch + 1) % u32::MAX;
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct Counters {
    operand_reads: u64,
    operand_writes: u64,
    orf_reads: u64,
    orf_writes: u64,
    lrf_reads: u64,
    lrf_writes: u64,
    mrf_operand_reads: u64,
    mrf_operand_writes: u64,
    orf_fills: u64,
    strand_ends: u64,
    activations: u64,
    deactivations: u64,
    midstrand_deactivations: u64,
    stale_reads: u64,
    /// 32-bit values, and 64-bit and wider ones.
    by_width: [ServedBy; 2],
    by_strand: [StrandBucket; STRAND_BUCKETS.len()],
}

impl Counters {
    /// Files warp `w`'s strand in progress under its length and starts a new one.
    fn end_strand(&mut self, w: &mut WarpLevels) {
        if w.strand_instructions == 0 {
            return;
        }
        let b = &mut self.by_strand[strand_bucket(w.strand_instructions)];
        b.strands += 1;
        b.instructions += u64::from(w.strand_instructions);
        b.served.accumulate(&w.strand_served);
        w.strand_instructions = 0;
        w.strand_served = ServedBy::default();
    }
}

/// The compiler-managed ORF/LRF in front of the baseline's MRF. See the module docs.
pub struct OrfLrf {
    mrf: Baseline,
    warps: Vec<WarpLevels>,
    /// Per in-flight token: the producing activation's epoch.
    token_epoch: Vec<u32>,
    upper: UpperWrites,
    n: Counters,
}

impl OrfLrf {
    /// The design for a validated config.
    pub fn new(cfg: &GpuConfig) -> Self {
        let mut mrf = Baseline::new(cfg);
        mrf.rename_design("orf-lrf");
        OrfLrf {
            mrf,
            warps: vec![WarpLevels::default(); cfg.sm.max_warps as usize],
            token_epoch: Vec::with_capacity(256),
            upper: UpperWrites::default(),
            n: Counters::default(),
        }
    }
}

impl RegisterFile for OrfLrf {
    fn name(&self) -> &'static str {
        "orf-lrf"
    }

    fn warp_launched(&mut self, l: WarpLaunch) {
        let w = slot(&mut self.warps, l.warp.index());
        let regs = l.registers_per_thread as usize;
        w.orf.clear();
        w.orf.resize(regs, u32::MAX);
        w.lrf.clear();
        w.lrf.resize(regs, u32::MAX);
        w.invalidate();
        w.at_strand_end = true;
        self.mrf.warp_launched(l);
    }

    fn warp_exited(&mut self, warp: WarpSlot) {
        let w = slot(&mut self.warps, warp.index());
        self.n.end_strand(w);
        w.invalidate();
        self.mrf.warp_exited(warp);
    }

    fn warp_activated(&mut self, _warp: WarpSlot) {
        self.n.activations += 1;
    }

    fn warp_deactivated(&mut self, warp: WarpSlot) {
        self.n.deactivations += 1;
        let w = slot(&mut self.warps, warp.index());
        if !w.at_strand_end {
            self.n.midstrand_deactivations += 1;
        }
        w.invalidate();
    }

    fn deschedules_at_strand_ends(&self) -> bool {
        true
    }

    fn can_accept(&mut self, c: &Candidate<'_>, now: Cycle) -> Result<(), RfStall> {
        self.mrf.can_accept(c, now)
    }

    fn accept(&mut self, i: IssuedInst<'_>, now: Cycle) {
        let w = slot(&mut self.warps, i.inst.warp.index());
        let mut to_mrf = OperandList::new();
        for op in i
            .inst
            .srcs
            .iter()
            .filter(|o| o.file == RegFileKind::General)
        {
            let n = u64::from(op.width);
            self.n.operand_reads += n;
            self.n.by_width[usize::from(op.width > 1)].add(op.hint.level, n);
            w.strand_served.add(op.hint.level, n);
            let stamps = match op.hint.level {
                HierarchyLevel::Main => {
                    self.n.mrf_operand_reads += n;
                    to_mrf.push(*op);
                    if op.hint.fills_orf {
                        // §4.4: the MRF read also loads the ORF.
                        self.n.orf_writes += n;
                        self.n.orf_fills += n;
                        self.mrf.ledger_mut().transfer(Transfer::MrfReadFillsOrf, n);
                        for reg in op.regs() {
                            WarpLevels::stamp(&mut w.orf, reg, w.epoch);
                        }
                    }
                    continue;
                }
                HierarchyLevel::Operand => {
                    self.n.orf_reads += n;
                    self.mrf.ledger_mut().deliver(Source::Orf, n);
                    &w.orf
                }
                HierarchyLevel::LastResult => {
                    self.n.lrf_reads += n;
                    self.mrf.ledger_mut().deliver(Source::Lrf, n);
                    &w.lrf
                }
            };
            for reg in op.regs() {
                if !WarpLevels::valid(stamps, reg, w.epoch) {
                    self.n.stale_reads += 1;
                }
            }
        }
        *slot(&mut self.token_epoch, i.token.0 as usize) = w.epoch;
        w.at_strand_end = i.inst.hint.strand_end;
        w.strand_instructions += 1;
        if i.inst.hint.strand_end {
            self.n.strand_ends += 1;
            self.n.end_strand(w);
        }
        let inst = Candidate {
            srcs: to_mrf.as_slice(),
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
        let epoch = self
            .token_epoch
            .get(wr.token.0 as usize)
            .copied()
            .unwrap_or(u32::MAX);
        let w = slot(&mut self.warps, wr.warp.index());
        let mut to_mrf = OperandList::new();
        for op in wr.dsts.iter().filter(|o| o.file == RegFileKind::General) {
            let n = u64::from(op.width);
            self.n.operand_writes += n;
            let stamps = match op.hint.level {
                HierarchyLevel::Main => None,
                HierarchyLevel::Operand => {
                    self.n.orf_writes += n;
                    self.mrf.ledger_mut().write(Sink::Orf, n);
                    Some(&mut w.orf)
                }
                HierarchyLevel::LastResult => {
                    self.n.lrf_writes += n;
                    self.mrf.ledger_mut().write(Sink::Lrf, n);
                    Some(&mut w.lrf)
                }
            };
            if let Some(stamps) = stamps {
                for reg in op.regs() {
                    WarpLevels::stamp(stamps, reg, epoch);
                }
            }
            if op.hint.level == HierarchyLevel::Main || op.hint.also_main {
                self.n.mrf_operand_writes += n;
                to_mrf.push(*op);
            }
        }
        let general = wr.dsts.iter().any(|o| o.file == RegFileKind::General);
        if general && to_mrf.as_slice().is_empty() {
            self.upper.push(wr.token, now);
        } else {
            self.mrf.request_write(
                WriteRequest {
                    dsts: to_mrf.as_slice(),
                    ..wr
                },
                now,
            );
        }
    }

    fn skip_to(&mut self, now: Cycle) {
        self.mrf.skip_to(now);
    }

    fn cycle(&mut self, c: &mut RfCycle<'_>) {
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
        for (k, v) in [
            ("operand_reads", n.operand_reads),
            ("operand_writes", n.operand_writes),
            ("orf_reads", n.orf_reads),
            ("orf_writes", n.orf_writes),
            ("lrf_reads", n.lrf_reads),
            ("lrf_writes", n.lrf_writes),
            ("mrf_operand_reads", n.mrf_operand_reads),
            ("mrf_operand_writes", n.mrf_operand_writes),
            ("orf_fills", n.orf_fills),
            ("strand_ends", n.strand_ends),
            ("activations", n.activations),
            ("deactivations", n.deactivations),
            ("midstrand_deactivations", n.midstrand_deactivations),
            ("stale_reads", n.stale_reads),
        ] {
            s.extra.insert(format!("orf_lrf_{k}"), v);
        }
        n.by_width[0].put("w32", &mut s.extra);
        n.by_width[1].put("w64", &mut s.extra);
        for (name, b) in STRAND_BUCKETS.iter().zip(&n.by_strand) {
            let prefix = format!("strand_{name}");
            s.extra
                .insert(format!("orf_lrf_{prefix}_strands"), b.strands);
            s.extra
                .insert(format!("orf_lrf_{prefix}_instructions"), b.instructions);
            b.served.put(&prefix, &mut s.extra);
        }
        s
    }

    fn ledger(&self) -> Ledger {
        self.mrf.ledger()
    }
}

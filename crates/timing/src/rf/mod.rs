//! Operand delivery: the one interface every register-file design implements, and the
//! designs.
//!
//! The SM pipeline ([`crate::sm`]) knows a register file only through [`RegisterFile`].
//! Per cycle, in the SM's reverse stage order, it:
//! 1. hands finished results to [`RegisterFile::request_write`] (writeback stage);
//! 2. calls [`RegisterFile::cycle`]: the design arbitrates its banks (writes first in the
//!    baseline), completes writes (reported in [`RfCycle::writes_done`], which releases
//!    the scoreboard), and offers instructions whose operands are all read to the
//!    execution units through [`RfCycle::dispatch`] (operand collection / read stage);
//! 3. asks [`RegisterFile::can_accept`] for each warp the scheduler considers and
//!    [`RegisterFile::accept`]s the one it issues (issue stage).
//!
//! Warps are named by their SM slot ([`WarpSlot`]), instructions in flight by an
//! [`InstToken`] the SM allocates at issue and frees at retirement.
//!
//! # How each design of the roadmap maps onto the interface
//! - **Baseline** ([`baseline`]): banked MRF, collector units, arbiter with write
//!   priority. `can_accept` = a free collector of the right kind; `cycle` = arbitration.
//! - **Ideal** ([`ideal`]): the baseline with unlimited bank ports (no conflicts, same
//!   collectors and latency); capacity only affects occupancy
//!   (`GpuConfig::register_capacity`): the baseline's for `ideal`, none for
//!   `ideal-unlimited`.
//! - **RFC** (Gebhart ISCA'11: hardware register-file cache + two-level scheduler): the
//!   cache lives inside the design; [`RegisterFile::warp_activated`] /
//!   [`RegisterFile::warp_deactivated`] are called by the two-level scheduler when a warp
//!   enters / leaves the active set (deactivation flushes its dirty entries to the MRF,
//!   timed through the design's own banks); `accept` looks sources up in the cache and
//!   only misses go to the MRF arbiter; `request_write` allocates in the cache.
//! - **ORF/LRF** (Gebhart MICRO'11): reads [`RegOperand::hint`] (`level`, `also_main`)
//!   of each source and destination from [`crate::kernel_info::KernelInfo`]: ORF/LRF operands skip the MRF
//!   banks, counts per level go to the ledger. Deactivation invalidates the warp's
//!   ORF/LRF; [`RegisterFile::deschedules_at_strand_ends`] (an additive hook, default
//!   false) makes the two-level scheduler deactivate a warp only at strand ends while it
//!   has long-latency results pending, so the compiler decides where warps leave the
//!   active set ([`gebhart`]).
//! - **LTRF** ([`ltrf`]: register-intervals, prefetch into a partitioned RF cache, slow
//!   MRF): the design copies each kernel's interval membership and working sets
//!   ([`crate::kernel_info::FunctionInfo::intervals`], `interval_of`) in
//!   [`RegisterFile::kernel_started`] and follows each warp's next PC from
//!   [`IssuedInst::step`]; when a warp's next instruction is in an interval other than the
//!   resident one (at [`InstHint::interval_entry`], or coming back into one), `can_accept`
//!   returns [`RfStall::NotResident`] and starts the prefetch of the working set as MRF
//!   reads the design arbitrates in `cycle` (the "prefetch operation" lives inside the
//!   design, not in the warp's instruction stream); the warp control block (which warps
//!   own cache partitions) is design state updated by the activate/deactivate hooks of
//!   the two-level scheduler, which [`scheduling`] selects for the LTRF designs; the slow
//!   MRF is `register_file.technology`'s ([`technology`]: banks, occupancy, latency
//!   relative to `register_file.bank_latency`, network).
//! - **CERF** ([`cerf`], registers and L1D lines in one storage): under
//!   `design = "cerf"` the memory system's L1D is the integrated array
//!   (`GpuConfig::l1d_array`) and register lines share its ways; [`RfCycle::memory`] and
//!   [`RfCycle::sm`] give the design its SM's `SmPort::*_register` methods for its tag
//!   lookups, allocations and releases; spills are the array's write-backs, fills are
//!   `Local` loads the design issues itself. The tagging stage is
//!   `Baseline::accept_after`.
//! - **Malekeh** (caching collector units, cache-aware issue, stall threshold STHLD):
//!   collectors that keep values are design state; [`RegisterFile::ranks_warps`] +
//!   [`RegisterFile::rank`] let the scheduler prefer warps whose operands hit in the
//!   collectors; STHLD is a `can_accept` refusal ([`RfStall::Design`]) for warps over
//!   the threshold; reuse distances come from [`crate::kernel_info::OperandHint::reuse_distance`].
//! - **WIR** (warp instruction reuse): [`IssuedInst::step`] carries the emulator's
//!   [`emu::WarpStep`] with the destination values and active mask; a design keeps its
//!   own value table, and when an instruction is reused it dispatches it with
//!   [`Dispatch::bypass_execution`], which skips the execution unit and goes straight to
//!   writeback (the SM still writes back through `request_write`).
//! - **Reuse cache** ([`reuse_cache`], Huerta et al. MICRO'25): per bank one entry of
//!   three operand-slot sub-entries in front of the baseline's banks; `accept` looks each
//!   source up by bank and slot (the compiler's reuse bits, [`RegOperand::hint`], fill
//!   it) and sends only misses to the arbiter.
//! - **Extra pipeline stages**: a design that adds a stage delays the readiness of the
//!   instructions it accepts by that many cycles inside `cycle` (and reports it in
//!   `next_event`); the SM needs no change.
//!
//! Hooks added for LTRF, with defaults that keep every other design as it was:
//! [`RegisterFile::kernel_started`] (the static facts of the kernel about to run) and
//! [`scheduling`] (the scheduler a design is defined with).
//!
//! # Energy: one ledger
//! No design prices or names an energy event. Each records what its registers did in its
//! [`ledger::Ledger`] (which source served each operand, where each result landed, which
//! values moved between structures), and the ledger's rules, written once, turn that into
//! event counts ([`RegisterFile::ledger`], [`RegisterFile::energy_events`]). The SM counts
//! issued source and result registers itself ([`ledger::OperandCounts`]); the ledger
//! invariant test (`tests/ledger_invariant.rs`) checks every design against them.
//!
//! Invariants: `accept` succeeds whenever `can_accept` said yes in the same cycle;
//! every accepted instruction is offered for dispatch exactly until it is taken; every
//! `request_write` is eventually reported in `writes_done`. Per-cycle paths allocate
//! nothing.

pub mod baseline;
pub mod bow;
pub mod cerf;
pub mod cerf_banks;
pub mod gebhart;
pub mod ideal;
pub mod ledger;
pub mod ltrf;
pub mod malekeh;
pub mod reuse_cache;
pub mod technology;
pub mod wir;

#[cfg(test)]
mod test_support;

use std::collections::BTreeMap;

use compiler::pipeline::PassSet;
use serde::Serialize;

use crate::config::{GpuConfig, OpClass, RegisterFileDesign, SchedulerPolicy, UnitKind};
use crate::kernel_info::{InstHint, KernelInfo, RegOperand};
use crate::memory::{SmId, SmPort};
use crate::time::Cycle;

/// A warp's slot in its SM, `0..sm.max_warps`. Bank mappings use it as the warp number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WarpSlot(pub u16);

impl WarpSlot {
    /// The slot as an index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// An instruction in flight in one SM, from issue to retirement. Tokens are dense and
/// reused after retirement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct InstToken(pub u32);

/// A warp becoming resident.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WarpLaunch {
    /// Its slot.
    pub warp: WarpSlot,
    /// The warp scheduler it belongs to.
    pub scheduler: u16,
    /// Architectural registers per thread of its kernel.
    pub registers_per_thread: u32,
    /// The SM's slot of the warp's thread block (warps of one block share it).
    pub cta: u16,
}

/// A warp instruction the scheduler is considering.
#[derive(Clone, Copy, Debug)]
pub struct Candidate<'a> {
    /// The warp.
    pub warp: WarpSlot,
    /// Its scheduler.
    pub scheduler: u16,
    /// The execution unit type it will need.
    pub unit: UnitKind,
    /// Its opcode class.
    pub class: OpClass,
    /// Source register operands (with hints).
    pub srcs: &'a [RegOperand],
    /// Destination register operands (with hints).
    pub dsts: &'a [RegOperand],
    /// Instruction hints.
    pub hint: InstHint,
}

/// An instruction being issued into operand collection.
#[derive(Clone, Copy, Debug)]
pub struct IssuedInst<'a> {
    /// Its token (echoed back in [`Dispatch`] and `writes_done`).
    pub token: InstToken,
    /// What the scheduler considered.
    pub inst: Candidate<'a>,
    /// What the emulator did when executing it at issue: active mask, destination
    /// values, addresses.
    pub step: &'a emu::WarpStep,
}

/// Why a design cannot accept a warp's instruction now.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RfStall {
    /// No free collector unit (of the instruction's kind).
    NoFreeCollector,
    /// No free collector, and the occupied ones wait for bank conflicts.
    BankConflict,
    /// No free collector, and occupied ones have their operands but their execution
    /// unit is busy.
    PipelineBusy,
    /// The warp's working set is not resident in the design's upper level (LTRF).
    NotResident,
    /// A design-specific refusal (e.g. Malekeh's stall threshold).
    Design,
}

/// A result to be written to the register file.
#[derive(Clone, Copy, Debug)]
pub struct WriteRequest<'a> {
    /// The instruction.
    pub token: InstToken,
    /// Its warp.
    pub warp: WarpSlot,
    /// Its scheduler.
    pub scheduler: u16,
    /// The registers written.
    pub dsts: &'a [RegOperand],
}

/// An instruction whose operands are ready, offered to the execution units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dispatch {
    /// The instruction.
    pub token: InstToken,
    /// The unit type it needs.
    pub unit: UnitKind,
    /// WIR: the result is known without executing (reused); skip the unit.
    pub bypass_execution: bool,
}

/// The execution units, as the register file sees them.
pub trait DispatchPort {
    /// Starts `d` on a free unit at this cycle; false (nothing changes) if none is free.
    fn try_dispatch(&mut self, d: Dispatch) -> bool;

    /// After [`DispatchPort::try_dispatch`] refused `d`: the first cycle at which a unit
    /// that could take it is free, so that a design waiting only for the units sleeps
    /// until then instead of asking every cycle. A unit's free time only moves later (when
    /// it takes an instruction), so the answer stays a lower bound until the design asks
    /// again. The default, `Cycle::ZERO`, means "unknown: ask again next cycle".
    fn free_at(&self, _d: Dispatch) -> Cycle {
        Cycle::ZERO
    }
}

/// What a design may use and must report during [`RegisterFile::cycle`].
pub struct RfCycle<'a> {
    /// The current cycle.
    pub now: Cycle,
    /// The SM.
    pub sm: SmId,
    /// The SM's port on the memory system (CERF uses the L1D's storage).
    pub memory: SmPort<'a>,
    /// The execution units.
    pub dispatch: &'a mut dyn DispatchPort,
    /// Output: instructions whose register writes completed this cycle.
    pub writes_done: &'a mut Vec<InstToken>,
}

/// A scheduler decision a design may want to know about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchedulerEvent {
    /// The warp issued an instruction this cycle.
    Issued(WarpSlot),
    /// The warp stalled this cycle with its instruction ready but refused by the design.
    Refused(WarpSlot),
}

/// One energy-relevant event count: `count` accesses of kind `access` to `structure`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EnergyEvent {
    /// The structure (`"mrf"`, `"collector"`, `"orf"`, …).
    pub structure: &'static str,
    /// `"read"` or `"write"`.
    pub access: &'static str,
    /// Warp-wide 32-bit register accesses.
    pub count: u64,
}

/// Statistics every design reports (serde, deterministic).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RfStats {
    /// The design's name.
    pub design: String,
    /// Warp-wide register reads per MRF bank.
    pub reads_per_bank: Vec<u64>,
    /// Warp-wide register writes per MRF bank.
    pub writes_per_bank: Vec<u64>,
    /// Total reads (sum of `reads_per_bank`).
    pub reads: u64,
    /// Total writes.
    pub writes: u64,
    /// Read requests refused by the arbiter because the bank's read ports were taken,
    /// one per request per cycle.
    pub read_bank_conflicts: u64,
    /// Write requests delayed because the bank's write ports were taken.
    pub write_bank_conflicts: u64,
    /// Collector units per SM (0 if the design has no limit).
    pub collector_units: u64,
    /// Occupied collector units integrated over cycles (divide by cycles for the mean
    /// occupancy).
    pub collector_busy_cycles: u64,
    /// Cycles with every collector unit occupied.
    pub collectors_full_cycles: u64,
    /// Design-specific counters.
    pub extra: BTreeMap<String, u64>,
    /// Design-specific time series of `(cycle, value)` points, e.g. Malekeh's STHLD per
    /// SM (`malekeh_sthld_sm<N>`); absent from the JSON when empty.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub series: BTreeMap<String, Vec<(u64, u64)>>,
}

impl RfStats {
    /// Adds `o`'s counters (per-bank vectors element-wise).
    pub fn accumulate(&mut self, o: &RfStats) {
        if self.design.is_empty() {
            self.design = o.design.clone();
        }
        add_vec(&mut self.reads_per_bank, &o.reads_per_bank);
        add_vec(&mut self.writes_per_bank, &o.writes_per_bank);
        self.reads += o.reads;
        self.writes += o.writes;
        self.read_bank_conflicts += o.read_bank_conflicts;
        self.write_bank_conflicts += o.write_bank_conflicts;
        self.collector_units = self.collector_units.max(o.collector_units);
        self.collector_busy_cycles += o.collector_busy_cycles;
        self.collectors_full_cycles += o.collectors_full_cycles;
        for (k, v) in &o.extra {
            *self.extra.entry(k.clone()).or_default() += v;
        }
        for (k, v) in &o.series {
            self.series
                .entry(k.clone())
                .or_default()
                .extend_from_slice(v);
        }
    }

    /// `self - before`, counter by counter (for per-kernel figures).
    pub fn since(&self, before: &RfStats) -> RfStats {
        let sub = |a: &[u64], b: &[u64]| -> Vec<u64> {
            a.iter()
                .enumerate()
                .map(|(i, x)| x - b.get(i).copied().unwrap_or(0))
                .collect()
        };
        RfStats {
            design: self.design.clone(),
            reads_per_bank: sub(&self.reads_per_bank, &before.reads_per_bank),
            writes_per_bank: sub(&self.writes_per_bank, &before.writes_per_bank),
            reads: self.reads - before.reads,
            writes: self.writes - before.writes,
            read_bank_conflicts: self.read_bank_conflicts - before.read_bank_conflicts,
            write_bank_conflicts: self.write_bank_conflicts - before.write_bank_conflicts,
            collector_units: self.collector_units,
            collector_busy_cycles: self.collector_busy_cycles - before.collector_busy_cycles,
            collectors_full_cycles: self.collectors_full_cycles - before.collectors_full_cycles,
            extra: self
                .extra
                .iter()
                .map(|(k, v)| (k.clone(), v - before.extra.get(k).copied().unwrap_or(0)))
                .collect(),
            // Series only grow: the points after `before`'s.
            series: self
                .series
                .iter()
                .map(|(k, v)| {
                    let seen = before.series.get(k).map_or(0, Vec::len).min(v.len());
                    (k.clone(), v[seen..].to_vec())
                })
                .filter(|(_, v)| !v.is_empty())
                .collect(),
        }
    }
}

fn add_vec(a: &mut Vec<u64>, b: &[u64]) {
    if a.len() < b.len() {
        a.resize(b.len(), 0);
    }
    for (x, y) in a.iter_mut().zip(b) {
        *x += y;
    }
}

/// The register-file interface of one SM. See the module docs for the protocol and for
/// how each design of the roadmap maps onto it. `Send`, so that a simulator can live in
/// the CUDA runtime's global state.
pub trait RegisterFile: Send {
    /// The design's name (`"baseline"`, `"ideal"`).
    fn name(&self) -> &'static str;

    /// A kernel starts on the SM: the design may copy the static facts it needs (LTRF:
    /// register-interval membership and working sets). Called before its first CTA.
    fn kernel_started(&mut self, _info: &KernelInfo) {}

    /// A warp became resident in `w.warp`.
    fn warp_launched(&mut self, w: WarpLaunch);
    /// Right after [`RegisterFile::warp_launched`]: which warp of the grid the slot holds
    /// (its CTA's index and its number within the CTA), for a design that follows a
    /// per-warp profile of the launch (Malekeh's trace-exact reuse distances).
    fn warp_placed(&mut self, _warp: WarpSlot, _cta: [u32; 3], _warp_in_cta: u32) {}
    /// The warp in `warp` exited and drained; its slot may be reused.
    fn warp_exited(&mut self, warp: WarpSlot);
    /// Two-level scheduling: the warp entered the active set.
    fn warp_activated(&mut self, _warp: WarpSlot) {}
    /// Two-level scheduling: the warp left the active set.
    fn warp_deactivated(&mut self, _warp: WarpSlot) {}
    /// Two-level scheduling under compiler control (Gebhart MICRO'11 §4.1): when true, a
    /// warp leaves the active set only where the compiler says — after the last
    /// instruction of a strand ([`InstHint::strand_end`]) while any of its long-latency
    /// results is pending, staying out until all have arrived — (and at barriers and
    /// exits), instead of the scheduler's own rule (a dependence on a pending
    /// long-latency result).
    fn deschedules_at_strand_ends(&self) -> bool {
        false
    }
    /// A scheduler decision (for designs that learn from them).
    fn scheduler_event(&mut self, _e: SchedulerEvent) {}

    /// Whether the design wants to order the scheduler's candidates ([`Self::rank`]).
    fn ranks_warps(&self) -> bool {
        false
    }
    /// Priority of a candidate (higher first) when [`Self::ranks_warps`]; ties keep the
    /// scheduling policy's order.
    fn rank(&self, _c: &Candidate<'_>) -> u32 {
        0
    }

    /// Whether `c` could be accepted for operand collection this cycle, or why not.
    /// Must not change state that affects timing (it may start an LTRF prefetch).
    fn can_accept(&mut self, c: &Candidate<'_>, now: Cycle) -> Result<(), RfStall>;
    /// Takes an issued instruction into operand collection. Called only after
    /// `can_accept` returned `Ok` in the same cycle.
    fn accept(&mut self, i: IssuedInst<'_>, now: Cycle);

    /// A result is ready to be written (executed, or loaded from memory) at `now`.
    fn request_write(&mut self, w: WriteRequest<'_>, now: Cycle);

    /// The SM is evaluated at `now` after skipping the cycles since the design's last
    /// [`RegisterFile::cycle`], which [`RegisterFile::next_event`] said could change
    /// nothing: the design counts what each of them would have counted (a request whose
    /// bank's ports stay taken is refused, and counted as a conflict, every cycle).
    /// Called first in every cycle of the SM, before anything else reaches the design.
    fn skip_to(&mut self, now: Cycle);

    /// One cycle of the design: complete writes, arbitrate, dispatch ready instructions.
    fn cycle(&mut self, c: &mut RfCycle<'_>);

    /// The next cycle at which the design can make progress on its own (a read or write
    /// completing, a request waiting for arbitration), or `None` when it holds nothing.
    fn next_event(&self, now: Cycle) -> Option<Cycle>;

    /// Whether the design holds no instruction and no pending write.
    fn is_idle(&self) -> bool;

    /// Statistics so far. `now` closes time-integrated counters.
    fn stats(&self, now: Cycle) -> RfStats;

    /// What the design's registers did so far, and the events it cost, recorded by the
    /// rules of [`ledger`] (CERF adds its array's L1D-side accesses, WIR its tables).
    fn ledger(&self) -> ledger::Ledger;

    /// Energy-relevant event counts so far: the ledger's, never a design's own pricing.
    fn energy_events(&self) -> Vec<EnergyEvent> {
        self.ledger().events()
    }
}

/// The design selected by `cfg.register_file.design`, for SM `sm`.
pub fn build(cfg: &GpuConfig) -> Box<dyn RegisterFile> {
    match cfg.register_file.design {
        // The modern core has no collectors in front of its banks: its baseline is the
        // reuse cache's Allocate stage and banks with the cache off.
        RegisterFileDesign::Baseline if cfg.sm.core == crate::config::Core::Modern => {
            Box::new(reuse_cache::ReuseCache::without_cache(cfg))
        }
        RegisterFileDesign::Baseline => Box::new(baseline::Baseline::new(cfg)),
        RegisterFileDesign::Ideal | RegisterFileDesign::IdealUnlimited => {
            Box::new(ideal::Ideal::new(cfg))
        }
        RegisterFileDesign::Ltrf | RegisterFileDesign::LtrfPlus | RegisterFileDesign::LtrfConf => {
            Box::new(ltrf::Ltrf::new(cfg))
        }
        RegisterFileDesign::Rfc => Box::new(gebhart::rfc::Rfc::new(cfg)),
        RegisterFileDesign::OrfLrf => Box::new(gebhart::orf_lrf::OrfLrf::new(cfg)),
        RegisterFileDesign::Malekeh => Box::new(malekeh::Malekeh::new(cfg)),
        RegisterFileDesign::Bow => Box::new(bow::Bow::new(cfg)),
        RegisterFileDesign::Wir => Box::new(wir::Wir::new(cfg)),
        RegisterFileDesign::Cerf => Box::new(cerf::Cerf::new(cfg)),
        RegisterFileDesign::ReuseCache => Box::new(reuse_cache::ReuseCache::new(cfg)),
    }
}

/// The warp-scheduling policy and active-set size per scheduler the SM runs with the
/// design selected by `cfg`: `sm.scheduler` and `sm.active_warps`, except for designs
/// defined with a two-level scheduler whose active set is their cache's partitions
/// (LTRF §3.2: `register_file.ltrf.partitions` active warps per SM).
pub fn scheduling(cfg: &GpuConfig) -> (SchedulerPolicy, u32) {
    match cfg.register_file.design {
        RegisterFileDesign::Ltrf | RegisterFileDesign::LtrfPlus | RegisterFileDesign::LtrfConf => (
            SchedulerPolicy::TwoLevel,
            cfg.register_file
                .ltrf
                .active_warps_per_scheduler(cfg.sm.schedulers),
        ),
        _ => (cfg.sm.scheduler, cfg.sm.active_warps),
    }
}

/// The compiler passes the design selected by `cfg` needs at load time (see
/// `compiler::pipeline`): each design declares its set here, and the CUDA runtime and
/// `regsim compile --emit annotations` run exactly these, so the hints in
/// [`crate::kernel_info::KernelInfo`] are filled for the designs that read them.
pub fn required_passes(cfg: &GpuConfig) -> PassSet {
    let reuse_schedule = cfg
        .register_file
        .reuse_cache
        .schedule_for(cfg.register_file.design)
        == crate::config::ReuseSchedule::Reuse;
    // The load schedule is the compiler's, whatever the design (`sm.load_schedule`).
    let load_schedule = cfg.sm.load_schedule;
    let passes = match cfg.register_file.design {
        // The liveness bits mark each register's last read (CERF §III.D).
        RegisterFileDesign::Cerf => PassSet {
            liveness_bits: true,
            ..PassSet::default()
        },
        RegisterFileDesign::Ltrf | RegisterFileDesign::LtrfPlus | RegisterFileDesign::LtrfConf => {
            ltrf::required_passes(cfg)
        }
        // The dead bits elide writebacks of dead values (Gebhart MICRO'11 §2.2).
        RegisterFileDesign::Rfc => PassSet {
            liveness_bits: true,
            ..PassSet::default()
        },
        // The pass's config is the design's (`register_file.orf_lrf`).
        RegisterFileDesign::OrfLrf => PassSet {
            orf_lrf: Some(cfg.register_file.orf_lrf.clone()),
            ..PassSet::default()
        },
        // The modern core's baseline may run the reuse-cache design's program order
        // (`register_file.reuse_cache.schedule`; validation allows it there only).
        RegisterFileDesign::Baseline => PassSet {
            reuse_schedule,
            ..PassSet::default()
        },
        // WIR works on values at run time; it needs no compiler pass.
        RegisterFileDesign::Ideal
        | RegisterFileDesign::IdealUnlimited
        | RegisterFileDesign::Wir => PassSet::default(),
        // Distances to each operand's next read; the design compares them with its RTHLD.
        RegisterFileDesign::Malekeh => PassSet {
            reuse_distance: Some(compiler::reuse_distance::ReuseDistanceConfig {
                rthld: cfg.register_file.malekeh.rthld,
            }),
            ..PassSet::default()
        },
        // The reuse bits fill the cache (MICRO'25), on the order ptxas-like scheduling
        // gives unless the config asks for PTX order.
        RegisterFileDesign::ReuseCache => PassSet {
            reuse_bits: true,
            reuse_schedule,
            ..PassSet::default()
        },
        // BOW-WR reads the dead-after bits.
        RegisterFileDesign::Bow => PassSet {
            liveness_bits: cfg.register_file.bow.write_bypass,
            ..PassSet::default()
        },
    };
    PassSet {
        load_schedule,
        ..passes
    }
}

/// Bank of 32-bit register `reg` of warp slot `warp` under the configured mapping:
/// `(reg + warp) mod banks` or `reg mod banks`, within the scheduler's partition when
/// `partition_by_scheduler`.
#[derive(Clone, Copy, Debug)]
pub struct BankMap {
    banks: u32,
    per_partition: u32,
    partitioned: bool,
    plus_warp: bool,
}

impl BankMap {
    /// The mapping of a validated config.
    pub fn new(cfg: &GpuConfig) -> Self {
        let rf = &cfg.register_file;
        let partitioned = rf.partition_by_scheduler && cfg.sm.schedulers > 1;
        let banks = rf.mrf_banks();
        BankMap {
            banks,
            per_partition: if partitioned {
                (banks / cfg.sm.schedulers).max(1)
            } else {
                banks
            },
            partitioned,
            plus_warp: rf.bank_mapping == crate::config::BankMapping::RegisterPlusWarp,
        }
    }

    /// Number of banks.
    pub fn banks(&self) -> usize {
        self.banks as usize
    }

    /// The bank of `reg` for `warp` (of scheduler `scheduler`).
    #[inline]
    pub fn bank(&self, reg: u16, warp: WarpSlot, scheduler: u16) -> usize {
        let r = u32::from(reg) + if self.plus_warp { u32::from(warp.0) } else { 0 };
        let within = r % self.per_partition;
        let base = if self.partitioned {
            u32::from(scheduler) * self.per_partition
        } else {
            0
        };
        ((base + within) % self.banks) as usize
    }
}

//! The Latency-Tolerant Register File (Sadrosadati et al., "Enabling High-Capacity,
//! Latency-Tolerant, and Highly-Concurrent GPU Register Files via Software/Hardware
//! Cooperation"): a two-level register file whose upper level is a register-file cache
//! partitioned among the active warps, filled by compiler-placed prefetches at the entry
//! of every register-interval (§3), and its variants LTRF+ (§3.2, liveness bits) and
//! LTRFconf (§4, the bank-aware renumbered program on the same hardware).
//!
//! Model, per SM (§3.2 and §5):
//! - **Two-level scheduling.** The SM runs the two-level scheduler with
//!   `register_file.ltrf.partitions` active warps per SM ([`crate::rf::scheduling`]); each
//!   active warp owns one cache partition of `registers_per_interval` (`N`) registers. The
//!   **warp control block** per warp holds whether it owns a partition, which
//!   register-interval is resident, the register -> cache-slot table, valid and dirty bits
//!   and (LTRF+) the liveness bit-vector. Inactive warps own no cache space.
//! - **Prefetch.** When a warp's next instruction belongs to a register-interval other
//!   than the resident one — at the interval's entry (`InstHint::interval_entry`, a
//!   "prefetch operation"), or when the warp comes back into the middle of one (the other
//!   side of a divergent branch, a return, a reactivation: §5.2 "finds itself in the
//!   middle of a register-interval") — `can_accept` refuses it with
//!   [`RfStall::NotResident`] and the design evicts the resident registers (writing back
//!   those that must be: below) and reads the new working set from the MRF through the
//!   MRF banks: one request per register, arbitrated every cycle after the writes with
//!   the same ports, conflicts, occupancy and latency as the baseline's operand reads
//!   ([`crate::rf::BankMap`]). §3.2 writes back and refetches the *entire* working set;
//!   `ltrf.keep_resident = true` (optimistic) keeps the registers both sets share. The
//!   warp may issue once every read has delivered into the cache. An activated warp
//!   prefetches its current interval's working set at once.
//! - **Warp control block lookup** (§5.1, §5.3): an allocated collector probes the
//!   WCB's register cache address table before its reads, `ltrf.wcb_lookup_cycles`
//!   (1: "within one extra clock cycle") later.
//! - **Inside an interval** every operand read and write hits the warp's partition: the
//!   cache has `N` banks (§5.1: slot `s` of every partition lives in cache bank `s`, so a
//!   warp's registers never conflict with each other, but different warps' collectors can),
//!   each with the MRF banks' port counts and `ltrf.cache_latency`. Operands reach the
//!   collectors as in the baseline (collector units, rotating arbitration).
//! - **Writeback.** An evicted register is written back to the MRF when it was modified
//!   (`ltrf.writeback = "modified"`, a dirty bit per slot: optimistic) or always
//!   (`"working_set"`, the default: §3.2 "write back and refetch the entire register
//!   working-set", the WCB of Figure 12 having no dirty bits); LTRF+ never writes back, nor
//!   prefetches, a register its liveness bit says is dead (a register becomes live when
//!   written and dead after a source operand whose `dead_after` bit is set). Leaving the
//!   active set (deactivation) evicts the whole partition; an exited warp writes nothing
//!   back. Writebacks are MRF writes, arbitrated with the results' writes.
//! - **Outside the cache.** A result whose register is not resident when it arrives (a
//!   long load whose warp moved on to another interval, or was deactivated) is written to
//!   the MRF directly. An instruction of an interval whose working set alone exceeds `N`
//!   (`IntervalKind::Oversized`: one instruction touching more than `N` registers) reads
//!   and writes the MRF directly; so does every instruction when the kernel has no
//!   interval information. Both are counted, and are zero inside an interval that fits.
//! - **Narrow crossbar** (§5.2, `ltrf.narrow_crossbar`, on by default): the MRF -> cache
//!   crossbar is a quarter as wide as the baseline's, so MRF reads granted per cycle are
//!   limited to a quarter of configuration #1's read ports (`register_file.banks` times
//!   the read ports, at least one), and a transfer takes 4 cycles instead of 1 (+3).
//! - **Technology** (Table 2, `register_file.technology`, [`crate::rf::technology`]):
//!   the MRF's banks, their occupancy and latency and the network are the technology's;
//!   the cache stays fast.
//!
//! The MRF banks, collectors and arbiter are the baseline's ([`Baseline`]): the cache's
//! banks are its upper banks ([`Baseline::add_upper_banks`]), prefetches its side reads
//! after the collectors' ([`Baseline::queue_side_read`]), writebacks its writes after the
//! results' ([`Baseline::push_write_to_banks`]), the narrow crossbar its MRF read limit.
//!
//! Statistics: `reads`/`writes` are MRF bank accesses (prefetches, writebacks, direct
//! accesses), as for every design; `extra` holds the `ltrf_*` counters listed in
//! [`Ltrf::stats`]. Energy: `mrf` reads/writes, `ltrf_cache` reads/writes (operands,
//! results and fills), `collector` writes, `crossbar` transfers (MRF <-> cache moves).

use serde::{Deserialize, Serialize};

use compiler::pipeline::{LtrfRenumber, PassSet};

use crate::config::{invalid, ConfigError, GpuConfig, RegisterFileDesign};
use crate::kernel_info::{KernelInfo, RegFileKind, RegOperand};
use crate::rf::baseline::{Baseline, SideReadOrder, WriteKind, MAX_REGS};
use crate::rf::ledger::{Ledger, Sink, Source, Transfer};
use crate::rf::{
    Candidate, InstToken, IssuedInst, RegisterFile, RfCycle, RfStall, RfStats, WarpLaunch,
    WarpSlot, WriteRequest,
};
use crate::time::{Cycle, Cycles};

pub use crate::rf::technology::{MrfTechnology, TechnologyRow, TABLE2};

/// What an evicted register costs (`register_file.ltrf.writeback`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WritebackPolicy {
    /// Only registers written while resident (a dirty bit per cache slot).
    Modified,
    /// Every resident register (§3.2: the WCB has valid and liveness bits, no dirty bits).
    WorkingSet,
}

/// `[register_file.ltrf]`: the LTRF designs' register-file cache (LTRF Table 3).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LtrfSettings {
    /// Cache partitions per SM = active warps of the two-level scheduler (Table 3: 8).
    /// Must be a multiple of `sm.schedulers`.
    pub partitions: u32,
    /// `N`: registers per register-interval = registers per partition = cache banks
    /// (Table 3: 16; at most 64).
    pub registers_per_interval: u32,
    /// Cycles of a cache bank access (the baseline SRAM's one cycle).
    pub cache_latency: Cycles,
    /// Which evicted registers are written back to the MRF (§3.2: the whole working
    /// set; `"modified"`, a dirty bit per slot, is an optimistic option).
    pub writeback: WritebackPolicy,
    /// §5.2's crossbar of a quarter of the width between the MRF and the cache (on, as
    /// the paper builds it; off is an optimistic option).
    pub narrow_crossbar: bool,
    /// Keep the registers of the previous interval's working set that the next one
    /// also needs, instead of writing back and refetching the entire working set at
    /// every interval (§3.2); an optimistic option, off by default.
    pub keep_resident: bool,
    /// Cycles an operand collector spends probing the warp control block's register
    /// cache address table before its reads (§5.3: "one extra clock cycle" by CACTI);
    /// 0 is an optimistic option.
    pub wcb_lookup_cycles: Cycles,
}

impl Default for LtrfSettings {
    fn default() -> Self {
        LtrfSettings {
            partitions: 8,
            registers_per_interval: 16,
            cache_latency: Cycles::new(1),
            writeback: WritebackPolicy::WorkingSet,
            narrow_crossbar: true,
            keep_resident: false,
            wcb_lookup_cycles: Cycles::new(1),
        }
    }
}

/// Largest `registers_per_interval` (slots are tracked in a 64-bit mask).
pub const MAX_REGISTERS_PER_INTERVAL: u32 = 64;

impl LtrfSettings {
    /// Active warps per warp scheduler.
    pub fn active_warps_per_scheduler(&self, schedulers: u32) -> u32 {
        (self.partitions / schedulers.max(1)).max(1)
    }

    /// Checks the section; the scheduler-related checks only for the LTRF designs.
    pub fn validate(&self, cfg: &GpuConfig) -> Result<(), ConfigError> {
        if !(1..=MAX_REGISTERS_PER_INTERVAL).contains(&self.registers_per_interval) {
            return Err(invalid(
                "register_file.ltrf.registers_per_interval",
                format_args!("must be 1 to {MAX_REGISTERS_PER_INTERVAL}"),
            ));
        }
        if self.cache_latency.get() == 0 {
            return Err(invalid(
                "register_file.ltrf.cache_latency",
                "must be at least 1",
            ));
        }
        if self.partitions == 0 {
            return Err(invalid(
                "register_file.ltrf.partitions",
                "must be at least 1",
            ));
        }
        if is_ltrf(cfg.register_file.design) {
            let s = cfg.sm.schedulers;
            if !self.partitions.is_multiple_of(s) {
                return Err(invalid(
                    "register_file.ltrf.partitions",
                    format_args!(
                        "{} partitions (active warps) cannot be split evenly between \
                         sm.schedulers = {s}",
                        self.partitions
                    ),
                ));
            }
            let per_scheduler = cfg.sm.max_warps.div_ceil(s);
            if self.partitions / s > per_scheduler {
                return Err(invalid(
                    "register_file.ltrf.partitions",
                    format_args!(
                        "{} active warps per scheduler exceed the warps per scheduler \
                         ({per_scheduler})",
                        self.partitions / s
                    ),
                ));
            }
        }
        Ok(())
    }
}

fn is_ltrf(d: RegisterFileDesign) -> bool {
    matches!(
        d,
        RegisterFileDesign::Ltrf | RegisterFileDesign::LtrfPlus | RegisterFileDesign::LtrfConf
    )
}

/// The load-time passes of the LTRF designs: register-intervals with `N` registers (all),
/// liveness bits (LTRF+), the bank-aware renumbering for the MRF's banks (LTRFconf; the
/// banks a warp's registers spread over: a scheduler's share when the banks are split).
pub fn required_passes(cfg: &GpuConfig) -> PassSet {
    let rf = &cfg.register_file;
    let n = rf.ltrf.registers_per_interval;
    let banks = if rf.partition_by_scheduler && cfg.sm.schedulers > 1 {
        (rf.mrf_banks() / cfg.sm.schedulers).max(1)
    } else {
        rf.mrf_banks()
    };
    PassSet {
        liveness_bits: rf.design == RegisterFileDesign::LtrfPlus,
        intervals: Some(compiler::ltrf::LtrfConfig {
            registers_per_interval: n,
            banks,
            // The intervals pass also renumbers (for its report); not needed here.
            renumber_search_rounds: 0,
            ..compiler::ltrf::LtrfConfig::default()
        }),
        ltrf_renumber: (rf.design == RegisterFileDesign::LtrfConf).then_some(LtrfRenumber {
            registers_per_interval: n,
            banks,
        }),
        ..PassSet::default()
    }
}

const NONE: u32 = u32::MAX;
/// Registers a warp control block tracks (`slot_of` is indexed by register number).
const TRACKED_REGS: usize = 256;
const NO_SLOT: u8 = u8::MAX;

/// The kernel's register-intervals, flattened: per function, the interval of each
/// instruction and each interval's working set.
#[derive(Clone, Debug, Default)]
struct IntervalTable {
    /// Per function: start of its instructions in `interval_of` and their count.
    func_insts: Vec<(u32, u32)>,
    /// Per function: start of its intervals in `sets`.
    func_sets: Vec<u32>,
    interval_of: Vec<u32>,
    /// Per interval: start in `regs` and length.
    sets: Vec<(u32, u32)>,
    regs: Vec<u16>,
}

impl IntervalTable {
    fn from_info(info: &KernelInfo) -> Self {
        let mut t = IntervalTable::default();
        let mut f = 0;
        while let Some(fi) = info.function(ir::FuncId::new(f)) {
            t.push_function(
                &fi.interval_of,
                fi.intervals.iter().map(|i| i.working_set.as_slice()),
            );
            f += 1;
        }
        t
    }

    fn push_function<'a>(&mut self, interval_of: &[u32], sets: impl Iterator<Item = &'a [u16]>) {
        self.func_insts
            .push((self.interval_of.len() as u32, interval_of.len() as u32));
        self.interval_of.extend_from_slice(interval_of);
        self.func_sets.push(self.sets.len() as u32);
        for s in sets {
            self.sets.push((self.regs.len() as u32, s.len() as u32));
            self.regs.extend_from_slice(s);
        }
    }

    /// The global interval number of instruction `inst` of `func`, or `NONE`.
    fn interval(&self, func: u32, inst: u32) -> u32 {
        let Some(&(start, n)) = self.func_insts.get(func as usize) else {
            return NONE;
        };
        if inst >= n {
            return NONE;
        }
        let local = self.interval_of[(start + inst) as usize];
        match self.func_sets.get(func as usize) {
            Some(&base) if (base + local) < self.sets.len() as u32 => base + local,
            _ => NONE,
        }
    }

    fn working_set(&self, interval: u32) -> &[u16] {
        let (s, n) = self.sets[interval as usize];
        &self.regs[s as usize..(s + n) as usize]
    }
}

/// A warp's control block and position.
#[derive(Clone, Debug)]
struct WarpState {
    live: bool,
    /// Executed its exit: nothing of it needs writing back.
    finished: bool,
    scheduler: u16,
    /// The warp's next instruction (from the emulator's next PC at each accept).
    func: u32,
    pc: u32,
    owns_partition: bool,
    /// The interval whose working set is resident (or being prefetched), global number.
    interval: u32,
    /// The resident interval is oversized: operands go to the MRF.
    bypass: bool,
    /// Prefetch reads not yet granted.
    outstanding: u32,
    /// When the last granted prefetch read has delivered.
    ready_at: Cycle,
    prefetch_start: Cycle,
    prefetching: bool,
    /// Register -> cache slot (`NO_SLOT`: not resident).
    slot_of: [u8; TRACKED_REGS],
    /// Slot -> register.
    slot_reg: [u16; MAX_REGISTERS_PER_INTERVAL as usize],
    used: u64,
    dirty: u64,
    /// LTRF+: the liveness bit-vector.
    live_regs: [u64; TRACKED_REGS / 64],
}

impl WarpState {
    fn empty() -> Self {
        WarpState {
            live: false,
            finished: false,
            scheduler: 0,
            func: 0,
            pc: 0,
            owns_partition: false,
            interval: NONE,
            bypass: false,
            outstanding: 0,
            ready_at: Cycle::ZERO,
            prefetch_start: Cycle::ZERO,
            prefetching: false,
            slot_of: [NO_SLOT; TRACKED_REGS],
            slot_reg: [0; MAX_REGISTERS_PER_INTERVAL as usize],
            used: 0,
            dirty: 0,
            live_regs: [0; TRACKED_REGS / 64],
        }
    }

    fn is_live(&self, reg: u16) -> bool {
        let r = usize::from(reg);
        r < TRACKED_REGS && self.live_regs[r / 64] & (1 << (r % 64)) != 0
    }

    fn set_live(&mut self, reg: u16, live: bool) {
        let r = usize::from(reg);
        if r < TRACKED_REGS {
            if live {
                self.live_regs[r / 64] |= 1 << (r % 64);
            } else {
                self.live_regs[r / 64] &= !(1 << (r % 64));
            }
        }
    }

    /// The cache slot of `reg`, if resident.
    fn slot(&self, reg: u16) -> Option<u8> {
        match self.slot_of.get(usize::from(reg)) {
            Some(&s) if s != NO_SLOT => Some(s),
            _ => None,
        }
    }
}

/// Counters beyond [`RfStats`]'s.
#[derive(Clone, Debug, Default)]
struct Counters {
    interval_entries: u64,
    reentries: u64,
    prefetches: u64,
    registers_prefetched: u64,
    prefetch_wait_cycles: u64,
    dead_not_prefetched: u64,
    writebacks: u64,
    dead_not_written_back: u64,
    activations: u64,
    deactivations: u64,
    oversized_entries: u64,
    operand_reads: u64,
    operand_writes: u64,
    cache_operand_reads: u64,
    cache_result_writes: u64,
    miss_operand_reads: u64,
    bypass_operand_reads: u64,
    mrf_result_writes: u64,
    partition_busy_cycles: u64,
}

/// The LTRF designs. See the module docs.
pub struct Ltrf {
    name: &'static str,
    plus: bool,
    /// The MRF banks, collectors and arbiter, with the cache's `N` banks as its upper
    /// banks (numbered from `banks` on); prefetches are its side reads after the
    /// collectors' (tagged with the warp slot), writebacks its writes after the others.
    mrf: Baseline,
    banks: usize,
    n: usize,
    /// The narrow crossbar's extra transfer cycles of a prefetch.
    fill_extra: Cycles,
    writeback_all: bool,
    /// Registers the next working set shares with the resident one stay.
    keep_resident: bool,
    /// Cycles of the warp-control-block lookup before an instruction's reads.
    wcb_lookup: Cycles,
    partitions: u32,
    partitions_owned: u32,
    /// Warps with a prefetch not yet delivered.
    prefetching_warps: u32,
    table: IntervalTable,
    kernel: u32,
    warps: Vec<WarpState>,
    now: Cycle,
    /// `partition_busy_cycles` is integrated up to here.
    last_integrated: Cycle,
    c: Counters,
}

impl Ltrf {
    /// The design selected by a validated config (`ltrf`, `ltrf-plus` or `ltrf-conf`).
    pub fn new(cfg: &GpuConfig) -> Self {
        let rf = &cfg.register_file;
        let l = &rf.ltrf;
        let name = match rf.design {
            RegisterFileDesign::LtrfPlus => "ltrf-plus",
            RegisterFileDesign::LtrfConf => "ltrf-conf",
            _ => "ltrf",
        };
        let banks = rf.mrf_banks() as usize;
        let n = l.registers_per_interval.min(MAX_REGISTERS_PER_INTERVAL) as usize;
        let mut mrf = Baseline::new(cfg);
        mrf.rename_design(name);
        mrf.add_upper_banks(n, l.cache_latency, Source::LtrfCache);
        if l.narrow_crossbar {
            // A quarter of the baseline crossbar's width: configuration #1's banks'
            // ports, whatever the technology's bank count behind it.
            mrf.limit_mrf_reads_per_cycle((rf.banks * rf.read_ports_per_bank / 4).max(1));
        }
        Ltrf {
            name,
            plus: rf.design == RegisterFileDesign::LtrfPlus,
            mrf,
            banks,
            n,
            fill_extra: Cycles::new(if l.narrow_crossbar { 3 } else { 0 }),
            writeback_all: l.writeback == WritebackPolicy::WorkingSet,
            keep_resident: l.keep_resident,
            wcb_lookup: l.wcb_lookup_cycles,
            partitions: l.partitions,
            partitions_owned: 0,
            prefetching_warps: 0,
            table: IntervalTable::default(),
            kernel: 0,
            warps: vec![WarpState::empty(); cfg.sm.max_warps as usize],
            now: Cycle::ZERO,
            last_integrated: Cycle::ZERO,
            c: Counters::default(),
        }
    }

    /// Integrates partition occupancy up to `now`.
    fn integrate(&mut self, now: Cycle) {
        if now > self.last_integrated {
            let dt = (now - self.last_integrated).get();
            self.c.partition_busy_cycles += u64::from(self.partitions_owned) * dt;
            self.last_integrated = now;
        }
    }

    fn mrf_bank(&self, reg: u16, warp: usize) -> u8 {
        let w = &self.warps[warp];
        self.mrf.bank_of(reg, WarpSlot(warp as u16), w.scheduler) as u8
    }

    /// Evicts slot `s` of warp `w`, queueing its writeback when one is due.
    fn evict(&mut self, w: usize, s: usize, write_back: bool) {
        let reg = self.warps[w].slot_reg[s];
        let b = self.mrf_bank(reg, w);
        let ws = &mut self.warps[w];
        let bit = 1u64 << s;
        let must = write_back && (self.writeback_all || ws.dirty & bit != 0);
        let dead = self.plus && !ws.is_live(reg);
        if let Some(x) = ws.slot_of.get_mut(usize::from(reg)) {
            *x = NO_SLOT;
        }
        ws.used &= !bit;
        ws.dirty &= !bit;
        if must {
            if dead {
                self.c.dead_not_written_back += 1;
            } else {
                // No instruction waits for it; it yields to the results' writes.
                self.mrf.push_write_to_banks(
                    InstToken(u32::MAX),
                    &[b],
                    self.now,
                    WriteKind::Background,
                );
                self.c.writebacks += 1;
                self.mrf.ledger_mut().transfer(Transfer::LtrfCacheToMrf, 1);
            }
        }
    }

    fn evict_all(&mut self, w: usize, write_back: bool) {
        let mut m = self.warps[w].used;
        while m != 0 {
            let s = m.trailing_zeros() as usize;
            m &= m - 1;
            self.evict(w, s, write_back);
        }
    }

    /// Ends warp `w`'s prefetch, forgetting its reads not yet granted.
    fn stop_prefetch(&mut self, w: usize) {
        if self.warps[w].outstanding > 0 {
            self.mrf.cancel_side_reads(InstToken(w as u32));
            self.warps[w].outstanding = 0;
        }
        if self.warps[w].prefetching {
            self.warps[w].prefetching = false;
            self.prefetching_warps -= 1;
        }
    }

    /// Makes `interval` the resident interval of warp `w`: evictions, then prefetch reads
    /// of the missing registers.
    fn enter_interval(&mut self, w: usize, interval: u32, at_entry: bool, now: Cycle) {
        if at_entry {
            self.c.interval_entries += 1;
        } else {
            self.c.reentries += 1;
        }
        // Cancel the previous prefetch's remaining reads (a reactivation mid-prefetch).
        self.stop_prefetch(w);
        let len = self.table.working_set(interval).len();
        let ws_state = &mut self.warps[w];
        ws_state.interval = interval;
        ws_state.ready_at = now;
        if len > self.n {
            ws_state.bypass = true;
            self.c.oversized_entries += 1;
            self.evict_all(w, true);
            return;
        }
        ws_state.bypass = false;
        let mut want = [0u64; TRACKED_REGS / 64];
        for &r in self.table.working_set(interval) {
            let r = usize::from(r);
            if r < TRACKED_REGS {
                want[r / 64] |= 1 << (r % 64);
            }
        }
        let mut m = self.warps[w].used;
        while m != 0 {
            let s = m.trailing_zeros() as usize;
            m &= m - 1;
            let r = usize::from(self.warps[w].slot_reg[s]);
            if !self.keep_resident || want[r / 64] & (1 << (r % 64)) == 0 {
                self.evict(w, s, true);
            }
        }
        let mut fetched = 0u32;
        for i in 0..len {
            let reg = self.table.working_set(interval)[i];
            if usize::from(reg) >= TRACKED_REGS || self.warps[w].slot(reg).is_some() {
                continue;
            }
            let ws = &mut self.warps[w];
            let s = (!ws.used).trailing_zeros() as usize;
            if s >= self.n {
                break; // cannot happen: the working set fits
            }
            ws.used |= 1 << s;
            ws.slot_reg[s] = reg;
            ws.slot_of[usize::from(reg)] = s as u8;
            if self.plus && !ws.is_live(reg) {
                self.c.dead_not_prefetched += 1;
                continue;
            }
            let bank = self.mrf_bank(reg, w);
            self.mrf.queue_side_read(
                InstToken(w as u32),
                usize::from(bank),
                SideReadOrder::AfterCollectors,
                self.fill_extra,
                Transfer::MrfToLtrfCache,
            );
            fetched += 1;
        }
        if fetched > 0 {
            let ws = &mut self.warps[w];
            ws.outstanding = fetched;
            ws.prefetching = true;
            ws.prefetch_start = now;
            self.prefetching_warps += 1;
            self.c.prefetches += 1;
            self.c.registers_prefetched += u64::from(fetched);
        }
    }

    /// Whether warp `w` may issue its next instruction as far as residency goes; starts
    /// the prefetch it needs.
    fn ensure_resident(&mut self, w: usize, entry: Option<u32>, now: Cycle) -> Result<(), RfStall> {
        if !self.warps[w].owns_partition {
            // Outside two-level scheduling (never with `rf::scheduling`): take a free
            // partition on demand.
            if self.partitions_owned >= self.partitions {
                return Err(RfStall::NotResident);
            }
            self.take_partition(w, now);
        }
        let (func, pc) = (self.warps[w].func, self.warps[w].pc);
        let iv = self.table.interval(func, pc);
        if iv != NONE && iv != self.warps[w].interval {
            let base = self
                .table
                .func_sets
                .get(func as usize)
                .copied()
                .unwrap_or(0);
            let at_entry = entry.is_some_and(|e| base + e == iv);
            self.enter_interval(w, iv, at_entry, now);
        }
        let ws = &self.warps[w];
        if ws.outstanding > 0 || ws.ready_at > now {
            Err(RfStall::NotResident)
        } else {
            Ok(())
        }
    }

    fn take_partition(&mut self, w: usize, now: Cycle) {
        self.integrate(now);
        self.partitions_owned += 1;
        let ws = &mut self.warps[w];
        ws.owns_partition = true;
        ws.interval = NONE;
    }

    /// Where operand register `reg` of warp `w` is read or written: a cache bank (resident)
    /// or its MRF bank. Counts the access.
    fn target(&mut self, w: usize, reg: u16, write: bool) -> u8 {
        let ws = &self.warps[w];
        match ws.slot(reg) {
            Some(s) if !ws.bypass => {
                if write {
                    self.warps[w].dirty |= 1 << s;
                    self.c.cache_result_writes += 1;
                    self.mrf.ledger_mut().write(Sink::LtrfCache, 1);
                } else {
                    self.c.cache_operand_reads += 1;
                }
                (self.banks + usize::from(s)) as u8
            }
            _ => {
                if write {
                    self.c.mrf_result_writes += 1;
                    self.mrf.ledger_mut().write(Sink::MrfBank, 1);
                } else if ws.bypass {
                    self.c.bypass_operand_reads += 1;
                } else {
                    self.c.miss_operand_reads += 1;
                }
                self.mrf_bank(reg, w)
            }
        }
    }

    fn targets_of(
        &mut self,
        ops: &[RegOperand],
        w: usize,
        write: bool,
        out: &mut [u8; MAX_REGS],
    ) -> u8 {
        let mut n = 0;
        for op in ops.iter().filter(|o| o.file == RegFileKind::General) {
            for r in op.regs() {
                if n < MAX_REGS {
                    out[n] = self.target(w, r, write);
                    n += 1;
                }
            }
        }
        n as u8
    }
}

impl RegisterFile for Ltrf {
    fn name(&self) -> &'static str {
        self.name
    }

    fn kernel_started(&mut self, info: &KernelInfo) {
        self.table = IntervalTable::from_info(info);
        self.kernel = info.kernel.index() as u32;
    }

    fn warp_launched(&mut self, l: WarpLaunch) {
        let Some(ws) = self.warps.get_mut(l.warp.index()) else {
            return;
        };
        *ws = WarpState::empty();
        ws.live = true;
        ws.scheduler = l.scheduler;
        ws.func = self.kernel;
        ws.pc = 0;
    }

    fn warp_exited(&mut self, warp: WarpSlot) {
        let w = warp.index();
        if w >= self.warps.len() {
            return;
        }
        if self.warps[w].owns_partition {
            self.warp_deactivated(warp);
        }
        self.warps[w].live = false;
    }

    fn warp_activated(&mut self, warp: WarpSlot) {
        let w = warp.index();
        if w >= self.warps.len() || self.warps[w].owns_partition {
            return;
        }
        let now = self.now;
        self.c.activations += 1;
        self.take_partition(w, now);
        if self.warps[w].finished {
            return;
        }
        // Refetch the working set of the interval the warp is in (§5.2).
        let (func, pc) = (self.warps[w].func, self.warps[w].pc);
        let iv = self.table.interval(func, pc);
        if iv != NONE {
            self.enter_interval(w, iv, false, now);
        }
    }

    fn warp_deactivated(&mut self, warp: WarpSlot) {
        let w = warp.index();
        if w >= self.warps.len() || !self.warps[w].owns_partition {
            return;
        }
        let now = self.now;
        self.integrate(now);
        self.c.deactivations += 1;
        let finished = self.warps[w].finished;
        self.evict_all(w, !finished);
        self.stop_prefetch(w);
        let ws = &mut self.warps[w];
        ws.interval = NONE;
        ws.bypass = false;
        ws.owns_partition = false;
        self.partitions_owned -= 1;
    }

    fn can_accept(&mut self, c: &Candidate<'_>, now: Cycle) -> Result<(), RfStall> {
        let w = c.warp.index();
        if w < self.warps.len() {
            self.ensure_resident(w, c.hint.interval_entry, now)?;
        }
        self.mrf.can_accept(c, now)
    }

    fn accept(&mut self, i: IssuedInst<'_>, now: Cycle) {
        self.integrate(now);
        let w = i.inst.warp.index();
        let mut targets = [0u8; MAX_REGS];
        let n = self.targets_of(i.inst.srcs, w, false, &mut targets);
        self.c.operand_reads += u64::from(n);
        if let Some(ws) = self.warps.get_mut(w) {
            if self.plus {
                for op in i
                    .inst
                    .srcs
                    .iter()
                    .filter(|o| o.file == RegFileKind::General)
                {
                    if op.hint.dead_after {
                        op.regs().for_each(|r| ws.set_live(r, false));
                    }
                }
                for op in i
                    .inst
                    .dsts
                    .iter()
                    .filter(|o| o.file == RegFileKind::General)
                {
                    op.regs().for_each(|r| ws.set_live(r, true));
                }
            }
            match i.step.next_pc {
                Some((f, pc)) => {
                    ws.func = f.index() as u32;
                    ws.pc = pc.index() as u32;
                }
                None => ws.finished = true,
            }
        }
        self.mrf.accept_banks_after(
            i.token,
            i.inst.unit,
            &targets[..usize::from(n)],
            now,
            self.wcb_lookup,
        );
    }

    fn request_write(&mut self, wr: WriteRequest<'_>, now: Cycle) {
        let mut targets = [0u8; MAX_REGS];
        let w = wr.warp.index();
        let n = if w < self.warps.len() {
            self.targets_of(wr.dsts, w, true, &mut targets)
        } else {
            0
        };
        self.c.operand_writes += u64::from(n);
        self.mrf
            .push_write_to_banks(wr.token, &targets[..usize::from(n)], now, WriteKind::Result);
    }

    fn skip_to(&mut self, now: Cycle) {
        self.mrf.skip_to(now);
    }

    fn cycle(&mut self, c: &mut RfCycle<'_>) {
        let now = c.now;
        self.now = now;
        self.integrate(now);

        // Prefetches whose data has all arrived.
        if self.prefetching_warps > 0 {
            for ws in self.warps.iter_mut() {
                if ws.prefetching && ws.outstanding == 0 && ws.ready_at <= now {
                    ws.prefetching = false;
                    self.prefetching_warps -= 1;
                    self.c.prefetch_wait_cycles += (ws.ready_at - ws.prefetch_start).get();
                }
            }
        }

        self.mrf.cycle(c);

        // Prefetch reads granted in this cycle: the warp waits for the last to arrive.
        let warps = &mut self.warps;
        self.mrf.take_side_reads_granted(|t, at| {
            if let Some(ws) = warps.get_mut(t.0 as usize) {
                ws.outstanding = ws.outstanding.saturating_sub(1);
                ws.ready_at = ws.ready_at.max(at);
            }
        });
    }

    fn next_event(&self, now: Cycle) -> Option<Cycle> {
        let soon = now + Cycles::new(1);
        let mut next = self.mrf.next_event(now);
        if self.prefetching_warps > 0 {
            // A warp with prefetch reads still waiting for ports learns when its data
            // arrives in the cycle they are granted (the MRF's own event).
            for ws in self
                .warps
                .iter()
                .filter(|w| w.prefetching && w.outstanding == 0)
            {
                let t = ws.ready_at.max(soon);
                next = Some(next.map_or(t, |n| n.min(t)));
            }
        }
        next
    }

    fn is_idle(&self) -> bool {
        self.mrf.is_idle()
    }

    /// [`RfStats`] with, in `extra`: `ltrf_interval_entries` (a warp reached an interval's
    /// entry), `ltrf_reentries` (came back into the middle of one: divergence, return,
    /// activation), `ltrf_prefetches` (of them, those that read anything),
    /// `ltrf_registers_prefetched`, `ltrf_prefetch_wait_cycles` (start to last delivery,
    /// summed), `ltrf_prefetch_bank_conflicts`, `ltrf_writebacks`,
    /// `ltrf_dead_not_prefetched` / `ltrf_dead_not_written_back` (LTRF+),
    /// `ltrf_activations` / `ltrf_deactivations`, `ltrf_oversized_entries`,
    /// `ltrf_operand_reads` / `ltrf_operand_writes` (all register operands),
    /// `ltrf_cache_operand_reads` / `ltrf_cache_result_writes` / `ltrf_cache_fills`,
    /// `ltrf_miss_operand_reads` (MRF reads inside an interval that fits: zero unless the
    /// kernel lacks interval information), `ltrf_bypass_operand_reads` (oversized
    /// intervals), `ltrf_mrf_result_writes` (results whose register was not resident),
    /// `ltrf_partition_busy_cycles` (cache partitions owned, integrated over cycles).
    /// `read_bank_conflicts` includes refused reads of cache banks (collectors of
    /// different warps meeting at one slot); cache write conflicts are not counted.
    fn stats(&self, now: Cycle) -> RfStats {
        let mut s = self.mrf.stats(now);
        s.read_bank_conflicts += self.mrf.upper_bank_conflicts().0;
        let mut partition_busy = self.c.partition_busy_cycles;
        if now > self.last_integrated {
            let dt = (now - self.last_integrated).get();
            partition_busy += u64::from(self.partitions_owned) * dt;
        }
        let c = &self.c;
        let side = self.mrf.side_read_counts();
        for (k, v) in [
            ("ltrf_interval_entries", c.interval_entries),
            ("ltrf_reentries", c.reentries),
            ("ltrf_prefetches", c.prefetches),
            ("ltrf_registers_prefetched", c.registers_prefetched),
            ("ltrf_prefetch_wait_cycles", c.prefetch_wait_cycles),
            ("ltrf_prefetch_bank_conflicts", side.conflicts),
            ("ltrf_writebacks", c.writebacks),
            ("ltrf_dead_not_prefetched", c.dead_not_prefetched),
            ("ltrf_dead_not_written_back", c.dead_not_written_back),
            ("ltrf_activations", c.activations),
            ("ltrf_deactivations", c.deactivations),
            ("ltrf_oversized_entries", c.oversized_entries),
            ("ltrf_operand_reads", c.operand_reads),
            ("ltrf_operand_writes", c.operand_writes),
            ("ltrf_cache_operand_reads", c.cache_operand_reads),
            ("ltrf_cache_result_writes", c.cache_result_writes),
            ("ltrf_cache_fills", side.granted),
            ("ltrf_miss_operand_reads", c.miss_operand_reads),
            ("ltrf_bypass_operand_reads", c.bypass_operand_reads),
            ("ltrf_mrf_result_writes", c.mrf_result_writes),
            ("ltrf_partition_busy_cycles", partition_busy),
        ] {
            s.extra.insert(k.to_owned(), v);
        }
        s
    }

    fn ledger(&self) -> Ledger {
        self.mrf.ledger()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{default_configs_dir, OpClass, UnitKind};
    use crate::kernel_info::{InstHint, OperandHint};
    use crate::memory::{MemorySystem, SmId};
    use crate::occupancy::{occupancy, CtaShape};
    use crate::rf::{Dispatch, DispatchPort};
    use crate::stats::Limiter;
    use crate::Override;
    use ir::{FuncId, InstId};

    fn cfg(overrides: &[&str]) -> GpuConfig {
        crate::rf::test_support::config("gtx480", overrides)
    }

    fn r(reg: u16) -> RegOperand {
        crate::rf::test_support::general(reg)
    }

    fn dead(reg: u16) -> RegOperand {
        RegOperand {
            hint: OperandHint {
                dead_after: true,
                ..OperandHint::default()
            },
            ..r(reg)
        }
    }

    struct Units;
    impl DispatchPort for Units {
        fn try_dispatch(&mut self, _d: Dispatch) -> bool {
            true
        }
    }

    /// Takes every dispatch and remembers it.
    #[derive(Default)]
    struct Recorder(Vec<InstToken>);
    impl DispatchPort for Recorder {
        fn try_dispatch(&mut self, d: Dispatch) -> bool {
            self.0.push(d.token);
            true
        }
    }

    /// The optimistic options (no narrow crossbar, modified-only writeback, resident
    /// registers kept, no WCB cycle): the mechanism tests below isolate one effect each.
    const OPTIMISTIC: [&str; 4] = [
        "register_file.ltrf.narrow_crossbar=false",
        "register_file.ltrf.writeback=\"modified\"",
        "register_file.ltrf.keep_resident=true",
        "register_file.ltrf.wcb_lookup_cycles=0",
    ];

    /// A design over one function whose instruction `i` is in interval `interval_of[i]`,
    /// with the optimistic options unless `overrides` say otherwise.
    fn design(overrides: &[&str], interval_of: &[u32], sets: &[&[u16]]) -> (Ltrf, MemorySystem) {
        let mut o = OPTIMISTIC.to_vec();
        o.extend_from_slice(overrides);
        paper_design(&o, interval_of, sets)
    }

    /// [`design`] with the paper's defaults.
    fn paper_design(
        overrides: &[&str],
        interval_of: &[u32],
        sets: &[&[u16]],
    ) -> (Ltrf, MemorySystem) {
        let mut o = vec!["register_file.bank_mapping=\"register\""];
        o.extend_from_slice(overrides);
        let c = cfg(&o);
        let mut d = Ltrf::new(&c);
        d.table = IntervalTable::default();
        d.table.push_function(interval_of, sets.iter().copied());
        d.warp_launched(WarpLaunch {
            warp: WarpSlot(0),
            scheduler: 0,
            cta: 0,
            registers_per_thread: 32,
        });
        (d, MemorySystem::new(&c))
    }

    fn run(d: &mut Ltrf, mem: &mut MemorySystem, from: u64, to: u64) -> Vec<InstToken> {
        let mut done = Vec::new();
        for t in from..to {
            let mut writes = Vec::new();
            d.cycle(&mut RfCycle {
                now: Cycle::new(t),
                sm: SmId(0),
                memory: mem.port(SmId(0)),
                dispatch: &mut Units,
                writes_done: &mut writes,
            });
            done.extend(writes);
        }
        done
    }

    fn candidate<'a>(
        srcs: &'a [RegOperand],
        dsts: &'a [RegOperand],
        entry: Option<u32>,
    ) -> Candidate<'a> {
        Candidate {
            warp: WarpSlot(0),
            scheduler: 0,
            unit: UnitKind::Sp,
            class: OpClass::Fp32,
            srcs,
            dsts,
            hint: InstHint {
                interval_entry: entry,
                ..InstHint::default()
            },
        }
    }

    /// Issues the warp's next instruction at `now` (which must be accepted); its next PC
    /// is `next`.
    fn issue(d: &mut Ltrf, token: u32, c: Candidate<'_>, next: u32, now: u64) {
        assert_eq!(d.can_accept(&c, Cycle::new(now)), Ok(()), "at {now}");
        let step = emu::WarpStep {
            next_pc: Some((FuncId::new(0), InstId::new(next as usize))),
            ..Default::default()
        };
        d.accept(
            IssuedInst {
                token: InstToken(token),
                inst: c,
                step: &step,
            },
            Cycle::new(now),
        );
    }

    fn extra(d: &Ltrf, key: &str) -> u64 {
        d.stats(d.now).extra[key]
    }

    /// Activates warp 0 during cycle 0, after the design's arbitration (as the SM's
    /// issue stage does).
    fn activate(d: &mut Ltrf, mem: &mut MemorySystem) {
        run(d, mem, 0, 1);
        d.warp_activated(WarpSlot(0));
    }

    /// The first cycle at or after `from` at which `c` is accepted, running cycles.
    fn resident_at(d: &mut Ltrf, mem: &mut MemorySystem, c: &Candidate<'_>, from: u64) -> u64 {
        for t in from..from + 100 {
            run(d, mem, t, t + 1);
            if d.can_accept(c, Cycle::new(t)).is_ok() {
                return t;
            }
            assert_eq!(d.can_accept(c, Cycle::new(t)), Err(RfStall::NotResident));
        }
        panic!("never resident");
    }

    #[test]
    fn after_the_prefetch_an_interval_reads_and_writes_only_the_cache() {
        // Four instructions in interval 0 over R0..R3.
        let (mut d, mut mem) = design(&[], &[0, 0, 0, 0], &[&[0, 1, 2, 3]]);
        activate(&mut d, &mut mem);
        let srcs = [r(0), r(1)];
        let dsts = [r(2)];
        let c = candidate(&srcs, &dsts, Some(0));
        // Four banks, one read each at cycle 1, delivered at 2 (latency 1).
        assert_eq!(resident_at(&mut d, &mut mem, &c, 1), 2);
        issue(&mut d, 1, c, 1, 2);
        let s2 = [r(2), r(3)];
        issue(&mut d, 2, candidate(&s2, &[], None), 2, 3);
        d.request_write(
            WriteRequest {
                token: InstToken(1),
                warp: WarpSlot(0),
                scheduler: 0,
                dsts: &dsts,
            },
            Cycle::new(4),
        );
        let done = run(&mut d, &mut mem, 3, 10);
        assert_eq!(done, [InstToken(1)]);
        let s = d.stats(Cycle::new(10));
        assert_eq!(
            (s.reads, s.writes),
            (4, 0),
            "only the prefetch touched the MRF"
        );
        assert_eq!(extra(&d, "ltrf_registers_prefetched"), 4);
        assert_eq!(extra(&d, "ltrf_cache_operand_reads"), 4);
        assert_eq!(extra(&d, "ltrf_miss_operand_reads"), 0);
        assert_eq!(extra(&d, "ltrf_cache_result_writes"), 1);
        assert_eq!(
            extra(&d, "ltrf_interval_entries"),
            0,
            "entered by activation"
        );
        assert_eq!(extra(&d, "ltrf_reentries"), 1);
        assert_eq!(extra(&d, "ltrf_prefetch_wait_cycles"), 2);
        // Deactivation writes back the one modified register.
        d.warp_deactivated(WarpSlot(0));
        run(&mut d, &mut mem, 10, 12);
        assert_eq!(d.stats(Cycle::new(12)).writes, 1);
        assert_eq!(extra(&d, "ltrf_writebacks"), 1);
        assert!(d.is_idle());
    }

    #[test]
    fn prefetch_time_grows_with_bank_conflicts_and_mrf_latency() {
        // 8 banks, `r mod 8`: R0, R8, R16, R24 all in bank 0.
        for (set, tech, ready, conflicts) in [
            (&[0u16, 1, 2, 3][..], "1", 2, 0),
            (&[0, 8, 16, 24][..], "1", 5, 3 + 2 + 1),
            (&[0, 8, 1, 9][..], "1", 3, 2),
            // Table 2 #7 on #1's 8 banks: 6.3x of one cycle is 6 cycles, and the bank
            // is busy for its 6 (5.8x) cycles: grants at 1, 7, 13, 19.
            (&[0, 1, 2, 3][..], "\"dwm\"", 7, 0),
            (&[0, 8, 16, 24][..], "7", 25, 3 * 6 + 2 * 6 + 6),
        ] {
            let t = format!("register_file.technology={tech}");
            let (mut d, mut mem) =
                design(&[&t, "register_file.mrf.bank_multiplier=1"], &[0], &[set]);
            activate(&mut d, &mut mem);
            let c = candidate(&[], &[], Some(0));
            assert_eq!(
                resident_at(&mut d, &mut mem, &c, 1),
                ready,
                "{set:?} at #{tech}"
            );
            assert_eq!(
                extra(&d, "ltrf_prefetch_bank_conflicts"),
                conflicts,
                "{set:?}"
            );
        }
        // With #7's own 8x banks (64 here), the four land in different banks.
        let (mut d, mut mem) = design(&["register_file.technology=7"], &[0], &[&[0, 8, 16, 24]]);
        activate(&mut d, &mut mem);
        let c = candidate(&[], &[], Some(0));
        assert_eq!(resident_at(&mut d, &mut mem, &c, 1), 7);
        assert_eq!(extra(&d, "ltrf_prefetch_bank_conflicts"), 0);
    }

    #[test]
    fn the_paper_defaults_refetch_and_write_back_the_working_set_through_a_narrow_crossbar() {
        // Interval 0 = {R0, R1}, interval 1 = {R1, R2}; R0 is written in interval 0.
        for (optimistic, writebacks, fetched, first_ready) in [
            // §3.2: both of interval 0's registers written back, both of interval 1's
            // fetched. The narrow crossbar (a quarter of 8 ports: 2 reads a cycle) adds 3
            // cycles to a fill: granted at 1, delivered at 1 + 1 + 3.
            (false, 2, 2 + 2, 5),
            // Optimistic: R0 alone written back, R2 alone fetched, one-cycle fills.
            (true, 1, 2 + 1, 2),
        ] {
            let o: &[&str] = if optimistic { &OPTIMISTIC } else { &[] };
            let (mut d, mut mem) = paper_design(o, &[0, 0, 1], &[&[0, 1], &[1, 2]]);
            activate(&mut d, &mut mem);
            let w0 = [r(0)];
            let c0 = candidate(&[], &w0, Some(0));
            let t = resident_at(&mut d, &mut mem, &c0, 1);
            assert_eq!(t, first_ready, "optimistic {optimistic}");
            issue(&mut d, 1, c0, 1, t);
            d.request_write(
                WriteRequest {
                    token: InstToken(1),
                    warp: WarpSlot(0),
                    scheduler: 0,
                    dsts: &w0,
                },
                Cycle::new(t + 1),
            );
            run(&mut d, &mut mem, t + 1, t + 6);
            issue(&mut d, 2, candidate(&[r(0)], &[], None), 2, t + 6);
            resident_at(&mut d, &mut mem, &candidate(&[], &[], Some(1)), t + 7);
            assert_eq!(extra(&d, "ltrf_writebacks"), writebacks, "{optimistic}");
            assert_eq!(
                extra(&d, "ltrf_registers_prefetched"),
                fetched,
                "{optimistic}"
            );
        }
    }

    #[test]
    fn the_warp_control_block_lookup_delays_an_instructions_reads_by_a_cycle() {
        for (wcb, dispatch) in [(0, 4), (1, 5)] {
            let l = format!("register_file.ltrf.wcb_lookup_cycles={wcb}");
            let (mut d, mut mem) = design(&[&l], &[0, 0], &[&[0, 1]]);
            activate(&mut d, &mut mem);
            let srcs = [r(0), r(1)];
            let c = candidate(&srcs, &[], Some(0));
            assert_eq!(resident_at(&mut d, &mut mem, &c, 1), 2);
            issue(&mut d, 1, c, 1, 2);
            // Reads of the cache granted at 3 (or 4 after the lookup), delivered a cycle
            // later, dispatched then.
            let mut at = None;
            for t in 3..12 {
                let mut writes = Vec::new();
                let mut units = Recorder::default();
                d.cycle(&mut RfCycle {
                    now: Cycle::new(t),
                    sm: SmId(0),
                    memory: mem.port(SmId(0)),
                    dispatch: &mut units,
                    writes_done: &mut writes,
                });
                if !units.0.is_empty() && at.is_none() {
                    at = Some(t);
                }
            }
            assert_eq!(at, Some(dispatch), "wcb {wcb}");
        }
    }

    #[test]
    fn entering_an_interval_keeps_the_overlap_and_writes_back_what_leaves() {
        // Interval 0 = {R0, R1}, interval 1 = {R1, R2}.
        for (plus, dead_r0, writebacks, fetched) in [
            // LTRF: R0 (written) leaves and is written back; R2 is fetched.
            (false, false, 1, 2 + 1),
            // LTRF+: R0 is dead after instruction 1: not written back; R2 was never
            // written, so it is dead and only allocated; R0, R1 were dead at the start.
            (true, true, 0, 0),
        ] {
            let design_name = if plus { "ltrf-plus" } else { "ltrf" };
            let o = format!("register_file.design=\"{design_name}\"");
            let (mut d, mut mem) = design(&[&o], &[0, 0, 1], &[&[0, 1], &[1, 2]]);
            activate(&mut d, &mut mem);
            let w0 = [r(0)];
            let c0 = candidate(&[], &w0, Some(0));
            let t = resident_at(&mut d, &mut mem, &c0, 1);
            issue(&mut d, 1, c0, 1, t);
            d.request_write(
                WriteRequest {
                    token: InstToken(1),
                    warp: WarpSlot(0),
                    scheduler: 0,
                    dsts: &w0,
                },
                Cycle::new(t + 1),
            );
            run(&mut d, &mut mem, t + 1, t + 4);
            let s1 = [if dead_r0 { dead(0) } else { r(0) }];
            issue(&mut d, 2, candidate(&s1, &[], None), 2, t + 4);
            let c2 = candidate(&[], &[], Some(1));
            resident_at(&mut d, &mut mem, &c2, t + 5);
            assert_eq!(extra(&d, "ltrf_interval_entries"), 1, "{design_name}");
            assert_eq!(extra(&d, "ltrf_writebacks"), writebacks, "{design_name}");
            assert_eq!(
                extra(&d, "ltrf_registers_prefetched"),
                fetched,
                "{design_name}"
            );
            if plus {
                assert_eq!(extra(&d, "ltrf_dead_not_written_back"), 1);
                assert_eq!(extra(&d, "ltrf_dead_not_prefetched"), 3);
            }
        }
    }

    #[test]
    fn an_oversized_interval_reads_the_mrf_and_a_finished_warp_writes_nothing_back() {
        let big: Vec<u16> = (0..20).collect();
        let (mut d, mut mem) = design(&[], &[0], &[&big]);
        d.warp_activated(WarpSlot(0));
        let srcs: Vec<RegOperand> = (0..20).map(r).collect();
        let c = candidate(&srcs, &[], Some(0));
        assert_eq!(
            d.can_accept(&c, Cycle::new(0)),
            Ok(()),
            "nothing to prefetch"
        );
        let step = emu::WarpStep::default(); // no next PC: the warp exits
        d.accept(
            IssuedInst {
                token: InstToken(1),
                inst: c,
                step: &step,
            },
            Cycle::new(0),
        );
        run(&mut d, &mut mem, 1, 10);
        assert_eq!(extra(&d, "ltrf_bypass_operand_reads"), 20);
        assert_eq!(extra(&d, "ltrf_oversized_entries"), 1);
        assert_eq!(d.stats(Cycle::new(10)).reads, 20);
        d.warp_deactivated(WarpSlot(0));
        d.warp_exited(WarpSlot(0));
        assert_eq!(extra(&d, "ltrf_writebacks"), 0);
        assert!(d.is_idle());
    }

    #[test]
    fn a_warp_without_a_partition_waits_when_all_are_owned() {
        let (mut d, _) = design(&["register_file.ltrf.partitions=2"], &[0], &[&[0]]);
        for w in 1..3 {
            d.warp_launched(WarpLaunch {
                warp: WarpSlot(w),
                scheduler: 0,
                cta: 0,
                registers_per_thread: 8,
            });
        }
        d.warp_activated(WarpSlot(0));
        d.warp_activated(WarpSlot(1));
        let mut c = candidate(&[], &[], Some(0));
        c.warp = WarpSlot(2);
        assert_eq!(d.can_accept(&c, Cycle::new(0)), Err(RfStall::NotResident));
        d.warp_deactivated(WarpSlot(1));
        let s = d.stats(Cycle::new(0));
        assert_eq!(s.extra["ltrf_deactivations"], 1);
    }

    #[test]
    fn technologies_follow_table_2() {
        // Every preset loads, by number and by name, on the LTRF GPU (16 banks of #1).
        let load = |t: &str| {
            let o = Override::parse(&format!("register_file.technology={t}")).unwrap();
            GpuConfig::load("maxwell-ltrf", &default_configs_dir(), &[o]).unwrap()
        };
        for (i, row) in TABLE2.iter().enumerate() {
            let by_number = load(&(i + 1).to_string());
            let by_name = load(&format!("\"{}\"", row.name));
            assert_eq!(by_number, by_name, "{}", row.name);
            let m = by_name.register_file.mrf_model();
            assert_eq!(m.banks, 16 * row.bank_multiplier, "{}", row.name);
        }
        let lat: Vec<u64> = (1..=7)
            .map(|t| load(&t.to_string()).register_file.mrf_latency().get())
            .collect();
        assert_eq!(lat, [1, 1, 2, 2, 3, 5, 6]);
        assert_eq!(MrfTechnology(7).capacity(32768), 262144);
        // A wrong name is refused, naming the key and the presets.
        for bad in ["tfet", "\"hp_sram\""] {
            let o = Override::parse(&format!("register_file.technology={bad}")).unwrap();
            let e = GpuConfig::load("maxwell-ltrf", &default_configs_dir(), &[o]).unwrap_err();
            assert_eq!(e.key(), Some("register_file.technology"), "{e}");
            assert!(e.to_string().contains("tfet-sram"), "{e}");
        }
        let e = GpuConfig::load(
            "gtx480",
            &default_configs_dir(),
            &[Override::parse("register_file.technology=8").unwrap()],
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("register_file.technology"), "{e}");
        let e = GpuConfig::load(
            "gtx480",
            &default_configs_dir(),
            &[
                Override::parse("register_file.design=\"ltrf\"").unwrap(),
                Override::parse("register_file.ltrf.partitions=7").unwrap(),
            ],
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("register_file.ltrf.partitions"), "{e}");
    }

    #[test]
    fn eight_times_the_capacity_raises_register_limited_occupancy_as_the_calculator_says() {
        // 256 threads x 64 registers: 8 warps of 64 x 32 = 2048 registers.
        let shape = CtaShape {
            threads: 256,
            registers_per_thread: 64,
            shared_bytes: 0,
        };
        let one = occupancy(&cfg(&["register_file.design=\"ltrf\""]), shape);
        assert_eq!(one.ctas_by_registers, 32768 / (2048 * 8));
        assert_eq!((one.ctas_per_sm, one.limited_by), (2, Limiter::Registers));
        for tech in 2..=7 {
            let t = format!("register_file.technology={tech}");
            let o = occupancy(&cfg(&["register_file.design=\"ltrf\"", &t]), shape);
            assert_eq!(o.ctas_by_registers, 8 * 32768 / (2048 * 8), "#{tech}");
            // Now 1536 threads per SM limit it: 6 CTAs.
            assert_eq!((o.ctas_per_sm, o.limited_by), (6, Limiter::Threads));
        }
        // The baseline design sees the technology's capacity too.
        let b = occupancy(&cfg(&["register_file.technology=6"]), shape);
        assert_eq!(b.ctas_by_registers, 16);
    }

    #[test]
    fn ltrf_designs_schedule_two_level_with_one_partition_per_active_warp() {
        let c = cfg(&["register_file.design=\"ltrf-plus\""]);
        assert_eq!(
            crate::rf::scheduling(&c),
            (crate::config::SchedulerPolicy::TwoLevel, 4)
        );
        let p = crate::rf::required_passes(&c);
        assert!(p.liveness_bits && p.intervals.is_some() && p.ltrf_renumber.is_none());
        let c = cfg(&["register_file.design=\"ltrf-conf\""]);
        assert_eq!(
            crate::rf::required_passes(&c).ltrf_renumber,
            Some(LtrfRenumber {
                registers_per_interval: 16,
                banks: 8
            })
        );
    }
}

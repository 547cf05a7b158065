//! The baseline register file: a banked main register file (MRF) read through operand
//! collector units, with one arbiter that gives writes priority over reads — the
//! organisation GPGPU-Sim's operand collector models (its `opndcoll_rfu_t`), described
//! in the CERF, LTRF and Malekeh baselines.
//!
//! Model, per SM:
//! - `register_file.banks` banks, each with `read_ports_per_bank` read ports and
//!   `write_ports_per_bank` write ports (`port_sharing = "separate"`), or ports shared by
//!   reads and writes (`"shared"`, GPGPU-Sim's single-ported banks: a granted write
//!   takes the port from reads in that cycle); one port moves one warp-wide 32-bit
//!   register per cycle. The banks, their latency and occupancy are the MRF technology's
//!   ([`crate::rf::technology::MrfModel`]): a port granted at cycle `t` delivers at
//!   `t + latency` (bank and network) and is free again at `t + 1` (pipelined) or at
//!   `t + occupancy`, the bank's own access time (non-pipelined: LTRF Table 2's
//!   CACTI banks). A read refused because its bank's ports are busy is a bank conflict.
//! - Register `r` of warp slot `w` lives in bank `(r + w) mod banks` (or `r mod banks`),
//!   within the warp's scheduler's partition when `partition_by_scheduler` ([`BankMap`]).
//!   A 64-bit operand is two registers, a 128-bit one four; predicates live in a separate,
//!   unbanked file and cost nothing here. A register read by two operands of one
//!   instruction is read once.
//! - Operand reads ([`Baseline::read_plan`]): each source register is one bank read
//!   (`wide_operand_reads = "per_register"`), or a whole 64- or 128-bit operand is one
//!   read in its first register's bank (`"per_operand"`: banks as wide as the operand);
//!   a matrix (`tensor`) instruction makes at most `tensor_operand_slots` reads, its
//!   registers grouped in order (Turing's HMMA: 7 source slots, Malekeh §2). A read
//!   that delivers several registers counts them all in the ledger.
//! - Collector units: `collector_units` generic units, or per execution-unit type
//!   (`specialised_collectors`). An issued instruction takes a free unit of its kind
//!   (else the warp stalls: [`RfStall`]), or with `multi_collector` as many as its reads
//!   need at `operands_per_collector` each (at most as many as serve it), which collect
//!   their shares in parallel and dispatch it together, through the first
//!   ([`Baseline::accept_spanning`]); the unit requests all its registers; each cycle
//!   the arbiter first grants pending writes (oldest first) to write ports, then reads
//!   (collectors in rotating order, operands in order) to read ports; every request that
//!   finds its bank's ports taken is counted as a bank conflict and retried next cycle.
//!   A unit whose reads have all arrived offers its instruction to the execution units
//!   (oldest instruction first, so a ready instruction never waits behind younger ones)
//!   and is freed when one takes it.
//! - A result is written when its writes to all its registers' banks have been granted
//!   and `bank_latency` has passed; then the SM releases the scoreboard.
//!
//! Hooks for designs built on it (a design keeps a `Baseline` and adds its own
//! structures): reads starting late ([`Baseline::accept_after`], [`Baseline::hold_reads`]),
//! reads outside the collectors ([`Baseline::queue_side_read`]), writes no instruction
//! waits for ([`Baseline::push_write_to_banks`]), a banked structure of the design's own
//! arbitrated with the MRF's banks ([`Baseline::add_upper_banks`]) and a cap on MRF reads
//! per cycle ([`Baseline::limit_mrf_reads_per_cycle`]).

use crate::bits::RoundRobin;
use crate::config::{CollectorKind, GpuConfig, OpClass, PortSharing, UnitKind, WideOperandReads};
use crate::kernel_info::{RegFileKind, RegOperand};
use crate::rf::ledger::{Charge, Ledger, OperandBuffer, Sink, Source, Transfer};
use crate::rf::{
    BankMap, Candidate, Dispatch, InstToken, IssuedInst, RegisterFile, RfCycle, RfStall, RfStats,
    WarpLaunch, WarpSlot, WriteRequest,
};
use crate::time::{Cycle, Cycles};
use ir::analysis::bitset::BitSet;

/// Registers one instruction reads or writes at most: the largest warpgroup product,
/// `wgmma` m64n256 with f32 (or s32) accumulators and A from registers, reads its 128
/// accumulators, 4 A registers and a 64-bit descriptor (134) and writes 128
/// (`kernel_info` refuses an instruction with more at load).
pub(crate) const MAX_REGS: usize = 136;

/// Registers one [`PendingWrite`] holds: a write of more (only a `wgmma`'s accumulators)
/// is queued as several of at most this many, each with its own `u32` mask, arbitrated
/// oldest first like any writes, and reported done when its last part completes. Ours:
/// it keeps the common write as small as before the wide instructions.
const WRITE_PART: usize = 32;

#[derive(Clone, Copy, Debug)]
struct Collector {
    /// `Some(kind)` for a specialised unit.
    kind: Option<UnitKind>,
    busy: bool,
    token: InstToken,
    unit: UnitKind,
    /// Banks of the registers still to be granted (`banks[..pending]`), in operand
    /// order: MRF banks, then any upper banks ([`Baseline::add_upper_banks`]).
    banks: [u8; MAX_REGS],
    pending: u8,
    /// Registers each read of `banks` delivers (more than one for a wide read:
    /// `register_file.wide_operand_reads`, `tensor_operand_slots`).
    delivers: [u8; MAX_REGS],
    /// When the last granted read delivers.
    ready_at: Cycle,
    /// A read of this unit was refused in its last arbitration.
    conflicted: bool,
    /// With its operands in, the first cycle an execution unit could take it, as the
    /// dispatch port said when it last refused it ([`crate::rf::DispatchPort::free_at`]):
    /// until then it has nothing to do and [`RegisterFile::next_event`] lets it sleep.
    units_free_at: Cycle,
    /// The first cycle its reads may be arbitrated (later than acceptance when a design
    /// adds pipeline stages in front of operand collection: [`Baseline::accept_after`]).
    start_at: Cycle,
    /// Counts the instructions it has taken (tells an occupant from a later one).
    epoch: u32,
    /// The scheduler whose instructions it takes (`partition_collectors`), or
    /// [`ANY_SCHEDULER`].
    group: u16,
    /// The scheduler of its instruction.
    scheduler: u16,
    /// Collectors (index, epoch) whose operands must have arrived before this one may
    /// dispatch (`after[..n_after]`, [`Baseline::wait_for`]: BOW's forwarded sources).
    after: [(u16, u32); MAX_AFTER],
    n_after: u8,
    /// `multi_collector`: the collector whose instruction this one collects a share of
    /// ([`NO_LEAD`]: its own instruction), and, of a lead, the units its instruction
    /// spans, itself included.
    lead: u16,
    span: u8,
    /// Its reads are arbitrated after every other collector's
    /// ([`Baseline::accept_banks_yielding`]: the modern core's memory instructions).
    yields: bool,
}

/// Banks of the registers of `w` still waiting for a write port.
fn waiting_banks(w: &PendingWrite) -> impl Iterator<Item = u8> + '_ {
    let mut m = w.waiting;
    std::iter::from_fn(move || {
        (m != 0).then(|| {
            let j = m.trailing_zeros() as usize;
            m &= m - 1;
            w.banks[j]
        })
    })
}

/// A collector that collects its own instruction's operands ([`Collector::lead`]).
const NO_LEAD: u16 = u16::MAX;

/// Most collectors one instruction waits for ([`Baseline::wait_for`]).
pub(crate) const MAX_AFTER: usize = 8;

/// A collector any scheduler's instructions may take; as a scheduler: one that may take
/// any collector.
pub(crate) const ANY_SCHEDULER: u16 = u16::MAX;

/// A register read a design asks for outside the collectors (WIR's verify reads and
/// dummy moves, LTRF's prefetches): it competes for read ports after writes, before or
/// after the collectors' reads ([`SideReadOrder`]).
#[derive(Clone, Copy, Debug)]
struct SideRead {
    token: InstToken,
    bank: u8,
    order: SideReadOrder,
    /// Cycles after the bank access before the value arrives (a slower network).
    transfer: Cycles,
    /// What the read moves, for the ledger (charged when the port is granted).
    moves: Transfer,
    /// When the granted read delivers; `None` while it waits for a port.
    done_at: Option<Cycle>,
}

/// Where a side read stands in a cycle's read arbitration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SideReadOrder {
    /// Before every collector read (WIR's verify reads and dummy moves).
    BeforeCollectors,
    /// After every collector read (LTRF's prefetches).
    AfterCollectors,
}

/// What a queued write is: who learns of it, and where it stands in a cycle's write
/// arbitration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WriteKind {
    /// An instruction's result, reported in `writes_done` when complete; arbitrated
    /// oldest first.
    Result,
    /// A write no instruction waits for (BOW-WR's deferred results, a register-file
    /// cache's writebacks), arbitrated oldest first with the results and tracked until
    /// complete.
    Writeback,
    /// An instruction's result, reported in `writes_done` when complete, that waits in
    /// the modern core's result queue (`register_file.result_queue`, MICRO'25: a
    /// variable-latency result): arbitrated after the results and writebacks, so a
    /// fixed-latency result that wants the same write port in the same cycle goes first.
    QueuedResult,
    /// A write no instruction waits for and nothing observes once granted (LTRF's
    /// evictions): arbitrated after every other write, oldest first, and forgotten as
    /// soon as its ports are granted (it wakes nobody up when it completes).
    Background,
}

#[derive(Clone, Copy, Debug)]
struct PendingWrite {
    token: InstToken,
    banks: [u8; WRITE_PART],
    /// Bit `i` set: register `i` still waits for a write port.
    waiting: u32,
    done_at: Cycle,
    kind: WriteKind,
    /// One part of a write of more than [`WRITE_PART`] registers: its token is reported
    /// done only when no other part of it is pending.
    part: bool,
}

/// Banks of a design's own structure arbitrated with the MRF's: see
/// [`Baseline::add_upper_banks`].
#[derive(Clone, Copy, Debug, Default)]
struct UpperBanks {
    latency: Cycles,
    read_conflicts: u64,
    write_conflicts: u64,
}

/// Ports of each bank: (used: reads, writes), (taken elsewhere: reads, writes).
pub(crate) type PortsUsed<'a> = ((&'a [u32], &'a [u32]), (&'a [u32], &'a [u32]));

/// Side reads granted and refused, over the run.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SideReadCounts {
    /// Reads that got a port.
    pub granted: u64,
    /// Refusals (a read refused in three cycles counts three).
    pub conflicts: u64,
}

/// Ports of non-pipelined MRF banks: each granted port stays taken for `occupancy`
/// cycles. With an occupancy of one cycle (pipelined banks) nothing is tracked.
#[derive(Clone, Debug)]
struct PortTimers {
    occupancy: Cycles,
    read_ports: usize,
    write_ports: usize,
    /// Per bank, per read port (and, with shared ports, per port): free again at.
    read_free: Vec<Cycle>,
    write_free: Vec<Cycle>,
    shared: bool,
}

impl PortTimers {
    fn new(
        occupancy: Cycles,
        banks: usize,
        read_ports: u32,
        write_ports: u32,
        shared: bool,
    ) -> Self {
        let tracked = occupancy.get() > 1;
        let (r, w) = (read_ports as usize, write_ports as usize);
        PortTimers {
            occupancy,
            read_ports: r,
            write_ports: w,
            read_free: vec![Cycle::ZERO; if tracked { banks * r } else { 0 }],
            write_free: vec![Cycle::ZERO; if tracked && !shared { banks * w } else { 0 }],
            shared,
        }
    }

    fn tracked(&self) -> bool {
        !self.read_free.is_empty()
    }

    /// Ports of each bank still busy at `now`, into the per-cycle use counts.
    fn load(&self, now: Cycle, reads_used: &mut [u32], writes_used: &mut [u32]) {
        for (b, ports) in self.read_free.chunks(self.read_ports.max(1)).enumerate() {
            let busy = ports.iter().filter(|&&t| t > now).count() as u32;
            if self.shared {
                writes_used[b] = busy;
            } else {
                reads_used[b] = busy;
            }
        }
        for (b, ports) in self.write_free.chunks(self.write_ports.max(1)).enumerate() {
            writes_used[b] = ports.iter().filter(|&&t| t > now).count() as u32;
        }
    }

    /// Takes a free port of MRF bank `b` at `now` (the caller checked that one is).
    /// The first cycle after `now` at which bank `b` has one of its `limit` ports free
    /// for a read (`write`: a write), as far as the timers know: `now + 1` when nothing
    /// is tracked, or when `limit` is not the number of timers (shared ports with unequal
    /// counts), which is then asked again every cycle.
    fn free_at(&self, b: usize, write: bool, limit: u32, now: Cycle) -> Cycle {
        let soon = now + Cycles::new(1);
        let (free, n) = if write && !self.shared {
            (&self.write_free, self.write_ports)
        } else {
            (&self.read_free, self.read_ports)
        };
        if !self.tracked() || limit as usize != n {
            return soon;
        }
        free.get(b * n..(b + 1) * n)
            .and_then(|ports| ports.iter().copied().min())
            .map_or(soon, |t| t.max(soon))
    }

    fn take(&mut self, b: usize, write: bool, now: Cycle) {
        let (free, n) = if write && !self.shared {
            (&mut self.write_free, self.write_ports)
        } else {
            (&mut self.read_free, self.read_ports)
        };
        if let Some(t) = free[b * n..(b + 1) * n].iter_mut().find(|t| **t <= now) {
            *t = now + self.occupancy;
        }
    }
}

/// The banked MRF with operand collectors. See the module docs.
pub struct Baseline {
    map: BankMap,
    latency: Cycles,
    /// Non-pipelined MRF banks: when each port is free again.
    ports: PortTimers,
    /// MRF banks; bank numbers from here on are upper banks.
    mrf_banks: usize,
    upper: UpperBanks,
    /// MRF reads granted per cycle at most (`u32::MAX`: only the ports limit them).
    mrf_reads_per_cycle: u32,
    read_ports: u32,
    write_ports: u32,
    shared_ports: bool,
    collectors: Vec<Collector>,
    writes: Vec<PendingWrite>,
    reads_used: Vec<u32>,
    writes_used: Vec<u32>,
    side_reads: Vec<SideRead>,
    side_read_counts: SideReadCounts,
    /// Queued [`WriteKind::Background`] writes.
    background_writes: usize,
    /// A [`WriteKind::QueuedResult`] was ever queued (its arbitration pass runs).
    queued_results: bool,
    /// A yielding collector was ever occupied (the reads are arbitrated in two passes).
    yielding_reads: bool,
    /// See [`Baseline::queued_write_delays`].
    queued_write_delays: u64,
    busy: usize,
    /// Bit `i` set: collector `i` is busy (the arbiter visits only these).
    busy_collectors: BitSet,
    /// The busy collectors in the order they took their instructions, oldest first: the
    /// order in which units whose operands are in are offered to the execution units.
    accepted: Vec<u16>,
    /// This cycle's copy of `accepted`, which dispatch changes as it walks it.
    dispatch_order: Vec<u16>,
    /// `dispatch_per_scheduler` (0: no limit) and this cycle's dispatches per scheduler.
    dispatch_limit: u32,
    dispatched: Vec<u32>,
    /// `register_file.wide_operand_reads` and `tensor_operand_slots` (0: none).
    wide_reads: WideOperandReads,
    tensor_slots: usize,
    /// `operands_per_collector` under `multi_collector` (0: one unit per instruction).
    unit_slots: usize,
    /// Under `multi_collector`: instructions that took several units, the units they
    /// took, and instructions that needed more units than serve them.
    spans: [u64; 3],
    last_integrated: Cycle,
    stats: RfStats,
    /// What the registers did and what it cost (see [`crate::rf::ledger`]).
    ledger: Ledger,
    /// What holds the registers of the MRF banks (CERF: its integrated array).
    main: Source,
    /// What holds the registers of the upper banks ([`Baseline::add_upper_banks`]).
    upper_source: Source,
    /// Per MRF bank: read and write ports another user of the banks took this cycle
    /// (CERF's L1D side: [`Baseline::ports_taken_elsewhere`]); empty when none does.
    taken_reads: Vec<u32>,
    taken_writes: Vec<u32>,
    /// Requests refused at a bank whose ports another user had taken some of this cycle.
    refused_where_taken: u64,
    /// Refusals of skipped cycles the other user of the banks must check against its
    /// own accesses (CERF: [`Baseline::take_skipped_refusals`]): per request, its bank
    /// and the cycles `[from, until)` it was refused in. `None`: nobody asks.
    skipped_refusals: Option<Vec<(u8, Cycle, Cycle)>>,
    /// The last cycle the arbiter ran ([`RegisterFile::skip_to`] counts the refusals
    /// of the cycles after it that the SM skipped).
    last_arbitrated: Cycle,
}

impl Baseline {
    /// The design for a validated config.
    pub fn new(cfg: &GpuConfig) -> Self {
        let rf = &cfg.register_file;
        let blank = |kind| Collector {
            kind,
            busy: false,
            token: InstToken(0),
            unit: UnitKind::Sp,
            banks: [0; MAX_REGS],
            delivers: [1; MAX_REGS],
            pending: 0,
            ready_at: Cycle::ZERO,
            conflicted: false,
            units_free_at: Cycle::ZERO,
            start_at: Cycle::ZERO,
            epoch: 0,
            group: ANY_SCHEDULER,
            scheduler: ANY_SCHEDULER,
            after: [(0, 0); MAX_AFTER],
            n_after: 0,
            lead: NO_LEAD,
            span: 1,
            yields: false,
        };
        let mut collectors: Vec<Collector> = Vec::new();
        let schedulers = cfg.sm.schedulers.max(1) as usize;
        // Each kind's units split evenly between the schedulers, in order.
        let split = |collectors: &mut Vec<Collector>, kind, n: u32| {
            let n = n as usize;
            let per = (n / schedulers).max(1);
            collectors.extend((0..n).map(|j| Collector {
                group: if rf.partition_collectors {
                    (j / per).min(schedulers - 1) as u16
                } else {
                    ANY_SCHEDULER
                },
                ..blank(kind)
            }));
        };
        match (rf.collectors, rf.specialised_collectors) {
            (CollectorKind::Specialised, Some(s)) => {
                for (kind, n) in [
                    (UnitKind::Sp, s.sp),
                    (UnitKind::Int, s.int),
                    (UnitKind::Sfu, s.sfu),
                    (UnitKind::Dp, s.dp),
                    (UnitKind::Mem, s.mem),
                ] {
                    split(&mut collectors, Some(kind), n);
                }
            }
            _ => split(&mut collectors, None, rf.collector_units),
        }
        let mrf = rf.mrf_model();
        let banks = mrf.banks as usize;
        Baseline {
            map: BankMap::new(cfg),
            latency: mrf.latency,
            ports: PortTimers::new(
                mrf.occupancy,
                banks,
                rf.read_ports_per_bank,
                rf.write_ports_per_bank,
                rf.port_sharing == PortSharing::Shared,
            ),
            mrf_banks: banks,
            upper: UpperBanks::default(),
            mrf_reads_per_cycle: u32::MAX,
            read_ports: rf.read_ports_per_bank,
            write_ports: rf.write_ports_per_bank,
            shared_ports: rf.port_sharing == PortSharing::Shared,
            stats: RfStats {
                design: "baseline".into(),
                reads_per_bank: vec![0; banks],
                writes_per_bank: vec![0; banks],
                collector_units: collectors.len() as u64,
                ..RfStats::default()
            },
            busy_collectors: BitSet::new_empty(collectors.len()),
            accepted: Vec::with_capacity(collectors.len()),
            dispatch_order: Vec::with_capacity(collectors.len()),
            dispatch_limit: rf.dispatch_per_scheduler,
            dispatched: vec![0; schedulers],
            wide_reads: rf.wide_operand_reads,
            tensor_slots: rf.tensor_operand_slots.map_or(0, |n| n as usize),
            unit_slots: if rf.multi_collector {
                rf.operands_per_collector.max(1) as usize
            } else {
                0
            },
            spans: [0; 3],
            collectors,
            writes: Vec::with_capacity(64),
            side_reads: Vec::with_capacity(16),
            side_read_counts: SideReadCounts::default(),
            background_writes: 0,
            queued_results: false,
            yielding_reads: false,
            queued_write_delays: 0,
            reads_used: vec![0; banks],
            writes_used: vec![0; banks],
            busy: 0,
            last_integrated: Cycle::ZERO,
            ledger: Ledger::new(OperandBuffer::Collector),
            main: Source::MrfBank,
            upper_source: Source::LtrfCache,
            taken_reads: Vec::new(),
            taken_writes: Vec::new(),
            refused_where_taken: 0,
            skipped_refusals: None,
            last_arbitrated: Cycle::ZERO,
        }
    }

    /// The read and write ports of each MRF bank that another user of the banks (CERF's
    /// L1D side) takes in the next [`RegisterFile::cycle`], to fill in before it; the
    /// arbiter grants only the rest. Under shared ports, the writes' count is the port's.
    pub(crate) fn ports_taken_elsewhere(&mut self) -> (&mut [u32], &mut [u32]) {
        if self.taken_reads.is_empty() {
            self.taken_reads = vec![0; self.mrf_banks];
            self.taken_writes = vec![0; self.mrf_banks];
        }
        (&mut self.taken_reads, &mut self.taken_writes)
    }

    /// Ports of each bank in use after the last cycle's arbitration (reads, writes), the
    /// ports taken elsewhere included, and those taken elsewhere (reads, writes).
    pub(crate) fn ports_used(&self) -> PortsUsed<'_> {
        (
            (&self.reads_used, &self.writes_used),
            (&self.taken_reads, &self.taken_writes),
        )
    }

    /// Requests refused so far at a bank whose ports another user had taken some of in
    /// that cycle (conflicts with that user's accesses).
    pub(crate) fn refused_where_taken(&self) -> u64 {
        self.refused_where_taken
    }

    /// [`RegisterFile::skip_to`] keeps, for each request it counts refusals of, the
    /// bank and the skipped cycles it was refused in ([`Baseline::take_skipped_refusals`]):
    /// another user of the banks (CERF's L1D side) that took some of those banks' ports
    /// in those cycles counts them in [`Baseline::refused_where_taken`].
    pub(crate) fn keep_skipped_refusals(&mut self) {
        self.skipped_refusals = Some(Vec::with_capacity(64));
    }

    /// The refusals [`RegisterFile::skip_to`] counted since the last call, as (bank,
    /// first cycle, end cycle), to `f`, which returns how many of them met another
    /// user's access of the bank (added to [`Baseline::refused_where_taken`]).
    pub(crate) fn take_skipped_refusals(&mut self, f: impl FnOnce(&[(u8, Cycle, Cycle)]) -> u64) {
        if let Some(mut v) = self.skipped_refusals.take() {
            self.refused_where_taken += f(&v);
            v.clear();
            self.skipped_refusals = Some(v);
        }
    }

    /// Whether a request waits for a port (a collector's operand, a write, a side
    /// read): the SM would be evaluated every cycle if [`RegisterFile::next_event`] did
    /// not know when a port frees.
    pub(crate) fn waits_for_ports(&self, now: Cycle) -> bool {
        self.writes.iter().any(|w| w.waiting != 0)
            || self.side_reads.iter().any(|r| r.done_at.is_none())
            || self
                .collectors
                .iter()
                .any(|u| u.busy && u.pending > 0 && u.start_at <= now)
    }

    /// The first cycle after `now` at which the arbiter could grant a read (`write`: a
    /// write) of bank `b`: when a port of a non-pipelined MRF bank is free again, else
    /// the next cycle (upper banks, pipelined banks). Ports another user takes (CERF's
    /// line accesses) only refuse more: the SM is evaluated when the timers free one.
    fn port_free_at(&self, b: usize, write: bool, now: Cycle) -> Cycle {
        if b >= self.mrf_banks {
            return now + Cycles::new(1);
        }
        let limit = if write {
            self.write_ports
        } else {
            self.read_ports
        };
        self.ports.free_at(b, write, limit, now)
    }

    /// The first cycle after `now` at which one of `banks` could grant a request.
    fn any_port_free_at(&self, banks: impl Iterator<Item = u8>, write: bool, now: Cycle) -> Cycle {
        banks
            .map(|b| self.port_free_at(usize::from(b), write, now))
            .min()
            .unwrap_or(now + Cycles::new(1))
    }

    /// Cycles of `[from, until)` in which a request to bank `b`, asked every cycle from
    /// `from` on with no grant anywhere since `from - 1`, finds its ports still taken.
    fn refused_cycles(&self, b: u8, write: bool, from: Cycle, until: Cycle) -> u64 {
        let before = Cycle::new(from.get().saturating_sub(1));
        self.port_free_at(usize::from(b), write, before)
            .min(until)
            .saturating_since(from)
            .get()
    }

    /// Keeps `n` refusals of MRF bank `b` from cycle `from` on in `log`
    /// (the `skipped_refusals` field), if it is kept. A function of the field, not of
    /// `self`, so that the collector walk of [`RegisterFile::skip_to`] can call it while
    /// it borrows the collectors.
    fn note_skipped_refusals(
        log: &mut Option<Vec<(u8, Cycle, Cycle)>>,
        b: u8,
        from: Cycle,
        n: u64,
    ) {
        if let Some(v) = log {
            if n > 0 {
                v.push((b, from, from + Cycles::new(n)));
            }
        }
    }

    fn taken_at(&self, b: usize) -> bool {
        self.taken_reads.get(b).is_some_and(|&n| n > 0)
            || self.taken_writes.get(b).is_some_and(|&n| n > 0)
    }

    /// The ledger, for the design built on this baseline to record its own structures'
    /// events in (one ledger per design).
    pub(crate) fn ledger_mut(&mut self) -> &mut Ledger {
        &mut self.ledger
    }

    /// Makes the design's operands wait in `buffer` instead of collector units.
    pub(crate) fn set_operand_buffer(&mut self, buffer: OperandBuffer) {
        self.ledger.set_buffer(buffer);
    }

    /// The MRF banks hold CERF's integrated array: reads are [`Source::CerfArray`],
    /// results [`Sink::CerfArray`].
    pub(crate) fn banks_hold_cerf_array(&mut self) {
        self.main = Source::CerfArray;
    }

    /// The same organisation with unlimited ports on every bank: every read is granted
    /// in the first arbitration after acceptance and every write at once, so nothing
    /// conflicts. The ideal design ([`crate::rf::ideal`]) is this, reporting as `name`.
    pub(crate) fn with_unlimited_ports(cfg: &GpuConfig, name: &str) -> Self {
        let mut b = Baseline::new(cfg);
        b.read_ports = u32::MAX;
        b.write_ports = u32::MAX;
        b.shared_ports = false;
        b.ports = PortTimers::new(Cycles::new(1), 0, 0, 0, false);
        b.stats.design = name.into();
        b
    }

    /// [`Baseline::accept_banks`], with the reads starting `extra` cycles after the first
    /// arbitration they would have had (the cycle after `now`): LTRF's
    /// warp-control-block lookup, a stage between collector allocation and arbitration.
    pub(crate) fn accept_banks_after(
        &mut self,
        token: InstToken,
        unit: UnitKind,
        banks: &[u8],
        now: Cycle,
        extra: Cycles,
    ) {
        self.accept_banks(token, unit, banks, now);
        if extra.get() == 0 {
            return;
        }
        if let Some(c) = self
            .collectors
            .iter_mut()
            .find(|c| c.busy && c.token == token)
        {
            c.start_at = now + Cycles::new(1) + extra;
            c.ready_at = c.ready_at.max(c.start_at + Cycles::new(1));
        }
    }

    /// [`RegisterFile::accept`], with the instruction's reads starting `extra` cycles
    /// late: the extra pipeline stages of a design in front of operand collection.
    pub(crate) fn accept_after(&mut self, i: IssuedInst<'_>, now: Cycle, extra: Cycles) {
        self.accept(i, now);
        self.start_reads_after(i.token, now, extra);
    }

    /// The reads of `token`, accepted at `now`, start `extra` cycles late (see
    /// [`Baseline::accept_after`]).
    pub(crate) fn start_reads_after(&mut self, token: InstToken, now: Cycle, extra: Cycles) {
        if let Some(c) = self
            .collectors
            .iter_mut()
            .find(|c| c.busy && c.token == token)
        {
            c.start_at = now + extra;
            c.ready_at = c.ready_at.max(now + extra + Cycles::new(1));
        }
    }

    /// Holds the reads of `token`'s collector until `until` (CERF: a register being
    /// filled back from memory). Only before any of its reads was granted.
    pub(crate) fn hold_reads(&mut self, token: InstToken, until: Cycle) {
        if let Some(c) = self
            .collectors
            .iter_mut()
            .find(|c| c.busy && c.token == token)
        {
            c.start_at = until;
            c.ready_at = until + Cycles::new(1);
        }
    }

    /// Asks for a read of bank `bank` on behalf of `token`, outside the collectors and
    /// before their reads; see [`Baseline::take_side_reads_done`].
    pub(crate) fn request_side_read(&mut self, token: InstToken, bank: usize, moves: Transfer) {
        self.queue_side_read(
            token,
            bank,
            SideReadOrder::BeforeCollectors,
            Cycles::ZERO,
            moves,
        );
    }

    /// Asks for a read of MRF bank `bank` on behalf of `token` (any tag the design
    /// chooses), outside the collectors: arbitrated every cycle after the writes, at
    /// `order` relative to the collectors' reads, oldest first; it delivers `transfer`
    /// cycles after the bank access. A refusal counts as a read bank conflict. The ledger
    /// charges `moves` when the read is granted.
    pub(crate) fn queue_side_read(
        &mut self,
        token: InstToken,
        bank: usize,
        order: SideReadOrder,
        transfer: Cycles,
        moves: Transfer,
    ) {
        self.side_reads.push(SideRead {
            token,
            bank: bank as u8,
            order,
            transfer,
            moves,
            done_at: None,
        });
    }

    /// Calls `done` with the token of every side read that has delivered by `now`, and
    /// forgets them.
    pub(crate) fn take_side_reads_done(&mut self, now: Cycle, mut done: impl FnMut(InstToken)) {
        self.side_reads.retain(|r| match r.done_at {
            Some(t) if t <= now => {
                done(r.token);
                false
            }
            _ => true,
        });
    }

    /// Calls `granted` with the token and delivery cycle of every side read granted so
    /// far, and forgets them: for a design that tracks deliveries itself (LTRF waits for
    /// a warp's last prefetch read), so that they wake nobody up here.
    pub(crate) fn take_side_reads_granted(&mut self, mut granted: impl FnMut(InstToken, Cycle)) {
        self.side_reads.retain(|r| match r.done_at {
            Some(t) => {
                granted(r.token, t);
                false
            }
            None => true,
        });
    }

    /// Forgets every side read of `token` still queued (granted ones stay counted: the
    /// bank was read).
    pub(crate) fn cancel_side_reads(&mut self, token: InstToken) {
        self.side_reads.retain(|r| r.token != token);
    }

    /// Side reads granted and refused so far.
    pub(crate) fn side_read_counts(&self) -> SideReadCounts {
        self.side_read_counts
    }

    /// Adds `count` banks of a design's own structure in front of the MRF (LTRF's
    /// register-file cache), numbered from the MRF's bank count on, which collectors and
    /// writes may name ([`Baseline::accept_banks`], [`Baseline::push_write_to_banks`]).
    /// They have the MRF banks' port counts, always separate for reads and writes, take
    /// `latency` per access and are arbitrated in the same pass as the MRF's banks; their
    /// accesses are not MRF accesses (not in `reads`, `writes`, per-bank counts or
    /// `*_bank_conflicts`): their conflicts are in [`Baseline::upper_bank_conflicts`].
    pub(crate) fn add_upper_banks(&mut self, count: usize, latency: Cycles, source: Source) {
        self.upper_source = source;
        debug_assert!(self.mrf_banks + count <= usize::from(u8::MAX));
        let total = self.mrf_banks + count;
        self.reads_used.resize(total, 0);
        self.writes_used.resize(total, 0);
        self.upper.latency = latency;
    }

    /// Refused (read, write) requests at upper banks so far.
    pub(crate) fn upper_bank_conflicts(&self) -> (u64, u64) {
        (self.upper.read_conflicts, self.upper.write_conflicts)
    }

    /// Grants at most `n` MRF reads per cycle over all banks (collectors' and side reads
    /// together: LTRF's narrow MRF-to-cache crossbar); a read refused for it counts as
    /// a bank conflict.
    pub(crate) fn limit_mrf_reads_per_cycle(&mut self, n: u32) {
        self.mrf_reads_per_cycle = n;
    }

    fn latency_of(&self, bank: usize) -> Cycles {
        if bank < self.mrf_banks {
            self.latency
        } else {
            self.upper.latency
        }
    }

    /// The bank of `reg` for `warp` of `scheduler` under the config's mapping.
    pub(crate) fn bank_of(&self, reg: u16, warp: WarpSlot, scheduler: u16) -> usize {
        self.map.bank(reg, warp, scheduler)
    }

    /// Reports statistics under another design's name (designs built on the baseline).
    pub(crate) fn rename_design(&mut self, name: &str) {
        self.stats.design = name.into();
    }

    fn fits(&self, c: &Collector, unit: UnitKind, scheduler: u16) -> bool {
        !c.busy && self.serves(c, unit, scheduler)
    }

    /// Whether `c` may ever take an instruction for `unit` from `scheduler`.
    fn serves(&self, c: &Collector, unit: UnitKind, scheduler: u16) -> bool {
        c.kind.is_none_or(|k| k == unit)
            && (c.group == ANY_SCHEDULER || scheduler == ANY_SCHEDULER || c.group == scheduler)
    }

    /// Integrates collector occupancy up to `now`.
    fn integrate(&mut self, now: Cycle) {
        if now > self.last_integrated {
            let dt = (now - self.last_integrated).get();
            self.stats.collector_busy_cycles += self.busy as u64 * dt;
            if self.busy == self.collectors.len() && self.busy > 0 {
                self.stats.collectors_full_cycles += dt;
            }
            self.last_integrated = now;
        }
    }

    /// Number of collector units.
    pub(crate) fn collector_count(&self) -> usize {
        self.collectors.len()
    }

    /// Whether collector `idx` is free and may take an instruction for `unit` from
    /// `scheduler`.
    pub(crate) fn collector_free_for(&self, idx: usize, unit: UnitKind, scheduler: u16) -> bool {
        self.fits(&self.collectors[idx], unit, scheduler)
    }

    /// Whether collector `idx` may ever take an instruction for `unit` from `scheduler`
    /// (its kind and partition).
    pub(crate) fn collector_kind_fits(&self, idx: usize, unit: UnitKind, scheduler: u16) -> bool {
        self.serves(&self.collectors[idx], unit, scheduler)
    }

    /// Whether collector `idx` holds an instruction not yet dispatched.
    pub(crate) fn collector_busy(&self, idx: usize) -> bool {
        self.collectors[idx].busy
    }

    /// How many instructions collector `idx` has taken: tells its occupant from later
    /// ones ([`Baseline::wait_for`]).
    pub(crate) fn collector_epoch(&self, idx: usize) -> u32 {
        self.collectors[idx].epoch
    }

    /// Collector `idx` may dispatch only once the operands of `producer` (a collector and
    /// its epoch when it took the instruction) have all arrived, unless it has moved on.
    /// Returns whether that makes it wait at `now`.
    pub(crate) fn wait_for(&mut self, idx: usize, producer: (usize, u32), now: Cycle) -> bool {
        let p = (producer.0 as u16, producer.1);
        if producer.0 >= self.collectors.len() || !self.pending_at(p, now) {
            return false;
        }
        let c = &mut self.collectors[idx];
        let n = usize::from(c.n_after);
        if n < MAX_AFTER && !c.after[..n].contains(&p) {
            c.after[n] = p;
            c.n_after += 1;
        }
        true
    }

    /// Whether collector `p.0`, still holding the instruction of epoch `p.1`, waits for
    /// operands at `now`.
    fn pending_at(&self, p: (u16, u32), now: Cycle) -> bool {
        let c = &self.collectors[usize::from(p.0)];
        c.busy && c.epoch == p.1 && !(c.pending == 0 && c.ready_at <= now)
    }

    /// Whether a collector `u` waits for another's operands at `now`.
    fn waits(&self, u: &Collector, now: Cycle) -> bool {
        u.after[..usize::from(u.n_after)]
            .iter()
            .any(|&p| self.pending_at(p, now))
    }

    /// A write of 32-bit register `reg` of `warp` to its MRF bank that no instruction
    /// waits for (a register-file cache's writeback of an evicted or flushed value):
    /// arbitrated, counted and timed like any write, never reported in `writes_done`.
    pub(crate) fn request_writeback(
        &mut self,
        reg: u16,
        warp: WarpSlot,
        scheduler: u16,
        now: Cycle,
    ) {
        let dsts = [RegOperand {
            file: RegFileKind::General,
            reg,
            width: 1,
            hint: Default::default(),
        }];
        let w = WriteRequest {
            token: InstToken(u32::MAX),
            warp,
            scheduler,
            dsts: &dsts,
        };
        self.push_write(w, now, false);
    }

    /// Queues the bank writes of `w`; `report`: its token goes to `writes_done` when
    /// they complete.
    pub(crate) fn push_write(&mut self, w: WriteRequest<'_>, now: Cycle, report: bool) {
        let kind = if report {
            WriteKind::Result
        } else {
            WriteKind::Writeback
        };
        self.push_write_kind(w, now, kind);
    }

    fn push_write_kind(&mut self, w: WriteRequest<'_>, now: Cycle, kind: WriteKind) {
        let mut banks = [0u8; MAX_REGS];
        let n = self.banks_of(w.dsts, w.warp, w.scheduler, &mut banks);
        self.push_write_to_banks(w.token, &banks[..usize::from(n)], now, kind);
    }

    /// [`RegisterFile::request_write`] of a result that waits in the result queue
    /// ([`WriteKind::QueuedResult`]).
    pub(crate) fn request_queued_write(&mut self, w: WriteRequest<'_>, now: Cycle) {
        self.charge_result_write(&w);
        self.queued_results = true;
        self.push_write_kind(w, now, WriteKind::QueuedResult);
    }

    /// Register writes of queued results refused a write port by an earlier write in
    /// the same cycle (one per register per cycle).
    pub(crate) fn queued_write_delays(&self) -> u64 {
        self.queued_write_delays
    }

    fn charge_result_write(&mut self, w: &WriteRequest<'_>) {
        let sink = if self.main == Source::CerfArray {
            Sink::CerfArray
        } else {
            Sink::MrfBank
        };
        let n: u64 = w
            .dsts
            .iter()
            .filter(|o| o.file == RegFileKind::General)
            .map(|o| u64::from(o.width))
            .sum();
        self.ledger.write(sink, n);
    }

    /// Queues writes of `token` to `banks` (MRF or upper banks, one per register, at
    /// most [`MAX_REGS`]); they complete the access latency after the last grant.
    pub(crate) fn push_write_to_banks(
        &mut self,
        token: InstToken,
        banks: &[u8],
        now: Cycle,
        kind: WriteKind,
    ) {
        if kind == WriteKind::Background {
            self.background_writes += 1;
        }
        let part = banks.len() > WRITE_PART;
        // A write of no register is still one (reported when done), as before.
        let banks = &banks[..banks.len().min(MAX_REGS)];
        let parts = banks.chunks(WRITE_PART);
        for chunk in std::iter::once(&banks[..0])
            .take(usize::from(banks.is_empty()))
            .chain(parts)
        {
            let n = chunk.len();
            let mut b = [0u8; WRITE_PART];
            b[..n].copy_from_slice(chunk);
            self.writes.push(PendingWrite {
                token,
                banks: b,
                waiting: if n >= 32 { u32::MAX } else { (1u32 << n) - 1 },
                done_at: now,
                kind,
                part,
            });
        }
    }

    /// Why collector `idx`, which holds an instruction, cannot take another: its reads
    /// wait for banks, or its instruction waits for an execution unit, or neither yet.
    pub(crate) fn busy_reason(&self, idx: usize) -> RfStall {
        let u = &self.collectors[idx];
        if u.pending > 0 && u.conflicted {
            RfStall::BankConflict
        } else if u.pending == 0 && u.busy {
            RfStall::PipelineBusy
        } else {
            RfStall::NoFreeCollector
        }
    }

    /// Takes instruction `token` (`inst`) into the free collector `idx`, which requests
    /// only the registers of `reads` from the banks (designs that serve some operands
    /// elsewhere pass the rest). With nothing to read it dispatches one cycle later.
    pub(crate) fn accept_into(
        &mut self,
        idx: usize,
        token: InstToken,
        inst: &Candidate<'_>,
        reads: &[RegOperand],
        now: Cycle,
    ) {
        let mut banks = [0u8; MAX_REGS];
        let mut delivers = [1u8; MAX_REGS];
        let n = self.read_plan(reads, inst, &mut banks, &mut delivers);
        self.occupy(idx, token, inst.unit, &banks[..n], now);
        let c = &mut self.collectors[idx];
        c.delivers[..n].copy_from_slice(&delivers[..n]);
        c.scheduler = inst.scheduler;
    }

    /// [`RegisterFile::accept`] of instruction `token` for `unit` into the first free
    /// collector of its kind, which requests `banks` (MRF or upper banks, one per
    /// register, at most [`MAX_REGS`]): for designs that decide where each operand lives.
    pub(crate) fn accept_banks(
        &mut self,
        token: InstToken,
        unit: UnitKind,
        banks: &[u8],
        now: Cycle,
    ) {
        let Some(idx) = self
            .collectors
            .iter()
            .position(|u| self.fits(u, unit, ANY_SCHEDULER))
        else {
            debug_assert!(false, "accept without a free collector");
            return;
        };
        self.occupy(idx, token, unit, banks, now);
    }

    /// [`Baseline::accept_banks`] for an instruction whose reads yield to every other
    /// collector's: each cycle they are arbitrated after the others, so they take only
    /// the read ports left over. Huerta et al. MICRO'25 §5.1.1: variable-latency
    /// instructions wait in a queue for register-file ports, and "fixed-latency
    /// instructions are given priority over variable-latency instructions to allocate
    /// register file ports".
    pub(crate) fn accept_banks_yielding(
        &mut self,
        token: InstToken,
        unit: UnitKind,
        banks: &[u8],
        now: Cycle,
    ) {
        self.accept_banks(token, unit, banks, now);
        if let Some(&idx) = self.accepted.last() {
            let c = &mut self.collectors[usize::from(idx)];
            if c.busy && c.token == token {
                c.yields = true;
                self.yielding_reads = true;
            }
        }
    }

    fn occupy(&mut self, idx: usize, token: InstToken, unit: UnitKind, banks: &[u8], now: Cycle) {
        debug_assert!(self.fits(&self.collectors[idx], unit, ANY_SCHEDULER));
        self.integrate(now);
        let n = banks.len().min(MAX_REGS);
        let c = &mut self.collectors[idx];
        c.busy = true;
        self.busy_collectors.insert(idx);
        c.token = token;
        c.unit = unit;
        c.banks[..n].copy_from_slice(&banks[..n]);
        // Only `delivers[..pending]` is ever read.
        c.delivers[..n].fill(1);
        c.pending = n as u8;
        c.ready_at = now + Cycles::new(1);
        c.conflicted = false;
        c.units_free_at = Cycle::ZERO;
        c.start_at = now;
        c.epoch = c.epoch.wrapping_add(1);
        c.n_after = 0;
        c.lead = NO_LEAD;
        c.span = 1;
        c.yields = false;
        c.scheduler = ANY_SCHEDULER;
        self.busy += 1;
        self.accepted.push(idx as u16);
    }

    /// Frees collector `idx` (its instruction dispatched).
    fn release(&mut self, idx: usize) {
        self.collectors[idx].busy = false;
        self.busy_collectors.remove(idx);
        self.busy -= 1;
        if let Some(k) = self.accepted.iter().position(|&i| usize::from(i) == idx) {
            self.accepted.remove(k);
        }
    }

    /// Offers write `k`'s waiting registers to their banks' write ports.
    fn arbitrate_write(&mut self, k: usize, now: Cycle) {
        let mut w = self.writes[k];
        let mut m = w.waiting;
        while m != 0 {
            let j = m.trailing_zeros() as usize;
            m &= m - 1;
            let b = w.banks[j] as usize;
            let mrf = b < self.mrf_banks;
            if self.writes_used[b] < self.write_ports {
                self.writes_used[b] += 1;
                self.ledger.charge(Charge::ArbiterRequest, 1);
                if mrf {
                    if self.ports.tracked() {
                        self.ports.take(b, true, now);
                    }
                    self.stats.writes_per_bank[b] += 1;
                    self.stats.writes += 1;
                }
                w.waiting &= !(1 << j);
                w.done_at = w.done_at.max(now + self.latency_of(b));
            } else if mrf {
                self.stats.write_bank_conflicts += 1;
                if w.kind == WriteKind::QueuedResult {
                    self.queued_write_delays += 1;
                }
                if self.taken_at(b) {
                    self.refused_where_taken += 1;
                }
            } else {
                self.upper.write_conflicts += 1;
            }
        }
        self.writes[k] = w;
    }

    /// Takes a read port of bank `b` for this cycle if one is free (and, at an MRF bank,
    /// the per-cycle MRF read limit allows); counts the read or the conflict.
    fn grant_read(&mut self, b: usize, mrf_reads: &mut u32, now: Cycle) -> bool {
        let mrf = b < self.mrf_banks;
        if self.reads_used[b] < self.read_ports && (!mrf || *mrf_reads < self.mrf_reads_per_cycle) {
            self.reads_used[b] += 1;
            self.ledger.charge(Charge::ArbiterRequest, 1);
            if mrf {
                if self.ports.tracked() {
                    self.ports.take(b, false, now);
                }
                *mrf_reads += 1;
                self.stats.reads_per_bank[b] += 1;
                self.stats.reads += 1;
            }
            true
        } else {
            if mrf {
                self.stats.read_bank_conflicts += 1;
                if self.taken_at(b) {
                    self.refused_where_taken += 1;
                }
            } else {
                self.upper.read_conflicts += 1;
            }
            false
        }
    }

    /// Arbitrates the waiting side reads of `order`, oldest first.
    fn arbitrate_side_reads(&mut self, order: SideReadOrder, now: Cycle, mrf_reads: &mut u32) {
        for k in 0..self.side_reads.len() {
            let r = self.side_reads[k];
            if r.done_at.is_some() || r.order != order {
                continue;
            }
            if self.grant_read(usize::from(r.bank), mrf_reads, now) {
                self.side_read_counts.granted += 1;
                self.ledger.transfer(r.moves, 1);
                self.side_reads[k].done_at = Some(now + self.latency + r.transfer);
            } else {
                self.side_read_counts.conflicts += 1;
            }
        }
    }

    fn banks_of(
        &self,
        ops: &[RegOperand],
        warp: WarpSlot,
        scheduler: u16,
        out: &mut [u8; MAX_REGS],
    ) -> u8 {
        let mut n = 0;
        for op in ops.iter().filter(|o| o.file == RegFileKind::General) {
            for r in op.regs() {
                if n < MAX_REGS {
                    out[n] = self.map.bank(r, warp, scheduler) as u8;
                    n += 1;
                }
            }
        }
        n as u8
    }
}

/// `multi_collector`'s counters in [`RfStats::extra`]: instructions that took several
/// collector units, the units they took, and instructions that needed more units than
/// serve them (whose units then hold more than `operands_per_collector` reads each).
const SPAN_COUNTERS: [&str; 3] = [
    "multi_collector_instructions",
    "multi_collector_units",
    "multi_collector_slot_overflows",
];

impl Baseline {
    /// Under `multi_collector`: the units an instruction of `n` bank reads for `unit` of
    /// `scheduler` takes (⌈n / operands_per_collector⌉, at most as many as serve it), and
    /// whether it needed more than serve it.
    fn units_for(&self, n: usize, unit: UnitKind, scheduler: u16) -> (usize, bool) {
        let serving = self
            .collectors
            .iter()
            .filter(|c| self.serves(c, unit, scheduler))
            .count();
        let k = n.div_ceil(self.unit_slots).max(1);
        (k.min(serving.max(1)), k > serving)
    }

    /// Under `multi_collector`: whether enough units are free for `c`'s reads.
    fn enough_free_units(&self, c: &Candidate<'_>) -> bool {
        let mut banks = [0u8; MAX_REGS];
        let mut delivers = [1u8; MAX_REGS];
        let n = self.read_plan(c.srcs, c, &mut banks, &mut delivers);
        let (k, _) = self.units_for(n, c.unit, c.scheduler);
        self.collectors
            .iter()
            .filter(|u| self.fits(u, c.unit, c.scheduler))
            .take(k)
            .count()
            == k
    }

    /// [`RegisterFile::accept`] under `multi_collector`: the first free units that fit
    /// take the instruction's reads in order, split as evenly as possible; the first is
    /// the lead, which dispatches it once every unit's reads have arrived.
    fn accept_spanning(&mut self, token: InstToken, inst: &Candidate<'_>, now: Cycle) {
        let mut banks = [0u8; MAX_REGS];
        let mut delivers = [1u8; MAX_REGS];
        let n = self.read_plan(inst.srcs, inst, &mut banks, &mut delivers);
        let (k, overflow) = self.units_for(n, inst.unit, inst.scheduler);
        let mut units = [0usize; MAX_REGS];
        let mut got = 0;
        for (i, u) in self.collectors.iter().enumerate() {
            if got < k && self.fits(u, inst.unit, inst.scheduler) {
                units[got] = i;
                got += 1;
            }
        }
        if got < k {
            debug_assert!(false, "accept without enough free collectors");
            return;
        }
        let lead = units[0];
        for (j, &idx) in units[..k].iter().enumerate() {
            let (from, to) = (j * n / k, (j + 1) * n / k);
            self.occupy(idx, token, inst.unit, &banks[from..to], now);
            let c = &mut self.collectors[idx];
            c.delivers[..to - from].copy_from_slice(&delivers[from..to]);
            c.scheduler = inst.scheduler;
            if j > 0 {
                c.lead = lead as u16;
            }
        }
        self.collectors[lead].span = k as u8;
        if k > 1 {
            self.spans[0] += 1;
            self.spans[1] += k as u64;
        }
        self.spans[2] += u64::from(overflow);
    }

    /// Whether a unit collecting a share of lead `idx`'s instruction still waits for
    /// reads at `now`.
    fn shares_pending(&self, idx: usize, now: Cycle) -> bool {
        self.collectors
            .iter()
            .any(|c| c.busy && usize::from(c.lead) == idx && !(c.pending == 0 && c.ready_at <= now))
    }

    /// Frees the units that collected shares of lead `idx`'s instruction (dispatched).
    fn free_shares(&mut self, idx: usize) {
        for i in 0..self.collectors.len() {
            let c = &self.collectors[i];
            if c.busy && usize::from(c.lead) == idx {
                self.release(i);
            }
        }
    }

    /// The bank reads collecting `reads` for `inst` costs: one per register
    /// ([`Baseline::banks_of`]), or one per wide operand (`wide_operand_reads`), and for a
    /// matrix instruction at most `tensor_operand_slots` reads, consecutive registers
    /// grouped. Fills each read's bank and the registers it delivers; returns the count.
    fn read_plan(
        &self,
        reads: &[RegOperand],
        inst: &Candidate<'_>,
        banks: &mut [u8; MAX_REGS],
        delivers: &mut [u8; MAX_REGS],
    ) -> usize {
        let (warp, scheduler) = (inst.warp, inst.scheduler);
        let mut n = if self.wide_reads == WideOperandReads::PerRegister {
            usize::from(self.banks_of(reads, warp, scheduler, banks))
        } else {
            let mut n = 0;
            for op in reads.iter().filter(|o| o.file == RegFileKind::General) {
                if n < MAX_REGS {
                    banks[n] = self.map.bank(op.reg, warp, scheduler) as u8;
                    delivers[n] = op.width;
                    n += 1;
                }
            }
            n
        };
        let slots = self.tensor_slots;
        if inst.class == OpClass::Tensor && slots > 0 && n > slots {
            // Group g takes reads [g n / slots, (g + 1) n / slots): as even as possible,
            // in order, read in the bank of its first register.
            for g in 0..slots {
                let (from, to) = (g * n / slots, (g + 1) * n / slots);
                let got: u8 = delivers[from..to].iter().sum();
                banks[g] = banks[from];
                delivers[g] = got;
            }
            n = slots;
        }
        n
    }
}

impl RegisterFile for Baseline {
    fn name(&self) -> &'static str {
        "baseline"
    }

    fn warp_launched(&mut self, _w: WarpLaunch) {}

    fn warp_exited(&mut self, _warp: WarpSlot) {}

    fn can_accept(&mut self, c: &Candidate<'_>, _now: Cycle) -> Result<(), RfStall> {
        let enough = if self.unit_slots == 0 {
            self.collectors
                .iter()
                .any(|u| self.fits(u, c.unit, c.scheduler))
        } else {
            self.enough_free_units(c)
        };
        if enough {
            return Ok(());
        }
        let mine = |u: &&Collector| self.serves(u, c.unit, c.scheduler);
        if self
            .collectors
            .iter()
            .filter(mine)
            .any(|u| u.busy && u.pending > 0 && u.conflicted)
        {
            Err(RfStall::BankConflict)
        } else if self
            .collectors
            .iter()
            .filter(mine)
            .any(|u| u.busy && u.pending == 0)
        {
            Err(RfStall::PipelineBusy)
        } else {
            Err(RfStall::NoFreeCollector)
        }
    }

    fn accept(&mut self, i: IssuedInst<'_>, now: Cycle) {
        if self.unit_slots > 0 {
            self.accept_spanning(i.token, &i.inst, now);
            return;
        }
        let (unit, scheduler) = (i.inst.unit, i.inst.scheduler);
        let Some(idx) = self
            .collectors
            .iter()
            .position(|u| self.fits(u, unit, scheduler))
        else {
            debug_assert!(false, "accept without a free collector");
            return;
        };
        self.accept_into(idx, i.token, &i.inst, i.inst.srcs, now);
    }

    fn request_write(&mut self, w: WriteRequest<'_>, now: Cycle) {
        self.charge_result_write(&w);
        self.push_write(w, now, true);
    }

    fn skip_to(&mut self, now: Cycle) {
        let from = self.last_arbitrated + Cycles::new(1);
        // Untracked ports (pipelined banks) free every cycle: nothing was refused.
        if now <= from || !self.ports.tracked() {
            return;
        }
        for k in 0..self.writes.len() {
            let w = self.writes[k];
            for b in waiting_banks(&w) {
                let n = self.refused_cycles(b, true, from, now);
                if usize::from(b) < self.mrf_banks {
                    self.stats.write_bank_conflicts += n;
                    if w.kind == WriteKind::QueuedResult {
                        self.queued_write_delays += n;
                    }
                    Self::note_skipped_refusals(&mut self.skipped_refusals, b, from, n);
                }
            }
        }
        for k in 0..self.side_reads.len() {
            let r = self.side_reads[k];
            if r.done_at.is_none() {
                let n = self.refused_cycles(r.bank, false, from, now);
                self.side_read_counts.conflicts += n;
                if usize::from(r.bank) < self.mrf_banks {
                    self.stats.read_bank_conflicts += n;
                    Self::note_skipped_refusals(&mut self.skipped_refusals, r.bank, from, n);
                }
            }
        }
        for idx in self.busy_collectors.iter() {
            let u = &self.collectors[idx];
            if !u.busy || u.pending == 0 {
                continue;
            }
            let start = from.max(u.start_at);
            let (mut conflicted, mut conflicts) = (false, 0);
            for &b in &u.banks[..usize::from(u.pending)] {
                let n = self.refused_cycles(b, false, start, now);
                if n > 0 {
                    conflicted = true;
                    if usize::from(b) < self.mrf_banks {
                        conflicts += n;
                        Self::note_skipped_refusals(&mut self.skipped_refusals, b, start, n);
                    }
                }
            }
            if conflicted {
                self.collectors[idx].conflicted = true;
            }
            self.stats.read_bank_conflicts += conflicts;
        }
    }

    fn cycle(&mut self, c: &mut RfCycle<'_>) {
        let now = c.now;
        self.integrate(now);
        self.last_arbitrated = now;

        // Writes that have finished.
        let mut i = 0;
        while i < self.writes.len() {
            let w = self.writes[i];
            if w.waiting == 0 && w.done_at <= now {
                self.writes.remove(i);
                if matches!(w.kind, WriteKind::Result | WriteKind::QueuedResult)
                    && !(w.part && self.writes.iter().any(|o| o.part && o.token == w.token))
                {
                    c.writes_done.push(w.token);
                }
            } else {
                i += 1;
            }
        }

        // Arbitration: writes first (oldest first, background writes last), then reads.
        self.reads_used.iter_mut().for_each(|x| *x = 0);
        self.writes_used.iter_mut().for_each(|x| *x = 0);
        if self.ports.tracked() {
            self.ports
                .load(now, &mut self.reads_used, &mut self.writes_used);
        }
        // Ports CERF's line accesses took this cycle (all zero for other designs).
        for (b, (&r, &w)) in self.taken_reads.iter().zip(&self.taken_writes).enumerate() {
            self.reads_used[b] += r;
            self.writes_used[b] += w;
        }
        // Results and writebacks, then queued results, then background writes.
        for rank in 0..3 {
            if rank == 1 && !self.queued_results {
                continue;
            }
            for k in 0..self.writes.len() {
                let w = &self.writes[k];
                let r = match w.kind {
                    WriteKind::Result | WriteKind::Writeback => 0,
                    WriteKind::QueuedResult => 1,
                    WriteKind::Background => 2,
                };
                if r == rank && w.waiting != 0 {
                    self.arbitrate_write(k, now);
                }
            }
        }
        if self.background_writes > 0 {
            let before = self.writes.len();
            self.writes
                .retain(|w| !(w.kind == WriteKind::Background && w.waiting == 0));
            self.background_writes -= before - self.writes.len();
        }
        // Round-robin starting points follow the cycle number, so that cycles in which
        // nothing happens (skipped by the SM) would not have changed them.
        if self.shared_ports {
            // A write took its MRF bank's port for this cycle.
            let b = self.mrf_banks;
            self.reads_used[..b].copy_from_slice(&self.writes_used[..b]);
        }
        let mut mrf_reads = 0u32;
        let side_reads = !self.side_reads.is_empty();
        if side_reads {
            self.arbitrate_side_reads(SideReadOrder::BeforeCollectors, now, &mut mrf_reads);
        }
        let n = self.collectors.len();
        let start = if n > 0 {
            (now.get() % n as u64) as usize
        } else {
            0
        };
        // Yielding collectors (`accept_banks_yielding`) read in a second pass; no pass
        // without a busy collector.
        let passes = if self.busy > 0 {
            1 + u8::from(self.yielding_reads)
        } else {
            0
        };
        for pass in 0..passes {
            let mut busy = RoundRobin::new(start, n);
            while let Some(idx) = busy.next(&self.busy_collectors) {
                let u = &self.collectors[idx];
                if !u.busy || u.pending == 0 || u.start_at > now {
                    continue;
                }
                if self.yielding_reads && u.yields != (pass == 1) {
                    continue;
                }
                // Every operand is an independent request: a refused one does not block
                // later ones in other banks. Refused ones stay, in order, for next cycle
                // (compacted in place: `kept <= k`). The collector is not copied: it
                // holds two arrays of `MAX_REGS`.
                let (pending, mut ready_at) = (usize::from(u.pending), u.ready_at);
                let mut conflicted = false;
                let mut kept = 0;
                for k in 0..pending {
                    let u = &self.collectors[idx];
                    let (b, delivers) = (usize::from(u.banks[k]), u.delivers[k]);
                    if self.grant_read(b, &mut mrf_reads, now) {
                        let source = if b < self.mrf_banks {
                            self.main
                        } else {
                            self.upper_source
                        };
                        self.ledger.deliver(source, u64::from(delivers));
                        ready_at = ready_at.max(now + self.latency_of(b));
                    } else {
                        conflicted = true;
                        let u = &mut self.collectors[idx];
                        u.banks[kept] = b as u8;
                        u.delivers[kept] = delivers;
                        kept += 1;
                    }
                }
                let u = &mut self.collectors[idx];
                u.conflicted = conflicted;
                u.ready_at = ready_at;
                u.pending = kept as u8;
            }
        }
        if side_reads {
            self.arbitrate_side_reads(SideReadOrder::AfterCollectors, now, &mut mrf_reads);
        }

        // Dispatch of units whose operands have all arrived (at most
        // `dispatch_per_scheduler` per scheduler).
        if self.dispatch_limit > 0 {
            self.dispatched.iter_mut().for_each(|d| *d = 0);
        }
        // Oldest first: a unit whose instruction is ready is never passed over by a
        // younger one (a rotation keyed to the cycle number let a unit refilled every
        // time its instruction left keep the execution unit from another for thousands
        // of cycles when the unit frees on even cycles only).
        self.dispatch_order.clone_from(&self.accepted);
        for k in 0..self.dispatch_order.len() {
            let idx = usize::from(self.dispatch_order[k]);
            let u = &self.collectors[idx];
            if u.lead != NO_LEAD {
                // A share of another unit's instruction: that unit dispatches it.
                continue;
            }
            let s = usize::from(u.scheduler);
            if self.dispatch_limit > 0 && self.dispatched.get(s) >= Some(&self.dispatch_limit) {
                continue;
            }
            if u.busy
                && u.pending == 0
                && u.ready_at <= now
                && !self.waits(u, now)
                && (u.span == 1 || !self.shares_pending(idx, now))
            {
                let span = u.span;
                let d = Dispatch {
                    token: u.token,
                    unit: u.unit,
                    bypass_execution: false,
                };
                if c.dispatch.try_dispatch(d) {
                    if let Some(k) = self.dispatched.get_mut(s) {
                        *k += 1;
                    }
                    self.release(idx);
                    if span > 1 {
                        self.free_shares(idx);
                    }
                } else {
                    self.collectors[idx].units_free_at = c.dispatch.free_at(d);
                }
            }
        }
    }

    fn next_event(&self, now: Cycle) -> Option<Cycle> {
        let soon = now + Cycles::new(1);
        let mut next: Option<Cycle> = None;
        let mut at = |t: Cycle| next = Some(next.map_or(t, |n: Cycle| n.min(t)));
        // A request refused because its bank's ports stay taken (non-pipelined banks) is
        // refused again every cycle until one is free: [`RegisterFile::skip_to`] counts
        // those refusals, so the SM need not be evaluated for them.
        for w in &self.writes {
            at(if w.waiting != 0 {
                self.any_port_free_at(waiting_banks(w), true, now)
            } else {
                w.done_at.max(soon)
            });
        }
        for r in &self.side_reads {
            at(r.done_at.map_or_else(
                || self.port_free_at(usize::from(r.bank), false, now),
                |t| t.max(soon),
            ));
        }
        for u in self.collectors.iter().filter(|u| u.busy) {
            if u.pending > 0 {
                at(if u.start_at > now {
                    u.start_at
                } else {
                    let pending = u.banks[..usize::from(u.pending)].iter().copied();
                    self.any_port_free_at(pending, false, now)
                });
            } else if u.lead == NO_LEAD {
                // One waiting for another's operands goes at that one's own event.
                if !self.waits(u, now) {
                    at(u.ready_at.max(u.units_free_at).max(soon));
                }
            } else if u.ready_at > now {
                // A collected share: its lead dispatches, once this has arrived.
                at(u.ready_at);
            }
        }
        next
    }

    fn is_idle(&self) -> bool {
        self.busy == 0 && self.writes.is_empty() && self.side_reads.is_empty()
    }

    fn stats(&self, now: Cycle) -> RfStats {
        let mut s = self.stats.clone();
        if now > self.last_integrated {
            let dt = (now - self.last_integrated).get();
            s.collector_busy_cycles += self.busy as u64 * dt;
            if self.busy == self.collectors.len() && self.busy > 0 {
                s.collectors_full_cycles += dt;
            }
        }
        if self.unit_slots > 0 {
            for (k, v) in SPAN_COUNTERS.iter().zip(self.spans) {
                s.extra.insert((*k).into(), v);
            }
        }
        s
    }

    fn ledger(&self) -> Ledger {
        self.ledger
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::OpClass;
    use crate::kernel_info::InstHint;
    use crate::memory::{MemorySystem, SmId};
    use crate::rf::{BankMap, DispatchPort, RfCycle};

    fn cfg(overrides: &[&str]) -> GpuConfig {
        crate::rf::test_support::config("gtx480", overrides)
    }

    fn r(reg: u16) -> RegOperand {
        crate::rf::test_support::general(reg)
    }

    struct Units {
        accept: bool,
        /// Take instructions on even cycles only (a unit of initiation interval 2).
        even_only: bool,
        taken: Vec<(InstToken, u64)>,
        now: u64,
    }
    impl DispatchPort for Units {
        fn try_dispatch(&mut self, d: Dispatch) -> bool {
            let accept = self.accept && (!self.even_only || self.now.is_multiple_of(2));
            if accept {
                self.taken.push((d.token, self.now));
            }
            accept
        }
    }

    /// A memory system for `c` and execution units that take what is offered when
    /// `accept`.
    fn parts(c: &GpuConfig, accept: bool) -> (MemorySystem, Units) {
        let units = Units {
            accept,
            even_only: false,
            taken: Vec::new(),
            now: 0,
        };
        (MemorySystem::new(c), units)
    }

    fn candidate<'a>(warp: u16, srcs: &'a [RegOperand], dsts: &'a [RegOperand]) -> Candidate<'a> {
        Candidate {
            warp: WarpSlot(warp),
            scheduler: 0,
            unit: UnitKind::Sp,
            class: OpClass::Fp32,
            srcs,
            dsts,
            hint: InstHint::default(),
        }
    }

    /// Runs cycles `from..to`, returning (dispatches, completed writes).
    fn run(
        rf: &mut Baseline,
        mem: &mut MemorySystem,
        units: &mut Units,
        from: u64,
        to: u64,
    ) -> Vec<(InstToken, u64)> {
        let mut done = Vec::new();
        for t in from..to {
            units.now = t;
            let mut writes = Vec::new();
            rf.cycle(&mut RfCycle {
                now: Cycle::new(t),
                sm: SmId(0),
                memory: mem.port(SmId(0)),
                dispatch: units,
                writes_done: &mut writes,
            });
            done.extend(writes.into_iter().map(|w| (w, t)));
        }
        done
    }

    fn issue(rf: &mut Baseline, token: u32, warp: u16, srcs: &[RegOperand], now: u64) {
        assert!(try_issue(rf, token, warp, srcs, now));
    }

    /// Bank reads and ledger deliveries of one instruction of `class` reading `srcs`,
    /// run to dispatch alone under `overrides` of gtx480.
    fn reads_of(overrides: &[&str], class: OpClass, srcs: &[RegOperand]) -> (u64, u64) {
        let c = cfg(overrides);
        let (mut mem, mut units) = parts(&c, true);
        let mut rf = Baseline::new(&c);
        let step = emu::WarpStep::default();
        let cand = Candidate {
            class,
            ..candidate(0, srcs, &[])
        };
        assert!(rf.can_accept(&cand, Cycle::ZERO).is_ok());
        rf.accept(
            IssuedInst {
                token: InstToken(0),
                inst: cand,
                step: &step,
            },
            Cycle::ZERO,
        );
        run(&mut rf, &mut mem, &mut units, 1, 40);
        assert_eq!(units.taken.len(), 1, "dispatched");
        (
            rf.stats(Cycle::new(40)).reads,
            rf.ledger().delivered_total(),
        )
    }

    fn wide(reg: u16, width: u8) -> RegOperand {
        RegOperand { width, ..r(reg) }
    }

    #[test]
    fn an_f64_fma_reads_six_registers_per_register_and_three_per_operand() {
        let fma = [wide(2, 2), wide(4, 2), wide(6, 2)];
        assert_eq!(reads_of(&[], OpClass::Fp64, &fma), (6, 6));
        let per_operand = ["register_file.wide_operand_reads=\"per_operand\""];
        // Three reads, each delivering its pair.
        assert_eq!(reads_of(&per_operand, OpClass::Fp64, &fma), (3, 6));
    }

    #[test]
    fn a_matrix_instruction_with_n_operand_slots_takes_n_bank_reads() {
        // mma.sync m16n8k8 f32: A two registers, B one, C four (seven), and more.
        let srcs: Vec<RegOperand> = (10..22).map(r).collect();
        assert_eq!(reads_of(&[], OpClass::Tensor, &srcs), (12, 12));
        for n in [1u64, 5, 7, 12] {
            let slots = format!("register_file.tensor_operand_slots={n}");
            assert_eq!(
                reads_of(&[slots.as_str()], OpClass::Tensor, &srcs),
                (n, 12),
                "{n} slots"
            );
            // Only matrix instructions are grouped.
            assert_eq!(reads_of(&[slots.as_str()], OpClass::Fp32, &srcs), (12, 12));
        }
        // Fewer registers than slots: one read each.
        let seven = ["register_file.tensor_operand_slots=7"];
        assert_eq!(reads_of(&seven, OpClass::Tensor, &srcs[..3]), (3, 3));
    }

    #[test]
    fn a_wmma_mma_with_f32_accumulators_reads_all_24_fragment_registers() {
        // A, B and C eight registers each (the collector took only the first 20 before).
        let srcs: Vec<RegOperand> = (10..34).map(r).collect();
        assert_eq!(reads_of(&[], OpClass::Tensor, &srcs), (24, 24));
    }

    /// Issues `srcs` as instruction `token` of warp `warp` if the design accepts it.
    fn try_issue(rf: &mut Baseline, token: u32, warp: u16, srcs: &[RegOperand], now: u64) -> bool {
        crate::rf::test_support::try_accept(rf, token, candidate(warp, srcs, &[]), now)
    }

    #[test]
    fn with_multi_collector_an_instruction_wider_than_a_unit_takes_several() {
        // gtx480: 8 generic units of 3 operand slots. An f64 FMA reads 6 registers: two
        // units; four such instructions take all 8, and a fifth waits.
        let fma = [wide(2, 2), wide(4, 2), wide(6, 2)];
        let on = ["register_file.multi_collector=true"];
        let c = cfg(&on);
        let (mut mem, mut units) = parts(&c, true);
        let mut rf = Baseline::new(&c);
        for t in 0..4 {
            assert!(try_issue(&mut rf, t, t as u16, &fma, 0), "{t}");
        }
        assert!(!try_issue(&mut rf, 4, 4, &fma, 0), "all 8 units taken");
        let s = rf.stats(Cycle::ZERO);
        assert_eq!(s.extra["multi_collector_instructions"], 4);
        assert_eq!(s.extra["multi_collector_units"], 8);
        assert_eq!(s.extra["multi_collector_slot_overflows"], 0);
        // Each dispatches once, with all 6 registers read.
        run(&mut rf, &mut mem, &mut units, 1, 40);
        assert_eq!(units.taken.len(), 4);
        assert_eq!(rf.stats(Cycle::new(40)).reads, 24);
        assert!(rf.is_idle(), "every unit freed");
        assert!(try_issue(&mut rf, 4, 4, &fma, 40));
        // Off (the default): one unit each, so eight are accepted, and no counters.
        let c = cfg(&[]);
        let mut rf = Baseline::new(&c);
        for t in 0..8 {
            assert!(try_issue(&mut rf, t, t as u16, &fma, 0), "{t}");
        }
        assert!(!rf
            .stats(Cycle::ZERO)
            .extra
            .contains_key("multi_collector_units"));
    }

    #[test]
    fn a_spanning_instruction_dispatches_only_when_every_share_has_arrived() {
        // Six registers all in bank 0 (register + warp mod 8): one port, one read per
        // cycle, so the last arrives at cycle 6 whether one unit or two collect them.
        let srcs: Vec<RegOperand> = (0..6).map(|k| r(8 * k)).collect();
        let mut when = Vec::new();
        for o in [&[][..], &["register_file.multi_collector=true"]] {
            let c = cfg(o);
            let (mut mem, mut units) = parts(&c, true);
            let mut rf = Baseline::new(&c);
            assert!(try_issue(&mut rf, 0, 0, &srcs, 0));
            run(&mut rf, &mut mem, &mut units, 1, 40);
            assert_eq!(units.taken.len(), 1, "{o:?}: dispatched once");
            when.push(units.taken[0].1);
        }
        assert_eq!(when[0], when[1]);
        assert!(when[0] >= 6, "{when:?}");
    }

    #[test]
    fn an_instruction_needing_more_units_than_serve_it_takes_them_all() {
        // Two units of 3 slots and 24 reads: eight needed, both taken, counted.
        let c = cfg(&[
            "register_file.multi_collector=true",
            "register_file.collector_units=2",
        ]);
        let (mut mem, mut units) = parts(&c, true);
        let mut rf = Baseline::new(&c);
        let srcs: Vec<RegOperand> = (10..34).map(r).collect();
        let tensor = Candidate {
            class: OpClass::Tensor,
            ..candidate(0, &srcs, &[])
        };
        assert!(crate::rf::test_support::try_accept(&mut rf, 0, tensor, 0));
        assert!(!try_issue(&mut rf, 1, 1, &[r(1)], 0), "no unit left");
        run(&mut rf, &mut mem, &mut units, 1, 60);
        assert_eq!(units.taken.len(), 1);
        let s = rf.stats(Cycle::new(60));
        assert_eq!(s.reads, 24);
        assert_eq!(s.extra["multi_collector_units"], 2);
        assert_eq!(s.extra["multi_collector_slot_overflows"], 1);
    }

    #[test]
    fn operand_read_keys_out_of_range_or_with_other_designs_are_refused() {
        let load = |o: &[&str]| {
            let o: Vec<crate::Override> = o
                .iter()
                .map(|s| crate::Override::parse(s).unwrap())
                .collect();
            GpuConfig::load("rtx2060-scaled", &crate::config::default_configs_dir(), &o)
        };
        // One more slot than an instruction can have registers.
        let too_many = format!("register_file.tensor_operand_slots={}", MAX_REGS + 1);
        for bad in [
            &["register_file.tensor_operand_slots=0"][..],
            &[too_many.as_str()],
            &[
                "register_file.multi_collector=true",
                "register_file.design=\"malekeh\"",
            ],
            &[
                "register_file.tensor_operand_slots=7",
                "register_file.design=\"ltrf\"",
            ],
            &[
                "register_file.wide_operand_reads=\"per_operand\"",
                "register_file.design=\"malekeh\"",
            ],
        ] {
            let e = load(bad).expect_err("refused").to_string();
            assert!(e.contains("register_file."), "{bad:?}: {e}");
        }
        assert!(load(&[
            "register_file.tensor_operand_slots=7",
            "register_file.design=\"bow\""
        ])
        .is_ok());
    }

    #[test]
    fn partitioned_collectors_serve_only_their_schedulers_instructions() {
        // rtx2060-scaled: 8 units, 4 schedulers: 2 each.
        let c = crate::rf::test_support::config(
            "rtx2060-scaled",
            &["register_file.partition_collectors=true"],
        );
        let mut rf = Baseline::new(&c);
        let on = |warp: u16, scheduler: u16| Candidate {
            scheduler,
            ..candidate(warp, &[], &[])
        };
        let step = emu::WarpStep::default();
        for (t, s) in [(0u32, 0u16), (1, 0), (2, 1)] {
            let cand = on(t as u16, s);
            assert!(rf.can_accept(&cand, Cycle::ZERO).is_ok(), "{t}");
            rf.accept(
                IssuedInst {
                    token: InstToken(t),
                    inst: cand,
                    step: &step,
                },
                Cycle::ZERO,
            );
        }
        // Scheduler 0's two units are taken; six others are free but not its own.
        assert_eq!(
            rf.can_accept(&on(5, 0), Cycle::ZERO),
            Err(RfStall::PipelineBusy)
        );
        assert!(rf.can_accept(&on(5, 1), Cycle::ZERO).is_ok());
        assert!(rf.can_accept(&on(5, 3), Cycle::ZERO).is_ok());
        // Shared (the default): any unit.
        let c = crate::rf::test_support::config(
            "rtx2060-scaled",
            &["register_file.partition_collectors=false"],
        );
        let mut rf = Baseline::new(&c);
        for t in 0..3u32 {
            rf.accept(
                IssuedInst {
                    token: InstToken(t),
                    inst: on(0, 0),
                    step: &step,
                },
                Cycle::ZERO,
            );
        }
        assert!(rf.can_accept(&on(5, 0), Cycle::ZERO).is_ok());
        // Unit counts that do not split are refused, naming the key.
        let o = [
            crate::Override::parse("register_file.partition_collectors=true").unwrap(),
            crate::Override::parse("register_file.collector_units=6").unwrap(),
        ];
        let e = GpuConfig::load("rtx2060-scaled", &crate::config::default_configs_dir(), &o)
            .expect_err("6 units over 4 schedulers")
            .to_string();
        assert!(e.contains("register_file.collector_units"), "{e}");
    }

    #[test]
    fn a_schedulers_collectors_dispatch_at_most_the_limit_per_cycle() {
        for (limit, expect) in [(0u32, [1u64, 1, 1]), (1, [1, 2, 1])] {
            let set = format!("register_file.dispatch_per_scheduler={limit}");
            let c = crate::rf::test_support::config("rtx2060-scaled", &[&set]);
            let (mut mem, mut units) = parts(&c, true);
            let mut rf = Baseline::new(&c);
            let step = emu::WarpStep::default();
            // Two instructions of scheduler 0 and one of scheduler 1, nothing to read.
            for (t, s) in [(0u32, 0u16), (1, 0), (2, 1)] {
                let cand = Candidate {
                    scheduler: s,
                    ..candidate(t as u16, &[], &[])
                };
                rf.accept(
                    IssuedInst {
                        token: InstToken(t),
                        inst: cand,
                        step: &step,
                    },
                    Cycle::ZERO,
                );
            }
            run(&mut rf, &mut mem, &mut units, 0, 4);
            let at: Vec<u64> = (0..3)
                .map(|t| units.taken.iter().find(|d| d.0 == InstToken(t)).unwrap().1)
                .collect();
            // Scheduler 0's two in either order, scheduler 1's beside them.
            let mut first = [at[0], at[1]];
            first.sort_unstable();
            assert_eq!([first[0], first[1], at[2]], expect, "limit {limit}");
        }
    }

    #[test]
    fn a_ready_instruction_is_never_passed_over_by_a_younger_one() {
        // rtx2060-scaled: scheduler 0's two units, one dispatch per cycle, and an
        // execution unit that takes an instruction on even cycles only (initiation
        // interval 2). Unit 0 is refilled as soon as its instruction leaves. When the
        // dispatch order rotated with the cycle number, unit 1 came first only on odd
        // cycles, so its instruction waited behind every younger one in unit 0 (on
        // rtx2060-scaled's warp_intrinsics with 16 banks, up to 3,864 cycles).
        let c = crate::rf::test_support::config("rtx2060-scaled", &[]);
        let (mut mem, mut units) = parts(&c, true);
        units.even_only = true;
        let mut rf = Baseline::new(&c);
        let step = emu::WarpStep::default();
        let mut next = 0u32;
        for t in 0..40u64 {
            while rf
                .can_accept(&candidate(0, &[], &[]), Cycle::new(t))
                .is_ok()
            {
                let inst = candidate(0, &[], &[]);
                rf.accept(
                    IssuedInst {
                        token: InstToken(next),
                        inst,
                        step: &step,
                    },
                    Cycle::new(t),
                );
                next += 1;
            }
            run(&mut rf, &mut mem, &mut units, t, t + 1);
        }
        // One every two cycles from cycle 2, in the order they were accepted (before,
        // instruction 1 never left: 0, 2, 3, 4, ...).
        let order: Vec<u32> = units.taken.iter().map(|d| d.0 .0).collect();
        assert_eq!(order, (0..19).collect::<Vec<u32>>());
    }

    /// Requests the write of instruction `token`'s result, R`reg` of warp 0, at `now`.
    fn write(rf: &mut Baseline, token: u32, reg: u16, now: u64) {
        rf.request_write(
            WriteRequest {
                token: InstToken(token),
                warp: WarpSlot(0),
                scheduler: 0,
                dsts: &[r(reg)],
            },
            Cycle::new(now),
        );
    }

    #[test]
    fn three_reads_in_one_bank_take_three_cycles_and_count_three_conflicts() {
        let c = cfg(&["register_file.bank_mapping=\"register\""]);
        let (mut mem, mut units) = parts(&c, true);
        // R0, R8, R16: bank 0 of 8. Accepted at 10; granted at 11, 12, 13; the last
        // delivers at 14 (latency 1): dispatch at 14. Refused: 2 at 11, 1 at 12.
        let mut rf = Baseline::new(&c);
        issue(&mut rf, 7, 0, &[r(0), r(8), r(16)], 10);
        run(&mut rf, &mut mem, &mut units, 11, 20);
        assert_eq!(units.taken, [(InstToken(7), 14)]);
        let s = rf.stats(Cycle::new(20));
        assert_eq!((s.read_bank_conflicts, s.reads_per_bank[0]), (3, 3));
        // R1, R2, R3: three banks, all granted at 11, dispatch at 12.
        let mut rf = Baseline::new(&c);
        units.taken.clear();
        issue(&mut rf, 8, 0, &[r(1), r(2), r(3)], 10);
        run(&mut rf, &mut mem, &mut units, 11, 20);
        assert_eq!(units.taken, [(InstToken(8), 12)]);
        assert_eq!(rf.stats(Cycle::new(20)).read_bank_conflicts, 0);
    }

    #[test]
    fn a_non_pipelined_bank_of_latency_l_accepts_one_access_every_l_cycles() {
        // R0, R8, R16 in bank 0 of 8, accepted at 10.
        for (latency, occupancy, dispatch, conflicts) in [
            // Non-pipelined (Table 2's CACTI banks, the default): granted at 11, 11 + L,
            // 11 + 2L; the last delivers L later. Refused: 2 a cycle for L cycles, then
            // 1 a cycle for L cycles.
            (4, "non_pipelined", 11 + 3 * 4, 3 * 4),
            (6, "non_pipelined", 11 + 3 * 6, 3 * 6),
            // Pipelined: granted at 11, 12, 13.
            (4, "pipelined", 13 + 4, 3),
        ] {
            let c = cfg(&[
                "register_file.bank_mapping=\"register\"",
                &format!("register_file.bank_latency={latency}"),
                &format!("register_file.mrf.occupancy=\"{occupancy}\""),
            ]);
            let (mut mem, mut units) = parts(&c, true);
            let mut rf = Baseline::new(&c);
            issue(&mut rf, 7, 0, &[r(0), r(8), r(16)], 10);
            run(&mut rf, &mut mem, &mut units, 11, 60);
            assert_eq!(
                units.taken,
                [(InstToken(7), dispatch)],
                "L={latency} {occupancy}"
            );
            let s = rf.stats(Cycle::new(60));
            assert_eq!(s.read_bank_conflicts, conflicts, "L={latency} {occupancy}");
            // A write takes the bank's write port for L cycles too: two writes to bank 0
            // at 30 complete at 30 + L and 30 + 2L.
            if occupancy == "non_pipelined" {
                write(&mut rf, 20, 0, 40);
                write(&mut rf, 21, 8, 40);
                let done = run(&mut rf, &mut mem, &mut units, 40, 80);
                let at = |t: u32| done.iter().find(|(w, _)| *w == InstToken(t)).map(|d| d.1);
                assert_eq!(at(20), Some(40 + latency), "L={latency}");
                assert_eq!(at(21), Some(40 + 2 * latency), "L={latency}");
            }
        }
    }

    #[test]
    fn bank_latency_delays_operands_and_writes() {
        let c = cfg(&[
            "register_file.bank_latency=6",
            "register_file.mrf.occupancy=\"pipelined\"",
        ]);
        let (mut mem, mut units) = parts(&c, true);
        let mut rf = Baseline::new(&c);
        issue(&mut rf, 1, 3, &[r(1)], 10);
        // Granted at 11, delivered at 17.
        run(&mut rf, &mut mem, &mut units, 11, 30);
        assert_eq!(units.taken, [(InstToken(1), 17)]);
        // Two writes to one bank requested at 40: one write port, so the second is
        // granted a cycle later (one write conflict); each completes 6 after its grant.
        let d = [r(5)];
        for (tok, warp) in [(2, 0), (3, 0)] {
            rf.request_write(
                WriteRequest {
                    token: InstToken(tok),
                    warp: WarpSlot(warp),
                    scheduler: 0,
                    dsts: &d,
                },
                Cycle::new(40),
            );
        }
        let done = run(&mut rf, &mut mem, &mut units, 40, 60);
        assert_eq!(done, [(InstToken(2), 46), (InstToken(3), 47)]);
        assert_eq!(rf.stats(Cycle::new(60)).write_bank_conflicts, 1);
        assert!(rf.is_idle());
    }

    #[test]
    fn with_shared_ports_a_write_takes_the_bank_from_a_read() {
        for (sharing, expect_dispatch, conflicts) in [("separate", 12, 0), ("shared", 13, 1)] {
            let c = cfg(&[&format!("register_file.port_sharing=\"{sharing}\"")]);
            let (mut mem, mut units) = parts(&c, true);
            let mut rf = Baseline::new(&c);
            // A read of R2 (warp 0: bank 2) and a write of R2 in the same cycle.
            issue(&mut rf, 1, 0, &[r(2)], 10);
            write(&mut rf, 2, 2, 11);
            let done = run(&mut rf, &mut mem, &mut units, 11, 20);
            assert_eq!(
                done,
                [(InstToken(2), 12)],
                "{sharing}: the write goes first"
            );
            assert_eq!(units.taken, [(InstToken(1), expect_dispatch)], "{sharing}");
            assert_eq!(rf.stats(Cycle::new(20)).read_bank_conflicts, conflicts);
        }
    }

    #[test]
    fn upper_banks_and_late_side_reads_share_the_arbiter_and_the_mrf_read_limit() {
        let c = cfg(&["register_file.bank_mapping=\"register\""]);
        let (mut mem, mut units) = parts(&c, true);
        let mut rf = Baseline::new(&c);
        // Upper banks 8 and 9 after the 8 MRF banks, 3 cycles each; one MRF read a cycle.
        rf.add_upper_banks(2, Cycles::new(3), Source::LtrfCache);
        rf.limit_mrf_reads_per_cycle(1);
        rf.accept_banks(InstToken(1), UnitKind::Sp, &[0, 8, 8], Cycle::new(10));
        rf.queue_side_read(
            InstToken(99),
            1,
            SideReadOrder::AfterCollectors,
            Cycles::new(2),
            Transfer::MrfToLtrfCache,
        );
        // 11: MRF bank 0 and upper bank 8 granted, the second read of bank 8 refused, the
        // side read refused by the limit (after the collector's MRF read).
        run(&mut rf, &mut mem, &mut units, 11, 12);
        let mut granted = Vec::new();
        rf.take_side_reads_granted(|t, at| granted.push((t, at.get())));
        assert!(granted.is_empty());
        // 12: bank 8 again (delivers at 15); the side read: 12 + 1 + 2.
        run(&mut rf, &mut mem, &mut units, 12, 13);
        rf.take_side_reads_granted(|t, at| granted.push((t, at.get())));
        assert_eq!(granted, [(InstToken(99), 15)]);
        run(&mut rf, &mut mem, &mut units, 13, 20);
        assert_eq!(units.taken, [(InstToken(1), 15)]);
        let s = rf.stats(Cycle::new(20));
        assert_eq!(
            (s.reads, s.reads_per_bank[0], s.reads_per_bank[1]),
            (2, 1, 1)
        );
        assert_eq!(s.read_bank_conflicts, 1, "only the MRF refusal");
        assert_eq!(rf.upper_bank_conflicts(), (1, 0));
        let n = rf.side_read_counts();
        assert_eq!((n.granted, n.conflicts), (1, 1));
        assert!(rf.is_idle());
        // The ledger: one MRF operand, two cache operands, one prefetch; every granted
        // port one arbiter request.
        let l = rf.ledger();
        assert_eq!(l.delivered(Source::MrfBank), 1);
        assert_eq!(l.delivered(Source::LtrfCache), 2);
        assert_eq!(l.count(Charge::MrfRead), 2);
        assert_eq!(l.count(Charge::LtrfCacheWrite), 1);
        assert_eq!(l.count(Charge::CollectorWrite), 3);
        assert_eq!(l.count(Charge::ArbiterRequest), 4);
    }

    #[test]
    fn background_writes_yield_to_results_and_are_forgotten_once_granted() {
        let c = cfg(&["register_file.bank_mapping=\"register\""]);
        let (mut mem, mut units) = parts(&c, true);
        let mut rf = Baseline::new(&c);
        // Both to bank 3; the background write is older but goes second.
        rf.push_write_to_banks(InstToken(5), &[3], Cycle::new(20), WriteKind::Background);
        write(&mut rf, 6, 3, 20);
        let done = run(&mut rf, &mut mem, &mut units, 20, 21);
        assert!(done.is_empty());
        assert_eq!(rf.stats(Cycle::new(21)).write_bank_conflicts, 1);
        let done = run(&mut rf, &mut mem, &mut units, 21, 22);
        assert_eq!(
            done,
            [(InstToken(6), 21)],
            "the background write is not reported"
        );
        // Granted at 21 and forgotten: nothing left to wake up for.
        assert!(rf.is_idle());
        assert_eq!(rf.next_event(Cycle::new(21)), None);
        assert_eq!(rf.stats(Cycle::new(22)).writes_per_bank[3], 2);
    }

    #[test]
    fn refusals_say_why_no_collector_is_free() {
        let c = cfg(&[
            "register_file.collector_units=2",
            "register_file.bank_mapping=\"register\"",
        ]);
        let (mut mem, mut units) = parts(&c, false);
        let mut rf = Baseline::new(&c);
        issue(&mut rf, 1, 0, &[r(0), r(8), r(16)], 0);
        issue(&mut rf, 2, 1, &[r(0), r(8), r(16)], 0);
        let c0 = candidate(2, &[], &[]);
        assert_eq!(
            rf.can_accept(&c0, Cycle::new(0)),
            Err(RfStall::NoFreeCollector)
        );
        run(&mut rf, &mut mem, &mut units, 1, 2);
        assert_eq!(
            rf.can_accept(&c0, Cycle::new(1)),
            Err(RfStall::BankConflict)
        );
        // Operands all read, but the units refuse to take them.
        run(&mut rf, &mut mem, &mut units, 2, 12);
        assert_eq!(
            rf.can_accept(&c0, Cycle::new(12)),
            Err(RfStall::PipelineBusy)
        );
        assert_eq!(rf.stats(Cycle::new(12)).collectors_full_cycles, 12);
        units.accept = true;
        run(&mut rf, &mut mem, &mut units, 12, 13);
        assert!(rf.can_accept(&c0, Cycle::new(13)).is_ok());
    }

    #[test]
    fn bank_maps_add_the_warp_and_respect_scheduler_partitions() {
        let m = BankMap::new(&cfg(&[]));
        assert_eq!(m.bank(3, WarpSlot(0), 0), 3);
        assert_eq!(m.bank(3, WarpSlot(6), 0), 1, "(3 + 6) mod 8");
        let p = BankMap::new(&cfg(&["register_file.partition_by_scheduler=true"]));
        // 2 schedulers: 4 banks each; scheduler 1 owns banks 4..8.
        assert_eq!(
            p.bank(3, WarpSlot(2), 1),
            4 + 1,
            "(3 + 2) mod 4 in banks 4..8"
        );
        assert_eq!(p.bank(5, WarpSlot(0), 0), 1);
    }
}

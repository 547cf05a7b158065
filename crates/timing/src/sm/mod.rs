//! One streaming multiprocessor: the warp pipeline from instruction fetch to writeback.
//!
//! Each simulated cycle evaluates the stages in reverse order, as GPGPU-Sim's
//! `shader_core_ctx::cycle` does, so every stage sees what the stage before produced in
//! the *previous* cycle:
//!
//! 1. **writeback** — results due this cycle (execution units, memory data, shared-memory
//!    passes) are handed to the register file ([`RegisterFile::request_write`]);
//!    instructions without destinations retire;
//! 2. **execute / memory** — the head of the LD/ST queue issues its accesses to the
//!    memory system (L1D or constant cache through the coalescer, shared memory through
//!    its bank-conflict model); a refused access stays at the head and retries;
//! 3. **operand collection** — [`RegisterFile::cycle`]: bank arbitration (writes first),
//!    completed writes (which release the scoreboard), and dispatch of instructions whose
//!    operands are ready to a free execution unit (count, latency, initiation interval
//!    per opcode class from `[pipeline]`);
//! 4. **issue** — each warp scheduler picks a warp by its policy ([`scheduler`]) whose
//!    decoded instruction has no scoreboard hazard ([`scoreboard`]) and which the register
//!    file accepts; the instruction is executed functionally *now*
//!    ([`emu::Launch::execute`]), so values, atomics and branch outcomes follow the
//!    simulated order; up to `sm.issue_width` instructions of that warp per cycle;
//! 5. **decode** — instruction-buffer fills whose fetch returned become issuable one cycle
//!    later;
//! 6. **fetch** — one warp per cycle with an empty instruction buffer reads its next
//!    instructions through the instruction cache.
//!
//! Model details and simplifications:
//! - The instruction buffer holds up to `sm.ibuffer_entries` consecutive instructions
//!   from the warp's PC; a fetch fills it whole. When an issued instruction's next PC is
//!   not the next buffered one (taken branch, reconvergence, call, return), the buffer is
//!   flushed and refetched: that is the branch penalty. Instruction addresses are
//!   `INST_BASE + function << 24 + 8 x index` (8-byte instructions); a fetch reads the
//!   instruction's whole line (all sectors), so a miss fills the line.
//! - Execution units are SM-wide pools per type (`pipeline.units`), shared by all
//!   schedulers.
//! - Memory instructions spend the `mem` class latency in address generation, then queue
//!   for the LD/ST stage. Lanes are split by the state space the emulator resolved: global
//!   and local lanes go to the L1D (coalesced), constant and parameter lanes to the
//!   constant cache, shared lanes to shared memory; a load completes when every part is
//!   back. Stores retire once accepted (posted writes) or, with `l2.write_ack`, once
//!   acknowledged by the L2; atomics complete when the L2
//!   replies (shared-memory atomics after the shared-memory passes). Texture fetches,
//!   prefetches and fences have no memory timing beyond the LD/ST pipeline.
//! - Long-latency operations (for the two-level scheduler and the `memory` stall reason)
//!   are loads and atomics to global or local memory.
//! - Barriers: a warp that executed `bar.sync` waits until the emulator releases its CTA's
//!   barrier; exits are the emulator's. A warp retires when it has exited and all its
//!   instructions have retired; a CTA retires with its last warp.
//! - Cycle skipping: after a cycle in which nothing changed, the SM sleeps until the
//!   earliest of its timers (execution completions, register-file events, buffer fills,
//!   memory retries); memory completions wake it. Skipped cycles are attributed to the
//!   stall reasons of the last evaluated cycle, which are unchanged by construction.

pub mod allocate;
mod dependence;
mod front_end;
pub mod memory_buffer;
pub mod scheduler;
pub mod scoreboard;

use crate::bits;
use ir::analysis::bitset::BitSet;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use emu::{AccessKind as EmuAccess, MemSpace, WarpStatus};
use ir::{FuncId, InstId};

use crate::config::{Core, Dependence, GpuConfig, OpClass, PipelineConfig, UnitKind, WARP_SIZE};
use crate::kernel_info::{AsyncCopyRole, KernelInfo, RegFileKind, RegisterRequest, WgmmaRole};
use crate::memory::address_map::{AddressMap, LocalSlot};
use crate::memory::cache::{LineAddr, SectorMask};
use crate::memory::coalescer::{CoalescedAccess, Coalescer, LineAccess};
use crate::memory::{
    AccessKind, FrontEnds, MemRequest, MemorySystem, RequestId, SmId, SmMemory, SmPort, Space,
    Stall,
};
use crate::rf::ledger::{Ledger, OperandBuffer, OperandCounts, Source};
use crate::rf::{
    self, Candidate, Dispatch, DispatchPort, InstToken, IssuedInst, RegisterFile, RfCycle, RfStall,
    SchedulerEvent, WarpLaunch, WarpSlot, WriteRequest,
};
use crate::stats::{StallBreakdown, StallReason};
use crate::time::{Cycle, Cycles};
use scheduler::{SetChange, WarpScheduler};
use scoreboard::{Hazard, Scoreboard};

/// Base address of instruction memory (kept apart from every data address).
pub const INST_BASE: u64 = 0x7F00_0000_0000_0000;
/// Base address the kernel parameter space is mapped to in the constant cache.
pub const PARAM_BASE: u64 = 0x7E00_0000_0000_0000;

/// Address of instruction `inst` of `func`.
pub fn inst_address(func: FuncId, inst: InstId) -> u64 {
    INST_BASE + ((func.0 as u64) << 24) + 8 * u64::from(inst.0)
}

/// Who waits for a memory-system request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Owner {
    /// An instruction fetch of a warp.
    Fetch(u16),
    /// A memory instruction.
    Inst(InstToken),
    /// A line the stream buffer of sub-core `sub` prefetches (line number, not address).
    Prefetch { sub: u16, line: u64 },
    /// A posted store: nobody waits.
    Nobody,
}

/// What an SM cycle needs from outside the SM.
pub(crate) struct Ctx<'a, 'e> {
    pub launch: &'a mut emu::Launch<'e>,
    pub info: &'a KernelInfo,
    pub memory: &'a mut MemorySystem,
    /// Host to simulated addresses.
    pub addresses: &'a mut AddressMap,
}

/// What the issue stage needs from outside the SM: an emulator executor, the kernel, the
/// address map and whether texture fetches have a cache of their own.
pub(crate) struct IssueCtx<'a, 'e> {
    pub launch: &'a mut emu::Launch<'e>,
    pub info: &'a KernelInfo,
    pub addresses: Addresses<'a>,
    pub texture_path: bool,
    /// Issue only CTA-private instructions ([`emu::Launch::next_is_cta_private`]) and
    /// stop before any other: the parallel phase ([`Sm::issue_private`]).
    pub private_only: bool,
    /// A window of cycles ([`Sm::step_window`]): also stop before a call, return or exit
    /// of a warp whose deferred access waits for the merge (its frame must still be
    /// the one the access writes when the merge performs it).
    pub window: bool,
}

/// The address map as the issue stage holds it.
pub(crate) enum Addresses<'a> {
    /// The whole map: a global allocation gets its simulated base on first touch.
    Whole(&'a mut AddressMap),
    /// Read-only, in the parallel phase: a CTA-private instruction has only shared,
    /// local and parameter lanes; a deferred global access's lanes use the allocations
    /// already placed, and one that would place an allocation (its first touch) is
    /// noted in `unplaced` and translated in its SM's turn ([`Sm::complete_accesses`]).
    Private { map: &'a AddressMap, unplaced: bool },
}

impl Addresses<'_> {
    fn global(&mut self, addr: u64) -> u64 {
        match self {
            Addresses::Whole(map) => map.global(addr),
            Addresses::Private { map, unplaced } => {
                map.global_if_placed(addr).unwrap_or_else(|| {
                    *unplaced = true;
                    addr
                })
            }
        }
    }

    fn local(&self, slot: LocalSlot, lane: u32, offset: u64) -> u64 {
        match self {
            Addresses::Whole(map) => map.local_in(slot, lane, offset),
            Addresses::Private { map, .. } => map.local_in(slot, lane, offset),
        }
    }

    /// Whether a lane was left untranslated (`Private`'s `unplaced`); clears it.
    fn take_unplaced(&mut self) -> bool {
        match self {
            Addresses::Whole(_) => false,
            Addresses::Private { unplaced, .. } => std::mem::take(unplaced),
        }
    }
}

/// A global access (load, store, atomic, reduction) issued in the parallel phase
/// without touching memory ([`emu::WarpStep::deferred_access`]), which its SM's turn
/// performs ([`Sm::complete_accesses`]): the warp's CTA slot and index in the CTA, the
/// access, where the operands it read at issue are in `Sm::pending_values`, its memory
/// operation and, for one that touched an allocation first, what rebuilding the
/// operation with the whole address map needs.
#[derive(Clone, Copy)]
struct PendingAccess {
    cta_slot: usize,
    in_cta: usize,
    access: emu::DeferredAccess,
    values: (u32, u32),
    memop: u32,
    slot: LocalSlot,
    /// The access (`Some` only when the operation waits for the address map).
    rebuild: Option<emu::MemInfo>,
    /// The cycle it issued in (a window's merge performs each in its cycle's SM turn).
    cycle: Cycle,
}

/// What a window did on an SM's thread ([`Sm::step_window`]), for the merge.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct WindowStep {
    /// The first cycle the SM runs live in the merge (its own events at their markers,
    /// its whole cycles in its SM-order slot); the window's end if it ran it all.
    pub live_from: Cycle,
    /// The cycle whose shared part ([`Sm::cycle_shared`]) the merge runs live: its
    /// issue stage stopped there (an instruction that is not CTA-private, an emulator
    /// error, a bulk copy to land, an access that places an allocation).
    pub shared_at: Option<Cycle>,
    /// Bit `i`: cycle `t + i` was one the one-thread loop visits for this SM (it was
    /// due, or its own events reported to it); `progress`: it progressed then.
    pub visited: u64,
    pub progress: u64,
    /// Warp instructions it issued on its thread.
    pub issued: u64,
    /// The cycle (its last on its thread) in which a CTA retired.
    pub retired_at: Option<Cycle>,
}

/// Where a cycle's issue stage stands: the next scheduler to run and, when the parallel
/// phase stopped before an instruction that is not CTA-private, the warp its scheduler
/// chose and how many instructions of it had issued (that warp's check for the next one
/// has passed).
#[derive(Clone, Copy, Debug)]
struct IssueAt {
    scheduler: usize,
    stopped: Option<(u16, u32)>,
    /// The earliest instruction-buffer readiness the checks met (a wake-up time).
    earliest_ib: Cycle,
}

impl IssueAt {
    const START: IssueAt = IssueAt {
        scheduler: 0,
        stopped: None,
        earliest_ib: Cycle::NEVER,
    };
}

/// Counters of one SM during one kernel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SmStats {
    /// Warp instructions issued.
    pub warp_instructions: u64,
    /// Active lanes of those instructions.
    pub thread_instructions: u64,
    /// Active lanes per opcode class (indexed by `OpClass as usize`), for execution
    /// energy.
    pub thread_instructions_by_class: [u64; OpClass::COARSE],
    /// Of those, lanes of instructions a design dispatched with `bypass_execution` (WIR
    /// reuse): they spent no execution energy.
    pub bypassed_lanes_by_class: [u64; OpClass::COARSE],
    /// Scheduler-cycles by outcome.
    pub stalls: StallBreakdown,
    /// Resident warps summed over cycles.
    pub resident_warp_cycles: u64,
    /// The most warps resident at once.
    pub peak_resident_warps: u32,
    /// Modern core: fetches that hit and missed the sub-cores' L0 instruction caches.
    pub l0_icache: crate::stats::L0IcacheStats,
    /// `sm.constant_operands`: loads folded and constant operands delivered.
    pub constant_operands: crate::stats::ConstantOperandStats,
}

#[derive(Clone, Copy, Debug)]
struct Warp {
    live: bool,
    cta: u16,
    in_cta: u16,
    scheduler: u16,
    func: FuncId,
    pc: InstId,
    ib_count: u8,
    ib_ready: Cycle,
    fetch_pending: bool,
    at_barrier: bool,
    /// The barrier `at_barrier` waits at is its thread-block cluster's.
    at_cluster_barrier: bool,
    exited: bool,
    inflight: u32,
    /// `cp.async` copies issued and not yet completed.
    async_copies: u32,
    /// `wgmma`: when the latest product of the open (uncommitted) group completes.
    wgmma_open: Option<Cycle>,
    /// `wgmma`: completion times of the most recent committed groups, oldest first.
    wgmma_groups: WgmmaGroups,
    /// Its per-thread register count: the kernel's at launch, then what its last
    /// `setmaxnreg` set.
    max_registers: u16,
    /// Its `setmaxnreg.inc` waits for registers its CTA's pool does not hold.
    pool_wait: bool,
    scoreboard: Scoreboard,
    /// `sm.dependence = "control_bits"`: its dependence counters and stall hold.
    deps: dependence::DependenceCounters,
    /// The last issued instruction ended a strand (`InstHint::strand_end`).
    strand_ended: bool,
}

impl Warp {
    /// Live, not exited, fewer than `refill_below` instructions buffered (1: empty) and
    /// no fetch pending.
    fn wants_fetch(&self, refill_below: u8) -> bool {
        self.live && !self.exited && self.ib_count < refill_below && !self.fetch_pending
    }

    fn empty() -> Self {
        Warp {
            live: false,
            cta: 0,
            in_cta: 0,
            scheduler: 0,
            func: FuncId(0),
            pc: InstId(0),
            ib_count: 0,
            ib_ready: Cycle::ZERO,
            fetch_pending: false,
            at_barrier: false,
            at_cluster_barrier: false,
            exited: false,
            inflight: 0,
            async_copies: 0,
            wgmma_open: None,
            wgmma_groups: WgmmaGroups::default(),
            max_registers: 0,
            pool_wait: false,
            scoreboard: Scoreboard::default(),
            deps: dependence::DependenceCounters::default(),
            strand_ended: false,
        }
    }
}

/// A warp's committed `wgmma` groups that may still be in flight (ours: a fixed ring so
/// that warps stay `Copy`). A warp's products complete in issue order (its sub-core's
/// tensor core runs them one after another), so its groups complete in commit order;
/// when more than `WGMMA_GROUPS` are pending the oldest two merge (the later completion
/// stands for both), which can only lengthen a wait by the time between them.
const WGMMA_GROUPS: usize = 8;

#[derive(Clone, Copy, Debug, Default)]
struct WgmmaGroups {
    done: [Cycle; WGMMA_GROUPS],
    len: u8,
}

impl WgmmaGroups {
    /// Commits a group that completes at `done`, dropping those complete at `now`.
    fn commit(&mut self, done: Cycle, now: Cycle) {
        let mut kept = 0;
        for i in 0..usize::from(self.len) {
            if self.done[i] > now {
                self.done[kept] = self.done[i];
                kept += 1;
            }
        }
        if kept == WGMMA_GROUPS {
            self.done[1] = self.done[1].max(self.done[0]);
            self.done.copy_within(1.., 0);
            kept -= 1;
        }
        self.done[kept] = done;
        self.len = kept as u8 + 1;
    }

    /// Groups still in flight at `now`.
    fn pending(&self, now: Cycle) -> u32 {
        self.done[..usize::from(self.len)]
            .iter()
            .filter(|&&d| d > now)
            .count() as u32
    }
}

/// A global-to-shared bulk copy whose data arrived: CTA slot, the CTA's id, its warp in
/// the CTA and the emulator's copy id.
#[derive(Clone, Copy, Debug)]
struct BulkLanding {
    slot: usize,
    cta: [u32; 3],
    in_cta: usize,
    id: u32,
}

struct CtaSlot {
    cta: emu::Cta,
    warps: Vec<u16>,
    warps_left: u32,
    /// Per-thread registers its warps gave back with `setmaxnreg.dec` and no
    /// `setmaxnreg.inc` took yet (one unit is 32 registers: one per lane of a warp). The
    /// CTA's allocation is fixed at launch; the pool moves registers between its warps.
    register_pool: u32,
}

const NO_MEMOP: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct InFlight {
    warp: u16,
    func: FuncId,
    inst: InstId,
    class: OpClass,
    memop: u32,
    /// Active lanes (for execution energy: a bypassed instruction gives them back).
    lanes: u32,
    /// `sm.dependence = "stall_counter"`: the cycle its destinations leave the
    /// scoreboard (issue plus the class latency), while that release is pending.
    early_release: Option<Cycle>,
    /// Its destinations are released by the stall counter, not by its write.
    stall_counted: bool,
    /// A `cp.async` with a memory side: its warp's count drops when it retires.
    async_copy: bool,
    /// A global-to-shared `cp.async.bulk`: the emulator's id of its copies, which land
    /// when it retires.
    bulk_copy: Option<u32>,
    /// `sm.dependence = "control_bits"`: the dependence counter its retirement
    /// decrements.
    counter: Option<u8>,
    /// `sm.memory_buffer`: cycles it waited in its sub-core's memory-instruction buffer,
    /// added to its arrival at the LD/ST stage (then zero).
    buffer_wait: Cycles,
}

const PART_L1D: u8 = 1;
const PART_CONST: u8 = 2;
const PART_SHARED: u8 = 4;
const PART_TEXTURE: u8 = 8;
/// A texture footprint's second row of texels (`WarpStep::texture_row_pitch`).
const PART_TEXTURE_ROW2: u8 = 16;

/// The memory side of one warp memory instruction, captured at issue.
struct MemOp {
    kind: EmuAccess,
    l1d_space: Space,
    l1d: CoalescedAccess,
    konst: CoalescedAccess,
    /// A texture fetch's texels: the footprint's first row, and its second if any.
    texture: [CoalescedAccess; 2],
    shared_mask: u32,
    shared_addrs: [u64; WARP_SIZE as usize],
    /// Shared lanes that reach another CTA's shared memory (distributed shared memory).
    remote_shared: u32,
    bytes: u32,
    parts: u8,
    issued: u8,
    outstanding: u8,
    /// Cycles the loaded data takes from the L1D to the register file
    /// (`l1d.return_bits_per_cycle`); 0 for everything else.
    return_cycles: u32,
}

impl MemOp {
    fn new() -> Self {
        MemOp {
            kind: EmuAccess::Load,
            l1d_space: Space::Global,
            l1d: CoalescedAccess::default(),
            konst: CoalescedAccess::default(),
            texture: [CoalescedAccess::default(), CoalescedAccess::default()],
            shared_mask: 0,
            shared_addrs: [0; WARP_SIZE as usize],
            remote_shared: 0,
            bytes: 0,
            parts: 0,
            issued: 0,
            outstanding: 0,
            return_cycles: 0,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum EventKind {
    /// Execution finished: write back.
    Executed,
    /// Address generation finished: join the LD/ST queue.
    AddressReady,
    /// One part of a memory access returned.
    PartDone,
    /// The stall counter of a fixed-latency producer ran out: its destinations leave
    /// the scoreboard (`sm.dependence = "stall_counter"`).
    StallCountDone,
    /// A warp's stall count ran out (`sm.dependence = "control_bits"`): its next
    /// instruction may issue, so the issue stage must look again.
    HoldOver,
}

/// Timed events of the SM, ordered by (cycle, sequence).
#[derive(Default)]
struct Events {
    heap: BinaryHeap<Reverse<(Cycle, u64, u32, EventKind)>>,
    seq: u64,
}

impl Events {
    fn push(&mut self, at: Cycle, token: InstToken, kind: EventKind) {
        self.seq += 1;
        self.heap.push(Reverse((at, self.seq, token.0, kind)));
    }
    fn pop_due(&mut self, now: Cycle) -> Option<(InstToken, EventKind)> {
        match self.heap.peek() {
            Some(Reverse((t, ..))) if *t <= now => {
                let Reverse((_, _, tok, kind)) = self.heap.pop()?;
                Some((InstToken(tok), kind))
            }
            _ => None,
        }
    }
    fn next(&self) -> Option<Cycle> {
        self.heap.peek().map(|Reverse((t, ..))| *t)
    }
}

fn unit_index(k: UnitKind) -> usize {
    match k {
        UnitKind::Sp => 0,
        UnitKind::Int => 1,
        UnitKind::Sfu => 2,
        UnitKind::Dp => 3,
        UnitKind::Mem => 4,
    }
}

/// The execution units as the register file sees them during one cycle.
struct Dispatcher<'a> {
    now: Cycle,
    pipeline: &'a PipelineConfig,
    unit_free: &'a mut [Cycle],
    unit_range: &'a [(usize, usize); 5],
    /// Schedulers when units are split per scheduler (`pipeline.sub_core`), else 0.
    sub_cores: usize,
    inflight: &'a [InFlight],
    events: &'a mut Events,
    dispatched: u32,
    /// Active lanes per opcode class that skipped the execution units.
    bypassed_lanes: &'a mut [u64; OpClass::COARSE],
}

impl DispatchPort for Dispatcher<'_> {
    fn try_dispatch(&mut self, d: Dispatch) -> bool {
        let Some(f) = self.inflight.get(d.token.0 as usize) else {
            return false;
        };
        if d.bypass_execution {
            self.bypassed_lanes[f.class.coarse() as usize] += u64::from(f.lanes);
            self.events.push(self.now, d.token, EventKind::Executed);
            self.dispatched += 1;
            return true;
        }
        let t = self.pipeline.timing(f.class);
        for u in self.units_for(d.unit, f.warp) {
            if self.unit_free[u] <= self.now {
                self.unit_free[u] = self.now + t.initiation_interval;
                let kind = if f.class == OpClass::Mem {
                    EventKind::AddressReady
                } else {
                    EventKind::Executed
                };
                let ready = self.now + self.pipeline.dispatch_latency + t.latency;
                self.events.push(ready, d.token, kind);
                self.dispatched += 1;
                return true;
            }
        }
        false
    }

    fn free_at(&self, d: Dispatch) -> Cycle {
        let Some(f) = self.inflight.get(d.token.0 as usize) else {
            return Cycle::ZERO;
        };
        if d.bypass_execution {
            return Cycle::ZERO;
        }
        self.units_for(d.unit, f.warp)
            .map(|u| self.unit_free[u])
            .min()
            // No unit of the kind at all: keep asking, as before.
            .unwrap_or(Cycle::ZERO)
    }
}

impl Dispatcher<'_> {
    /// The units of kind `unit` that warp slot `warp` may use.
    fn units_for(&self, unit: UnitKind, warp: u16) -> std::ops::Range<usize> {
        let (mut lo, mut hi) = self.unit_range[unit_index(unit)];
        let n = hi - lo;
        if self.sub_cores > 0 && n >= self.sub_cores && n % self.sub_cores == 0 {
            // The warp's own sub-core: warps belong to schedulers by id modulo count.
            let per = n / self.sub_cores;
            lo += usize::from(warp) % self.sub_cores * per;
            hi = lo + per;
        }
        lo..hi
    }
}

/// One SM. Created once per simulator; kernels come and go.
pub(crate) struct Sm {
    id: SmId,
    pipeline: PipelineConfig,
    ibuffer_entries: u8,
    issue_width: u32,
    /// `sm.dependence = "stall_counter"` or `"control_bits"`: fixed-latency results
    /// leave the scoreboard after their latency.
    stall_counter: bool,
    /// `sm.dependence = "control_bits"`: issue waits on the compiler's stall counts and
    /// dependence counters instead of the scoreboard (when the kernel has them).
    control_bits: bool,
    /// The instruction just issued set its yield bit.
    yielded: bool,
    /// A warp fetches when it holds fewer buffered instructions than this: 1 (an empty
    /// buffer) on the collector core, the whole buffer on the modern core.
    refill_below: u8,
    /// The modern core's per-sub-core fetch and L0 instruction caches.
    front_end: Option<front_end::FrontEnd>,
    /// The modern core's per-sub-core memory-instruction buffers (`sm.memory_buffer`).
    memory_buffer: Option<memory_buffer::MemoryInstructionBuffer>,
    icache_line: u64,
    icache_sector: u64,
    warps: Vec<Warp>,
    ctas: Vec<Option<CtaSlot>>,
    schedulers: Vec<WarpScheduler>,
    reasons: Vec<StallReason>,
    /// Per scheduler: bumped whenever the state of one of its warps that the issue
    /// stage's checks up to the instruction buffer read (live, exited, barrier, next
    /// instruction, scoreboard or dependence counters, register pool, instruction buffer)
    /// or the scheduler's order may have changed: at issue, register writes, counter
    /// releases, stall holds running out, fetches returning, warp launch and retirement,
    /// and active-set changes. A change that reaches warps of other schedulers (a barrier
    /// released, an exit, a register pool moved, a kernel start) bumps every scheduler's.
    /// Kept per scheduler so that one sub-core's issue does not make the others look
    /// again at warps that nothing changed (see `quiet`).
    epochs: Vec<u64>,
    /// Per scheduler: `(epoch, reason, until)` when its last evaluation rejected every
    /// warp before the memory-buffer and register-file checks (idle, barrier, scoreboard,
    /// memory, instruction buffer). While its epoch is unchanged and the clock is before
    /// `until` (the earliest instruction-buffer readiness those checks met) the same
    /// evaluation would give the same reason and touch nothing, so it is not repeated: a
    /// memory-bound SM re-evaluated at every memory completion otherwise checks all of its
    /// waiting warps each time.
    quiet: Vec<Option<(u64, StallReason, Cycle)>>,
    /// Per scheduler: its epoch after its last active-set rebalance. The rebalance
    /// reads only state that bumps the epoch, and with nothing changed a second one
    /// changes nothing (blocked warps were demoted, the pending ones left are blocked or
    /// the active set is full), so it is skipped until the epoch moves.
    rebalanced: Vec<Option<u64>>,
    order: Vec<u16>,
    rf: Box<dyn RegisterFile>,
    unit_free: Vec<Cycle>,
    /// Per scheduler (sub-core): when its tensor core can start the next `wgmma` product.
    tensor_free: Vec<Cycle>,
    /// Passes of `wgmma` operand reads from shared memory, from the earliest issue cycle,
    /// not yet booked on the banks.
    tensor_smem_reads: Option<(Cycle, u32)>,
    /// Bytes one shared-memory pass delivers (`banks x bank_width_bytes`).
    smem_row_bytes: u32,
    unit_range: [(usize, usize); 5],
    inflight: Vec<InFlight>,
    free_tokens: Vec<u32>,
    memops: Vec<MemOp>,
    free_memops: Vec<u32>,
    events: Events,
    ldst: VecDeque<InstToken>,
    ldst_retry: Cycle,
    fetch_rr: usize,
    fetch_retry: Cycle,
    /// Bit `w` set: warp slot `w` wants an instruction fetch (live, not exited, empty
    /// instruction buffer, no fetch pending). Kept by [`Sm::sync_fetchable`] after every
    /// change of those fields, so the fetch stage finds its warp without reading every
    /// warp slot each cycle.
    fetchable: BitSet,
    /// The modern core: `fetchable` split by sub-core, warp slot `s + subs * i` as member
    /// `i` of set `s` (slots belong to schedulers by slot modulo their count), so each
    /// sub-core's fetch finds its own warps without walking the other sub-cores'.
    fetchable_by_sub: Vec<BitSet>,
    writes_done: Vec<InstToken>,
    /// Who waits for each of this SM's memory requests, by [`RequestId::slot`].
    owners: Vec<Option<Owner>>,
    coalescer: Coalescer,
    /// `l1d.return_bits_per_cycle` (0: loads take no transfer time).
    l1d_return_bits: u32,
    /// `l1d.bypass_global_loads`.
    bypass_global_loads: bool,
    /// `sm.per_thread_address_cycles`.
    per_thread_address: Cycles,
    /// `sm.async_copy_address_cycles`.
    async_copy_address: Cycles,
    /// `sm.async_copy_write_cycles`.
    async_copy_write: u32,
    resident_ctas: u32,
    resident_warps: u32,
    accounted_until: Cycle,
    /// The earliest cycle this SM may make progress.
    pub next_wake: Cycle,
    /// Set when a CTA retired since the flag was last cleared.
    pub cta_retired: bool,
    /// Evaluate every cycle instead of sleeping (checks that cycle skipping is exact).
    pub always_awake: bool,
    /// Cycles this SM was evaluated in, over the simulation (host work, not a
    /// statistic: how many cycles sleeping saved).
    pub evaluated_cycles: u64,
    /// Counters of the current kernel.
    pub stats: SmStats,
    /// Register operands issued and written back, counted here apart from the design.
    operands: OperandCounts,
    /// Constant-bank operands delivered: the register files' ledger, for operands no
    /// design serves.
    constant_ledger: Ledger,
    /// Whether this cycle changed anything so far ([`Sm::cycle_private`] and the issue
    /// stage).
    private_progress: bool,
    /// Where this cycle's issue stage stands.
    issue_at: IssueAt,
    /// An emulator error of [`Sm::issue_private`], which [`Sm::cycle_shared`] returns in
    /// its turn.
    issue_error: Option<Box<emu::ExecError>>,
    /// The global accesses [`Sm::issue_private`] issued this cycle without performing
    /// them, in issue order (one log, so loads, stores and atomics keep their order).
    pending: Vec<PendingAccess>,
    /// The operands the pending accesses read at issue (`PendingAccess::values`).
    pending_values: Vec<u64>,
    /// Bulk copies retired since the last issue stage, to land on the launch.
    bulk_landed: Vec<BulkLanding>,
    /// In a window ([`Sm::step_window`]) until its merge ends: a CTA that retires is kept
    /// here (with its slot) for the deferred accesses the merge still performs on it.
    windowing: bool,
    retired_in_window: Vec<(usize, CtaSlot)>,
}

impl Sm {
    /// The bytes [`Sm::new`] allocates for `cfg` that grow with it (warp and CTA slots,
    /// schedulers, units, register-file banks and collectors), for
    /// [`crate::limits::host_memory_estimate`]; generous per item, as the designs differ.
    pub fn memory_estimate(cfg: &GpuConfig) -> u64 {
        let sm = &cfg.sm;
        let rf = &cfg.register_file;
        let u = &cfg.pipeline.units;
        let units = [u.sp, u.int, u.sfu, u.dp, u.mem]
            .map(u64::from)
            .iter()
            .sum::<u64>();
        let warps = u64::from(sm.max_warps) * (std::mem::size_of::<Warp>() as u64 + 64);
        let wir = &rf.wir;
        let tables = [
            wir.reuse_buffer_entries,
            wir.vsb_entries,
            wir.verify_cache_entries,
            wir.retry_queue_entries,
        ]
        .map(u64::from)
        .iter()
        .sum::<u64>();
        // WIR's physical warp registers: a value, its flags and reference counts each.
        let wir_registers = if rf.design == crate::config::RegisterFileDesign::Wir {
            u64::from(sm.registers) / u64::from(crate::config::WARP_SIZE) * (128 + 32)
        } else {
            0
        };
        std::mem::size_of::<Self>() as u64
            + wir_registers
            + warps
            + u64::from(sm.max_ctas) * 64
            + u64::from(sm.schedulers) * 256
            + units * 16
            + u64::from(rf.mrf_banks()) * 256
            + u64::from(rf.collector_units) * (64 + u64::from(rf.operands_per_collector) * 64)
            + tables * 128
    }

    pub fn new(id: SmId, cfg: &GpuConfig) -> Self {
        let sm = &cfg.sm;
        let units = &cfg.pipeline.units;
        let mut unit_range = [(0, 0); 5];
        let mut n = 0;
        for k in [
            UnitKind::Sp,
            UnitKind::Int,
            UnitKind::Sfu,
            UnitKind::Dp,
            UnitKind::Mem,
        ] {
            let c = units.get(k) as usize;
            unit_range[unit_index(k)] = (n, n + c);
            n += c;
        }
        let (policy, active_warps) = rf::scheduling(cfg);
        let schedulers = (0..sm.schedulers)
            .map(|_| WarpScheduler::new(policy, active_warps))
            .collect();
        Sm {
            id,
            pipeline: cfg.pipeline.clone(),
            ibuffer_entries: sm.ibuffer_entries.min(255) as u8,
            issue_width: sm.issue_width,
            stall_counter: matches!(
                sm.dependence,
                Dependence::StallCounter | Dependence::ControlBits
            ),
            control_bits: sm.dependence == Dependence::ControlBits,
            yielded: false,
            refill_below: if sm.core == Core::Modern {
                sm.ibuffer_entries.clamp(1, 255) as u8
            } else {
                1
            },
            front_end: (sm.core == Core::Modern).then(|| front_end::FrontEnd::new(cfg)),
            memory_buffer: sm.memory_buffer.filter(|b| b.entries > 0).map(|b| {
                memory_buffer::MemoryInstructionBuffer::new(
                    sm.schedulers,
                    b.entries,
                    b.issue_interval,
                )
            }),
            icache_line: u64::from(cfg.icache.line_bytes),
            icache_sector: u64::from(cfg.icache.sector_bytes),
            warps: vec![Warp::empty(); sm.max_warps as usize],
            ctas: (0..sm.max_ctas).map(|_| None).collect(),
            schedulers,
            reasons: vec![StallReason::Idle; sm.schedulers as usize],
            epochs: vec![0; sm.schedulers as usize],
            quiet: vec![None; sm.schedulers as usize],
            rebalanced: vec![None; sm.schedulers as usize],
            order: Vec::with_capacity(sm.max_warps as usize),
            rf: rf::build(cfg),
            unit_free: vec![Cycle::ZERO; n],
            tensor_free: vec![Cycle::ZERO; (sm.schedulers as usize).max(1)],
            tensor_smem_reads: None,
            smem_row_bytes: (cfg.shared_memory.banks * cfg.shared_memory.bank_width_bytes).max(1),
            unit_range,
            inflight: Vec::with_capacity(256),
            free_tokens: Vec::with_capacity(256),
            memops: Vec::new(),
            free_memops: Vec::new(),
            events: Events::default(),
            ldst: VecDeque::with_capacity(64),
            ldst_retry: Cycle::ZERO,
            fetch_rr: 0,
            fetch_retry: Cycle::ZERO,
            fetchable: BitSet::new_empty(sm.max_warps as usize),
            fetchable_by_sub: if sm.core == Core::Modern {
                let subs = sm.schedulers.max(1) as usize;
                (0..subs)
                    .map(|s| {
                        BitSet::new_empty((sm.max_warps as usize).saturating_sub(s).div_ceil(subs))
                    })
                    .collect()
            } else {
                Vec::new()
            },
            writes_done: Vec::with_capacity(64),
            owners: Vec::with_capacity(64),
            coalescer: Coalescer::new(cfg.l1d.line_bytes, cfg.l1d.sector_bytes),
            l1d_return_bits: cfg.l1d.return_bits_per_cycle,
            bypass_global_loads: cfg.l1d.bypass_global_loads,
            per_thread_address: Cycles::new(u64::from(sm.per_thread_address_cycles)),
            async_copy_address: Cycles::new(u64::from(sm.async_copy_address_cycles)),
            async_copy_write: sm.async_copy_write_cycles,
            resident_ctas: 0,
            resident_warps: 0,
            accounted_until: Cycle::ZERO,
            next_wake: Cycle::NEVER,
            cta_retired: false,
            always_awake: false,
            evaluated_cycles: 0,
            stats: SmStats::default(),
            operands: OperandCounts::default(),
            constant_ledger: Ledger::new(OperandBuffer::Collector),
            private_progress: false,
            issue_at: IssueAt::START,
            pending: Vec::new(),
            pending_values: Vec::new(),
            bulk_landed: Vec::new(),
            issue_error: None,
            windowing: false,
            retired_in_window: Vec::new(),
        }
    }

    /// Register operands issued and written back so far, counted by the SM (what the
    /// register file's ledger must account for).
    pub fn operand_counts(&self) -> OperandCounts {
        self.operands
    }

    /// The constant-bank operands this SM delivered (`sm.constant_operands`), on the
    /// register files' ledger rules ([`Source::ConstantCache`]).
    pub fn constant_ledger(&self) -> &Ledger {
        &self.constant_ledger
    }

    /// The register file of this SM.
    pub fn rf(&self) -> &dyn RegisterFile {
        self.rf.as_ref()
    }

    /// Resident CTAs.
    pub fn resident_ctas(&self) -> u32 {
        self.resident_ctas
    }

    /// Free warp slots.
    pub fn free_warp_slots(&self) -> usize {
        self.warps.iter().filter(|w| !w.live).count()
    }

    /// Tells the register file which kernel starts (before its first CTA is placed).
    pub fn kernel_started(&mut self, info: &KernelInfo) {
        self.rf.kernel_started(info);
    }

    /// Starts a kernel at `start`: counters reset, stall accounting from `start`.
    pub fn begin_kernel(&mut self, start: Cycle) {
        self.pending.clear();
        self.pending_values.clear();
        self.stats = SmStats::default();
        self.accounted_until = start;
        self.reasons.iter_mut().for_each(|r| *r = StallReason::Idle);
        self.touch_all();
        self.next_wake = Cycle::NEVER;
        self.cta_retired = false;
        self.issue_error = None;
    }

    /// Ends the kernel at cycle `end` (inclusive): accounts the cycles not yet evaluated.
    pub fn finish_kernel(&mut self, end: Cycle) {
        self.account_gap(end + Cycles::new(1));
        self.rf.skip_to(end + Cycles::new(1));
    }

    fn account_gap(&mut self, until: Cycle) {
        if until > self.accounted_until {
            let gap = (until - self.accounted_until).get();
            for &r in &self.reasons {
                self.stats.stalls.add(r, gap);
            }
            self.stats.resident_warp_cycles += u64::from(self.resident_warps) * gap;
            self.accounted_until = until;
        }
    }

    /// Places a CTA on this SM at `now`. The caller checked that it fits.
    pub fn launch_cta(&mut self, cta: emu::Cta, info: &KernelInfo, now: Cycle) {
        let Some(slot) = self.ctas.iter().position(Option::is_none) else {
            debug_assert!(false, "launch_cta without a free CTA slot");
            return;
        };
        let n = cta.num_warps();
        let mut warps = Vec::with_capacity(n);
        let schedulers = self.schedulers.len() as u16;
        for in_cta in 0..n {
            let Some(w) = self.warps.iter().position(|w| !w.live) else {
                break;
            };
            let scheduler = w as u16 % schedulers;
            self.warps[w] = Warp {
                live: true,
                cta: slot as u16,
                in_cta: in_cta as u16,
                scheduler,
                func: info.kernel,
                pc: InstId(0),
                max_registers: info.registers_per_thread.min(u32::from(u16::MAX)) as u16,
                ..Warp::empty()
            };
            self.sync_fetchable(w);
            self.schedulers[scheduler as usize].add(w as u16);
            self.touch(w);
            self.rf.warp_launched(WarpLaunch {
                warp: WarpSlot(w as u16),
                scheduler,
                registers_per_thread: info.registers_per_thread,
                cta: slot as u16,
            });
            self.rf
                .warp_placed(WarpSlot(w as u16), cta.id, in_cta as u32);
            warps.push(w as u16);
        }
        self.resident_warps += warps.len() as u32;
        self.stats.peak_resident_warps = self.stats.peak_resident_warps.max(self.resident_warps);
        self.ctas[slot] = Some(CtaSlot {
            cta,
            warps_left: warps.len() as u32,
            warps,
            register_pool: 0,
        });
        self.resident_ctas += 1;
        self.next_wake = self.next_wake.min(now + Cycles::new(1));
    }

    /// Warps of this SM's CTAs that wait at a cluster barrier which a CTA elsewhere
    /// completed resume (the emulator releases them; the SM clears their barrier flag).
    pub fn wake_cluster_waiters(&mut self, now: Cycle) {
        let mut woke = Vec::new();
        for (i, slot) in self.ctas.iter_mut().enumerate() {
            let Some(slot) = slot else { continue };
            if !slot.cta.wake_cluster_waiters() {
                continue;
            }
            for (idx, &ws) in slot.warps.iter().enumerate() {
                let w = &mut self.warps[ws as usize];
                if w.at_barrier
                    && w.cta as usize == i
                    && !matches!(slot.cta.warp_status(idx), WarpStatus::AtBarrier(_))
                {
                    w.at_barrier = false;
                    woke.push(ws as usize);
                }
            }
        }
        if woke.is_empty() {
            return;
        }
        for w in woke {
            self.sync_fetchable(w);
        }
        self.touch_all();
        self.next_wake = self.next_wake.min(now + Cycles::new(1));
    }

    /// A CTA whose warps all wait at barriers (for deadlock reports).
    pub fn stuck_cta(&self) -> Option<&emu::Cta> {
        self.ctas.iter().flatten().map(|c| &c.cta).find(|c| {
            (0..c.num_warps()).any(|w| matches!(c.warp_status(w), WarpStatus::AtBarrier(_)))
        })
    }

    /// The state of every live warp, in slot order; `line` gives the PTX line of an
    /// instruction.
    pub fn warp_states(
        &self,
        line: impl Fn(FuncId, InstId) -> Option<u32>,
    ) -> Vec<crate::run_limits::WarpState> {
        use crate::run_limits::{WarpState, WarpWait};
        let mut out = Vec::new();
        for (slot, w) in self.warps.iter().enumerate() {
            if !w.live {
                continue;
            }
            let Some(cta) = self.ctas.get(w.cta as usize).and_then(Option::as_ref) else {
                continue;
            };
            let wait = match cta.cta.warp_status(w.in_cta as usize) {
                WarpStatus::AtBarrier(b) => WarpWait::Barrier(b),
                _ if w.pool_wait => WarpWait::RegisterPool {
                    registers: w.max_registers,
                    pool: cta.register_pool,
                },
                _ if w.exited => WarpWait::Draining,
                _ if w.fetch_pending || w.ib_count == 0 => WarpWait::Fetch,
                _ if w.scoreboard.any_long() => WarpWait::Memory,
                _ if !w.scoreboard.is_clear() => WarpWait::Register,
                _ => WarpWait::Issue,
            };
            out.push(WarpState {
                sm: self.id.0,
                slot: slot as u32,
                cta: cta.cta.id,
                warp_in_cta: u32::from(w.in_cta),
                ptx_line: (!w.exited).then(|| line(w.func, w.pc)).flatten(),
                wait,
            });
        }
        out
    }

    /// A memory request of this SM completed at `at`.
    pub fn memory_done(&mut self, owner: Owner, at: Cycle) {
        match owner {
            Owner::Fetch(w) => {
                let warp = &mut self.warps[w as usize];
                if warp.live && warp.fetch_pending {
                    warp.fetch_pending = false;
                    // A refill of a buffer that still held instructions (the modern
                    // core's) does not delay them.
                    if warp.ib_count == 0 {
                        warp.ib_ready = at + Cycles::new(1);
                    }
                    warp.ib_count = self.ibuffer_entries.max(1);
                    self.sync_fetchable(w as usize);
                    self.touch(w as usize);
                }
            }
            Owner::Inst(t) => {
                let m = self.inflight[t.0 as usize].memop;
                let transfer = self.memops.get(m as usize).map_or(0, |op| op.return_cycles);
                let done = at + Cycles::new(u64::from(transfer));
                self.events.push(done, t, EventKind::PartDone);
                // Nothing happens before the data has crossed to the register file: the
                // SM need not wake before then for it.
                self.next_wake = self.next_wake.min(done);
                return;
            }
            Owner::Prefetch { sub, line } => self.prefetch_arrived(sub, line, at),
            Owner::Nobody => {}
        }
        self.next_wake = self.next_wake.min(at);
    }

    /// Who waited for this SM's request `id`, which has completed (`None` if nobody
    /// was recorded).
    pub fn take_owner(&mut self, id: RequestId) -> Option<Owner> {
        self.owners.get_mut(id.slot()).and_then(Option::take)
    }

    /// The memory system accepted this SM's request that had met a reservation failure,
    /// at `at`: the LD/ST stage may issue again.
    pub fn memory_unblocked(&mut self, at: Cycle) {
        self.ldst_retry = self.ldst_retry.min(at);
        self.next_wake = self.next_wake.min(at);
    }

    /// One cycle of the SM at `now`: [`Sm::cycle_private`], then [`Sm::cycle_shared`].
    pub fn cycle(&mut self, now: Cycle, ctx: &mut Ctx<'_, '_>) -> Result<(), emu::ExecError> {
        self.cycle_private(now, ctx.info, ctx.memory.port(self.id));
        self.cycle_shared(now, ctx)
    }

    /// The first part of a cycle at `now`, which reads and writes nothing outside this SM
    /// and its memory front end `port` (stall accounting, the writeback stage, the LD/ST
    /// stage and the register file's cycle), so the SMs due in a cycle may run it in
    /// parallel on split front ends before their [`Sm::cycle_shared`] parts run in SM
    /// order ([`crate::parallel`]).
    pub fn cycle_private(&mut self, now: Cycle, info: &KernelInfo, mut port: SmPort<'_>) {
        self.account_gap(now);
        self.rf.skip_to(now);
        self.evaluated_cycles += 1;
        let mut progress = false;

        // 1. Writeback.
        while let Some((tok, kind)) = self.events.pop_due(now) {
            progress = true;
            match kind {
                EventKind::Executed => self.writeback(tok, now, info),
                EventKind::AddressReady => {
                    // A wait in the memory-instruction buffer delays the whole trip.
                    let f = &mut self.inflight[tok.0 as usize];
                    let wait = std::mem::replace(&mut f.buffer_wait, Cycles::ZERO);
                    if wait > Cycles::ZERO {
                        self.events.push(now + wait, tok, EventKind::AddressReady);
                    } else {
                        self.ldst.push_back(tok);
                    }
                }
                EventKind::StallCountDone => self.stall_count_done(tok, now, info),
                // Its token is the warp's slot, not an instruction's.
                EventKind::HoldOver => self.touch(tok.0 as usize),
                EventKind::PartDone => {
                    let m = self.inflight[tok.0 as usize].memop;
                    if let Some(op) = self.memops.get_mut(m as usize) {
                        op.outstanding = op.outstanding.saturating_sub(1);
                        if op.outstanding == 0 && op.issued == op.parts {
                            self.writeback(tok, now, info);
                        }
                    }
                }
            }
        }

        // 2. Execute: the tensor cores' shared-memory reads of the wgmmas issued since the
        // last cycle take the banks first, then the LD/ST stage.
        if let Some((at, passes)) = self.tensor_smem_reads.take() {
            port.reserve_tensor_read(at, passes);
        }
        progress |= self.ldst_stage(now, info, &mut port);

        // 3. Operand collection, dispatch, register writes.
        let mut dispatcher = Dispatcher {
            now,
            pipeline: &self.pipeline,
            unit_free: &mut self.unit_free,
            unit_range: &self.unit_range,
            sub_cores: if self.pipeline.sub_core {
                self.schedulers.len()
            } else {
                0
            },
            inflight: &self.inflight,
            events: &mut self.events,
            dispatched: 0,
            bypassed_lanes: &mut self.stats.bypassed_lanes_by_class,
        };
        let mut rc = RfCycle {
            now,
            sm: self.id,
            memory: port,
            dispatch: &mut dispatcher,
            writes_done: &mut self.writes_done,
        };
        self.rf.cycle(&mut rc);
        progress |= dispatcher.dispatched > 0;
        let mut done = std::mem::take(&mut self.writes_done);
        for &tok in &done {
            progress = true;
            let f = self.inflight[tok.0 as usize];
            let ii = info.inst(f.func, f.inst);
            let dsts = info.dsts(f.func, ii);
            if !f.stall_counted || f.early_release.is_some() {
                self.warps[f.warp as usize].scoreboard.release(dsts);
            }
            self.touch(f.warp as usize);
            self.retire(tok);
        }
        done.clear();
        self.writes_done = done;
        self.private_progress = progress;
        self.issue_at = IssueAt::START;
    }

    /// The parallel phase's part of the issue stage at `now`, after
    /// [`Sm::cycle_private`]: issues CTA-private instructions and global loads, stores,
    /// atomics and reductions (their memory accesses deferred to
    /// [`Sm::complete_accesses`]) on `cx`'s executor
    /// (`cx.private_only`) and stops before the first other one, where
    /// [`Sm::cycle_shared`] goes on in SM order. Issue reads and writes only this SM and
    /// its warps' CTAs, so the order of every shared effect stays the one-thread order.
    /// An emulator error waits for [`Sm::cycle_shared`], which returns it in its turn.
    pub fn issue_private(&mut self, now: Cycle, cx: &mut IssueCtx<'_, '_>) {
        debug_assert!(cx.private_only);
        if let Err(e) = self.issue_stages(now, cx) {
            self.issue_error = Some(Box::new(e));
        }
    }

    /// The rest of the cycle at `now`, after [`Sm::cycle_private`]: the stages that use
    /// the emulator and the whole memory system, shared by all SMs.
    pub fn cycle_shared(
        &mut self,
        now: Cycle,
        ctx: &mut Ctx<'_, '_>,
    ) -> Result<(), emu::ExecError> {
        let mut issue = IssueCtx {
            launch: &mut *ctx.launch,
            info: ctx.info,
            addresses: Addresses::Whole(&mut *ctx.addresses),
            texture_path: ctx.memory.config().texture_cache.is_some(),
            private_only: false,
            window: false,
        };
        // Bulk copies whose data arrived land (and complete on their mbarriers) before
        // anything issues: a waiter issuing now sees them.
        if !self.bulk_landed.is_empty() {
            self.land_bulk_copies(&mut issue)?;
        }
        // The global accesses [`Sm::issue_private`] issued, before anything this SM
        // issues now and after every lower SM's cycle: the one-thread order.
        if !self.pending.is_empty() {
            self.complete_accesses(&mut issue, Cycle::NEVER)?;
        }
        if let Some(e) = self.issue_error.take() {
            return Err(*e);
        }
        // 4. Issue (from where [`Sm::issue_private`] stopped, if it ran).
        self.issue_stages(now, &mut issue)?;
        self.cycle_tail(now, ctx.info, &mut ctx.memory.port(self.id));
        Ok(())
    }

    /// The end of the cycle at `now`, after issue: fetch (on `port`), the cycle's
    /// counters and the next wake-up. Reads and writes only this SM and its front end.
    #[inline]
    fn cycle_tail(&mut self, now: Cycle, info: &KernelInfo, port: &mut SmPort<'_>) {
        let mut progress = std::mem::take(&mut self.private_progress);
        let earliest_ib = self.issue_at.earliest_ib;

        // 5-6. Decode happened when fetches returned (`memory_done`); fetch.
        progress |= self.fetch_stage(now, info, port);

        self.stats.resident_warp_cycles += u64::from(self.resident_warps);
        self.accounted_until = now + Cycles::new(1);

        self.next_wake = if progress || (self.always_awake && self.resident_ctas > 0) {
            now + Cycles::new(1)
        } else {
            let mut t = earliest_ib;
            if let Some(e) = self.events.next() {
                t = t.min(e);
            }
            if let Some(e) = self.rf.next_event(now) {
                t = t.min(e);
            }
            if let Some(e) = self.memory_buffer.as_ref().and_then(|b| b.next_free(now)) {
                t = t.min(e);
            }
            if !self.ldst.is_empty() {
                t = t.min(self.ldst_retry);
            }
            if self.fetch_retry > now {
                t = t.min(self.fetch_retry);
            }
            // A stream buffer's prefetch waits while a memory instruction waits in the
            // LD/ST queue (`fetch_per_sub_core`), and the queue empties only in a cycle of
            // progress, which one of the other timers wakes the SM for: no need to be
            // evaluated every cycle until then.
            if self.ldst.is_empty() && self.front_end.as_ref().is_some_and(|f| f.wants_prefetch()) {
                t = now + Cycles::new(1);
            }
            t.max(now + Cycles::new(1))
        };
    }

    /// Steps this SM through the cycles of a window `t..end` on its own thread
    /// (`docs/parallel.md`, "Step 3, second part"): at each cycle after the first, its
    /// own memory events ([`FrontEnds::run_local`], logged for the merge) and their
    /// reports, then, if it is due, its cycle: the private part, the issue stage on
    /// `cx`'s executor (CTA-private instructions and deferred global accesses, which the
    /// merge performs in their cycle's SM turn) and fetch. Stops at the first thing that
    /// needs the merge: an issue stage that stopped ([`WindowStep::shared_at`]), or the
    /// end of a cycle in which a CTA retired (CTA placement follows every retire in the
    /// one-thread order). An SM without CTAs when every CTA is placed runs live (it may
    /// be past the kernel's end). The caller ran the memory system up to `t` and took
    /// the SM's reports.
    pub(crate) fn step_window(
        &mut self,
        (t, end): (Cycle, Cycle),
        fronts: &FrontEnds<'_>,
        m: &mut SmMemory,
        cx: &mut IssueCtx<'_, '_>,
        all_placed: bool,
    ) -> WindowStep {
        let mut r = WindowStep {
            live_from: end,
            ..WindowStep::default()
        };
        if all_placed && self.resident_ctas == 0 {
            r.live_from = t;
            return r;
        }
        fronts.begin_window(m, end);
        self.windowing = true;
        let mut d = t;
        while d < end {
            let bit = 1u64 << (d - t).get();
            if d > t && fronts.run_local(self.id, m, d) {
                let reports = fronts.take_reports(m);
                let mut any = false;
                for c in reports.done {
                    any = true;
                    if let Some(owner) = self.take_owner(c.id) {
                        self.memory_done(owner, c.at);
                    }
                }
                for at in reports.unblocked {
                    any = true;
                    self.memory_unblocked(at);
                }
                if any {
                    r.visited |= bit;
                    r.progress |= bit;
                }
            }
            if self.next_wake <= d {
                r.visited |= bit;
                let before = self.stats.warp_instructions;
                let pending_before = self.pending.len();
                self.cycle_private(d, cx.info, fronts.port_at(self.id, m, d));
                if let Err(e) = self.issue_stages(d, cx) {
                    self.issue_error = Some(Box::new(e));
                }
                let issued = self.stats.warp_instructions - before;
                r.issued += issued;
                if issued > 0 {
                    r.progress |= bit;
                }
                let finished = self.issue_error.is_none()
                    && self.bulk_landed.is_empty()
                    && self.issue_at.stopped.is_none()
                    && self.issue_at.scheduler >= self.schedulers.len()
                    && self.pending[pending_before..]
                        .iter()
                        .all(|p| p.rebuild.is_none());
                if !finished {
                    fronts.end_phase(m, d);
                    if self.cta_retired {
                        r.retired_at = Some(d);
                    }
                    r.shared_at = Some(d);
                    r.live_from = d + Cycles::new(1);
                    return r;
                }
                self.cycle_tail(d, cx.info, &mut fronts.port_at(self.id, m, d));
                fronts.end_phase(m, d);
                if self.cta_retired {
                    r.retired_at = Some(d);
                    r.live_from = d + Cycles::new(1);
                    return r;
                }
            }
            d += Cycles::new(1);
        }
        r
    }

    /// The merge of a window, in this SM's turn of cycle `through`: performs the
    /// deferred global accesses it issued on its thread up to that cycle, on the launch.
    pub(crate) fn complete_window_accesses(
        &mut self,
        through: Cycle,
        ctx: &mut Ctx<'_, '_>,
    ) -> Result<(), emu::ExecError> {
        if self.pending.first().is_none_or(|p| p.cycle > through) {
            return Ok(());
        }
        let mut issue = IssueCtx {
            launch: &mut *ctx.launch,
            info: ctx.info,
            addresses: Addresses::Whole(&mut *ctx.addresses),
            texture_path: ctx.memory.config().texture_cache.is_some(),
            private_only: false,
            window: false,
        };
        self.complete_accesses(&mut issue, through)
    }

    /// The window's merge is over: retired CTAs kept for it go.
    pub(crate) fn end_window(&mut self) {
        self.windowing = false;
        self.retired_in_window.clear();
    }

    /// Lands the bulk copies that retired, in retirement order, on the CTA that issued
    /// them (one whose slot another CTA took since has finished: nothing to land).
    fn land_bulk_copies(&mut self, cx: &mut IssueCtx<'_, '_>) -> Result<(), emu::ExecError> {
        let mut landed = std::mem::take(&mut self.bulk_landed);
        let mut result = Ok(());
        for b in &landed {
            if let Some(slot) = self.ctas[b.slot].as_mut().filter(|s| s.cta.id == b.cta) {
                result = cx.launch.complete_bulk_copy(&mut slot.cta, b.in_cta, b.id);
                if result.is_err() {
                    break;
                }
            }
        }
        landed.clear();
        self.bulk_landed = landed;
        result
    }

    /// Performs this cycle's deferred global accesses in issue order on the launch
    /// (values, faults and stray-access warnings as issuing them there would give: a
    /// load's read, a store's write, an atomic's read-modify-write with its old values
    /// written to its registers), and builds the memory operation of each that touched
    /// an allocation first, placing it as the one-thread run does.
    fn complete_accesses(
        &mut self,
        cx: &mut IssueCtx<'_, '_>,
        through: Cycle,
    ) -> Result<(), emu::ExecError> {
        let mut pending = std::mem::take(&mut self.pending);
        let n = pending.iter().take_while(|p| p.cycle <= through).count();
        let mut result = Ok(());
        for p in &pending[..n] {
            if let Some(mem) = p.rebuild {
                let mut step = emu::WarpStep {
                    exec_mask: p.access.exec_mask,
                    mem: Some(mem),
                    addrs: p.access.addrs,
                    ..Default::default()
                };
                step.lane_spaces = [MemSpace::Global; WARP_SIZE as usize];
                let op = &mut self.memops[p.memop as usize];
                let (parts, space) = (op.parts, op.l1d_space);
                build_memop(
                    op,
                    (&mut self.coalescer, &mut cx.addresses),
                    p.slot,
                    &step,
                    cx.texture_path,
                );
                debug_assert_eq!(op.parts, parts);
                // A global load keeps its L1D choice (`Space::GlobalBypass`).
                op.l1d_space = space;
            }
            // A CTA that retired later in a window is kept for its accesses.
            let slot = match self.ctas[p.cta_slot].as_mut() {
                Some(slot) => Some(slot),
                None => self
                    .retired_in_window
                    .iter_mut()
                    .find(|(i, _)| *i == p.cta_slot)
                    .map(|(_, slot)| slot),
            };
            if let Some(slot) = slot {
                let (start, len) = (p.values.0 as usize, p.values.1 as usize);
                let values = &self.pending_values[start..start + len];
                result = cx
                    .launch
                    .complete_access(&mut slot.cta, p.in_cta, &p.access, values);
                if result.is_err() {
                    break;
                }
            }
        }
        pending.drain(..n);
        self.pending = pending;
        if self.pending.is_empty() {
            self.pending_values.clear();
        }
        result
    }

    fn writeback(&mut self, tok: InstToken, now: Cycle, info: &KernelInfo) {
        let f = self.inflight[tok.0 as usize];
        let ii = info.inst(f.func, f.inst);
        let dsts = info.dsts(f.func, ii);
        if dsts.is_empty() {
            self.retire(tok);
        } else {
            let warp = &self.warps[f.warp as usize];
            self.operands.written_back(dsts);
            self.rf.request_write(
                WriteRequest {
                    token: tok,
                    warp: WarpSlot(f.warp),
                    scheduler: warp.scheduler,
                    dsts,
                },
                now,
            );
        }
    }

    /// The stall counter of instruction `tok` ran out at `now`: its destinations leave
    /// the scoreboard. A token reused since (its write done first) has another release
    /// cycle, or none, and is left alone.
    fn stall_count_done(&mut self, tok: InstToken, now: Cycle, info: &KernelInfo) {
        let f = self.inflight[tok.0 as usize];
        if f.early_release != Some(now) {
            return;
        }
        self.inflight[tok.0 as usize].early_release = None;
        let ii = info.inst(f.func, f.inst);
        self.warps[f.warp as usize]
            .scoreboard
            .release(info.dsts(f.func, ii));
        self.touch(f.warp as usize);
    }

    fn retire(&mut self, tok: InstToken) {
        let f = self.inflight[tok.0 as usize];
        if f.memop != NO_MEMOP {
            self.free_memops.push(f.memop);
        }
        self.free_tokens.push(tok.0);
        let w = f.warp as usize;
        let warp = &mut self.warps[w];
        if let Some(c) = f.counter {
            warp.deps.written(c);
            self.touch(w);
        }
        if let Some(id) = f.bulk_copy {
            let warp = &self.warps[w];
            let (slot, in_cta) = (warp.cta as usize, warp.in_cta as usize);
            if let Some(cta) = self.ctas.get(slot).and_then(Option::as_ref) {
                self.bulk_landed.push(BulkLanding {
                    slot,
                    cta: cta.cta.id,
                    in_cta,
                    id,
                });
            }
        }
        let warp = &mut self.warps[w];
        warp.inflight = warp.inflight.saturating_sub(1);
        if f.async_copy {
            warp.async_copies = warp.async_copies.saturating_sub(1);
        }
        let done = warp.exited && warp.inflight == 0;
        if f.async_copy {
            // A `cp.async.wait` of this warp may issue now: schedulers that found nothing
            // to issue re-examine their warps only when the epoch moves.
            self.touch(w);
        }
        if done {
            self.retire_warp(w);
        }
    }

    fn retire_warp(&mut self, w: usize) {
        let warp = self.warps[w];
        if !warp.live {
            return;
        }
        self.warps[w].live = false;
        self.warps[w].scoreboard.clear();
        self.touch(w);
        self.sync_fetchable(w);
        let sched = &mut self.schedulers[warp.scheduler as usize];
        if sched.remove(w as u16) {
            self.rf.warp_deactivated(WarpSlot(w as u16));
        }
        self.rf.warp_exited(WarpSlot(w as u16));
        self.resident_warps -= 1;
        let c = warp.cta as usize;
        if let Some(slot) = self.ctas[c].as_mut() {
            slot.warps_left -= 1;
            if slot.warps_left == 0 {
                let gone = self.ctas[c].take();
                if let (true, Some(gone)) = (self.windowing, gone) {
                    self.retired_in_window.push((c, gone));
                }
                self.resident_ctas -= 1;
                self.cta_retired = true;
            }
        }
    }

    /// Why warp `w` cannot issue now, or `Ok` if it can.
    fn check(
        &mut self,
        w: u16,
        now: Cycle,
        info: &KernelInfo,
        earliest_ib: &mut Cycle,
    ) -> Result<(), StallReason> {
        let warp = &mut self.warps[w as usize];
        if !warp.live || warp.exited {
            return Err(StallReason::Idle);
        }
        if warp.at_barrier {
            return Err(if warp.at_cluster_barrier {
                StallReason::ClusterBarrier
            } else {
                StallReason::Barrier
            });
        }
        // The next instruction is known (the emulator's next PC) even before it is
        // fetched: a warp waiting on a register is reported as such, not as a fetch wait.
        // Operands are looked up only when the scoreboard's memo does not answer (a warp
        // waiting on memory is checked again each time its SM is evaluated).
        let func = warp.func;
        let ii = if self.control_bits && info.control_bits {
            // MICRO'25: the wait mask's counters and the stall count, no scoreboard.
            // A stall hold ends by an event (`HoldOver`) that bumps the epoch.
            let (_, ii) = info.issue_inst(func, warp.pc);
            match warp.deps.wait(ii.hint.control.wait_mask, now) {
                Some(dependence::Wait::Memory) => return Err(StallReason::Memory),
                Some(dependence::Wait::Counter | dependence::Wait::Stall) => {
                    return Err(StallReason::Scoreboard)
                }
                None => {}
            }
            ii
        } else {
            let pc = info.issue_point(func, warp.pc);
            let key = u64::from(func.0) << 32 | u64::from(pc.0);
            let hazard = warp.scoreboard.check_memo(key, || {
                let ii = info.inst(func, pc);
                (info.srcs(func, ii), info.dsts(func, ii))
            });
            match hazard {
                Hazard::Short => return Err(StallReason::Scoreboard),
                Hazard::Long => return Err(StallReason::Memory),
                Hazard::None => {}
            }
            info.inst(func, pc)
        };
        let warp = &self.warps[w as usize];
        if ii.async_copy == AsyncCopyRole::Wait && warp.async_copies > 0 {
            return Err(StallReason::Memory);
        }
        if let WgmmaRole::Wait(n) = ii.wgmma {
            // PTX ISA: wgmma.wait_group n waits until at most n of the warp's most recent
            // groups are pending (the warp's open group is not one of them).
            if warp.wgmma_groups.pending(now) > n {
                return Err(StallReason::TensorWait);
            }
        }
        if let RegisterRequest::Increase(n) = ii.registers {
            // PTX ISA: setmaxnreg.inc blocks until its CTA's pool holds the registers.
            let need = u32::from(n).saturating_sub(u32::from(warp.max_registers));
            let pool = self.ctas[warp.cta as usize]
                .as_ref()
                .map_or(0, |c| c.register_pool);
            let waits = need > pool;
            self.warps[w as usize].pool_wait = waits;
            if waits {
                return Err(StallReason::Barrier);
            }
        }
        let warp = &self.warps[w as usize];
        if warp.ib_count == 0 {
            return Err(StallReason::NoReadyWarp);
        }
        if warp.ib_ready > now {
            *earliest_ib = (*earliest_ib).min(warp.ib_ready);
            return Err(StallReason::NoReadyWarp);
        }
        if ii.class == OpClass::Mem {
            let scheduler = warp.scheduler;
            if let Some(b) = &mut self.memory_buffer {
                if b.is_full(scheduler, now) {
                    return Err(StallReason::MemoryBuffer);
                }
            }
        }
        let warp = &self.warps[w as usize];
        let c = Candidate {
            warp: WarpSlot(w),
            scheduler: warp.scheduler,
            unit: self.pipeline.timing(ii.class).unit,
            class: ii.class,
            srcs: info.srcs(func, ii),
            dsts: info.dsts(func, ii),
            hint: ii.hint,
        };
        self.rf.can_accept(&c, now).map_err(|e| {
            self.rf
                .scheduler_event(SchedulerEvent::Refused(WarpSlot(w)));
            match e {
                RfStall::NoFreeCollector => StallReason::NoFreeCollector,
                RfStall::BankConflict => StallReason::BankConflict,
                RfStall::PipelineBusy => StallReason::PipelineBusy,
                RfStall::NotResident | RfStall::Design => StallReason::RegisterFile,
            }
        })
    }

    fn rank(&self, w: u16, info: &KernelInfo) -> u32 {
        let warp = &self.warps[w as usize];
        let ii = info.inst(warp.func, info.issue_point(warp.func, warp.pc));
        self.rf.rank(&Candidate {
            warp: WarpSlot(w),
            scheduler: warp.scheduler,
            unit: self.pipeline.timing(ii.class).unit,
            class: ii.class,
            srcs: info.srcs(warp.func, ii),
            dsts: info.dsts(warp.func, ii),
            hint: ii.hint,
        })
    }

    /// The issue stage from where it stands ([`IssueAt`]): each scheduler picks a warp
    /// and issues; with `cx.private_only`, stops before an instruction that is not
    /// CTA-private.
    fn issue_stages(
        &mut self,
        now: Cycle,
        cx: &mut IssueCtx<'_, '_>,
    ) -> Result<(), emu::ExecError> {
        while self.issue_at.scheduler < self.schedulers.len() {
            let s = self.issue_at.scheduler;
            let resumed = self.issue_at.stopped.take();
            let (w, first) = match resumed {
                Some(stop) => stop,
                None => match self.select_warp(s, now, cx.info) {
                    Some(w) => (w, 0),
                    None => {
                        self.issue_at.scheduler += 1;
                        continue;
                    }
                },
            };
            // The check of the instruction a stop came before has passed.
            let checked = resumed.map(|(_, k)| k);
            // A deferred access is performed (an atomic's or load's registers written) in
            // the SM's turn: nothing more of its warp issues before that.
            let deferred_before = self.pending.len();
            for k in first..self.issue_width {
                if k > 0 && checked != Some(k) {
                    let mut earliest_ib = self.issue_at.earliest_ib;
                    let ok = self.check(w, now, cx.info, &mut earliest_ib).is_ok();
                    self.issue_at.earliest_ib = earliest_ib;
                    if !ok {
                        break;
                    }
                }
                if cx.private_only
                    && (self.pending.len() > deferred_before
                        || !self.next_is_cta_private(w, cx)
                        || (cx.window && self.frame_hazard(w, cx)))
                {
                    self.issue_at.stopped = Some((w, k));
                    return Ok(());
                }
                self.issue(w, now, cx)?;
            }
            self.schedulers[s].issued(w);
            if std::mem::take(&mut self.yielded) {
                self.schedulers[s].yield_greedy(w);
            }
            self.stats.stalls.issued += 1;
            // Skipped cycles never follow an issue cycle; Idle is a placeholder.
            self.reasons[s] = StallReason::Idle;
            self.private_progress = true;
            self.issue_at.scheduler += 1;
        }
        Ok(())
    }

    /// In a window: whether warp `w` has a deferred access the merge has yet to perform
    /// and its next instruction changes its call frames (a call, return or exit), so
    /// that the frame the access writes might not be the same one at the merge.
    fn frame_hazard(&mut self, w: u16, cx: &IssueCtx<'_, '_>) -> bool {
        let warp = &self.warps[w as usize];
        let (cta, in_cta) = (warp.cta as usize, warp.in_cta as usize);
        if !self
            .pending
            .iter()
            .any(|p| p.cta_slot == cta && p.in_cta == in_cta)
        {
            return false;
        }
        self.ctas[cta]
            .as_mut()
            .is_some_and(|slot| cx.launch.next_changes_frames(&mut slot.cta, in_cta))
    }

    /// Whether warp `w`'s next instruction is CTA-private (a warp without a CTA issues
    /// nothing, which is).
    fn next_is_cta_private(&mut self, w: u16, cx: &IssueCtx<'_, '_>) -> bool {
        let warp = &self.warps[w as usize];
        let in_cta = warp.in_cta as usize;
        self.ctas[warp.cta as usize]
            .as_mut()
            .is_none_or(|slot| cx.launch.next_is_cta_private(&mut slot.cta, in_cta))
    }

    /// Scheduler `s` picks a warp that can issue, or counts why none can. Notes progress
    /// in `private_progress`.
    fn select_warp(&mut self, s: usize, now: Cycle, info: &KernelInfo) -> Option<u16> {
        if self.rebalanced[s] != Some(self.epochs[s]) {
            let warps = &self.warps;
            let rf = &mut self.rf;
            let epoch = &mut self.epochs[s];
            let progress = &mut self.private_progress;
            let strand_rule = rf.deschedules_at_strand_ends();
            self.schedulers[s].rebalance(
                |w| {
                    let warp = &warps[w as usize];
                    if !warp.live || warp.exited || warp.at_barrier {
                        return true;
                    }
                    if strand_rule {
                        // The compiler decides: only at strand ends, until every
                        // long-latency result is back (Gebhart MICRO'11 §4.1).
                        return warp.strand_ended && warp.scoreboard.any_long();
                    }
                    let ii = info.inst(warp.func, info.issue_point(warp.func, warp.pc));
                    warp.scoreboard.depends_on_long(info.srcs(warp.func, ii))
                },
                |c| {
                    *progress = true;
                    *epoch += 1;
                    match c {
                        SetChange::Activated(w) => rf.warp_activated(WarpSlot(w)),
                        SetChange::Deactivated(w) => rf.warp_deactivated(WarpSlot(w)),
                    }
                },
            );
            self.rebalanced[s] = Some(self.epochs[s]);
        }
        if let Some((epoch, reason, until)) = self.quiet[s] {
            if epoch == self.epochs[s] && now < until {
                self.stats.stalls.add(reason, 1);
                self.reasons[s] = reason;
                // The warps that waited for their instruction buffers still do.
                self.issue_at.earliest_ib = self.issue_at.earliest_ib.min(until);
                return None;
            }
        }
        let mut order = std::mem::take(&mut self.order);
        self.schedulers[s].order_into(&mut order);
        let ranked = self.rf.ranks_warps();
        let mut best = StallReason::Idle;
        let mut chosen: Option<(u16, u32)> = None;
        // Every warp rejected by the checks that only warp state decides.
        let mut all_early = true;
        // The earliest instruction-buffer readiness of this scheduler's warps.
        let mut earliest_ib = Cycle::NEVER;
        for &w in &order {
            let checked = self.check(w, now, info, &mut earliest_ib);
            all_early &= matches!(
                checked,
                Err(StallReason::Idle
                    | StallReason::Barrier
                    | StallReason::ClusterBarrier
                    | StallReason::Scoreboard
                    | StallReason::Memory
                    | StallReason::NoReadyWarp)
            );
            match checked {
                Ok(()) => {
                    if !ranked {
                        chosen = Some((w, 0));
                        break;
                    }
                    let r = self.rank(w, info);
                    if chosen.is_none_or(|(_, br)| r > br) {
                        chosen = Some((w, r));
                    }
                }
                Err(r) => best = best.max(r),
            }
        }
        self.order = order;
        self.issue_at.earliest_ib = self.issue_at.earliest_ib.min(earliest_ib);
        match chosen {
            Some((w, _)) => Some(w),
            None => {
                self.stats.stalls.add(best, 1);
                self.reasons[s] = best;
                self.quiet[s] = all_early.then_some((self.epochs[s], best, earliest_ib));
                None
            }
        }
    }

    fn alloc_token(&mut self, f: InFlight) -> InstToken {
        match self.free_tokens.pop() {
            Some(t) => {
                self.inflight[t as usize] = f;
                InstToken(t)
            }
            None => {
                self.inflight.push(f);
                InstToken(self.inflight.len() as u32 - 1)
            }
        }
    }

    fn alloc_memop(&mut self) -> u32 {
        match self.free_memops.pop() {
            Some(m) => m,
            None => {
                self.memops.push(MemOp::new());
                self.memops.len() as u32 - 1
            }
        }
    }

    /// Issues warp `w`'s next instruction: executes it functionally and hands it to the
    /// register file.
    fn issue(
        &mut self,
        w: u16,
        now: Cycle,
        ctx: &mut IssueCtx<'_, '_>,
    ) -> Result<(), emu::ExecError> {
        let wi = w as usize;
        self.touch(wi);
        let (cta_slot, in_cta) = (self.warps[wi].cta as usize, self.warps[wi].in_cta as usize);
        let Some(slot) = self.ctas[cta_slot].as_mut() else {
            return Ok(());
        };
        ctx.launch.clock = Some(now.get());
        let info = ctx.info;
        // Loads folded into constant-bank operands (`sm.constant_operands`) execute here,
        // unissued: no slot, register, counter or buffer entry.
        let warp = &mut self.warps[wi];
        while info.inst(warp.func, warp.pc).hint.folded {
            let folded = ctx.launch.execute(&mut slot.cta, in_cta)?;
            self.stats.constant_operands.folded_loads += 1;
            match folded.next_pc {
                Some((f, i)) => {
                    warp.func = f;
                    warp.pc = i;
                }
                None => break,
            }
        }
        let step = ctx.launch.execute(&mut slot.cta, in_cta)?;
        let ii = info.inst(step.func, step.inst);
        if ii.registers != RegisterRequest::None {
            let warp = &mut self.warps[wi];
            let have = warp.max_registers;
            let (n, error) = match ii.registers {
                RegisterRequest::Increase(n) if n < have => (n, Some("inc")),
                RegisterRequest::Decrease(n) if n > have => (n, Some("dec")),
                RegisterRequest::Increase(n) | RegisterRequest::Decrease(n) => (n, None),
                RegisterRequest::None => (have, None),
            };
            if let Some(action) = error {
                return Err(ctx.launch.error_at_last_step(
                    &slot.cta,
                    in_cta,
                    emu::ErrorKind::Setmaxnreg(format!(
                        ".{action} to {n} registers per thread from the warp's {have} (the \
                         kernel's launch count or its previous setmaxnreg)"
                    )),
                ));
            }
            // check() let an increase issue only with the registers in the pool.
            slot.register_pool =
                (slot.register_pool + u32::from(have)).saturating_sub(u32::from(n));
            warp.max_registers = n;
            warp.pool_wait = false;
            // The pool's other warps may be on other schedulers.
            self.epochs.iter_mut().for_each(|e| *e += 1);
        }
        let srcs = info.srcs(step.func, ii);
        let dsts = info.dsts(step.func, ii);
        let unit = self.pipeline.timing(ii.class).unit;

        let mut memop = NO_MEMOP;
        let mut long = false;
        if let (OpClass::Mem, Some(_)) = (ii.class, step.mem) {
            long = is_long_latency(step);
            memop = self.alloc_memop();
            let warp_id = u64::from(self.id.0) * self.warps.len() as u64 + u64::from(w);
            let slot = LocalSlot {
                warp: warp_id,
                sm: self.id.0,
                cta: u32::from(self.warps[wi].cta),
                in_cta: u32::from(self.warps[wi].in_cta),
            };
            build_memop(
                &mut self.memops[memop as usize],
                (&mut self.coalescer, &mut ctx.addresses),
                slot,
                step,
                ctx.texture_path,
            );
            let op = &mut self.memops[memop as usize];
            if self.bypass_global_loads
                && op.l1d_space == Space::Global
                && op.kind == EmuAccess::Load
                && !ii.l1_cached_load
            {
                op.l1d_space = Space::GlobalBypass;
            }
            // Huerta et al. MICRO'25 §5.4: a load's data reaches the register file at
            // `l1d.return_bits_per_cycle` (a warp's 32 lanes of `bytes` each).
            let op = &mut self.memops[memop as usize];
            op.return_cycles = match step.mem {
                Some(mi)
                    if self.l1d_return_bits > 0
                        && !dsts.is_empty()
                        && op.kind == EmuAccess::Load
                        && op.parts & PART_L1D != 0 =>
                {
                    (WARP_SIZE * 8 * mi.bytes).div_ceil(self.l1d_return_bits)
                }
                // `sm.async_copy_write_cycles`: a cp.async's data goes on into shared
                // memory, and the copy completes when it is written there.
                Some(_) if ii.async_copy == AsyncCopyRole::Copy && op.parts & PART_L1D != 0 => {
                    self.async_copy_write
                }
                _ => 0,
            };
        }
        // A deferred global access is performed in the SM's turn whatever the timing
        // model makes of it (a memory operation or not): the log must hold every one.
        if let Some(access) = emu::DeferredAccess::of(step) {
            let unplaced = ctx.addresses.take_unplaced();
            let values = &step.deferred_values;
            let start = self.pending_values.len() as u32;
            self.pending_values.extend_from_slice(values);
            self.pending.push(PendingAccess {
                cta_slot,
                in_cta,
                access,
                values: (start, values.len() as u32),
                memop,
                slot: LocalSlot {
                    warp: u64::from(self.id.0) * self.warps.len() as u64 + u64::from(w),
                    sm: self.id.0,
                    cta: u32::from(self.warps[wi].cta),
                    in_cta: u32::from(self.warps[wi].in_cta),
                },
                rebuild: step.mem.filter(|_| unplaced && memop != NO_MEMOP),
                cycle: now,
            });
        }
        let scheduler = self.warps[wi].scheduler;
        // Huerta et al. MICRO'25 (issue stage): the compiler's stall count holds a
        // consumer of a fixed-latency result for the unit's latency from issue.
        let stall_counted = self.stall_counter
            && !dsts.is_empty()
            && matches!(unit, UnitKind::Sp | UnitKind::Int | UnitKind::Dp);
        let early_release =
            stall_counted.then(|| now + self.pipeline.timing(ii.class).latency.max(Cycles::new(1)));
        let controlled = self.control_bits && info.control_bits;
        let counter = if controlled {
            ii.hint.control.write_counter
        } else {
            None
        };
        let mut buffer_wait = match &mut self.memory_buffer {
            Some(b) if ii.class == OpClass::Mem => b.admit(scheduler, now),
            _ => Cycles::ZERO,
        };
        // MICRO'25 Table 2: per-thread addresses from a general register take longer to
        // compute than an immediate (uniform) one, except for shared memory.
        if self.per_thread_address > Cycles::ZERO
            && self
                .memops
                .get(memop as usize)
                .is_some_and(|op| op.parts & (PART_L1D | PART_CONST) != 0)
            && srcs.iter().any(|o| o.file == RegFileKind::General)
        {
            buffer_wait += self.per_thread_address;
        }
        // MICRO'25 Table 2: LDGSTS computes its addresses 2 cycles after a load does
        // (WAR 13 against 11); it completes at the end of its read step.
        if ii.async_copy == AsyncCopyRole::Copy && memop != NO_MEMOP {
            buffer_wait += self.async_copy_address;
        }
        let token = self.alloc_token(InFlight {
            warp: w,
            func: step.func,
            inst: step.inst,
            class: ii.class,
            memop,
            lanes: step.exec_mask.count_ones(),
            early_release,
            stall_counted,
            async_copy: ii.async_copy == AsyncCopyRole::Copy && memop != NO_MEMOP,
            bulk_copy: step.bulk_copy,
            counter,
            buffer_wait,
        });
        if let Some(at) = early_release {
            self.events.push(at, token, EventKind::StallCountDone);
        }
        let warp = &mut self.warps[wi];
        if controlled {
            let bits = ii.hint.control;
            let hold = warp.deps.issued(bits, now, ii.class == OpClass::Mem);
            if hold > now + Cycles::new(1) {
                self.events
                    .push(hold, InstToken(u32::from(w)), EventKind::HoldOver);
            }
            self.yielded = bits.yield_;
        }
        match ii.wgmma {
            WgmmaRole::Mma { steps, smem_bytes } => {
                // Its descriptor operands pass the SM's shared-memory banks from issue
                // (booked at the SM's next cycle, where the memory port is at hand).
                if smem_bytes > 0 {
                    let passes = u32::from(smem_bytes).div_ceil(self.smem_row_bytes);
                    let (at, booked) = self.tensor_smem_reads.unwrap_or((now, 0));
                    self.tensor_smem_reads = Some((at.min(now), booked + passes));
                }
                // The warp's sub-core tensor core: one product after another.
                let t = self.pipeline.timing(OpClass::Tensor);
                let (interval, latency) = (t.initiation_interval, t.latency);
                let s = usize::from(self.warps[wi].scheduler) % self.tensor_free.len();
                let start = now.max(self.tensor_free[s]);
                let steps = u64::from(steps.max(1));
                self.tensor_free[s] = start + Cycles::new(interval.get() * steps);
                let done = start + Cycles::new(interval.get() * (steps - 1)) + latency;
                let warp = &mut self.warps[wi];
                warp.wgmma_open = Some(warp.wgmma_open.map_or(done, |d| d.max(done)));
                // The warp's wait_group may end then: look again.
                self.events
                    .push(done, InstToken(u32::from(w)), EventKind::HoldOver);
            }
            WgmmaRole::Commit => {
                let warp = &mut self.warps[wi];
                let done = warp.wgmma_open.take().unwrap_or(now);
                warp.wgmma_groups.commit(done, now);
            }
            _ => {}
        }
        let warp = &mut self.warps[wi];
        if ii.async_copy == AsyncCopyRole::Copy && memop != NO_MEMOP {
            warp.async_copies += 1;
        }
        warp.scoreboard.reserve(dsts, long);
        warp.inflight += 1;
        warp.strand_ended = ii.hint.strand_end;
        self.operands.issued(srcs);
        if let Some(c) = ii.hint.constant {
            self.stats.constant_operands.operands += 1;
            self.constant_ledger
                .deliver(Source::ConstantCache, u64::from(c.width));
        }
        self.rf.accept(
            IssuedInst {
                token,
                inst: Candidate {
                    warp: WarpSlot(w),
                    scheduler,
                    unit,
                    class: ii.class,
                    srcs,
                    dsts,
                    hint: ii.hint,
                },
                step,
            },
            now,
        );
        self.rf.scheduler_event(SchedulerEvent::Issued(WarpSlot(w)));
        self.stats.warp_instructions += 1;
        self.stats.thread_instructions += u64::from(step.exec_mask.count_ones());
        self.stats.thread_instructions_by_class[ii.class.coarse() as usize] +=
            u64::from(step.exec_mask.count_ones());

        // Control: barriers, exits, the instruction buffer.
        let event = step.event;
        let next_pc = step.next_pc;
        let Some(slot) = self.ctas[cta_slot].as_mut() else {
            return Ok(());
        };
        let warp = &mut self.warps[wi];
        if let emu::StepEvent::BarrierWait { id } = event {
            warp.at_barrier = true;
            warp.at_cluster_barrier =
                id == emu::exec::CLUSTER_BARRIER as u32 && slot.cta.cluster().is_some();
        }
        if slot.cta.warp_status(in_cta) == WarpStatus::Exited {
            warp.exited = true;
        }
        match next_pc {
            Some((f, i))
                if f == warp.func && i.0 == warp.pc.0.wrapping_add(1) && warp.ib_count > 1 =>
            {
                warp.ib_count -= 1;
                warp.pc = i;
            }
            Some((f, i)) => {
                warp.ib_count = 0;
                warp.func = f;
                warp.pc = i;
            }
            None => warp.ib_count = 0,
        }
        if matches!(
            event,
            emu::StepEvent::BarrierRelease { .. } | emu::StepEvent::Exit { .. }
        ) {
            for (idx, &ws) in slot.warps.iter().enumerate() {
                let other = &mut self.warps[ws as usize];
                // A slot of a warp of this CTA that retired may already hold a warp of
                // another CTA: its barrier flag is not this CTA's to clear.
                if other.at_barrier
                    && other.cta as usize == cta_slot
                    && !matches!(slot.cta.warp_status(idx), WarpStatus::AtBarrier(_))
                {
                    other.at_barrier = false;
                }
            }
            // The CTA's other warps may be on other schedulers.
            self.epochs.iter_mut().for_each(|e| *e += 1);
        }
        self.sync_fetchable(wi);
        Ok(())
    }

    /// The LD/ST stage: the head of the queue issues its parts. Returns progress.
    fn ldst_stage(&mut self, now: Cycle, info: &KernelInfo, port: &mut SmPort<'_>) -> bool {
        let Some(&tok) = self.ldst.front() else {
            return false;
        };
        let f = self.inflight[tok.0 as usize];
        let mut progress = false;
        if let Some(op) = self.memops.get_mut(f.memop as usize) {
            let kind = match op.kind {
                EmuAccess::Load => AccessKind::Load,
                EmuAccess::Store => AccessKind::Store,
                EmuAccess::Atomic => AccessKind::Atomic,
            };
            // Stores complete when accepted, or with `l2.write_ack` when acknowledged.
            let waits = kind != AccessKind::Store || port.config().l2.write_ack;
            let mut blocked = None;
            for part in [
                PART_L1D,
                PART_CONST,
                PART_SHARED,
                PART_TEXTURE,
                PART_TEXTURE_ROW2,
            ] {
                if op.parts & part == 0 || op.issued & part != 0 {
                    continue;
                }
                let result = if part == PART_SHARED {
                    // Our model of distributed shared memory: the access passes this
                    // SM's shared-memory banks, and lanes that reach another CTA's
                    // memory add the SM-to-SM network's latency (no contention modelled).
                    let remote = if op.remote_shared != 0 {
                        port.config().shared_memory.remote_latency
                    } else {
                        Cycles::ZERO
                    };
                    port.issue_shared(
                        now,
                        op.shared_mask,
                        &op.shared_addrs,
                        op.bytes,
                        kind == AccessKind::Atomic,
                    )
                    .map(|ready| {
                        let ready = ready + remote;
                        if waits {
                            self.events.push(ready, tok, EventKind::PartDone);
                        }
                    })
                } else {
                    let (space, lines) = match part {
                        PART_L1D => (op.l1d_space, op.l1d.lines()),
                        PART_TEXTURE => (Space::Texture, op.texture[0].lines()),
                        PART_TEXTURE_ROW2 => (Space::Texture, op.texture[1].lines()),
                        _ => (Space::Const, op.konst.lines()),
                    };
                    port.issue(now, MemRequest { kind, space, lines })
                        .map(|id| {
                            let owner = if waits {
                                Owner::Inst(tok)
                            } else {
                                Owner::Nobody
                            };
                            set_owner(&mut self.owners, id, owner);
                        })
                };
                match result {
                    Ok(()) => {
                        progress = true;
                        op.issued |= part;
                        if waits {
                            op.outstanding += 1;
                        }
                    }
                    Err(stall) => {
                        blocked = Some(stall);
                        break;
                    }
                }
            }
            if let Some(stall) = blocked {
                self.ldst_retry = match stall {
                    // The memory system retries the blocked lines at the cache's fills and
                    // reports when they are accepted ([`Sm::memory_unblocked`]): sleep.
                    Stall::ReservationFail => Cycle::NEVER,
                    // Every other stall says when it may clear.
                    _ => stall.retry_at().unwrap_or(now + Cycles::new(1)),
                };
                return progress;
            }
            self.ldst.pop_front();
            if op.outstanding == 0 {
                self.writeback(tok, now, info);
            }
        } else {
            // No memory side (fence, prefetch, guarded off; a texture fetch on a config
            // without a texture cache).
            self.ldst.pop_front();
            self.writeback(tok, now, info);
        }
        true
    }

    /// Warp slot `w`'s state that its scheduler's checks read may have changed: bumps that
    /// scheduler's epoch (see `epochs`).
    #[inline]
    fn touch(&mut self, w: usize) {
        let s = usize::from(self.warps[w].scheduler);
        self.epochs[s] += 1;
    }

    /// Bumps every scheduler's epoch.
    fn touch_all(&mut self) {
        self.epochs.iter_mut().for_each(|e| *e += 1);
    }

    /// Recomputes warp slot `w`'s bit of `fetchable`.
    fn sync_fetchable(&mut self, w: usize) {
        let wants = self.warps[w].wants_fetch(self.refill_below);
        if wants {
            self.fetchable.insert(w);
        } else {
            self.fetchable.remove(w);
        }
        let subs = self.fetchable_by_sub.len();
        if subs > 0 {
            let set = &mut self.fetchable_by_sub[w % subs];
            if wants {
                set.insert(w / subs);
            } else {
                set.remove(w / subs);
            }
        }
    }

    /// Fetch: one warp with an empty buffer reads its next instructions (the modern core:
    /// one warp per sub-core, [`front_end`]). Returns progress.
    fn fetch_stage(&mut self, now: Cycle, info: &KernelInfo, port: &mut SmPort<'_>) -> bool {
        let n = self.warps.len();
        debug_assert!((0..n).all(|w| {
            self.warps[w].wants_fetch(self.refill_below) == self.fetchable.contains(w)
        }));
        if self.front_end.is_some() {
            return self.fetch_per_sub_core(now, info, port);
        }
        // Round robin from `fetch_rr`: the first warp wanting a fetch tries (most
        // evaluations of a memory-bound SM have none).
        if self.fetchable.is_empty() {
            return false;
        }
        if let Some(w) = bits::RoundRobin::new(self.fetch_rr, n).next(&self.fetchable) {
            return self.fetch_from_icache(w, now, port);
        }
        false
    }

    /// Warp `w` reads the instruction cache line of its PC through the memory system.
    /// Returns whether the request was accepted.
    fn fetch_from_icache(&mut self, w: usize, now: Cycle, port: &mut SmPort<'_>) -> bool {
        let warp = &self.warps[w];
        // Instruction fetch moves whole lines (a miss fills every sector).
        let addr = inst_address(warp.func, warp.pc);
        let line = addr & !(self.icache_line - 1);
        let lines = [LineAccess {
            line: LineAddr(line),
            sectors: SectorMask::first((self.icache_line / self.icache_sector) as u32),
        }];
        let req = MemRequest {
            kind: AccessKind::Load,
            space: Space::Inst,
            lines: &lines,
        };
        match port.issue(now, req) {
            Ok(id) => {
                set_owner(&mut self.owners, id, Owner::Fetch(w as u16));
                self.warps[w].fetch_pending = true;
                self.sync_fetchable(w);
                self.fetch_rr = w + 1;
                true
            }
            Err(stall) => {
                // A port or injection stall names its end. A reservation failure of the
                // instruction cache ends with an unblock report of this SM's own memory
                // events (its icache's fill or retry, `MemorySystem::unblocked`), which
                // wakes the SM (`memory_unblocked`): no retry before it. (Until session 11
                // this read the whole memory system's next event, a shared read a window
                // of cycles cannot make; cycle skipping is exact, so the statistics are
                // the same: `docs/parallel.md`.)
                self.fetch_retry = stall.retry_at().unwrap_or(Cycle::NEVER);
                false
            }
        }
    }
}

/// Records who waits for request `id`, in its SM's table `owners`.
fn set_owner(owners: &mut Vec<Option<Owner>>, id: RequestId, owner: Owner) {
    let i = id.slot();
    if owners.len() <= i {
        owners.resize(i + 1, None);
    }
    owners[i] = Some(owner);
}

/// Whether an executed warp instruction is a long-latency operation (a load or atomic on
/// global or local memory, a texture fetch): the scoreboard's and the two-level
/// scheduler's definition.
pub(crate) fn is_long_latency(step: &emu::WarpStep) -> bool {
    step.mem.is_some_and(|mi| {
        matches!(mi.kind, EmuAccess::Load | EmuAccess::Atomic)
            && matches!(
                mi.space,
                MemSpace::Global | MemSpace::Local | MemSpace::Texture
            )
    })
}

/// Captures the memory side of an executed warp instruction: lanes split by state
/// space, addresses made simulated ([`AddressMap`]), global/local, constant/parameter
/// and texture lanes coalesced (texture lanes only with a texture cache,
/// `texture_path`).
fn build_memop(
    op: &mut MemOp,
    (coalescer, addresses): (&mut Coalescer, &mut Addresses<'_>),
    slot: LocalSlot,
    step: &emu::WarpStep,
    texture_path: bool,
) {
    use emu::memory::{LOCAL_WINDOW, PARAM_WINDOW, WINDOW_SIZE};
    let in_window = |a: u64, base: u64| {
        if (base..base + WINDOW_SIZE).contains(&a) {
            a - base
        } else {
            a
        }
    };
    let Some(mi) = step.mem else {
        return;
    };
    op.kind = mi.kind;
    op.bytes = mi.bytes;
    op.parts = 0;
    op.issued = 0;
    op.outstanding = 0;
    let (mut l1d_mask, mut const_mask, mut shared_mask) = (0u32, 0u32, 0u32);
    let mut texture_mask = 0u32;
    let mut l1d_addrs = [0u64; WARP_SIZE as usize];
    let mut const_addrs = [0u64; WARP_SIZE as usize];
    let mut texture_addrs = [0u64; WARP_SIZE as usize];
    op.l1d_space = Space::Global;
    let mut first_l1d = true;
    let mut m = step.exec_mask;
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        let a = step.addrs[l];
        match step.lane_spaces[l] {
            MemSpace::Shared => shared_mask |= 1 << l,
            space @ (MemSpace::Global | MemSpace::Local) => {
                if first_l1d {
                    op.l1d_space = if space == MemSpace::Local {
                        Space::Local
                    } else {
                        Space::Global
                    };
                    first_l1d = false;
                }
                l1d_mask |= 1 << l;
                l1d_addrs[l] = if space == MemSpace::Local {
                    addresses.local(slot, l as u32, in_window(a, LOCAL_WINDOW))
                } else {
                    addresses.global(a)
                };
            }
            MemSpace::Const => {
                const_mask |= 1 << l;
                const_addrs[l] = addresses.global(a);
            }
            MemSpace::Param => {
                const_mask |= 1 << l;
                const_addrs[l] = PARAM_BASE + in_window(a, PARAM_WINDOW);
            }
            MemSpace::Texture => {
                texture_mask |= (texture_path as u32) << l;
                texture_addrs[l] = addresses.global(a);
            }
        }
    }
    if l1d_mask != 0 {
        // Lanes left untranslated (a first touch in the parallel phase) are coalesced
        // when the SM's turn rebuilds the operation.
        if !matches!(addresses, Addresses::Private { unplaced: true, .. }) {
            coalescer.coalesce(l1d_mask, &l1d_addrs, mi.bytes, &mut op.l1d);
        }
        op.parts |= PART_L1D;
    }
    if const_mask != 0 && mi.kind == EmuAccess::Load {
        coalescer.coalesce(const_mask, &const_addrs, mi.bytes, &mut op.konst);
        op.parts |= PART_CONST;
    }
    if texture_mask != 0 {
        coalescer.coalesce(texture_mask, &texture_addrs, mi.bytes, &mut op.texture[0]);
        op.parts |= PART_TEXTURE;
        if step.texture_row_pitch != 0 {
            for a in &mut texture_addrs {
                *a += step.texture_row_pitch;
            }
            coalescer.coalesce(texture_mask, &texture_addrs, mi.bytes, &mut op.texture[1]);
            op.parts |= PART_TEXTURE_ROW2;
        }
    }
    op.remote_shared = step.remote_shared & shared_mask;
    if shared_mask != 0 {
        op.shared_mask = shared_mask;
        op.shared_addrs = step.addrs;
        op.parts |= PART_SHARED;
    }
}

//! The memory system façade the SM pipeline calls: per-SM L1 data, constant and
//! instruction caches and shared memory, the interconnect, the L2 slices and DRAM.
//!
//! # Use
//! Each cycle the pipeline works on (cycles may be skipped), it calls
//! [`MemorySystem::completed`] to collect the requests whose data is back, and
//! [`MemorySystem::issue`] for new warp memory instructions (lines from the
//! [`crate::memory::coalescer`]). A request is one warp instruction; it completes when its last
//! line is back. When the pipeline has nothing to do, it may jump to
//! [`MemorySystem::next_event_cycle`]. Cycles passed to the façade never decrease.
//!
//! # Timing model: events, not steps
//! Nothing is stepped per cycle. Bandwidth resources are reservation calendars
//! ([`crate::memory::port`]); everything else happens in events on one queue ordered by
//! (cycle, sequence number), which makes runs deterministic:
//!
//! 1. at issue, the L1 looks up each line, one line per cycle (line `i` at `now + i`,
//!    all looked up against the cache state at `now`); a hit's data is ready `latency`
//!    later; a miss sends a read packet (`control_bytes`) to the line's L2 slice at
//!    `now + i + latency`;
//! 2. each L2 slice serves its input queue in order, one packet per cycle; a hit replies
//!    after `l2.slice.latency`; a miss goes to DRAM after that latency;
//! 3. each DRAM channel schedules its queue ([`crate::memory::dram`]); read data arriving fills
//!    the L2 `dram.latency` core cycles after the burst, and the L2 replies at once;
//! 4. a reply (`control_bytes` + data) fills the L1, which completes the waiting lines.
//!
//! So an isolated load that misses everywhere takes
//! `l1d.latency + icnt(control) + l2.latency + (t_rcd + t_cl + burst) + dram.latency +
//! icnt(control + data)`, where `icnt(b) = ceil(b / bytes_per_cycle) + latency`;
//! [`MemorySystem::unloaded_load_latency`] computes it.
//!
//! Stores are write-through posted writes at the L1 when `l1d.write_policy =
//! "write_through"` (complete for the pipeline once the L1 accepted them, or with
//! `l2.write_ack` once the L2 has acknowledged each write with a control packet); atomics
//! bypass the L1, are performed at the L2 (a read that marks the line dirty) and complete
//! when the reply arrives.
//!
//! # Stalls and reservation failures
//! [`MemorySystem::issue`] refuses a request ([`Stall`]) while the cache port is still
//! busy with the lines of the previous request, while an earlier request of the same SM
//! and cache waits for an MSHR or a way, or while the SM's interconnect injection buffer
//! is full. A line that meets a reservation failure waits inside the memory system and is
//! retried when that cache receives a fill, as GPGPU-Sim's LD/ST unit replays it.
//!
//! Simplifications: the L1 and L2 tag lookups of one request are done against the state
//! at the request's first cycle; the interconnect and L2 run on the core clock; atomics
//! do not invalidate the L1; no L1 bypass (`ld.cg`) yet.

pub mod address_map;
pub mod cache;
pub mod coalescer;
pub mod dram;
mod event;
pub mod fill_port;
pub mod hashing;
pub mod interconnect;
pub mod l1_banks;
pub mod l2;
mod local;
pub mod miss_queue;
pub mod port;
pub mod shared_memory;
pub mod texture_cache;

use crate::config::{
    CacheConfig, GpuConfig, InjectionBackpressure, InterconnectConfig, RegisterFileDesign,
    WritePolicy, WARP_SIZE,
};
use crate::memory::cache::{
    Cache, CacheOp, CacheStats, Eviction, LineAddr, Outcome, RegisterLineStats, RegisterWrite,
    ReservationFailure, SectorMask,
};
use crate::memory::coalescer::{LineAccess, MAX_LINES};
use crate::memory::dram::{DramChannel, DramCompletion, DramRequest, DramStats};
use crate::memory::event::EventQueue;
use crate::memory::fill_port::FillPortStats;
use crate::memory::interconnect::{Interconnect, InterconnectStats, SmOutPort};
use crate::memory::l1_banks::{L1Banks, LookupSchedule};
use crate::memory::l2::AddressMap;
use crate::memory::miss_queue::{MissQueue, ReservationFailCycles};
use crate::memory::shared_memory::{SharedMemory, SharedMemoryStats};
use crate::memory::texture_cache::TextureStats;
use crate::rf::cerf_banks::{ArrayBanks, LineData};
use crate::time::{ClockRatio, Cycle, Cycles, MemCycles};
use serde::Serialize;
use std::collections::VecDeque;

/// An SM index, `0..gpu.num_sms`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct SmId(pub u32);

/// A warp memory instruction in flight. An id is reused only after its completion has
/// been returned by [`MemorySystem::completed`].
///
/// Each SM allocates its own ids (its slots), so that an SM's front end can start
/// requests without touching another SM's state.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct RequestId {
    sm: u16,
    slot: u32,
}

impl RequestId {
    /// The SM that started the request.
    pub fn sm(self) -> SmId {
        SmId(u32::from(self.sm))
    }

    /// Its slot among that SM's requests (dense, small), for side tables in the SM.
    pub fn slot(self) -> usize {
        self.slot as usize
    }
}

/// What a request does.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum AccessKind {
    /// Read; completes when all lines are back.
    Load,
    /// Write of whole sectors; completes when the L1 has accepted it.
    Store,
    /// Read-modify-write at the L2; completes when all replies are back.
    Atomic,
}

/// The state space a request addresses (shared memory has [`MemorySystem::issue_shared`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Space {
    /// Global memory, through the L1D.
    Global,
    /// A global load that bypasses the L1D (`l1d.bypass_global_loads`): it takes the
    /// L1D's port for its lookup cycles, as any global access, but neither looks up
    /// nor allocates lines nor takes a miss-queue entry; each line is a read of the
    /// requested sectors from the L2, whose reply completes the request.
    GlobalBypass,
    /// Thread-local memory (spills), through the L1D.
    Local,
    /// Constant memory, through the constant cache (loads only).
    Const,
    /// Instruction fetch, through the instruction cache (loads only).
    Inst,
    /// Texture fetches, through the texture cache (loads only; see
    /// [`crate::memory::texture_cache`]).
    Texture,
}

/// One warp memory instruction: the coalesced lines of its lanes.
#[derive(Clone, Copy, Debug)]
pub struct MemRequest<'a> {
    /// Load, store or atomic.
    pub kind: AccessKind,
    /// Which cache serves it.
    pub space: Space,
    /// Lines and sectors, from the coalescer.
    pub lines: &'a [LineAccess],
}

/// Why [`MemorySystem::issue`] refused a request. Nothing changed; retry later.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Stall {
    /// The cache port is busy with earlier lines until `until`.
    PortBusy {
        /// First cycle the port is free.
        until: Cycle,
    },
    /// An earlier request of this SM is waiting for an MSHR or a way of this cache;
    /// it is retried at the cache's next fill (an event).
    ReservationFail,
    /// The SM's interconnect injection buffer is full until `until`.
    InterconnectFull {
        /// First cycle a packet fits.
        until: Cycle,
    },
}

impl Stall {
    /// The cycle a retry may succeed, when known (else: the next memory event).
    pub fn retry_at(&self) -> Option<Cycle> {
        match *self {
            Stall::PortBusy { until } | Stall::InterconnectFull { until } => Some(until),
            Stall::ReservationFail => None,
        }
    }
}

/// A finished request.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Completion {
    /// The request.
    pub id: RequestId,
    /// The cycle its data (or acceptance, for stores) is ready.
    pub at: Cycle,
}

/// Which level serves a load, for [`MemorySystem::unloaded_load_latency`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ServedBy {
    /// L1 data cache hit.
    L1,
    /// L1 miss, L2 hit.
    L2,
    /// Misses everywhere; the DRAM bank has no open row.
    Dram,
}

/// Statistics of the whole memory system, summed over SMs, slices and channels.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MemoryStats {
    /// L1 data caches.
    pub l1d: CacheStats,
    /// Constant caches.
    pub constant_cache: CacheStats,
    /// Instruction caches.
    pub icache: CacheStats,
    /// Shared memories.
    pub shared_memory: SharedMemoryStats,
    /// L2 slices.
    pub l2: CacheStats,
    /// The interconnect.
    pub interconnect: InterconnectStats,
    /// DRAM channels.
    pub dram: DramStats,
    /// Texture caches and their L2 reads (left out of the stats file when unused).
    #[serde(skip_serializing_if = "TextureStats::is_unused")]
    pub texture_cache: TextureStats,
    /// Cycles the L1 data caches refused their head access, by kind, as GPGPU-Sim counts
    /// reservation failures (left out of the stats file when there were none).
    #[serde(skip_serializing_if = "ReservationFailCycles::is_zero")]
    pub l1d_reservation_fail_cycles: ReservationFailCycles,
    /// Waits at the fill ports and the SMs' reply FIFOs (left out of the stats file when
    /// there were none; see [`crate::memory::fill_port`]).
    #[serde(skip_serializing_if = "FillPortStats::is_unused")]
    pub fill_ports: FillPortStats,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum L1 {
    Data,
    Const,
    Inst,
    Texture,
}

impl L1 {
    fn index(self) -> usize {
        self as usize
    }
}

#[derive(Clone, Copy, Debug)]
enum Reply {
    Fill(L1),
    Atomic(RequestId),
    /// A read that bypassed the L1D: the data go to the request, not to a cache.
    Direct(RequestId),
}

/// A request waiting in an L2 MSHR.
#[derive(Clone, Copy, Debug)]
struct L2Target {
    sm: u32,
    sectors: SectorMask,
    reply: Reply,
}

#[derive(Clone, Copy, Debug)]
enum PacketKind {
    Read(L1),
    Write,
    /// A store's write that the L2 acknowledges (`l2.write_ack`).
    AckedWrite(RequestId),
    Atomic(RequestId),
    /// A global load's read that bypassed the L1D (`Space::GlobalBypass`).
    Bypass(RequestId),
}

impl PacketKind {
    /// The L1 whose miss queue the packet waits in (atomics and bypassing loads go to
    /// the interconnect directly).
    fn miss_queue_of(self) -> Option<L1> {
        match self {
            PacketKind::Read(l1) => Some(l1),
            PacketKind::Write | PacketKind::AckedWrite(_) => Some(L1::Data),
            PacketKind::Atomic(_) | PacketKind::Bypass(_) => None,
        }
    }
}

/// A packet from an SM to an L2 slice.
#[derive(Clone, Copy, Debug)]
struct Packet {
    sm: u32,
    line: LineAddr,
    sectors: SectorMask,
    kind: PacketKind,
}

#[derive(Clone, Copy, Debug)]
struct DramToken {
    slice: u32,
    line: LineAddr,
    sectors: SectorMask,
}

/// An event that reads and writes only its SM's front end ([`SmMemory`]). With the SMs'
/// own queues on ([`MemorySystem::set_local_queues`]) it waits in the SM's queue
/// ([`local`]), with a marker ([`Event::Local`]) on the shared one; otherwise it goes on
/// the shared queue itself ([`LocalEvent::direct`]), as it always did.
#[derive(Clone, Copy, Debug)]
enum LocalEvent {
    PartDone(RequestId),
    L1Fill {
        l1: L1,
        line: LineAddr,
        sectors: SectorMask,
    },
    L1Retry {
        l1: L1,
    },
    /// The SM half of [`Event::IcntLeaveSm`] ([`SmMemory::leave_sm`]), with its shared
    /// half (the crossing to the slice) run at its marker.
    LeaveSm {
        slice: u32,
        packet: Packet,
        bytes: u32,
    },
}

impl LocalEvent {
    /// The event of SM `sm` as the shared queue holds it when the SMs' own queues are
    /// off.
    #[inline(always)]
    fn direct(self, sm: u32) -> Event {
        match self {
            LocalEvent::PartDone(id) => Event::PartDone(id),
            LocalEvent::L1Fill { l1, line, sectors } => Event::L1Fill {
                sm,
                l1,
                line,
                sectors,
            },
            LocalEvent::L1Retry { l1 } => Event::L1Retry { sm, l1 },
            LocalEvent::LeaveSm {
                slice,
                packet,
                bytes,
            } => Event::IcntLeaveSm {
                slice,
                packet,
                bytes,
            },
        }
    }
}

#[derive(Debug)]
enum Event {
    /// The next event of SM `sm`'s own queue ([`SmMemory::local`]): where a one-thread
    /// run handles it among the shared events (only with the SMs' own queues on).
    Local {
        sm: u32,
    },
    /// SM events on the shared queue itself (the SMs' own queues off: one thread).
    PartDone(RequestId),
    L1Fill {
        sm: u32,
        l1: L1,
        line: LineAddr,
        sectors: SectorMask,
    },
    L1Retry {
        sm: u32,
        l1: L1,
    },
    L2Arrive {
        slice: u32,
        packet: Packet,
    },
    L2Service {
        slice: u32,
    },
    DramArrive {
        channel: u32,
        req: DramRequest<DramToken>,
    },
    DramService {
        channel: u32,
    },
    L2Fill(DramToken),
    /// `fill_port_bytes` of the L2: the slice's fill port takes its next waiting fill.
    L2FillPort {
        slice: u32,
    },
    /// The SM's reply FIFO (`interconnect.ejection_buffer_entries`, an L1
    /// `fill_port_bytes`): the SM takes its head reply if it can.
    SmReply {
        sm: u32,
    },
    /// A packet ready at an SM's output port: its SM half ([`SmMemory::leave_sm`]), then
    /// its shared half (the crossing, now or at an `IcntEnterSlice`).
    IcntLeaveSm {
        slice: u32,
        packet: Packet,
        bytes: u32,
    },
    /// A packet starting to leave its SM crosses to its slice.
    IcntEnterSlice {
        slice: u32,
        packet: Packet,
        bytes: u32,
    },
    /// A reply ready at a slice's output port.
    IcntLeaveSlice {
        slice: u32,
        sm: u32,
        delivery: Delivery,
        bytes: u32,
    },
    /// The first of the crossings refused at a held source (an SM's, `to_slice`, or a
    /// slice's) tries again.
    IcntWake {
        to_slice: bool,
        source: u32,
    },
    /// A reply starting to leave its slice crosses to its SM.
    IcntEnterSm {
        slice: u32,
        sm: u32,
        delivery: Delivery,
        bytes: u32,
    },
}

/// What a reply does when it reaches its SM.
#[derive(Clone, Copy, Debug)]
enum Delivery {
    Fill {
        l1: L1,
        line: LineAddr,
        sectors: SectorMask,
    },
    Done(RequestId),
}

/// Lines of a request that met a reservation failure, waiting for a retry.
struct Blocked {
    active: bool,
    id: RequestId,
    kind: AccessKind,
    /// Thread-local data (for `l1d.local_write_policy`).
    local: bool,
    len: usize,
    lines: [LineAccess; MAX_LINES],
    /// Why the first line failed at the last attempt.
    why: ReservationFailure,
    /// The set of the first line (`Cache::set_of`), kept when `why` is
    /// [`ReservationFailure::NoEvictableWay`]: each fill that frees an entry compares
    /// its line's set with it.
    first_set: usize,
    /// Since the last attempt, the cache changed in a way that may clear `why`.
    changed: bool,
    /// The cycle of the last failed attempt: the blocked stretch counted from here.
    since: Cycle,
    /// A retry scheduled for a miss-queue entry's departure (`Cycle::NEVER`: none).
    queue_retry: Cycle,
}

struct L1Port {
    cache: Cache<RequestId>,
    free: Cycle,
    blocked: Blocked,
    miss_queue: MissQueue,
    fail_cycles: ReservationFailCycles,
    /// `l1d.banks` (the L1D only; `None`: one line looked up per cycle).
    banks: Option<L1Banks>,
    /// `fill_port_bytes`: cycles a fill holds the fill port (0: no fill port), and the
    /// first cycle it is free.
    fill_cycles: Cycles,
    fill_free: Cycle,
}

/// The part of the memory system one SM owns: its L1 caches, shared memory, requests and
/// injection backlog. Everything an SM's own calls change lives here, and what they
/// schedule on the shared event queue waits in `outbox` until
/// [`MemorySystem::flush_outbox`] moves it there (in SM order, so the queue sees the
/// order of a one-thread run whichever thread ran the SM: see `docs/parallel.md`).
pub struct SmMemory {
    l1: [L1Port; 4],
    shared: SharedMemory,
    /// CERF: the banks of the integrated array (the L1D), shared with the registers.
    array_banks: Option<ArrayBanks>,
    /// Packets scheduled for its output port but not yet reserved there (they count
    /// against the injection buffer).
    pending_injection: PendingInjection,
    /// Its output port on the interconnect (the injection buffer's backlog).
    out_port: SmOutPort,
    /// Its requests, by slot ([`RequestId::slot`]).
    requests: Vec<RequestState>,
    free_slots: Vec<u32>,
    /// Events scheduled by this SM's calls, in order, not yet on the shared queue.
    outbox: Vec<(Cycle, Event)>,
    /// Its own events, each with a marker on the shared queue (or in `outbox`), while
    /// `local_queues` is on.
    local: local::LocalQueue<LocalEvent>,
    /// Whether its own events go in `local` ([`MemorySystem::set_local_queues`]).
    local_queues: bool,
    /// Windowed stepping ([`FrontEnds::begin_window`]): its own events for this cycle
    /// or later wait in `held`, in order, and enter `local` when the merge puts their
    /// markers on the shared queue (`Cycle::NEVER`: no window on its thread).
    window_end: Cycle,
    held: VecDeque<(Cycle, LocalEvent)>,
    /// What the window ran on its thread, in order ([`WindowItem`]), and how far the
    /// merge has replayed them and `outbox`.
    items: Vec<WindowItem>,
    items_next: usize,
    outbox_next: usize,
    /// Read requests and their sectors its texture cache sent to the L2.
    texture_l2_reads: (u64, u64),
    /// The reply FIFO (with `interconnect.ejection_buffer_entries` or an L1's
    /// `fill_port_bytes`): replies crossed to the SM and not yet taken, in crossing
    /// order, each with its arrival cycle; the cycle of the scheduled `SmReply`
    /// (`Cycle::NEVER`: none), the first cycle the SM may take another reply, and the
    /// slices whose replies its full ejection buffer refused (woken when it takes one).
    replies: VecDeque<(Cycle, Delivery)>,
    reply_at: Cycle,
    next_take: Cycle,
    refused_slices: Vec<u32>,
    fill_stats: FillPortStats,
    /// Its requests completed since the GPU last took them, in completion order: made by
    /// its own events (a hit's or an atomic's `PartDone`, an `L1Fill`), so they stay
    /// with the SM ([`MemorySystem::take_reports`]).
    done: Vec<Completion>,
    /// The cycles at which its request blocked by a reservation failure was accepted
    /// since the GPU last took them (made by its own `L1Fill` and `L1Retry`).
    unblocked: Vec<Cycle>,
    /// Whether it is on `MemorySystem::reported` (it has a completion or an unblock).
    listed: bool,
    /// A fill's waiting requests while the fill runs.
    scratch_ids: Vec<RequestId>,
    /// A blocked request's remaining lines while a retry processes them.
    scratch_lines: Vec<LineAccess>,
}

/// One thing an SM's window ran on its thread, whose outbox entries (up to `end`) the
/// merge puts on the shared queue where the one-thread run scheduled them: an own event
/// of cycle `at`, at its marker (with the shared half of a `LeaveSm`, the crossing of the
/// packet that starts leaving at `start`), or its SM's cycle `at`, in SM order after the
/// cycle's events.
#[derive(Clone, Copy, Debug)]
struct WindowItem {
    at: Cycle,
    kind: ItemKind,
    end: u32,
}

#[derive(Clone, Copy, Debug)]
enum ItemKind {
    Local,
    Leave {
        slice: u32,
        packet: Packet,
        bytes: u32,
        start: Cycle,
    },
    Phase,
}

impl SmMemory {
    /// Puts its own event `event` of cycle `at` in its queue, or during a window, for a
    /// cycle at or after the window's end, in `held` (see `window_end`).
    #[inline(never)]
    fn push_local(&mut self, at: Cycle, event: LocalEvent) {
        if at >= self.window_end {
            self.held.push_back((at, event));
        } else {
            self.local.schedule(at, event);
        }
    }

    /// Schedules SM `s`'s own event `event` at `at`: in its queue, and its marker in its
    /// outbox (flushed to the shared queue in order with everything else it scheduled).
    /// With the SMs' own queues off, the event itself goes in the outbox, as before
    /// those queues existed (no one-thread cost).
    #[inline(always)]
    fn schedule_local(&mut self, s: usize, at: Cycle, event: LocalEvent) {
        let event = if self.local_queues {
            self.push_local(at, event);
            Event::Local { sm: s as u32 }
        } else {
            event.direct(s as u32)
        };
        self.outbox.push((at, event));
    }

    /// The SM half of sending a packet of `bytes` ready at `t` (an `IcntLeaveSm`): it
    /// leaves the pending injection, joins the SM's output port, and a read's entry
    /// passes from its L1's miss queue to the injection buffer. Reads and writes only
    /// this SM's state. Returns the cycle the packet starts leaving, at which it crosses
    /// to its slice (the shared half, [`MemorySystem::enter_slice`]).
    #[inline(always)]
    fn leave_sm(
        &mut self,
        ic: &InterconnectConfig,
        t: Cycle,
        packet: &Packet,
        bytes: u32,
    ) -> Cycle {
        self.pending_injection.leave(t, bytes);
        let start = self.out_port.leave(t, bytes);
        if let Some(l1) = packet.kind.miss_queue_of() {
            let handoff = if l1 == L1::Data
                && ic.injection_backpressure == InjectionBackpressure::MissQueue
            {
                // The request passes to the injection buffer once the port's backlog,
                // itself included, and the packets refused by their slices fit in the
                // buffer. (Refused bytes change at shared events: only with bounded
                // slice input queues, which step cycle by cycle.)
                let fits =
                    u64::from(ic.input_buffer_bytes).saturating_sub(self.pending_injection.refused);
                self.out_port.drained_to(fits).max(t)
            } else {
                t
            };
            self.l1[l1.index()]
                .miss_queue
                .enter(handoff, packet.sectors);
        }
        start
    }

    /// CERF: an access or a fill at `t` is about to change the integrated array (the
    /// L1D), whose register side may sleep and take the state samples of the skipped
    /// cycles when it wakes ([`ArrayBanks::watch_states`]).
    fn log_array_states(&mut self, t: Cycle, l1: L1) {
        if let (Some(banks), L1::Data) = (self.array_banks.as_mut(), l1) {
            if banks.wants_states_at(t) {
                banks.log_states(t, self.l1[L1::Data.index()].cache.state_counts());
            }
        }
    }
}

/// What the SMs' front ends read of the shared memory system (never write) while they
/// work in parallel: [`MemorySystem::front_ends`].
pub struct FrontEnds<'a> {
    cfg: &'a GpuConfig,
    map: &'a AddressMap,
    now: Cycle,
}

impl FrontEnds<'_> {
    /// SM `sm`'s port, on its own front end `m` (the `sm`-th of
    /// [`MemorySystem::front_ends`]).
    pub fn port<'b>(&'b self, sm: SmId, m: &'b mut SmMemory) -> SmPort<'b> {
        self.port_at(sm, m, self.now)
    }

    /// [`Self::port`] at cycle `now` of a window ([`Self::begin_window`]).
    pub fn port_at<'b>(&'b self, sm: SmId, m: &'b mut SmMemory, now: Cycle) -> SmPort<'b> {
        SmPort(Port::Split(FrontEnd {
            cfg: self.cfg,
            map: self.map,
            now,
            s: sm.0 as usize,
            m,
        }))
    }

    /// Starts a window of cycles up to `end` (excluded) on SM front end `m`, after the
    /// memory system ran every event up to the window's first cycle: from here the
    /// SM's own events run on its thread ([`Self::run_local`]), what it schedules for
    /// `end` or later is held until the merge ([`MemorySystem::replay_cycle`]) puts it
    /// on the queues in the one-thread order, and everything it schedules stays in its
    /// outbox, logged per item. Needs the SMs' own queues on.
    pub fn begin_window(&self, m: &mut SmMemory, end: Cycle) {
        debug_assert!(m.local_queues && m.outbox.is_empty() && m.held.is_empty());
        debug_assert!(m.done.is_empty() && m.unblocked.is_empty() && !m.listed);
        m.window_end = end;
        m.items.clear();
        m.items_next = 0;
        m.outbox_next = 0;
    }

    /// Runs SM `sm`'s own events of cycle `t` (a cycle of its window after the first),
    /// in its queue's order, which is the shared queue's order restricted to the SM
    /// (`docs/parallel.md`), each logged for the merge. Their completions and unblocks
    /// stay in its lists ([`Self::take_reports`]). Returns whether any ran.
    pub fn run_local(&self, sm: SmId, m: &mut SmMemory, t: Cycle) -> bool {
        debug_assert!(m.local.next_cycle().is_none_or(|c| c >= t));
        let mut ran = false;
        while m.local.next_cycle() == Some(t) {
            let Some((_, event)) = m.local.pop() else {
                break;
            };
            ran = true;
            let kind = match event {
                LocalEvent::PartDone(id) => {
                    m.part_done(id, t);
                    ItemKind::Local
                }
                LocalEvent::L1Fill { l1, line, sectors } => {
                    self.port_at(sm, m, t)
                        .front_end()
                        .l1_fill(t, l1, line, sectors);
                    ItemKind::Local
                }
                LocalEvent::L1Retry { l1 } => {
                    self.port_at(sm, m, t).front_end().l1_retry(t, l1);
                    ItemKind::Local
                }
                LocalEvent::LeaveSm {
                    slice,
                    packet,
                    bytes,
                } => {
                    let start = m.leave_sm(&self.cfg.interconnect, t, &packet, bytes);
                    ItemKind::Leave {
                        slice,
                        packet,
                        bytes,
                        start,
                    }
                }
            };
            m.items.push(WindowItem {
                at: t,
                kind,
                end: m.outbox.len() as u32,
            });
        }
        ran
    }

    /// Logs what SM front end `m` scheduled during its SM's cycle `t` of a window (the
    /// outbox entries since the last item), for the merge's SM-order slot of `t`.
    pub fn end_phase(&self, m: &mut SmMemory, t: Cycle) {
        m.items.push(WindowItem {
            at: t,
            kind: ItemKind::Phase,
            end: m.outbox.len() as u32,
        });
    }

    /// The completions and unblocks SM front end `m`'s own events made on its thread
    /// ([`MemorySystem::take_reports`] for a window), their slots freed.
    pub fn take_reports<'b>(&self, m: &'b mut SmMemory) -> SmReports<'b> {
        m.free_done_slots();
        SmReports {
            done: m.done.drain(..),
            unblocked: m.unblocked.drain(..),
        }
    }
}

/// An SM's port on the memory system: the calls its pipeline makes during its cycle, on
/// its own front end (L1 caches, shared memory, requests). From [`MemorySystem::port`]
/// what it schedules goes on the event queue at once; from [`FrontEnds::port`] it waits
/// in the SM's outbox for [`MemorySystem::flush_sm`]. Either way the queue receives the
/// same events in the same order when the SMs' calls are flushed in SM order.
pub struct SmPort<'a>(Port<'a>);

enum Port<'a> {
    Whole(&'a mut MemorySystem, SmId),
    Split(FrontEnd<'a>),
}

impl<'a> SmPort<'a> {
    /// The split front end (a window's SM thread).
    fn front_end(self) -> FrontEnd<'a> {
        match self.0 {
            Port::Split(fe) => fe,
            Port::Whole(..) => unreachable!("a window's port is split"),
        }
    }
}

impl SmPort<'_> {
    /// A shorter-lived port on the same front end.
    pub fn reborrow(&mut self) -> SmPort<'_> {
        SmPort(match &mut self.0 {
            Port::Whole(m, sm) => Port::Whole(m, *sm),
            Port::Split(fe) => Port::Split(FrontEnd {
                cfg: fe.cfg,
                map: fe.map,
                now: fe.now,
                s: fe.s,
                m: fe.m,
            }),
        })
    }

    fn sm(&self) -> &SmMemory {
        match &self.0 {
            Port::Whole(m, sm) => &m.sms[sm.0 as usize],
            Port::Split(fe) => fe.m,
        }
    }

    fn sm_mut(&mut self) -> &mut SmMemory {
        match &mut self.0 {
            Port::Whole(m, sm) => &mut m.sms[sm.0 as usize],
            Port::Split(fe) => fe.m,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &GpuConfig {
        match &self.0 {
            Port::Whole(m, _) => &m.cfg,
            Port::Split(fe) => fe.cfg,
        }
    }

    /// [`MemorySystem::issue`] for this SM.
    pub fn issue(&mut self, now: Cycle, req: MemRequest<'_>) -> Result<RequestId, Stall> {
        match &mut self.0 {
            Port::Whole(m, sm) => m.issue(*sm, now, req),
            Port::Split(fe) => {
                debug_assert_eq!(now, fe.now, "a split front end works at its cycle");
                fe.issue(req)
            }
        }
    }

    /// A shared-memory access at `now`: returns the cycle its data is ready, after as
    /// many passes as the worst bank conflict needs.
    pub fn issue_shared(
        &mut self,
        now: Cycle,
        active_mask: u32,
        addrs: &[u64; WARP_SIZE as usize],
        access_bytes: u32,
        atomic: bool,
    ) -> Result<Cycle, Stall> {
        self.sm_mut()
            .shared
            .access(now, active_mask, addrs, access_bytes, atomic)
            .map_err(|until| Stall::PortBusy { until })
    }

    /// A tensor core reads `wgmma` operands from the SM's shared memory from `at`: the
    /// banks are busy for `passes` ([`SharedMemory::reserve_tensor_read`]).
    pub fn reserve_tensor_read(&mut self, at: Cycle, passes: u32) -> Cycle {
        self.sm_mut().shared.reserve_tensor_read(at, passes)
    }

    /// CERF: writes a register line into the SM's integrated array (its L1D) at `now`;
    /// dirty data or a register it displaces is written to the L2 (a spill). `None` when
    /// the set is locked by fills (retry later). See [`Cache::write_register`].
    pub fn write_register(&mut self, now: Cycle, line: LineAddr) -> Option<RegisterWrite> {
        match &mut self.0 {
            Port::Whole(m, sm) => m.write_register(*sm, now, line),
            Port::Split(fe) => {
                debug_assert_eq!(now, fe.now, "a split front end works at its cycle");
                fe.write_register(line)
            }
        }
    }

    /// The L1 data cache counters of the SM.
    pub fn l1d_stats(&self) -> &CacheStats {
        self.sm().l1[L1::Data.index()].cache.stats()
    }

    /// CERF: the banks of the SM's integrated array (`None` under other designs).
    pub fn array_banks(&self) -> Option<&ArrayBanks> {
        self.sm().array_banks.as_ref()
    }

    /// CERF: [`Self::array_banks`], for the register side's bookings.
    pub fn array_banks_mut(&mut self) -> Option<&mut ArrayBanks> {
        self.sm_mut().array_banks.as_mut()
    }

    /// CERF: reads a register line of the SM's integrated array; false when it is not
    /// there (spilled). See [`Cache::read_register`].
    pub fn read_register(&mut self, line: LineAddr) -> bool {
        self.sm_mut().l1[L1::Data.index()].cache.read_register(line)
    }

    /// CERF: a dead register's line goes back to `inactive`.
    pub fn release_register(&mut self, line: LineAddr) {
        self.sm_mut().l1[L1::Data.index()]
            .cache
            .release_register(line);
    }

    /// CERF: register lines of the SM evicted (spilled) since the last call.
    pub fn take_evicted_registers(&mut self, out: &mut Vec<LineAddr>) {
        self.sm_mut().l1[L1::Data.index()]
            .cache
            .take_evicted_registers(out);
    }

    /// CERF: whether a fetch of `line` is in flight in the SM's integrated array.
    pub fn l1d_fetching(&self, line: LineAddr) -> bool {
        self.sm().l1[L1::Data.index()].cache.fetching(line)
    }

    /// CERF: the SM's integrated-array ways per state `[inactive, reg, cache, dirty]`.
    pub fn l1d_state_counts(&self) -> [u64; 4] {
        self.sm().l1[L1::Data.index()].cache.state_counts()
    }

    /// CERF: register-line counters of the SM's integrated array.
    pub fn l1d_register_stats(&self) -> RegisterLineStats {
        *self.sm().l1[L1::Data.index()].cache.register_stats()
    }
}

/// An SM's front end at work: its own state, and the shared state it reads (never
/// writes) while it starts requests.
struct FrontEnd<'a> {
    cfg: &'a GpuConfig,
    map: &'a AddressMap,
    now: Cycle,
    s: usize,
    m: &'a mut SmMemory,
}

struct Slice {
    cache: Cache<L2Target>,
    input: VecDeque<Packet>,
    port_free: Cycle,
    service_at: Cycle,
    blocked: bool,
    /// `l2.input_queue_entries`: entries of the packets crossed to the slice and not yet
    /// looked up, and the SMs whose crossing it refused (woken at its next lookup).
    inbound: u32,
    refused: Vec<u32>,
    /// `l2.output_queue_entries`: replies ready to leave and not yet crossed, and whether
    /// the slice stopped its lookups for want of room among them.
    replies_waiting: u32,
    output_full: bool,
    /// `l2.dram_queue_entries`: requests sent towards DRAM and not yet admitted by the
    /// channel's scheduler, and whether the slice stopped its lookups for want of room.
    to_dram: u32,
    dram_full: bool,
    /// `l2.atomic_unit`: the cycle the slice's atomic unit takes its next request.
    atomic_free: Cycle,
    /// `l2.slice.fill_port_bytes`: the first cycle the fill port is free, the fills from
    /// DRAM waiting for it (the DRAM-to-L2 queue), with their arrival cycles, and whether
    /// an `L2FillPort` is scheduled.
    fill_free: Cycle,
    fills: VecDeque<(Cycle, DramToken)>,
    fill_scheduled: bool,
}

struct Channel {
    dram: DramChannel<DramToken>,
    wake: Cycle,
}

#[derive(Clone, Copy, Default)]
struct RequestState {
    live: bool,
    /// All lines accepted by the cache (none waiting on a reservation failure).
    accepted: bool,
    /// Outstanding parts: line fills, atomic replies, and one for all hits together.
    parts: u32,
}

/// One SM's packets scheduled to join its interconnect output port (each at the cycle it
/// is ready): their bytes, and when each joins.
#[derive(Clone, Debug, Default)]
struct PendingInjection {
    bytes: u64,
    /// Bytes of its packets refused by a full slice input queue and waiting to cross
    /// (`l2.input_queue_entries`): they still fill the injection buffer.
    refused: u64,
    ready: std::collections::BinaryHeap<std::cmp::Reverse<Cycle>>,
}

impl PendingInjection {
    fn add(&mut self, ready: Cycle, bytes: u32) {
        self.bytes += u64::from(bytes);
        self.ready.push(std::cmp::Reverse(ready));
    }

    /// The packet ready at `t` joins the port. Events run in time order, so it is the
    /// earliest pending one.
    fn leave(&mut self, t: Cycle, bytes: u32) {
        self.bytes -= u64::from(bytes);
        let first = self.ready.pop();
        debug_assert_eq!(first, Some(std::cmp::Reverse(t)));
    }

    fn first_ready(&self) -> Option<Cycle> {
        self.ready.peek().map(|r| r.0)
    }
}

/// The memory hierarchy of the whole GPU.
pub struct MemorySystem {
    cfg: GpuConfig,
    ratio: ClockRatio,
    map: AddressMap,
    sms: Vec<SmMemory>,
    icnt: Interconnect,
    /// `interconnect.head_of_line_blocking`: crossings refused because their source port
    /// is held, in order, per SM (requests) and per slice (replies), each source with one
    /// `IcntWake` scheduled while it has any.
    parked_sm: Vec<VecDeque<Event>>,
    parked_slice: Vec<VecDeque<Event>>,
    slices: Vec<Slice>,
    channels: Vec<Channel>,
    events: EventQueue<Event>,
    now: Cycle,
    /// The SMs with a completion or an unblock not yet taken (`SmMemory::done`,
    /// `SmMemory::unblocked`), each once, in the order they first reported.
    reported: Vec<u32>,
    /// [`MemorySystem::completed`]'s and [`MemorySystem::unblocked`]'s gathered lists.
    gathered_done: Vec<Completion>,
    gathered_unblocked: Vec<(SmId, Cycle)>,
    scratch_targets: Vec<L2Target>,
    scratch_dram: Vec<DramCompletion<DramToken>>,
    /// Slices woken by [`MemorySystem::admit_to_dram`].
    scratch_slices: Vec<u32>,
    /// Replies pass the SMs' reply FIFOs (`interconnect.ejection_buffer_entries` or an
    /// L1's `fill_port_bytes`); `l2.slice.fill_port_bytes` as cycles (0: none).
    reply_fifo: bool,
    l2_fill_cycles: Cycles,
    /// L2 fill-port counters (the SMs keep theirs).
    l2_fill_stats: FillPortStats,
    /// The end of the window being merged ([`MemorySystem::begin_merge`]; `Cycle::NEVER`
    /// otherwise): an SM's own event scheduled for it or later was held on its thread.
    window_end: Cycle,
}

impl MemorySystem {
    /// An idle, empty memory system for a validated config.
    pub fn new(cfg: &GpuConfig) -> Self {
        let port = |c: &CacheConfig| L1Port {
            cache: Cache::new(c),
            free: Cycle::ZERO,
            blocked: Blocked {
                active: false,
                id: RequestId { sm: 0, slot: 0 },
                kind: AccessKind::Load,
                local: false,
                len: 0,
                lines: [LineAccess {
                    line: LineAddr(0),
                    sectors: SectorMask::EMPTY,
                }; MAX_LINES],
                why: ReservationFailure::MshrFull,
                first_set: 0,
                changed: false,
                since: Cycle::ZERO,
                queue_retry: Cycle::NEVER,
            },
            miss_queue: MissQueue::new(
                c.miss_queue_entries,
                c.fetch == crate::config::FetchGranularity::Sector,
            ),
            fail_cycles: ReservationFailCycles::default(),
            banks: L1Banks::new(c),
            fill_cycles: Cycles::new(fill_port::fill_cycles(c).unwrap_or(0)),
            fill_free: Cycle::ZERO,
        };
        let icnt = Interconnect::new(
            &cfg.interconnect,
            cfg.gpu.num_sms as usize,
            cfg.l2.slices as usize,
        );
        // Under CERF the L1D is the integrated register-file array (`GpuConfig::l1d_array`).
        let l1d = cfg.l1d_array();
        let sms = (0..cfg.gpu.num_sms)
            .map(|_| {
                let mut m = SmMemory {
                    // Without `[texture_cache]` no request names `Space::Texture`: the
                    // fourth port stands idle (a copy of the constant cache's geometry).
                    l1: [
                        port(&l1d),
                        port(&cfg.constant_cache),
                        port(&cfg.icache),
                        port(cfg.texture_cache.as_ref().unwrap_or(&cfg.constant_cache)),
                    ],
                    shared: SharedMemory::new(&cfg.shared_memory),
                    array_banks: None,
                    pending_injection: PendingInjection::default(),
                    out_port: icnt.sm_out_port(),
                    requests: Vec::with_capacity(64),
                    free_slots: Vec::with_capacity(64),
                    outbox: Vec::with_capacity(64),
                    local: local::LocalQueue::new(),
                    local_queues: false,
                    window_end: Cycle::NEVER,
                    held: VecDeque::new(),
                    items: Vec::new(),
                    items_next: 0,
                    outbox_next: 0,
                    texture_l2_reads: (0, 0),
                    replies: VecDeque::new(),
                    reply_at: Cycle::NEVER,
                    next_take: Cycle::ZERO,
                    refused_slices: Vec::new(),
                    fill_stats: FillPortStats::default(),
                    done: Vec::with_capacity(64),
                    unblocked: Vec::with_capacity(4),
                    listed: false,
                    scratch_ids: Vec::with_capacity(64),
                    scratch_lines: Vec::with_capacity(MAX_LINES),
                };
                if cfg.register_file.design == RegisterFileDesign::Cerf {
                    m.l1[L1::Data.index()]
                        .cache
                        .share_with_registers(cfg.register_file.cerf.policy);
                    m.array_banks = Some(ArrayBanks::new(cfg));
                }
                m
            })
            .collect();
        let map = AddressMap::new(cfg);
        let slices = (0..cfg.l2.slices)
            .map(|_| Slice {
                cache: {
                    let mut c = Cache::new(&cfg.l2.slice);
                    if let Some((bit, channels)) = map.partition() {
                        c.set_partition(bit, channels);
                    }
                    c
                },
                input: VecDeque::with_capacity(64),
                port_free: Cycle::ZERO,
                service_at: Cycle::NEVER,
                blocked: false,
                inbound: 0,
                refused: Vec::new(),
                replies_waiting: 0,
                output_full: false,
                to_dram: 0,
                dram_full: false,
                atomic_free: Cycle::ZERO,
                fill_free: Cycle::ZERO,
                fills: VecDeque::new(),
                fill_scheduled: false,
            })
            .collect();
        let ratio = ClockRatio::new(cfg.gpu.core_clock_mhz, cfg.gpu.memory_clock_mhz);
        let channels = (0..cfg.dram.channels)
            .map(|_| {
                let mut dram = DramChannel::new(&cfg.dram);
                if cfg.l2.dram_queue_entries > 0 {
                    dram.track_admission();
                }
                if cfg.dram.return_queue_entries > 0 {
                    // The L2 takes a read's data `dram.latency` after its burst.
                    let hold = ratio.to_mem(Cycle::ZERO + cfg.dram.latency);
                    dram.set_return_hold(MemCycles::new(hold.get()));
                }
                Channel {
                    dram,
                    wake: Cycle::NEVER,
                }
            })
            .collect();
        Self {
            cfg: cfg.clone(),
            ratio,
            map,
            sms,
            icnt,
            parked_sm: (0..cfg.gpu.num_sms).map(|_| VecDeque::new()).collect(),
            parked_slice: (0..cfg.l2.slices).map(|_| VecDeque::new()).collect(),
            slices,
            channels,
            events: EventQueue::new(),
            now: Cycle::ZERO,
            reported: Vec::with_capacity(cfg.gpu.num_sms as usize),
            gathered_done: Vec::new(),
            gathered_unblocked: Vec::new(),
            scratch_targets: Vec::with_capacity(64),
            scratch_dram: Vec::with_capacity(64),
            scratch_slices: Vec::with_capacity(8),
            reply_fifo: cfg.interconnect.ejection_buffer_entries > 0
                || [&l1d, &cfg.constant_cache, &cfg.icache]
                    .into_iter()
                    .chain(cfg.texture_cache.as_ref())
                    .any(|c| c.fill_port_bytes > 0),
            l2_fill_cycles: Cycles::new(fill_port::fill_cycles(&cfg.l2.slice).unwrap_or(0)),
            l2_fill_stats: FillPortStats::default(),
            window_end: Cycle::NEVER,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &GpuConfig {
        &self.cfg
    }

    /// The host wrote `[addr, addr + len)` (simulated addresses): with
    /// `l2.fill_on_host_copy`, installs every sector the range touches in the L2 slice its
    /// line maps to, clean ([`Cache::install_clean`]); otherwise nothing. Takes no
    /// simulated time and counts no access (it happens between kernels, outside every
    /// kernel's statistics). A dirty line displaced by it is dropped without DRAM traffic:
    /// the copy is not timed. Returns the number of lines installed.
    pub fn host_write(&mut self, addr: u64, len: u64) -> u64 {
        if !self.cfg.l2.fill_on_host_copy || len == 0 {
            return 0;
        }
        let line_bytes = u64::from(self.cfg.l2.slice.line_bytes);
        let sector_bytes = u64::from(self.cfg.l2.slice.sector_bytes);
        let end = addr.saturating_add(len);
        let mut installed = 0;
        let mut line = addr - addr % line_bytes;
        while line < end {
            let lo = addr.max(line) - line;
            let hi = end.min(line + line_bytes) - line;
            let (first, last) = ((lo / sector_bytes) as u32, ((hi - 1) / sector_bytes) as u32);
            let sectors = SectorMask::first(last + 1).minus(SectorMask::first(first));
            let l = LineAddr(line);
            let slice = self.map.slice(l);
            if self.slices[slice].cache.install_clean(l, sectors).0 {
                installed += 1;
            }
            line += line_bytes;
        }
        installed
    }

    /// Functional warming for sampled simulation ([`crate::sampling`]): the sector at
    /// simulated address `addr`, touched by a CTA executed functionally that would have
    /// run on SM `sm`, is installed in the L2 (dirty for a store) and, for a load, in
    /// that SM's L1D (not under CERF, whose L1D holds registers too). No time and no
    /// access counted; displaced dirty lines are dropped without traffic, as for
    /// [`MemorySystem::host_write`].
    pub fn warm(&mut self, sm: usize, addr: u64, store: bool) {
        let sector_bytes = u64::from(self.cfg.l2.slice.sector_bytes);
        let line_bytes = u64::from(self.cfg.l2.slice.line_bytes);
        let line = LineAddr(addr - addr % line_bytes);
        let sectors = SectorMask::sector(((addr % line_bytes) / sector_bytes) as u32);
        let slice = self.map.slice(line);
        let cache = &mut self.slices[slice].cache;
        cache.install_clean(line, sectors);
        if store {
            cache.mark_dirty(line, sectors);
        }
        if let (false, Some(m)) = (store, self.sms.get_mut(sm)) {
            if m.array_banks.is_none() {
                let l1 = &mut m.l1[L1::Data.index()].cache;
                let l1_line = LineAddr(addr - addr % u64::from(l1.config().line_bytes));
                let l1_sector = u64::from(l1.config().sector_bytes);
                let s = ((addr - l1_line.0) / l1_sector) as u32;
                l1.install_clean(l1_line, SectorMask::sector(s));
            }
        }
    }

    /// Prepares the L1 caches for a kernel whose resident CTAs use `shared_bytes_per_sm`
    /// bytes of shared memory per SM: invalidates the caches configured with
    /// `invalidate_between_kernels`, and gives the L1D the ways its `shared_carveouts`
    /// leave (the smallest carve-out holding `shared_bytes_per_sm`; the largest if none
    /// does). Dirty lines dropped are written to the L2.
    pub fn begin_kernel(&mut self, shared_bytes_per_sm: u64) {
        let l1d = &self.cfg.l1d_array();
        let data_ways = (!l1d.shared_carveouts.is_empty()).then(|| {
            let way_bytes = l1d.sets() * u64::from(l1d.line_bytes);
            let carveout = l1d
                .shared_carveouts
                .iter()
                .copied()
                .find(|&c| c >= shared_bytes_per_sm)
                .or_else(|| l1d.shared_carveouts.last().copied())
                .unwrap_or(0);
            (l1d.size_bytes - carveout) / way_bytes
        });
        let mut evicted = Vec::new();
        for s in 0..self.sms.len() {
            evicted.clear();
            for (i, port) in self.sms[s].l1.iter_mut().enumerate() {
                if port.cache.config().invalidate_between_kernels {
                    port.cache.invalidate(&mut evicted);
                }
                if let (Some(ways), true) = (data_ways, i == L1::Data.index()) {
                    port.cache.set_data_ways(ways as usize, &mut evicted);
                }
            }
            let sector_bytes = self.cfg.l2.slice.sector_bytes;
            let now = self.now;
            let mut fe = self.front_end(s);
            for e in &evicted {
                let bytes = fe.cfg.interconnect.control_bytes + e.dirty.count() * sector_bytes;
                fe.send_to_l2(now, e.line, e.dirty, PacketKind::Write, bytes);
            }
            self.flush_outbox(s);
        }
    }

    /// SM `s`'s front end, working at the memory system's current cycle.
    fn front_end(&mut self, s: usize) -> FrontEnd<'_> {
        FrontEnd {
            cfg: &self.cfg,
            map: &self.map,
            now: self.now,
            s,
            m: &mut self.sms[s],
        }
    }

    /// Moves the events SM `s`'s front end scheduled onto the shared queue, in the
    /// order it scheduled them.
    fn flush_outbox(&mut self, s: usize) {
        for (at, event) in self.sms[s].outbox.drain(..) {
            self.events.schedule(at, event);
        }
    }

    /// Starts a warp memory instruction of SM `sm` at cycle `now`.
    pub fn issue(&mut self, sm: SmId, now: Cycle, req: MemRequest<'_>) -> Result<RequestId, Stall> {
        self.advance_to(now);
        let s = sm.0 as usize;
        let issued = self.front_end(s).issue(req);
        self.flush_outbox(s);
        issued
    }
}

impl FrontEnd<'_> {
    /// [`MemorySystem::issue`] on this SM, at `self.now`.
    fn issue(&mut self, req: MemRequest<'_>) -> Result<RequestId, Stall> {
        let l1 = match (req.kind, req.space) {
            (AccessKind::Load, Space::Const) => L1::Const,
            (AccessKind::Load, Space::Inst) => L1::Inst,
            (AccessKind::Load, Space::Texture) => L1::Texture,
            _ => L1::Data,
        };
        let port = &self.m.l1[l1.index()];
        if port.blocked.active {
            return Err(Stall::ReservationFail);
        }
        if port.free > self.now {
            return Err(Stall::PortBusy { until: port.free });
        }
        let ic = &self.cfg.interconnect;
        let room =
            u64::from(ic.input_buffer_bytes - ic.control_bytes - self.cfg.l2.slice.line_bytes);
        let refused = self.m.pending_injection.refused;
        // Under `injection_backpressure = "miss_queue"` the L1D's miss queue waits for
        // the buffer instead (see the `IcntLeaveSm` event).
        let checked = l1 != L1::Data || ic.injection_backpressure == InjectionBackpressure::Issue;
        if checked
            && self.m.out_port.backlog(self.now) + self.m.pending_injection.bytes + refused > room
        {
            // Refused packets leave when their slice takes them, an event: until then
            // try each cycle.
            let until = self.injection_room_at(room.saturating_sub(refused));
            return Err(Stall::InterconnectFull {
                until: if refused > 0 {
                    until.max(self.now + Cycles::new(1))
                } else {
                    until
                },
            });
        }
        let slot = match self.m.free_slots.pop() {
            Some(k) => k,
            None => {
                self.m.requests.push(RequestState::default());
                self.m.requests.len() as u32 - 1
            }
        };
        self.m.requests[slot as usize] = RequestState {
            live: true,
            accepted: false,
            parts: 0,
        };
        // `gpu.num_sms` is at most 2048 (`crate::limits`).
        let id = RequestId {
            sm: self.s as u16,
            slot,
        };
        let local = req.space == Space::Local;
        if req.space == Space::GlobalBypass && req.kind == AccessKind::Load {
            self.bypass_lines(id, req.lines);
            return Ok(id);
        }
        self.process_lines(l1, id, (req.kind, local), req.lines, self.now);
        Ok(id)
    }

    /// The first cycle at which the SM's injection buffer may have `room` bytes free, a
    /// lower bound, so that a refused request sleeps until then instead of retrying every
    /// cycle (an L1D latency of 10^5 cycles must not cost 10^5 retries). Pending packets
    /// only move into the output port, which drains at its bandwidth whether or not they
    /// have joined it, so backlog + pending cannot fall faster than the port alone drains
    /// to `room - pending`; and while the pending bytes alone exceed `room`, nothing
    /// changes before the first of them leaves.
    fn injection_room_at(&self, room: u64) -> Cycle {
        let pending = &self.m.pending_injection;
        match room.checked_sub(pending.bytes) {
            Some(left) => self.m.out_port.drained_to(left),
            None => pending.first_ready().unwrap_or(self.now),
        }
    }

    /// [`SmPort::write_register`] at `self.now`.
    fn write_register(&mut self, line: LineAddr) -> Option<RegisterWrite> {
        let w = self.m.l1[L1::Data.index()].cache.write_register(line)?;
        if let Some(e) = w.eviction {
            self.send_victim(L1::Data, e, self.now);
        }
        Some(w)
    }
}

impl MemorySystem {
    /// Runs the memory system up to `now` and returns the requests completed at or
    /// before `now`, in completion order.
    ///
    /// The list is gathered from the SMs' own lists, SM by SM in the order they first
    /// reported (each SM's in its order); the GPU's loop takes them SM by SM instead
    /// ([`Self::advance`], [`Self::take_reports`]).
    pub fn completed(&mut self, now: Cycle) -> std::vec::Drain<'_, Completion> {
        self.advance_to(now);
        self.gathered_done.clear();
        for &s in &self.reported {
            let m = &mut self.sms[s as usize];
            m.free_done_slots();
            self.gathered_done.append(&mut m.done);
        }
        self.unlist_empty();
        self.gathered_done.drain(..)
    }

    /// Runs the memory system up to `now` (what [`Self::completed`] does before taking
    /// the completions); then [`Self::take_reports`] takes them, SM by SM.
    #[inline]
    pub fn advance(&mut self, now: Cycle) {
        self.advance_to(now);
    }

    /// An SM with completions or unblocks not yet taken, and those (its requests
    /// completed, in completion order, their slots already free; the cycles its blocked
    /// request was accepted), or `None` if no SM has any. Each SM's reports concern only
    /// that SM, so the order among SMs changes nothing (the last to report comes first).
    #[inline]
    pub fn take_reports(&mut self) -> Option<(usize, SmReports<'_>)> {
        let s = self.reported.pop()? as usize;
        let m = &mut self.sms[s];
        m.listed = false;
        m.free_done_slots();
        Some((
            s,
            SmReports {
                done: m.done.drain(..),
                unblocked: m.unblocked.drain(..),
            },
        ))
    }

    /// Takes the SMs whose lists are both empty off `reported`.
    fn unlist_empty(&mut self) {
        let sms = &mut self.sms;
        self.reported.retain(|&s| {
            let m = &mut sms[s as usize];
            m.listed = !m.done.is_empty() || !m.unblocked.is_empty();
            m.listed
        });
    }

    /// Whether an SM has a completion not yet taken (an unblock alone does not count: a
    /// caller that never takes unblocks still sees the memory system go idle).
    fn any_done(&self) -> bool {
        self.reported
            .iter()
            .any(|&s| !self.sms[s as usize].done.is_empty())
    }

    /// Puts SM `s` on `reported` if its own event just completed a request or unblocked
    /// it.
    #[inline(always)]
    fn note_report(&mut self, s: usize) {
        let m = &mut self.sms[s];
        if !m.listed && (!m.done.is_empty() || !m.unblocked.is_empty()) {
            m.listed = true;
            self.reported.push(s as u32);
        }
    }

    /// The next cycle at which something happens (a completion, or internal progress),
    /// or `None` if the memory system is idle.
    pub fn next_event_cycle(&self) -> Option<Cycle> {
        if !self.any_done() {
            self.events.next_cycle()
        } else {
            Some(self.now)
        }
    }

    /// Runs the memory system's events in time order, no further than `limit`, and
    /// stops after the first cycle whose events completed a request or unblocked an SM
    /// (something [`Self::completed`] or [`Self::unblocked`] would report); returns that
    /// cycle, `limit` if there was none (`Cycle::NEVER` if nothing is left at all).
    ///
    /// The GPU's loop calls this instead of visiting every cycle with a memory event:
    /// events that report nothing to an SM (interconnect hops, L2 lookups, DRAM
    /// commands) need no SM to look, so a memory-bound kernel's many such cycles cost
    /// only their events. The events run exactly as [`Self::completed`] would run them.
    pub fn run_until_report(&mut self, limit: Cycle) -> Cycle {
        if !self.reported.is_empty() {
            return self.now;
        }
        while let Some(t) = self.events.next_cycle() {
            if t > limit {
                break;
            }
            self.run_cycle(t);
            if !self.reported.is_empty() {
                return t;
            }
        }
        if self.events.next_cycle().is_none() && limit == Cycle::NEVER {
            return Cycle::NEVER;
        }
        limit
    }

    /// Puts each SM's own memory events (a hit's or an atomic's `PartDone`, an `L1Fill`,
    /// an `L1Retry`) in a queue of the SM, with a marker on the shared queue where each
    /// would have been (`on`), or on the shared queue itself (off, the default: no cost
    /// on one thread). Both orders are the same: a marker runs the front of its SM's
    /// queue, which is the shared order restricted to that SM. Safe at any time: an
    /// event already scheduled keeps the form it was scheduled in, and `handle` runs both.
    pub fn set_local_queues(&mut self, on: bool) {
        for m in &mut self.sms {
            m.local_queues = on;
        }
    }

    /// Whether nothing is in flight anywhere.
    pub fn is_idle(&self) -> bool {
        let idle = !self.any_done() && self.events.next_cycle().is_none();
        // Every SM's own event has its marker on the shared queue.
        debug_assert!(!idle || self.sms.iter().all(|m| m.local.is_empty()));
        idle
    }

    /// Counters of every component, summed.
    pub fn stats(&self) -> MemoryStats {
        let mut m = MemoryStats::default();
        for sm in &self.sms {
            m.l1d += *sm.l1[L1::Data.index()].cache.stats();
            m.l1d_reservation_fail_cycles += sm.l1[L1::Data.index()].fail_cycles;
            m.constant_cache += *sm.l1[L1::Const.index()].cache.stats();
            m.icache += *sm.l1[L1::Inst.index()].cache.stats();
            m.texture_cache.cache += *sm.l1[L1::Texture.index()].cache.stats();
            m.shared_memory += *sm.shared.stats();
            m.texture_cache.l2_reads += sm.texture_l2_reads.0;
            m.texture_cache.l2_read_sectors += sm.texture_l2_reads.1;
            m.fill_ports += sm.fill_stats;
        }
        m.fill_ports += self.l2_fill_stats;
        for s in &self.slices {
            m.l2 += *s.cache.stats();
        }
        m.interconnect = *self.icnt.stats();
        for sm in &self.sms {
            sm.out_port.count_into(&mut m.interconnect);
        }
        for c in &self.channels {
            m.dram += *c.dram.stats();
        }
        m
    }

    /// CERF: writes a register line into SM `sm`'s integrated array (its L1D) at `now`
    /// ([`SmPort::write_register`]).
    pub fn write_register(
        &mut self,
        sm: SmId,
        now: Cycle,
        line: LineAddr,
    ) -> Option<RegisterWrite> {
        self.advance_to(now);
        let s = sm.0 as usize;
        let w = self.front_end(s).write_register(line);
        self.flush_outbox(s);
        w
    }

    /// SM `sm`'s port: what its pipeline calls during its cycle. Events it schedules go
    /// on the queue at once, as with [`Self::issue`].
    pub fn port(&mut self, sm: SmId) -> SmPort<'_> {
        SmPort(Port::Whole(self, sm))
    }

    /// The SMs' front ends, split off for a phase in which each SM's calls run on any
    /// thread ([`crate::parallel`]) at the current cycle (after [`Self::completed`]): a
    /// [`FrontEnds::port`] per SM. What each schedules waits in its outbox until
    /// [`Self::flush_sm`], which the caller runs in SM order.
    pub fn front_ends(&mut self) -> (FrontEnds<'_>, &mut [SmMemory]) {
        let shared = FrontEnds {
            cfg: &self.cfg,
            map: &self.map,
            now: self.now,
        };
        (shared, &mut self.sms)
    }

    /// Moves what SM `sm` scheduled through a port of [`Self::front_ends`] onto the event
    /// queue.
    pub fn flush_sm(&mut self, sm: SmId) {
        self.flush_outbox(sm.0 as usize);
    }

    /// After the SMs' threads stepped a window ending at `end` ([`FrontEnds::begin_window`]),
    /// before its merge: what the SMs schedule from here goes to their queues at once.
    pub fn begin_merge(&mut self, end: Cycle) {
        self.window_end = end;
        for m in &mut self.sms {
            m.window_end = Cycle::NEVER;
        }
    }

    /// The merge's replay of cycle `t` of a window (after its first cycle, whose events
    /// ran before it): the cycle's events in the shared queue's order, exactly as one
    /// thread runs them, except that the marker of an own event of an SM that ran it on
    /// its thread (`t < live_from[sm]`) puts what that event scheduled on the queue
    /// (and runs its shared half: a packet's crossing) instead of running it. Every
    /// `schedule` call happens in the one-thread order. Then the caller takes each SM's
    /// cycle `t` in SM order ([`Self::replay_phase`], or the SM's live cycle).
    pub fn replay_cycle(&mut self, t: Cycle, live_from: &[Cycle]) {
        debug_assert!(t >= self.now);
        self.events.start_cycle(t);
        self.now = t;
        while let Some(event) = self.events.pop_current() {
            if let Event::Local { sm } = event {
                if live_from.get(sm as usize).is_some_and(|&l| t < l) {
                    self.replay_item(t, sm as usize);
                    continue;
                }
            }
            self.handle(t, event);
        }
    }

    /// Puts on the queue what SM `s`'s cycle `t` scheduled on its thread in a window,
    /// if it ran that cycle there (its SM-order slot of the merge).
    pub fn replay_phase(&mut self, s: usize, t: Cycle) {
        let m = &mut self.sms[s];
        if let Some(&item) = m
            .items
            .get(m.items_next)
            .filter(|i| i.at == t && matches!(i.kind, ItemKind::Phase))
        {
            m.items_next += 1;
            self.flush_logged(s, item.end);
        }
    }

    /// The merge is over: every item replayed.
    pub fn finish_merge(&mut self) {
        self.window_end = Cycle::NEVER;
        for m in &mut self.sms {
            // (A kernel that ended inside the window left nothing unreplayed: every SM
            // stopped at or before its last retire.)
            debug_assert!(m.items_next == m.items.len() && m.held.is_empty());
            if !m.items.is_empty() {
                m.outbox.clear();
            }
            m.items.clear();
            m.items_next = 0;
            m.outbox_next = 0;
        }
    }

    /// The next logged own event of SM `s`, at its marker at `t`.
    fn replay_item(&mut self, t: Cycle, s: usize) {
        let m = &mut self.sms[s];
        let Some(&item) = m.items.get(m.items_next) else {
            debug_assert!(false, "a marker of SM {s} at {t} without its logged event");
            return;
        };
        debug_assert!(item.at == t && !matches!(item.kind, ItemKind::Phase));
        m.items_next += 1;
        self.flush_logged(s, item.end);
        if let ItemKind::Leave {
            slice,
            packet,
            bytes,
            start,
        } = item.kind
        {
            // The shared half, as `handle` runs it after the SM half.
            if start > t {
                let event = Event::IcntEnterSlice {
                    slice,
                    packet,
                    bytes,
                };
                self.events.schedule(start, event);
            } else {
                self.enter_slice(t, slice, packet, bytes);
            }
        }
    }

    /// Schedules SM `s`'s logged outbox entries up to `end`, in order; an own event held
    /// on its thread (for the window's end or later) enters its queue now, in the
    /// one-thread order of its marker.
    fn flush_logged(&mut self, s: usize, end: u32) {
        let (events, window_end) = (&mut self.events, self.window_end);
        let m = &mut self.sms[s];
        for i in m.outbox_next..end as usize {
            let gone = (Cycle::NEVER, Event::Local { sm: u32::MAX });
            let (at, event) = std::mem::replace(&mut m.outbox[i], gone);
            if matches!(event, Event::Local { .. }) && at >= window_end {
                if let Some((held_at, local)) = m.held.pop_front() {
                    debug_assert_eq!(held_at, at);
                    m.local.schedule_cold(at, local);
                }
            }
            events.schedule(at, event);
        }
        m.outbox_next = end as usize;
        if m.items_next == m.items.len() {
            // Replayed: the SM goes on live, through its outbox as usual.
            m.outbox.clear();
            m.outbox_next = 0;
            m.items.clear();
            m.items_next = 0;
        }
    }

    /// Latency of an isolated load of one line with `sectors` sectors through the L1D,
    /// on an idle memory system. Exact when the core and memory clocks are equal; else
    /// within a cycle or two of clock-domain rounding.
    pub fn unloaded_load_latency(&self, served_by: ServedBy, sectors: u32) -> Cycles {
        let c = &self.cfg;
        let ic = &c.interconnect;
        let icnt =
            |bytes: u32| Cycles::new(u64::from(bytes.div_ceil(ic.bytes_per_cycle))) + ic.latency;
        let data = sectors * c.l2.slice.sector_bytes;
        let l1 = c.l1d.latency;
        let l2 = l1 + icnt(ic.control_bytes) + c.l2.slice.latency + icnt(ic.control_bytes + data);
        match served_by {
            ServedBy::L1 => l1,
            ServedBy::L2 => l2,
            ServedBy::Dram => {
                let burst = MemCycles::new(u64::from(data.div_ceil(c.dram.bytes_per_cycle)));
                l2 + self
                    .ratio
                    .duration_to_core(c.dram.row_closed_latency() + burst)
                    + c.dram.latency
            }
        }
    }

    fn advance_to(&mut self, now: Cycle) {
        debug_assert!(now >= self.now, "time went backwards: {now} < {}", self.now);
        while let Some(t) = self.events.next_cycle().filter(|&t| t <= now) {
            self.run_cycle(t);
        }
        // Nothing is pending before `now`: events scheduled from here on are at `now` or
        // later.
        self.events.start_cycle(now);
        self.now = self.now.max(now);
    }

    /// Runs the events of cycle `t`, the earliest with events, including the ones they
    /// schedule for `t` itself.
    fn run_cycle(&mut self, t: Cycle) {
        self.events.start_cycle(t);
        self.now = t;
        while let Some(event) = self.events.pop_current() {
            self.handle(t, event);
        }
    }

    fn handle(&mut self, t: Cycle, mut event: Event) {
        // A marker runs the front of its SM's own queue, as the event it holds. (One
        // call site per handler below: two made the compiler stop inlining `l1_fill`,
        // +1.7 % host instructions on one thread, where the queues are off.)
        if let Event::Local { sm } = event {
            let Some(local) = self.pop_local(t, sm) else {
                return;
            };
            event = local;
        }
        match event {
            Event::Local { .. } => unreachable!("a marker was replaced by its event"),
            Event::PartDone(id) => self.part_done(id, t),
            Event::L1Fill {
                sm,
                l1,
                line,
                sectors,
            } => self.l1_fill(t, sm as usize, l1, line, sectors),
            Event::L1Retry { sm, l1 } => self.l1_retry(t, sm as usize, l1),
            Event::L2Arrive { slice, packet } => {
                let sl = &mut self.slices[slice as usize];
                sl.input.push_back(packet);
                self.kick_slice(slice as usize, t);
            }
            Event::L2Service { slice } => self.l2_service(t, slice as usize),
            Event::DramArrive { channel, req } => {
                self.channels[channel as usize]
                    .dram
                    .push(req, self.ratio.to_mem(t));
                self.run_channel(channel as usize, t);
            }
            Event::DramService { channel } => {
                let ch = &mut self.channels[channel as usize];
                if ch.wake == t {
                    ch.wake = Cycle::NEVER;
                    self.run_channel(channel as usize, t);
                }
            }
            Event::L2Fill(token) => self.l2_fill(t, token),
            Event::L2FillPort { slice } => self.l2_fill_port(t, slice as usize),
            Event::SmReply { sm } => self.take_reply(t, sm as usize),
            Event::IcntLeaveSm {
                slice,
                packet,
                bytes,
            } => {
                let sm = packet.sm as usize;
                let start = self.sms[sm].leave_sm(&self.cfg.interconnect, t, &packet, bytes);
                // The shared half: the crossing to the slice, when the packet starts
                // leaving.
                if start > t {
                    let event = Event::IcntEnterSlice {
                        slice,
                        packet,
                        bytes,
                    };
                    self.events.schedule(start, event);
                } else {
                    self.enter_slice(t, slice, packet, bytes);
                }
            }
            Event::IcntEnterSlice {
                slice,
                packet,
                bytes,
            } => self.enter_slice(t, slice, packet, bytes),
            Event::IcntWake { to_slice, source } => {
                let (to_slice, s) = (to_slice, source as usize);
                while let Some(event) = self.parked(to_slice, s).pop_front() {
                    match self.icnt_cross(t, event) {
                        Ok(bytes) if to_slice && self.cfg.l2.input_queue_entries > 0 => {
                            self.sms[s].pending_injection.refused -= bytes;
                        }
                        Ok(_) => {}
                        Err((retry, event)) => {
                            self.parked(to_slice, s).push_front(event);
                            if retry != Cycle::NEVER {
                                self.events
                                    .schedule(retry, Event::IcntWake { to_slice, source });
                            }
                            break;
                        }
                    }
                }
            }
            Event::IcntLeaveSlice {
                slice,
                sm,
                delivery,
                bytes,
            } => {
                if self.cfg.l2.output_queue_entries > 0 {
                    self.slices[slice as usize].replies_waiting += 1;
                }
                let start = self.icnt.leave_slice(slice as usize, t, bytes);
                if start > t {
                    let event = Event::IcntEnterSm {
                        slice,
                        sm,
                        delivery,
                        bytes,
                    };
                    self.events.schedule(start, event);
                } else {
                    self.enter_sm(t, slice, sm, delivery, bytes);
                }
            }
            Event::IcntEnterSm {
                slice,
                sm,
                delivery,
                bytes,
            } => self.enter_sm(t, slice, sm, delivery, bytes),
        }
    }

    /// The front event of SM `sm`'s own queue, whose marker runs at `t`, as the shared
    /// queue would hold it. Out of line: only with the SMs' own queues on, and `handle`
    /// stays as small as before them (the one-thread path).
    #[inline(never)]
    fn pop_local(&mut self, t: Cycle, sm: u32) -> Option<Event> {
        let s = sm as usize;
        let Some((at, local)) = self.sms[s].local.pop() else {
            debug_assert!(false, "a marker without an event of SM {s}");
            return None;
        };
        debug_assert_eq!(at, t, "SM {s}'s queue out of the shared order");
        Some(local.direct(sm))
    }

    /// `packet`, starting to leave its SM at `t`, crosses to slice `slice`: behind the
    /// SM's refused crossings if it has any (`head_of_line_blocking`), else now or, if
    /// refused, as the first of them with a wake at the retry cycle. Fields, not an
    /// [`Event`], so that the common crossing moves no event.
    fn enter_slice(&mut self, t: Cycle, slice: u32, packet: Packet, bytes: u32) {
        let sm = packet.sm;
        if self.cfg.l2.input_queue_entries > 0 {
            // A bounded slice input queue: the crossing that counts entries and parks.
            let event = Event::IcntEnterSlice {
                slice,
                packet,
                bytes,
            };
            return self.icnt_enter(t, (true, sm), event);
        }
        if self.parked_sm[sm as usize].is_empty() {
            let port = &mut self.sms[sm as usize].out_port;
            match self.icnt.enter_slice(port, slice as usize, t, bytes) {
                Ok(arrival) => {
                    return self
                        .events
                        .schedule(arrival, Event::L2Arrive { slice, packet })
                }
                Err(retry) => self.wake_at(retry, true, sm),
            }
        }
        self.parked_sm[sm as usize].push_back(Event::IcntEnterSlice {
            slice,
            packet,
            bytes,
        });
    }

    /// Like [`MemorySystem::enter_slice`], a reply from slice `slice` to SM `sm`.
    fn enter_sm(&mut self, t: Cycle, slice: u32, sm: u32, delivery: Delivery, bytes: u32) {
        if self.cfg.interconnect.ejection_buffer_entries > 0 {
            // A bounded ejection buffer: the crossing that counts entries and parks.
            let event = Event::IcntEnterSm {
                slice,
                sm,
                delivery,
                bytes,
            };
            return self.icnt_enter(t, (false, slice), event);
        }
        if self.parked_slice[slice as usize].is_empty() {
            match self.icnt.enter_sm(slice as usize, sm as usize, t, bytes) {
                Ok(arrival) => {
                    self.reply_crossed(t, slice);
                    return self.arrive_at_sm(arrival, sm, delivery);
                }
                Err(retry) => self.wake_at(retry, false, slice),
            }
        }
        self.parked_slice[slice as usize].push_back(Event::IcntEnterSm {
            slice,
            sm,
            delivery,
            bytes,
        });
    }

    /// Schedules the retry of source `source`'s first refused crossing.
    fn wake_at(&mut self, retry: Cycle, to_slice: bool, source: u32) {
        self.events
            .schedule(retry, Event::IcntWake { to_slice, source });
    }

    /// A reply that crossed to SM `sm` arrives there at `arrival`.
    fn arrive_at_sm(&mut self, arrival: Cycle, sm: u32, delivery: Delivery) {
        if self.reply_fifo {
            let m = &mut self.sms[sm as usize];
            m.replies.push_back((arrival, delivery));
            if m.reply_at == Cycle::NEVER {
                let at = arrival.max(m.next_take);
                m.reply_at = at;
                self.events.schedule(at, Event::SmReply { sm });
            }
            return;
        }
        let event = match delivery {
            Delivery::Fill { l1, line, sectors } => LocalEvent::L1Fill { l1, line, sectors },
            Delivery::Done(id) => LocalEvent::PartDone(id),
        };
        let m = &mut self.sms[sm as usize];
        let event = if m.local_queues {
            m.local.schedule_cold(arrival, event);
            Event::Local { sm }
        } else {
            event.direct(sm)
        };
        self.events.schedule(arrival, event);
    }

    /// A reply of slice `slice` crossed: with `l2.output_queue_entries`, it leaves the
    /// slice's output queue, and a slice that stopped its lookups for want of room there
    /// starts again.
    fn reply_crossed(&mut self, t: Cycle, slice: u32) {
        let limit = self.cfg.l2.output_queue_entries;
        if limit == 0 {
            return;
        }
        let sl = &mut self.slices[slice as usize];
        sl.replies_waiting -= 1;
        if sl.output_full && sl.replies_waiting < limit {
            sl.output_full = false;
            self.kick_slice(slice as usize, t);
        }
    }

    /// The crossings refused at source `s`: an SM's requests (`to_slice`) or a slice's
    /// replies.
    fn parked(&mut self, to_slice: bool, s: usize) -> &mut VecDeque<Event> {
        if to_slice {
            &mut self.parked_sm[s]
        } else {
            &mut self.parked_slice[s]
        }
    }

    /// An `IcntEnterSlice` or `IcntEnterSm` at `t` from `source` (`(to_slice, index)`):
    /// behind that source's refused crossings if it has any, else crossing now or, if
    /// refused, the first of them with a wake at the retry cycle.
    fn icnt_enter(&mut self, t: Cycle, (to_slice, source): (bool, u32), event: Event) {
        let s = source as usize;
        if !self.parked(to_slice, s).is_empty() {
            return self.park(to_slice, s, event);
        }
        if let Err((retry, event)) = self.icnt_cross(t, event) {
            self.park(to_slice, s, event);
            // `Cycle::NEVER`: a full slice input queue wakes the source when it has room.
            if retry != Cycle::NEVER {
                self.events
                    .schedule(retry, Event::IcntWake { to_slice, source });
            }
        }
    }

    /// Queues a refused crossing at its source; with `l2.input_queue_entries`, an SM's
    /// refused packets keep their place in its injection buffer.
    fn park(&mut self, to_slice: bool, s: usize, event: Event) {
        if let (Event::IcntEnterSlice { bytes, .. }, 1..) =
            (&event, self.cfg.l2.input_queue_entries)
        {
            self.sms[s].pending_injection.refused += u64::from(*bytes);
        }
        self.parked(to_slice, s).push_back(event);
    }

    /// The second stage of an interconnect transfer: the packet of `event` (an
    /// `IcntEnterSlice` or `IcntEnterSm`) crosses to its destination port and its arrival
    /// is scheduled (`Ok(bytes)`), or its held source refuses it until the returned
    /// cycle (`Cycle::NEVER`: until the full input queue of its slice has room).
    fn icnt_cross(&mut self, t: Cycle, event: Event) -> Result<u64, (Cycle, Event)> {
        match event {
            Event::IcntEnterSlice {
                slice,
                packet,
                bytes,
            } => {
                let sm = packet.sm as usize;
                let entries = self.l2_entries(packet.sectors);
                let limit = self.cfg.l2.input_queue_entries;
                let sl = &mut self.slices[slice as usize];
                if limit > 0 && sl.inbound + entries > limit {
                    if !sl.refused.contains(&packet.sm) {
                        sl.refused.push(packet.sm);
                    }
                    return Err((Cycle::NEVER, event));
                }
                let arrival = self
                    .icnt
                    .enter_slice(&mut self.sms[sm].out_port, slice as usize, t, bytes)
                    .map_err(|retry| (retry, event))?;
                if limit > 0 {
                    self.slices[slice as usize].inbound += entries;
                }
                self.events
                    .schedule(arrival, Event::L2Arrive { slice, packet });
                Ok(u64::from(bytes))
            }
            Event::IcntEnterSm {
                slice,
                sm,
                delivery,
                bytes,
            } => {
                let limit = self.cfg.interconnect.ejection_buffer_entries;
                let m = &mut self.sms[sm as usize];
                if limit > 0 && m.replies.len() >= limit as usize {
                    m.fill_stats.ejection_refusals += 1;
                    if !m.refused_slices.contains(&slice) {
                        m.refused_slices.push(slice);
                    }
                    return Err((Cycle::NEVER, event));
                }
                let arrival = self
                    .icnt
                    .enter_sm(slice as usize, sm as usize, t, bytes)
                    .map_err(|retry| (retry, event))?;
                self.reply_crossed(t, slice);
                self.arrive_at_sm(arrival, sm, delivery);
                Ok(u64::from(bytes))
            }
            _ => unreachable!("only interconnect crossings cross"),
        }
    }

    /// Entries of a slice's input queue a packet for `sectors` takes.
    fn l2_entries(&self, sectors: SectorMask) -> u32 {
        if self.cfg.l2.sector_lookups {
            sectors.count().max(1)
        } else {
            1
        }
    }

    fn part_done(&mut self, id: RequestId, t: Cycle) {
        let s = id.sm().0 as usize;
        self.sms[s].part_done(id, t);
        self.note_report(s);
    }
}

impl FrontEnd<'_> {
    /// Looks up `lines` in the SM's cache `l1` from cycle `start`, one per cycle; `local`
    /// says the data is thread-local (for `l1d.local_write_policy`).
    fn process_lines(
        &mut self,
        l1: L1,
        id: RequestId,
        (kind, local): (AccessKind, bool),
        lines: &[LineAccess],
        start: Cycle,
    ) {
        self.m.log_array_states(start, l1);
        let local_policy = if local {
            self.m.l1[l1.index()].cache.config().local_write_policy
        } else {
            None
        };
        let port = &mut self.m.l1[l1.index()];
        let latency = port.cache.config().latency;
        let write_policy = local_policy.unwrap_or(port.cache.config().write_policy);
        if port.blocked.active {
            // A retry: the blocked stretch since the last failure is one refused try per
            // cycle in GPGPU-Sim's LD/ST unit.
            let b = &port.blocked;
            let cycles = start.saturating_since(b.since).get();
            port.fail_cycles.add(b.why, cycles);
        }
        let control = self.cfg.interconnect.control_bytes;
        let sector_bytes = self.cfg.l2.slice.sector_bytes;
        let banks = self.m.l1[l1.index()].banks.take();
        let mut schedule = LookupSchedule::new(banks.as_ref(), start);
        let mut hits_ready: Option<Cycle> = None;
        let mut new_parts = 0;
        let mut blocked_at = None;
        for (i, la) in lines.iter().enumerate() {
            let t = schedule.place(la);
            let mut ready = t + latency;
            let data_bytes = la.sectors.count() * sector_bytes;
            let port = &mut self.m.l1[l1.index()];
            if port.miss_queue.is_bounded() && kind != AccessKind::Atomic {
                // GPGPU-Sim's rule: a read that does not hit needs its entries and one
                // more, a write that goes below (write-through, or a miss) its entries.
                let entries = port.miss_queue.entries(la.sectors);
                let needed = match kind {
                    AccessKind::Load if !port.cache.contains(la.line, la.sectors) => entries + 1,
                    AccessKind::Store
                        if write_policy == WritePolicy::WriteThrough
                            || !port.cache.contains(la.line, la.sectors) =>
                    {
                        entries
                    }
                    _ => 0,
                };
                if needed > 0 && !port.miss_queue.has_room(t, needed) {
                    port.cache.count_reservation_fail();
                    blocked_at = Some((i, ReservationFailure::MissQueueFull, t));
                    break;
                }
            }
            let cache = &mut port.cache;
            let access = match kind {
                AccessKind::Atomic => {
                    new_parts += 1;
                    let pkt = PacketKind::Atomic(id);
                    self.send_to_l2(ready, la.line, la.sectors, pkt, control + data_bytes);
                    continue;
                }
                AccessKind::Load => cache.access(la.line, la.sectors, CacheOp::Read, id),
                AccessKind::Store => match local_policy {
                    Some(p) => cache.write_with_policy(la.line, la.sectors, p),
                    None => cache.access(la.line, la.sectors, CacheOp::Write, id),
                },
            };
            let m = &mut *self.m;
            if let (Some(banks), L1::Data, false) = (
                m.array_banks.as_mut(),
                l1,
                matches!(access.outcome, Outcome::ReservationFail(_)),
            ) {
                // CERF: the lookup takes a tag bank's slot, a hit's read or a store's write
                // a data bank's port, a dirty victim's read another; the data is late by
                // what the banks make it wait.
                let cache = &m.l1[l1.index()].cache;
                let data = match (kind, access.outcome) {
                    (AccessKind::Load, Outcome::Hit) => Some(LineData::Read),
                    (AccessKind::Store, _) if cache.contains(la.line, la.sectors) => {
                        Some(LineData::Write)
                    }
                    _ => None,
                };
                let tag = banks.line_lookup(la.line, t);
                let mut at = tag;
                if let Some(d) = data {
                    at = banks.line_data(la.line, tag, d);
                }
                if let Some(e) = access.eviction {
                    at = at.max(banks.line_data(e.line, tag, LineData::Read));
                }
                ready = at + latency;
            }
            match access.outcome {
                Outcome::ReservationFail(why) => {
                    blocked_at = Some((i, why, t));
                    break;
                }
                Outcome::Hit => hits_ready = Some(hits_ready.map_or(ready, |h| h.max(ready))),
                Outcome::MshrMerge => new_parts += 1,
                Outcome::Miss | Outcome::SectorMiss if kind == AccessKind::Load => {
                    new_parts += 1;
                    if l1 == L1::Texture {
                        self.m.texture_l2_reads.0 += 1;
                        self.m.texture_l2_reads.1 += u64::from(access.fetch.count());
                    }
                    self.send_to_l2(ready, la.line, access.fetch, PacketKind::Read(l1), control);
                }
                Outcome::Miss | Outcome::SectorMiss => {
                    hits_ready = Some(hits_ready.map_or(ready, |h| h.max(ready)))
                }
            }
            if access.forward_write {
                let pkt = if kind == AccessKind::Store && self.cfg.l2.write_ack {
                    new_parts += 1;
                    PacketKind::AckedWrite(id)
                } else {
                    PacketKind::Write
                };
                self.send_to_l2(ready, la.line, la.sectors, pkt, control + data_bytes);
            }
            if let Some(e) = access.eviction {
                let bytes = control + e.dirty.count() * sector_bytes;
                self.send_to_l2(ready, e.line, e.dirty, PacketKind::Write, bytes);
            }
        }
        // The port is free again after the last lookup, or at the refused line's cycle.
        let t = blocked_at.map_or_else(|| schedule.end(), |(_, _, at)| at);
        self.m.l1[l1.index()].banks = banks;
        let r = &mut self.m.requests[id.slot()];
        r.parts += new_parts;
        if let Some(h) = hits_ready {
            r.parts += 1;
            self.m.schedule_local(self.s, h, LocalEvent::PartDone(id));
        }
        let port = &mut self.m.l1[l1.index()];
        port.free = t;
        match blocked_at {
            Some((i, why, _)) => {
                if why == ReservationFailure::NoEvictableWay {
                    port.blocked.first_set = port.cache.set_of(lines[i].line);
                }
                let b = &mut port.blocked;
                let rest = &lines[i..];
                b.lines[..rest.len()].copy_from_slice(rest);
                b.why = why;
                b.changed = false;
                b.since = t;
                b.active = true;
                b.id = id;
                b.kind = kind;
                b.local = local;
                b.len = rest.len();
                if why == ReservationFailure::MissQueueFull {
                    // Nothing but a departure makes room: retry at the first one.
                    let at = port.miss_queue.next_departure().unwrap_or(t).max(t);
                    if port.blocked.queue_retry != at {
                        port.blocked.queue_retry = at;
                        let retry = LocalEvent::L1Retry { l1 };
                        self.m.schedule_local(self.s, at, retry);
                    }
                }
            }
            None => {
                port.blocked.active = false;
                let r = &mut self.m.requests[id.slot()];
                r.accepted = true;
                if r.parts == 0 {
                    // Nothing to wait for (an empty request).
                    r.parts = 1;
                    let done = LocalEvent::PartDone(id);
                    self.m.schedule_local(self.s, start + latency, done);
                }
            }
        }
    }

    /// A global load bypassing the L1D (`l1d.bypass_global_loads`): its lines take the
    /// L1D's port as lookups would (one per cycle, or as `l1d.banks` schedule them) and
    /// leave for the L2 `l1d.latency` later, as a miss does (our choice: GPGPU-Sim's
    /// bypass skips the L1's latency queue; regsim keeps the one path through the
    /// LD/ST unit for every L1D access). No lookup, no allocation, no miss-queue entry:
    /// nothing here can refuse, so the request is accepted whole.
    fn bypass_lines(&mut self, id: RequestId, lines: &[LineAccess]) {
        let start = self.now;
        let l1 = L1::Data;
        let latency = self.m.l1[l1.index()].cache.config().latency;
        let control = self.cfg.interconnect.control_bytes;
        let banks = self.m.l1[l1.index()].banks.take();
        let mut schedule = LookupSchedule::new(banks.as_ref(), start);
        for la in lines {
            let t = schedule.place(la);
            let pkt = PacketKind::Bypass(id);
            self.send_to_l2(t + latency, la.line, la.sectors, pkt, control);
        }
        let end = schedule.end();
        self.m.l1[l1.index()].banks = banks;
        self.m.l1[l1.index()].free = end;
        let r = &mut self.m.requests[id.slot()];
        r.parts += lines.len() as u32;
        r.accepted = true;
        if r.parts == 0 {
            r.parts = 1;
            self.m
                .schedule_local(self.s, start + latency, LocalEvent::PartDone(id));
        }
    }

    // Inlined as before the SMs' own queues (their check made `process_lines` larger).
    #[inline]
    fn send_to_l2(
        &mut self,
        ready: Cycle,
        line: LineAddr,
        sectors: SectorMask,
        kind: PacketKind,
        bytes: u32,
    ) {
        let slice = self.map.slice(line);
        let packet = Packet {
            sm: self.s as u32,
            line,
            sectors,
            kind,
        };
        // Ports are reserved in time order: the packet joins its SM's output port when
        // it is ready (an event), and its slice's input port when it starts leaving.
        self.m.pending_injection.add(ready, bytes);
        let slice = slice as u32;
        // `schedule_local`, with the event built in the form it takes (one thread: the
        // shared one, as before the SMs' own queues; building the local form and
        // converting it cost 1 % host instructions on matvec_rows).
        let event = if self.m.local_queues {
            let leave = LocalEvent::LeaveSm {
                slice,
                packet,
                bytes,
            };
            self.m.push_local(ready, leave);
            Event::Local { sm: self.s as u32 }
        } else {
            Event::IcntLeaveSm {
                slice,
                packet,
                bytes,
            }
        };
        self.m.outbox.push((ready, event));
    }
}

impl MemorySystem {
    /// SM `s`'s own `L1Fill` at `t` ([`FrontEnd::l1_fill`]); what it scheduled goes on
    /// the queue, in its order.
    fn l1_fill(&mut self, t: Cycle, s: usize, l1: L1, line: LineAddr, sectors: SectorMask) {
        self.front_end(s).l1_fill(t, l1, line, sectors);
        self.flush_outbox(s);
        self.note_report(s);
    }

    /// SM `s`'s own `L1Retry` at `t` ([`FrontEnd::l1_retry`]).
    fn l1_retry(&mut self, t: Cycle, s: usize, l1: L1) {
        self.front_end(s).l1_retry(t, l1);
        self.flush_outbox(s);
        self.note_report(s);
    }
}

impl FrontEnd<'_> {
    /// The SM's own `L1Fill` at `t`: line `line` (`sectors`) of a reply fills cache
    /// `l1`; the requests waiting for it complete, a victim leaves for the L2, and a
    /// blocked request may retry. Reads and writes only this SM's front end: what it
    /// schedules goes to the outbox, its completions and unblock to the SM's own lists.
    fn l1_fill(&mut self, t: Cycle, l1: L1, line: LineAddr, sectors: SectorMask) {
        let mut ids = std::mem::take(&mut self.m.scratch_ids);
        ids.clear();
        self.m.log_array_states(t, l1);
        let cache = &mut self.m.l1[l1.index()].cache;
        let freed_before = cache.entries_freed();
        let eviction = cache.fill(line, sectors, &mut ids);
        let freed = cache.entries_freed() != freed_before;
        for &id in &ids {
            self.m.part_done(id, t);
        }
        self.m.scratch_ids = ids;
        if let (Some(banks), L1::Data) = (self.m.array_banks.as_mut(), l1) {
            // CERF: the fill writes the array (its data went on to the waiting loads).
            banks.line_data(line, t, LineData::Write);
        }
        if let Some(e) = eviction {
            self.send_victim(l1, e, t);
        }
        let port = &mut self.m.l1[l1.index()];
        if port.blocked.active {
            // Whether this fill may have cleared the blocked line's failure: a fill of
            // that line (its sectors may now be present, its merge slots free), a freed
            // MSHR entry for a line that wanted one, a way unlocked in its set. CERF's
            // register lines change the array between fills: there every fill counts.
            let blocked_line = port.blocked.lines[0].line;
            port.blocked.changed |= blocked_line == line
                || port.cache.shares_registers()
                || match port.blocked.why {
                    ReservationFailure::MshrFull => freed,
                    ReservationFailure::NoEvictableWay => {
                        freed && port.cache.set_of(line) == port.blocked.first_set
                    }
                    ReservationFailure::MergeFull | ReservationFailure::MissQueueFull => false,
                };
            if port.free > t {
                let (at, retry) = (port.free, LocalEvent::L1Retry { l1 });
                self.m.schedule_local(self.s, at, retry);
            } else if port.blocked.changed {
                self.l1_retry(t, l1);
            } else {
                // Nothing the blocked line's lookup depends on changed since its last
                // attempt, so a retry would fail the same way: count that failure without
                // redoing the lookup (a memory-bound run meets hundreds of thousands of
                // such fills).
                port.cache.count_reservation_fail();
            }
        }
    }

    /// The SM's own `L1Retry` at `t`: cache `l1`'s blocked request tries its remaining
    /// lines again, and if all are accepted the SM's unblock is reported. Reads and
    /// writes only this SM's front end.
    fn l1_retry(&mut self, t: Cycle, l1: L1) {
        let port = &self.m.l1[l1.index()];
        if !port.blocked.active || port.free > t {
            return;
        }
        let b = &port.blocked;
        let (id, kind, local) = (b.id, b.kind, b.local);
        // Only the remaining lines are copied (the process may refill `blocked`).
        let mut lines = std::mem::take(&mut self.m.scratch_lines);
        lines.clear();
        lines.extend_from_slice(&b.lines[..b.len]);
        self.process_lines(l1, id, (kind, local), &lines, t);
        self.m.scratch_lines = lines;
        if !self.m.l1[l1.index()].blocked.active {
            self.m.unblocked.push(t);
        }
    }
}

impl MemorySystem {
    /// SMs whose request blocked by a reservation failure was accepted since the last
    /// call, with the cycle; they may issue again. Every [`Stall::ReservationFail`] ends
    /// with such a report, so a stalled SM may sleep until then instead of polling.
    ///
    /// Gathered from the SMs' own lists like [`Self::completed`]'s.
    pub fn unblocked(&mut self) -> std::vec::Drain<'_, (SmId, Cycle)> {
        self.gathered_unblocked.clear();
        for &s in &self.reported {
            let m = &mut self.sms[s as usize];
            let sm = SmId(s);
            self.gathered_unblocked
                .extend(m.unblocked.drain(..).map(|t| (sm, t)));
        }
        self.unlist_empty();
        self.gathered_unblocked.drain(..)
    }

    fn kick_slice(&mut self, slice: usize, t: Cycle) {
        let sl = &mut self.slices[slice];
        if sl.blocked
            || sl.output_full
            || sl.dram_full
            || sl.input.is_empty()
            || sl.service_at != Cycle::NEVER
        {
            return;
        }
        let at = sl.port_free.max(t);
        sl.service_at = at;
        self.events.schedule(
            at,
            Event::L2Service {
                slice: slice as u32,
            },
        );
    }

    fn l2_service(&mut self, t: Cycle, slice: usize) {
        let latency = self.cfg.l2.slice.latency;
        let sl = &mut self.slices[slice];
        sl.service_at = Cycle::NEVER;
        if sl.port_free > t {
            // A fill took the data port after this service was scheduled.
            self.kick_slice(slice, t);
            return;
        }
        let sl = &mut self.slices[slice];
        let Some(&p) = sl.input.front() else { return };
        let limit = self.cfg.l2.output_queue_entries;
        if limit > 0 && sl.replies_waiting >= limit {
            // Woken when a reply crosses.
            sl.output_full = true;
            return;
        }
        let to_dram = self.cfg.l2.dram_queue_entries;
        if to_dram > 0 && sl.to_dram >= to_dram {
            // Woken when its channel admits one of its requests.
            sl.dram_full = true;
            return;
        }
        let ready = t + latency;
        let access = match p.kind {
            PacketKind::Read(l1) => {
                let target = L2Target {
                    sm: p.sm,
                    sectors: p.sectors,
                    reply: Reply::Fill(l1),
                };
                (
                    sl.cache.access(p.line, p.sectors, CacheOp::Read, target),
                    Some(target),
                )
            }
            PacketKind::Atomic(id) | PacketKind::Bypass(id) => {
                let reply = match p.kind {
                    PacketKind::Atomic(_) => Reply::Atomic(id),
                    _ => Reply::Direct(id),
                };
                let target = L2Target {
                    sm: p.sm,
                    sectors: p.sectors,
                    reply,
                };
                (
                    sl.cache.access(p.line, p.sectors, CacheOp::Read, target),
                    Some(target),
                )
            }
            PacketKind::Write | PacketKind::AckedWrite(_) => {
                // Writes never wait in an MSHR; the target is not stored.
                let unused = L2Target {
                    sm: p.sm,
                    sectors: p.sectors,
                    reply: Reply::Fill(L1::Data),
                };
                (
                    sl.cache.access(p.line, p.sectors, CacheOp::Write, unused),
                    None,
                )
            }
        };
        let (access, target) = access;
        if let Outcome::ReservationFail(_) = access.outcome {
            sl.blocked = true;
            return;
        }
        sl.input.pop_front();
        if self.cfg.l2.input_queue_entries > 0 {
            let entries = self.l2_entries(p.sectors);
            let sl = &mut self.slices[slice];
            sl.inbound -= entries;
            // The SMs it refused try again next cycle, in the order they were refused.
            for sm in sl.refused.drain(..) {
                self.events.schedule(
                    t + Cycles::new(1),
                    Event::IcntWake {
                        to_slice: true,
                        source: sm,
                    },
                );
            }
        }
        // A hit's or a write's data passes the data port; a miss only looks up the tags.
        let moves_data = match p.kind {
            PacketKind::Write | PacketKind::AckedWrite(_) => true,
            PacketKind::Read(_) | PacketKind::Atomic(_) | PacketKind::Bypass(_) => {
                access.outcome == Outcome::Hit
            }
        };
        let mut occupancy = if moves_data {
            self.l2_data_port_cycles(p.sectors)
        } else {
            Cycles::new(1)
        };
        if self.cfg.l2.sector_lookups {
            occupancy = occupancy.max(Cycles::new(u64::from(p.sectors.count().max(1))));
        }
        let sl = &mut self.slices[slice];
        sl.port_free = t + occupancy;
        match (access.outcome, target) {
            (Outcome::Hit, Some(target)) => {
                let mut ready = ready;
                if let Reply::Atomic(_) = target.reply {
                    self.slices[slice].cache.mark_dirty(p.line, p.sectors);
                    ready = self.atomic_done(slice, ready);
                }
                self.reply(slice, p.line, target, ready);
            }
            (Outcome::Miss | Outcome::SectorMiss, Some(_)) => {
                self.send_to_dram(slice, ready, p.line, access.fetch, false);
            }
            _ => {}
        }
        if access.forward_write {
            self.send_to_dram(slice, ready, p.line, p.sectors, true);
        }
        if let Some(e) = access.eviction {
            self.send_to_dram(slice, ready, e.line, e.dirty, true);
        }
        if let PacketKind::AckedWrite(id) = p.kind {
            self.events.schedule(
                ready,
                Event::IcntLeaveSlice {
                    slice: slice as u32,
                    sm: p.sm,
                    delivery: Delivery::Done(id),
                    bytes: self.cfg.interconnect.control_bytes,
                },
            );
        }
        self.kick_slice(slice, t + Cycles::new(1));
    }

    /// `l2.atomic_unit`: the cycle an atomic whose line is in `slice` from `ready` leaves
    /// with its result. The slice's atomic unit takes one request every `interval` cycles
    /// (a request that finds it busy waits) and performs the read-modify-write in
    /// `latency`; without the key the reply leaves at `ready`, as a read hit's.
    fn atomic_done(&mut self, slice: usize, ready: Cycle) -> Cycle {
        let Some(unit) = self.cfg.l2.atomic_unit else {
            return ready;
        };
        let sl = &mut self.slices[slice];
        let start = ready.max(sl.atomic_free);
        sl.atomic_free = start + Cycles::new(u64::from(unit.interval));
        start + unit.latency
    }

    /// Cycles `sectors` hold an L2 slice's data port (at least 1).
    fn l2_data_port_cycles(&self, sectors: SectorMask) -> Cycles {
        let port = self.cfg.l2.slice.data_port_bytes;
        if port == 0 {
            return Cycles::new(1);
        }
        let bytes = sectors.count() * self.cfg.l2.slice.sector_bytes;
        Cycles::new(u64::from(bytes.div_ceil(port).max(1)))
    }

    fn reply(&mut self, slice: usize, line: LineAddr, target: L2Target, ready: Cycle) {
        let bytes = self.cfg.interconnect.control_bytes
            + target.sectors.count() * self.cfg.l2.slice.sector_bytes;
        let delivery = match target.reply {
            Reply::Fill(l1) => Delivery::Fill {
                l1,
                line,
                sectors: target.sectors,
            },
            Reply::Atomic(id) | Reply::Direct(id) => Delivery::Done(id),
        };
        self.events.schedule(
            ready,
            Event::IcntLeaveSlice {
                slice: slice as u32,
                sm: target.sm,
                delivery,
                bytes,
            },
        );
    }

    fn send_to_dram(
        &mut self,
        slice: usize,
        ready: Cycle,
        line: LineAddr,
        sectors: SectorMask,
        is_write: bool,
    ) {
        if self.cfg.l2.dram_queue_entries > 0 {
            self.slices[slice].to_dram += 1;
        }
        let loc = self.map.locate(line);
        let req = DramRequest {
            bank: loc.bank,
            row: loc.row,
            bytes: sectors.count() * self.cfg.l2.slice.sector_bytes,
            is_write,
            token: DramToken {
                slice: slice as u32,
                line,
                sectors,
            },
        };
        self.events.schedule(
            ready,
            Event::DramArrive {
                channel: loc.channel as u32,
                req,
            },
        );
    }

    fn run_channel(&mut self, channel: usize, t: Cycle) {
        let mut done = std::mem::take(&mut self.scratch_dram);
        done.clear();
        let next = self.channels[channel]
            .dram
            .service(self.ratio.to_mem(t), &mut done);
        for c in &done {
            let at = self.ratio.to_core(c.done) + self.cfg.dram.latency;
            self.events.schedule(at, Event::L2Fill(c.token));
        }
        self.scratch_dram = done;
        if self.cfg.l2.dram_queue_entries > 0 {
            self.admit_to_dram(channel, t);
        }
        if let Some(m) = next {
            let at = self.ratio.to_core(m).max(t + Cycles::new(1));
            let ch = &mut self.channels[channel];
            if at < ch.wake {
                ch.wake = at;
                self.events.schedule(
                    at,
                    Event::DramService {
                        channel: channel as u32,
                    },
                );
            }
        }
    }

    /// `l2.dram_queue_entries`: the requests channel `channel` admitted to its scheduler
    /// free their slices' entries; a slice stopped for want of one looks up again.
    fn admit_to_dram(&mut self, channel: usize, t: Cycle) {
        let limit = self.cfg.l2.dram_queue_entries;
        let mut woken = std::mem::take(&mut self.scratch_slices);
        woken.clear();
        let Self {
            channels, slices, ..
        } = self;
        channels[channel].dram.take_admitted(|token| {
            let sl = &mut slices[token.slice as usize];
            sl.to_dram -= 1;
            if sl.dram_full && sl.to_dram < limit {
                sl.dram_full = false;
                woken.push(token.slice);
            }
        });
        for &slice in &woken {
            self.kick_slice(slice as usize, t);
        }
        self.scratch_slices = woken;
    }

    /// The reply FIFO of SM `s` at `t` (its `SmReply`): the SM takes its head reply if it
    /// has arrived, the SM took none this cycle and, for a fill, its L1's fill port is
    /// free; otherwise it tries again when it can. A reply taken frees its entry of the
    /// ejection buffer and wakes the slices it refused.
    fn take_reply(&mut self, t: Cycle, s: usize) {
        let m = &mut self.sms[s];
        m.reply_at = Cycle::NEVER;
        let Some(&(arrival, delivery)) = m.replies.front() else {
            return;
        };
        let mut at = arrival.max(m.next_take);
        if let Delivery::Fill { l1, .. } = delivery {
            at = at.max(m.l1[l1.index()].fill_free);
        }
        if at > t {
            m.reply_at = at;
            self.events.schedule(at, Event::SmReply { sm: s as u32 });
            return;
        }
        m.replies.pop_front();
        if t > arrival {
            m.fill_stats.delayed_replies += 1;
            m.fill_stats.reply_wait_cycles += (t - arrival).get();
        }
        // GPGPU-Sim's LD/ST unit handles the head of its response FIFO once per cycle.
        m.next_take = t + Cycles::new(1);
        if let Some(&(next, _)) = m.replies.front() {
            let at = next.max(m.next_take);
            m.reply_at = at;
            self.events.schedule(at, Event::SmReply { sm: s as u32 });
        }
        for slice in m.refused_slices.drain(..) {
            // The slices it refused try again next cycle, in the order it refused them.
            self.events.schedule(
                t + Cycles::new(1),
                Event::IcntWake {
                    to_slice: false,
                    source: slice,
                },
            );
        }
        match delivery {
            Delivery::Fill { l1, line, sectors } => {
                let port = &mut self.sms[s].l1[l1.index()];
                if port.fill_cycles.get() > 0 {
                    port.fill_free = t + port.fill_cycles;
                }
                self.l1_fill(t, s, l1, line, sectors);
            }
            Delivery::Done(id) => self.part_done(id, t),
        }
    }

    /// A read's data from DRAM reaches its slice at `t`. With `l2.slice.fill_port_bytes`
    /// it takes the slice's fill port, after the fills waiting for it (the DRAM-to-L2
    /// queue), and does not hold the data port; without, it fills at once.
    fn l2_fill(&mut self, t: Cycle, token: DramToken) {
        if self.l2_fill_cycles.get() > 0 {
            let slice = token.slice as usize;
            let cycles = self.l2_fill_port_cycles(token.sectors);
            let sl = &mut self.slices[slice];
            if sl.fills.is_empty() && sl.fill_free <= t {
                sl.fill_free = t + cycles;
                return self.l2_fill_now(t, token);
            }
            sl.fills.push_back((t, token));
            if !sl.fill_scheduled {
                sl.fill_scheduled = true;
                let at = sl.fill_free.max(t);
                self.events.schedule(
                    at,
                    Event::L2FillPort {
                        slice: slice as u32,
                    },
                );
            }
            return;
        }
        self.l2_fill_now(t, token);
    }

    /// `l2.slice.fill_port_bytes`: slice `slice`'s fill port takes its first waiting fill
    /// at `t` and schedules the next.
    fn l2_fill_port(&mut self, t: Cycle, slice: usize) {
        let sl = &mut self.slices[slice];
        sl.fill_scheduled = false;
        // Scheduled only while a fill waits.
        let Some((arrival, token)) = sl.fills.pop_front() else {
            return;
        };
        let cycles = self.l2_fill_port_cycles(token.sectors);
        let sl = &mut self.slices[slice];
        debug_assert!(sl.fill_free <= t);
        sl.fill_free = t + cycles;
        if !sl.fills.is_empty() {
            sl.fill_scheduled = true;
            self.events.schedule(
                sl.fill_free,
                Event::L2FillPort {
                    slice: slice as u32,
                },
            );
        }
        self.l2_fill_stats.delayed_l2_fills += 1;
        self.l2_fill_stats.l2_fill_wait_cycles += (t - arrival).get();
        self.l2_fill_now(t, token);
    }

    /// Cycles a fill of `sectors` holds its slice's fill port: one atom's cycles, or
    /// under `l2.sector_lookups` one per sector (GPGPU-Sim splits a request into sector
    /// requests, and each comes back from DRAM as a fill of its own).
    fn l2_fill_port_cycles(&self, sectors: SectorMask) -> Cycles {
        if self.cfg.l2.sector_lookups {
            Cycles::new(self.l2_fill_cycles.get() * u64::from(sectors.count().max(1)))
        } else {
            self.l2_fill_cycles
        }
    }

    fn l2_fill_now(&mut self, t: Cycle, token: DramToken) {
        let slice = token.slice as usize;
        let mut targets = std::mem::take(&mut self.scratch_targets);
        targets.clear();
        let eviction = self.slices[slice]
            .cache
            .fill(token.line, token.sectors, &mut targets);
        for &target in &targets {
            let mut at = t;
            if let Reply::Atomic(_) = target.reply {
                self.slices[slice]
                    .cache
                    .mark_dirty(token.line, target.sectors);
                at = self.atomic_done(slice, t);
            }
            self.reply(slice, token.line, target, at);
        }
        self.scratch_targets = targets;
        if let Some(e) = eviction {
            self.send_to_dram(slice, t, e.line, e.dirty, true);
        }
        // The fill's data passes the data port (unless it has a fill port of its own).
        let fill = self.l2_data_port_cycles(token.sectors);
        let sl = &mut self.slices[slice];
        if self.cfg.l2.slice.data_port_bytes > 0 && self.l2_fill_cycles.get() == 0 {
            sl.port_free = sl.port_free.max(t) + fill;
        }
        if sl.blocked {
            sl.blocked = false;
            self.kick_slice(slice, t);
        }
    }
}

impl FrontEnd<'_> {
    /// Sends a victim of cache `l1` (dirty data, or under CERF a spilled register) to the
    /// L2 from `at` on, after its data read from the integrated array if there is one.
    fn send_victim(&mut self, l1: L1, e: Eviction, at: Cycle) {
        let bytes =
            self.cfg.interconnect.control_bytes + e.dirty.count() * self.cfg.l2.slice.sector_bytes;
        let at = match self.m.array_banks.as_mut() {
            Some(b) if l1 == L1::Data => b.line_data(e.line, at, LineData::Read),
            _ => at,
        };
        self.send_to_l2(at, e.line, e.dirty, PacketKind::Write, bytes);
    }
}

/// What an SM's own events reported to it since the GPU last looked
/// ([`MemorySystem::take_reports`]).
pub struct SmReports<'a> {
    /// Its requests completed, in completion order.
    pub done: std::vec::Drain<'a, Completion>,
    /// The cycles at which its blocked request was accepted.
    pub unblocked: std::vec::Drain<'a, Cycle>,
}

impl SmMemory {
    /// One part of request `id` of this SM is done at `t`; the request completes with its
    /// last part once all its lines were accepted.
    #[inline(always)]
    fn part_done(&mut self, id: RequestId, t: Cycle) {
        let r = &mut self.requests[id.slot()];
        debug_assert!(r.live && r.parts > 0);
        r.parts -= 1;
        if r.parts == 0 && r.accepted {
            self.done.push(Completion { id, at: t });
        }
    }

    /// Frees the slots of the requests in `done` (taken by the GPU next).
    #[inline]
    fn free_done_slots(&mut self) {
        for c in &self.done {
            self.requests[c.id.slot()].live = false;
            self.free_slots.push(c.id.slot);
        }
    }
}

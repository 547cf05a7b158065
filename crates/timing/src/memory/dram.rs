//! One DRAM channel: a memory controller with a request queue, banks with row buffers
//! and a shared data bus, all timed on the DRAM command clock ([`MemCycle`]).
//!
//! Model (open-page policy), all times on the DRAM command clock:
//! - a request to the open row of its bank needs one column command (row hit); to a bank
//!   with no open row an activate, `t_rcd` before the column command; to a bank with
//!   another row open a precharge, `t_rp` before the activate (row miss);
//! - read data starts `t_cl` after the column command, write data `t_wl` after it (`t_cl`
//!   when `t_wl` is 0); the burst then holds the channel's bus for `bytes /
//!   bytes_per_cycle` cycles ([`BandwidthPort`]), a request's bytes rounded up to whole
//!   `atom_bytes` (the burst length times the channel width: a 32-byte sector on a 64-byte
//!   atom costs a 64-byte burst);
//! - command spacing: column commands at least `t_ccd` apart (`t_ccd_l` within one bank
//!   group, bank `b` in group `b mod bank_groups`), activates of different banks `t_rrd`
//!   apart, activates of one bank `t_rc` apart, a precharge no earlier than `t_ras` after
//!   its bank's activate, `t_rtp` after its last read column command and `t_wr` after the
//!   end of its last write data; a read column command no earlier than `t_wtr` after the
//!   end of the channel's last write data. A parameter of 0 is a constraint not modelled;
//! - a bank accepts its next request when its previous burst could be followed back to
//!   back, so row hits to one bank pipeline at bus rate;
//! - one request (command sequence) starts per DRAM cycle per channel;
//! - scheduling over the oldest `queue_window` requests: FCFS serves the oldest when its
//!   bank is ready; FR-FCFS serves the oldest row hit among ready banks, else the oldest
//!   request whose bank is ready.
//!
//! - scheduler admission: a request is *admitted* when it becomes one of the oldest
//!   `queue_window` (on arrival, or when an older one issues); with
//!   [`DramChannel::track_admission`] the channel reports each admitted request's token,
//!   so that the L2 can bound the queue in front of the scheduler (`l2.dram_queue_entries`);
//! - return queue (`return_queue_entries`, GPGPU-Sim's `-gpgpu_dram_return_queue_size`;
//!   0: unbounded): a read holds an entry from its column command until the L2 has taken
//!   its data, the hold set by [`DramChannel::set_return_hold`] after its burst (the
//!   memory system's `dram.latency`); while every entry is held the channel issues no
//!   read (writes still issue), so returns the L2 has not taken stop the reads behind
//!   them.
//!
//! Not modelled: tFAW, refresh, power-down. Writes produce no completion.

use crate::bits::Divisor;
use crate::config::{DramConfig, DramSchedulerPolicy};
use crate::memory::port::BandwidthPort;
use crate::time::{Mem, MemCycle, MemCycles};
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// DRAM counters (summed over channels by the memory system).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DramStats {
    /// Read requests served.
    pub reads: u64,
    /// Write requests served.
    pub writes: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Requests that found their row open.
    pub row_hits: u64,
    /// Requests that had to open a row (bank closed or another row open).
    pub row_misses: u64,
    /// DRAM cycles requests spent queued before their command issued, summed.
    pub queue_cycles: u64,
}

impl std::ops::AddAssign for DramStats {
    fn add_assign(&mut self, o: Self) {
        self.reads += o.reads;
        self.writes += o.writes;
        self.read_bytes += o.read_bytes;
        self.write_bytes += o.write_bytes;
        self.row_hits += o.row_hits;
        self.row_misses += o.row_misses;
        self.queue_cycles += o.queue_cycles;
    }
}

/// A request to one channel, carrying the caller's `token` back on completion.
#[derive(Clone, Copy, Debug)]
pub struct DramRequest<T> {
    /// Bank within the channel.
    pub bank: usize,
    /// Row within the bank.
    pub row: u64,
    /// Bytes to transfer.
    pub bytes: u32,
    /// Write (no completion) or read.
    pub is_write: bool,
    /// Returned with the completion of a read.
    pub token: T,
}

/// A finished read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DramCompletion<T> {
    /// The request's token.
    pub token: T,
    /// DRAM cycle at which the last byte is on the bus.
    pub done: MemCycle,
}

#[derive(Clone, Copy, Debug)]
struct Queued<T> {
    req: DramRequest<T>,
    arrival: MemCycle,
}

#[derive(Clone, Copy, Debug, Default)]
struct Bank {
    open_row: Option<u64>,
    /// When the bank takes its next request.
    ready: MemCycle,
    /// Its last activate (`t_rc`, `t_ras`).
    activated: Option<MemCycle>,
    /// Earliest precharge (`t_ras`, `t_rtp`, `t_wr`).
    precharge_ok: MemCycle,
}

/// Command spacing parameters (see the module docs); zero means not modelled.
#[derive(Clone, Copy, Debug, Default)]
struct Spacing {
    t_ccd: MemCycles,
    t_ccd_l: MemCycles,
    t_rrd: MemCycles,
    t_ras: MemCycles,
    t_rc: MemCycles,
    t_wl: MemCycles,
    t_wtr: MemCycles,
    t_wr: MemCycles,
    t_rtp: MemCycles,
    bank_groups: usize,
    /// The atom in bytes (`None`: bursts are not rounded).
    atom: Option<Divisor>,
}

/// One channel's controller, banks and bus.
#[derive(Clone, Debug)]
pub struct DramChannel<T> {
    t_rcd: MemCycles,
    t_rp: MemCycles,
    t_cl: MemCycles,
    policy: DramSchedulerPolicy,
    window: usize,
    spacing: Spacing,
    banks: Vec<Bank>,
    /// Last column command and its bank group.
    last_column: Option<(MemCycle, usize)>,
    /// Last activate of any bank.
    last_activate: Option<MemCycle>,
    /// End of the last write burst.
    write_data_end: MemCycle,
    queue: VecDeque<Queued<T>>,
    bus: BandwidthPort<Mem>,
    cmd_free: MemCycle,
    stats: DramStats,
    /// Tokens of the requests admitted to the scheduler since the last
    /// [`DramChannel::take_admitted`] (`None`: not tracked).
    admitted: Option<Vec<T>>,
    /// `return_queue_entries` (0: unbounded), the hold after a burst, and when each held
    /// entry is released.
    return_entries: usize,
    return_hold: MemCycles,
    returning: BinaryHeap<Reverse<MemCycle>>,
}

impl<T: Copy> DramChannel<T> {
    /// An idle channel with all banks closed.
    /// The bytes [`DramChannel::new`] allocates for `cfg`, for
    /// [`crate::limits::host_memory_estimate`].
    pub fn memory_estimate(cfg: &DramConfig) -> u64 {
        std::mem::size_of::<Self>() as u64
            + u64::from(cfg.banks) * std::mem::size_of::<Bank>() as u64
    }

    pub fn new(cfg: &DramConfig) -> Self {
        Self {
            t_rcd: cfg.t_rcd,
            t_rp: cfg.t_rp,
            t_cl: cfg.t_cl,
            policy: cfg.scheduler,
            window: cfg.queue_window.max(1) as usize,
            spacing: Spacing {
                t_ccd: cfg.t_ccd,
                t_ccd_l: if cfg.t_ccd_l.is_zero() {
                    cfg.t_ccd
                } else {
                    cfg.t_ccd_l
                },
                t_rrd: cfg.t_rrd,
                t_ras: cfg.t_ras,
                t_rc: cfg.t_rc,
                t_wl: if cfg.t_wl.is_zero() {
                    cfg.t_cl
                } else {
                    cfg.t_wl
                },
                t_wtr: cfg.t_wtr,
                t_wr: cfg.t_wr,
                t_rtp: cfg.t_rtp,
                bank_groups: cfg.bank_groups.max(1) as usize,
                atom: (cfg.atom_bytes > 0).then(|| Divisor::new(u64::from(cfg.atom_bytes))),
            },
            banks: vec![Bank::default(); cfg.banks as usize],
            last_column: None,
            last_activate: None,
            write_data_end: MemCycle::ZERO,
            queue: VecDeque::with_capacity(64),
            bus: BandwidthPort::new(cfg.bytes_per_cycle),
            cmd_free: MemCycle::ZERO,
            stats: DramStats::default(),
            admitted: None,
            return_entries: cfg.return_queue_entries as usize,
            return_hold: MemCycles::ZERO,
            returning: BinaryHeap::new(),
        }
    }

    /// From now on, records the token of every request admitted to the scheduler (see
    /// the module docs), for [`Self::take_admitted`].
    pub fn track_admission(&mut self) {
        self.admitted.get_or_insert_with(Vec::new);
    }

    /// Calls `f` with the token of each request admitted since the last call, in order.
    pub fn take_admitted(&mut self, mut f: impl FnMut(T)) {
        if let Some(a) = self.admitted.as_mut() {
            for t in a.drain(..) {
                f(t);
            }
        }
    }

    /// How long after its burst a read's return-queue entry stays held: the time the L2
    /// takes to receive the data (default 0).
    pub fn set_return_hold(&mut self, hold: MemCycles) {
        self.return_hold = hold;
    }

    /// Counters so far.
    pub fn stats(&self) -> &DramStats {
        &self.stats
    }

    /// Requests waiting for their command.
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    /// Queues `req`, arrived at `at`. Call [`Self::service`] at `at` afterwards.
    pub fn push(&mut self, req: DramRequest<T>, at: MemCycle) {
        // Arrivals are in time order, so the queue is sorted by arrival (removals keep
        // it so): [`Self::service`] and [`Self::pick`] rely on it.
        debug_assert!(self.queue.back().is_none_or(|q| q.arrival <= at));
        self.queue.push_back(Queued { req, arrival: at });
        if self.queue.len() <= self.window {
            if let Some(a) = self.admitted.as_mut() {
                a.push(req.token);
            }
        }
    }

    /// Issues every command that can issue at or before `now`, appending finished reads
    /// to `done`. Returns when it must be called next (`None` when the queue is empty).
    pub fn service(
        &mut self,
        now: MemCycle,
        done: &mut Vec<DramCompletion<T>>,
    ) -> Option<MemCycle> {
        let mut d = self.cmd_free;
        loop {
            let window = self.queue.len().min(self.window);
            if window == 0 {
                return None;
            }
            // The queue is in arrival order: its front arrived first.
            let first_arrival = self.queue.front().map_or(MemCycle::NEVER, |q| q.arrival);
            d = d.max(first_arrival);
            if d > now {
                return Some(d);
            }
            let reads_from = self.reads_allowed_from(d);
            match self.pick(d, window, reads_from) {
                Ok(i) => {
                    self.issue(i, d, done);
                    d = self.cmd_free;
                }
                // Nothing can issue at `d`: jump to the next time a bank becomes ready
                // or a request arrives (always later than `d`).
                Err(next) => d = next,
            }
        }
    }

    /// The first cycle from `d` on at which the return queue lets a read issue (`d` when
    /// it is unbounded or has a free entry), releasing the entries whose hold is over.
    fn reads_allowed_from(&mut self, d: MemCycle) -> MemCycle {
        if self.return_entries == 0 {
            return d;
        }
        while self.returning.peek().is_some_and(|r| r.0 <= d) {
            self.returning.pop();
        }
        if self.returning.len() < self.return_entries {
            d
        } else {
            self.returning.peek().map_or(d, |r| r.0)
        }
    }

    /// The queue index to issue at `d`, or a later cycle at which one might be ready (no
    /// later than the first such cycle). Reads are eligible from `reads_from` on.
    fn pick(&self, d: MemCycle, window: usize, reads_from: MemCycle) -> Result<usize, MemCycle> {
        let mut next = MemCycle::NEVER;
        if reads_from > d {
            next = reads_from;
        }
        let held = |q: &Queued<T>| !q.req.is_write && reads_from > d;
        match self.policy {
            DramSchedulerPolicy::Fcfs => {
                if let Some(q) = self.queue.front().filter(|q| !held(q)) {
                    let at = q.arrival.max(self.banks[q.req.bank].ready);
                    if at <= d {
                        return Ok(0);
                    }
                    next = at;
                }
            }
            DramSchedulerPolicy::FrFcfs => {
                // One pass: the first ready row hit wins, else the oldest ready request.
                let mut oldest_ready = None;
                for (i, q) in self.queue.iter().take(window).enumerate() {
                    if q.arrival > d {
                        // This and every later request arrive after `d` (arrival order);
                        // none is ready before this one arrives.
                        next = next.min(q.arrival);
                        break;
                    }
                    if held(q) {
                        continue;
                    }
                    let bank = &self.banks[q.req.bank];
                    if bank.ready > d {
                        next = next.min(bank.ready);
                    } else if bank.open_row == Some(q.req.row) {
                        return Ok(i);
                    } else if oldest_ready.is_none() {
                        oldest_ready = Some(i);
                    }
                }
                if let Some(i) = oldest_ready {
                    return Ok(i);
                }
            }
        }
        Err(if next == MemCycle::NEVER {
            d + MemCycles::new(1)
        } else {
            next
        })
    }

    fn issue(&mut self, i: usize, d: MemCycle, done: &mut Vec<DramCompletion<T>>) {
        let Some(Queued { req, arrival }) = self.queue.remove(i) else {
            return;
        };
        if let (Some(a), Some(q)) = (
            self.admitted.as_mut(),
            self.queue.get(self.window.wrapping_sub(1)),
        ) {
            // The request that was just outside the window is now inside it.
            a.push(q.req.token);
        }
        let sp = self.spacing;
        // Bank groups are few (1 to 4), and a division per request showed in profiles.
        let group = if sp.bank_groups == 1 {
            0
        } else {
            req.bank % sp.bank_groups
        };
        let bank = &mut self.banks[req.bank];
        // When the row is open for a column command.
        let row_open = match bank.open_row {
            Some(r) if r == req.row => {
                self.stats.row_hits += 1;
                d
            }
            open => {
                self.stats.row_misses += 1;
                let mut act = d;
                if open.is_some() {
                    act = d.max(bank.precharge_ok) + self.t_rp;
                }
                if let Some(a) = bank.activated.filter(|_| !sp.t_rc.is_zero()) {
                    act = act.max(a + sp.t_rc);
                }
                if let Some(a) = self.last_activate.filter(|_| !sp.t_rrd.is_zero()) {
                    act = act.max(a + sp.t_rrd);
                }
                bank.activated = Some(act);
                bank.precharge_ok = act + sp.t_ras;
                self.last_activate = Some(act);
                act + self.t_rcd
            }
        };
        let mut column = row_open;
        if let Some((c, g)) = self.last_column {
            let gap = if g == group { sp.t_ccd_l } else { sp.t_ccd };
            if !gap.is_zero() {
                column = column.max(c + gap);
            }
        }
        if !req.is_write && !sp.t_wtr.is_zero() {
            column = column.max(self.write_data_end + sp.t_wtr);
        }
        self.last_column = Some((column, group));
        let bytes = match sp.atom {
            Some(a) => a.div_ceil(u64::from(req.bytes)) * a.divisor(),
            None => u64::from(req.bytes),
        };
        let data_delay = if req.is_write { sp.t_wl } else { self.t_cl };
        let burst = self.bus.reserve(column + data_delay, bytes);
        bank.open_row = Some(req.row);
        bank.precharge_ok = if req.is_write {
            self.write_data_end = self.write_data_end.max(burst.end);
            if sp.t_wr.is_zero() {
                bank.precharge_ok
            } else {
                bank.precharge_ok.max(burst.end + sp.t_wr)
            }
        } else {
            bank.precharge_ok.max(column + sp.t_rtp)
        };
        // The next column command to this bank may issue so that its data follows this
        // burst back to back.
        bank.ready = MemCycle::new(burst.end.get().saturating_sub(data_delay.get()))
            .max(column + MemCycles::new(1));
        self.cmd_free = d + MemCycles::new(1);
        self.stats.queue_cycles += (d - arrival).get();
        if req.is_write {
            self.stats.writes += 1;
            self.stats.write_bytes += u64::from(req.bytes);
        } else {
            self.stats.reads += 1;
            self.stats.read_bytes += u64::from(req.bytes);
            if self.return_entries > 0 {
                self.returning.push(Reverse(burst.end + self.return_hold));
            }
            done.push(DramCompletion {
                token: req.token,
                done: burst.end,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(policy: DramSchedulerPolicy) -> DramConfig {
        DramConfig {
            channels: 1,
            banks: 4,
            row_bytes: 2048,
            t_rcd: MemCycles::new(12),
            t_rp: MemCycles::new(12),
            t_cl: MemCycles::new(12),
            bytes_per_cycle: 32,
            latency: crate::time::Cycles::new(0),
            scheduler: policy,
            queue_window: 16,
            t_ccd: MemCycles::ZERO,
            t_ccd_l: MemCycles::ZERO,
            t_rrd: MemCycles::ZERO,
            t_ras: MemCycles::ZERO,
            t_rc: MemCycles::ZERO,
            t_wl: MemCycles::ZERO,
            t_wtr: MemCycles::ZERO,
            t_wr: MemCycles::ZERO,
            t_rtp: MemCycles::ZERO,
            bank_groups: 1,
            atom_bytes: 0,
            address_mapping: None,
            return_queue_entries: 0,
        }
    }

    fn req(bank: usize, row: u64, token: u32) -> DramRequest<u32> {
        DramRequest {
            bank,
            row,
            bytes: 128,
            is_write: false,
            token,
        }
    }

    /// Runs the channel until empty; completions in completion order.
    fn drain(ch: &mut DramChannel<u32>) -> Vec<DramCompletion<u32>> {
        let mut done = vec![];
        let mut now = MemCycle::ZERO;
        while let Some(next) = ch.service(now, &mut done) {
            now = next;
        }
        done
    }

    #[test]
    fn closed_row_then_hit_then_miss_latencies() {
        let mut ch = DramChannel::new(&cfg(DramSchedulerPolicy::FrFcfs));
        let mut done = vec![];
        ch.push(req(0, 7, 0), MemCycle::new(0));
        ch.service(MemCycle::new(0), &mut done);
        // t_rcd + t_cl + 128 B / 32 B per cycle.
        assert_eq!(done[0].done, MemCycle::new(12 + 12 + 4));
        ch.push(req(0, 7, 1), MemCycle::new(100));
        ch.service(MemCycle::new(100), &mut done);
        assert_eq!(done[1].done, MemCycle::new(100 + 12 + 4), "row hit");
        ch.push(req(0, 8, 2), MemCycle::new(200));
        ch.service(MemCycle::new(200), &mut done);
        assert_eq!(done[2].done, MemCycle::new(200 + 36 + 4), "row miss");
        let s = ch.stats();
        assert_eq!((s.row_hits, s.row_misses, s.read_bytes), (1, 2, 384));
    }

    #[test]
    fn row_hits_stream_at_bus_rate() {
        let mut ch = DramChannel::new(&cfg(DramSchedulerPolicy::FrFcfs));
        for t in 0..100 {
            ch.push(req(0, 0, t), MemCycle::ZERO);
        }
        let done = drain(&mut ch);
        assert_eq!(
            done.last().map(|c| c.done),
            Some(MemCycle::new(24 + 100 * 4))
        );
        assert_eq!(ch.stats().row_hits, 99);
    }

    #[test]
    fn fr_fcfs_serves_row_hits_first_and_fcfs_does_not() {
        let order = |policy| {
            let mut ch = DramChannel::new(&cfg(policy));
            ch.push(req(0, 1, 0), MemCycle::ZERO);
            ch.push(req(0, 2, 1), MemCycle::ZERO);
            ch.push(req(0, 1, 2), MemCycle::ZERO);
            let done = drain(&mut ch);
            let s = *ch.stats();
            (
                done.iter().map(|c| c.token).collect::<Vec<_>>(),
                s.row_hits,
                done[2].done,
            )
        };
        let (fr, fr_hits, fr_end) = order(DramSchedulerPolicy::FrFcfs);
        let (fc, fc_hits, fc_end) = order(DramSchedulerPolicy::Fcfs);
        assert_eq!(fr, vec![0, 2, 1]);
        assert_eq!(fc, vec![0, 1, 2]);
        assert_eq!((fr_hits, fc_hits), (1, 0));
        assert!(fr_end < fc_end, "{fr_end} vs {fc_end}");
    }

    #[test]
    fn different_banks_overlap_their_activations() {
        let mut ch = DramChannel::new(&cfg(DramSchedulerPolicy::Fcfs));
        for b in 0..4 {
            ch.push(req(b, 0, b as u32), MemCycle::ZERO);
        }
        let done = drain(&mut ch);
        // Commands at cycles 0..3; each burst of 4 right after the previous one.
        assert_eq!(done[3].done, MemCycle::new(24 + 16));
    }

    fn timed(policy: DramSchedulerPolicy) -> DramConfig {
        DramConfig {
            t_ccd: MemCycles::new(2),
            t_ccd_l: MemCycles::new(3),
            t_rrd: MemCycles::new(6),
            t_ras: MemCycles::new(28),
            t_rc: MemCycles::new(40),
            t_wl: MemCycles::new(4),
            t_wtr: MemCycles::new(5),
            t_wr: MemCycles::new(12),
            t_rtp: MemCycles::new(2),
            bank_groups: 4,
            atom_bytes: 64,
            banks: 8,
            ..cfg(policy)
        }
    }

    fn req_bytes(
        bank: usize,
        row: u64,
        bytes: u32,
        is_write: bool,
        token: u32,
    ) -> DramRequest<u32> {
        DramRequest {
            bank,
            row,
            bytes,
            is_write,
            token,
        }
    }

    #[test]
    fn activates_of_different_banks_are_t_rrd_apart() {
        let mut ch = DramChannel::new(&timed(DramSchedulerPolicy::Fcfs));
        ch.push(req(0, 0, 0), MemCycle::ZERO);
        ch.push(req(1, 0, 1), MemCycle::ZERO);
        let done = drain(&mut ch);
        // Bank 0: activate at 0, column at 12, data 24..28 (128 B at 32 B/cycle).
        assert_eq!(done[0].done, MemCycle::new(12 + 12 + 4));
        // Bank 1 (another group): activate at 6 (tRRD), column at 18; data after
        // bank 0's burst is free from 28: 30..34.
        assert_eq!(done[1].done, MemCycle::new(6 + 12 + 12 + 4));
    }

    #[test]
    fn a_row_conflict_waits_for_t_ras_and_t_rc() {
        let mut ch = DramChannel::new(&timed(DramSchedulerPolicy::Fcfs));
        ch.push(req(0, 0, 0), MemCycle::ZERO);
        ch.push(req(0, 1, 1), MemCycle::ZERO);
        let done = drain(&mut ch);
        // Precharge no earlier than tRAS = 28 after the activate at 0, activate at
        // max(28 + tRP, 0 + tRC) = 40, column at 52, data 64..68.
        assert_eq!(done[1].done, MemCycle::new(40 + 12 + 12 + 4));
        assert_eq!(ch.stats().row_misses, 2);
    }

    #[test]
    fn column_commands_respect_t_ccd_by_bank_group() {
        let gap = |b1: usize| {
            let mut ch = DramChannel::new(&timed(DramSchedulerPolicy::Fcfs));
            // Open both rows first, long before.
            ch.push(req_bytes(0, 0, 32, false, 0), MemCycle::ZERO);
            ch.push(req_bytes(b1, 0, 32, false, 1), MemCycle::ZERO);
            drain(&mut ch);
            ch.push(req_bytes(0, 0, 32, false, 2), MemCycle::new(100));
            ch.push(req_bytes(b1, 0, 32, false, 3), MemCycle::new(100));
            let done = drain(&mut ch);
            (done[0].done.get(), done[1].done.get())
        };
        // 32-byte reads move a 64-byte atom: 2 cycles of bus each. Same group (banks 0
        // and 4): columns at 100 and 103 (tCCDL); other group (bank 1): 100 and 102.
        assert_eq!(gap(4), (100 + 12 + 2, 103 + 12 + 2));
        assert_eq!(gap(1), (100 + 12 + 2, 102 + 12 + 2));
    }

    #[test]
    fn a_read_after_a_write_waits_for_t_wtr() {
        let mut ch = DramChannel::new(&timed(DramSchedulerPolicy::Fcfs));
        ch.push(req_bytes(0, 0, 64, false, 0), MemCycle::ZERO);
        drain(&mut ch);
        ch.push(req_bytes(0, 0, 64, true, 1), MemCycle::new(100));
        ch.push(req_bytes(1, 0, 64, false, 2), MemCycle::new(100));
        let done = drain(&mut ch);
        // Write column at 100, data 104..106 (WL 4); the read's activate at 101 (bank 1
        // closed; tRRD from the activate at 0 long past), column no earlier than
        // 113 (tRCD) and 106 + tWTR = 111: 113, data 125..127.
        assert_eq!(done[0].done, MemCycle::new(113 + 12 + 2));
    }

    #[test]
    fn a_sequential_stream_hits_open_rows_and_a_row_strided_one_does_not() {
        let run = |row_of: &dyn Fn(u64) -> (usize, u64)| {
            let mut ch = DramChannel::new(&timed(DramSchedulerPolicy::FrFcfs));
            for i in 0..64u64 {
                let (bank, row) = row_of(i);
                ch.push(req(bank, row, i as u32), MemCycle::new(i * 4));
            }
            let done = drain(&mut ch);
            (*ch.stats(), done.iter().map(|c| c.done).max())
        };
        // 2 KB rows of 128-byte lines: 16 lines per row of one bank.
        let (seq, seq_end) = run(&|i| (((i / 16) % 4) as usize, i / 64));
        let (strided, strided_end) = run(&|i| (0, i));
        assert_eq!((seq.row_hits, seq.row_misses), (60, 4));
        assert_eq!((strided.row_hits, strided.row_misses), (0, 64));
        assert!(strided_end > seq_end);
        // Every strided access waits a full row cycle (tRC = 40) after the previous one.
        assert_eq!(strided_end, Some(MemCycle::new(63 * 40 + 12 + 12 + 4)));
    }

    #[test]
    fn a_full_return_queue_holds_reads_until_the_l2_has_taken_a_return() {
        // Reads to two closed banks at 0. Unbounded: the second's command at 1, column at
        // 13, its burst after the first's (24..28): 28..32. With one return entry held 10
        // cycles after the burst, the second waits for 28 + 10 = 38: column 50, data
        // 62..66. A write is not held behind it.
        let run = |entries: u32| {
            let mut c = cfg(DramSchedulerPolicy::FrFcfs);
            c.return_queue_entries = entries;
            let mut ch = DramChannel::new(&c);
            ch.set_return_hold(MemCycles::new(10));
            ch.push(req(0, 0, 0), MemCycle::ZERO);
            ch.push(req(1, 0, 1), MemCycle::ZERO);
            ch.push(req_bytes(2, 0, 128, true, 2), MemCycle::ZERO);
            let done: Vec<u64> = drain(&mut ch).iter().map(|c| c.done.get()).collect();
            (done, ch.stats().writes)
        };
        assert_eq!(run(0), (vec![28, 32], 1));
        assert_eq!(run(2), (vec![28, 32], 1));
        assert_eq!(run(1), (vec![28, 66], 1));
    }

    #[test]
    fn requests_are_admitted_to_the_scheduler_as_older_ones_issue() {
        // A window of 16: of 18 requests the first 16 are admitted on arrival; each issue
        // admits the oldest one outside the window.
        let mut ch = DramChannel::new(&cfg(DramSchedulerPolicy::FrFcfs));
        ch.track_admission();
        for t in 0..18 {
            ch.push(req(0, 0, t), MemCycle::ZERO);
        }
        let mut admitted = vec![];
        ch.take_admitted(|t| admitted.push(t));
        assert_eq!(admitted, (0..16).collect::<Vec<_>>());
        let mut done = vec![];
        ch.service(MemCycle::ZERO, &mut done);
        admitted.clear();
        ch.take_admitted(|t| admitted.push(t));
        assert_eq!(admitted, vec![16], "one issue at cycle 0");
        drain(&mut ch);
        admitted.clear();
        ch.take_admitted(|t| admitted.push(t));
        assert_eq!(admitted, vec![17]);
        // Untracked: nothing recorded.
        let mut quiet = DramChannel::new(&cfg(DramSchedulerPolicy::FrFcfs));
        quiet.push(req(0, 0, 0), MemCycle::ZERO);
        quiet.take_admitted(|_| panic!("not tracked"));
    }
}

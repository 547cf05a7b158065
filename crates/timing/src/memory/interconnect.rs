//! The SM <-> L2 interconnect: a crossbar with one port per SM and one per L2 slice in
//! each direction. A packet holds its source and destination ports for
//! `bytes / bytes_per_cycle` cycles (first come, first served on each port), then
//! arrives `latency` cycles later. Queuing appears as a later start when a port is busy.
//!
//! Simplifications: no virtual channels or credit flow control; buffers are unbounded
//! except at SM injection, where the memory system stalls issue once
//! `input_buffer_bytes` are queued.

use crate::bits::Divisor;
use crate::config::InterconnectConfig;
use crate::memory::port::BandwidthPort;
use crate::time::{Core, Cycle, Cycles};
use serde::Serialize;

/// Interconnect counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct InterconnectStats {
    /// Packets from SMs to L2 slices.
    pub packets_to_l2: u64,
    /// Bytes from SMs to L2 slices.
    pub bytes_to_l2: u64,
    /// Packets from L2 slices to SMs.
    pub packets_to_sm: u64,
    /// Bytes from L2 slices to SMs.
    pub bytes_to_sm: u64,
    /// Cycles packets waited for a busy port, summed.
    pub queue_cycles: u64,
}

/// The crossbar's port calendars.
#[derive(Clone, Debug)]
pub struct Interconnect {
    latency: Cycles,
    /// Flit size in bytes (`None`: packets are not rounded to flits).
    flit: Option<Divisor>,
    sm_out: Vec<BandwidthPort<Core>>,
    slice_in: Vec<BandwidthPort<Core>>,
    slice_out: Vec<BandwidthPort<Core>>,
    sm_in: Vec<BandwidthPort<Core>>,
    stats: InterconnectStats,
}

fn ports(n: usize, bpc: u32) -> Vec<BandwidthPort<Core>> {
    (0..n).map(|_| BandwidthPort::new(bpc)).collect()
}

fn send(
    src: &mut BandwidthPort<Core>,
    dst: &mut BandwidthPort<Core>,
    ready: Cycle,
    bytes: u64,
    latency: Cycles,
    queue_cycles: &mut u64,
) -> Cycle {
    let start = src.start_slot(ready).max(dst.start_slot(ready));
    let t = src.reserve_at(start, bytes);
    dst.reserve_at(start, bytes);
    *queue_cycles += t.start.saturating_since(ready).get();
    t.end + latency
}

fn leave(port: &mut BandwidthPort<Core>, ready: Cycle, bytes: u32, queue: &mut u64) -> Cycle {
    let t = port.reserve(ready, u64::from(bytes));
    *queue += t.start.saturating_since(ready).get();
    t.start
}

fn enter(
    port: &mut BandwidthPort<Core>,
    start: Cycle,
    bytes: u32,
    latency: Cycles,
    queue: &mut u64,
) -> Cycle {
    let t = port.reserve(start, u64::from(bytes));
    *queue += t.start.saturating_since(start).get();
    t.end + latency
}

impl Interconnect {
    /// An idle crossbar between `sms` SMs and `slices` L2 slices.
    pub fn new(cfg: &InterconnectConfig, sms: usize, slices: usize) -> Self {
        let b = cfg.bytes_per_cycle;
        Self {
            latency: cfg.latency,
            flit: (cfg.flit_bytes > 0).then(|| Divisor::new(u64::from(cfg.flit_bytes))),
            sm_out: ports(sms, b),
            slice_in: ports(slices, b),
            slice_out: ports(slices, b),
            sm_in: ports(sms, b),
            stats: InterconnectStats::default(),
        }
    }

    /// Counters so far.
    pub fn stats(&self) -> &InterconnectStats {
        &self.stats
    }

    /// Sends `bytes` from SM `sm` to slice `slice`, ready at `ready`; returns arrival.
    /// Bytes of port bandwidth a packet of `bytes` occupies (whole flits).
    fn on_wire(&self, bytes: u32) -> u32 {
        match &self.flit {
            None => bytes,
            Some(f) => (f.div_ceil(u64::from(bytes)) * f.divisor()) as u32,
        }
    }

    pub fn to_l2(&mut self, sm: usize, slice: usize, ready: Cycle, bytes: u32) -> Cycle {
        let bytes = self.on_wire(bytes);
        self.stats.packets_to_l2 += 1;
        self.stats.bytes_to_l2 += u64::from(bytes);
        let (src, dst) = (&mut self.sm_out[sm], &mut self.slice_in[slice]);
        send(
            src,
            dst,
            ready,
            u64::from(bytes),
            self.latency,
            &mut self.stats.queue_cycles,
        )
    }

    /// Sends `bytes` from slice `slice` to SM `sm`, ready at `ready`; returns arrival.
    pub fn to_sm(&mut self, slice: usize, sm: usize, ready: Cycle, bytes: u32) -> Cycle {
        let bytes = self.on_wire(bytes);
        self.stats.packets_to_sm += 1;
        self.stats.bytes_to_sm += u64::from(bytes);
        let (src, dst) = (&mut self.slice_out[slice], &mut self.sm_in[sm]);
        send(
            src,
            dst,
            ready,
            u64::from(bytes),
            self.latency,
            &mut self.stats.queue_cycles,
        )
    }

    /// Bytes SM `sm` has queued for injection at `now`.
    /// Two-stage sending, for callers that reserve in time order: a packet ready at
    /// `ready` on SM `sm`'s output port starts leaving at the returned cycle (after
    /// earlier packets of that port). Call [`Interconnect::enter_slice`] at that cycle.
    pub fn leave_sm(&mut self, sm: usize, ready: Cycle, bytes: u32) -> Cycle {
        let bytes = self.on_wire(bytes);
        self.stats.packets_to_l2 += 1;
        self.stats.bytes_to_l2 += u64::from(bytes);
        leave(
            &mut self.sm_out[sm],
            ready,
            bytes,
            &mut self.stats.queue_cycles,
        )
    }

    /// The second stage of [`Interconnect::leave_sm`]: the packet that started leaving
    /// at `start` crosses to slice `slice`'s input port; returns its arrival.
    pub fn enter_slice(&mut self, slice: usize, start: Cycle, bytes: u32) -> Cycle {
        let bytes = self.on_wire(bytes);
        let port = &mut self.slice_in[slice];
        enter(
            port,
            start,
            bytes,
            self.latency,
            &mut self.stats.queue_cycles,
        )
    }

    /// Like [`Interconnect::leave_sm`], from slice `slice` towards the SMs.
    pub fn leave_slice(&mut self, slice: usize, ready: Cycle, bytes: u32) -> Cycle {
        let bytes = self.on_wire(bytes);
        self.stats.packets_to_sm += 1;
        self.stats.bytes_to_sm += u64::from(bytes);
        leave(
            &mut self.slice_out[slice],
            ready,
            bytes,
            &mut self.stats.queue_cycles,
        )
    }

    /// Like [`Interconnect::enter_slice`], into SM `sm`'s input port.
    pub fn enter_sm(&mut self, sm: usize, start: Cycle, bytes: u32) -> Cycle {
        let bytes = self.on_wire(bytes);
        let port = &mut self.sm_in[sm];
        enter(
            port,
            start,
            bytes,
            self.latency,
            &mut self.stats.queue_cycles,
        )
    }

    pub fn injection_backlog(&self, sm: usize, now: Cycle) -> u64 {
        self.sm_out[sm].backlog_bytes(now)
    }

    /// The first cycle at which SM `sm`'s injection backlog is at most `bytes`.
    pub fn injection_drained_to(&self, sm: usize, bytes: u64) -> Cycle {
        self.sm_out[sm].drained_to(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn icnt() -> Interconnect {
        let cfg = InterconnectConfig {
            latency: Cycles::new(10),
            bytes_per_cycle: 32,
            control_bytes: 8,
            input_buffer_bytes: 256,
            flit_bytes: 0,
        };
        Interconnect::new(&cfg, 2, 2)
    }

    #[test]
    fn unloaded_packet_takes_serialization_plus_latency() {
        let mut x = icnt();
        assert_eq!(
            x.to_l2(0, 0, Cycle::new(100), 136),
            Cycle::new(100 + 5 + 10)
        );
        assert_eq!(x.stats().queue_cycles, 0);
    }

    #[test]
    fn two_sms_to_one_slice_queue_at_the_destination() {
        let mut x = icnt();
        assert_eq!(x.to_l2(0, 1, Cycle::new(0), 128), Cycle::new(14));
        assert_eq!(x.to_l2(1, 1, Cycle::new(0), 128), Cycle::new(18));
        // A different slice is not delayed.
        assert_eq!(
            x.to_l2(1, 0, Cycle::new(0), 128),
            Cycle::new(22),
            "source port busy"
        );
        assert_eq!(
            x.to_sm(0, 1, Cycle::new(0), 128),
            Cycle::new(14),
            "other direction free"
        );
        assert_eq!(x.stats().queue_cycles, 4 + 8);
    }

    #[test]
    fn packets_travel_in_whole_flits() {
        let cfg = InterconnectConfig {
            latency: Cycles::new(3),
            bytes_per_cycle: 40,
            control_bytes: 8,
            input_buffer_bytes: 512,
            flit_bytes: 40,
        };
        let mut x = Interconnect::new(&cfg, 1, 1);
        // 8-byte request: one flit; 32-byte sector + 8-byte header: one flit; a 128-byte
        // line + header (136 bytes): four flits.
        assert_eq!(x.to_l2(0, 0, Cycle::new(0), 8), Cycle::new(1 + 3));
        assert_eq!(x.to_sm(0, 0, Cycle::new(0), 40), Cycle::new(1 + 3));
        assert_eq!(x.to_sm(0, 0, Cycle::new(10), 136), Cycle::new(10 + 4 + 3));
        assert_eq!(x.stats().bytes_to_sm, 40 + 160);
    }

    #[test]
    fn two_stage_sending_does_not_hold_the_destination_for_a_busy_source() {
        let mut x = icnt();
        // SM 0 queues four 128-byte packets (4 cycles each) for slice 0 at cycle 0.
        let starts: Vec<Cycle> = (0..4).map(|_| x.leave_sm(0, Cycle::new(0), 128)).collect();
        assert_eq!(starts, [0, 4, 8, 12].map(Cycle::new));
        // Each crosses when it starts leaving. SM 1's packet at cycle 5 waits for the
        // burst in progress (to cycle 8), not for SM 0's packets still queued at SM 0.
        assert_eq!(x.enter_slice(0, starts[0], 128), Cycle::new(4 + 10));
        assert_eq!(x.enter_slice(0, starts[1], 128), Cycle::new(8 + 10));
        let s1 = x.leave_sm(1, Cycle::new(5), 8);
        assert_eq!(
            x.enter_slice(0, s1, 8),
            Cycle::new(9 + 10),
            "queued 3 cycles"
        );
        assert_eq!(x.stats().queue_cycles, 4 + 8 + 12 + 3);
    }

    #[test]
    fn stream_is_bandwidth_limited() {
        let mut x = icnt();
        let mut last = Cycle::ZERO;
        for _ in 0..1000 {
            last = x.to_sm(0, 0, Cycle::ZERO, 128);
        }
        assert_eq!(last, Cycle::new(1000 * 128 / 32 + 10));
    }
}

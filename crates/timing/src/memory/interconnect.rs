//! The SM <-> L2 interconnect: a crossbar with one port per SM and one per L2 slice in
//! each direction. A packet holds its source and destination ports for
//! `bytes / bytes_per_cycle` cycles (first come, first served on each port), then
//! arrives `latency` cycles later. Queuing appears as a later start when a port is busy.
//!
//! With `head_of_line_blocking`, a packet also holds its source port until its
//! destination port takes it, so the packets behind it wait (one virtual channel per
//! port); without it, a packet that has started leaving waits for its destination
//! without holding its source.
//!
//! Simplifications: no credit flow control; buffers are unbounded except at SM
//! injection, where the memory system stalls issue once `input_buffer_bytes` are queued.

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
    bytes_per_cycle: u32,
    head_of_line_blocking: bool,
    slice_in: Vec<BandwidthPort<Core>>,
    slice_out: Vec<BandwidthPort<Core>>,
    sm_in: Vec<BandwidthPort<Core>>,
    /// `head_of_line_blocking`: the cycle until which each slice's head packet holds its
    /// output port while crossing; empty when off. (An SM's is in its [`SmOutPort`].)
    slice_held: Vec<Cycle>,
    stats: InterconnectStats,
}

/// An SM's output port on the crossbar, with the counters of its packets' first stage
/// ([`SmOutPort::leave`]). It is kept apart from [`Interconnect`], in the SM's memory
/// front end, so that a packet joining it (the SM half of sending) reads and writes only
/// its SM's state: the ground for stepping SMs in windows (`docs/parallel.md`). The
/// crossing to a slice ([`Interconnect::enter_slice`]) is the shared half; with
/// `head_of_line_blocking` it also holds this port.
#[derive(Clone, Debug)]
pub struct SmOutPort {
    port: BandwidthPort<Core>,
    flit: Option<Divisor>,
    /// `head_of_line_blocking`: the cycle until which its head packet holds it while
    /// crossing (`None` when off).
    held: Option<Cycle>,
    /// Packets and bytes that joined it and the cycles they queued there (summed into
    /// [`InterconnectStats`] by the memory system).
    packets: u64,
    bytes: u64,
    queue_cycles: u64,
}

impl SmOutPort {
    /// A packet of `bytes` ready at `ready` joins the port: it starts leaving at the
    /// returned cycle (after earlier packets). Call [`Interconnect::enter_slice`] at that
    /// cycle.
    pub fn leave(&mut self, ready: Cycle, bytes: u32) -> Cycle {
        let bytes = on_wire(self.flit, bytes);
        self.packets += 1;
        self.bytes += u64::from(bytes);
        leave(&mut self.port, ready, bytes, &mut self.queue_cycles)
    }

    /// Bytes queued for injection at `now`.
    pub fn backlog(&self, now: Cycle) -> u64 {
        self.port.backlog_bytes(now)
    }

    /// The first cycle at which the backlog is at most `bytes`.
    pub fn drained_to(&self, bytes: u64) -> Cycle {
        self.port.drained_to(bytes)
    }

    /// Adds its counters to `stats`.
    pub fn count_into(&self, stats: &mut InterconnectStats) {
        stats.packets_to_l2 += self.packets;
        stats.bytes_to_l2 += self.bytes;
        stats.queue_cycles += self.queue_cycles;
    }
}

/// Bytes of port bandwidth a packet of `bytes` occupies (whole flits of `flit`).
#[inline(always)]
fn on_wire(flit: Option<Divisor>, bytes: u32) -> u32 {
    match &flit {
        None => bytes,
        Some(f) => (f.div_ceil(u64::from(bytes)) * f.divisor()) as u32,
    }
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

/// The second stage of sending: the packet that started leaving `src` at `start` crosses
/// to `dst`. With head-of-line blocking (`held` is the source's entry) a source still
/// held by an earlier packet refuses: `Err(retry cycle)`; the crossing holds the source
/// until the destination has taken the packet.
fn enter(
    (src, held): (&mut BandwidthPort<Core>, Option<&mut Cycle>),
    dst: &mut BandwidthPort<Core>,
    start: Cycle,
    bytes: u32,
    latency: Cycles,
    queue: &mut u64,
) -> Result<Cycle, Cycle> {
    if let Some(h) = held.as_deref().copied().filter(|&h| h > start) {
        *queue += h.saturating_since(start).get();
        return Err(h);
    }
    let t = dst.reserve(start, u64::from(bytes));
    *queue += t.start.saturating_since(start).get();
    if let Some(h) = held {
        *h = t.end;
        src.hold_until(t.end);
    }
    Ok(t.end + latency)
}

impl Interconnect {
    /// An idle crossbar between `sms` SMs and `slices` L2 slices.
    pub fn new(cfg: &InterconnectConfig, sms: usize, slices: usize) -> Self {
        let b = cfg.bytes_per_cycle;
        let held = |n: usize| {
            let n = if cfg.head_of_line_blocking { n } else { 0 };
            vec![Cycle::ZERO; n]
        };
        Self {
            latency: cfg.latency,
            flit: (cfg.flit_bytes > 0).then(|| Divisor::new(u64::from(cfg.flit_bytes))),
            bytes_per_cycle: b,
            head_of_line_blocking: cfg.head_of_line_blocking,
            slice_in: ports(slices, b),
            slice_out: ports(slices, b),
            sm_in: ports(sms, b),
            slice_held: held(slices),
            stats: InterconnectStats::default(),
        }
    }

    /// An idle output port for one SM (each SM's front end owns its own).
    pub fn sm_out_port(&self) -> SmOutPort {
        SmOutPort {
            port: BandwidthPort::new(self.bytes_per_cycle),
            flit: self.flit,
            held: self.head_of_line_blocking.then_some(Cycle::ZERO),
            packets: 0,
            bytes: 0,
            queue_cycles: 0,
        }
    }

    /// Counters so far.
    pub fn stats(&self) -> &InterconnectStats {
        &self.stats
    }

    /// Sends `bytes` from SM `sm` to slice `slice`, ready at `ready`; returns arrival.
    /// Bytes of port bandwidth a packet of `bytes` occupies (whole flits).
    fn on_wire(&self, bytes: u32) -> u32 {
        on_wire(self.flit, bytes)
    }

    /// Sends `bytes` from SM port `sm` to slice `slice` in one stage, ready at `ready`;
    /// returns arrival. (Counted in `sm`'s counters, as [`SmOutPort::leave`].)
    pub fn to_l2(&mut self, sm: &mut SmOutPort, slice: usize, ready: Cycle, bytes: u32) -> Cycle {
        let bytes = self.on_wire(bytes);
        sm.packets += 1;
        sm.bytes += u64::from(bytes);
        let dst = &mut self.slice_in[slice];
        send(
            &mut sm.port,
            dst,
            ready,
            u64::from(bytes),
            self.latency,
            &mut sm.queue_cycles,
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

    /// The second stage of [`SmOutPort::leave`] (two-stage sending, for callers that
    /// reserve in time order): the packet that started leaving SM port `sm` at `start`
    /// crosses to slice `slice`'s input port; returns its arrival, or with
    /// `head_of_line_blocking`, `Err(cycle)` to call again at `cycle` while `sm` is still
    /// held by an earlier packet.
    pub fn enter_slice(
        &mut self,
        sm: &mut SmOutPort,
        slice: usize,
        start: Cycle,
        bytes: u32,
    ) -> Result<Cycle, Cycle> {
        let bytes = self.on_wire(bytes);
        enter(
            (&mut sm.port, sm.held.as_mut()),
            &mut self.slice_in[slice],
            start,
            bytes,
            self.latency,
            &mut self.stats.queue_cycles,
        )
    }

    /// Like [`SmOutPort::leave`], from slice `slice` towards the SMs.
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

    /// Like [`Interconnect::enter_slice`], from slice `slice` into SM `sm`'s input port.
    pub fn enter_sm(
        &mut self,
        slice: usize,
        sm: usize,
        start: Cycle,
        bytes: u32,
    ) -> Result<Cycle, Cycle> {
        let bytes = self.on_wire(bytes);
        enter(
            (&mut self.slice_out[slice], self.slice_held.get_mut(slice)),
            &mut self.sm_in[sm],
            start,
            bytes,
            self.latency,
            &mut self.stats.queue_cycles,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn free_cfg() -> InterconnectConfig {
        InterconnectConfig {
            latency: Cycles::new(10),
            bytes_per_cycle: 32,
            control_bytes: 8,
            input_buffer_bytes: 256,
            flit_bytes: 0,
            head_of_line_blocking: false,
            injection_backpressure: Default::default(),
            ejection_buffer_entries: 0,
        }
    }

    fn icnt() -> Interconnect {
        Interconnect::new(&free_cfg(), 2, 2)
    }

    /// The crossbar's counters with those of its SM ports.
    fn counted(x: &Interconnect, sms: &[SmOutPort]) -> InterconnectStats {
        let mut s = *x.stats();
        for p in sms {
            p.count_into(&mut s);
        }
        s
    }

    #[test]
    fn unloaded_packet_takes_serialization_plus_latency() {
        let mut x = icnt();
        let mut sm = x.sm_out_port();
        assert_eq!(
            x.to_l2(&mut sm, 0, Cycle::new(100), 136),
            Cycle::new(100 + 5 + 10)
        );
        assert_eq!(counted(&x, &[sm]).queue_cycles, 0);
    }

    #[test]
    fn two_sms_to_one_slice_queue_at_the_destination() {
        let mut x = icnt();
        let mut sms = [x.sm_out_port(), x.sm_out_port()];
        assert_eq!(x.to_l2(&mut sms[0], 1, Cycle::new(0), 128), Cycle::new(14));
        assert_eq!(x.to_l2(&mut sms[1], 1, Cycle::new(0), 128), Cycle::new(18));
        // A different slice is not delayed.
        assert_eq!(
            x.to_l2(&mut sms[1], 0, Cycle::new(0), 128),
            Cycle::new(22),
            "source port busy"
        );
        assert_eq!(
            x.to_sm(0, 1, Cycle::new(0), 128),
            Cycle::new(14),
            "other direction free"
        );
        assert_eq!(counted(&x, &sms).queue_cycles, 4 + 8);
    }

    #[test]
    fn packets_travel_in_whole_flits() {
        let cfg = InterconnectConfig {
            latency: Cycles::new(3),
            bytes_per_cycle: 40,
            control_bytes: 8,
            input_buffer_bytes: 512,
            flit_bytes: 40,
            head_of_line_blocking: false,
            injection_backpressure: Default::default(),
            ejection_buffer_entries: 0,
        };
        let mut x = Interconnect::new(&cfg, 1, 1);
        let mut sm = x.sm_out_port();
        // 8-byte request: one flit; 32-byte sector + 8-byte header: one flit; a 128-byte
        // line + header (136 bytes): four flits.
        assert_eq!(x.to_l2(&mut sm, 0, Cycle::new(0), 8), Cycle::new(1 + 3));
        assert_eq!(x.to_sm(0, 0, Cycle::new(0), 40), Cycle::new(1 + 3));
        assert_eq!(x.to_sm(0, 0, Cycle::new(10), 136), Cycle::new(10 + 4 + 3));
        assert_eq!(x.stats().bytes_to_sm, 40 + 160);
        assert_eq!(counted(&x, &[sm]).bytes_to_l2, 40);
    }

    #[test]
    fn two_stage_sending_does_not_hold_the_destination_for_a_busy_source() {
        let mut x = icnt();
        let mut sms = [x.sm_out_port(), x.sm_out_port()];
        // SM 0 queues four 128-byte packets (4 cycles each) for slice 0 at cycle 0.
        let starts: Vec<Cycle> = (0..4).map(|_| sms[0].leave(Cycle::new(0), 128)).collect();
        assert_eq!(starts, [0, 4, 8, 12].map(Cycle::new));
        assert_eq!(sms[0].backlog(Cycle::new(2)), 4 * 128 - 2 * 32);
        assert_eq!(sms[0].drained_to(128), Cycle::new(12));
        // Each crosses when it starts leaving. SM 1's packet at cycle 5 waits for the
        // burst in progress (to cycle 8), not for SM 0's packets still queued at SM 0.
        assert_eq!(
            x.enter_slice(&mut sms[0], 0, starts[0], 128),
            Ok(Cycle::new(4 + 10))
        );
        assert_eq!(
            x.enter_slice(&mut sms[0], 0, starts[1], 128),
            Ok(Cycle::new(8 + 10))
        );
        let s1 = sms[1].leave(Cycle::new(5), 8);
        assert_eq!(
            x.enter_slice(&mut sms[1], 0, s1, 8),
            Ok(Cycle::new(9 + 10)),
            "queued 3 cycles"
        );
        assert_eq!(counted(&x, &sms).queue_cycles, 4 + 8 + 12 + 3);
        assert_eq!(counted(&x, &sms).packets_to_l2, 5);
    }

    /// Two-stage sending of `packets` (source slice, destination SM), all ready at cycle
    /// 0 in that order, as the memory system drives it: every packet leaves at cycle 0,
    /// then each crosses at the cycle it starts leaving, in time order, a refused one
    /// again at the cycle its refusal names. Returns their arrivals.
    fn replies(x: &mut Interconnect, packets: &[(usize, usize)], bytes: u32) -> Vec<Cycle> {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        let mut crossings: BinaryHeap<Reverse<(Cycle, usize)>> = packets
            .iter()
            .enumerate()
            .map(|(i, &(slice, _))| Reverse((x.leave_slice(slice, Cycle::ZERO, bytes), i)))
            .collect();
        let mut arrivals = vec![Cycle::NEVER; packets.len()];
        while let Some(Reverse((t, i))) = crossings.pop() {
            let (slice, sm) = packets[i];
            match x.enter_sm(slice, sm, t, bytes) {
                Ok(arrival) => arrivals[i] = arrival,
                Err(retry) => {
                    assert!(retry > t, "a refusal names a later cycle");
                    crossings.push(Reverse((retry, i)));
                }
            }
        }
        arrivals
    }

    #[test]
    fn head_of_line_blocking_holds_a_source_behind_its_busy_destination() {
        // 128-byte replies (4 cycles each): slice 0 sends two to SM 0; slice 1 sends one to
        // SM 1, one to SM 0, then one to SM 1 again.
        let order = [(0, 0), (0, 0), (1, 1), (1, 0), (1, 1)];
        let mut free = icnt();
        // Without blocking, slice 1's packet for SM 0 leaves at 4 and waits for SM 0's
        // port (to 8) without holding slice 1, whose last packet leaves at 8 and crosses.
        assert_eq!(
            replies(&mut free, &order, 128),
            [14, 18, 14, 22, 22].map(Cycle::new)
        );
        let mut cfg = free_cfg();
        cfg.head_of_line_blocking = true;
        let mut held = Interconnect::new(&cfg, 2, 2);
        // With it, that packet holds slice 1 until it has crossed (8 to 12), so the last
        // packet, for idle SM 1, is refused at 8 and crosses 12 to 16.
        assert_eq!(
            replies(&mut held, &order, 128),
            [14, 18, 14, 22, 26].map(Cycle::new)
        );
        // Later packets of the held source queue behind the hold.
        assert_eq!(held.leave_slice(1, Cycle::new(9), 8), Cycle::new(16));
        // The refusal's 4 cycles are queueing: slice 1's later packet waited 8 to 12.
        assert_eq!(
            (free.stats().queue_cycles, held.stats().queue_cycles),
            (20, 24 + 7)
        );
        // Without blocking the source's later packet leaves when it is ready.
        assert_eq!(free.leave_slice(1, Cycle::new(9), 8), Cycle::new(12));
    }

    #[test]
    fn head_of_line_blocking_runs_a_lone_packet_as_without_it() {
        let mut cfg = free_cfg();
        cfg.head_of_line_blocking = true;
        let mut held = Interconnect::new(&cfg, 2, 2);
        let mut sm = held.sm_out_port();
        let start = sm.leave(Cycle::new(100), 136);
        assert_eq!(
            held.enter_slice(&mut sm, 0, start, 136),
            Ok(Cycle::new(100 + 5 + 10))
        );
        assert_eq!(counted(&held, &[sm]).queue_cycles, 0);
    }

    #[test]
    fn head_of_line_blocking_holds_the_sm_port_its_front_end_owns() {
        let mut cfg = free_cfg();
        for hol in [false, true] {
            cfg.head_of_line_blocking = hol;
            let mut x = Interconnect::new(&cfg, 2, 2);
            let (mut a, mut b) = (x.sm_out_port(), x.sm_out_port());
            // SM 1's 128-byte packet takes slice 0's input port for cycles 0 to 4.
            let s = b.leave(Cycle::ZERO, 128);
            assert_eq!(x.enter_slice(&mut b, 0, s, 128), Ok(Cycle::new(14)));
            // SM 0's starts leaving at 0 and crosses 4 to 8: with blocking it holds SM
            // 0's port until 8, so SM 0's next packet, ready at 1, starts leaving at 8
            // instead of 4, and SM 0's backlog at 1 counts the hold.
            let s = a.leave(Cycle::ZERO, 128);
            assert_eq!(x.enter_slice(&mut a, 0, s, 128), Ok(Cycle::new(18)));
            let next = if hol { 8 } else { 4 };
            assert_eq!(a.backlog(Cycle::new(1)), (next - 1) * 32, "hol {hol}");
            assert_eq!(a.leave(Cycle::new(1), 8), Cycle::new(next), "hol {hol}");
        }
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

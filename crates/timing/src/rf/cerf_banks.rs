//! The banks of CERF's integrated array (Jing et al., MICRO 2016, §III.B and §IV): one
//! set of data banks and tag banks that the register side (operand reads, result writes,
//! register tag lookups) and the L1D side (line lookups, hits, fills, stores, write-backs
//! of dirty victims and spilled registers) share, as the paper's array does ("the data
//! access bandwidth in the integrated memory is set equal to the RF bandwidth in the
//! baseline").
//!
//! Geometry: a line's data bank is its set modulo `register_file.banks`, and its tag bank
//! its set modulo `register_file.cerf.tag_banks` (§III.C: the set-index bits next to the
//! block offset select the tag bank). A register line is indexed like any line (its
//! reg-mem address), so consecutive registers go to consecutive banks. Each data bank has
//! the register file's ports (`read_ports_per_bank`, `write_ports_per_bank`, or one
//! shared pool under `port_sharing = "shared"`), each moving one 128-byte line (one warp
//! register) per cycle; each tag bank serves `tag_lookups_per_bank` lookups per cycle.
//!
//! Who waits: the memory system's line accesses book the first free slot at or after the
//! cycle they want (their data is then late by the difference, a counted delay); the
//! register file's accesses are arbitrated by the baseline's arbiter in the ports the
//! line accesses left for the cycle (refused ones retry next cycle, counted as bank
//! conflicts), and its grants are then recorded so that later line accesses see them.
//! Line accesses of a cycle come first because the SM runs its LD/ST stage before
//! operand collection. A fill's data goes to the waiting load as it arrives (the array
//! write is booked but does not delay the load).
//!
//! Bookings are kept in a ring of [`HORIZON`] cycles per bank, stamped with their cycle,
//! so a slot from a cycle long past reads as free. Under `banking = "separate"` nothing is
//! limited and only the counts are kept.

use crate::config::{CerfBanking, GpuConfig, PortSharing};
use crate::memory::cache::LineAddr;
use crate::memory::hashing::Indexer;
use crate::time::Cycle;

/// Cycles ahead of the requested one that a booking may land (a bank that busy is
/// saturated; the booking takes the last slot of the window, counted in `overflows`).
pub const HORIZON: u64 = 64;

/// The array's set index, data bank and tag bank of a line.
#[derive(Clone, Debug)]
pub struct ArrayGeometry {
    indexer: Indexer,
    data_banks: u64,
    tag_banks: u64,
}

impl ArrayGeometry {
    /// The geometry of a validated CERF config's array.
    pub fn new(cfg: &GpuConfig) -> Self {
        let a = cfg.l1d_array();
        ArrayGeometry {
            indexer: Indexer::new(&a.set_index, a.sets(), u64::from(a.line_bytes)),
            // The register file's banks under its technology (LTRF Table 2's multiplier
            // included): the array's data banks are the register file's.
            data_banks: u64::from(cfg.register_file.mrf_banks().max(1)),
            tag_banks: u64::from(cfg.register_file.cerf.tag_banks.max(1)),
        }
    }

    /// The set of `line`.
    pub fn set(&self, line: LineAddr) -> u64 {
        self.indexer.index(line.0)
    }

    /// The data bank of `line`.
    pub fn data_bank(&self, line: LineAddr) -> usize {
        (self.set(line) % self.data_banks) as usize
    }

    /// The tag bank of `line`.
    pub fn tag_bank(&self, line: LineAddr) -> usize {
        (self.set(line) % self.tag_banks) as usize
    }
}

/// Ports of each bank used per cycle over the next [`HORIZON`] cycles.
#[derive(Clone, Debug)]
struct PortCalendar {
    ports: u32,
    banks: usize,
    /// `slots[(cycle % HORIZON) * banks + bank]`: (cycle, ports used then); one cycle's
    /// banks are adjacent, as the register side reads them all every cycle.
    slots: Vec<(Cycle, u32)>,
}

impl PortCalendar {
    fn new(banks: usize, ports: u32) -> Self {
        PortCalendar {
            ports,
            banks,
            slots: vec![(Cycle::NEVER, 0); banks * HORIZON as usize],
        }
    }

    fn slot(&self, bank: usize, at: Cycle) -> usize {
        (at.get() % HORIZON) as usize * self.banks + bank
    }

    fn used(&self, bank: usize, at: Cycle) -> u32 {
        match self.slots[self.slot(bank, at)] {
            (c, n) if c == at => n,
            _ => 0,
        }
    }

    fn add(&mut self, bank: usize, at: Cycle, n: u32) {
        let i = self.slot(bank, at);
        let s = &mut self.slots[i];
        if s.0 != at {
            *s = (at, 0);
        }
        s.1 = s.1.saturating_add(n);
    }

    /// Takes a port of `bank` at `at` if one is free.
    fn take(&mut self, bank: usize, at: Cycle) -> bool {
        let free = self.used(bank, at) < self.ports;
        if free {
            self.add(bank, at, 1);
        }
        free
    }

    /// Takes the first free port of `bank` at or after `from`; returns its cycle and
    /// whether the window was full (the last slot is taken anyway).
    fn book(&mut self, bank: usize, from: Cycle) -> (Cycle, bool) {
        for d in 0..HORIZON {
            let at = Cycle::new(from.get() + d);
            if self.take(bank, at) {
                return (at, false);
            }
        }
        let last = Cycle::new(from.get() + HORIZON - 1);
        self.add(bank, last, 1);
        (last, true)
    }
}

/// Counters of the array's banks over the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ArrayBankStats {
    /// L1D-side tag lookups (one per line access; a register's tag lookups are the
    /// register file's).
    pub line_tag_lookups: u64,
    /// L1D-side data reads: read hits, and victims read out to be written to the L2
    /// (dirty lines and spilled registers).
    pub line_data_reads: u64,
    /// L1D-side data writes: fills and stores that write the array.
    pub line_data_writes: u64,
    /// Line lookups that found their tag bank's slots taken and went later.
    pub line_tag_conflicts: u64,
    /// Cycles those lookups were late, summed.
    pub line_tag_delay_cycles: u64,
    /// Line data accesses that found their data bank's ports taken and went later.
    pub line_data_conflicts: u64,
    /// Cycles those accesses were late, summed.
    pub line_data_delay_cycles: u64,
    /// Register tag lookups refused for a taken tag bank slot (retried next cycle).
    pub register_tag_conflicts: u64,
    /// Bookings past the [`HORIZON`] (the bank saturated): should stay 0.
    pub overflows: u64,
}

/// A data access of a line by the L1D side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineData {
    /// Data read out of the array (a hit, or a victim going to the L2).
    Read,
    /// Data written into the array (a fill, a store).
    Write,
}

/// The integrated array's banks of one SM. See the module docs.
#[derive(Clone, Debug)]
pub struct ArrayBanks {
    geometry: ArrayGeometry,
    limited: bool,
    shared_ports: bool,
    reads: PortCalendar,
    /// Write ports; under shared ports, every access's.
    writes: PortCalendar,
    tags: PortCalendar,
    /// The latest cycle an L1D-side data access was booked at (before it, the register
    /// side finds nothing taken).
    latest_line_data: Cycle,
    /// Under non-pipelined banks: each (cycle, data bank) at which the L1D side first
    /// took a port, since the register side last looked ([`Self::line_ports_taken_in`]).
    /// The SM sleeps while the register side waits for a bank's port; the register
    /// side counts its refusals of the skipped cycles where a line held a port too.
    line_bookings: Option<Vec<(Cycle, u16)>>,
    /// While the register side sleeps waiting for a port ([`Self::watch_states`]): the
    /// array's ways per state just before the first L1D event of each cycle that had one
    /// (fills and retried accesses change the array at memory events the SM does not
    /// see), so that the state samples of the skipped cycles can be taken at wake-up.
    state_log: Vec<(Cycle, [u64; 4])>,
    watching_states: bool,
    stats: ArrayBankStats,
}

impl ArrayBanks {
    /// The banks of a validated CERF config's array.
    pub fn new(cfg: &GpuConfig) -> Self {
        let rf = &cfg.register_file;
        let c = &rf.cerf;
        let limited = c.banking == CerfBanking::Integrated;
        // As [`ArrayGeometry`]: the register file's banks under its technology.
        let banks = rf.mrf_banks().max(1) as usize;
        let shared_ports = rf.port_sharing == PortSharing::Shared;
        let (reads, writes, tags) = if limited {
            (
                PortCalendar::new(banks, rf.read_ports_per_bank),
                PortCalendar::new(banks, rf.write_ports_per_bank),
                PortCalendar::new(
                    c.tag_banks.max(1) as usize,
                    c.tag_lookups_per_bank(rf.mrf_banks(), rf.read_ports_per_bank),
                ),
            )
        } else {
            let none = || PortCalendar::new(0, u32::MAX);
            (none(), none(), none())
        };
        ArrayBanks {
            geometry: ArrayGeometry::new(cfg),
            limited,
            shared_ports,
            reads,
            writes,
            tags,
            latest_line_data: Cycle::ZERO,
            line_bookings: (limited && rf.mrf_model().occupancy.get() > 1)
                .then(|| Vec::with_capacity(256)),
            state_log: Vec::new(),
            watching_states: false,
            stats: ArrayBankStats::default(),
        }
    }

    /// From now on, logs the array's ways per state before each cycle's first L1D event
    /// (the register side sleeps and will sample the skipped cycles at wake-up).
    pub fn watch_states(&mut self) {
        self.watching_states = true;
        self.state_log.clear();
    }

    /// Stops [`Self::watch_states`] and forgets the log.
    pub fn stop_watching_states(&mut self) {
        self.watching_states = false;
        self.state_log.clear();
    }

    /// Whether an L1D event at `t` must log the ways per state first
    /// ([`Self::log_states`]): watched, and no event of `t` logged yet.
    pub fn wants_states_at(&self, t: Cycle) -> bool {
        self.watching_states && self.state_log.last().is_none_or(|&(at, _)| at != t)
    }

    /// The array's ways per state `counts` just before an L1D event at `t`.
    pub fn log_states(&mut self, t: Cycle, counts: [u64; 4]) {
        self.state_log.push((t, counts));
    }

    /// The log since [`Self::watch_states`], oldest first.
    pub fn state_log(&self) -> &[(Cycle, [u64; 4])] {
        &self.state_log
    }

    /// Cycles of `[from, until)` at which the L1D side took a port of data bank `bank`
    /// (booked so far; always 0 under pipelined banks, where the SM does not sleep
    /// through the register side's waits).
    pub fn line_ports_taken_in(&self, bank: u8, from: Cycle, until: Cycle) -> u64 {
        self.line_bookings.as_ref().map_or(0, |v| {
            v.iter()
                .filter(|&&(t, b)| b == u16::from(bank) && from <= t && t < until)
                .count() as u64
        })
    }

    /// Forgets the line bookings at or before `now` (the register side has arbitrated
    /// that cycle, and counted the cycles it skipped).
    pub fn forget_line_bookings_through(&mut self, now: Cycle) {
        if let Some(v) = &mut self.line_bookings {
            v.retain(|&(t, _)| t > now);
        }
    }

    /// The geometry.
    pub fn geometry(&self) -> &ArrayGeometry {
        &self.geometry
    }

    /// Counters so far.
    pub fn stats(&self) -> &ArrayBankStats {
        &self.stats
    }

    /// The L1D side looks `line` up at `at`: returns the cycle its tag bank serves it.
    pub fn line_lookup(&mut self, line: LineAddr, at: Cycle) -> Cycle {
        self.stats.line_tag_lookups += 1;
        if !self.limited {
            return at;
        }
        let (t, overflow) = self.tags.book(self.geometry.tag_bank(line), at);
        self.stats.overflows += u64::from(overflow);
        if t > at {
            self.stats.line_tag_conflicts += 1;
            self.stats.line_tag_delay_cycles += (t - at).get();
        }
        t
    }

    /// The L1D side reads or writes `line`'s data from `at` on: returns the cycle its
    /// data bank serves it.
    pub fn line_data(&mut self, line: LineAddr, at: Cycle, what: LineData) -> Cycle {
        match what {
            LineData::Read => self.stats.line_data_reads += 1,
            LineData::Write => self.stats.line_data_writes += 1,
        }
        if !self.limited {
            return at;
        }
        let bank = self.geometry.data_bank(line);
        let calendar = if what == LineData::Read && !self.shared_ports {
            &mut self.reads
        } else {
            &mut self.writes
        };
        let (t, overflow) = calendar.book(bank, at);
        self.latest_line_data = self.latest_line_data.max(t);
        if let Some(v) = &mut self.line_bookings {
            // One entry per (cycle, bank) the L1D side holds a port of (the register
            // side asks whether any is taken).
            if self.reads.used(bank, t) + self.writes.used(bank, t) == 1 {
                v.push((t, bank as u16));
            }
        }
        self.stats.overflows += u64::from(overflow);
        if t > at {
            self.stats.line_data_conflicts += 1;
            self.stats.line_data_delay_cycles += (t - at).get();
        }
        t
    }

    /// The register side looks up the tag of register line `line` at `now`: false when
    /// its tag bank has no slot left this cycle (retry next cycle).
    pub fn register_tag_lookup(&mut self, line: LineAddr, now: Cycle) -> bool {
        if !self.limited || self.tags.take(self.geometry.tag_bank(line), now) {
            return true;
        }
        self.stats.register_tag_conflicts += 1;
        false
    }

    /// Ports of each data bank the L1D side took at `now`: `reads` and `writes` (under
    /// shared ports, all in `writes`), for the register file's arbiter.
    pub fn ports_taken(&self, now: Cycle, reads: &mut [u32], writes: &mut [u32]) {
        if !self.limited || now > self.latest_line_data {
            reads.fill(0);
            writes.fill(0);
            return;
        }
        for b in 0..reads.len().min(writes.len()) {
            reads[b] = if self.shared_ports {
                0
            } else {
                self.reads.used(b, now)
            };
            writes[b] = self.writes.used(b, now);
        }
    }

    /// Records the register file's grants at `now`: `reads_used` and `writes_used` are its
    /// arbiter's port counts after arbitration, which include `taken` ([`Self::ports_taken`]'s
    /// `reads`, `writes`).
    pub fn register_grants(
        &mut self,
        now: Cycle,
        (reads_used, writes_used): (&[u32], &[u32]),
        (taken_reads, taken_writes): (&[u32], &[u32]),
    ) {
        if !self.limited {
            return;
        }
        let n = reads_used
            .len()
            .min(writes_used.len())
            .min(taken_reads.len())
            .min(taken_writes.len());
        for b in 0..n {
            if self.shared_ports {
                // The arbiter's read count starts from its write count (the shared port).
                let own = reads_used[b].saturating_sub(taken_writes[b]);
                if own > 0 {
                    self.writes.add(b, now, own);
                }
            } else {
                let r = reads_used[b].saturating_sub(taken_reads[b]);
                let w = writes_used[b].saturating_sub(taken_writes[b]);
                if r > 0 {
                    self.reads.add(b, now, r);
                }
                if w > 0 {
                    self.writes.add(b, now, w);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn banks(overrides: &[&str]) -> ArrayBanks {
        let mut o = vec!["register_file.design=\"cerf\""];
        o.extend_from_slice(overrides);
        ArrayBanks::new(&crate::rf::test_support::config("gtx480", &o))
    }

    /// gtx480: 256 sets, 8 data banks, 4 tag banks with 2 lookups each (8 banks x 1 read
    /// port / 4).
    #[test]
    fn lines_map_to_banks_by_set_and_serialize_on_a_bank() {
        let mut b = banks(&[]);
        let line = |set: u64| LineAddr(0x1000_0000 + set * 128);
        assert_eq!(b.geometry().data_bank(line(9)), 1);
        assert_eq!(b.geometry().tag_bank(line(9)), 1);
        let t = Cycle::new(100);
        // Two reads of bank 1 (sets 1 and 9): one read port, so the second is a cycle late.
        assert_eq!(b.line_data(line(1), t, LineData::Read), t);
        assert_eq!(b.line_data(line(9), t, LineData::Read), Cycle::new(101));
        // A write uses the write port: not late.
        assert_eq!(b.line_data(line(17), t, LineData::Write), t);
        // Tag bank 1 serves two lookups a cycle (sets 1, 5, 9 share it).
        assert_eq!(b.line_lookup(line(1), t), t);
        assert_eq!(b.line_lookup(line(5), t), t);
        assert_eq!(b.line_lookup(line(9), t), Cycle::new(101));
        assert!(!b.register_tag_lookup(line(13), t));
        assert!(b.register_tag_lookup(line(2), t));
        let s = *b.stats();
        assert_eq!(
            (
                s.line_data_conflicts,
                s.line_data_delay_cycles,
                s.line_tag_conflicts
            ),
            (1, 1, 1)
        );
        assert_eq!(s.register_tag_conflicts, 1);
        // What the register side sees at 100 and 101.
        let (mut r, mut w) = ([0; 8], [0; 8]);
        b.ports_taken(t, &mut r, &mut w);
        assert_eq!((r[1], w[1], r[0]), (1, 1, 0));
        b.ports_taken(Cycle::new(101), &mut r, &mut w);
        assert_eq!(r[1], 1);
        // A slot from a cycle HORIZON ago reads as free.
        b.ports_taken(Cycle::new(100 + HORIZON), &mut r, &mut w);
        assert_eq!((r[1], w[1]), (0, 0));
    }

    #[test]
    fn register_grants_are_seen_by_later_line_accesses() {
        let mut b = banks(&[]);
        let t = Cycle::new(7);
        let (mut r, mut w) = ([0; 8], [0; 8]);
        b.ports_taken(t, &mut r, &mut w);
        // The arbiter granted a read of bank 3 and a write of bank 4.
        let mut ru = r;
        let mut wu = w;
        ru[3] += 1;
        wu[4] += 1;
        b.register_grants(t, (&ru, &wu), (&r, &w));
        let line3 = LineAddr(3 * 128);
        let line4 = LineAddr(4 * 128);
        assert_eq!(b.line_data(line3, t, LineData::Read), Cycle::new(8));
        assert_eq!(b.line_data(line4, t, LineData::Write), Cycle::new(8));
        assert_eq!(b.line_data(line4, t, LineData::Read), t);
    }

    #[test]
    fn shared_ports_serialize_reads_and_writes_and_separate_banking_limits_nothing() {
        let mut b = banks(&["register_file.port_sharing=\"shared\""]);
        let t = Cycle::new(5);
        let l = LineAddr(0);
        assert_eq!(b.line_data(l, t, LineData::Write), t);
        assert_eq!(b.line_data(l, t, LineData::Read), Cycle::new(6));
        let (mut r, mut w) = ([0; 8], [0; 8]);
        b.ports_taken(t, &mut r, &mut w);
        assert_eq!((r[0], w[0]), (0, 1));

        let mut free = banks(&["register_file.cerf.banking=\"separate\""]);
        for _ in 0..10 {
            assert_eq!(free.line_data(l, t, LineData::Read), t);
            assert_eq!(free.line_lookup(l, t), t);
            assert!(free.register_tag_lookup(l, t));
        }
        free.ports_taken(t, &mut r, &mut w);
        assert_eq!((r[0], w[0]), (0, 0));
        assert_eq!(free.stats().line_data_reads, 10);
        assert_eq!(free.stats().line_data_conflicts, 0);
    }

    #[test]
    fn line_bookings_are_logged_once_per_cycle_and_bank_under_slow_banks_only() {
        let mut b = banks(&["register_file.bank_latency=20"]);
        let l = |set: u64| LineAddr(set * 128);
        let t = Cycle::new(10);
        // Two reads of bank 1 (one port: the second goes at 11), a write of it at 10.
        b.line_data(l(1), t, LineData::Read);
        b.line_data(l(9), t, LineData::Read);
        b.line_data(l(17), t, LineData::Write);
        b.line_data(l(2), Cycle::new(30), LineData::Write);
        assert_eq!(b.line_ports_taken_in(1, Cycle::new(10), Cycle::new(12)), 2);
        assert_eq!(b.line_ports_taken_in(1, Cycle::new(11), Cycle::new(40)), 1);
        assert_eq!(b.line_ports_taken_in(2, Cycle::ZERO, Cycle::new(30)), 0);
        assert_eq!(b.line_ports_taken_in(2, Cycle::ZERO, Cycle::new(31)), 1);
        b.forget_line_bookings_through(Cycle::new(11));
        assert_eq!(b.line_ports_taken_in(1, Cycle::ZERO, Cycle::NEVER), 0);
        assert_eq!(b.line_ports_taken_in(2, Cycle::ZERO, Cycle::NEVER), 1);
        // Pipelined banks: the SM never sleeps through a register wait, nothing is kept.
        let mut fast = banks(&[]);
        fast.line_data(l(1), t, LineData::Read);
        assert_eq!(fast.line_ports_taken_in(1, Cycle::ZERO, Cycle::NEVER), 0);
    }

    #[test]
    fn a_saturated_bank_books_the_last_slot_of_the_window() {
        let mut b = banks(&[]);
        let t = Cycle::new(0);
        for _ in 0..HORIZON {
            b.line_data(LineAddr(0), t, LineData::Read);
        }
        assert_eq!(b.stats().overflows, 0);
        assert_eq!(
            b.line_data(LineAddr(0), t, LineData::Read),
            Cycle::new(HORIZON - 1)
        );
        assert_eq!(b.stats().overflows, 1);
    }

    #[test]
    fn bad_tag_bank_settings_are_refused_naming_the_key() {
        use crate::config::{default_configs_dir, GpuConfig};
        use crate::Override;
        let err = |o: &str| {
            let o = [
                Override::parse("register_file.design=\"cerf\"").unwrap(),
                Override::parse(o).unwrap(),
            ];
            GpuConfig::load("gtx480", &default_configs_dir(), &o)
                .unwrap_err()
                .to_string()
        };
        assert!(err("register_file.cerf.tag_banks=3").contains("register_file.cerf.tag_banks"));
        assert!(err("register_file.cerf.tag_banks=0").contains("register_file.cerf.tag_banks"));
        assert!(err("register_file.cerf.tag_lookups_per_bank=0")
            .contains("register_file.cerf.tag_lookups_per_bank"));
        assert!(err("register_file.cerf.banking=\"shared\"").contains("banking"));
    }
}

//! The operand-delivery and energy ledger: the one place that says what one source
//! operand delivery, one result write and one move of a register value between
//! structures cost, for every register-file design.
//!
//! A design never prices or names an energy event itself. It tells its [`Ledger`] what
//! happened to each warp-wide 32-bit register, at the moment it decides it:
//! - [`Ledger::deliver`]: a source register reaches the datapath, served by exactly one
//!   [`Source`];
//! - [`Ledger::write`]: a result register lands in one [`Sink`] (a result that lands in
//!   two structures, ORF and MRF say, is two writes);
//! - [`Ledger::transfer`]: a value moves between structures outside an instruction's
//!   operands and result ([`Transfer`]: fills, writebacks, verify reads);
//! - [`Ledger::charge`]: a structure access that moves no register value (tag lookups,
//!   arbiter requests, WIR's tables, CERF's L1D-side accesses of its array).
//!
//! The rules (`Ledger::deliver` and friends) turn those into event counts per
//! [`Charge`] (a structure and an access kind of `energy::EnergyConfig`), which
//! [`Ledger::events`] reports. Every design's [`super::RegisterFile::energy_events`]
//! is its ledger's events, so the same physical event costs the same in every design.
//!
//! # The rules
//! - **A register leaving a bank of the main storage** (an MRF bank; CERF's integrated
//!   array, which keeps the MRF's banking, CERF §III.B) is a bank read and a crossbar
//!   transfer to the collector side: the banks sit on the far side of the operand
//!   crossbar from the collectors (LTRF Figure 1: "an operand collector … gathers data …
//!   through an arbiter and a large and wide crossbar"). The crossbar is a separate
//!   event because `mrf_read_pj` is the bank alone.
//! - **A register written into a bank of the main storage** is a bank write; its price
//!   (`mrf_write_pj`) includes the result's wire from the datapath, so no crossbar
//!   event is added, whether the value comes from the datapath or from a structure on the
//!   collector side (a writeback).
//! - **An operand that waits in an operand buffer** (the collector unit, Malekeh's
//!   caching collector unit, BOW's operand window: [`OperandBuffer`]) is written into it
//!   when it arrives and read out of it into the datapath. A source the buffer already
//!   holds ([`Source::OperandBuffer`]: a Malekeh CT hit, a BOW window forward) costs the
//!   buffer read alone: no bank, no crossbar.
//! - **A structure inside the datapath needs no crossbar and no buffer**: Gebhart's ORF
//!   and LRF (MICRO'11 §2.2, Table 4: 0.2 mm and 0.05 mm from the private datapath) and
//!   the hardware RFC, which takes the ORF's place (ISCA'11). Their per-access prices
//!   include those wires (`orf_read_pj` and siblings).
//! - **LTRF's register-file cache** sits in front of the collectors ("register file cache
//!   banks are connected to the operand collectors via a crossbar", LTRF §4.2): a cache
//!   read whose price includes its own short (0.2 mm) wire to the collectors, then the
//!   operand buffer. Fills cross the MRF's crossbar ("registers are loaded into the
//!   register file cache from the main register file via a crossbar network").
//! - **A result written into an operand buffer** (Malekeh's kept destinations, BOW's
//!   window) crosses the crossbar to the collector side: Malekeh §3.1 provides "a write
//!   pathway through the crossbar to a dedicated port named D"; BOW's window replaces the
//!   same collector units, so its results take the same path. Then a buffer write.
//! - **A lookup in a tagged structure** is a tag access beside the data access, charged
//!   per 32-bit register looked up, hit or miss: CERF's tags (`CerfTagLookup`, §III.B)
//!   and the hardware RFC's (`RfcTagLookup`: "the RFC must track the register names
//!   from the larger MRF namespace with tags and lookups", Gebhart MICRO'11 §3.1; every
//!   register an instruction reads or writes). The compile-time ORF/LRF has no tags
//!   ("the ORF need not employ tags or incur tag checking energy overheads", §3.1).
//! - **Every access granted by the operand collector's arbiter** (reads and writes of the
//!   MRF's banks and of any bank the design arbitrates with them) is one arbiter request
//!   (`Baseline` charges it where it grants the port).
//! - **WIR**: a reused instruction reads no operand ([`Source::ReuseBuffer`]) and writes
//!   no register; its result, and a result whose value signature matched, is renamed
//!   ([`Sink::Renamed`]). A verify read is an MRF bank read and its trip over the crossbar
//!   ([`Transfer::MrfToDatapath`]), charged once.
//!
//! The ledger is a few fixed arrays of counters, `Copy`, updated on the hot path without
//! allocating.

use crate::rf::EnergyEvent;

/// Where an operand waits between its storage and the datapath.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OperandBuffer {
    /// The baseline's operand collector unit.
    Collector,
    /// Malekeh's caching collector unit.
    Ccu,
    /// BOW's operand window.
    BowWindow,
}

impl OperandBuffer {
    fn read(self) -> Charge {
        match self {
            OperandBuffer::Collector => Charge::CollectorRead,
            OperandBuffer::Ccu => Charge::CcuRead,
            OperandBuffer::BowWindow => Charge::BowWindowRead,
        }
    }

    fn write(self) -> Charge {
        match self {
            OperandBuffer::Collector => Charge::CollectorWrite,
            OperandBuffer::Ccu => Charge::CcuWrite,
            OperandBuffer::BowWindow => Charge::BowWindowWrite,
        }
    }
}

/// The structure that serves one source register of an issued instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// An MRF bank.
    MrfBank,
    /// CERF's integrated array (a register line).
    CerfArray,
    /// LTRF's register-file cache.
    LtrfCache,
    /// Gebhart's hardware register-file cache.
    Rfc,
    /// Gebhart's operand register file.
    Orf,
    /// Gebhart's last result file.
    Lrf,
    /// The design's operand buffer already holds it (Malekeh CT hit, BOW forward).
    OperandBuffer,
    /// WIR: the instruction was reused; its operands are not read.
    ReuseBuffer,
    /// The modern core's constant-bank operand (`sm.constant_operands`): read from the
    /// constant cache and broadcast into the datapath beside the register operands; no
    /// bank, crossbar or operand buffer. The SM delivers these, not a design.
    ConstantCache,
}

impl Source {
    /// Number of sources (the last variant's index plus one).
    const COUNT: usize = Source::ConstantCache as usize + 1;
}

/// A structure one result register lands in (or what happens instead).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sink {
    /// Written to its MRF bank.
    MrfBank,
    /// Written to its line of CERF's integrated array.
    CerfArray,
    /// Written to the warp's partition of LTRF's cache (the register is resident).
    LtrfCache,
    /// Allocated at the tail of the warp's RFC FIFO.
    Rfc,
    /// Written to the ORF (the compiler's level for the result).
    Orf,
    /// Written to the LRF (the compiler's level, or the RFC design's private datapath).
    Lrf,
    /// Kept in the design's operand buffer (Malekeh's port D, BOW's window).
    OperandBuffer,
    /// WIR: mapped onto a register that already holds the value; nothing is written.
    Renamed,
    /// The value is dead before anyone reads it and is written nowhere (the RFC of a
    /// warp whose last lanes exited).
    Dropped,
}

impl Sink {
    /// Number of sinks (the last variant's index plus one).
    const COUNT: usize = Sink::Dropped as usize + 1;
}

/// A register value moved between structures outside an instruction's operands and
/// result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transfer {
    /// An MRF bank read whose value crosses to the datapath without a collector (WIR's
    /// verify reads and the read of a dummy MOV).
    MrfToDatapath,
    /// A value written into an MRF bank by an operation that is no instruction's result
    /// (the write of WIR's dummy MOV).
    DatapathToMrf,
    /// LTRF prefetch: MRF read, crossbar, cache write.
    MrfToLtrfCache,
    /// LTRF writeback: cache read, MRF write.
    LtrfCacheToMrf,
    /// ORF fill by an MRF operand read (Gebhart §4.4): the value also lands in the ORF.
    MrfReadFillsOrf,
    /// RFC writeback: RFC read, MRF write.
    RfcToMrf,
    /// LRF writeback to the MRF: LRF read, MRF write.
    LrfToMrf,
    /// The LRF's value moved down to the RFC: LRF read, RFC write.
    LrfToRfc,
    /// A result kept in the operand buffer leaving it for the banks (BOW-WR's deferred
    /// write): buffer read, MRF write.
    OperandBufferToMrf,
}

/// One event kind the energy model prices: a structure and an access kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Charge {
    MrfRead,
    MrfWrite,
    CollectorRead,
    CollectorWrite,
    CrossbarTransfer,
    ArbiterRequest,
    RfcRead,
    RfcWrite,
    OrfRead,
    OrfWrite,
    LrfRead,
    LrfWrite,
    LtrfCacheRead,
    LtrfCacheWrite,
    CerfDataRead,
    CerfDataWrite,
    CerfTagLookup,
    RfcTagLookup,
    CcuRead,
    CcuWrite,
    BowWindowRead,
    BowWindowWrite,
    WirReuseBufferLookup,
    WirReuseBufferWrite,
    WirRenameTableRead,
    WirRenameTableWrite,
    WirVsbLookup,
    WirVsbWrite,
    WirVerifyCacheLookup,
    ConstantCacheRead,
}

impl Charge {
    /// Every charge, in counter order.
    pub const ALL: [Charge; 30] = [
        Charge::MrfRead,
        Charge::MrfWrite,
        Charge::CollectorRead,
        Charge::CollectorWrite,
        Charge::CrossbarTransfer,
        Charge::ArbiterRequest,
        Charge::RfcRead,
        Charge::RfcWrite,
        Charge::OrfRead,
        Charge::OrfWrite,
        Charge::LrfRead,
        Charge::LrfWrite,
        Charge::LtrfCacheRead,
        Charge::LtrfCacheWrite,
        Charge::CerfDataRead,
        Charge::CerfDataWrite,
        Charge::CerfTagLookup,
        Charge::RfcTagLookup,
        Charge::CcuRead,
        Charge::CcuWrite,
        Charge::BowWindowRead,
        Charge::BowWindowWrite,
        Charge::WirReuseBufferLookup,
        Charge::WirReuseBufferWrite,
        Charge::WirRenameTableRead,
        Charge::WirRenameTableWrite,
        Charge::WirVsbLookup,
        Charge::WirVsbWrite,
        Charge::WirVerifyCacheLookup,
        Charge::ConstantCacheRead,
    ];

    /// The energy model's structure and access kind (`energy::EnergyConfig::kind`).
    pub fn names(self) -> (&'static str, &'static str) {
        use Charge::*;
        match self {
            MrfRead => ("mrf", "read"),
            MrfWrite => ("mrf", "write"),
            CollectorRead => ("collector", "read"),
            CollectorWrite => ("collector", "write"),
            CrossbarTransfer => ("crossbar", "transfer"),
            ArbiterRequest => ("arbiter", "request"),
            RfcRead => ("rfc", "read"),
            RfcWrite => ("rfc", "write"),
            OrfRead => ("orf", "read"),
            OrfWrite => ("orf", "write"),
            LrfRead => ("lrf", "read"),
            LrfWrite => ("lrf", "write"),
            LtrfCacheRead => ("ltrf_cache", "read"),
            LtrfCacheWrite => ("ltrf_cache", "write"),
            CerfDataRead => ("cerf_data", "read"),
            CerfDataWrite => ("cerf_data", "write"),
            CerfTagLookup => ("cerf_tag", "lookup"),
            RfcTagLookup => ("rfc_tag", "lookup"),
            CcuRead => ("ccu", "read"),
            CcuWrite => ("ccu", "write"),
            BowWindowRead => ("bow_window", "read"),
            BowWindowWrite => ("bow_window", "write"),
            WirReuseBufferLookup => ("wir_reuse_buffer", "lookup"),
            WirReuseBufferWrite => ("wir_reuse_buffer", "write"),
            WirRenameTableRead => ("wir_rename_table", "read"),
            WirRenameTableWrite => ("wir_rename_table", "write"),
            WirVsbLookup => ("wir_vsb", "lookup"),
            WirVsbWrite => ("wir_vsb", "write"),
            WirVerifyCacheLookup => ("wir_verify_cache", "lookup"),
            ConstantCacheRead => ("constant_cache", "read"),
        }
    }
}

/// Register operands the SM issued and wrote back, counted by the SM itself, apart from
/// any design: what a design's [`Ledger`] must account for (the ledger invariant test).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OperandCounts {
    /// 32-bit general source registers of issued instructions, one per operand register
    /// (a register two operands name counts twice).
    pub source_registers: u64,
    /// The same, each register once per instruction.
    pub distinct_source_registers: u64,
    /// 32-bit general destination registers handed to the design for writing.
    pub result_registers: u64,
}

impl OperandCounts {
    /// Counts the source registers of one issued instruction.
    #[inline]
    pub fn issued(&mut self, srcs: &[crate::kernel_info::RegOperand]) {
        let mut seen = [0u16; crate::rf::baseline::MAX_REGS];
        let mut n_seen = 0;
        for op in srcs
            .iter()
            .filter(|o| o.file == crate::kernel_info::RegFileKind::General)
        {
            for r in op.regs() {
                self.source_registers += 1;
                if !seen[..n_seen].contains(&r) && n_seen < seen.len() {
                    seen[n_seen] = r;
                    n_seen += 1;
                }
            }
        }
        self.distinct_source_registers += n_seen as u64;
    }

    /// Counts the destination registers of one result handed to the design.
    #[inline]
    pub fn written_back(&mut self, dsts: &[crate::kernel_info::RegOperand]) {
        self.result_registers += dsts
            .iter()
            .filter(|o| o.file == crate::kernel_info::RegFileKind::General)
            .map(|o| u64::from(o.width))
            .sum::<u64>();
    }

    /// Adds `o`'s counts.
    pub fn accumulate(&mut self, o: &OperandCounts) {
        self.source_registers += o.source_registers;
        self.distinct_source_registers += o.distinct_source_registers;
        self.result_registers += o.result_registers;
    }
}

/// A design's record of what its registers did, and the event counts they cost. See the
/// module docs for the rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ledger {
    buffer: OperandBuffer,
    delivered: [u64; Source::COUNT],
    written: [u64; Sink::COUNT],
    charges: [u64; Charge::ALL.len()],
}

impl Ledger {
    /// An empty ledger for a design whose operands wait in `buffer`.
    pub fn new(buffer: OperandBuffer) -> Self {
        Ledger {
            buffer,
            delivered: [0; Source::COUNT],
            written: [0; Sink::COUNT],
            charges: [0; Charge::ALL.len()],
        }
    }

    /// The design's operand buffer.
    pub fn buffer(&self) -> OperandBuffer {
        self.buffer
    }

    /// Makes the design's operands wait in `buffer` (set once, when the design is built).
    pub(crate) fn set_buffer(&mut self, buffer: OperandBuffer) {
        self.buffer = buffer;
    }

    #[inline]
    fn add(&mut self, c: Charge, n: u64) {
        self.charges[c as usize] += n;
    }

    /// `n` source registers reach the datapath from `source`.
    #[inline]
    pub fn deliver(&mut self, source: Source, n: u64) {
        self.delivered[source as usize] += n;
        let buffer = self.buffer;
        let through_buffer = |l: &mut Ledger| {
            l.add(buffer.write(), n);
            l.add(buffer.read(), n);
        };
        match source {
            Source::MrfBank => {
                self.add(Charge::MrfRead, n);
                self.add(Charge::CrossbarTransfer, n);
                through_buffer(self);
            }
            Source::CerfArray => {
                self.add(Charge::CerfDataRead, n);
                self.add(Charge::CrossbarTransfer, n);
                through_buffer(self);
            }
            Source::LtrfCache => {
                self.add(Charge::LtrfCacheRead, n);
                through_buffer(self);
            }
            Source::Rfc => self.add(Charge::RfcRead, n),
            Source::Orf => self.add(Charge::OrfRead, n),
            Source::Lrf => self.add(Charge::LrfRead, n),
            Source::OperandBuffer => self.add(buffer.read(), n),
            Source::ReuseBuffer => {}
            Source::ConstantCache => self.add(Charge::ConstantCacheRead, n),
        }
    }

    /// `n` result registers land in `sink`.
    #[inline]
    pub fn write(&mut self, sink: Sink, n: u64) {
        self.written[sink as usize] += n;
        match sink {
            Sink::MrfBank => self.add(Charge::MrfWrite, n),
            Sink::CerfArray => self.add(Charge::CerfDataWrite, n),
            Sink::LtrfCache => self.add(Charge::LtrfCacheWrite, n),
            Sink::Rfc => self.add(Charge::RfcWrite, n),
            Sink::Orf => self.add(Charge::OrfWrite, n),
            Sink::Lrf => self.add(Charge::LrfWrite, n),
            Sink::OperandBuffer => {
                self.add(Charge::CrossbarTransfer, n);
                self.add(self.buffer.write(), n);
            }
            Sink::Renamed | Sink::Dropped => {}
        }
    }

    /// `n` register values moved by `t`.
    #[inline]
    pub fn transfer(&mut self, t: Transfer, n: u64) {
        use Charge::*;
        let buffer_read = [self.buffer.read(), MrfWrite];
        let charges: &[Charge] = match t {
            Transfer::MrfToDatapath => &[MrfRead, CrossbarTransfer],
            Transfer::DatapathToMrf => &[MrfWrite],
            Transfer::MrfToLtrfCache => &[MrfRead, CrossbarTransfer, LtrfCacheWrite],
            Transfer::LtrfCacheToMrf => &[LtrfCacheRead, MrfWrite],
            Transfer::MrfReadFillsOrf => &[OrfWrite],
            Transfer::RfcToMrf => &[RfcRead, MrfWrite],
            Transfer::LrfToMrf => &[LrfRead, MrfWrite],
            Transfer::LrfToRfc => &[LrfRead, RfcWrite],
            Transfer::OperandBufferToMrf => &buffer_read,
        };
        for &c in charges {
            self.add(c, n);
        }
    }

    /// `n` accesses that move no register value.
    #[inline]
    pub fn charge(&mut self, c: Charge, n: u64) {
        self.add(c, n);
    }

    /// Source registers delivered from `source`.
    pub fn delivered(&self, source: Source) -> u64 {
        self.delivered[source as usize]
    }

    /// Source registers delivered from any source.
    pub fn delivered_total(&self) -> u64 {
        self.delivered.iter().sum()
    }

    /// Result registers that landed in `sink`.
    pub fn written(&self, sink: Sink) -> u64 {
        self.written[sink as usize]
    }

    /// Events of kind `c` charged so far.
    pub fn count(&self, c: Charge) -> u64 {
        self.charges[c as usize]
    }

    /// Adds `o`'s counts (the buffer stays this ledger's).
    pub fn accumulate(&mut self, o: &Ledger) {
        for (a, b) in self.delivered.iter_mut().zip(&o.delivered) {
            *a += b;
        }
        for (a, b) in self.written.iter_mut().zip(&o.written) {
            *a += b;
        }
        for (a, b) in self.charges.iter_mut().zip(&o.charges) {
            *a += b;
        }
    }

    /// The event counts, one per charge kind with a non-zero count, in [`Charge::ALL`]
    /// order.
    pub fn events(&self) -> Vec<EnergyEvent> {
        Charge::ALL
            .iter()
            .filter(|&&c| self.count(c) > 0)
            .map(|&c| {
                let (structure, access) = c.names();
                EnergyEvent {
                    structure,
                    access,
                    count: self.count(c),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_mrf_operand_pays_bank_crossbar_and_its_buffer_once_each() {
        let mut l = Ledger::new(OperandBuffer::Collector);
        l.deliver(Source::MrfBank, 3);
        assert_eq!(l.count(Charge::MrfRead), 3);
        assert_eq!(l.count(Charge::CrossbarTransfer), 3);
        assert_eq!(l.count(Charge::CollectorWrite), 3);
        assert_eq!(l.count(Charge::CollectorRead), 3);
        assert_eq!(l.delivered_total(), 3);
        let mut c = Ledger::new(OperandBuffer::Ccu);
        c.deliver(Source::MrfBank, 1);
        c.deliver(Source::OperandBuffer, 2);
        assert_eq!(
            (c.count(Charge::CcuWrite), c.count(Charge::CcuRead)),
            (1, 3)
        );
        assert_eq!(c.count(Charge::CollectorRead), 0);
    }

    #[test]
    fn cerf_array_reads_pay_the_crossbar_like_mrf_reads() {
        let mut l = Ledger::new(OperandBuffer::Collector);
        l.deliver(Source::CerfArray, 2);
        assert_eq!(l.count(Charge::CrossbarTransfer), 2);
        assert_eq!(l.count(Charge::CerfDataRead), 2);
        assert_eq!(l.count(Charge::MrfRead), 0);
    }

    #[test]
    fn datapath_structures_pay_no_crossbar_and_no_buffer() {
        let mut l = Ledger::new(OperandBuffer::Collector);
        for s in [Source::Orf, Source::Lrf, Source::Rfc, Source::ReuseBuffer] {
            l.deliver(s, 1);
        }
        assert_eq!(l.count(Charge::CrossbarTransfer), 0);
        assert_eq!(l.count(Charge::CollectorWrite), 0);
        assert_eq!(l.delivered_total(), 4);
    }

    #[test]
    fn a_result_into_any_operand_buffer_crosses_the_crossbar() {
        for (buffer, write) in [
            (OperandBuffer::Ccu, Charge::CcuWrite),
            (OperandBuffer::BowWindow, Charge::BowWindowWrite),
        ] {
            let mut l = Ledger::new(buffer);
            l.write(Sink::OperandBuffer, 5);
            assert_eq!(l.count(Charge::CrossbarTransfer), 5, "{buffer:?}");
            assert_eq!(l.count(write), 5, "{buffer:?}");
        }
    }

    #[test]
    fn events_name_every_charge_the_energy_model_knows_and_skip_zeros() {
        let cfg = energy::EnergyConfig::default();
        for c in Charge::ALL {
            let (s, a) = c.names();
            assert!(cfg.kind(s, a).is_ok(), "{s}/{a}");
        }
        let mut l = Ledger::new(OperandBuffer::Collector);
        l.write(Sink::MrfBank, 2);
        l.write(Sink::Renamed, 7);
        assert_eq!(
            l.events(),
            vec![EnergyEvent {
                structure: "mrf",
                access: "write",
                count: 2
            }]
        );
        assert_eq!(l.written(Sink::Renamed), 7);
    }
}

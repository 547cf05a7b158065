//! The L1 data cache's banks: how many of a warp instruction's accesses the cache looks
//! up per cycle (`l1d.banks`, GPGPU-Sim's `-gpgpu_l1_banks`).
//!
//! **Without banks** (`l1d.banks = 0`, the default) the cache looks up one line of a
//! request per cycle, whatever its sectors.
//!
//! **With banks**, the data array is split into `banks` banks, each serving one access
//! per cycle. An access is a sector of a sector-fetch L1D (Volta's L1D takes each
//! 32-byte sector of a warp's request as its own access) or a whole line of a line-fetch
//! one; its bank is the index function `l1d.bank_index` of its address over
//! `l1d.bank_interleave_bytes`-byte blocks (linear by default: consecutive 32-byte
//! blocks in consecutive banks, so the four sectors of a line sit in four banks). The
//! accesses of a request enter the banks in order, as many per cycle as arrive before
//! the first one whose bank has already taken an access that cycle: that access and the
//! ones behind it wait for the next cycle (a bank conflict costs the conflicting access a
//! cycle, and stops the accesses behind it too). regsim looks a line up once, at the
//! cycle its last access enters its bank.
//!
//! So a coalesced request (one line, four sectors in four banks) takes one cycle either
//! way, 32 lines of one sector each take 32 cycles when their sectors share a bank and 8
//! when they rotate through four banks.

use crate::config::{CacheConfig, FetchGranularity};
use crate::memory::coalescer::LineAccess;
use crate::memory::hashing::Indexer;
use crate::time::{Cycle, Cycles};

/// The bank geometry of one L1D (built once, when `l1d.banks > 0`).
#[derive(Clone, Debug)]
pub struct L1Banks {
    bank_of: Indexer,
    /// Each sector is an access (sector fetch); else each line is one.
    per_sector: bool,
    sector_bytes: u64,
}

impl L1Banks {
    /// The banks of cache `c`, or `None` when it has none (`banks = 0`). `c` must be
    /// validated (a power-of-two bank count and interleave, a checked index function).
    pub fn new(c: &CacheConfig) -> Option<Self> {
        (c.banks > 0).then(|| Self {
            bank_of: Indexer::new(
                &c.bank_index,
                u64::from(c.banks),
                u64::from(c.bank_interleave_bytes),
            ),
            per_sector: c.fetch == FetchGranularity::Sector,
            sector_bytes: u64::from(c.sector_bytes),
        })
    }
}

/// The lookup cycles of one request's lines, placed in order from its first cycle.
#[derive(Clone, Debug)]
pub struct LookupSchedule<'a> {
    banks: Option<&'a L1Banks>,
    /// The cycle accesses are entering now.
    cycle: Cycle,
    /// Banks that took an access in `cycle` (bit per bank).
    taken: u64,
    /// Whether any access entered in `cycle`.
    any: bool,
}

impl<'a> LookupSchedule<'a> {
    /// A request whose first line may be looked up at `start`.
    pub fn new(banks: Option<&'a L1Banks>, start: Cycle) -> Self {
        Self {
            banks,
            cycle: start,
            taken: 0,
            any: false,
        }
    }

    /// The cycle line `la`, the next of the request, is looked up.
    #[inline]
    pub fn place(&mut self, la: &LineAccess) -> Cycle {
        let Some(b) = self.banks else {
            let at = self.cycle;
            self.cycle += Cycles::new(1);
            return at;
        };
        if b.per_sector && !la.sectors.is_empty() {
            let mut rest = la.sectors.0;
            while rest != 0 {
                let s = u64::from(rest.trailing_zeros());
                rest &= rest - 1;
                self.enter(b.bank_of.index(la.line.0 + s * b.sector_bytes));
            }
        } else {
            self.enter(b.bank_of.index(la.line.0));
        }
        self.cycle
    }

    fn enter(&mut self, bank: u64) {
        let bit = 1u64 << bank;
        if self.taken & bit != 0 {
            self.cycle += Cycles::new(1);
            self.taken = 0;
        }
        self.taken |= bit;
        self.any = true;
    }

    /// The first cycle after the lookups placed so far (the port is free again then).
    pub fn end(&self) -> Cycle {
        match (self.banks, self.any) {
            (Some(_), true) => self.cycle + Cycles::new(1),
            _ => self.cycle,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::cache::{LineAddr, SectorMask};
    use crate::memory::hashing::IndexFunction;

    fn banks(n: u32, fetch: FetchGranularity) -> L1Banks {
        let dir = crate::config::default_configs_dir();
        let mut c = crate::GpuConfig::load("gpgpusim-qv100", &dir, &[])
            .unwrap()
            .l1d;
        c.banks = n;
        c.bank_interleave_bytes = 32;
        c.bank_index = IndexFunction::Linear;
        c.fetch = fetch;
        L1Banks::new(&c).unwrap()
    }

    fn at(line: u64, sectors: &[u32]) -> LineAccess {
        LineAccess {
            line: LineAddr(line * 128),
            sectors: sectors
                .iter()
                .fold(SectorMask::EMPTY, |m, &s| m.union(SectorMask::sector(s))),
        }
    }

    fn cycles(b: Option<&L1Banks>, lines: &[LineAccess]) -> (Vec<u64>, u64) {
        let mut s = LookupSchedule::new(b, Cycle::new(10));
        let placed = lines.iter().map(|la| s.place(la).get() - 10).collect();
        (placed, s.end().get() - 10)
    }

    #[test]
    fn without_banks_a_line_a_cycle() {
        let lines = [at(0, &[0, 1, 2, 3]), at(1, &[0]), at(2, &[0])];
        assert_eq!(cycles(None, &lines), (vec![0, 1, 2], 3));
        assert_eq!(cycles(None, &[]), (vec![], 0));
    }

    #[test]
    fn four_banks_take_a_coalesced_line_in_a_cycle_and_rotating_sectors_four_at_a_time() {
        let b = banks(4, FetchGranularity::Sector);
        assert_eq!(cycles(Some(&b), &[at(0, &[0, 1, 2, 3])]), (vec![0], 1));
        // One sector per line, sectors 0, 1, 2, 3, 0, ...: four lines a cycle.
        let rotating: Vec<_> = (0..32).map(|i| at(i, &[(i % 4) as u32])).collect();
        let (placed, end) = cycles(Some(&b), &rotating);
        assert_eq!(end, 8);
        assert_eq!(&placed[..6], &[0, 0, 0, 0, 1, 1]);
        // All in one bank: a line a cycle, as without banks.
        let same: Vec<_> = (0..32).map(|i| at(i, &[2])).collect();
        assert_eq!(cycles(Some(&b), &same).1, 32);
        // In order, stopping at the first conflict: [0, 1] then [1, 2] takes two cycles
        // (the second line's sector 1 waits, and its sector 2 behind it).
        assert_eq!(
            cycles(Some(&b), &[at(0, &[0, 1]), at(1, &[1, 2])]),
            (vec![0, 1], 2)
        );
        // A conflict stops the accesses behind it even when their banks are free:
        // 0, 0, 1 takes two cycles, the third access in the second.
        assert_eq!(
            cycles(Some(&b), &[at(0, &[0]), at(1, &[0]), at(2, &[1])]),
            (vec![0, 1, 1], 2)
        );
    }

    #[test]
    fn two_banks_split_a_line_and_a_line_fetch_cache_banks_whole_lines() {
        // Sectors 0 and 2 of a line share bank 0 of two: the line takes two cycles.
        let two = banks(2, FetchGranularity::Sector);
        assert_eq!(cycles(Some(&two), &[at(0, &[0, 2])]), (vec![1], 2));
        // A line-fetch cache: one access per line, at the line's address (line 128 B,
        // interleave 32 B: every line starts in bank 0).
        let lines = banks(4, FetchGranularity::Line);
        assert_eq!(
            cycles(Some(&lines), &[at(0, &[0, 1]), at(1, &[3])]),
            (vec![0, 1], 2)
        );
    }
}

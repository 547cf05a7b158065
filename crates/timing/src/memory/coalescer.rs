//! Memory access coalescing: the per-lane addresses of one warp memory instruction become
//! the list of cache lines it touches, each with the mask of sectors touched (the
//! Fermi/Volta rule: 128-byte lines, 32-byte sectors; only touched sectors move).
//!
//! Lines are listed in order of the first lane that touches them, so the result is
//! deterministic. Nothing is allocated: the caller owns a [`CoalescedAccess`], a
//! fixed-capacity array reused across calls.

use crate::config::WARP_SIZE;
use crate::memory::cache::{LineAddr, SectorMask};
use serde::Serialize;

/// Most lines one warp access can touch: every lane straddling a line boundary.
pub const MAX_LINES: usize = 2 * WARP_SIZE as usize;

/// One line touched by a warp access.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct LineAccess {
    /// The line.
    pub line: LineAddr,
    /// The sectors touched.
    pub sectors: SectorMask,
}

/// The lines of one warp access (fixed capacity, reused across calls).
#[derive(Clone, Debug)]
pub struct CoalescedAccess {
    len: usize,
    lines: [LineAccess; MAX_LINES],
}

impl Default for CoalescedAccess {
    fn default() -> Self {
        Self {
            len: 0,
            lines: [LineAccess {
                line: LineAddr(0),
                sectors: SectorMask::EMPTY,
            }; MAX_LINES],
        }
    }
}

impl CoalescedAccess {
    /// The lines, in order of first touch.
    pub fn lines(&self) -> &[LineAccess] {
        &self.lines[..self.len]
    }
    /// Total sectors over all lines.
    pub fn sectors(&self) -> u32 {
        self.lines().iter().map(|l| l.sectors.count()).sum()
    }

    /// Adds `sectors` of `line`. `seen` is a Bloom filter of the lines listed so far
    /// (one bit per line, chosen by `key`): a line whose bit is clear is new and is
    /// appended without a search, so that a warp touching 32 different lines costs 32
    /// appends, not 500 comparisons.
    fn add(&mut self, line: LineAddr, key: u64, sectors: SectorMask, seen: &mut [u64; 4]) {
        // Lanes usually touch the line of the lane before (the filter's bit is set).
        if let Some(l) = self.len.checked_sub(1).and_then(|i| self.lines.get_mut(i)) {
            if l.line == line {
                l.sectors = l.sectors.union(sectors);
                return;
            }
        }
        let bit = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as usize;
        let (word, mask) = (bit >> 6, 1u64 << (bit & 63));
        if seen[word] & mask != 0 {
            // Lanes usually touch the line of the lane before, so search from the end.
            if let Some(l) = self.lines[..self.len]
                .iter_mut()
                .rev()
                .find(|l| l.line == line)
            {
                l.sectors = l.sectors.union(sectors);
                return;
            }
        }
        // Only a bulk copy's block can touch more lines than 32 straddling lanes; the
        // emulator reports at most 63 lines of it (docs/tensor-cores.md).
        let Some(slot) = self.lines.get_mut(self.len) else {
            return;
        };
        seen[word] |= mask;
        *slot = LineAccess { line, sectors };
        self.len += 1;
    }
}

/// Coalescer counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CoalescerStats {
    /// Warp accesses coalesced.
    pub warp_accesses: u64,
    /// Lines produced.
    pub lines: u64,
    /// Sectors produced.
    pub sectors: u64,
}

/// Turns per-lane addresses into lines and sector masks.
#[derive(Clone, Debug)]
pub struct Coalescer {
    line_shift: u32,
    sector_shift: u32,
    stats: CoalescerStats,
}

impl Coalescer {
    /// A coalescer for power-of-two `line_bytes` and `sector_bytes` (validated config).
    pub fn new(line_bytes: u32, sector_bytes: u32) -> Self {
        debug_assert!(line_bytes.is_power_of_two() && sector_bytes.is_power_of_two());
        Self {
            line_shift: line_bytes.trailing_zeros(),
            sector_shift: sector_bytes.trailing_zeros(),
            stats: CoalescerStats::default(),
        }
    }

    /// Counters so far.
    pub fn stats(&self) -> &CoalescerStats {
        &self.stats
    }

    /// Coalesces the accesses of the lanes in `active_mask`, each of `access_bytes` bytes
    /// at `addrs[lane]`, into `out` (cleared first). An access that straddles a line
    /// boundary touches both lines.
    pub fn coalesce(
        &mut self,
        active_mask: u32,
        addrs: &[u64; WARP_SIZE as usize],
        access_bytes: u32,
        out: &mut CoalescedAccess,
    ) {
        out.len = 0;
        let size = u64::from(access_bytes.max(1));
        let line_bytes = 1u64 << self.line_shift;
        let mut mask = active_mask;
        let mut seen = [0u64; 4];
        while mask != 0 {
            let lane = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            let first = addrs[lane];
            let last = first.saturating_add(size - 1);
            let mut line = first >> self.line_shift << self.line_shift;
            while line <= last {
                let lo = first.max(line) - line;
                let hi = last.min(line + line_bytes - 1) - line;
                let (s0, s1) = (
                    (lo >> self.sector_shift) as u32,
                    (hi >> self.sector_shift) as u32,
                );
                let sectors = SectorMask::first(s1 + 1).minus(SectorMask::first(s0));
                out.add(LineAddr(line), line >> self.line_shift, sectors, &mut seen);
                line += line_bytes;
            }
        }
        self.stats.warp_accesses += 1;
        self.stats.lines += out.len as u64;
        self.stats.sectors += u64::from(out.sectors());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(mask: u32, f: impl Fn(u64) -> u64, size: u32) -> Vec<(u64, u32)> {
        let mut addrs = [0u64; 32];
        for (lane, a) in addrs.iter_mut().enumerate() {
            *a = f(lane as u64);
        }
        let mut c = Coalescer::new(128, 32);
        let mut out = CoalescedAccess::default();
        c.coalesce(mask, &addrs, size, &mut out);
        out.lines()
            .iter()
            .map(|l| (l.line.0, l.sectors.0))
            .collect()
    }

    /// The lines and sectors in order of first touch, by a plain search of the list.
    fn reference(mask: u32, addrs: &[u64; 32], size: u64) -> Vec<(u64, u32)> {
        let mut out: Vec<(u64, u32)> = Vec::new();
        for lane in (0..32).filter(|l| mask >> l & 1 == 1) {
            for byte in addrs[lane]..addrs[lane] + size {
                let (line, sector) = (byte / 128 * 128, 1u32 << (byte % 128 / 32));
                match out.iter_mut().find(|(l, _)| *l == line) {
                    Some((_, s)) => *s |= sector,
                    None => out.push((line, sector)),
                }
            }
        }
        out
    }

    #[test]
    fn scattered_and_repeated_lines_match_a_plain_search() {
        // Lanes over few and many lines, repeats far apart (the filter's false
        // positives and true repeats both take the search).
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for case in 0..2000u64 {
            let mut addrs = [0u64; 32];
            let spread = [1u64, 4, 64, 1 << 20][case as usize % 4];
            for a in &mut addrs {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *a = (x % spread) * 4 + (x >> 40) % 4 * 128 * 4096;
            }
            let mask = (x >> 8) as u32 | 1;
            let size = [1u32, 4, 8, 16][(x >> 3) as usize % 4];
            let mut c = Coalescer::new(128, 32);
            let mut out = CoalescedAccess::default();
            c.coalesce(mask, &addrs, size, &mut out);
            let got: Vec<(u64, u32)> = out
                .lines()
                .iter()
                .map(|l| (l.line.0, l.sectors.0))
                .collect();
            assert_eq!(got, reference(mask, &addrs, u64::from(size)), "case {case}");
        }
    }

    #[test]
    fn consecutive_words_make_one_full_line() {
        assert_eq!(run(u32::MAX, |l| 0x1000 + 4 * l, 4), vec![(0x1000, 0b1111)]);
    }

    #[test]
    fn unaligned_base_spills_into_a_second_line() {
        assert_eq!(
            run(u32::MAX, |l| 0x1040 + 4 * l, 4),
            vec![(0x1000, 0b1100), (0x1080, 0b0011)]
        );
    }

    #[test]
    fn eight_byte_accesses_take_two_lines() {
        assert_eq!(
            run(u32::MAX, |l| 8 * l, 8),
            vec![(0, 0b1111), (128, 0b1111)]
        );
    }

    #[test]
    fn stride_of_a_line_gives_one_sector_per_lane() {
        let r = run(u32::MAX, |l| 128 * l + 32, 4);
        assert_eq!(r.len(), 32);
        assert!(r.iter().all(|&(_, s)| s == 0b0010));
    }

    #[test]
    fn inactive_lanes_and_broadcast() {
        assert_eq!(run(0b1010, |_| 0x2004, 4), vec![(0x2000, 0b0001)]);
        assert_eq!(run(0, |l| l * 4096, 4), vec![]);
    }

    #[test]
    fn order_is_first_touch_and_straddling_access_hits_both_lines() {
        assert_eq!(
            run(0b111, |l| [0x300, 0x100, 0x17e][l as usize % 3], 4),
            vec![(0x300, 0b0001), (0x100, 0b1001), (0x180, 0b0001)]
        );
    }
}

//! Address mapping of the shared L2 and of DRAM: which slice, channel, bank and row a
//! line belongs to.
//!
//! Addresses are cut into chunks of `l2.interleave_bytes`; chunk `c` goes to slice
//! `c mod slices`, and slice `s` belongs to channel `s / (slices / channels)`, so each
//! channel serves a group of consecutive slices (GPGPU-Sim calls them sub-partitions).
//! Inside a channel, the address with the channel-select bits removed is split into
//! column, bank and row: `row_bytes` consecutive channel-local bytes form one row of one
//! bank, and consecutive rows rotate over the banks, so a streaming access enjoys row
//! hits. No address hashing is modelled.
//!
//! The slices' caches and queues live in [`crate::memory`]; each is a
//! [`crate::cache::Cache`] with its own MSHRs.

use crate::cache::LineAddr;
use crate::config::GpuConfig;

/// Where a line lives below the interconnect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    /// L2 slice.
    pub slice: usize,
    /// DRAM channel.
    pub channel: usize,
    /// Bank within the channel.
    pub bank: usize,
    /// Row within the bank.
    pub row: u64,
}

/// The address mapping of one configuration.
#[derive(Clone, Debug)]
pub struct AddressMap {
    interleave_shift: u32,
    slices: u64,
    slices_per_channel: u64,
    row_shift: u32,
    banks: u64,
}

impl AddressMap {
    /// The mapping of a validated config.
    pub fn new(cfg: &GpuConfig) -> Self {
        Self {
            interleave_shift: cfg.l2.interleave_bytes.trailing_zeros(),
            slices: u64::from(cfg.l2.slices),
            slices_per_channel: u64::from(cfg.l2.slices / cfg.dram.channels),
            row_shift: cfg.dram.row_bytes.trailing_zeros(),
            banks: u64::from(cfg.dram.banks),
        }
    }

    /// The L2 slice of `line`.
    pub fn slice(&self, line: LineAddr) -> usize {
        ((line.0 >> self.interleave_shift) % self.slices) as usize
    }

    /// The byte address of `line` within its channel (channel-select bits removed).
    pub fn channel_address(&self, line: LineAddr) -> u64 {
        let chunk = line.0 >> self.interleave_shift;
        let slice = chunk % self.slices;
        let local_chunk =
            chunk / self.slices * self.slices_per_channel + slice % self.slices_per_channel;
        (local_chunk << self.interleave_shift) | (line.0 & ((1u64 << self.interleave_shift) - 1))
    }

    /// Slice, channel, bank and row of `line`.
    pub fn locate(&self, line: LineAddr) -> Location {
        let slice = self.slice(line);
        let row_index = self.channel_address(line) >> self.row_shift;
        Location {
            slice,
            channel: (slice as u64 / self.slices_per_channel) as usize,
            bank: (row_index % self.banks) as usize,
            row: row_index / self.banks,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(slices: u64, channels: u64) -> AddressMap {
        AddressMap {
            interleave_shift: 8,
            slices,
            slices_per_channel: slices / channels,
            row_shift: 11,
            banks: 4,
        }
    }

    #[test]
    fn chunks_rotate_over_slices_and_channels() {
        let m = map(4, 2);
        let s: Vec<_> = (0..6)
            .map(|c| m.locate(LineAddr(c * 256)))
            .map(|l| (l.slice, l.channel))
            .collect();
        assert_eq!(s, vec![(0, 0), (1, 0), (2, 1), (3, 1), (0, 0), (1, 0)]);
        assert_eq!(m.slice(LineAddr(0x380)), 3);
    }

    #[test]
    fn channel_addresses_are_a_bijection_and_rows_rotate_over_banks() {
        let m = map(4, 2);
        let mut seen = std::collections::BTreeSet::new();
        for line in 0..4096u64 {
            let a = LineAddr(line * 128);
            assert!(
                seen.insert((m.locate(a).channel, m.channel_address(a))),
                "{a:?}"
            );
        }
        // Channel 0 holds chunks 0, 1, 4, 5, 8, ...: channel addresses 0, 256, 512, ...
        assert_eq!(m.channel_address(LineAddr(4 * 256)), 512);
        assert_eq!(m.channel_address(LineAddr(2 * 256 + 128)), 128);
        // 2 KB of channel-local space (8 chunks, 16 global chunks) per row, then next bank.
        let l0 = m.locate(LineAddr(0));
        let l1 = m.locate(LineAddr(16 * 256));
        assert_eq!((l0.channel, l0.bank, l0.row), (0, 0, 0));
        assert_eq!((l1.channel, l1.bank, l1.row), (0, 1, 0));
        assert_eq!(m.locate(LineAddr(4 * 16 * 256)).row, 1);
    }
}

//! Address mapping of the shared L2 and of DRAM: which slice, channel, bank and row a
//! line belongs to. Two schemes, chosen by whether `dram.address_mapping` is given.
//!
//! **Interleaving** (no `dram.address_mapping`): addresses are cut into chunks of
//! `l2.interleave_bytes`; chunk `c` goes to slice `c mod slices`, and slice `s` belongs to
//! channel `s / (slices / channels)`, so each channel serves a group of consecutive slices
//! (GPGPU-Sim calls them sub-partitions). Inside a channel, the address with the
//! channel-select bits removed is split into column, bank and row: `row_bytes`
//! consecutive channel-local bytes form one row of one bank, and consecutive rows rotate
//! over the banks, so a streaming access enjoys row hits.
//!
//! **Bit pattern** (`[dram.address_mapping]`, the form of GPGPU-Sim's
//! `-gpgpu_mem_addr_mapping dramid@N;<pattern>`): the channel is
//! `(a >> channel_bit) mod channels` (or a [`crate::memory::hashing`] function of `a >>
//! channel_bit`; for a channel count that is not a power of two, `odd x 2^k`, the hash
//! picks the low `k` bits and `(a >> channel_bit) mod odd` the rest: see
//! [`AddressMap::locate`]), and the channel-local address `((a >> channel_bit) / channels) <<
//! channel_bit | (a mod 2^channel_bit)` is split by the pattern, one letter per bit from
//! the most significant: `R` row, `B` bank, `C` column, `S` byte within a burst, `0`
//! unused; each field is its letters' bits gathered in order. The L2 slice within the
//! channel is the bank's low `log2(slices per channel)` bits, and an L2 slice indexes its
//! sets by the channel-local address ([`crate::memory::cache::Cache::set_partition`]).
//!
//! The slices' caches and queues live in [`crate::memory`]; each is a
//! [`crate::memory::cache::Cache`] with its own MSHRs.

use crate::bits::{BitRuns, Divisor};
use crate::config::{DramAddressMapping, GpuConfig};
use crate::memory::cache::LineAddr;
use crate::memory::hashing::{IndexFunction, Indexer};

/// Where a line lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    /// L2 slice, `0..l2.slices`.
    pub slice: usize,
    /// DRAM channel.
    pub channel: usize,
    /// Bank within the channel.
    pub bank: usize,
    /// Row within the bank.
    pub row: u64,
}

/// The address decoder of one GPU config.
#[derive(Clone, Debug)]
pub struct AddressMap {
    interleave_shift: u32,
    slices: Divisor,
    slices_per_channel: Divisor,
    row_shift: u32,
    banks: Divisor,
    pattern: Option<Pattern>,
}

#[derive(Clone, Debug)]
struct Pattern {
    channel_bit: u32,
    channels: Divisor,
    /// A polynomial channel index (`None`: modulo).
    channel_hash: Option<Indexer>,
    /// With a hash and `channels = odd x 2^k`, odd > 1: the odd factor (see
    /// [`AddressMap::locate`]); `None` for a power-of-two count.
    channel_odd: Option<(Divisor, u32)>,
    /// The row and bank fields: their pattern bits gathered in order.
    row: BitRuns,
    bank: BitRuns,
}

/// Row, bank and column masks of a pattern string; an error names the offending text.
fn parse_pattern(text: &str) -> Result<(u64, u64, u64), String> {
    let bits: Vec<char> = text
        .chars()
        .filter(|c| *c != '.' && !c.is_whitespace())
        .collect();
    if bits.is_empty() || bits.len() > 64 {
        return Err(format!("{} bits; a pattern has 1 to 64", bits.len()));
    }
    let (mut row, mut bank, mut col) = (0u64, 0u64, 0u64);
    for (i, c) in bits.iter().rev().enumerate() {
        let bit = 1u64 << i;
        match c {
            'R' => row |= bit,
            'B' => bank |= bit,
            'C' => col |= bit,
            'S' | '0' => {}
            other => {
                return Err(format!(
                    "`{other}` at bit {i}: expected R, B, C, S or 0 (the channel is \
                     taken at channel_bit)"
                ))
            }
        }
    }
    Ok((row, bank, col))
}

/// Checks a mapping against the channel, bank and slice counts; the error is
/// `(key, message)`.
pub fn check_mapping(
    m: &DramAddressMapping,
    channels: u32,
    banks: u32,
    slices_per_channel: u32,
) -> Result<(), (&'static str, String)> {
    let (_, bank, _) = parse_pattern(&m.pattern).map_err(|e| ("pattern", e))?;
    let pattern_banks = 1u64 << bank.count_ones();
    if pattern_banks != u64::from(banks) {
        return Err((
            "pattern",
            format!(
                "{} B bits give {pattern_banks} banks; dram.banks is {banks}",
                bank.count_ones()
            ),
        ));
    }
    if !slices_per_channel.is_power_of_two() || u64::from(slices_per_channel) > pattern_banks {
        return Err((
            "pattern",
            format!(
                "{slices_per_channel} L2 slices per channel must be a power of two chosen by \
                 bank bits"
            ),
        ));
    }
    if m.channel_bit >= 48 {
        return Err((
            "channel_bit",
            format!("{} is beyond the address", m.channel_bit),
        ));
    }
    if m.channel_index != IndexFunction::Linear {
        // channels = odd x 2^k: the hash picks k bits (see `AddressMap::locate`).
        if channels.trailing_zeros() == 0 {
            return Err((
                "channel_index",
                format!(
                    "a hashed channel index needs an even channel count (odd x 2^k, k >= 1), \
                     not {channels}"
                ),
            ));
        }
        m.channel_index
            .check(channels.trailing_zeros())
            .map_err(|e| ("channel_index", e))?;
    }
    Ok(())
}

impl AddressMap {
    /// The decoder of a validated config.
    pub fn new(cfg: &GpuConfig) -> Self {
        let pattern = cfg.dram.address_mapping.as_ref().map(|m| {
            let (row, bank, _) = parse_pattern(&m.pattern).unwrap_or((0, 0, 0));
            let channels = u64::from(cfg.dram.channels);
            let hashed = m.channel_index != IndexFunction::Linear;
            let k = channels.trailing_zeros();
            let odd = channels >> k;
            Pattern {
                channel_bit: m.channel_bit,
                channels: Divisor::new(channels),
                channel_hash: hashed.then(|| {
                    if odd == 1 {
                        Indexer::new(&m.channel_index, channels, 1u64 << m.channel_bit)
                    } else {
                        // Applied to (a >> channel_bit) / odd, already shifted.
                        Indexer::new(&m.channel_index, 1u64 << k, 1)
                    }
                }),
                channel_odd: (hashed && odd > 1).then(|| (Divisor::new(odd), k)),
                row: BitRuns::gather(row),
                bank: BitRuns::gather(bank),
            }
        });
        Self {
            interleave_shift: cfg.l2.interleave_bytes.trailing_zeros(),
            slices: Divisor::new(u64::from(cfg.l2.slices)),
            slices_per_channel: Divisor::new(u64::from(cfg.l2.slices / cfg.dram.channels)),
            row_shift: cfg.dram.row_bytes.trailing_zeros(),
            banks: Divisor::new(u64::from(cfg.dram.banks)),
            pattern,
        }
    }

    /// With a bit pattern: `(channel_bit, channels)` for
    /// [`crate::memory::cache::Cache::set_partition`] of the L2 slices.
    pub fn partition(&self) -> Option<(u32, u64)> {
        self.pattern
            .as_ref()
            .map(|p| (p.channel_bit, p.channels.divisor()))
    }

    /// The slice serving `line`.
    pub fn slice(&self, line: LineAddr) -> usize {
        match &self.pattern {
            None => self.slices.div_rem(line.0 >> self.interleave_shift).1 as usize,
            Some(_) => self.locate(line).slice,
        }
    }

    /// The channel-local address of `line` (interleaving scheme).
    pub fn channel_address(&self, line: LineAddr) -> u64 {
        let chunk = line.0 >> self.interleave_shift;
        let (round, slice) = self.slices.div_rem(chunk);
        let per_channel = &self.slices_per_channel;
        let local_chunk = round * per_channel.divisor() + per_channel.div_rem(slice).1;
        (local_chunk << self.interleave_shift) | (line.0 & ((1u64 << self.interleave_shift) - 1))
    }

    /// Slice, channel, bank and row of `line`.
    pub fn locate(&self, line: LineAddr) -> Location {
        if let Some(p) = &self.pattern {
            let a = line.0;
            let x = a >> p.channel_bit;
            let (local_above, modulo) = p.channels.div_rem(x);
            let channel = match (&p.channel_hash, &p.channel_odd) {
                (Some(h), None) => h.index(a),
                // channels = odd x 2^k (our generalisation of the polynomial index to
                // counts that are not powers of two): the channel's high part is x mod
                // odd, its low k bits the polynomial residue of x / odd. Within each
                // run of `channels` consecutive x (one channel-local address) the pair
                // (x mod odd, x / odd mod 2^k) takes every value once and the residue
                // adds the same bits of the run's number to all, so the mapping stays
                // one to one; power-of-two strides reach every channel.
                (Some(h), Some((odd, k))) => {
                    let (q, r) = odd.div_rem(x);
                    r << k | h.index(q)
                }
                (None, _) => modulo,
            };
            let local = local_above << p.channel_bit | (a & ((1u64 << p.channel_bit) - 1));
            let bank = p.bank.apply(local);
            let per_channel = self.slices_per_channel.divisor();
            return Location {
                slice: (channel * per_channel + (bank & (per_channel - 1))) as usize,
                channel: channel as usize,
                bank: bank as usize,
                row: p.row.apply(local),
            };
        }
        let slice = self.slice(line);
        let row_index = self.channel_address(line) >> self.row_shift;
        let (row, bank) = self.banks.div_rem(row_index);
        Location {
            slice,
            channel: self.slices_per_channel.div(slice as u64) as usize,
            bank: bank as usize,
            row,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(slices: u64, channels: u64) -> AddressMap {
        AddressMap {
            interleave_shift: 8,
            slices: Divisor::new(slices),
            slices_per_channel: Divisor::new(slices / channels),
            row_shift: 11,
            banks: Divisor::new(4),
            pattern: None,
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

    fn pattern_config(gpu: &str) -> GpuConfig {
        GpuConfig::load(gpu, &crate::config::default_configs_dir(), &[]).unwrap()
    }

    #[test]
    fn gtx480_pattern_rotates_256_byte_chunks_over_six_channels() {
        let m = AddressMap::new(&pattern_config("gpgpusim-gtx480"));
        assert_eq!(m.partition(), Some((8, 6)));
        let loc = |a: u64| m.locate(LineAddr(a));
        // Chunk c -> channel c mod 6; the channel-local chunk c / 6 puts its bit 0 in the
        // lowest bank bit (pattern bit 8), which picks the slice of the channel.
        assert_eq!((loc(0).channel, loc(0).slice, loc(0).bank), (0, 0, 0));
        assert_eq!((loc(256).channel, loc(256).slice), (1, 2));
        assert_eq!(
            (loc(6 * 256).channel, loc(6 * 256).bank, loc(6 * 256).slice),
            (0, 1, 1)
        );
        // Bank bits 13..15 of the local address are bank bits 1..3; the row starts at 16.
        let local = |l: u64| (l >> 8) * 6 * 256 + (l & 0xff);
        assert_eq!(loc(local(1 << 13)).bank, 2);
        assert_eq!(loc(local(1 << 16)).row, 1);
        assert_eq!(loc(local(1 << 16)).bank, 0);
        // A sequential stream stays in one row of each bank for 64 KB per channel.
        let rows: std::collections::BTreeSet<_> = (0..6 * 1024u64)
            .map(|i| loc(i * 64))
            .map(|l| (l.channel, l.bank, l.row))
            .collect();
        assert_eq!(rows.len(), 6 * 16);
    }

    #[test]
    fn qv100_channels_are_hashed_so_power_of_two_strides_use_every_channel() {
        let m = AddressMap::new(&pattern_config("gpgpusim-qv100"));
        for stride in [8192u64, 1 << 16, 1 << 20] {
            let channels: std::collections::BTreeSet<_> = (0..32u64)
                .map(|i| m.locate(LineAddr(i * stride)).channel)
                .collect();
            assert_eq!(channels.len(), 32, "stride {stride}");
        }
        // Linear selection would put every multiple of 8 KB in channel 0.
        let mut linear = pattern_config("gpgpusim-qv100");
        if let Some(map) = linear.dram.address_mapping.as_mut() {
            map.channel_index = IndexFunction::Linear;
        }
        let m = AddressMap::new(&linear);
        assert!((0..32u64).all(|i| m.locate(LineAddr(i * 8192)).channel == 0));
    }

    #[test]
    fn bad_patterns_are_rejected_with_the_reason() {
        let m = |pattern: &str, ch: IndexFunction| DramAddressMapping {
            channel_bit: 8,
            channel_index: ch,
            pattern: pattern.into(),
        };
        let ok = "RRRR.BBBCCCCB.CCSSSSSS";
        assert!(check_mapping(&m(ok, IndexFunction::Linear), 6, 16, 2).is_ok());
        assert_eq!(
            check_mapping(&m(ok, IndexFunction::Linear), 6, 8, 2)
                .unwrap_err()
                .0,
            "pattern"
        );
        let e = check_mapping(&m("RRDDBBCC", IndexFunction::Linear), 6, 4, 2).unwrap_err();
        assert!(e.1.contains("`D` at bit 4"), "{e:?}");
        let poly = IndexFunction::Polynomial { polynomial: 37 };
        assert_eq!(
            check_mapping(&m(ok, poly.clone()), 6, 16, 2).unwrap_err().0,
            "channel_index"
        );
        assert!(check_mapping(&m(ok, poly), 32, 16, 2).is_ok());
        // Not a power of two: the degree is that of the count's power-of-two factor.
        let cubic = IndexFunction::Polynomial { polynomial: 11 };
        assert!(check_mapping(&m(ok, cubic.clone()), 40, 16, 2).is_ok());
        let e = check_mapping(&m(ok, cubic.clone()), 12, 16, 2).unwrap_err();
        assert!(e.0 == "channel_index" && e.1.contains("degree 3"), "{e:?}");
        let e = check_mapping(&m(ok, cubic), 5, 16, 2).unwrap_err();
        assert!(e.1.contains("even channel count"), "{e:?}");
    }
}

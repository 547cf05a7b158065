//! Known answers for the DRAM address mapping `h100` and `rtx-a6000` took from their
//! generations' GPGPU-Sim configs (issue 28, item 0): the channel, bank and L2 slice of
//! addresses worked out by hand (with the hash for channel counts that are not a power of
//! two: channel = (x mod odd) x 2^k + IPOLY_k(x / odd), x = address >> 8), every channel
//! used by power-of-two strides where the modulo mapping uses a few, the mapping one to
//! one and balanced, and `memory.model = "paper"` back to 256-byte slice interleaving.

use std::collections::{BTreeMap, BTreeSet};
use timing::config::default_configs_dir;
use timing::memory::cache::LineAddr;
use timing::memory::hashing::IndexFunction;
use timing::memory::l2::AddressMap;
use timing::{GpuConfig, Override};

fn load(name: &str, overrides: &[&str]) -> GpuConfig {
    let o: Vec<Override> = overrides
        .iter()
        .map(|s| Override::parse(s).unwrap())
        .collect();
    GpuConfig::load(name, &default_configs_dir(), &o).unwrap()
}

/// (channel, bank, slice) of byte address `a`.
fn at(map: &AddressMap, a: u64) -> (usize, usize, usize) {
    let l = map.locate(LineAddr(a));
    (l.channel, l.bank, l.slice)
}

#[test]
fn rtx_a6000_channels_banks_and_slices_by_hand() {
    let cfg = load("rtx-a6000", &[]);
    let map = AddressMap::new(&cfg);
    // 12 channels = 3 x 4; IPOLY over x^2 + x + 1: x^2 = x + 1 (3), x^3 = 1, x^4 = x (2).
    // Bank bits of the channel-local address ((x / 12) << 8 | a & 0xff): 7, 12, 13, 14.
    assert_eq!(at(&map, 0), (0, 0, 0));
    assert_eq!(at(&map, 0x80), (0, 1, 1)); // bank bit 7: the channel's second slice
    assert_eq!(at(&map, 0x100), (4, 0, 8)); // x = 1: (1 mod 3) x 4 + 0
    assert_eq!(at(&map, 0x200), (8, 0, 16)); // x = 2
    assert_eq!(at(&map, 0x300), (1, 0, 2)); // x = 3: 0 x 4 + residue(1)
    assert_eq!(at(&map, 0xc00), (3, 0, 6)); // x = 12: q = 4 = x^2 -> 3
    assert_eq!(at(&map, 0x3000), (2, 0, 4)); // x = 48: q = 16 = x^4 -> x = 2

    // x = 256: 256 mod 3 = 1, q = 85 = x^6 + x^4 + x^2 + 1 -> 1 ^ 2 ^ 3 ^ 1 = 1 (x^6 = 1):
    // channel 5; local address (256 / 12) << 8 = 21 << 8: bits 8, 10, 12; bit 12 is
    // bank bit 1 -> bank 2.
    assert_eq!(at(&map, 0x1_0000), (5, 2, 10));
}

#[test]
fn h100_channels_banks_and_slices_by_hand() {
    let cfg = load("h100", &[]);
    let map = AddressMap::new(&cfg);
    // 40 channels = 5 x 8; IPOLY over x^3 + x + 1. Bank bits 7, 11, 12, 13 (1 KB rows).
    assert_eq!(at(&map, 0), (0, 0, 0));
    assert_eq!(at(&map, 0x80), (0, 1, 1));
    assert_eq!(at(&map, 0x100), (8, 0, 16)); // x = 1: 1 x 8
    assert_eq!(at(&map, 0x300), (24, 0, 48)); // x = 3
    assert_eq!(at(&map, 0xc00), (18, 0, 36)); // x = 12: 2 x 8 + residue(2)
    assert_eq!(at(&map, 0x2800), (3, 0, 6)); // x = 40: q = 8 = x^3 -> x + 1 = 3

    // x = 4096: 4096 mod 5 = 1, q = 819; local (4096 / 40) << 8 = 102 << 8: bits 9, 10,
    // 13, 14; bit 13 is bank bit 3 -> bank 8.
    assert_eq!(at(&map, 0x10_0000), (12, 8, 24));
}

#[test]
fn power_of_two_strides_reach_every_channel_and_the_mapping_is_one_to_one() {
    for (gpu, channels, linear_channels) in [("rtx-a6000", 12, 3), ("h100", 40, 5)] {
        let cfg = load(gpu, &[]);
        let map = AddressMap::new(&cfg);
        let mut modulo = cfg.clone();
        if let Some(m) = modulo.dram.address_mapping.as_mut() {
            m.channel_index = IndexFunction::Linear;
        }
        let modulo = AddressMap::new(&modulo);
        for stride in [4096u64, 8192, 1 << 16, 1 << 20] {
            let reached = |m: &AddressMap| {
                (0..4 * channels)
                    .map(|i| m.locate(LineAddr(i * stride)).channel)
                    .collect::<BTreeSet<_>>()
                    .len()
            };
            assert_eq!(reached(&map), channels as usize, "{gpu} stride {stride}");
            assert_eq!(reached(&modulo), linear_channels, "{gpu} stride {stride}");
        }
        // Consecutive 256-byte chunks: each channel takes the same share.
        let mut share = BTreeMap::new();
        for i in 0..channels * 64 {
            *share
                .entry(map.locate(LineAddr(i * 256)).channel)
                .or_insert(0) += 1;
        }
        assert!(share.values().all(|&n| n == 64), "{gpu}: {share:?}");
        // One to one: no two lines share channel, bank, row and slice unless they differ
        // in the column bits, so count lines per (channel, bank, row): each row of a bank
        // holds row_bytes / 128 lines.
        let mut per_row = BTreeMap::new();
        let lines = channels * 16 * u64::from(cfg.dram.row_bytes) / 128;
        for i in 0..lines * 4 {
            let l = map.locate(LineAddr(i * 128));
            *per_row.entry((l.channel, l.bank, l.row)).or_insert(0u64) += 1;
        }
        let per = u64::from(cfg.dram.row_bytes) / 128;
        assert!(per_row.values().all(|&n| n == per), "{gpu}");
        assert_eq!(per_row.len() as u64, lines * 4 / per, "{gpu}");
    }
}

#[test]
fn the_paper_model_interleaves_256_byte_chunks_over_the_slices() {
    for (gpu, slices) in [("rtx-a6000", 24u64), ("h100", 80)] {
        let cfg = load(gpu, &["memory.model=paper"]);
        assert!(cfg.dram.address_mapping.is_none(), "{gpu}");
        let map = AddressMap::new(&cfg);
        for chunk in [0u64, 1, 7, slices - 1, slices, 3 * slices + 5] {
            assert_eq!(map.slice(LineAddr(chunk * 256)), (chunk % slices) as usize);
        }
        // Everything else as before: sizes, counts and the DRAM timing are untouched.
        let hw = load(gpu, &[]);
        assert_eq!(
            (
                cfg.l2.slices,
                cfg.dram.channels,
                cfg.dram.banks,
                cfg.dram.row_bytes
            ),
            (
                hw.l2.slices,
                hw.dram.channels,
                hw.dram.banks,
                hw.dram.row_bytes
            )
        );
        assert_eq!(cfg.l2.slice, hw.l2.slice);
    }
}

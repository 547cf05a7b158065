//! Known answers for the memory mechanisms `maxwell-ltrf` and `rtx2060-scaled` took from
//! their GPU generations (issue 28, item 0): the set each cache picks for addresses
//! worked out by hand, the DRAM channel, bank and slice of the address mapping, and the
//! `memory.model = "paper"` switch back to the simplified system, with the papers'
//! stated sizes, latencies and counts unchanged in both.

use timing::config::default_configs_dir;
use timing::config::MemoryModel;
use timing::memory::cache::{Cache, LineAddr};
use timing::memory::l2::{AddressMap, Location};
use timing::{GpuConfig, Override};

fn load(name: &str, overrides: &[&str]) -> GpuConfig {
    let o: Vec<Override> = overrides
        .iter()
        .map(|s| Override::parse(s).unwrap())
        .collect();
    GpuConfig::load(name, &default_configs_dir(), &o).unwrap()
}

fn l1d(cfg: &GpuConfig) -> Cache<()> {
    Cache::new(&cfg.l1d)
}

/// One L2 slice's cache, its sets a function of the channel-local address as the memory
/// system builds it.
fn l2_slice(cfg: &GpuConfig) -> Cache<()> {
    let mut c = Cache::new(&cfg.l2.slice);
    if let Some((bit, channels)) = AddressMap::new(cfg).partition() {
        c.set_partition(bit, channels);
    }
    c
}

/// Distinct sets among `lines` (classes of `set_of`).
fn sets_touched(c: &Cache<()>, lines: &[u64]) -> usize {
    let mut reps: Vec<u64> = Vec::new();
    for &l in lines {
        if !reps
            .iter()
            .any(|&r| c.set_of(LineAddr(r)) == c.set_of(LineAddr(l)))
        {
            reps.push(l);
        }
    }
    reps.len()
}

#[test]
fn maxwell_l1d_sets_follow_the_xor_hash() {
    // 16 KB, 4 ways, 128 B lines: 32 sets, linear index = address bits 7..11; the hash
    // XORs address bits 13, 14, 15, 17, 19 into index bits 0..4.
    let hw = l1d(&load("maxwell-ltrf", &[]));
    let paper = l1d(&load("maxwell-ltrf", &["memory.model=paper"]));
    let same = |c: &Cache<()>, a: u64, b: u64| c.set_of(LineAddr(a)) == c.set_of(LineAddr(b));
    // 0x2000 (bit 13): set 0 ^ 1 = 1, the set of 0x80 (line 1); linear: set 0.
    assert!(same(&hw, 0x2000, 0x80) && !same(&hw, 0x2000, 0));
    assert!(same(&paper, 0x2000, 0) && !same(&paper, 0x2000, 0x80));
    // 0x80000 (bit 19) goes to set 16 = 0x800's; 0x2080 (bits 13 and 7) back to set 0.
    assert!(same(&hw, 0x8_0000, 0x800));
    assert!(same(&hw, 0x2080, 0));
    // 0x1000 (bit 12, not hashed) stays in set 0 under both.
    assert!(same(&hw, 0x1000, 0) && same(&paper, 0x1000, 0));
    // A warp reading 32 rows 4 KB apart (a row walk of a 1024-float matrix): linear
    // indexing puts every row in set 0; the hash folds in bits 13, 14 and 15 of k * 4096
    // (bits 1..3 of k; bits 17 and 19 are 0 for k < 32): 8 sets.
    let rows: Vec<u64> = (0..32u64).map(|k| 0x1_0000_0000 + k * 4096).collect();
    assert_eq!(sets_touched(&paper, &rows), 1);
    assert_eq!(sets_touched(&hw, &rows), 8);
}

#[test]
fn maxwell_dram_mapping_and_l2_sets_by_hand() {
    let cfg = load("maxwell-ltrf", &[]);
    let map = AddressMap::new(&cfg);
    // 8 channels at 256 B; channel-local address ((a >> 8) / 8) << 8 | (a & 0xff);
    // pattern ...RBBBCCCC.BCCSSSSS: bank bits 7, 12, 13, 14 (low first), row from bit 15;
    // 2 slices per channel chosen by the bank's low bit.
    let at = |a: u64| map.locate(LineAddr(a));
    let loc = |slice, channel, bank, row| Location {
        slice,
        channel,
        bank,
        row,
    };
    assert_eq!(at(0x0), loc(0, 0, 0, 0));
    assert_eq!(at(0x80), loc(1, 0, 1, 0)); // local bit 7: bank bit 0, the channel's 2nd slice
    assert_eq!(at(0x100), loc(2, 1, 0, 0)); // next 256 B: channel 1
    assert_eq!(at(0x780), loc(15, 7, 1, 0));
    assert_eq!(at(0x800), loc(0, 0, 0, 0)); // local 0x100: a column bit
    assert_eq!(at(0x8000), loc(0, 0, 2, 0)); // local 0x1000: bank bit 1
    assert_eq!(at(0x4_0000), loc(0, 0, 0, 1)); // local 0x8000: row 1

    // The paper's model interleaves 256 B over the 16 slices instead.
    let paper = AddressMap::new(&load("maxwell-ltrf", &["memory.model=paper"]));
    assert_eq!(paper.slice(LineAddr(0x100)), 1);
    assert_eq!(paper.slice(LineAddr(0x80)), 0);

    // L2 slice: 128 KB, 8 ways, 128 B: 128 sets, IPOLY x^7 + x + 1 of the channel-local
    // line. a = 0x2_0000 is channel 0, local 0x4000 = line 128 = x^7 = x + 1: set 3, the
    // set of local line 3 (a = 0x880: channel 0, local 0x180, the channel's other slice).
    let slice = l2_slice(&cfg);
    assert_eq!(at(0x2_0000).slice, 0);
    assert!(slice.set_of(LineAddr(0x2_0000)) == slice.set_of(LineAddr(0x880)));
    assert!(slice.set_of(LineAddr(0x2_0000)) != slice.set_of(LineAddr(0)));
    // Slice 0 holds the lines whose local bit 7 is 0: a linear index of the local
    // address would use only its even sets (64 of 128); IPOLY reaches all 128.
    let lines: Vec<u64> = (0..1u64 << 16)
        .map(|l| l << 7)
        .filter(|&a| at(a).slice == 0)
        .take(4096)
        .collect();
    assert_eq!(sets_touched(&slice, &lines), 128);
    let linear = l2_slice(&load(
        "maxwell-ltrf",
        &["l2.slice.set_index={ function = \"linear\" }"],
    ));
    assert_eq!(sets_touched(&linear, &lines), 64);
}

#[test]
fn turing_l1d_has_four_sets_and_the_l2_ipoly_by_hand() {
    let cfg = load("rtx2060-scaled", &[]);
    // 32 KB, 64 ways, 128 B (SM75_RTX2060's dl1 geometry): 4 sets, linear.
    let l1 = l1d(&cfg);
    assert_eq!(cfg.l1d.sets(), 4);
    assert!(l1.set_of(LineAddr(0x0)) == l1.set_of(LineAddr(0x200)));
    assert!(l1.set_of(LineAddr(0x0)) != l1.set_of(LineAddr(0x80)));
    // The paper model's 4-way L1D has 64 sets: 0x200 is set 4 there.
    let paper = load("rtx2060-scaled", &["memory.model=paper"]);
    assert_eq!(paper.l1d.sets(), 64);
    assert!(l1d(&paper).set_of(LineAddr(0x0)) != l1d(&paper).set_of(LineAddr(0x200)));

    // 2 channels at 256 B, 2 slices each by local bit 7, as for maxwell-ltrf's pattern.
    let map = AddressMap::new(&cfg);
    let at = |a: u64| map.locate(LineAddr(a));
    assert_eq!(
        (at(0x80).slice, at(0x100).slice, at(0x180).slice),
        (1, 2, 3)
    );
    assert_eq!((at(0x200).channel, at(0x200).bank), (0, 0));
    assert_eq!(at(0x1_0000).row, 1); // local 0x8000

    // L2 slice: 256 KB, 16 ways, 128 B: 128 sets, IPOLY x^7 + x + 1. a = 0x8000 is
    // channel 0, local 0x4000 (line 128 = x^7 = x + 1): set 3, as local 0x180 (a = 0x280).
    // Linear (the paper model, no mapping): line 256 mod 128 = set 0.
    let slice = l2_slice(&cfg);
    assert!(slice.set_of(LineAddr(0x8000)) == slice.set_of(LineAddr(0x280)));
    assert!(slice.set_of(LineAddr(0x8000)) != slice.set_of(LineAddr(0x0)));
    let linear = l2_slice(&paper);
    assert!(linear.set_of(LineAddr(0x8000)) == linear.set_of(LineAddr(0x0)));
}

#[test]
fn the_paper_model_restores_the_simplified_system_with_the_papers_parameters() {
    for name in ["maxwell-ltrf", "rtx2060-scaled"] {
        let hw = load(name, &[]);
        let p = load(name, &["memory.model=paper"]);
        assert_eq!(hw.memory.model, MemoryModel::Hardware, "{name}");
        assert_eq!(p.memory.model, MemoryModel::Paper, "{name}");
        assert!(
            hw.l1d.invalidate_between_kernels && hw.l2.fill_on_host_copy,
            "{name}"
        );
        assert!(hw.dram.address_mapping.is_some(), "{name}");
        assert_ne!(hw.l2.slice.set_index, Default::default(), "{name}");
        assert!(
            !p.l1d.invalidate_between_kernels && !p.l2.fill_on_host_copy,
            "{name}"
        );
        assert!(p.dram.address_mapping.is_none(), "{name}");
        assert_eq!(p.l1d.set_index, Default::default(), "{name}");
        assert_eq!(p.l2.slice.set_index, Default::default(), "{name}");
        // Sizes, latencies and counts are the same in both models.
        for (a, b) in [(&hw.l1d, &p.l1d), (&hw.l2.slice, &p.l2.slice)] {
            assert_eq!(
                (a.size_bytes, a.line_bytes, a.sector_bytes, a.latency),
                (b.size_bytes, b.line_bytes, b.sector_bytes, b.latency),
                "{name}"
            );
        }
        assert_eq!(
            (
                hw.l2.slices,
                hw.dram.channels,
                hw.dram.banks,
                hw.dram.row_bytes
            ),
            (p.l2.slices, p.dram.channels, p.dram.banks, p.dram.row_bytes),
            "{name}"
        );
    }
    // LTRF Table 3: L1D 4-way 16 KB, LLC 8-way 2 MB, 128 B lines, 8 memory controllers.
    let m = load("maxwell-ltrf", &[]);
    assert_eq!(
        (m.l1d.size_bytes, m.l1d.ways, m.l1d.line_bytes),
        (16384, 4, 128)
    );
    assert_eq!(
        (
            m.l2.slice.size_bytes * u64::from(m.l2.slices),
            m.l2.slice.ways,
            m.dram.channels
        ),
        (2 << 20, 8, 8)
    );
    // Malekeh Table 1: 1 MB L2; the L1D keeps its 32 KB of the 64 KB L1/shared.
    let r = load("rtx2060-scaled", &[]);
    assert_eq!(r.l2.slice.size_bytes * u64::from(r.l2.slices), 1 << 20);
    assert_eq!(
        r.l1d.size_bytes + u64::from(r.sm.shared_memory_bytes),
        65536
    );
}

//! Bulk copies that reach other CTAs of a cluster in timing mode
//! (`crates/emu/tests/data/modern/cluster_copies.sm90.ptx`): a `.multicast::cluster` copy
//! reads its block from L2 once however many CTAs its ctaMask names, lands it in each of
//! them when it arrives (the destinations' threads spin on their mbarriers meanwhile), and
//! a copy into the next rank's shared memory pays the SM-to-SM network's latency. Values
//! match the CPU reference under every register-file design.

mod common;

use common::*;
use emu::LaunchConfig;
use timing::{GpuConfig, KernelStats, TimingSimulator};

fn ptx() -> String {
    modern_ptx("cluster_copies.sm90.ptx")
}

/// Runs `name` on four CTAs (one cluster) of 64 threads; returns the statistics, each
/// thread's word and its failed waits.
fn run(cfg: GpuConfig, name: &str, mask: u32) -> (KernelStats, Vec<u32>, Vec<u32>) {
    let (mut emu, k, _) = load(&ptx(), name);
    let info = compiled_info(&emu, k, &cfg);
    let input: Vec<u32> = (0..64).map(|i| 7 * i + 3).collect();
    let pout = alloc_u32(&mut emu, &[0; 512]);
    let p = if name == "mcast" {
        let pin = alloc_u32(&mut emu, &input);
        params(&emu, k, &[pin, pout, u64::from(mask)])
    } else {
        params(&emu, k, &[pout, 256])
    };
    let mut sim = TimingSimulator::new(cfg);
    let s = sim
        .simulate_kernel(&mut emu, k, LaunchConfig::linear(4, 64), &p, &info)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let out = read_u32(&emu, pout, 512);
    (s, out[..256].to_vec(), out[256..].to_vec())
}

fn mcast_expected(mask: u32) -> Vec<u32> {
    (0..4u32)
        .flat_map(|r| {
            (0..64u32).map(move |t| {
                if mask >> r & 1 == 1 {
                    7 * t + 3
                } else {
                    0xdead_0000 + t
                }
            })
        })
        .collect()
}

fn peer_expected() -> Vec<u32> {
    (0..4u32)
        .flat_map(|r| (0..64u32).map(move |t| 1000 * ((r + 3) % 4) + t))
        .collect()
}

#[test]
fn multicast_lands_in_every_named_cta_after_its_wait_under_every_design() {
    for design in DESIGNS {
        let cfg = config("h100", &[&format!("register_file.design=\"{design}\"")]);
        let (_, words, spins) = run(cfg, "mcast", 0b1011);
        assert_eq!(words, mcast_expected(0b1011), "{design}");
        // The data travel from memory: every waiting thread of a destination CTA found
        // its phase incomplete at least once (data visible only after the wait).
        for r in [0usize, 1, 3] {
            assert!(
                spins[64 * r..64 * r + 64].iter().all(|&n| n > 0),
                "{design}: rank {r}: {spins:?}"
            );
        }
    }
}

#[test]
fn one_l2_read_feeds_every_destination() {
    let (one, words1, _) = run(config("h100", &[]), "mcast", 0b0001);
    let (all, words4, _) = run(config("h100", &[]), "mcast", 0b1111);
    assert_eq!(words1, mcast_expected(0b0001));
    assert_eq!(words4, mcast_expected(0b1111));
    assert!(one.memory.l2.reads > 0);
    assert_eq!(
        one.memory.l2.reads, all.memory.l2.reads,
        "a multicast to four CTAs reads its block once"
    );
    // Deterministic.
    let (again, _, _) = run(config("h100", &[]), "mcast", 0b1111);
    assert_eq!(
        (all.cycles, all.warp_instructions),
        (again.cycles, again.warp_instructions)
    );
}

#[test]
fn a_peer_copy_pays_the_sm_to_sm_latency() {
    let cycles = |latency: u32| {
        let cfg = config(
            "h100",
            &[&format!("shared_memory.remote_latency={latency}")],
        );
        let (s, words, spins) = run(cfg, "peer", 0);
        assert_eq!(words, peer_expected(), "remote_latency {latency}");
        assert!(spins.iter().all(|&n| n > 0), "{spins:?}");
        s.cycles
    };
    let (near, far) = (cycles(0), cycles(2000));
    assert!(far >= near + 2000, "{near} -> {far}");
    for design in DESIGNS {
        let cfg = config("h100", &[&format!("register_file.design=\"{design}\"")]);
        let (_, words, _) = run(cfg, "peer", 0);
        assert_eq!(words, peer_expected(), "{design}");
    }
}

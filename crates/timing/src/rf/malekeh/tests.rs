//! Known-answer tests of the caching collector units.

use super::*;
use crate::config::{default_configs_dir, OpClass};
use crate::kernel_info::InstHint;
use crate::memory::{MemorySystem, SmId};
use crate::rf::{Dispatch, DispatchPort, InstToken};
use crate::Override;

/// rtx2060-scaled with `overrides`. Its collector units belong to the processing blocks
/// (`partition_collectors`), and the harness puts every warp on scheduler 0: with
/// `collector_units = 4` its warps share one CCU, with 8 (the config's) two.
fn cfg(overrides: &[&str]) -> GpuConfig {
    let o: Vec<Override> = overrides
        .iter()
        .map(|s| Override::parse(s).unwrap())
        .collect();
    GpuConfig::load("rtx2060-scaled", &default_configs_dir(), &o).unwrap()
}

/// A register operand whose next read is `distance` instructions away (`None`: never).
fn r(reg: u16, distance: Option<u16>) -> RegOperand {
    RegOperand {
        file: RegFileKind::General,
        reg,
        width: 1,
        hint: OperandHint {
            reuse_distance: distance,
            ..OperandHint::default()
        },
    }
}
fn near(reg: u16) -> RegOperand {
    r(reg, Some(1))
}
fn far(reg: u16) -> RegOperand {
    r(reg, None)
}

struct Units {
    taken: Vec<(InstToken, u64)>,
    now: u64,
}
impl DispatchPort for Units {
    fn try_dispatch(&mut self, d: Dispatch) -> bool {
        self.taken.push((d.token, self.now));
        true
    }
}

struct Harness {
    rf: Malekeh,
    mem: MemorySystem,
    units: Units,
    now: u64,
    token: u32,
}

impl Harness {
    fn new(overrides: &[&str], warps: u16) -> Self {
        let c = cfg(overrides);
        let mut rf = Malekeh::new(&c);
        for w in 0..warps {
            rf.warp_launched(WarpLaunch {
                warp: WarpSlot(w),
                scheduler: 0,
                registers_per_thread: 32,
                cta: 0,
            });
        }
        Harness {
            rf,
            mem: MemorySystem::new(&c),
            units: Units {
                taken: Vec::new(),
                now: 0,
            },
            now: 0,
            token: 0,
        }
    }

    /// The next cycle: operand collection, as the SM runs it before issue. `now` is the
    /// cycle whose collection already ran, in which instructions issue.
    fn step(&mut self) {
        self.now += 1;
        self.units.now = self.now;
        let mut writes = Vec::new();
        self.rf.cycle(&mut RfCycle {
            now: Cycle::new(self.now),
            sm: SmId(0),
            memory: self.mem.port(SmId(0)),
            dispatch: &mut self.units,
            writes_done: &mut writes,
        });
    }

    fn run(&mut self, cycles: u64) {
        for _ in 0..cycles {
            self.step();
        }
    }

    fn candidate<'a>(warp: u16, srcs: &'a [RegOperand], dsts: &'a [RegOperand]) -> Candidate<'a> {
        Candidate {
            warp: WarpSlot(warp),
            scheduler: 0,
            unit: UnitKind::Sp,
            class: OpClass::Fp32,
            srcs,
            dsts,
            hint: InstHint::default(),
        }
    }

    fn try_issue(&mut self, warp: u16, srcs: &[RegOperand]) -> Result<InstToken, RfStall> {
        let c = Self::candidate(warp, srcs, &[]);
        let now = Cycle::new(self.now);
        self.rf.can_accept(&c, now)?;
        let step = emu::WarpStep::default();
        let token = InstToken(self.token);
        self.token += 1;
        self.rf.accept(
            IssuedInst {
                token,
                inst: c,
                step: &step,
            },
            now,
        );
        self.rf
            .scheduler_event(SchedulerEvent::Issued(WarpSlot(warp)));
        Ok(token)
    }

    /// Issues and runs until it dispatched (5 cycles).
    fn issue(&mut self, warp: u16, srcs: &[RegOperand]) -> InstToken {
        let t = self.try_issue(warp, srcs).expect("accepted");
        self.run(5);
        t
    }

    fn write(&mut self, warp: u16, token: InstToken, dsts: &[RegOperand]) {
        self.rf.request_write(
            WriteRequest {
                token,
                warp: WarpSlot(warp),
                scheduler: 0,
                dsts,
            },
            Cycle::new(self.now),
        );
    }

    fn stats(&self) -> RfStats {
        self.rf.stats(Cycle::new(self.now))
    }

    fn extra(&self, k: &str) -> u64 {
        self.stats().extra[k]
    }
}

#[test]
fn a_register_read_by_consecutive_instructions_hits_in_its_ccu() {
    let mut h = Harness::new(&[], 1);
    let a = h.issue(0, &[far(1), near(2)]);
    let b = h.issue(0, &[near(2), far(3)]);
    let c = h.issue(0, &[near(2)]);
    // R2: a miss, then two hits; R1 and R3 misses.
    assert_eq!(h.extra("malekeh_operand_reads"), 5);
    assert_eq!(h.extra("malekeh_hits"), 2);
    assert_eq!(h.extra("malekeh_bank_reads_avoided"), 2);
    assert_eq!(h.stats().reads, 3, "bank reads: R1, R2, R3");
    // Read as near both times (the previous access said near).
    assert_eq!(
        (h.extra("malekeh_reads_near"), h.extra("malekeh_hits_near")),
        (2, 2)
    );
    // Issued at 0, 5, 10: a reads its banks at 1, delivered at 2; b waits for R3 (2 -> 7);
    // c hits everything and dispatches the next cycle.
    assert_eq!(h.units.taken, [(a, 2), (b, 7), (c, 11)]);
    // The CT holds what the CCU saw: a fresh warp takes the same unit after a flush.
    assert_eq!(h.extra("malekeh_fills"), 3);
}

#[test]
fn far_values_are_replaced_before_near_ones_then_lru() {
    // Two slots: R1 near, R2 far. R3 evicts R2 (far), whatever the random draw.
    let mut h = Harness::new(&["register_file.malekeh.entries=2"], 1);
    h.issue(0, &[near(1), far(2)]);
    h.issue(0, &[near(3)]);
    assert_eq!(h.extra("malekeh_evictions_far"), 1);
    h.issue(0, &[near(1)]);
    assert_eq!(h.extra("malekeh_hits"), 1, "R1 stayed");
    // Now R1 and R3 are near: R4 replaces the least recently used, R3.
    h.issue(0, &[near(4)]);
    assert_eq!(h.extra("malekeh_evictions_lru"), 1);
    h.issue(0, &[near(1)]);
    assert_eq!(h.extra("malekeh_hits"), 2, "R1 (used more recently) stayed");
    h.issue(0, &[near(3)]);
    assert_eq!(h.extra("malekeh_hits"), 2, "R3 was evicted");
}

#[test]
fn locked_sources_are_never_replaced_and_extra_sources_bypass_the_ct() {
    // Two slots, three far sources in one instruction: two cached, one read uncached.
    let mut h = Harness::new(&["register_file.malekeh.entries=2"], 1);
    h.issue(0, &[far(1), far(2), far(3)]);
    assert_eq!(h.extra("malekeh_uncached_reads"), 1);
    assert_eq!(h.stats().reads, 3);
    h.issue(0, &[far(1), far(2)]);
    assert_eq!(h.extra("malekeh_hits"), 2);
}

#[test]
fn the_random_choice_among_far_slots_is_seeded() {
    // Eight far registers fill the CT; 20 more far reads each evict a random far slot.
    // The CT's contents afterwards depend on the draws only.
    let contents = |seed: u64| {
        let s = format!("register_file.malekeh.seed={seed}");
        let mut h = Harness::new(&[&s], 1);
        for reg in 0..28 {
            h.issue(0, &[far(reg)]);
        }
        assert_eq!(h.extra("malekeh_evictions_far"), 20);
        let mut regs: Vec<u16> = h.rf.ccus[0].slots[..8].iter().map(|s| s.reg).collect();
        regs.sort_unstable();
        regs
    };
    let a = contents(1);
    assert_eq!(contents(1), a, "same seed, same choices");
    // Not a fixed victim (LRU or FIFO would keep exactly R20..R27).
    let fifo: Vec<u16> = (20..28).collect();
    let all: Vec<_> = (1..6).map(contents).collect();
    assert!(all.iter().any(|c| *c != fifo), "{all:?}");
    assert!(all.iter().any(|c| *c != a), "the seed matters: {all:?}");
}

#[test]
fn a_warp_issues_into_its_own_ccu_and_others_take_empty_or_far_ones_first() {
    let mut h = Harness::new(&["register_file.collector_units=8"], 3);
    h.issue(0, &[near(1)]); // warp 0 takes a CCU (both empty)
    h.issue(1, &[far(1)]); // warp 1 takes the other one
                           // Warp 0 again: its own CCU, a hit.
    h.issue(0, &[near(1)]);
    assert_eq!(h.extra("malekeh_hits"), 1);
    // Warp 2: warp 1's CCU holds only far values: taken at once, flushing it.
    h.issue(2, &[far(5)]);
    assert_eq!(h.extra("malekeh_sthld_stall_cycles"), 0);
    assert_eq!(h.extra("malekeh_flushes"), 1);
    // Warp 1 lost its CCU: it takes warp 2's (far only) rather than warp 0's (near), and
    // its R1 misses.
    h.issue(1, &[far(1)]);
    assert_eq!(h.extra("malekeh_hits"), 1);
    assert_eq!(h.extra("malekeh_flushes"), 2);
    assert_eq!(h.extra("malekeh_allocations_near"), 0);
    // Warp 0 still hits in its own.
    h.issue(0, &[near(1)]);
    assert_eq!(h.extra("malekeh_hits"), 2);
}

#[test]
fn a_near_ccu_is_replaced_once_the_counter_is_higher_than_sthld() {
    for sthld in [0u64, 10] {
        let s = format!("register_file.malekeh.sthld={sthld}");
        let mut h = Harness::new(&["register_file.collector_units=4", &s], 2);
        h.issue(0, &[near(1)]);
        let start = h.now;
        // Warp 1 asks every cycle until it gets the CCU holding warp 0's near value.
        let waited = loop {
            match h.try_issue(1, &[far(2)]) {
                Ok(_) => break h.now - start,
                Err(e) => {
                    assert_eq!(e, RfStall::Design);
                    h.step();
                }
            }
        };
        // §6: the counter must be higher than STHLD, so STHLD 0 waits one cycle.
        assert_eq!(waited, sthld + 1, "STHLD {sthld}");
        assert_eq!(h.extra("malekeh_sthld_stall_cycles"), sthld + 1);
        // Warp 0's value is gone.
        h.run(5);
        h.issue(0, &[near(1)]);
        assert_eq!(h.extra("malekeh_hits"), 0);
    }
}

#[test]
fn sthld_waiting_sleeps_until_the_threshold() {
    let mut h = Harness::new(
        &[
            "register_file.collector_units=4",
            "register_file.malekeh.sthld=40",
        ],
        2,
    );
    h.issue(0, &[near(1)]);
    let now = Cycle::new(h.now);
    assert_eq!(h.try_issue(1, &[far(2)]), Err(RfStall::Design));
    // Nothing else to do: the design wakes the SM when the threshold is reached.
    assert_eq!(h.rf.next_event(now), Some(now + Cycles::new(41)));
    h.now += 40;
    assert_eq!(h.try_issue(1, &[far(2)]), Err(RfStall::Design));
    h.now += 1;
    assert!(h.try_issue(1, &[far(2)]).is_ok());
}

#[test]
fn one_write_port_keeps_the_first_near_destination_and_far_ones_are_not_cached() {
    let mut h = Harness::new(&[], 1);
    let t = h.issue(0, &[far(9)]);
    // Two near results in one cycle: the first is kept, the second dropped.
    h.write(0, t, &[near(1)]);
    h.write(0, t, &[near(2)]);
    // A far result is not cached.
    h.step();
    h.write(0, t, &[far(3)]);
    h.run(3);
    assert_eq!(h.extra("malekeh_dest_kept"), 1);
    assert_eq!(h.extra("malekeh_dest_port_conflicts"), 1);
    assert_eq!(h.stats().writes, 3, "every result reaches the banks");
    h.issue(0, &[near(1), near(2), near(3)]);
    assert_eq!(h.extra("malekeh_hits"), 1, "only R1");
    // R9 is cached; a far write to it must invalidate the stale copy.
    h.write(0, t, &[far(9)]);
    h.run(2);
    assert_eq!(h.extra("malekeh_invalidations"), 1);
    h.issue(0, &[far(9)]);
    assert_eq!(h.extra("malekeh_hits"), 1);
}

#[test]
fn a_warp_without_a_ccu_writes_only_the_banks_and_exit_flushes() {
    let mut h = Harness::new(&[], 2);
    let t = h.issue(0, &[far(1)]);
    h.write(1, t, &[near(4)]);
    h.run(3);
    assert_eq!(h.extra("malekeh_dest_kept"), 0);
    h.rf.warp_exited(WarpSlot(0));
    h.rf.warp_launched(WarpLaunch {
        warp: WarpSlot(0),
        scheduler: 0,
        registers_per_thread: 32,
        cta: 0,
    });
    h.issue(0, &[far(1)]);
    assert_eq!(
        h.extra("malekeh_hits"),
        0,
        "a new warp in the slot sees nothing"
    );
}

#[test]
fn cache_aware_ranking_prefers_ccu_owners_then_the_last_issued_warp() {
    let mut h = Harness::new(&[], 3);
    h.issue(0, &[far(1)]);
    h.issue(1, &[far(1)]);
    let rank = |h: &Harness, w| h.rf.rank(&Harness::candidate(w, &[], &[]));
    assert!(h.rf.ranks_warps());
    assert_eq!((rank(&h, 0), rank(&h, 1), rank(&h, 2)), (2, 3, 0));
    let h = Harness::new(&["register_file.malekeh.cache_aware_issue=false"], 1);
    assert!(!h.rf.ranks_warps());
}

#[test]
fn the_adaptive_controller_moves_sthld_at_interval_ends_and_records_it() {
    let mut h = Harness::new(
        &[
            "register_file.malekeh.adaptive=true",
            "register_file.malekeh.interval=100",
            "register_file.malekeh.sthld=0",
            "register_file.malekeh.step=8",
        ],
        1,
    );
    // Two intervals at the same IPC: the first measurement climbs, the small change
    // climbs again.
    for _ in 0..2 {
        for _ in 0..20 {
            h.issue(0, &[far(1)]);
        }
    }
    h.step();
    assert_eq!(h.rf.sthld(), 16);
    assert_eq!(h.extra("malekeh_intervals"), 2);
    assert_eq!(
        h.stats().series["malekeh_sthld_sm0"],
        [(0, 0), (100, 8), (200, 16)]
    );
}

#[test]
fn a_fixed_sthld_is_the_default_and_never_changes() {
    let d = MalekehConfig::default();
    assert_eq!((d.sthld, d.adaptive), (0, false));
    for sthld in [0u32, 7] {
        let s = format!("register_file.malekeh.sthld={sthld}");
        let mut h = Harness::new(
            &[
                "register_file.collector_units=4",
                "register_file.malekeh.interval=50",
                &s,
            ],
            2,
        );
        // Intervals of very different IPC (bursts, idle stretches, warps alternating on
        // the one CCU and waiting for its near values), each of which would move the
        // adaptive controller.
        for round in 0u16..6 {
            for _ in 0..(1 + 10 * round) {
                while h.try_issue(round % 2, &[near(1), far(2)]).is_err() {
                    h.step();
                }
                h.run(5);
            }
            h.run(37 * u64::from(round));
            assert_eq!(h.rf.sthld(), sthld, "round {round}");
        }
        assert!(h.now > 10 * 50, "{} cycles", h.now);
        assert_eq!(h.extra("malekeh_intervals"), 0);
        assert_eq!(
            h.stats().series["malekeh_sthld_sm0"],
            [(0, u64::from(sthld))]
        );
        assert!(h.extra("malekeh_sthld_waits") > 0);
    }
}

#[test]
fn the_design_asks_the_load_time_pipeline_for_reuse_distances_with_its_rthld() {
    let mut c = cfg(&[
        "register_file.design=\"malekeh\"",
        "register_file.malekeh.rthld=5",
    ]);
    let p = crate::rf::required_passes(&c);
    assert_eq!(p.reuse_distance.map(|r| r.rthld), Some(5));
    assert!(!p.liveness_bits);
    // BOW needs the liveness bits only for BOW-WR.
    c.register_file.design = crate::config::RegisterFileDesign::Bow;
    assert!(crate::rf::required_passes(&c).is_empty());
    c.register_file.bow.write_bypass = true;
    let p = crate::rf::required_passes(&c);
    assert!(p.liveness_bits && p.reuse_distance.is_none());
}

#[test]
fn bad_settings_are_refused_naming_the_key() {
    for (set, key) in [
        (
            "register_file.malekeh.entries=0",
            "register_file.malekeh.entries",
        ),
        (
            "register_file.malekeh.entries=33",
            "register_file.malekeh.entries",
        ),
        (
            "register_file.malekeh.interval=0",
            "register_file.malekeh.interval",
        ),
        (
            "register_file.malekeh.small_ipc_change=1.5",
            "register_file.malekeh.small_ipc_change",
        ),
        ("register_file.bow.window=0", "register_file.bow.window"),
        ("register_file.bow.window=9", "register_file.bow.window"),
    ] {
        let o = [Override::parse(set).unwrap()];
        let e = GpuConfig::load("rtx2060-scaled", &default_configs_dir(), &o)
            .expect_err(set)
            .to_string();
        assert!(e.contains(key), "{set}: {e}");
    }
}

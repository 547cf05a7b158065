//! Known answers for the L1D's banks (`l1d.banks`, GPGPU-Sim's `-gpgpu_l1_banks 4` on
//! `gpgpusim-qv100`) and the miss queue's one-request-a-cycle hand-off, through the
//! `MemorySystem` façade.

use timing::config::default_configs_dir;
use timing::memory::cache::{LineAddr, SectorMask};
use timing::memory::coalescer::LineAccess;
use timing::memory::{AccessKind, SmId, Space};
use timing::{Cycle, Cycles, GpuConfig, MemRequest, MemorySystem, Override, Stall};

fn qv100(sets: &[&str]) -> GpuConfig {
    let o: Vec<Override> = sets.iter().map(|s| Override::parse(s).unwrap()).collect();
    GpuConfig::load("gpgpusim-qv100", &default_configs_dir(), &o).unwrap()
}

/// One sector of each of 32 lines: sector `sector(i)` of line `i`.
fn one_sector_per_line(sector: impl Fn(u64) -> u32) -> Vec<LineAccess> {
    (0..32)
        .map(|i| LineAccess {
            line: LineAddr(i * 128),
            sectors: SectorMask::sector(sector(i)),
        })
        .collect()
}

/// The cycle the L1D's port is free again after `lines` were issued at cycle 0 (a second
/// request is refused until then).
fn port_free_after(sets: &[&str], kind: AccessKind, lines: &[LineAccess]) -> Cycle {
    let mut mem = MemorySystem::new(&qv100(sets));
    let req = |lines| MemRequest {
        kind,
        space: Space::Global,
        lines,
    };
    mem.issue(SmId(0), Cycle::ZERO, req(lines)).unwrap();
    let next = [LineAccess {
        line: LineAddr(1 << 20),
        sectors: SectorMask::sector(0),
    }];
    match mem.issue(SmId(0), Cycle::new(1), req(&next)) {
        Err(Stall::PortBusy { until }) => until,
        other => panic!("expected a busy port, got {other:?}"),
    }
}

#[test]
fn four_banks_look_up_rotating_sectors_four_a_cycle_and_one_bank_one_a_cycle() {
    let rotating = one_sector_per_line(|i| (i % 4) as u32);
    let same = one_sector_per_line(|_| 1);
    for kind in [AccessKind::Load, AccessKind::Store] {
        assert_eq!(port_free_after(&[], kind, &rotating), Cycle::new(8));
        assert_eq!(port_free_after(&[], kind, &same), Cycle::new(32));
        // Without banks, a line a cycle whatever its sector.
        let off = ["l1d.banks=0"];
        assert_eq!(port_free_after(&off, kind, &rotating), Cycle::new(32));
    }
    // A sector-interleave of 128 bytes puts each line in one bank: 32 lines in four banks
    // rotate, eight cycles, whatever their sectors.
    let wide = ["l1d.bank_interleave_bytes=128"];
    assert_eq!(
        port_free_after(&wide, AccessKind::Load, &same),
        Cycle::new(8)
    );
}

#[test]
fn a_stream_of_four_sector_misses_fills_the_miss_queue_it_drains_a_request_a_cycle() {
    // Warps of coalesced loads, one 128-byte line (four sector requests) each, every
    // cycle: four requests join the 16-entry queue per cycle and one leaves, so lookups
    // are refused (MISS_QUEUE_FULL); unbounded, never. Every load completes either way.
    let run = |sets: &[&str]| {
        let mut mem = MemorySystem::new(&qv100(sets));
        let mut now = Cycle::ZERO;
        for w in 0..64u64 {
            let line = [LineAccess {
                line: LineAddr(w * 128),
                sectors: SectorMask::first(4),
            }];
            loop {
                let _ = mem.completed(now).count();
                let req = MemRequest {
                    kind: AccessKind::Load,
                    space: Space::Global,
                    lines: &line,
                };
                match mem.issue(SmId(0), now, req) {
                    Ok(_) => break,
                    Err(s) => {
                        let next = s
                            .retry_at()
                            .unwrap_or_else(|| mem.next_event_cycle().expect("blocked forever"));
                        now = next.max(now + Cycles::new(1));
                    }
                }
            }
            now += Cycles::new(1);
        }
        while let Some(t) = mem.next_event_cycle() {
            now = now.max(t);
            let _ = mem.completed(now).count();
            let _ = mem.unblocked().count();
        }
        (mem.stats().l1d_reservation_fail_cycles, now)
    };
    let (bounded, end_bounded) = run(&[]);
    // An unbounded miss queue cannot push back on a full injection buffer.
    let (unbounded, end_unbounded) = run(&[
        "l1d.miss_queue_entries=0",
        "interconnect.injection_backpressure=issue",
    ]);
    assert!(bounded.miss_queue_full > 100, "{bounded:?}");
    assert_eq!(bounded.total, bounded.miss_queue_full);
    assert_eq!(unbounded.total, 0, "{unbounded:?}");
    // 256 sector requests leave one a cycle: the bounded run cannot finish sooner.
    assert!(
        end_bounded >= end_unbounded,
        "{end_bounded:?} < {end_unbounded:?}"
    );
}

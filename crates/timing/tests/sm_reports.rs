//! Completions and unblocks per SM (`MemorySystem::take_reports`, docs/parallel.md): what
//! each SM's own memory events report stays with the SM, and taking the reports SM by SM
//! gives every SM the same sequence as the gathered lists (`completed`, `unblocked`), with
//! the SMs' own event queues off (one thread) or on (several threads).

use std::collections::{HashMap, HashSet};
use timing::config::default_configs_dir;
use timing::memory::cache::{LineAddr, SectorMask};
use timing::memory::coalescer::LineAccess;
use timing::memory::{AccessKind, MemoryStats, SmId, Space};
use timing::{Cycle, Cycles, GpuConfig, MemRequest, MemorySystem, Override, RequestId, Stall};

const SMS: u32 = 4;
const REQUESTS: usize = 60;

/// What an SM was told, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Report {
    /// Request `k` of the SM completed at the cycle.
    Done(usize, Cycle),
    /// Its blocked request was accepted at the cycle.
    Unblocked(Cycle),
}

fn config(overrides: &[&str]) -> GpuConfig {
    let o: Vec<Override> = overrides
        .iter()
        .map(|s| Override::parse(s).unwrap())
        .collect();
    GpuConfig::load("gtx480", &default_configs_dir(), &o).unwrap()
}

/// Request `k` of SM `s`: loads and stores over a few lines shared by the SMs (hits,
/// merges, misses, and with few MSHRs reservation failures), one or two lines each.
fn request(s: u32, k: usize) -> (AccessKind, Vec<LineAccess>) {
    let line = |j: u64| LineAccess {
        line: LineAddr(((j * 7 + u64::from(s) * 3) % 23) * 128),
        sectors: SectorMask(0b1111),
    };
    let k = k as u64;
    let kind = if k % 5 == 4 {
        AccessKind::Store
    } else {
        AccessKind::Load
    };
    let lines = if k.is_multiple_of(3) {
        vec![line(k), line(k + 11)]
    } else {
        vec![line(k)]
    };
    (kind, lines)
}

/// Drives the memory system as the GPU's loop does, every cycle: the reports first (SM by
/// SM with `per_sm`, else the gathered lists), then one request per SM not waiting.
fn drive(cfg: &GpuConfig, local_queues: bool, per_sm: bool) -> (Vec<Vec<Report>>, MemoryStats) {
    let mut mem = MemorySystem::new(cfg);
    mem.set_local_queues(local_queues);
    let n = SMS as usize;
    let mut reports = vec![Vec::new(); n];
    let mut live: HashMap<RequestId, usize> = HashMap::new();
    let mut next = vec![0usize; n];
    // A refused SM waits for its unblock report, or until a known cycle.
    let mut blocked = vec![false; n];
    let mut wait_until = vec![Cycle::ZERO; n];
    let mut now = Cycle::ZERO;
    let mut take = |s: usize, r: Report, blocked: &mut Vec<bool>| {
        if let Report::Unblocked(_) = r {
            blocked[s] = false;
        }
        reports[s].push(r);
    };
    for _ in 0..200_000 {
        if per_sm {
            mem.advance(now);
            let mut seen = HashSet::new();
            while let Some((s, r)) = mem.take_reports() {
                assert!(seen.insert(s), "SM {s} reported twice in one cycle");
                for c in r.done {
                    assert_eq!(
                        c.id.sm(),
                        SmId(s as u32),
                        "SM {s} got another SM's completion"
                    );
                    let k = live.remove(&c.id).expect("a completion of a live request");
                    take(s, Report::Done(k, c.at), &mut blocked);
                }
                for at in r.unblocked {
                    take(s, Report::Unblocked(at), &mut blocked);
                }
            }
        } else {
            let done: Vec<_> = mem.completed(now).collect();
            for c in done {
                let s = c.id.sm().0 as usize;
                let k = live.remove(&c.id).expect("a completion of a live request");
                take(s, Report::Done(k, c.at), &mut blocked);
            }
            let unblocked: Vec<_> = mem.unblocked().collect();
            for (sm, at) in unblocked {
                take(sm.0 as usize, Report::Unblocked(at), &mut blocked);
            }
        }
        for s in 0..n {
            if next[s] == REQUESTS || blocked[s] || wait_until[s] > now {
                continue;
            }
            let (kind, lines) = request(s as u32, next[s]);
            let req = MemRequest {
                kind,
                space: Space::Global,
                lines: &lines,
            };
            match mem.issue(SmId(s as u32), now, req) {
                Ok(id) => {
                    assert!(live.insert(id, next[s]).is_none(), "id reused while live");
                    next[s] += 1;
                }
                Err(Stall::ReservationFail) => blocked[s] = true,
                Err(stall) => wait_until[s] = stall.retry_at().expect("a retry cycle"),
            }
        }
        if next.iter().all(|&k| k == REQUESTS) && live.is_empty() && mem.is_idle() {
            return (reports, mem.stats());
        }
        now += Cycles::new(1);
    }
    panic!("the requests did not finish");
}

fn check(overrides: &[&str]) {
    let cfg = config(overrides);
    let (gathered, stats) = drive(&cfg, false, false);
    for (s, reports) in gathered.iter().enumerate() {
        let done = reports
            .iter()
            .filter(|r| matches!(r, Report::Done(..)))
            .count();
        assert_eq!(done, REQUESTS, "SM {s}: every request completes once");
    }
    for (local_queues, per_sm) in [(false, true), (true, true), (true, false)] {
        let (r, st) = drive(&cfg, local_queues, per_sm);
        assert_eq!(r, gathered, "local queues {local_queues}, per SM {per_sm}");
        assert_eq!(st, stats, "local queues {local_queues}, per SM {per_sm}");
    }
}

#[test]
fn each_sm_gets_the_same_completions_taken_sm_by_sm_or_gathered() {
    check(&[]);
}

#[test]
fn each_sm_gets_the_same_unblocks_with_few_mshrs() {
    let cfg = config(&["l1d.mshrs=2"]);
    let (r, _) = drive(&cfg, false, true);
    assert!(
        r.iter()
            .flatten()
            .any(|x| matches!(x, Report::Unblocked(_))),
        "the plan meets reservation failures"
    );
    check(&["l1d.mshrs=2"]);
    check(&["l1d.mshrs=1", "l1d.mshr_max_merge=1"]);
}

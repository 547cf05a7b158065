//! Bounds on a functional run (issue 26): a kernel that never ends stops at the warp
//! instruction limit, the wall-clock deadline or an interrupt, as the timing model's run
//! limits stop a timed one, and says where every live warp of the CTA it was running is.
//!
//! The instruction limit is checked before each warp instruction, so a stop is
//! deterministic; the deadline and the interrupt flag are read every
//! [`CHECK_INTERVAL`] warp instructions.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use super::RunStats;

/// Warp instructions between two reads of the clock and the interrupt flag.
pub const CHECK_INTERVAL: u32 = 4096;

/// Bounds on one functional run; the default bounds nothing.
#[derive(Clone, Debug, Default)]
pub struct RunBound {
    /// Stop before the warp instruction that would exceed this many in this run.
    pub max_warp_instructions: Option<u64>,
    /// Stop at this wall-clock time.
    pub deadline: Option<Instant>,
    /// Stop when this flag is set (a signal handler sets it).
    pub interrupt: Option<Arc<AtomicBool>>,
}

impl RunBound {
    /// Why the run must stop now, by the clock or the flag.
    pub(crate) fn external_stop(&self) -> Option<StopCause> {
        if self
            .interrupt
            .as_ref()
            .is_some_and(|f| f.load(Ordering::Relaxed))
        {
            return Some(StopCause::Interrupt);
        }
        match self.deadline {
            Some(at) if Instant::now() >= at => Some(StopCause::Deadline),
            _ => None,
        }
    }
}

/// Which bound stopped a functional run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopCause {
    /// [`RunBound::max_warp_instructions`].
    Instructions,
    /// [`RunBound::deadline`].
    Deadline,
    /// [`RunBound::interrupt`].
    Interrupt,
}

/// A live warp of the CTA a functional run stopped in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LiveWarp {
    /// The warp within its CTA.
    pub warp: u32,
    /// The PTX line of its next instruction (for a warp at a barrier, the barrier's).
    pub ptx_line: Option<u32>,
    /// The barrier it waits at, if it does.
    pub barrier: Option<u32>,
}

/// A functional run a bound stopped: why, the counts up to the stop, and the CTA it was
/// running (CTAs run one after another, so only that one has live warps).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionalStop {
    pub cause: StopCause,
    pub stats: RunStats,
    pub cta: [u32; 3],
    pub warps: Vec<LiveWarp>,
}

impl FunctionalStop {
    /// Warps listed one by one in [`FunctionalStop::live_warps`]; the rest are counted.
    pub const LISTED: usize = 16;

    /// The CTA and its live warps, as the timing model's stop lists them: "CTA (x,y,z): N
    /// warps live (R ready to issue, B at a barrier): warp 0 (next: PTX line L) ready to
    /// issue; …".
    pub fn live_warps(&self) -> impl fmt::Display + '_ {
        LiveWarps(self)
    }
}

struct LiveWarps<'a>(&'a FunctionalStop);

impl fmt::Display for LiveWarps<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let stop = self.0;
        let [x, y, z] = stop.cta;
        let warps = &stop.warps;
        write!(f, "CTA ({x},{y},{z}): {} warps live", warps.len())?;
        if warps.is_empty() {
            return Ok(());
        }
        let at_barrier = warps.iter().filter(|w| w.barrier.is_some()).count();
        let ready = warps.len() - at_barrier;
        let counts: Vec<String> = [(ready, "ready to issue"), (at_barrier, "at a barrier")]
            .iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, k)| format!("{n} {k}"))
            .collect();
        write!(f, " ({})", counts.join(", "))?;
        let listed: Vec<String> = warps
            .iter()
            .take(FunctionalStop::LISTED)
            .map(|w| {
                let mut s = format!("warp {}", w.warp);
                if let Some(line) = w.ptx_line {
                    s += &format!(" (next: PTX line {line})");
                }
                match w.barrier {
                    Some(b) => s + &format!(" waits at barrier {b}"),
                    None => s + " ready to issue",
                }
            })
            .collect();
        write!(f, ": {}", listed.join("; "))?;
        if warps.len() > FunctionalStop::LISTED {
            write!(f, "; and {} more", warps.len() - FunctionalStop::LISTED)?;
        }
        Ok(())
    }
}

/// A bound's check on a run in progress, before each warp instruction: the instruction
/// budget every time, the deadline and the interrupt every [`CHECK_INTERVAL`].
pub(crate) struct BoundCheck<'b> {
    bound: &'b RunBound,
    before: RunStats,
    budget: u64,
    external: bool,
    check_in: u32,
}

impl<'b> BoundCheck<'b> {
    /// A check of `bound` on a run whose counts start at `before`.
    pub(crate) fn new(bound: &'b RunBound, before: RunStats) -> Self {
        BoundCheck {
            bound,
            before,
            budget: bound.max_warp_instructions.unwrap_or(u64::MAX),
            external: bound.deadline.is_some() || bound.interrupt.is_some(),
            check_in: CHECK_INTERVAL,
        }
    }

    /// Why the run stops before its next warp instruction, its counts being `now`.
    pub(crate) fn stop(&mut self, now: RunStats) -> Option<StopCause> {
        if now.warp_instructions - self.before.warp_instructions >= self.budget {
            return Some(StopCause::Instructions);
        }
        if self.external {
            self.check_in -= 1;
            if self.check_in == 0 {
                self.check_in = CHECK_INTERVAL;
                return self.bound.external_stop();
            }
        }
        None
    }

    /// The counts since the check began, the run's being `now`.
    pub(crate) fn since(&self, now: RunStats) -> RunStats {
        RunStats {
            warp_instructions: now.warp_instructions - self.before.warp_instructions,
            thread_instructions: now.thread_instructions - self.before.thread_instructions,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_warps_are_counted_by_kind_and_listed() {
        let mut stop = FunctionalStop {
            cause: StopCause::Instructions,
            stats: RunStats::default(),
            cta: [3, 0, 1],
            warps: vec![
                LiveWarp {
                    warp: 0,
                    ptx_line: Some(12),
                    barrier: None,
                },
                LiveWarp {
                    warp: 1,
                    ptx_line: None,
                    barrier: Some(0),
                },
            ],
        };
        assert_eq!(
            stop.live_warps().to_string(),
            "CTA (3,0,1): 2 warps live (1 ready to issue, 1 at a barrier): warp 0 (next: \
             PTX line 12) ready to issue; warp 1 waits at barrier 0"
        );
        stop.warps = (0..20)
            .map(|w| LiveWarp {
                warp: w,
                ptx_line: None,
                barrier: None,
            })
            .collect();
        let text = stop.live_warps().to_string();
        assert!(
            text.starts_with("CTA (3,0,1): 20 warps live (20 ready to issue): warp 0 "),
            "{text}"
        );
        assert!(text.ends_with("; and 4 more"), "{text}");
    }

    #[test]
    fn the_interrupt_wins_over_the_deadline() {
        let flag = Arc::new(AtomicBool::new(false));
        let bound = RunBound {
            deadline: Some(Instant::now()),
            interrupt: Some(flag.clone()),
            ..RunBound::default()
        };
        assert_eq!(bound.external_stop(), Some(StopCause::Deadline));
        flag.store(true, Ordering::Relaxed);
        assert_eq!(bound.external_stop(), Some(StopCause::Interrupt));
        assert_eq!(RunBound::default().external_stop(), None);
    }
}

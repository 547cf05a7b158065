//! Bounds on a simulation and what the simulator says when it stops early: the run limits
//! ([`RunLimits`]: cycles, warp instructions, a wall-clock deadline, an interrupt flag, the
//! no-progress watchdog), why a run stopped ([`StopReason`]), the state of every warp still
//! live at that moment ([`WarpState`]) and the progress figures a front end may display
//! ([`Progress`]).
//!
//! Limits count over the whole simulation, across kernels: `max_cycles` bounds the
//! simulated clock (the sum of the kernels' cycles), `max_instructions` the warp
//! instructions issued. The simulator stops at the first cycle at which a bound is
//! reached, so a stop is deterministic for cycles and instructions; the deadline and the
//! interrupt flag are read every [`CHECK_INTERVAL`] loop iterations and are not.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Main-loop iterations between two reads of the clock (deadline, progress display) and
/// of the interrupt flag.
pub const CHECK_INTERVAL: u32 = 1024;

/// Default of [`RunLimits::watchdog_iterations`]: visited cycles in a row in which no
/// warp instruction issued and no memory request completed. A wait the event loop skips
/// costs one visited cycle however long it is; a visited cycle that changes nothing
/// means an SM wakes without being able to do anything, which the pipeline does only for
/// a few cycles at a time.
pub const DEFAULT_WATCHDOG_ITERATIONS: u64 = 1 << 24;

/// Bounds on a simulation. The default bounds nothing but the watchdog.
#[derive(Clone, Debug)]
pub struct RunLimits {
    /// Stop when the simulated clock reaches this cycle (cycles over all kernels).
    pub max_cycles: Option<u64>,
    /// Stop when this many warp instructions have issued (over all kernels).
    pub max_instructions: Option<u64>,
    /// Stop at this wall-clock time; `timeout` is what it stands for in the message.
    pub deadline: Option<(Instant, Duration)>,
    /// Stop when this flag is set (a signal handler or another thread sets it).
    pub interrupt: Option<Arc<AtomicBool>>,
    /// Report no progress after this many visited cycles in a row without an issued
    /// instruction or a completed memory request.
    pub watchdog_iterations: u64,
}

impl Default for RunLimits {
    fn default() -> Self {
        RunLimits {
            max_cycles: None,
            max_instructions: None,
            deadline: None,
            interrupt: None,
            watchdog_iterations: DEFAULT_WATCHDOG_ITERATIONS,
        }
    }
}

impl RunLimits {
    /// Why the run must stop now, given the wall clock, if the deadline passed or the
    /// interrupt flag is set.
    pub(crate) fn external_stop(&self, now: Instant) -> Option<StopReason> {
        if self
            .interrupt
            .as_ref()
            .is_some_and(|f| f.load(Ordering::Relaxed))
        {
            return Some(StopReason::Interrupted);
        }
        match self.deadline {
            Some((at, timeout)) if now >= at => Some(StopReason::Timeout(timeout)),
            _ => None,
        }
    }
}

/// The bound on a functional part of a timed run ([`RunLimits::functional_bound`]) and
/// how its stops read.
#[derive(Clone, Debug)]
pub struct FunctionalBound {
    /// The bound.
    pub bound: emu::RunBound,
    /// The limit its instruction budget stands for: the cycle or the instruction limit,
    /// whichever allows fewer warp instructions.
    pub on_instructions: StopReason,
}

impl FunctionalBound {
    /// Why the timed run stops, a functional stop's cause being `cause`.
    pub fn reason(&self, cause: emu::StopCause, limits: &RunLimits) -> StopReason {
        match cause {
            emu::StopCause::Instructions => self.on_instructions.clone(),
            emu::StopCause::Deadline => StopReason::Timeout(
                limits
                    .deadline
                    .map_or(Duration::ZERO, |(_, timeout)| timeout),
            ),
            emu::StopCause::Interrupt => StopReason::Interrupted,
        }
    }
}

impl RunLimits {
    /// The bound on CTAs a timed run executes functionally (a sampled run's skipped
    /// CTAs and estimated launches, issue 26) at cycle `now`, `issued` warp instructions
    /// counted against [`RunLimits::max_instructions`] so far: the deadline and the
    /// interrupt, and at most the warp instructions the timed run could still issue
    /// before its limits (every scheduler of every SM issuing its full width every cycle
    /// up to `max_cycles`, and what `max_instructions` leaves). Simulated in detail, those
    /// CTAs would meet the same limits no sooner, so a CTA that never ends stops as it
    /// would there, and CTAs the timed run could finish are never stopped.
    pub fn functional_bound(
        &self,
        config: &crate::GpuConfig,
        now: u64,
        issued: u64,
    ) -> FunctionalBound {
        let per_cycle = u64::from(config.gpu.num_sms)
            .saturating_mul(u64::from(config.sm.schedulers))
            .saturating_mul(u64::from(config.sm.issue_width));
        let by_cycles = self.max_cycles.map(|c| {
            (
                MaxBy::Cycles(c),
                c.saturating_sub(now).saturating_mul(per_cycle),
            )
        });
        let by_instructions = self
            .max_instructions
            .map(|m| (MaxBy::Instructions(m), m.saturating_sub(issued)));
        let tighter = match (by_cycles, by_instructions) {
            (Some(c), Some(i)) => Some(if i.1 <= c.1 { i } else { c }),
            (c, i) => c.or(i),
        };
        FunctionalBound {
            bound: emu::RunBound {
                max_warp_instructions: tighter.map(|(_, n)| n),
                deadline: self.deadline.map(|(at, _)| at),
                interrupt: self.interrupt.clone(),
            },
            on_instructions: match tighter {
                Some((MaxBy::Cycles(c), _)) => StopReason::MaxCycles(c),
                Some((MaxBy::Instructions(m), _)) => StopReason::MaxInstructions(m),
                // No instruction budget: never stops on instructions.
                None => StopReason::Interrupted,
            },
        }
    }
}

/// Which limit a functional bound's instruction budget comes from.
#[derive(Clone, Copy)]
enum MaxBy {
    Cycles(u64),
    Instructions(u64),
}

/// Why a simulation stopped before its kernel ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// The simulated clock reached `RunLimits::max_cycles`.
    MaxCycles(u64),
    /// `RunLimits::max_instructions` warp instructions issued.
    MaxInstructions(u64),
    /// The wall-clock deadline passed.
    Timeout(Duration),
    /// The interrupt flag was set.
    Interrupted,
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StopReason::MaxCycles(n) => write!(f, "the cycle limit ({n} cycles) was reached"),
            StopReason::MaxInstructions(n) => {
                write!(
                    f,
                    "the instruction limit ({n} warp instructions) was reached"
                )
            }
            StopReason::Timeout(d) => {
                write!(f, "the time limit ({} s) was reached", d.as_secs_f64())
            }
            StopReason::Interrupted => write!(f, "the simulation was interrupted"),
        }
    }
}

/// What a live warp waits for, as the timing model sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WarpWait {
    /// At barrier `n` (`bar.sync n`) until the rest of its CTA arrives.
    Barrier(u32),
    /// Its instructions are being fetched.
    Fetch,
    /// Its next instruction reads a register a long-latency load or atomic has not
    /// written yet.
    Memory,
    /// Its next instruction reads or writes a register an earlier instruction has not
    /// written yet.
    Register,
    /// It has exited; instructions it issued are still in the pipeline.
    Draining,
    /// Nothing: it can issue when its scheduler picks it (or a unit frees).
    Issue,
    /// In `setmaxnreg.inc`, holding `registers` per thread, for registers its CTA's pool
    /// (`pool` per thread of a warp) does not hold.
    RegisterPool { registers: u16, pool: u32 },
}

impl fmt::Display for WarpWait {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WarpWait::Barrier(b) => write!(f, "waits at barrier {b}"),
            WarpWait::Fetch => f.write_str("waits for an instruction fetch"),
            WarpWait::Memory => f.write_str("waits for memory"),
            WarpWait::Register => f.write_str("waits for a register result"),
            WarpWait::Draining => f.write_str("has exited, instructions in flight"),
            WarpWait::Issue => f.write_str("ready to issue"),
            WarpWait::RegisterPool { registers, pool } => write!(
                f,
                "waits in setmaxnreg.inc (holding {registers} registers per thread) for \
                 registers its CTA's pool ({pool} per thread) does not hold"
            ),
        }
    }
}

/// One live warp when a simulation stopped or stalled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WarpState {
    /// The SM.
    pub sm: u32,
    /// The warp slot on the SM.
    pub slot: u32,
    /// The CTA (`ctaid`).
    pub cta: [u32; 3],
    /// The warp within its CTA.
    pub warp_in_cta: u32,
    /// The PTX line of its next instruction (for a warp at a barrier, the one after the
    /// barrier), when known.
    pub ptx_line: Option<u32>,
    /// What it waits for.
    pub wait: WarpWait,
}

impl fmt::Display for WarpState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [x, y, z] = self.cta;
        write!(
            f,
            "SM {} CTA ({x},{y},{z}) warp {}",
            self.sm, self.warp_in_cta
        )?;
        if let Some(line) = self.ptx_line {
            write!(f, " (next: PTX line {line})")?;
        }
        write!(f, " {}", self.wait)
    }
}

/// The live warps of a stopped or stalled kernel, in SM and slot order. Displayed as a
/// count per kind of wait, then each warp (the first [`WarpStates::LISTED`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WarpStates(pub Vec<WarpState>);

impl WarpStates {
    /// Warps listed one by one in the text; the rest are counted.
    pub const LISTED: usize = 16;
}

impl fmt::Display for WarpStates {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let warps = &self.0;
        write!(f, "{} warps live", warps.len())?;
        if warps.is_empty() {
            return Ok(());
        }
        // Counts per kind of wait, in the order the kinds first appear.
        let mut kinds: Vec<(String, usize)> = Vec::new();
        for w in warps {
            let kind = match w.wait {
                WarpWait::Barrier(_) => "at a barrier".to_string(),
                other => other.to_string(),
            };
            match kinds.iter_mut().find(|(k, _)| *k == kind) {
                Some((_, n)) => *n += 1,
                None => kinds.push((kind, 1)),
            }
        }
        let counts: Vec<String> = kinds.iter().map(|(k, n)| format!("{n} {k}")).collect();
        write!(f, " ({})", counts.join(", "))?;
        let listed: Vec<String> = warps
            .iter()
            .take(Self::LISTED)
            .map(ToString::to_string)
            .collect();
        write!(f, ": {}", listed.join("; "))?;
        if warps.len() > Self::LISTED {
            write!(f, "; and {} more", warps.len() - Self::LISTED)?;
        }
        Ok(())
    }
}

/// Where a simulation is, for a progress display.
#[derive(Clone, Copy, Debug)]
pub struct Progress<'a> {
    /// The kernel being simulated (as in the PTX).
    pub kernel: &'a str,
    /// The simulated clock.
    pub cycle: u64,
    /// Cycles of this kernel so far.
    pub kernel_cycles: u64,
    /// Warp instructions issued in this kernel so far.
    pub kernel_instructions: u64,
    /// Wall-clock seconds spent in this kernel so far.
    pub kernel_seconds: f64,
}

/// Called with the progress at most every [`PROGRESS_INTERVAL`] while a kernel runs.
pub type ProgressHook = Box<dyn FnMut(&Progress<'_>) + Send>;

/// The shortest time between two progress reports.
pub const PROGRESS_INTERVAL: Duration = Duration::from_millis(250);

#[cfg(test)]
mod tests {
    use super::*;

    fn warp(sm: u32, w: u32, wait: WarpWait) -> WarpState {
        WarpState {
            sm,
            slot: w,
            cta: [sm, 0, 0],
            warp_in_cta: w,
            ptx_line: (w == 0).then_some(42),
            wait,
        }
    }

    #[test]
    fn warp_states_count_each_kind_and_list_the_first_warps() {
        let states = WarpStates(vec![
            warp(0, 0, WarpWait::Barrier(0)),
            warp(0, 1, WarpWait::Barrier(1)),
            warp(1, 0, WarpWait::Memory),
        ]);
        assert_eq!(
            states.to_string(),
            "3 warps live (2 at a barrier, 1 waits for memory): \
             SM 0 CTA (0,0,0) warp 0 (next: PTX line 42) waits at barrier 0; \
             SM 0 CTA (0,0,0) warp 1 waits at barrier 1; \
             SM 1 CTA (1,0,0) warp 0 (next: PTX line 42) waits for memory"
        );
        let many = WarpStates((0..20).map(|w| warp(2, w, WarpWait::Issue)).collect());
        let text = many.to_string();
        assert!(
            text.starts_with("20 warps live (20 ready to issue): "),
            "{text}"
        );
        assert!(text.ends_with("; and 4 more"), "{text}");
        assert_eq!(WarpStates::default().to_string(), "0 warps live");
    }

    #[test]
    fn the_interrupt_flag_wins_over_the_deadline() {
        let flag = Arc::new(AtomicBool::new(false));
        let start = Instant::now();
        let limits = RunLimits {
            deadline: Some((start + Duration::from_secs(5), Duration::from_secs(5))),
            interrupt: Some(flag.clone()),
            ..RunLimits::default()
        };
        assert_eq!(limits.external_stop(start), None);
        assert_eq!(
            limits.external_stop(start + Duration::from_secs(6)),
            Some(StopReason::Timeout(Duration::from_secs(5)))
        );
        flag.store(true, Ordering::Relaxed);
        assert_eq!(limits.external_stop(start), Some(StopReason::Interrupted));
        assert_eq!(
            StopReason::MaxCycles(1000).to_string(),
            "the cycle limit (1000 cycles) was reached"
        );
    }
}

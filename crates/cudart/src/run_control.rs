//! How a run ends early and what the user sees while it runs: the run limits of the
//! environment as the timing model's [`timing::RunLimits`], SIGINT/SIGTERM, the time limit
//! while the program is in its own code, and the progress line.
//!
//! - **Run limits** (`REGSIM_MAX_CYCLES`, `REGSIM_MAX_INSTRUCTIONS`, `REGSIM_TIMEOUT`):
//!   the timing model stops the kernel; the runtime prints why, where and what every live
//!   warp waits for, writes the statistics up to that point with `"complete": false`, and
//!   the process exits with [`LIMIT_EXIT_STATUS`] (the program does not run on: it would
//!   only see failing calls).
//! - **Signals**: SIGINT, SIGTERM and SIGHUP (where the program has not set its own handler) set
//!   an interrupt flag the timing model reads; a watcher thread handles a signal caught
//!   while the program runs its own code. Either way the statistics so far are written,
//!   marked incomplete, and the signal is raised again with its default action, so the
//!   program dies of it as it would have.
//! - **Time limit in host code**: the same watcher ends a program that is past its time
//!   limit outside the simulator, with the statistics of the kernels it completed.
//! - **Progress** (`REGSIM_PROGRESS`, which `regsim run` sets when stderr is a terminal):
//!   one status line, rewritten at most four times a second, with the kernel, its cycles
//!   and warp instructions so far and the simulation rate; every other runtime line
//!   erases it first, and it is erased when the kernel ends, so a program without a
//!   status line is in its own code.

use std::ffi::{c_int, c_void};
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use crate::config::RunBounds;

/// The exit status of a run a limit stopped (`--max-cycles`, `--max-instructions`,
/// `--timeout`); as `timeout(1)`'s.
pub const LIMIT_EXIT_STATUS: i32 = 124;

const SIGHUP: c_int = 1;
const SIGINT: c_int = 2;
const SIGTERM: c_int = 15;
const SIG_DFL: usize = 0;
const SIG_ERR: usize = usize::MAX;

extern "C" {
    fn signal(signum: c_int, handler: usize) -> usize;
    fn raise(sig: c_int) -> c_int;
    fn _exit(status: c_int) -> !;
    fn fflush(stream: *mut c_void) -> c_int;
}

/// Set by the signal handler; the timing model reads it.
static INTERRUPT: OnceLock<Arc<AtomicBool>> = OnceLock::new();
/// The signal caught, or 0.
static CAUGHT: AtomicI32 = AtomicI32::new(0);
/// The progress line is on the terminal.
static PROGRESS_SHOWN: AtomicBool = AtomicBool::new(false);

/// The flag the timing model stops at.
pub fn interrupt_flag() -> Arc<AtomicBool> {
    INTERRUPT
        .get_or_init(|| Arc::new(AtomicBool::new(false)))
        .clone()
}

extern "C" fn on_signal(sig: c_int) {
    // Async-signal-safe: atomic stores only.
    CAUGHT.store(sig, Ordering::SeqCst);
    if let Some(flag) = INTERRUPT.get() {
        flag.store(true, Ordering::SeqCst);
    }
}

/// Catches SIGINT, SIGTERM and SIGHUP, unless the program handles them itself.
pub fn install_signal_handlers() {
    interrupt_flag();
    for sig in [SIGINT, SIGTERM, SIGHUP] {
        // SAFETY: `on_signal` only stores to atomics.
        let old = unsafe { signal(sig, on_signal as extern "C" fn(c_int) as usize) };
        if old != SIG_DFL && old != SIG_ERR {
            // The program's own handler (or an ignored signal) stays.
            // SAFETY: restores what `signal` returned.
            unsafe { signal(sig, old) };
        }
    }
}

/// The signal caught, if any.
pub fn caught_signal() -> Option<i32> {
    Some(CAUGHT.load(Ordering::SeqCst)).filter(|&s| s != 0)
}

/// `SIGINT`, `SIGTERM`, or `signal N`.
pub fn signal_name(sig: i32) -> String {
    match sig {
        SIGINT => "SIGINT".into(),
        SIGTERM => "SIGTERM".into(),
        SIGHUP => "SIGHUP".into(),
        n => format!("signal {n}"),
    }
}

/// How the process ends after a stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// With this status.
    Status(i32),
    /// Killed by this signal, with its default action.
    Signal(i32),
}

impl Exit {
    /// After a stop: the signal caught, if one caused it, else [`LIMIT_EXIT_STATUS`].
    pub fn after_stop() -> Exit {
        caught_signal().map_or(Exit::Status(LIMIT_EXIT_STATUS), Exit::Signal)
    }
}

/// Ends the process now: the program's C stdio buffers flushed, no exit handlers run
/// (the statistics are already written).
pub fn exit_process(exit: Exit) -> ! {
    clear_progress_line();
    // SAFETY: flushing every C stream, then ending the process as the C library does.
    unsafe {
        fflush(std::ptr::null_mut());
        if let Exit::Signal(sig) = exit {
            signal(sig, SIG_DFL);
            raise(sig);
        }
        _exit(match exit {
            Exit::Status(code) => code,
            Exit::Signal(sig) => 128 + sig,
        })
    }
}

/// The timing model's limits for the environment's bounds, counted from `start`.
pub fn timing_limits(bounds: &RunBounds, start: Instant) -> timing::RunLimits {
    timing::RunLimits {
        max_cycles: bounds.max_cycles,
        max_instructions: bounds.max_instructions,
        deadline: bounds.timeout_seconds.map(|s| {
            let d = Duration::from_secs_f64(s);
            (start + d, d)
        }),
        interrupt: Some(interrupt_flag()),
        ..timing::RunLimits::default()
    }
}

/// Watches, every 50 ms, for a caught signal or the time limit (`deadline`, counted like
/// the timing model's) while the program is outside the simulator: `end` gets the
/// reason and how to exit, and returns false when the runtime is busy (a launch, which
/// the timing model stops itself).
pub fn spawn_watcher(
    deadline: Option<(Instant, f64)>,
    end: impl Fn(String, Exit) -> bool + Send + 'static,
) {
    let spawned = std::thread::Builder::new()
        .name("regsim-watch".into())
        .spawn(move || loop {
            std::thread::sleep(Duration::from_millis(50));
            let stop = match (caught_signal(), deadline) {
                (Some(sig), _) => Some((
                    format!("the program was interrupted by {}", signal_name(sig)),
                    Exit::Signal(sig),
                )),
                (None, Some((at, seconds))) if Instant::now() >= at => Some((
                    format!(
                        "the time limit ({seconds} s) was reached while the program ran its \
                         own code"
                    ),
                    Exit::Status(LIMIT_EXIT_STATUS),
                )),
                _ => None,
            };
            if let Some((reason, exit)) = stop {
                end(reason, exit);
            }
        });
    if let Err(e) = spawned {
        eprintln!("regsim: cannot watch for signals and the time limit: {e}");
    }
}

/// The progress line's hook for the timing model.
pub fn progress_hook() -> timing::run_limits::ProgressHook {
    Box::new(|p: &timing::Progress<'_>| {
        let rate = if p.kernel_seconds > 0.0 {
            p.kernel_cycles as f64 / p.kernel_seconds
        } else {
            0.0
        };
        let line = format!(
            "regsim: kernel {}: {} cycles, {} warp instr, {:.1} s ({}/s)",
            short_name(p.kernel),
            p.kernel_cycles,
            p.kernel_instructions,
            p.kernel_seconds,
            human(rate),
        );
        let mut err = std::io::stderr().lock();
        // Erase the line, then write the new one without ending it.
        let _ = write!(err, "\r\x1b[2K{line}");
        let _ = err.flush();
        PROGRESS_SHOWN.store(true, Ordering::Relaxed);
    })
}

/// The kernel's demangled name without its parameters, at most 40 characters: the
/// progress line must fit a terminal line, or `\r` cannot rewrite it.
fn short_name(mangled: &str) -> String {
    let name = crate::stats::demangle(mangled);
    let bare = name.split('(').next().unwrap_or(&name).trim();
    let bare = if bare.is_empty() { name.as_str() } else { bare };
    match bare.char_indices().nth(40) {
        Some((i, _)) => format!("{}...", &bare[..i]),
        None => bare.to_string(),
    }
}

/// A rate in cycles, with a K/M suffix.
fn human(rate: f64) -> String {
    if rate >= 1e6 {
        format!("{:.1}M cycles", rate / 1e6)
    } else if rate >= 1e3 {
        format!("{:.1}K cycles", rate / 1e3)
    } else {
        format!("{rate:.0} cycles")
    }
}

/// Erases the progress line if it is shown.
pub fn clear_progress_line() {
    if PROGRESS_SHOWN.swap(false, Ordering::Relaxed) {
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K");
        let _ = err.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_bounds_become_timing_limits() {
        let start = Instant::now();
        let l = timing_limits(
            &RunBounds {
                max_cycles: Some(10),
                max_instructions: None,
                timeout_seconds: Some(1.5),
            },
            start,
        );
        assert_eq!(l.max_cycles, Some(10));
        assert_eq!(l.max_instructions, None);
        let (at, d) = l.deadline.unwrap();
        assert_eq!(at - start, Duration::from_millis(1500));
        assert_eq!(d, Duration::from_millis(1500));
        assert!(l.interrupt.is_some());
        assert_eq!(human(2_500_000.0), "2.5M cycles");
        assert_eq!(human(950.0), "950 cycles");
        assert_eq!(signal_name(15), "SIGTERM");
        assert_eq!(short_name("_Z5saxpyifPKfPf"), "saxpy");
        assert_eq!(
            short_name("_Z15transpose_tiledILb1EEvPKfPfii"),
            "void transpose_tiled<true>"
        );
        assert_eq!(
            short_name(&"k".repeat(50)),
            format!("{}...", "k".repeat(40))
        );
    }
}

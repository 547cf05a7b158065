//! A fixed crew of worker threads for the SMs' parallel phase ([`crate::parallel`]),
//! started once per simulator and kept awake between phases while phases come often.
//!
//! A phase is a few microseconds of work and there is one per visited cycle, so its
//! hand-off has to cost far less than waking a sleeping thread through the kernel. A
//! rayon scope per cycle did not: its idle workers yield and then sleep between cycles,
//! and the futex and `sched_yield` traffic cost more system time than the phase's whole
//! work (docs/parallel.md). Here a phase is `threads` parts, one per thread of the crew
//! (the caller included); the caller publishes the job in one atomic word (a generation,
//! the next unclaimed part and the parts running) and every thread, the caller first,
//! claims parts from that word until none is left. A worker that comes late finds the
//! parts taken and the caller never waits for it: under a loaded machine, where a worker
//! may not run for milliseconds, the caller steps its share too. The caller waits only for
//! parts already claimed.
//!
//! Waiting threads spin, then park. The spin is adaptive, per thread: doubled (up to
//! [`MAX_SPIN`]) when a wait ends while spinning, halved (down to [`MIN_SPIN`]) when it
//! had to park. While cycles follow each other closely on free cores a hand-off is a few
//! cache-line transfers; on cores shared with other work, where spinning fails, the
//! threads soon park at once instead of burning the time the other thread needs.
//!
//! Parking follows the usual two-flag protocol: a waiter announces that it sleeps
//! (`SeqCst`), checks its condition once more, and parks; the other side changes the
//! condition (`SeqCst`) and then unparks the waiter if it announced sleep. One of the two
//! always sees the other's store, so no wake-up is lost, and `park`'s token covers an
//! `unpark` that comes before the `park`.

use std::any::Any;
use std::cell::Cell;
use std::hint;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{self, JoinHandle, Thread};
use std::time::{Duration, Instant};

/// The longest a waiting thread spins before it parks: longer than the serial part of a
/// busy cycle, so that workers stay awake while cycles follow each other.
pub(crate) const MAX_SPIN: Duration = Duration::from_micros(100);

/// The shortest spin, where spinning keeps failing (cores shared with other work).
pub(crate) const MIN_SPIN: Duration = Duration::from_micros(2);

/// A phase's job: called once with each part index of `0..threads`.
type Job<'a> = &'a (dyn Fn(usize) + Sync);

/// The phase word: generation (high 32 bits), next unclaimed part (16 bits) and parts
/// claimed and not finished (low 16 bits). One word, so that a claim checks the
/// generation and counts itself running in one step: the caller, seeing every part
/// claimed and none running, knows no thread can still start one of its parts.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct PhaseWord(u64);

impl PhaseWord {
    const PART: u64 = 1 << 16;
    const RUNNING: u64 = 1;

    fn new(generation: u32) -> Self {
        PhaseWord(u64::from(generation) << 32)
    }
    fn generation(self) -> u32 {
        (self.0 >> 32) as u32
    }
    fn next_part(self) -> usize {
        ((self.0 >> 16) & 0xffff) as usize
    }
    fn running(self) -> usize {
        (self.0 & 0xffff) as usize
    }
}

/// What the caller and the workers share.
struct Shared {
    /// The current phase ([`PhaseWord`]).
    phase: AtomicU64,
    /// Parts per phase: the threads, the caller included.
    parts: usize,
    /// The current phase's job, as a `*const Job`: valid while a part of it is claimable
    /// or running.
    job: AtomicPtr<()>,
    /// Set (with a new generation) when the crew is dropped.
    stop: AtomicBool,
    /// Worker `k` (of `1..parts`, at `k - 1`) sleeps or is about to.
    asleep: Box<[AtomicBool]>,
    /// The caller sleeps, or is about to, waiting for the parts running.
    caller_asleep: AtomicBool,
    /// The thread waiting for the parts running, when it sleeps.
    caller: Mutex<Option<Thread>>,
    /// The first panic of a part in the current phase.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
}

impl Shared {
    /// Claims and runs parts of generation `generation` until none is left.
    fn run_parts(&self, generation: u32) {
        let mut word = PhaseWord(self.phase.load(Ordering::SeqCst));
        loop {
            if word.generation() != generation || word.next_part() >= self.parts {
                return;
            }
            let claimed = PhaseWord(word.0 + PhaseWord::PART + PhaseWord::RUNNING);
            match self.phase.compare_exchange_weak(
                word.0,
                claimed.0,
                Ordering::SeqCst,
                Ordering::SeqCst,
            ) {
                Ok(_) => {
                    let finish = PartDone(self);
                    let job = self.job.load(Ordering::Relaxed) as *const Job<'_>;
                    // SAFETY: the caller stored its job before publishing the generation
                    // (the claim's `SeqCst` exchange synchronizes with that store), and
                    // keeps it alive until no part is claimable or running; this part
                    // runs until `finish` is dropped.
                    let job = unsafe { &*job };
                    let part = word.next_part();
                    // Kept before the part counts as finished, so that the caller finds it.
                    if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| job(part))) {
                        let mut first = self.panic.lock().unwrap_or_else(PoisonError::into_inner);
                        first.get_or_insert(payload);
                    }
                    drop(finish);
                    word = PhaseWord(self.phase.load(Ordering::SeqCst));
                }
                Err(now) => word = PhaseWord(now),
            }
        }
    }
}

/// Marks a claimed part finished when dropped, and wakes the caller if it waits for the
/// last one.
struct PartDone<'s>(&'s Shared);

impl Drop for PartDone<'_> {
    fn drop(&mut self) {
        let s = self.0;
        let before = PhaseWord(s.phase.fetch_sub(PhaseWord::RUNNING, Ordering::SeqCst));
        if before.running() == 1 && s.caller_asleep.load(Ordering::SeqCst) {
            let caller = s.caller.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(t) = caller.as_ref() {
                t.unpark();
            }
        }
    }
}

/// `workers` threads that run a job's parts, with the calling thread, whenever
/// [`Crew::run`] asks.
pub(crate) struct Crew {
    shared: Arc<Shared>,
    handles: Vec<JoinHandle<()>>,
    /// The caller's current spin ([`MIN_SPIN`]..=[`MAX_SPIN`]).
    spin: Cell<Duration>,
}

impl Crew {
    /// Starts `workers` threads (0 is allowed: then [`Crew::run`] runs on the caller
    /// alone). At most `u16::MAX - 1` (`crate::parallel::MAX_THREADS` is far below).
    pub fn start(workers: usize) -> std::io::Result<Self> {
        let workers = workers.min(usize::from(u16::MAX) - 1);
        let shared = Arc::new(Shared {
            phase: AtomicU64::new(PhaseWord::new(0).0),
            parts: workers + 1,
            job: AtomicPtr::new(std::ptr::null_mut()),
            stop: AtomicBool::new(false),
            asleep: (0..workers).map(|_| AtomicBool::new(false)).collect(),
            caller_asleep: AtomicBool::new(false),
            caller: Mutex::new(None),
            panic: Mutex::new(None),
        });
        let mut crew = Crew {
            shared,
            handles: Vec::with_capacity(workers),
            spin: Cell::new(MAX_SPIN),
        };
        for k in 1..=workers {
            let shared = Arc::clone(&crew.shared);
            // On failure `crew` is dropped, which stops the workers already started.
            let handle = thread::Builder::new()
                .name(format!("regsim-sm-{k}"))
                .spawn(move || work(&shared, k))?;
            crew.handles.push(handle);
        }
        Ok(crew)
    }

    /// The number of worker threads (the caller not counted).
    pub fn workers(&self) -> usize {
        self.handles.len()
    }

    /// Runs `job(k)` for every part `k` in `0..=workers`, each once, on whichever thread
    /// of the crew claims it first (the caller included), and returns when all have
    /// returned. A panic in any of them is resumed on the caller once every part has
    /// returned.
    pub fn run(&self, job: Job<'_>) {
        let s = &*self.shared;
        if self.handles.is_empty() {
            job(0);
            return;
        }
        // The workers read the job through this pointer; it stays valid because this
        // function does not return (nor unwind: `Close`) before every part is claimed
        // and none runs.
        let job_ref: &Job<'_> = &job;
        s.job
            .store(job_ref as *const Job<'_> as *mut (), Ordering::Relaxed);
        let generation = PhaseWord(s.phase.load(Ordering::Relaxed))
            .generation()
            .wrapping_add(1);
        s.phase
            .store(PhaseWord::new(generation).0, Ordering::SeqCst);
        for (asleep, handle) in s.asleep.iter().zip(&self.handles) {
            if asleep.load(Ordering::SeqCst) {
                handle.thread().unpark();
            }
        }
        let close = Close {
            shared: s,
            spin: &self.spin,
        };
        s.run_parts(generation);
        drop(close);
        let payload = s
            .panic
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(payload) = payload {
            panic::resume_unwind(payload);
        }
    }
}

impl Drop for Crew {
    fn drop(&mut self) {
        let s = &*self.shared;
        s.stop.store(true, Ordering::SeqCst);
        let generation = PhaseWord(s.phase.load(Ordering::SeqCst))
            .generation()
            .wrapping_add(1);
        s.phase
            .store(PhaseWord::new(generation).0, Ordering::SeqCst);
        for handle in &self.handles {
            handle.thread().unpark();
        }
        for handle in self.handles.drain(..) {
            // A worker catches its parts' panics, so joining fails only if the thread
            // itself was torn down; nothing is left to clean up either way.
            let _ = handle.join();
        }
    }
}

/// Ends the caller's phase when dropped: claims every part left (none, unless the caller
/// unwinds past its claims), then waits until no part runs, since the job borrows the
/// caller's stack.
struct Close<'s> {
    shared: &'s Shared,
    spin: &'s Cell<Duration>,
}

impl Drop for Close<'_> {
    fn drop(&mut self) {
        let s = self.shared;
        let parts = s.parts as u64;
        let _ = s
            .phase
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |w| {
                let next = (w >> 16) & 0xffff;
                (next < parts).then(|| w + ((parts - next) << 16))
            });
        let done = || PhaseWord(s.phase.load(Ordering::SeqCst)).running() == 0;
        let spin = wait_until(done, self.spin.get(), &s.caller_asleep, || {
            *s.caller.lock().unwrap_or_else(PoisonError::into_inner) = Some(thread::current());
        });
        self.spin.set(spin);
    }
}

/// Worker `k`'s loop: waits for each new generation and claims parts of it.
fn work(s: &Shared, k: usize) {
    let mut seen = PhaseWord(s.phase.load(Ordering::SeqCst)).generation();
    let mut spin = MAX_SPIN;
    loop {
        // `stop` too: a worker that starts late may first read the generation the drop
        // published.
        let new_phase = || {
            s.stop.load(Ordering::SeqCst)
                || PhaseWord(s.phase.load(Ordering::SeqCst)).generation() != seen
        };
        spin = wait_until(new_phase, spin, &s.asleep[k - 1], || {});
        seen = PhaseWord(s.phase.load(Ordering::SeqCst)).generation();
        if s.stop.load(Ordering::SeqCst) {
            return;
        }
        s.run_parts(seen);
    }
}

/// Returns once `ready()` holds: spins for `spin`, then sleeps, announcing it in
/// `asleep` (after `before_sleep`) so that whoever makes `ready()` true unparks it.
/// `ready` must read with `SeqCst`. Returns the spin for the next wait: doubled if this
/// one ended while spinning, halved if it had to sleep.
fn wait_until(
    ready: impl Fn() -> bool,
    spin: Duration,
    asleep: &AtomicBool,
    before_sleep: impl Fn(),
) -> Duration {
    let mut spins = 0u32;
    let mut since: Option<Instant> = None;
    while !ready() {
        spins = spins.wrapping_add(1);
        if spins.is_multiple_of(64) {
            let start = *since.get_or_insert_with(Instant::now);
            if start.elapsed() >= spin {
                before_sleep();
                loop {
                    asleep.store(true, Ordering::SeqCst);
                    if ready() {
                        break;
                    }
                    thread::park();
                }
                asleep.store(false, Ordering::SeqCst);
                return (spin / 2).max(MIN_SPIN);
            }
        }
        hint::spin_loop();
    }
    (spin * 2).min(MAX_SPIN)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    #[test]
    fn every_index_runs_once_per_phase_and_the_phase_is_over_on_return() {
        let crew = Crew::start(3).expect("threads start");
        assert_eq!(crew.workers(), 3);
        let hits: Vec<AtomicU32> = (0..4).map(|_| AtomicU32::new(0)).collect();
        for phase in 1..=2000u32 {
            crew.run(&|k| {
                hits[k].fetch_add(1, Ordering::Relaxed);
            });
            // Every job has returned: the counts are exact, not eventually so.
            for h in &hits {
                assert_eq!(h.load(Ordering::Relaxed), phase);
            }
        }
    }

    #[test]
    fn workers_that_slept_wake_for_the_next_phase() {
        let crew = Crew::start(2).expect("threads start");
        let sum = AtomicU32::new(0);
        for _ in 0..3 {
            // Longer than the spin: every worker parks before the next phase.
            thread::sleep(MAX_SPIN * 20);
            crew.run(&|k| {
                sum.fetch_add(k as u32 + 1, Ordering::Relaxed);
            });
        }
        assert_eq!(sum.load(Ordering::Relaxed), 3 * (1 + 2 + 3));
    }

    #[test]
    fn the_caller_waits_for_parts_that_run_long_on_a_worker() {
        let crew = Crew::start(1).expect("threads start");
        for _ in 0..3 {
            let done: Vec<AtomicBool> = (0..2).map(|_| AtomicBool::new(false)).collect();
            let runners = Mutex::new(Vec::new());
            crew.run(&|k| {
                runners.lock().unwrap().push(thread::current().id());
                // Longer than the spin: the caller sleeps if the worker has a part.
                thread::sleep(MAX_SPIN * 20);
                done[k].store(true, Ordering::Relaxed);
            });
            assert!(done.iter().all(|d| d.load(Ordering::Relaxed)));
            assert_eq!(runners.lock().unwrap().len(), 2);
        }
    }

    #[test]
    fn parts_are_claimed_once_each_whichever_thread_runs_them() {
        let crew = Crew::start(3).expect("threads start");
        let claims: Vec<AtomicU32> = (0..4).map(|_| AtomicU32::new(0)).collect();
        for phase in 1..=500u32 {
            crew.run(&|k| {
                // Uneven parts: fast threads take over the rest.
                if k % 2 == 1 {
                    hint::spin_loop();
                    thread::yield_now();
                }
                claims[k].fetch_add(1, Ordering::Relaxed);
            });
            assert!(claims.iter().all(|c| c.load(Ordering::Relaxed) == phase));
        }
    }

    #[test]
    fn a_panic_in_any_part_reaches_the_caller_after_the_phase() {
        let crew = Crew::start(2).expect("threads start");
        let finished = AtomicU32::new(0);
        let result = panic::catch_unwind(AssertUnwindSafe(|| {
            crew.run(&|k| {
                if k == 2 {
                    panic!("job {k} failed");
                }
                finished.fetch_add(1, Ordering::Relaxed);
            })
        }));
        let payload = result.expect_err("the panic is resumed");
        assert_eq!(
            payload.downcast_ref::<String>().map(String::as_str),
            Some("job 2 failed")
        );
        assert_eq!(finished.load(Ordering::Relaxed), 2);
        // The crew still works.
        crew.run(&|_| {
            finished.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(finished.load(Ordering::Relaxed), 5);
    }

    #[test]
    fn a_crew_dropped_at_once_stops_even_workers_that_start_late() {
        // A worker scheduled only after the drop must still see the stop (a hang here
        // fails the test by its timeout).
        for round in 0..200usize {
            let crew = Crew::start(1 + round % 4).expect("threads start");
            if round % 2 == 1 {
                crew.run(&|_| {});
            }
            drop(crew);
        }
    }

    #[test]
    fn zero_workers_run_the_job_on_the_caller() {
        let crew = Crew::start(0).expect("no threads to start");
        let ran = AtomicU32::new(0);
        crew.run(&|k| {
            assert_eq!(k, 0);
            ran.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(ran.load(Ordering::Relaxed), 1);
    }
}

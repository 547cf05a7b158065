//! Running a sweep's missing points on this machine, `jobs` at a time.
//!
//! Worker threads take the next missing point, run it ([`super::runner::execute`]) and
//! hand the record to the calling thread, which alone owns the store and the progress
//! display: it writes each record in its own transaction as soon as it arrives, so the
//! store always holds exactly the runs that have finished.
//!
//! Each worker claims its point in the store first ([`Store::claim`]), so sweeps sharing
//! a store split the points between them: a point another sweep is running is put
//! aside, and once nothing else is left the sweep waits for it, runs it if that sweep
//! died (its lease goes stale), or counts it as done by the other sweep. A thread
//! refreshes this sweep's leases' heartbeat while it runs.

use std::collections::VecDeque;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{anyhow, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::runner;
use super::spec::{RunPoint, SweepSpec};
use super::store::{Claim, DamagedRun, Owner, RunRecord, RunStatus, Store, HEARTBEAT};

/// How a sweep shows its progress (on stderr).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Progress {
    /// A progress bar on a terminal, else one line per finished run.
    #[default]
    Auto,
    /// The progress bar: done/total, running, failures, elapsed, ETA.
    Bar,
    /// One line per finished run (for logs).
    Lines,
    /// Nothing but failures.
    Quiet,
}

/// Options of [`run_local`].
#[derive(Clone, Debug)]
pub struct LocalOptions {
    /// Simulations at once (at least 1).
    pub jobs: usize,
    /// The `regsim` executable that runs each point.
    pub regsim: PathBuf,
    /// Progress display.
    pub progress: Progress,
    /// Run again the points whose recorded run failed or timed out.
    pub retry_failed: bool,
}

impl LocalOptions {
    /// One job per available core, this executable, automatic progress.
    pub fn new() -> Result<LocalOptions> {
        Ok(LocalOptions {
            jobs: default_jobs(),
            regsim: std::env::current_exe()
                .map_err(|e| anyhow!("locating the regsim executable: {e}"))?,
            progress: Progress::Auto,
            retry_failed: false,
        })
    }
}

/// One simulation per core.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// What a local sweep did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SweepSummary {
    /// Points in the spec.
    pub total: usize,
    /// Points already recorded when the sweep started (and not retried).
    pub already_done: usize,
    /// Runs that finished ok in this sweep.
    pub ok: usize,
    /// Runs that failed or timed out in this sweep.
    pub failed: usize,
    /// Points another sweep sharing the store ran while this one waited for them.
    pub by_others: usize,
    /// Points recorded as failed or timed out after the sweep, this one's and earlier.
    pub failed_in_store: usize,
    /// Points whose row was damaged when the sweep started (run again).
    pub damaged: usize,
    /// Wall-clock seconds of the whole sweep.
    pub wall_seconds: f64,
    /// Sum of the runs' wall-clock seconds.
    pub run_seconds: f64,
    /// Seconds the sweep spent writing the store.
    pub store_seconds: f64,
}

impl SweepSummary {
    /// The line `regsim sweep` prints at the end.
    pub fn describe(&self) -> String {
        let ran = self.ok + self.failed;
        let mut s = format!(
            "sweep: {} points; {} already in the store; ran {} ({} ok, {} failed) in {:.1} s",
            self.total, self.already_done, ran, self.ok, self.failed, self.wall_seconds
        );
        if self.damaged > 0 {
            s.push_str(&format!(
                "; {} damaged row{} run again",
                self.damaged,
                if self.damaged == 1 { "" } else { "s" }
            ));
        }
        if self.by_others > 0 {
            s.push_str(&format!(
                "; {} run by another sweep sharing the store",
                self.by_others
            ));
        }
        if ran > 0 && self.run_seconds > 0.0 {
            s.push_str(&format!(
                "; store writes {:.3} s ({:.2}% of run time)",
                self.store_seconds,
                100.0 * self.store_seconds / self.run_seconds
            ));
        }
        if self.failed_in_store > 0 {
            s.push_str(&format!(
                "; {} failed runs in the store (--retry-failed runs them again)",
                self.failed_in_store
            ));
        }
        s
    }
}

enum Event {
    Started,
    Finished(usize, Box<Result<RunRecord>>),
    /// Recorded by another sweep while this one had it aside.
    ByOthers,
    /// The point could not be claimed (the store failed).
    Unclaimed(usize, anyhow::Error),
}

/// How long a worker with only points held by other sweeps waits before asking again.
const HELD_POLL: Duration = Duration::from_millis(500);

/// Expands `spec` and runs every point `store` does not hold (see [`run_points`]).
pub fn run_local(spec: &SweepSpec, store: &mut Store, opts: &LocalOptions) -> Result<SweepSummary> {
    let points = spec.expand_with(Some(&opts.regsim))?;
    run_points(&points, store, opts)
}

/// Runs the points of `points` that `store` has no row for (or a failed one, with
/// `retry_failed`), recording each as it finishes. Fails on the first run that could not
/// be attempted or recorded, after the runs in progress have finished and been recorded.
pub fn run_points(
    points: &[RunPoint],
    store: &mut Store,
    opts: &LocalOptions,
) -> Result<SweepSummary> {
    let started = Instant::now();
    let (recorded, damaged) = store.check()?;
    let damaged_points = report_damage(store, points, &damaged);
    let todo: Vec<&RunPoint> = points
        .iter()
        .filter(|p| match recorded.get(&p.key) {
            None => true,
            Some(RunStatus::Ok) => false,
            Some(_) => opts.retry_failed,
        })
        .collect();
    let mut summary = SweepSummary {
        total: points.len(),
        already_done: points.len() - todo.len(),
        damaged: damaged_points,
        ..SweepSummary::default()
    };
    let progress = match opts.progress {
        Progress::Auto if std::io::stderr().is_terminal() => Progress::Bar,
        Progress::Auto => Progress::Lines,
        p => p,
    };
    let bar = if progress == Progress::Bar {
        let bar =
            ProgressBar::with_draw_target(Some(points.len() as u64), ProgressDrawTarget::stderr())
                .with_position(summary.already_done as u64);
        bar.set_style(
            ProgressStyle::with_template(
                "{elapsed_precise} [{wide_bar}] {pos}/{len} done, {msg}, ETA {eta}",
            )
            .map_err(|e| anyhow!("progress bar template: {e}"))?
            .progress_chars("=> "),
        );
        bar.reset_eta();
        bar.enable_steady_tick(Duration::from_millis(500));
        bar
    } else {
        ProgressBar::hidden()
    };
    let jobs = opts.jobs.max(1).min(todo.len().max(1));
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let owner = Owner::this_process();
    // Say what other sweeps are doing before starting.
    let held = store.live_leases(&owner)?;
    let mut by_owner: std::collections::BTreeMap<(&str, u32), usize> = Default::default();
    for l in held.iter().filter(|l| todo.iter().any(|p| p.key == l.key)) {
        *by_owner.entry((l.host.as_str(), l.pid)).or_default() += 1;
    }
    for ((host, pid), n) in &by_owner {
        eprintln!(
            "regsim sweep: {n} point{} being run by pid {pid} on host {host} (another sweep \
             of this store); running the others first, then waiting for {}",
            if *n == 1 { " is" } else { "s are" },
            if *n == 1 { "it" } else { "them" }
        );
    }
    // Points another sweep holds, to be asked about again once `todo` is exhausted.
    let aside: Mutex<VecDeque<usize>> = Mutex::new(VecDeque::new());
    let workers_done = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<Event>();
    let mut running = 0usize;
    let mut first_error: Option<anyhow::Error> = None;
    let set_message = |bar: &ProgressBar, running: usize, failed: usize| {
        bar.set_message(format!("{running} running, {failed} failed"));
    };
    set_message(&bar, 0, 0);
    let path = store.path().to_path_buf();
    std::thread::scope(|scope| {
        {
            let (owner, workers_done, path) = (&owner, &workers_done, &path);
            scope.spawn(move || {
                let Ok(beat) = Store::open(path) else { return };
                let mut last = Instant::now();
                // Until every worker has stopped: a stopping sweep finishes its runs.
                while workers_done.load(Ordering::SeqCst) < jobs {
                    std::thread::sleep(Duration::from_millis(100));
                    if last.elapsed() >= HEARTBEAT {
                        // A missed beat is retried at the next one.
                        let _ = beat.heartbeat(owner);
                        last = Instant::now();
                    }
                }
            });
        }
        for _ in 0..jobs {
            let tx = tx.clone();
            let (todo, next, stop, aside, owner) = (&todo, &next, &stop, &aside, &owner);
            let (workers_done, path) = (&workers_done, &path);
            let regsim = &opts.regsim;
            let retry = opts.retry_failed;
            scope.spawn(move || {
                let mut claimer = Store::open(path);
                loop {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let n = next.fetch_add(1, Ordering::SeqCst);
                    let (i, was_aside) = if n < todo.len() {
                        (n, false)
                    } else {
                        match aside.lock().map(|mut q| q.pop_front()) {
                            Ok(Some(i)) => (i, true),
                            _ => break,
                        }
                    };
                    let point = todo[i];
                    let claim = match claimer.as_mut() {
                        Ok(c) => c.claim(&point.key, owner, retry),
                        Err(e) => Err(anyhow!("{e:#}")),
                    };
                    let event = match claim {
                        Ok(Claim::Claimed) => {
                            if tx.send(Event::Started).is_err() {
                                break;
                            }
                            let result = runner::execute(point, regsim);
                            if result.is_err() {
                                if let Ok(c) = claimer.as_ref() {
                                    // Unclaimed for others; a failed release goes stale.
                                    let _ = c.release(&point.key, owner);
                                }
                            }
                            Event::Finished(i, Box::new(result))
                        }
                        // Recorded when it was first listed: only another sweep wrote it.
                        Ok(Claim::Recorded(_)) => Event::ByOthers,
                        Ok(Claim::Held(_)) => {
                            if let Ok(mut q) = aside.lock() {
                                q.push_back(i);
                            }
                            if was_aside || n >= todo.len() {
                                std::thread::sleep(HELD_POLL);
                            }
                            continue;
                        }
                        Err(e) => Event::Unclaimed(i, e),
                    };
                    if tx.send(event).is_err() {
                        break;
                    }
                }
                workers_done.fetch_add(1, Ordering::SeqCst);
            });
        }
        drop(tx);
        for event in rx {
            match event {
                Event::Started => running += 1,
                Event::ByOthers => {
                    summary.by_others += 1;
                    bar.inc(1);
                }
                Event::Unclaimed(i, e) => {
                    stop.store(true, Ordering::SeqCst);
                    first_error.get_or_insert(e.context(format!(
                        "claiming point {} ({}) in the store",
                        todo[i].key,
                        todo[i].label()
                    )));
                }
                Event::Finished(i, result) => {
                    running -= 1;
                    let point = todo[i];
                    let record = match *result {
                        Ok(r) => r,
                        Err(e) => {
                            stop.store(true, Ordering::SeqCst);
                            first_error.get_or_insert(e.context(format!(
                                "running point {} ({})",
                                point.key,
                                point.label()
                            )));
                            continue;
                        }
                    };
                    let write_start = Instant::now();
                    if let Err(e) = store.record(std::slice::from_ref(&record)) {
                        stop.store(true, Ordering::SeqCst);
                        first_error.get_or_insert(e);
                        continue;
                    }
                    summary.store_seconds += write_start.elapsed().as_secs_f64();
                    summary.run_seconds += record.wall_seconds;
                    let done = summary.already_done + summary.ok + summary.failed + 1;
                    if record.status == RunStatus::Ok {
                        summary.ok += 1;
                    } else {
                        summary.failed += 1;
                        let last = record.last_stderr_line();
                        bar.suspend(|| {
                            eprintln!(
                                "regsim sweep: {} {} ({}): {last}",
                                record.status.as_str(),
                                point.label(),
                                exit_description(&record)
                            )
                        });
                    }
                    bar.inc(1);
                    set_message(&bar, running, summary.failed);
                    if progress == Progress::Lines {
                        eprintln!(
                            "[{done}/{}] {} {} ({:.1} s)",
                            points.len(),
                            record.status.as_str(),
                            point.label(),
                            record.wall_seconds
                        );
                    }
                }
            }
            set_message(&bar, running, summary.failed);
        }
    });
    bar.finish_and_clear();
    summary.wall_seconds = started.elapsed().as_secs_f64();
    // From the store, not from this sweep's count: another sweep sharing it may have run
    // points, and a rerun must exit as the first run did.
    let recorded = store.statuses()?;
    summary.failed_in_store = points
        .iter()
        .filter(|p| recorded.get(&p.key).is_some_and(|s| *s != RunStatus::Ok))
        .count();
    match first_error {
        Some(e) => Err(e),
        None => Ok(summary),
    }
}

/// Says which rows of `store` are damaged: those of `points` run again, the others
/// (another spec's, or a key damaged too) are left as they are. Returns how many of
/// `points` had one.
fn report_damage(store: &Store, points: &[RunPoint], damaged: &[DamagedRun]) -> usize {
    let keys: std::collections::BTreeSet<&str> = points.iter().map(|p| p.key.as_str()).collect();
    let mut ours = 0;
    for d in damaged {
        if keys.contains(d.key.as_str()) {
            ours += 1;
            eprintln!(
                "regsim sweep: {}; running it again",
                d.describe(store.path())
            );
        } else {
            eprintln!(
                "regsim sweep: warning: {}; it is no point of this spec, so it is left as is \
                 (sqlite3 {} \"DELETE FROM runs WHERE rowid = {}\" deletes it)",
                d.describe(store.path()),
                store.path().display(),
                d.rowid
            );
        }
    }
    ours
}

/// `exit 1`, `signal 9` or `no exit status`.
pub fn exit_description(record: &RunRecord) -> String {
    match (record.exit_code, record.signal) {
        (Some(c), _) => format!("exit {c}"),
        (None, Some(s)) => format!("signal {s}"),
        (None, None) => "no exit status".into(),
    }
}

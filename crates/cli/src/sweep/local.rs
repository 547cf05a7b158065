//! Running a sweep's missing points on this machine, `jobs` at a time.
//!
//! Worker threads take the next missing point, run it ([`super::runner::execute`]) and
//! hand the record to the calling thread, which alone owns the store and the progress
//! display: it writes each record in its own transaction as soon as it arrives, so the
//! store always holds exactly the runs that have finished.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::runner;
use super::spec::{RunPoint, SweepSpec};
use super::store::{RunRecord, RunStatus, Store};

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
    /// Points recorded as failed or timed out after the sweep, this one's and earlier.
    pub failed_in_store: usize,
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
}

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
    let recorded = store.statuses()?;
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
    let (tx, rx) = mpsc::channel::<Event>();
    let mut running = 0usize;
    let mut first_error: Option<anyhow::Error> = None;
    // Failed points of this spec that are not run again.
    let failed_before = if opts.retry_failed {
        0
    } else {
        points
            .iter()
            .filter(|p| recorded.get(&p.key).is_some_and(|s| *s != RunStatus::Ok))
            .count()
    };
    let set_message = |bar: &ProgressBar, running: usize, failed: usize| {
        bar.set_message(format!("{running} running, {failed} failed"));
    };
    set_message(&bar, 0, 0);
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            let tx = tx.clone();
            let (todo, next, stop) = (&todo, &next, &stop);
            let regsim = &opts.regsim;
            scope.spawn(move || loop {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(point) = todo.get(i) else { break };
                if tx.send(Event::Started).is_err() {
                    break;
                }
                let result = runner::execute(point, regsim);
                if tx.send(Event::Finished(i, Box::new(result))).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        for event in rx {
            match event {
                Event::Started => running += 1,
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
                        let last = record
                            .stderr_tail
                            .lines()
                            .rev()
                            .find(|l| !l.trim().is_empty())
                            .unwrap_or("");
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
    summary.failed_in_store = failed_before + summary.failed;
    match first_error {
        Some(e) => Err(e),
        None => Ok(summary),
    }
}

/// `exit 1`, `signal 9` or `no exit status`.
pub fn exit_description(record: &RunRecord) -> String {
    match (record.exit_code, record.signal) {
        (Some(c), _) => format!("exit {c}"),
        (None, Some(s)) => format!("signal {s}"),
        (None, None) => "no exit status".into(),
    }
}

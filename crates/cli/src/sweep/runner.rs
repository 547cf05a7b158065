//! Running one point: `regsim run` as a child process with its own statistics file.
//!
//! The child is the same `regsim` executable (or the one the caller names), in a process
//! group of its own so that a timeout can end it together with the CUDA program it
//! started; it is asked to die with its parent (`PR_SET_PDEATHSIG`), so killing a sweep,
//! even with SIGKILL, leaves no simulation running unsupervised. Its stdout and stderr go
//! to files in a private temporary directory, of which the store keeps the tails.

use std::io::{Read, Seek, SeekFrom};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};

use super::spec::RunPoint;
use super::store::{RunRecord, RunStatus};

/// Bytes of stderr kept in the store.
pub const STDERR_TAIL_BYTES: u64 = 4096;
/// Bytes of stdout kept in the store.
pub const STDOUT_TAIL_BYTES: u64 = 2048;

/// `regsim run`'s exit status for a run stopped at a limit (`--max-cycles`,
/// `--max-instructions`, `--timeout`), as the runtime's `run_control::LIMIT_EXIT_STATUS`
/// (and `timeout(1)`).
pub const LIMIT_EXIT_STATUS: u8 = 124;

/// How long after the spec's timeout a run that has not stopped by itself is killed: the
/// simulation stops at the limit and writes its statistics; only a program that never
/// reaches the runtime's check (one spinning in its own code) needs the kill.
fn kill_after(limit_seconds: f64) -> Duration {
    Duration::from_secs_f64(limit_seconds + (0.1 * limit_seconds).clamp(2.0, 30.0))
}

/// The version recorded with every run.
pub fn regsim_version() -> String {
    format!("regsim {}", env!("CARGO_PKG_VERSION"))
}

/// This machine's host name (`/proc/sys/kernel/hostname`), or `?`.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_owned())
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "?".into())
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// The last `limit` bytes of a file, as text (lossy; starting at a line break when one is
/// near the cut).
fn tail(path: &Path, limit: u64) -> String {
    let Ok(mut file) = std::fs::File::open(path) else {
        return String::new();
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let start = len.saturating_sub(limit);
    if file.seek(SeekFrom::Start(start)).is_err() {
        return String::new();
    }
    let mut bytes = Vec::new();
    if file.read_to_end(&mut bytes).is_err() {
        return String::new();
    }
    let mut text = String::from_utf8_lossy(&bytes).into_owned();
    if start > 0 {
        if let Some(nl) = text.find('\n').filter(|&i| i < 200) {
            text.drain(..=nl);
        }
    }
    text
}

extern "C" {
    /// `prctl(2)`.
    fn prctl(option: i32, ...) -> i32;
    /// `getppid(2)`.
    fn getppid() -> i32;
    /// `kill(2)`.
    fn kill(pid: i32, sig: i32) -> i32;
    /// `wait4(2)`.
    fn wait4(pid: i32, status: *mut i32, options: i32, rusage: *mut Rusage) -> i32;
}

/// `struct timeval` (64-bit Linux).
#[repr(C)]
#[derive(Default)]
struct Timeval {
    tv_sec: i64,
    tv_usec: i64,
}

/// `struct rusage` (64-bit Linux): the two times, then 14 counters we do not read.
#[repr(C)]
#[derive(Default)]
struct Rusage {
    ru_utime: Timeval,
    ru_stime: Timeval,
    counters: [i64; 14],
}

impl Timeval {
    fn seconds(&self) -> f64 {
        self.tv_sec as f64 + self.tv_usec as f64 * 1e-6
    }
}

/// Waits for the child `pid` like `Child::wait`, also returning the CPU seconds (user and
/// system) it and the descendants it waited for used.
fn wait_with_cpu_time(pid: i32) -> std::io::Result<(std::process::ExitStatus, f64)> {
    let mut status = 0i32;
    let mut usage = Rusage::default();
    loop {
        // SAFETY: both pointers are to live, properly sized and aligned locals.
        let r = unsafe { wait4(pid, &mut status, 0, &mut usage) };
        if r == pid {
            let cpu = usage.ru_utime.seconds() + usage.ru_stime.seconds();
            return Ok((std::process::ExitStatus::from_raw(status), cpu));
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

const PR_SET_PDEATHSIG: i32 = 1;
const SIGKILL: i32 = 9;

/// Makes `cmd`'s process receive SIGKILL when the thread that spawned it ends (its
/// parent's death, for a thread that waits for the child).
pub fn die_with_parent(cmd: &mut Command) {
    let parent = std::process::id() as i32;
    // SAFETY: the closure runs between fork and exec and calls only async-signal-safe
    // functions (prctl, getppid) and allocates nothing on success.
    unsafe {
        cmd.pre_exec(move || {
            if prctl(PR_SET_PDEATHSIG, SIGKILL as std::ffi::c_ulong) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent may have died before the prctl: then nobody will signal us.
            if getppid() != parent {
                return Err(std::io::Error::other("the parent process died"));
            }
            Ok(())
        });
    }
}

/// Runs `point` with `regsim` (the executable) and returns its record. `Err` only when
/// the run could not be attempted (no temporary directory, the executable cannot start);
/// a simulation that fails is an `Ok` record with status `failed`.
pub fn execute(point: &RunPoint, regsim: &Path) -> Result<RunRecord> {
    let dir = crate::scratch::private_dir("regsim-sweep-")
        .context("creating a temporary directory for a run")?;
    let stats_path = dir.path().join("stats.json");
    let out_path = dir.path().join("stdout");
    let err_path = dir.path().join("stderr");
    let stdout = std::fs::File::create(&out_path).context("creating the run's stdout file")?;
    let stderr = std::fs::File::create(&err_path).context("creating the run's stderr file")?;
    let mut cmd = Command::new(regsim);
    cmd.args(point.regsim_args(&stats_path))
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .process_group(0);
    die_with_parent(&mut cmd);
    let started = Instant::now();
    let child = cmd
        .spawn()
        .with_context(|| format!("starting {}", regsim.display()))?;
    let pid = child.id() as i32;
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let timed_out = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watchdog = point.timeout_seconds.map(|limit| {
        let timed_out = timed_out.clone();
        std::thread::spawn(move || {
            if let Err(mpsc::RecvTimeoutError::Timeout) = done_rx.recv_timeout(kill_after(limit)) {
                timed_out.store(true, std::sync::atomic::Ordering::SeqCst);
                // SAFETY: signals the child's process group (regsim run and its program);
                // the child is not yet reaped, so the group id is still ours.
                unsafe { kill(-pid, SIGKILL) };
            }
        })
    });
    // wait4 instead of `child.wait()` for the CPU time; `child` is not used again.
    let waited = wait_with_cpu_time(pid).context("waiting for a run");
    let wall_seconds = started.elapsed().as_secs_f64();
    let _ = done_tx.send(());
    if let Some(w) = watchdog {
        let _ = w.join();
    }
    let (status, cpu_seconds) = waited?;
    drop(child);
    let stats = std::fs::read_to_string(&stats_path)
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok());
    let killed = timed_out.load(std::sync::atomic::Ordering::SeqCst);
    let stopped_at_limit =
        point.timeout_seconds.is_some() && status.code() == Some(i32::from(LIMIT_EXIT_STATUS));
    let outcome = if killed || stopped_at_limit {
        RunStatus::Timeout
    } else if status.success() && stats.is_some() {
        RunStatus::Ok
    } else {
        RunStatus::Failed
    };
    let mut stderr_tail = tail(&err_path, STDERR_TAIL_BYTES);
    if killed {
        stderr_tail.push_str(&format!(
            "regsim sweep: killed after the spec's timeout of {} s\n",
            point.timeout_seconds.unwrap_or_default()
        ));
    } else if outcome == RunStatus::Timeout {
        stderr_tail.push_str(&format!(
            "regsim sweep: stopped at the spec's timeout of {} s{}\n",
            point.timeout_seconds.unwrap_or_default(),
            if stats.is_some() {
                "; the statistics up to the stop are kept (\"complete\": false)"
            } else {
                ""
            }
        ));
    } else if status.success() && stats.is_none() {
        stderr_tail.push_str("regsim sweep: the run exited 0 but wrote no statistics\n");
    }
    Ok(RunRecord {
        key: point.key.clone(),
        workload: point.workload.label(),
        program: point.program.to_string_lossy().into_owned(),
        args: point.workload.args.clone(),
        config: point.config.clone(),
        design: point.design.clone(),
        sets: point.sets.clone(),
        functional: point.functional,
        run_args: point.run_args.clone(),
        resolved_config: point.resolved_config.clone(),
        regsim_version: regsim_version(),
        status: outcome,
        exit_code: status.code(),
        signal: status.signal(),
        stats,
        stderr_tail,
        stdout_tail: tail(&out_path, STDOUT_TAIL_BYTES),
        wall_seconds,
        cpu_seconds: Some(cpu_seconds),
        finished_at: unix_now(),
        host: host_name(),
        slurm_task: match (
            std::env::var("SLURM_ARRAY_JOB_ID"),
            std::env::var("SLURM_ARRAY_TASK_ID"),
        ) {
            (Ok(job), Ok(task)) => Some(format!("{job}_{task}")),
            _ => std::env::var("SLURM_JOB_ID").ok(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_keeps_the_end_from_a_line_start() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        let text: String = (0..1000).map(|i| format!("line {i}\n")).collect();
        std::fs::write(&p, &text).unwrap();
        let t = tail(&p, 100);
        assert!(t.ends_with("line 999\n"));
        assert!(t.starts_with("line "), "{t:?}");
        assert!(t.len() <= 100);
        assert_eq!(tail(&p, 1 << 20), text);
        assert_eq!(tail(&dir.path().join("missing"), 10), "");
    }
}

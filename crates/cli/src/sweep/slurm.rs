//! Running a sweep as Slurm job arrays.
//!
//! `regsim sweep SPEC --store F --slurm` writes, beside the store in `F.slurm/`, a file
//! listing the keys of the points that are missing from the store (`job-*.keys.json`) and a
//! batch script (`job-*.sh`) whose array task `i` runs the `i`-th of them with the same
//! `regsim` executable (`regsim sweep SPEC --store F --run-point i --points KEYS`), then
//! submits it with `sbatch --array`. One task runs one simulation on one CPU. The job id
//! is recorded in the store for `--status`. Tasks log to `F.slurm/logs/<job>_<task>.out`.
//! Arrays larger than the cluster's `MaxArraySize` are split into several jobs.
//!
//! Where results go:
//! - by default every task writes its row into the store itself (SQLite in WAL mode with a
//!   busy timeout, one short transaction per task). This needs every task on the host that
//!   holds the store or a file system with working shared memory and POSIX locks between
//!   its clients: SQLite's WAL does not work across hosts over NFS and similar network
//!   file systems. Use it on one node (a workstation's Slurm, a single big node) or with
//!   the store on node-local storage.
//! - with `--per-task-files`, each task writes its record as one JSON file into
//!   `F.slurm/results/` (written to a temporary name and renamed, so a file is complete or
//!   absent), which works on any shared file system; `regsim sweep SPEC --store F
//!   --collect` then moves them into the store in one transaction. A task that cannot
//!   write the store falls back to such a file too.
//!
//! `--status` reports every point of the spec as done, failed, running, pending (from
//! `squeue` for the recorded jobs), finished but not collected, lost (its task left the
//! queue without a result: killed, out of time or memory; `sacct`'s state when accounting
//! is enabled) or not submitted. Resubmitting with `--slurm` runs what is neither done nor
//! in the queue.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{anyhow, bail, Context, Result};

use super::runner;
use super::spec::{RunPoint, SweepSpec};
use super::store::{Claim, RunRecord, RunStatus, SlurmJob, Store};

/// Slurm's default `MaxArraySize` (task indices must be below it).
const DEFAULT_MAX_ARRAY_SIZE: usize = 1001;

/// Options of [`submit`].
#[derive(Clone, Debug, Default)]
pub struct SlurmOptions {
    /// `--partition`.
    pub partition: Option<String>,
    /// `--time` (a task's limit, e.g. `01:00:00`).
    pub time: Option<String>,
    /// `--mem` (a task's memory, e.g. `4G`).
    pub mem: Option<String>,
    /// At most this many tasks at once (`--array=...%N`).
    pub max_running: Option<u32>,
    /// Tasks write per-task result files instead of the store.
    pub per_task_files: bool,
    /// Resubmit points whose recorded run failed.
    pub retry_failed: bool,
    /// More `sbatch` arguments, each one argument.
    pub sbatch_args: Vec<String>,
    /// The `regsim` executable the tasks run (absolute).
    pub regsim: PathBuf,
}

/// A submitted job array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Submitted {
    /// The job id.
    pub job_id: String,
    /// Tasks in the array.
    pub tasks: usize,
    /// The batch script.
    pub script: PathBuf,
}

/// `F.slurm/` beside the store `F`.
pub fn work_dir(store: &Path) -> PathBuf {
    let mut name = store
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_else(|| "store".into());
    name.push(".slurm");
    store.with_file_name(name)
}

/// Where per-task result files go.
pub fn results_dir(store: &Path) -> PathBuf {
    work_dir(store).join("results")
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// `text` quoted for a POSIX shell.
pub fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

fn absolute(p: &Path) -> Result<PathBuf> {
    std::path::absolute(p).with_context(|| format!("resolving {}", p.display()))
}

/// Runs a Slurm client command; its stdout, or an error with its stderr.
fn slurm_command(program: &str, args: &[String]) -> Result<String> {
    let out = Command::new(program)
        .args(args)
        .output()
        .with_context(|| format!("running `{program}` (is Slurm installed here?)"))?;
    if !out.status.success() {
        bail!(
            "`{program} {}` failed ({}): {}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The cluster's `MaxArraySize`, or Slurm's default when `scontrol` does not say.
fn max_array_size() -> usize {
    slurm_command("scontrol", &["show".into(), "config".into()])
        .ok()
        .and_then(|text| {
            text.lines().find_map(|l| {
                let (k, v) = l.split_once('=')?;
                (k.trim() == "MaxArraySize").then(|| v.trim().parse().ok())?
            })
        })
        .filter(|&n: &usize| n > 0)
        .unwrap_or(DEFAULT_MAX_ARRAY_SIZE)
}

/// The batch script of one array.
pub fn batch_script(
    spec: &Path,
    store: &Path,
    keys_file: &Path,
    tasks: usize,
    opts: &SlurmOptions,
) -> String {
    let q = |p: &Path| shell_quote(&p.to_string_lossy());
    let logs = work_dir(store).join("logs");
    let mut s = String::from("#!/bin/sh\n");
    s.push_str("# Written by `regsim sweep --slurm`: each array task runs one sweep point.\n");
    s.push_str("#SBATCH --job-name=regsim-sweep\n");
    let throttle = opts
        .max_running
        .map(|n| format!("%{n}"))
        .unwrap_or_default();
    s.push_str(&format!("#SBATCH --array=0-{}{throttle}\n", tasks - 1));
    s.push_str("#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n");
    s.push_str(&format!(
        "#SBATCH --output={}\n",
        logs.join("%A_%a.out").to_string_lossy()
    ));
    if let Some(p) = &opts.partition {
        s.push_str(&format!("#SBATCH --partition={p}\n"));
    }
    if let Some(t) = &opts.time {
        s.push_str(&format!("#SBATCH --time={t}\n"));
    }
    if let Some(m) = &opts.mem {
        s.push_str(&format!("#SBATCH --mem={m}\n"));
    }
    s.push_str(&format!(
        "exec {} sweep {} --store {} --run-point \"$SLURM_ARRAY_TASK_ID\" --points {}{}\n",
        q(&opts.regsim),
        q(spec),
        q(store),
        q(keys_file),
        if opts.per_task_files {
            " --per-task-files"
        } else {
            ""
        }
    ));
    s
}

/// Submits the points of `spec` that are neither recorded as done (nor failed, unless
/// `retry_failed`) nor queued in an earlier job. Returns the jobs (none if nothing is
/// left to run).
pub fn submit(spec: &SweepSpec, store: &mut Store, opts: &SlurmOptions) -> Result<Vec<Submitted>> {
    let points = spec.expand_with(Some(&opts.regsim))?;
    let recorded = store.statuses()?;
    let queued = queue_states(store)?;
    let uncollected = uncollected_keys(store.path());
    let todo: Vec<&RunPoint> = points
        .iter()
        .filter(|p| match recorded.get(&p.key) {
            None => true,
            Some(RunStatus::Ok) => false,
            Some(_) => opts.retry_failed,
        })
        .filter(|p| !queued.contains_key(&p.key) && !uncollected.contains(&p.key))
        .collect();
    if todo.is_empty() {
        return Ok(Vec::new());
    }
    let store_path = absolute(store.path())?;
    let dir = work_dir(&store_path);
    std::fs::create_dir_all(dir.join("logs"))
        .with_context(|| format!("creating {}", dir.display()))?;
    if opts.per_task_files {
        std::fs::create_dir_all(results_dir(&store_path))?;
    }
    let chunk = max_array_size();
    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let mut submitted = Vec::new();
    for (n, part) in todo.chunks(chunk).enumerate() {
        let base = dir.join(format!("job-{stamp}-{n}"));
        let keys_file = base.with_extension("keys.json");
        let keys: Vec<&str> = part.iter().map(|p| p.key.as_str()).collect();
        std::fs::write(&keys_file, serde_json::to_string_pretty(&keys)? + "\n")
            .with_context(|| format!("writing {}", keys_file.display()))?;
        let script = base.with_extension("sh");
        let text = batch_script(&spec.origin, &store_path, &keys_file, part.len(), opts);
        std::fs::write(&script, text).with_context(|| format!("writing {}", script.display()))?;
        let mut args = vec!["--parsable".to_string()];
        args.extend(opts.sbatch_args.iter().cloned());
        args.push(script.to_string_lossy().into_owned());
        let out = slurm_command("sbatch", &args)?;
        let job_id = out
            .trim()
            .split(';')
            .next()
            .filter(|id| !id.is_empty() && id.chars().all(|c| c.is_ascii_digit()))
            .ok_or_else(|| anyhow!("sbatch printed no job id: {out:?}"))?
            .to_string();
        store.add_slurm_job(&SlurmJob {
            job_id: job_id.clone(),
            keys_file: keys_file.clone(),
            per_task_files: opts.per_task_files,
            submitted_at: unix_now(),
        })?;
        submitted.push(Submitted {
            job_id,
            tasks: part.len(),
            script,
        });
    }
    Ok(submitted)
}

fn read_keys(file: &Path) -> Result<Vec<String>> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{} is not a list of keys", file.display()))
}

/// Writes `record` as `dir/<key>.json`, atomically (a temporary name, then a rename).
pub fn write_result_file(dir: &Path, record: &RunRecord) -> Result<PathBuf> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let path = dir.join(format!("{}.json", record.key));
    let tmp = dir.join(format!(".{}.{}.tmp", record.key, std::process::id()));
    std::fs::write(&tmp, serde_json::to_string(record)? + "\n")
        .with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, &path).with_context(|| format!("renaming to {}", path.display()))?;
    Ok(path)
}

/// The hidden `--run-point INDEX --points KEYS` of an array task: runs the `index`-th key
/// of `keys_file` (or, without one, the `index`-th point of the spec) and records it.
/// Returns the run's status; a point already done is not run again.
pub fn run_task(
    spec: &SweepSpec,
    store_path: &Path,
    index: usize,
    keys_file: Option<&Path>,
    per_task_files: bool,
    regsim: &Path,
) -> Result<RunStatus> {
    let points = spec.expand_with(Some(regsim))?;
    let point = match keys_file {
        Some(file) => {
            let keys = read_keys(file)?;
            let key = keys.get(index).ok_or_else(|| {
                anyhow!(
                    "task {index}: {} lists only {} points",
                    file.display(),
                    keys.len()
                )
            })?;
            points.iter().find(|p| &p.key == key).ok_or_else(|| {
                anyhow!(
                    "point {key} of {} is not in {} any more (was the spec changed after \
                     submission?)",
                    file.display(),
                    spec.origin.display()
                )
            })?
        }
        None => points.get(index).ok_or_else(|| {
            anyhow!(
                "point {index}: {} has only {} points",
                spec.origin.display(),
                points.len()
            )
        })?,
    };
    let owner = super::store::Owner::this_process();
    let mut lease_store: Option<Store> = None;
    if !per_task_files {
        // Claimed like a local sweep's point, so a local sweep or another task sharing
        // the store never runs it at the same time. The submission decided to run it:
        // a failed row is run again.
        let mut store = Store::open(store_path)?;
        match store.claim(&point.key, &owner, true)? {
            Claim::Claimed => {}
            Claim::Recorded(_) => {
                eprintln!("regsim sweep: {} is already done", point.label());
                return Ok(RunStatus::Ok);
            }
            Claim::Held(l) => {
                eprintln!(
                    "regsim sweep: {} is being run by pid {} on host {} (another sweep of \
                     this store); skipping it",
                    point.label(),
                    l.pid,
                    l.host
                );
                return Ok(RunStatus::Ok);
            }
        }
        lease_store = Some(store);
    }
    eprintln!("regsim sweep: running {} ({})", point.label(), point.key);
    let running = std::sync::atomic::AtomicBool::new(true);
    let record = std::thread::scope(|scope| {
        if let Some(store) = lease_store.take() {
            let (running, owner) = (&running, &owner);
            scope.spawn(move || {
                let mut last = std::time::Instant::now();
                while running.load(std::sync::atomic::Ordering::SeqCst) {
                    std::thread::sleep(std::time::Duration::from_millis(100));
                    if last.elapsed() >= super::store::HEARTBEAT {
                        // A missed beat is retried at the next one.
                        let _ = store.heartbeat(owner);
                        last = std::time::Instant::now();
                    }
                }
            });
        }
        let record = runner::execute(point, regsim);
        running.store(false, std::sync::atomic::Ordering::SeqCst);
        record
    });
    let record = match record {
        Ok(r) => r,
        Err(e) => {
            if !per_task_files {
                // Unclaimed for others; a failed release goes stale with this process.
                let _ = Store::open(store_path).and_then(|s| s.release(&point.key, &owner));
            }
            return Err(e);
        }
    };
    eprintln!(
        "regsim sweep: {} after {:.1} s",
        record.status.as_str(),
        record.wall_seconds
    );
    let results = results_dir(store_path);
    if per_task_files {
        let path = write_result_file(&results, &record)?;
        eprintln!("regsim sweep: wrote {}", path.display());
    } else {
        let written =
            Store::open(store_path).and_then(|mut s| s.record(std::slice::from_ref(&record)));
        if let Err(e) = written {
            let path = write_result_file(&results, &record)?;
            bail!(
                "{e:#}; the result is in {} instead (`regsim sweep --collect` moves it into \
                 the store)",
                path.display()
            );
        }
    }
    Ok(record.status)
}

/// Keys of the per-task result files waiting in `F.slurm/results/`.
fn uncollected_keys(store: &Path) -> BTreeSet<String> {
    std::fs::read_dir(results_dir(store))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_owned();
            (!name.starts_with('.')).then_some(())?;
            name.strip_suffix(".json").map(str::to_owned)
        })
        .collect()
}

/// Moves every per-task result file into the store (one transaction), then deletes the
/// files. Returns how many were collected.
pub fn collect(store: &mut Store) -> Result<usize> {
    let dir = results_dir(&absolute(store.path())?);
    let mut files: Vec<PathBuf> = uncollected_keys(store.path())
        .into_iter()
        .map(|k| dir.join(format!("{k}.json")))
        .collect();
    files.sort();
    let mut records = Vec::new();
    for f in &files {
        let text =
            std::fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?;
        let record: RunRecord = serde_json::from_str(&text)
            .with_context(|| format!("{} is not a sweep result", f.display()))?;
        records.push(record);
    }
    store.record(&records)?;
    for f in &files {
        std::fs::remove_file(f).with_context(|| format!("removing {}", f.display()))?;
    }
    Ok(records.len())
}

/// A queued task's state and job id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueuedTask {
    /// `JOBID_TASK`.
    pub task: String,
    /// Slurm's state (`PENDING`, `RUNNING`, ...).
    pub state: String,
}

/// Array tasks of `jobs` by key, from the lines `JOBID_TASK|STATE` of `squeue` or
/// `sacct`; `task_keys` gives each job's keys by task index. Lines for a range of tasks
/// (`12_[3-7]`, `12_[1,4-5%2]`) cover each task in it.
pub fn tasks_by_key(
    output: &str,
    task_keys: &BTreeMap<String, Vec<String>>,
) -> BTreeMap<String, QueuedTask> {
    let mut out = BTreeMap::new();
    for line in output.lines() {
        let Some((id, state)) = line.trim().split_once('|') else {
            continue;
        };
        let state = state.split_whitespace().next().unwrap_or("").to_string();
        let Some((job, tasks)) = id.split_once('_') else {
            continue;
        };
        let Some(keys) = task_keys.get(job) else {
            continue;
        };
        let spec = tasks.trim_start_matches('[').trim_end_matches(']');
        let spec = spec.split('%').next().unwrap_or("");
        for part in spec.split(',') {
            let range = match part.split_once('-') {
                Some((a, b)) => match (a.parse::<usize>(), b.parse::<usize>()) {
                    (Ok(a), Ok(b)) if a <= b => a..=b,
                    _ => continue,
                },
                None => match part.parse::<usize>() {
                    Ok(a) => a..=a,
                    Err(_) => continue,
                },
            };
            for t in range {
                if let Some(key) = keys.get(t) {
                    out.insert(
                        key.clone(),
                        QueuedTask {
                            task: format!("{job}_{t}"),
                            state: state.clone(),
                        },
                    );
                }
            }
        }
    }
    out
}

/// Keys of the recorded jobs' tasks by job id (jobs whose keys file is gone are skipped).
fn job_keys(store: &Store) -> Result<BTreeMap<String, Vec<String>>> {
    Ok(store
        .slurm_jobs()?
        .into_iter()
        .filter_map(|j| Some((j.job_id, read_keys(&j.keys_file).ok()?)))
        .collect())
}

/// The recorded jobs' tasks still in the queue, by key (empty without recorded jobs or
/// without `squeue`).
fn queue_states(store: &Store) -> Result<BTreeMap<String, QueuedTask>> {
    let keys = job_keys(store)?;
    if keys.is_empty() {
        return Ok(BTreeMap::new());
    }
    let ids: Vec<&str> = keys.keys().map(String::as_str).collect();
    let args = vec![
        "-h".to_string(),
        "-r".into(),
        "-j".into(),
        ids.join(","),
        "-o".into(),
        "%i|%T".into(),
    ];
    // squeue fails for job ids it no longer knows; then nothing of them is queued.
    let out = slurm_command("squeue", &args).unwrap_or_default();
    Ok(tasks_by_key(&out, &keys))
}

/// The Slurm accounting states of the recorded jobs' tasks, when accounting is enabled.
fn accounting_states(store: &Store) -> Result<BTreeMap<String, QueuedTask>> {
    let keys = job_keys(store)?;
    if keys.is_empty() {
        return Ok(BTreeMap::new());
    }
    let ids: Vec<&str> = keys.keys().map(String::as_str).collect();
    let args = vec![
        "-n".to_string(),
        "-P".into(),
        "-X".into(),
        "-j".into(),
        ids.join(","),
        "-o".into(),
        "JobID,State".into(),
    ];
    let out = slurm_command("sacct", &args).unwrap_or_default();
    Ok(tasks_by_key(&out, &keys))
}

/// Where each point of a sweep is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum PointState {
    /// Recorded, ok.
    Done,
    /// Recorded, failed or timed out.
    Failed,
    /// Recorded, but the row is damaged (to be run again).
    Damaged,
    /// A result file waits for `--collect`.
    Uncollected,
    /// Running in Slurm.
    Running,
    /// Waiting in Slurm's queue.
    Pending,
    /// Submitted, no longer queued, no result.
    Lost,
    /// Never submitted, no result.
    NotRun,
}

impl PointState {
    /// How `--status` and `--list` call it.
    pub fn name(self) -> &'static str {
        match self {
            PointState::Done => "done",
            PointState::Failed => "failed",
            PointState::Damaged => "damaged",
            PointState::Uncollected => "uncollected",
            PointState::Running => "running",
            PointState::Pending => "pending",
            PointState::Lost => "lost",
            PointState::NotRun => "not run",
        }
    }
}

/// The `--status` of a sweep.
#[derive(Clone, Debug, PartialEq)]
pub struct StatusReport {
    /// Every point with its state and a note (failure reason, Slurm task and state).
    pub points: Vec<(RunPoint, PointState, String)>,
    /// Job ids recorded in the store.
    pub jobs: Vec<String>,
    /// Damaged rows that are no point of the spec (another spec's, or a damaged key),
    /// described.
    pub other_damaged: Vec<String>,
}

impl StatusReport {
    /// Points in `state`.
    pub fn count(&self, state: PointState) -> usize {
        self.points.iter().filter(|(_, s, _)| *s == state).count()
    }

    /// The summary line and the points that need attention.
    pub fn describe(&self) -> String {
        use PointState::*;
        let mut s = format!("{} points:", self.points.len());
        let parts: Vec<String> = [Done, Failed, Running, Pending, Uncollected, Lost, NotRun]
            .iter()
            .chain(if self.count(Damaged) > 0 {
                &[Damaged][..]
            } else {
                &[]
            })
            .map(|&st| format!("{} {}", self.count(st), st.name()))
            .collect();
        s.push(' ');
        s.push_str(&parts.join(", "));
        s.push('\n');
        if !self.jobs.is_empty() {
            s.push_str(&format!("Slurm jobs: {}\n", self.jobs.join(", ")));
        }
        for (point, state, note) in &self.points {
            if matches!(state, Failed | Lost | Running | Damaged) {
                s.push_str(&format!(
                    "  {}: {} [{}] {note}\n",
                    state.name(),
                    point.label(),
                    point.key
                ));
            }
        }
        for d in &self.other_damaged {
            s.push_str(&format!("  damaged, no point of this spec: {d}\n"));
        }
        s
    }
}

/// Where every point of `spec` stands (see the module documentation).
pub fn status(spec: &SweepSpec, store: &Store, regsim: &Path) -> Result<StatusReport> {
    let points = spec.expand_with(Some(regsim))?;
    let (records, damaged) = store.scan()?;
    let records: BTreeMap<String, RunRecord> =
        records.into_iter().map(|r| (r.key.clone(), r)).collect();
    let mut damaged: BTreeMap<String, super::store::DamagedRun> =
        damaged.into_iter().map(|d| (d.key.clone(), d)).collect();
    let jobs = job_keys(store)?;
    let submitted: BTreeSet<&String> = jobs.values().flatten().collect();
    let queued = queue_states(store)?;
    let uncollected = uncollected_keys(store.path());
    let mut accounting: Option<BTreeMap<String, QueuedTask>> = None;
    let mut out = Vec::new();
    for p in points {
        let (state, note) = if let Some(r) = records.get(&p.key) {
            if r.status == RunStatus::Ok {
                (PointState::Done, String::new())
            } else {
                let last = r.last_stderr_line();
                (
                    PointState::Failed,
                    format!("({}) {last}", super::local::exit_description(r)),
                )
            }
        } else if let Some(d) = damaged.remove(&p.key) {
            (
                PointState::Damaged,
                format!("{} (a sweep runs it again)", d.reason),
            )
        } else if uncollected.contains(&p.key) {
            (PointState::Uncollected, String::new())
        } else if let Some(q) = queued.get(&p.key) {
            let state = if q.state == "PENDING" {
                PointState::Pending
            } else {
                PointState::Running
            };
            (state, format!("{} {}", q.task, q.state))
        } else if submitted.contains(&p.key) {
            let acct = match &accounting {
                Some(a) => a,
                None => accounting.insert(accounting_states(store)?),
            };
            let note = acct
                .get(&p.key)
                .map(|q| format!("{} {}", q.task, q.state))
                .unwrap_or_else(|| "no result and not in the queue".into());
            (PointState::Lost, note)
        } else {
            (PointState::NotRun, String::new())
        };
        out.push((p, state, note));
    }
    Ok(StatusReport {
        points: out,
        jobs: jobs.keys().cloned().collect(),
        other_damaged: damaged.values().map(|d| d.describe(store.path())).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_array_task_lines() {
        let keys: BTreeMap<String, Vec<String>> =
            [("12".to_string(), (0..10).map(|i| format!("k{i}")).collect())]
                .into_iter()
                .collect();
        let out = "12_0|RUNNING\n12_[3-5,8%2]|PENDING\n13_1|RUNNING\nbogus\n12_99|RUNNING\n";
        let t = tasks_by_key(out, &keys);
        assert_eq!(t.len(), 5);
        assert_eq!(t["k0"].state, "RUNNING");
        assert_eq!(t["k0"].task, "12_0");
        for k in ["k3", "k4", "k5", "k8"] {
            assert_eq!(t[k].state, "PENDING", "{k}");
        }
        assert!(!t.contains_key("k6"));
        // sacct's "CANCELLED by 0" keeps the state word.
        let t = tasks_by_key("12_2|CANCELLED by 0\n", &keys);
        assert_eq!(t["k2"].state, "CANCELLED");
    }

    #[test]
    fn script_runs_each_task_with_quoted_paths() {
        let opts = SlurmOptions {
            partition: Some("debug".into()),
            time: Some("00:10:00".into()),
            mem: Some("2G".into()),
            max_running: Some(4),
            per_task_files: true,
            regsim: "/opt/reg sim/regsim".into(),
            ..SlurmOptions::default()
        };
        let s = batch_script(
            Path::new("/w/it's.toml"),
            Path::new("/w/s.sqlite"),
            Path::new("/w/s.sqlite.slurm/job-1-0.keys.json"),
            7,
            &opts,
        );
        assert!(s.contains("#SBATCH --array=0-6%4\n"), "{s}");
        assert!(s.contains("#SBATCH --partition=debug\n"));
        assert!(s.contains("#SBATCH --time=00:10:00\n"));
        assert!(s.contains("#SBATCH --mem=2G\n"));
        assert!(s.contains("#SBATCH --output=/w/s.sqlite.slurm/logs/%A_%a.out\n"));
        assert!(s.contains(
            "exec '/opt/reg sim/regsim' sweep '/w/it'\\''s.toml' --store '/w/s.sqlite' \
             --run-point \"$SLURM_ARRAY_TASK_ID\" --points \
             '/w/s.sqlite.slurm/job-1-0.keys.json' --per-task-files\n"
        ));
        assert_eq!(
            work_dir(Path::new("/a/b.sqlite")),
            Path::new("/a/b.sqlite.slurm")
        );
    }

    #[test]
    fn result_files_are_collected_once() {
        let dir = tempfile::tempdir().unwrap();
        let store_path = dir.path().join("s.sqlite");
        let mut store = Store::open(&store_path).unwrap();
        let a = crate::sweep::store::tests::record("a", RunStatus::Ok, 3);
        let b = crate::sweep::store::tests::record("b", RunStatus::Failed, 4);
        let results = results_dir(&store_path);
        write_result_file(&results, &a).unwrap();
        write_result_file(&results, &b).unwrap();
        // A temporary file of a task still writing is not collected.
        std::fs::write(results.join(".c.1.tmp"), "{").unwrap();
        assert_eq!(
            uncollected_keys(&store_path),
            ["a", "b"].iter().map(|s| s.to_string()).collect()
        );
        assert_eq!(collect(&mut store).unwrap(), 2);
        assert_eq!(store.records().unwrap(), vec![a, b]);
        assert_eq!(collect(&mut store).unwrap(), 0);
        assert!(results.join(".c.1.tmp").exists());
    }
}

//! The SQLite store of a sweep: one row per finished run.
//!
//! Table `runs` (primary key `key`, the point's stable identity) holds what the point ran
//! (`workload`, `program`, `args`, `config`, `design`, `sets`, `functional`, `run_args`),
//! the fully resolved GPU config (`resolved_config`, JSON), the `regsim_version`, the
//! outcome (`status` `ok`/`failed`/`timeout`, `exit_code`, `signal`), the statistics JSON
//! of `regsim run --stats` (`stats`), the tails of the run's stderr and stdout, its wall
//! and CPU time, when and where it finished (`finished_at`, Unix seconds; `host`) and the Slurm
//! job it ran in, if any. JSON columns can be queried in SQL:
//! `SELECT workload, json_extract(stats, '$.total.ipc') FROM runs`.
//!
//! A row is written in one transaction once its run has finished, never before, so a
//! sweep killed at any moment (SIGKILL included) leaves only complete rows, and the next
//! sweep runs exactly the points without one. The database is in WAL mode with a busy
//! timeout, so several processes on one host (Slurm tasks of a one-node cluster, a
//! `--status` beside a running sweep) can write and read it at once. WAL needs shared
//! memory between the processes, so it does not work when the processes are on different
//! hosts sharing the file over a network file system; see `super::slurm` for the
//! per-task-files alternative.
//!
//! Sweeps that share a store claim each point before running it: table `leases` holds,
//! per point being run, its owner (host, pid and a start time), and a heartbeat the owner
//! refreshes every [`HEARTBEAT`]. A claim is one immediate transaction that succeeds only
//! when the point has no row (or a failed one, under `--retry-failed`) and no live lease,
//! so two sweeps (local processes, Slurm tasks, or both) never run a point twice. A lease
//! is stale, and claimed over, when its heartbeat is older than [`LEASE_TIMEOUT`] or its
//! pid is not alive on this host (a sweep killed with SIGKILL). A row and the removal of
//! its lease are one transaction.
//!
//! Table `slurm_jobs` records submitted job arrays (job id, the file listing the keys of
//! its tasks, whether tasks write per-task files) for `--status`; table `meta` holds the
//! schema version.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};

/// The schema this code writes; a store of a newer schema is refused.
const SCHEMA_VERSION: i64 = 1;

/// How long a writer waits for another process's transaction before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(120);

/// How often a sweep refreshes the heartbeat of the leases it holds.
pub const HEARTBEAT: Duration = Duration::from_secs(5);

/// A lease whose heartbeat is older than this is stale (its owner is presumed dead).
pub const LEASE_TIMEOUT: Duration = Duration::from_secs(60);

/// Who runs points: one sweep process (or Slurm task).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owner {
    /// Unique among the store's users: `host:pid:start`.
    pub id: String,
    /// Host name.
    pub host: String,
    /// Process id.
    pub pid: u32,
}

impl Owner {
    /// This process.
    pub fn this_process() -> Owner {
        let host = super::runner::host_name();
        let pid = std::process::id();
        let start = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        Owner {
            id: format!("{host}:{pid}:{start}"),
            host,
            pid,
        }
    }
}

/// A point being run by someone.
#[derive(Clone, Debug, PartialEq)]
pub struct Lease {
    /// The point's key.
    pub key: String,
    /// The owner's id ([`Owner::id`]).
    pub owner: String,
    /// The owner's host.
    pub host: String,
    /// The owner's pid.
    pub pid: u32,
    /// Unix seconds of the owner's last heartbeat.
    pub heartbeat: f64,
}

impl Lease {
    /// Whether its owner is presumed dead: no heartbeat for [`LEASE_TIMEOUT`], or a pid
    /// that is not alive on this host.
    pub fn is_stale(&self, now: f64, this_host: &str) -> bool {
        now - self.heartbeat > LEASE_TIMEOUT.as_secs_f64()
            || (self.host == this_host && !crate::scratch::pid_alive(self.pid))
    }
}

fn lease_of_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Lease> {
    Ok(Lease {
        key: r.get(0)?,
        owner: r.get(1)?,
        host: r.get(2)?,
        pid: r.get(3)?,
        heartbeat: r.get(4)?,
    })
}

fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// The answer to [`Store::claim`].
#[derive(Clone, Debug, PartialEq)]
pub enum Claim {
    /// The point is ours to run.
    Claimed,
    /// The point has a row (ok, or failed without `--retry-failed`).
    Recorded(RunStatus),
    /// Someone else is running it.
    Held(Lease),
}

/// The outcome of a finished run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// Exit status 0 and statistics written.
    Ok,
    /// A non-zero exit, a signal, or no statistics.
    Failed,
    /// Stopped at the spec's `timeout_seconds` (with the statistics up to the stop when
    /// the simulation was what ran long), or killed shortly after it.
    Timeout,
}

impl RunStatus {
    /// The `status` column's text.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Ok => "ok",
            RunStatus::Failed => "failed",
            RunStatus::Timeout => "timeout",
        }
    }

    fn parse(text: &str) -> Result<RunStatus> {
        Ok(match text {
            "ok" => RunStatus::Ok,
            "failed" => RunStatus::Failed,
            "timeout" => RunStatus::Timeout,
            other => bail!("unknown run status `{other}` in the store"),
        })
    }
}

/// One finished run: a row of `runs`, or a per-task result file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The point's key.
    pub key: String,
    /// Program and arguments as written in the spec (`bfs --large`).
    pub workload: String,
    /// The program executed (absolute path).
    pub program: String,
    /// The program's arguments.
    pub args: Vec<String>,
    /// Config as written in the spec.
    pub config: String,
    /// Register-file design.
    pub design: String,
    /// Config overrides besides the design, keys sorted.
    pub sets: Vec<(String, String)>,
    /// Functional mode.
    pub functional: bool,
    /// More `regsim run` arguments.
    pub run_args: Vec<String>,
    /// The fully resolved GPU config.
    pub resolved_config: serde_json::Value,
    /// `regsim --version` of the binary that ran it.
    pub regsim_version: String,
    /// The outcome.
    pub status: RunStatus,
    /// `regsim run`'s exit status, if it exited.
    pub exit_code: Option<i32>,
    /// The signal that ended `regsim run`, if one did.
    pub signal: Option<i32>,
    /// The statistics `regsim run --stats` wrote, if it did.
    pub stats: Option<serde_json::Value>,
    /// The end of the run's stderr.
    pub stderr_tail: String,
    /// The end of the run's stdout.
    pub stdout_tail: String,
    /// Wall-clock seconds of the run, as the sweep measured it.
    pub wall_seconds: f64,
    /// CPU seconds (user and system) of the run, program included; unlike wall time,
    /// unaffected by other load on the machine.
    #[serde(default)]
    pub cpu_seconds: Option<f64>,
    /// Unix time the run finished.
    pub finished_at: f64,
    /// Host name.
    pub host: String,
    /// `SLURM_JOB_ID`/`SLURM_ARRAY_TASK_ID` of the task, if it ran under Slurm.
    pub slurm_task: Option<String>,
}

impl RunRecord {
    /// The last non-blank line of the run's stderr (what a failure says), or "".
    pub fn last_stderr_line(&self) -> &str {
        self.stderr_tail
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
    }
}

/// A submitted Slurm job array.
#[derive(Clone, Debug, PartialEq)]
pub struct SlurmJob {
    /// The job id `sbatch --parsable` printed (without a cluster name).
    pub job_id: String,
    /// The file listing the keys of the array's tasks, by task index.
    pub keys_file: PathBuf,
    /// Tasks write per-task result files instead of the store.
    pub per_task_files: bool,
    /// Unix time of submission.
    pub submitted_at: f64,
}

/// A sweep store.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

const COLUMNS: &str = "key, workload, program, args, config, design, sets, functional, \
    run_args, resolved_config, regsim_version, status, exit_code, signal, stats, stderr_tail, \
    stdout_tail, wall_seconds, cpu_seconds, finished_at, host, slurm_task";

impl Store {
    /// Opens (creating if needed) the store at `path`, in WAL mode with a busy timeout.
    pub fn open(path: &Path) -> Result<Store> {
        let conn = Connection::open(path)
            .with_context(|| format!("opening the sweep store {}", path.display()))?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        let in_context = |e: rusqlite::Error| {
            anyhow::Error::new(e).context(format!(
                "{} is not a usable sweep store (SQLite)",
                path.display()
            ))
        };
        let mode: String = conn
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            .map_err(in_context)?;
        if !mode.eq_ignore_ascii_case("wal") {
            bail!(
                "{}: SQLite could not switch to WAL mode (got `{mode}`)",
                path.display()
            );
        }
        // WAL with synchronous=NORMAL stays consistent after a crash; a committed row may
        // be lost only at power failure, and then it is simply run again.
        conn.execute_batch(
            "PRAGMA synchronous=NORMAL;
             CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS runs (
                 key TEXT PRIMARY KEY,
                 workload TEXT NOT NULL,
                 program TEXT NOT NULL,
                 args TEXT NOT NULL,
                 config TEXT NOT NULL,
                 design TEXT NOT NULL,
                 sets TEXT NOT NULL,
                 functional INTEGER NOT NULL,
                 run_args TEXT NOT NULL,
                 resolved_config TEXT NOT NULL,
                 regsim_version TEXT NOT NULL,
                 status TEXT NOT NULL,
                 exit_code INTEGER,
                 signal INTEGER,
                 stats TEXT,
                 stderr_tail TEXT NOT NULL,
                 stdout_tail TEXT NOT NULL,
                 wall_seconds REAL NOT NULL,
                 cpu_seconds REAL,
                 finished_at REAL NOT NULL,
                 host TEXT NOT NULL,
                 slurm_task TEXT
             );
             CREATE TABLE IF NOT EXISTS leases (
                 key TEXT PRIMARY KEY,
                 owner TEXT NOT NULL,
                 host TEXT NOT NULL,
                 pid INTEGER NOT NULL,
                 heartbeat REAL NOT NULL
             );
             CREATE TABLE IF NOT EXISTS slurm_jobs (
                 job_id TEXT PRIMARY KEY,
                 keys_file TEXT NOT NULL,
                 per_task_files INTEGER NOT NULL,
                 submitted_at REAL NOT NULL
             );",
        )
        .map_err(in_context)?;
        let version: Option<String> = conn
            .query_row(
                "SELECT value FROM meta WHERE name = 'schema_version'",
                [],
                |r| r.get(0),
            )
            .optional()
            .map_err(in_context)?;
        match version.as_deref().map(str::parse::<i64>) {
            None => {
                conn.execute(
                    "INSERT OR IGNORE INTO meta (name, value) VALUES ('schema_version', ?1)",
                    [SCHEMA_VERSION.to_string()],
                )?;
            }
            Some(Ok(v)) if v <= SCHEMA_VERSION => {}
            Some(_) => bail!(
                "{}: the store's schema ({}) is newer than this regsim understands ({})",
                path.display(),
                version.unwrap_or_default(),
                SCHEMA_VERSION
            ),
        }
        Ok(Store {
            conn,
            path: path.to_path_buf(),
        })
    }

    /// Opens an existing store for reading only (`--status`, `--export`): nothing is
    /// created or written, so a store file without write permission can be read.
    pub fn open_read_only(path: &Path) -> Result<Store> {
        use rusqlite::OpenFlags;
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let probe = |conn: Connection| -> rusqlite::Result<Connection> {
            conn.busy_timeout(BUSY_TIMEOUT)?;
            conn.query_row("SELECT count(*) FROM runs", [], |r| r.get::<_, i64>(0))?;
            Ok(conn)
        };
        let conn = Connection::open_with_flags(path, flags)
            .and_then(probe)
            .or_else(|_| {
                // A WAL database needs its shared-memory file, which a reader cannot
                // create beside a file it may not write: read it as immutable then (no
                // writer can change a file nobody may write).
                let uri = format!("file:{}?immutable=1", path.display());
                Connection::open_with_flags(uri, flags | OpenFlags::SQLITE_OPEN_URI).and_then(probe)
            })
            .with_context(|| {
                format!("{} is not a readable sweep store (SQLite)", path.display())
            })?;
        Ok(Store {
            conn,
            path: path.to_path_buf(),
        })
    }

    /// Claims `key` for `owner` (see the module documentation): one immediate
    /// transaction, so of two sweeps claiming a point at once exactly one gets it.
    pub fn claim(&mut self, key: &str, owner: &Owner, retry_failed: bool) -> Result<Claim> {
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let status: Option<String> = tx
            .query_row("SELECT status FROM runs WHERE key = ?1", [key], |r| {
                r.get(0)
            })
            .optional()?;
        if let Some(status) = status.as_deref().map(RunStatus::parse).transpose()? {
            if status == RunStatus::Ok || !retry_failed {
                return Ok(Claim::Recorded(status));
            }
        }
        let lease = tx
            .query_row(
                "SELECT key, owner, host, pid, heartbeat FROM leases WHERE key = ?1",
                [key],
                lease_of_row,
            )
            .optional()?;
        if let Some(l) = lease {
            if l.owner != owner.id && !l.is_stale(unix_now(), &owner.host) {
                return Ok(Claim::Held(l));
            }
        }
        tx.execute(
            "INSERT OR REPLACE INTO leases (key, owner, host, pid, heartbeat) \
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![key, owner.id, owner.host, owner.pid, unix_now()],
        )?;
        tx.commit()
            .with_context(|| format!("claiming {key} in {}", self.path.display()))?;
        Ok(Claim::Claimed)
    }

    /// Refreshes the heartbeat of every lease `owner` holds.
    pub fn heartbeat(&self, owner: &Owner) -> Result<()> {
        self.conn.execute(
            "UPDATE leases SET heartbeat = ?1 WHERE owner = ?2",
            params![unix_now(), owner.id],
        )?;
        Ok(())
    }

    /// Drops `owner`'s lease of `key` (a run that could not be attempted).
    pub fn release(&self, key: &str, owner: &Owner) -> Result<()> {
        self.conn.execute(
            "DELETE FROM leases WHERE key = ?1 AND owner = ?2",
            params![key, owner.id],
        )?;
        Ok(())
    }

    /// The leases of other owners that are not stale, by key.
    pub fn live_leases(&self, owner: &Owner) -> Result<Vec<Lease>> {
        let mut stmt = self
            .conn
            .prepare("SELECT key, owner, host, pid, heartbeat FROM leases ORDER BY key")?;
        let now = unix_now();
        let leases = stmt
            .query_map([], lease_of_row)?
            .collect::<rusqlite::Result<Vec<Lease>>>()?;
        Ok(leases
            .into_iter()
            .filter(|l| l.owner != owner.id && !l.is_stale(now, &owner.host))
            .collect())
    }

    /// The store's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The status of every recorded run, by key.
    pub fn statuses(&self) -> Result<std::collections::BTreeMap<String, RunStatus>> {
        let mut stmt = self.conn.prepare("SELECT key, status FROM runs")?;
        let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
        let mut out = std::collections::BTreeMap::new();
        for row in rows {
            let (key, status) = row?;
            out.insert(key, RunStatus::parse(&status)?);
        }
        Ok(out)
    }

    /// Writes finished runs, replacing rows of the same keys, in one transaction.
    pub fn record(&mut self, records: &[RunRecord]) -> Result<()> {
        let tx = self.conn.transaction()?;
        {
            let mut stmt = tx.prepare_cached(&format!(
                "INSERT OR REPLACE INTO runs ({COLUMNS}) VALUES \
                 (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, \
                  ?18, ?19, ?20, ?21, ?22)"
            ))?;
            for r in records {
                stmt.execute(params![
                    r.key,
                    r.workload,
                    r.program,
                    serde_json::to_string(&r.args)?,
                    r.config,
                    r.design,
                    serde_json::to_string(&r.sets)?,
                    r.functional,
                    serde_json::to_string(&r.run_args)?,
                    serde_json::to_string(&r.resolved_config)?,
                    r.regsim_version,
                    r.status.as_str(),
                    r.exit_code,
                    r.signal,
                    r.stats.as_ref().map(serde_json::to_string).transpose()?,
                    r.stderr_tail,
                    r.stdout_tail,
                    r.wall_seconds,
                    r.cpu_seconds,
                    r.finished_at,
                    r.host,
                    r.slurm_task,
                ])
                .with_context(|| format!("writing run {} to {}", r.key, self.path.display()))?;
            }
            let mut unlease = tx.prepare_cached("DELETE FROM leases WHERE key = ?1")?;
            for r in records {
                unlease.execute([&r.key])?;
            }
        }
        tx.commit()
            .with_context(|| format!("committing to {}", self.path.display()))
    }

    /// Every recorded run, ordered by key.
    pub fn records(&self) -> Result<Vec<RunRecord>> {
        let mut stmt = self
            .conn
            .prepare(&format!("SELECT {COLUMNS} FROM runs ORDER BY key"))?;
        let rows = stmt.query_map([], |r| {
            Ok((
                (
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, String>(5)?,
                    r.get::<_, String>(6)?,
                    r.get::<_, bool>(7)?,
                    r.get::<_, String>(8)?,
                    r.get::<_, String>(9)?,
                    r.get::<_, String>(10)?,
                ),
                (
                    r.get::<_, String>(11)?,
                    r.get::<_, Option<i32>>(12)?,
                    r.get::<_, Option<i32>>(13)?,
                    r.get::<_, Option<String>>(14)?,
                    r.get::<_, String>(15)?,
                    r.get::<_, String>(16)?,
                    r.get::<_, f64>(17)?,
                    r.get::<_, Option<f64>>(18)?,
                    r.get::<_, f64>(19)?,
                    r.get::<_, String>(20)?,
                    r.get::<_, Option<String>>(21)?,
                ),
            ))
        })?;
        let mut out = Vec::new();
        for (i, row) in rows.enumerate() {
            // A damaged store (a disk error, a truncated copy) reads as a SQLite error
            // or as text that is no longer UTF-8: say where.
            let row = row.with_context(|| {
                format!(
                    "{}: run {} of the store (by key) cannot be read: the store is damaged",
                    self.path.display(),
                    i + 1
                )
            })?;
            let (
                (key, workload, program, args, config, design, sets, functional, run_args, rc, ver),
                (
                    status,
                    exit_code,
                    signal,
                    stats,
                    stderr_tail,
                    stdout_tail,
                    wall,
                    cpu,
                    at,
                    host,
                    task,
                ),
            ) = row;
            let store = self.path.display();
            let bad = |what: &str| format!("{store}: run {key}: bad {what}");
            out.push(RunRecord {
                workload,
                program,
                args: serde_json::from_str(&args).with_context(|| bad("args"))?,
                config,
                design,
                sets: serde_json::from_str(&sets).with_context(|| bad("sets"))?,
                functional,
                run_args: serde_json::from_str(&run_args).with_context(|| bad("run_args"))?,
                resolved_config: serde_json::from_str(&rc)
                    .with_context(|| bad("resolved_config"))?,
                regsim_version: ver,
                status: RunStatus::parse(&status).with_context(|| bad("status"))?,
                exit_code,
                signal,
                stats: stats
                    .as_deref()
                    .map(|s| serde_json::from_str(s).with_context(|| bad("stats")))
                    .transpose()?,
                stderr_tail,
                stdout_tail,
                wall_seconds: wall,
                cpu_seconds: cpu,
                finished_at: at,
                host,
                slurm_task: task,
                key,
            });
        }
        Ok(out)
    }

    /// Records a submitted Slurm job array.
    pub fn add_slurm_job(&mut self, job: &SlurmJob) -> Result<()> {
        self.conn.execute(
            "INSERT OR REPLACE INTO slurm_jobs (job_id, keys_file, per_task_files, submitted_at) \
             VALUES (?1, ?2, ?3, ?4)",
            params![
                job.job_id,
                job.keys_file.to_string_lossy(),
                job.per_task_files,
                job.submitted_at
            ],
        )?;
        Ok(())
    }

    /// The recorded Slurm job arrays, oldest first.
    pub fn slurm_jobs(&self) -> Result<Vec<SlurmJob>> {
        let mut stmt = self.conn.prepare(
            "SELECT job_id, keys_file, per_task_files, submitted_at FROM slurm_jobs \
             ORDER BY submitted_at, job_id",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(SlurmJob {
                job_id: r.get(0)?,
                keys_file: PathBuf::from(r.get::<_, String>(1)?),
                per_task_files: r.get(2)?,
                submitted_at: r.get(3)?,
            })
        })?;
        rows.collect::<Result<Vec<_>, _>>().map_err(Into::into)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn record(key: &str, status: RunStatus, cycles: u64) -> RunRecord {
        RunRecord {
            key: key.into(),
            workload: "saxpy --n 4".into(),
            program: "/bin/saxpy".into(),
            args: vec!["--n".into(), "4".into()],
            config: "gtx480".into(),
            design: "ideal".into(),
            sets: vec![("sm.scheduler".into(), "gto".into())],
            functional: false,
            run_args: vec![],
            resolved_config: serde_json::json!({"sm": {"scheduler": "gto"}}),
            regsim_version: "0.1.0".into(),
            status,
            exit_code: Some(if status == RunStatus::Ok { 0 } else { 1 }),
            signal: None,
            stats: Some(serde_json::json!({"total": {"cycles": cycles, "ipc": 1.5}})),
            stderr_tail: "regsim: kernel ...\n".into(),
            stdout_tail: "PASS\n".into(),
            wall_seconds: 0.25,
            cpu_seconds: Some(0.2),
            finished_at: 1.0e9,
            host: "h".into(),
            slurm_task: None,
        }
    }

    #[test]
    fn rows_round_trip_and_replace() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sqlite");
        let mut store = Store::open(&path).unwrap();
        let a = record("a", RunStatus::Ok, 100);
        let mut b = record("b", RunStatus::Failed, 7);
        b.stats = None;
        b.signal = Some(9);
        b.exit_code = None;
        store.record(&[a.clone(), b.clone()]).unwrap();
        drop(store);
        // Reopening sees the committed rows.
        let mut store = Store::open(&path).unwrap();
        assert_eq!(store.records().unwrap(), vec![a.clone(), b.clone()]);
        let statuses = store.statuses().unwrap();
        assert_eq!(statuses["a"], RunStatus::Ok);
        assert_eq!(statuses["b"], RunStatus::Failed);
        // A rerun of `b` replaces its row.
        let b2 = record("b", RunStatus::Ok, 8);
        store.record(std::slice::from_ref(&b2)).unwrap();
        assert_eq!(store.records().unwrap(), vec![a, b2]);
    }

    #[test]
    fn is_in_wal_mode_and_records_jobs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sqlite");
        let mut store = Store::open(&path).unwrap();
        let mode: String = store
            .conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        let job = SlurmJob {
            job_id: "42".into(),
            keys_file: dir.path().join("k.json"),
            per_task_files: true,
            submitted_at: 5.0,
        };
        store.add_slurm_job(&job).unwrap();
        assert_eq!(store.slurm_jobs().unwrap(), vec![job]);
    }

    #[test]
    fn refuses_what_is_not_a_store() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notes.txt");
        std::fs::write(
            &path,
            "these are not the rows you are looking for\n".repeat(100),
        )
        .unwrap();
        let err = Store::open(&path).err().unwrap();
        assert!(format!("{err:#}").contains("notes.txt"), "{err:#}");
    }

    /// `--status` and `--export` open the store read-only: they work on a store nobody may
    /// write, and they cannot write it even where the permissions would let them (as root,
    /// for whom the CLI test's `chmod 0444` changes nothing).
    #[test]
    fn a_read_only_store_refuses_writes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sqlite");
        Store::open(&path)
            .unwrap()
            .record(&[record("a", RunStatus::Ok, 100)])
            .unwrap();
        let store = Store::open_read_only(&path).unwrap();
        assert_eq!(store.records().unwrap().len(), 1);
        let err = store
            .conn
            .execute("DELETE FROM runs", [])
            .unwrap_err()
            .to_string();
        assert!(err.contains("readonly"), "{err}");
        drop(store);
        assert_eq!(Store::open(&path).unwrap().records().unwrap().len(), 1);
    }

    #[test]
    fn refuses_a_newer_schema() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sqlite");
        let store = Store::open(&path).unwrap();
        store
            .conn
            .execute(
                "UPDATE meta SET value = '99' WHERE name = 'schema_version'",
                [],
            )
            .unwrap();
        drop(store);
        let err = Store::open(&path).err().unwrap().to_string();
        assert!(err.contains("newer"), "{err}");
    }
}

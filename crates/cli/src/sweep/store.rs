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
//! Each row carries a `checksum` of what it holds, written in the same statement: the
//! SHA-256 (hex) of its other columns in the order of `COLUMNS`, each as a type byte
//! (`n` NULL, `i` integer, `r` real, `t` text, `b` blob), the length of its bytes (8
//! bytes, little-endian) and its bytes: none for NULL, an integer's 8 little-endian
//! bytes, a real's IEEE bits likewise (-0 as 0), text's UTF-8, a blob's bytes. A row whose checksum does not match (a disk error, a bad copy, an edit
//! by hand) is *damaged*: it does not count as done, so a sweep runs its point again
//! (and says so, naming the store and the run), and exports and reports refuse it with
//! the same naming ([`DamagedRun`]). Stores of schema 1 (before checksums) are migrated
//! when a sweep first opens them for writing: each row that still reads whole (every
//! column of the right type, the JSON columns parse, a known status) is stamped with its
//! checksum once; one that does not is left without, and is damaged from then on. Read
//! without writing (`--status`, `--export` of a schema-1 store), such rows are checked the
//! same way each time they are read.
//!
//! Table `slurm_jobs` records submitted job arrays (job id, the file listing the keys of
//! its tasks, whether tasks write per-task files) for `--status`; table `meta` holds the
//! schema version.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use rusqlite::types::{Value, ValueRef};
use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The schema this code writes; a store of a newer schema is refused. Version 2 added
/// the rows' `checksum` column.
const SCHEMA_VERSION: i64 = 2;

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
    /// Its rows carry checksums (schema 2); false only for a schema-1 store opened
    /// read-only, whose rows are checked by reading them whole.
    checksummed: bool,
}

const COLUMNS: &str = "key, workload, program, args, config, design, sets, functional, \
    run_args, resolved_config, regsim_version, status, exit_code, signal, stats, stderr_tail, \
    stdout_tail, wall_seconds, cpu_seconds, finished_at, host, slurm_task";

/// How many columns `COLUMNS` names.
const NCOLUMNS: usize = 22;

/// A row of `runs` that did not read back as it was written: its checksum does not match
/// its contents (or it has none), or, in a store from before checksums, a column no
/// longer reads as its type.
#[derive(Clone, Debug, PartialEq)]
pub struct DamagedRun {
    /// SQLite's `rowid` of the row (to delete it by hand when its key is damaged too).
    pub rowid: i64,
    /// Its key column as it reads now.
    pub key: String,
    /// Workload, config and design as they read now.
    pub label: String,
    /// What is wrong.
    pub reason: String,
}

impl DamagedRun {
    /// `STORE: run KEY (workload, config, design) is damaged: REASON`.
    pub fn describe(&self, store: &Path) -> String {
        format!(
            "{}: run {} ({}) is damaged: {}",
            store.display(),
            self.key,
            self.label,
            self.reason
        )
    }
}

/// The refusal of an export or report of `damaged` runs of `store`: each named, and how
/// to repair the store.
pub fn damage_report(store: &Path, damaged: &[DamagedRun]) -> String {
    const SHOWN: usize = 10;
    let mut s = format!(
        "{}: {} damaged run{} (a row that no longer matches the checksum written with it); \
         refusing to use {}:",
        store.display(),
        damaged.len(),
        if damaged.len() == 1 { "" } else { "s" },
        if damaged.len() == 1 { "it" } else { "them" }
    );
    for d in damaged.iter().take(SHOWN) {
        s.push_str(&format!("\n  {}", d.describe(store)));
    }
    if damaged.len() > SHOWN {
        s.push_str(&format!("\n  ... and {} more", damaged.len() - SHOWN));
    }
    s.push_str(&format!(
        "\nrunning the sweep again (`regsim sweep SPEC --store {0}`) runs the damaged points \
         again; a damaged row that is no point of any spec (its key damaged too) can be \
         deleted: sqlite3 {0} \"DELETE FROM runs WHERE rowid = ROWID\" (rowid {1})",
        store.display(),
        damaged
            .iter()
            .map(|d| d.rowid.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    ));
    s
}

/// The checksum of a row's values (see the module documentation).
fn checksum<'a>(values: impl IntoIterator<Item = ValueRef<'a>>) -> String {
    let mut h = Sha256::new();
    for v in values {
        let number;
        let (tag, bytes): (&[u8], &[u8]) = match v {
            ValueRef::Null => (b"n", &[]),
            ValueRef::Integer(i) => {
                number = i.to_le_bytes();
                (b"i", &number)
            }
            // SQLite may store an integral real as an integer and read -0.0 back as 0.0.
            ValueRef::Real(r) => {
                number = (r + 0.0).to_bits().to_le_bytes();
                (b"r", &number)
            }
            ValueRef::Text(t) => (b"t", t),
            ValueRef::Blob(b) => (b"b", b),
        };
        h.update(tag);
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The values of `r`'s row, in the order of `COLUMNS`, as SQLite stores them.
fn row_values(r: &RunRecord) -> Result<Vec<Value>> {
    let text = |s: &str| Value::Text(s.to_owned());
    let int = |i: Option<i32>| i.map_or(Value::Null, |i| Value::Integer(i.into()));
    // SQLite stores a NaN as NULL.
    let real = |x: f64| {
        if x.is_nan() {
            Value::Null
        } else {
            Value::Real(x)
        }
    };
    Ok(vec![
        text(&r.key),
        text(&r.workload),
        text(&r.program),
        json(&r.args)?,
        text(&r.config),
        text(&r.design),
        json(&r.sets)?,
        Value::Integer(r.functional.into()),
        json(&r.run_args)?,
        json(&r.resolved_config)?,
        text(&r.regsim_version),
        text(r.status.as_str()),
        int(r.exit_code),
        int(r.signal),
        match &r.stats {
            Some(s) => json(s)?,
            None => Value::Null,
        },
        text(&r.stderr_tail),
        text(&r.stdout_tail),
        real(r.wall_seconds),
        r.cpu_seconds.map_or(Value::Null, real),
        real(r.finished_at),
        text(&r.host),
        r.slurm_task.as_deref().map_or(Value::Null, text),
    ])
}

/// `v` as JSON text.
fn json<T: Serialize + ?Sized>(v: &T) -> Result<Value> {
    Ok(Value::Text(serde_json::to_string(v)?))
}

/// The type of a column's value, for messages.
fn type_name(v: ValueRef<'_>) -> &'static str {
    match v {
        ValueRef::Null => "NULL",
        ValueRef::Integer(_) => "an integer",
        ValueRef::Real(_) => "a real",
        ValueRef::Text(_) => "text",
        ValueRef::Blob(_) => "a blob",
    }
}

/// Column `i` (of `COLUMNS`) of `v`, as text.
fn text_at<'a>(v: &[ValueRef<'a>], i: usize) -> Result<&'a str> {
    match v[i] {
        ValueRef::Text(t) => std::str::from_utf8(t)
            .map_err(|e| anyhow!("column {} is not UTF-8 text ({e})", column_name(i))),
        other => bail!(
            "column {} is {}, not text",
            column_name(i),
            type_name(other)
        ),
    }
}

fn opt_text_at(v: &[ValueRef<'_>], i: usize) -> Result<Option<String>> {
    match v[i] {
        ValueRef::Null => Ok(None),
        _ => text_at(v, i).map(|t| Some(t.to_owned())),
    }
}

fn opt_int_at(v: &[ValueRef<'_>], i: usize) -> Result<Option<i32>> {
    match v[i] {
        ValueRef::Null => Ok(None),
        ValueRef::Integer(n) => i32::try_from(n)
            .map(Some)
            .map_err(|_| anyhow!("column {} is out of range ({n})", column_name(i))),
        other => bail!(
            "column {} is {}, not an integer",
            column_name(i),
            type_name(other)
        ),
    }
}

fn opt_real_at(v: &[ValueRef<'_>], i: usize) -> Result<Option<f64>> {
    match v[i] {
        ValueRef::Null => Ok(None),
        ValueRef::Real(x) => Ok(Some(x)),
        ValueRef::Integer(n) => Ok(Some(n as f64)),
        other => bail!(
            "column {} is {}, not a number",
            column_name(i),
            type_name(other)
        ),
    }
}

fn real_at(v: &[ValueRef<'_>], i: usize) -> Result<f64> {
    opt_real_at(v, i)?.ok_or_else(|| anyhow!("column {} is NULL", column_name(i)))
}

fn json_at<T: serde::de::DeserializeOwned>(v: &[ValueRef<'_>], i: usize) -> Result<T> {
    serde_json::from_str(text_at(v, i)?)
        .with_context(|| format!("column {} is not what was written", column_name(i)))
}

/// The name of column `i` of `COLUMNS`.
fn column_name(i: usize) -> &'static str {
    COLUMNS.split(',').nth(i).map_or("?", str::trim)
}

/// A row's values (`COLUMNS`) as a record.
fn decode(v: &[ValueRef<'_>]) -> Result<RunRecord> {
    Ok(RunRecord {
        key: text_at(v, 0)?.to_owned(),
        workload: text_at(v, 1)?.to_owned(),
        program: text_at(v, 2)?.to_owned(),
        args: json_at(v, 3)?,
        config: text_at(v, 4)?.to_owned(),
        design: text_at(v, 5)?.to_owned(),
        sets: json_at(v, 6)?,
        functional: match v[7] {
            ValueRef::Integer(0) => false,
            ValueRef::Integer(1) => true,
            _ => bail!("column functional is not 0 or 1"),
        },
        run_args: json_at(v, 8)?,
        resolved_config: json_at(v, 9)?,
        regsim_version: text_at(v, 10)?.to_owned(),
        status: RunStatus::parse(text_at(v, 11)?)?,
        exit_code: opt_int_at(v, 12)?,
        signal: opt_int_at(v, 13)?,
        stats: match v[14] {
            ValueRef::Null => None,
            _ => Some(json_at(v, 14)?),
        },
        stderr_tail: text_at(v, 15)?.to_owned(),
        stdout_tail: text_at(v, 16)?.to_owned(),
        wall_seconds: real_at(v, 17)?,
        cpu_seconds: opt_real_at(v, 18)?,
        finished_at: real_at(v, 19)?,
        host: text_at(v, 20)?.to_owned(),
        slurm_task: opt_text_at(v, 21)?,
    })
}

/// A row's status (column `status`).
fn status_of(v: &[ValueRef<'_>]) -> Result<RunStatus> {
    RunStatus::parse(text_at(v, 11)?)
}

/// A row as read: intact (what was written), or damaged.
enum Checked<T> {
    Intact(T),
    Damaged(DamagedRun),
}

/// Reads a row of `SELECT rowid, COLUMNS, checksum`: checks it (its checksum when
/// `checksummed`, else that it reads whole) and decodes it with `decode`. Only an error
/// of SQLite itself is an error.
fn check_row<T>(
    row: &rusqlite::Row<'_>,
    checksummed: bool,
    decode_row: impl Fn(&[ValueRef<'_>]) -> Result<T>,
) -> rusqlite::Result<Checked<T>> {
    let rowid: i64 = row.get(0)?;
    let values = (1..=NCOLUMNS)
        .map(|i| row.get_ref(i))
        .collect::<rusqlite::Result<Vec<ValueRef<'_>>>>()?;
    let stored = row.get_ref(NCOLUMNS + 1)?;
    let problem = if checksummed {
        match stored {
            ValueRef::Text(c) if c == checksum(values.iter().copied()).as_bytes() => None,
            ValueRef::Null => Some("it has no checksum".to_owned()),
            _ => Some("its checksum does not match its contents".to_owned()),
        }
    } else {
        decode(&values).err().map(|e| format!("{e:#}"))
    };
    let problem = match problem {
        None => match decode_row(&values) {
            Ok(t) => return Ok(Checked::Intact(t)),
            Err(e) => format!("{e:#}"),
        },
        Some(p) => p,
    };
    let lossy = |i: usize| match values[i] {
        ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
        other => format!("<{}>", type_name(other)),
    };
    Ok(Checked::Damaged(DamagedRun {
        rowid,
        key: lossy(0),
        label: format!("{}, {}, {}", lossy(1), lossy(4), lossy(5)),
        reason: problem,
    }))
}

/// Whether the `runs` table has the `checksum` column (schema 2).
fn has_checksum_column(conn: &Connection) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT count(*) FROM pragma_table_info('runs') WHERE name = 'checksum'",
        [],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| n > 0)
}

/// Migrates a schema-1 store: adds the `checksum` column and stamps each row that reads
/// whole with its checksum, in one immediate transaction (another process opening the
/// store at the same time waits, then finds it migrated).
fn migrate(conn: &mut Connection) -> rusqlite::Result<()> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    if !has_checksum_column(&tx)? {
        tx.execute_batch("ALTER TABLE runs ADD COLUMN checksum TEXT")?;
        let stamps = {
            let mut stmt = tx.prepare(&format!("SELECT rowid, {COLUMNS}, NULL FROM runs"))?;
            let rows = stmt.query_map([], |r| {
                let checked = check_row(r, false, |v| Ok(checksum(v.iter().copied())))?;
                Ok((r.get::<_, i64>(0)?, checked))
            })?;
            let mut stamps = Vec::new();
            for row in rows {
                if let (rowid, Checked::Intact(sum)) = row? {
                    stamps.push((rowid, sum));
                }
            }
            stamps
        };
        let mut stamp = tx.prepare("UPDATE runs SET checksum = ?1 WHERE rowid = ?2")?;
        for (rowid, sum) in stamps {
            stamp.execute(params![sum, rowid])?;
        }
    }
    tx.execute(
        "INSERT OR REPLACE INTO meta (name, value) VALUES ('schema_version', ?1)",
        [SCHEMA_VERSION.to_string()],
    )?;
    tx.commit()
}

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
                 slurm_task TEXT,
                 checksum TEXT
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
        let mut conn = conn;
        if !has_checksum_column(&conn).map_err(in_context)? {
            migrate(&mut conn).with_context(|| {
                format!(
                    "{}: adding checksums to the rows of a store from before them",
                    path.display()
                )
            })?;
        }
        Ok(Store {
            conn,
            path: path.to_path_buf(),
            checksummed: true,
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
        let checksummed = has_checksum_column(&conn).with_context(|| {
            format!("{} is not a readable sweep store (SQLite)", path.display())
        })?;
        Ok(Store {
            conn,
            path: path.to_path_buf(),
            checksummed,
        })
    }

    /// Claims `key` for `owner` (see the module documentation): one immediate
    /// transaction, so of two sweeps claiming a point at once exactly one gets it.
    pub fn claim(&mut self, key: &str, owner: &Owner, retry_failed: bool) -> Result<Claim> {
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        // A damaged row counts as no row: the point runs again and its row replaces it.
        let checked = tx
            .query_row(
                &format!("SELECT rowid, {COLUMNS}, checksum FROM runs WHERE key = ?1"),
                [key],
                |r| check_row(r, self.checksummed, status_of),
            )
            .optional()?;
        if let Some(Checked::Intact(status)) = checked {
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

    /// The status of every intact recorded run, by key: a damaged run is left out (its
    /// point is to be run again); see [`Store::check`].
    pub fn statuses(&self) -> Result<std::collections::BTreeMap<String, RunStatus>> {
        Ok(self.check()?.0)
    }

    /// The status of every intact recorded run by key, and the damaged runs.
    pub fn check(
        &self,
    ) -> Result<(
        std::collections::BTreeMap<String, RunStatus>,
        Vec<DamagedRun>,
    )> {
        let mut statuses = std::collections::BTreeMap::new();
        let mut damaged = Vec::new();
        for row in self.rows(status_of)? {
            match row {
                (key, Checked::Intact(status)) => {
                    statuses.insert(key, status);
                }
                (_, Checked::Damaged(d)) => damaged.push(d),
            }
        }
        Ok((statuses, damaged))
    }

    /// Every row, ordered by key, decoded by `decode_row` when intact, with its key.
    fn rows<T>(
        &self,
        decode_row: impl Fn(&[ValueRef<'_>]) -> Result<T>,
    ) -> Result<Vec<(String, Checked<T>)>> {
        let checksum = if self.checksummed { "checksum" } else { "NULL" };
        let mut stmt = self.conn.prepare(&format!(
            "SELECT rowid, {COLUMNS}, {checksum} FROM runs ORDER BY key"
        ))?;
        let rows = stmt.query_map([], |r| {
            let checked = check_row(r, self.checksummed, &decode_row)?;
            let key = match &checked {
                Checked::Intact(_) => r.get::<_, String>(1)?,
                Checked::Damaged(d) => d.key.clone(),
            };
            Ok((key, checked))
        })?;
        let mut out = Vec::new();
        for (i, row) in rows.enumerate() {
            // A store damaged where SQLite itself notices (a page that is no longer a
            // page) cannot be read at all: say where.
            out.push(row.with_context(|| {
                format!(
                    "{}: run {} of the store (by key) cannot be read: the store is damaged",
                    self.path.display(),
                    i + 1
                )
            })?);
        }
        Ok(out)
    }

    /// Writes finished runs with their checksums, replacing rows of the same keys, in one
    /// transaction.
    pub fn record(&mut self, records: &[RunRecord]) -> Result<()> {
        let tx = self.conn.transaction()?;
        {
            let mut stmt = tx.prepare_cached(&format!(
                "INSERT OR REPLACE INTO runs ({COLUMNS}, checksum) VALUES \
                 (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, \
                  ?18, ?19, ?20, ?21, ?22, ?23)"
            ))?;
            for r in records {
                let mut values = row_values(r)?;
                values.push(Value::Text(checksum(values.iter().map(ValueRef::from))));
                stmt.execute(rusqlite::params_from_iter(&values))
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

    /// Every recorded run, ordered by key; refused, naming each, if any is damaged.
    pub fn records(&self) -> Result<Vec<RunRecord>> {
        let (records, damaged) = self.scan()?;
        if !damaged.is_empty() {
            bail!("{}", damage_report(&self.path, &damaged));
        }
        Ok(records)
    }

    /// Every intact recorded run, ordered by key, and the damaged ones.
    pub fn scan(&self) -> Result<(Vec<RunRecord>, Vec<DamagedRun>)> {
        let mut records = Vec::new();
        let mut damaged = Vec::new();
        for (_, row) in self.rows(decode)? {
            match row {
                Checked::Intact(r) => records.push(r),
                Checked::Damaged(d) => damaged.push(d),
            }
        }
        Ok((records, damaged))
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

    /// A known answer, from Python: `hashlib.sha256` of `b"n"`, `pack("<Q", 0)`, `b"i"`,
    /// `pack("<Q", 8)`, `pack("<q", 1)`, `b"r"`, `pack("<Q", 8)`, `pack("<d", 0.0)`,
    /// `b"t"`, `pack("<Q", 2)` and `b"ab"`, concatenated. Changing the checksum makes
    /// every stored row damaged, so it must be deliberate.
    #[test]
    fn the_checksum_is_the_documented_one() {
        let values = [
            ValueRef::Null,
            ValueRef::Integer(1),
            ValueRef::Real(-0.0),
            ValueRef::Text(b"ab"),
        ];
        assert_eq!(
            checksum(values),
            "5c0095f897facade520b575635c3edfdd515f4fc4da0d27fec7c505be57755f9"
        );
        // Every value counts, and where one ends.
        assert_ne!(
            checksum([ValueRef::Text(b"ab"), ValueRef::Text(b"")]),
            checksum([ValueRef::Text(b"a"), ValueRef::Text(b"b")])
        );
    }

    /// A row changed after it was written (here by hand, with SQL; on disk, by a bad
    /// sector or a bad copy) whose key still reads: it used to count as done. Now it is
    /// damaged: left out of the statuses, claimable, named when the rows are read.
    #[test]
    fn a_row_changed_by_hand_is_damaged_and_runs_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sqlite");
        let mut store = Store::open(&path).unwrap();
        let (a, b, c) = (
            record("a", RunStatus::Ok, 100),
            record("b", RunStatus::Ok, 7),
            record("c", RunStatus::Failed, 7),
        );
        store.record(&[a.clone(), b.clone(), c.clone()]).unwrap();
        let (statuses, damaged) = store.check().unwrap();
        assert_eq!(statuses.len(), 3);
        assert!(damaged.is_empty(), "{damaged:?}");
        // Valid JSON, another number: only the checksum tells.
        store
            .conn
            .execute(
                "UPDATE runs SET stats = '{\"total\":{\"cycles\":101,\"ipc\":1.5}}' \
                 WHERE key = 'a'",
                [],
            )
            .unwrap();
        store
            .conn
            .execute("UPDATE runs SET checksum = NULL WHERE key = 'c'", [])
            .unwrap();
        let (statuses, damaged) = store.check().unwrap();
        assert_eq!(statuses.keys().collect::<Vec<_>>(), ["b"]);
        assert_eq!(damaged.len(), 2);
        assert_eq!(damaged[0].key, "a");
        assert_eq!(damaged[0].label, "saxpy --n 4, gtx480, ideal");
        assert_eq!(
            damaged[0].reason,
            "its checksum does not match its contents"
        );
        assert_eq!(damaged[1].reason, "it has no checksum");
        // Reading the rows refuses, naming the store, each run and the repair.
        let err = format!("{:#}", store.records().unwrap_err());
        assert!(
            err.contains(&format!(
                "{}: run a (saxpy --n 4, gtx480, ideal) is damaged",
                path.display()
            )) && err.contains("run c (")
                && err.contains("2 damaged runs")
                && err.contains("runs the damaged points again"),
            "{err}"
        );
        let (records, _) = store.scan().unwrap();
        assert_eq!(records, vec![b.clone()]);
        // The damaged points are claimed (a failed one too, without --retry-failed);
        // the intact one is not.
        let owner = Owner::this_process();
        assert_eq!(store.claim("a", &owner, false).unwrap(), Claim::Claimed);
        assert_eq!(store.claim("c", &owner, false).unwrap(), Claim::Claimed);
        assert_eq!(
            store.claim("b", &owner, false).unwrap(),
            Claim::Recorded(RunStatus::Ok)
        );
        // Their new rows replace the damaged ones.
        store.record(&[a.clone(), c.clone()]).unwrap();
        assert_eq!(store.records().unwrap(), vec![a, b, c]);
        // A damaged key is a damaged row of no point, named by its rowid.
        store
            .conn
            .execute("UPDATE runs SET key = 'x' WHERE key = 'b'", [])
            .unwrap();
        let (statuses, damaged) = store.check().unwrap();
        assert_eq!(statuses.len(), 2);
        assert_eq!(damaged[0].key, "x");
        assert!(damaged[0].rowid > 0);
        // Even through a read-only connection.
        let ro = Store::open_read_only(&path).unwrap();
        assert_eq!(ro.check().unwrap().1, damaged);
    }

    /// A store of schema 1 (no checksums): read as before, then stamped once when opened
    /// for writing; a row that no longer reads whole is left unstamped, so damaged.
    #[test]
    fn a_store_from_before_checksums_is_checked_and_stamped_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sqlite");
        let (a, b) = (record("a", RunStatus::Ok, 1), record("b", RunStatus::Ok, 2));
        {
            let mut store = Store::open(&path).unwrap();
            store.record(&[a.clone(), b.clone()]).unwrap();
            store
                .conn
                .execute_batch(
                    "ALTER TABLE runs DROP COLUMN checksum;
                     UPDATE meta SET value = '1' WHERE name = 'schema_version';
                     UPDATE runs SET sets = 'not json' WHERE key = 'b';",
                )
                .unwrap();
        }
        // Read-only: checked by reading, nothing written.
        let ro = Store::open_read_only(&path).unwrap();
        assert!(!ro.checksummed);
        let (records, damaged) = ro.scan().unwrap();
        assert_eq!(records, vec![a.clone()]);
        assert_eq!(damaged.len(), 1);
        assert!(damaged[0].reason.contains("column sets"), "{damaged:?}");
        drop(ro);
        assert!(!has_checksum_column(&Connection::open(&path).unwrap()).unwrap());
        // For writing: migrated.
        let store = Store::open(&path).unwrap();
        let version: String = store
            .conn
            .query_row(
                "SELECT value FROM meta WHERE name = 'schema_version'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(version, SCHEMA_VERSION.to_string());
        let (statuses, damaged) = store.check().unwrap();
        assert_eq!(statuses.keys().collect::<Vec<_>>(), ["a"]);
        assert_eq!(damaged[0].reason, "it has no checksum");
        // `a` now carries a checksum that catches what reading could not.
        store
            .conn
            .execute("UPDATE runs SET wall_seconds = 0.5 WHERE key = 'a'", [])
            .unwrap();
        assert_eq!(store.check().unwrap().1.len(), 2);
        // Opening again does not stamp again.
        drop(store);
        assert_eq!(Store::open(&path).unwrap().check().unwrap().1.len(), 2);
    }

    /// Every value a record can hold reads back intact, NaN and -0 included (SQLite stores
    /// a NaN as NULL, an integral real as an integer).
    #[test]
    fn odd_values_keep_their_checksums() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sqlite");
        let mut store = Store::open(&path).unwrap();
        let mut r = record("a", RunStatus::Timeout, 1);
        r.wall_seconds = -0.0;
        r.cpu_seconds = Some(f64::NAN);
        r.finished_at = 1e300;
        r.exit_code = Some(i32::MIN);
        r.slurm_task = Some("1_2".into());
        r.stderr_tail = "\u{1F600}\0\n".into();
        let mut s = record("s", RunStatus::Ok, 1);
        s.stats = None;
        s.cpu_seconds = None;
        s.wall_seconds = 3.0;
        store.record(&[r, s]).unwrap();
        let (statuses, damaged) = store.check().unwrap();
        assert!(damaged.is_empty(), "{damaged:?}");
        assert_eq!(statuses.len(), 2);
    }
}

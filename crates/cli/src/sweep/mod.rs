//! Sweeps: many `regsim run`s over workloads × configs × designs × config settings, with
//! every result in a resumable SQLite store.
//!
//! The library behind `regsim sweep` (and what `regsim report` and `regsim paper` build
//! on):
//! - [`SweepSpec::parse`] reads a spec file (format in [`spec`]); [`SweepSpec::expand`]
//!   gives its [`RunPoint`]s, each with a stable `key`, after validating every config;
//! - [`Store::open`] opens (or creates) a store; [`Store::statuses`] says which keys are
//!   recorded and how they ended, [`Store::records`] reads the rows back as
//!   [`RunRecord`]s (statistics JSON included);
//! - [`run_local`] (or [`run_points`] for a chosen list) runs the points the store does
//!   not hold on this machine, `jobs` at a time, recording each as it finishes, and
//!   returns a [`SweepSummary`];
//! - [`runner::execute`] runs one point and returns its record without storing it;
//! - [`export::table`] and [`export::write`] make the flat CSV/JSON tables;
//! - [`slurm`] submits the missing points as Slurm job arrays, runs one array task,
//!   collects per-task result files and reports a sweep's status.
//!
//! Each point runs `regsim run` as a child process (the executable in
//! [`LocalOptions::regsim`], by default this one), with its own statistics file.
//!
//! ```no_run
//! use regsim::sweep::{records_for, run_local, LocalOptions, Store, SweepSpec};
//! # fn main() -> anyhow::Result<()> {
//! let spec = SweepSpec::parse("experiments/gebhart.toml".as_ref())?;
//! let mut store = Store::open("gebhart.sqlite".as_ref())?;
//! let summary = run_local(&spec, &mut store, &LocalOptions::new()?)?;
//! eprintln!("{}", summary.describe());
//! // This spec's rows, in its point order, statistics included.
//! for row in records_for(&store, &spec.expand()?)? {
//!     println!("{} {} {}", row.workload, row.design, row.stats.unwrap_or_default()["total"]["ipc"]);
//! }
//! # Ok(())
//! # }
//! ```

pub mod export;
pub mod local;
pub mod runner;
pub mod slurm;
pub mod spec;
pub mod store;

pub use export::{ExportFormat, Table};
pub use local::{run_local, run_points, LocalOptions, Progress, SweepSummary};
pub use spec::{RunPoint, SweepSpec, Workload};
pub use store::{DamagedRun, RunRecord, RunStatus, Store};

/// The rows of `store` for the points of `points`, in the points' order (points without
/// a row are left out). Refused, naming each, if the row of a point is damaged
/// ([`store::DamagedRun`]); a damaged row that is no point of `points` is named in a
/// warning and left out.
pub fn records_for(store: &Store, points: &[RunPoint]) -> anyhow::Result<Vec<RunRecord>> {
    let (records, damaged) = store.scan()?;
    let keys: std::collections::BTreeSet<&str> = points.iter().map(|p| p.key.as_str()).collect();
    let (ours, others): (Vec<_>, Vec<_>) = damaged
        .into_iter()
        .partition(|d| keys.contains(d.key.as_str()));
    if !ours.is_empty() {
        anyhow::bail!("{}", store::damage_report(store.path(), &ours));
    }
    for d in &others {
        eprintln!(
            "regsim: warning: {} (no point of this spec; left out)",
            d.describe(store.path())
        );
    }
    let mut by_key: std::collections::BTreeMap<String, RunRecord> =
        records.into_iter().map(|r| (r.key.clone(), r)).collect();
    Ok(points
        .iter()
        .filter_map(|p| by_key.remove(&p.key))
        .collect())
}

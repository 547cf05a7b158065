//! `regsim sweep SPEC.toml --store FILE.sqlite [-j N]`: run every point of a sweep spec
//! that the store does not hold yet, in parallel on this machine, with a progress bar;
//! rerunning the same command resumes. With `--export csv|json`, `--slurm`, `--status`,
//! `--collect` or `--list` it does that instead. The spec format and the store are
//! documented in `regsim::sweep`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{ArgGroup, Args};

use regsim::sweep::{
    self, export, local, slurm, ExportFormat, LocalOptions, Progress, RunStatus, Store, SweepSpec,
};

#[derive(Args)]
#[command(group(
    ArgGroup::new("action")
        .args(["export", "slurm", "status", "collect", "list", "run_point"])
        .multiple(false)
))]
pub struct SweepArgs {
    /// The sweep spec: a TOML file with a [sweep] table (workloads, configs, designs,
    /// optional [sweep.set] grid and [[sweep.points]]), or several [[sweep]] groups.
    #[arg(value_name = "SPEC.toml")]
    spec: PathBuf,
    /// The SQLite store of results (created if missing; one row per finished run).
    #[arg(long, value_name = "FILE.sqlite")]
    store: PathBuf,
    /// Simulations at once (default: one per core).
    #[arg(short = 'j', long = "jobs", value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..))]
    jobs: Option<u32>,
    /// Run again the points whose recorded run failed (locally or with --slurm).
    #[arg(long)]
    retry_failed: bool,
    /// One line per finished run instead of the progress bar.
    #[arg(long)]
    no_progress: bool,
    /// Write the finished runs of the spec as a flat table (one column per statistic).
    #[arg(long, value_enum, value_name = "csv|json")]
    export: Option<ExportFormat>,
    /// With --export: the file to write (default: standard output).
    #[arg(short = 'o', long, value_name = "FILE", requires = "export")]
    output: Option<PathBuf>,
    /// Submit the missing points as a Slurm job array (`sbatch --array`), one point per
    /// task, with this same regsim binary.
    #[arg(long)]
    slurm: bool,
    /// With --slurm: the partition.
    #[arg(long, value_name = "P", requires = "slurm")]
    partition: Option<String>,
    /// With --slurm: each task's time limit (e.g. 01:00:00).
    #[arg(long, value_name = "T", requires = "slurm")]
    time: Option<String>,
    /// With --slurm: each task's memory (e.g. 4G).
    #[arg(long, value_name = "M", requires = "slurm")]
    mem: Option<String>,
    /// With --slurm: at most N tasks at once.
    #[arg(long, value_name = "N", requires = "slurm")]
    max_running: Option<u32>,
    /// With --slurm: one more sbatch argument (repeatable), e.g. --sbatch-arg=--account=X.
    #[arg(
        long,
        value_name = "ARG",
        requires = "slurm",
        allow_hyphen_values = true
    )]
    sbatch_arg: Vec<String>,
    /// With --slurm: tasks write one result file each (into FILE.sqlite.slurm/results/)
    /// instead of the store, for clusters whose shared file system cannot host SQLite's
    /// WAL; merge them with --collect.
    #[arg(long)]
    per_task_files: bool,
    /// Report how many points are done, failed, running, pending or missing.
    #[arg(long)]
    status: bool,
    /// Move the per-task result files of --slurm --per-task-files into the store.
    #[arg(long)]
    collect: bool,
    /// List the points (key, state, description) without running anything.
    #[arg(long)]
    list: bool,
    /// Run one point (an array task of --slurm): an index into --points, else into the
    /// spec's points.
    #[arg(long, value_name = "INDEX", hide = true)]
    run_point: Option<usize>,
    /// With --run-point: the file of keys the index refers to.
    #[arg(long, value_name = "FILE", hide = true, requires = "run_point")]
    points: Option<PathBuf>,
}

fn regsim_exe() -> Result<PathBuf> {
    std::env::current_exe().context("locating the regsim executable")
}

pub fn run(args: SweepArgs) -> Result<ExitCode> {
    let spec = SweepSpec::parse(&args.spec)?;
    let regsim = regsim_exe()?;
    if let Some(index) = args.run_point {
        let status = slurm::run_task(
            &spec,
            &args.store,
            index,
            args.points.as_deref(),
            args.per_task_files,
            &regsim,
        )?;
        return Ok(if status == RunStatus::Ok {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        });
    }
    if (args.export.is_some() || args.status || args.collect) && !args.store.exists() {
        anyhow::bail!(
            "no sweep store at {} (run the sweep first)",
            args.store.display()
        );
    }
    // Every point is expanded and validated before the store is touched: a spec that
    // fails creates nothing.
    let points = spec.expand_with(Some(&regsim))?;
    // The flags each point passes to `regsim run` (the spec's `run_args` among them) are
    // parsed here as `regsim run` parses them, so that a bad one is refused before any
    // point runs instead of failing every point with a usage message.
    for p in &points {
        let run_args = p.regsim_args(std::path::Path::new("stats.json"));
        if let Err(e) = crate::cmd_run::check_run_args(&run_args[1..]) {
            anyhow::bail!(
                "{}: point {}: `regsim run` refuses its flags (run_args = {:?}): {e}",
                args.spec.display(),
                p.label(),
                p.run_args
            );
        }
    }
    if args.export.is_some() || args.status || args.list {
        if !args.store.exists() {
            // `--list` before the first run: every point is missing.
            let dir = tempfile::tempdir().context("creating a temporary directory")?;
            let store = Store::open(&dir.path().join("empty.sqlite"))?;
            return read_only(&args, &spec, &points, &store, &regsim);
        }
        let store = Store::open_read_only(&args.store)?;
        return read_only(&args, &spec, &points, &store, &regsim);
    }
    let mut store = Store::open(&args.store)?;
    if args.slurm {
        let opts = slurm::SlurmOptions {
            partition: args.partition,
            time: args.time,
            mem: args.mem,
            max_running: args.max_running,
            per_task_files: args.per_task_files,
            retry_failed: args.retry_failed,
            sbatch_args: args.sbatch_arg,
            regsim,
        };
        let jobs = slurm::submit(&spec, &mut store, &opts)?;
        if jobs.is_empty() {
            eprintln!(
                "regsim sweep: nothing to submit: every point is done, failed \
                 (--retry-failed), queued or waiting for --collect"
            );
        }
        for job in &jobs {
            crate::source::print_stdout(&format!(
                "submitted job {} ({} tasks; script {})",
                job.job_id,
                job.tasks,
                job.script.display()
            ))?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    if args.collect {
        let n = slurm::collect(&mut store)?;
        crate::source::print_stdout(&format!(
            "collected {n} results into {}",
            args.store.display()
        ))?;
        return Ok(ExitCode::SUCCESS);
    }
    let opts = LocalOptions {
        jobs: args.jobs.map_or_else(local::default_jobs, |j| j as usize),
        regsim,
        progress: if args.no_progress {
            Progress::Lines
        } else {
            Progress::Auto
        },
        retry_failed: args.retry_failed,
    };
    let summary = sweep::run_points(&points, &mut store, &opts)?;
    eprintln!("regsim {}", summary.describe());
    if summary.failed_in_store > 0 {
        list_failures(&points, &store)?;
    }
    Ok(if summary.failed_in_store > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `--export`, `--status` and `--list`: the store opened read-only.
fn read_only(
    args: &SweepArgs,
    spec: &SweepSpec,
    points: &[sweep::RunPoint],
    store: &Store,
    regsim: &std::path::Path,
) -> Result<ExitCode> {
    if let Some(format) = args.export {
        let records = sweep::records_for(store, points)?;
        if records.len() < points.len() {
            eprintln!(
                "regsim sweep: {} of {} points have no result yet; exporting the {} that do",
                points.len() - records.len(),
                points.len(),
                records.len()
            );
        }
        let table = export::table(&records.iter().collect::<Vec<_>>());
        match &args.output {
            Some(path) => {
                // `-o` onto the store or the spec destroyed it (exit 0).
                for (what, input) in [("the sweep store", &args.store), ("the spec", &args.spec)] {
                    if crate::source::same_file(path, input) {
                        anyhow::bail!(
                            "-o {}: is {what}; refusing to overwrite it with the export",
                            path.display()
                        );
                    }
                }
                let mut file = std::io::BufWriter::new(
                    std::fs::File::create(path)
                        .with_context(|| format!("creating {}", path.display()))?,
                );
                export::write(&table, format, &mut file)?;
                file.flush()
                    .with_context(|| format!("writing {}", path.display()))?;
            }
            None => {
                let stdout = std::io::stdout();
                let mut out = stdout.lock();
                export::write(&table, format, &mut out)
                    .and_then(|()| out.flush().map_err(Into::into))
                    .context("writing the export to stdout")?;
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    if args.status || args.list {
        let report = slurm::status(spec, store, regsim)?;
        if args.list {
            for (point, state, note) in &report.points {
                crate::source::print_stdout(&format!(
                    "{}\t{}\t{}\t{note}",
                    point.key,
                    state.name(),
                    point.label()
                ))?;
            }
        } else {
            crate::source::write_stdout(&report.describe())?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    Ok(ExitCode::SUCCESS)
}

/// One line per point of `points` whose recorded run failed, with its exit and the last
/// line of its stderr.
fn list_failures(points: &[sweep::RunPoint], store: &Store) -> Result<()> {
    for r in sweep::records_for(store, points)? {
        if r.status != RunStatus::Ok {
            let last = r.last_stderr_line();
            eprintln!(
                "regsim sweep: {} {} [{}] ({}): {last}",
                r.status.as_str(),
                r.workload,
                r.key,
                local::exit_description(&r)
            );
        }
    }
    Ok(())
}

//! `regsim correlate --reference DIR [--verdict RULE] [--svg FILE] [--json] [--markdown]
//! STATS.json...`: regsim's per-kernel cycles and L1D/L2 access and miss counts (counted
//! as GPGPU-Sim counts them; see `correlate::input`) against a reference simulator's runs
//! of the same programs (the GPGPU-Sim runs in `reference/gpgpusim/<config>/`), matched by
//! program and arguments.
//!
//! The computation is the `correlate` library crate (shared with the report pages); this
//! module reads the files, prints the table or the JSON and writes the SVG. Files of
//! neither kind among the inputs are skipped with a warning on stderr. Exit status 0 when
//! at least one kernel was compared; 1, after the report and a line saying why, when none
//! was; 2 when an input cannot be read.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use correlate::input::{Skipped, VerdictRule};
use correlate::Metric;

#[derive(Args)]
pub struct CorrelateArgs {
    /// Directory of reference files, one `<program>.json` per run.
    #[arg(long, value_name = "DIR")]
    reference: PathBuf,
    /// Which completed reference runs are compared: `any` (whatever the program printed),
    /// `pass` (only those whose verdict is PASS), or a regular expression the program's
    /// verdict must match (e.g. 'Percent: 0$'). Runs that crashed or exited non-zero are
    /// never compared.
    #[arg(long, value_name = "RULE", default_value = "any")]
    verdict: VerdictRule,
    /// Write the log-log scatter of per-kernel cycles (with the y = x line) to FILE.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    /// Print the comparison as JSON instead of tables.
    #[arg(long, conflicts_with = "markdown")]
    json: bool,
    /// Print Markdown tables instead of aligned text.
    #[arg(long)]
    markdown: bool,
    /// Timing-mode statistics files written by `regsim run --stats`.
    #[arg(value_name = "STATS.json", required = true, num_args = 1..)]
    files: Vec<PathBuf>,
}

fn warn_skipped(skipped: &[Skipped]) {
    for s in skipped {
        eprintln!("warning: {s}");
    }
}

pub fn run(args: CorrelateArgs) -> Result<std::process::ExitCode> {
    let references = correlate::load_reference_dir(&args.reference, &args.verdict)?;
    warn_skipped(&references.skipped);
    let runs = correlate::input::load_regsim_files(&args.files)?;
    warn_skipped(&runs.skipped);
    let result = correlate::correlate(&references.items, &runs.items);
    if let Some(path) = &args.svg {
        let svg = correlate::svg::scatter_svg(&result.scatter(Metric::Cycles));
        std::fs::write(path, svg).with_context(|| format!("writing {}", path.display()))?;
    }
    if args.json {
        crate::source::print_stdout(&serde_json::to_string_pretty(&result)?)?;
    } else {
        crate::source::write_stdout(&correlate::table::render(&result, args.markdown))?;
    }
    Ok(match result.why_nothing_compared() {
        Some(why) => {
            eprintln!("error: {why}");
            std::process::ExitCode::FAILURE
        }
        None => std::process::ExitCode::SUCCESS,
    })
}

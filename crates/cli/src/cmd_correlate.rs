//! `regsim correlate --reference DIR [--svg FILE] [--json] [--markdown] STATS.json...`:
//! regsim's per-kernel cycles and L1D/L2 access and miss counts (counted as GPGPU-Sim
//! counts them; see `correlate::input`) against a reference simulator's runs
//! of the same programs (the GPGPU-Sim runs in `reference/gpgpusim/<config>/`).
//!
//! The computation is the `correlate` library crate (shared with the report pages); this
//! module reads the files, prints the table or the JSON and writes the SVG.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use correlate::Metric;

#[derive(Args)]
pub struct CorrelateArgs {
    /// Directory of reference files, one `<program>.json` per program.
    #[arg(long, value_name = "DIR")]
    reference: PathBuf,
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

pub fn run(args: CorrelateArgs) -> Result<std::process::ExitCode> {
    let references = correlate::load_reference_dir(&args.reference)?;
    let runs = args
        .files
        .iter()
        .map(|f| correlate::load_regsim_stats(f))
        .collect::<Result<Vec<_>, _>>()?;
    let result = correlate::correlate(&references, &runs);
    if let Some(path) = &args.svg {
        let svg = correlate::svg::scatter_svg(&result.scatter(Metric::Cycles));
        std::fs::write(path, svg).with_context(|| format!("writing {}", path.display()))?;
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&result)?);
    } else {
        print!("{}", correlate::table::render(&result, args.markdown));
    }
    Ok(std::process::ExitCode::SUCCESS)
}

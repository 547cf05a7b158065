//! `regsim`: the command-line front end of the simulator.
//!
//! Each subcommand lives in its own module; this file only parses the command line and maps
//! results to exit codes (0 success, 1 a checked property failed, 2 a usage or input error;
//! `run` passes the program's own exit status through).

mod annotations;
mod cmd_compile;
mod cmd_correlate;
mod cmd_ptx;
mod cmd_report;
mod cmd_run;
mod cmd_sweep;
mod elf;
mod paper;
mod passes;
mod regalloc;
mod report_html;
mod source;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "regsim",
    version,
    about = "A GPU simulator for register-file architecture research"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Work with PTX files.
    #[command(subcommand)]
    Ptx(cmd_ptx::PtxCommand),
    /// Lower, analyse and register-allocate a PTX file and print the result.
    Compile(cmd_compile::CompileArgs),
    /// Run a CUDA program (built with `nvcc -cudart shared`) on the simulated GPU.
    Run(cmd_run::RunArgs),
    /// Tables (text or Markdown) from the statistics files of `regsim run --stats`.
    Report(cmd_report::ReportArgs),
    /// Run a paper's experiments (experiments/<PAPER>.toml) and print its headline
    /// figures beside the paper's numbers.
    Paper(paper::PaperArgs),
    /// Run a sweep spec (workloads x configs x designs x settings) into a resumable
    /// SQLite store, locally in parallel or as Slurm job arrays.
    Sweep(cmd_sweep::SweepArgs),
    /// Per-kernel cycles and cache misses against a reference simulator's runs.
    Correlate(cmd_correlate::CorrelateArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Ptx(cmd) => cmd_ptx::run(cmd),
        Command::Compile(args) => cmd_compile::run(args),
        Command::Run(args) => cmd_run::run(args),
        Command::Report(args) => cmd_report::run(args),
        Command::Paper(args) => paper::run(args),
        Command::Sweep(args) => cmd_sweep::run(args),
        Command::Correlate(args) => cmd_correlate::run(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(2)
        }
    }
}

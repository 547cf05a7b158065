//! `regsim`: the command-line front end of the simulator.
//!
//! Each subcommand lives in its own module; this file only parses the command line and maps
//! results to exit codes (0 success, 1 a checked property failed, 2 a usage or input error;
//! `run` passes the program's own exit status through, except 124 for a run stopped at
//! `--max-cycles`, `--max-instructions` or `--timeout`, and 2 for statistics asked for and
//! not written). An error is printed with its causes, each once.

mod annotations;
mod cmd_calibrate;
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
mod sample_check;
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
    /// Run the built-in calibration microbenchmarks on a simulated GPU and print each
    /// latency beside the published hardware figure.
    Calibrate(cmd_calibrate::CalibrateArgs),
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
        Command::Calibrate(args) => cmd_calibrate::run(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {}", error_text(&err));
            ExitCode::from(2)
        }
    }
}

/// `err` and its causes, `: `-separated, leaving out a cause whose text is already in
/// the message: a library error that prints its source also returns it as its cause,
/// and `{:#}` would say it twice. SQLite's causes (`Error code 14: unable to open
/// database file`) count as said when their text after the code is.
fn error_text(err: &anyhow::Error) -> String {
    let mut text = err.to_string();
    for cause in err.chain().skip(1) {
        let cause = cause.to_string();
        let said = cause
            .strip_prefix("Error code ")
            .and_then(|rest| rest.split_once(": "))
            .map_or(cause.as_str(), |(_, message)| message);
        if !text.contains(said) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Like a `thiserror` error with `#[error("reading {path}: {source}")]`.
    #[derive(Debug)]
    struct PrintsItsSource {
        path: String,
        source: std::io::Error,
    }

    impl std::fmt::Display for PrintsItsSource {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "reading {}: {}", self.path, self.source)
        }
    }

    impl std::error::Error for PrintsItsSource {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.source)
        }
    }

    #[test]
    fn a_cause_already_in_the_message_is_not_repeated() {
        let io = || std::io::Error::from(std::io::ErrorKind::NotFound);
        let e = anyhow::Error::new(PrintsItsSource {
            path: "/x".into(),
            source: io(),
        });
        assert_eq!(error_text(&e), format!("reading /x: {}", io()));
        // A cause the message does not print is still shown.
        let e = anyhow::Error::new(io()).context("opening /y");
        assert_eq!(error_text(&e), format!("opening /y: {}", io()));
        let e = e.context("loading the store");
        assert_eq!(
            error_text(&e),
            format!("loading the store: opening /y: {}", io())
        );
    }

    #[test]
    fn an_sqlite_error_is_said_once() {
        let e = rusqlite::Connection::open("/nonexistent-regsim-dir/s.sqlite")
            .map_err(anyhow::Error::new)
            .unwrap_err()
            .context("opening the sweep store");
        let text = error_text(&e);
        assert_eq!(
            text.matches("unable to open database file").count(),
            1,
            "{text}"
        );
        assert!(text.starts_with("opening the sweep store: "), "{text}");
    }
}

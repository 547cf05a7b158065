//! `regsim ptx check FILE...`: parse every file and report its diagnostics. A file
//! without the `.version` and `.target` directives of a PTX module (an empty file, a
//! fragment) is invalid.

use crate::source::{print_stdout, PtxSource};
use anyhow::Result;
use clap::Subcommand;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum PtxCommand {
    /// Parse and verify PTX files; exit status 0 only if every file is valid.
    Check {
        /// PTX files to check.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
}

pub fn run(cmd: PtxCommand) -> Result<ExitCode> {
    match cmd {
        PtxCommand::Check { files } => check(&files),
    }
}

fn check(files: &[PathBuf]) -> Result<ExitCode> {
    let mut failed = 0usize;
    for path in files {
        match check_one(path) {
            Ok(summary) => print_stdout(&format!("{}: ok ({summary})", path.display()))?,
            Err(report) => {
                failed += 1;
                eprintln!("{report}");
            }
        }
    }
    if failed > 0 {
        eprintln!("{failed} of {} file(s) invalid", files.len());
        Ok(ExitCode::from(1))
    } else {
        Ok(ExitCode::SUCCESS)
    }
}

/// Checks one file; the error is the full diagnostic text to print.
fn check_one(path: &std::path::Path) -> Result<String, String> {
    let source = PtxSource::read(path).map_err(|e| format!("error: {e:#}"))?;
    let module = ptx::parse(&source.name, &source.text).map_err(|e| e.to_string())?;
    // The parser accepts fragments (an empty file parses); a module needs its header.
    let missing = match (module.version.is_some(), !module.target.is_empty()) {
        (true, true) => None,
        (false, true) => Some("`.version`"),
        (true, false) => Some("`.target`"),
        (false, false) => Some("`.version` and `.target`"),
    };
    if let Some(missing) = missing {
        return Err(format!(
            "error: {}: not a PTX module: no {missing} directive (a module starts with \
             `.version X.Y` and `.target sm_NN`)",
            source.name
        ));
    }
    let program = ir::lower(&module, &source.name, &source.text).map_err(|e| e.to_string())?;
    let mut problems = Vec::new();
    for function in &program.functions {
        if let Err(errors) = ir::verify(function) {
            for error in errors {
                problems.push(format!(
                    "{}: in function '{}': {error}",
                    source.name, function.name
                ));
            }
        }
    }
    if !problems.is_empty() {
        return Err(problems.join("\n"));
    }
    let kernels = program.kernels().count();
    let functions = program.functions.len() - kernels;
    Ok(format!(
        "{kernels} kernel(s), {functions} device function(s)"
    ))
}

//! `regsim run [--functional] [--gpu CONFIG] [--stats FILE.json] -- PROGRAM ARGS...`: run an
//! unmodified CUDA program (built with `nvcc -cudart shared`) with regsim's CUDA runtime.
//!
//! The program loads `libcudart.so.11.0` at start. We make a private temporary directory
//! holding a symlink of that name to our runtime (crate `cudart`, built as `libcudart.so`
//! beside the `regsim` executable, or the file named by `REGSIM_CUDART`), put the directory
//! first on `LD_LIBRARY_PATH`, and pass the settings in the environment contract the
//! runtime documents (`REGSIM_MODE`, `REGSIM_GPU`, `REGSIM_STATS`). The program keeps its
//! stdin, stdout and stderr; its exit status becomes ours (a signal `n` becomes 128 + n, as
//! in a shell). The runtime itself prints one line per kernel and writes the statistics.

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{anyhow, bail, Context, Result};
use clap::Args;

use crate::elf::{self, ElfError};

/// The soname nvcc-built programs of CUDA 11.x load.
const CUDART_SONAME: &str = "libcudart.so.11.0";
/// Environment variable naming the runtime library to use instead of the one built
/// beside `regsim`.
const CUDART_OVERRIDE: &str = "REGSIM_CUDART";

#[derive(Args)]
pub struct RunArgs {
    /// Execute kernels functionally: values only, no cycles (the default).
    #[arg(long)]
    functional: bool,
    /// The GPU configuration file (TOML) of the simulated device.
    #[arg(long, value_name = "CONFIG")]
    gpu: Option<PathBuf>,
    /// Write per-kernel statistics to this JSON file when the program exits.
    #[arg(long, value_name = "FILE.json")]
    stats: Option<PathBuf>,
    /// The program to run and its arguments (after `--`).
    #[arg(
        value_name = "PROGRAM ARGS",
        required = true,
        num_args = 1..,
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    command: Vec<OsString>,
}

/// How kernels execute. Functional emulation is the only mode so far; the cycle-level
/// timing mode joins here with the timing model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Mode {
    #[default]
    Functional,
}

impl Mode {
    /// The value of `REGSIM_MODE` the runtime understands.
    fn env_value(self) -> &'static str {
        match self {
            Mode::Functional => "functional",
        }
    }
}

pub fn run(args: RunArgs) -> Result<ExitCode> {
    let mode = if args.functional {
        Mode::Functional
    } else {
        Mode::default()
    };
    let (program_arg, program_args) = args
        .command
        .split_first()
        .ok_or_else(|| anyhow!("no program given: regsim run -- PROGRAM ARGS..."))?;
    let program = find_program(Path::new(program_arg))?;
    check_program(&program)?;
    let library = find_runtime()?;

    let gpu = match &args.gpu {
        Some(path) => {
            std::fs::metadata(path)
                .with_context(|| format!("GPU configuration {}", path.display()))?;
            Some(absolute(path)?)
        }
        None => None,
    };
    let stats = match &args.stats {
        Some(path) => {
            let path = absolute(path)?;
            // A stale file must not pass for this run's statistics.
            match std::fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e).with_context(|| format!("replacing {}", path.display())),
            }
            Some(path)
        }
        None => None,
    };

    let lib_dir = tempfile::Builder::new()
        .prefix("regsim-run-")
        .tempdir()
        .context("creating a temporary directory for the runtime library")?;
    std::fs::set_permissions(lib_dir.path(), std::fs::Permissions::from_mode(0o700))
        .context("making the temporary directory private")?;
    std::os::unix::fs::symlink(&library, lib_dir.path().join(CUDART_SONAME))
        .context("linking the runtime library into the temporary directory")?;
    let mut search_path = OsString::from(lib_dir.path());
    if let Some(old) = std::env::var_os("LD_LIBRARY_PATH").filter(|p| !p.is_empty()) {
        search_path.push(":");
        search_path.push(old);
    }

    let mut cmd = Command::new(&program);
    cmd.args(program_args)
        .env("LD_LIBRARY_PATH", search_path)
        .env("REGSIM_MODE", mode.env_value());
    match &gpu {
        Some(p) => cmd.env("REGSIM_GPU", p),
        None => cmd.env_remove("REGSIM_GPU"),
    };
    match &stats {
        Some(p) => cmd.env("REGSIM_STATS", p),
        None => cmd.env_remove("REGSIM_STATS"),
    };
    let mut child = cmd
        .spawn()
        .with_context(|| format!("starting {}", program.display()))?;
    let status = {
        // Like system(3): a Ctrl-C reaches the program (same process group); we wait for
        // it and report its status instead of dying first. Installed after the spawn so
        // that the program does not inherit the ignored dispositions.
        let _ignore = IgnoreInterrupts::new();
        child.wait().context("waiting for the program")?
    };
    drop(lib_dir);

    if let Some(path) = &stats {
        if !path.exists() {
            eprintln!(
                "regsim: no statistics were written to {}: the program did not load regsim's \
                 CUDA runtime or did not exit normally",
                path.display()
            );
        }
    }
    let code = match (status.code(), status.signal()) {
        (Some(code), _) => code,
        (None, Some(signal)) => 128 + signal,
        (None, None) => 1,
    };
    Ok(ExitCode::from(u8::try_from(code & 0xff).unwrap_or(1)))
}

fn absolute(path: &Path) -> Result<PathBuf> {
    std::path::absolute(path).with_context(|| format!("resolving {}", path.display()))
}

/// The program's path: as given when it names a directory (`./prog`, `/bin/x`), else
/// searched on `PATH` like a shell does.
fn find_program(name: &Path) -> Result<PathBuf> {
    let is_file = |p: &Path| p.metadata().map(|m| m.is_file()).unwrap_or(false);
    if name.components().count() > 1 || name.is_absolute() {
        if is_file(name) {
            return Ok(name.to_path_buf());
        }
        bail!("program not found: {}", name.display());
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join(name))
        .find(|p| is_file(p))
        .ok_or_else(|| {
            anyhow!(
                "program not found: {} (not on PATH; use ./{} for a file in this directory)",
                name.display(),
                name.display()
            )
        })
}

/// Refuses programs that would never load our runtime, with the reason and the fix.
fn check_program(program: &Path) -> Result<()> {
    let bytes = std::fs::read(program).with_context(|| format!("reading {}", program.display()))?;
    if bytes.starts_with(b"#!") {
        // A script: the programs it starts inherit LD_LIBRARY_PATH.
        return Ok(());
    }
    let summary = match elf::summarize(&bytes) {
        Ok(s) => s,
        Err(ElfError::NotElf) => bail!(
            "{} is not an executable program (neither ELF nor a script)",
            program.display()
        ),
        Err(e) => bail!("{}: {e}", program.display()),
    };
    if summary.needed.iter().any(|n| n == CUDART_SONAME) {
        return Ok(());
    }
    if let Some(other) = summary
        .needed
        .iter()
        .find(|n| n.starts_with("libcudart.so"))
    {
        bail!(
            "{} needs {other}, but regsim provides the CUDA 11 runtime ({CUDART_SONAME}); \
             rebuild it with a CUDA 11.x nvcc and -cudart shared",
            program.display()
        );
    }
    if summary.has_fatbin {
        bail!(
            "{} has the CUDA runtime linked in statically (nvcc's default), so regsim cannot \
             take its place; rebuild it with `nvcc -cudart shared`",
            program.display()
        );
    }
    bail!(
        "{} is not a CUDA program: it neither loads {CUDART_SONAME} nor contains device code \
         (CUDA programs must be built with `nvcc -cudart shared`)",
        program.display()
    )
}

/// Our runtime library: `REGSIM_CUDART`, or `libcudart.so` beside the `regsim` executable
/// (`target/<profile>/`) or in its `deps/` (where `cargo test` leaves it); the newest wins.
fn find_runtime() -> Result<PathBuf> {
    if let Some(path) = std::env::var_os(CUDART_OVERRIDE) {
        let path = PathBuf::from(path);
        if !path.is_file() {
            bail!("{CUDART_OVERRIDE}={} does not name a file", path.display());
        }
        return absolute(&path);
    }
    let exe = std::env::current_exe().context("locating the regsim executable")?;
    let dir = exe
        .parent()
        .ok_or_else(|| anyhow!("the regsim executable has no directory"))?;
    let candidates = [dir.join("libcudart.so"), dir.join("deps/libcudart.so")];
    let newest = candidates
        .iter()
        .filter_map(|p| {
            let modified = p.metadata().ok()?.modified().ok()?;
            Some((modified, p))
        })
        .max_by_key(|(modified, _)| *modified)
        .map(|(_, p)| p.clone());
    newest.ok_or_else(|| {
        anyhow!(
            "regsim's CUDA runtime library is not built: no libcudart.so in {}; \
             run `cargo build --release -p cudart` (or set {CUDART_OVERRIDE} to the library)",
            dir.display()
        )
    })
}

/// Ignores SIGINT and SIGQUIT while alive, restoring the previous handlers on drop.
struct IgnoreInterrupts {
    previous: [(i32, usize); 2],
}

const SIGINT: i32 = 2;
const SIGQUIT: i32 = 3;
const SIG_IGN: usize = 1;
const SIG_ERR: usize = usize::MAX;

extern "C" {
    /// `signal(2)` from the C library; handlers are passed as addresses.
    fn signal(signum: i32, handler: usize) -> usize;
}

impl IgnoreInterrupts {
    fn new() -> Self {
        let mut previous = [(SIGINT, SIG_ERR), (SIGQUIT, SIG_ERR)];
        for (sig, old) in &mut previous {
            // SAFETY: installing SIG_IGN is async-signal-safe and touches no Rust state.
            *old = unsafe { signal(*sig, SIG_IGN) };
        }
        IgnoreInterrupts { previous }
    }
}

impl Drop for IgnoreInterrupts {
    fn drop(&mut self) {
        for &(sig, old) in &self.previous {
            if old != SIG_ERR {
                // SAFETY: restores the handler `signal` returned, unchanged.
                unsafe { signal(sig, old) };
            }
        }
    }
}

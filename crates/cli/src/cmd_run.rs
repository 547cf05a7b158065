//! `regsim run [--functional] [--gpu NAME|PATH] [--rf DESIGN] [--set KEY=VALUE]...
//! [--max-registers N] [--ltrf-renumber [--registers-per-interval N] [--banks B]]
//! [--profile-registers] [--stats FILE.json] [--summary] [--max-cycles N]
//! [--max-instructions N] [--timeout SECONDS] [--sample | --sample-check]
//! -- PROGRAM ARGS...`: run an
//! unmodified CUDA program (built with `nvcc -cudart shared`) with regsim's CUDA runtime,
//! in timing mode (the cycle-level model; the default) or functionally (values only, much
//! faster).
//!
//! Compiler transforms change the program the simulator runs, not what it computes:
//! `--max-registers N` runs every kernel with the spill code the register allocator needs
//! under a cap of N registers per thread (spill loads and stores execute and are timed;
//! registers per thread and occupancy are the capped allocation's), and `--ltrf-renumber`
//! runs it after LTRF bank-aware register renumbering (`--registers-per-interval`,
//! `--banks`: the options of `regsim compile --pass ltrf`, default 16 and 16).
//! `--profile-registers` profiles the executed instructions: the dynamic register-usage
//! profile (values read 0/1/2/3+ times, lifetimes of read-once values) and the dynamic
//! ORF/LRF accesses and energy (3-entry ORF, split LRF), as `register_profile` and
//! `orf_lrf` in the statistics and in the summary.
//!
//! The GPU config is loaded, overridden and validated here, before the program starts, so
//! a bad one is an error naming the key (exit status 2) rather than a failure inside the
//! program; the runtime loads and validates it again from the environment. Names are
//! looked up in `$REGSIM_CONFIGS`, else the `configs/` of the repository this executable
//! was built in, else the source tree's (`timing::config::find_configs_dir`).
//!
//! The program loads `libcudart.so.11.0` (CUDA 11), `libcudart.so.12` (CUDA 12) or the
//! driver API's `libcuda.so.1` at start. We make a private temporary directory holding
//! symlinks of those names to our runtime (crate `cudart`, built as `libcudart.so` beside
//! the `regsim` executable, or the file named by `REGSIM_CUDART`; for CUDA 12 a copy
//! retagged `libcudart.so.12` by [`elf::retag_cudart`], cached beside it), the driver
//! API's name always on the same file as the runtime the program loads, so that both APIs
//! share one device (docs/cuda12.md). We put the directory
//! first on `LD_LIBRARY_PATH`, and pass the settings in the environment contract the
//! runtime documents (`REGSIM_MODE`, `REGSIM_GPU` as an absolute path, `REGSIM_SET` with
//! one override per line, `REGSIM_STATS`, `REGSIM_SUMMARY`). The program keeps its stdin,
//! stdout and stderr; its exit status becomes ours (a signal `n` becomes 128 + n, as in a
//! shell). The runtime itself prints one line per kernel and writes the statistics; we
//! then add a `program` object to them (`name`, `args`, `exit_code` or `signal`), so a
//! statistics file says which run it describes (`regsim report` shows it).
//!
//! Bounded runs: `--max-cycles`, `--max-instructions` (defaults far beyond every built-in
//! workload) and `--timeout` (none by default) go to the runtime (`REGSIM_MAX_CYCLES`,
//! `REGSIM_MAX_INSTRUCTIONS`, `REGSIM_TIMEOUT`), which stops the run at the bound with
//! the kernel, the cycle and every live warp's state, writes the statistics so far with
//! `"complete": false`, and exits with status 124. A program that outlives `--timeout`
//! by a few seconds anyway (one that never loaded the runtime) is killed, also 124.
//! SIGINT, SIGTERM and SIGHUP reach the program (its runtime writes the statistics so
//! far and it dies of the signal, 128 + n), and the temporary directory is removed.
//! When stderr is a terminal, a status line shows the kernel being simulated, its cycles
//! and the rate (`REGSIM_PROGRESS`), so a long simulation is told from a program busy in
//! its own code. `--stats` into a directory that does not exist is refused before the
//! program starts; statistics asked for and not written make a non-zero exit.
//!
//! Sampled simulation (`--sample`, `[sampling]` in the config, docs/sampling.md):
//! `--sample-check` runs the program twice, in full and then sampled, and compares them
//! (`crate::sample_check`); the program's output appears twice.

use std::ffi::OsString;
use std::io::IsTerminal;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use timing::config::{find_configs_dir, ConfigError, GpuConfig, Override};

use crate::elf::{self, ElfError};

use cudart::soname::{CUDART_11, CUDART_12, LIBCUDA};
/// Environment variable naming the runtime library to use instead of the one built
/// beside `regsim`.
const CUDART_OVERRIDE: &str = "REGSIM_CUDART";

/// Whether `regsim run` accepts `args` (what follows `run`), as a sweep passes its
/// points' flags: `Err` with clap's message (its first line) if not.
pub fn check_run_args(args: &[OsString]) -> std::result::Result<(), String> {
    #[derive(clap::Parser)]
    #[command(name = "regsim run")]
    struct RunOnly {
        #[command(flatten)]
        _run: RunArgs,
    }
    let argv = std::iter::once(OsString::from("regsim run")).chain(args.iter().cloned());
    <RunOnly as clap::Parser>::try_parse_from(argv)
        .map(|_| ())
        .map_err(|e| {
            let text = e.to_string();
            let first = text.lines().next().unwrap_or_default();
            first.trim_start_matches("error: ").to_owned()
        })
}

#[derive(Args)]
pub struct RunArgs {
    /// Execute kernels functionally: values and instruction counts only, no cycles. Much
    /// faster than the default timing mode.
    #[arg(long)]
    functional: bool,
    /// The simulated GPU: a config name (`gtx480`, `maxwell-ltrf`, `rtx2060-scaled`,
    /// `rtx-a6000`, `h100`,
    /// `qv100`; the files in configs/) or the path of a TOML config.
    #[arg(long, value_name = "NAME|PATH", default_value = DEFAULT_GPU)]
    gpu: String,
    /// The register file design: shorthand for `--set register_file.design=DESIGN`
    /// (`baseline`, `ideal`, and every design in `crates/timing/src/rf/`; an unknown name
    /// is refused with the list).
    #[arg(long, value_name = "DESIGN")]
    rf: Option<String>,
    /// Override one config value, e.g. `--set sm.scheduler=lrr --set
    /// register_file.bank_latency=4`. Repeatable; applied in order, after `--rf`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Write the statistics (per kernel and total) to this JSON file when the program
    /// exits.
    #[arg(long, value_name = "FILE.json")]
    stats: Option<PathBuf>,
    /// Print a readable summary of the statistics to stderr when the program exits.
    #[arg(long)]
    summary: bool,
    /// Cap registers per thread, like `nvcc -maxrregcount N`: kernels run with the spill
    /// code the simulator's register allocator needs under the cap (default: 255, and
    /// the PTX runs as written).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    max_registers: Option<u32>,
    /// Run kernels after LTRF bank-aware register renumbering (LTRF §4), with
    /// architectural registers.
    #[arg(long)]
    ltrf_renumber: bool,
    /// With --ltrf-renumber: registers per register-interval.
    #[arg(long, value_name = "N", default_value_t = 16, requires = "ltrf_renumber",
          value_parser = clap::value_parser!(u32).range(1..))]
    registers_per_interval: u32,
    /// With --ltrf-renumber: banks of the main register file.
    #[arg(long, value_name = "B", default_value_t = 16, requires = "ltrf_renumber",
          value_parser = clap::value_parser!(u32).range(1..))]
    banks: u32,
    /// Profile the executed instructions: register-usage profile (values read 0/1/2/3+
    /// times, lifetimes of read-once values) and dynamic ORF/LRF accesses and energy,
    /// in the statistics (`register_profile`, `orf_lrf`) and the summary.
    #[arg(long)]
    profile_registers: bool,
    /// Stop the run when the simulated clock reaches N cycles (over all kernels; timing
    /// mode). The statistics up to the stop are written, marked `"complete": false`, and
    /// regsim exits with status 124. 0: no limit.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_CYCLES)]
    max_cycles: u64,
    /// Stop the run when N warp instructions have issued (over all kernels; in timing
    /// and in functional mode), like --max-cycles. 0: no limit.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_INSTRUCTIONS)]
    max_instructions: u64,
    /// Stop the run after SECONDS of wall-clock time, in the simulator or in the
    /// program's own code, like --max-cycles (when the program does not end at the
    /// limit, it is killed a few seconds later). 0: no limit.
    #[arg(long, value_name = "SECONDS", default_value_t = 0.0,
          value_parser = parse_seconds)]
    timeout: f64,
    /// Fault on every access outside an allocation, however close (a memory checker).
    /// By default an access within 64 KB of an allocation succeeds, as on a GPU, with a
    /// located warning on stderr and in the statistics (`memory_warnings`).
    #[arg(long)]
    strict_memory: bool,
    /// Threads stepping the SMs (timing mode; default 1). The statistics are identical
    /// for every count. The SMs step windows of about 20 cycles between merges where the
    /// config allows (else cycle by cycle); on cores busy with other work two threads
    /// can be slower (docs/parallel.md); `regsim sweep` runs one simulation per core
    /// and passes 1.
    #[arg(long, value_name = "N",
          value_parser = clap::value_parser!(u16).range(1..=timing::parallel::MAX_THREADS as i64))]
    threads: Option<u16>,
    /// Sampled simulation: shorthand for `--set sampling.enabled=true` (before the
    /// `--set`s). A long launch's CTAs are simulated in detail in one sample per
    /// stratum of its grid and the rest executed functionally and extrapolated; repeated launches are estimated from a
    /// detailed one. Statistics carry the estimate and its 95% bound (`sampling`);
    /// docs/sampling.md.
    #[arg(long, conflicts_with = "functional")]
    sample: bool,
    /// Run the program twice, in full and sampled, and report the sampled estimate's true
    /// error against the full run's cycles, and both host times (stderr, and
    /// `sample_check` in the --stats file, which holds the sampled run's statistics).
    #[arg(long, conflicts_with = "functional")]
    sample_check: bool,
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

/// The config simulated when `--gpu` is not given.
const DEFAULT_GPU: &str = "gtx480";

/// Default `--max-cycles`: 40 times the longest built-in workload, `--large` included
/// (`matvec_rows --large` on gtx480: 245,272,881 cycles), so that only a kernel that does
/// not end reaches it.
pub(crate) const DEFAULT_MAX_CYCLES: u64 = 10_000_000_000;
/// Default `--max-instructions`: 90 times the most of any built-in workload
/// (`atomics_cas --large` on gtx480: 108,415,074 warp instructions).
pub(crate) const DEFAULT_MAX_INSTRUCTIONS: u64 = 10_000_000_000;

pub(crate) use regsim::sweep::runner::LIMIT_EXIT_STATUS;

/// How long a program may take to end after a forwarded signal, or after its time
/// limit, before it is killed.
const GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// `--timeout`: non-negative seconds.
fn parse_seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if s.is_finite() && (0.0..1e12).contains(&s) => Ok(s),
        _ => Err(format!(
            "`{text}` is not a number of seconds (0 for no limit)"
        )),
    }
}

/// How kernels execute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Mode {
    /// Cycle-level timing model driving the emulator.
    #[default]
    Timing,
    /// The emulator alone.
    Functional,
}

impl Mode {
    /// The value of `REGSIM_MODE` the runtime understands.
    fn env_value(self) -> &'static str {
        match self {
            Mode::Timing => "timing",
            Mode::Functional => "functional",
        }
    }
}

/// The GPU config as the runtime will load it: an absolute path and the overrides.
struct GpuChoice {
    path: PathBuf,
    overrides: Vec<String>,
}

/// Loads and validates the config the flags select, so that a bad one stops us before the
/// program starts. The error names the key, or lists the available configs.
fn choose_gpu(args: &RunArgs) -> Result<GpuChoice> {
    let (overrides, parsed) = gpu_overrides(args.rf.as_deref(), &args.set)?;
    let (_, dir) = load_gpu(&args.gpu, args.rf.as_deref(), &parsed)?;
    let is_path = args.gpu.contains('/') || args.gpu.ends_with(".toml");
    let path = if is_path {
        absolute(Path::new(&args.gpu))?
    } else {
        absolute(&dir.join(format!("{}.toml", args.gpu)))?
    };
    Ok(GpuChoice { path, overrides })
}

/// The overrides `--rf` and `--set` stand for, as given and parsed. A value with a line
/// break is refused (the runtime receives them one per line).
pub(crate) fn gpu_overrides(
    rf: Option<&str>,
    sets: &[String],
) -> Result<(Vec<String>, Vec<Override>)> {
    let mut overrides: Vec<String> = rf
        .map(|d| format!("register_file.design={d}"))
        .into_iter()
        .collect();
    overrides.extend(sets.iter().cloned());
    let parsed = overrides
        .iter()
        .map(|o| Override::parse(o).map_err(|e| anyhow!("--set: {e}")))
        .collect::<Result<Vec<_>>>()?;
    Ok((overrides, parsed))
}

/// Loads and validates GPU config `gpu` (a name or a path) with `overrides` (those of
/// [`gpu_overrides`] for `rf` and the `--set`s); also returns the configs directory names
/// are looked up in. The error names the key and the flag or file it came from, or lists
/// the available configs.
pub(crate) fn load_gpu(
    gpu: &str,
    rf: Option<&str>,
    overrides: &[Override],
) -> Result<(GpuConfig, PathBuf)> {
    let dir = find_configs_dir(std::env::current_exe().ok().as_deref());
    let config = GpuConfig::load(gpu, &dir, overrides).map_err(|e| match e {
        ConfigError::UnknownName { .. } => anyhow!("{e}"),
        // The key came from the command line, not from the file.
        ConfigError::OverrideField { text, key, message } => {
            let flag = match rf {
                Some(design) if text == format!("register_file.design={design}") => {
                    format!("--rf {design}")
                }
                _ => format!("--set {text}"),
            };
            anyhow!("invalid GPU configuration: {flag}: {key}: {message}")
        }
        _ => anyhow!("invalid GPU configuration: {e}"),
    })?;
    Ok((config, dir))
}

pub fn run(mut args: RunArgs) -> Result<ExitCode> {
    if args.sample || args.sample_check {
        args.set.insert(0, "sampling.enabled=true".into());
    }
    let gpu = choose_gpu(&args)?;
    // `--stats` replaces the file it names: never the program or the config the run uses
    // (`--stats ./app -- ./app` deleted the program).
    let program = args
        .command
        .first()
        .and_then(|p| find_program(Path::new(p)).ok());
    if let Some(stats) = &args.stats {
        let inputs = [
            ("the program to run", program.as_deref()),
            ("the GPU config", Some(Path::new(&args.gpu))),
        ];
        for (what, input) in inputs {
            if input.is_some_and(|i| crate::source::same_file(stats, i)) {
                bail!(
                    "--stats {}: is {what}; refusing to replace it with statistics",
                    stats.display()
                );
            }
        }
    }
    let stats = match &args.stats {
        Some(path) => Some(prepare_stats_file(path)?),
        None => None,
    };
    if !args.sample_check {
        return Ok(exit_code(run_once(&args, &gpu, stats.as_deref())?));
    }
    let dir = regsim::scratch::private_dir("regsim-sample-check-")
        .context("creating a temporary directory for the full run's statistics")?;
    let full_stats = dir.path().join("full.json");
    let sampled_stats = stats.unwrap_or_else(|| dir.path().join("sampled.json"));
    let full_gpu = GpuChoice {
        path: gpu.path.clone(),
        overrides: gpu
            .overrides
            .iter()
            .cloned()
            .chain(std::iter::once("sampling.enabled=false".to_string()))
            .collect(),
    };
    let mut seconds = [0.0; 2];
    let runs = [
        ("full", &full_gpu, full_stats.as_path()),
        ("sampled", &gpu, sampled_stats.as_path()),
    ];
    for (took, (what, choice, path)) in seconds.iter_mut().zip(runs) {
        let started = std::time::Instant::now();
        let code = run_once(&args, choice, Some(path))?;
        *took = started.elapsed().as_secs_f64();
        if code != 0 {
            eprintln!("regsim: the {what} run exited with status {code}; no comparison");
            return Ok(exit_code(code));
        }
    }
    let [full_seconds, sampled_seconds] = seconds;
    let check = crate::sample_check::compare_files(
        &full_stats,
        &sampled_stats,
        full_seconds,
        sampled_seconds,
    )?;
    eprint!("{}", check.summary());
    crate::sample_check::record(&sampled_stats, &check)?;
    Ok(exit_code(0))
}

/// Our exit status for a program's.
fn exit_code(code: i32) -> ExitCode {
    ExitCode::from(u8::try_from(code & 0xff).unwrap_or(1))
}

/// Runs the program once with the GPU config `gpu`, writing statistics to `stats`
/// (already prepared); returns its exit status (a signal `n` as 128 + n).
fn run_once(args: &RunArgs, gpu: &GpuChoice, stats: Option<&Path>) -> Result<i32> {
    let mode = if args.functional {
        Mode::Functional
    } else {
        Mode::default()
    };
    if args.functional && args.max_cycles != DEFAULT_MAX_CYCLES {
        // Said, not refused: a sweep may pass it to every point.
        eprintln!(
            "regsim: warning: --max-cycles bounds timing mode only (a --functional run has \
             no cycles); it is bounded by --max-instructions and --timeout"
        );
    }
    let (program_arg, program_args) = args
        .command
        .split_first()
        .ok_or_else(|| anyhow!("no program given: regsim run -- PROGRAM ARGS..."))?;
    let program = find_program(Path::new(program_arg))?;
    let needs = check_program(&program)?;
    let library = find_runtime()?;

    // Named after this process, so that the next run removes it if we are killed.
    let lib_dir = regsim::scratch::private_dir("regsim-run-")
        .context("creating a temporary directory for the runtime library")?;
    provide_runtime(lib_dir.path(), &library, needs)?;
    let mut search_path = OsString::from(lib_dir.path());
    if let Some(old) = std::env::var_os("LD_LIBRARY_PATH").filter(|p| !p.is_empty()) {
        search_path.push(":");
        search_path.push(old);
    }

    let mut cmd = Command::new(&program);
    cmd.args(program_args)
        .env("LD_LIBRARY_PATH", search_path)
        .env("REGSIM_MODE", mode.env_value())
        .env("REGSIM_GPU", &gpu.path)
        .env("REGSIM_SET", gpu.overrides.join("\n"))
        .env("REGSIM_SUMMARY", if args.summary { "1" } else { "0" });
    match stats {
        Some(p) => cmd.env("REGSIM_STATS", p),
        None => cmd.env_remove("REGSIM_STATS"),
    };
    match args.max_registers {
        Some(n) => cmd.env("REGSIM_MAX_REGISTERS", n.to_string()),
        None => cmd.env_remove("REGSIM_MAX_REGISTERS"),
    };
    if args.ltrf_renumber {
        let value = format!("{},{}", args.registers_per_interval, args.banks);
        cmd.env("REGSIM_LTRF_RENUMBER", value);
    } else {
        cmd.env_remove("REGSIM_LTRF_RENUMBER");
    }
    cmd.env(
        "REGSIM_PROFILE_REGISTERS",
        if args.profile_registers { "1" } else { "0" },
    );
    cmd.env(
        "REGSIM_STRICT_MEMORY",
        if args.strict_memory { "1" } else { "0" },
    );
    cmd.env("REGSIM_MAX_CYCLES", args.max_cycles.to_string())
        .env("REGSIM_MAX_INSTRUCTIONS", args.max_instructions.to_string())
        .env("REGSIM_TIMEOUT", args.timeout.to_string());
    // The progress line is for a person watching a terminal, never for a log file.
    let progress = mode == Mode::Timing && std::io::stderr().is_terminal();
    cmd.env("REGSIM_PROGRESS", if progress { "1" } else { "0" });
    match args.threads {
        Some(n) => cmd.env("REGSIM_THREADS", n.to_string()),
        None => cmd.env_remove("REGSIM_THREADS"),
    };
    // If we are killed (a sweep's timeout, SIGKILL), the program must not run on alone.
    regsim::sweep::runner::die_with_parent(&mut cmd);
    let mut child = cmd
        .spawn()
        .with_context(|| format!("starting {}", program.display()))?;
    let timeout = (args.timeout > 0.0).then(|| std::time::Duration::from_secs_f64(args.timeout));
    let waited = {
        // Installed after the spawn so that the program does not inherit them.
        let signals = ForwardSignals::new();
        wait_for(&mut child, &signals, timeout)?
    };
    drop(lib_dir);
    let status = waited.status;

    let mut code = match (status.code(), status.signal()) {
        (Some(code), _) => code,
        (None, Some(signal)) => 128 + signal,
        (None, None) => 1,
    };
    if waited.killed_at_timeout {
        eprintln!(
            "regsim: the program did not stop at its time limit ({} s) and was killed",
            args.timeout
        );
        code = i32::from(LIMIT_EXIT_STATUS);
    }
    if let Some(path) = stats {
        if path.exists() {
            let complete = record_program(path, &program, program_args, status)?;
            if !complete {
                eprintln!(
                    "regsim: the statistics up to the stop are in {} (\"complete\": false)",
                    path.display()
                );
            }
        } else {
            // The runtime said why if it could not write them; a run that wrote nothing
            // must not pass for a successful one.
            eprintln!(
                "regsim: no statistics were written to {} (a program that does not load \
                 regsim's CUDA runtime, or is killed, writes none)",
                path.display()
            );
            if code == 0 {
                code = 2;
            }
        }
    }
    Ok(code)
}

/// The statistics file as an absolute path, checked writable before the program runs (a
/// long simulation must not be lost to a typo), with any stale file removed so that it
/// cannot pass for this run's statistics.
fn prepare_stats_file(path: &Path) -> Result<PathBuf> {
    let path = absolute(path)?;
    let dir = path.parent().unwrap_or(Path::new("/"));
    if !dir.is_dir() {
        bail!(
            "--stats {}: {} {}",
            path.display(),
            dir.display(),
            if dir.exists() {
                "is not a directory"
            } else {
                "does not exist"
            }
        );
    }
    // What is there is replaced: only ever a file. A device, a pipe or a directory
    // (`/dev/null`, `/dev/stdout`, a link to one) is refused, never removed: as root,
    // replacing `/dev/null` with a file would break the machine.
    if let Ok(m) = std::fs::metadata(&path) {
        if !m.is_file() {
            let what = if m.is_dir() {
                "a directory"
            } else {
                "a device, a pipe or a socket"
            };
            bail!(
                "--stats {}: is {what}, not a file (statistics are written to a file \
                 of their own)",
                path.display()
            );
        }
    }
    match std::fs::remove_file(&path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => bail!("--stats {}: cannot replace it: {e}", path.display()),
    }
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(|e| anyhow!("--stats {}: cannot write it: {e}", path.display()))?;
    std::fs::remove_file(&path)
        .map_err(|e| anyhow!("--stats {}: cannot replace it: {e}", path.display()))?;
    Ok(path)
}

/// How the program ended.
struct Waited {
    status: std::process::ExitStatus,
    /// It outlived its time limit by [`GRACE`] and was killed.
    killed_at_timeout: bool,
}

/// Waits for the program. A SIGINT, SIGTERM or SIGHUP we receive is forwarded to it (its
/// runtime writes the statistics so far and dies of the signal); past its time limit it
/// gets SIGTERM; a program that outlives either by [`GRACE`] is killed. We report its
/// status rather than dying first, so the temporary directory is always removed.
fn wait_for(
    child: &mut std::process::Child,
    signals: &ForwardSignals,
    timeout: Option<std::time::Duration>,
) -> Result<Waited> {
    let started = std::time::Instant::now();
    let pid = i32::try_from(child.id()).context("the program's process id")?;
    // When the program must have ended: after a forwarded signal or the time limit.
    let mut kill_at: Option<std::time::Instant> = None;
    let mut killed_at_timeout = false;
    let mut forwarded = 0;
    loop {
        if let Some(status) = child.try_wait().context("waiting for the program")? {
            return Ok(Waited {
                status,
                killed_at_timeout,
            });
        }
        let now = std::time::Instant::now();
        let sig = signals.caught();
        if sig != 0 && sig != forwarded {
            forwarded = sig;
            // SAFETY: sending a signal to our own child process.
            unsafe { kill(pid, sig) };
            kill_at.get_or_insert(now + GRACE);
        }
        if let Some(limit) = timeout {
            // The runtime stops the program at its limit itself; this is the backstop.
            if kill_at.is_none() && now >= started + limit + GRACE {
                // SAFETY: as above.
                unsafe { kill(pid, SIGTERM) };
                kill_at = Some(now + GRACE);
                killed_at_timeout = true;
            }
        }
        if kill_at.is_some_and(|at| now >= at) {
            if !killed_at_timeout {
                eprintln!(
                    "regsim: the program did not end within {} s of the {} passed on to it \
                     and was killed",
                    GRACE.as_secs(),
                    cudart::run_control::signal_name(forwarded)
                );
            }
            let _ = child.kill();
            let status = child.wait().context("waiting for the program")?;
            return Ok(Waited {
                status,
                killed_at_timeout,
            });
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Adds `"program": {"name", "args", "exit_code" | "signal"}` to the statistics the
/// runtime wrote; returns whether they describe a complete run.
fn record_program(
    stats: &Path,
    program: &Path,
    args: &[OsString],
    status: std::process::ExitStatus,
) -> Result<bool> {
    let text =
        std::fs::read_to_string(stats).with_context(|| format!("reading {}", stats.display()))?;
    let mut json: serde_json::Value = serde_json::from_str(&text)
        .with_context(|| format!("{} is not the runtime's JSON", stats.display()))?;
    let Some(obj) = json.as_object_mut() else {
        bail!("{} is not a JSON object", stats.display());
    };
    let mut info = serde_json::Map::new();
    let name = program.file_name().map_or_else(
        || program.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    info.insert("name".into(), name.into());
    info.insert(
        "args".into(),
        args.iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .into(),
    );
    match (status.code(), status.signal()) {
        (Some(code), _) => info.insert("exit_code".into(), code.into()),
        (None, Some(signal)) => info.insert("signal".into(), signal.into()),
        (None, None) => None,
    };
    obj.insert("program".into(), info.into());
    let complete = obj.get("complete") != Some(&serde_json::Value::Bool(false));
    let text = serde_json::to_string_pretty(&json)?;
    std::fs::write(stats, text + "\n").with_context(|| format!("writing {}", stats.display()))?;
    Ok(complete)
}

/// `path` made absolute and normalized (no `.` or `..`) through the file system where it
/// exists: the path itself, or its directory for a file yet to be written.
fn absolute(path: &Path) -> Result<PathBuf> {
    if let Ok(canonical) = path.canonicalize() {
        return Ok(canonical);
    }
    if let (Some(dir), Some(name)) = (path.parent(), path.file_name()) {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        if let Ok(dir) = dir.canonicalize() {
            return Ok(dir.join(name));
        }
    }
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
        if name.is_dir() {
            bail!("{} is a directory, not a program", name.display());
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

/// Which runtime a program loads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RuntimeNeeds {
    /// `libcudart.so.11.0`, or only the driver API's `libcuda.so.1`.
    Cuda11,
    /// `libcudart.so.12`.
    Cuda12,
    /// A script: the programs it starts may load either.
    Any,
}

/// Refuses programs that would never load our runtime, with the reason and the fix; says
/// which soname the others load.
fn check_program(program: &Path) -> Result<RuntimeNeeds> {
    let bytes = std::fs::read(program).with_context(|| format!("reading {}", program.display()))?;
    if bytes.starts_with(b"#!") {
        // A script: the programs it starts inherit LD_LIBRARY_PATH.
        return Ok(RuntimeNeeds::Any);
    }
    let summary = match elf::summarize(&bytes) {
        Ok(s) => s,
        Err(ElfError::NotElf) => bail!(
            "{} is not an executable program (neither ELF nor a script)",
            program.display()
        ),
        Err(e) => bail!("{}: {e}", program.display()),
    };
    let needs = |name: &str| summary.needed.iter().any(|n| n == name);
    match (needs(CUDART_11), needs(CUDART_12)) {
        (true, true) => bail!(
            "{} needs both {CUDART_11} and {CUDART_12}; one process can use only one CUDA runtime",
            program.display()
        ),
        (true, false) => return Ok(RuntimeNeeds::Cuda11),
        (false, true) => return Ok(RuntimeNeeds::Cuda12),
        (false, false) => {}
    }
    if let Some(other) = summary
        .needed
        .iter()
        .find(|n| n.starts_with("libcudart.so"))
    {
        bail!(
            "{} needs {other}, but regsim provides the CUDA 11 and 12 runtimes ({CUDART_11}, \
             {CUDART_12}); rebuild it with CUDA 11.x or 12.x and a shared runtime (nvcc \
             -cudart shared, or clang with -lcudart)",
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
    // The driver API, linked or opened at run time (`dlopen("libcuda.so.1")`).
    if needs(LIBCUDA) || contains(&bytes, LIBCUDA.as_bytes()) {
        return Ok(RuntimeNeeds::Cuda11);
    }
    bail!(
        "{} is not a CUDA program: it neither loads {CUDART_11}, {CUDART_12} or {LIBCUDA} nor \
         contains device code (CUDA programs must be built with `nvcc -cudart shared`)",
        program.display()
    )
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Links the sonames the program may load into `dir`: the runtime it needs and
/// `libcuda.so.1`, both on the same file so that the runtime and driver APIs share one
/// device (the dynamic loader loads a file once, whatever name it is found under).
fn provide_runtime(dir: &Path, library: &Path, needs: RuntimeNeeds) -> Result<()> {
    let link = |target: &Path, name: &str| {
        std::os::unix::fs::symlink(target, dir.join(name))
            .with_context(|| format!("linking the runtime library as {name}"))
    };
    match needs {
        RuntimeNeeds::Cuda11 => {
            link(library, CUDART_11)?;
            link(library, LIBCUDA)
        }
        RuntimeNeeds::Cuda12 => {
            let retagged = retagged_runtime(library, dir)?;
            link(&retagged, CUDART_12)?;
            link(&retagged, LIBCUDA)
        }
        RuntimeNeeds::Any => {
            link(library, CUDART_11)?;
            link(library, LIBCUDA)?;
            let retagged = retagged_runtime(library, dir)?;
            link(&retagged, CUDART_12)
        }
    }
}

/// The runtime retagged as `libcudart.so.12`: cached in `regsim-cuda12/` beside the
/// library while it is newer than the library, else (where we may not write beside the
/// library) written under `scratch`.
fn retagged_runtime(library: &Path, scratch: &Path) -> Result<PathBuf> {
    let modified = |p: &Path| p.metadata().and_then(|m| m.modified()).ok();
    let cache_dir = library
        .parent()
        .map(|d| d.join("regsim-cuda12"))
        .unwrap_or_else(|| scratch.join("cuda12"));
    let cached = cache_dir.join(CUDART_12);
    if let (Some(lib_time), Some(cache_time)) = (modified(library), modified(&cached)) {
        if cache_time >= lib_time {
            return Ok(cached);
        }
    }
    let bytes = std::fs::read(library)
        .with_context(|| format!("reading the runtime library {}", library.display()))?;
    let retagged = elf::retag_cudart(&bytes)
        .map_err(|e| anyhow!("cannot make {CUDART_12} from {}: {e}", library.display()))?;
    // Written under a unique name and renamed: concurrent runs never see half a file.
    let write_into = |dir: &Path| -> std::io::Result<PathBuf> {
        std::fs::create_dir_all(dir)?;
        let mut tmp = tempfile::Builder::new()
            .prefix(".libcudart-")
            .tempfile_in(dir)?;
        std::io::Write::write_all(&mut tmp, &retagged)?;
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o755))?;
        let target = dir.join(CUDART_12);
        tmp.persist(&target).map_err(|e| e.error)?;
        Ok(target)
    };
    match write_into(&cache_dir) {
        Ok(path) => Ok(path),
        Err(_) => write_into(&scratch.join("cuda12"))
            .with_context(|| format!("writing {CUDART_12} into {}", scratch.display())),
    }
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

/// While alive: SIGINT, SIGTERM and SIGHUP are caught (for [`wait_for`] to forward),
/// unless they were ignored when regsim started (then they stay ignored, as for the
/// program, which inherits that), and SIGQUIT is ignored; the previous dispositions come
/// back on drop. Like system(3), a Ctrl-C at the terminal reaches the program itself
/// (same process group), and we report its status instead of dying first.
struct ForwardSignals {
    previous: [(i32, usize); 4],
}

const SIGHUP: i32 = 1;
const SIGINT: i32 = 2;
const SIGQUIT: i32 = 3;
const SIGTERM: i32 = 15;
const SIG_IGN: usize = 1;
const SIG_ERR: usize = usize::MAX;

/// The last signal caught (0: none).
static CAUGHT: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

extern "C" fn catch_signal(sig: i32) {
    // Async-signal-safe: one atomic store.
    CAUGHT.store(sig, std::sync::atomic::Ordering::SeqCst);
}

extern "C" {
    /// `signal(2)` from the C library; handlers are passed as addresses.
    fn signal(signum: i32, handler: usize) -> usize;
    /// `kill(2)`.
    fn kill(pid: i32, sig: i32) -> i32;
}

impl ForwardSignals {
    fn new() -> Self {
        CAUGHT.store(0, std::sync::atomic::Ordering::SeqCst);
        let catch = catch_signal as extern "C" fn(i32) as usize;
        let mut previous = [
            (SIGINT, catch),
            (SIGTERM, catch),
            (SIGHUP, catch),
            (SIGQUIT, SIG_IGN),
        ];
        for (sig, handler) in &mut previous {
            // SAFETY: the handler stores to an atomic only; SIG_IGN touches no Rust state.
            *handler = unsafe { signal(*sig, *handler) };
            if *handler == SIG_IGN {
                // Ignored by whoever started us (`nohup`, a script's background job): the
                // program inherited that too and would not end if we passed the signal
                // on (it was killed after GRACE, status 137); we ignore it as well.
                // SAFETY: as above.
                unsafe { signal(*sig, SIG_IGN) };
            }
        }
        ForwardSignals { previous }
    }

    /// The last signal caught, or 0.
    fn caught(&self) -> i32 {
        CAUGHT.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl Drop for ForwardSignals {
    fn drop(&mut self) {
        for &(sig, old) in &self.previous {
            if old != SIG_ERR {
                // SAFETY: restores the handler `signal` returned, unchanged.
                unsafe { signal(sig, old) };
            }
        }
    }
}

//! `regsim calibrate --gpu NAME|PATH [--rf DESIGN] [--set KEY=VALUE]... [--json]`: runs
//! the built-in calibration microbenchmarks (`calibrate/microbench.cu`, committed as
//! `calibrate/bin/microbench` and its PTX) on the simulated GPU through `regsim run`, and
//! prints each measured latency beside the published hardware figure for that GPU
//! (`calibrate/published.toml`, keyed by the config's name), with its source and the
//! error. The microbenchmarks time dependent chains with `clock64` in one thread, the
//! style of the published dissection studies, so the simulated and the published numbers
//! are measured the same way (docs/calibration.md).

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use serde::Deserialize;
use std::collections::BTreeMap;

/// The published figures, compiled in (the file is data; `regsim calibrate` needs no
/// source tree to print them).
const PUBLISHED: &str = include_str!("../../../calibrate/published.toml");

/// Environment variable naming the microbenchmark program to run instead of the
/// repository's `calibrate/bin/microbench`.
const PROGRAM_ENV: &str = "REGSIM_CALIBRATE_PROGRAM";

/// The microbenchmarks in the order the program prints them, with what each measures.
const TESTS: &[(&str, &str)] = &[
    ("chase_l1", "L1D hit, load to use"),
    ("chase_l2", "L2 hit, load to use"),
    ("chase_dram", "DRAM (L1D and L2 miss), load to use"),
    ("chase_shared", "shared memory, load to use"),
    ("fp32_dep", "dependent fma.f32, issue to issue"),
    ("int_dep", "dependent mad.lo.s32, issue to issue"),
    ("fp64_dep", "dependent fma.f64, issue to issue"),
    ("sfu_dep", "dependent rsqrt.approx.f32, issue to issue"),
    ("fp32_indep", "independent fma.f32, cycles per instruction"),
    ("ldg32", "ld.global 32-bit L1 hit, issue to WAW issue"),
    ("ldg64", "ld.global 64-bit L1 hit, issue to WAW issue"),
    ("ldg128", "ld.global 128-bit L1 hit, issue to WAW issue"),
    ("lds32", "ld.shared 32-bit, issue to WAW issue"),
    ("lds64", "ld.shared 64-bit, issue to WAW issue"),
    ("lds128", "ld.shared 128-bit, issue to WAW issue"),
    ("ldc32", "ld.const 32-bit, register address"),
    ("ldc32_imm", "ld.const 32-bit, immediate address"),
    ("ldgsts32", "cp.async 4 B + wait, issue to next issue"),
    ("ldgsts64", "cp.async 8 B + wait, issue to next issue"),
    ("ldgsts128", "cp.async 16 B + wait, issue to next issue"),
    (
        "ffma_pair_odd_odd",
        "Listing 1 FFMA pair, X and Y odd, in cycles",
    ),
    ("ffma_pair_even_odd", "Listing 1 FFMA pair, X even, Y odd"),
    ("ffma_pair_even_even", "Listing 1 FFMA pair, X and Y even"),
    ("ffma_bank3", "FFMAs, 3 sources in one bank, cycles each"),
    ("mma_dep", "dependent mma.sync m16n8k16 f16->f32"),
    ("wmma_dep", "dependent wmma.mma m16n16k16 f16->f32"),
    (
        "atom_global_dep",
        "dependent atom.global.add.u32, one address",
    ),
    (
        "atom_shared_dep",
        "dependent atom.shared.add.u32, one address",
    ),
    ("launch", "empty kernel, launch to end (cycles)"),
];

#[derive(Args)]
pub struct CalibrateArgs {
    /// The simulated GPU: a config name (`qv100`, `rtx-a6000`, `h100`, ...) or the path
    /// of a TOML config (published figures are looked up by the file's stem).
    #[arg(long, value_name = "NAME|PATH")]
    gpu: String,
    /// The register file design (as for `regsim run`).
    #[arg(long, value_name = "DESIGN")]
    rf: Option<String>,
    /// Override one config value (as for `regsim run`); repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Published {
    cycles: f64,
    source: String,
}

/// One line of the result.
#[derive(Clone, Debug, PartialEq)]
struct Row {
    test: &'static str,
    what: &'static str,
    measured: Option<f64>,
    published: Option<(f64, String)>,
}

impl Row {
    /// (measured - published) / published.
    fn error(&self) -> Option<f64> {
        let m = self.measured?;
        let (p, _) = self.published.as_ref()?;
        Some((m - p) / p)
    }
}

fn published_for(gpu: &str) -> Result<BTreeMap<String, Published>> {
    let all: BTreeMap<String, BTreeMap<String, Published>> =
        toml::from_str(PUBLISHED).context("calibrate/published.toml")?;
    for (name, tests) in &all {
        if let Some(t) = tests.keys().find(|t| !TESTS.iter().any(|(n, _)| n == t)) {
            bail!("calibrate/published.toml: [{name}.{t}] names no microbenchmark");
        }
    }
    Ok(all.get(gpu).cloned().unwrap_or_default())
}

/// `calibrate/bin/microbench` of the repository the executable was built in, else of
/// this source tree; `$REGSIM_CALIBRATE_PROGRAM` first.
fn find_program() -> PathBuf {
    if let Some(p) = std::env::var_os(PROGRAM_ENV).filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    std::env::current_exe()
        .ok()
        .and_then(|exe| {
            Some(
                exe.parent()?
                    .parent()?
                    .parent()?
                    .join("calibrate/bin/microbench"),
            )
        })
        .filter(|p| p.is_file())
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../calibrate/bin/microbench")
        })
}

/// The config's name for the published table: a name as given, a path's file stem.
fn gpu_name(gpu: &str) -> String {
    let p = Path::new(gpu);
    if gpu.ends_with(".toml") || p.components().count() > 1 {
        p.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| gpu.to_string())
    } else {
        gpu.to_string()
    }
}

/// Parses the program's `NAME CYCLES STEPS` lines; the last line must be `PASS`.
fn parse_output(stdout: &str) -> Result<BTreeMap<String, f64>> {
    let mut out = BTreeMap::new();
    let mut verdict = None;
    for line in stdout.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        match fields.as_slice() {
            [name, cycles, _steps] => {
                let v: f64 = cycles
                    .parse()
                    .map_err(|_| anyhow!("microbenchmark output {line:?}: not a number"))?;
                out.insert((*name).to_string(), v);
            }
            _ => verdict = Some(line.trim().to_string()),
        }
    }
    match verdict.as_deref() {
        Some("PASS") => Ok(out),
        Some(v) => bail!("the microbenchmarks failed: {v}"),
        None => bail!("the microbenchmarks printed no verdict"),
    }
}

/// Cycles of the kernel named `empty()` in a `regsim run` statistics file.
fn launch_cycles(stats: &serde_json::Value) -> Option<f64> {
    stats["kernels"]
        .as_array()?
        .iter()
        .find(|k| k["name"].as_str() == Some("empty()"))?["cycles"]
        .as_f64()
}

fn rows(measured: &BTreeMap<String, f64>, published: &BTreeMap<String, Published>) -> Vec<Row> {
    TESTS
        .iter()
        .map(|&(test, what)| Row {
            test,
            what,
            measured: measured.get(test).copied(),
            published: published.get(test).map(|p| (p.cycles, p.source.clone())),
        })
        .collect()
}

fn table(gpu: &str, rows: &[Row]) -> String {
    let mut s = format!("calibration microbenchmarks on {gpu} (cycles)\n");
    s += &format!(
        "{:<19} {:<44} {:>9} {:>9} {:>8}  source\n",
        "test", "what", "measured", "published", "error"
    );
    let num = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.2}"));
    for r in rows {
        s += &format!(
            "{:<19} {:<44} {:>9} {:>9} {:>8}  {}\n",
            r.test,
            r.what,
            num(r.measured),
            num(r.published.as_ref().map(|p| p.0)),
            r.error()
                .map_or("-".to_string(), |e| format!("{:+.1}%", 100.0 * e)),
            r.published.as_ref().map_or("no published figure", |p| &p.1),
        );
    }
    s
}

fn json(gpu: &str, rows: &[Row]) -> serde_json::Value {
    serde_json::json!({
        "gpu": gpu,
        "results": rows.iter().map(|r| serde_json::json!({
            "test": r.test,
            "what": r.what,
            "measured": r.measured,
            "published": r.published.as_ref().map(|p| p.0),
            "source": r.published.as_ref().map(|p| p.1.clone()),
            "error": r.error(),
        })).collect::<Vec<_>>(),
    })
}

/// The override that runs a program in the order it is written.
const WRITTEN_ORDER: &str = "register_file.reuse_cache.schedule=\"program\"";

/// `sets`, plus [`WRITTEN_ORDER`] where the config's design would reorder the program (the
/// reuse cache's reuse schedule) and no `--set` names the schedule. The microbenchmarks
/// stand for the hand-written SASS the published figures were timed on (MICRO'25 writes
/// its own SASS), so they run as written, like every design without a schedule. The
/// config is loaded here, so a bad `--gpu`, `--rf` or `--set` is reported before the run.
fn with_written_order(gpu: &str, rf: Option<&str>, sets: &[String]) -> Result<Vec<String>> {
    let (_, overrides) = crate::cmd_run::gpu_overrides(rf, sets)?;
    let (config, _) = crate::cmd_run::load_gpu(gpu, rf, &overrides)?;
    let mut out = sets.to_vec();
    if config.reads_reuse_schedule() && config.register_file.reuse_cache.schedule.is_none() {
        out.push(WRITTEN_ORDER.to_string());
    }
    Ok(out)
}

pub fn run(args: CalibrateArgs) -> Result<ExitCode> {
    let name = gpu_name(&args.gpu);
    let published = published_for(&name)?;
    let program = find_program();
    if !program.is_file() {
        bail!(
            "the calibration program {} does not exist (scripts/build-calibrate.sh builds it)",
            program.display()
        );
    }
    let exe = std::env::current_exe().context("finding the regsim executable")?;
    let dir = tempfile::tempdir().context("creating a temporary directory")?;
    let stats_path = dir.path().join("stats.json");
    let sets = with_written_order(&args.gpu, args.rf.as_deref(), &args.set)?;
    let mut cmd = Command::new(exe);
    cmd.arg("run").arg("--gpu").arg(&args.gpu);
    if let Some(rf) = &args.rf {
        cmd.arg("--rf").arg(rf);
    }
    for s in &sets {
        cmd.arg("--set").arg(s);
    }
    cmd.arg("--stats").arg(&stats_path).arg("--").arg(&program);
    let out = cmd.output().context("running the microbenchmarks")?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let last = stderr
            .lines()
            .filter(|l| !l.starts_with("regsim: kernel "))
            .collect::<Vec<_>>()
            .join("\n");
        bail!(
            "regsim run of the microbenchmarks failed ({}): {last}",
            out.status
        );
    }
    let mut measured = parse_output(&stdout)?;
    let stats: serde_json::Value = serde_json::from_slice(
        &std::fs::read(&stats_path).context("reading the microbenchmarks' statistics")?,
    )
    .context("parsing the microbenchmarks' statistics")?;
    if let Some(c) = launch_cycles(&stats) {
        measured.insert("launch".to_string(), c);
    }
    let rows = rows(&measured, &published);
    if args.json {
        crate::source::print_stdout(&serde_json::to_string_pretty(&json(&name, &rows))?)?;
    } else {
        crate::source::write_stdout(&table(&name, &rows))?;
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_published_table_parses_and_names_only_known_tests() {
        let q = published_for("qv100").unwrap();
        assert_eq!(q["fp32_dep"].cycles, 4.0);
        assert!(q["chase_l1"].source.contains("Jia"));
        assert!(published_for("no-such-gpu").unwrap().is_empty());
    }

    #[test]
    fn the_microbenchmarks_run_as_written_where_the_design_would_reorder_them() {
        let written = vec![WRITTEN_ORDER.to_string()];
        // The reuse cache (rtx-a6000's default) would run its reuse schedule.
        assert_eq!(with_written_order("rtx-a6000", None, &[]).unwrap(), written);
        // A design without a schedule gets no key (it would refuse it).
        assert!(with_written_order("gtx480", None, &[]).unwrap().is_empty());
        assert!(with_written_order("rtx-a6000", Some("ideal"), &[])
            .unwrap()
            .is_empty());
        // A schedule asked for on the command line is kept.
        let asked = vec!["register_file.reuse_cache.schedule=\"reuse\"".to_string()];
        assert_eq!(
            with_written_order("h100", None, &asked).unwrap(),
            asked.clone()
        );
        // A key the design refuses is an error naming it, before anything runs.
        let e = with_written_order("gtx480", None, &asked).unwrap_err();
        assert!(
            e.to_string().contains("register_file.reuse_cache.schedule"),
            "{e}"
        );
    }

    #[test]
    fn output_lines_parse_and_a_failure_is_an_error() {
        let m = parse_output("chase_l1 28.06 32\nfp32_dep 4.14 1024\nPASS\n").unwrap();
        assert_eq!(m["chase_l1"], 28.06);
        assert_eq!(m.len(), 2);
        let e = parse_output("chase_l1 28.06 32\nFAIL: a chase ended at the wrong element\n")
            .unwrap_err();
        assert!(e.to_string().contains("wrong element"), "{e}");
        assert!(parse_output("chase_l1 x 32\nPASS\n").is_err());
        assert!(parse_output("chase_l1 1 32\n").is_err());
    }

    #[test]
    fn errors_are_relative_to_the_published_figure() {
        let mut m = BTreeMap::new();
        m.insert("fp32_dep".to_string(), 5.0);
        let r = rows(&m, &published_for("qv100").unwrap());
        let fp32 = r.iter().find(|r| r.test == "fp32_dep").unwrap();
        assert_eq!(fp32.error(), Some(0.25));
        let sfu = r.iter().find(|r| r.test == "sfu_dep").unwrap();
        assert_eq!(sfu.error(), None);
        let t = table("qv100", &r);
        assert!(t.contains("+25.0%"), "{t}");
        assert!(t.contains("no published figure"), "{t}");
    }

    /// The FFMA microbenchmarks claim their sources' banks (a register's parity): check
    /// them on the committed PTX under regsim's allocator, so that a change of allocation
    /// cannot silently change what the rows measure.
    #[test]
    fn the_ffma_microbenchmarks_sources_have_the_parities_they_claim() {
        use compiler::{AllocConfig, Location};
        let text = include_str!("../../../calibrate/ptx/microbench.ptx");
        let module = ptx::parse("microbench.ptx", text).unwrap();
        let program = ir::lower(&module, "microbench.ptx", text).unwrap();
        for kernel in [
            "_Z17ffma_pair_odd_oddfPxPf",
            "_Z18ffma_pair_even_oddfPxPf",
            "_Z19ffma_pair_even_evenfPxPf",
            "_Z10ffma_bank3fPxPf",
        ] {
            let f = program.function(program.func_by_name(kernel).unwrap());
            let input = compiler::regalloc::IrInput::new(f);
            let a = compiler::allocate(&input, &AllocConfig::default()).unwrap();
            let odd = ["e0", "e2", "e4", "e6", "e8", "e10"];
            for (i, name) in [
                "e0", "e1", "e2", "e3", "e4", "e5", "e6", "e7", "e8", "e9", "e10", "e11",
            ]
            .iter()
            .enumerate()
            {
                let v = f.regs.iter().position(|r| r.name == *name).unwrap();
                let Location::Reg(r) = a.locations[v] else {
                    panic!(
                        "{kernel}: {name} is not in a register: {:?}",
                        a.locations[v]
                    );
                };
                assert_eq!(
                    r.0 % 2 == 1,
                    odd.contains(name),
                    "{kernel}: {name} in R{} (#{i})",
                    r.0
                );
            }
        }
    }

    #[test]
    fn a_config_path_is_named_by_its_stem() {
        assert_eq!(gpu_name("qv100"), "qv100");
        assert_eq!(gpu_name("configs/rtx-a6000.toml"), "rtx-a6000");
        assert_eq!(gpu_name("my.toml"), "my");
    }
}

//! `regsim run --threads N`: the statistics and the program's output are byte-identical
//! for every thread count (`timing::parallel`), under every register-file design.
//!
//! The fast tests cover two workloads (atomics, barriers and shared memory) under every
//! design with 1, 2, 4 and 8 threads on gtx480, and three (with global loads and stores
//! across SMs) on qv100, h100 and rtx-a6000 with their own designs on 1, 2 and 4. The long one covers every built-in workload under every
//! design with 1, 2, 4 and 8 threads; it is ignored by default:
//! `cargo nextest run --release -p regsim --test parallel_threads --run-ignored all`.

mod common;

use common::{regsim, repo_root, without_wall_clock, workloads, DESIGNS};
use std::process::Command;

/// The program's stdout and its statistics without the wall-clock figures, for `threads`
/// on gtx480.
fn run(program: &std::path::Path, design: &str, threads: u32) -> (String, String) {
    run_on(program, "gtx480", Some(design), threads)
}

/// Like [`run`], on config `gpu` under `design` (`None`: the config's own).
fn run_on(
    program: &std::path::Path,
    gpu: &str,
    design: Option<&str>,
    threads: u32,
) -> (String, String) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let stats = dir.path().join("stats.json");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_regsim"));
    cmd.args(["run", "--gpu", gpu]);
    if let Some(design) = design {
        cmd.args(["--rf", design]);
    }
    let design = design.unwrap_or("its own design");
    let out = cmd
        .arg("--threads")
        .arg(threads.to_string())
        .arg("--stats")
        .arg(&stats)
        .arg("--")
        .arg(program)
        .current_dir(repo_root())
        .env_remove("REGSIM_CUDART")
        .env_remove("REGSIM_CONFIGS")
        .output()
        .expect("the regsim binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() && stdout.trim_end().ends_with("PASS"),
        "{} on {gpu} under {design} on {threads} threads: {stdout}\n{}",
        program.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&stats).expect("statistics written");
    (stdout, without_wall_clock(&text))
}

/// The runs of `programs` under every design whose output or statistics differ between
/// one thread and each of `threads`.
fn differences(programs: &[std::path::PathBuf], threads: &[u32]) -> Vec<String> {
    let mut differ = vec![];
    for program in programs {
        for design in DESIGNS {
            let one = run(program, design, 1);
            for &n in threads {
                if run(program, design, n) != one {
                    differ.push(format!("{} {design} --threads {n}", program.display()));
                }
            }
        }
    }
    differ
}

#[test]
fn the_designs_listed_are_every_design() {
    let out = regsim(&["run", "--rf", "no-such-design", "--", "true"]);
    let text = String::from_utf8_lossy(&out.stderr);
    let listed = text
        .split("expected one of ")
        .nth(1)
        .unwrap_or_else(|| panic!("no list of designs in: {text}"));
    let mut accepted: Vec<&str> = listed
        .lines()
        .next()
        .unwrap_or("")
        .split(", ")
        .map(|d| d.trim().trim_matches('`'))
        .collect();
    accepted.sort_unstable();
    let mut ours = DESIGNS.to_vec();
    ours.sort_unstable();
    assert_eq!(accepted, ours);
}

#[test]
fn statistics_are_identical_for_every_thread_count() {
    let programs: Vec<_> = ["histogram", "reduction"]
        .iter()
        .map(|w| repo_root().join("workloads/bin").join(w))
        .collect();
    let differ = differences(&programs, &[2, 4, 8]);
    assert!(differ.is_empty(), "threads changed the results: {differ:?}");
}

#[test]
fn statistics_are_identical_for_every_thread_count_on_the_modern_configs() {
    let mut differ = vec![];
    for gpu in ["qv100", "h100", "rtx-a6000"] {
        for w in ["histogram", "matvec_rows", "spmv_csr"] {
            let program = repo_root().join("workloads/bin").join(w);
            let one = run_on(&program, gpu, None, 1);
            for n in [2, 4] {
                if run_on(&program, gpu, None, n) != one {
                    differ.push(format!("{w} on {gpu} --threads {n}"));
                }
            }
        }
    }
    assert!(differ.is_empty(), "threads changed the results: {differ:?}");
}

#[test]
#[ignore = "long: every workload under every design on 1, 2, 4 and 8 threads"]
fn every_workload_is_identical_for_every_thread_count() {
    let differ = differences(&workloads(), &[2, 4, 8]);
    assert!(differ.is_empty(), "threads changed the results: {differ:?}");
}

#[test]
fn a_thread_count_of_zero_is_refused() {
    let out = regsim(&["run", "--threads", "0", "--", "true"]);
    assert!(!out.status.success());
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("--threads"), "{text}");
}

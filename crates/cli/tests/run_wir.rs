//! `regsim run --rf wir` on every built-in workload, for every variant of the paper
//! (Kim and Ro HPCA'18 §VII-A): the program prints PASS with the same output as without
//! reuse, no reuse hit ever had another value than the emulator computed, and the pool
//! of physical registers is empty when the program ends.
//!
//! Cost (release, one core): about 40 s for the default variant on every workload (15 s of
//! it `atomics_cas`, whose contended CAS loop is slow in timing mode), a few seconds for
//! each other variant on five workloads chosen for calls, divergence, barriers, shared
//! and global loads (the timing crate's `wir_known_answers` runs every workload kernel
//! under every variant).

mod common;

use common::{repo_root, workloads};
use std::path::Path;
use std::process::Command;

/// Runs `bin` and returns its stdout (without the line that reports elapsed time, which
/// is simulated time and differs between designs) and the stats.
fn run(bin: &Path, flags: &[&str], tag: &str) -> (String, serde_json::Value) {
    let name = bin.file_name().unwrap().to_string_lossy().into_owned();
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("run-wir-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let stats = dir.join(format!("{name}-{tag}.json"));
    let out = Command::new(env!("CARGO_BIN_EXE_regsim"))
        .arg("run")
        .args(["--stats", stats.to_str().unwrap()])
        .args(flags)
        .arg("--")
        .arg(bin)
        .env_remove("REGSIM_CUDART")
        .env_remove("REGSIM_CONFIGS")
        .output()
        .expect("the regsim binary runs");
    let so = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() && so.lines().last() == Some("PASS"),
        "{name} {flags:?}: {so}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json =
        serde_json::from_str(&std::fs::read_to_string(&stats).expect("stats")).expect("stats JSON");
    let kept = so
        .lines()
        .filter(|l| !l.ends_with(" ms"))
        .collect::<Vec<_>>()
        .join("\n");
    (kept, json)
}

fn extra(json: &serde_json::Value, key: &str) -> u64 {
    json["total"]["register_file"]["extra"][key]
        .as_u64()
        .unwrap_or_else(|| panic!("no {key} in {}", json["total"]["register_file"]))
}

/// Workloads that exercise calls (devfunc_call), divergence (bfs), barriers and shared
/// loads (reduction, stencil2d) and read-only loads (kmeans).
const SOME: [&str; 5] = ["bfs", "devfunc_call", "kmeans", "reduction", "stencil2d"];

fn runs_under(variant: &str, all: bool) {
    let set = format!("register_file.wir.variant=\"{variant}\"");
    let mut reused = 0;
    for bin in workloads() {
        if !all && !SOME.iter().any(|n| bin.ends_with(n)) {
            continue;
        }
        let (want, _) = run(&bin, &["--functional"], "functional");
        let (got, json) = run(&bin, &["--rf", "wir", "--set", &set], variant);
        let name = bin.display();
        assert_eq!(got, want, "{name}: the program's output changed under WIR");
        assert_eq!(json["total"]["register_file"]["design"], "wir", "{name}");
        assert_eq!(extra(&json, "wir_value_mismatches"), 0, "{name}");
        assert_eq!(extra(&json, "wir_pool_overflow"), 0, "{name}");
        assert_eq!(extra(&json, "wir_physical_registers_in_use"), 0, "{name}");
        reused += extra(&json, "wir_reuse_hits");
    }
    assert!(
        reused > 0,
        "{variant}: nothing was reused in the whole suite"
    );
}

#[test]
fn every_workload_passes_under_rlpv_the_default() {
    runs_under("RLPV", true);
}

#[test]
fn some_workloads_pass_under_r() {
    runs_under("R", false);
}

#[test]
fn some_workloads_pass_under_rl() {
    runs_under("RL", false);
}

#[test]
fn some_workloads_pass_under_rlp() {
    runs_under("RLP", false);
}

#[test]
fn some_workloads_pass_under_rpv() {
    runs_under("RPV", false);
}

#[test]
fn some_workloads_pass_under_rlpvc() {
    runs_under("RLPVc", false);
}

#[test]
fn some_workloads_pass_under_novsb() {
    runs_under("NoVSB", false);
}

#[test]
fn wir_statistics_are_deterministic() {
    let bin = repo_root().join("workloads/bin/kmeans");
    let (_, a) = run(&bin, &["--rf", "wir"], "det-a");
    let (_, b) = run(&bin, &["--rf", "wir"], "det-b");
    for j in [&a, &b] {
        assert!(extra(j, "wir_reuse_hits") > 0);
    }
    assert_eq!(
        a["kernels"].as_array().map(|k| k.len()),
        b["kernels"].as_array().map(|k| k.len())
    );
    for (x, y) in a["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .zip(b["kernels"].as_array().unwrap())
    {
        assert_eq!(x["cycles"], y["cycles"]);
        assert_eq!(x["register_file"], y["register_file"]);
        assert_eq!(x["memory"], y["memory"]);
    }
}

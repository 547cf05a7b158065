//! `regsim run` with compiler transforms (`--max-registers`, `--ltrf-renumber`) and with
//! `--profile-registers`, on the committed workload binaries: the transformed programs
//! must compute the same (every workload prints PASS), renumbering must execute exactly
//! the instructions of the plain run, and spill code must execute where the cap forces it.
//!
//! Cost (release build, one core): about 17 s for the whole file with 19 workloads, nearly
//! all of it every workload (25 now) run five times in functional mode (plain, capped,
//! N = 8, 16, 32).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use compiler::regalloc::registers_per_thread;
use compiler::AllocConfig;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn workloads() -> Vec<String> {
    let dir = repo_root().join("workloads/bin");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.is_file())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(
        !names.is_empty(),
        "no workload binaries in {}",
        dir.display()
    );
    names
}

/// Runs workload `name` with `flags`, asserts PASS and exit 0, and returns its
/// statistics and stderr.
fn run_passing(name: &str, flags: &[&str]) -> (serde_json::Value, String) {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("run-transforms-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let stats = dir.join(format!("{name}-{run}.json"));
    let out = Command::new(env!("CARGO_BIN_EXE_regsim"))
        .arg("run")
        .args(["--stats", stats.to_str().unwrap()])
        .args(flags)
        .arg("--")
        .arg(repo_root().join("workloads/bin").join(name))
        .env_remove("REGSIM_CUDART")
        .env_remove("REGSIM_CONFIGS")
        .output()
        .expect("the regsim binary runs");
    let (so, se) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert_eq!(
        so.lines().last(),
        Some("PASS"),
        "{name} {flags:?}: stdout:\n{so}\nstderr:\n{se}"
    );
    assert_eq!(out.status.code(), Some(0), "{name} {flags:?}: {se}");
    let json = serde_json::from_str(&std::fs::read_to_string(&stats).expect("stats written"))
        .expect("stats are JSON");
    (json, se)
}

/// Per kernel launch, in order: mangled name, warp and thread instructions.
fn counts(stats: &serde_json::Value) -> Vec<(String, u64, u64)> {
    stats["kernels"]
        .as_array()
        .expect("kernels")
        .iter()
        .map(|k| {
            (
                k["mangled"].as_str().expect("mangled").to_string(),
                k["warp_instructions"].as_u64().expect("warp_instructions"),
                k["thread_instructions"]
                    .as_u64()
                    .expect("thread_instructions"),
            )
        })
        .collect()
}

/// Registers per thread each kernel of a workload needs without a cap, from the same
/// allocator the runtime uses, on the workload's nvcc PTX.
fn uncapped_registers(name: &str) -> BTreeMap<String, u32> {
    let path = repo_root().join(format!("workloads/ptx/nvcc/{name}.ptx"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let file = path.to_string_lossy();
    let program = ir::lower(&ptx::parse(&file, &text).unwrap(), &file, &text).unwrap();
    registers_per_thread(&program, &AllocConfig::default())
        .unwrap()
        .into_iter()
        .map(|k| (k.name, k.registers))
        .collect()
}

#[test]
fn every_workload_computes_the_same_under_a_register_cap_with_spill_code_executed() {
    const CAP: u32 = 32;
    let mut spilled = Vec::new();
    for name in workloads() {
        let (plain, _) = run_passing(&name, &["--functional"]);
        let (capped, _) = run_passing(&name, &["--functional", "--max-registers", "32"]);
        let needs = uncapped_registers(&name);
        let (plain, capped) = (counts(&plain), counts(&capped));
        assert_eq!(plain.len(), capped.len(), "{name}: same launches");
        for (p, c) in plain.iter().zip(&capped) {
            assert_eq!(p.0, c.0, "{name}");
            let need = needs[&p.0];
            if need <= CAP {
                assert_eq!(p, c, "{name}: {need} registers fit the cap: no spill code");
            } else {
                assert!(
                    c.1 > p.1 && c.2 > p.2,
                    "{name}: {} needs {need} registers; spill code must execute: {p:?} vs {c:?}",
                    p.0
                );
                spilled.push(name.clone());
            }
        }
    }
    assert!(
        spilled.iter().any(|n| n == "sgemm_regblock"),
        "sgemm_regblock needs more than {CAP} registers: {spilled:?}"
    );
}

#[test]
fn every_workload_computes_the_same_ltrf_renumbered() {
    for name in workloads() {
        let (plain, _) = run_passing(&name, &["--functional"]);
        for n in ["8", "16", "32"] {
            let flags = [
                "--functional",
                "--ltrf-renumber",
                "--registers-per-interval",
                n,
                "--banks",
                "16",
            ];
            let (renumbered, _) = run_passing(&name, &flags);
            assert_eq!(
                counts(&renumbered),
                counts(&plain),
                "{name}, N = {n}: renumbering changes no instruction"
            );
        }
    }
}

#[test]
fn the_timing_model_sees_the_capped_allocation() {
    let (plain, _) = run_passing("sgemm_regblock", &[]);
    let (capped, _) = run_passing("sgemm_regblock", &["--max-registers", "24"]);
    let regs =
        |s: &serde_json::Value| s["kernels"][0]["occupancy"]["registers_per_thread"].as_u64();
    assert!(regs(&plain).is_some_and(|r| r > 24), "{plain}");
    assert!(regs(&capped).is_some_and(|r| r <= 24), "{capped}");
    let cycles = |s: &serde_json::Value| s["total"]["cycles"].as_u64().unwrap();
    let warp = |s: &serde_json::Value| s["total"]["warp_instructions"].as_u64().unwrap();
    assert!(warp(&capped) > warp(&plain), "spill code is timed");
    assert!(cycles(&capped) > cycles(&plain), "and costs time");
    // Renumbering keeps the instructions but moves registers between banks.
    let (renumbered, _) = run_passing("sgemm_regblock", &["--ltrf-renumber"]);
    assert_eq!(warp(&renumbered), warp(&plain));
}

#[test]
fn the_register_profile_is_the_same_in_functional_and_timing_mode() {
    let flags = ["--profile-registers", "--summary"];
    let (functional, summary) =
        run_passing("blackscholes", &[&["--functional"], &flags[..]].concat());
    let (timed, _) = run_passing("blackscholes", &flags);
    let p = &functional["register_profile"];
    assert_eq!(
        p, &timed["register_profile"],
        "the stream of each warp is the same"
    );
    assert_eq!(
        functional["orf_lrf"]["dynamic_counts"],
        timed["orf_lrf"]["dynamic_counts"]
    );
    assert_eq!(
        p["instructions"].as_u64(),
        functional["total"]["warp_instructions"].as_u64()
    );
    let r = &p["profile"]["registers"];
    let values = r["values"].as_u64().unwrap();
    let reads: Vec<u64> = r["reads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(reads.iter().sum::<u64>(), values);
    let lifetimes: u64 = r["read_once_lifetime"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(lifetimes, reads[1], "every read-once value has a lifetime");
    // Every lane of every thread writes its values: at least one per thread instruction
    // that writes, so more values than warp instructions.
    assert!(values > p["instructions"].as_u64().unwrap());
    let o = &functional["orf_lrf"];
    let ratio = o["energy_ratio"].as_f64().unwrap();
    assert!(ratio > 0.2 && ratio < 1.0, "{o}");
    assert!(
        o["dynamic_counts"]["reads"]["lrf"].as_u64().unwrap() > 0,
        "{o}"
    );
    assert!(o.get("errors").is_none(), "{o}");
    assert!(
        summary.contains("register-usage profile, dynamic:"),
        "{summary}"
    );
    assert!(summary.contains("ORF/LRF hierarchy (3 ORF entries, split LRF), dynamic"));

    let (plain, _) = run_passing("blackscholes", &["--functional"]);
    assert!(plain.get("register_profile").is_none() && plain.get("orf_lrf").is_none());
}

#[test]
fn ltrf_options_need_ltrf_renumber() {
    let out = Command::new(env!("CARGO_BIN_EXE_regsim"))
        .args(["run", "--banks", "8", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--ltrf-renumber"));
}

//! `regsim run --functional` bounded as a timing run is (issue 26): a kernel that never
//! ends stops at `--max-instructions` and at `--timeout` inside the emulator, with the
//! line, exit status 124 and incomplete statistics of a timing run's `--max-cycles`
//! stop; `--max-cycles`, which has no meaning without cycles, is said not to apply.
//! Before, a functional run had no bound but `--timeout`, which killed the program a
//! few seconds after the limit, and an infinite loop ran until then.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A committed test program of `tests/programs/bin` (built by `tests/programs/build.sh`).
fn program(name: &str) -> PathBuf {
    repo_root().join("crates/cli/tests/programs/bin").join(name)
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("functional-limits-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

fn run(tmp: &Path, args: &[&str], program: &Path) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_regsim"))
        .arg("run")
        .args(args)
        .arg("--")
        .arg(program)
        .env("TMPDIR", tmp)
        .env_remove("REGSIM_CUDART")
        .env_remove("REGSIM_CONFIGS")
        .output()
        .expect("regsim runs")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("the stats file is written"))
        .expect("the stats file is JSON")
}

/// `never_ends` spins on a flag nothing sets (2 warps): under `--functional` each bound
/// stops it in the emulator with the kernel, the count so far and each live warp.
#[test]
fn a_kernel_that_never_ends_stops_at_each_functional_limit() {
    let kernel = "regsim: run stopped: kernel wait_for_flag(int const volatile*, int*) stopped \
                  after ";
    for (limit, value, says) in [
        (
            "--max-instructions",
            "100000",
            "100000 warp instructions: the instruction limit (100000 warp instructions) was \
             reached; CTA (0,0,0): 2 warps live (2 ready to issue): warp 0 (next: PTX line ",
        ),
        (
            "--timeout",
            "1",
            " warp instructions: the time limit (1 s) was reached; CTA (0,0,0): 2 warps live \
             (2 ready to issue): warp 0 (next: PTX line ",
        ),
    ] {
        let tmp = scratch(&format!("spin{limit}"));
        let stats = tmp.join("s.json");
        let started = Instant::now();
        let out = run(
            &tmp,
            &[
                "--functional",
                limit,
                value,
                "--stats",
                stats.to_str().unwrap(),
            ],
            &program("never_ends"),
        );
        let se = stderr(&out);
        assert_eq!(out.status.code(), Some(124), "{limit}: {se}");
        // The program does not run on to print a verdict.
        assert_eq!(String::from_utf8_lossy(&out.stdout), "", "{limit}: {se}");
        assert!(se.contains(kernel) && se.contains(says), "{limit}: {se}");
        assert!(se.contains("; warp 1 (next: PTX line "), "{limit}: {se}");
        // Stopped by the emulator, not killed after the grace period.
        assert!(!se.contains("was killed"), "{limit}: {se}");
        let json = read_json(&stats);
        assert_eq!(json["complete"], false, "{limit}");
        assert_eq!(json["program"]["exit_code"], 124, "{limit}");
        let reason = json["incomplete_reason"].as_str().expect("a reason");
        assert!(reason.contains("wait_for_flag"), "{reason}");
        let executed = json["total"]["warp_instructions"].as_u64().unwrap();
        if limit == "--max-instructions" {
            assert_eq!(executed, 100_000, "deterministic: exactly the limit");
        } else {
            assert!(executed > 0);
        }
        assert!(started.elapsed() < Duration::from_secs(60), "{limit}");
    }
}

/// The instruction limit counts over the whole run, as in timing mode: a limit above the
/// program's count changes nothing, and `--max-cycles` is said not to apply.
#[test]
fn max_instructions_bounds_the_whole_functional_run() {
    let tmp = scratch("saxpy");
    let saxpy = repo_root().join("workloads/bin/saxpy");
    let stats = tmp.join("s.json");
    let out = run(
        &tmp,
        &["--functional", "--stats", stats.to_str().unwrap()],
        &saxpy,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let total = read_json(&stats)["total"]["warp_instructions"]
        .as_u64()
        .unwrap();
    let at = total.to_string();
    let out = run(&tmp, &["--functional", "--max-instructions", &at], &saxpy);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("PASS"));
    let below = (total - 1).to_string();
    let out = run(
        &tmp,
        &["--functional", "--max-instructions", &below],
        &saxpy,
    );
    let se = stderr(&out);
    assert_eq!(out.status.code(), Some(124), "{se}");
    assert!(
        se.contains(&format!(
            "stopped after {below} warp instructions: the instruction limit ({below} warp \
             instructions) was reached; CTA ("
        )),
        "{se}"
    );
    let out = run(&tmp, &["--functional", "--max-cycles", "5"], &saxpy);
    let se = stderr(&out);
    assert!(out.status.success(), "{se}");
    assert!(
        se.contains(
            "regsim: warning: --max-cycles bounds timing mode only (a --functional run has no \
             cycles); it is bounded by --max-instructions and --timeout"
        ),
        "{se}"
    );
}

/// Trace-exact Malekeh profiles each launch functionally before timing it: the profiling
/// pass is bounded by the timed run's limits (at most the warp instructions the timed run
/// could issue before `--max-cycles`, and `--timeout`), so a kernel that never ends stops
/// at the cycle limit with the timing model's line, not at the harness's kill.
#[test]
fn trace_exact_malekeh_profiling_stops_at_the_timed_runs_limits() {
    for (limit, value, says) in [
        (
            "--max-cycles",
            "20000",
            "the cycle limit (20000 cycles) was reached",
        ),
        ("--timeout", "2", "the time limit (2 s) was reached"),
    ] {
        let tmp = scratch(&format!("malekeh{limit}"));
        let started = Instant::now();
        let out = run(
            &tmp,
            &[
                "--gpu",
                "gtx480",
                "--rf",
                "malekeh",
                "--set",
                "register_file.malekeh.reuse_distances=\"trace\"",
                limit,
                value,
            ],
            &program("never_ends"),
        );
        let se = stderr(&out);
        assert_eq!(out.status.code(), Some(124), "{limit}: {se}");
        assert!(
            se.contains("regsim: run stopped: kernel wait_for_flag") && se.contains(says),
            "{limit}: {se}"
        );
        assert!(!se.contains("was killed"), "{limit}: {se}");
        assert!(started.elapsed() < Duration::from_secs(60), "{limit}");
    }
}

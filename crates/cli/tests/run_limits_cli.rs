//! `regsim run` bounded and interrupted, as a user runs it: `--max-cycles` and
//! `--max-instructions` stop a built-in workload with the message, exit status 124 and
//! the statistics so far marked incomplete (completed kernels kept whole); SIGTERM to
//! `regsim run` reaches the program, which leaves its statistics, and the temporary
//! runtime directory is removed (after SIGKILL, by the next run); `--timeout` ends a program that does not stop by
//! itself; a CUDA program whose kernel never ends stops at `--max-cycles` and at
//! `--timeout`, and one whose two warps wait at different barriers is reported as a
//! deadlock with each warp's state (`tests/programs/never_ends.cu`; the timing-crate
//! side is `crates/timing/tests/run_limits.rs`); a SIGINT that regsim's parent ignores
//! leaves the program its own exit status; long cache, unit and bank waits cost
//! simulated time, not host time.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn workload(name: &str) -> PathBuf {
    repo_root().join("workloads/bin").join(name)
}

/// A committed test program of `tests/programs/bin` (built by `tests/programs/build.sh`).
fn program(name: &str) -> PathBuf {
    repo_root().join("crates/cli/tests/programs/bin").join(name)
}

/// A fresh scratch directory (also the temporary directory of the runs).
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("run-limits-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

fn regsim_run(tmp: &Path, args: &[&str], program: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_regsim"));
    cmd.arg("run")
        .args(args)
        .arg("--")
        .arg(program)
        .env("TMPDIR", tmp)
        .env_remove("REGSIM_CUDART")
        .env_remove("REGSIM_CONFIGS");
    cmd
}

/// Runs `regsim run ARGS -- PROGRAM` to its end.
fn run(tmp: &Path, args: &[&str], program: &Path) -> Output {
    regsim_run(tmp, args, program)
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

/// The `regsim-run-*` directories left in `tmp`.
fn leftovers(tmp: &Path) -> Vec<String> {
    std::fs::read_dir(tmp)
        .expect("scratch directory")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("regsim-run-"))
        .collect()
}

#[test]
fn max_cycles_stops_the_run_with_the_message_status_and_incomplete_statistics() {
    let tmp = scratch("cycles");
    let stats = tmp.join("s.json");
    let out = run(
        &tmp,
        &["--max-cycles", "5000", "--stats", stats.to_str().unwrap()],
        &workload("saxpy"),
    );
    let se = stderr(&out);
    assert_eq!(out.status.code(), Some(124), "{se}");
    // The program does not run on to print a verdict.
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    assert!(
        se.contains(
            "regsim: run stopped: kernel saxpy(int, float, float const*, float*) stopped at \
             cycle 4999: the cycle limit (5000 cycles) was reached; "
        ),
        "{se}"
    );
    // Every live warp is accounted for, and the first ones are listed with their state.
    assert!(se.contains(" warps live ("), "{se}");
    assert!(
        se.contains("SM 0 CTA (0,0,0) warp 0 (next: PTX line "),
        "{se}"
    );
    assert!(se.contains("\"complete\": false"), "{se}");

    let json = read_json(&stats);
    assert_eq!(json["complete"], false);
    let reason = json["incomplete_reason"].as_str().expect("a reason");
    assert!(reason.contains("the cycle limit (5000 cycles)"), "{reason}");
    let kernels = json["kernels"].as_array().expect("kernels");
    assert_eq!(kernels.len(), 1);
    assert_eq!(kernels[0]["complete"], false);
    assert_eq!(kernels[0]["cycles"], 5000);
    assert_eq!(json["total"]["cycles"], 5000);
    assert!(json["total"]["warp_instructions"].as_u64().unwrap() > 0);
    assert_eq!(json["program"]["exit_code"], 124);
    assert!(leftovers(&tmp).is_empty(), "{:?}", leftovers(&tmp));
}

#[test]
fn a_limit_keeps_the_kernels_completed_before_it_whole() {
    // reduction launches two kernels; the bound falls in the second.
    let tmp = scratch("kernels");
    let full = tmp.join("full.json");
    let out = run(
        &tmp,
        &["--stats", full.to_str().unwrap()],
        &workload("reduction"),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let full = read_json(&full);
    assert_eq!(full["complete"], true);
    assert!(full.get("incomplete_reason").is_none());
    let first = full["kernels"][0]["cycles"].as_u64().expect("cycles");
    let limit = first + 100;

    let stats = tmp.join("s.json");
    let out = run(
        &tmp,
        &[
            "--max-cycles",
            &limit.to_string(),
            "--stats",
            stats.to_str().unwrap(),
        ],
        &workload("reduction"),
    );
    assert_eq!(out.status.code(), Some(124), "{}", stderr(&out));
    let json = read_json(&stats);
    assert_eq!(json["complete"], false);
    let kernels = json["kernels"].as_array().expect("kernels");
    assert_eq!(kernels.len(), 2);
    // The first kernel is the full run's, untouched.
    assert!(kernels[0].get("complete").is_none(), "{}", kernels[0]);
    assert_eq!(kernels[0]["cycles"], full["kernels"][0]["cycles"]);
    assert_eq!(
        kernels[0]["warp_instructions"],
        full["kernels"][0]["warp_instructions"]
    );
    assert_eq!(kernels[1]["complete"], false);
    assert_eq!(kernels[1]["cycles"], 100);
    assert_eq!(json["total"]["cycles"].as_u64(), Some(limit));
    assert_eq!(json["total"]["kernels"], 2);
}

#[test]
fn max_instructions_stops_the_run() {
    let tmp = scratch("instructions");
    let stats = tmp.join("s.json");
    let out = run(
        &tmp,
        &[
            "--max-instructions",
            "2000",
            "--stats",
            stats.to_str().unwrap(),
        ],
        &workload("saxpy"),
    );
    let se = stderr(&out);
    assert_eq!(out.status.code(), Some(124), "{se}");
    assert!(
        se.contains("the instruction limit (2000 warp instructions) was reached"),
        "{se}"
    );
    let json = read_json(&stats);
    assert_eq!(json["complete"], false);
    let issued = json["total"]["warp_instructions"].as_u64().unwrap();
    // Stopped in the cycle the bound was reached (15 SMs, two schedulers each).
    assert!((2000..2000 + 30).contains(&issued), "{issued}");
}

#[test]
fn limits_out_of_reach_change_nothing() {
    let tmp = scratch("free");
    let out = run(&tmp, &["--timeout", "600"], &workload("reduction"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).lines().last(),
        Some("PASS")
    );
    let bad = run(&tmp, &["--timeout", "soon"], &workload("reduction"));
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("`soon` is not a number of seconds"));
}

/// Long waits are skipped, not stepped: with an L1D latency of 10^5 cycles saxpy takes
/// 8.5 M simulated cycles, nearly all of them waits. Stepping each SM through them took
/// about 110 s; skipped, about 2 s, so a 60 s limit is far from both.
#[test]
fn a_long_cache_latency_costs_simulated_time_not_host_time() {
    let tmp = scratch("long-latency");
    let stats = tmp.join("s.json");
    let out = run(
        &tmp,
        &[
            "--set",
            "l1d.latency=100000",
            "--timeout",
            "60",
            "--stats",
            stats.to_str().unwrap(),
        ],
        &workload("saxpy"),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json = read_json(&stats);
    assert!(
        json["total"]["cycles"].as_u64().unwrap() > 8_000_000,
        "{json}"
    );
}

/// saxpy under `--rf design --set setting` with a 60 s limit: it must pass; returns its
/// simulated cycles.
fn saxpy_cycles_within_a_minute(tmp: &Path, design: &str, setting: &str) -> u64 {
    let stats = tmp.join(format!("{design}.json"));
    let out = run(
        tmp,
        &[
            "--rf",
            design,
            "--set",
            setting,
            "--timeout",
            "60",
            "--stats",
            stats.to_str().unwrap(),
        ],
        &workload("saxpy"),
    );
    assert_eq!(out.status.code(), Some(0), "{design}: {}", stderr(&out));
    read_json(&stats)["total"]["cycles"].as_u64().unwrap()
}

/// A register-file bank held for a long time is slept through, not polled: with a
/// 10^5-cycle bank latency (non-pipelined banks: each grant holds its port as long) saxpy
/// takes 72 M (rfc) to 176 M (baseline) simulated cycles (16,298 at a latency of one),
/// nearly all of them operands waiting for a port. Asked every cycle, a 10^3-cycle
/// latency took 16 s on the baseline (10^5 would take half an hour); the SM now sleeps
/// until a port frees and counts the refusals when it wakes, so each design takes a few
/// seconds and a 60 s limit is far from both. CERF woke every 64 cycles for its state
/// samples (minutes at 10^5); it now takes those of the cycles it slept through when it
/// wakes.
#[test]
fn a_long_bank_latency_costs_simulated_time_not_host_time() {
    let tmp = scratch("long-bank-latency");
    for design in ["baseline", "ltrf", "rfc", "malekeh", "bow", "wir", "cerf"] {
        let setting = "register_file.bank_latency=100000";
        let cycles = saxpy_cycles_within_a_minute(&tmp, design, setting);
        assert!(cycles > 50_000_000, "{design}: {cycles} cycles");
    }
}

/// A unit busy for a long time is slept through, not polled: with a 10^6-cycle
/// initiation interval for fp32, saxpy's collectors wait hundreds of millions of cycles
/// for their unit. Asked every cycle whether the unit was free, the designs kept the SMs
/// awake for all of them (the watchdog's 2^24 idle visits ended the run as "no
/// progress"); told by the dispatch port when it frees, each design sleeps until then and
/// the run takes about as long as a normal one.
#[test]
fn a_long_initiation_interval_costs_simulated_time_not_host_time() {
    let tmp = scratch("long-interval");
    for design in ["baseline", "wir", "cerf"] {
        let setting = "pipeline.classes.fp32.initiation_interval=1000000";
        let cycles = saxpy_cycles_within_a_minute(&tmp, design, setting);
        assert!(cycles > 100_000_000, "{design}: {cycles} cycles");
    }
}

#[test]
fn sigterm_reaches_the_program_which_leaves_its_statistics_and_no_temporary_directory() {
    let tmp = scratch("sigterm");
    let stats = tmp.join("s.json");
    // atomics_cas simulates for many seconds.
    let child = regsim_run(
        &tmp,
        &["--stats", stats.to_str().unwrap()],
        &workload("atomics_cas"),
    )
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .expect("regsim starts");
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(
        leftovers(&tmp).len(),
        1,
        "the runtime's directory exists while it runs"
    );
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    let out = child.wait_with_output().expect("regsim ends");
    let se = stderr(&out);
    assert_eq!(out.status.code(), Some(128 + 15), "{se}");
    assert!(se.contains("regsim: run stopped: "), "{se}");
    assert!(se.contains("interrupted by SIGTERM"), "{se}");
    let json = read_json(&stats);
    assert_eq!(json["complete"], false);
    assert_eq!(json["program"]["signal"], 15);
    assert!(leftovers(&tmp).is_empty(), "{:?}", leftovers(&tmp));
}

/// SIGKILL leaves `regsim run` no chance to remove its temporary directory (nor the
/// program, which dies with it): the next run in the same temporary directory removes
/// it, as the directory is named after the process that is gone.
#[test]
fn a_run_killed_with_sigkill_leaves_a_directory_the_next_run_removes() {
    let tmp = scratch("sigkill");
    let mut child = regsim_run(&tmp, &[], &workload("atomics_cas"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("regsim starts");
    let started = Instant::now();
    while leftovers(&tmp).is_empty() && started.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(100));
    }
    let left = leftovers(&tmp);
    assert_eq!(
        left.len(),
        1,
        "the runtime's directory exists while it runs"
    );
    assert!(
        left[0].starts_with(&format!("regsim-run-{}.", child.id())),
        "{left:?}"
    );
    child.kill().expect("SIGKILL");
    child.wait().expect("regsim ends");
    assert_eq!(leftovers(&tmp), left, "nothing could remove it");
    let out = run(&tmp, &["--functional"], &workload("saxpy"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(leftovers(&tmp).is_empty(), "{:?}", leftovers(&tmp));
}

/// A parent that ignores SIGINT (`nohup`, a script's background job, `trap '' INT`)
/// starts regsim and its program with SIGINT ignored: a SIGINT then ends neither, and
/// the run's status is the program's own. regsim used to catch it anyway and pass it on
/// to the program, which ignored it and was killed 5 s later (status 137).
#[test]
fn a_sigint_ignored_by_the_parent_leaves_the_program_its_own_status() {
    let tmp = scratch("sigint-ignored");
    let script = tmp.join("exits3");
    std::fs::write(
        &script,
        "#!/bin/sh
sleep 2
exit 3
",
    )
    .expect("script");
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let run = regsim_run(&tmp, &[], &script);
    // `exec` keeps the shell's ignored SIGINT for regsim, in the same process.
    let child = Command::new("sh")
        .arg("-c")
        .arg("trap '' INT; exec \"$@\"")
        .arg("sh")
        .arg(run.get_program())
        .args(run.get_args())
        .env("TMPDIR", &tmp)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("regsim starts");
    std::thread::sleep(Duration::from_millis(700));
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(sent.success());
    let out = child.wait_with_output().expect("regsim ends");
    let se = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{se}");
    assert!(!se.contains("killed"), "{se}");
    assert!(leftovers(&tmp).is_empty(), "{:?}", leftovers(&tmp));
}

#[test]
fn a_program_that_outlives_its_timeout_is_killed_with_status_124() {
    // A script that never loads regsim's runtime: only `regsim run` can end it.
    let tmp = scratch("timeout");
    let script = tmp.join("sleeper");
    std::fs::write(&script, "#!/bin/sh\nexec sleep 60\n").expect("script");
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let started = Instant::now();
    let out = run(&tmp, &["--timeout", "0.5"], &script);
    let se = stderr(&out);
    assert_eq!(out.status.code(), Some(124), "{se}");
    assert!(
        se.contains("did not stop at its time limit (0.5 s) and was killed"),
        "{se}"
    );
    assert!(started.elapsed() < Duration::from_secs(30));
    assert!(leftovers(&tmp).is_empty(), "{:?}", leftovers(&tmp));
}

/// `tests/programs/never_ends` spins on a flag nothing sets: each limit stops it with the
/// kernel named, exit status 124 and incomplete statistics (the cycle limit at an exact
/// cycle, with each live warp's state).
#[test]
fn a_kernel_that_never_ends_stops_at_each_limit() {
    for (limit, value, says) in [
        (
            "--max-cycles",
            "20000",
            "regsim: run stopped: kernel wait_for_flag(int const volatile*, int*) stopped at \
             cycle 19999: the cycle limit (20000 cycles) was reached; 2 warps live (",
        ),
        (
            "--timeout",
            "1",
            "the time limit (1 s) was reached; 2 warps live (",
        ),
    ] {
        let tmp = scratch(&format!("spin{limit}"));
        let stats = tmp.join("s.json");
        let started = Instant::now();
        let out = run(
            &tmp,
            &[limit, value, "--stats", stats.to_str().unwrap()],
            &program("never_ends"),
        );
        let se = stderr(&out);
        assert_eq!(out.status.code(), Some(124), "{limit}: {se}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "", "{limit}: {se}");
        assert!(se.contains(says), "{limit}: {se}");
        assert!(
            se.contains("SM 0 CTA (0,0,0) warp 1 (next: PTX line "),
            "{se}"
        );
        let json = read_json(&stats);
        assert_eq!(json["complete"], false, "{limit}");
        assert_eq!(json["program"]["exit_code"], 124, "{limit}");
        if limit == "--max-cycles" {
            assert_eq!(json["kernels"][0]["cycles"], 20000);
        }
        assert!(started.elapsed() < Duration::from_secs(60), "{limit}");
        assert!(leftovers(&tmp).is_empty(), "{:?}", leftovers(&tmp));
    }
}

#[test]
fn a_two_warp_barrier_deadlock_is_reported_with_each_warps_state() {
    let tmp = scratch("deadlock");
    let started = Instant::now();
    let out = regsim_run(&tmp, &[], &program("never_ends"))
        .arg("deadlock")
        .output()
        .expect("regsim runs");
    let se = stderr(&out);
    // The program sees a failed launch and exits with its own error status.
    assert_eq!(out.status.code(), Some(2), "{se}");
    assert!(
        se.contains(
            "kernel split_barrier(int*), PTX line 63 (bar.sync %r1, 64;), CTA (0,0,0): \
             barrier 1 deadlock: warps [0] wait at it, warps [1] never arrive"
        ),
        "{se}"
    );
    assert!(
        se.contains("warp 0 (next: PTX line 65) waits at barrier 1")
            && se.contains("warp 1 (next: PTX line 65) waits at barrier 2"),
        "{se}"
    );
    assert!(started.elapsed() < Duration::from_secs(30));
    assert!(leftovers(&tmp).is_empty(), "{:?}", leftovers(&tmp));
}

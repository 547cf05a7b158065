//! `regsim run --sample` bounded in the CTAs it executes functionally (issue 26): a CTA
//! that never ends in a skipped stratum stops at `--max-cycles`, `--max-instructions`,
//! `--timeout` and SIGTERM promptly, with the timed run's stop line (naming the CTA
//! executed functionally and its warps), its exit status and incomplete statistics.
//! Before, the skipped CTAs had no bound: the run spun until the harness killed it, and
//! a SIGTERM was not seen until the program was killed 5 s later.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `never_ends sampled [CTA]`: 8192 CTAs of 64 threads, of which CTA 700 (or the one
/// given) waits for a flag nothing sets (`tests/programs/never_ends.cu`).
fn never_ends() -> PathBuf {
    repo_root().join("crates/cli/tests/programs/bin/never_ends")
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("sampled-limits-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

fn regsim_run(tmp: &Path, args: &[&str], program_args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_regsim"));
    cmd.arg("run")
        .args(["--gpu", "gtx480", "--sample"])
        .args(args)
        .arg("--")
        .arg(never_ends())
        .args(program_args)
        .env("TMPDIR", tmp)
        .env_remove("REGSIM_CUDART")
        .env_remove("REGSIM_CONFIGS");
    cmd
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("the stats file is written"))
        .expect("the stats file is JSON")
}

const KERNEL: &str =
    "regsim: run stopped: kernel one_cta_waits(int const volatile*, int, int*) stopped at cycle ";
/// CTA 700 lies between the first and the second sample on gtx480 (waves of 120 CTAs),
/// so it is executed functionally.
const FUNCTIONAL: &str = "executed functionally (sampled run): CTA (700,0,0): 2 warps live (2 \
                          ready to issue): warp 0 (next: PTX line ";

#[test]
fn a_never_ending_cta_executed_functionally_stops_at_each_limit() {
    for (limit, value, says) in [
        (
            "--max-cycles",
            "200000",
            "the cycle limit (200000 cycles) was reached; ",
        ),
        (
            "--max-instructions",
            "300000",
            "the instruction limit (300000 warp instructions) was reached; ",
        ),
        ("--timeout", "2", "the time limit (2 s) was reached; "),
    ] {
        let tmp = scratch(&format!("limit{limit}"));
        let stats = tmp.join("s.json");
        let started = Instant::now();
        let out = regsim_run(
            &tmp,
            &[limit, value, "--stats", stats.to_str().unwrap()],
            &["sampled"],
        )
        .output()
        .expect("regsim runs");
        let se = stderr(&out);
        assert_eq!(out.status.code(), Some(124), "{limit}: {se}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "", "{limit}: {se}");
        assert!(se.contains(KERNEL), "{limit}: {se}");
        assert!(se.contains(&format!("{says}{FUNCTIONAL}")), "{limit}: {se}");
        assert!(se.contains("; warp 1 (next: PTX line "), "{limit}: {se}");
        // The warps simulated in detail follow, as in any timed stop.
        assert!(se.contains("; in detail: "), "{limit}: {se}");
        assert!(!se.contains("was killed"), "{limit}: {se}");
        let json = read_json(&stats);
        assert_eq!(json["complete"], false, "{limit}");
        assert_eq!(json["program"]["exit_code"], 124, "{limit}");
        let reason = json["incomplete_reason"].as_str().expect("a reason");
        assert!(reason.contains("one_cta_waits"), "{reason}");
        // Promptly: the bound is what the timed run could issue before the limit.
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{limit}: {:?}",
            started.elapsed()
        );
    }
}

/// The instruction and cycle bounds stop the functional part deterministically, at the
/// cycle the skipped CTAs are executed.
#[test]
fn the_stop_of_a_functional_part_is_deterministic() {
    let tmp = scratch("determinism");
    let cycle = |out: &Output| {
        let se = stderr(out);
        let at = se.find(KERNEL).unwrap_or_else(|| panic!("{se}")) + KERNEL.len();
        se[at..].split(':').next().unwrap().to_string()
    };
    let run = || {
        regsim_run(&tmp, &["--max-instructions", "300000"], &["sampled"])
            .output()
            .expect("regsim runs")
    };
    let (a, b) = (run(), run());
    assert_eq!(cycle(&a), cycle(&b));
    assert_eq!(stderr(&a), stderr(&b));
}

#[test]
fn sigterm_stops_a_never_ending_cta_executed_functionally() {
    let tmp = scratch("sigterm");
    let stats = tmp.join("s.json");
    let child = regsim_run(&tmp, &["--stats", stats.to_str().unwrap()], &["sampled"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("regsim starts");
    // Well into the functional part: the detailed first sample takes well under a second.
    std::thread::sleep(Duration::from_secs(3));
    let sent = Instant::now();
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    let out = child.wait_with_output().expect("regsim ends");
    let se = stderr(&out);
    assert_eq!(out.status.code(), Some(128 + 15), "{se}");
    assert!(
        se.contains(KERNEL)
            && se.contains(&format!(
                "the simulation was interrupted by SIGTERM; {FUNCTIONAL}"
            )),
        "{se}"
    );
    assert!(!se.contains("was killed"), "{se}");
    // Stopped by the bound, not by the 5 s grace period's kill.
    assert!(
        sent.elapsed() < Duration::from_secs(5),
        "{:?}",
        sent.elapsed()
    );
    assert_eq!(read_json(&stats)["complete"], false);
}

/// With no CTA that waits (CTA 100000 does not exist), the same launch is sampled and
/// runs to its end under the same limits: the bound stops nothing the timed run finishes.
#[test]
fn a_sampled_launch_that_ends_is_not_stopped_by_the_bound() {
    let tmp = scratch("ends");
    let stats = tmp.join("s.json");
    let out = regsim_run(
        &tmp,
        &["--max-cycles", "200000", "--stats", stats.to_str().unwrap()],
        &["sampled", "100000"],
    )
    .output()
    .expect("regsim runs");
    let se = stderr(&out);
    assert!(out.status.success(), "{se}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("PASS"),
        "{se}"
    );
    let json = read_json(&stats);
    assert_eq!(json["complete"], true);
    let kernel = &json["kernels"][0];
    assert_eq!(kernel["sampling"]["method"], "ctas", "{kernel}");
    assert!(kernel["sampling"]["detailed_ctas"].as_u64().unwrap() < 8192 / 2);
    assert!(kernel["cycles"].as_u64().unwrap() < 200_000);
}

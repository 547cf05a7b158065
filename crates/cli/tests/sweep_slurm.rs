//! `regsim sweep --slurm` through a real Slurm: a small sweep (two workloads, two designs,
//! functional mode) submitted as a job array whose tasks write into the store, then the
//! same with per-task result files merged by `--collect`; `--status` is checked along the
//! way.
//!
//! Needs a running cluster whose default partition can run jobs on this host (the store
//! and the binaries are local paths): `scripts/local-slurm.sh` starts a one-node one, and
//! `scripts/test.sh` runs this test with `REGSIM_SLURM_TEST=1` after it. Without that
//! variable the test prints why it is skipped and passes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use regsim::sweep::{RunStatus, Store};

const ENABLE: &str = "REGSIM_SLURM_TEST";

fn enabled() -> bool {
    if std::env::var(ENABLE).as_deref() == Ok("1") {
        return true;
    }
    println!(
        "skipped: set {ENABLE}=1 with a Slurm cluster running on this host \
         (scripts/local-slurm.sh starts one; scripts/test.sh does both)"
    );
    false
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("sweep-slurm-{}", std::process::id()))
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

fn sweep(spec: &Path, store: &Path, more: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_regsim"))
        .arg("sweep")
        .arg(spec)
        .arg("--store")
        .arg(store)
        .args(more)
        .env_remove("REGSIM_CUDART")
        .env_remove("REGSIM_CONFIGS")
        .env_remove("REGSIM_WORKLOADS")
        .output()
        .expect("regsim runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn write_spec(dir: &Path) -> PathBuf {
    let spec = dir.join("spec.toml");
    std::fs::write(
        &spec,
        r#"
[sweep]
workloads = ["saxpy", "reduction"]
configs = ["gtx480"]
designs = ["baseline", "ideal"]
functional = true
"#,
    )
    .unwrap();
    spec
}

/// Polls `--status` until `done` points are done (or fails after two minutes).
fn wait_for(spec: &Path, store: &Path, want: &str) -> String {
    let start = Instant::now();
    loop {
        let out = sweep(spec, store, &["--status"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let status = text(&out.stdout);
        if status.contains(want) {
            return status;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "waited two minutes for `{want}`; status:\n{status}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

#[test]
fn sweep_through_a_local_slurm() {
    if !enabled() {
        return;
    }
    let dir = scratch("shared-store");
    let spec = write_spec(&dir);
    let store = dir.join("s.sqlite");
    let out = sweep(
        &spec,
        &store,
        &["--slurm", "--time", "00:10:00", "--mem", "1G"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let submitted = text(&out.stdout);
    assert!(submitted.contains("(4 tasks;"), "{submitted}");
    let job = submitted
        .split_whitespace()
        .nth(2)
        .expect("submitted job ID ...")
        .to_string();
    // Submitting again while they are queued or done submits nothing.
    let out = sweep(&spec, &store, &["--slurm"]);
    assert!(
        text(&out.stderr).contains("nothing to submit"),
        "{}",
        text(&out.stderr)
    );

    let status = wait_for(
        &spec,
        &store,
        "4 points: 4 done, 0 failed, 0 running, 0 pending",
    );
    assert!(status.contains(&format!("Slurm jobs: {job}")), "{status}");
    let rows = Store::open(&store).unwrap().records().unwrap();
    assert_eq!(rows.len(), 4);
    for r in &rows {
        assert_eq!(r.status, RunStatus::Ok, "{}", r.stderr_tail);
        let task = r.slurm_task.as_deref().expect("the Slurm task is recorded");
        assert!(task.starts_with(&format!("{job}_")), "{task}");
        assert!(r.stats.is_some());
    }
    // Every task logged to the job's directory.
    let logs = std::fs::read_dir(dir.join("s.sqlite.slurm/logs"))
        .unwrap()
        .count();
    assert_eq!(logs, 4);
}

#[test]
fn per_task_files_are_collected() {
    if !enabled() {
        return;
    }
    let dir = scratch("per-task");
    let spec = write_spec(&dir);
    let store = dir.join("s.sqlite");
    let out = sweep(&spec, &store, &["--slurm", "--per-task-files"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    wait_for(
        &spec,
        &store,
        "4 points: 0 done, 0 failed, 0 running, 0 pending, 4 uncollected",
    );
    assert!(Store::open(&store).unwrap().records().unwrap().is_empty());
    let out = sweep(&spec, &store, &["--collect"]);
    assert!(
        text(&out.stdout).contains("collected 4 results"),
        "{}",
        text(&out.stdout)
    );
    let rows = Store::open(&store).unwrap().records().unwrap();
    assert_eq!(rows.len(), 4);
    assert!(rows.iter().all(|r| r.status == RunStatus::Ok));
    let out = sweep(&spec, &store, &["--status"]);
    assert!(text(&out.stdout).starts_with("4 points: 4 done"));
}

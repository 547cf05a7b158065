//! `regsim sweep` as a user runs it: small sweeps (functional mode, two workloads) through
//! the built binary into a store, killed with SIGKILL halfway and resumed, with failing
//! and hanging points, exported to CSV and JSON. About 10 s of one core in all.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use regsim::sweep::{RunStatus, Store};

fn regsim() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_regsim"));
    cmd.env_remove("REGSIM_CUDART")
        .env_remove("REGSIM_CONFIGS")
        .env_remove("REGSIM_WORKLOADS");
    cmd
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("sweep-cli-{}", std::process::id()))
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn sweep(spec: &Path, store: &Path, more: &[&str]) -> Output {
    regsim()
        .arg("sweep")
        .arg(spec)
        .arg("--store")
        .arg(store)
        .args(more)
        .output()
        .expect("regsim runs")
}

fn write_script(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).expect("script written");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

fn workload(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../workloads/bin")
        .join(name)
}

/// Processes whose command line mentions `needle`.
fn processes_mentioning(needle: &str) -> Vec<String> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .chars()
                .all(|c| c.is_ascii_digit())
        })
        .filter_map(|e| {
            let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
            let cmdline = text(&cmdline).replace('\0', " ");
            cmdline.contains(needle).then_some(cmdline)
        })
        .collect()
}

#[test]
fn runs_every_point_resumes_and_exports() {
    let dir = scratch("basic");
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
    let store = dir.join("s.sqlite");
    let out = sweep(&spec, &store, &["-j", "2"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains("4 points; 0 already in the store; ran 4 (4 ok, 0 failed)"),
        "{err}"
    );
    // Without a terminal: one line per finished run.
    assert_eq!(
        err.lines().filter(|l| l.starts_with('[')).count(),
        4,
        "{err}"
    );

    let rows = Store::open(&store).unwrap().records().unwrap();
    assert_eq!(rows.len(), 4);
    for r in &rows {
        assert_eq!(r.status, RunStatus::Ok);
        assert_eq!(r.exit_code, Some(0));
        assert!(r.stdout_tail.contains("PASS"), "{}", r.stdout_tail);
        let stats = r.stats.as_ref().expect("statistics stored");
        assert_eq!(stats["mode"], "functional");
        assert_eq!(stats["program"]["exit_code"], 0);
        assert_eq!(
            r.resolved_config["register_file"]["design"],
            r.design.as_str()
        );
        assert!(r.regsim_version.starts_with("regsim "));
        assert!(r.wall_seconds > 0.0);
        let cpu = r.cpu_seconds.expect("CPU time recorded");
        assert!(cpu > 0.0 && cpu < r.wall_seconds + 1.0, "{cpu} s CPU");
    }

    // Rerunning does nothing and changes nothing.
    let out = sweep(&spec, &store, &[]);
    assert!(out.status.success());
    assert!(text(&out.stderr).contains("4 already in the store; ran 0"));
    assert_eq!(Store::open(&store).unwrap().records().unwrap(), rows);

    // Export: one row per run, in spec order (configs, designs, then workloads).
    let out = sweep(&spec, &store, &["--export", "csv"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let csv = text(&out.stdout);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 5, "{csv}");
    let header: Vec<&str> = lines[0].split(',').collect();
    let col = |name: &str| header.iter().position(|c| *c == name).unwrap();
    let cells: Vec<Vec<&str>> = lines[1..].iter().map(|l| l.split(',').collect()).collect();
    assert_eq!(cells[0][col("workload")], "saxpy");
    assert_eq!(cells[1][col("workload")], "reduction");
    assert_eq!(cells[0][col("design")], "baseline");
    assert_eq!(cells[2][col("design")], "ideal");
    assert_eq!(cells[0][col("mode")], "functional");
    // Functional mode: the design changes nothing, the workload everything; no cycles.
    let warp = |i: usize| cells[i][col("warp_instructions")].parse::<u64>().unwrap();
    assert_eq!(warp(0), warp(2));
    assert_eq!(warp(1), warp(3));
    assert_ne!(warp(0), warp(1));
    assert_eq!(cells[0][col("cycles")], "");

    let json_file = dir.join("s.json");
    let out = sweep(
        &spec,
        &store,
        &["--export", "json", "-o", json_file.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json_file).unwrap()).unwrap();
    assert_eq!(json.as_array().unwrap().len(), 4);
    assert_eq!(json[3]["warp_instructions"].as_u64(), Some(warp(3)));

    let out = sweep(&spec, &store, &["--status"]);
    assert!(
        text(&out.stdout).starts_with("4 points: 4 done, 0 failed"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn survives_sigkill_and_resumes_to_exactly_the_missing_points() {
    let dir = scratch("kill");
    // Each point sleeps before running saxpy, so the sweep is surely mid-run when killed.
    let slow = dir.join("slow_saxpy");
    write_script(
        &slow,
        &format!("sleep 0.4\nexec {}", workload("saxpy").display()),
    );
    let spec = dir.join("spec.toml");
    std::fs::write(
        &spec,
        r#"
[sweep]
workloads = ["./slow_saxpy", "./slow_saxpy 1", "./slow_saxpy 2", "./slow_saxpy 3",
             "./slow_saxpy 4", "./slow_saxpy 5"]
configs = ["gtx480"]
designs = ["baseline"]
functional = true
"#,
    )
    .unwrap();
    let store = dir.join("s.sqlite");
    let mut child = regsim()
        .arg("sweep")
        .arg(&spec)
        .arg("--store")
        .arg(&store)
        .args(["-j", "2"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait until some points are recorded, then kill -9 while others run.
    let start = Instant::now();
    let recorded = loop {
        let n = Store::open(&store)
            .and_then(|s| s.records())
            .map_or(0, |r| r.len());
        if n >= 2 {
            break n;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the sweep records nothing"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    // Every row the killed sweep left carries a checksum that matches.
    let (_, damaged) = Store::open_read_only(&store).unwrap().check().unwrap();
    assert!(damaged.is_empty(), "{damaged:?}");
    let before = Store::open(&store).unwrap().records().unwrap();
    assert!(
        before.len() >= recorded && before.len() < 6,
        "{} rows",
        before.len()
    );
    for r in &before {
        // Only complete rows: finished, with statistics.
        assert_eq!(r.status, RunStatus::Ok);
        assert!(r.stats.is_some());
    }
    // The simulations that were running died with the sweep.
    std::thread::sleep(Duration::from_millis(300));
    let left = processes_mentioning(slow.to_str().unwrap());
    assert!(left.is_empty(), "still running: {left:?}");

    let out = sweep(&spec, &store, &["-j", "2"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    let expect = format!(
        "6 points; {} already in the store; ran {}",
        before.len(),
        6 - before.len()
    );
    assert!(err.contains(&expect), "{err}");
    let after = Store::open(&store).unwrap().records().unwrap();
    assert_eq!(after.len(), 6);
    // The rows of the first sweep were not redone.
    for r in &before {
        assert!(after.contains(r), "{} was rewritten", r.key);
    }
}

#[test]
fn failures_and_timeouts_are_recorded_and_retried_on_request() {
    let dir = scratch("fail");
    let flag = dir.join("fixed");
    // Fails until `fixed` exists.
    write_script(
        &dir.join("flaky"),
        &format!(
            "if [ -e {} ]; then exec {}; fi\necho boom >&2\nexit 3",
            flag.display(),
            workload("saxpy").display()
        ),
    );
    let hang = dir.join("hang");
    write_script(&hang, "sleep 30\ntrue");
    let spec = dir.join("spec.toml");
    std::fs::write(
        &spec,
        r#"
[sweep]
workloads = ["./flaky", "./hang", "saxpy"]
configs = ["gtx480"]
designs = ["ideal"]
functional = true
timeout_seconds = 1.0
"#,
    )
    .unwrap();
    let store = dir.join("s.sqlite");
    let start = Instant::now();
    let out = sweep(&spec, &store, &[]);
    assert!(start.elapsed() < Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains("failed ./flaky | gtx480 | ideal | functional (exit 3)"),
        "{err}"
    );
    let rows = Store::open(&store).unwrap().records().unwrap();
    let by = |w: &str| rows.iter().find(|r| r.workload == w).unwrap();
    assert_eq!(by("./flaky").status, RunStatus::Failed);
    assert_eq!(by("./flaky").exit_code, Some(3));
    assert!(by("./flaky").stderr_tail.contains("boom"));
    assert_eq!(by("./hang").status, RunStatus::Timeout);
    assert!(by("./hang").wall_seconds < 5.0);
    // It slept: wall time passed, hardly any CPU time.
    let hung = by("./hang");
    assert!(
        hung.wall_seconds >= 1.0 && hung.cpu_seconds.unwrap() < 0.5,
        "{hung:?}"
    );
    assert_eq!(by("saxpy").status, RunStatus::Ok);
    // The timeout ended the whole run, the script's children included.
    let left = processes_mentioning(hang.to_str().unwrap());
    assert!(left.is_empty(), "still running: {left:?}");

    // A plain rerun does not retry failures, and exits as the first run did, listing them.
    let out = sweep(&spec, &store, &[]);
    let err = text(&out.stderr);
    assert!(err.contains("ran 0"), "{err}");
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("failed ./flaky [") && err.contains("(exit 3): "),
        "{err}"
    );
    assert!(err.contains("timeout ./hang ["), "{err}");
    // --retry-failed does: now flaky passes, hang times out again.
    std::fs::write(&flag, "").unwrap();
    let out = sweep(&spec, &store, &["--retry-failed"]);
    assert!(
        text(&out.stderr).contains("1 already in the store; ran 2 (1 ok, 1 failed)"),
        "{}",
        text(&out.stderr)
    );
    let rows = Store::open(&store).unwrap().records().unwrap();
    assert_eq!(rows.len(), 3);
    let by = |w: &str| rows.iter().find(|r| r.workload == w).unwrap();
    assert_eq!(by("./flaky").status, RunStatus::Ok);
    assert_eq!(by("./hang").status, RunStatus::Timeout);
}

#[test]
fn a_simulation_stopped_at_the_spec_timeout_keeps_its_statistics() {
    let dir = scratch("timeout-stats");
    let spec = dir.join("spec.toml");
    // Tens of seconds of simulation; the spec allows 2.
    std::fs::write(
        &spec,
        "[sweep]\nworkloads=['matvec_rows --large']\nconfigs=['gtx480']\n\
         designs=['baseline']\ntimeout_seconds=2.0\n",
    )
    .unwrap();
    let store = dir.join("s.sqlite");
    let out = sweep(&spec, &store, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let rows = Store::open(&store).unwrap().records().unwrap();
    let run = &rows[0];
    assert_eq!(run.status, RunStatus::Timeout, "{run:?}");
    assert_eq!(run.exit_code, Some(124), "{}", run.stderr_tail);
    assert!(
        run.stderr_tail
            .contains("stopped at the spec's timeout of 2 s"),
        "{}",
        run.stderr_tail
    );
    let stats = run.stats.as_ref().expect("the statistics up to the stop");
    assert_eq!(stats["complete"], serde_json::json!(false), "{stats}");
}

#[test]
fn bad_specs_are_refused_before_anything_runs() {
    let dir = scratch("bad");
    let spec = dir.join("spec.toml");
    std::fs::write(
        &spec,
        "[sweep]\nworkloads=['saxpy']\nconfigs=['gtx480']\ndesigns=['baseline']\n\
         [sweep.set]\n'sm.scheduler'=['gto','fastest']\n",
    )
    .unwrap();
    let store = dir.join("s.sqlite");
    let out = sweep(&spec, &store, &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("spec.toml") && err.contains("sm.scheduler=fastest"),
        "{err}"
    );
    // Nothing was created.
    assert!(!store.exists());
    assert!(Store::open(&store).unwrap().records().unwrap().is_empty());
    let out = sweep(&spec, &dir.join("typo.sqlite"), &["--status"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("no sweep store at"),
        "{}",
        text(&out.stderr)
    );
    assert!(!dir.join("typo.sqlite").exists());
    let out = sweep(&dir.join("missing.toml"), &store, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("missing.toml"));
    // Flags `regsim run` would refuse (a bad value, one the sweep passes itself) are
    // refused before any point runs, with the reason, instead of failing every point.
    for (run_args, says) in [
        (
            "'--max-cycles', 'abc'",
            "invalid value 'abc' for '--max-cycles",
        ),
        (
            "'--stats', 'x.json'",
            "'--stats <FILE.json>' cannot be used multiple times",
        ),
    ] {
        std::fs::write(
            &spec,
            format!(
                "[sweep]\nworkloads=['saxpy']\nconfigs=['gtx480']\ndesigns=['baseline']\n\
                 run_args=[{run_args}]\n"
            ),
        )
        .unwrap();
        let fresh = dir.join("run-args.sqlite");
        let out = sweep(&spec, &fresh, &[]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains("`regsim run` refuses its flags") && err.contains(says),
            "{err}"
        );
        assert!(!fresh.exists());
    }
    // A grid of a million points and more is refused before anything is expanded.
    let values: Vec<String> = (1..=1001).map(|v| v.to_string()).collect();
    std::fs::write(
        &spec,
        format!(
            "[sweep]\nworkloads=['saxpy']\nconfigs=['gtx480']\ndesigns=['baseline']\n\
             [sweep.set]\n'sm.issue_width'=[{0}]\n'sm.ibuffer_entries'=[{0}]\n",
            values.join(",")
        ),
    )
    .unwrap();
    let out = sweep(&spec, &store, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("expands to 1002001 points")
            && text(&out.stderr).contains("over the limit of 1000000"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn groups_run_each_point_once_and_a_bad_group_stops_the_sweep() {
    let dir = scratch("groups");
    let spec = dir.join("spec.toml");
    let groups = r#"
[[sweep]]
name = "designs"
workloads = ["saxpy"]
configs = ["gtx480"]
designs = ["baseline", "ideal"]
functional = true

[[sweep]]
name = "workloads"
workloads = ["saxpy", "reduction"]
configs = ["gtx480"]
designs = ["baseline"]
functional = true
"#;
    std::fs::write(&spec, groups).unwrap();
    let store = dir.join("s.sqlite");
    let out = sweep(&spec, &store, &["-j", "2"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // saxpy under the baseline is in both groups and runs once.
    let err = text(&out.stderr);
    assert!(
        err.contains("3 points; 0 already in the store; ran 3 (3 ok, 0 failed)"),
        "{err}"
    );
    let rows = Store::open(&store).unwrap().records().unwrap();
    let mut runs: Vec<(String, String)> = rows
        .iter()
        .map(|r| (r.workload.clone(), r.design.clone()))
        .collect();
    runs.sort();
    let pair = |w: &str, d: &str| (w.to_string(), d.to_string());
    assert_eq!(
        runs,
        [
            pair("reduction", "baseline"),
            pair("saxpy", "baseline"),
            pair("saxpy", "ideal")
        ]
    );
    assert!(rows.iter().all(|r| r.status == RunStatus::Ok));
    let out = sweep(&spec, &store, &[]);
    assert!(text(&out.stderr).contains("3 already in the store; ran 0"));
    let out = sweep(&spec, &store, &["--status"]);
    assert!(
        text(&out.stdout).starts_with("3 points: 3 done, 0 failed"),
        "{}",
        text(&out.stdout)
    );

    // A bad value in the last group stops the sweep before the first group runs.
    let bad = dir.join("bad.toml");
    std::fs::write(
        &bad,
        format!(
            "{groups}\n[[sweep]]\nname = \"fast\"\nworkloads = [\"saxpy\"]\n\
             configs = [\"gtx480\"]\ndesigns = [\"ideal\"]\n\
             [sweep.set]\n\"sm.scheduler\" = [\"fastest\"]\n"
        ),
    )
    .unwrap();
    let bad_store = dir.join("bad.sqlite");
    let out = sweep(&bad, &bad_store, &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("bad.toml: sweep[2] (\"fast\")") && err.contains("sm.scheduler=fastest"),
        "{err}"
    );
    assert!(Store::open(&bad_store)
        .unwrap()
        .records()
        .unwrap()
        .is_empty());
}

/// A workload script that logs `start KEY` to `log` and then runs saxpy; its argument is
/// the point's name.
fn counting_workload(dir: &Path, log: &Path) -> PathBuf {
    let script = dir.join("count");
    write_script(
        &script,
        &format!(
            "echo \"start $1\" >> {}\nsleep 0.3\nexec {}",
            log.display(),
            workload("saxpy").display()
        ),
    );
    script
}

fn counting_spec(dir: &Path, points: usize) -> PathBuf {
    let list: Vec<String> = (0..points).map(|i| format!("\"./count p{i}\"")).collect();
    let spec = dir.join("spec.toml");
    std::fs::write(
        &spec,
        format!(
            "[sweep]\nworkloads = [{}]\nconfigs = [\"gtx480\"]\ndesigns = [\"baseline\"]\n\
             functional = true\n",
            list.join(", ")
        ),
    )
    .unwrap();
    spec
}

fn starts(log: &Path) -> std::collections::BTreeMap<String, usize> {
    let mut m = std::collections::BTreeMap::new();
    for line in std::fs::read_to_string(log).unwrap_or_default().lines() {
        *m.entry(line.trim_start_matches("start ").to_owned())
            .or_default() += 1;
    }
    m
}

/// The temporary directory of the sweeps on `store` (and of their runs).
fn sweep_tmp(store: &Path) -> PathBuf {
    let tmp = store.with_extension("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    tmp
}

/// What is left in a temporary directory of [`sweep_tmp`].
fn leftovers(tmp: &Path) -> Vec<String> {
    let mut left: Vec<String> = std::fs::read_dir(tmp)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    left
}

fn spawn_sweep(spec: &Path, store: &Path) -> std::process::Child {
    regsim()
        .env("TMPDIR", sweep_tmp(store))
        .arg("sweep")
        .arg(spec)
        .arg("--store")
        .arg(store)
        .args(["-j", "2", "--no-progress"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn concurrent_sweeps_of_one_store_run_each_point_once() {
    let dir = scratch("concurrent");
    let log = dir.join("log");
    counting_workload(&dir, &log);
    let spec = counting_spec(&dir, 8);
    let store = dir.join("s.sqlite");
    let a = spawn_sweep(&spec, &store);
    std::thread::sleep(Duration::from_millis(200));
    let b = spawn_sweep(&spec, &store);
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    let (ea, eb) = (text(&a.stderr), text(&b.stderr));
    assert!(a.status.success() && b.status.success(), "{ea}\n---\n{eb}");
    let counts = starts(&log);
    assert_eq!(counts.len(), 8, "{counts:?}");
    assert!(
        counts.values().all(|&n| n == 1),
        "a point ran twice: {counts:?}"
    );
    // The later sweep said what the other one was doing and counted its points.
    assert!(
        eb.contains("being run by pid") && eb.contains("run by another sweep"),
        "{eb}"
    );
    let rows = Store::open(&store).unwrap().records().unwrap();
    assert_eq!(rows.len(), 8);
}

#[test]
fn a_sweep_killed_with_sigkill_leaves_its_points_to_the_other() {
    let dir = scratch("concurrent-kill");
    let log = dir.join("log");
    counting_workload(&dir, &log);
    let spec = counting_spec(&dir, 8);
    let store = dir.join("s.sqlite");
    let mut a = spawn_sweep(&spec, &store);
    // Kill -9 the first sweep once it runs points, while the second one is waiting.
    let start = Instant::now();
    while starts(&log).len() < 2 {
        assert!(start.elapsed() < Duration::from_secs(60), "nothing started");
        std::thread::sleep(Duration::from_millis(10));
    }
    let b = spawn_sweep(&spec, &store);
    std::thread::sleep(Duration::from_millis(100));
    a.kill().unwrap();
    a.wait().unwrap();
    // What was recorded before the kill is never run again.
    let done_before: Vec<String> = Store::open_read_only(&store)
        .unwrap()
        .records()
        .unwrap()
        .into_iter()
        .map(|r| r.workload)
        .collect();
    let b = b.wait_with_output().unwrap();
    let eb = text(&b.stderr);
    assert!(b.status.success(), "{eb}");
    let (statuses, damaged) = Store::open_read_only(&store).unwrap().check().unwrap();
    assert!(damaged.is_empty() && statuses.len() == 8, "{damaged:?}");
    let rows = Store::open(&store).unwrap().records().unwrap();
    assert_eq!(rows.len(), 8, "{eb}");
    let counts = starts(&log);
    assert_eq!(counts.len(), 8, "{counts:?}");
    // A point that finished before the kill never ran again; one the kill interrupted
    // ran twice at most (once in the killed sweep, once in the other).
    for w in &done_before {
        let point = w.trim_start_matches("./count ");
        assert_eq!(counts[point], 1, "{point} ran again: {counts:?}");
    }
    let twice = counts.values().filter(|&&n| n > 1).count();
    assert!(counts.values().all(|&n| n <= 2), "{counts:?}");
    assert!(
        twice <= 2,
        "more than the killed sweep's two in flight: {counts:?}"
    );
    // The killed sweep's directories (and its runs', killed with it) were removed by the
    // other's later runs: each is named after a process that is gone.
    assert_eq!(leftovers(&sweep_tmp(&store)), Vec::<String>::new());
}

#[test]
fn a_read_only_store_can_be_exported() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("readonly");
    let log = dir.join("log");
    counting_workload(&dir, &log);
    let spec = counting_spec(&dir, 2);
    let store = dir.join("s.sqlite");
    assert!(sweep(&spec, &store, &[]).status.success());
    std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o444)).unwrap();
    let out = sweep(&spec, &store, &["--export", "csv"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout).lines().count(),
        3,
        "{}",
        text(&out.stdout)
    );
    let out = sweep(&spec, &store, &["--status"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // `-o` onto the store (or the spec) overwrote it with the CSV and exited 0.
    for target in [&store, &spec] {
        let before = std::fs::read(target).unwrap();
        let out = sweep(
            &spec,
            &store,
            &["--export", "csv", "-o", target.to_str().unwrap()],
        );
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains("refusing to overwrite it with the export"),
            "{err}"
        );
        assert_eq!(std::fs::read(target).unwrap(), before);
    }
}

/// A damaged store (bytes of a row overwritten: a disk error, a bad copy) failed the
/// export with rusqlite's bare "invalid utf-8 sequence of 1 bytes from index 0 at index
/// 6": neither the store nor the run was named. Now the row's checksum fails: the store,
/// the run and the repair are named.
#[test]
fn a_damaged_store_is_named_with_the_run_it_cannot_read() {
    let dir = scratch("damaged");
    let log = dir.join("log");
    counting_workload(&dir, &log);
    let spec = counting_spec(&dir, 2);
    let store = dir.join("s.sqlite");
    assert!(sweep(&spec, &store, &[]).status.success());
    let conn = rusqlite::Connection::open(&store).unwrap();
    let damage = |sql: &str| conn.execute(sql, []).unwrap();
    damage("UPDATE runs SET sets = CAST(x'ff7b' AS TEXT)");
    for format in ["json", "csv"] {
        let out = sweep(&spec, &store, &["--export", format]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains(&format!(
                "{}: 2 damaged runs (a row that no longer matches the checksum written with \
                 it); refusing to use them",
                store.display()
            )) && err.contains(&format!("{}: run ", store.display()))
                && err.contains("(./count p0, gtx480, baseline) is damaged: its checksum"),
            "{err}"
        );
        assert!(out.stdout.is_empty());
    }
}

/// A row changed after it was written (by hand here; on disk, a bad sector) whose key
/// still reads used to count as done on a rerun, and its numbers were exported. Now
/// `--status` flags it, `--export` and `report` refuse it naming the store and the run,
/// and a rerun runs exactly that point again (the simulations counted), after which
/// everything exports.
#[test]
fn a_row_damaged_by_hand_is_run_again_and_refused_until_then() {
    let dir = scratch("damaged-row");
    let log = dir.join("log");
    counting_workload(&dir, &log);
    let spec = counting_spec(&dir, 3);
    let store = dir.join("s.sqlite");
    let out = sweep(&spec, &store, &["--no-progress"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let conn = rusqlite::Connection::open(&store).unwrap();
    // Valid JSON, another number: only the checksum can tell.
    let changed = conn
        .execute(
            "UPDATE runs SET stats = json_set(stats, '$.total.cycles', 1) \
             WHERE workload = './count p1'",
            [],
        )
        .unwrap();
    assert_eq!(changed, 1);
    drop(conn);
    let named = |err: &str| {
        err.contains(&store.display().to_string())
            && err
                .contains("(./count p1, gtx480, baseline) is damaged: its checksum does not match")
    };
    let out = sweep(&spec, &store, &["--status"]);
    let report = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        report.contains("2 done")
            && report.contains("1 damaged")
            && report.contains("damaged: ./count p1"),
        "{report}"
    );
    let out = sweep(&spec, &store, &["--export", "csv"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(named(&err) && err.contains("1 damaged run "), "{err}");
    let out = regsim()
        .arg("report")
        .arg("--html")
        .arg(dir.join("html"))
        .arg(&store)
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(named(&err), "{err}");
    // The rerun runs p1 again, and only p1.
    let out = sweep(&spec, &store, &["--no-progress"]);
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        named(&err) && err.contains("running it again") && err.contains("1 damaged row run again"),
        "{err}"
    );
    let counts = starts(&log);
    assert_eq!(
        counts.values().copied().collect::<Vec<_>>(),
        [1, 2, 1],
        "{counts:?}"
    );
    let out = sweep(&spec, &store, &["--export", "csv"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).lines().count(), 4);
    // A third run has nothing to do.
    let out = sweep(&spec, &store, &["--no-progress"]);
    assert!(text(&out.stderr).contains("3 already in the store; ran 0"));
}

#[test]
fn a_slurm_task_skips_a_point_a_local_sweep_is_running() {
    let dir = scratch("task-lease");
    let log = dir.join("log");
    counting_workload(&dir, &log);
    let spec = counting_spec(&dir, 2);
    let store = dir.join("s.sqlite");
    let a = regsim()
        .arg("sweep")
        .arg(&spec)
        .arg("--store")
        .arg(&store)
        .args(["-j", "1", "--no-progress"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while starts(&log).is_empty() {
        assert!(start.elapsed() < Duration::from_secs(60), "nothing started");
        std::thread::sleep(Duration::from_millis(10));
    }
    // The task for the point the local sweep runs (p0) leaves it alone.
    let out = sweep(&spec, &store, &["--run-point", "0"]);
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("is being run by pid") && err.contains("skipping it"),
        "{err}"
    );
    assert!(a.wait_with_output().unwrap().status.success());
    let out = sweep(&spec, &store, &["--run-point", "1"]);
    assert!(
        text(&out.stderr).contains("is already done"),
        "{}",
        text(&out.stderr)
    );
    let counts = starts(&log);
    assert_eq!(counts.len(), 2, "{counts:?}");
    assert!(counts.values().all(|&n| n == 1), "{counts:?}");
}

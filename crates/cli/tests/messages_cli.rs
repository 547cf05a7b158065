//! Exit statuses and messages that tell the truth (issue 26 §4), one test per case:
//! `--stats` into a missing directory, an unknown `--set` key, normalized paths, an I/O
//! error said once. (`ptx check` on a file without `.version`/`.target` is in
//! `compile_cli.rs`.)

mod common;

use std::path::Path;
use std::process::Output;

use common::{regsim, repo_root};

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn saxpy() -> String {
    repo_root()
        .join("workloads/bin/saxpy")
        .display()
        .to_string()
}

#[test]
fn stats_into_a_missing_directory_fail_before_the_program_runs() {
    let out = regsim(&[
        "run",
        "--stats",
        "/nonexistent-regsim-dir/s.json",
        "--",
        &saxpy(),
    ]);
    let se = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{se}");
    assert_eq!(
        se.trim_end(),
        "error: --stats /nonexistent-regsim-dir/s.json: /nonexistent-regsim-dir does not \
         exist"
    );
    // Nothing ran: no PASS, no kernel line.
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    // A file where the directory should be was said not to exist.
    let out = regsim(&["run", "--stats", "/etc/passwd/s.json", "--", &saxpy()]);
    let se = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{se}");
    assert_eq!(
        se.trim_end(),
        "error: --stats /etc/passwd/s.json: /etc/passwd is not a directory"
    );
}

/// `--stats` replaces a file that is there, and only a file: a device or a link to one
/// is refused before the program runs, and left as it was (as root, `--stats /dev/null`
/// used to replace the device with a file).
#[test]
fn stats_onto_a_device_or_a_directory_are_refused_and_left_alone() {
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("msg-dev-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch");
    let link = dir.join("to-null");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink("/dev/null", &link).expect("symlink");
    // The path is shown resolved (the link's target).
    let device = "is a device, a pipe or a socket, not a file";
    for (path, shown, what) in [
        ("/dev/null", "/dev/null", device),
        (link.to_str().unwrap(), "/dev/null", device),
        (
            dir.to_str().unwrap(),
            dir.to_str().unwrap(),
            "is a directory, not a file",
        ),
    ] {
        let out = regsim(&["run", "--stats", path, "--", &saxpy()]);
        let se = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{path}: {se}");
        assert!(
            se.contains(&format!("error: --stats {shown}: {what}")),
            "{se}"
        );
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "",
            "{path}: nothing ran"
        );
    }
    let out = regsim(&["run", "--", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("is a directory, not a program"),
        "{}",
        stderr(&out)
    );
    use std::os::unix::fs::FileTypeExt;

    assert!(std::fs::metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device());
    assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
}

#[test]
fn stats_the_runtime_cannot_write_are_a_failure() {
    // The runtime is told to write into a directory that does not exist (as if it
    // vanished during the run); `regsim run` must not exit 0.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("msg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch");
    let script = dir.join("runs_saxpy_elsewhere");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nREGSIM_STATS=/nonexistent-regsim-dir/s.json exec {}\n",
            saxpy()
        ),
    )
    .expect("script");
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let stats = dir.join("s.json");
    let out = regsim(&[
        "run",
        "--stats",
        stats.to_str().unwrap(),
        "--",
        script.to_str().unwrap(),
    ]);
    let se = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{se}");
    assert!(
        se.contains("regsim: cannot write stats to /nonexistent-regsim-dir/s.json: "),
        "{se}"
    );
    assert!(
        se.contains(&format!(
            "regsim: no statistics were written to {}",
            stats.display()
        )),
        "{se}"
    );
    assert!(!se.contains("did not load"), "{se}");
}

#[test]
fn an_unknown_set_key_is_reported_as_the_flags() {
    let out = regsim(&["run", "--set", "sm.warpz=4", "--", &saxpy()]);
    let se = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{se}");
    assert!(
        se.starts_with(
            "error: invalid GPU configuration: --set sm.warpz=4: sm.warpz: unknown field `warpz`"
        ),
        "{se}"
    );
    assert!(!se.contains(".toml"), "the config file is not blamed: {se}");
    let out = regsim(&["run", "--rf", "nosuch", "--", &saxpy()]);
    let se = stderr(&out);
    assert!(
        se.starts_with(
            "error: invalid GPU configuration: --rf nosuch: register_file.design: unknown \
             variant `nosuch`"
        ),
        "{se}"
    );
    // A key the file has wrong is still the file's.
    let bad = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bad-key.toml");
    let text = std::fs::read_to_string(repo_root().join("configs/gtx480.toml"))
        .expect("gtx480.toml")
        .replacen("[sm]", "[sm]\nwarpz = 4", 1);
    std::fs::write(&bad, text).expect("config");
    let out = regsim(&["run", "--gpu", bad.to_str().unwrap(), "--", &saxpy()]);
    let se = stderr(&out);
    assert!(se.contains("bad-key.toml: sm.warpz: unknown field"), "{se}");
}

#[test]
fn paths_are_shown_normalized() {
    // A config path with `..` is recorded, and shown, without it.
    let dotted = repo_root().join("configs/../configs/gtx480.toml");
    let stats = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("normalized-{}.json", std::process::id()));
    let out = regsim(&[
        "run",
        "--functional",
        "--gpu",
        dotted.to_str().unwrap(),
        "--stats",
        stats.to_str().unwrap(),
        "--",
        &saxpy(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&stats).expect("stats")).expect("JSON");
    let selector = json["gpu"]["selector"].as_str().expect("a selector");
    assert!(selector.ends_with("/configs/gtx480.toml"), "{selector}");
    assert!(!selector.contains(".."), "{selector}");
    let out = regsim(&["run", "--gpu", "nosuch", "--", &saxpy()]);
    let se = stderr(&out);
    assert!(se.contains("no GPU config named `nosuch`"), "{se}");
    assert!(!se.contains(".."), "{se}");
}

#[test]
fn an_io_error_is_said_once() {
    let out = regsim(&[
        "correlate",
        "--reference",
        "/nonexistent-regsim-dir",
        "/nonexistent-regsim-dir/s.json",
    ]);
    let se = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{se}");
    let cause = std::io::Error::from(std::io::ErrorKind::NotFound).to_string();
    assert!(se.contains("/nonexistent-regsim-dir"), "{se}");
    assert_eq!(
        se.matches("No such file or directory").count(),
        1,
        "{se} ({cause})"
    );
}

/// A `--stats` path that is not UTF-8 (a file name is any bytes but '/' and NUL) names
/// that file: the runtime read it lossily and wrote the statistics to a file whose bad
/// bytes were replaced by U+FFFD, and `regsim run` then said no statistics were written
/// (exit 2).
#[test]
fn stats_at_a_path_that_is_not_utf8_are_written_there() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("msg-utf8-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");
    let stats = dir.join(OsStr::from_bytes(b"s\xff.json"));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_regsim"))
        .args(["run", "--functional", "--stats"])
        .arg(&stats)
        .arg("--")
        .arg(saxpy())
        .env_remove("REGSIM_CUDART")
        .env_remove("REGSIM_CONFIGS")
        .output()
        .expect("regsim runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let written: Vec<_> = std::fs::read_dir(&dir)
        .expect("list")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(written, vec![stats.file_name().unwrap().to_owned()]);
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&stats).expect("written")).expect("JSON");
    assert!(json.is_object());
}

/// Output that cannot be written (a full disk: `/dev/full`) is an error naming stdout:
/// `println!` panicked (exit 101, a backtrace) in `report`, `sweep --status`,
/// `correlate`, `calibrate` and `paper`.
#[test]
fn stdout_on_a_full_disk_is_an_error_not_a_panic() {
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("msg-full-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch");
    let stats = dir.join("s.json");
    let out = regsim(&[
        "run",
        "--functional",
        "--stats",
        stats.to_str().unwrap(),
        "--",
        &saxpy(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_regsim"))
        .args(["report", stats.to_str().unwrap()])
        .stdout(full)
        .output()
        .expect("regsim runs");
    let se = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{se}");
    assert!(
        se.contains("error: cannot write to stdout: No space left on device"),
        "{se}"
    );
    assert!(!se.contains("panicked"), "{se}");
}

/// `--max-instructions` in functional mode bounded nothing and said nothing: the largest
/// legal grid ran until killed. It bounds the run now (`functional_limits_cli.rs`), and
/// `--max-cycles`, which cannot, is said not to apply.
#[test]
fn limits_of_timing_mode_are_said_to_be_ignored_in_functional_mode() {
    let out = regsim(&["run", "--functional", "--max-cycles", "5", "--", &saxpy()]);
    let se = stderr(&out);
    assert!(out.status.success(), "{se}");
    assert!(
        se.contains("regsim: warning: --max-cycles bounds timing mode only"),
        "{se}"
    );
    let out = regsim(&[
        "run",
        "--functional",
        "--max-instructions",
        "5",
        "--",
        &saxpy(),
    ]);
    let se = stderr(&out);
    assert_eq!(out.status.code(), Some(124), "{se}");
    assert!(!se.contains("warning: --max-cycles"), "{se}");
    let out = regsim(&["run", "--functional", "--", &saxpy()]);
    assert!(!stderr(&out).contains("warning: --max-cycles"));
}

/// `--stats ./app -- ./app` deleted the program (the stale statistics file is removed
/// before the run), and `--stats` onto the config file deleted the config.
#[test]
fn stats_onto_the_program_or_the_config_are_refused() {
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("msg-self-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch");
    let program = dir.join("saxpy");
    std::fs::copy(saxpy(), &program).expect("copy");
    let p = program.display().to_string();
    let out = regsim(&["run", "--functional", "--stats", &p, "--", &p]);
    let se = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{se}");
    assert!(
        se.contains(&format!(
            "--stats {p}: is the program to run; refusing to replace it"
        )),
        "{se}"
    );
    assert_eq!(
        std::fs::read(&program).expect("the program is still there"),
        std::fs::read(saxpy()).unwrap()
    );
    let config = dir.join("gpu.toml");
    std::fs::copy(repo_root().join("configs/gtx480.toml"), &config).expect("copy");
    let c = config.display().to_string();
    let out = regsim(&["run", "--gpu", &c, "--stats", &c, "--", &saxpy()]);
    let se = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{se}");
    assert!(se.contains("is the GPU config; refusing"), "{se}");
    assert!(config.is_file());
}

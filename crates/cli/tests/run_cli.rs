//! `regsim run` as a user runs it: the built binary running unmodified nvcc-built programs
//! (the committed workload binaries and the bad-input programs in `tests/programs/`) on
//! regsim's CUDA runtime.
//!
//! The runtime library is the `cudart` crate's cdylib; it is a dev-dependency of this
//! package, so cargo builds it (into `target/<profile>/deps/`, where `regsim run` also
//! looks) before these tests run.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn program(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/programs/bin")
        .join(name)
}

fn regsim_run(args: &[&str], program: &Path, program_args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_regsim"))
        .arg("run")
        .args(args)
        .arg("--")
        .arg(program)
        .args(program_args)
        .env_remove("REGSIM_CUDART")
        .output()
        .expect("the regsim binary runs")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("run-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir.join(name)
}

fn workloads() -> Vec<PathBuf> {
    let dir = repo_root().join("workloads/bin");
    let mut bins: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.is_file())
        .collect();
    bins.sort();
    assert!(
        !bins.is_empty(),
        "no workload binaries in {}",
        dir.display()
    );
    bins
}

/// Runs a workload with `--stats`, asserts PASS and exit 0, and checks the statistics file
/// against the per-kernel lines on stderr.
fn assert_passes(bin: &Path, args: &[&str]) {
    let name = bin.file_name().unwrap().to_string_lossy().into_owned();
    let stats_path = scratch(&format!("{name}{}.json", args.join("")));
    let out = regsim_run(&["--stats", stats_path.to_str().unwrap()], bin, args);
    let (so, se) = (stdout(&out), stderr(&out));
    assert_eq!(
        so.lines().last(),
        Some("PASS"),
        "{name} {args:?}: stdout:\n{so}\nstderr:\n{se}"
    );
    assert_eq!(out.status.code(), Some(0), "{name} {args:?}: {se}");
    let kernel_lines: Vec<&str> = se
        .lines()
        .filter(|l| l.starts_with("regsim: kernel "))
        .collect();
    assert!(!kernel_lines.is_empty(), "{name}: no kernel lines: {se}");
    assert_eq!(
        kernel_lines.len(),
        se.lines().count(),
        "{name}: unexpected stderr: {se}"
    );

    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(&stats_path).expect("the stats file is written"),
    )
    .expect("the stats file is JSON");
    let kernels = json["kernels"].as_array().expect("a kernels list");
    assert_eq!(kernels.len(), kernel_lines.len(), "{name}");
    let mut warp_sum = 0;
    for (k, line) in kernels.iter().zip(&kernel_lines) {
        let warp = k["warp_instructions"].as_u64().expect("warp_instructions");
        let thread = k["thread_instructions"]
            .as_u64()
            .expect("thread_instructions");
        assert!(
            warp > 0 && thread >= warp && thread <= 32 * warp,
            "{name}: {k}"
        );
        let kname = k["name"].as_str().expect("name");
        assert!(
            line.starts_with(&format!("regsim: kernel {kname} grid ")),
            "{name}: {line} vs {k}"
        );
        assert!(line.ends_with(&format!(
            ": {warp} warp instructions, {thread} thread instructions"
        )));
        assert!(k["mangled"].as_str().is_some_and(|m| !m.is_empty()));
        warp_sum += warp;
    }
    assert_eq!(
        json["total"]["kernels"].as_u64(),
        Some(kernels.len() as u64)
    );
    assert_eq!(json["total"]["warp_instructions"].as_u64(), Some(warp_sum));
}

#[test]
fn every_workload_passes() {
    for bin in workloads() {
        assert_passes(&bin, &[]);
    }
}

#[test]
fn larger_inputs_pass() {
    // The cheaper --large sizes (about a million warp instructions each).
    for name in [
        "reduction",
        "histogram",
        "atomics_cas",
        "transpose",
        "kmeans",
    ] {
        assert_passes(&repo_root().join("workloads/bin").join(name), &["--large"]);
    }
}

#[test]
fn names_are_demangled_in_lines_and_stats() {
    let stats = scratch("transpose-names.json");
    let out = regsim_run(
        &["--functional", "--stats", stats.to_str().unwrap()],
        &repo_root().join("workloads/bin/transpose"),
        &[],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("regsim: kernel void transpose_tiled<1>(float const*, float*, int, int) grid (8,6,1) block (32,8,1): "),
        "{}",
        stderr(&out)
    );
    let json = std::fs::read_to_string(&stats).unwrap();
    assert!(
        json.contains(r#""name": "void transpose_tiled<1>(float const*, float*, int, int)", "mangled": "_Z15transpose_tiledILi1EEvPKfPfii""#),
        "{json}"
    );
}

/// The PTX embedded in an nvcc-built program (the compute_70 entry of `.nv_fatbin`).
fn embedded_ptx(bin: &Path) -> String {
    let file = std::fs::read(bin).unwrap();
    let u16_at = |o: usize| u16::from_le_bytes(file[o..o + 2].try_into().unwrap()) as usize;
    let u32_at = |o: usize| u32::from_le_bytes(file[o..o + 4].try_into().unwrap()) as usize;
    let u64_at = |o: usize| u64::from_le_bytes(file[o..o + 8].try_into().unwrap()) as usize;
    let (shoff, shentsize, shnum) = (u64_at(0x28), u16_at(0x3a), u16_at(0x3c));
    let names = u64_at(shoff + u16_at(0x3e) * shentsize + 0x18);
    let section = (0..shnum)
        .map(|i| shoff + i * shentsize)
        .find(|&sh| file[names + u32_at(sh)..].starts_with(b".nv_fatbin\0"))
        .expect(".nv_fatbin section");
    let (off, size) = (u64_at(section + 0x18), u64_at(section + 0x20));
    let fatbins = cudart::fatbin::FatBinary::parse_section(&file[off..off + size]).unwrap();
    fatbins
        .iter()
        .find_map(|f| f.select_ptx(70).ok()?.entry.ptx_text().ok())
        .expect("compute_70 PTX")
}

#[test]
fn an_out_of_bounds_store_is_located_and_sticky() {
    let bin = program("oob_store");
    let out = regsim_run(&[], &bin, &[]);
    let (so, se) = (stdout(&out), stderr(&out));
    // The program checks the codes itself (exit 0) and prints them.
    assert_eq!(out.status.code(), Some(0), "stdout:\n{so}\nstderr:\n{se}");
    assert!(so.contains("sync: cudaErrorIllegalAddress\n"), "{so}");
    assert!(so.contains("malloc: cudaErrorIllegalAddress\n"), "{so}");
    // Printed once, naming kernel, PTX line and instruction, CTA, thread and address.
    assert_eq!(se.lines().count(), 1, "{se}");
    let prefix = "regsim: kernel fault: kernel fill(float*, int), PTX line ";
    let rest = se.strip_prefix(prefix).unwrap_or_else(|| panic!("{se}"));
    let (line, rest) = rest.split_once(' ').unwrap();
    let line: usize = line.parse().unwrap();
    let ptx = embedded_ptx(&bin);
    let ptx_line = ptx.lines().nth(line - 1).unwrap().trim();
    assert!(
        ptx_line.starts_with("st.global"),
        "line {line} is {ptx_line:?}"
    );
    assert!(
        rest.starts_with(&format!(
            "({ptx_line}), CTA (1,0,0), thread (36,0,0), address 0x"
        )),
        "{se}"
    );
    assert!(se.contains("is outside every allocation"), "{se}");
}

#[test]
fn an_unsupported_call_is_one_line_and_an_error() {
    let out = regsim_run(&[], &program("unsupported_api"), &[]);
    let (so, se) = (stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(0), "stdout:\n{so}\nstderr:\n{se}");
    assert_eq!(so, "capture: cudaErrorNotSupported\nkernel: 1\n");
    let lines: Vec<&str> = se.lines().collect();
    assert_eq!(
        lines[0],
        "regsim: cudaStreamBeginCapture is not supported by the simulator"
    );
    assert_eq!(lines.len(), 2, "{se}");
    assert!(lines[1].starts_with("regsim: kernel one(int*) grid (1,1,1) block (1,1,1): "));
}

#[test]
fn programs_that_cannot_use_the_runtime_are_refused_with_the_fix() {
    // The test executable itself: an ELF program with no CUDA in it.
    let me = std::env::current_exe().unwrap();
    let out = regsim_run(&[], &me, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("is not a CUDA program"),
        "{}",
        stderr(&out)
    );

    let out = regsim_run(&[], &program("static_cudart"), &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("linked in statically")
            && stderr(&out).contains("nvcc -cudart shared"),
        "{}",
        stderr(&out)
    );

    let out = regsim_run(&[], Path::new("./no-such-program"), &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("program not found: ./no-such-program"),
        "{}",
        stderr(&out)
    );

    let text = repo_root().join("workloads/README.md");
    let out = regsim_run(&[], &text, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("is not an executable program"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_missing_runtime_library_says_how_to_build_it() {
    let out = Command::new(env!("CARGO_BIN_EXE_regsim"))
        .args(["run", "--"])
        .arg(repo_root().join("workloads/bin/saxpy"))
        .env("REGSIM_CUDART", "/nonexistent/libcudart.so")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("REGSIM_CUDART=/nonexistent/libcudart.so does not name a file"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn exit_status_and_environment_pass_through() {
    use std::os::unix::fs::PermissionsExt;
    let script = scratch("env.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\n\
         echo \"mode=$REGSIM_MODE stats=$REGSIM_STATS gpu=$REGSIM_GPU\"\n\
         test -e \"${LD_LIBRARY_PATH%%:*}/libcudart.so.11.0\" || exit 9\n\
         read line; echo \"stdin=$line\"\n\
         case \"$1\" in signal) kill -TERM $$ ;; *) exit \"$1\" ;; esac\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let gpu = repo_root().join("Cargo.toml");
    let run = |arg: &str| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_regsim"))
            .arg("run")
            .arg("--gpu")
            .arg(&gpu)
            .arg("--")
            .arg(&script)
            .arg(arg)
            .env("REGSIM_STATS", "/should/be/removed")
            .env_remove("REGSIM_CUDART")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child.stdin.take().unwrap().write_all(b"hello\n").unwrap();
        child.wait_with_output().unwrap()
    };
    let out = run("7");
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
    let gpu_abs = std::path::absolute(&gpu).unwrap();
    assert_eq!(
        stdout(&out),
        format!(
            "mode=functional stats= gpu={}\nstdin=hello\n",
            gpu_abs.display()
        )
    );
    let out = run("signal");
    assert_eq!(out.status.code(), Some(128 + 15), "SIGTERM is 128 + 15");
}

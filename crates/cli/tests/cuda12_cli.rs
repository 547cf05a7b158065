//! CUDA 12 programs and the driver API under `regsim run` (docs/cuda12.md): the committed
//! programs in `tests/programs/bin/` built by clang-19 against the CUDA 12.9 directory of
//! scripts/install-cuda12-toolchain.sh, which load `libcudart.so.12`.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn program(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/programs/bin")
        .join(name)
}

fn regsim_run(args: &[&str], program: &Path) -> Output {
    let program = program.to_str().expect("a UTF-8 path");
    let all: Vec<&str> = ["run"]
        .iter()
        .chain(args)
        .chain(&["--", program])
        .copied()
        .collect();
    common::regsim(&all)
}

/// `regsim run --gpu GPU MODE -- PROGRAM`, which must exit 0: its stdout and stderr.
fn run_ok(program: &Path, gpu: &str, mode: &str) -> (String, String) {
    let out = regsim_run(&["--gpu", gpu, mode], program);
    let (so, se) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{gpu}\nstdout:\n{so}\nstderr:\n{se}"
    );
    (so, se)
}

/// `exe` prints PASS under each (GPU, mode), and regsim reports its `kernel`.
fn passes(exe: &Path, runs: &[(&str, &str)], kernel: &str) {
    for &(gpu, mode) in runs {
        let (so, se) = run_ok(exe, gpu, mode);
        assert!(so.ends_with("PASS\n"), "{gpu} {mode}: {so}");
        assert!(
            se.contains(&format!("regsim: kernel {kernel}(")),
            "{gpu} {mode}: {se}"
        );
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn a_cuda_12_program_loads_the_runtime_as_libcudart_so_12() {
    let exe = program("cuda12_runtime");
    let file = std::fs::read(&exe).expect("committed program");
    // The program really is a CUDA 12 one: it imports the CUDA 12 version node.
    assert!(
        file.windows(15).any(|w| w == b"libcudart.so.12"),
        "cuda12_runtime does not reference libcudart.so.12"
    );
    for (gpu, mode, capability) in [
        ("h100", "--functional", "9.0"),
        ("rtx-a6000", "--summary", "8.6"),
    ] {
        let (so, se) = run_ok(&exe, gpu, mode);
        assert!(so.ends_with("PASS\n"), "{so}");
        assert!(!so.contains("FAILED"), "{so}");
        assert!(so.contains("runtime 12090 driver 12090"), "{so}");
        assert!(
            so.contains(&format!("compute capability {capability}")),
            "{so}"
        );
        // Three launches ran; the cluster launch was refused with one line saying why.
        assert_eq!(
            se.matches("regsim: kernel axpy(").count() - se.matches("launch refused").count(),
            3,
            "{se}"
        );
        let why = if gpu == "h100" {
            "launch refused: grid (4,1,1) is not a whole number of 3x1x1 clusters"
        } else {
            "launch refused: thread-block clusters (3x1x1 CTAs) need compute capability 9.0 or \
             newer; this GPU is 8.6"
        };
        assert!(se.contains(why), "{se}");
    }
}

#[test]
fn the_retagged_copy_carries_the_cuda_12_version_node() {
    // The run writes it beside the runtime library it uses.
    let out = regsim_run(&["--functional"], &program("cuda12_runtime"));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_regsim"));
    let dir = bin.parent().expect("target/<profile>");
    let copy = [dir.join("regsim-cuda12"), dir.join("deps/regsim-cuda12")]
        .into_iter()
        .map(|d| d.join("libcudart.so.12"))
        .filter(|p| p.exists())
        .max_by_key(|p| p.metadata().and_then(|m| m.modified()).ok())
        .expect("regsim run left the retagged runtime beside the library");
    let Ok(dump) = Command::new("objdump").arg("-T").arg(&copy).output() else {
        eprintln!("skipped the symbol check: objdump not installed");
        return;
    };
    let dump = text(&dump.stdout);
    let line = dump
        .lines()
        .find(|l| l.ends_with(" cudaMalloc"))
        .expect("cudaMalloc exported");
    assert!(line.contains("libcudart.so.12"), "{line}");
    assert!(
        !dump.contains("libcudart.so.11.0"),
        "an 11.0 version is left"
    );
    let dynamic = Command::new("objdump")
        .arg("-p")
        .arg(&copy)
        .output()
        .unwrap();
    assert!(
        text(&dynamic.stdout).contains("SONAME               libcudart.so.12"),
        "{}",
        text(&dynamic.stdout)
    );
}

#[test]
fn a_script_finds_every_soname() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("sonames.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\n\
         d=\"${LD_LIBRARY_PATH%%:*}\"\n\
         for n in libcudart.so.11.0 libcudart.so.12 libcuda.so.1; do test -e \"$d/$n\" || exit 9; done\n\
         # The driver API shares the file of the CUDA 11 runtime (scripts may start either).\n\
         test \"$(readlink -f \"$d/libcuda.so.1\")\" = \"$(readlink -f \"$d/libcudart.so.11.0\")\" || exit 8\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = regsim_run(&["--functional"], &script);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

#[test]
fn a_driver_api_program_loads_ptx_at_run_time() {
    // `driver_api` links libcuda.so.1 only (no CUDA runtime, no device code in the file).
    let exe = program("driver_api");
    for (gpu, mode, capability) in [
        ("gtx480", "--functional", "7.0"),
        ("rtx-a6000", "--summary", "8.6"),
    ] {
        let (so, se) = run_ok(&exe, gpu, mode);
        assert_eq!(
            so,
            format!(
                "device regsim {gpu} (simulated), compute capability {capability}\n\
                 bad PTX: CUDA_ERROR_INVALID_PTX\nPASS\n"
            )
        );
        // The bad module's error names the line; the good kernel ran once.
        assert!(se.contains("error: unknown opcode 'frobnicate'"), "{se}");
        assert_eq!(
            se.matches("regsim: kernel scale grid (8,1,1)").count(),
            1,
            "{se}"
        );
    }
}

#[test]
fn a_warp_specialised_sm_90a_program_with_setmaxnreg_passes() {
    // clang-19's PTX for sm_90a (build.sh): the producer warpgroup's setmaxnreg.dec gives
    // the consumers the registers their setmaxnreg.inc takes, from a launch count of 168.
    let exe = program("warp_specialized");
    passes(
        &exe,
        &[
            ("h100", "--summary"),
            ("h100", "--functional"),
            ("qv100", "--summary"),
        ],
        "scale_rows",
    );
    // 168 registers x 384 threads do not fit gtx480's 32 K registers: refused, not run.
    let out = regsim_run(&["--gpu", "gtx480"], &exe);
    let se = text(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{se}");
    assert!(se.contains("168"), "{se}");
}

#[test]
fn a_bulk_copy_program_passes_in_timing_and_functional_mode() {
    // clang-19's PTX for sm_90 (build.sh): cp.async.bulk into shared memory on an
    // mbarrier, and back out in a bulk group.
    passes(
        &program("bulk_copy"),
        &[
            ("h100", "--summary"),
            ("h100", "--functional"),
            ("gtx480", "--summary"),
        ],
        "scale",
    );
}

#[test]
fn a_tma_program_passes_under_every_design() {
    // clang-19's PTX for sm_90a (build.sh): tile transpositions through tensor maps from
    // cuTensorMapEncodeTiled (by cudaGetDriverEntryPoint), swizzles none/32/64/128 B,
    // zero fill past the matrix's edges and stores clipped at them.
    let exe = program("tma");
    passes(
        &exe,
        &[("h100", "--functional"), ("gtx480", "--summary")],
        "void transpose<16, 8, 0, 0>",
    );
    // The program's one bad map is refused with the rule it breaks.
    let (_, se) = run_ok(&exe, "h100", "--functional");
    assert!(
        se.contains("regsim: cuTensorMapEncodeTiled: boxDim[0] = 300 is not from 1 to 256"),
        "{se}"
    );
    for design in common::DESIGNS {
        let out = regsim_run(&["--gpu", "h100", "--rf", design], &exe);
        let so = text(&out.stdout);
        assert!(
            so.ends_with("PASS\n"),
            "{design}: {so}{}",
            text(&out.stderr)
        );
    }
}

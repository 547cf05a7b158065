//! Launches of absurd sizes, as a hostile user makes them (issue 26): PTX loaded at run
//! time through the driver API by `tests/programs/bin/launch_probe` (plain C; it prints
//! each call's result), each under a 4 GB address-space limit so that an allocation of
//! the absurd size would abort the run instead of passing unnoticed. Each is refused with
//! a line naming the kernel and the limit, or bounded by the run limits; none aborts.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("absurd-sizes-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

/// `regsim run [ARGS] -- launch_probe PTX KERNEL LAUNCH...` under `ulimit -v 4000000`.
fn probe(dir: &Path, args: &[&str], ptx: &str, kernel: &str, launch: &[&str]) -> Output {
    let file = dir.join(format!("{kernel}.ptx"));
    std::fs::write(&file, ptx).unwrap();
    let program = repo_root().join("crates/cli/tests/programs/bin/launch_probe");
    Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 4000000 && exec \"$@\"")
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_regsim"))
        .arg("run")
        .args(args)
        .arg("--")
        .arg(program)
        .arg(&file)
        .arg(kernel)
        .args(launch)
        .env("TMPDIR", dir)
        .env("RUST_BACKTRACE", "0")
        .env_remove("REGSIM_CUDART")
        .env_remove("REGSIM_CONFIGS")
        .output()
        .expect("regsim runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Neither an abort nor a panic.
fn no_abort(out: &Output) {
    let err = text(&out.stderr);
    assert!(
        !err.contains("memory allocation of") && !err.contains("panicked"),
        "{err}"
    );
    assert_ne!(out.status.code(), Some(134), "{err}");
    assert_ne!(out.status.code(), Some(101), "{err}");
}

const HEAD: &str = ".version 7.0\n.target sm_70\n.address_size 64\n";

/// A module of one kernel `name` that declares `decl` and stores its thread index with
/// `store`.
fn one_kernel(name: &str, decl: &str, store: &str) -> String {
    format!(
        "{HEAD}.visible .entry {name}(.param .u64 out)\n{{\n    .reg .b32 %r<4>;\n    \
         {decl}\n    mov.u32 %r1, %tid.x;\n    {store}\n    ret;\n}}\n"
    )
}

const SMALL: &str = "
.visible .entry small(.param .u64 out)
{
    .reg .b32 %r<4>;
    mov.u32 %r1, %tid.x;
    ret;
}
";

/// 1 GiB of `.local` per thread: every warp allocated it 32 times at its CTA's start
/// ("memory allocation of 1073741824 bytes failed", exit 134). Refused now when the
/// module lowers, at the declaration, as ptxas refuses more than 512 KiB per thread
/// (`ptx check` and `compile` say the same: `storage_limits_cli.rs`).
#[test]
fn a_gigabyte_of_local_memory_per_thread_is_refused_naming_the_kernel() {
    let dir = scratch("local");
    let ptx = one_kernel(
        "big",
        ".local .align 8 .b8 buf[1073741824];",
        "st.local.u32 [buf], %r1;",
    );
    let out = probe(
        &dir,
        &[],
        &ptx,
        "big",
        &["1", "1", "1", "32", "1", "1", "0"],
    );
    no_abort(&out);
    let (err, stdout) = (text(&out.stderr), text(&out.stdout));
    assert!(
        err.contains(
            "regsim: PTX module does not load: launch_probe.ptx:7:25: in kernel 'big': \
             1073741824 bytes of local memory (`.local`) per thread, more than the 524288 a \
             thread may have (ptxas refuses such a function)"
        ),
        "{err}"
    );
    assert!(
        stdout.contains("cuModuleLoadData: CUDA_ERROR_INVALID_PTX"),
        "{stdout}"
    );
    // At the limit, a kernel runs (2 CTAs of 1024 threads: 1 GiB of frames, paged at
    // first write, so only the pages touched are allocated).
    let ptx = one_kernel(
        "mid",
        ".local .align 8 .b8 buf[524288];",
        "st.local.u32 [buf+524000], %r1;",
    );
    let out = probe(
        &dir,
        &[],
        &ptx,
        "mid",
        &["2", "1", "1", "1024", "1", "1", "0"],
    );
    no_abort(&out);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("PASS"));
}

/// 4 GiB of `.shared` in one kernel of a module: launching another kernel of the module
/// aborted (every CTA allocates the module's shared layout). The module is refused when
/// it lowers, at the declaration (more than ptxas's 48 KiB of static shared memory).
#[test]
fn a_module_with_absurd_static_shared_memory_is_refused() {
    let dir = scratch("shared");
    let ptx = one_kernel(
        "sbig",
        ".shared .align 8 .b8 tile[4294967296];",
        "st.shared.u32 [tile], %r1;",
    ) + SMALL;
    for kernel in ["sbig", "small"] {
        let out = probe(
            &dir,
            &[],
            &ptx,
            kernel,
            &["1", "1", "1", "32", "1", "1", "0"],
        );
        no_abort(&out);
        let err = text(&out.stderr);
        assert!(
            err.contains(
                "regsim: PTX module does not load: launch_probe.ptx:7:26: in kernel 'sbig': \
                 4294967296 bytes of static shared memory (`.shared`) per block, more than \
                 the 49152 a block may declare (ptxas refuses such a function; use dynamic \
                 shared memory)"
            ),
            "{err}"
        );
    }
}

/// Dynamic shared memory, grid and block dimensions and `cuMemAlloc` at absurd sizes:
/// refused with a line (or an error code) each; the largest legal grid is bounded by
/// `--max-cycles` and `--timeout`.
#[test]
fn absurd_launch_shapes_and_allocations_are_refused_or_bounded() {
    let dir = scratch("shapes");
    let ptx = format!("{HEAD}{SMALL}");
    let refused = [
        (
            ["1", "1", "1", "32", "1", "1", "4294967295"],
            "launch refused: 4294967295 bytes of shared memory per block (0 static, \
             4294967295 dynamic), more than the 49152 the GPU has",
        ),
        (
            ["4294967295", "1", "1", "1", "1", "1", "0"],
            "launch refused: grid exceeds the maximum (2147483647,65535,65535)",
        ),
        (
            ["1", "1", "1", "1", "1", "4294967295", "0"],
            "launch refused: block exceeds the maximum (1024,1024,64)",
        ),
    ];
    for (launch, says) in refused {
        let out = probe(&dir, &[], &ptx, "small", &launch);
        no_abort(&out);
        let err = text(&out.stderr);
        assert!(err.contains(says), "{launch:?}: {err}");
        assert!(text(&out.stdout).contains("cuLaunchKernel: CUDA_ERROR_INVALID_VALUE"));
    }
    for bytes in ["0xffffffffffffffff", "1099511627776"] {
        let launch = ["1", "1", "1", "32", "1", "1", "0", bytes];
        let out = probe(&dir, &[], &ptx, "small", &launch);
        no_abort(&out);
        let stdout = text(&out.stdout);
        assert!(
            stdout.contains("cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY") && stdout.contains("PASS"),
            "{bytes}: {stdout}"
        );
    }
    let largest = ["2147483647", "65535", "65535", "1024", "1", "1", "0"];
    for limit in [["--max-cycles", "20000"], ["--timeout", "2"]] {
        let out = probe(&dir, &limit, &ptx, "small", &largest);
        no_abort(&out);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(124), "{limit:?}: {err}");
        assert!(err.contains("regsim: run stopped: kernel small"), "{err}");
    }
}

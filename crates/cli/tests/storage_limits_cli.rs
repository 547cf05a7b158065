//! `.local` and `.shared` sizes (issue 26), as a user meets them:
//!
//! - a legal kernel at the 512 KiB `.local` limit, run in many waves of CTAs, costs the
//!   host what its threads touch, not what they declare (frames are paged at first
//!   write): 60 CTAs of 1024 threads held 7.9 GB on gtx480 and now run under a 1.5 GB
//!   address-space limit, in timing and in functional mode;
//! - `regsim ptx check` and `regsim compile` refuse the `.local`/`.shared` sizes that
//!   loading refuses, with the same error (limit, kernel, line): they accepted 1 GiB of
//!   `.local` and 4 GiB of `.shared`, which only loading refused. The limits are ptxas's
//!   (512 KiB of `.local` per thread, 48 KiB of static `.shared` per block), checked per
//!   function and per module-scope variable: module-scope variables that fit one by one
//!   are not summed (which a kernel uses is not known; clang's CUB kernels declare 59 KB
//!   of them in one module and each uses a part).
//!
//! PTX is loaded at run time by `tests/programs/bin/launch_probe` (driver API, plain C).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("storage-limits-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

/// `regsim ARGS...` under `ulimit -v KB` (no limit when `kb` is 0).
fn regsim_limited(dir: &Path, kb: u64, args: &[&str]) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!(
            "{}exec \"$@\"",
            if kb > 0 {
                format!("ulimit -v {kb} && ")
            } else {
                String::new()
            }
        ))
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_regsim"))
        .args(args)
        .env("TMPDIR", dir)
        .env("RUST_BACKTRACE", "0")
        .env_remove("REGSIM_CUDART")
        .env_remove("REGSIM_CONFIGS")
        .output()
        .expect("regsim runs")
}

/// `regsim run [ARGS] -- launch_probe PTX KERNEL LAUNCH...` under `ulimit -v kb`.
fn probe(dir: &Path, kb: u64, args: &[&str], ptx: &Path, kernel: &str, launch: &[&str]) -> Output {
    let program = repo_root().join("crates/cli/tests/programs/bin/launch_probe");
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.push("--");
    all.push(program.to_str().unwrap());
    all.push(ptx.to_str().unwrap());
    all.push(kernel);
    all.extend_from_slice(launch);
    regsim_limited(dir, kb, &all)
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

/// A module of one kernel `name` that declares `decl` (at line 7) and stores its thread
/// index with `store`.
fn one_kernel(name: &str, decl: &str, store: &str) -> String {
    format!(
        "{HEAD}.visible .entry {name}(.param .u64 out)\n{{\n    .reg .b32 %r<4>;\n    \
         {decl}\n    mov.u32 %r1, %tid.x;\n    {store}\n    ret;\n}}\n"
    )
}

/// 60 CTAs of 1024 threads, each thread with a 512 KiB frame (the limit) of which it
/// writes one word: 4 waves on gtx480's 15 SMs. The frames were allocated whole (and,
/// after the first wave, zeroed by the allocator: 7.9 GB resident, 60 s); they are paged
/// now, so a 1.5 GB address-space limit holds. The program checks nothing but the
/// launch; the values are the emulator's (`memory::local` tests, and the statistics of
/// the local-memory workloads, identical before and after).
#[test]
fn a_legal_kernel_at_the_local_limit_costs_what_its_threads_touch() {
    let dir = scratch("waves");
    let ptx = dir.join("mid.ptx");
    std::fs::write(
        &ptx,
        one_kernel(
            "mid",
            ".local .align 8 .b8 buf[524288];",
            "st.local.u32 [buf+524000], %r1;\n    ld.local.u32 %r2, [buf+524000];\n    \
             ld.local.u32 %r3, [buf+4096];",
        ),
    )
    .unwrap();
    let launch = ["60", "1", "1", "1024", "1", "1", "0"];
    for mode in [&[][..], &["--functional"][..]] {
        let stats = dir.join("s.json");
        let mut args = mode.to_vec();
        args.extend(["--stats", stats.to_str().unwrap()]);
        let out = probe(&dir, 1_500_000, &args, &ptx, "mid", &launch);
        no_abort(&out);
        assert!(out.status.success(), "{mode:?}: {}", text(&out.stderr));
        assert!(text(&out.stdout).contains("PASS"), "{mode:?}");
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
        // Every CTA ran: the same count in each of the 60 x 32 warps, at least its four
        // instructions before `ret`.
        let warps = json["total"]["warp_instructions"].as_u64().unwrap();
        assert!(
            warps >= 60 * 32 * 4 && warps.is_multiple_of(60 * 32),
            "{mode:?}: {warps}"
        );
    }
}

/// Each case: the PTX, its kernel, and the error after the file name.
fn oversized() -> Vec<(&'static str, String, &'static str, String)> {
    vec![
        (
            "local",
            one_kernel(
                "big",
                ".local .align 8 .b8 buf[1073741824];",
                "st.local.u32 [buf], %r1;",
            ),
            "big",
            ":7:25: in kernel 'big': 1073741824 bytes of local memory (`.local`) per thread, \
             more than the 524288 a thread may have (ptxas refuses such a function) (in \
             `.local .align 8 .b8 buf[1073741824];`)"
                .to_string(),
        ),
        (
            "shared",
            one_kernel(
                "sbig",
                ".shared .align 8 .b8 tile[4294967296];",
                "st.shared.u32 [tile], %r1;",
            ),
            "sbig",
            ":7:26: in kernel 'sbig': 4294967296 bytes of static shared memory (`.shared`) \
             per block, more than the 49152 a block may declare (ptxas refuses such a \
             function; use dynamic shared memory)"
                .to_string(),
        ),
        (
            "module",
            format!(
                "{HEAD}.shared .align 4 .b8 common[50000];\n{}",
                one_kernel("both", "", "st.shared.u32 [common], %r1;").trim_start_matches(HEAD)
            ),
            "both",
            ":4:22: 50000 bytes of static shared memory (`.shared`) in one variable, more \
             than the 49152 a block may declare (ptxas refuses a kernel that uses it; use \
             dynamic shared memory)"
                .to_string(),
        ),
    ]
}

/// `ptx check`, `compile` and loading refuse each oversized module with the same line;
/// nothing is allocated (a 1 GB address-space limit).
#[test]
fn check_compile_and_load_refuse_oversized_storage_alike() {
    let dir = scratch("check");
    for (name, ptx, kernel, says) in oversized() {
        let file = dir.join(format!("{name}.ptx"));
        std::fs::write(&file, &ptx).unwrap();
        let path = file.to_str().unwrap();
        let check = regsim_limited(&dir, 1_000_000, &["ptx", "check", path]);
        no_abort(&check);
        assert_eq!(
            check.status.code(),
            Some(1),
            "{name}: {}",
            text(&check.stderr)
        );
        assert!(
            text(&check.stderr).contains(&format!("{path}{says}")),
            "{name}: {}",
            text(&check.stderr)
        );
        let compile = regsim_limited(&dir, 1_000_000, &["compile", path]);
        no_abort(&compile);
        assert!(!compile.status.success(), "{name}");
        assert!(
            text(&compile.stderr).contains(&format!("{path}{says}")),
            "{name}: {}",
            text(&compile.stderr)
        );
        let launch = ["1", "1", "1", "32", "1", "1", "0"];
        let load = probe(&dir, 1_000_000, &["--functional"], &file, kernel, &launch);
        no_abort(&load);
        let err = text(&load.stderr);
        assert!(err.contains(&says), "{name}: {err}");
        assert!(
            text(&load.stdout).contains("cuModuleLoadData: CUDA_ERROR_INVALID_PTX"),
            "{name}: {}",
            text(&load.stdout)
        );
    }
    // At the limits, every one is accepted, and module-scope variables are not summed.
    let at = format!(
        "{HEAD}.shared .align 4 .b8 common[40000];\n.shared .align 4 .b8 other[40000];\n{}",
        one_kernel(
            "fits",
            ".local .align 8 .b8 buf[524288];\n    .shared .align 4 .b8 mine[9152];",
            "st.shared.u32 [mine], %r1;"
        )
        .trim_start_matches(HEAD)
    );
    let file = dir.join("at.ptx");
    std::fs::write(&file, at).unwrap();
    let check = regsim_limited(&dir, 0, &["ptx", "check", file.to_str().unwrap()]);
    assert!(check.status.success(), "{}", text(&check.stderr));
}

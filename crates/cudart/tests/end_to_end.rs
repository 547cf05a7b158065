//! Unmodified nvcc-built programs running against the cargo-built library, loaded as
//! `libcudart.so.11.0` through `LD_LIBRARY_PATH`.

mod common;

use std::process::Command;

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn exports_carry_the_libcudart_version_node() {
    if !common::tool_available("objdump") {
        eprintln!("skipped: objdump not installed");
        return;
    }
    let lib = common::library_dir().join("libcudart.so.11.0");
    let out = Command::new("objdump")
        .arg("-T")
        .arg(&lib)
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    for symbol in [
        "cudaMalloc",
        "__cudaRegisterFatBinary",
        "cudaLaunchKernel",
        "cudaGraphCreate",
        "cudaGetErrorString",
    ] {
        let line = table
            .lines()
            .find(|l| l.ends_with(&format!(" {symbol}")))
            .unwrap_or_else(|| panic!("{symbol} not exported"));
        assert!(line.contains("libcudart.so.11.0"), "{line}");
    }
    let unversioned: Vec<&str> = table
        .lines()
        .filter(|l| l.contains(" g ") && l.contains(".text") && !l.contains("libcudart.so.11.0"))
        .collect();
    assert!(unversioned.is_empty(), "{unversioned:?}");
}

#[test]
fn runtime_api_program_passes() {
    let out = common::run(&common::program("runtime_api"), &[]);
    assert_eq!(stdout(&out), "PASS\n", "stderr: {}", stderr(&out));
    assert!(out.status.success());
    // The one unsupported call prints exactly one line naming it.
    assert_eq!(
        stderr(&out),
        "regsim: cudaGraphCreate is not supported by the simulator\n"
    );
}

#[test]
fn stats_file_and_mode_warning() {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("stats-{}.json", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let out = common::run(
        &common::program("runtime_api"),
        &[
            ("REGSIM_STATS", path.to_str().unwrap()),
            ("REGSIM_MODE", "fast"),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("REGSIM_MODE=\"fast\" is not `functional` or `timing`"),
        "{}",
        stderr(&out)
    );
    let json = std::fs::read_to_string(&path).expect("stats file written at exit");
    assert!(json.contains("\"kernels\": ["), "{json}");
    assert!(
        json.contains(
            "\"total\": {\"kernels\": 0, \"warp_instructions\": 0, \"thread_instructions\": 0}"
        ),
        "{json}"
    );
}

#[test]
fn program_without_ptx_is_told_how_to_rebuild() {
    let out = common::run(&common::program("kernels_sass_only"), &[]);
    let err = stderr(&out);
    assert!(
        err.contains("the program carries no PTX (only machine code for sm_70)"),
        "{err}"
    );
    assert!(
        err.contains("-gencode arch=compute_70,code=compute_70"),
        "{err}"
    );
    assert!(
        stdout(&out).contains("cudaErrorNoKernelImageForDevice"),
        "{}",
        stdout(&out)
    );
    assert_eq!(out.status.code(), Some(3));
}

#[test]
fn kernels_run_on_the_emulator() {
    // Plain, compressed and multi-architecture fatbinaries: the kernel reads a
    // __constant__ variable written by cudaMemcpyToSymbol, so symbols and launches meet in
    // the emulator's memory.
    for name in ["kernels", "kernels_compressed", "kernels_multi_ptx"] {
        let out = common::run(&common::program(name), &[]);
        let err = stderr(&out);
        assert_eq!(stdout(&out), "PASS\n", "{name}: {err}");
        assert!(out.status.success(), "{name}: {err}");
        assert_eq!(
            err,
            "regsim: kernel axpy(int, float, float const*, float*) grid (8,1,1) block (128,1,1): \
             704 warp instructions, 21264 thread instructions\n",
            "{name}"
        );
    }
}

#[test]
fn textures_reach_the_emulator() {
    // Legacy references on linear memory and on an array (linear filtering), and a texture
    // object on pitched memory; the program checks every sampled value.
    let out = common::run(&common::program("textures"), &[]);
    let err = stderr(&out);
    assert_eq!(stdout(&out), "PASS\n", "{err}");
    assert!(out.status.success(), "{err}");
    assert_eq!(err.lines().count(), 3, "one line per kernel: {err}");
}

#[test]
fn device_printf_keeps_program_order_through_a_pipe() {
    let out = common::run(&common::program("printf_order"), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "before\ndevice 0 0.00 ok\ndevice 1 1.50 ok\nafter\n"
    );
}

#[test]
fn unified_memory_hints_and_stream_ordered_allocation() {
    let out = common::run(&common::program("unified_memory"), &[]);
    assert_eq!(stdout(&out), "PASS\n", "{}", stderr(&out));
    assert!(out.status.success());
}

#[test]
fn device_features_match_host_references() {
    // The program checks every result itself; its last kernel fails an assert on purpose.
    let out = common::run(&common::program("device_features"), &[]);
    let err = stderr(&out);
    assert_eq!(stdout(&out), "PASS\n", "{err}");
    assert!(out.status.success(), "{err}");
    let fault = err
        .lines()
        .find(|l| l.starts_with("regsim: kernel fault: "))
        .unwrap_or_else(|| panic!("no fault line: {err}"));
    assert!(
        fault.starts_with("regsim: kernel fault: kernel k_assert(int), PTX line ")
            && fault.contains("(call.uni __assertfail, ")
            && fault.contains("CTA (0,0,0), thread (0,0,0): device-side assertion failed: x < 5 (")
            && fault.contains("device_features.cu:"),
        "{fault}"
    );
}

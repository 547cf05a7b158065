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
    // The program checks the device properties of a V100: the qv100 config describes it.
    let out = common::run(&common::program("runtime_api"), &[("REGSIM_GPU", "qv100")]);
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
            ("REGSIM_GPU", "qv100"),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("REGSIM_MODE=\"fast\" is not `functional` or `timing`"),
        "{}",
        stderr(&out)
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("stats file written at exit"))
            .expect("JSON");
    assert_eq!(json["mode"], "functional");
    assert_eq!(json["gpu"]["name"], "qv100");
    assert_eq!(json["kernels"], serde_json::json!([]));
    assert_eq!(
        json["total"],
        serde_json::json!({"kernels": 0, "warp_instructions": 0, "thread_instructions": 0})
    );
}

#[test]
fn timing_mode_reports_cycles_and_ipc() {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("timing-stats-{}.json", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let out = common::run(
        &common::program("kernels"),
        &[
            ("REGSIM_MODE", "timing"),
            ("REGSIM_GPU", "gtx480"),
            ("REGSIM_SET", "gpu.num_sms=2\nsm.scheduler=lrr"),
            ("REGSIM_STATS", path.to_str().unwrap()),
            ("REGSIM_SUMMARY", "1"),
        ],
    );
    let err = stderr(&out);
    assert_eq!(stdout(&out), "PASS\n", "{err}");
    let line = err.lines().next().unwrap();
    let prefix = "regsim: kernel axpy(int, float, float const*, float*) grid (8,1,1) block \
                  (128,1,1): 704 warp instructions, 21264 thread instructions, ";
    let rest = line
        .strip_prefix(prefix)
        .unwrap_or_else(|| panic!("{line}"));
    let (cycles, ipc) = rest.split_once(" cycles, IPC ").expect("cycles and IPC");
    let cycles: u64 = cycles.parse().unwrap();
    assert_eq!(ipc, format!("{:.3}", 704.0 / cycles as f64));
    assert!(
        err.contains("regsim: summary (timing mode, GPU gtx480)"),
        "{err}"
    );
    assert!(err.contains("scheduler cycles: issued"), "{err}");

    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(json["mode"], "timing");
    assert_eq!(
        json["gpu"]["overrides"],
        serde_json::json!(["gpu.num_sms=2", "sm.scheduler=lrr"])
    );
    assert_eq!(json["gpu"]["config"]["gpu"]["num_sms"], 2);
    let k = &json["kernels"][0];
    assert_eq!(k["cycles"], cycles);
    assert_eq!(k["warp_instructions"], 704);
    assert_eq!(k["mangled"], "_Z4axpyifPKfPf");
    assert!(k["stalls"]["issued"].as_u64().unwrap() > 0);
    assert_eq!(json["total"]["cycles"], cycles);
    assert!(
        json["simulation"]["warp_instructions_per_second"]
            .as_f64()
            .unwrap()
            > 0.0
    );
}

#[test]
fn a_bad_config_or_a_cta_that_does_not_fit_is_one_line_and_a_sticky_error() {
    let out = common::run(
        &common::program("kernels"),
        &[("REGSIM_MODE", "timing"), ("REGSIM_SET", "sm.max_ctas=0")],
    );
    assert_eq!(
        stderr(&out),
        "regsim: invalid GPU configuration: sm.max_ctas: must be at least 1\n"
    );
    assert_eq!(
        out.status.code(),
        Some(2),
        "cudaMalloc fails: {}",
        stdout(&out)
    );

    // 128 threads need more than 64 registers.
    let out = common::run(
        &common::program("kernels"),
        &[("REGSIM_MODE", "timing"), ("REGSIM_SET", "sm.registers=64")],
    );
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    // The runtime refuses the launch, as a GPU does, before the timing model sees it.
    assert!(
        err.starts_with(
            "regsim: kernel axpy(int, float, float const*, float*) grid (8,1,1) block (128,1,1): \
             launch refused: "
        ) && err.contains("128 threads")
            && err.contains("more than the 64 a block may use"),
        "{err}"
    );
    assert_eq!(
        stdout(&out),
        "launch failed: cudaErrorLaunchOutOfResources (too many resources requested for launch)\n"
    );
    assert_eq!(out.status.code(), Some(3));
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
fn texture_gather_and_queries_reach_the_emulator() {
    // tex2Dgather (tld4) of all four components through clamp and wrap texture objects
    // over a cudaArray, at points whose footprints cross every edge, and txq through
    // inline PTX; the program checks every value against a host reference.
    let out = common::run(&common::program("texture_gather"), &[]);
    let err = stderr(&out);
    assert_eq!(stdout(&out), "PASS\n", "{err}");
    assert!(out.status.success(), "{err}");
    assert_eq!(err.lines().count(), 4, "one line per kernel: {err}");
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

//! `regsim run` as a user runs it: the built binary running unmodified nvcc-built programs
//! (the committed workload binaries and the bad-input programs in `tests/programs/`) on
//! regsim's CUDA runtime.
//!
//! The runtime library is the `cudart` crate's cdylib; it is a dev-dependency of this
//! package, so cargo builds it (into `target/<profile>/deps/`, where `regsim run` also
//! looks) before these tests run.
//!
//! Cost (release build, one core): every workload in timing mode about 35 s (15 of them
//! `atomics_cas`, whose CAS retry loop livelocks under contention as on hardware; about 9
//! the six memory-bound workloads added for issues 8 and 12, `knn` and `atax` the most), in
//! functional mode about 5 s, the rest a few seconds. Every test runs in CI (`scripts/
//! test.sh` runs the suite in release) except `every_workload_passes_with_large_inputs`
//! (`#[ignore]`: about 5 minutes, most of it `atomics_cas --large`), which
//! `scripts/run-workloads.sh --large` covers as well.

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
        .env_remove("REGSIM_CONFIGS")
        .output()
        .expect("the regsim binary runs")
}

fn workload(name: &str) -> PathBuf {
    repo_root().join("workloads/bin").join(name)
}

fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("the stats file is written"))
        .expect("the stats file is JSON")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Whether the workload's source names its target (`// arch: sm_NN`, which
/// scripts/build-workloads.sh reads) instead of the default sm_70.
fn built_for_a_newer_architecture(name: &str) -> bool {
    let source = repo_root()
        .join("workloads")
        .join(name)
        .join(format!("{name}.cu"));
    std::fs::read_to_string(source)
        .map(|t| t.lines().any(|l| l.starts_with("// arch: sm_")))
        .unwrap_or(false)
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

/// Runs a workload with `--stats` (and `flags`), asserts PASS and exit 0, checks the
/// statistics file against the per-kernel lines on stderr, and returns the statistics and
/// their file. In timing mode (no `--functional`) every kernel has cycles and IPC; in
/// functional mode nothing has.
fn assert_passes(bin: &Path, flags: &[&str], args: &[&str]) -> (serde_json::Value, PathBuf) {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let name = bin.file_name().unwrap().to_string_lossy().into_owned();
    let timing = !flags.contains(&"--functional");
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let stats_path = scratch(&format!("{name}-{run}.json"));
    let mut all_flags = vec!["--stats", stats_path.to_str().unwrap()];
    all_flags.extend(flags);
    let out = regsim_run(&all_flags, bin, args);
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
    // A workload built for a newer architecture (`// arch: sm_NN` in its source) runs
    // its newer PTX on an older config, and regsim says so once.
    let newer_ptx = se
        .lines()
        .filter(|l| l.starts_with("regsim: warning: the program has no PTX for compute_"))
        .count();
    assert!(
        newer_ptx == 0 || built_for_a_newer_architecture(&name),
        "{name}: unexpected PTX warning: {se}"
    );
    assert_eq!(
        kernel_lines.len() + newer_ptx,
        se.lines().count(),
        "{name}: unexpected stderr: {se}"
    );

    let json = read_json(&stats_path);
    assert_eq!(json["mode"], if timing { "timing" } else { "functional" });
    assert_eq!(json["program"]["name"], name.as_str());
    assert_eq!(json["program"]["exit_code"], 0);
    let kernels = json["kernels"].as_array().expect("a kernels list");
    assert_eq!(kernels.len(), kernel_lines.len(), "{name}");
    let (mut warp_sum, mut cycle_sum) = (0, 0);
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
        let counts = format!(": {warp} warp instructions, {thread} thread instructions");
        if timing {
            let cycles = k["cycles"].as_u64().expect("cycles");
            let ipc = k["ipc"].as_f64().expect("ipc");
            assert!(cycles > 0, "{name}: {k}");
            assert!(
                (ipc - warp as f64 / cycles as f64).abs() < 1e-12,
                "{name}: {k}"
            );
            assert!(
                line.ends_with(&format!("{counts}, {cycles} cycles, IPC {ipc:.3}")),
                "{name}: {line}"
            );
            cycle_sum += cycles;
        } else {
            assert!(line.ends_with(&counts), "{name}: {line}");
            assert!(k.get("cycles").is_none(), "{name}: {k}");
        }
        assert!(k["mangled"].as_str().is_some_and(|m| !m.is_empty()));
        warp_sum += warp;
    }
    let total = &json["total"];
    assert_eq!(total["kernels"].as_u64(), Some(kernels.len() as u64));
    assert_eq!(total["warp_instructions"].as_u64(), Some(warp_sum));
    if timing {
        assert_eq!(total["cycles"].as_u64(), Some(cycle_sum), "{name}");
        assert!(total["ipc"].as_f64().is_some_and(|i| i > 0.0), "{name}");
    } else {
        assert!(total.get("cycles").is_none(), "{name}: {total}");
    }
    let sim = &json["simulation"];
    assert!(
        sim["wall_seconds"].as_f64().is_some_and(|s| s > 0.0),
        "{name}"
    );
    assert!(
        sim["warp_instructions_per_second"]
            .as_f64()
            .is_some_and(|r| r > 0.0),
        "{name}"
    );
    (json, stats_path)
}

#[test]
fn every_workload_passes_in_timing_mode() {
    for bin in workloads() {
        assert_passes(&bin, &[], &[]);
    }
}

#[test]
fn every_workload_passes_in_functional_mode() {
    for bin in workloads() {
        assert_passes(&bin, &["--functional"], &[]);
    }
}

#[test]
fn larger_inputs_pass() {
    // The cheaper --large sizes (about a million warp instructions each): in timing mode a
    // few seconds each, functionally a fraction of that.
    for name in ["reduction", "histogram", "kmeans"] {
        assert_passes(&workload(name), &[], &["--large"]);
    }
    for name in ["atomics_cas", "transpose"] {
        assert_passes(&workload(name), &["--functional"], &["--large"]);
    }
}

#[test]
#[ignore = "about 5 minutes; scripts/run-workloads.sh --large runs the same"]
fn every_workload_passes_with_large_inputs() {
    for bin in workloads() {
        assert_passes(&bin, &[], &["--large"]);
    }
}

/// Every workload under an LTRF design: PASS, the design's name in the statistics, and
/// no MRF operand read inside a register-interval (every MRF read is a prefetch or an
/// oversized interval's operand). About 35 s each (atomics_cas two thirds of it: the
/// two-level scheduler LTRF needs makes its CAS loop spin longer).
fn every_workload_passes_under(design: &str) {
    for bin in workloads() {
        let (json, _) = assert_passes(&bin, &["--rf", design], &[]);
        let rf = &json["total"]["register_file"];
        assert_eq!(rf["design"], design);
        let extra = |k: &str| {
            rf["extra"][k]
                .as_u64()
                .unwrap_or_else(|| panic!("{k}: {rf}"))
        };
        assert_eq!(extra("ltrf_miss_operand_reads"), 0, "{}", bin.display());
        assert_eq!(
            rf["reads"].as_u64().unwrap(),
            extra("ltrf_registers_prefetched") + extra("ltrf_bypass_operand_reads"),
            "{}",
            bin.display()
        );
    }
}

#[test]
fn every_workload_passes_under_ltrf() {
    every_workload_passes_under("ltrf");
}

#[test]
fn every_workload_passes_under_ltrf_plus() {
    every_workload_passes_under("ltrf-plus");
}

#[test]
fn every_workload_passes_under_ltrf_conf() {
    every_workload_passes_under("ltrf-conf");
}

#[test]
fn ltrf_runs_are_deterministic_and_technologies_are_checked() {
    let flags = ["--rf", "ltrf-plus", "--set", "register_file.technology=7"];
    let (a, _) = assert_passes(&workload("kmeans"), &flags, &[]);
    let (b, _) = assert_passes(&workload("kmeans"), &flags, &[]);
    assert_eq!(deterministic_part(a), deterministic_part(b));
    let out = regsim_run(
        &["--rf", "ltrf", "--set", "register_file.technology=9"],
        &workload("saxpy"),
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("register_file.technology"),
        "{}",
        stderr(&out)
    );
}

/// The statistics without their wall-clock parts.
#[test]
fn every_workload_passes_under_cerf_with_both_policies() {
    // About twice `every_workload_passes_in_timing_mode`. CERF (issue 12): the L1D is the
    // integrated array; register reads and writes stay on the same keys as the baseline.
    for policy in ["lru-fair", "lru-prioritized"] {
        let set = format!("register_file.cerf.policy=\"{policy}\"");
        for bin in workloads() {
            let (json, _) = assert_passes(&bin, &["--rf", "cerf", "--set", &set], &[]);
            let rf = &json["total"]["register_file"];
            assert_eq!(rf["design"], "cerf");
            assert!(rf["reads"].as_u64().is_some_and(|r| r > 0), "{rf}");
            assert!(rf["extra"]["cerf_tag_lookups"]
                .as_u64()
                .is_some_and(|t| t > 0));
            if policy == "lru-prioritized" {
                // The default array holds the whole register file: no spills.
                assert_eq!(rf["extra"]["cerf_spills"], 0, "{}", bin.display());
            }
        }
    }
    let flags = [
        "--rf",
        "cerf",
        "--set",
        "register_file.cerf.policy=\"lru-fair\"",
    ];
    let (a, _) = assert_passes(&workload("stencil2d"), &flags, &[]);
    let (b, _) = assert_passes(&workload("stencil2d"), &flags, &[]);
    assert_eq!(deterministic_part(a), deterministic_part(b));
}

/// CERF's array shares its banks between registers and lines (issue 22): the line side's
/// accesses and conflicts are reported; `writes = "write-back"` makes stores dirty lines
/// that are written back on eviction; `banking = "separate"` reports no bank conflicts
/// with lines. Every run passes.
#[test]
fn cerf_banks_and_write_back_through_regsim_run() {
    let saxpy = workload("saxpy");
    let (json, _) = assert_passes(&saxpy, &["--rf", "cerf"], &[]);
    let x = &json["total"]["register_file"]["extra"];
    let n = |k: &str| x[k].as_u64().unwrap_or_else(|| panic!("{k} missing: {x}"));
    assert!(n("cerf_line_tag_lookups") > 0 && n("cerf_line_data_writes") > 0);
    assert!(n("cerf_register_bank_conflicts_with_lines") > 0, "{x}");
    assert_eq!(n("cerf_bank_window_overflows"), 0);
    assert_eq!(
        n("cerf_state_dirty_entry_cycles"),
        0,
        "write-through: never dirty"
    );

    let wb = [
        "--rf",
        "cerf",
        "--set",
        "register_file.cerf.writes=\"write-back\"",
    ];
    let (json, _) = assert_passes(&saxpy, &wb, &[]);
    let x = &json["total"]["register_file"]["extra"];
    let n = |k: &str| x[k].as_u64().unwrap_or_else(|| panic!("{k} missing: {x}"));
    assert!(
        n("cerf_cache_to_dirty") > 0 && n("cerf_state_dirty_entry_cycles") > 0,
        "{x}"
    );
    let l1d = &json["total"]["memory"]["l1d"];
    assert!(l1d["writebacks"].as_u64().is_some_and(|w| w > 0), "{l1d}");

    let sep = [
        "--rf",
        "cerf",
        "--set",
        "register_file.cerf.banking=\"separate\"",
    ];
    let (json, _) = assert_passes(&saxpy, &sep, &[]);
    let x = &json["total"]["register_file"]["extra"];
    assert_eq!(x["cerf_register_bank_conflicts_with_lines"], 0, "{x}");
    assert_eq!(x["cerf_line_data_bank_conflicts"], 0, "{x}");
}

fn deterministic_part(mut json: serde_json::Value) -> serde_json::Value {
    json.as_object_mut().unwrap().remove("simulation");
    for k in json["kernels"].as_array_mut().unwrap() {
        k.as_object_mut().unwrap().remove("simulation");
    }
    json
}

#[test]
fn identical_runs_give_identical_statistics() {
    // Eight launches of one kernel: caches, DRAM and time carry over between them.
    let (a, _) = assert_passes(&workload("stencil2d"), &[], &[]);
    let (b, _) = assert_passes(&workload("stencil2d"), &["--gpu", "gtx480"], &[]);
    assert_eq!(a["kernels"].as_array().unwrap().len(), 8);
    assert!(a["kernels"][7]["start_cycle"].as_u64().unwrap() > 0);
    assert_eq!(deterministic_part(a), deterministic_part(b));
}

#[test]
fn ideal_unlimited_lifts_a_register_limit_and_ideal_keeps_it() {
    // blackscholes on one SM whose register file holds two of its CTAs.
    let run = |rf: &str| {
        let flags = [
            "--rf",
            rf,
            "--set",
            "gpu.num_sms=1",
            "--set",
            "sm.registers=8192",
        ];
        let (json, _) = assert_passes(&workload("blackscholes"), &flags, &[]);
        json["kernels"][0].clone()
    };
    let (base, same, ideal) = (run("baseline"), run("ideal"), run("ideal-unlimited"));
    assert_eq!(base["occupancy"]["limited_by"], "registers");
    assert_eq!(base["occupancy"]["ctas_per_sm"], 2);
    assert_eq!(base["register_file"]["design"], "baseline");
    // `ideal` keeps the baseline's capacity: the same two CTAs, no conflicts, no slower.
    for limit in ["ctas_per_sm", "limited_by", "ctas_by_registers"] {
        assert_eq!(
            same["occupancy"][limit], base["occupancy"][limit],
            "{limit}"
        );
    }
    assert_eq!(same["register_file"]["read_bank_conflicts"], 0);
    assert!(same["cycles"].as_u64().unwrap() <= base["cycles"].as_u64().unwrap());
    assert_eq!(ideal["register_file"]["design"], "ideal-unlimited");
    assert_eq!(
        ideal["occupancy"]["ctas_per_sm"], 8,
        "sm.max_ctas limits now"
    );
    assert!(
        base["register_file"]["read_bank_conflicts"]
            .as_u64()
            .unwrap()
            > 0
    );
    assert_eq!(ideal["register_file"]["read_bank_conflicts"], 0);
    assert_eq!(base["warp_instructions"], ideal["warp_instructions"]);
    // Four times the warps hide the memory and SFU latencies: at least 1.5x faster.
    let (bc, ic) = (
        base["cycles"].as_u64().unwrap(),
        ideal["cycles"].as_u64().unwrap(),
    );
    assert!(2 * bc > 3 * ic, "baseline {bc} cycles, ideal {ic}");
}

#[test]
fn events_measure_simulated_time_in_timing_mode() {
    // sgemm_tiled times its kernel with CUDA events and prints milliseconds (3 decimals).
    // At a 1 MHz core clock a cycle is a microsecond.
    let (json, _) = assert_passes(
        &workload("sgemm_tiled"),
        &["--set", "gpu.core_clock_mhz=1"],
        &[],
    );
    let cycles = json["kernels"][0]["cycles"].as_u64().unwrap();
    let out = regsim_run(
        &["--set", "gpu.core_clock_mhz=1"],
        &workload("sgemm_tiled"),
        &[],
    );
    let expected = format!("sgemm_tiled 64x80x96: {:.3} ms\n", cycles as f64 / 1000.0);
    assert!(stdout(&out).starts_with(&expected), "{}", stdout(&out));
}

#[test]
fn bad_configs_are_refused_before_the_program_starts() {
    let saxpy = workload("saxpy");
    let refused = |flags: &[&str], needles: &[&str]| {
        let out = regsim_run(flags, &saxpy, &[]);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {}", stderr(&out));
        assert_eq!(stdout(&out), "", "{flags:?}: the program must not run");
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{err}");
        for n in needles {
            assert!(err.contains(n), "{flags:?}: {n:?} missing from {err}");
        }
    };
    refused(
        &["--set", "sm.max_warps=0"],
        &["invalid GPU configuration: sm.max_warps: must be at least 1"],
    );
    refused(
        &["--set", "sm.warpz=4"],
        &["sm.warpz: unknown field `warpz`"],
    );
    refused(
        &["--gpu", "qv100", "--set", "l1d.ways=3"],
        &["l1d.ways: ", "must divide size_bytes"],
    );
    refused(
        &["--set", "sm.max_warps"],
        &["sm.max_warps", "key.path=value"],
    );
    refused(
        &["--gpu", "nosuch"],
        &[
            "no GPU config named `nosuch`",
            "available: gpgpusim-gtx480, gpgpusim-qv100, gtx480, h100, maxwell-ltrf, qv100, rtx-a6000, rtx2060-scaled",
        ],
    );
    // `--rf` names a `register_file.design`: an unknown one is refused with the choices.
    refused(
        &["--rf", "huge"],
        &[
            "register_file.design: unknown variant `huge`",
            "expected",
            "`baseline`",
            "`ideal`",
        ],
    );
}

#[test]
fn the_summary_goes_to_stderr_and_stdout_stays_the_programs() {
    let out = regsim_run(&["--summary"], &workload("reduction"), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).lines().last(), Some("PASS"));
    assert!(!stdout(&out).contains("regsim"), "{}", stdout(&out));
    let err = stderr(&out);
    for needle in [
        "regsim: summary (timing mode, GPU gtx480)",
        "occupancy: ",
        "scheduler cycles: issued",
        "register file (baseline)",
        "total: 2 kernels, ",
        "warp instructions per second",
    ] {
        assert!(err.contains(needle), "{needle:?} missing from {err}");
    }
}

#[test]
fn report_tabulates_statistics_files() {
    let (a, a_file) = assert_passes(&workload("saxpy"), &[], &[]);
    let (b, b_file) = assert_passes(&workload("histogram"), &["--gpu", "qv100"], &[]);
    let report = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_regsim"))
            .arg("report")
            .args(args)
            .arg(&a_file)
            .arg(&b_file)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
    };
    let text = report(&[]);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(
        lines[0].starts_with("workload   gpu     status  kernels"),
        "{text}"
    );
    let cycles = a["total"]["cycles"].as_u64().unwrap();
    assert!(
        lines[1].starts_with("saxpy      gtx480  ok            1")
            && lines[1].contains(&format!(" {cycles} ")),
        "{text}"
    );
    assert!(lines[2].starts_with("histogram  qv100   ok"), "{text}");
    assert!(
        lines[3].starts_with("total              2/2 ok        2"),
        "{text}"
    );
    let md = report(&["--markdown", "--by-config"]);
    let hcycles = b["total"]["cycles"].as_u64().unwrap();
    assert!(
        md.starts_with(
            "| workload | gtx480 cycles | gtx480 IPC | qv100 cycles | qv100 IPC |\n\
             | --- | ---: | ---: | ---: | ---: |\n"
        ) && md.contains(&format!("| histogram | - | - | {hcycles} | ")),
        "{md}"
    );
}

#[test]
fn names_are_demangled_in_lines_and_stats() {
    let stats = scratch("transpose-names.json");
    let out = regsim_run(
        &["--functional", "--stats", stats.to_str().unwrap()],
        &workload("transpose"),
        &[],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("regsim: kernel void transpose_tiled<1>(float const*, float*, int, int) grid (8,6,1) block (32,8,1): "),
        "{}",
        stderr(&out)
    );
    let json = read_json(&stats);
    let k = json["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["mangled"] == "_Z15transpose_tiledILi1EEvPKfPfii")
        .expect("the padded tile kernel");
    assert_eq!(
        k["name"],
        "void transpose_tiled<1>(float const*, float*, int, int)"
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
    // 112 bytes past the end is within a GPU page of the allocation: only the memory
    // checker mode faults (the default allows it, see `stray_accesses_*`).
    let bin = program("oob_store");
    let out = regsim_run(&["--strict-memory"], &bin, &[]);
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
         echo \"mode=$REGSIM_MODE stats=$REGSIM_STATS gpu=$REGSIM_GPU set=$REGSIM_SET\"\n\
         test -e \"${LD_LIBRARY_PATH%%:*}/libcudart.so.11.0\" || exit 9\n\
         read line; echo \"stdin=$line\"\n\
         case \"$1\" in signal) kill -TERM $$ ;; *) exit \"$1\" ;; esac\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let run = |arg: &str| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_regsim"))
            .args(["run", "--rf", "ideal", "--set", "l1d.ways=2", "--"])
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
    // The default config, by absolute path; the overrides one per line.
    let gpu = std::fs::canonicalize(repo_root().join("configs/gtx480.toml")).unwrap();
    assert_eq!(
        stdout(&out),
        format!(
            "mode=timing stats= gpu={} set=register_file.design=ideal\nl1d.ways=2\nstdin=hello\n",
            gpu.display()
        )
    );
    let out = run("signal");
    assert_eq!(out.status.code(), Some(128 + 15), "SIGTERM is 128 + 15");
}

/// Gebhart's hierarchies (`--rf rfc`, `--rf orf-lrf`, with the paper's two-level
/// scheduler) change timing and energy, never values: every workload passes under both,
/// the load-time pipeline ran the design's passes (the upper levels serve operands), and
/// two identical runs give identical statistics.
#[test]
fn every_workload_passes_under_gebharts_hierarchies() {
    for rf in ["rfc", "orf-lrf"] {
        let flags = ["--rf", rf, "--set", "sm.scheduler=two_level"];
        for bin in workloads() {
            let (json, _) = assert_passes(&bin, &flags, &[]);
            let stats = &json["total"]["register_file"];
            assert_eq!(stats["design"], rf);
            let served = if rf == "rfc" {
                &stats["extra"]["rfc_read_hits"]
            } else {
                &stats["extra"]["orf_lrf_orf_reads"]
            };
            assert!(served.as_u64().is_some_and(|n| n > 0), "{bin:?}: {stats}");
        }
        let (a, _) = assert_passes(&workload("stencil2d"), &flags, &[]);
        let (b, _) = assert_passes(&workload("stencil2d"), &flags, &[]);
        assert_eq!(deterministic_part(a), deterministic_part(b), "{rf}");
    }
}

// ----- issue 15: what real GPUs run ------------------------------------------------------

/// Runs `name` from tests/programs in functional and timing mode with `flags`; returns
/// each run's output.
fn both_modes(name: &str, flags: &[&str], args: &[&str]) -> Vec<Output> {
    [&["--functional"][..], &[][..]]
        .iter()
        .map(|mode| {
            let all: Vec<&str> = mode.iter().chain(flags).copied().collect();
            regsim_run(&all, &program(name), args)
        })
        .collect()
}

#[test]
fn shared_addresses_wrap_modulo_2_to_the_32() {
    // `ld.shared.u32 %r, [%rN+68]` with %rN = 0xFFFFFFC0 (and st/atom/red alike) reads
    // offset 4; computed in 64 bits it faulted past the shared window.
    for out in both_modes("shared_wrap", &[], &[]) {
        let (so, se) = (stdout(&out), stderr(&out));
        assert_eq!(out.status.code(), Some(0), "stdout:\n{so}\nstderr:\n{se}");
        assert_eq!(so, "PASS\n");
        assert!(!se.contains("fault"), "{se}");
    }
}

#[test]
fn barriers_do_not_wait_for_exited_threads() {
    for out in both_modes("barrier_exit", &[], &[]) {
        let (so, se) = (stdout(&out), stderr(&out));
        assert_eq!(out.status.code(), Some(0), "stdout:\n{so}\nstderr:\n{se}");
        assert_eq!(so, "PASS\n");
    }
}

#[test]
fn barrier_releases_leave_warps_of_newer_ctas_in_reused_slots_waiting() {
    // Blocks end at different times and the next one takes the lowest free warp slots,
    // among them slots of warps that exited early from blocks still meeting barriers. The
    // SM used to clear the barrier flags of every slot once listed in a releasing block,
    // issuing a newer block's warp that waited at its own barrier: "warp 1 cannot execute:
    // it has exited or waits at a barrier" on one SM.
    for flags in [&["--set", "gpu.num_sms=1"][..], &[][..]] {
        for out in both_modes("barrier_slot_reuse", flags, &[]) {
            let (so, se) = (stdout(&out), stderr(&out));
            assert_eq!(out.status.code(), Some(0), "stdout:\n{so}\nstderr:\n{se}");
            assert_eq!(so, "PASS\n");
            assert!(!se.contains("cannot execute"), "{se}");
        }
    }
}

#[test]
fn stray_accesses_near_an_allocation_succeed_with_one_located_warning_each() {
    for (mode, out) in ["functional", "timing"].iter().zip(both_modes(
        "stray_access",
        &["--stats", scratch("stray.json").to_str().unwrap()],
        &[],
    )) {
        let (so, se) = (stdout(&out), stderr(&out));
        assert_eq!(
            out.status.code(),
            Some(0),
            "{mode}: stdout:\n{so}\nstderr:\n{se}"
        );
        assert_eq!(so, "PASS\n");
        // One warning per kernel and site although 128 threads read row -1 and the
        // guard word is touched by two kernels.
        let warnings: Vec<&str> = se
            .lines()
            .filter(|l| l.starts_with("regsim: memory warning: "))
            .collect();
        assert_eq!(warnings.len(), 3, "{se}");
        assert!(
            warnings[0].starts_with("regsim: memory warning: kernel blur_rows(float const*, float*, float*, int), PTX line "),
            "{se}"
        );
        assert!(warnings[0].contains("(ld.global.f32 "), "{se}");
        assert!(warnings[0].contains("bytes before the allocation"), "{se}");
        assert!(warnings[0].contains("(65536 bytes)"), "{se}");
        assert!(
            warnings[1].contains("kernel write_guard(int*, int)"),
            "{se}"
        );
        assert!(
            warnings[1].contains("4 bytes past the end of the allocation"),
            "{se}"
        );
        assert!(warnings[2].contains("kernel read_guard("), "{se}");
        let stats = read_json(&scratch("stray.json"));
        let w = stats["memory_warnings"]
            .as_array()
            .expect("memory_warnings");
        assert_eq!(w.len(), 3, "{w:?}");
        assert_eq!(w[1]["kernel"], "write_guard(int*, int)");
        assert_eq!(w[1]["offset"], 400);
        assert_eq!(w[1]["bytes"], 4);
        assert_eq!(w[1]["allocation_bytes"], 400);
        // Row -1 of the image: 512 bytes before it for thread (0,0) of CTA (0,0); the
        // timing model may meet another CTA's thread first, 256 bytes before.
        let first = w[0]["offset"].as_i64().unwrap();
        assert!(first == -512 || first == -256, "{w:?}");
        assert_eq!(w[0]["allocation_bytes"], 65536);
    }
}

#[test]
fn strict_memory_keeps_the_precise_fault_and_wild_addresses_always_fault() {
    for out in both_modes("stray_access", &["--strict-memory"], &[]) {
        let (so, se) = (stdout(&out), stderr(&out));
        assert_eq!(so, "FAIL: cudaErrorIllegalAddress\n", "{se}");
        assert_eq!(
            se.lines().filter(|l| l.contains("kernel fault")).count(),
            1,
            "{se}"
        );
        assert!(
            se.contains("regsim: kernel fault: kernel blur_rows(float const*, float*, float*, int), PTX line "),
            "{se}"
        );
        assert!(
            se.contains("is outside every allocation (nearest allocation: "),
            "{se}"
        );
        assert!(!se.contains("memory warning"), "{se}");
    }
    for out in both_modes("stray_access", &[], &["wild"]) {
        let (so, se) = (stdout(&out), stderr(&out));
        assert_eq!(so, "FAIL: cudaErrorIllegalAddress\n", "{se}");
        assert!(
            se.contains("address 0x10 (4 bytes) is outside every allocation"),
            "{se}"
        );
    }
}

#[test]
fn fermi_caps_registers_at_63_and_spills_the_rest() {
    // sgemm_regblock needs 93 registers as written; on gtx480 it runs with 63 and spill
    // code, under --max-registers too (the lower cap wins), and unchanged on qv100.
    let regs = |flags: &[&str], gpu: &str| {
        let stats = scratch(&format!("regblock-{gpu}-{}.json", flags.len()));
        let mut all = vec!["--gpu", gpu, "--stats", stats.to_str().unwrap()];
        all.extend_from_slice(flags);
        let out = regsim_run(&all, &workload("sgemm_regblock"), &[]);
        assert_eq!(stdout(&out), "PASS\n", "{}", stderr(&out));
        let json = read_json(&stats);
        let k = &json["kernels"][0];
        (
            k["occupancy"]["registers_per_thread"].as_u64().unwrap(),
            k["warp_instructions"].as_u64().unwrap(),
        )
    };
    let (fermi, fermi_instructions) = regs(&[], "gtx480");
    let (volta, volta_instructions) = regs(&[], "qv100");
    assert_eq!(fermi, 63);
    assert!(volta > 63, "{volta}");
    assert!(
        fermi_instructions > volta_instructions,
        "spill loads and stores execute: {fermi_instructions} vs {volta_instructions}"
    );
    assert_eq!(regs(&["--max-registers", "100"], "gtx480").0, 63);
    assert_eq!(regs(&["--max-registers", "40"], "gtx480").0, 40);
    // Functional mode runs the same spill code.
    let out = regsim_run(
        &["--functional", "--gpu", "gtx480"],
        &workload("sgemm_regblock"),
        &[],
    );
    assert_eq!(stdout(&out), "PASS\n");
    assert!(
        stderr(&out).contains(&format!("{fermi_instructions} warp instructions")),
        "{}",
        stderr(&out)
    );
}

#[test]
fn refused_launches_name_the_kernel_and_the_reason() {
    for out in both_modes("launch_refusals", &["--gpu", "gtx480"], &[]) {
        let (so, se) = (stdout(&out), stderr(&out));
        assert_eq!(out.status.code(), Some(0), "stdout:\n{so}\nstderr:\n{se}");
        let refused: Vec<&str> = se
            .lines()
            .filter(|l| l.contains("launch refused"))
            .collect();
        assert_eq!(
            refused[..3],
            [
                "regsim: kernel small(int*) grid (0,1,1) block (32,1,1): launch refused: zero-sized grid or block",
                "regsim: kernel small(int*) grid (1,1,1) block (2048,1,1): launch refused: block exceeds the maximum (1024,1024,64)",
                "regsim: kernel shared_hungry(float*) grid (1,1,1) block (32,1,1): launch refused: 1048576 bytes of shared memory per block (0 static, 1048576 dynamic), more than the 49152 the GPU has",
            ],
            "{se}"
        );
        assert_eq!(refused.len(), 4, "{se}");
        assert!(
            refused[3].starts_with("regsim: kernel register_hungry(float const*, float*, int) grid (1,1,1) block (1024,1,1): launch refused: "),
            "{se}"
        );
        assert!(
            refused[3].ends_with("more than the 32768 a block may use"),
            "{se}"
        );
    }
}

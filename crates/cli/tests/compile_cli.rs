//! End-to-end tests of the front-end subcommands as a user runs them: the built `regsim`
//! binary on the committed workload PTX.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn regsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_regsim"))
        .args(args)
        .current_dir(repo_root())
        .output()
        .expect("the regsim binary runs")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn workload_ptx() -> Vec<String> {
    let mut files = Vec::new();
    for compiler in ["nvcc", "clang", "nvcc-lineinfo"] {
        let dir = repo_root().join("workloads/ptx").join(compiler);
        for entry in std::fs::read_dir(&dir).expect("workload PTX directory exists") {
            let path = entry.expect("directory entry").path();
            if path.extension().is_some_and(|e| e == "ptx") {
                files.push(
                    path.strip_prefix(repo_root())
                        .unwrap_or(&path)
                        .display()
                        .to_string(),
                );
            }
        }
    }
    files.sort();
    files
}

#[test]
fn ptx_check_accepts_every_workload_file() {
    let files = workload_ptx();
    assert!(
        files.len() >= 30,
        "expected the committed workload PTX, found {}",
        files.len()
    );
    let mut args = vec!["ptx", "check"];
    args.extend(files.iter().map(String::as_str));
    let out = regsim(&args);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert_eq!(
        stdout(&out)
            .lines()
            .filter(|l| l.contains(": ok ("))
            .count(),
        files.len()
    );
}

#[test]
fn ptx_check_fails_with_a_located_diagnostic() {
    let dir = tempdir();
    let bad = dir.join("bad.ptx");
    std::fs::write(
        &bad,
        ".version 7.8\n.target sm_70\n.address_size 64\n.visible .entry k()\n{\n  .reg .b32 %r<3>;\n  add.s32 %r1, %r2;\n  ret;\n}\n",
    )
    .expect("write test PTX");
    let good = repo_root().join("workloads/ptx/nvcc/saxpy.ptx");
    let out = regsim(&[
        "ptx",
        "check",
        good.to_str().unwrap(),
        bad.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "one bad file makes the check fail"
    );
    let err = stderr(&out);
    assert!(
        err.contains("bad.ptx:7:3"),
        "diagnostic names file:line:col: {err}"
    );
    assert!(
        err.contains("in kernel 'k'") && err.contains("expects 3 operands"),
        "{err}"
    );
    assert!(err.contains("1 of 2 file(s) invalid"), "{err}");
}

#[test]
fn ptx_check_reports_syntax_errors_and_missing_files() {
    let dir = tempdir();
    let bad = dir.join("syntax.ptx");
    std::fs::write(
        &bad,
        ".version 7.8\n.target sm_70\n.visible .entry k()\n{\n  frobnicate.s32 %r1;\n}\n",
    )
    .expect("write test PTX");
    let out = regsim(&["ptx", "check", bad.to_str().unwrap(), "/no/such/file.ptx"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("syntax.ptx:5:3") && err.contains("unknown opcode 'frobnicate'"),
        "{err}"
    );
    assert!(err.contains("cannot read /no/such/file.ptx"), "{err}");
}

#[test]
fn ptx_check_rejects_files_without_a_module_header() {
    let dir = tempdir();
    let cases = [
        ("empty.ptx", "", "no `.version` and `.target` directive"),
        (
            "no_version.ptx",
            ".target sm_70\n.visible .entry k()\n{\n  ret;\n}\n",
            "no `.version` directive",
        ),
        (
            "no_target.ptx",
            ".version 7.0\n.visible .entry k()\n{\n  ret;\n}\n",
            "no `.target` directive",
        ),
    ];
    for (name, text, why) in cases {
        let path = dir.join(name);
        std::fs::write(&path, text).expect("write test PTX");
        let out = regsim(&["ptx", "check", path.to_str().unwrap()]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{name}: {err}");
        assert!(
            err.contains(&format!("{name}: not a PTX module: {why}")),
            "{name}: {err}"
        );
        assert!(!stdout(&out).contains(": ok"), "{name}");
    }
}

#[test]
fn compile_emits_cfg_dot_and_liveness() {
    let file = "workloads/ptx/nvcc/saxpy.ptx";
    let cfg = regsim(&["compile", file, "--emit", "cfg"]);
    assert!(cfg.status.success(), "{}", stderr(&cfg));
    assert!(
        stdout(&cfg).contains("fma.rn.f32"),
        "cfg shows decoded instructions"
    );

    let dot = regsim(&["compile", file, "--emit", "dot"]);
    let dot_text = stdout(&dot);
    assert!(dot_text.trim_start().starts_with("digraph"), "{dot_text}");
    assert!(dot_text.contains("->"), "dot has edges");

    let live = regsim(&["compile", file, "--emit", "liveness", "--json"]);
    let value: serde_json::Value =
        serde_json::from_slice(&live.stdout).expect("liveness JSON parses");
    let blocks = value["functions"][0]["blocks"].as_array().expect("blocks");
    assert!(blocks.len() > 1);
    // The entry block of a kernel has nothing live in: every register is defined first.
    assert_eq!(blocks[0]["live_in"].as_array().map(Vec::len), Some(0));
    let any_dead = blocks
        .iter()
        .flat_map(|b| b["instructions"].as_array().cloned().unwrap_or_default())
        .any(|i| {
            i["uses"]
                .as_array()
                .is_some_and(|u| u.iter().any(|u| u["dead_after"] == true))
        });
    assert!(any_dead, "some operand is the last use of its value");
}

#[test]
fn compile_ast_prints_ptx_that_checks_again() {
    let out = regsim(&[
        "compile",
        "workloads/ptx/clang/devfunc_call.ptx",
        "--emit",
        "ast",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let dir = tempdir();
    let printed = dir.join("printed.ptx");
    std::fs::write(&printed, &out.stdout).expect("write printed PTX");
    let again = regsim(&["ptx", "check", printed.to_str().unwrap()]);
    assert!(again.status.success(), "{}", stderr(&again));
}

#[test]
fn compile_regalloc_respects_the_register_cap() {
    let file = "workloads/ptx/nvcc/sgemm_regblock.ptx";
    let free = regsim(&["compile", file, "--emit", "regalloc", "--json"]);
    assert!(free.status.success(), "{}", stderr(&free));
    let free: serde_json::Value = serde_json::from_slice(&free.stdout).expect("JSON");
    let uncapped = free["kernels"][0]["registers"].as_u64().expect("registers");
    assert!(
        uncapped > 64,
        "the register-blocked SGEMM is register-heavy: {uncapped}"
    );
    assert_eq!(free["kernels"][0]["spill_bytes"], 0);

    let capped = regsim(&[
        "compile",
        file,
        "--emit",
        "regalloc",
        "--json",
        "--max-registers",
        "32",
    ]);
    assert!(capped.status.success(), "{}", stderr(&capped));
    let capped: serde_json::Value = serde_json::from_slice(&capped.stdout).expect("JSON");
    assert!(
        capped["kernels"][0]["registers"]
            .as_u64()
            .expect("registers")
            <= 32
    );
    assert!(
        capped["kernels"][0]["spill_bytes"]
            .as_u64()
            .expect("spill bytes")
            > 0
    );
}

#[test]
fn compile_rejects_an_unknown_function() {
    let out = regsim(&[
        "compile",
        "workloads/ptx/nvcc/saxpy.ptx",
        "--function",
        "nope",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no function or kernel named 'nope'"));
}

/// A fresh directory under the target dir (no extra dependency for temp dirs).
fn tempdir() -> PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "regsim-cli-test-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).expect("create temp dir");
    dir
}

#[test]
fn every_register_file_pass_runs_on_a_workload() {
    for pass in [
        "strands",
        "orf-lrf",
        "ltrf",
        "liveness-bits",
        "reuse-distance",
        "register-profile",
    ] {
        let out = regsim(&[
            "compile",
            "workloads/ptx/clang/nbody.ptx",
            "--pass",
            pass,
            "--json",
        ]);
        assert!(out.status.success(), "--pass {pass}: {}", stderr(&out));
        let _: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("--pass {pass} --json is not JSON: {e}"));
        let text = regsim(&["compile", "workloads/ptx/clang/nbody.ptx", "--pass", pass]);
        assert!(
            text.status.success() && !text.stdout.is_empty(),
            "--pass {pass} text form"
        );
    }
}

#[test]
fn ltrf_pass_reports_conflicts_before_and_after_renumbering() {
    let out = regsim(&[
        "compile",
        "workloads/ptx/nvcc/sgemm_tiled.ptx",
        "--pass",
        "ltrf",
        "--registers-per-interval",
        "8",
        "--banks",
        "16",
        "--json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(report["config"]["registers_per_interval"], 8);
    let kernel = &report["kernels"][0];
    assert!(kernel["intervals"].as_u64().expect("intervals") > 0);
    let before = kernel["conflict_free_fraction_before"]
        .as_f64()
        .expect("fraction before");
    let after = kernel["conflict_free_fraction_after"]
        .as_f64()
        .expect("fraction after");
    assert!((0.0..=1.0).contains(&before) && (0.0..=1.0).contains(&after));
    assert!(
        after >= before,
        "renumbering never makes conflicts worse: {before} -> {after}"
    );
}

#[test]
fn pass_options_are_checked_by_name() {
    let file = "workloads/ptx/nvcc/saxpy.ptx";
    let unknown = regsim(&[
        "compile",
        file,
        "--pass",
        "orf-lrf",
        "--set",
        "orf_entires=4",
    ]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(
        stderr(&unknown).contains("orf_entires"),
        "{}",
        stderr(&unknown)
    );

    let good = regsim(&[
        "compile",
        file,
        "--pass",
        "orf-lrf",
        "--set",
        "orf_entries=2",
        "--set",
        "lrf=none",
        "--json",
    ]);
    assert!(good.status.success(), "{}", stderr(&good));
    let report: serde_json::Value = serde_json::from_slice(&good.stdout).expect("JSON");
    assert_eq!(report["config"]["orf_entries"], 2, "{report}");

    let malformed = regsim(&["compile", file, "--pass", "strands", "--set", "novalue"]);
    assert_eq!(malformed.status.code(), Some(2));
    assert!(stderr(&malformed).contains("expected key=value"));
}

#[test]
fn debug_info_ptx_checks_and_compiles() {
    // nvcc -G and clang -g end each function with a label after its last `ret`.
    for file in [
        "crates/ptx/tests/data/nvcc_debug_sections.ptx",
        "crates/ptx/tests/data/clang_debug_sections.ptx",
    ] {
        let check = regsim(&["ptx", "check", file]);
        assert!(check.status.success(), "{file}: {}", stderr(&check));
        let alloc = regsim(&["compile", file, "--emit", "regalloc"]);
        assert!(alloc.status.success(), "{file}: {}", stderr(&alloc));
    }
}

#[test]
fn emit_annotations_shows_what_the_timing_model_reads() {
    let out = regsim(&[
        "compile",
        "workloads/ptx/nvcc/sgemm_tiled.ptx",
        "--emit",
        "annotations",
        "--json",
    ]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert_eq!(v["design"], "baseline");
    assert_eq!(v["passes"], "none");
    let kernel = &v["kernels"][0];
    assert_eq!(kernel["name"], "_Z11sgemm_tiledPKfS0_Pfiii");
    // The registers per thread are the allocator's (24 for the nvcc PTX, as scripts/register-table.py prints).
    assert_eq!(kernel["registers"], 24);
    let insts = kernel["functions"][0]["instructions"]
        .as_array()
        .expect("list");
    assert!(insts.len() > 20);
    // The baseline asks for no pass: every hint is "no information".
    for i in insts {
        assert_eq!(i["strand_end"], false);
        for o in i["srcs"].as_array().unwrap() {
            assert_eq!(o["dead_after"], false);
            assert_eq!(o["level"], "mrf");
        }
    }

    // A register cap is the one `regsim run --max-registers` applies.
    let out = regsim(&[
        "compile",
        "workloads/ptx/nvcc/sgemm_tiled.ptx",
        "--emit",
        "annotations",
        "--max-registers",
        "16",
    ]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert!(
        stdout(&out).contains("kernel _Z11sgemm_tiledPKfS0_Pfiii: 16 registers"),
        "{}",
        stdout(&out)
    );

    // An unknown design is refused with the key and the choices.
    let out = regsim(&[
        "compile",
        "workloads/ptx/nvcc/saxpy.ptx",
        "--emit",
        "annotations",
        "--rf",
        "nope",
    ]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("register_file.design: unknown variant `nope`"),
        "{}",
        stderr(&out)
    );
}

/// `--rf rfc` and `--rf orf-lrf` ask for their passes: liveness bits for the RFC's dead
/// values; the ORF/LRF placement (with its strands and read-operand fills) for the
/// compile-time hierarchy, configured by `register_file.orf_lrf`.
#[test]
fn emit_annotations_runs_the_passes_of_gebharts_designs() {
    let run = |extra: &[&str]| {
        let mut args = vec![
            "compile",
            "workloads/ptx/nvcc/saxpy.ptx",
            "--emit",
            "annotations",
            "--json",
        ];
        args.extend(extra);
        let out = regsim(&args);
        assert!(out.status.success(), "stderr: {}", stderr(&out));
        serde_json::from_str::<serde_json::Value>(&stdout(&out)).expect("JSON")
    };
    let srcs = |v: &serde_json::Value| -> Vec<serde_json::Value> {
        v["kernels"][0]["functions"][0]["instructions"]
            .as_array()
            .expect("list")
            .iter()
            .flat_map(|i| i["srcs"].as_array().cloned().unwrap_or_default())
            .collect()
    };
    let rfc = run(&["--rf", "rfc"]);
    assert_eq!(rfc["design"], "rfc");
    assert!(srcs(&rfc).iter().any(|o| o["dead_after"] == true));
    assert!(srcs(&rfc).iter().all(|o| o["level"] == "mrf"));
    let orf = run(&["--rf", "orf-lrf"]);
    assert!(srcs(&orf).iter().any(|o| o["level"] == "lrf"));
    assert!(srcs(&orf).iter().any(|o| o["level"] == "orf"));
    // Without an LRF nothing is placed there.
    let no_lrf = run(&[
        "--rf",
        "orf-lrf",
        "--set",
        "register_file.orf_lrf.lrf=\"none\"",
    ]);
    assert!(srcs(&no_lrf).iter().all(|o| o["level"] != "lrf"));
    assert!(srcs(&no_lrf).iter().any(|o| o["level"] == "orf"));
}

#[test]
fn ptx_check_accepts_the_modern_compiler_test_data() {
    let dir = repo_root().join("crates/emu/tests/data/modern");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("crates/emu/tests/data/modern")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "ptx"))
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert!(files.len() >= 2, "{files:?}");
    let mut args = vec!["ptx", "check"];
    args.extend(files.iter().map(String::as_str));
    let out = regsim(&args);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
}

#[test]
fn emit_control_bits_prints_stall_counts_counters_and_reuse_bits() {
    let out = regsim(&[
        "compile",
        "workloads/ptx/nvcc/saxpy.ptx",
        "--emit",
        "control-bits",
        "--json",
    ]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert_eq!(v["design"], "reuse-cache");
    let insts = v["kernels"][0]["functions"][0]["instructions"]
        .as_array()
        .expect("list");
    let control = |i: &serde_json::Value| i["control"].clone();
    // Every instruction has a stall count in the 4-bit field's range 1..=15.
    for i in insts {
        let s = control(i)["stall"].as_u64().expect("stall");
        assert!((1..=15).contains(&s), "{i}");
    }
    // The global load takes a counter and the instruction that reads its value waits
    // for it.
    let ld = insts
        .iter()
        .position(|i| i["text"].as_str().unwrap().starts_with("ld.global"))
        .expect("a global load");
    let c = control(&insts[ld])["write_counter"]
        .as_u64()
        .expect("counter");
    assert!(
        insts[ld + 1..]
            .iter()
            .any(|i| control(i)["wait_mask"].as_u64().unwrap() & (1 << c) != 0),
        "nobody waits for SB{c}"
    );
    // Text: the bits beside the instruction; a collector config has no control bits in
    // `--emit annotations`.
    let text = stdout(&regsim(&[
        "compile",
        "workloads/ptx/nvcc/saxpy.ptx",
        "--emit",
        "control-bits",
    ]));
    assert!(text.contains("wr=SB") && text.contains("wait=SB") && text.contains("stall="));
    let text = stdout(&regsim(&[
        "compile",
        "workloads/ptx/nvcc/saxpy.ptx",
        "--emit",
        "annotations",
    ]));
    assert!(!text.contains("stall="), "{text}");
}

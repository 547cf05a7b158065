//! `regsim correlate` as a user runs it: a real `regsim run --stats` file of a built-in
//! workload against reference files written here with known cycle and miss counts, so
//! every figure of the output has a known answer.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{regsim, repo_root};

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("correlate-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir.join(name)
}

/// Runs the `reduction` workload (two launches of one kernel) and returns its statistics.
fn reduction_stats(flags: &[&str], file: &str) -> (PathBuf, serde_json::Value) {
    let stats = scratch(file);
    let bin = repo_root().join("workloads/bin/reduction");
    let mut args = vec!["run", "--stats", stats.to_str().unwrap()];
    args.extend(flags);
    args.extend(["--", bin.to_str().unwrap()]);
    let out = regsim(&args);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let json = serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    (stats, json)
}

/// `key` of every entry of `json["kernels"]`.
fn per_kernel(json: &serde_json::Value, key: &str) -> Vec<u64> {
    json["kernels"]
        .as_array()
        .expect("a kernels list")
        .iter()
        .map(|k| k[key].as_u64().expect("a count"))
        .collect()
}

/// `regsim correlate --json --reference REFERENCE FLAGS... FILES...`: the exit status and
/// the JSON printed (null when stdout is not JSON).
fn correlate_json(
    reference: &Path,
    flags: &[&str],
    files: &[&Path],
) -> (Output, serde_json::Value) {
    let mut args = vec![
        "correlate",
        "--json",
        "--reference",
        reference.to_str().unwrap(),
    ];
    args.extend(flags);
    args.extend(files.iter().map(|f| f.to_str().unwrap()));
    let out = regsim(&args);
    let json = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    (out, json)
}

/// A reference directory: `reduction` with cycles 4000 and 1000, cumulative L1D misses
/// 2000 and 2003 and L2 misses 20 and 21 (accesses three and five times those);
/// `atomics_cas` failed in the simulator.
fn reference_dir() -> PathBuf {
    let dir = scratch("reference");
    std::fs::create_dir_all(&dir).unwrap();
    let launch = |cycles: u64, l1d: u64, l2: u64| {
        serde_json::json!({
            "kernel": "_Z10reduce_sumPKfPfi", "gpu_sim_cycle": cycles, "gpu_sim_insn": 1000,
            "cumulative": {"L1D_total_cache_misses": l1d, "L2_total_cache_misses": l2,
                           "L1D_total_cache_accesses": 3 * l1d,
                           "L2_total_cache_accesses": 5 * l2}
        })
    };
    let reduction = serde_json::json!({
        "exit_status": 0, "program_verdict": "PASS", "simulator_error": null,
        "kernels": [launch(4000, 2000, 20), launch(1000, 2003, 21)],
        "program": "reduction", "config": "TEST_CONFIG", "simulator": "a test reference",
    });
    let atomics = serde_json::json!({
        "exit_status": 134, "program_verdict": null,
        "simulator_error": "instructions.cc: an assertion", "kernels": [],
        "program": "atomics_cas", "config": "TEST_CONFIG", "simulator": "a test reference",
    });
    std::fs::write(dir.join("reduction.json"), reduction.to_string()).unwrap();
    std::fs::write(dir.join("atomics_cas.json"), atomics.to_string()).unwrap();
    dir
}

/// `(accesses, misses)` of one level of one kernel as GPGPU-Sim counts them: per sector,
/// or per line for a line-allocating L1D (`line_l1d`).
fn counts(k: &serde_json::Value, level: &str, line_l1d: bool) -> (u64, u64) {
    let c = |name: &str| k["memory"][level][name].as_u64().unwrap();
    if level == "l1d" && line_l1d {
        (c("reads") + c("writes"), c("misses") + c("sector_misses"))
    } else {
        (c("sector_accesses"), c("sector_access_misses"))
    }
}

#[test]
fn correlate_prints_errors_summaries_failures_json_and_svg() {
    // GPGPU-Sim's GTX480 transcription: a line-allocating L1D.
    let (stats, json) = reduction_stats(&["--gpu", "gpgpusim-gtx480"], "reduction.json");
    let cycles: Vec<u64> = per_kernel(&json, "cycles");
    assert_eq!(cycles.len(), 2);
    let reference = reference_dir();
    let svg = scratch("cycles.svg");
    let out = regsim(&[
        "correlate",
        "--reference",
        reference.to_str().unwrap(),
        "--svg",
        svg.to_str().unwrap(),
        stats.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{out:?}");

    let e1 = 100.0 * (cycles[0] as f64 - 4000.0) / 4000.0;
    let e2 = 100.0 * (cycles[1] as f64 - 1000.0) / 1000.0;
    // The first six columns of each kernel's row (column widths depend on the values).
    let row = |launch: usize, reference: u64, regsim: u64, e: f64| {
        format!("reduction {launch} reduce_sum {reference} {regsim} {e:+.1}%")
    };
    let rows: Vec<String> = text
        .lines()
        .filter(|l| l.starts_with("reduction "))
        .map(|l| l.split_whitespace().take(6).collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(
        rows,
        [row(1, 4000, cycles[0], e1), row(2, 1000, cycles[1], e2)],
        "{text}"
    );
    let mape = (e1.abs() + e2.abs()) / 2.0;
    assert!(
        text.contains(&format!(
            "cycles: 2 kernels, MAPE {mape:.1}%, Pearson correlation "
        )),
        "{text}"
    );
    assert!(
        text.contains("atomics_cas  ")
            && text.contains("reference failed: instructions.cc: an assertion"),
        "{text}"
    );
    assert!(text.starts_with("regsim "), "{text}");

    let svg_text = std::fs::read_to_string(&svg).expect("the SVG is written");
    assert!(svg_text.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert_eq!(svg_text.matches("<circle ").count(), 2);
    assert!(svg_text.contains("class=\"identity\""));
    assert!(svg_text.contains(&format!(
        "reduction #1 reduce_sum: reference 4000, regsim {}",
        cycles[0]
    )));

    let (out, j) = correlate_json(&reference, &[], &[&stats]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let k = &j["kernels"][1];
    assert_eq!(k["reference_cycles"], 1000);
    assert_eq!(k["regsim_cycles"], cycles[1]);
    // Per-launch reference misses are differences of the cumulative counters.
    assert_eq!(k["reference_l1d_misses"], 3);
    assert_eq!(k["reference_l2_misses"], 1);
    assert_eq!(k["reference_l1d_accesses"], 9);
    assert_eq!(k["reference_l2_accesses"], 5);
    assert_eq!(json["gpu"]["config"]["l1d"]["fetch"], "line");
    let (l1d_accesses, l1d_misses) = counts(&json["kernels"][1], "l1d", true);
    let (l2_accesses, l2_misses) = counts(&json["kernels"][1], "l2", true);
    assert_eq!(k["regsim_l1d_accesses"], l1d_accesses);
    assert_eq!(k["regsim_l1d_misses"], l1d_misses);
    assert_eq!(k["regsim_l2_accesses"], l2_accesses);
    assert_eq!(k["regsim_l2_misses"], l2_misses);
    // Every L2 access names at least one sector, and the L1D's line fills four.
    let l2 = &json["kernels"][1]["memory"]["l2"];
    let l2_lines = l2["reads"].as_u64().unwrap() + l2["writes"].as_u64().unwrap();
    assert!(l2_lines > 0 && l2_accesses > l2_lines, "{l2}");
    let metrics: Vec<&str> = j["summaries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["metric"].as_str().unwrap())
        .collect();
    assert_eq!(
        metrics,
        [
            "cycles",
            "l1d_accesses",
            "l1d_misses",
            "l2_accesses",
            "l2_misses"
        ]
    );
    let summary = &j["summaries"][0];
    assert_eq!(summary["metric"], "cycles");
    assert!((summary["mape_percent"].as_f64().unwrap() - mape).abs() < 1e-9);
    assert_eq!(j["programs"][0]["program"], "atomics_cas");
    assert_eq!(j["programs"][0]["status"], "reference_failed");
    assert_eq!(j["programs"][1]["status"], "compared");
    assert_eq!(j["reference_configs"], serde_json::json!(["TEST_CONFIG"]));
}

#[test]
fn correlate_refuses_bad_inputs_by_name() {
    let reference = reference_dir();
    let missing = scratch("no-such-dir");
    let out = regsim(&[
        "correlate",
        "--reference",
        missing.to_str().unwrap(),
        reference.join("reduction.json").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("reading {}", missing.display())),
        "{err}"
    );

    let (functional, _) = reduction_stats(&["--functional"], "functional.json");
    let out = regsim(&[
        "correlate",
        "--reference",
        reference.to_str().unwrap(),
        functional.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("{}: not a timing-mode run", functional.display())),
        "{err}"
    );
}

/// The GPGPU-Sim reference set committed in `reference/gpgpusim/` loads as a whole, and a
/// fresh clone compares a real run against it: `reduction`'s two launches on GPGPU-Sim's
/// GTX480 transcription, with the reference's cycles.
#[test]
fn the_committed_reference_set_compares_a_real_run() {
    let (stats, _) = reduction_stats(&["--gpu", "gpgpusim-gtx480"], "reduction-ref.json");
    let reference = repo_root().join("reference/gpgpusim/SM2_GTX480");
    let (out, j) = correlate_json(&reference, &[], &[&stats]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(j["reference_configs"], serde_json::json!(["SM2_GTX480"]));
    // Every one of the nineteen programs is listed, reduction compared on both launches.
    assert_eq!(j["programs"].as_array().unwrap().len(), 19, "{j}");
    let reference_cycles: Vec<u64> = per_kernel(&j, "reference_cycles");
    // reference/gpgpusim/SM2_GTX480/reduction.json: gpu_sim_cycle of its two launches.
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(reference.join("reduction.json")).unwrap())
            .unwrap();
    let expected: Vec<u64> = per_kernel(&file, "gpu_sim_cycle");
    assert_eq!(expected.len(), 2);
    assert_eq!(reference_cycles, expected);
}

/// A reference set of programs that print their own verdicts, as PolyBench-style programs
/// do, with counters written as floats and an L2 that never misses (the data copied into
/// it), and a second run of the program with arguments; regsim's statistics are a real
/// `reduction` run, the same file with those arguments, and a stray JSON file.
#[test]
fn correlate_compares_self_checking_programs_and_runs_with_arguments() {
    let (stats, json) = reduction_stats(&["--gpu", "gpgpusim-gtx480"], "selfcheck-stats.json");
    let cycles = per_kernel(&json, "cycles");
    let dir = scratch("selfcheck-reference");
    std::fs::create_dir_all(&dir).unwrap();
    let verdict = "Non-Matching CPU-GPU Outputs Beyond Error Threshold of 0.05 Percent: 0";
    let launch = |cycles: u64, l1d: f64| {
        serde_json::json!({
            "kernel": "_Z10reduce_sumPKfPfi", "gpu_sim_cycle": cycles,
            "cumulative": {"L1D_total_cache_misses": l1d, "L1D_total_cache_accesses": 3.0 * l1d,
                           "L2_total_cache_misses": 0, "L2_total_cache_accesses": 4.0 * l1d}
        })
    };
    let reference = |args: &[&str], first: u64| {
        serde_json::json!({
            "exit_status": 0, "program_verdict": verdict, "simulator_error": null,
            "program": "reduction", "args": args, "config": "SELF_CHECK",
            "simulator": "a test reference",
            "kernels": [launch(first, 2000.0), launch(1000, 2.003e3)],
        })
    };
    std::fs::write(dir.join("reduction.json"), reference(&[], 4000).to_string()).unwrap();
    std::fs::write(
        dir.join("reduction-alt.json"),
        reference(&["--alt", "7"], 8000).to_string(),
    )
    .unwrap();
    let mut alt = json.clone();
    alt["program"]["args"] = serde_json::json!(["--alt", "7"]);
    let alt_stats = scratch("selfcheck-alt.json");
    std::fs::write(&alt_stats, alt.to_string()).unwrap();
    let stray = scratch("selfcheck-summary.json");
    std::fs::write(&stray, r#"{"rows": 3}"#).unwrap();

    // Default rule: every completed run is compared, whatever its program printed.
    let files = [stats.as_path(), stray.as_path(), alt_stats.as_path()];
    let (out, j) = correlate_json(&dir, &[], &files);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "warning: {}: skipped: not a regsim statistics file",
            stray.display()
        )),
        "{err}"
    );
    let compared: Vec<(String, u64, u64)> = j["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            let args: Vec<&str> = k["args"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap())
                .collect();
            (
                args.join(" "),
                k["reference_cycles"].as_u64().unwrap(),
                k["regsim_cycles"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        compared,
        [
            (String::new(), 4000, cycles[0]),
            (String::new(), 1000, cycles[1]),
            ("--alt 7".to_string(), 8000, cycles[0]),
            ("--alt 7".to_string(), 1000, cycles[1]),
        ]
    );
    // Float counters are counts; an L2 with no miss is a counter the reference has.
    assert_eq!(j["kernels"][1]["reference_l1d_misses"], 3);
    assert_eq!(j["kernels"][1]["reference_l2_accesses"], 12);
    let l2_misses = &j["summaries"][4];
    assert_eq!(l2_misses["metric"], "l2_misses");
    assert_eq!(l2_misses["kernels"], 4);
    assert_eq!(l2_misses["mape_percent"], serde_json::Value::Null);
    let out = regsim(&[
        "correlate",
        "--reference",
        dir.to_str().unwrap(),
        stats.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("L2 misses: 2 kernels, MAPE undefined (every reference value is 0)"),
        "{text}"
    );
    assert!(text.contains("reduction --alt 7"), "{text}");

    // A regular expression on the verdict line.
    let (out, j) = correlate_json(&dir, &["--verdict", "Percent: 0$"], &files);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(j["kernels"].as_array().unwrap().len(), 4);

    // Only PASS verdicts: nothing is compared, and the exit status and message say so.
    let (out, j) = correlate_json(&dir, &["--verdict", "pass"], &files);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(j["kernels"], serde_json::json!([]));
    assert_eq!(j["programs"][0]["status"], "verdict_rejected");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "error: no kernel compared: 2 reference runs whose verdict the --verdict rule \
             rejects (--verdict any compares every completed run)"
        ),
        "{err}"
    );

    let out = regsim(&[
        "correlate",
        "--verdict",
        "Percent: (",
        "--reference",
        dir.to_str().unwrap(),
        stats.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("`Percent: (` is neither `any`, `pass` nor a regular expression"),
        "{err}"
    );
}

//! `regsim calibrate` as a user runs it: the committed microbenchmarks
//! (calibrate/bin/microbench) on the simulated GPU, each latency beside its published
//! figure. The runtime library is the `cudart` dev-dependency, as for `regsim run`.

use std::process::{Command, Output};

fn calibrate(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_regsim"))
        .arg("calibrate")
        .args(args)
        .env_remove("REGSIM_CUDART")
        .env_remove("REGSIM_CONFIGS")
        .env_remove("REGSIM_CALIBRATE_PROGRAM")
        .output()
        .expect("the regsim binary runs")
}

fn results(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("calibrate --json prints JSON")
}

fn row<'a>(v: &'a serde_json::Value, test: &str) -> &'a serde_json::Value {
    v["results"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["test"] == test))
        .unwrap_or_else(|| panic!("no {test} in {v}"))
}

/// Issue 25's acceptance on qv100 (the modern core since 2026-11-28): the dependent FP32,
/// L1, L2 and shared latencies within 15% of Jia et al. 2018's V100 figures, DRAM within
/// 15% of Arafa et al. 2019's.
#[test]
fn qv100_latencies_are_within_15_percent_of_the_published_volta_figures() {
    let v = results(&calibrate(&["--gpu", "qv100", "--json"]));
    assert_eq!(v["gpu"], "qv100");
    for test in [
        "fp32_dep",
        "chase_l1",
        "chase_l2",
        "chase_shared",
        "fp64_dep",
    ] {
        let r = row(&v, test);
        let e = r["error"].as_f64().unwrap_or_else(|| panic!("{r}"));
        assert!(e.abs() <= 0.15, "{test}: {r}");
        assert!(
            r["source"].as_str().unwrap().contains("Jia et al. 2018"),
            "{r}"
        );
    }
    // DRAM: Arafa et al. 2019's V100 figure (Jia et al.'s was not at hand); that source's
    // L1, L2 and shared rows agree with Jia et al.'s within 7% (docs/calibration.md).
    let dram = row(&v, "chase_dram");
    assert!(dram["measured"].as_f64().unwrap() > row(&v, "chase_l2")["measured"].as_f64().unwrap());
    let e = dram["error"].as_f64().unwrap_or_else(|| panic!("{dram}"));
    assert!(e.abs() <= 0.15, "{dram}");
    assert!(
        dram["source"]
            .as_str()
            .unwrap()
            .contains("Arafa et al. 2019"),
        "{dram}"
    );
    // A test with no published figure is listed, measured, without an error.
    let launch = row(&v, "launch");
    assert!(launch["measured"].as_f64().unwrap() > 0.0);
    assert!(launch["error"].is_null());
}

/// The collector core's serialisation (scoreboard released at writeback, then operand
/// read) is what made a dependent FFMA take twice its latency; with it the figure moves
/// away from the published one, so the test above can fail.
#[test]
fn the_scoreboard_core_is_slower_than_published_on_dependent_chains() {
    let v = results(&calibrate(&[
        "--gpu",
        "qv100",
        "--set",
        "sm.core=collector",
        "--set",
        "sm.dependence=scoreboard",
        "--json",
    ]));
    let e = row(&v, "fp32_dep")["error"].as_f64().unwrap();
    assert!(e > 0.5, "{e}");
}

#[test]
fn a_table_names_each_source_and_a_bad_gpu_is_an_error() {
    let out = calibrate(&["--gpu", "qv100"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("fp32_dep") && text.contains("Jia et al. 2018"),
        "{text}"
    );
    let out = calibrate(&["--gpu", "no-such-gpu"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such-gpu"));
}

/// The modern core on rtx-a6000 (issue 25): one warp issues independent FFMAs about one
/// per cycle only with its front end refilling the buffer every cycle and the reuse cache
/// serving the two repeated sources; without the cache every FFMA reads all three
/// sources from two single-ported banks (1.5 reads per bank per FFMA, more where two of
/// them share a bank: the Allocate stage's three-cycle windows), and the collector core's
/// fetch waits for an empty buffer.
#[test]
fn the_modern_core_needs_its_reuse_cache_and_front_end_for_one_ffma_per_cycle() {
    let indep = |args: &[&str]| {
        let mut a = vec!["--gpu", "rtx-a6000", "--json"];
        a.extend_from_slice(args);
        let v = results(&calibrate(&a));
        let dep = row(&v, "fp32_dep")["error"].as_f64().unwrap();
        assert!(dep.abs() <= 0.10, "fp32_dep {dep} with {args:?}");
        row(&v, "fp32_indep")["measured"].as_f64().unwrap()
    };
    let modern = indep(&[]);
    assert!(modern < 1.1, "{modern}");
    // Without the cache the FFMAs' register sources conflict in their bank; their
    // kernel parameters are constant operands (`sm.constant_operands`), no bank read.
    let no_cache = indep(&["--rf", "baseline"]);
    assert!(no_cache > 1.5 && no_cache > modern + 0.3, "{no_cache}");
    // Without constant operands the parameters are loaded once before the loop, so the
    // loop's bank reads are the same; the two differ only in the prolog the per-instruction
    // figure includes (on the session-11 tree 1.54 against 1.55 cycles), hence the 0.02
    // allowance.
    let no_cache_no_constants = indep(&["--rf", "baseline", "--set", "sm.constant_operands=false"]);
    assert!(
        no_cache_no_constants >= no_cache - 0.02,
        "{no_cache_no_constants} {no_cache}"
    );
    // The collector core has no control bits: it takes the scoreboard with stall counts.
    let collector = indep(&[
        "--set",
        "sm.core=collector",
        "--set",
        "sm.dependence=stall_counter",
        "--set",
        "sm.scheduler=gto",
        "--set",
        "sm.memory_buffer.entries=0",
        "--set",
        "register_file.result_queue=false",
        "--set",
        "sm.constant_operands=false",
        "--set",
        "sm.l0_stream_buffer=0",
    ]);
    assert!(collector > modern + 0.3, "{collector}");
}

/// Issue 25's acceptance on rtx-a6000: every latency MICRO'25 gives for the A6000's
/// architecture (Table 2's loads by width and kind, LDGSTS; Listing 1's FFMA pairs; the
/// same-bank FFMA of §5.3) within 10% of the published figure.
#[test]
fn rtx_a6000_latencies_are_within_10_percent_of_micro25() {
    let v = results(&calibrate(&["--gpu", "rtx-a6000", "--json"]));
    let micro25: Vec<_> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["source"].as_str().is_some_and(|s| s.contains("MICRO'25")))
        .collect();
    // Table 2's eleven rows (three global, three shared, two constant, three LDGSTS),
    // Listing 1's three pairs, the same-bank FFMA, the two chases and fp32_dep.
    assert_eq!(micro25.len(), 18, "{v}");
    for r in micro25 {
        let e = r["error"].as_f64().unwrap_or_else(|| panic!("{r}"));
        assert!(e.abs() <= 0.10, "{r}");
    }
}

/// The mechanisms behind those figures, one at a time: without the 512-bit return a
/// 128-bit load is as fast as a 32-bit one; without the per-thread address cycles a
/// register-addressed constant load is one bank read slower than an immediate one;
/// Listing 1's pairs differ by the second FFMA's bank reads.
#[test]
fn each_rtx_a6000_memory_mechanism_moves_its_rows() {
    let measured = |sets: &[&str], test: &str| {
        let mut a = vec!["--gpu", "rtx-a6000", "--json"];
        for s in sets {
            a.extend_from_slice(&["--set", s]);
        }
        row(&results(&calibrate(&a)), test)["measured"]
            .as_f64()
            .unwrap()
    };
    let flat = ["l1d.return_bits_per_cycle=0"];
    let (l32, l128) = (measured(&flat, "ldg32"), measured(&flat, "ldg128"));
    assert!(l128 - l32 < 2.0, "{l32} {l128}");
    let v = results(&calibrate(&["--gpu", "rtx-a6000", "--json"]));
    let m = |t: &str| row(&v, t)["measured"].as_f64().unwrap();
    assert!(m("ldg128") - m("ldg32") >= 6.0);
    assert!(m("ldc32") - m("ldc32_imm") >= 2.5);
    // Without them only the address register's bank read is left (a memory instruction
    // reads its sources from the banks, never from the register-file cache): one cycle.
    let same = ["sm.per_thread_address_cycles=0"];
    let read = measured(&same, "ldc32") - measured(&same, "ldc32_imm");
    assert!((0.5..1.5).contains(&read), "{read}");
    assert_eq!(
        [
            m("ffma_pair_odd_odd"),
            m("ffma_pair_even_odd"),
            m("ffma_pair_even_even")
        ],
        [5.0, 6.0, 7.0]
    );
}

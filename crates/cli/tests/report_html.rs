//! Energy in the statistics, `regsim report --html` and `regsim paper`, as a user runs
//! them: real `regsim run`s of two small workloads under two designs, the report rendered
//! in headless Chromium (Debian's `chromium`, installed by scripts/install-test-tools.sh;
//! the rendering check skips with a printed reason where it is absent).
//!
//! Cost (release build): four short timing runs, a few seconds; Chromium about 2 s.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{regsim, repo_root};
use serde_json::Value;

fn scratch(name: &str) -> PathBuf {
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("report-html-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir.join(name)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `regsim run` of a built-in workload; returns the statistics file.
fn run(workload: &str, design: &str, sets: &[&str]) -> PathBuf {
    let stats = scratch(&format!("{workload}-{design}-{}.json", sets.len()));
    let stats_arg = stats.display().to_string();
    let program = repo_root().join("workloads/bin").join(workload);
    let program = program.display().to_string();
    let mut args = vec!["run", "--rf", design, "--stats", &stats_arg];
    for s in sets {
        args.extend(["--set", s]);
    }
    args.extend(["--", &program]);
    let out = regsim(&args);
    assert!(
        out.status.success(),
        "{workload} {design}: {}",
        text(&out.stderr)
    );
    stats
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("stats written")).expect("JSON")
}

#[test]
fn energy_is_in_the_stats_and_summary_and_overrides_apply() {
    let stats = run("saxpy", "baseline", &["energy.mrf_read_pj=1"]);
    let v = read_json(&stats);
    let total = &v["total"];
    let e = &total["energy"];
    let structures = e["structures"].as_array().expect("energy per structure");
    let mrf = structures
        .iter()
        .find(|s| s["structure"] == "mrf")
        .expect("mrf energy");
    let read = &mrf["accesses"][0];
    assert_eq!(read["access"], "read");
    // The override: 1 pJ per MRF read, and the count is the register file's reads.
    assert_eq!(read["pj_per_event"], 1.0);
    assert_eq!(read["count"], total["register_file"]["reads"]);
    let count = read["count"].as_f64().unwrap();
    assert!((read["joules"].as_f64().unwrap() - count * 1e-12).abs() < 1e-18);
    // Totals: the sum over structures.
    let sum: f64 = structures
        .iter()
        .map(|s| s["joules"].as_f64().unwrap())
        .sum();
    assert!((e["total_joules"].as_f64().unwrap() - sum).abs() <= 1e-9 * sum);
    assert!(e["execution_joules"].as_f64().unwrap() > 0.0);
    assert!(e["memory_joules"].as_f64().unwrap() > 0.0);
    // Per kernel as well.
    assert!(v["kernels"][0]["energy"]["total_joules"].as_f64().unwrap() > 0.0);

    let out = regsim(&[
        "run",
        "--summary",
        "--",
        &repo_root()
            .join("workloads/bin/saxpy")
            .display()
            .to_string(),
    ]);
    assert!(out.status.success());
    assert!(
        text(&out.stderr).contains("energy: "),
        "{}",
        text(&out.stderr)
    );

    let out = regsim(&[
        "run",
        "--set",
        "energy.mrf_raed_pj=1",
        "--",
        &repo_root()
            .join("workloads/bin/saxpy")
            .display()
            .to_string(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("energy.mrf_raed_pj"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn html_report_renders_in_headless_chromium() {
    let mut files = Vec::new();
    for w in ["saxpy", "reduction"] {
        for d in ["baseline", "ideal"] {
            files.push(run(w, d, &[]).display().to_string());
        }
    }
    let out_dir = scratch("html");
    let out_arg = out_dir.display().to_string();
    let mut args = vec!["report", "--html", &out_arg];
    args.extend(files.iter().map(String::as_str));
    let out = regsim(&args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let html = std::fs::read_to_string(out_dir.join("index.html")).expect("index.html");
    for f in [
        "ipc_normalized",
        "rf_accesses",
        "hit_ratios",
        "energy",
        "stalls",
        "cycles_scatter",
    ] {
        let svg = std::fs::read_to_string(out_dir.join(format!("{f}.svg"))).expect("svg file");
        assert!(html.contains(&svg), "{f} is inline in the page");
    }
    // IPC: one series (ideal) × two workloads + geomean; scatter: one kernel per compared
    // run (saxpy has one, reduction at least one).
    assert_eq!(html.matches("<svg").count(), 6);
    assert!(html.matches("class=\"point\"").count() >= 2);
    let bars = html.matches("class=\"bar\"").count();
    let segments = html.matches("class=\"segment\"").count();
    assert!(
        bars >= 3 && segments >= 8,
        "{bars} bars, {segments} segments"
    );
    // Every IPC bar has its value printed on it, and the axis spans the values (ideal is
    // within a few percent of baseline here), not 0 to the largest.
    let ipc = std::fs::read_to_string(out_dir.join("ipc_normalized.svg")).unwrap();
    let ipc_bars = ipc.matches("class=\"bar\"").count();
    assert_eq!(ipc_bars, 3);
    assert_eq!(ipc.matches("class=\"value\"").count(), ipc_bars);
    assert!(!ipc.contains("text-anchor=\"end\">0</text>"), "{ipc}");
    // Each title once: in the page's heading, not again inside the SVG.
    assert_eq!(html.matches("class=\"title\"").count(), 0);
    for title in [
        "IPC normalized to baseline",
        "Register-file accesses by level",
        "On-chip energy by structure, normalized to baseline",
    ] {
        assert_eq!(html.matches(title).count(), 1, "{title}");
    }
    // The energy bars are on-chip; DRAM, at a placeholder price, is a table column.
    let energy = std::fs::read_to_string(out_dir.join("energy.svg")).unwrap();
    assert!(!energy.contains(">dram"), "{energy}");
    assert!(html.contains("DRAM energy (J, placeholder price)"));
    let values = html.matches("class=\"value\"").count();

    // With a reference directory: regsim correlate's scatter of the baseline runs.
    let saxpy = read_json(Path::new(&files[0]));
    let reference = scratch("reference");
    std::fs::create_dir_all(&reference).unwrap();
    let kernel = saxpy["kernels"][0]["mangled"].as_str().unwrap();
    let cycles = saxpy["kernels"][0]["cycles"].as_u64().unwrap();
    let doc = serde_json::json!({
        "exit_status": 0, "program_verdict": "PASS", "simulator_error": null,
        "kernels": [{"kernel": kernel, "gpu_sim_cycle": 2 * cycles, "gpu_sim_insn": 1,
                     "cumulative": {"L1D_total_cache_misses": 0, "L2_total_cache_misses": 0}}],
        "program": "saxpy", "config": "TEST", "simulator": "a test reference",
    });
    std::fs::write(reference.join("saxpy.json"), doc.to_string()).unwrap();
    // reduction: every launch at 1.1 times regsim's cycles (inside the ±10% band).
    let reduction = read_json(Path::new(&files[2]));
    let launches: Vec<Value> = reduction["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            let cycles = k["cycles"].as_u64().unwrap();
            serde_json::json!({"kernel": k["mangled"], "gpu_sim_cycle": cycles * 11 / 10,
                "gpu_sim_insn": 1,
                "cumulative": {"L1D_total_cache_misses": 0, "L2_total_cache_misses": 0}})
        })
        .collect();
    let reduction_launches = launches.len();
    let doc = serde_json::json!({
        "exit_status": 0, "program_verdict": "PASS", "simulator_error": null,
        "kernels": launches, "program": "reduction", "config": "TEST",
        "simulator": "a test reference",
    });
    std::fs::write(reference.join("reduction.json"), doc.to_string()).unwrap();
    let with_ref = scratch("html-ref");
    let with_ref_arg = with_ref.display().to_string();
    let reference_arg = reference.display().to_string();
    let mut args = vec![
        "report",
        "--html",
        &with_ref_arg,
        "--reference",
        &reference_arg,
    ];
    args.extend(files.iter().map(String::as_str));
    // A source given twice (as when merging overlapping stores): its run is one row, and
    // the header counts the rows.
    args.push(&files[0]);
    let out = regsim(&args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let page = std::fs::read_to_string(with_ref.join("index.html")).unwrap();
    assert_eq!(page.matches("<svg").count(), 7);
    assert_eq!(page.matches("<tr><td>").count(), 4);
    assert!(
        page.contains("<p>4 runs (1 more run of a point already listed left out"),
        "{page}"
    );
    // The correlation scatter: one point per compared kernel, coloured by workload with
    // a legend entry each, the ±10% and ±25% bands, and its title only in the page.
    let corr = std::fs::read_to_string(with_ref.join("correlation.svg")).unwrap();
    let points: Vec<&str> = corr.lines().filter(|l| l.starts_with("<circle")).collect();
    assert_eq!(points.len(), 1 + reduction_launches, "{corr}");
    // Sorted workloads: reduction is colour 0, saxpy colour 1.
    let in_colour = |i: usize| {
        let fill = format!("fill=\"{}\"", correlate::svg::colour(i));
        points.iter().filter(|l| l.contains(&fill)).count()
    };
    assert_eq!(
        (in_colour(0), in_colour(1)),
        (reduction_launches, 1),
        "{corr}"
    );
    assert_eq!(corr.matches("class=\"legend\"").count(), 2);
    assert_eq!(corr.matches("class=\"band\"").count(), 2);
    assert!(!corr.contains("class=\"title\""));
    assert_eq!(page.matches("against reference TEST").count(), 1);

    let Some(chromium) = ["chromium", "chromium-browser"].into_iter().find(|c| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    }) else {
        println!("SKIPPED the Chromium rendering: no chromium on PATH (scripts/install-test-tools.sh installs it)");
        return;
    };
    let url = format!(
        "file://{}",
        std::fs::canonicalize(out_dir.join("index.html"))
            .unwrap()
            .display()
    );
    let common = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--window-size=1400,2600",
    ];
    let dom = Command::new(chromium)
        .args(common)
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .expect("chromium runs");
    let dom = text(&dom.stdout);
    // The DOM Chromium built has every chart and every mark the page has.
    assert_eq!(
        dom.matches("<svg").count(),
        6,
        "{}",
        &dom[..dom.len().min(500)]
    );
    assert_eq!(dom.matches("class=\"bar\"").count(), bars);
    assert_eq!(dom.matches("class=\"segment\"").count(), segments);
    assert_eq!(dom.matches("class=\"value\"").count(), values);
    assert_eq!(dom.matches("<h2>").count(), 6);
    assert_eq!(dom.matches("class=\"title\"").count(), 0);
    // The page with the reference: the scatter's colours, legend and bands are drawn.
    let url_ref = format!(
        "file://{}",
        std::fs::canonicalize(with_ref.join("index.html"))
            .unwrap()
            .display()
    );
    let dom_ref = Command::new(chromium)
        .args(common)
        .arg("--dump-dom")
        .arg(&url_ref)
        .output()
        .expect("chromium runs");
    let dom_ref = text(&dom_ref.stdout);
    assert_eq!(dom_ref.matches("<svg").count(), 7);
    assert_eq!(dom_ref.matches("class=\"band\"").count(), 2);
    assert_eq!(
        dom_ref.matches("class=\"point\"").count(),
        page.matches("class=\"point\"").count()
    );
    let shot = out_dir.join("screenshot.png");
    let o = Command::new(chromium)
        .args(common)
        .arg(format!("--screenshot={}", shot.display()))
        .arg(&url)
        .output()
        .expect("chromium runs");
    assert!(shot.is_file(), "no screenshot: {}", text(&o.stderr));
    let stats = Command::new("python3")
        .arg(repo_root().join("scripts/png-stats.py"))
        .arg(&shot)
        .output();
    match stats {
        Ok(s) if s.status.success() => {
            let line = text(&s.stdout);
            let f: Vec<f64> = line
                .split_whitespace()
                .map(|x| x.parse().unwrap())
                .collect();
            // Not blank: the charts' colours are there and a fair part is not white.
            assert!(f[2] >= 8.0, "distinct colours: {line}");
            assert!(f[3] > 0.02, "non-white fraction: {line}");
        }
        _ => println!("SKIPPED the screenshot pixel check: python3 could not read the PNG"),
    }
}

/// `regsim paper PAPER --spec SPEC --out OUT -j 2` for a spec that lists the design
/// `no-such-design`: succeeds and names it as not yet available; returns the output and
/// its stdout.
fn paper_with_no_such_design(paper: &str, spec: &Path, out_dir: &Path) -> (Output, String) {
    let out = regsim(&[
        "paper",
        paper,
        "--spec",
        &spec.display().to_string(),
        "--out",
        &out_dir.display().to_string(),
        "-j",
        "2",
    ]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains(
            "designs not yet available (unknown to register_file.design): no-such-design"
        ),
        "{stdout}"
    );
    (out, stdout)
}

#[test]
fn paper_names_designs_not_yet_available() {
    let spec = scratch("spec.toml");
    std::fs::write(
        &spec,
        "[sweep]\nworkloads = [\"saxpy\"]\nconfigs = [\"gtx480\"]\n\
         designs = [\"baseline\", \"ideal\", \"no-such-design\"]\n",
    )
    .unwrap();
    let out_dir = scratch("paper");
    let (_, stdout) = paper_with_no_such_design("malekeh", &spec, &out_dir);
    // Malekeh's tables, with the paper's numbers; malekeh itself is not in this spec.
    assert!(
        stdout.contains("1.096") && stdout.contains("not run"),
        "{stdout}"
    );
    assert!(out_dir.join("report/index.html").is_file());
    // A second run finds the runs done and prints the same tables.
    let again = regsim(&[
        "paper",
        "malekeh",
        "--spec",
        &spec.display().to_string(),
        "--out",
        &out_dir.display().to_string(),
    ]);
    assert_eq!(text(&again.stdout), stdout);
    // The runs went into a regsim sweep store, which report --html reads as a source.
    let store = out_dir.join("store.sqlite");
    assert!(store.is_file());
    let from_store = scratch("html-store");
    let out = regsim(&[
        "report",
        "--html",
        &from_store.display().to_string(),
        &store.display().to_string(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let page = std::fs::read_to_string(from_store.join("index.html")).unwrap();
    assert!(page.contains("2 runs; baseline design"), "{page}");
    let unknown = regsim(&["paper", "nosuch"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(text(&unknown.stderr).contains("gebhart, ltrf, cerf, malekeh, wir"));
}

#[test]
fn paper_runs_a_spec_of_groups_and_its_rows_find_their_points() {
    // Gebhart's design families as groups, one workload; the settings its figures
    // select (6-entry RFC without LRF, 3-entry ORF with a split LRF), written as
    // experiments/gebhart.toml writes them. A design unknown to the config is left out of
    // the group that names it, and a group left without designs is dropped.
    let spec = scratch("groups.toml");
    let group = |name: &str, designs: &str, sets: &str| {
        format!(
            "[[sweep]]\nname = \"{name}\"\nworkloads = [\"saxpy\"]\nconfigs = [\"gtx480\"]\n\
             designs = [{designs}]\n[sweep.set]\n\"sm.scheduler\" = [\"two_level\"]\n{sets}\n"
        )
    };
    let text_of_spec = [
        group("baseline", "\"baseline\"", ""),
        group(
            "rfc",
            "\"rfc\", \"no-such-design\"",
            "\"register_file.rfc.entries_per_thread\" = [6]\n\"register_file.rfc.lrf\" = [false]",
        ),
        group(
            "orf-lrf",
            "\"orf-lrf\"",
            "\"register_file.orf_lrf.orf_entries\" = [3]\n\
             \"register_file.orf_lrf.lrf\" = ['\"split\"']",
        ),
        group("gone", "\"no-such-design\"", ""),
    ]
    .concat();
    std::fs::write(&spec, text_of_spec).unwrap();
    let (out, stdout) = paper_with_no_such_design("gebhart", &spec, &scratch("paper-groups"));
    assert!(text(&out.stderr).contains("3 points; 0 already in the store; ran 3"));
    // Both rows of the energy figure and of the access figure found their run: a ratio
    // to the baseline over one workload, not "not run".
    assert!(!stdout.contains("not run"), "{stdout}");
    let rows: Vec<&str> = stdout
        .lines()
        .filter(|l| l.trim_start().starts_with("orf-lrf [") || l.trim_start().starts_with("rfc ["))
        // Each figure also has a row per workload class ("design · class"); the overall
        // rows are the ones counted here.
        .filter(|l| !l.contains(" · "))
        .collect();
    assert_eq!(rows.len(), 4, "{stdout}");
    for row in rows {
        let cells: Vec<&str> = row.split_whitespace().collect();
        let at = cells.iter().position(|c| c.ends_with(']')).unwrap();
        let ratio: f64 = cells[at + 1].parse().unwrap_or_else(|_| panic!("{row}"));
        assert!(ratio > 0.0 && ratio < 1.0, "{row}");
        assert_eq!(cells[at + 2], "1", "{row}");
    }
}

/// `--quick` leaves the slow workload out, the tables carry a per-workload table and the
/// class breakdown, and `--results DIR` writes the stamped results page with its SVG
/// figures and the hand-written notes.
#[test]
fn quick_results_page_is_stamped_and_has_per_workload_tables() {
    // CERF's two groups on saxpy and atomics_cas; --quick leaves atomics_cas out.
    let spec = scratch("cerf.toml");
    std::fs::write(
        &spec,
        "[[sweep]]\nname = \"baseline\"\nworkloads = [\"saxpy\", \"atomics_cas\"]\n\
         configs = [\"gtx480\"]\ndesigns = [\"baseline\"]\n\
         points = [{}, { \"l1d.size_bytes\" = 65536 }]\n\
         [[sweep]]\nname = \"cerf\"\nworkloads = [\"saxpy\", \"atomics_cas\"]\n\
         configs = [\"gtx480\"]\ndesigns = [\"cerf\"]\n\
         [sweep.set]\n\"register_file.cerf.policy\" = [\"lru-fair\", \"lru-prioritized\"]\n",
    )
    .unwrap();
    let results = scratch("results");
    std::fs::create_dir_all(results.join("notes")).unwrap();
    std::fs::write(results.join("notes/cerf.md"), "A measured note.\n").unwrap();
    let out = regsim(&[
        "paper",
        "cerf",
        "--quick",
        "--spec",
        &spec.display().to_string(),
        "--out",
        &scratch("runs").display().to_string(),
        "--results",
        &results.display().to_string(),
        "-j",
        "2",
    ]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("4 points"),
        "{}",
        text(&out.stderr)
    );
    assert!(!stdout.contains("atomics_cas"), "{stdout}");
    // Each figure says what it divides by and has a per-workload table with the spread.
    assert!(stdout.contains("normalized: each run over the baseline run at the same settings"));
    assert!(
        stdout.contains("per workload") && stdout.contains("geomean (1)"),
        "{stdout}"
    );
    assert!(
        stdout.lines().any(|l| l.trim_start().starts_with("saxpy")),
        "{stdout}"
    );
    let page = std::fs::read_to_string(results.join("cerf.md")).unwrap();
    let stamp = page
        .lines()
        .find(|l| l.starts_with("<!-- regsim-results paper=cerf commit="))
        .unwrap_or_else(|| panic!("{page}"));
    assert!(stamp.contains("mode=quick"), "{stamp}");
    assert!(
        page.contains("- mode: quick") && page.contains("- date: "),
        "{page}"
    );
    assert!(
        page.contains("| saxpy |") && page.contains("A measured note."),
        "{page}"
    );
    // The headline's per-class rows, when the classes file classifies saxpy.
    if page.contains("| saxpy | insensitive |") {
        assert!(page.contains("· insensitive"), "{page}");
    }
    for id in ["ipc", "on-chip-energy"] {
        let svg = std::fs::read_to_string(results.join(format!("cerf/{id}.svg"))).unwrap();
        // Two policies over saxpy and the geomean.
        assert_eq!(svg.matches("class=\"bar\"").count(), 4, "{id}");
        assert!(page.contains(&format!("(cerf/{id}.svg)")), "{page}");
    }
}

#[test]
fn all_runs_every_paper_and_refuses_one_spec() {
    let out = regsim(&["paper", "all", "--spec", "experiments/cerf.toml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("not `all`"),
        "{}",
        text(&out.stderr)
    );
    let out = regsim(&["paper", "nosuch"]);
    assert!(
        text(&out.stderr).contains("or all"),
        "{}",
        text(&out.stderr)
    );
}

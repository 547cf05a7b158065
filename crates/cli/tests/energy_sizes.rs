//! Energy that follows the configuration, as a user runs it: `regsim run` of a small
//! workload under the ORF/LRF design at two ORF sizes, the stats' energy object (the
//! table row of each sized energy, on-chip and off-chip totals), an explicit energy
//! winning without changing timing, and an uncovered size refused naming its key.
//!
//! Cost (release build): five short timing runs of saxpy, a few seconds.

mod common;

use std::path::Path;

use common::{regsim, repo_root};
use serde_json::Value;

/// The statistics of saxpy under `design` with `sets`, or the run's stderr.
fn run(name: &str, design: &str, sets: &[&str]) -> Result<Value, String> {
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("energy-sizes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let stats = dir.join(format!("{name}.json"));
    let stats_arg = stats.display().to_string();
    let program = repo_root()
        .join("workloads/bin/saxpy")
        .display()
        .to_string();
    let mut args = vec![
        "run", "--gpu", "gtx480", "--rf", design, "--stats", &stats_arg,
    ];
    for s in sets {
        args.extend(["--set", s]);
    }
    args.extend(["--", &program]);
    let out = regsim(&args);
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let text = std::fs::read_to_string(&stats).expect("stats written");
    Ok(serde_json::from_str(&text).expect("JSON"))
}

fn pj(energy: &Value, structure: &str, access: &str) -> f64 {
    energy["structures"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["structure"] == structure)
        .and_then(|s| {
            s["accesses"]
                .as_array()?
                .iter()
                .find(|a| a["access"] == access)
        })
        .and_then(|a| a["pj_per_event"].as_f64())
        .unwrap_or(f64::NAN)
}

/// Everything but energy, wall-clock time and the config (its overrides differ).
fn timing_only(v: &Value) -> Value {
    match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .filter(|(k, _)| !matches!(k.as_str(), "energy" | "simulation" | "gpu"))
                .map(|(k, v)| (k.clone(), timing_only(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(timing_only).collect()),
        other => other.clone(),
    }
}

#[test]
fn the_orf_is_priced_by_its_configured_size_and_the_stats_say_which_row() {
    let orf = |n: u32, more: &[&str]| {
        let entries = format!("register_file.orf_lrf.orf_entries={n}");
        let mut sets = vec![entries.as_str()];
        sets.extend(more);
        run(&format!("orf{n}-{}", more.len()), "orf-lrf", &sets).expect("runs")
    };
    let three = orf(3, &[]);
    let six = orf(6, &[]);
    let (e3, e6) = (&three["total"]["energy"], &six["total"]["energy"]);
    // Gebhart MICRO'11 Table 3: 1.2 and 2.0 pJ per 128-bit read; × 8 per warp register,
    // plus 0.2 mm of wire (12.16 pJ).
    assert!((pj(e3, "orf", "read") - 21.76).abs() < 1e-9, "{e3}");
    assert!((pj(e6, "orf", "read") - 28.16).abs() < 1e-9, "{e6}");
    assert_eq!(
        e6["sources"]["orf_read_pj"],
        "Gebhart MICRO'11 Table 3, 6-entry row"
    );
    assert_eq!(
        e3["sources"]["orf_write_pj"],
        "Gebhart MICRO'11 Table 3, 3-entry row"
    );
    // The config written into the stats carries the priced value.
    assert_eq!(
        six["gpu"]["config"]["energy"]["orf_read_pj"].as_f64(),
        Some(pj(e6, "orf", "read"))
    );
    for e in [e3, e6] {
        let total = e["total_joules"].as_f64().unwrap();
        let on = e["on_chip_joules"].as_f64().unwrap();
        let off = e["off_chip_joules"].as_f64().unwrap();
        assert!(off > 0.0 && on > 0.0, "{e}");
        assert!((on + off - total).abs() <= 1e-9 * total, "{e}");
        assert!(e["placeholder_joules"].as_f64().unwrap() >= off);
    }
    // An explicit energy wins, says so, and changes no timing statistic.
    let set = orf(6, &["energy.orf_read_pj=1.5"]);
    let es = &set["total"]["energy"];
    assert_eq!(pj(es, "orf", "read"), 1.5);
    assert_eq!(
        es["sources"]["orf_read_pj"],
        "set explicitly in the configuration"
    );
    assert_eq!(timing_only(&set), timing_only(&six));
    assert!(es["register_file_joules"].as_f64() < e6["register_file_joules"].as_f64());
}

#[test]
fn a_size_no_table_covers_is_refused_naming_the_key() {
    let err = run("cerf64k", "cerf", &["register_file.cerf.size_bytes=65536"])
        .expect_err("a 64 KB CERF array has no Table III row");
    assert!(err.contains("register_file.cerf.size_bytes"), "{err}");
    assert!(err.contains("energy.cerf_tag_lookup_pj"), "{err}");
}

//! Every spec in experiments/ parses and expands into valid points (every config, design
//! and setting loads), and the specs with one group per design family run each point
//! once: no baseline repeated per setting of another design.

use std::collections::BTreeMap;

use regsim::sweep::{RunPoint, SweepSpec};

fn points(name: &str) -> Vec<RunPoint> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let path = std::path::PathBuf::from(format!("{root}/experiments/{name}.toml"));
    let spec = SweepSpec::parse(&path).unwrap_or_else(|e| panic!("{name}: {e:#}"));
    spec.expand().unwrap_or_else(|e| panic!("{name}: {e:#}"))
}

/// Points per design.
fn per_design(points: &[RunPoint]) -> BTreeMap<&str, usize> {
    let mut n = BTreeMap::new();
    for p in points {
        *n.entry(p.design.as_str()).or_default() += 1;
    }
    n
}

#[test]
fn every_experiment_spec_expands() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../experiments");
    let mut names: Vec<String> = std::fs::read_dir(root)
        .unwrap()
        .flatten()
        .filter_map(|e| {
            e.file_name()
                .to_str()?
                .strip_suffix(".toml")
                .map(String::from)
        })
        .collect();
    names.sort();
    assert!(names.len() >= 6, "{names:?}");
    for name in &names {
        assert!(!points(name).is_empty(), "{name}");
    }
}

#[test]
fn design_families_are_groups_and_baselines_run_once() {
    let gebhart = points("gebhart");
    let workloads = per_design(&gebhart)["baseline"];
    assert!(workloads > 0);
    let expect = |pairs: &[(&'static str, usize)]| -> BTreeMap<&'static str, usize> {
        pairs.iter().map(|&(d, n)| (d, n * workloads)).collect()
    };
    // Gebhart: the baseline, HW RFC/LRF at 1-8 entries, SW ORF/LRF at 1-8 entries x 3.
    assert_eq!(
        per_design(&gebhart),
        expect(&[("baseline", 1), ("rfc", 8 * 2), ("orf-lrf", 8 * 3)])
    );
    // CERF: the baseline at 16 and 64 KB of L1D, CERF under each policy.
    assert_eq!(
        per_design(&points("cerf")),
        expect(&[("baseline", 2), ("cerf", 2)])
    );
    // WIR: the baseline once, every variant of WIR (its own 25 workloads).
    let wir = points("wir");
    let n = per_design(&wir)["baseline"];
    assert_eq!(per_design(&wir)["wir"], 7 * n);
    assert!(wir
        .iter()
        .filter(|p| p.design == "baseline")
        .all(|p| p.sets.is_empty()));
}

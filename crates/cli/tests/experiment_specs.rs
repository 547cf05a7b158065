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
    // CERF: the baseline at 16 and 64 KB of L1D, CERF under each policy and with the
    // free-bandwidth array.
    assert_eq!(
        per_design(&points("cerf")),
        expect(&[("baseline", 2), ("cerf", 3)])
    );
    // WIR: the baseline once, every variant of WIR and RLPV with the other VSB, over
    // every workload.
    let wir = points("wir");
    assert_eq!(per_design(&wir), expect(&[("baseline", 1), ("wir", 7 + 1)]));
    assert!(wir
        .iter()
        .filter(|p| p.design == "baseline")
        .all(|p| p.sets.is_empty()));
    // Malekeh: the baseline, Malekeh and BOW over every workload, with Malekeh's two
    // variants (adaptive STHLD, trace-exact distances) and BOW's (8 windows per SM).
    assert_eq!(
        per_design(&points("malekeh")),
        expect(&[("baseline", 1), ("malekeh", 3), ("bow", 2)])
    );
    // The modern core: the reuse cache off (baseline) and on, on rtx-a6000, h100 and qv100,
    // each config's own core, banks and ports, both designs running the reuse schedule
    // (the one setting: the cache's off and on see the same instruction order).
    let modern = points("modern-core");
    assert_eq!(
        per_design(&modern),
        expect(&[("baseline", 3), ("reuse-cache", 3)])
    );
    for p in &modern {
        let sets: Vec<(&str, &str)> = p
            .sets
            .iter()
            .map(|(k, v)| (k.as_str(), v.trim_matches('"')))
            .collect();
        assert_eq!(
            sets,
            [("register_file.reuse_cache.schedule", "reuse")],
            "{}",
            p.design
        );
    }
}

/// Each paper's figure covers the class its headline depends on: LTRF's capacity points
/// (and the recompiled ones) run every register-limited workload, Malekeh's every
/// operand-bound one, WIR's every high-reuse one, CERF's every cache-sensitive one.
#[test]
fn paper_specs_cover_the_classes_of_their_headlines() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let text = std::fs::read_to_string(format!("{root}/workloads/classes.toml")).unwrap();
    let classes: toml::Table = toml::from_str(&text).unwrap();
    let members = |classification: &str, class: &str| -> Vec<String> {
        classes[classification]["workloads"]
            .as_table()
            .unwrap()
            .iter()
            .filter(|(_, v)| v["class"].as_str() == Some(class))
            .map(|(w, _)| w.clone())
            .collect()
    };
    let covers = |paper: &str, design: &str, sets: &str, classification: &str, class: &str| {
        let runs: Vec<String> = points(paper)
            .into_iter()
            .filter(|p| {
                p.design == design
                    && sets
                        .split_whitespace()
                        .all(|o| p.sets.iter().any(|(k, v)| format!("{k}={v}") == o))
            })
            .map(|p| p.workload.program)
            .collect();
        let class = members(classification, class);
        assert!(class.len() >= 3, "{classification}: {class:?}");
        for w in class {
            assert!(
                runs.contains(&w),
                "{paper}: {design} [{sets}] does not run {w}"
            );
        }
    };
    for tech in ["6", "7"] {
        let t = format!("register_file.technology={tech}");
        covers("ltrf", "ltrf", &t, "register_limited", "registers");
        let recompiled = format!("{t} compiler.max_registers_per_thread=from_capacity");
        covers("ltrf", "ltrf", &recompiled, "register_limited", "registers");
        covers(
            "ltrf",
            "baseline",
            &recompiled,
            "register_limited",
            "registers",
        );
    }
    covers(
        "ltrf",
        "baseline",
        "sm.registers=69632 compiler.max_registers_per_thread=from_capacity",
        "register_limited",
        "registers",
    );
    covers("malekeh", "malekeh", "", "operand_bound", "bound");
    covers("malekeh", "bow", "", "operand_bound", "bound");
    covers("modern-core", "reuse-cache", "", "operand_bound", "bound");
    covers(
        "wir",
        "wir",
        "register_file.wir.variant=\"RLPV\"",
        "wir_reuse",
        "high",
    );
    covers(
        "cerf",
        "cerf",
        "register_file.cerf.policy=lru-fair",
        "cache_sensitivity",
        "sensitive",
    );
}

//! `regsim run --sample-check`: a sampled run's estimates against the full run's cycles,
//! launch by launch and in total: the true error, whether the reported bound covers it,
//! and the host time of each run.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{bail, Context, Result};
use serde::Serialize;
use serde_json::Value;

/// One launch compared.
#[derive(Debug, PartialEq, Serialize)]
pub struct LaunchCheck {
    pub name: String,
    /// How it was sampled (`full`, `ctas`, `cluster`).
    pub method: String,
    pub full_cycles: u64,
    pub estimated_cycles: u64,
    pub bound_cycles: u64,
    /// `(estimated - full) / full`.
    pub error: f64,
    /// `|estimated - full| <= bound`.
    pub covered: bool,
}

/// The whole comparison (`sample_check` in the sampled run's statistics).
#[derive(Debug, PartialEq, Serialize)]
pub struct Check {
    pub launches: Vec<LaunchCheck>,
    pub full_cycles: u64,
    pub estimated_cycles: u64,
    pub bound_cycles: u64,
    /// `bound_cycles / estimated_cycles`.
    pub relative_bound: f64,
    /// `(estimated - full) / full`.
    pub error: f64,
    pub covered: bool,
    /// Cycles simulated in detail by the sampled run.
    pub detailed_cycles: u64,
    /// `full_cycles / detailed_cycles`: how much longer the program is than its sample.
    pub length_over_sample: f64,
    /// Host seconds of each whole run (program included).
    pub full_seconds: f64,
    pub sampled_seconds: f64,
    /// `full_seconds / sampled_seconds`.
    pub speedup: f64,
}

fn u(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

fn relative(estimate: u64, truth: u64) -> f64 {
    if truth == 0 {
        0.0
    } else {
        (estimate as f64 - truth as f64) / truth as f64
    }
}

/// Compares the statistics of a full run and of a sampled run of the same program.
pub fn compare(
    full: &Value,
    sampled: &Value,
    full_seconds: f64,
    sampled_seconds: f64,
) -> Result<Check> {
    let empty = Vec::new();
    let fk = full["kernels"].as_array().unwrap_or(&empty);
    let sk = sampled["kernels"].as_array().unwrap_or(&empty);
    if fk.len() != sk.len() {
        bail!(
            "the full run has {} launches and the sampled run {}: not the same program run",
            fk.len(),
            sk.len()
        );
    }
    let mut launches = Vec::new();
    let mut detailed_cycles = 0;
    for (f, s) in fk.iter().zip(sk) {
        let sampling = &s["sampling"];
        let full_cycles = u(f, "cycles");
        let estimated_cycles = u(s, "cycles");
        let bound_cycles = u(sampling, "bound_cycles");
        detailed_cycles += u(sampling, "detailed_cycles");
        launches.push(LaunchCheck {
            name: f["name"].as_str().unwrap_or("?").to_string(),
            method: sampling["method"].as_str().unwrap_or("none").to_string(),
            full_cycles,
            estimated_cycles,
            bound_cycles,
            error: relative(estimated_cycles, full_cycles),
            covered: estimated_cycles.abs_diff(full_cycles) <= bound_cycles,
        });
    }
    let full_cycles: u64 = launches.iter().map(|l| l.full_cycles).sum();
    let estimated_cycles: u64 = launches.iter().map(|l| l.estimated_cycles).sum();
    let bound_cycles: u64 = launches.iter().map(|l| l.bound_cycles).sum();
    Ok(Check {
        full_cycles,
        estimated_cycles,
        bound_cycles,
        relative_bound: if estimated_cycles == 0 {
            0.0
        } else {
            bound_cycles as f64 / estimated_cycles as f64
        },
        error: relative(estimated_cycles, full_cycles),
        covered: estimated_cycles.abs_diff(full_cycles) <= bound_cycles,
        detailed_cycles,
        length_over_sample: full_cycles as f64 / detailed_cycles.max(1) as f64,
        full_seconds,
        sampled_seconds,
        speedup: full_seconds / sampled_seconds.max(1e-9),
        launches,
    })
}

/// [`compare`] on two statistics files.
pub fn compare_files(
    full: &Path,
    sampled: &Path,
    full_seconds: f64,
    sampled_seconds: f64,
) -> Result<Check> {
    let read = |p: &Path| -> Result<Value> {
        let text =
            std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
        serde_json::from_str(&text)
            .with_context(|| format!("{} is not statistics JSON", p.display()))
    };
    compare(&read(full)?, &read(sampled)?, full_seconds, sampled_seconds)
}

/// Adds `sample_check` to the statistics file `stats`.
pub fn record(stats: &Path, check: &Check) -> Result<()> {
    let text =
        std::fs::read_to_string(stats).with_context(|| format!("reading {}", stats.display()))?;
    let mut json: Value = serde_json::from_str(&text)
        .with_context(|| format!("{} is not the runtime's JSON", stats.display()))?;
    let Some(obj) = json.as_object_mut() else {
        bail!("{} is not a JSON object", stats.display());
    };
    obj.insert("sample_check".into(), serde_json::to_value(check)?);
    let text = serde_json::to_string_pretty(&json)?;
    std::fs::write(stats, text + "\n").with_context(|| format!("writing {}", stats.display()))
}

impl Check {
    /// The readable report: each launch, then the total and the host times.
    pub fn summary(&self) -> String {
        let mut out = String::from("regsim: sample check (estimate against the full run)\n");
        for (i, l) in self.launches.iter().enumerate() {
            let _ = writeln!(
                out,
                "  #{i} {} [{}]: full {} cycles, estimate {} ± {} ({:+.2}%, {})",
                l.name,
                l.method,
                l.full_cycles,
                l.estimated_cycles,
                l.bound_cycles,
                100.0 * l.error,
                if l.covered { "covered" } else { "NOT covered" }
            );
        }
        let _ = writeln!(
            out,
            "  total: full {} cycles, estimate {} ± {} (95%; {:+.2}%, {}); {:.1}x the \
             {} cycles simulated in detail; host {:.2} s full, {:.2} s sampled ({:.1}x)",
            self.full_cycles,
            self.estimated_cycles,
            self.bound_cycles,
            100.0 * self.error,
            if self.covered {
                "covered"
            } else {
                "NOT covered"
            },
            self.length_over_sample,
            self.detailed_cycles,
            self.full_seconds,
            self.sampled_seconds,
            self.speedup
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn errors_and_coverage_are_per_launch_and_in_total() {
        let full =
            json!({"kernels": [{"name": "k", "cycles": 1000}, {"name": "k", "cycles": 1000}]});
        let sampled = json!({"kernels": [
            {"name": "k", "cycles": 1000, "sampling": {"method": "full", "bound_cycles": 0, "detailed_cycles": 1000}},
            {"name": "k", "cycles": 1100, "sampling": {"method": "cluster", "bound_cycles": 50, "detailed_cycles": 0}},
        ]});
        let c = compare(&full, &sampled, 4.0, 1.0).unwrap();
        assert!(c.launches[0].covered);
        assert!(!c.launches[1].covered);
        assert!((c.launches[1].error - 0.1).abs() < 1e-12);
        assert_eq!(
            (c.full_cycles, c.estimated_cycles, c.bound_cycles),
            (2000, 2100, 50)
        );
        assert!(!c.covered);
        assert_eq!(c.length_over_sample, 2.0);
        assert_eq!(c.speedup, 4.0);
        assert!(c.summary().contains("NOT covered"));
    }

    #[test]
    fn different_launch_lists_are_refused() {
        let full = json!({"kernels": [{"name": "k", "cycles": 1}]});
        let sampled = json!({"kernels": []});
        let e = compare(&full, &sampled, 1.0, 1.0).unwrap_err();
        assert!(e.to_string().contains("1 launches"), "{e}");
    }
}

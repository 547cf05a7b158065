//! Flat tables of a sweep's runs, for pandas, R or a spreadsheet: `--export csv|json`.
//!
//! One row per finished run, in the spec's point order; columns: `key`, `workload`,
//! `config`, `design`, `mode`, one `set.<key>` column per swept config key, `status`,
//! `exit_code`, `wall_seconds`, `cpu_seconds`, then the statistics of interest from the
//! run's totals ([`STAT_COLUMNS`]), each design-specific register-file counter as
//! `rf.<name>`, and every number under the statistics' `energy` object (in `total`, else
//! at the top level) as `energy.<path>`. A missing value is an empty CSV cell or a JSON
//! `null`.

use std::collections::BTreeSet;
use std::io::Write;

use anyhow::Result;
use serde_json::Value;

use super::store::RunRecord;

/// Statistics columns: name and JSON pointer into the statistics document.
pub const STAT_COLUMNS: &[(&str, &str)] = &[
    ("kernels", "/total/kernels"),
    ("warp_instructions", "/total/warp_instructions"),
    ("thread_instructions", "/total/thread_instructions"),
    ("cycles", "/total/cycles"),
    ("ipc", "/total/ipc"),
    ("rf_reads", "/total/register_file/reads"),
    ("rf_writes", "/total/register_file/writes"),
    (
        "rf_read_bank_conflicts",
        "/total/register_file/read_bank_conflicts",
    ),
    (
        "rf_write_bank_conflicts",
        "/total/register_file/write_bank_conflicts",
    ),
    ("l1d_hits", "/total/memory/l1d/hits"),
    ("l1d_misses", "/total/memory/l1d/misses"),
    ("l2_hits", "/total/memory/l2/hits"),
    ("l2_misses", "/total/memory/l2/misses"),
    ("dram_reads", "/total/memory/dram/reads"),
    ("dram_writes", "/total/memory/dram/writes"),
    ("simulation_seconds", "/simulation/wall_seconds"),
];

/// Output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// Comma-separated values with a header row.
    Csv,
    /// A JSON array of objects, one per row.
    Json,
}

/// A flat table: column names and rows of values (`Value::Null` where missing).
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    /// Column names.
    pub columns: Vec<String>,
    /// One row per run, one value per column.
    pub rows: Vec<Vec<Value>>,
}

/// The energy object of a statistics document.
fn energy_of(stats: &Value) -> Option<&Value> {
    stats
        .pointer("/total/energy")
        .or_else(|| stats.get("energy"))
        .filter(|v| v.is_object())
}

/// Every numeric leaf under `v`, with its dotted path.
fn numeric_leaves(v: &Value, prefix: &str, out: &mut Vec<(String, Value)>) {
    match v {
        Value::Number(_) => out.push((prefix.to_owned(), v.clone())),
        Value::Object(map) => {
            for (k, child) in map {
                numeric_leaves(child, &format!("{prefix}.{k}"), out);
            }
        }
        _ => {}
    }
}

fn rf_extra(stats: &Value) -> Vec<(String, Value)> {
    stats
        .pointer("/total/register_file/extra")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (format!("rf.{k}"), v.clone()))
                .collect()
        })
        .unwrap_or_default()
}

fn energy_columns(stats: &Value) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    if let Some(e) = energy_of(stats) {
        numeric_leaves(e, "energy", &mut out);
    }
    out
}

/// The table of `records` (in the given order).
pub fn table(records: &[&RunRecord]) -> Table {
    let mut set_keys = BTreeSet::new();
    let mut extra_keys = BTreeSet::new();
    let mut energy_keys = BTreeSet::new();
    for r in records {
        set_keys.extend(r.sets.iter().map(|(k, _)| k.clone()));
        if let Some(stats) = &r.stats {
            extra_keys.extend(rf_extra(stats).into_iter().map(|(k, _)| k));
            energy_keys.extend(energy_columns(stats).into_iter().map(|(k, _)| k));
        }
    }
    let mut columns: Vec<String> = ["key", "workload", "config", "design", "mode"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    columns.extend(set_keys.iter().map(|k| format!("set.{k}")));
    columns.extend(
        ["status", "exit_code", "wall_seconds", "cpu_seconds"]
            .iter()
            .map(|s| s.to_string()),
    );
    columns.extend(STAT_COLUMNS.iter().map(|(n, _)| n.to_string()));
    columns.extend(extra_keys.iter().cloned());
    columns.extend(energy_keys.iter().cloned());

    let rows = records
        .iter()
        .map(|r| {
            let mut row: Vec<Value> = vec![
                r.key.clone().into(),
                r.workload.clone().into(),
                r.config.clone().into(),
                r.design.clone().into(),
                if r.functional { "functional" } else { "timing" }.into(),
            ];
            for k in &set_keys {
                row.push(
                    r.sets
                        .iter()
                        .find(|(sk, _)| sk == k)
                        .map_or(Value::Null, |(_, v)| v.clone().into()),
                );
            }
            row.push(r.status.as_str().into());
            row.push(r.exit_code.map_or(Value::Null, Into::into));
            row.push(r.wall_seconds.into());
            row.push(r.cpu_seconds.map_or(Value::Null, Into::into));
            let stats = r.stats.as_ref().unwrap_or(&Value::Null);
            for (_, pointer) in STAT_COLUMNS {
                row.push(stats.pointer(pointer).cloned().unwrap_or(Value::Null));
            }
            let extra = rf_extra(stats);
            for k in &extra_keys {
                row.push(
                    extra
                        .iter()
                        .find(|(ek, _)| ek == k)
                        .map_or(Value::Null, |(_, v)| v.clone()),
                );
            }
            let energy = energy_columns(stats);
            for k in &energy_keys {
                row.push(
                    energy
                        .iter()
                        .find(|(ek, _)| ek == k)
                        .map_or(Value::Null, |(_, v)| v.clone()),
                );
            }
            row
        })
        .collect();
    Table { columns, rows }
}

/// A CSV field, quoted when it must be (RFC 4180).
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

fn cell_text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Writes `table` in `format`.
pub fn write(table: &Table, format: ExportFormat, out: &mut dyn Write) -> Result<()> {
    match format {
        ExportFormat::Csv => {
            let header: Vec<String> = table.columns.iter().map(|c| csv_field(c)).collect();
            writeln!(out, "{}", header.join(","))?;
            for row in &table.rows {
                let cells: Vec<String> = row.iter().map(|v| csv_field(&cell_text(v))).collect();
                writeln!(out, "{}", cells.join(","))?;
            }
        }
        ExportFormat::Json => {
            // Objects keep the column order (serde_json's map may sort keys), so write
            // them by hand.
            writeln!(out, "[")?;
            for (i, row) in table.rows.iter().enumerate() {
                let fields: Vec<String> = table
                    .columns
                    .iter()
                    .zip(row)
                    .map(|(c, v)| format!("{}: {}", Value::from(c.as_str()), v))
                    .collect();
                let comma = if i + 1 < table.rows.len() { "," } else { "" };
                writeln!(out, "  {{{}}}{comma}", fields.join(", "))?;
            }
            writeln!(out, "]")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::store::{tests::record, RunStatus};

    fn sample() -> Vec<RunRecord> {
        let mut a = record("a", RunStatus::Ok, 100);
        a.stats = Some(serde_json::json!({
            "total": {"cycles": 100, "ipc": 2.5, "warp_instructions": 250,
                      "register_file": {"reads": 7, "extra": {"orf_reads": 3}},
                      "memory": {"l1d": {"hits": 1, "misses": 2}},
                      "energy": {"total_pj": 12.5, "by_structure": {"mrf": 10.0}}},
            "simulation": {"wall_seconds": 0.5}
        }));
        let mut b = record("b", RunStatus::Failed, 0);
        b.stats = None;
        b.workload = "app \"x\", y".into();
        b.sets = vec![("l2.size".into(), "1024".into())];
        vec![a, b]
    }

    #[test]
    fn columns_and_values() {
        let recs = sample();
        let t = table(&recs.iter().collect::<Vec<_>>());
        let col = |name: &str| t.columns.iter().position(|c| c == name).unwrap();
        assert_eq!(
            t.columns[..5],
            ["key", "workload", "config", "design", "mode"]
        );
        assert_eq!(t.columns[5], "set.l2.size");
        assert_eq!(t.columns[6], "set.sm.scheduler");
        assert_eq!(t.rows[0][col("cycles")], serde_json::json!(100));
        assert_eq!(t.rows[0][col("ipc")], serde_json::json!(2.5));
        assert_eq!(t.rows[0][col("rf_reads")], serde_json::json!(7));
        assert_eq!(t.rows[0][col("l1d_misses")], serde_json::json!(2));
        assert_eq!(t.rows[0][col("l2_hits")], Value::Null);
        assert_eq!(t.rows[0][col("rf.orf_reads")], serde_json::json!(3));
        assert_eq!(t.rows[0][col("energy.total_pj")], serde_json::json!(12.5));
        assert_eq!(
            t.rows[0][col("energy.by_structure.mrf")],
            serde_json::json!(10.0)
        );
        assert_eq!(t.rows[0][col("simulation_seconds")], serde_json::json!(0.5));
        assert_eq!(t.rows[0][col("set.l2.size")], Value::Null);
        assert_eq!(t.rows[1][col("set.l2.size")], serde_json::json!("1024"));
        assert_eq!(t.rows[1][col("status")], serde_json::json!("failed"));
        assert_eq!(t.rows[1][col("cycles")], Value::Null);
    }

    #[test]
    fn csv_quotes_and_json_parses() {
        let recs = sample();
        let t = table(&recs.iter().collect::<Vec<_>>());
        let mut csv = Vec::new();
        write(&t, ExportFormat::Csv, &mut csv).unwrap();
        let csv = String::from_utf8(csv).unwrap();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].starts_with("key,workload,config,design,mode,set.l2.size,"));
        assert!(
            lines[2].starts_with("b,\"app \"\"x\"\", y\",gtx480,ideal,timing,1024,,failed,1,0.25,")
        );
        let mut json = Vec::new();
        write(&t, ExportFormat::Json, &mut json).unwrap();
        let parsed: Value = serde_json::from_slice(&json).unwrap();
        assert_eq!(parsed[0]["cycles"], serde_json::json!(100));
        assert_eq!(parsed[1]["workload"], serde_json::json!("app \"x\", y"));
        assert_eq!(parsed[1]["ipc"], Value::Null);
        let text = String::from_utf8(json).unwrap();
        // Column order survives.
        assert!(text.find("\"key\"").unwrap() < text.find("\"cycles\"").unwrap());
        // An empty table is valid JSON too.
        let mut empty = Vec::new();
        write(&table(&[]), ExportFormat::Json, &mut empty).unwrap();
        assert_eq!(
            serde_json::from_slice::<Value>(&empty).unwrap(),
            serde_json::json!([])
        );
    }
}

//! `regsim compile FILE --pass NAME [--set key=value]...`: the register-file passes of
//! issue 5, each configured by its own serde config struct so that every option of a pass
//! is reachable from the command line, and an unknown option is an error naming it.

use anyhow::{anyhow, bail, Context, Result};
use clap::ValueEnum;
use compiler::liveness_bits::{liveness_bits, LivenessBitsConfig};
use compiler::ltrf::{ltrf, LtrfConfig};
use compiler::orf_lrf::{OrfLrfConfig, OrfLrfReport};
use compiler::register_profile::StaticRegisterProfile;
use compiler::reuse_distance::{ReuseDistanceConfig, ReuseDistanceReport};
use compiler::strands::{StrandConfig, StrandsReport};
use ir::Program;
use serde::de::DeserializeOwned;
use serde::Serialize;

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Pass {
    /// Strand boundaries (Gebhart MICRO'11 §4.1).
    Strands,
    /// ORF/LRF allocation (Gebhart MICRO'11 §4.2-4.6).
    OrfLrf,
    /// Register-intervals and bank-aware renumbering (LTRF §3.3, §4).
    Ltrf,
    /// Per-operand "dead after" bits, conservative under SIMT divergence (CERF, LTRF+).
    LivenessBits,
    /// Reuse distance and near/far hints (Malekeh §3-4).
    ReuseDistance,
    /// Values read 0/1/2/3+ times and lifetimes of read-once values (static).
    RegisterProfile,
}

/// Options given on the command line, before they meet a pass's config type.
pub struct PassOptions {
    /// `key=value` pairs; keys may be dotted (`energy.mrf_read_pj=8`).
    pub sets: Vec<String>,
    /// `--registers-per-interval N` (ltrf).
    pub registers_per_interval: Option<u32>,
    /// `--banks B` (ltrf).
    pub banks: Option<u32>,
    /// `--max-registers N`: the allocator's cap, for passes that allocate.
    pub max_registers: Option<u32>,
}

/// Runs `pass` and returns its report as text or JSON.
pub fn run(pass: Pass, program: &Program, options: &PassOptions, json: bool) -> Result<String> {
    match pass {
        Pass::Strands => {
            let config: StrandConfig = config_from(options, &[])?;
            render(&StrandsReport::new(program, &config), json)
        }
        Pass::OrfLrf => {
            let config: OrfLrfConfig = config_from(options, &[])?;
            let report = OrfLrfReport::new(program, &config).map_err(|e| anyhow!("{e}"))?;
            render(&report, json)
        }
        Pass::Ltrf => {
            let mut shorthands = Vec::new();
            if let Some(n) = options.registers_per_interval {
                shorthands.push(("registers_per_interval", toml::Value::Integer(n.into())));
            }
            if let Some(b) = options.banks {
                shorthands.push(("banks", toml::Value::Integer(b.into())));
            }
            if let Some(m) = options.max_registers {
                shorthands.push(("max_registers", toml::Value::Integer(m.into())));
            }
            let config: LtrfConfig = config_from(options, &shorthands)?;
            render(&ltrf(program, &config).map_err(|e| anyhow!("{e}"))?, json)
        }
        Pass::LivenessBits => {
            let mut shorthands = Vec::new();
            if let Some(m) = options.max_registers {
                shorthands.push(("max_registers", toml::Value::Integer(m.into())));
            }
            let config: LivenessBitsConfig = config_from(options, &shorthands)?;
            render(
                &liveness_bits(program, &config).map_err(|e| anyhow!("{e}"))?,
                json,
            )
        }
        Pass::ReuseDistance => {
            let config: ReuseDistanceConfig = config_from(options, &[])?;
            render(&ReuseDistanceReport::new(program, &config), json)
        }
        Pass::RegisterProfile => {
            if !options.sets.is_empty() {
                bail!("--pass register-profile takes no options");
            }
            render(&StaticRegisterProfile::new(program), json)
        }
    }
}

fn render<R: Serialize + std::fmt::Display>(report: &R, json: bool) -> Result<String> {
    if json {
        Ok(serde_json::to_string_pretty(report)?)
    } else {
        Ok(report.to_string())
    }
}

/// Builds a pass config from its defaults, the flag shorthands and then every `--set`.
fn config_from<T: DeserializeOwned>(
    options: &PassOptions,
    shorthands: &[(&str, toml::Value)],
) -> Result<T> {
    let mut table = toml::Table::new();
    for (key, value) in shorthands {
        table.insert((*key).to_string(), value.clone());
    }
    for set in &options.sets {
        let (key, text) = set
            .split_once('=')
            .ok_or_else(|| anyhow!("--set {set}: expected key=value"))?;
        insert_dotted(&mut table, key.trim(), parse_value(text.trim()))
            .with_context(|| format!("--set {set}"))?;
    }
    toml::Value::Table(table)
        .try_into()
        .map_err(|e: toml::de::Error| anyhow!("invalid pass option: {}", e.message()))
}

/// A value as TOML (`16`, `true`, `"x"`, `[1, 2]`), or else the bare text as a string, so
/// `--set lrf=split` needs no quotes.
fn parse_value(text: &str) -> toml::Value {
    toml::from_str::<toml::Table>(&format!("v = {text}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(text.to_string()))
}

fn insert_dotted(table: &mut toml::Table, key: &str, value: toml::Value) -> Result<()> {
    match key.split_once('.') {
        None => {
            table.insert(key.to_string(), value);
            Ok(())
        }
        Some((head, rest)) => {
            let entry = table
                .entry(head.to_string())
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            match entry {
                toml::Value::Table(inner) => insert_dotted(inner, rest, value),
                _ => bail!("'{head}' is not a group of options"),
            }
        }
    }
}

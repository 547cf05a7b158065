//! Per-kernel statistics: the line printed after each kernel, the JSON document written
//! at exit (`REGSIM_STATS`) and the readable summary (`REGSIM_SUMMARY`).

use serde_json::{json, Map, Value};

use crate::config::{GpuSelection, Mode};
use crate::device::{Dim3, KernelStats};

/// The `energy` object of a kernel or of the total: joules per structure and access kind
/// ([`energy::EnergyReport`], with the `mrf_technology_scale` the MRF was priced with,
/// the on-chip/off-chip split, what placeholders priced and the table row of each sized
/// structure's energy under `sources`),
/// and, where the design reports
/// `<design>_operand_reads`/`_operand_writes` in its extra counters, the register-file
/// energy of a single-level MRF serving the same operands and the ratio to it
/// (`register_file_normalized`). An event the energy crate does not know gives
/// `{"error": "..."}` naming it instead of a silent zero.
pub fn energy_json(
    config: &energy::EnergyConfig,
    events: &[timing::rf::EnergyEvent],
    rf: &timing::rf::RfStats,
) -> Value {
    let report = match config.account(events.iter().map(|e| energy::Event {
        structure: e.structure,
        access: e.access,
        count: e.count,
    })) {
        Ok(r) => r,
        Err(e) => return json!({ "error": e.to_string() }),
    };
    let mut v = serde_json::to_value(&report).unwrap_or_default();
    // The design's own totals, `<design>_operand_reads`/`_writes`: the shortest such
    // key, since designs also report parts of them under longer names
    // (`ltrf_bypass_operand_reads`, `orf_lrf_mrf_operand_reads`), which sort first.
    let design = rf
        .extra
        .keys()
        .filter_map(|k| k.strip_suffix("_operand_reads"))
        .min_by_key(|prefix| prefix.len());
    let operands = |prefix: &str, kind: &str| rf.extra.get(&format!("{prefix}_{kind}")).copied();
    if let (Some(reads), Some(writes), Value::Object(o)) = (
        design.and_then(|d| operands(d, "operand_reads")),
        design.and_then(|d| operands(d, "operand_writes")),
        &mut v,
    ) {
        let single = config.single_level_mrf_joules(reads, writes);
        o.insert("single_level_mrf_joules".into(), json!(single));
        o.insert(
            "register_file_normalized".into(),
            json!(if single > 0.0 {
                report.register_file_joules / single
            } else {
                0.0
            }),
        );
    }
    v
}

/// One summary line of an `energy_json` object.
fn energy_line(v: &Value) -> String {
    if let Some(e) = v.get("error").and_then(Value::as_str) {
        return format!("  energy: {e}\n");
    }
    let j = |k: &str| v.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    let mut line = format!(
        "  energy: {:.4e} J (register file {:.4e}, memory {:.4e}, execution {:.4e})",
        j("total_joules"),
        j("register_file_joules"),
        j("memory_joules"),
        j("execution_joules")
    );
    line.push_str(&format!(
        "; on chip {:.4e}, off chip (DRAM) {:.4e}, at placeholder prices {:.4e}",
        j("on_chip_joules"),
        j("off_chip_joules"),
        j("placeholder_joules")
    ));
    if let Some(n) = v.get("register_file_normalized").and_then(Value::as_f64) {
        line.push_str(&format!("; register file {n:.3} of a single-level MRF"));
    }
    line.push('\n');
    for s in v
        .get("structures")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let name = s.get("structure").and_then(Value::as_str).unwrap_or("?");
        let joules = s.get("joules").and_then(Value::as_f64).unwrap_or(0.0);
        if joules <= 0.0 {
            continue;
        }
        let kinds: Vec<String> = s
            .get("accesses")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|a| a.get("count").and_then(Value::as_u64).unwrap_or(0) > 0)
            .map(|a| {
                format!(
                    "{} {} x {:.2} pJ",
                    a.get("access").and_then(Value::as_str).unwrap_or("?"),
                    a.get("count").and_then(Value::as_u64).unwrap_or(0),
                    a.get("pj_per_event").and_then(Value::as_f64).unwrap_or(0.0)
                )
            })
            .collect();
        // The MRF's energies include the technology factor; say which.
        let mut scale = match (name, v.get("mrf_technology_scale").and_then(Value::as_f64)) {
            ("mrf", Some(f)) => format!("; energy.mrf_technology_scale = {f}"),
            _ => String::new(),
        };
        // A sized structure's energies say which table row they came from.
        let mut sources: Vec<&str> = s
            .get("accesses")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|a| a.get("access").and_then(Value::as_str))
            .filter_map(|access| v["sources"][format!("{name}_{access}_pj")].as_str())
            .collect();
        sources.dedup();
        for source in sources {
            scale.push_str("; ");
            scale.push_str(source);
        }
        line.push_str(&format!(
            "    {name}: {joules:.4e} J ({}{scale})\n",
            kinds.join(", ")
        ));
    }
    line
}

#[derive(Debug, Clone, PartialEq)]
pub struct KernelRecord {
    /// Demangled (`saxpy(int, float, float const*, float*)`), or as in the PTX when the
    /// name is not a C++ mangled name.
    pub name: String,
    /// The name in the PTX (`_Z5saxpyifPKfPf`).
    pub mangled: String,
    pub grid: Dim3,
    pub block: Dim3,
    pub stats: KernelStats,
}

impl KernelRecord {
    /// The one stderr line after a kernel; in timing mode it ends with cycles and IPC.
    pub fn summary_line(&self) -> String {
        let mut line = format!(
            "regsim: kernel {} grid {} block {}: {} warp instructions, {} thread instructions",
            self.name,
            self.grid,
            self.block,
            self.stats.warp_instructions,
            self.stats.thread_instructions
        );
        if let Some(t) = &self.stats.timing {
            line.push_str(&format!(", {} cycles, IPC {:.3}", t.cycles, t.ipc));
        }
        line
    }

    /// `name`, `mangled`, `grid`, `block`, `warp_instructions`, `thread_instructions`,
    /// then in timing mode every field of `timing::KernelStats` (`cycles`, `ipc`,
    /// `start_cycle`, `occupancy`, `stalls`, `register_file`, `memory`, `simulation`).
    fn to_json(&self, energy_config: Option<&energy::EnergyConfig>) -> Value {
        let dim = |d: Dim3| json!([d.x, d.y, d.z]);
        let mut obj = Map::new();
        obj.insert("name".into(), json!(self.name));
        obj.insert("mangled".into(), json!(self.mangled));
        obj.insert("grid".into(), dim(self.grid));
        obj.insert("block".into(), dim(self.block));
        obj.insert(
            "warp_instructions".into(),
            json!(self.stats.warp_instructions),
        );
        obj.insert(
            "thread_instructions".into(),
            json!(self.stats.thread_instructions),
        );
        if let Some(Value::Object(timing)) = self
            .stats
            .timing
            .as_ref()
            .map(|t| serde_json::to_value(t).unwrap_or_default())
        {
            for (key, value) in timing {
                obj.entry(key).or_insert(value);
            }
        }
        if let (Some(t), Some(cfg)) = (&self.stats.timing, energy_config) {
            obj.insert(
                "energy".into(),
                energy_json(cfg, &t.energy_events, &t.register_file),
            );
        }
        Value::Object(obj)
    }
}

/// Everything the statistics document is made of.
pub struct RunStats<'a> {
    pub mode: Mode,
    /// The GPU config, when it loaded.
    pub gpu: Option<&'a GpuSelection>,
    pub records: &'a [KernelRecord],
    /// The timing model's report (timing mode).
    pub report: Option<&'a timing::Report>,
    /// Wall-clock seconds spent in launches (used when there is no timing report).
    pub launch_seconds: f64,
    /// Kernel accesses just outside an allocation that succeeded.
    pub memory_warnings: &'a [crate::device::MemoryWarning],
    /// Why the run did not complete (a run limit, a signal), if it did not.
    pub incomplete: Option<&'a str>,
}

impl RunStats<'_> {
    /// The energy table of the GPU config (timing mode only).
    fn energy_config(&self) -> Option<&energy::EnergyConfig> {
        self.report?;
        self.gpu.map(|g| &g.config.energy)
    }

    /// The `REGSIM_STATS` document:
    /// `{"mode", "complete", "gpu": {"name", "selector", "overrides", "config"},
    /// "kernels": [...], "total": {...}, "memory_warnings": [...], "simulation":
    /// {"wall_seconds", "warp_instructions_per_second"}}`. `complete` is false when a run
    /// limit or a signal ended the run; then `incomplete_reason` says why, and a kernel
    /// the stop cut short has `"complete": false` and its figures up to the stop.
    /// A memory warning has `kernel`, `ptx_line`,
    /// `instruction`, `cta`, `thread`, `bytes`, `offset` (from the allocation's base,
    /// negative before it) and `allocation_bytes`.
    /// `total` has `kernels`, `warp_instructions`, `thread_instructions`, and in timing
    /// mode every field of `timing::TotalStats` (`cycles`, `ipc`, stalls, register file,
    /// memory). Deterministic apart from `simulation` (and each kernel's `simulation`).
    pub fn to_json(&self) -> Value {
        let warp: u64 = self.records.iter().map(|r| r.stats.warp_instructions).sum();
        let thread: u64 = self
            .records
            .iter()
            .map(|r| r.stats.thread_instructions)
            .sum();
        let mut total = json!({
            "kernels": self.records.len(),
            "warp_instructions": warp,
            "thread_instructions": thread,
        });
        let simulation = match self.report {
            Some(report) => {
                if let (Value::Object(t), Ok(Value::Object(timed))) =
                    (&mut total, serde_json::to_value(&report.total))
                {
                    for (key, value) in timed {
                        t.entry(key).or_insert(value);
                    }
                }
                if let (Value::Object(t), Some(cfg)) = (&mut total, self.energy_config()) {
                    t.insert(
                        "energy".into(),
                        energy_json(
                            cfg,
                            &report.total.energy_events,
                            &report.total.register_file,
                        ),
                    );
                }
                serde_json::to_value(report.simulation).unwrap_or_default()
            }
            None => json!({
                "wall_seconds": self.launch_seconds,
                "warp_instructions_per_second": if self.launch_seconds > 0.0 {
                    warp as f64 / self.launch_seconds
                } else {
                    0.0
                },
            }),
        };
        let gpu = self.gpu.map(|g| {
            json!({
                "name": g.name,
                "selector": g.selector,
                "overrides": g.overrides,
                "config": serde_json::to_value(&g.config).unwrap_or_default(),
            })
        });
        let mut doc = json!({
            "mode": self.mode.name(),
            "complete": self.incomplete.is_none(),
            "gpu": gpu,
            "kernels": self
                .records
                .iter()
                .map(|r| r.to_json(self.energy_config()))
                .collect::<Vec<_>>(),
            "total": total,
            "memory_warnings": self
                .memory_warnings
                .iter()
                .map(crate::device::MemoryWarning::to_json)
                .collect::<Vec<_>>(),
            "simulation": simulation,
        });
        if let (Some(reason), Value::Object(d)) = (self.incomplete, &mut doc) {
            d.insert("incomplete_reason".into(), json!(reason));
        }
        doc
    }

    /// The readable summary: every kernel's statistics, the totals and the simulation
    /// speed (timing mode), or the totals (functional mode).
    pub fn summary(&self) -> String {
        let mut out = String::new();
        let gpu = self.gpu.map_or("?", |g| g.name.as_str());
        out.push_str(&format!(
            "regsim: summary ({} mode, GPU {gpu})\n",
            self.mode.name()
        ));
        match self.report {
            Some(report) => {
                for (record, k) in self.records.iter().zip(&report.kernels) {
                    let mut k = k.clone();
                    k.name = record.name.clone();
                    out.push_str(&k.to_string());
                    if let Some(cfg) = self.energy_config() {
                        out.push_str(&energy_line(&energy_json(
                            cfg,
                            &k.energy_events,
                            &k.register_file,
                        )));
                    }
                }
                out.push_str(&report.total.to_string());
                if let Some(cfg) = self.energy_config() {
                    out.push_str(&energy_line(&energy_json(
                        cfg,
                        &report.total.energy_events,
                        &report.total.register_file,
                    )));
                }
                out.push_str(&format!(
                    "simulation: {:.3} s, {:.0} warp instructions per second\n",
                    report.simulation.wall_seconds, report.simulation.warp_instructions_per_second
                ));
            }
            None => {
                let warp: u64 = self.records.iter().map(|r| r.stats.warp_instructions).sum();
                out.push_str(&format!(
                    "total: {} kernels, {warp} warp instructions in {:.3} s\n",
                    self.records.len(),
                    self.launch_seconds
                ));
            }
        }
        out
    }
}

/// The kernel name a user wrote: `_Z5saxpyifPKfPf` becomes
/// `saxpy(int, float, float const*, float*)`. Names that are not Itanium-mangled
/// (`extern "C"` kernels) come back unchanged.
pub fn demangle(name: &str) -> String {
    cpp_demangle::Symbol::new(name)
        .ok()
        .and_then(|sym| sym.demangle().ok())
        .unwrap_or_else(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_names_are_demangled() {
        assert_eq!(
            demangle("_Z5saxpyifPKfPf"),
            "saxpy(int, float, float const*, float*)"
        );
        assert_eq!(
            demangle("_Z15transpose_tiledILb1EEvPKfPfii"),
            "void transpose_tiled<true>(float const*, float*, int, int)"
        );
        assert_eq!(demangle("plain_c_kernel"), "plain_c_kernel");
        assert_eq!(demangle("_Z"), "_Z");
    }

    fn rec(name: &str, w: u64, t: u64) -> KernelRecord {
        KernelRecord {
            name: demangle(name),
            mangled: name.to_string(),
            grid: Dim3 { x: 48, y: 1, z: 1 },
            block: Dim3 { x: 256, y: 2, z: 1 },
            stats: KernelStats {
                warp_instructions: w,
                thread_instructions: t,
                timing: None,
            },
        }
    }

    #[test]
    fn functional_json_lists_kernels_and_totals_without_cycles() {
        let records = [rec("_Z5saxpyifPKfPf", 10, 300), rec("a\"b", 5, 7)];
        let run = RunStats {
            mode: Mode::Functional,
            gpu: None,
            records: &records,
            report: None,
            launch_seconds: 0.5,
            memory_warnings: &[],
            incomplete: None,
        };
        let json = run.to_json();
        let text = json.to_string();
        let back: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back["mode"], "functional");
        assert_eq!(back["complete"], true);
        assert!(back.get("incomplete_reason").is_none());
        let k = &back["kernels"][0];
        assert_eq!(k["name"], "saxpy(int, float, float const*, float*)");
        assert_eq!(k["mangled"], "_Z5saxpyifPKfPf");
        assert_eq!(k["grid"], json!([48, 1, 1]));
        assert_eq!(k["block"], json!([256, 2, 1]));
        assert_eq!(k["warp_instructions"], 10);
        assert_eq!(back["kernels"][1]["name"], "a\"b");
        assert_eq!(
            back["total"],
            json!({"kernels": 2, "warp_instructions": 15, "thread_instructions": 307})
        );
        assert_eq!(back["simulation"]["wall_seconds"], 0.5);
        assert_eq!(back["simulation"]["warp_instructions_per_second"], 30.0);
        assert!(!text.contains("cycles"), "{text}");
        assert_eq!(
            rec("k", 1, 2).summary_line(),
            "regsim: kernel k grid (48,1,1) block (256,2,1): 1 warp instructions, 2 thread instructions"
        );
    }

    #[test]
    fn energy_json_prices_events_normalizes_and_names_unknown_structures() {
        let cfg = energy::EnergyConfig::default();
        let ev = |structure, access, count| timing::rf::EnergyEvent {
            structure,
            access,
            count,
        };
        let mut rf = timing::rf::RfStats::default();
        let events = [
            ev("mrf", "read", 100),
            ev("orf", "read", 50),
            ev("l2", "read", 2),
        ];
        let v = energy_json(&cfg, &events, &rf);
        let rf_j = (100.0 * cfg.mrf_read_pj + 50.0 * cfg.orf_read_pj) * 1e-12;
        let total = rf_j + 2.0 * cfg.l2_read_pj * 1e-12;
        assert!((v["total_joules"].as_f64().unwrap() - total).abs() < 1e-20);
        assert!((v["register_file_joules"].as_f64().unwrap() - rf_j).abs() < 1e-20);
        assert_eq!(v["structures"][2]["structure"], "orf");
        assert_eq!(v["structures"][2]["accesses"][0]["count"], 50);
        // No DRAM here: all on chip. The sized ORF's row is recorded.
        assert_eq!(v["off_chip_joules"].as_f64(), Some(0.0));
        assert!((v["on_chip_joules"].as_f64().unwrap() - total).abs() < 1e-20);
        assert_eq!(
            v["sources"]["orf_read_pj"],
            "Gebhart MICRO'11 Table 3, 3-entry row"
        );
        assert!(v.get("register_file_normalized").is_none());
        // With the design's operand counts: ratio to a single-level MRF.
        rf.extra.insert("orf_lrf_operand_reads".into(), 150);
        rf.extra.insert("orf_lrf_operand_writes".into(), 0);
        let v = energy_json(&cfg, &events, &rf);
        let single = cfg.single_level_mrf_joules(150, 0);
        let n = v["register_file_normalized"].as_f64().unwrap();
        assert!((n - rf_j / single).abs() < 1e-12, "{n}");
        let line = energy_line(&v);
        assert!(line.contains("of a single-level MRF"), "{line}");
        assert!(
            line.contains("on chip 7.6700e-9, off chip (DRAM) 0.0000e0"),
            "{line}"
        );
        assert!(
            line.contains("    orf: 1.0880e-9 J (read 50 x 21.76 pJ; Gebhart MICRO'11 Table 3, 3-entry row)\n"),
            "{line}"
        );
        assert!(
            line.contains(
                "    mrf: 6.4000e-9 J (read 100 x 64.00 pJ; energy.mrf_technology_scale = 1)\n"
            ),
            "{line}"
        );
        assert_eq!(v["mrf_technology_scale"], 1.0);
        // A technology's factor is in the report and on the MRF's line.
        let scaled = energy::EnergyConfig {
            mrf_technology_scale: Some(0.65),
            ..energy::EnergyConfig::default()
        };
        let v = energy_json(&scaled, &events, &rf);
        assert_eq!(v["mrf_technology_scale"], 0.65);
        let line = energy_line(&v);
        assert!(
            line.contains(
                "    mrf: 4.1600e-9 J (read 100 x 41.60 pJ; energy.mrf_technology_scale = 0.65)\n"
            ),
            "{line}"
        );
        // A design's parts of its operand counts do not stand for the totals, whatever
        // their names' order.
        let mut parts = timing::rf::RfStats::default();
        parts.extra.insert("ltrf_bypass_operand_reads".into(), 0);
        parts.extra.insert("ltrf_cache_operand_reads".into(), 150);
        parts.extra.insert("ltrf_operand_reads".into(), 150);
        parts.extra.insert("ltrf_operand_writes".into(), 0);
        let v = energy_json(&cfg, &events, &parts);
        assert_eq!(v["single_level_mrf_joules"].as_f64().unwrap(), single);
        let v = energy_json(&cfg, &[ev("ofr", "read", 1)], &rf);
        assert!(v["error"].as_str().unwrap().contains("`ofr`"), "{v}");
    }
}

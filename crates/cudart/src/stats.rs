//! Per-kernel statistics: the line printed after each kernel, the JSON document written
//! at exit (`REGSIM_STATS`) and the readable summary (`REGSIM_SUMMARY`).

use serde_json::{json, Map, Value};

use crate::config::{GpuSelection, Mode};
use crate::device::{Dim3, KernelStats};

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
    fn to_json(&self) -> Value {
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
}

impl RunStats<'_> {
    /// The `REGSIM_STATS` document:
    /// `{"mode", "gpu": {"name", "selector", "overrides", "config"}, "kernels": [...],
    /// "total": {...}, "memory_warnings": [...], "simulation": {"wall_seconds",
    /// "warp_instructions_per_second"}}`. A memory warning has `kernel`, `ptx_line`,
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
        json!({
            "mode": self.mode.name(),
            "gpu": gpu,
            "kernels": self.records.iter().map(KernelRecord::to_json).collect::<Vec<_>>(),
            "total": total,
            "memory_warnings": self
                .memory_warnings
                .iter()
                .map(crate::device::MemoryWarning::to_json)
                .collect::<Vec<_>>(),
            "simulation": simulation,
        })
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
                }
                out.push_str(&report.total.to_string());
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
        };
        let json = run.to_json();
        let text = json.to_string();
        let back: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back["mode"], "functional");
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
}

//! `regsim run --profile-registers` (`REGSIM_PROFILE_REGISTERS=1`): profiles of the
//! executed instruction stream, in functional and in timing mode alike (the profiler is
//! the emulator's [`emu::StepObserver`], so it sees every warp instruction whoever drives
//! the launch).
//!
//! - The dynamic register-usage profile (`compiler::register_profile`, issue 5 item 7):
//!   per lane, how often each value written to a register is read (0, 1, 2, 3+) and how
//!   many of the warp's instructions later a read-once value is read (Gebhart MICRO'11
//!   Figure 2; CERF Figure 2(a)). Values are those of the program as loaded: PTX's
//!   virtual registers, or architectural ones after `--ltrf-renumber`.
//! - Dynamic ORF/LRF accesses (Gebhart §4–5): each instruction's execution count (warp
//!   instructions) times its reads and writes per level under the compiler's ORF/LRF
//!   allocation with the paper's best configuration (3 ORF entries per thread, split LRF;
//!   `compiler::orf_lrf::OrfLrfConfig::default()`), and their energy against a single-level
//!   register file.
//!
//! At exit both go into the statistics document as `register_profile`
//! (`compiler::register_profile::DynamicRegisterProfile`: `profile` with `registers` and
//! `predicates`, each `values`, `reads` [0, 1, 2, 3+] and `read_once_lifetime` [1, 2, 3,
//! 4–7, 8–15, 16–31, 32+]; `instructions`, `warps`, `undefined_reads`) and `orf_lrf`
//! (`config`, `static_counts`, `dynamic_counts` with `reads` and `writes` per level
//! `mrf`/`orf`/`lrf`, `energy_pj` and `baseline_energy_pj`, `energy_ratio`, and per
//! function `functions`), and with `--summary` as text.

use std::sync::{Arc, Mutex, MutexGuard};

use compiler::orf_lrf::{AccessCounts, OrfLrfConfig, OrfLrfReport};
use compiler::register_profile::{DynamicRegisterProfile, DynamicRegisterProfiler, ExecutedInst};
use emu::{StepEvent, StepObserver, WarpStep};
use ir::Program;
use serde_json::{json, Value};

/// What is gathered for one loaded module.
struct ModuleProfile {
    values: DynamicRegisterProfiler,
    /// Warp instructions executed, by `FuncId` then `InstId`.
    exec_counts: Vec<Vec<u64>>,
}

#[derive(Default)]
struct RunProfiler {
    /// By the emulator's module index.
    modules: Vec<Option<ModuleProfile>>,
    /// The module and grid of the launch in progress.
    current: Option<(usize, [u32; 3])>,
}

/// The profiler, shared between the device (which starts launches and reads the result)
/// and the emulator (which reports every executed instruction to it).
#[derive(Clone, Default)]
pub struct SharedProfiler(Arc<Mutex<RunProfiler>>);

impl SharedProfiler {
    fn lock(&self) -> MutexGuard<'_, RunProfiler> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A launch of a kernel of module `module` (whose program is `program`) with `grid`
    /// CTAs starts.
    pub fn begin_launch(&self, module: usize, program: &Program, grid: [u32; 3]) {
        let mut p = self.lock();
        if p.modules.len() <= module {
            p.modules.resize_with(module + 1, || None);
        }
        p.modules[module].get_or_insert_with(|| ModuleProfile {
            values: DynamicRegisterProfiler::new(program),
            exec_counts: program
                .functions
                .iter()
                .map(|f| vec![0; if f.has_body { f.insts.len() } else { 0 }])
                .collect(),
        });
        p.current = Some((module, grid));
    }

    /// The profiles of the run so far, ending every value still live. `program(m)` is
    /// module `m`'s program. Call once, at exit: the profilers start afresh afterwards.
    pub fn report<'a>(&self, program: impl Fn(usize) -> Option<&'a Program>) -> ProfileReport {
        let modules = std::mem::take(&mut self.lock().modules);
        let mut registers = DynamicRegisterProfile::default();
        let mut orf_lrf = OrfLrfTotals::default();
        for (m, profile) in modules.into_iter().enumerate() {
            let Some(profile) = profile else { continue };
            let d = profile.values.finish();
            registers.profile.merge(&d.profile);
            registers.instructions += d.instructions;
            registers.warps += d.warps;
            registers.undefined_reads += d.undefined_reads;
            match program(m) {
                Some(p) => orf_lrf.add(p, &profile.exec_counts),
                None => orf_lrf
                    .errors
                    .push(format!("module {m} is no longer loaded")),
            }
        }
        ProfileReport { registers, orf_lrf }
    }
}

impl StepObserver for SharedProfiler {
    fn observe(&mut self, cta: [u32; 3], warp: u32, step: &WarpStep) {
        let mut p = self.lock();
        let Some((module, [gx, gy, _])) = p.current else {
            return;
        };
        let Some(Some(m)) = p.modules.get_mut(module) else {
            return;
        };
        if let Some(n) = m
            .exec_counts
            .get_mut(step.func.index())
            .and_then(|f| f.get_mut(step.inst.index()))
        {
            *n += 1;
        }
        // Unique among the launch's warps (a CTA has at most 32); every warp of a launch
        // has ended when the next one starts, so keys may repeat across launches.
        let linear_cta = u64::from(cta[0])
            + u64::from(gx) * (u64::from(cta[1]) + u64::from(gy) * u64::from(cta[2]));
        let key = linear_cta.wrapping_mul(32).wrapping_add(u64::from(warp));
        m.values.observe(&ExecutedInst {
            warp: key,
            func: step.func,
            inst: step.inst,
            active_mask: step.active_mask,
            exec_mask: step.exec_mask,
        });
        if step.event == (StepEvent::Exit { done: true }) {
            m.values.end_warp(key);
        }
    }
}

/// Dynamic ORF/LRF counts over every module.
#[derive(Default)]
struct OrfLrfTotals {
    static_counts: AccessCounts,
    dynamic_counts: AccessCounts,
    /// Per function that ran: name and dynamic counts.
    functions: Vec<(String, AccessCounts)>,
    errors: Vec<String>,
}

fn add_counts(a: &mut AccessCounts, b: &AccessCounts) {
    a.reads.mrf += b.reads.mrf;
    a.reads.orf += b.reads.orf;
    a.reads.lrf += b.reads.lrf;
    a.writes.mrf += b.writes.mrf;
    a.writes.orf += b.writes.orf;
    a.writes.lrf += b.writes.lrf;
    a.energy_pj += b.energy_pj;
    a.baseline_energy_pj += b.baseline_energy_pj;
}

impl OrfLrfTotals {
    fn add(&mut self, program: &Program, exec_counts: &[Vec<u64>]) {
        let mut report = match OrfLrfReport::new(program, &OrfLrfConfig::default()) {
            Ok(r) => r,
            Err(e) => return self.errors.push(e.to_string()),
        };
        if let Err(e) = report.add_dynamic_counts(exec_counts) {
            return self.errors.push(e.to_string());
        }
        add_counts(&mut self.static_counts, &report.static_counts);
        for f in &report.functions {
            if let Some(d) = &f.dynamic_counts {
                if d.reads.total() + d.writes.total() > 0 {
                    add_counts(&mut self.dynamic_counts, d);
                    self.functions.push((f.name.clone(), *d));
                }
            }
        }
    }
}

/// What `--profile-registers` adds to the statistics.
pub struct ProfileReport {
    registers: DynamicRegisterProfile,
    orf_lrf: OrfLrfTotals,
}

impl ProfileReport {
    pub fn registers(&self) -> &DynamicRegisterProfile {
        &self.registers
    }

    /// Dynamic ORF/LRF accesses of every kernel and function that ran.
    pub fn orf_lrf_dynamic(&self) -> &AccessCounts {
        &self.orf_lrf.dynamic_counts
    }

    /// Adds `register_profile` and `orf_lrf` to the statistics document.
    pub fn add_to(&self, stats: &mut Value) {
        let Some(obj) = stats.as_object_mut() else {
            return;
        };
        obj.insert(
            "register_profile".into(),
            serde_json::to_value(self.registers).unwrap_or_default(),
        );
        let o = &self.orf_lrf;
        let config = OrfLrfConfig::default();
        let mut orf_lrf = json!({
            "config": {"orf_entries": config.orf_entries, "lrf": config.lrf.as_str()},
            "static_counts": o.static_counts,
            "dynamic_counts": o.dynamic_counts,
            "energy_ratio": o.dynamic_counts.normalized_energy(),
            "functions": o.functions.iter().map(|(name, c)| json!({
                "name": crate::stats::demangle(name),
                "dynamic_counts": c,
                "energy_ratio": c.normalized_energy(),
            })).collect::<Vec<_>>(),
        });
        if !o.errors.is_empty() {
            orf_lrf["errors"] = json!(o.errors);
        }
        obj.insert("orf_lrf".into(), orf_lrf);
    }

    /// The readable form (`--summary`).
    pub fn summary(&self) -> String {
        let mut out = self.registers.to_string();
        let c = &self.orf_lrf.dynamic_counts;
        let config = OrfLrfConfig::default();
        out.push_str(&format!(
            "ORF/LRF hierarchy ({} ORF entries, {} LRF), dynamic: reads MRF {} ORF {} LRF {}; \
             writes MRF {} ORF {} LRF {}; energy {:.3} of a single-level register file \
             ({:.1}% saved)\n",
            config.orf_entries,
            config.lrf.as_str(),
            c.reads.mrf,
            c.reads.orf,
            c.reads.lrf,
            c.writes.mrf,
            c.writes.orf,
            c.writes.lrf,
            c.normalized_energy(),
            100.0 * (1.0 - c.normalized_energy())
        ));
        for e in &self.orf_lrf.errors {
            out.push_str(&format!("ORF/LRF allocation failed: {e}\n"));
        }
        out
    }
}

//! The environment's compiler options, applied to a program when its module is loaded by
//! the load-time pipeline (`compiler::pipeline`, shared with `regsim compile`), so that the
//! emulator (and the timing model) run what a compiler would have produced instead of the
//! PTX as written:
//!
//! - a register cap (`REGSIM_MAX_REGISTERS=N`, `regsim run --max-registers N`, like
//!   `nvcc -maxrregcount`): every function is allocated under the cap and rewritten with
//!   its spill code (`compiler::regalloc::insert_spill_code`: an `ld.local` before and an
//!   `st.local` after each reference of a spilled register), so spill code executes, is
//!   counted and, in timing mode, timed;
//! - LTRF bank-aware renumbering (`REGSIM_LTRF_RENUMBER=N,B`, `regsim run --ltrf-renumber
//!   --registers-per-interval N --banks B`; LTRF §4): the program as
//!   `compiler::ltrf::renumbered_program` writes it, with architectural register names
//!   after renumbering (under the cap too, if one is given).
//!
//! Both must leave what a program computes unchanged; `regsim run`'s tests run every
//! built-in workload both ways. The allocation the timing model and `numRegs` see is the
//! one of the rewritten program: the spill rewrite's own allocation, or for a renumbered
//! program the registers its names say (`%R5` is R5, `%RD4` the pair R4:R5, `%P2` is P2),
//! which [`compiler::regalloc::check`] verifies before the program runs. Without a
//! transform the module loads as written and the runtime allocates with ptxas's default
//! cap of 255. The timing model's register-file design adds the annotation passes it
//! declares (`timing::rf::required_passes`) to the same pipeline run.

use compiler::pipeline::{compile, CompiledFunction, LoadOptions, PassSet};
pub use compiler::pipeline::{LtrfRenumber, DEFAULT_MAX_REGISTERS};

/// The transforms of the environment contract (`REGSIM_MAX_REGISTERS`,
/// `REGSIM_LTRF_RENUMBER`). The default is none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ProgramTransforms {
    pub max_registers: Option<u32>,
    pub ltrf: Option<LtrfRenumber>,
    /// A register cap each module is also allocated under, for comparison only: the
    /// architecture's limit when the GPU config compiles for another budget
    /// (`compiler.max_registers_per_thread`).
    pub compare_with: Option<u32>,
}

impl ProgramTransforms {
    /// Reads the variables; a malformed value is ignored with a warning.
    pub fn from_lookup(
        lookup: impl Fn(&str) -> Option<String>,
        warnings: &mut Vec<String>,
    ) -> Self {
        let mut t = ProgramTransforms::default();
        if let Some(v) = lookup("REGSIM_MAX_REGISTERS").filter(|v| !v.is_empty()) {
            match v.trim().parse::<u32>() {
                Ok(n) if n > 0 => t.max_registers = Some(n),
                _ => warnings.push(format!(
                    "REGSIM_MAX_REGISTERS={v:?} is not a positive number; no register cap"
                )),
            }
        }
        if let Some(v) = lookup("REGSIM_LTRF_RENUMBER").filter(|v| !v.is_empty()) {
            let parsed = v.split_once(',').and_then(|(n, b)| {
                let n = n.trim().parse::<u32>().ok().filter(|&n| n > 0)?;
                let b = b.trim().parse::<u32>().ok().filter(|&b| b > 0)?;
                Some(LtrfRenumber {
                    registers_per_interval: n,
                    banks: b,
                })
            });
            match parsed {
                Some(l) => t.ltrf = Some(l),
                None => warnings.push(format!(
                    "REGSIM_LTRF_RENUMBER={v:?} is not `N,B` (registers per interval, banks); \
                     not renumbering"
                )),
            }
        }
        t
    }

    /// The transforms under the simulated GPU's cap on registers per thread
    /// (`sm.max_registers_per_thread`): the allocator's cap becomes min(that, the user's
    /// cap), and a program that needs more registers than the architecture has runs with
    /// spill code, as ptxas would compile it. A cap of ptxas's default or more changes
    /// nothing, so a program that fits runs as written.
    pub fn under_architecture_cap(mut self, architecture_cap: u32) -> Self {
        self.max_registers =
            compiler::pipeline::cap_under_limit(self.max_registers, architecture_cap);
        self
    }

    /// The transforms under the GPU config's register budget
    /// ([`timing::register_budget::budget`]): its cap as the architecture's, and the
    /// architecture's own limit to compare with when they differ in rule.
    pub fn under_budget(self, budget: timing::register_budget::Budget) -> Self {
        let mut t = self.under_architecture_cap(budget.registers);
        t.compare_with = budget.compared_with;
        t
    }

    pub fn is_none(&self) -> bool {
        *self == ProgramTransforms::default()
    }

    /// The pipeline options of a module load: these transforms plus the passes the
    /// simulated register-file design needs.
    pub fn load_options(&self, design_passes: PassSet) -> LoadOptions {
        LoadOptions {
            max_registers: self.max_registers,
            passes: PassSet {
                ltrf_renumber: self.ltrf,
                ..PassSet::default()
            }
            .union(design_passes),
        }
    }
}

/// Parses, lowers and compiles PTX text with the load-time pipeline and loads the result
/// into the emulator; returns the module and each function's compiled form. Errors are one
/// line (`file:line:column` for PTX errors).
pub fn load(
    emu: &mut emu::Emulator,
    file_name: &str,
    source: &str,
    options: &LoadOptions,
) -> Result<(emu::ModuleId, Vec<Option<CompiledFunction>>), String> {
    let (id, compiled, _) = load_compared(emu, file_name, source, options, None)?;
    Ok((id, compiled))
}

/// [`load`], and with `compare_with` the module's functions also allocated under that
/// cap alone (no passes, nothing loaded), for the statistics' before-and-after.
pub fn load_compared(
    emu: &mut emu::Emulator,
    file_name: &str,
    source: &str,
    options: &LoadOptions,
    compare_with: Option<u32>,
) -> Result<LoadedModule, String> {
    let ast = ptx::parse(file_name, source).map_err(|e| e.to_string())?;
    let program = ir::lower(&ast, file_name, source).map_err(|e| e.to_string())?;
    let compiled = compile(&program, options).map_err(|e| e.to_string())?;
    let compared = match compare_with {
        Some(cap) => {
            let o = LoadOptions {
                max_registers: Some(cap),
                ..LoadOptions::default()
            };
            Some(compile(&program, &o).map_err(|e| e.to_string())?.functions)
        }
        None => None,
    };
    let id = emu
        .load_program(compiled.program)
        .map_err(|e| e.to_string())?;
    Ok((id, compiled.functions, compared))
}

/// A loaded module: its id, its compiled functions, and the functions allocated under
/// the comparison cap.
pub type LoadedModule = (
    emu::ModuleId,
    Vec<Option<CompiledFunction>>,
    Option<Vec<Option<CompiledFunction>>>,
);

#[cfg(test)]
mod tests {
    use super::*;

    /// A kernel with more simultaneously live values than 8 registers hold.
    /// (The compiler's pipeline tests use the same kernel.)
    const PTX: &str = include_str!("../../compiler/testdata/register_pressure.ptx");

    use compiler::pipeline::CompiledProgram;
    use ir::Program;
    use timing::KernelInfo;

    fn apply(t: ProgramTransforms, p: &Program) -> CompiledProgram {
        compiler::pipeline::compile(p, &t.load_options(PassSet::default())).unwrap()
    }

    fn program() -> Program {
        let ast = ptx::parse("t.ptx", PTX).unwrap();
        ir::lower(&ast, "t.ptx", PTX).unwrap()
    }

    fn run(program: Program, threads: u32) -> (Vec<u32>, emu::RunStats) {
        let mut emu = emu::Emulator::new();
        let m = emu.load_program(program).unwrap();
        let k = emu.kernel(m, "k").unwrap();
        let out = emu
            .memory
            .alloc(4 * u64::from(threads), emu::AllocKind::Device)
            .unwrap();
        let stats = emu
            .run(k, emu::LaunchConfig::linear(1, threads), &out.to_le_bytes())
            .unwrap();
        let values = (0..u64::from(threads))
            .map(|i| emu.memory.read_uint(out + 4 * i, 4).unwrap() as u32)
            .collect();
        (values, stats)
    }

    #[test]
    fn reads_the_environment() {
        let mut w = Vec::new();
        let t = ProgramTransforms::from_lookup(
            |k| match k {
                "REGSIM_MAX_REGISTERS" => Some("32".into()),
                "REGSIM_LTRF_RENUMBER" => Some("8, 16".into()),
                _ => None,
            },
            &mut w,
        );
        assert!(w.is_empty());
        assert_eq!(t.max_registers, Some(32));
        assert_eq!(
            t.ltrf,
            Some(LtrfRenumber {
                registers_per_interval: 8,
                banks: 16
            })
        );
        let t = ProgramTransforms::from_lookup(
            |k| match k {
                "REGSIM_MAX_REGISTERS" => Some("0".into()),
                "REGSIM_LTRF_RENUMBER" => Some("16".into()),
                _ => None,
            },
            &mut w,
        );
        assert!(t.is_none());
        assert_eq!(w.len(), 2, "{w:?}");
    }

    #[test]
    fn the_architecture_cap_bounds_the_users_cap() {
        let none = ProgramTransforms::default();
        let user = |n| ProgramTransforms {
            max_registers: Some(n),
            compare_with: None,
            ltrf: None,
        };
        // Fermi's 63 applies with or without a user cap, and the lower cap wins.
        assert_eq!(none.under_architecture_cap(63).max_registers, Some(63));
        assert_eq!(user(32).under_architecture_cap(63).max_registers, Some(32));
        assert_eq!(user(100).under_architecture_cap(63).max_registers, Some(63));
        // 255 (Kepler GK110 and later) is ptxas's default: no transform unless asked.
        assert!(none.under_architecture_cap(255).is_none());
        assert_eq!(
            user(100).under_architecture_cap(255).max_registers,
            Some(100)
        );
    }

    #[test]
    fn spill_code_executes_and_computes_the_same() {
        let (want, plain) = run(program(), 64);
        let t = ProgramTransforms {
            max_registers: Some(8),
            ltrf: None,
            compare_with: None,
        };
        let out = apply(t, &program());
        let k = out.program.func_by_name("k").unwrap();
        let alloc = out.allocation(k).unwrap();
        assert!(alloc.registers_used <= 8, "{}", alloc.registers_used);
        let info = KernelInfo::from_compiled(&out.program, &out.functions, k).unwrap();
        assert_eq!(info.registers_per_thread, alloc.registers_used);
        let (got, spilled) = run(out.program, 64);
        assert_eq!(got, want);
        assert!(
            spilled.warp_instructions > plain.warp_instructions,
            "spill loads and stores execute: {spilled:?} vs {plain:?}"
        );
    }

    #[test]
    fn renumbered_program_computes_the_same_with_its_named_registers() {
        let (want, plain) = run(program(), 64);
        let t = ProgramTransforms {
            max_registers: None,
            ltrf: Some(LtrfRenumber {
                registers_per_interval: 8,
                banks: 16,
            }),
            compare_with: None,
        };
        let out = apply(t, &program());
        let k = out.program.func_by_name("k").unwrap();
        let f = out.program.function(k);
        assert!(f.regs.iter().any(|r| r.name.starts_with("%RD")), "renamed");
        let alloc = out.allocation(k).unwrap();
        assert!((11..=20).contains(&alloc.registers_used), "{alloc:?}");
        let (got, renumbered) = run(out.program, 64);
        assert_eq!(got, want);
        assert_eq!(renumbered, plain, "renumbering adds no instruction");
    }
}

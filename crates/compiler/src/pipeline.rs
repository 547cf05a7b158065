//! The load-time compilation pipeline: the one place where a lowered PTX program becomes
//! what the simulator runs and what the register-file designs read.
//!
//! `regsim run` (through the CUDA runtime, for every module a program loads) and
//! `regsim compile --emit annotations` both call [`compile`], so what a user inspects is
//! what the timing model sees. The stages, per function with a body:
//!
//! 1. **Register allocation** under the register cap ([`LoadOptions::max_registers`], or
//!    ptxas's default of 255). If the allocation spills, the spill code is materialised
//!    ([`crate::regalloc::insert_spill_code`]) and checked, so spill loads and stores
//!    execute and are timed; otherwise the program is left exactly as written.
//!    With [`PassSet::ltrf_renumber`] the whole program is instead rewritten by LTRF's
//!    bank-aware renumbering ([`crate::ltrf::renumbered_program`]) and its allocation is
//!    the one its architectural register names give ([`allocation_from_names`]).
//! 0. **Load schedule**, when [`PassSet::load_schedule`] asks for it (`sm.load_schedule`):
//!    every block reordered so that loads issue early ([`crate::load_schedule`]), as
//!    ptxas's latency scheduling does; the allocation and everything after run on it.
//! 2. **Reuse schedule**, when [`PassSet::reuse_schedule`] asks for it (the reuse-cache
//!    design's default): every block reordered for operand reuse
//!    ([`crate::reuse_schedule`]), checked by the allocation checker; the program runs in
//!    that order.
//! 3. **Annotation passes**, each only when a [`PassSet`] asks for it (a register-file
//!    design declares its set; see `timing::rf::required_passes`): liveness bits (CERF,
//!    LTRF+, RFC), strands (Gebhart §4.1), ORF/LRF allocation (Gebhart §4.2–4.6), LTRF
//!    register-intervals (§3.3), reuse distances (Malekeh §3–4), reuse bits (MICRO'25's
//!    register-file cache). They all run on the final
//!    function and allocation of stages 1 and 2, so their register numbers are the ones the
//!    hardware model uses.
//!
//! The result, [`CompiledProgram`], holds the program to load, each function's allocation
//! and its [`FunctionAnnotations`]: per instruction and per register operand (the entries
//! of `RegisterEffects::uses`/`defs`, in order), with "no information" wherever a pass
//! did not run.

use ir::{FuncId, Function, InstId, Program, RegClass, RegisterEffects};

use crate::liveness_bits::LivenessBits;
use crate::ltrf::{ltrf_with_numbering, renumbered_program, LtrfConfig};
use crate::orf_lrf::{OrfLrfConfig, ReadFrom};
use crate::regalloc::ir_input::width_of;
use crate::regalloc::{allocate, check, insert_spill_code, IrInput};
use crate::reuse_distance::{ReuseDistanceConfig, ReuseDistances};
use crate::strands::{StrandConfig, Strands};
use crate::{AllocConfig, Allocation, Location};

/// ptxas's default cap on registers per thread, used when no cap is given.
pub const DEFAULT_MAX_REGISTERS: u32 = 255;

/// The cap a program is allocated under given a user's cap (`--max-registers`) and the
/// simulated GPU's limit (its architecture's, or its register budget): the smaller of
/// the two, and `None` (load as written) when there is no user cap and the limit is
/// ptxas's default or more.
pub fn cap_under_limit(user: Option<u32>, limit: u32) -> Option<u32> {
    let cap = user.unwrap_or(DEFAULT_MAX_REGISTERS).min(limit);
    (user.is_some() || cap < DEFAULT_MAX_REGISTERS).then_some(cap)
}

/// LTRF bank-aware renumbering's two parameters (LTRF §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LtrfRenumber {
    /// `N`: registers per register-interval.
    pub registers_per_interval: u32,
    /// `B`: banks of the main register file.
    pub banks: u32,
}

/// The annotation passes (and the one program rewrite) a consumer needs. The default
/// runs none.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PassSet {
    /// Per-operand dead-after bits, conservative under SIMT divergence.
    pub liveness_bits: bool,
    /// Strand ends (Gebhart §4.1).
    pub strands: Option<StrandConfig>,
    /// ORF/LRF levels of every operand (Gebhart §4.2–4.6; implies its own strands).
    pub orf_lrf: Option<OrfLrfConfig>,
    /// LTRF register-intervals with their prefetch working sets.
    pub intervals: Option<LtrfConfig>,
    /// Reuse distances of every operand (Malekeh).
    pub reuse_distance: Option<ReuseDistanceConfig>,
    /// Reuse bits of every source operand (the register-file cache of MICRO'25).
    pub reuse_bits: bool,
    /// Reorder each block for operand reuse first ([`crate::reuse_schedule`]); the
    /// program runs in that order.
    pub reuse_schedule: bool,
    /// Rewrite the program with LTRF's bank-aware renumbering first.
    pub ltrf_renumber: Option<LtrfRenumber>,
    /// Reorder each block so that loads issue as early as their dependences allow
    /// ([`crate::load_schedule`]), before register allocation; the program runs in that
    /// order.
    pub load_schedule: bool,
}

impl PassSet {
    /// The passes of both sets; where both configure a pass, `self`'s settings win.
    pub fn union(self, other: PassSet) -> PassSet {
        PassSet {
            liveness_bits: self.liveness_bits || other.liveness_bits,
            strands: self.strands.or(other.strands),
            orf_lrf: self.orf_lrf.or(other.orf_lrf),
            intervals: self.intervals.or(other.intervals),
            reuse_distance: self.reuse_distance.or(other.reuse_distance),
            reuse_bits: self.reuse_bits || other.reuse_bits,
            reuse_schedule: self.reuse_schedule || other.reuse_schedule,
            ltrf_renumber: self.ltrf_renumber.or(other.ltrf_renumber),
            load_schedule: self.load_schedule || other.load_schedule,
        }
    }

    /// True when no pass and no rewrite is asked for.
    pub fn is_empty(&self) -> bool {
        *self == PassSet::default()
    }
}

/// Everything that decides what [`compile`] produces.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadOptions {
    /// Register cap per thread (`nvcc -maxrregcount`); `None` is ptxas's default, 255.
    pub max_registers: Option<u32>,
    /// The passes to run.
    pub passes: PassSet,
}

impl LoadOptions {
    /// The allocator settings of every function.
    pub fn alloc_config(&self) -> AllocConfig {
        AllocConfig::with_max_registers(self.max_registers.unwrap_or(DEFAULT_MAX_REGISTERS))
    }
}

/// Why a program could not be compiled: one line naming the stage and the function.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{stage}: {message}")]
pub struct PipelineError {
    /// The stage (`register cap 32`, `LTRF renumbering (N = 16, 16 banks)`, `orf-lrf`, …).
    pub stage: String,
    /// What went wrong, starting with the function's name where there is one.
    pub message: String,
}

/// The register-file level an operand is read from or written to (Gebhart MICRO'11).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum HierarchyLevel {
    /// The main register file.
    #[default]
    Main,
    /// The operand register file.
    Operand,
    /// The last result file.
    LastResult,
}

/// What the passes say about one register operand. Every field defaults to "no
/// information" (what a design must assume when the pass did not run).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct OperandAnnotation {
    /// ORF/LRF: the level a source is read from; for a destination, the highest level it
    /// is written to.
    pub level: HierarchyLevel,
    /// ORF/LRF destinations: also written to the MRF.
    pub also_main: bool,
    /// ORF/LRF sources (§4.4 read-operand allocation): the value read from the MRF is
    /// also written into an ORF entry, from which later reads in the strand are served.
    pub fills_orf: bool,
    /// Liveness bits. A source: no lane of the warp reads the register again before it
    /// is overwritten. A destination: no lane reads the value written (dead at
    /// definition).
    pub dead_after: bool,
    /// Reuse distance: instructions of this thread until the register is next read.
    pub reuse_distance: Option<u32>,
    /// Reuse bit, sources only: the next instruction reads the register in the same
    /// operand slot ([`crate::reuse_bits`]).
    pub reuse: bool,
}

/// What the passes say about one instruction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct InstAnnotation {
    /// The last instruction of a strand (Gebhart §4.1, from the strands or ORF/LRF pass).
    pub strand_end: bool,
    /// The first instruction of LTRF register-interval `n` (an index into
    /// [`FunctionAnnotations::intervals`]).
    pub interval_entry: Option<u32>,
}

/// The annotations of one function.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FunctionAnnotations {
    use_start: Vec<u32>,
    def_start: Vec<u32>,
    uses: Vec<OperandAnnotation>,
    defs: Vec<OperandAnnotation>,
    insts: Vec<InstAnnotation>,
    /// LTRF register-intervals: each one's working set as 32-bit architectural registers,
    /// sorted.
    pub intervals: Vec<Vec<u32>>,
    /// LTRF: the register-interval (index into `intervals`) of every instruction, empty
    /// when the pass did not run. A warp can arrive inside an interval other than through
    /// its entry (after the other side of a divergent branch, on reactivation), so the
    /// hardware model needs membership, not only entries.
    pub interval_of: Vec<u32>,
}

impl FunctionAnnotations {
    /// "No information" for every operand and instruction of `f`.
    pub fn empty(f: &Function) -> Self {
        let n = f.num_insts();
        let (mut use_start, mut def_start) = (Vec::with_capacity(n + 1), Vec::with_capacity(n + 1));
        let (mut u, mut d) = (0u32, 0u32);
        for i in 0..n {
            use_start.push(u);
            def_start.push(d);
            u += f.uses(InstId::new(i)).len() as u32;
            d += f.defs(InstId::new(i)).len() as u32;
        }
        use_start.push(u);
        def_start.push(d);
        FunctionAnnotations {
            use_start,
            def_start,
            uses: vec![OperandAnnotation::default(); u as usize],
            defs: vec![OperandAnnotation::default(); d as usize],
            insts: vec![InstAnnotation::default(); n],
            intervals: Vec::new(),
            interval_of: Vec::new(),
        }
    }

    /// One entry per `uses(inst)` entry.
    pub fn uses(&self, inst: InstId) -> &[OperandAnnotation] {
        let i = inst.index();
        &self.uses[self.use_start[i] as usize..self.use_start[i + 1] as usize]
    }

    /// One entry per `defs(inst)` entry.
    pub fn defs(&self, inst: InstId) -> &[OperandAnnotation] {
        let i = inst.index();
        &self.defs[self.def_start[i] as usize..self.def_start[i + 1] as usize]
    }

    /// The instruction's own annotation.
    pub fn inst(&self, inst: InstId) -> InstAnnotation {
        self.insts[inst.index()]
    }

    fn uses_mut(&mut self, inst: InstId) -> &mut [OperandAnnotation] {
        let i = inst.index();
        &mut self.uses[self.use_start[i] as usize..self.use_start[i + 1] as usize]
    }

    fn defs_mut(&mut self, inst: InstId) -> &mut [OperandAnnotation] {
        let i = inst.index();
        &mut self.defs[self.def_start[i] as usize..self.def_start[i + 1] as usize]
    }
}

/// One compiled function.
#[derive(Debug, Clone)]
pub struct CompiledFunction {
    /// Its register allocation (no spills: spill code, if any, is in the program).
    pub allocation: Allocation,
    /// What the passes said.
    pub annotations: FunctionAnnotations,
    /// Values the allocation under the cap spilled to local memory (0: none, and the
    /// function is as written).
    pub spill_slots: u32,
}

/// A compiled program: what the emulator loads and what the timing model reads.
#[derive(Debug, Clone)]
pub struct CompiledProgram {
    /// The program to run (with spill code or renumbered, where a stage rewrote it).
    pub program: Program,
    /// Per `FuncId`; `None` for functions without a body.
    pub functions: Vec<Option<CompiledFunction>>,
}

impl CompiledProgram {
    /// The compiled function `f`, if it has a body.
    pub fn function(&self, f: FuncId) -> Option<&CompiledFunction> {
        self.functions.get(f.index()).and_then(Option::as_ref)
    }

    /// The allocation of `f`, if it has a body.
    pub fn allocation(&self, f: FuncId) -> Option<&Allocation> {
        self.function(f).map(|c| &c.allocation)
    }
}

/// Runs the pipeline (see the module docs) on every function of `program`.
pub fn compile(program: &Program, options: &LoadOptions) -> Result<CompiledProgram, PipelineError> {
    let scheduled;
    let program = if options.passes.load_schedule {
        scheduled = crate::load_schedule::schedule_program(program);
        &scheduled
    } else {
        program
    };
    let (mut program, mut allocations) = match options.passes.ltrf_renumber {
        Some(l) => renumber(program, l, options)?,
        None => allocate_with_spill_code(program, options)?,
    };
    if options.passes.reuse_schedule {
        reuse_schedule(&mut program, &mut allocations)?;
    }
    let mut functions = Vec::with_capacity(program.functions.len());
    for (f, allocation) in program.functions.iter().zip(allocations) {
        let Some((allocation, spill_slots)) = allocation else {
            functions.push(None);
            continue;
        };
        let annotations = annotate(f, &allocation, &options.passes)?;
        functions.push(Some(CompiledFunction {
            allocation,
            annotations,
            spill_slots,
        }));
    }
    Ok(CompiledProgram { program, functions })
}

/// The program and, per function with a body, its allocation and the values spilled.
type Allocated = (Program, Vec<Option<(Allocation, u32)>>);

/// Replaces every allocated function by its reuse schedule, checked by the allocation
/// checker (a failure is a bug of the schedule, reported rather than run).
fn reuse_schedule(
    program: &mut Program,
    allocations: &mut [Option<(Allocation, u32)>],
) -> Result<(), PipelineError> {
    for (f, allocation) in program.functions.iter_mut().zip(allocations) {
        let Some((alloc, _)) = allocation else {
            continue;
        };
        let (g, galloc) = crate::reuse_schedule::schedule(f, alloc);
        check(&IrInput::new(&g), &galloc).map_err(|e| PipelineError {
            stage: "reuse schedule".to_string(),
            message: format!("{}: the reordered function fails the checker: {e}", f.name),
        })?;
        *f = g;
        *alloc = galloc;
    }
    Ok(())
}

fn allocate_with_spill_code(
    program: &Program,
    options: &LoadOptions,
) -> Result<Allocated, PipelineError> {
    let config = options.alloc_config();
    let fail = |f: &Function, message: String| PipelineError {
        stage: format!("register cap {}", config.max_registers.unwrap_or(0)),
        message: format!("{}: {message}", f.name),
    };
    let mut out = program.clone();
    let mut allocations = vec![None; program.functions.len()];
    for (i, f) in program.functions.iter().enumerate() {
        if !f.has_body {
            continue;
        }
        let alloc = allocate(&IrInput::new(f), &config).map_err(|e| fail(f, e.to_string()))?;
        if alloc.spill_slots.is_empty() && alloc.edits.is_empty() {
            allocations[i] = Some((alloc, 0));
            continue;
        }
        let spilled = u32::try_from(alloc.spill_slots.len()).unwrap_or(u32::MAX);
        let (g, galloc) = insert_spill_code(f, &alloc).map_err(|e| fail(f, e.to_string()))?;
        check(&IrInput::new(&g), &galloc)
            .map_err(|e| fail(f, format!("spill code rejected by the checker: {e}")))?;
        out.functions[i] = g;
        allocations[i] = Some((galloc, spilled));
    }
    Ok((out, allocations))
}

fn renumber(
    program: &Program,
    l: LtrfRenumber,
    options: &LoadOptions,
) -> Result<Allocated, PipelineError> {
    let stage = format!(
        "LTRF renumbering (N = {}, {} banks)",
        l.registers_per_interval, l.banks
    );
    let config = LtrfConfig {
        registers_per_interval: l.registers_per_interval,
        banks: l.banks,
        max_registers: options.alloc_config().max_registers,
        ..LtrfConfig::default()
    };
    let (out, _) = renumbered_program(program, &config).map_err(|e| PipelineError {
        stage: stage.clone(),
        message: e.to_string(),
    })?;
    let alloc_config = options.alloc_config();
    let allocations = out
        .functions
        .iter()
        .zip(&program.functions)
        .map(|(f, input)| {
            if !f.has_body {
                return Ok(None);
            }
            let fail = |message: String| PipelineError {
                stage: stage.clone(),
                message: format!("{}: {message}", f.name),
            };
            let alloc = allocation_from_names(f).map_err(fail)?;
            check(&IrInput::new(f), &alloc).map_err(|e| {
                fail(format!(
                    "the registers the names give are inconsistent: {e}"
                ))
            })?;
            // The renumbering starts from the allocation under the same cap; its spills
            // are the program's.
            let spilled = allocate(&IrInput::new(input), &alloc_config)
                .map_err(|e| fail(e.to_string()))?
                .spill_slots
                .len();
            Ok(Some((alloc, u32::try_from(spilled).unwrap_or(u32::MAX))))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((out, allocations))
}

/// The allocation a function written with architectural register names
/// ([`crate::ltrf::architectural_function`]) stands for: `%R5`, `%RH5` and `%RB5` are R5,
/// `%RD4` is R4:R5, `%RQ8` is R8…R11, `%P2` is P2.
pub fn allocation_from_names(f: &Function) -> Result<Allocation, String> {
    let mut alloc = Allocation {
        locations: Vec::with_capacity(f.regs.len()),
        ..Allocation::default()
    };
    for reg in &f.regs {
        let name = reg.name.strip_prefix('%').unwrap_or(&reg.name);
        let digits = name.trim_start_matches(|c: char| c.is_ascii_alphabetic());
        let prefix = &name[..name.len() - digits.len()];
        let index: u32 = digits
            .parse()
            .map_err(|_| format!("{} is not an architectural register name", reg.name))?;
        let location = match (prefix, reg.class) {
            ("P", RegClass::Pred) => {
                alloc.predicates_used = alloc.predicates_used.max(index + 1);
                Location::Pred(crate::PredReg(index))
            }
            ("R" | "RB" | "RH" | "RD" | "RQ", class) if class != RegClass::Pred => {
                let end = index + width_of(class).units();
                alloc.registers_used = alloc.registers_used.max(end);
                Location::Reg(crate::PhysReg(index))
            }
            _ => {
                return Err(format!(
                    "{} is not an architectural register name",
                    reg.name
                ))
            }
        };
        alloc.locations.push(location);
    }
    Ok(alloc)
}

fn annotate(
    f: &Function,
    allocation: &Allocation,
    passes: &PassSet,
) -> Result<FunctionAnnotations, PipelineError> {
    let mut out = FunctionAnnotations::empty(f);
    let fail = |stage: &str, message: String| PipelineError {
        stage: stage.to_string(),
        message: format!("{}: {message}", f.name),
    };
    let insts = (0..f.num_insts()).map(InstId::new);
    if passes.liveness_bits {
        let bits = LivenessBits::compute(f, allocation)
            .map_err(|e| fail("liveness bits", e.to_string()))?;
        for inst in insts.clone() {
            for (k, a) in out.uses_mut(inst).iter_mut().enumerate() {
                a.dead_after = bits.is_dead_after(inst, k);
            }
            for (k, a) in out.defs_mut(inst).iter_mut().enumerate() {
                a.dead_after = bits.is_dead_at_definition(inst, k);
            }
        }
    }
    if let Some(config) = &passes.strands {
        let strands = Strands::compute(f, config);
        for inst in insts.clone() {
            out.insts[inst.index()].strand_end |= strands.ends_strand(inst);
        }
    }
    if let Some(config) = &passes.orf_lrf {
        config
            .validate()
            .map_err(|e| fail("orf-lrf", e.to_string()))?;
        let placed = crate::orf_lrf::allocate(f, config);
        crate::orf_lrf::check(f, &placed, config).map_err(|errors| {
            fail(
                "orf-lrf",
                format!("placement rejected by the checker: {errors:?}"),
            )
        })?;
        for inst in insts.clone() {
            out.insts[inst.index()].strand_end |= placed.strands().ends_strand(inst);
            let reads = placed.reads(inst).iter().zip(placed.fills(inst));
            for (a, (r, fill)) in out.uses_mut(inst).iter_mut().zip(reads) {
                a.level = match r {
                    ReadFrom::Orf { .. } => HierarchyLevel::Operand,
                    ReadFrom::Lrf { .. } => HierarchyLevel::LastResult,
                    ReadFrom::Mrf | ReadFrom::Pred => HierarchyLevel::Main,
                };
                a.fills_orf = fill.is_some();
            }
            for (a, w) in out.defs_mut(inst).iter_mut().zip(placed.writes(inst)) {
                a.level = if w.lrf.is_some() {
                    HierarchyLevel::LastResult
                } else if w.orf.is_some() {
                    HierarchyLevel::Operand
                } else {
                    HierarchyLevel::Main
                };
                a.also_main = a.level != HierarchyLevel::Main && w.mrf;
            }
        }
    }
    if let Some(config) = &passes.intervals {
        let formed = ltrf_with_numbering(None, f.clone(), allocation.clone(), config)
            .map_err(|e| fail("LTRF register-intervals", e.to_string()))?;
        for (n, interval) in formed.intervals.intervals.iter().enumerate() {
            let header = interval.header();
            if let Some(&first) = f.block_insts(header.block).get(header.start as usize) {
                out.insts[first.index()].interval_entry = Some(n as u32);
            }
            out.intervals.push(interval.working_set.clone());
        }
        out.interval_of = (0..f.num_insts())
            .map(|i| formed.intervals.interval_of(InstId::new(i)).0)
            .collect();
    }
    if passes.reuse_bits {
        let bits = crate::reuse_bits::compute(f, allocation);
        for inst in insts.clone() {
            for (a, &b) in out.uses_mut(inst).iter_mut().zip(&bits[inst.index()]) {
                a.reuse = b;
            }
        }
    }
    if passes.reuse_distance.is_some() {
        let distances = ReuseDistances::compute(f);
        for inst in insts {
            for (a, d) in out
                .uses_mut(inst)
                .iter_mut()
                .zip(distances.use_distances(inst))
            {
                a.reuse_distance = *d;
            }
            for (a, d) in out
                .defs_mut(inst)
                .iter_mut()
                .zip(distances.def_distances(inst))
            {
                a.reuse_distance = *d;
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::lower;

    /// A kernel with more simultaneously live values than 8 registers hold, and a chain
    /// of dependent adds.
    const PTX: &str = include_str!("../testdata/register_pressure.ptx");

    fn kernel(c: &CompiledProgram) -> (FuncId, &Function, &CompiledFunction) {
        let k = c.program.func_by_name("k").unwrap();
        (k, c.program.function(k), c.function(k).unwrap())
    }

    #[test]
    fn without_passes_the_program_is_unchanged_and_unannotated() {
        let p = lower(PTX);
        let c = compile(&p, &LoadOptions::default()).unwrap();
        let (k, f, cf) = kernel(&c);
        assert_eq!(f.insts, p.function(k).insts);
        assert!(cf.annotations.intervals.is_empty());
        for i in 0..f.num_insts() {
            let i = InstId::new(i);
            assert_eq!(cf.annotations.inst(i), InstAnnotation::default());
            assert!(cf
                .annotations
                .uses(i)
                .iter()
                .all(|a| *a == OperandAnnotation::default()));
            assert_eq!(cf.annotations.uses(i).len(), f.uses(i).len());
            assert_eq!(cf.annotations.defs(i).len(), f.defs(i).len());
        }
    }

    #[test]
    fn a_cap_that_forces_spills_materialises_spill_code() {
        let p = lower(PTX);
        let options = LoadOptions {
            max_registers: Some(8),
            ..LoadOptions::default()
        };
        let c = compile(&p, &options).unwrap();
        let (_, f, cf) = kernel(&c);
        assert!(cf.allocation.registers_used <= 8);
        assert!(cf.allocation.spill_slots.is_empty() && cf.allocation.edits.is_empty());
        assert!(f.num_insts() > p.function(p.func_by_name("k").unwrap()).num_insts());
    }

    #[test]
    fn passes_annotate_the_final_allocation() {
        let p = lower(PTX);
        let options = LoadOptions {
            max_registers: None,
            passes: PassSet {
                liveness_bits: true,
                orf_lrf: Some(OrfLrfConfig::default()),
                intervals: Some(LtrfConfig {
                    registers_per_interval: 8,
                    ..LtrfConfig::default()
                }),
                reuse_distance: Some(ReuseDistanceConfig::default()),
                ..PassSet::default()
            },
        };
        let c = compile(&p, &options).unwrap();
        let (_, f, cf) = kernel(&c);
        let a = &cf.annotations;
        // `add %r12, %r11, %r4`: %r11 is read only here, right after its definition.
        let add = (0..f.num_insts())
            .map(InstId::new)
            .find(|&i| f.defs(i).first().is_some_and(|&d| f.reg(d).name == "%r12"))
            .unwrap();
        let r11 = f
            .uses(add)
            .iter()
            .position(|&u| f.reg(u).name == "%r11")
            .unwrap();
        assert!(a.uses(add)[r11].dead_after);
        assert_ne!(
            a.uses(add)[r11].level,
            HierarchyLevel::Main,
            "{:?}",
            a.uses(add)
        );
        // The next read of %r12 is the next instruction.
        assert_eq!(a.defs(add)[0].reuse_distance, Some(1));
        // Intervals: the first instruction enters interval 0, every working set fits.
        assert_eq!(a.inst(InstId::new(0)).interval_entry, Some(0));
        assert!(!a.intervals.is_empty());
        assert!(
            a.intervals.iter().all(|w| w.len() <= 8),
            "{:?}",
            a.intervals
        );
        let entries = (0..f.num_insts())
            .filter(|&i| a.inst(InstId::new(i)).interval_entry.is_some())
            .count();
        assert_eq!(entries, a.intervals.len());
        // Strands end at least at the kernel's end.
        assert!((0..f.num_insts()).any(|i| a.inst(InstId::new(i)).strand_end));
    }

    #[test]
    fn renumbering_rewrites_with_architectural_names() {
        let p = lower(PTX);
        let options = LoadOptions {
            max_registers: None,
            passes: PassSet {
                ltrf_renumber: Some(LtrfRenumber {
                    registers_per_interval: 8,
                    banks: 16,
                }),
                ..PassSet::default()
            },
        };
        let c = compile(&p, &options).unwrap();
        let (_, f, cf) = kernel(&c);
        assert!(f.regs.iter().any(|r| r.name.starts_with("%RD")));
        assert!((11..=20).contains(&cf.allocation.registers_used));
    }

    #[test]
    fn names_that_are_not_architectural_are_refused() {
        let p = lower(PTX);
        let f = p.function(p.func_by_name("k").unwrap());
        let e = allocation_from_names(f).unwrap_err();
        assert!(
            e.starts_with("%r") && e.ends_with(" is not an architectural register name"),
            "{e}"
        );
    }

    #[test]
    fn union_keeps_both_sets() {
        let a = PassSet {
            liveness_bits: true,
            ..PassSet::default()
        };
        let b = PassSet {
            reuse_distance: Some(ReuseDistanceConfig::default()),
            ..PassSet::default()
        };
        let u = a.union(b);
        assert!(u.liveness_bits && u.reuse_distance.is_some() && u.orf_lrf.is_none());
        assert!(PassSet::default().is_empty() && !u.is_empty());
    }
}

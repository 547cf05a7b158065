//! `regsim compile FILE --pass orf-lrf`: every function register-allocated, its ORF/LRF
//! allocation checked, each register operand annotated with its level, and read and write
//! counts per level with their energy — static (each instruction once) and, given
//! per-instruction execution counts from the emulator, dynamic.
//!
//! Counts are in 32-bit register accesses (a 64-bit operand is two); predicates, which
//! live outside the hierarchy, are not counted. A read-operand load counts as an MRF read
//! and an ORF write. Energies use [`super::EnergyModel`] with each access's wire distance
//! to the unit that reads or produces it; `baseline_energy_pj` is the same accesses all to
//! a single-level MRF, the normalisation of the paper's Figures 11–13.

use std::fmt;

use ir::{FuncId, Function, InstId, Program, RegisterEffects};
use serde::Serialize;

use super::{
    allocate, check, register_units, AllocationStats, Annotations, CheckError, LrfMode,
    OrfLrfConfig, ReadFrom, WriteTo,
};
use crate::inst_info::{datapath, Datapath, OperandRef};
use crate::regalloc::spill_code::{insert_spill_code, SpillCodeError};
use crate::regalloc::{AllocError, Allocation, IrInput, Location};
use crate::strands::plural;
use energy::gebhart::{AccessEnergy, Level};

/// Why the pass could not produce a report.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum OrfLrfError {
    #[error("configuration: {0}")]
    Config(String),
    #[error("{function}: register allocation: {error}")]
    Registers { function: String, error: AllocError },
    #[error("{function}: spill code: {error}")]
    SpillCode {
        function: String,
        error: SpillCodeError,
    },
    #[error(
        "{function}: the ORF/LRF allocation fails its check: {}",
        first(errors)
    )]
    Check {
        function: String,
        errors: Vec<CheckError>,
    },
}

fn first(errors: &[CheckError]) -> String {
    errors.first().map_or_else(String::new, |e| {
        format!("{e} (and {} more)", errors.len().saturating_sub(1))
    })
}

/// Execution counts that do not fit a function.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{function}: {got} execution counts for {expected} instructions")]
pub struct CountsError {
    pub function: String,
    pub expected: usize,
    pub got: usize,
}

/// Reads or writes per level, in 32-bit register accesses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LevelCounts {
    pub mrf: u64,
    pub orf: u64,
    pub lrf: u64,
}

impl LevelCounts {
    fn add(&mut self, level: Level, n: u64) {
        match level {
            Level::Mrf => self.mrf += n,
            Level::Orf => self.orf += n,
            Level::Lrf => self.lrf += n,
        }
    }

    pub fn total(&self) -> u64 {
        self.mrf + self.orf + self.lrf
    }

    fn scaled_add(&mut self, other: &LevelCounts, k: u64) {
        self.mrf += other.mrf * k;
        self.orf += other.orf * k;
        self.lrf += other.lrf * k;
    }
}

/// Accesses per level and their energy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct AccessCounts {
    pub reads: LevelCounts,
    pub writes: LevelCounts,
    pub energy_pj: f64,
    /// The same accesses to a single-level MRF.
    pub baseline_energy_pj: f64,
}

impl AccessCounts {
    /// Energy relative to the single-level register file (Figure 13's measure).
    pub fn normalized_energy(&self) -> f64 {
        if self.baseline_energy_pj == 0.0 {
            1.0
        } else {
            self.energy_pj / self.baseline_energy_pj
        }
    }

    fn scaled_add(&mut self, other: &AccessCounts, k: u64) {
        self.reads.scaled_add(&other.reads, k);
        self.writes.scaled_add(&other.writes, k);
        self.energy_pj += other.energy_pj * k as f64;
        self.baseline_energy_pj += other.baseline_energy_pj * k as f64;
    }
}

/// One register operand: which operand, which register, and its level.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OperandAnnotation {
    /// `guard`, `a`, `b`, `c`, `src3`…, or `dst0`….
    pub operand: String,
    /// The PTX register.
    pub reg: String,
    /// The architectural register(s): `R5`, `R4:R5`, `P1`.
    pub arch: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read: Option<ReadFrom>,
    /// For a read-operand load: the ORF entry the read also fills.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fill: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write: Option<WriteTo>,
}

/// One instruction with its annotations.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct InstAnnotation {
    pub inst: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block: Option<String>,
    pub text: String,
    pub strand: u32,
    pub end_of_strand: bool,
    pub unit: Datapath,
    pub reads: Vec<OperandAnnotation>,
    pub writes: Vec<OperandAnnotation>,
}

/// The allocation of one function.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FunctionOrfLrf {
    pub func: u32,
    pub name: String,
    pub kind: String,
    /// Architectural registers per thread and predicate registers.
    pub registers: u32,
    pub predicates: u32,
    /// True if a register cap forced spill code: instruction ids are then those of the
    /// function with the spill loads and stores inserted.
    pub spill_code: bool,
    pub strands: u32,
    pub stats: AllocationStats,
    pub static_counts: AccessCounts,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dynamic_counts: Option<AccessCounts>,
    pub instructions: Vec<InstAnnotation>,
    /// Per instruction, its accesses when executed once.
    #[serde(skip)]
    per_inst: Vec<AccessCounts>,
}

impl FunctionOrfLrf {
    /// Dynamic counts: each instruction's accesses times its execution count
    /// (`exec_counts[i]` for instruction `i`, in whatever unit the caller counts —
    /// warp instructions for the paper's measure).
    pub fn dynamic_counts(&self, exec_counts: &[u64]) -> Result<AccessCounts, CountsError> {
        if exec_counts.len() != self.per_inst.len() {
            return Err(CountsError {
                function: self.name.clone(),
                expected: self.per_inst.len(),
                got: exec_counts.len(),
            });
        }
        let mut total = AccessCounts::default();
        for (c, &n) in self.per_inst.iter().zip(exec_counts) {
            total.scaled_add(c, n);
        }
        Ok(total)
    }

    fn new(
        program: &Program,
        func: FuncId,
        f: &Function,
        alloc: &Allocation,
        a: &Annotations,
        energy: &AccessEnergy,
        spill_code: bool,
    ) -> Self {
        let units: Vec<u8> = f.regs.iter().map(|r| register_units(r.class)).collect();
        let arch = |r: ir::RegId| -> String {
            match alloc.location(r) {
                Location::Reg(p) => match units[r.index()] {
                    0 | 1 => format!("R{}", p.0),
                    u => format!("R{}:R{}", p.0, p.0 + u32::from(u) - 1),
                },
                Location::Pred(p) => format!("P{}", p.0),
                other => other.to_string(),
            }
        };
        let mut instructions = Vec::with_capacity(f.num_insts());
        let mut per_inst = Vec::with_capacity(f.num_insts());
        for (b, block) in f.blocks.iter().enumerate() {
            for i in block.start..block.end {
                let id = InstId(i);
                let unit = datapath(&f.inst(id).op);
                let mut counts = AccessCounts::default();
                let mut reads = Vec::new();
                for (k, (&r, &op)) in f.uses(id).iter().zip(a.sites.uses(id)).enumerate() {
                    let read = a.reads(id)[k];
                    let fill = a.fills(id)[k];
                    let n = u64::from(units[r.index()]);
                    if let Some(level) = read.level() {
                        counts.reads.add(level, n);
                        counts.energy_pj += n as f64 * energy.read(level, unit);
                        counts.baseline_energy_pj += n as f64 * energy.read(Level::Mrf, unit);
                    }
                    if fill.is_some() {
                        counts.writes.add(Level::Orf, n);
                        counts.energy_pj += n as f64 * energy.write(Level::Orf, unit);
                    }
                    reads.push(OperandAnnotation {
                        operand: operand_name(op),
                        reg: f.reg(r).name.clone(),
                        arch: arch(r),
                        read: Some(read),
                        fill,
                        write: None,
                    });
                }
                let mut writes = Vec::new();
                for (k, (&r, &dst)) in f.defs(id).iter().zip(a.sites.defs(id)).enumerate() {
                    let w = a.writes(id)[k];
                    let n = u64::from(units[r.index()]);
                    for (level, on) in [
                        (Level::Mrf, w.mrf),
                        (Level::Orf, w.orf.is_some()),
                        (Level::Lrf, w.lrf.is_some()),
                    ] {
                        if on {
                            counts.writes.add(level, n);
                            counts.energy_pj += n as f64 * energy.write(level, unit);
                        }
                    }
                    counts.baseline_energy_pj += n as f64 * energy.write(Level::Mrf, unit);
                    writes.push(OperandAnnotation {
                        operand: format!("dst{dst}"),
                        reg: f.reg(r).name.clone(),
                        arch: arch(r),
                        read: None,
                        fill: None,
                        write: Some(w),
                    });
                }
                instructions.push(InstAnnotation {
                    inst: i,
                    block: (i == block.start)
                        .then(|| ir::print::block_name(f, ir::BlockId::new(b))),
                    text: ir::print::inst_to_string(Some(program), f, f.inst(id)),
                    strand: a.strands.strand_of(id),
                    end_of_strand: a.strands.ends_strand(id),
                    unit,
                    reads,
                    writes,
                });
                per_inst.push(counts);
            }
        }
        let mut static_counts = AccessCounts::default();
        for c in &per_inst {
            static_counts.scaled_add(c, 1);
        }
        FunctionOrfLrf {
            func: func.0,
            name: f.name.clone(),
            kind: f.kind.as_str().to_string(),
            registers: alloc.registers_used,
            predicates: alloc.predicates_used,
            spill_code,
            strands: a.strands.num_strands(),
            stats: a.stats,
            static_counts,
            dynamic_counts: None,
            instructions,
            per_inst,
        }
    }
}

fn operand_name(op: OperandRef) -> String {
    match op {
        OperandRef::Guard => "guard".to_string(),
        OperandRef::Src(k) if k < 3 => ["a", "b", "c"][usize::from(k)].to_string(),
        OperandRef::Src(k) => format!("src{k}"),
        OperandRef::Dst(k) => format!("dst{k}"),
    }
}

/// The ORF/LRF allocation of every function with a body.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OrfLrfReport {
    pub config: OrfLrfConfig,
    /// What a value is: definitions of architectural registers after register allocation.
    pub register_view: &'static str,
    pub functions: Vec<FunctionOrfLrf>,
    pub stats: AllocationStats,
    pub static_counts: AccessCounts,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dynamic_counts: Option<AccessCounts>,
}

impl OrfLrfReport {
    /// Allocates registers, then the ORF and LRF, of every function of `program`, and
    /// checks each allocation with [`check`].
    pub fn new(program: &Program, config: &OrfLrfConfig) -> Result<Self, OrfLrfError> {
        config.validate()?;
        let energy = AccessEnergy::new(&config.energy, config.orf_entries.max(1));
        let mut functions = Vec::new();
        for (i, f) in program.functions.iter().enumerate() {
            if !f.has_body {
                continue;
            }
            let function = f.name.clone();
            let alloc = crate::regalloc::allocate(&IrInput::new(f), &config.registers).map_err(
                |error| OrfLrfError::Registers {
                    function: function.clone(),
                    error,
                },
            )?;
            let spill_code = alloc.spilled_vregs() > 0;
            let (g, galloc) =
                insert_spill_code(f, &alloc).map_err(|error| OrfLrfError::SpillCode {
                    function: function.clone(),
                    error,
                })?;
            let a = allocate(&g, config);
            check(&g, &a, config).map_err(|errors| OrfLrfError::Check {
                function: function.clone(),
                errors,
            })?;
            functions.push(FunctionOrfLrf::new(
                program,
                FuncId::new(i),
                &g,
                &galloc,
                &a,
                &energy,
                spill_code,
            ));
        }
        let mut stats = AllocationStats::default();
        let mut static_counts = AccessCounts::default();
        for f in &functions {
            add_stats(&mut stats, &f.stats);
            static_counts.scaled_add(&f.static_counts, 1);
        }
        Ok(OrfLrfReport {
            config: config.clone(),
            register_view: "architectural",
            functions,
            stats,
            static_counts,
            dynamic_counts: None,
        })
    }

    /// Adds dynamic counts from per-instruction execution counts, indexed by function
    /// (`FuncId`) and then by instruction (`InstId`); a function without counts (an
    /// empty or missing vector) did not run.
    pub fn add_dynamic_counts(&mut self, exec_counts: &[Vec<u64>]) -> Result<(), CountsError> {
        let mut total = AccessCounts::default();
        for f in &mut self.functions {
            let counts = exec_counts
                .get(f.func as usize)
                .map(Vec::as_slice)
                .unwrap_or_default();
            if counts.is_empty() {
                f.dynamic_counts = None;
                continue;
            }
            let d = f.dynamic_counts(counts)?;
            total.scaled_add(&d, 1);
            f.dynamic_counts = Some(d);
        }
        self.dynamic_counts = Some(total);
        Ok(())
    }
}

fn add_stats(a: &mut AllocationStats, b: &AllocationStats) {
    a.lrf_values += b.lrf_values;
    a.orf_full += b.orf_full;
    a.orf_partial += b.orf_partial;
    a.read_operand_groups += b.read_operand_groups;
    a.dead_values += b.dead_values;
    a.not_placed += b.not_placed;
}

fn read_text(read: ReadFrom, fill: Option<u8>, lrf: LrfMode) -> String {
    let level = match read {
        ReadFrom::Mrf => "MRF".to_string(),
        ReadFrom::Orf { entry } => format!("ORF{entry}"),
        ReadFrom::Lrf { bank } => lrf_text(bank, lrf),
        ReadFrom::Pred => "P".to_string(),
    };
    match fill {
        Some(e) => format!("{level}>ORF{e}"),
        None => level,
    }
}

fn lrf_text(bank: u8, lrf: LrfMode) -> String {
    if lrf == LrfMode::Split {
        format!(
            "LRF.{}",
            ["A", "B", "C"].get(usize::from(bank)).unwrap_or(&"?")
        )
    } else {
        "LRF".to_string()
    }
}

fn write_text(w: WriteTo, lrf: LrfMode) -> String {
    if w.pred {
        return "P".to_string();
    }
    let mut parts = Vec::new();
    if let Some(b) = w.lrf {
        parts.push(lrf_text(b, lrf));
    }
    if let Some(e) = w.orf {
        parts.push(format!("ORF{e}"));
    }
    if w.mrf {
        parts.push("MRF".to_string());
    }
    parts.join("+")
}

fn write_counts(out: &mut fmt::Formatter<'_>, what: &str, c: &AccessCounts) -> fmt::Result {
    writeln!(
        out,
        "  {what} reads: MRF {} ORF {} LRF {}; writes: MRF {} ORF {} LRF {}; energy {:.1} pJ of {:.1} pJ single-level ({:.3})",
        c.reads.mrf,
        c.reads.orf,
        c.reads.lrf,
        c.writes.mrf,
        c.writes.orf,
        c.writes.lrf,
        c.energy_pj,
        c.baseline_energy_pj,
        c.normalized_energy()
    )
}

fn write_stats(out: &mut fmt::Formatter<'_>, s: &AllocationStats) -> fmt::Result {
    writeln!(
        out,
        "  placed: LRF {}, ORF {} full + {} partial, {} read operands, {} dead values; {} found no room",
        s.lrf_values, s.orf_full, s.orf_partial, s.read_operand_groups, s.dead_values, s.not_placed
    )
}

impl fmt::Display for OrfLrfReport {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.config;
        let on = |b: bool| if b { "on" } else { "off" };
        writeln!(
            out,
            "orf-lrf (Gebhart MICRO'11 §4.2-4.6): {} registers; ORF {} per thread, LRF {}, partial ranges {}, read operands {}, forward branches {}",
            self.register_view,
            plural(c.orf_entries, "entry", "entries"),
            c.lrf.as_str(),
            on(c.partial_range),
            on(c.read_operands),
            on(c.forward_branches)
        )?;
        for f in &self.functions {
            writeln!(
                out,
                "\n{} {}: {}, {}, {}{}",
                f.kind,
                f.name,
                plural(f.registers, "register", "registers"),
                plural(f.predicates, "predicate", "predicates"),
                plural(f.strands, "strand", "strands"),
                if f.spill_code {
                    ", with spill code"
                } else {
                    ""
                }
            )?;
            write_stats(out, &f.stats)?;
            write_counts(out, "static", &f.static_counts)?;
            if let Some(d) = &f.dynamic_counts {
                write_counts(out, "dynamic", d)?;
            }
            for inst in &f.instructions {
                if let Some(label) = &inst.block {
                    writeln!(out, "  {label}:")?;
                }
                let reads: Vec<String> = inst
                    .reads
                    .iter()
                    .map(|o| {
                        format!(
                            "{}@{}",
                            o.arch,
                            read_text(o.read.unwrap_or(ReadFrom::Mrf), o.fill, c.lrf)
                        )
                    })
                    .collect();
                let writes: Vec<String> = inst
                    .writes
                    .iter()
                    .map(|o| {
                        format!(
                            "{}@{}",
                            o.arch,
                            write_text(o.write.unwrap_or_default(), c.lrf)
                        )
                    })
                    .collect();
                let mut notes = reads.join(" ");
                if !writes.is_empty() {
                    if !notes.is_empty() {
                        notes.push(' ');
                    }
                    notes += &format!("-> {}", writes.join(" "));
                }
                if inst.end_of_strand {
                    notes += " |end";
                }
                let text = format!("s{:<3} i{:<4} {}", inst.strand, inst.inst, inst.text);
                writeln!(out, "    {text:<56} ; {}", notes.trim_start())?;
            }
        }
        writeln!(
            out,
            "\ntotal: {}",
            plural(self.functions.len() as u64, "function", "functions")
        )?;
        write_stats(out, &self.stats)?;
        write_counts(out, "static", &self.static_counts)?;
        if let Some(d) = &self.dynamic_counts {
            write_counts(out, "dynamic", d)?;
        }
        Ok(())
    }
}

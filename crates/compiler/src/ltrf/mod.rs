//! The compiler side of the Latency-Tolerant Register File (Sadrosadati et al., "Enabling
//! High-Capacity, Latency-Tolerant, and Highly-Concurrent GPU Register Files via
//! Software/Hardware Cooperation"): register-intervals (§3.3, Algorithms 1 and 2) with
//! their prefetch bit-vectors, and LTRFconf's bank-aware register renumbering (§4).
//!
//! The pipeline for one function ([`ltrf_function`]): allocate registers (or take the
//! virtual numbering, see [`numbering`]), materialise any spill code, form the
//! register-intervals on the architectural registers ([`intervals`]), renumber so that
//! each interval's working set spreads over the banks ([`renumber`]), and prove with
//! [`checker`] that the intervals are a valid single-entry partition within the bound and
//! that the renumbered allocation computes what the original did. [`ltrf`] does this for
//! every function of a program and returns the report `regsim compile --pass ltrf` prints;
//! [`renumbered_program`] also returns the program written with the renumbered
//! architectural registers, which the emulator runs as it is (all built-in workloads print
//! PASS that way, with unchanged instruction counts, at N = 8, 16 and 32 and both
//! renumbering units).
//!
//! Registers are counted as the paper counts them: architectural 32-bit registers, so a
//! 64-bit value is two. Predicates are not in working sets (they have a file of their
//! own). Bank conflicts are defined in [`banks`].

pub mod banks;
pub mod checker;
pub mod intervals;
pub mod numbering;
pub mod renumber;
mod report;

use ir::{Function, FunctionKind, Program};
use serde::{Deserialize, Serialize};

use crate::regalloc::{allocate, insert_spill_code, AllocConfig, AllocError, Allocation, IrInput};

pub use banks::{BankMapping, Banks, ConflictHistogram};
pub use checker::{
    check_intervals, check_permutation, check_renumbering, IntervalCheckError, RenumberCheck,
    RenumberCheckError,
};
pub use intervals::{
    form_register_intervals, IntervalId, IntervalInput, IntervalKind, Piece, RegisterInterval,
    RegisterIntervals,
};
pub use numbering::{
    architectural_function, virtual_numbering, CellView, NumberingError, NumberingKind,
};
pub use renumber::{
    renumber, RenumberStart, RenumberStats, RenumberUnit, Renumbering, DEFAULT_SEARCH_ROUNDS,
};
pub use report::{FunctionLtrfReport, IntervalReport, LtrfReport, Summary};

/// Options of `--pass ltrf`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LtrfConfig {
    /// `N`: registers per register-interval, the size of a warp's partition of the
    /// register-file cache (`--registers-per-interval`, paper default 16).
    pub registers_per_interval: u32,
    /// `B`: banks of the main register file (`--banks`, paper 16).
    pub banks: u32,
    /// Which bank a register is in (`--bank-mapping`, default `r mod B`).
    pub bank_mapping: BankMapping,
    /// Allocated registers (default) or the virtual numbering.
    pub numbering: NumberingKind,
    /// Register cap for the allocator (`None`: as many as needed, no spills).
    pub max_registers: Option<u32>,
    /// What renumbering renames (`--renumber-unit`): register-live-ranges (the paper,
    /// default) or whole registers (a permutation of register numbers).
    pub renumber_unit: RenumberUnit,
    /// Kicks of the renumbering's local search per starting assignment
    /// (`--renumber-search-rounds`; 0 keeps only the greedy placement and plain local
    /// improvement).
    pub renumber_search_rounds: u32,
}

impl Default for LtrfConfig {
    fn default() -> Self {
        LtrfConfig {
            registers_per_interval: 16,
            banks: 16,
            bank_mapping: BankMapping::Interleaved,
            numbering: NumberingKind::Allocated,
            max_registers: None,
            renumber_unit: RenumberUnit::LiveRange,
            renumber_search_rounds: renumber::DEFAULT_SEARCH_ROUNDS,
        }
    }
}

impl LtrfConfig {
    pub fn bank_config(&self) -> Banks {
        Banks::new(self.banks, self.bank_mapping)
    }
}

/// Why the pass failed on a function.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LtrfError {
    #[error("invalid configuration: {0}")]
    Config(String),
    #[error("{function}: register allocation failed: {error}")]
    Alloc { function: String, error: AllocError },
    #[error("{function}: {error}")]
    SpillCode { function: String, error: String },
    #[error("{function}: {error}")]
    Numbering {
        function: String,
        error: NumberingError,
    },
    #[error("{function}: register-intervals are invalid: {error}")]
    Intervals {
        function: String,
        error: IntervalCheckError,
    },
    #[error("{function}: renumbering rejected by the checker: {error}")]
    Renumbering {
        function: String,
        error: RenumberCheckError,
    },
}

/// Everything the pass produced for one function: what the timing model reads.
#[derive(Clone, Debug)]
pub struct FunctionLtrf {
    /// The function the rest refers to: the input, with spill code if the allocation
    /// spilled.
    pub function: Function,
    /// The numbering the intervals were formed on.
    pub before: Allocation,
    /// Register-intervals and prefetch bit-vectors (in `before`'s numbering; the
    /// renumbered working sets are in the report and follow from `renumbering`).
    pub intervals: RegisterIntervals,
    pub renumbering: Renumbering,
    pub report: FunctionLtrfReport,
}

fn check_config(config: &LtrfConfig) -> Result<(), LtrfError> {
    if config.registers_per_interval == 0 {
        return Err(LtrfError::Config(
            "registers per interval must be at least 1".into(),
        ));
    }
    if config.banks == 0 {
        return Err(LtrfError::Config("there must be at least one bank".into()));
    }
    Ok(())
}

/// The numbering `config` asks for, for `func` (which must have a body).
pub fn numbering_for(
    func: &Function,
    numbering: NumberingKind,
    max_registers: Option<u32>,
) -> Result<(Function, Allocation), LtrfError> {
    match numbering {
        NumberingKind::Virtual => Ok((func.clone(), virtual_numbering(func))),
        NumberingKind::Allocated => {
            let config = AllocConfig { max_registers };
            let alloc =
                allocate(&IrInput::new(func), &config).map_err(|error| LtrfError::Alloc {
                    function: func.name.clone(),
                    error,
                })?;
            insert_spill_code(func, &alloc).map_err(|e| LtrfError::SpillCode {
                function: func.name.clone(),
                error: e.to_string(),
            })
        }
    }
}

/// Runs the pass on `func` under `config` (see the module docs).
/// `program`, if given, names symbols in the report's instruction listing.
pub fn ltrf_function(
    program: Option<&Program>,
    func: &Function,
    config: &LtrfConfig,
) -> Result<FunctionLtrf, LtrfError> {
    check_config(config)?;
    let (func, numbering) = numbering_for(func, config.numbering, config.max_registers)?;
    ltrf_with_numbering(program, func, numbering, config)
}

/// Runs the pass on `func` with registers numbered by `numbering` (no spills);
/// `config.numbering` and `config.max_registers` are only reported.
pub fn ltrf_with_numbering(
    program: Option<&Program>,
    func: Function,
    numbering: Allocation,
    config: &LtrfConfig,
) -> Result<FunctionLtrf, LtrfError> {
    check_config(config)?;
    let name = func.name.clone();
    let view = CellView::new(&func, &numbering).map_err(|error| LtrfError::Numbering {
        function: name.clone(),
        error,
    })?;
    let intervals = form_register_intervals(&view, config.registers_per_interval);
    check_intervals(&view, &intervals).map_err(|error| LtrfError::Intervals {
        function: name.clone(),
        error,
    })?;
    let banks = config.bank_config();
    let renumbering = renumber(
        &func,
        &numbering,
        &view,
        &intervals,
        banks,
        config.renumber_unit,
        config.renumber_search_rounds,
    );
    let check = check_renumbering(
        &func,
        &intervals,
        &numbering,
        &renumbering.allocation,
        config.renumber_unit,
    )
    .map_err(|error| LtrfError::Renumbering {
        function: name.clone(),
        error,
    })?;
    let after =
        CellView::new(&func, &renumbering.allocation).map_err(|error| LtrfError::Numbering {
            function: name.clone(),
            error,
        })?;
    let report = report::function_report(
        program,
        &func,
        &view,
        &after,
        &intervals,
        &numbering,
        &renumbering,
        check,
        banks,
    );
    Ok(FunctionLtrf {
        function: func,
        before: numbering,
        intervals,
        renumbering,
        report,
    })
}

/// Runs the pass on every function with a body: what `regsim compile FILE.ptx --pass
/// ltrf` prints (kernels, then device functions).
pub fn ltrf(program: &Program, config: &LtrfConfig) -> Result<LtrfReport, LtrfError> {
    check_config(config)?;
    let mut kernels = Vec::new();
    let mut device_functions = Vec::new();
    for f in program.functions.iter().filter(|f| f.has_body) {
        let result = ltrf_function(Some(program), f, config)?;
        match f.kind {
            FunctionKind::Kernel => kernels.push(result.report),
            FunctionKind::Device => device_functions.push(result.report),
        }
    }
    Ok(LtrfReport {
        file: program.file_name.clone(),
        config: config.clone(),
        bank_rule: config.bank_mapping.to_string(),
        kernels,
        device_functions,
    })
}

/// The program as the hardware would run it after the pass: every function with a body
/// renumbered and written with architectural register names
/// ([`architectural_function`]), with the report. Running it (the emulator loads an
/// `ir::Program` as it is) is the end-to-end check that renumbering preserved meaning.
pub fn renumbered_program(
    program: &Program,
    config: &LtrfConfig,
) -> Result<(Program, LtrfReport), LtrfError> {
    check_config(config)?;
    let mut out = program.clone();
    let mut kernels = Vec::new();
    let mut device_functions = Vec::new();
    for (i, f) in program.functions.iter().enumerate() {
        if !f.has_body {
            continue;
        }
        let result = ltrf_function(Some(program), f, config)?;
        out.functions[i] = architectural_function(&result.function, &result.renumbering.allocation)
            .map_err(|error| LtrfError::Numbering {
                function: f.name.clone(),
                error,
            })?;
        match f.kind {
            FunctionKind::Kernel => kernels.push(result.report),
            FunctionKind::Device => device_functions.push(result.report),
        }
    }
    let report = LtrfReport {
        file: program.file_name.clone(),
        config: config.clone(),
        bank_rule: config.bank_mapping.to_string(),
        kernels,
        device_functions,
    };
    Ok((out, report))
}

//! Allocation of a whole lowered program, and the registers-per-thread figure the CLI
//! prints for each kernel.
//!
//! ABI: every function is allocated on its own, from `R0` and `P0` up, and a call site's
//! live registers are assumed saved by the caller around the call (that save code is not
//! materialised yet). A kernel then needs as many registers per thread as the largest
//! function it can reach — itself or any function it calls, directly or transitively: the
//! count is the maximum over its call tree, not the sum. (A stacked-frame ABI that never
//! saves would instead need the sum along the deepest call chain.) Indirect calls are not
//! followed; functions without a body (`vprintf`) count as zero.

use std::collections::BTreeSet;

use ir::op::Callee;
use ir::{FuncId, FunctionKind, Op, Program};

use super::ir_input::IrInput;
use super::{allocate, AllocConfig, AllocError, Allocation};

/// One function's allocation within a program.
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionAllocation {
    pub func: FuncId,
    pub name: String,
    pub kind: FunctionKind,
    /// `None` for a declaration without a body.
    pub allocation: Option<Allocation>,
}

/// Registers per thread of one kernel, callees included.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelRegisters {
    pub func: FuncId,
    pub name: String,
    /// Registers of the kernel's own body.
    pub own_registers: u32,
    /// The maximum over the kernel and every function it can call.
    pub registers: u32,
    /// Predicate registers, by the same rule.
    pub predicates: u32,
    /// Bytes of spill area per thread, by the same rule.
    pub spill_bytes: u32,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{function}: {error}")]
pub struct ProgramAllocError {
    pub function: String,
    pub error: AllocError,
}

/// Allocates every function with a body, in program order.
pub fn allocate_program(
    program: &Program,
    config: &AllocConfig,
) -> Result<Vec<FunctionAllocation>, ProgramAllocError> {
    program
        .functions
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let allocation = if f.has_body {
                Some(
                    allocate(&IrInput::new(f), config).map_err(|error| ProgramAllocError {
                        function: f.name.clone(),
                        error,
                    })?,
                )
            } else {
                None
            };
            Ok(FunctionAllocation {
                func: FuncId::new(i),
                name: f.name.clone(),
                kind: f.kind,
                allocation,
            })
        })
        .collect()
}

/// Functions `func` calls directly.
fn direct_callees(program: &Program, func: FuncId) -> BTreeSet<FuncId> {
    program
        .function(func)
        .insts
        .iter()
        .filter_map(|i| match &i.op {
            Op::Call(c) => match c.callee {
                Callee::Direct(f) if f.index() < program.functions.len() => Some(f),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// `func` and every function it can reach through direct calls.
fn call_tree(program: &Program, func: FuncId) -> BTreeSet<FuncId> {
    let mut seen = BTreeSet::from([func]);
    let mut work = vec![func];
    while let Some(f) = work.pop() {
        for c in direct_callees(program, f) {
            if seen.insert(c) {
                work.push(c);
            }
        }
    }
    seen
}

/// Registers per thread of every kernel, in program order (see the module docs for the
/// calling convention assumed).
pub fn registers_per_thread(
    program: &Program,
    config: &AllocConfig,
) -> Result<Vec<KernelRegisters>, ProgramAllocError> {
    let allocs = allocate_program(program, config)?;
    let mut out = Vec::new();
    for (id, f) in program.kernels() {
        let of = |g: FuncId| allocs.get(g.index()).and_then(|a| a.allocation.as_ref());
        let tree = call_tree(program, id);
        let max = |field: fn(&Allocation) -> u32| {
            tree.iter()
                .filter_map(|&g| of(g))
                .map(field)
                .max()
                .unwrap_or(0)
        };
        out.push(KernelRegisters {
            func: id,
            name: f.name.clone(),
            own_registers: of(id).map_or(0, |a| a.registers_used),
            registers: max(|a| a.registers_used),
            predicates: max(|a| a.predicates_used),
            spill_bytes: max(|a| a.spill_bytes()),
        });
    }
    Ok(out)
}

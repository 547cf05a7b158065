//! `--emit regalloc`: allocate every selected function, prove each allocation with the
//! checker, and describe the result per function and per kernel.

use anyhow::{anyhow, Result};
use compiler::regalloc::{registers_per_thread, IrInput, KernelRegisters};
use compiler::{AllocConfig, Allocation, Location};
use ir::{Function, Program};
use serde_json::{json, Value};
use std::fmt;

pub struct AllocationReport<'p> {
    functions: Vec<(&'p Function, Allocation)>,
    kernels: Vec<KernelRegisters>,
}

/// Allocates and checks. A checker failure is an error: it would mean an allocator bug.
pub fn report<'p>(
    program: &'p Program,
    functions: &[&'p Function],
    config: &AllocConfig,
) -> Result<AllocationReport<'p>> {
    let mut allocated = Vec::new();
    for &f in functions.iter().filter(|f| f.has_body) {
        let input = IrInput::new(f);
        let allocation = compiler::allocate(&input, config)
            .map_err(|e| anyhow!("function '{}': {e}", f.name))?;
        compiler::check(&input, &allocation).map_err(|e| {
            anyhow!(
                "function '{}': the allocation checker rejected the allocation: {e}",
                f.name
            )
        })?;
        allocated.push((f, allocation));
    }
    let selected: Vec<&str> = functions.iter().map(|f| f.name.as_str()).collect();
    let kernels = registers_per_thread(program, config)
        .map_err(|e| anyhow!("{e}"))?
        .into_iter()
        .filter(|k| selected.contains(&k.name.as_str()))
        .collect();
    Ok(AllocationReport {
        functions: allocated,
        kernels,
    })
}

impl AllocationReport<'_> {
    pub fn to_json(&self) -> Value {
        let kernels: Vec<_> = self
            .kernels
            .iter()
            .map(|k| {
                json!({
                    "name": k.name,
                    "registers": k.registers,
                    "own_registers": k.own_registers,
                    "predicates": k.predicates,
                    "spill_bytes": k.spill_bytes,
                })
            })
            .collect();
        let functions: Vec<_> = self
            .functions
            .iter()
            .map(|(f, a)| {
                let locations: serde_json::Map<String, Value> = f
                    .regs
                    .iter()
                    .zip(&a.locations)
                    .filter(|(_, loc)| **loc != Location::Unused)
                    .map(|(r, loc)| (r.name.clone(), Value::String(loc.to_string())))
                    .collect();
                json!({
                    "name": f.name,
                    "registers": a.registers_used,
                    "predicates": a.predicates_used,
                    "spill_bytes": a.spill_bytes(),
                    "spilled_registers": a.spilled_vregs(),
                    "coalesced_copies": a.coalesced_copies.len(),
                    "locations": locations,
                })
            })
            .collect();
        json!({ "kernels": kernels, "functions": functions })
    }
}

impl fmt::Display for AllocationReport<'_> {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        for k in &self.kernels {
            writeln!(
                out,
                "kernel {}: {} registers per thread ({} in its own body), {} predicates, {} spill bytes",
                k.name, k.registers, k.own_registers, k.predicates, k.spill_bytes
            )?;
        }
        for (f, a) in &self.functions {
            writeln!(
                out,
                "\nfunction {}: {} registers, {} predicates, {} spilled ({} bytes), {} copies coalesced; checker: ok",
                f.name,
                a.registers_used,
                a.predicates_used,
                a.spilled_vregs(),
                a.spill_bytes(),
                a.coalesced_copies.len()
            )?;
            for (r, loc) in f.regs.iter().zip(&a.locations) {
                if *loc != Location::Unused {
                    writeln!(out, "  {:<10} {loc}", r.name)?;
                }
            }
        }
        Ok(())
    }
}

//! The compiler's control bits ([`compiler::control_bits`]: stall counts, dependence
//! counters, wait masks, yield bits) for a kernel, under a GPU config's latencies, stored
//! in each instruction's [`InstHint::control`](crate::kernel_info::InstHint::control) for
//! the modern core's `sm.dependence = "control_bits"` ([`crate::sm::dependence`]).
//!
//! Which results are fixed-latency is the timing model's own rule, the one
//! `sm.dependence = "stall_counter"` uses: a result of the `sp`, `int` or `dp` unit is
//! available its class latency after issue; memory and SFU results have variable latency
//! (MICRO'25, issue stage).

use compiler::control_bits::{compute, Producer};
use compiler::Allocation;
use ir::{FuncId, InstId, Program};

use crate::config::{PipelineConfig, UnitKind};
use crate::kernel_info::{op_class, KernelInfo};

/// How the result of `op` becomes available under `pipeline`.
pub fn producer(pipeline: &PipelineConfig, op: &ir::Op) -> Producer {
    let t = pipeline.timing(op_class(op));
    match t.unit {
        UnitKind::Sp | UnitKind::Int | UnitKind::Dp => {
            Producer::Fixed(u32::try_from(t.latency.get().max(1)).unwrap_or(u32::MAX))
        }
        UnitKind::Sfu | UnitKind::Mem => Producer::Variable,
    }
}

/// Computes the control bits of every function of `info` that has an allocation
/// (`allocation_of`) and stores them in its instructions' hints.
pub fn attach<'a>(
    info: &mut KernelInfo,
    program: &Program,
    pipeline: &PipelineConfig,
    allocation_of: impl Fn(FuncId) -> Option<&'a Allocation>,
) {
    for (i, f) in program.functions.iter().enumerate() {
        let id = FuncId::new(i);
        let Some(alloc) = allocation_of(id) else {
            continue;
        };
        let Some(fi) = info.function_mut(id) else {
            continue;
        };
        if fi.is_empty() {
            continue;
        }
        let bits = compute(f, alloc, |inst| {
            if fi.inst_hint(inst).is_some_and(|h| h.folded) {
                Producer::Folded
            } else {
                producer(pipeline, &f.inst(inst).op)
            }
        });
        for (k, b) in bits.into_iter().enumerate() {
            if let Some(h) = fi.inst_hint_mut(InstId::new(k)) {
                h.control = b;
            }
        }
    }
    info.control_bits = true;
}

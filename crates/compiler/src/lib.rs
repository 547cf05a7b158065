//! Compiler passes over the kernel IR: register allocation (virtual PTX registers to
//! architectural registers, spilling to local memory under a cap) and, later, the
//! register-file passes of the designs regsim studies.
//!
//! Invariant: every pass that assigns or renames registers is checked by an independent
//! checker that proves the virtual-register dataflow is preserved.

pub mod control_bits;
pub mod inst_info;
pub mod liveness_bits;
pub mod load_schedule;
pub mod ltrf;
pub mod orf_lrf;
pub mod pipeline;
pub mod regalloc;
pub mod register_profile;
pub mod reuse_bits;
pub mod reuse_distance;
pub mod reuse_schedule;
pub mod strands;
#[cfg(test)]
mod test_support;
mod union_find;

pub use regalloc::{
    allocate, check, AllocConfig, AllocError, AllocInput, Allocation, CheckError, Copy, Edit,
    Location, PhysReg, PredReg, RegWidth, SpillSlot, SpillSlotInfo, SpilledOperand,
};

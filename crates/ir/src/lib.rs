//! Kernel IR: functions as basic blocks of decoded instructions with explicit, typed
//! definition and use operands, and the static analyses that every compiler pass and the
//! simulator rely on.

pub mod entity;
pub mod graph;

pub use entity::{BlockId, InstId, RegId};
pub use graph::{ControlFlowGraph, RegisterEffects};

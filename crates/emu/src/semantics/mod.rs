//! Numeric semantics of PTX instructions as pure functions on bit patterns, independent of
//! execution state. Each function follows the PTX ISA's definition of the instruction
//! (ISA §9.7); where the ISA leaves a result machine-specific, the function documents the
//! value it returns.
//!
//! Operators that the IR already names as plain enums (comparisons, boolean combinations,
//! `mul` parts, `prmt` modes, `testp` classes) are taken from [`ir::op`]; modifiers whose
//! arithmetic needs another shape (rounding directions, conversion types) get types here.

pub mod compare;
pub mod convert;
pub mod exact;
pub mod float;
pub mod half;
pub mod int;

pub use exact::{Format, Rounding};

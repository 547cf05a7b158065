//! Functional SIMT execution of PTX kernels.
//!
//! Invariant: the emulator knows nothing of time. It executes one warp instruction when
//! asked and reports what it did (active lanes, addresses, values, next PC); the timing
//! model decides when.

pub mod memory;
pub mod semantics;

//! Cycle-level timing model of the GPU.

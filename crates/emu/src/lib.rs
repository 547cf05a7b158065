//! Functional SIMT execution of PTX kernels.

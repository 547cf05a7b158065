//! A libcudart.so.11.0 replacement that runs kernels on the simulator.

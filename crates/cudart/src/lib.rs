//! A `libcudart.so.11.0` replacement that runs kernels on the simulator.
//!
//! Programs built with `nvcc -cudart shared` load this library instead of NVIDIA's runtime
//! (put a directory holding it, named `libcudart.so.11.0`, on `LD_LIBRARY_PATH`). At start
//! their static constructors register the embedded fatbinary ([`fatbin`]), whose PTX for
//! the highest virtual architecture the simulated GPU supports is chosen and loaded on first
//! use; kernels and `__device__` variables are registered by name. Launches pack the
//! arguments into the kernel's PTX parameter layout ([`kernel_abi`]) and run synchronously
//! on the [`device::Device`] — in the library, the functional emulator ([`emu_device`]),
//! which also owns module variables (`cudaMemcpyToSymbol` writes the bytes kernels read)
//! and texture bindings ([`texture`]).
//!
//! # Symbol versions
//! nvcc-built programs import `cudaMalloc@libcudart.so.11.0` etc. `build.rs` links the
//! cdylib with GNU ld, `-soname libcudart.so.11.0` and `--default-symver`, which gives every
//! export that version node (see `build.rs` for why not rust-lld). Every export of the real
//! 11.8 runtime exists here: the unimplemented ones print one line,
//! `regsim: cudaXxx is not supported by the simulator`, and return `cudaErrorNotSupported`.
//!
//! # Environment contract (set by `regsim run`)
//! - `REGSIM_GPU` — path to the GPU configuration (stored; not read yet).
//! - `REGSIM_STATS` — if set, at process exit the per-kernel statistics are written there as
//!   JSON: `{"kernels":[{"name","mangled","grid":[x,y,z],"block":[x,y,z],"warp_instructions",
//!   "thread_instructions"}…],"total":{"kernels","warp_instructions","thread_instructions"}}`,
//!   `name` demangled (`saxpy(int, float, float const*, float*)`), `mangled` as in the PTX.
//! - `REGSIM_MODE` — `functional` (default) or `timing`; anything else warns and runs
//!   functionally.
//!
//! After each kernel one line goes to stderr, with the demangled name:
//! `regsim: kernel NAME grid (x,y,z) block (x,y,z): W warp instructions, T thread instructions`.
//!
//! # Errors
//! Codes are CUDA 11.8's numeric values ([`error`]). A kernel fault (kernel, PTX line and
//! instruction, CTA, thread, address) is printed to stderr once and returned, sticky, by
//! every later runtime call, as on a real GPU: `cudaErrorIllegalAddress` (700) for
//! out-of-bounds or unallocated accesses, `cudaErrorMisalignedAddress` (716),
//! `cudaErrorAssert` (710) for a failed device `assert`, `cudaErrorLaunchFailure` (719) for
//! the rest (trap, barrier deadlock, an instruction the simulator does not execute). No Rust
//! panic crosses into C.

pub mod config;
pub mod device;
pub mod emu_device;
pub mod error;
pub mod exports;
pub mod fatbin;
pub mod kernel_abi;
pub mod lz4;
pub mod props;
pub mod runtime;
pub mod stats;
pub mod texture;

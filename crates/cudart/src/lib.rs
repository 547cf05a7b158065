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
//! and texture bindings ([`texture`]), driven in timing mode by the cycle-level model.
//!
//! # Symbol versions
//! nvcc-built programs import `cudaMalloc@libcudart.so.11.0` etc. `build.rs` links the
//! cdylib with GNU ld, `-soname libcudart.so.11.0` and `--default-symver`, which gives every
//! export that version node (see `build.rs` for why not rust-lld). Every export of the real
//! 11.8 runtime exists here: the unimplemented ones print one line,
//! `regsim: cudaXxx is not supported by the simulator`, and return `cudaErrorNotSupported`.
//!
//! # Environment contract (set by `regsim run`)
//! - `REGSIM_MODE` — `timing` (the cycle-level model, `timing::TimingSimulator`, drives the
//!   emulator) or `functional` (the emulator alone; the default when unset); anything else
//!   warns and runs functionally.
//! - `REGSIM_GPU` — the GPU config: a path to a TOML file (what `regsim run` passes, made
//!   absolute) or a name looked up in `$REGSIM_CONFIGS`, else the source tree's `configs/`.
//!   Default `gtx480`.
//! - `REGSIM_SET` — config overrides `key.path=value` (`timing::Override` syntax), one per
//!   line, applied in order. `regsim run` puts `--rf DESIGN` first
//!   (`register_file.design=DESIGN`), then each `--set`.
//! - `REGSIM_STATS` — if set, at process exit the statistics are written there as JSON
//!   (below).
//! - `REGSIM_SUMMARY` — if set and not `0`, at process exit a readable summary goes to
//!   stderr: every kernel's statistics, the totals and the simulation speed.
//! - `REGSIM_MAX_REGISTERS` — a cap on registers per thread: every module runs with the
//!   spill code the allocator needs under it ([`transforms`]). Default: ptxas's 255, and
//!   the PTX runs as written.
//! - `REGSIM_LTRF_RENUMBER` — `N,B`: every module runs LTRF-renumbered (N registers per
//!   interval, B banks; [`transforms`]), under the cap if one is given.
//! - `REGSIM_PROFILE_REGISTERS` — if set and not `0`, the executed instructions are
//!   profiled ([`profiling`]): `register_profile` and `orf_lrf` in the statistics, and in
//!   the summary.
//! - `REGSIM_STRICT_MEMORY` — if set and not `0`, every kernel access outside an allocation
//!   faults precisely (`regsim run --strict-memory`). Otherwise an access within
//!   `emu::memory::STRAY_WINDOW` (64 KB) of an allocation succeeds as on a GPU and is
//!   reported once per kernel and instruction: a line on stderr
//!   (`regsim: memory warning: kernel NAME, PTX line N (INST), CTA (x,y,z), thread
//!   (x,y,z): ...`) and an entry of `memory_warnings` in the statistics.
//! - `REGSIM_MAX_CYCLES`, `REGSIM_MAX_INSTRUCTIONS` — bounds on the simulated clock and
//!   on the warp instructions issued, over the whole run (the cycles in timing mode; the
//!   instructions in both modes); unset or `0`: no bound. `REGSIM_TIMEOUT` — seconds of wall-clock time from the runtime's start, in
//!   the simulator or in the program's own code. A run that reaches one stops
//!   ([`run_control`]): one line `regsim: run stopped: kernel NAME stopped at cycle C:
//!   REASON; N warps live (counts per wait): SM s CTA (x,y,z) warp w (next: PTX line l)
//!   WAITS; ...` (functional mode: `kernel NAME stopped after N warp instructions:
//!   REASON; CTA (x,y,z): N warps live (counts): warp w (next: PTX line l) WAITS; ...`),
//!   the statistics up to the stop, and exit status 124
//!   ([`run_control::LIMIT_EXIT_STATUS`]); the program does not run on.
//! - `REGSIM_PROGRESS` — if set and not `0`, an updating status line on stderr while a
//!   kernel simulates (kernel, cycles, warp instructions, rate); `regsim run` sets it when
//!   stderr is a terminal.
//! - `REGSIM_THREADS` — threads that step the SMs in timing mode (`regsim run
//!   --threads`); unset: 1. Statistics are the same for every count
//!   (`timing::parallel`).
//!
//! SIGINT, SIGTERM and SIGHUP (unless the program handles them) end the run the same way,
//! statistics written, and the program then dies of the signal.
//!
//! The config is loaded and validated at start-up, in both modes (`cudaGetDeviceProperties`
//! and `cudaDeviceGetAttribute` describe it: SM count, clocks, shared memory, registers,
//! threads and CTAs per SM, L2 size). A config that does not load (unknown key, impossible
//! value, unknown name) is reported in one line naming the key, and every later call that
//! needs the device fails with `cudaErrorNoDevice`. `regsim run` validates it before
//! starting the program, so this only happens when the variables are set by hand.
//!
//! After each kernel one line goes to stderr, with the demangled name:
//! `regsim: kernel NAME grid (x,y,z) block (x,y,z): W warp instructions, T thread
//! instructions` and, in timing mode, `, C cycles, IPC I`.
//!
//! The statistics document ([`stats::RunStats::to_json`]):
//! `{"mode", "complete", "gpu": {"name", "selector", "overrides", "config"}, "kernels": [...],
//! "total": {...}, "simulation": {"wall_seconds", "warp_instructions_per_second"}}`. Each
//! kernel has `name` (demangled: `saxpy(int, float, float const*, float*)`), `mangled` (as
//! in the PTX), `grid` and `block` (`[x, y, z]`), `warp_instructions`,
//! `thread_instructions`, and in timing mode every field of `timing::KernelStats`
//! (`cycles`, `ipc`, `start_cycle`, `occupancy`, `stalls`, `register_file`, `memory`,
//! `simulation`). `total` has `kernels`, `warp_instructions`, `thread_instructions`, and
//! in timing mode `cycles`, `ipc`, `stalls`, `register_file`, `memory`. `simulation` is
//! the timing model's own time in timing mode (excluding each kernel's one-time register
//! allocation) and the time spent in launches in functional mode; it is the only part
//! that differs between identical runs. `regsim run` adds a `program` object (name,
//! arguments, exit status). `complete` is false when a run limit or a signal ended the
//! run: then `incomplete_reason` says why, the kernels completed before are whole, and
//! the kernel cut short has `"complete": false` and its figures up to the stop.
//!
//! # Time
//! Launches are synchronous. In timing mode the simulator's clock runs across launches,
//! and events (`cudaEventRecord`, `cudaEventElapsedTime`) read it: elapsed time is
//! simulated cycles over `gpu.core_clock_mhz`, i.e. what the program would measure on the
//! simulated GPU. In functional mode there are no cycles, and events measure host
//! wall-clock time.
//!
//! # Errors
//! Codes are CUDA 11.8's numeric values ([`error`]). A kernel fault (kernel, PTX line and
//! instruction, CTA, thread, address) is printed to stderr once and returned, sticky, by
//! every later runtime call, as on a real GPU: `cudaErrorIllegalAddress` (700) for
//! out-of-bounds or unallocated accesses, `cudaErrorMisalignedAddress` (716),
//! `cudaErrorAssert` (710) for a failed device `assert`, `cudaErrorLaunchFailure` (719) for
//! the rest (trap, barrier deadlock — in timing mode with every live warp's state —, an
//! instruction the simulator does not execute). In
//! timing mode a launch whose CTA fits on no SM of the simulated GPU (registers, shared
//! memory, threads) is `cudaErrorLaunchOutOfResources` (701) and a failure of the timing
//! model itself `cudaErrorLaunchFailure`; both are printed once (one line saying why) and
//! sticky like faults. No Rust panic crosses into C.

pub mod config;
pub mod device;
pub mod emu_device;
pub mod error;
pub mod exports;
pub mod fatbin;
pub mod kernel_abi;
pub mod lz4;
pub mod profiling;
pub mod props;
pub mod reuse_trace;
pub mod run_control;
pub mod runtime;
pub mod soname;
pub mod stats;
pub mod texture;
pub mod transforms;

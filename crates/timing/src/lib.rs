//! Cycle-level timing model of the GPU.
//!
//! The functional emulator (`emu`) says *what* a warp instruction does; this crate says
//! *when*. It owns typed time ([`time`]), the configuration of every modelled component
//! ([`config`]) and the memory hierarchy, built as standalone components that the SM
//! pipeline drives through the [`memory::MemorySystem`] façade. Its components live in the
//! `memory/` folder:
//!
//! | module | models |
//! |---|---|
//! | [`memory::coalescer`] | per-lane addresses to 128 B lines with 32 B sector masks |
//! | [`memory::shared_memory`] | shared-memory banks, broadcast and conflict passes |
//! | [`memory::cache`] | sectored set-associative cache with LRU and MSHRs (L1D, constant, instruction, L2 slices) |
//! | [`bits`] | precomputed bit gathering and constant division for address decoding |
//! | [`memory::hashing`] | set-index and channel-index functions: linear, XOR folding, GF(2) polynomial (IPOLY) |
//! | [`memory::port`] | a first-come-first-served bandwidth resource (bytes per cycle) |
//! | [`memory::interconnect`] | SM <-> L2 crossbar: latency, bandwidth, queuing |
//! | [`memory::l2`] | address interleaving over L2 slices |
//! | [`memory::dram`] | DRAM channels with banks, row buffers and FCFS / FR-FCFS scheduling |
//! | [`memory`] | the façade: requests in, completions out, event-driven |
//!
//! On top of it, the SM pipeline and the GPU:
//!
//! | module | models |
//! |---|---|
//! | [`gpu`] | [`TimingSimulator`]: SMs, CTA scheduler, main loop with cycle skipping; the API of the runtime |
//! | [`run_limits`] | run limits (cycles, instructions, deadline, interrupt, no-progress watchdog), live warps' states when a run stops |
//! | [`sm`] | one SM: fetch, decode, issue (schedulers, scoreboard), operand collection, execution units, LD/ST, writeback |
//! | [`rf`] | the register-file interface every design implements, and the `baseline` and `ideal` designs |
//! | [`kernel_info`] | per-kernel static facts: opcode classes, architectural register operands, compiler hints |
//! | [`limits`] | upper bounds of the config, checked before anything is allocated |
//! | [`occupancy`] | CTAs per SM from threads, warps, CTAs, shared memory and registers |
//! | [`memory::address_map`] | deterministic simulated addresses for the emulator's host-pointer allocations |
//! | [`stats`] | per-kernel and total statistics (serde) |
//!
//! Invariant: nothing in the memory hierarchy steps a component every cycle. Components keep next-free
//! times and the façade keeps one event queue ordered by (cycle, sequence number), so
//! idle cycles cost nothing and identical inputs give identical results.

pub mod bits;
pub mod config;
pub mod constant_operands;
pub mod control_bits;
pub mod gpu;
pub mod kernel_info;
pub mod limits;
pub mod memory;
pub mod occupancy;
pub mod parallel;
pub mod register_budget;
pub mod rf;
pub mod run_limits;
pub mod sampling;
pub mod sm;
pub mod stats;
pub mod time;

pub use config::{ConfigError, GpuConfig, Override};
pub use gpu::{SimError, TimingSimulator};
pub use kernel_info::KernelInfo;
pub use memory::{MemRequest, MemoryStats, MemorySystem, RequestId, Stall};
pub use run_limits::{
    FunctionalBound, Progress, RunLimits, StopReason, WarpState, WarpStates, WarpWait,
};
pub use stats::{KernelStats, Report, TotalStats};
pub use time::{Cycle, Cycles, MemCycle, MemCycles};

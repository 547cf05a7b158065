//! Simulation rate of the timing model in warp instructions per second, single thread,
//! over kernels of the built-in workloads at their default sizes
//! ([`workloads::cases`]: nvcc PTX with inputs set up in Rust).
//!
//! `cargo bench -p timing --bench sim_rate [-- CONFIG]` (default `gtx480`). Prints one
//! line per kernel (cycles, IPC, warp instructions, wall time, rate) and the total rate.
//! `REGSIM_BENCH_VERBOSE=1` adds each kernel's stall breakdown, occupancy, register-file
//! and memory counters; `REGSIM_BENCH_ONLY=NAME` runs one workload.

#[path = "../tests/common/workloads.rs"]
#[allow(dead_code)]
mod workloads;

use std::time::Instant;

use timing::config::default_configs_dir;
use timing::{GpuConfig, TimingSimulator};

fn main() {
    let name = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .unwrap_or_else(|| "gtx480".into());
    let cfg = GpuConfig::load(&name, &default_configs_dir(), &[]).expect("config");
    let (mut total_insts, mut total_secs) = (0u64, 0f64);
    println!("config {name}");
    println!(
        "{:<16} {:>10} {:>7} {:>10} {:>8} {:>12}",
        "workload", "cycles", "ipc", "warp insts", "seconds", "insts/s"
    );
    let verbose = std::env::var_os("REGSIM_BENCH_VERBOSE").is_some();
    let only = std::env::var("REGSIM_BENCH_ONLY").ok();
    for c in workloads::cases() {
        if only.as_deref().is_some_and(|o| o != c.workload) {
            continue;
        }
        let mut p = workloads::prepare(&c);
        let mut sim = TimingSimulator::new(cfg.clone());
        let t = Instant::now();
        let s = sim
            .simulate_kernel(&mut p.emu, p.kernel, p.launch, &p.params, &p.info)
            .unwrap_or_else(|e| panic!("{}: {e}", c.workload));
        let secs = t.elapsed().as_secs_f64();
        total_insts += s.warp_instructions;
        total_secs += secs;
        println!(
            "{:<16} {:>10} {:>7.3} {:>10} {:>8.3} {:>12.0}",
            c.workload,
            s.cycles,
            s.ipc,
            s.warp_instructions,
            secs,
            s.warp_instructions as f64 / secs
        );
        if verbose {
            println!(
                "  {:?}\n  {:?}\n  {:?}",
                s.stalls, s.occupancy, s.register_file
            );
            println!("  {:?}", s.memory);
        }
    }
    println!(
        "total: {total_insts} warp instructions in {total_secs:.3} s = {:.0} warp instructions/s",
        total_insts as f64 / total_secs
    );
}

//! The GPU top level: SMs, the CTA scheduler, the memory system and the main loop, behind
//! [`TimingSimulator`], the API the CUDA runtime calls in timing mode.
//!
//! - **CTA scheduler**: CTAs start in linear order (x fastest); each goes to the next SM
//!   in round-robin order (starting after the SM that got the previous CTA) that has room
//!   under the kernel's occupancy ([`crate::occupancy`]). At launch every SM is filled;
//!   whenever a CTA retires, waiting CTAs are placed the same way, to start the next
//!   cycle. Deterministic.
//! - **Main loop**: at each cycle, completed memory requests are routed to their SMs,
//!   then every SM that is awake runs one cycle ([`crate::sm`]), in SM order (with
//!   `--threads`, the SM-private first part of those cycles, with the issue of
//!   CTA-private instructions, runs in parallel first: [`crate::parallel`]). When every
//!   SM sleeps, time jumps to the earliest SM wake-up or memory event. The kernel ends in
//!   the cycle its last CTA retires; memory traffic still in flight (posted stores)
//!   continues under the next kernel.
//! - Time, caches and DRAM state persist across kernels (`start_cycle` of each kernel says
//!   where it began); statistics are per kernel and summed.

use std::time::Instant;

use emu::{Emulator, KernelRef, LaunchConfig};

use crate::config::GpuConfig;
use crate::kernel_info::KernelInfo;
use crate::memory::address_map::AddressMap;
use crate::memory::{MemorySystem, SmId};
use crate::occupancy::{occupancy, CtaShape};
use crate::parallel::{PrivateIssue, SmThreads};
use crate::rf::ledger::{Ledger, OperandBuffer, OperandCounts};
use crate::rf::{EnergyEvent, RfStats};
use crate::run_limits::{
    Progress, ProgressHook, RunLimits, StopReason, WarpStates, CHECK_INTERVAL, PROGRESS_INTERVAL,
};
use crate::sampling::{self, LaunchKey, Plan, Sampler};
use crate::sm::{Ctx, Sm};
use crate::stats::{
    energy_events_since, execution_energy_events, ipc, memory_add, memory_energy_events,
    memory_since, merge_energy_events, KernelStats, Limiter, Report, SimulationStats,
    StallBreakdown, TotalStats,
};
use crate::time::{Cycle, Cycles};

/// Why a kernel could not be simulated.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The emulator reported a fault (or could not launch the kernel).
    #[error(transparent)]
    Exec(#[from] emu::ExecError),
    /// Not even one CTA fits on an SM.
    #[error(
        "kernel {kernel} cannot run: one CTA of {threads} threads, {registers_per_thread} \
         registers per thread and {shared_bytes} bytes of shared memory does not fit on an \
         SM (limited by {})", limited_by.config_key()
    )]
    DoesNotFit {
        /// The kernel.
        kernel: String,
        /// Threads per CTA.
        threads: u32,
        /// Registers per thread.
        registers_per_thread: u32,
        /// Shared memory per CTA.
        shared_bytes: u64,
        /// The resource that does not suffice.
        limited_by: Limiter,
    },
    /// The kernel uses an instruction the simulated GPU's compute capability lacks.
    #[error(
        "kernel {kernel} cannot run: it executes {what}, which needs compute capability \
         {needs} ({target}); the simulated GPU has {has} (gpu.compute_capability); first at \
         line {line} of the PTX"
    )]
    UnsupportedOnTarget {
        kernel: String,
        what: &'static str,
        needs: String,
        target: &'static str,
        line: u32,
        has: String,
    },
    /// A thread-block cluster cannot be resident on one GPC.
    #[error(
        "kernel {kernel} cannot run: a cluster of {cluster} CTAs must be resident on one GPC, \
         and the largest GPC ({gpc_sms} SMs) holds {fits} of its CTAs ({ctas_per_sm} per SM; \
         gpu.gpc_sms)"
    )]
    ClusterDoesNotFit {
        /// The kernel.
        kernel: String,
        /// CTAs per cluster.
        cluster: u32,
        /// SMs of the largest GPC.
        gpc_sms: u32,
        /// CTAs of the kernel one SM holds.
        ctas_per_sm: u32,
        /// CTAs of the kernel the largest GPC holds.
        fits: u64,
    },
    /// The kernel has an instruction with more registers than the register-file design
    /// models.
    #[error(
        "kernel {kernel} cannot be timed under register_file.design = {design}: a \
         wgmma.mma_async reads or writes {regs} registers, and {design} tracks at most 32 \
         register operands per instruction ({why}); other designs time it, and a \
         functional run (--functional) executes it"
    )]
    TooWideForDesign {
        kernel: String,
        design: &'static str,
        regs: usize,
        why: &'static str,
    },
    /// The [`KernelInfo`] describes another kernel.
    #[error("kernel info is for `{info}`, but kernel `{launched}` was launched")]
    WrongKernelInfo {
        /// The info's kernel.
        info: String,
        /// The launched kernel.
        launched: String,
    },
    /// Nothing can make progress and no event is pending, or the watchdog saw no
    /// instruction issue and no memory request complete for
    /// [`RunLimits::watchdog_iterations`] visited cycles (a model bug, reported rather
    /// than hanging).
    #[error("kernel {kernel}: no progress possible at cycle {cycle} with work left; {warps}")]
    NoProgress {
        /// The kernel.
        kernel: String,
        /// The cycle.
        cycle: u64,
        /// The live warps and what they wait for.
        warps: WarpStates,
    },
    /// Every warp still running waits at a barrier that cannot complete (the emulator's
    /// located error) and nothing else is pending.
    #[error("{error}; {warps}")]
    Deadlock {
        /// The barrier, its CTA and the warps waiting and missing.
        error: Box<emu::ExecError>,
        /// The live warps and what they wait for.
        warps: WarpStates,
    },
    /// A [`RunLimits`] bound stopped the kernel. `stats` are the kernel's statistics up
    /// to `cycle` (also in [`TimingSimulator::kernels`], with `complete: false`).
    #[error("kernel {kernel} stopped at cycle {cycle}: {reason}; {functional}{warps}")]
    Stopped {
        /// The kernel.
        kernel: String,
        /// The last simulated cycle.
        cycle: u64,
        /// Which bound.
        reason: StopReason,
        /// The live warps and what they wait for.
        warps: WarpStates,
        /// The kernel's statistics up to the stop.
        stats: Box<KernelStats>,
        /// Empty, or where the bound stopped CTAs a sampled run executes functionally:
        /// "executed functionally (sampled run): CTA (x,y,z): N warps live …; in detail: ",
        /// before `warps`.
        functional: String,
    },
    /// A launch after a stop: the stopped kernel's CTAs still occupy the SMs.
    #[error("the simulation was stopped; kernel {kernel} cannot start")]
    AfterStop {
        /// The kernel.
        kernel: String,
    },
}

/// The cycle-level GPU simulator. Holds the memory system and SMs across kernels. `Send`
/// (checked at compile time below), so the CUDA runtime can keep one in a global.
pub struct TimingSimulator {
    cfg: GpuConfig,
    memory: MemorySystem,
    sms: Vec<Sm>,
    addresses: AddressMap,
    now: Cycle,
    kernels: Vec<KernelStats>,
    wall_seconds: f64,
    skip_cycles: bool,
    /// Windows of cycles run with several threads (host work, not a statistic).
    windows_run: u64,
    limits: RunLimits,
    progress: Option<ProgressHook>,
    /// A kernel was stopped by a limit; its CTAs are still on the SMs.
    stopped: bool,
    /// The threads that step the SMs ([`crate::parallel`]).
    threads: SmThreads,
    /// Sampled simulation's clusters, when `[sampling]` is enabled.
    sampler: Option<Sampler>,
}

const _: () = {
    const fn assert_send<T: Send>() {}
    assert_send::<TimingSimulator>();
};

impl TimingSimulator {
    /// A simulator for a validated config (see [`GpuConfig::load`]).
    pub fn new(cfg: GpuConfig) -> Self {
        let sms = (0..cfg.gpu.num_sms)
            .map(|i| Sm::new(SmId(i), &cfg))
            .collect();
        TimingSimulator {
            sampler: cfg
                .sampling
                .enabled
                .then(|| Sampler::new(cfg.sampling.clone())),
            memory: MemorySystem::new(&cfg),
            cfg,
            sms,
            addresses: AddressMap::new(),
            now: Cycle::ZERO,
            kernels: Vec::new(),
            wall_seconds: 0.0,
            skip_cycles: true,
            windows_run: 0,
            limits: RunLimits::default(),
            progress: None,
            stopped: false,
            threads: SmThreads::serial(),
        }
    }

    /// Steps the SMs on `threads` threads (1, the default, steps them on the calling
    /// thread). Every statistic and value is the same for every count
    /// ([`crate::parallel`]). Fails only if the threads cannot be started.
    pub fn set_threads(&mut self, threads: usize) -> std::io::Result<()> {
        self.threads = SmThreads::new(threads)?;
        // The SMs' own event queues (windowed stepping's prerequisite, docs/parallel.md)
        // only where the SMs are stepped on several threads: one thread keeps every
        // event on the shared queue, at no cost. Same order either way.
        self.memory.set_local_queues(self.threads.threads() >= 2);
        Ok(())
    }

    /// The number of threads stepping the SMs.
    pub fn threads(&self) -> usize {
        self.threads.threads()
    }

    /// With `false`, every SM is evaluated in every cycle and time never jumps: much
    /// slower, and by construction identical in every statistic (tests compare the two).
    pub fn set_cycle_skipping(&mut self, on: bool) {
        self.skip_cycles = on;
        for sm in &mut self.sms {
            sm.always_awake = !on;
        }
    }

    /// Cycles in which an SM was evaluated, summed over the SMs, over the simulation:
    /// what sleeping through idle cycles saves (host work, not a statistic).
    pub fn sm_cycles_evaluated(&self) -> u64 {
        self.sms.iter().map(|s| s.evaluated_cycles).sum()
    }

    /// How many windows of cycles the SMs stepped between merges so far (`--threads` 2
    /// or more; `docs/parallel.md`): host work, never part of the statistics.
    pub fn windows_run(&self) -> u64 {
        self.windows_run
    }

    /// Bounds every later kernel by `limits` (counted over the whole simulation).
    pub fn set_limits(&mut self, limits: RunLimits) {
        self.limits = limits;
    }

    /// The limits [`TimingSimulator::set_limits`] set.
    pub fn limits(&self) -> &RunLimits {
        &self.limits
    }

    /// Calls `hook` with the progress of the running kernel, at most every
    /// [`PROGRESS_INTERVAL`] of wall-clock time.
    pub fn set_progress_hook(&mut self, hook: ProgressHook) {
        self.progress = Some(hook);
    }

    /// The configuration.
    pub fn config(&self) -> &GpuConfig {
        &self.cfg
    }

    /// The host wrote `[ptr, ptr + len)` of device memory (a host-to-device copy);
    /// `allocations` are the emulator's live allocations (`emu.memory.allocations()`).
    /// With `l2.fill_on_host_copy` the copied sectors are installed in the L2
    /// ([`MemorySystem::host_write`]) at the simulated address of `ptr`, which, if its
    /// allocation has none yet, is assigned now (in program order of the copies, so
    /// deterministic). Without the key, or for memory outside every allocation, nothing
    /// happens. Takes no simulated time. Returns the number of L2 lines installed.
    pub fn host_wrote(
        &mut self,
        allocations: impl Iterator<Item = (u64, u64)>,
        ptr: u64,
        len: u64,
    ) -> u64 {
        if !self.cfg.l2.fill_on_host_copy || len == 0 {
            return 0;
        }
        self.addresses.refresh(allocations);
        match self.addresses.allocated(ptr) {
            Some(sim) => self.memory.host_write(sim, len),
            None => 0,
        }
    }

    /// The current cycle (the first cycle of the next kernel).
    pub fn now(&self) -> Cycle {
        self.now
    }

    /// Statistics of every kernel simulated so far, in launch order.
    pub fn kernels(&self) -> &[KernelStats] {
        &self.kernels
    }

    /// Totals over the kernels so far.
    pub fn total(&self) -> TotalStats {
        let mut t = TotalStats::default();
        for k in &self.kernels {
            t.kernels += 1;
            t.cycles += k.cycles;
            t.warp_instructions += k.warp_instructions;
            t.thread_instructions += k.thread_instructions;
            t.stalls.accumulate(&k.stalls);
            t.register_file.accumulate(&k.register_file);
            memory_add(&mut t.memory, &k.memory);
            if let Some(l0) = &k.l0_icache {
                t.l0_icache
                    .get_or_insert_with(Default::default)
                    .accumulate(l0);
            }
            if let Some(c) = &k.constant_operands {
                t.constant_operands
                    .get_or_insert_with(Default::default)
                    .accumulate(c);
            }
            merge_energy_events(&mut t.energy_events, &k.energy_events);
        }
        t.ipc = ipc(t.warp_instructions, t.cycles);
        t.sampling = crate::sampling::TotalSample::of(&self.kernels);
        t
    }

    /// The whole report: per kernel, total, and wall-clock figures.
    pub fn report(&self) -> Report {
        let total = self.total();
        Report {
            simulation: SimulationStats {
                wall_seconds: self.wall_seconds,
                warp_instructions_per_second: rate(total.warp_instructions, self.wall_seconds),
            },
            kernels: self.kernels.clone(),
            total,
        }
    }

    /// The register-file ledgers of every SM, summed: what the design's registers did
    /// so far and what it cost ([`crate::rf::ledger`]).
    pub fn register_file_ledger(&self) -> Ledger {
        let mut all = Ledger::new(OperandBuffer::Collector);
        for sm in &self.sms {
            all.accumulate(&sm.rf().ledger());
        }
        all
    }

    /// Register operands issued and written back so far, summed over SMs, as the SMs
    /// counted them.
    pub fn operand_counts(&self) -> OperandCounts {
        let mut all = OperandCounts::default();
        for sm in &self.sms {
            all.accumulate(&sm.operand_counts());
        }
        all
    }

    /// Energy-relevant register-file event counts so far, summed over SMs, by structure
    /// and access kind (sorted).
    pub fn register_file_energy_events(&self) -> Vec<EnergyEvent> {
        let mut all: Vec<EnergyEvent> = Vec::new();
        for sm in &self.sms {
            // Constant-bank operands are delivered by the SM, on the same ledger rules.
            let constant = sm.constant_ledger().events();
            for e in sm.rf().energy_events().into_iter().chain(constant) {
                match all
                    .iter_mut()
                    .find(|a| a.structure == e.structure && a.access == e.access)
                {
                    Some(a) => a.count += e.count,
                    None => all.push(e),
                }
            }
        }
        all.sort_by(|a, b| (a.structure, a.access).cmp(&(b.structure, b.access)));
        all
    }

    fn rf_stats(&self) -> RfStats {
        let mut s = RfStats::default();
        for sm in &self.sms {
            s.accumulate(&sm.rf().stats(self.now));
        }
        s
    }

    /// Simulates one kernel launch to completion: executes it on `emu` (values, memory
    /// and atomics as the simulated order makes them) and times it. `info` must describe
    /// `kernel` ([`KernelInfo::compile`]).
    pub fn simulate_kernel(
        &mut self,
        emu: &mut Emulator,
        kernel: KernelRef,
        launch_config: LaunchConfig,
        params: &[u8],
        info: &KernelInfo,
    ) -> Result<KernelStats, SimError> {
        let wall = Instant::now();
        let static_shared = emu
            .module(kernel.module)
            .map_or(0, |m| m.kernel_static_shared(kernel.func));
        let launched = emu
            .module(kernel.module)
            .and_then(|m| m.program.functions.get(kernel.func.index()))
            .map_or_else(|| format!("{}", kernel.func), |f| f.name.clone());
        if info.kernel != kernel.func || info.name != launched {
            return Err(SimError::WrongKernelInfo {
                info: info.name.clone(),
                launched,
            });
        }
        // Ours: regsim runs any PTX on any GPU, except that warpgroup matrix products
        // (sm_90a) and fp8 mma.sync (sm_89) are refused on GPUs reporting less.
        let has = self.cfg.gpu.compute_capability;
        if let Some(need) = info.gpu_need().filter(|n| n.cc > has) {
            let cc = |v: u32| format!("{}.{}", v / 10, v % 10);
            return Err(SimError::UnsupportedOnTarget {
                kernel: info.name.clone(),
                what: need.what,
                needs: cc(need.cc),
                target: need.target,
                line: need.line,
                has: cc(has),
            });
        }
        // Ours: designs whose per-operand state is a 32-bit mask refuse wider instructions.
        let narrow = match self.cfg.register_file.design {
            crate::config::RegisterFileDesign::Cerf => Some((
                "cerf",
                "its operand lookups keep a 32-bit mask per instruction",
            )),
            crate::config::RegisterFileDesign::Malekeh => Some((
                "malekeh",
                "its caching collectors keep 32-bit valid and near masks",
            )),
            _ => None,
        };
        if let Some((design, why)) = narrow {
            let regs = info.widest_instruction();
            if regs > 32 {
                return Err(SimError::TooWideForDesign {
                    kernel: info.name.clone(),
                    design,
                    regs,
                    why,
                });
            }
        }
        if self.stopped {
            return Err(SimError::AfterStop {
                kernel: info.name.clone(),
            });
        }
        // A launch with clusters of several CTAs is simulated in full, on one thread: its
        // CTAs start together and share memory and a barrier across SMs.
        let cluster_size = launch_config
            .cluster
            .or_else(|| {
                emu.module(kernel.module)
                    .and_then(|m| m.program.functions.get(kernel.func.index()))
                    .and_then(|f| f.directives.reqnctapercluster)
            })
            .map_or(1, |c| c.iter().product::<u32>());
        let key = LaunchKey {
            name: info.name.clone(),
            grid: launch_config.grid,
            block: launch_config.block,
            dynamic_shared: launch_config.dynamic_shared,
        };
        // Warp instructions of the kernels before, counted against the instruction limit.
        let instructions_before: u64 = self.kernels.iter().map(|k| k.warp_instructions).sum();
        if let Some(sampler) = self.sampler.as_mut().filter(|_| cluster_size == 1) {
            if sampler.plan(&key) == Plan::Estimated {
                // Bounded by the limits; a stopped trial is simulated and meets them there.
                let bound =
                    self.limits
                        .functional_bound(&self.cfg, self.now.get(), instructions_before);
                let estimate = sampling::try_estimate(
                    sampler,
                    emu,
                    kernel,
                    launch_config,
                    params,
                    &key,
                    self.now.get(),
                    &bound.bound,
                )?;
                if let Some(mut stats) = estimate {
                    let wall_seconds = wall.elapsed().as_secs_f64();
                    self.wall_seconds += wall_seconds;
                    stats.simulation = SimulationStats {
                        wall_seconds,
                        warp_instructions_per_second: rate(stats.warp_instructions, wall_seconds),
                    };
                    self.kernels.push(stats.clone());
                    return Ok(stats);
                }
            }
        }
        let shape = CtaShape {
            threads: launch_config.threads_per_cta(),
            registers_per_thread: info.registers_per_thread,
            shared_bytes: static_shared + u64::from(launch_config.dynamic_shared),
        };
        let mut occ = occupancy(&self.cfg, shape);
        occ.spill_slots = info.spill_slots;
        if let Some(b) = info.before_budget {
            let before = occupancy(
                &self.cfg,
                CtaShape {
                    registers_per_thread: b.registers_per_thread,
                    ..shape
                },
            );
            let budget = crate::register_budget::budget(&self.cfg);
            occ.before_budget = Some(crate::stats::BeforeBudget {
                budget: budget.registers,
                architecture_limit: budget.compared_with.unwrap_or(budget.registers),
                registers_per_thread: b.registers_per_thread,
                spill_slots: b.spill_slots,
                ctas_per_sm: before.ctas_per_sm,
                theoretical_warps_per_sm: before.theoretical_warps_per_sm,
            });
        }
        if occ.ctas_per_sm == 0 {
            return Err(SimError::DoesNotFit {
                kernel: info.name.clone(),
                threads: shape.threads,
                registers_per_thread: shape.registers_per_thread,
                shared_bytes: shape.shared_bytes,
                limited_by: occ.limited_by,
            });
        }
        let gpcs = self.cfg.gpu.gpcs();
        if cluster_size > 1 {
            let largest = gpcs.iter().map(|g| g.len()).max().unwrap_or(0);
            let fits = largest as u64 * u64::from(occ.ctas_per_sm);
            if fits < u64::from(cluster_size) {
                return Err(SimError::ClusterDoesNotFit {
                    kernel: info.name.clone(),
                    cluster: cluster_size,
                    gpc_sms: largest as u32,
                    ctas_per_sm: occ.ctas_per_sm,
                    fits,
                });
            }
        }
        self.addresses.refresh(emu.memory.allocations());
        self.addresses.set_gpu_local(
            (self.cfg.memory.local_interleave == crate::config::LocalInterleave::Gpu).then(|| {
                crate::memory::address_map::GpuLocal {
                    threads_per_cta: u64::from(shape.threads).div_ceil(32) * 32,
                    ctas_per_sm: u64::from(occ.ctas_per_sm),
                    sms: u64::from(self.cfg.gpu.num_sms),
                }
            }),
        );
        if let Some(m) = emu.module(kernel.module) {
            self.addresses.set_local_bytes_per_thread(
                crate::memory::address_map::local_bytes_per_thread(
                    m,
                    kernel.func,
                    emu.limits.local_bytes_per_thread,
                ),
            );
        }
        self.memory
            .begin_kernel(u64::from(occ.ctas_per_sm) * shape.shared_bytes);
        let mem_before = self.memory.stats();
        let rf_before = self.rf_stats();
        let rf_events_before = self.register_file_energy_events();
        let recording = (self.sampler.is_some() && cluster_size == 1)
            .then(|| sampling::BbvRecording::start_counting(emu, Some(launch_config.grid)));
        let mut launch = emu.launch(kernel, launch_config, params)?;
        // A global-to-shared bulk copy lands when the memory system delivers its data.
        launch.defer_bulk_copies = true;
        // With several threads, CTA-private instructions issue in the parallel phase, on
        // an executor per thread (`crate::parallel`); not under a step observer, which
        // sees instructions only on the launch itself.
        let mut stand_ins: Vec<emu::DeviceStandIn> = Vec::new();
        if self.threads.threads() > 1 && !launch.is_observed() && cluster_size == 1 {
            stand_ins.resize_with(self.threads.threads(), Default::default);
        }
        // Global loads, stores, atomics and reductions issue there too, their memory
        // accesses waiting for the SM's turn; not under WIR, whose reuse reads each
        // result's values at issue.
        let defer_global = self.cfg.register_file.design != crate::config::RegisterFileDesign::Wir;
        let mut executors: Vec<emu::Launch<'_>> = stand_ins
            .iter_mut()
            .map(|s| launch.cta_private_executor(s, defer_global))
            .collect();
        let texture_path = self.memory.config().texture_cache.is_some();
        let start = self.now;
        for sm in &mut self.sms {
            sm.begin_kernel(start);
            sm.kernel_started(info);
        }

        // With clusters, what is placed is a cluster: `next_cta` counts clusters.
        let total_ctas = launch.num_clusters();
        let mut rr = 0usize;
        let n = self.sms.len();
        let warps_per_cta = shape.warps() as usize;
        let wave = u64::from(occ.ctas_per_sm) * n as u64;
        let (plan, warm_ctas) = self
            .sampler
            .as_ref()
            .filter(|_| cluster_size == 1)
            .map_or_else(
                || (sampling::CtaPlan::full(total_ctas), 0),
                |s| (s.plan_ctas(total_ctas, wave), s.warm_ctas(wave)),
            );
        // The sample being placed and the next CTA of it.
        let mut sample = 0usize;
        let mut next_cta = plan.samples[0].start;
        let mut placed = Vec::new();
        // The skipped CTAs' counts; they count against the instruction limit.
        let mut rest = emu::RunStats::default();
        let sampled = !plan.is_full();
        let limits = &self.limits;
        let cfg = &self.cfg;
        // CTAs start after the launch overhead.
        let first = start + self.cfg.gpu.kernel_launch_latency;
        let mut now = first;
        let mut place = |sms: &mut [Sm],
                         launch: &mut emu::Launch<'_>,
                         memory: &mut MemorySystem,
                         addresses: &mut AddressMap,
                         next_cta: &mut u64,
                         rest: &mut emu::RunStats,
                         now: Cycle,
                         (issued, hidden): (u64, &[bool])|
         -> Result<Option<(StopReason, emu::FunctionalStop)>, SimError> {
            if cluster_size > 1 {
                // Whole clusters, in order, each on SMs of one GPC (the first GPC from
                // the round-robin SM's that holds it: regsim's choice), CTAs spread over
                // the GPC's SMs from there; a cluster that fits nowhere waits for CTAs
                // to retire, and so do the clusters after it.
                let fits = |s: &Sm| {
                    if s.free_warp_slots() < warps_per_cta {
                        0
                    } else {
                        (occ.ctas_per_sm - s.resident_ctas().min(occ.ctas_per_sm))
                            .min((s.free_warp_slots() / warps_per_cta.max(1)) as u32)
                    }
                };
                while *next_cta < plan.total_end() {
                    let start_gpc = gpcs.iter().position(|g| g.contains(&rr)).unwrap_or(0);
                    let gpc = (0..gpcs.len())
                        .map(|j| &gpcs[(start_gpc + j) % gpcs.len()])
                        .find(|g| {
                            (g.start..g.end)
                                .map(|s| u64::from(fits(&sms[s])))
                                .sum::<u64>()
                                >= u64::from(cluster_size)
                        });
                    let Some(gpc) = gpc else { break };
                    let ctas = launch.start_cluster(*next_cta)?;
                    let first = if gpc.contains(&rr) { rr } else { gpc.start };
                    let mut order = (first..gpc.end).chain(gpc.start..first).cycle();
                    for cta in ctas {
                        let Some(s) = order.by_ref().find(|&s| fits(&sms[s]) > 0) else {
                            break;
                        };
                        sms[s].launch_cta(cta, info, now);
                        rr = (s + 1) % n;
                    }
                    *next_cta += 1;
                }
                return Ok(None);
            }
            // `hidden`: SMs whose CTA retires later in the window being merged (their
            // room is not there yet).
            while let Some(s) = (0..n).map(|j| (rr + j) % n).find(|&s| {
                !hidden.get(s).copied().unwrap_or(false)
                    && sms[s].resident_ctas() < occ.ctas_per_sm
                    && sms[s].free_warp_slots() >= warps_per_cta
            }) {
                if *next_cta == plan.samples[sample].end {
                    // The sample is placed: execute the CTAs up to the next one
                    // functionally, warming the caches with the last of them.
                    let Some(following) = plan.samples.get(sample + 1) else {
                        break;
                    };
                    // Bounded by what the timed run could still issue (issue 26).
                    let bound = limits.functional_bound(
                        cfg,
                        now.get(),
                        instructions_before + issued + rest.warp_instructions,
                    );
                    let skip = sampling::skip_ctas(
                        launch,
                        recording.as_ref(),
                        *next_cta..following.start,
                        following.start.saturating_sub(warm_ctas),
                        &bound.bound,
                    )?;
                    let (skipped, touched) = match skip {
                        Ok(skip) => skip,
                        Err(stop) => return Ok(Some((bound.reason(stop.cause, limits), stop))),
                    };
                    rest.warp_instructions += skipped.warp_instructions;
                    rest.thread_instructions += skipped.thread_instructions;
                    for t in touched {
                        let addr = addresses.global(t.sector);
                        memory.warm((t.cta % n as u64) as usize, addr, t.store);
                    }
                    sample += 1;
                    *next_cta = following.start;
                }
                let cta = launch.start_cta(*next_cta)?;
                sms[s].launch_cta(cta, info, now);
                if sampled {
                    placed.push(sampling::Placement {
                        cta: *next_cta,
                        cycle: (now - start).get(),
                        issued,
                    });
                }
                *next_cta += 1;
                rr = (s + 1) % n;
            }
            Ok(None)
        };
        // A bound that stopped the CTAs executed functionally, and why.
        let mut functional_stop = place(
            &mut self.sms,
            &mut launch,
            &mut self.memory,
            &mut self.addresses,
            &mut next_cta,
            &mut rest,
            now,
            (0, &[]),
        )?;
        for sm in &mut self.sms {
            // CTAs placed before the first cycle start at `first`.
            if sm.next_wake != Cycle::NEVER {
                sm.next_wake = first;
            }
        }
        // Each SM's `next_wake`, kept apart from the SMs: the loop needs the earliest and
        // the due ones each iteration, and a GPU of 80 SMs would otherwise touch 80 large
        // structs. Updated after every call that may change an SM's `next_wake`.
        let mut wake = WakeTimes::new(self.sms.iter().map(|s| s.next_wake).collect());

        // The run limits as bounds on this kernel.
        let cycle_limit = self.limits.max_cycles.map_or(Cycle::NEVER, Cycle::new);
        let instruction_budget = self
            .limits
            .max_instructions
            .map_or(u64::MAX, |m| m.saturating_sub(instructions_before));
        let mut issued = 0u64;
        let mut cluster_releases = launch.cluster_releases;
        let mut idle_iterations = 0u64;
        let mut check_in = CHECK_INTERVAL;
        let mut next_report = wall + PROGRESS_INTERVAL;
        // Windows of cycles between merges (`docs/parallel.md`, "Step 3, second part"):
        // with several threads, every SM's issue on an executor of its thread, and a
        // config whose bound allows two cycles or more; never under sampling (its
        // placement record) or WIR (no deferred accesses). At most 64 cycles (the
        // merge's per-cycle bit masks).
        let windows = (self.threads.threads() > 1
            && executors.len() == self.threads.threads()
            && defer_global
            && self.skip_cycles
            && self.sampler.is_none()
            && cluster_size == 1)
            .then(|| crate::parallel::window::window_cycles(&self.cfg).ok())
            .flatten()
            .map(|w| w.min(64));
        let per_cycle_issue =
            u64::from(self.cfg.sm.schedulers) * u64::from(self.cfg.sm.issue_width);
        let mut steps = vec![crate::sm::WindowStep::default(); n];
        let mut live_from: Vec<Cycle> = Vec::with_capacity(n);
        let mut hidden: Vec<bool> = Vec::with_capacity(n);
        let mut window_counts = WindowCounts::default();

        let end = loop {
            if let Some((reason, _)) = &functional_stop {
                break KernelEnd::Stopped(now, reason.clone());
            }
            // What the SMs' own memory events reported (completions, unblocks), SM by SM:
            // each report changes only its SM, so the order among SMs changes nothing.
            self.memory.advance(now);
            let progressed = deliver_reports(&mut self.memory, &mut self.sms, &mut wake);
            // A window only where no limit can stop the kernel inside it: the cycle limit,
            // the instruction budget (checked after every cycle; an SM issues at most its
            // schedulers times the issue width a cycle) and the watchdog.
            let window = windows.filter(|&w| {
                functional_stop.is_none()
                    && now.get().saturating_add(w) <= cycle_limit.get()
                    && idle_iterations + w < self.limits.watchdog_iterations
                    && (issued + rest.warp_instructions)
                        .saturating_add(w * per_cycle_issue * n as u64)
                        < instruction_budget
            });
            let visits = if let Some(w) = window {
                // Every SM steps the window on its thread, then the merge replays it in
                // the one-thread order, cycle by cycle.
                let (t, end) = (now, now + Cycles::new(w));
                let issue = PrivateIssue {
                    executors: &mut executors,
                    addresses: &self.addresses,
                    texture_path,
                };
                let all_placed = next_cta == plan.total_end();
                self.threads.window_phase(
                    &mut self.sms,
                    &mut self.memory,
                    (t, end),
                    (info, all_placed),
                    issue,
                    &mut steps,
                );
                self.memory.begin_merge(end);
                live_from.clear();
                live_from.extend(steps.iter().map(|s| s.live_from));
                window_counts.count(&steps, (t, end));
                self.windows_run += 1;
                let mut visits = 0u32;
                let mut ended = None;
                let mut d = t;
                loop {
                    let bit = 1u64 << (d - t).get();
                    let mut visited = d == t;
                    let mut progress = d == t && progressed;
                    if d > t {
                        self.memory.replay_cycle(d, &live_from);
                        // The reports of the SMs running live.
                        progress |= deliver_reports(&mut self.memory, &mut self.sms, &mut wake);
                    }
                    for st in &steps {
                        visited |= st.visited & bit != 0;
                        progress |= st.progress & bit != 0;
                    }
                    let mut any_retired = false;
                    {
                        let mut ctx = Ctx {
                            launch: &mut launch,
                            info,
                            memory: &mut self.memory,
                            addresses: &mut self.addresses,
                        };
                        // In SM order: what each SM's cycle did on its thread, its
                        // deferred accesses, or its cycle live.
                        for (i, st) in steps.iter().enumerate() {
                            let sm = &mut self.sms[i];
                            let before = sm.stats.warp_instructions;
                            if st.shared_at == Some(d) {
                                ctx.memory.replay_phase(i, d);
                                sm.cycle_shared(d, &mut ctx)?;
                            } else if d < st.live_from {
                                ctx.memory.replay_phase(i, d);
                                sm.complete_window_accesses(d, &mut ctx)?;
                            } else if sm.next_wake <= d {
                                visited = true;
                                sm.cycle(d, &mut ctx)?;
                            }
                            let issued_now = sm.stats.warp_instructions - before;
                            progress |= issued_now > 0;
                            issued += issued_now;
                            wake.set(i, sm.next_wake);
                            // A retire on its thread counts in its cycle.
                            if d >= st.live_from
                                || st.shared_at == Some(d)
                                || st.retired_at == Some(d)
                            {
                                any_retired |= std::mem::take(&mut sm.cta_retired);
                            }
                        }
                    }
                    if any_retired {
                        // An SM whose CTA retires later in the window held it at `d`.
                        hidden.clear();
                        hidden.extend(steps.iter().map(|s| s.retired_at.is_some_and(|r| r > d)));
                        let resident: u64 = self
                            .sms
                            .iter()
                            .zip(&hidden)
                            .map(|(s, &h)| u64::from(s.resident_ctas().max(u32::from(h))))
                            .sum();
                        if next_cta == plan.total_end() && resident == 0 {
                            ended = Some(d);
                            break;
                        }
                        functional_stop = place(
                            &mut self.sms,
                            &mut launch,
                            &mut self.memory,
                            &mut self.addresses,
                            &mut next_cta,
                            &mut rest,
                            d,
                            (issued, &hidden),
                        )?;
                        for (i, sm) in self.sms.iter().enumerate() {
                            wake.set(i, sm.next_wake);
                        }
                    }
                    // The watchdog counts the cycles one thread visits (the window's
                    // bound keeps it from firing inside).
                    if visited {
                        visits += 1;
                        if progress {
                            idle_iterations = 0;
                        } else {
                            idle_iterations += 1;
                        }
                    }
                    if d + Cycles::new(1) == end {
                        break;
                    }
                    d += Cycles::new(1);
                }
                self.memory.finish_merge();
                for sm in &mut self.sms {
                    sm.end_window();
                }
                issued += steps.iter().map(|s| s.issued).sum::<u64>();
                if let Some(d) = ended {
                    break KernelEnd::Done(d);
                }
                now = d;
                visits
            } else {
                let mut any_retired = false;
                let issued_before = issued;
                let private_issue = (!executors.is_empty()).then(|| PrivateIssue {
                    executors: &mut executors,
                    addresses: &self.addresses,
                    texture_path,
                });
                let private_done = self.threads.private_phase(
                    &mut self.sms,
                    &mut self.memory,
                    wake.times(),
                    now,
                    info,
                    private_issue,
                );
                {
                    let mut ctx = Ctx {
                        launch: &mut launch,
                        info,
                        memory: &mut self.memory,
                        addresses: &mut self.addresses,
                    };
                    // In SM order; a cycle changes only its own SM's wake-up time.
                    let mut from = 0;
                    while let Some(i) = wake.next_due(from, now) {
                        let sm = &mut self.sms[i];
                        let before = sm.stats.warp_instructions;
                        if private_done {
                            // What its private part scheduled goes first, as with one thread.
                            ctx.memory.flush_sm(SmId(i as u32));
                            sm.cycle_shared(now, &mut ctx)?;
                        } else {
                            sm.cycle(now, &mut ctx)?;
                        }
                        issued += sm.stats.warp_instructions - before;
                        wake.set(i, sm.next_wake);
                        // Only a cycle retires a CTA.
                        any_retired |= std::mem::take(&mut sm.cta_retired);
                        from = i + 1;
                    }
                }
                if launch.cluster_releases != cluster_releases {
                    // A cluster barrier completed: its waiters on every SM resume.
                    cluster_releases = launch.cluster_releases;
                    for (i, sm) in self.sms.iter_mut().enumerate() {
                        sm.wake_cluster_waiters(now);
                        wake.set(i, sm.next_wake);
                    }
                }
                if any_retired {
                    let resident: u64 = self.sms.iter().map(|s| u64::from(s.resident_ctas())).sum();
                    if next_cta == plan.total_end() && resident == 0 {
                        break KernelEnd::Done(now);
                    }
                    functional_stop = place(
                        &mut self.sms,
                        &mut launch,
                        &mut self.memory,
                        &mut self.addresses,
                        &mut next_cta,
                        &mut rest,
                        now,
                        (issued, &[]),
                    )?;
                    for (i, sm) in self.sms.iter().enumerate() {
                        wake.set(i, sm.next_wake);
                    }
                }
                if functional_stop.is_some() {
                    continue;
                }
                if issued + rest.warp_instructions >= instruction_budget {
                    let max = self.limits.max_instructions.unwrap_or(u64::MAX);
                    break KernelEnd::Stopped(now, StopReason::MaxInstructions(max));
                }
                if progressed || issued > issued_before {
                    idle_iterations = 0;
                } else {
                    idle_iterations += 1;
                    if idle_iterations >= self.limits.watchdog_iterations {
                        return Err(SimError::NoProgress {
                            kernel: info.name.clone(),
                            cycle: now.get(),
                            warps: warp_states(&self.sms, &launch),
                        });
                    }
                }
                1
            };
            check_in = check_in.saturating_sub(visits);
            if check_in == 0 {
                check_in = CHECK_INTERVAL;
                let t = Instant::now();
                if let Some(reason) = self.limits.external_stop(t) {
                    break KernelEnd::Stopped(now, reason);
                }
                if let Some(hook) = &mut self.progress {
                    if t >= next_report {
                        next_report = t + PROGRESS_INTERVAL;
                        hook(&Progress {
                            kernel: &info.name,
                            cycle: now.get(),
                            kernel_cycles: (now - start).get(),
                            kernel_instructions: issued,
                            kernel_seconds: (t - wall).as_secs_f64(),
                        });
                    }
                }
            }
            let sm_next = wake.earliest();
            let next = if self.skip_cycles {
                // The next cycle an SM has work: its own wake-up, or a memory event that
                // reports to it (the memory events in between run on their own).
                self.memory
                    .run_until_report(sm_next.max(now + Cycles::new(1)))
            } else {
                let mut next = sm_next;
                if let Some(m) = self.memory.next_event_cycle() {
                    next = next.min(m);
                }
                if next == Cycle::NEVER {
                    next
                } else {
                    now + Cycles::new(1)
                }
            };
            if next == Cycle::NEVER {
                let warps = warp_states(&self.sms, &launch);
                if let Some(cta) = self.sms.iter().find_map(|s| s.stuck_cta()) {
                    return Err(SimError::Deadlock {
                        error: Box::new(launch.deadlock_error(cta)),
                        warps,
                    });
                }
                return Err(SimError::NoProgress {
                    kernel: info.name.clone(),
                    cycle: now.get(),
                    warps,
                });
            }
            if next >= cycle_limit {
                // Time reaches the limit before the next cycle with work: the kernel ends
                // at the limit's last cycle (or now, if it started past it).
                let last = Cycle::new(cycle_limit.get().saturating_sub(1)).max(now);
                let max = self.limits.max_cycles.unwrap_or(u64::MAX);
                break KernelEnd::Stopped(last, StopReason::MaxCycles(max));
            }
            now = next.max(now + Cycles::new(1));
        };

        window_counts.report(&info.name);
        let (end, stop) = match end {
            KernelEnd::Done(end) => (end, None),
            KernelEnd::Stopped(end, reason) => {
                let warps = warp_states(&self.sms, &launch);
                (end, Some((reason, warps)))
            }
        };
        for e in &executors {
            launch.add_stats(e.stats);
        }
        drop(executors);
        drop(launch);
        let recorded = recording.map(|r| r.finish_counts(emu));
        let begun = KernelBegun {
            name: info.name.clone(),
            launch_config,
            start,
            wall,
            occupancy: occ,
            mem_before,
            rf_before,
            rf_events_before,
        };
        let mut stats = self.finish_kernel(begun, end);
        if let Some((reason, warps)) = stop {
            // The stopped kernel's CTAs stay on the SMs: nothing more can run.
            self.stopped = true;
            stats.complete = false;
            if let Some(last) = self.kernels.last_mut() {
                last.complete = false;
            }
            let functional = functional_stop.map_or_else(String::new, |(_, stop)| {
                format!(
                    "executed functionally (sampled run): {}; in detail: ",
                    stop.live_warps()
                )
            });
            return Err(SimError::Stopped {
                kernel: info.name.clone(),
                cycle: end.get(),
                reason,
                warps,
                stats: Box::new(stats),
                functional,
            });
        }
        if let (Some(sampler), Some((bbv, cta_instructions))) = (&mut self.sampler, recorded) {
            let run = sampling::DetailedRun {
                plan,
                placed,
                cta_instructions,
                rest,
            };
            let relative_bound = sampling::finish_detailed(&mut stats, &run);
            let index = self.kernels.len() - 1;
            let cluster = sampler.add_detailed(key, bbv, index, &mut stats, relative_bound);
            if let Some(s) = &mut stats.sampling {
                s.cluster = cluster;
            }
            self.kernels[index] = stats.clone();
        }
        Ok(stats)
    }

    /// Ends the kernel `begun` at cycle `end` (inclusive): its statistics, also appended
    /// to [`TimingSimulator::kernels`]; the clock moves to the cycle after `end`.
    fn finish_kernel(&mut self, begun: KernelBegun, end: Cycle) -> KernelStats {
        let KernelBegun {
            name,
            launch_config,
            start,
            wall,
            occupancy: mut occ,
            mem_before,
            rf_before,
            rf_events_before,
        } = begun;
        for sm in &mut self.sms {
            sm.finish_kernel(end);
        }
        let n = self.sms.len();
        self.now = end + Cycles::new(1);
        let cycles = (end - start).get() + 1;
        let mut warp_instructions = 0;
        let mut thread_instructions = 0;
        let mut stalls = StallBreakdown::default();
        let mut warp_cycles = 0u64;
        let mut lanes_by_class = [0u64; crate::config::OpClass::COARSE];
        let mut l0 = crate::stats::L0IcacheStats::default();
        let mut constant = crate::stats::ConstantOperandStats::default();
        for sm in &self.sms {
            l0.accumulate(&sm.stats.l0_icache);
            constant.accumulate(&sm.stats.constant_operands);
            // Execution energy: lanes that reached an execution unit.
            for ((t, s), b) in lanes_by_class
                .iter_mut()
                .zip(&sm.stats.thread_instructions_by_class)
                .zip(&sm.stats.bypassed_lanes_by_class)
            {
                *t += s - b;
            }
            warp_instructions += sm.stats.warp_instructions;
            thread_instructions += sm.stats.thread_instructions;
            stalls.accumulate(&sm.stats.stalls);
            warp_cycles += sm.stats.resident_warp_cycles;
            occ.peak_warps_per_sm = occ.peak_warps_per_sm.max(sm.stats.peak_resident_warps);
        }
        occ.achieved_warps_per_sm = warp_cycles as f64 / (cycles as f64 * n as f64);
        occ.achieved_occupancy = occ.achieved_warps_per_sm / f64::from(self.cfg.sm.max_warps);
        let memory = memory_since(&self.memory.stats(), &mem_before);
        let mut energy_events =
            energy_events_since(&self.register_file_energy_events(), &rf_events_before);
        let mut memory_events = memory_energy_events(&memory);
        if self.cfg.register_file.design == crate::config::RegisterFileDesign::Cerf {
            // CERF's L1D is its integrated array, whose data and tag accesses the design
            // reports itself (`cerf_data`, `cerf_tag`): pricing them as L1D accesses too
            // would count them twice.
            memory_events.retain(|e| e.structure != "l1d");
        }
        merge_energy_events(&mut energy_events, &memory_events);
        merge_energy_events(
            &mut energy_events,
            &execution_energy_events(&lanes_by_class),
        );
        let wall_seconds = wall.elapsed().as_secs_f64();
        self.wall_seconds += wall_seconds;
        let stats = KernelStats {
            name,
            grid: launch_config.grid,
            block: launch_config.block,
            start_cycle: start.get(),
            cycles,
            warp_instructions,
            thread_instructions,
            ipc: ipc(warp_instructions, cycles),
            complete: true,
            occupancy: occ,
            stalls,
            register_file: self.rf_stats().since(&rf_before),
            memory,
            l0_icache: (self.cfg.sm.core == crate::config::Core::Modern).then_some(l0),
            constant_operands: self.cfg.sm.constant_operands.then_some(constant),
            energy_events,
            simulation: SimulationStats {
                wall_seconds,
                warp_instructions_per_second: rate(warp_instructions, wall_seconds),
            },
            sampling: None,
        };
        self.kernels.push(stats.clone());
        stats
    }
}

/// How the main loop of a kernel ended.
/// Windows run and where their SMs stopped, for `REGSIM_WINDOW_STATS` (a diagnostic on
/// standard error: host work, not a statistic).
#[derive(Default)]
struct WindowCounts {
    windows: u64,
    sm_windows: u64,
    shared_stops: u64,
    retire_stops: u64,
    live: u64,
}

impl WindowCounts {
    fn count(&mut self, steps: &[crate::sm::WindowStep], (t, end): (Cycle, Cycle)) {
        self.windows += 1;
        for s in steps {
            self.sm_windows += 1;
            if s.shared_at.is_some() {
                self.shared_stops += 1;
            } else if s.live_from == t {
                self.live += 1;
            } else if s.live_from < end {
                self.retire_stops += 1;
            }
        }
    }

    fn report(&self, kernel: &str) {
        if self.windows > 0 && std::env::var_os("REGSIM_WINDOW_STATS").is_some() {
            eprintln!(
                "windows {kernel}: {} windows, {} SM windows, {} stopped at a shared part, \
                 {} at a retire, {} live",
                self.windows, self.sm_windows, self.shared_stops, self.retire_stops, self.live
            );
        }
    }
}

enum KernelEnd {
    /// The last CTA retired in this cycle.
    Done(Cycle),
    /// A run limit stopped the kernel after this cycle.
    Stopped(Cycle, StopReason),
}

/// What a kernel's statistics are measured against: its start and the counters before it.
struct KernelBegun {
    name: String,
    launch_config: LaunchConfig,
    start: Cycle,
    wall: Instant,
    occupancy: crate::stats::OccupancyStats,
    mem_before: crate::memory::MemoryStats,
    rf_before: RfStats,
    rf_events_before: Vec<EnergyEvent>,
}

/// Every live warp of `sms` and what it waits for.
/// Hands every SM the completions and unblocks its own memory events reported, SM by SM
/// (each changes only its SM), and updates its wake-up time; `true` if there were any.
fn deliver_reports(memory: &mut MemorySystem, sms: &mut [Sm], wake: &mut WakeTimes) -> bool {
    let mut any = false;
    while let Some((sm, reports)) = memory.take_reports() {
        let Some(s) = sms.get_mut(sm) else {
            continue;
        };
        for c in reports.done {
            any = true;
            if let Some(owner) = s.take_owner(c.id) {
                s.memory_done(owner, c.at);
            }
        }
        for at in reports.unblocked {
            any = true;
            s.memory_unblocked(at);
        }
        wake.set(sm, s.next_wake);
    }
    any
}

fn warp_states(sms: &[Sm], launch: &emu::Launch<'_>) -> WarpStates {
    WarpStates(
        sms.iter()
            .flat_map(|s| s.warp_states(|f, i| launch.inst_line(f, i)))
            .collect(),
    )
}

fn rate(n: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        n as f64 / seconds
    } else {
        0.0
    }
}

/// The SMs' wake-up times with the earliest of each group of [`WakeTimes::GROUP`]
/// consecutive SMs, so that finding the earliest and the due SMs reads a few group minima
/// and the members of due groups, not every SM.
struct WakeTimes {
    /// The SMs' times, then `Cycle::NEVER` up to a whole number of groups (so that a
    /// group's minimum is taken over a fixed-size array, unrolled).
    at: Vec<Cycle>,
    /// SMs.
    n: usize,
    group_min: Vec<Cycle>,
}

impl WakeTimes {
    const GROUP: usize = 8;

    fn new(mut at: Vec<Cycle>) -> Self {
        let n = at.len();
        at.resize(n.div_ceil(Self::GROUP) * Self::GROUP, Cycle::NEVER);
        let group_min = at
            .chunks(Self::GROUP)
            .map(|g| g.iter().copied().min().unwrap_or(Cycle::NEVER))
            .collect();
        Self { at, n, group_min }
    }

    /// The SMs' wake-up times.
    fn times(&self) -> &[Cycle] {
        &self.at[..self.n]
    }

    fn set(&mut self, i: usize, t: Cycle) {
        let old = std::mem::replace(&mut self.at[i], t);
        let g = i / Self::GROUP;
        if t <= self.group_min[g] {
            self.group_min[g] = t;
            return;
        }
        if old > self.group_min[g] {
            // Neither the old time nor the new one is the group's minimum.
            return;
        }
        let start = g * Self::GROUP;
        let group: &[Cycle; Self::GROUP] = self.at[start..start + Self::GROUP]
            .try_into()
            .expect("`at` holds whole groups");
        let mut min = group[0];
        for &x in &group[1..] {
            min = min.min(x);
        }
        self.group_min[g] = min;
    }

    /// The earliest wake-up time (`Cycle::NEVER` if none).
    fn earliest(&self) -> Cycle {
        self.group_min.iter().copied().min().unwrap_or(Cycle::NEVER)
    }

    /// The first SM at or after `from` due at `now`.
    fn next_due(&self, from: usize, now: Cycle) -> Option<usize> {
        let mut i = from;
        while i < self.n {
            let g = i / Self::GROUP;
            if self.group_min[g] > now {
                i = (g + 1) * Self::GROUP;
                continue;
            }
            if self.at[i] <= now {
                return Some(i);
            }
            i += 1;
        }
        None
    }
}

#[cfg(test)]
mod wake_tests {
    use super::*;

    #[test]
    fn due_sms_in_order_and_the_earliest_across_groups() {
        let c = Cycle::new;
        let mut w = WakeTimes::new((0..20).map(|i| c(100 + i)).collect());
        assert_eq!(w.earliest(), c(100));
        assert_eq!(w.next_due(0, c(99)), None);
        w.set(3, c(50));
        w.set(17, c(50));
        assert_eq!(w.earliest(), c(50));
        assert_eq!(w.next_due(0, c(60)), Some(3));
        assert_eq!(w.next_due(4, c(60)), Some(17));
        assert_eq!(w.next_due(18, c(60)), None);
        assert_eq!(w.next_due(0, c(101)), Some(0));
        w.set(3, Cycle::NEVER);
        w.set(17, c(200));
        assert_eq!(w.earliest(), c(100));
        assert_eq!(w.next_due(8, c(110)), Some(8));
    }

    #[test]
    fn group_minima_stay_those_of_the_times() {
        let mut w = WakeTimes::new((0..21).map(|i| Cycle::new(50 + i % 5)).collect());
        let mut x = 0x9e37_79b9u64;
        for _ in 0..5000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let t = if x.is_multiple_of(7) {
                Cycle::NEVER
            } else {
                Cycle::new(x % 40)
            };
            w.set((x >> 20) as usize % 21, t);
            for (g, chunk) in w.at.chunks(WakeTimes::GROUP).enumerate() {
                assert_eq!(w.group_min[g], chunk.iter().copied().min().unwrap());
            }
        }
    }
}

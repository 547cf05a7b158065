//! Statistics of a timing simulation (issue 4 §3): per kernel and in total, serde
//! serialisable and deterministic (no wall-clock figure outside [`SimulationStats`]).
//!
//! Stall cycles are counted per *scheduler-cycle*: every cycle of every warp scheduler of
//! every SM is either an issue cycle or exactly one stall reason ([`StallReason`]), so the
//! breakdown sums to `cycles x num_sms x schedulers`. When several warps stall for
//! different reasons, the cycle goes to the warp that got furthest (a refused operand
//! collection outranks a scoreboard wait, which outranks an empty instruction buffer, which
//! outranks a barrier).

use serde::Serialize;

use crate::memory::MemoryStats;
use crate::rf::{EnergyEvent, RfStats};

/// Why a warp scheduler did not issue in a cycle, from the least to the most advanced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StallReason {
    /// No resident warp (or only drained ones).
    Idle,
    /// Every live warp waits at a barrier.
    Barrier,
    /// The best warp waits at the cluster barrier (`barrier.cluster.wait`) for the other
    /// CTAs of its thread-block cluster.
    ClusterBarrier,
    /// No warp has a decoded instruction (instruction fetch or buffer refill).
    NoReadyWarp,
    /// The best warp waits for a register written by a long-latency memory operation.
    Memory,
    /// The best warp waits for a register written by a short-latency operation.
    Scoreboard,
    /// The best warp's next instruction is a memory instruction and its sub-core's
    /// memory-instruction buffer is full (the modern core's `sm.memory_buffer`).
    MemoryBuffer,
    /// The register-file design refused for a design-specific reason (LTRF working set
    /// not resident, Malekeh stall threshold).
    RegisterFile,
    /// No free operand collector unit.
    NoFreeCollector,
    /// No free collector unit, and the occupied ones wait on bank conflicts.
    BankConflict,
    /// No free collector unit, and the occupied ones wait for a busy execution unit.
    PipelineBusy,
    /// The best warp waits in `wgmma.wait_group` for its warpgroup matrix products.
    TensorWait,
}

impl StallReason {
    /// Every reason, in order.
    pub const ALL: [StallReason; 12] = [
        StallReason::Idle,
        StallReason::Barrier,
        StallReason::ClusterBarrier,
        StallReason::NoReadyWarp,
        StallReason::Memory,
        StallReason::Scoreboard,
        StallReason::MemoryBuffer,
        StallReason::RegisterFile,
        StallReason::NoFreeCollector,
        StallReason::BankConflict,
        StallReason::PipelineBusy,
        StallReason::TensorWait,
    ];
}

/// Scheduler-cycles by outcome.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct StallBreakdown {
    /// Cycles a scheduler issued at least one instruction.
    pub issued: u64,
    /// See [`StallReason::NoReadyWarp`].
    pub no_ready_warp: u64,
    /// See [`StallReason::Scoreboard`].
    pub scoreboard: u64,
    /// See [`StallReason::NoFreeCollector`].
    pub no_free_collector: u64,
    /// See [`StallReason::BankConflict`].
    pub bank_conflict: u64,
    /// See [`StallReason::PipelineBusy`].
    pub pipeline_busy: u64,
    /// See [`StallReason::Memory`].
    pub memory: u64,
    /// See [`StallReason::Barrier`].
    pub barrier: u64,
    /// See [`StallReason::RegisterFile`].
    pub register_file: u64,
    /// See [`StallReason::Idle`].
    pub idle: u64,
    /// See [`StallReason::MemoryBuffer`] (absent from the stats file when zero, as on
    /// configs without the buffer).
    #[serde(skip_serializing_if = "is_zero_u64")]
    pub memory_buffer: u64,
    /// See [`StallReason::TensorWait`] (absent from the stats file when zero).
    #[serde(skip_serializing_if = "is_zero_u64")]
    pub tensor_wait: u64,
    /// See [`StallReason::ClusterBarrier`] (absent from the stats file when zero).
    #[serde(skip_serializing_if = "is_zero_u64")]
    pub cluster_barrier: u64,
}

fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}

impl StallBreakdown {
    /// Adds `n` cycles of `reason`.
    #[inline]
    pub fn add(&mut self, reason: StallReason, n: u64) {
        let slot = match reason {
            StallReason::Idle => &mut self.idle,
            StallReason::Barrier => &mut self.barrier,
            StallReason::ClusterBarrier => &mut self.cluster_barrier,
            StallReason::NoReadyWarp => &mut self.no_ready_warp,
            StallReason::Memory => &mut self.memory,
            StallReason::Scoreboard => &mut self.scoreboard,
            StallReason::MemoryBuffer => &mut self.memory_buffer,
            StallReason::RegisterFile => &mut self.register_file,
            StallReason::NoFreeCollector => &mut self.no_free_collector,
            StallReason::BankConflict => &mut self.bank_conflict,
            StallReason::PipelineBusy => &mut self.pipeline_busy,
            StallReason::TensorWait => &mut self.tensor_wait,
        };
        *slot += n;
    }

    /// Cycles of `reason`.
    pub fn get(&self, reason: StallReason) -> u64 {
        match reason {
            StallReason::Idle => self.idle,
            StallReason::Barrier => self.barrier,
            StallReason::ClusterBarrier => self.cluster_barrier,
            StallReason::NoReadyWarp => self.no_ready_warp,
            StallReason::Memory => self.memory,
            StallReason::Scoreboard => self.scoreboard,
            StallReason::MemoryBuffer => self.memory_buffer,
            StallReason::RegisterFile => self.register_file,
            StallReason::NoFreeCollector => self.no_free_collector,
            StallReason::BankConflict => self.bank_conflict,
            StallReason::PipelineBusy => self.pipeline_busy,
            StallReason::TensorWait => self.tensor_wait,
        }
    }

    /// All scheduler-cycles (issued plus every stall).
    pub fn total(&self) -> u64 {
        self.issued + StallReason::ALL.iter().map(|&r| self.get(r)).sum::<u64>()
    }

    /// Adds `o`.
    pub fn accumulate(&mut self, o: &StallBreakdown) {
        self.issued += o.issued;
        for r in StallReason::ALL {
            self.add(r, o.get(r));
        }
    }
}

/// The resource that limits how many CTAs of a kernel fit on one SM.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Limiter {
    /// `sm.max_threads`.
    Threads,
    /// `sm.max_warps`.
    Warps,
    /// `sm.max_ctas`.
    Ctas,
    /// `sm.shared_memory_bytes`.
    SharedMemory,
    /// The register file capacity.
    Registers,
}

impl Limiter {
    /// The config key of the limiting resource.
    pub fn config_key(self) -> &'static str {
        match self {
            Limiter::Threads => "sm.max_threads",
            Limiter::Warps => "sm.max_warps",
            Limiter::Ctas => "sm.max_ctas",
            Limiter::SharedMemory => "sm.shared_memory_bytes",
            Limiter::Registers => "sm.registers",
        }
    }
}

/// Occupancy of one kernel.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OccupancyStats {
    /// CTAs per SM allowed by each resource (`None`: that resource does not limit).
    pub ctas_by_threads: u32,
    /// By warps.
    pub ctas_by_warps: u32,
    /// By the CTA limit.
    pub ctas_by_ctas: u32,
    /// By shared memory (`u32::MAX` when the kernel uses none).
    pub ctas_by_shared_memory: u32,
    /// By registers (`u32::MAX` when unlimited).
    pub ctas_by_registers: u32,
    /// The minimum: resident CTAs per SM at most.
    pub ctas_per_sm: u32,
    /// Warps per CTA.
    pub warps_per_cta: u32,
    /// Theoretical resident warps per SM (`ctas_per_sm x warps_per_cta`).
    pub theoretical_warps_per_sm: u32,
    /// The resource that sets `ctas_per_sm` (the first in declaration order on a tie).
    pub limited_by: Limiter,
    /// Registers per thread of the kernel.
    pub registers_per_thread: u32,
    /// Registers one warp is allocated (rounded to `sm.register_allocation_unit`).
    pub registers_per_warp: u32,
    /// Shared memory per CTA in bytes (static + dynamic).
    pub shared_bytes_per_cta: u64,
    /// The most warps resident on one SM at any time.
    pub peak_warps_per_sm: u32,
    /// Resident warps per SM per cycle, averaged over the kernel's cycles and all SMs.
    pub achieved_warps_per_sm: f64,
    /// `achieved_warps_per_sm / sm.max_warps`.
    pub achieved_occupancy: f64,
    /// Values the kernel's allocation spilled to local memory (absent: none).
    #[serde(skip_serializing_if = "is_zero")]
    pub spill_slots: u32,
    /// Compiled for a budget other than the architecture's limit
    /// (`compiler.max_registers_per_thread`): the same kernel under the architecture's
    /// limit, before the recompilation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before_budget: Option<BeforeBudget>,
}

fn is_zero(x: &u32) -> bool {
    *x == 0
}

/// A kernel under the architecture's register limit, beside its run under a budget.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BeforeBudget {
    /// The budget the kernel ran under.
    pub budget: u32,
    /// The architecture's limit it is compared with.
    pub architecture_limit: u32,
    /// Registers per thread under that limit.
    pub registers_per_thread: u32,
    /// Values spilled under that limit.
    pub spill_slots: u32,
    /// Resident CTAs per SM under that limit.
    pub ctas_per_sm: u32,
    /// Theoretical resident warps per SM under that limit.
    pub theoretical_warps_per_sm: u32,
}

/// Wall-clock figures (the only non-deterministic part of a report).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct SimulationStats {
    /// Seconds spent simulating.
    pub wall_seconds: f64,
    /// Simulated warp instructions per wall-clock second.
    pub warp_instructions_per_second: f64,
}

fn is_true(b: &bool) -> bool {
    *b
}

/// The modern core's L0 instruction caches (`sm.core = "modern"`, one per sub-core),
/// summed over sub-cores and SMs: fetches that hit and missed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct L0IcacheStats {
    /// Fetches whose line was in the sub-core's L0.
    pub hits: u64,
    /// Fetches that found their line neither in the L0 nor in its stream buffer and went
    /// to the SM's instruction cache.
    pub misses: u64,
    /// Lines the stream buffers requested (`sm.l0_stream_buffer`).
    pub prefetches: u64,
    /// Fetches that missed the L0 and took their line from the stream buffer.
    pub useful_prefetches: u64,
}

impl L0IcacheStats {
    /// Adds `other`'s counts.
    pub fn accumulate(&mut self, other: &L0IcacheStats) {
        self.hits += other.hits;
        self.misses += other.misses;
        self.prefetches += other.prefetches;
        self.useful_prefetches += other.useful_prefetches;
    }
}

/// Constant-bank operands (`sm.constant_operands`), summed over SMs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ConstantOperandStats {
    /// Warp-level `ld.param`/`ld.const` executions folded into their consumers'
    /// constant operands: executed, not issued, and not counted in `warp_instructions`.
    pub folded_loads: u64,
    /// Issued warp instructions that read a constant operand.
    pub operands: u64,
}

impl ConstantOperandStats {
    /// Adds `other`'s counts.
    pub fn accumulate(&mut self, other: &ConstantOperandStats) {
        self.folded_loads += other.folded_loads;
        self.operands += other.operands;
    }
}

/// One kernel launch.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KernelStats {
    /// The kernel's (mangled) name.
    pub name: String,
    /// Grid dimensions.
    pub grid: [u32; 3],
    /// CTA dimensions.
    pub block: [u32; 3],
    /// The cycle the launch started at (cycles are counted over the whole simulation).
    pub start_cycle: u64,
    /// Core cycles from launch to the retirement of the last CTA.
    pub cycles: u64,
    /// Warp instructions issued.
    pub warp_instructions: u64,
    /// Thread instructions (active lanes of each warp instruction) executed.
    pub thread_instructions: u64,
    /// Warp instructions per cycle, whole GPU.
    pub ipc: f64,
    /// False when a run limit stopped the kernel before its last CTA retired (the
    /// figures are up to the stop); serialized only then, as `"complete": false`.
    #[serde(skip_serializing_if = "is_true")]
    pub complete: bool,
    /// Occupancy: theoretical and achieved.
    pub occupancy: OccupancyStats,
    /// Scheduler-cycles by outcome.
    pub stalls: StallBreakdown,
    /// Register file counters, summed over SMs.
    pub register_file: RfStats,
    /// Memory hierarchy counters during the kernel.
    pub memory: MemoryStats,
    /// The modern core's L0 instruction caches; absent on the collector core.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub l0_icache: Option<L0IcacheStats>,
    /// Constant-bank operands; absent without `sm.constant_operands`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub constant_operands: Option<ConstantOperandStats>,
    /// Energy-relevant event counts of the kernel (register-file design events, memory
    /// accesses, active lanes per opcode class), sorted; the energy crate prices them.
    pub energy_events: Vec<EnergyEvent>,
    /// Wall-clock figures of this kernel.
    pub simulation: SimulationStats,
    /// Under sampled simulation: what was simulated in detail, the estimate and its
    /// bound ([`crate::sampling`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sampling: Option<crate::sampling::KernelSample>,
}

/// Totals over all simulated kernels.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TotalStats {
    /// Kernels simulated.
    pub kernels: u64,
    /// Sum of the kernels' cycles.
    pub cycles: u64,
    /// Warp instructions.
    pub warp_instructions: u64,
    /// Thread instructions.
    pub thread_instructions: u64,
    /// `warp_instructions / cycles`.
    pub ipc: f64,
    /// Scheduler-cycles by outcome.
    pub stalls: StallBreakdown,
    /// Register file counters.
    pub register_file: RfStats,
    /// Memory hierarchy counters.
    pub memory: MemoryStats,
    /// The modern core's L0 instruction caches, summed over kernels; absent on the
    /// collector core.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub l0_icache: Option<L0IcacheStats>,
    /// Constant-bank operands, summed over kernels; absent without
    /// `sm.constant_operands`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub constant_operands: Option<ConstantOperandStats>,
    /// Energy-relevant event counts, summed over kernels.
    pub energy_events: Vec<EnergyEvent>,
    /// Under sampled simulation: the launches sampled, the estimate and its bound.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sampling: Option<crate::sampling::TotalSample>,
}

/// Everything a run reports: the JSON `--stats` document.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    /// Per kernel launch, in launch order.
    pub kernels: Vec<KernelStats>,
    /// Totals.
    pub total: TotalStats,
    /// Wall-clock figures of the whole run.
    pub simulation: SimulationStats,
}

/// Adds `add` into `into` (by structure and access kind), keeping `into` sorted.
pub fn merge_energy_events(into: &mut Vec<EnergyEvent>, add: &[EnergyEvent]) {
    for e in add {
        match into
            .iter_mut()
            .find(|a| a.structure == e.structure && a.access == e.access)
        {
            Some(a) => a.count += e.count,
            None => into.push(e.clone()),
        }
    }
    into.sort_by(|a, b| (a.structure, a.access).cmp(&(b.structure, b.access)));
}

/// `after - before` by structure and access kind (kinds absent before count from 0).
pub fn energy_events_since(after: &[EnergyEvent], before: &[EnergyEvent]) -> Vec<EnergyEvent> {
    after
        .iter()
        .map(|e| {
            let b = before
                .iter()
                .find(|b| b.structure == e.structure && b.access == e.access)
                .map_or(0, |b| b.count);
            EnergyEvent {
                count: e.count.saturating_sub(b),
                ..e.clone()
            }
        })
        .collect()
}

/// The memory hierarchy's energy events: L1D and L2 accesses, shared-memory passes, DRAM
/// bytes (the constant and instruction caches are not priced).
pub fn memory_energy_events(m: &MemoryStats) -> Vec<EnergyEvent> {
    let e = |structure, access, count| EnergyEvent {
        structure,
        access,
        count,
    };
    vec![
        e("l1d", "read", m.l1d.reads),
        e("l1d", "write", m.l1d.writes),
        e("l2", "read", m.l2.reads),
        e("l2", "write", m.l2.writes),
        // An atomic's write pass takes the banks as a read pass does.
        e(
            "shared_memory",
            "access",
            m.shared_memory.passes + m.shared_memory.atomic_write_passes,
        ),
        e("dram", "read_byte", m.dram.read_bytes),
        e("dram", "write_byte", m.dram.write_bytes),
    ]
}

/// Execution energy events: active lanes per coarse opcode class (`OpClass::coarse() as
/// usize` order) that reached an execution unit (instructions a design bypassed are not
/// counted).
pub fn execution_energy_events(
    lanes_by_class: &[u64; crate::config::OpClass::COARSE],
) -> Vec<EnergyEvent> {
    const CLASSES: [&str; 8] = [
        "fp32", "int", "int_mul", "int_div", "sfu", "fp64", "mem", "control",
    ];
    CLASSES
        .iter()
        .zip(lanes_by_class)
        .map(|(&access, &count)| EnergyEvent {
            structure: "execute",
            access,
            count,
        })
        .collect()
}

/// Warp instructions per cycle; 0 for no cycles.
pub fn ipc(warp_instructions: u64, cycles: u64) -> f64 {
    if cycles == 0 {
        0.0
    } else {
        warp_instructions as f64 / cycles as f64
    }
}

/// `total += k`, counter by counter.
pub fn memory_add(total: &mut MemoryStats, k: &MemoryStats) {
    total.l1d += k.l1d;
    total.constant_cache += k.constant_cache;
    total.icache += k.icache;
    total.texture_cache += k.texture_cache;
    total.l2 += k.l2;
    total.shared_memory += k.shared_memory;
    total.dram += k.dram;
    let (t, k) = (&mut total.interconnect, &k.interconnect);
    t.packets_to_l2 += k.packets_to_l2;
    t.bytes_to_l2 += k.bytes_to_l2;
    t.packets_to_sm += k.packets_to_sm;
    t.bytes_to_sm += k.bytes_to_sm;
    t.queue_cycles += k.queue_cycles;
}

/// `after - before`, counter by counter, for per-kernel memory figures.
pub fn memory_since(after: &MemoryStats, before: &MemoryStats) -> MemoryStats {
    macro_rules! sub {
        ($d:expr, $a:expr, $b:expr; $($f:ident),+) => {
            $( $d.$f = $a.$f.saturating_sub($b.$f); )+
        };
    }
    let (a, b) = (after, before);
    let mut d = *after;
    sub!(d.l1d, a.l1d, b.l1d; reads, writes, hits, misses, sector_misses, mshr_merges,
         reservation_fails, evictions, writebacks, sectors_fetched,
         sector_accesses, sector_access_misses, sector_pending_hits);
    sub!(d.constant_cache, a.constant_cache, b.constant_cache; reads, writes, hits, misses,
         sector_misses, mshr_merges, reservation_fails, evictions, writebacks, sectors_fetched,
         sector_accesses, sector_access_misses, sector_pending_hits);
    sub!(d.icache, a.icache, b.icache; reads, writes, hits, misses, sector_misses,
         mshr_merges, reservation_fails, evictions, writebacks, sectors_fetched,
         sector_accesses, sector_access_misses, sector_pending_hits);
    sub!(d.l2, a.l2, b.l2; reads, writes, hits, misses, sector_misses, mshr_merges,
         reservation_fails, evictions, writebacks, sectors_fetched,
         sector_accesses, sector_access_misses, sector_pending_hits);
    d.texture_cache = a.texture_cache.since(&b.texture_cache);
    d.l1d_reservation_fail_cycles = a
        .l1d_reservation_fail_cycles
        .since(&b.l1d_reservation_fail_cycles);
    d.fill_ports = a.fill_ports.since(&b.fill_ports);
    sub!(d.shared_memory, a.shared_memory, b.shared_memory; accesses, passes, bank_conflicts,
         tensor_passes);
    sub!(d.interconnect, a.interconnect, b.interconnect; packets_to_l2, bytes_to_l2,
         packets_to_sm, bytes_to_sm, queue_cycles);
    sub!(d.dram, a.dram, b.dram; reads, writes, read_bytes, write_bytes, row_hits, row_misses,
         queue_cycles);
    d
}

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

fn write_common(
    f: &mut std::fmt::Formatter<'_>,
    cycles: u64,
    stalls: &StallBreakdown,
    rf: &RfStats,
    m: &MemoryStats,
) -> std::fmt::Result {
    let total = stalls.total();
    write!(
        f,
        "  scheduler cycles: issued {:.1}%",
        pct(stalls.issued, total)
    )?;
    for r in StallReason::ALL.iter().rev() {
        let n = stalls.get(*r);
        if n > 0 {
            let name = serde_plain_name(*r);
            write!(f, ", {name} {:.1}%", pct(n, total))?;
        }
    }
    writeln!(f)?;
    let busy = if cycles == 0 {
        0.0
    } else {
        rf.collector_busy_cycles as f64 / cycles as f64
    };
    writeln!(
        f,
        "  register file ({}): {} reads, {} writes, {} read and {} write bank conflicts, \
         {:.2} collectors busy on average (summed over SMs)",
        rf.design, rf.reads, rf.writes, rf.read_bank_conflicts, rf.write_bank_conflicts, busy
    )?;
    let cache = |name: &str, c: &crate::memory::cache::CacheStats| {
        format!(
            "{name} {} reads {} writes {} hits {} misses {} merges",
            c.reads, c.writes, c.hits, c.misses, c.mshr_merges
        )
    };
    writeln!(f, "  {}; {}", cache("L1D", &m.l1d), cache("L2", &m.l2))?;
    writeln!(
        f,
        "  shared memory {} accesses {} bank conflicts; DRAM {} reads {} writes ({} B / {} B)",
        m.shared_memory.accesses,
        m.shared_memory.bank_conflicts,
        m.dram.reads,
        m.dram.writes,
        m.dram.read_bytes,
        m.dram.write_bytes
    )
}

fn serde_plain_name(r: StallReason) -> &'static str {
    match r {
        StallReason::Idle => "idle",
        StallReason::Barrier => "barrier",
        StallReason::ClusterBarrier => "cluster_barrier",
        StallReason::NoReadyWarp => "no_ready_warp",
        StallReason::Memory => "memory",
        StallReason::Scoreboard => "scoreboard",
        StallReason::MemoryBuffer => "memory_buffer",
        StallReason::RegisterFile => "register_file",
        StallReason::NoFreeCollector => "no_free_collector",
        StallReason::BankConflict => "bank_conflict",
        StallReason::PipelineBusy => "pipeline_busy",
        StallReason::TensorWait => "tensor_wait",
    }
}

/// The readable per-kernel summary.
impl std::fmt::Display for KernelStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let o = &self.occupancy;
        writeln!(
            f,
            "{} grid {:?} block {:?}: {} cycles, {} warp instructions ({} thread), IPC {:.3}",
            self.name,
            self.grid,
            self.block,
            self.cycles,
            self.warp_instructions,
            self.thread_instructions,
            self.ipc
        )?;
        writeln!(
            f,
            "  occupancy: {} CTAs = {} warps per SM (limited by {:?}; {} registers per \
             thread), achieved {:.1} warps per SM ({:.1}%), peak {}",
            o.ctas_per_sm,
            o.theoretical_warps_per_sm,
            o.limited_by,
            o.registers_per_thread,
            o.achieved_warps_per_sm,
            100.0 * o.achieved_occupancy,
            o.peak_warps_per_sm
        )?;
        write_common(
            f,
            self.cycles,
            &self.stalls,
            &self.register_file,
            &self.memory,
        )
    }
}

/// The readable summary of all kernels.
impl std::fmt::Display for TotalStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "total: {} kernels, {} cycles, {} warp instructions ({} thread), IPC {:.3}",
            self.kernels, self.cycles, self.warp_instructions, self.thread_instructions, self.ipc
        )?;
        write_common(
            f,
            self.cycles,
            &self.stalls,
            &self.register_file,
            &self.memory,
        )
    }
}

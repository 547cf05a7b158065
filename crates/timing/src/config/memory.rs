//! The memory system's parameters: the memory model preset, caches (L1D, constant,
//! instruction, L2 slices), shared memory, the interconnect, the L2 and DRAM.

use super::*;
use crate::memory::hashing::IndexFunction;
use crate::time::{Cycles, MemCycles};
use serde::{Deserialize, Serialize};

/// `[memory]`: the memory-system model a config selects.
///
/// A config describes its GPU's memory mechanisms (set-index hashing, line or sector
/// fetch, DRAM address mapping, L1 invalidation between kernels, ...) with the ordinary
/// keys. Where the papers it reproduces simulated a simpler memory system, the config
/// lists those simplifications in `paper` as `key=value` settings (the syntax of
/// `--set`), and `model = "paper"` applies them when the config is loaded, before the
/// user's own `--set`s, which keep the last word.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryModelConfig {
    /// `hardware` (default): the keys as written; `paper`: with `paper` applied.
    #[serde(default)]
    pub model: MemoryModel,
    /// The papers' simplifications, `key=value` each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paper: Vec<String>,
    /// How thread-local memory is laid out in the simulated address space (default
    /// `warp_slot`).
    #[serde(default, skip_serializing_if = "LocalInterleave::is_warp_slot")]
    pub local_interleave: LocalInterleave,
}

/// Layout of thread-local memory; both interleave the threads of a warp word by word,
/// so lanes reading the same local variable coalesce into one line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LocalInterleave {
    /// Each warp slot of the GPU owns one contiguous region of the kernel's local bytes
    /// per thread times 32 lanes; consecutive slots are adjacent.
    #[default]
    WarpSlot,
    /// Word `d` of every thread the GPU can hold for the kernel forms one contiguous row
    /// (the threads of a CTA in order, a CTA slot's CTAs on successive SMs, then the next
    /// slot's), and row `d + 1` follows: GPGPU-Sim's local memory translation
    /// (`-gpgpu_local_mem_map`, on by default).
    Gpu,
}

impl LocalInterleave {
    fn is_warp_slot(&self) -> bool {
        *self == LocalInterleave::WarpSlot
    }
}

impl MemoryModelConfig {
    pub(super) fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

/// See [`MemoryModelConfig`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryModel {
    /// The GPU's own mechanisms, as the config's keys say.
    #[default]
    Hardware,
    /// The papers' simplified memory system (`memory.paper` applied).
    Paper,
}

/// One of `memory.paper`'s settings: `key=value` (as `--set`), or `unset key` (the key
/// removed, so that its default applies: e.g. no `dram.address_mapping`).
pub(super) enum PaperSetting {
    Set(Override),
    Unset(Vec<String>),
}

impl PaperSetting {
    pub(super) fn apply(&self, doc: &mut toml::Table) -> Result<(), ConfigError> {
        match self {
            PaperSetting::Set(o) => o.apply(doc),
            PaperSetting::Unset(path) => {
                let Some((last, parents)) = path.split_last() else {
                    return Ok(());
                };
                let mut table = doc;
                for part in parents {
                    match table.get_mut(part) {
                        Some(toml::Value::Table(t)) => table = t,
                        _ => return Ok(()),
                    }
                }
                table.remove(last);
                Ok(())
            }
        }
    }
}

/// With `memory.model = "paper"` in `doc`, the `memory.paper` settings, parsed; else none.
/// A malformed list or entry is an error naming `memory.paper` in `origin`.
pub(super) fn paper_memory_settings(
    doc: &toml::Table,
    origin: &str,
) -> Result<Vec<PaperSetting>, ConfigError> {
    let Some(memory) = doc.get("memory").and_then(toml::Value::as_table) else {
        return Ok(Vec::new());
    };
    if memory.get("model").and_then(toml::Value::as_str) != Some("paper") {
        return Ok(Vec::new());
    }
    preset_settings(
        memory.get("paper"),
        origin,
        "memory.paper",
        "memory.model = \"paper\" needs the list of the papers' settings here",
        &[&["memory"]],
        "may not set the memory model itself",
    )
}

/// `sm.collector`'s settings when the document selects `sm.core = "collector"` (none
/// when it selects the modern core or has no such list).
pub(super) fn collector_core_settings(
    doc: &toml::Table,
    origin: &str,
) -> Result<Vec<PaperSetting>, ConfigError> {
    let Some(sm) = doc.get("sm").and_then(toml::Value::as_table) else {
        return Ok(Vec::new());
    };
    let collector = sm
        .get("core")
        .and_then(toml::Value::as_str)
        .is_none_or(|c| c == "collector");
    match sm.get("collector") {
        Some(list) if collector => preset_settings(
            Some(list),
            origin,
            "sm.collector",
            "",
            &[&["sm", "core"], &["sm", "collector"]],
            "may not set the core or the preset itself",
        ),
        _ => Ok(Vec::new()),
    }
}

/// Parses a preset's list of `key=value` / `unset key` strings (config key `key`);
/// a setting whose key path starts with one of `forbidden` is refused with `why`.
fn preset_settings(
    list: Option<&toml::Value>,
    origin: &str,
    key: &str,
    missing: &str,
    forbidden: &[&[&str]],
    why: &str,
) -> Result<Vec<PaperSetting>, ConfigError> {
    let field = |message: String| ConfigError::Field {
        origin: origin.to_owned(),
        key: key.to_owned(),
        message,
    };
    let Some(list) = list.and_then(toml::Value::as_array) else {
        return Err(field(if missing.is_empty() {
            "expected a list of \"key=value\" or \"unset key\" strings".to_owned()
        } else {
            missing.to_owned()
        }));
    };
    list.iter()
        .map(|v| {
            let text = v.as_str().ok_or_else(|| {
                field(format!(
                    "`{v}` is not a \"key=value\" or \"unset key\" string"
                ))
            })?;
            let setting = match text.strip_prefix("unset ") {
                Some(key) => {
                    let path: Vec<String> = key.trim().split('.').map(str::to_owned).collect();
                    if path.iter().any(|p| p.trim().is_empty()) {
                        return Err(field(format!("`{text}`: empty component in the key path")));
                    }
                    PaperSetting::Unset(path)
                }
                None => PaperSetting::Set(Override::parse(text).map_err(|e| field(e.to_string()))?),
            };
            let path = match &setting {
                PaperSetting::Set(o) => &o.path,
                PaperSetting::Unset(p) => p,
            };
            if forbidden
                .iter()
                .any(|f| path.len() >= f.len() && path.iter().zip(f.iter()).all(|(a, b)| a == b))
            {
                return Err(field(format!("`{text}` {why}")));
            }
            Ok(setting)
        })
        .collect()
}

/// What a cache does with writes that hit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WritePolicy {
    /// Keep dirty data; write it to the next level on eviction.
    WriteBack,
    /// Forward every write to the next level; lines are never dirty.
    WriteThrough,
}

/// When a missing line gets its place in the cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AllocationPolicy {
    /// Choose and reserve the victim when the miss is detected (a miss to a set whose
    /// ways are all waiting for fills is a reservation failure).
    OnMiss,
    /// Choose the victim when the data arrives.
    OnFill,
}

pub(super) fn default_write_policy() -> WritePolicy {
    WritePolicy::WriteBack
}
pub(super) fn default_true() -> bool {
    true
}
pub(super) fn default_allocation() -> AllocationPolicy {
    AllocationPolicy::OnMiss
}

/// A set-associative sectored cache (`[l1d]`, `[constant_cache]`, `[icache]`,
/// `[l2.slice]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheConfig {
    /// Capacity in bytes; equals sets x ways x line_bytes.
    pub size_bytes: u64,
    /// Associativity.
    pub ways: u32,
    /// Line (tag) size in bytes; a power of two.
    pub line_bytes: u32,
    /// Sector size in bytes: the unit of validity and of transfer; divides `line_bytes`.
    pub sector_bytes: u32,
    /// Hit latency in core cycles (also when a miss is known and sent on).
    pub latency: Cycles,
    /// Miss status holding registers: lines with a fetch in flight.
    pub mshrs: u32,
    /// Requests that may wait on one MSHR entry (the first included).
    pub mshr_max_merge: u32,
    /// Write policy (default `write_back`; irrelevant for read-only caches).
    #[serde(default = "default_write_policy")]
    pub write_policy: WritePolicy,
    /// Whether a write miss allocates a line (default `true`).
    #[serde(default = "default_true")]
    pub write_allocate: bool,
    /// When a missing line is allocated (default `on_miss`).
    #[serde(default = "default_allocation")]
    pub allocation: AllocationPolicy,
    /// Set-index function (default `linear`: line number modulo sets); see
    /// [`crate::memory::hashing`].
    #[serde(default, skip_serializing_if = "is_linear")]
    pub set_index: IndexFunction,
    /// What a read miss fetches (default `sector`).
    #[serde(default, skip_serializing_if = "is_sector_fetch")]
    pub fetch: FetchGranularity,
    /// L1D only: the write policy for thread-local data (absent: `write_policy` for
    /// every space).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_write_policy: Option<WritePolicy>,
    /// L2 slices: bytes the data array moves per cycle; a hit's data, a write's data
    /// and a fill each hold it for `ceil(bytes / data_port_bytes)` cycles (default 0:
    /// one access per cycle whatever its size).
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub data_port_bytes: u32,
    /// L1 caches and L2 slices: bytes the data array takes per cycle from a fill, through
    /// a fill port apart from the data port (GPGPU-Sim's caches: a fill holds their fill
    /// port for `atom / data_port_width` cycles, the atom being a sector in a sectored
    /// cache and the line otherwise, and waits while it is busy; the port width is the
    /// last field of `-gpgpu_cache:*`, the line size when absent). A fill holds this
    /// cache's fill port for `ceil(atom / fill_port_bytes)` cycles, atom = a sector under
    /// `fetch = "sector"`, else the line; fills take it one at a time in arrival order
    /// and one that finds it busy waits, and so do the requests it completes. An L1's
    /// fills wait in the SM's reply FIFO (`interconnect.ejection_buffer_entries`), an L2
    /// slice's in its DRAM-to-L2 queue; with the key an L2 fill no longer holds the data
    /// port (`data_port_bytes`). 0 (default): no fill port (an L1 takes a fill the cycle
    /// it arrives; an L2 fill holds the data port).
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub fill_port_bytes: u32,
    /// Every read hits and nothing is fetched (an idealised cache; default false).
    #[serde(default, skip_serializing_if = "is_false")]
    pub perfect: bool,
    /// Drop every line when a kernel starts (default false: contents persist).
    #[serde(default, skip_serializing_if = "is_false")]
    pub invalidate_between_kernels: bool,
    /// L1D only: global loads bypass this cache and are served by the L2, except
    /// `ld.global.nc`, `ldu` and an explicit `ld.global.ca` (GPGPU-Sim's
    /// `-gpgpu_gmem_skip_L1D`; Maxwell's default, CUDA C Programming Guide, compute
    /// capability 5.x, "Global Memory"). Local loads, stores and atomics are unchanged.
    /// Default false: global loads are cached.
    #[serde(default, skip_serializing_if = "is_false")]
    pub bypass_global_loads: bool,
    /// L1D only: the shared-memory sizes (bytes) the L1D's storage can be split at, the
    /// L1D and shared memory being one array of `size_bytes`. At each launch the
    /// smallest carve-out that holds the shared memory of the CTAs resident per SM is
    /// given to shared memory, and the L1D keeps the remaining ways. Empty (default): the
    /// L1D is `size_bytes` always.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shared_carveouts: Vec<u64>,
    /// L1D only: entries of the miss queue between the cache and the interconnect
    /// (GPGPU-Sim: the last field of `-gpgpu_cache:dl1`); a lookup that needs an entry
    /// when none is free is a reservation failure (see [`crate::memory::miss_queue`]).
    /// 0 (default): unbounded. Otherwise at least 2 (a read miss needs two).
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub miss_queue_entries: u32,
    /// L1D only: bits per cycle that a load's data moves from the L1D to the register
    /// file once the access is done; a load writing `b` bytes per thread holds its
    /// register write back `ceil(32 x 8 x b / return_bits_per_cycle)` cycles (Huerta et
    /// al. MICRO'25 §5.4: 512, so a warp's 32-, 64- and 128-bit loads take 2, 4 and 8
    /// cycles). 0 (default): no transfer time.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub return_bits_per_cycle: u32,
    /// L1D only: banks of the data array, each taking one access (a sector of a
    /// sector-fetch L1D, else a line) per cycle; a request's accesses enter in order
    /// until one finds its bank taken that cycle (GPGPU-Sim's `-gpgpu_l1_banks`; see
    /// [`crate::memory::l1_banks`]). 0 (default): no banks, one line looked up per
    /// cycle. Otherwise a power of two, at most 64.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub banks: u32,
    /// L1D only, with `banks`: bytes of consecutive addresses in one bank before the next
    /// (default 32, GPGPU-Sim's `-gpgpu_l1_banks_byte_interleaving` default); a power of
    /// two.
    #[serde(
        default = "default_bank_interleave",
        skip_serializing_if = "is_default_bank_interleave"
    )]
    pub bank_interleave_bytes: u32,
    /// L1D only, with `banks`: the bank of an address, an index function over
    /// `bank_interleave_bytes`-byte blocks (default `linear`, GPGPU-Sim's
    /// `-gpgpu_l1_banks_hashing_function` default).
    #[serde(default, skip_serializing_if = "is_linear")]
    pub bank_index: IndexFunction,
}

pub(super) fn default_bank_interleave() -> u32 {
    32
}
pub(super) fn is_default_bank_interleave(b: &u32) -> bool {
    *b == default_bank_interleave()
}

pub(super) fn is_false(b: &bool) -> bool {
    !*b
}

/// What a read miss asks the next level for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FetchGranularity {
    /// Only the requested sectors that are missing (sector allocation: Volta's L1D and
    /// every L2 since Fermi).
    #[default]
    Sector,
    /// Every sector of the line that is not present (line allocation: a miss brings the
    /// whole line, as Fermi's L1D did).
    Line,
}

pub(super) fn is_linear(f: &IndexFunction) -> bool {
    *f == IndexFunction::Linear
}
pub(super) fn is_sector_fetch(f: &FetchGranularity) -> bool {
    *f == FetchGranularity::Sector
}

impl CacheConfig {
    /// Number of sets.
    pub fn sets(&self) -> u64 {
        self.size_bytes / (u64::from(self.ways) * u64::from(self.line_bytes))
    }
    /// Sectors per line.
    pub fn sectors_per_line(&self) -> u32 {
        self.line_bytes / self.sector_bytes
    }
}

/// `[shared_memory]`: per-SM scratchpad banks (capacity is `sm.shared_memory_bytes`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SharedMemoryConfig {
    /// Number of banks.
    pub banks: u32,
    /// Bytes per bank word; consecutive words go to consecutive banks.
    pub bank_width_bytes: u32,
    /// Latency of a conflict-free access in core cycles; each extra pass adds one cycle.
    pub latency: Cycles,
    /// Extra core cycles of an access to another CTA's shared memory in the cluster
    /// (distributed shared memory, through the GPC's SM-to-SM network); default 0.
    #[serde(default, skip_serializing_if = "Cycles::is_zero")]
    pub remote_latency: Cycles,
    /// A shared-memory atomic (SASS's ATOMS) as a read pass and then a write pass through
    /// the banks: the write pass takes the banks again (as many passes as the read's bank
    /// conflicts need) and ends this many cycles after the read's data is ready, when the
    /// atomic's result returns. Default 0: an atomic is one pass, like a load.
    #[serde(default, skip_serializing_if = "Cycles::is_zero")]
    pub atomic_write_latency: Cycles,
}

/// `[interconnect]`: crossbar between SMs and L2 slices, one port per SM and per slice in
/// each direction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InterconnectConfig {
    /// One-way latency in core cycles, excluding serialization and queuing.
    pub latency: Cycles,
    /// Bytes per core cycle per port and direction.
    pub bytes_per_cycle: u32,
    /// Size of a packet without data (read request, header of a write) in bytes.
    pub control_bytes: u32,
    /// Bytes an SM may have queued at its injection port before memory issue stalls.
    pub input_buffer_bytes: u32,
    /// Flit size in bytes (default 0: packets are exactly their bytes): a packet is
    /// carried in whole flits, so it occupies `ceil(bytes / flit_bytes) x flit_bytes`
    /// bytes of port bandwidth.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub flit_bytes: u32,
    /// Each port's packets cross in order, and a packet holds its source port until its
    /// destination port has taken it (an input-queued crossbar with one virtual channel
    /// per port, as GPGPU-Sim's `num_vcs = 1`): a packet for a busy destination blocks
    /// the packets behind it at its source even when theirs are free (head-of-line
    /// blocking), and a source held so delays its injection queue, which stalls the SM's
    /// memory issue (`input_buffer_bytes`) and the L1D's miss queue. Default false: a
    /// packet that has started leaving its source waits for its destination without
    /// holding the source (an output-queued crossbar).
    #[serde(default, skip_serializing_if = "is_false")]
    pub head_of_line_blocking: bool,
    /// What a full injection buffer (`input_buffer_bytes`) stops (default `issue`).
    #[serde(default, skip_serializing_if = "InjectionBackpressure::is_issue")]
    pub injection_backpressure: InjectionBackpressure,
    /// Replies an SM may hold between the interconnect and its caches (GPGPU-Sim's
    /// `-gpgpu_n_cluster_ejection_buffer_size`, the cluster's response FIFO, which takes
    /// a packet from the network only while it has room): a reply takes an entry when it
    /// crosses to its SM and frees it when the SM takes it from its reply FIFO. The SM
    /// takes one reply per cycle, in arrival order, and a fill only when its cache's fill
    /// port (`fill_port_bytes`) is free (GPGPU-Sim's LD/ST unit handles the head of its
    /// response FIFO once per cycle). A reply that would overfill the buffer is refused
    /// at the crossing and waits at its slice, holding the replies behind it, until the
    /// SM takes one. Default 0: unbounded (and without any L1 `fill_port_bytes`, no reply
    /// FIFO: a reply is taken the cycle it arrives).
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub ejection_buffer_entries: u32,
}

/// Where an SM's full interconnect injection buffer pushes back.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InjectionBackpressure {
    /// The SM issues no memory instruction while the buffer is full.
    #[default]
    Issue,
    /// The L1D's miss queue hands a request on only when the buffer has room for it
    /// (GPGPU-Sim's L1D passes its miss queue's head to the interconnect only when the
    /// injection buffer can take it), so under back-pressure the miss queue fills and
    /// refuses lookups (`MISS_QUEUE_FULL`) while hits go on; the other caches' requests
    /// still stop issue. Needs a bounded `l1d.miss_queue_entries`.
    MissQueue,
}

impl InjectionBackpressure {
    fn is_issue(&self) -> bool {
        *self == InjectionBackpressure::Issue
    }
}

/// `[l2]`: the shared last-level cache.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct L2Config {
    /// Number of slices in the whole GPU; a multiple of `dram.channels` (each channel
    /// serves `slices / channels` consecutive slices).
    pub slices: u32,
    /// Consecutive bytes mapped to one slice before moving to the next; a power of two,
    /// at least a line.
    pub interleave_bytes: u32,
    /// Geometry and policies of one slice (`size_bytes` is per slice).
    pub slice: CacheConfig,
    /// The L2 acknowledges each store's write with a control packet back to the SM, and
    /// a store completes (for its warp's retirement, and so for the end of the kernel)
    /// when its acknowledgements are back (default false: a store completes when the L1
    /// accepts it).
    #[serde(default, skip_serializing_if = "is_false")]
    pub write_ack: bool,
    /// A slice splits every request into its sectors and looks them up one per cycle,
    /// hit or miss, so a request of `n` sectors holds the slice's input for `n` cycles
    /// (GPGPU-Sim's sectored L2 breaks each request into 32-byte sector requests). Default
    /// false: one lookup per request; only data moving through `data_port_bytes` takes
    /// longer.
    #[serde(default, skip_serializing_if = "is_false")]
    pub sector_lookups: bool,
    /// A host-to-device copy (`cudaMemcpy` and friends) installs the copied sectors in
    /// the L2 slices their addresses map to, clean, with the replacement of a normal fill,
    /// at no cost in time and without counting as L2 accesses, so a kernel's first reads
    /// of copied inputs can hit (GPGPU-Sim's `-gpgpu_perf_sim_memcpy`). Default false:
    /// host copies do not touch the caches.
    #[serde(default, skip_serializing_if = "is_false")]
    pub fill_on_host_copy: bool,
    /// Entries of each slice's input queue, between the interconnect and the tag lookup
    /// (GPGPU-Sim's icnt-to-L2 queue, the first field of `-gpgpu_dram_partition_queues`):
    /// a packet takes an entry per sector under `sector_lookups`, else one, from when it
    /// crosses to the slice until its lookup. A crossing that would overfill the queue is
    /// refused and waits at its source, in order, holding the packets behind it, and an
    /// SM whose refused packets fill its injection buffer stops issuing memory
    /// instructions. Default 0: unbounded.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub input_queue_entries: u32,
    /// Replies (fills, atomic results and write acknowledgements) a slice may have
    /// waiting for the interconnect (GPGPU-Sim's L2-to-icnt queue, the fourth field of
    /// `-gpgpu_dram_partition_queues`): a reply joins when it is ready to leave and
    /// leaves when it crosses to its SM; while the queue is full the slice looks nothing
    /// up. Default 0: unbounded.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub output_queue_entries: u32,
    /// Requests (read misses, write-backs, write-throughs) a slice may have on their way
    /// to its DRAM channel's scheduler (GPGPU-Sim's L2-to-DRAM queue, the second field of
    /// `-gpgpu_dram_partition_queues`): a request takes an entry at the lookup that sends
    /// it and frees it when the channel admits it among its `dram.queue_window` oldest;
    /// while the slice holds this many the slice looks nothing up. Default 0: unbounded.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub dram_queue_entries: u32,
    /// Each slice's atomic unit, which performs a global atomic's read-modify-write once
    /// its line is in the slice (absent: an atomic's reply leaves as a read hit's would).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub atomic_unit: Option<AtomicUnitConfig>,
}

/// `l2.atomic_unit`: the read-modify-write stage of an L2 slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AtomicUnitConfig {
    /// Cycles from the start of an atomic's operation to its reply leaving the slice
    /// (the read, the ALU and the write back into the line), added to the slice's hit
    /// latency.
    pub latency: Cycles,
    /// Cycles the unit is busy per atomic request (the atomics of one warp instruction
    /// to one line); a request that finds it busy waits. At least 1.
    pub interval: u32,
}

/// DRAM request scheduling policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DramSchedulerPolicy {
    /// First come, first served: the oldest request, when its bank is ready.
    Fcfs,
    /// First ready, first come first served (Rixner et al. 2000): row hits first, then
    /// the oldest request whose bank is ready.
    FrFcfs,
}

/// `[dram]`: off-chip memory, one controller per channel.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DramConfig {
    /// Number of channels (memory controllers).
    pub channels: u32,
    /// Banks per channel.
    pub banks: u32,
    /// Row (page) size per bank in bytes; a power of two, at least an L2 line.
    pub row_bytes: u32,
    /// Activate to column command (DRAM clock cycles).
    pub t_rcd: MemCycles,
    /// Precharge (DRAM clock cycles).
    pub t_rp: MemCycles,
    /// Column access (CAS) latency (DRAM clock cycles).
    pub t_cl: MemCycles,
    /// Data bus bytes per DRAM clock cycle per channel.
    pub bytes_per_cycle: u32,
    /// Fixed controller and PHY latency in core cycles, added to every read.
    pub latency: Cycles,
    /// Request scheduling policy.
    pub scheduler: DramSchedulerPolicy,
    /// Pending requests per channel the scheduler considers (oldest first).
    pub queue_window: u32,
    /// Column to column command delay, any two banks (DRAM cycles; 0: not modelled).
    #[serde(default, skip_serializing_if = "MemCycles::is_zero")]
    pub t_ccd: MemCycles,
    /// Column to column delay within one bank group (0: `t_ccd`).
    #[serde(default, skip_serializing_if = "MemCycles::is_zero")]
    pub t_ccd_l: MemCycles,
    /// Activate to activate, different banks of the channel (0: not modelled).
    #[serde(default, skip_serializing_if = "MemCycles::is_zero")]
    pub t_rrd: MemCycles,
    /// Activate to precharge of one bank (0: not modelled).
    #[serde(default, skip_serializing_if = "MemCycles::is_zero")]
    pub t_ras: MemCycles,
    /// Activate to activate of one bank (0: not modelled).
    #[serde(default, skip_serializing_if = "MemCycles::is_zero")]
    pub t_rc: MemCycles,
    /// Write column command to its data (write latency; 0: writes use `t_cl`).
    #[serde(default, skip_serializing_if = "MemCycles::is_zero")]
    pub t_wl: MemCycles,
    /// End of write data to the next read column command (write-to-read turnaround).
    #[serde(default, skip_serializing_if = "MemCycles::is_zero")]
    pub t_wtr: MemCycles,
    /// End of write data to precharge of that bank (write recovery).
    #[serde(default, skip_serializing_if = "MemCycles::is_zero")]
    pub t_wr: MemCycles,
    /// Read column command to precharge of that bank.
    #[serde(default, skip_serializing_if = "MemCycles::is_zero")]
    pub t_rtp: MemCycles,
    /// Bank groups per channel; bank `b` is in group `b mod bank_groups` (default 1).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub bank_groups: u32,
    /// Smallest transfer in bytes (burst length x channel width): a request moves a whole
    /// number of atoms over the bus (0: exactly its bytes).
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub atom_bytes: u32,
    /// Address decoding by bit pattern (see [`crate::memory::l2`]); absent: `l2.interleave_bytes`
    /// interleaving and rows of `row_bytes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address_mapping: Option<DramAddressMapping>,
    /// Reads per channel whose data may be on its way back to the L2 (GPGPU-Sim's
    /// `-gpgpu_dram_return_queue_size`): a read holds an entry from its column command
    /// until the L2 takes its data, `latency` after its burst; while all are held the
    /// channel issues no read. Default 0: unbounded.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub return_queue_entries: u32,
}

/// `[dram.address_mapping]`: where channel, bank, row and column are in an address.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DramAddressMapping {
    /// The channel is taken from the address at this bit: `(a >> channel_bit)` modulo
    /// `dram.channels` (or hashed by `channel_index`), and removed from the address,
    /// leaving the channel-local address `((a >> channel_bit) / channels) << channel_bit
    /// | (a mod 2^channel_bit)`.
    pub channel_bit: u32,
    /// Channel selection function over `a >> channel_bit` (default linear, i.e. modulo).
    /// A polynomial of degree `k` needs `channels = odd x 2^k`: with `odd = 1` the channel
    /// is the residue, otherwise `(x mod odd) << k | residue(x / odd)` (see
    /// `memory::l2::AddressMap::locate`).
    #[serde(default, skip_serializing_if = "is_linear")]
    pub channel_index: IndexFunction,
    /// Bit pattern of the channel-local address, most significant bit first, dots
    /// ignored: `R` row, `B` bank, `C` column, `S` byte within a burst, `0` unused.
    /// The bank is the `B` bits in order; its low bits select the L2 slice within the
    /// channel.
    pub pattern: String,
}

pub(super) fn one() -> u32 {
    1
}
pub(super) fn is_one(v: &u32) -> bool {
    *v == 1
}
pub(super) fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}

impl DramConfig {
    /// Latency of a read whose row is open (DRAM cycles, excluding the burst).
    pub fn row_hit_latency(&self) -> MemCycles {
        self.t_cl
    }
    /// Latency of a read to a bank with another row open.
    pub fn row_conflict_latency(&self) -> MemCycles {
        self.t_rp + self.t_rcd + self.t_cl
    }
    /// Latency of a read to a bank with no row open.
    pub fn row_closed_latency(&self) -> MemCycles {
        self.t_rcd + self.t_cl
    }
}

/// Geometry and policy checks of one cache, keys prefixed by `prefix`.
pub fn validate_cache(prefix: &str, c: &CacheConfig) -> Result<(), ConfigError> {
    let key = |k: &str| format!("{prefix}.{k}");
    crate::limits::check_cache(prefix, c)?;
    if c.size_bytes == 0 {
        return Err(invalid(key("size_bytes"), "must be at least 1"));
    }
    nonzero(&key("ways"), c.ways)?;
    power_of_two(&key("line_bytes"), u64::from(c.line_bytes))?;
    power_of_two(&key("sector_bytes"), u64::from(c.sector_bytes))?;
    if c.sector_bytes > c.line_bytes {
        return Err(invalid(
            key("sector_bytes"),
            format_args!("must not exceed line_bytes ({})", c.line_bytes),
        ));
    }
    if c.line_bytes / c.sector_bytes > crate::memory::cache::MAX_SECTORS {
        return Err(invalid(
            key("sector_bytes"),
            format_args!(
                "{} ({}) / sector_bytes ({}) is {} sectors per line; at most {} are supported",
                key("line_bytes"),
                c.line_bytes,
                c.sector_bytes,
                c.line_bytes / c.sector_bytes,
                crate::memory::cache::MAX_SECTORS
            ),
        ));
    }
    let way_bytes = u64::from(c.ways) * u64::from(c.line_bytes);
    if !c.size_bytes.is_multiple_of(way_bytes) {
        return Err(invalid(
            key("ways"),
            format_args!(
                "ways x line_bytes ({} x {} = {way_bytes}) must divide size_bytes ({})",
                c.ways, c.line_bytes, c.size_bytes
            ),
        ));
    }
    let sets = c.size_bytes / way_bytes;
    if !sets.is_power_of_two() {
        return Err(invalid(
            key("size_bytes"),
            format_args!(
                "gives {sets} sets (size_bytes / (ways x line_bytes)); the set count must be a \
                 power of two"
            ),
        ));
    }
    nonzero_cycles(&key("latency"), c.latency)?;
    nonzero(&key("mshrs"), c.mshrs)?;
    nonzero(&key("mshr_max_merge"), c.mshr_max_merge)?;
    if c.miss_queue_entries == 1 {
        return Err(invalid(
            key("miss_queue_entries"),
            "must be 0 (unbounded) or at least 2: a read miss needs room for its request \
             and a write-back",
        ));
    }
    let mut previous = 0;
    for &b in &c.shared_carveouts {
        if b < previous || b % (sets * u64::from(c.line_bytes)) != 0 || b >= c.size_bytes {
            return Err(invalid(
                key("shared_carveouts"),
                format_args!(
                    "{b}: carve-outs must ascend, be whole ways ({} bytes) and leave the \
                     cache at least one way",
                    sets * u64::from(c.line_bytes)
                ),
            ));
        }
        previous = b;
    }
    c.set_index
        .check(sets.trailing_zeros())
        .map_err(|m| invalid(key("set_index"), m))?;
    if c.banks > 0 {
        power_of_two(&key("banks"), u64::from(c.banks))?;
        if c.banks > 64 {
            return Err(invalid(key("banks"), "must be at most 64"));
        }
        power_of_two(
            &key("bank_interleave_bytes"),
            u64::from(c.bank_interleave_bytes),
        )?;
        c.bank_index
            .check(c.banks.trailing_zeros())
            .map_err(|m| invalid(key("bank_index"), m))?;
    }
    Ok(())
}

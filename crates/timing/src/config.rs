//! GPU configuration: every parameter of the timing model, loaded from TOML.
//!
//! A config is a TOML file in `configs/` at the repository root, selected by name
//! (`gtx480` means `configs/gtx480.toml`) or by path. Overrides of the form
//! `key.path=value` are applied to the parsed document *before* it is deserialized, so a
//! misspelt key in an override is rejected by `deny_unknown_fields` exactly like one in
//! the file. After deserialization, [`GpuConfig::validate`] rejects impossible values.
//! Every error names the offending key (`l1d.ways: ...`).
//!
//! The structs follow gem5's split of parameters from state: each component of the
//! model has an `XxxConfig` here and its state elsewhere.

use crate::hashing::IndexFunction;
use crate::time::{Cycles, MemCycles};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};

/// Threads per warp. Fixed: the emulator and the coalescer assume 32 lanes.
pub const WARP_SIZE: u32 = 32;

/// The whole GPU.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuConfig {
    /// Chip-level parameters: number of SMs and clocks.
    pub gpu: ChipConfig,
    /// Per-SM resources and the warp scheduler.
    pub sm: SmConfig,
    /// The register file design and its organisation.
    pub register_file: RegisterFileConfig,
    /// Execution units and per-opcode-class timing.
    pub pipeline: PipelineConfig,
    /// Per-SM L1 data cache (global and local loads and stores).
    pub l1d: CacheConfig,
    /// Per-SM shared memory banks.
    pub shared_memory: SharedMemoryConfig,
    /// Per-SM constant cache.
    pub constant_cache: CacheConfig,
    /// Per-SM instruction cache.
    pub icache: CacheConfig,
    /// The SM <-> L2 interconnect.
    pub interconnect: InterconnectConfig,
    /// The shared L2, split into address-interleaved slices.
    pub l2: L2Config,
    /// Off-chip DRAM.
    pub dram: DramConfig,
    /// Energy per event of every structure (the energy crate's table; optional, every
    /// key defaults to its cited value).
    #[serde(default)]
    pub energy: energy::EnergyConfig,
    /// `[compiler]`: the register budget programs are compiled for
    /// ([`crate::register_budget`]); absent, the architecture's limit.
    #[serde(
        default,
        skip_serializing_if = "crate::register_budget::CompilerConfig::is_default"
    )]
    pub compiler: crate::register_budget::CompilerConfig,
    /// Which memory-system mechanisms the config uses: its GPU's own, or the simplified
    /// ones of the papers it reproduces (optional; default: as written).
    #[serde(default, skip_serializing_if = "MemoryModelConfig::is_default")]
    pub memory: MemoryModelConfig,
}

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
}

impl MemoryModelConfig {
    fn is_default(&self) -> bool {
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
enum PaperSetting {
    Set(Override),
    Unset(Vec<String>),
}

impl PaperSetting {
    fn apply(&self, doc: &mut toml::Table) -> Result<(), ConfigError> {
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
fn paper_memory_settings(
    doc: &toml::Table,
    origin: &str,
) -> Result<Vec<PaperSetting>, ConfigError> {
    let Some(memory) = doc.get("memory").and_then(toml::Value::as_table) else {
        return Ok(Vec::new());
    };
    if memory.get("model").and_then(toml::Value::as_str) != Some("paper") {
        return Ok(Vec::new());
    }
    let field = |message: String| ConfigError::Field {
        origin: origin.to_owned(),
        key: "memory.paper".to_owned(),
        message,
    };
    let Some(list) = memory.get("paper").and_then(toml::Value::as_array) else {
        return Err(field(
            "memory.model = \"paper\" needs the list of the papers' settings here".to_owned(),
        ));
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
            let first = match &setting {
                PaperSetting::Set(o) => o.path.first(),
                PaperSetting::Unset(p) => p.first(),
            };
            if first.is_some_and(|p| p == "memory") {
                return Err(field(format!(
                    "`{text}` may not set the memory model itself"
                )));
            }
            Ok(setting)
        })
        .collect()
}

/// `[gpu]`: chip-level parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChipConfig {
    /// Number of streaming multiprocessors.
    pub num_sms: u32,
    /// SM core clock in MHz. The interconnect and L2 run on this clock as well.
    pub core_clock_mhz: u32,
    /// DRAM command clock in MHz; `dram.t_*` and `dram.bytes_per_cycle` are in this clock.
    pub memory_clock_mhz: u32,
    /// Core cycles from a kernel's launch to its first CTA starting (the driver and
    /// front end's launch overhead; default 0). Counted in the kernel's cycles.
    #[serde(default, skip_serializing_if = "Cycles::is_zero")]
    pub kernel_launch_latency: Cycles,
    /// Compute capability the simulated device reports to programs, as major × 10 +
    /// minor (`cudaGetDeviceProperties`; default 70, sm_70). Programs that check it
    /// choose their code paths by it (tensor-core kernels need 80 and above); the
    /// simulator runs whatever PTX the program carries either way.
    #[serde(
        default = "default_compute_capability",
        skip_serializing_if = "is_default_compute_capability"
    )]
    pub compute_capability: u32,
}

fn default_compute_capability() -> u32 {
    70
}

fn is_default_compute_capability(v: &u32) -> bool {
    *v == default_compute_capability()
}

/// Warp scheduling policy of each warp scheduler.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SchedulerPolicy {
    /// Loose round robin: start after the warp that issued last.
    Lrr,
    /// Greedy then oldest: keep issuing from one warp until it stalls, then the oldest.
    Gto,
    /// Two-level (Narasiman et al. 2011, Gebhart et al. 2011): round robin over a small
    /// active set; a warp waiting on a long-latency operation is demoted to the pending
    /// set. The active set size is `sm.active_warps`.
    TwoLevel,
}

/// `[sm]`: per-SM resources, occupancy limits and the front end.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SmConfig {
    /// Maximum resident warps per SM.
    pub max_warps: u32,
    /// Maximum resident threads per SM.
    pub max_threads: u32,
    /// Maximum resident CTAs (thread blocks) per SM.
    pub max_ctas: u32,
    /// Shared memory capacity per SM in bytes (occupancy limit).
    pub shared_memory_bytes: u32,
    /// Register file capacity per SM in 32-bit registers (occupancy limit: registers per
    /// thread x threads per CTA x CTAs must fit). For `register_file.design = "ideal"`,
    /// `register_file.ideal_capacity_registers` replaces it when set;
    /// `"ideal-unlimited"` has no register limit.
    pub registers: u32,
    /// Warp schedulers per SM; warps are assigned to schedulers by warp id modulo this.
    pub schedulers: u32,
    /// Warp scheduling policy.
    pub scheduler: SchedulerPolicy,
    /// Active-set size per scheduler for `scheduler = "two_level"`; ignored otherwise.
    pub active_warps: u32,
    /// Warp instructions each scheduler may issue per cycle (from one warp).
    pub issue_width: u32,
    /// Decoded-instruction buffer entries per warp.
    pub ibuffer_entries: u32,
    /// Granule of register allocation, in 32-bit registers per warp: a warp's registers
    /// (registers per thread x 32) are rounded up to a multiple of this before being
    /// counted against `sm.registers` (the CUDA occupancy calculator's "register
    /// allocation unit size", warp granularity: 64 on compute capability 2.x, 256 since).
    pub register_allocation_unit: u32,
    /// The architecture's cap on registers per thread (the ISA's register namespace:
    /// 63 on compute capability 2.x, 255 since 3.5). The allocator allocates every kernel
    /// under min(this, `--max-registers`) and spills what does not fit, as ptxas does.
    pub max_registers_per_thread: u32,
    /// How a warp waits for a fixed-latency result (default `scoreboard`).
    #[serde(default, skip_serializing_if = "Dependence::is_scoreboard")]
    pub dependence: Dependence,
}

/// `sm.dependence`: when an instruction that reads a fixed-latency result may issue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dependence {
    /// The scoreboard holds every result's registers until its write to the register
    /// file completes; a consumer then reads its operands: the collector core's
    /// (GPGPU-Sim's) serialisation of writeback and operand read.
    #[default]
    Scoreboard,
    /// Compiler-set stall counts (Huerta et al. MICRO'25, issue stage): a result of a
    /// fixed-latency unit (`sp`, `int`, `dp`) releases its registers `latency` cycles
    /// after its producer issued, the published issue-to-dependent-issue latency; the
    /// consumer's operand read overlaps the producer's writeback. Memory and SFU results
    /// (variable latency, dependence counters in hardware) still wait for their write.
    StallCounter,
}

impl Dependence {
    fn is_scoreboard(&self) -> bool {
        *self == Dependence::Scoreboard
    }
}

/// Which register file design operand delivery uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RegisterFileDesign {
    /// Banked main register file with operand collectors and an arbiter.
    Baseline,
    /// No bank conflicts at the baseline latency, with the baseline's capacity (so the
    /// baseline's occupancy) unless `register_file.ideal_capacity_registers` says
    /// otherwise (LTRF's "Ideal" is 8x the capacity).
    Ideal,
    /// The ideal register file with unlimited capacity: occupancy is limited by threads,
    /// warps, CTAs and shared memory only. It is not an upper bound on the baseline: more
    /// resident warps can thrash the L1D.
    #[serde(rename = "ideal-unlimited")]
    IdealUnlimited,
    /// LTRF (Sadrosadati et al.): register-interval prefetch into a register-file cache
    /// partitioned among the active warps ([`crate::rf::ltrf`]).
    Ltrf,
    /// LTRF+: LTRF with liveness bits (dead registers neither prefetched nor written back).
    #[serde(rename = "ltrf-plus")]
    LtrfPlus,
    /// LTRFconf: LTRF running the bank-aware renumbered program (LTRF §4).
    #[serde(rename = "ltrf-conf")]
    LtrfConf,
    /// Gebhart ISCA'11: a hardware register-file cache per warp slot in front of the
    /// MRF, with the two-level scheduler (`register_file.rfc`).
    Rfc,
    /// Gebhart MICRO'11: the compile-time managed ORF/LRF/MRF hierarchy
    /// (`register_file.orf_lrf`).
    #[serde(rename = "orf-lrf")]
    OrfLrf,
    /// Malekeh: caching collector units with reuse hints and STHLD
    /// (`[register_file.malekeh]`).
    Malekeh,
    /// BOW: bypassing operand windows, Malekeh's comparison point
    /// (`[register_file.bow]`).
    Bow,
    /// Warp instruction reuse with register renaming (Kim and Ro, HPCA'18;
    /// `register_file.wir`).
    Wir,
    /// CERF (Jing et al.): registers and L1D lines in one cache-managed array
    /// (`[register_file.cerf]`).
    Cerf,
    /// The register-file cache of NVIDIA's cores (Huerta et al. MICRO'25): per bank of a
    /// processing block one entry of three operand-slot sub-entries, filled by compiler
    /// reuse bits ([`crate::rf::reuse_cache`]).
    #[serde(rename = "reuse-cache")]
    ReuseCache,
}

/// CERF's replacement policy in the integrated array (§III.D).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum CerfPolicy {
    /// Plain LRU over registers and lines; evicted registers spill to memory.
    #[serde(rename = "lru-fair")]
    LruFair,
    /// Cache data never evicts a register; registers reclaim inactive and cache entries.
    #[default]
    #[serde(rename = "lru-prioritized")]
    LruPrioritized,
}

/// `[register_file.cerf]`: the integrated register-file/L1D array of `design = "cerf"`.
/// Under CERF the memory system's L1D *is* this array: its geometry replaces
/// `l1d.size_bytes` and `l1d.ways` (line and sector size, latency, MSHRs and write policy
/// stay the `[l1d]` values).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CerfConfig {
    /// Array capacity in bytes; absent: the register file's (`sm.registers` x 4, 128 KB
    /// on the GTX 480 as in CERF Table I).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size_bytes: Option<u64>,
    /// Associativity (CERF Table I: 4).
    pub ways: u32,
    /// Replacement policy.
    pub policy: CerfPolicy,
    /// Return a register's entry to `inactive` at its last read (the liveness bits of
    /// §III.D). The paper uses them with `lru-prioritized` only; `false` gives its pure
    /// LRU-fair.
    pub release_dead: bool,
    /// Whose bandwidth the array's accesses use ([`CerfBanking`]).
    pub banking: CerfBanking,
    /// Tag banks (§III.B: 4, each governing a quarter of the sets: the two set-index bits
    /// next to the block offset select it).
    pub tag_banks: u32,
    /// Tag lookups each tag bank serves per cycle; absent: the data banks' line rate
    /// divided among the tag banks (`banks x read_ports_per_bank / tag_banks`, rounded
    /// up), §III.B's tag banks that "offer the same lookup rate" as the data banks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tag_lookups_per_bank: Option<u32>,
    /// The array's write policy for memory data ([`CerfWrites`]).
    pub writes: CerfWrites,
}

/// `register_file.cerf.banking`: whose bandwidth CERF's array accesses use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum CerfBanking {
    /// The paper's array (§III.B, §IV "data access bandwidth set equal to the RF"):
    /// register reads and writes, spills, fills and L1D line accesses share the data
    /// banks (`register_file.banks` banks with the register file's ports; a line's bank is
    /// its set modulo the bank count), and every tag lookup takes a tag bank's slot.
    #[default]
    #[serde(rename = "integrated")]
    Integrated,
    /// Bandwidth for free (the model before issue 22): register accesses use the
    /// baseline's banks under its bank mapping, L1D lines the L1D's own port, and tag
    /// lookups are unlimited. For comparison only.
    #[serde(rename = "separate")]
    Separate,
}

/// `register_file.cerf.writes`: the array's write policy for memory data.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum CerfWrites {
    /// `[l1d]`'s `write_policy` and `write_allocate` (gtx480: write-through without
    /// allocation, Fermi's global memory; lines are never dirty).
    #[default]
    #[serde(rename = "as-l1d")]
    AsL1d,
    /// Write-back with write-allocate: stores make lines `dirty` (Figure 6's state), and a
    /// dirty line is written to the L2 when a register or other data takes its way.
    #[serde(rename = "write-back")]
    WriteBack,
}

impl CerfConfig {
    /// Tag lookups per tag bank per cycle for a register file of `banks` banks with
    /// `read_ports` read ports each (see [`CerfConfig::tag_lookups_per_bank`]).
    pub fn tag_lookups_per_bank(&self, banks: u32, read_ports: u32) -> u32 {
        self.tag_lookups_per_bank
            .unwrap_or_else(|| (banks.saturating_mul(read_ports)).div_ceil(self.tag_banks.max(1)))
    }
}

impl Default for CerfConfig {
    fn default() -> Self {
        CerfConfig {
            size_bytes: None,
            ways: 4,
            policy: CerfPolicy::default(),
            release_dead: true,
            banking: CerfBanking::default(),
            tag_banks: 4,
            tag_lookups_per_bank: None,
            writes: CerfWrites::default(),
        }
    }
}

/// `[register_file.rfc]`: the hardware register-file cache (Gebhart et al. ISCA'11, as
/// MICRO'11 §2.2 and §6 describe it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RfcConfig {
    /// RFC entries per thread (32-bit registers), 0 to 8 (MICRO'11 Table 3 has the energies
    /// of 1 to 8; 0 disables the cache: every access goes to the MRF).
    pub entries_per_thread: u8,
    /// The three-level hardware variant (MICRO'11 §6.3, Figure 13's "HW LRF"): a
    /// one-entry last result file per thread in front of the RFC.
    pub lrf: bool,
    /// Write back and empty the warp's RFC when it takes a backward branch (the variant
    /// of MICRO'11 §7, which says keeping values across backward branches saves 5%).
    pub flush_at_backward_branches: bool,
    /// Charge every tag lookup (each register an instruction reads or writes, MICRO'11
    /// §3.1) at `energy.rfc_tag_lookup_pj`. `false` leaves the tags out of the energy
    /// (the lookups are still counted in `rfc_tag_lookups`).
    pub charge_tag_lookups: bool,
}

impl Default for RfcConfig {
    fn default() -> Self {
        // MICRO'11 §2.2: "a small, 6-entry per thread, register file cache".
        RfcConfig {
            entries_per_thread: 6,
            lrf: false,
            flush_at_backward_branches: false,
            charge_tag_lookups: true,
        }
    }
}

/// Whether register file banks have separate read and write ports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PortSharing {
    /// Read ports serve reads, write ports serve writes.
    Separate,
    /// One set of ports serves both; writes are arbitrated first.
    Shared,
}

/// How architectural registers map to register file banks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BankMapping {
    /// `(register + warp) mod banks`: consecutive warps start in different banks.
    RegisterPlusWarp,
    /// `register mod banks`.
    Register,
}

/// Whether operand collector units serve any instruction or are dedicated per unit type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CollectorKind {
    /// `register_file.collector_units` units shared by all instructions.
    Generic,
    /// Units dedicated per execution-unit type, counted in
    /// `register_file.specialised_collectors`.
    Specialised,
}

/// Collector units per execution-unit type, for `collectors = "specialised"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpecialisedCollectors {
    /// Units for SP (FP32) instructions.
    pub sp: u32,
    /// Units for INT instructions.
    pub int: u32,
    /// Units for SFU instructions.
    pub sfu: u32,
    /// Units for DP (FP64) instructions.
    pub dp: u32,
    /// Units for memory instructions.
    pub mem: u32,
}

/// `[register_file]`: register file design and organisation. Consumed by the SM pipeline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegisterFileConfig {
    /// The design (`baseline` or `ideal`).
    pub design: RegisterFileDesign,
    /// Number of main register file banks per SM.
    pub banks: u32,
    /// Read ports per bank (one warp-wide register read per port per cycle).
    pub read_ports_per_bank: u32,
    /// Write ports per bank.
    pub write_ports_per_bank: u32,
    /// Whether reads and writes have separate ports (`separate`) or share the same ones
    /// (`shared`: GPGPU-Sim's single-ported banks, where the arbiter serves writes
    /// first and a write takes the port from a read; `write_ports_per_bank` must then
    /// equal `read_ports_per_bank`).
    pub port_sharing: PortSharing,
    /// Configuration #1's bank access latency in core cycles; a technology's banks take
    /// a multiple of it (LTRF Table 2 studies 1x to 6.3x).
    pub bank_latency: Cycles,
    /// Register-to-bank mapping.
    pub bank_mapping: BankMapping,
    /// Split the banks evenly between the warp schedulers; a warp's registers live in its
    /// scheduler's partition (`banks` must be a multiple of `sm.schedulers`).
    pub partition_by_scheduler: bool,
    /// Generic or specialised operand collector units.
    pub collectors: CollectorKind,
    /// Number of generic collector units (used when `collectors = "generic"`).
    pub collector_units: u32,
    /// Source operand slots per collector unit.
    pub operands_per_collector: u32,
    /// Split the collector units evenly between the warp schedulers (sub-cores), as the
    /// banks are with `partition_by_scheduler`: an instruction takes a unit of its own
    /// scheduler's share (Turing's processing blocks each have their own; Malekeh §8
    /// measures on Accel-Sim's RTX 2060 model, whose collectors belong to a sub-core).
    /// Every unit count must be a multiple of `sm.schedulers`. Default false: shared.
    #[serde(default)]
    pub partition_collectors: bool,
    /// Instructions the collector units of one scheduler may dispatch per cycle (0, the
    /// default: no limit beyond the execution units).
    #[serde(default)]
    pub dispatch_per_scheduler: u32,
    /// Units per execution-unit type (required when `collectors = "specialised"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub specialised_collectors: Option<SpecialisedCollectors>,
    /// Capacity in 32-bit registers for `design = "ideal"`; absent means the baseline's
    /// (`sm.registers` under the MRF technology), so that occupancy is the baseline's.
    /// Ignored by the other designs (`"ideal-unlimited"` has no limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ideal_capacity_registers: Option<u64>,
    /// Main register-file technology: LTRF Table 2's configuration #1…#7, by number or
    /// preset name. Its capacity multiplies `sm.registers` for occupancy, its banks,
    /// occupancy, latency relative to `bank_latency` and network are the MRF's (unless
    /// `[register_file.mrf]` overrides them) and its power is the default factor on the
    /// MRF's energy per access (`energy.mrf_technology_scale`), whatever the design
    /// ([`crate::rf::technology`]).
    #[serde(default)]
    pub technology: crate::rf::technology::MrfTechnology,
    /// `[register_file.mrf]`: the MRF's banks, occupancy, latency and network, each key
    /// overriding the technology preset's value ([`crate::rf::technology`]).
    #[serde(
        default,
        skip_serializing_if = "crate::rf::technology::MrfOrganisation::is_default"
    )]
    pub mrf: crate::rf::technology::MrfOrganisation,
    /// `[register_file.ltrf]`: the LTRF designs' register-file cache and prefetch.
    #[serde(default)]
    pub ltrf: crate::rf::ltrf::LtrfSettings,
    /// The hardware register-file cache of `design = "rfc"`.
    #[serde(default)]
    pub rfc: RfcConfig,
    /// `design = "orf-lrf"`: the ORF/LRF allocation pass's settings, which are also the
    /// design's (ORF entries per thread, LRF organisation); one section, validated
    /// together.
    #[serde(default)]
    pub orf_lrf: compiler::orf_lrf::OrfLrfConfig,
    /// `design = "malekeh"`: caching collector units.
    #[serde(default)]
    pub malekeh: crate::rf::malekeh::MalekehConfig,
    /// `design = "bow"`: the bypassing operand window.
    #[serde(default)]
    pub bow: crate::rf::bow::BowConfig,
    /// WIR's variant and table sizes (`design = "wir"`).
    #[serde(default)]
    pub wir: crate::rf::wir::WirConfig,
    /// The integrated array of `design = "cerf"`.
    #[serde(default)]
    pub cerf: CerfConfig,
}

impl RegisterFileConfig {
    /// The MRF the banks model: the technology preset with `[register_file.mrf]`'s
    /// overrides ([`crate::rf::technology::MrfModel`]).
    pub fn mrf_model(&self) -> crate::rf::technology::MrfModel {
        crate::rf::technology::MrfModel::new(
            self.technology,
            &self.mrf,
            self.banks,
            self.bank_latency,
        )
    }

    /// The latency of one main register-file access, bank and network, from grant to
    /// the value at the collector ([`Self::mrf_model`]).
    pub fn mrf_latency(&self) -> Cycles {
        self.mrf_model().latency
    }

    /// MRF banks per SM under the technology (`banks` times its bank multiplier).
    pub fn mrf_banks(&self) -> u32 {
        self.mrf_model().banks
    }
}

/// An execution unit type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnitKind {
    /// Single-precision floating point (and, on GPUs without an INT unit, integer) lanes.
    Sp,
    /// Integer unit.
    Int,
    /// Special function unit.
    Sfu,
    /// Double-precision unit.
    Dp,
    /// Load/store (address generation; the memory system times the access itself).
    Mem,
}

/// Number of units of each type per SM.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnitCounts {
    /// SP units (each a warp-wide pipeline).
    pub sp: u32,
    /// INT units; may be 0 if every integer class runs on `sp`.
    pub int: u32,
    /// SFU units.
    pub sfu: u32,
    /// DP units.
    pub dp: u32,
    /// MEM (load/store) units.
    pub mem: u32,
}

impl UnitCounts {
    /// Units of type `kind`.
    pub fn get(&self, kind: UnitKind) -> u32 {
        match kind {
            UnitKind::Sp => self.sp,
            UnitKind::Int => self.int,
            UnitKind::Sfu => self.sfu,
            UnitKind::Dp => self.dp,
            UnitKind::Mem => self.mem,
        }
    }
}

/// Where an opcode class executes and how long it takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClassTiming {
    /// The unit type that executes the class.
    pub unit: UnitKind,
    /// Cycles from dispatch to result writeback.
    pub latency: Cycles,
    /// Cycles before the same unit accepts another warp instruction.
    pub initiation_interval: Cycles,
}

/// An opcode class: the granularity at which execution timing is configured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OpClass {
    /// FP32 add, mul, fma, min/max, compare, conversions.
    Fp32,
    /// Integer add/sub, logic, shifts, compares, moves, selects.
    Int,
    /// Integer multiply and multiply-add.
    IntMul,
    /// Integer divide and remainder.
    IntDiv,
    /// Transcendentals and reciprocals (rcp, sqrt, rsqrt, sin, cos, ex2, lg2).
    Sfu,
    /// FP64 arithmetic.
    Fp64,
    /// Loads, stores, atomics (address generation and issue to the memory system).
    Mem,
    /// Branches, barriers, exit.
    Control,
    /// Integer moves, logic, shifts, compares, selects, warp votes (`int_simple`; falls
    /// back to `int`).
    IntSimple,
    /// Integer minimum and maximum (`int_min_max`; falls back to `int`).
    IntMinMax,
    /// Integer multiply-add (`int_mad`; falls back to `int_mul`).
    IntMad,
    /// FP32 minimum and maximum (`fp32_min_max`; falls back to `fp32`).
    Fp32MinMax,
    /// FP32 fused multiply-add (`fp32_fma`; falls back to `fp32`).
    Fp32Fma,
    /// FP32 division (`fp32_div`; falls back to `sfu`).
    Fp32Div,
    /// FP64 division, reciprocal and square roots (`fp64_div`; falls back to `fp64`).
    Fp64Div,
    /// Warp shuffles (`shuffle`; falls back to `int`).
    Shuffle,
    /// FP32 compares, selects, abs, neg (`fp32_simple`; falls back to `fp32`).
    Fp32Simple,
    /// FP64 compares, selects, abs, neg (`fp64_simple`; falls back to `fp64`).
    Fp64Simple,
    /// Conversions with a float side, both sides at most 32 bits (`cvt`; falls back to
    /// `fp32_simple`, the class they belonged to before they were timed apart).
    Convert,
    /// Conversions with a float side and a 64-bit side (`cvt64`; falls back to `fp64`).
    Convert64,
}

impl OpClass {
    /// The eight original classes, in `OpClass as usize` order 0..8; [`OpClass::coarse`]
    /// maps every class onto one of them.
    pub const COARSE: usize = 8;

    /// The original class a finer one refines: the class whose timing it takes when the
    /// config gives it none ([`ClassTimings::get`]), and whose execution energy it costs.
    pub fn coarse(self) -> OpClass {
        match self {
            OpClass::IntSimple | OpClass::IntMinMax | OpClass::Shuffle => OpClass::Int,
            OpClass::IntMad => OpClass::IntMul,
            OpClass::Fp32MinMax | OpClass::Fp32Fma | OpClass::Fp32Simple | OpClass::Convert => {
                OpClass::Fp32
            }
            OpClass::Fp32Div => OpClass::Sfu,
            OpClass::Fp64Div | OpClass::Fp64Simple | OpClass::Convert64 => OpClass::Fp64,
            c => c,
        }
    }
}

/// `[pipeline.classes]`: timing of each opcode class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClassTimings {
    /// [`OpClass::Fp32`].
    pub fp32: ClassTiming,
    /// [`OpClass::Int`].
    pub int: ClassTiming,
    /// [`OpClass::IntMul`].
    pub int_mul: ClassTiming,
    /// [`OpClass::IntDiv`].
    pub int_div: ClassTiming,
    /// [`OpClass::Sfu`].
    pub sfu: ClassTiming,
    /// [`OpClass::Fp64`].
    pub fp64: ClassTiming,
    /// [`OpClass::Mem`].
    pub mem: ClassTiming,
    /// [`OpClass::Control`].
    pub control: ClassTiming,
    /// [`OpClass::IntSimple`] (absent: `int`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub int_simple: Option<ClassTiming>,
    /// [`OpClass::IntMinMax`] (absent: `int`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub int_min_max: Option<ClassTiming>,
    /// [`OpClass::IntMad`] (absent: `int_mul`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub int_mad: Option<ClassTiming>,
    /// [`OpClass::Fp32MinMax`] (absent: `fp32`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp32_min_max: Option<ClassTiming>,
    /// [`OpClass::Fp32Fma`] (absent: `fp32`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp32_fma: Option<ClassTiming>,
    /// [`OpClass::Fp32Div`] (absent: `sfu`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp32_div: Option<ClassTiming>,
    /// [`OpClass::Fp64Div`] (absent: `fp64`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp64_div: Option<ClassTiming>,
    /// [`OpClass::Shuffle`] (absent: `int`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shuffle: Option<ClassTiming>,
    /// [`OpClass::Fp32Simple`] (absent: `fp32`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp32_simple: Option<ClassTiming>,
    /// [`OpClass::Fp64Simple`] (absent: `fp64`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp64_simple: Option<ClassTiming>,
    /// [`OpClass::Convert`] (absent: `fp32_simple`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cvt: Option<ClassTiming>,
    /// [`OpClass::Convert64`] (absent: `fp64`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cvt64: Option<ClassTiming>,
}

impl ClassTimings {
    /// Every class with its key name, for validation and reports (optional classes that
    /// are absent resolve to their fallback).
    pub fn iter(&self) -> [(OpClass, &'static str, &ClassTiming); 20] {
        [
            (OpClass::Fp32, "fp32", &self.fp32),
            (OpClass::Int, "int", &self.int),
            (OpClass::IntMul, "int_mul", &self.int_mul),
            (OpClass::IntDiv, "int_div", &self.int_div),
            (OpClass::Sfu, "sfu", &self.sfu),
            (OpClass::Fp64, "fp64", &self.fp64),
            (OpClass::Mem, "mem", &self.mem),
            (OpClass::Control, "control", &self.control),
            (
                OpClass::IntSimple,
                "int_simple",
                self.get(OpClass::IntSimple),
            ),
            (
                OpClass::IntMinMax,
                "int_min_max",
                self.get(OpClass::IntMinMax),
            ),
            (OpClass::IntMad, "int_mad", self.get(OpClass::IntMad)),
            (
                OpClass::Fp32MinMax,
                "fp32_min_max",
                self.get(OpClass::Fp32MinMax),
            ),
            (OpClass::Fp32Fma, "fp32_fma", self.get(OpClass::Fp32Fma)),
            (OpClass::Fp32Div, "fp32_div", self.get(OpClass::Fp32Div)),
            (OpClass::Fp64Div, "fp64_div", self.get(OpClass::Fp64Div)),
            (OpClass::Shuffle, "shuffle", self.get(OpClass::Shuffle)),
            (
                OpClass::Fp32Simple,
                "fp32_simple",
                self.get(OpClass::Fp32Simple),
            ),
            (
                OpClass::Fp64Simple,
                "fp64_simple",
                self.get(OpClass::Fp64Simple),
            ),
            (OpClass::Convert, "cvt", self.get(OpClass::Convert)),
            (OpClass::Convert64, "cvt64", self.get(OpClass::Convert64)),
        ]
    }

    /// Timing of `class`, an absent optional class resolved to its fallback.
    pub fn get(&self, class: OpClass) -> &ClassTiming {
        match class {
            OpClass::Fp32 => &self.fp32,
            OpClass::Int => &self.int,
            OpClass::IntMul => &self.int_mul,
            OpClass::IntDiv => &self.int_div,
            OpClass::Sfu => &self.sfu,
            OpClass::Fp64 => &self.fp64,
            OpClass::Mem => &self.mem,
            OpClass::Control => &self.control,
            OpClass::IntSimple => self.int_simple.as_ref().unwrap_or(&self.int),
            OpClass::IntMinMax => self.int_min_max.as_ref().unwrap_or(&self.int),
            OpClass::IntMad => self.int_mad.as_ref().unwrap_or(&self.int_mul),
            OpClass::Fp32MinMax => self.fp32_min_max.as_ref().unwrap_or(&self.fp32),
            OpClass::Fp32Fma => self.fp32_fma.as_ref().unwrap_or(&self.fp32),
            OpClass::Fp32Div => self.fp32_div.as_ref().unwrap_or(&self.sfu),
            OpClass::Fp64Div => self.fp64_div.as_ref().unwrap_or(&self.fp64),
            OpClass::Shuffle => self.shuffle.as_ref().unwrap_or(&self.int),
            OpClass::Fp32Simple => self.fp32_simple.as_ref().unwrap_or(&self.fp32),
            OpClass::Fp64Simple => self.fp64_simple.as_ref().unwrap_or(&self.fp64),
            OpClass::Convert => match &self.cvt {
                Some(t) => t,
                None => self.get(OpClass::Fp32Simple),
            },
            OpClass::Convert64 => self.cvt64.as_ref().unwrap_or(&self.fp64),
        }
    }
}

/// `[pipeline]`: execution units.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PipelineConfig {
    /// Units of each type per SM.
    pub units: UnitCounts,
    /// Timing per opcode class.
    pub classes: ClassTimings,
    /// Sub-cores (Volta's processing blocks): a unit type with at least one unit per
    /// scheduler is split evenly between the schedulers, and a warp dispatches only to
    /// its own scheduler's share; types with fewer units stay shared (default false:
    /// every unit serves every scheduler).
    #[serde(default, skip_serializing_if = "is_false")]
    pub sub_core: bool,
    /// Cycles between an instruction leaving its operand collector and the first stage
    /// of its execution unit: pipeline registers the dispatch passes through (GPGPU-Sim:
    /// the collector's output register, the unit's dispatch register and the entry into
    /// its pipeline, 3 cycles). Added to every dispatched instruction's latency, memory
    /// instructions' address generation included; it does not occupy the unit longer.
    /// Default 0: the unit starts in the cycle of dispatch.
    #[serde(default, skip_serializing_if = "Cycles::is_zero")]
    pub dispatch_latency: Cycles,
}

impl PipelineConfig {
    /// Timing of opcode class `class`.
    pub fn timing(&self, class: OpClass) -> &ClassTiming {
        self.classes.get(class)
    }
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

fn default_write_policy() -> WritePolicy {
    WritePolicy::WriteBack
}
fn default_true() -> bool {
    true
}
fn default_allocation() -> AllocationPolicy {
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
    /// [`crate::hashing`].
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
    /// Every read hits and nothing is fetched (an idealised cache; default false).
    #[serde(default, skip_serializing_if = "is_false")]
    pub perfect: bool,
    /// Drop every line when a kernel starts (default false: contents persist).
    #[serde(default, skip_serializing_if = "is_false")]
    pub invalidate_between_kernels: bool,
    /// L1D only: the shared-memory sizes (bytes) the L1D's storage can be split at, the
    /// L1D and shared memory being one array of `size_bytes`. At each launch the
    /// smallest carve-out that holds the shared memory of the CTAs resident per SM is
    /// given to shared memory, and the L1D keeps the remaining ways. Empty (default): the
    /// L1D is `size_bytes` always.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shared_carveouts: Vec<u64>,
}

fn is_false(b: &bool) -> bool {
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

fn is_linear(f: &IndexFunction) -> bool {
    *f == IndexFunction::Linear
}
fn is_sector_fetch(f: &FetchGranularity) -> bool {
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
    /// Address decoding by bit pattern (see [`crate::l2`]); absent: `l2.interleave_bytes`
    /// interleaving and rows of `row_bytes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address_mapping: Option<DramAddressMapping>,
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
    /// Channel selection function over `a >> channel_bit` (default linear, i.e. modulo);
    /// a polynomial needs a power-of-two channel count.
    #[serde(default, skip_serializing_if = "is_linear")]
    pub channel_index: IndexFunction,
    /// Bit pattern of the channel-local address, most significant bit first, dots
    /// ignored: `R` row, `B` bank, `C` column, `S` byte within a burst, `0` unused.
    /// The bank is the `B` bits in order; its low bits select the L2 slice within the
    /// channel.
    pub pattern: String,
}

fn one() -> u32 {
    1
}
fn is_one(v: &u32) -> bool {
    *v == 1
}
fn is_zero_u32(v: &u32) -> bool {
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

/// Why a config could not be loaded. Every variant names where the problem is.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read config {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// No `configs/<name>.toml`.
    #[error("no GPU config named `{name}` in {dir} (available: {available})")]
    UnknownName {
        /// The name asked for.
        name: String,
        /// Where it was looked for.
        dir: PathBuf,
        /// The names that exist, comma separated.
        available: String,
    },
    /// The text is not TOML.
    #[error("{origin}: {message}")]
    Syntax {
        /// File name or other origin.
        origin: String,
        /// The parser's message.
        message: String,
    },
    /// An override is malformed or cannot be applied.
    #[error("override `{text}`: {message}")]
    Override {
        /// The override as given.
        text: String,
        /// What is wrong.
        message: String,
    },
    /// A key is unknown, missing or has the wrong type.
    #[error("{origin}: {key}: {message}")]
    Field {
        /// File name or other origin.
        origin: String,
        /// Dotted key path.
        key: String,
        /// What is wrong.
        message: String,
    },
    /// A key an override set is unknown or has the wrong type.
    #[error("override `{text}`: {key}: {message}")]
    OverrideField {
        /// The override as given.
        text: String,
        /// Dotted key path.
        key: String,
        /// What is wrong.
        message: String,
    },
    /// A value is impossible.
    #[error("{key}: {message}")]
    Invalid {
        /// Dotted key path.
        key: String,
        /// What is wrong.
        message: String,
    },
}

impl ConfigError {
    /// The dotted key the error is about, if it is about one key.
    pub fn key(&self) -> Option<&str> {
        match self {
            ConfigError::Field { key, .. }
            | ConfigError::OverrideField { key, .. }
            | ConfigError::Invalid { key, .. } => Some(key),
            _ => None,
        }
    }
}

pub(crate) fn invalid(key: impl Into<String>, message: impl fmt::Display) -> ConfigError {
    ConfigError::Invalid {
        key: key.into(),
        message: message.to_string(),
    }
}

/// One `key.path=value` override.
#[derive(Clone, Debug, PartialEq)]
pub struct Override {
    text: String,
    path: Vec<String>,
    value: toml::Value,
}

impl Override {
    /// Parses `key.path=value`. The value is parsed as a TOML value (`8`, `true`,
    /// `"gto"`, `{ unit = "sp", latency = 4, initiation_interval = 1 }`); text that is not
    /// a TOML value is taken as a string, so `sm.scheduler=gto` works unquoted.
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        let err = |message: &str| ConfigError::Override {
            text: text.to_owned(),
            message: message.to_owned(),
        };
        if text.contains(['\n', '\r']) {
            // The value is parsed as the right-hand side of one TOML line: a line break
            // would let it add keys of its own.
            return Err(err("a value must not contain a line break"));
        }
        let (key, value) = text
            .split_once('=')
            .ok_or_else(|| err("expected key.path=value"))?;
        let path: Vec<String> = key.trim().split('.').map(|s| s.trim().to_owned()).collect();
        if path.iter().any(|p| p.is_empty()) {
            return Err(err("empty component in the key path"));
        }
        let value_text = value.trim();
        if value_text.is_empty() {
            return Err(err("empty value"));
        }
        let value = match toml::from_str::<toml::Table>(&format!("v = {value_text}")) {
            Ok(mut t) => t.remove("v").ok_or_else(|| err("value did not parse"))?,
            Err(_) => toml::Value::String(value_text.to_owned()),
        };
        Ok(Self {
            text: text.to_owned(),
            path,
            value,
        })
    }

    /// The dotted key path.
    pub fn key(&self) -> String {
        self.path.join(".")
    }

    /// The override as given (`key.path=value`).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether the deserialization error `message` at dotted `key` is this override's:
    /// it wrote that key or a value inside it, or (an unknown field) a key under it.
    fn wrote(&self, key: &str, message: &str) -> bool {
        let path = self.path.join(".");
        path == key
            || key.starts_with(&format!("{path}."))
            || (message.starts_with("unknown field") && path.starts_with(&format!("{key}.")))
    }

    fn apply(&self, doc: &mut toml::Table) -> Result<(), ConfigError> {
        let err = |message: String| ConfigError::Override {
            text: self.text.clone(),
            message,
        };
        let (last, parents) = self
            .path
            .split_last()
            .ok_or_else(|| err("empty key".into()))?;
        let mut table = doc;
        for (i, part) in parents.iter().enumerate() {
            let entry = table
                .entry(part.clone())
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            table = match entry {
                toml::Value::Table(t) => t,
                _ => {
                    return Err(err(format!(
                        "`{}` is a value, not a section",
                        self.path[..=i].join(".")
                    )))
                }
            };
        }
        table.insert(last.clone(), self.value.clone());
        Ok(())
    }
}

/// Environment variable naming the directory that GPU configs are looked up in by name.
pub const CONFIGS_DIR_ENV: &str = "REGSIM_CONFIGS";

/// Where GPU configs are looked up by name when no executable is involved (libraries,
/// tests): `$REGSIM_CONFIGS`, else this source tree's `configs/`. See
/// [`find_configs_dir`].
pub fn default_configs_dir() -> PathBuf {
    find_configs_dir(None)
}

/// Where GPU configs are looked up by name, first match wins:
/// 1. `$REGSIM_CONFIGS`, if set and non-empty (even if it does not exist, so that the
///    error names the directory the user asked for);
/// 2. given the `regsim` executable, `configs/` of the repository it was built in
///    (`<repo>/target/<profile>/regsim` -> `<repo>/configs`), if that is a directory;
/// 3. `configs/` of this source tree, fixed at compile time.
///
/// A library loaded into someone else's program passes `None`: that program's location
/// says nothing about where regsim lives.
pub fn find_configs_dir(executable: Option<&Path>) -> PathBuf {
    if let Some(dir) = std::env::var_os(CONFIGS_DIR_ENV).filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    executable
        .and_then(|exe| Some(exe.parent()?.parent()?.parent()?.join("configs")))
        .filter(|d| d.is_dir())
        .unwrap_or_else(source_configs_dir)
}

/// The `configs/` directory of this source tree, fixed at compile time.
pub fn source_configs_dir() -> PathBuf {
    // `<repo>/crates/timing` -> `<repo>/configs`, without `..` in what messages show.
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    crate_dir.parent().and_then(Path::parent).map_or_else(
        || crate_dir.join("../../configs"),
        |repo| repo.join("configs"),
    )
}

/// Names of the configs in `dir` (file stems of `*.toml`), sorted.
pub fn available_configs(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let p = e.path();
            (p.extension()? == "toml").then(|| p.file_stem()?.to_str().map(str::to_owned))?
        })
        .collect();
    names.sort();
    names
}

impl GpuConfig {
    /// Loads a config by name (`gtx480` -> `<configs_dir>/gtx480.toml`) or by path
    /// (anything containing a path separator or ending in `.toml`), applies the overrides
    /// in order and validates the result.
    pub fn load(
        selector: &str,
        configs_dir: &Path,
        overrides: &[Override],
    ) -> Result<Self, ConfigError> {
        let is_path = selector.contains('/')
            || selector.contains(std::path::MAIN_SEPARATOR)
            || selector.ends_with(".toml");
        let path = if is_path {
            PathBuf::from(selector)
        } else {
            let p = configs_dir.join(format!("{selector}.toml"));
            if !p.is_file() {
                return Err(ConfigError::UnknownName {
                    name: selector.to_owned(),
                    dir: configs_dir.to_path_buf(),
                    available: available_configs(configs_dir).join(", "),
                });
            }
            p
        };
        let text = std::fs::read_to_string(&path).map_err(|source| ConfigError::Io {
            path: path.clone(),
            source,
        })?;
        Self::from_toml(&text, &path.display().to_string(), overrides)
    }

    /// Parses TOML text (`origin` names it in errors), applies overrides, validates.
    pub fn from_toml(
        text: &str,
        origin: &str,
        overrides: &[Override],
    ) -> Result<Self, ConfigError> {
        let mut doc: toml::Table = toml::from_str(text).map_err(|e| ConfigError::Syntax {
            origin: origin.to_owned(),
            message: e.to_string(),
        })?;
        for o in overrides {
            o.apply(&mut doc)?;
        }
        // The papers' memory system, when selected (in the file or by an override): its
        // settings first, then the user's overrides again so that theirs win.
        let paper = paper_memory_settings(&doc, origin)?;
        if !paper.is_empty() {
            for p in &paper {
                p.apply(&mut doc)?;
            }
            for o in overrides {
                o.apply(&mut doc)?;
            }
        }
        // Deserialize from a canonical rendering of the document so that error spans can
        // be mapped back to dotted key paths, whether the key came from the file or from
        // an override.
        let rendered = toml::to_string(&doc).map_err(|e| ConfigError::Syntax {
            origin: origin.to_owned(),
            message: e.to_string(),
        })?;
        let mut config: GpuConfig = toml::from_str(&rendered).map_err(|e| {
            let key = key_at(&rendered, e.span(), e.message());
            let message = e.message().to_owned();
            // A key an override wrote is the override's error, not the file's.
            match overrides.iter().rev().find(|o| o.wrote(&key, &message)) {
                Some(o) => ConfigError::OverrideField {
                    text: o.text.clone(),
                    key,
                    message,
                },
                None => ConfigError::Field {
                    origin: origin.to_owned(),
                    key,
                    message,
                },
            }
        })?;
        // The MRF's energy follows its technology (LTRF Table 2's relative power) unless
        // `energy.mrf_technology_scale` says otherwise. Filled in here, once, so that the
        // config every consumer (and the stats file) sees carries the factor used.
        if config.energy.mrf_technology_scale.is_none() {
            config.energy.mrf_technology_scale =
                Some(config.register_file.technology.relative_power());
        }
        config.validate()?;
        // The sized structures' energies follow their configured sizes unless set in the
        // `[energy]` table or by `--set energy.KEY=…` (after validation, so that an
        // impossible size is reported as such first).
        let energy_keys = doc.get("energy").and_then(toml::Value::as_table);
        let explicit = |key: &str| energy_keys.is_some_and(|t| t.contains_key(key));
        let sizes = config.structure_sizes();
        config
            .energy
            .fill_sized(&sizes, explicit)
            .map_err(|e| invalid(e.size_key, e.reason()))?;
        Ok(config)
    }

    /// The configured sizes of the structures whose energy per access depends on size,
    /// and which of them the design uses.
    pub fn structure_sizes(&self) -> energy::sized::StructureSizes {
        use energy::sized::SizedStructure;
        let rf = &self.register_file;
        let register_file_bytes = u64::from(self.sm.registers) * 4;
        energy::sized::StructureSizes {
            rfc_entries_per_thread: rf.rfc.entries_per_thread.into(),
            orf_entries_per_thread: rf.orf_lrf.orf_entries.into(),
            ltrf_registers_per_interval: rf.ltrf.registers_per_interval,
            cerf_array_bytes: rf.cerf.size_bytes.unwrap_or(register_file_bytes),
            register_file_bytes,
            wir_reuse_buffer_entries: rf.wir.reuse_buffer_entries,
            wir_vsb_entries: rf.wir.vsb_entries,
            wir_verify_cache_entries: rf.wir.verify_cache_entries,
            used: match rf.design {
                RegisterFileDesign::Rfc => Some(SizedStructure::Rfc),
                RegisterFileDesign::OrfLrf => Some(SizedStructure::Orf),
                RegisterFileDesign::Ltrf
                | RegisterFileDesign::LtrfPlus
                | RegisterFileDesign::LtrfConf => Some(SizedStructure::LtrfCache),
                RegisterFileDesign::Cerf => Some(SizedStructure::Cerf),
                RegisterFileDesign::Wir => Some(SizedStructure::Wir),
                RegisterFileDesign::Baseline
                | RegisterFileDesign::Ideal
                | RegisterFileDesign::IdealUnlimited
                | RegisterFileDesign::Malekeh
                | RegisterFileDesign::Bow
                | RegisterFileDesign::ReuseCache => None,
            },
        }
    }

    /// Checks for impossible values; the error names the key.
    pub fn validate(&self) -> Result<(), ConfigError> {
        crate::limits::check(self)?;
        if let Err(energy::EnergyError::Invalid { key, message }) = self.energy.validate() {
            return Err(invalid(format!("energy.{key}"), message));
        }
        let g = &self.gpu;
        nonzero("gpu.num_sms", g.num_sms)?;
        nonzero("gpu.core_clock_mhz", g.core_clock_mhz)?;
        nonzero("gpu.memory_clock_mhz", g.memory_clock_mhz)?;
        if !(10..=99).contains(&g.compute_capability) {
            return Err(ConfigError::Invalid {
                key: "gpu.compute_capability".into(),
                message: format!(
                    "{} is not a compute capability written as major x 10 + minor (e.g. 80 for 8.0)",
                    g.compute_capability
                ),
            });
        }

        let sm = &self.sm;
        nonzero("sm.max_warps", sm.max_warps)?;
        nonzero("sm.max_threads", sm.max_threads)?;
        if u64::from(sm.max_threads) > u64::from(sm.max_warps) * u64::from(WARP_SIZE) {
            return Err(invalid(
                "sm.max_threads",
                format_args!(
                    "{} threads do not fit in sm.max_warps = {} warps of {WARP_SIZE}",
                    sm.max_threads, sm.max_warps
                ),
            ));
        }
        nonzero("sm.max_ctas", sm.max_ctas)?;
        if sm.registers < WARP_SIZE {
            return Err(invalid(
                "sm.registers",
                "must hold at least one warp register (32)",
            ));
        }
        nonzero("sm.schedulers", sm.schedulers)?;
        if sm.schedulers > sm.max_warps {
            return Err(invalid(
                "sm.schedulers",
                "more schedulers than sm.max_warps",
            ));
        }
        if sm.scheduler == SchedulerPolicy::TwoLevel {
            nonzero("sm.active_warps", sm.active_warps)?;
            let per_scheduler = sm.max_warps.div_ceil(sm.schedulers);
            if sm.active_warps > per_scheduler {
                return Err(invalid(
                    "sm.active_warps",
                    format_args!(
                        "{} exceeds the warps per scheduler ({per_scheduler})",
                        sm.active_warps
                    ),
                ));
            }
        }
        nonzero("sm.issue_width", sm.issue_width)?;
        nonzero("sm.ibuffer_entries", sm.ibuffer_entries)?;
        nonzero("sm.register_allocation_unit", sm.register_allocation_unit)?;
        nonzero("sm.max_registers_per_thread", sm.max_registers_per_thread)?;

        let rf = &self.register_file;
        nonzero("register_file.banks", rf.banks)?;
        rf.wir.validate()?;
        nonzero("register_file.read_ports_per_bank", rf.read_ports_per_bank)?;
        nonzero(
            "register_file.write_ports_per_bank",
            rf.write_ports_per_bank,
        )?;
        nonzero_cycles("register_file.bank_latency", rf.bank_latency)?;
        if rf.port_sharing == PortSharing::Shared
            && rf.write_ports_per_bank != rf.read_ports_per_bank
        {
            return Err(invalid(
                "register_file.write_ports_per_bank",
                format_args!(
                    "must equal register_file.read_ports_per_bank ({}) when \
                     register_file.port_sharing = \"shared\"",
                    rf.read_ports_per_bank
                ),
            ));
        }
        if rf.partition_by_scheduler && !rf.banks.is_multiple_of(sm.schedulers) {
            return Err(invalid(
                "register_file.banks",
                format_args!(
                    "{} banks cannot be split evenly between sm.schedulers = {} \
                     (register_file.partition_by_scheduler = true)",
                    rf.banks, sm.schedulers
                ),
            ));
        }
        nonzero(
            "register_file.operands_per_collector",
            rf.operands_per_collector,
        )?;
        if rf.partition_collectors {
            let counts: Vec<(String, u32)> = match (rf.collectors, rf.specialised_collectors) {
                (CollectorKind::Specialised, Some(s)) => [
                    ("sp", s.sp),
                    ("int", s.int),
                    ("sfu", s.sfu),
                    ("dp", s.dp),
                    ("mem", s.mem),
                ]
                .into_iter()
                .map(|(k, n)| (format!("register_file.specialised_collectors.{k}"), n))
                .collect(),
                _ => vec![("register_file.collector_units".into(), rf.collector_units)],
            };
            for (key, n) in counts {
                if n > 0 && !n.is_multiple_of(sm.schedulers) {
                    return Err(invalid(
                        &key,
                        format_args!(
                            "{n} units cannot be split evenly between sm.schedulers = {} \
                             (register_file.partition_collectors = true)",
                            sm.schedulers
                        ),
                    ));
                }
            }
        }
        match rf.collectors {
            CollectorKind::Generic => nonzero("register_file.collector_units", rf.collector_units)?,
            CollectorKind::Specialised => {
                let s = rf.specialised_collectors.ok_or_else(|| {
                    invalid(
                        "register_file.specialised_collectors",
                        "required when register_file.collectors = \"specialised\"",
                    )
                })?;
                for (name, n, unit) in [
                    ("sp", s.sp, UnitKind::Sp),
                    ("int", s.int, UnitKind::Int),
                    ("sfu", s.sfu, UnitKind::Sfu),
                    ("dp", s.dp, UnitKind::Dp),
                    ("mem", s.mem, UnitKind::Mem),
                ] {
                    if n == 0 && self.pipeline.units.get(unit) > 0 {
                        return Err(invalid(
                            format!("register_file.specialised_collectors.{name}"),
                            "must be at least 1 when the SM has units of that type",
                        ));
                    }
                }
            }
        }
        rf.technology.validate()?;
        crate::register_budget::validate(self)?;
        crate::rf::technology::MrfModel::validate(rf.technology, &rf.mrf, rf.banks)?;
        rf.ltrf.validate(self)?;
        if rf.rfc.entries_per_thread > 8 {
            return Err(invalid(
                "register_file.rfc.entries_per_thread",
                format_args!(
                    "is {}; the energy tables (Gebhart MICRO'11 Table 3) cover 1 to 8 \
                     entries per thread (0 disables the cache)",
                    rf.rfc.entries_per_thread
                ),
            ));
        }
        if rf.rfc.lrf && rf.rfc.entries_per_thread == 0 {
            return Err(invalid(
                "register_file.rfc.lrf",
                "needs register_file.rfc.entries_per_thread >= 1 (the LRF evicts into the RFC)",
            ));
        }
        if rf.orf_lrf.orf_entries > 8 {
            return Err(invalid(
                "register_file.orf_lrf.orf_entries",
                format_args!(
                    "is {}; Gebhart MICRO'11 Table 3 covers 1 to 8 entries per thread \
                     (0 for no ORF)",
                    rf.orf_lrf.orf_entries
                ),
            ));
        }
        if let Err(e) = rf.orf_lrf.validate() {
            return Err(invalid("register_file.orf_lrf", e));
        }
        rf.malekeh
            .validate()
            .and_then(|()| rf.bow.validate())
            .map_err(|(key, message)| invalid(key, message))?;
        if rf.ideal_capacity_registers == Some(0) {
            return Err(invalid(
                "register_file.ideal_capacity_registers",
                "must be non-zero",
            ));
        }

        let p = &self.pipeline;
        nonzero("pipeline.units.sp", p.units.sp)?;
        nonzero("pipeline.units.mem", p.units.mem)?;
        for (_, name, t) in p.classes.iter() {
            if p.units.get(t.unit) == 0 {
                return Err(invalid(
                    format!("pipeline.classes.{name}.unit"),
                    format_args!("runs on {:?} but pipeline.units has none", t.unit),
                ));
            }
            nonzero_cycles(&format!("pipeline.classes.{name}.latency"), t.latency)?;
            nonzero_cycles(
                &format!("pipeline.classes.{name}.initiation_interval"),
                t.initiation_interval,
            )?;
        }

        validate_cache("l1d", &self.l1d)?;
        if self.register_file.design == RegisterFileDesign::Cerf {
            // One array line holds one warp register (32 lanes x 4 bytes).
            if self.l1d.line_bytes != WARP_SIZE * 4 {
                return Err(invalid(
                    "l1d.line_bytes",
                    format_args!(
                        "must be {} under register_file.design = \"cerf\" (one warp register \
                         per array line)",
                        WARP_SIZE * 4
                    ),
                ));
            }
            validate_cache("register_file.cerf", &self.l1d_array())?;
            let cerf = &self.register_file.cerf;
            if cerf.tag_banks == 0 || !cerf.tag_banks.is_power_of_two() {
                return Err(invalid(
                    "register_file.cerf.tag_banks",
                    "must be a power of two (the set-index bits next to the block offset)",
                ));
            }
            if cerf.tag_lookups_per_bank == Some(0) {
                return Err(invalid(
                    "register_file.cerf.tag_lookups_per_bank",
                    "must be at least 1",
                ));
            }
        }
        validate_cache("constant_cache", &self.constant_cache)?;
        validate_cache("icache", &self.icache)?;
        validate_cache("l2.slice", &self.l2.slice)?;
        let l2 = &self.l2.slice;
        for (name, c) in [
            ("l1d", &self.l1d),
            ("constant_cache", &self.constant_cache),
            ("icache", &self.icache),
        ] {
            if c.line_bytes != l2.line_bytes {
                return Err(invalid(
                    format!("{name}.line_bytes"),
                    format_args!(
                        "must equal l2.slice.line_bytes ({}): lines move between levels whole",
                        l2.line_bytes
                    ),
                ));
            }
            if c.sector_bytes != l2.sector_bytes {
                return Err(invalid(
                    format!("{name}.sector_bytes"),
                    format_args!("must equal l2.slice.sector_bytes ({})", l2.sector_bytes),
                ));
            }
        }

        let sh = &self.shared_memory;
        nonzero("shared_memory.banks", sh.banks)?;
        power_of_two(
            "shared_memory.bank_width_bytes",
            u64::from(sh.bank_width_bytes),
        )?;
        nonzero_cycles("shared_memory.latency", sh.latency)?;

        let ic = &self.interconnect;
        nonzero_cycles("interconnect.latency", ic.latency)?;
        nonzero("interconnect.bytes_per_cycle", ic.bytes_per_cycle)?;
        nonzero("interconnect.control_bytes", ic.control_bytes)?;
        let max_packet = ic.control_bytes + l2.line_bytes;
        if ic.input_buffer_bytes < max_packet {
            return Err(invalid(
                "interconnect.input_buffer_bytes",
                format_args!("must hold at least one write packet ({max_packet} bytes)"),
            ));
        }

        nonzero("l2.slices", self.l2.slices)?;
        power_of_two("l2.interleave_bytes", u64::from(self.l2.interleave_bytes))?;
        if self.l2.interleave_bytes < l2.line_bytes {
            return Err(invalid(
                "l2.interleave_bytes",
                format_args!("must be at least l2.slice.line_bytes ({})", l2.line_bytes),
            ));
        }

        let d = &self.dram;
        nonzero("dram.channels", d.channels)?;
        if !self.l2.slices.is_multiple_of(d.channels) {
            return Err(invalid(
                "l2.slices",
                format_args!(
                    "{} slices cannot be split evenly between dram.channels = {}",
                    self.l2.slices, d.channels
                ),
            ));
        }
        nonzero("dram.banks", d.banks)?;
        power_of_two("dram.row_bytes", u64::from(d.row_bytes))?;
        if d.row_bytes < l2.line_bytes {
            return Err(invalid(
                "dram.row_bytes",
                format_args!("must be at least l2.slice.line_bytes ({})", l2.line_bytes),
            ));
        }
        nonzero_mem_cycles("dram.t_cl", d.t_cl)?;
        nonzero_mem_cycles("dram.t_rcd", d.t_rcd)?;
        nonzero("dram.bytes_per_cycle", d.bytes_per_cycle)?;
        nonzero("dram.queue_window", d.queue_window)?;
        nonzero("dram.bank_groups", d.bank_groups)?;
        if !d.banks.is_multiple_of(d.bank_groups) {
            return Err(invalid(
                "dram.bank_groups",
                format_args!(
                    "{} banks do not split into {} groups",
                    d.banks, d.bank_groups
                ),
            ));
        }
        if let Some(m) = &d.address_mapping {
            crate::l2::check_mapping(m, d.channels, d.banks, self.l2.slices / d.channels)
                .map_err(|(k, msg)| invalid(format!("dram.address_mapping.{k}"), msg))?;
        }
        crate::limits::check_host_memory(self)
    }

    /// The L1D the memory system builds: `[l1d]`, or under CERF the integrated array
    /// (`[register_file.cerf]` capacity and associativity, the rest from `[l1d]`).
    pub fn l1d_array(&self) -> CacheConfig {
        let mut c = self.l1d.clone();
        if self.register_file.design == RegisterFileDesign::Cerf {
            let cerf = &self.register_file.cerf;
            c.size_bytes = cerf.size_bytes.unwrap_or(u64::from(self.sm.registers) * 4);
            c.ways = cerf.ways;
            if cerf.writes == CerfWrites::WriteBack {
                c.write_policy = WritePolicy::WriteBack;
                c.write_allocate = true;
            }
        }
        c
    }

    /// Register capacity per SM that occupancy is computed against.
    pub fn register_capacity(&self) -> u64 {
        match self.register_file.design {
            RegisterFileDesign::Baseline
            | RegisterFileDesign::Ltrf
            | RegisterFileDesign::LtrfPlus
            | RegisterFileDesign::LtrfConf
            | RegisterFileDesign::Rfc
            | RegisterFileDesign::OrfLrf
            | RegisterFileDesign::Malekeh
            | RegisterFileDesign::Bow
            | RegisterFileDesign::ReuseCache
            | RegisterFileDesign::Wir => self
                .register_file
                .technology
                .capacity(u64::from(self.sm.registers)),
            // The integrated array holds the register file (CERF Table I).
            RegisterFileDesign::Cerf => u64::from(self.sm.registers),
            RegisterFileDesign::Ideal => self
                .register_file
                .ideal_capacity_registers
                .unwrap_or_else(|| {
                    self.register_file
                        .technology
                        .capacity(u64::from(self.sm.registers))
                }),
            RegisterFileDesign::IdealUnlimited => u64::MAX,
        }
    }
}

fn nonzero(key: &str, v: u32) -> Result<(), ConfigError> {
    if v == 0 {
        Err(invalid(key, "must be at least 1"))
    } else {
        Ok(())
    }
}
fn nonzero_cycles(key: &str, v: Cycles) -> Result<(), ConfigError> {
    if v == Cycles::ZERO {
        Err(invalid(key, "must be at least 1 cycle"))
    } else {
        Ok(())
    }
}
fn nonzero_mem_cycles(key: &str, v: MemCycles) -> Result<(), ConfigError> {
    if v == MemCycles::ZERO {
        Err(invalid(key, "must be at least 1 DRAM cycle"))
    } else {
        Ok(())
    }
}
fn power_of_two(key: &str, v: u64) -> Result<(), ConfigError> {
    if v.is_power_of_two() {
        Ok(())
    } else {
        Err(invalid(
            key,
            format_args!("must be a power of two, not {v}"),
        ))
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
    if c.line_bytes / c.sector_bytes > crate::cache::MAX_SECTORS {
        return Err(invalid(
            key("sector_bytes"),
            format_args!(
                "at most {} sectors per line are supported",
                crate::cache::MAX_SECTORS
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
    Ok(())
}

/// Maps a deserialization error back to the dotted key it concerns, using the canonical
/// rendering: `[a.b]` headers and `key = value` lines.
fn key_at(rendered: &str, span: Option<std::ops::Range<usize>>, message: &str) -> String {
    let quoted = |prefix: &str| -> Option<String> {
        let rest = message.strip_prefix(prefix)?;
        Some(rest.split('`').next()?.to_owned())
    };
    let field = quoted("unknown field `").or_else(|| quoted("missing field `"));
    let Some(span) = span else {
        return field.unwrap_or_default();
    };
    let mut section = String::new();
    let mut key_on_line: Option<String> = None;
    let mut offset = 0;
    for line in rendered.split_inclusive('\n') {
        let trimmed = line.trim();
        let is_header = trimmed.starts_with('[');
        if is_header {
            section = trimmed
                .trim_matches(|c| c == '[' || c == ']')
                .trim()
                .replace('"', "");
        }
        if span.start < offset + line.len() {
            if !is_header {
                key_on_line = trimmed.split('=').next().map(|k| k.trim().replace('"', ""));
            }
            break;
        }
        offset += line.len();
    }
    let unknown = message.starts_with("unknown field");
    let mut parts: Vec<String> = Vec::new();
    if !section.is_empty() {
        parts.push(section);
    }
    match (key_on_line, field) {
        // An unknown field's span covers the key itself, or the header of an unknown
        // table (already the last part of the section); a missing field's span covers
        // the table it is missing from.
        (Some(k), _) => parts.push(k),
        (None, Some(f)) if !unknown || parts.is_empty() => parts.push(f),
        _ => {}
    }
    parts.join(".")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(name: &str, overrides: &[&str]) -> Result<GpuConfig, ConfigError> {
        let o: Vec<Override> = overrides
            .iter()
            .map(|s| Override::parse(s))
            .collect::<Result<_, _>>()?;
        GpuConfig::load(name, &default_configs_dir(), &o)
    }

    fn err_of(name: &str, overrides: &[&str]) -> ConfigError {
        match load(name, overrides) {
            Ok(_) => panic!("{overrides:?} was accepted"),
            Err(e) => e,
        }
    }

    #[test]
    fn every_opcode_class_refines_one_of_the_eight_coarse_ones_as_its_timing_falls_back() {
        use OpClass::*;
        // With only the coarse classes given, a finer one takes its coarse class's timing.
        let g = load("gtx480", &[]).unwrap();
        let coarse_only = ClassTimings {
            int_simple: None,
            int_min_max: None,
            int_mad: None,
            fp32_min_max: None,
            fp32_fma: None,
            fp32_div: None,
            fp64_div: None,
            shuffle: None,
            fp32_simple: None,
            fp64_simple: None,
            cvt: None,
            cvt64: None,
            ..g.pipeline.classes
        };
        for (c, _, _) in coarse_only.iter() {
            assert!((c.coarse() as usize) < OpClass::COARSE, "{c:?}");
            assert_eq!(c.coarse().coarse(), c.coarse());
            assert_eq!(coarse_only.get(c), coarse_only.get(c.coarse()), "{c:?}");
        }
        // Conversions fall back to the classes they were timed with before they had
        // their own: fp32_simple (itself falling back to fp32) and fp64.
        let with_simple = ClassTimings {
            fp32_simple: Some(g.pipeline.classes.sfu),
            ..coarse_only
        };
        assert_eq!(with_simple.get(Convert), &g.pipeline.classes.sfu);
        assert_eq!(coarse_only.get(Convert64), &g.pipeline.classes.fp64);
        assert_eq!(coarse_only.get(Fp64Simple), &g.pipeline.classes.fp64);
    }

    /// Results per clock per SM of an opcode class: its units times 32 lanes over its
    /// initiation interval.
    fn results_per_clock(g: &GpuConfig, class: OpClass) -> (UnitKind, u32) {
        let t = g.pipeline.classes.get(class);
        let units = g.pipeline.units.get(t.unit);
        (t.unit, units * 32 / t.initiation_interval.get() as u32)
    }

    #[test]
    fn conversions_fp64_and_sfu_run_at_the_programming_guides_rates_per_compute_capability() {
        use OpClass::*;
        use UnitKind as U;
        // The CUDA C Programming Guide's arithmetic-instruction throughput table (results
        // per clock per multiprocessor): rows "32-bit floating-point reciprocal, ...
        // sine, cosine" (Sfu), "64-bit floating-point add, multiply, multiply-add"
        // (Fp64), "type conversions from and to 64-bit types" (Convert64), "all other
        // type conversions" (Convert), for the compute capability of each papers' GPU.
        // gtx480's FP64 is the GeForce GTX 480's 1/8 of FP32 (4), not the table's 16 for
        // compute capability 2.0, which is the Tesla part's.
        type Row = (OpClass, UnitKind, u32);
        let table: [(&str, [Row; 4]); 4] = [
            (
                "gtx480", // 2.0
                [
                    (Sfu, U::Sfu, 4),
                    (Fp64, U::Dp, 4),
                    (Convert64, U::Sp, 16),
                    (Convert, U::Sp, 16),
                ],
            ),
            (
                "maxwell-ltrf", // 5.2
                [
                    (Sfu, U::Sfu, 32),
                    (Fp64, U::Dp, 4),
                    (Convert64, U::Dp, 4),
                    (Convert, U::Sfu, 32),
                ],
            ),
            (
                "qv100", // 7.0
                [
                    (Sfu, U::Sfu, 16),
                    (Fp64, U::Dp, 32),
                    (Convert64, U::Dp, 16),
                    (Convert, U::Sfu, 16),
                ],
            ),
            (
                "rtx2060-scaled", // 7.5
                [
                    (Sfu, U::Sfu, 16),
                    (Fp64, U::Dp, 2),
                    (Convert64, U::Dp, 2),
                    (Convert, U::Sfu, 16),
                ],
            ),
        ];
        for (name, rows) in table {
            let g = load(name, &[]).unwrap();
            for (class, unit, rate) in rows {
                assert_eq!(
                    results_per_clock(&g, class),
                    (unit, rate),
                    "{name} {class:?}"
                );
            }
            // f64 compares, selects, abs and neg run on the FP64 unit at its rate.
            assert_eq!(
                results_per_clock(&g, Fp64Simple),
                results_per_clock(&g, Fp64),
                "{name}"
            );
        }
        // GPGPU-Sim's transcriptions: cvt of any type and the f64 compares are ALU
        // operations of latency 1 issued every cycle on the SP units; f64 arithmetic is
        // its DP_OP (on the SFU when the config has no DP unit).
        for (name, fp64_unit) in [("gpgpusim-gtx480", U::Sfu), ("gpgpusim-qv100", U::Dp)] {
            let g = load(name, &[]).unwrap();
            for class in [Convert, Convert64, Fp64Simple] {
                let t = g.pipeline.classes.get(class);
                assert_eq!(
                    (t.unit, t.latency, t.initiation_interval),
                    (U::Sp, Cycles::new(1), Cycles::new(1)),
                    "{name} {class:?}"
                );
            }
            assert_eq!(g.pipeline.classes.get(Fp64).unit, fp64_unit, "{name}");
        }
    }

    #[test]
    fn the_modern_configs_load_with_their_published_values() {
        let a = load("rtx-a6000", &[]).unwrap();
        assert_eq!(
            (a.gpu.num_sms, a.sm.max_warps, a.sm.max_threads),
            (84, 48, 1536)
        );
        assert_eq!(a.sm.dependence, Dependence::StallCounter);
        assert_eq!(a.register_file.banks / a.sm.schedulers, 2);
        assert_eq!(u64::from(a.l2.slices) * a.l2.slice.size_bytes, 6 << 20);
        let h = load("h100", &[]).unwrap();
        assert_eq!(
            (h.gpu.num_sms, h.sm.max_warps, h.sm.max_threads),
            (132, 64, 2048)
        );
        assert_eq!(u64::from(h.l2.slices) * h.l2.slice.size_bytes, 50 << 20);
        assert_eq!(h.sm.shared_memory_bytes, 228 << 10);
        // The collector core stays the default: a config that does not say is unchanged.
        assert_eq!(
            load("gtx480", &[]).unwrap().sm.dependence,
            Dependence::Scoreboard
        );
        assert_eq!(
            load("qv100", &[]).unwrap().sm.dependence,
            Dependence::StallCounter
        );
    }

    #[test]
    fn the_paper_memory_model_restores_the_papers_simplified_mechanisms() {
        // gtx480 and qv100 use their GPUs' mechanisms by default ...
        let g = load("gtx480", &[]).unwrap();
        assert_eq!(g.memory.model, MemoryModel::Hardware);
        assert_eq!(g.l1d.fetch, FetchGranularity::Line);
        assert_ne!(g.l1d.set_index, IndexFunction::default());
        assert!(g.l1d.invalidate_between_kernels && g.l2.fill_on_host_copy);
        assert!(g.dram.address_mapping.is_some());
        let q = load("qv100", &[]).unwrap();
        assert_eq!((q.l1d.size_bytes, q.l1d.ways), (131072, 256));
        assert_eq!(q.l1d.shared_carveouts.last(), Some(&98304));
        assert_ne!(q.l2.slice.set_index, IndexFunction::default());
        // ... and the papers' simplified memory system on request, with the papers'
        // parameters unchanged.
        let gp = load("gtx480", &["memory.model=paper"]).unwrap();
        assert_eq!(gp.memory.model, MemoryModel::Paper);
        assert_eq!(gp.l1d.fetch, FetchGranularity::Sector);
        assert_eq!(gp.l1d.set_index, IndexFunction::default());
        assert!(!gp.l1d.invalidate_between_kernels && !gp.l2.fill_on_host_copy);
        assert_eq!(
            (gp.dram.address_mapping.as_ref(), gp.dram.row_bytes),
            (None, 2048)
        );
        assert_eq!(
            (gp.l1d.size_bytes, gp.l1d.latency),
            (g.l1d.size_bytes, g.l1d.latency)
        );
        let qp = load("qv100", &["memory.model=paper"]).unwrap();
        assert_eq!((qp.l1d.size_bytes, qp.l1d.ways), (32768, 4));
        assert!(qp.l1d.shared_carveouts.is_empty());
        assert_eq!(qp.l2.slice.set_index, IndexFunction::default());
        assert!(qp.dram.address_mapping.is_none());
        // The user's own settings win over the paper's.
        let mixed = load("gtx480", &["memory.model=paper", "l1d.fetch=line"]).unwrap();
        assert_eq!(mixed.l1d.fetch, FetchGranularity::Line);
    }

    #[test]
    fn a_bad_memory_model_or_paper_list_is_refused_naming_the_key() {
        let e = err_of("gtx480", &["memory.model=simplified"]);
        assert_eq!(e.key(), Some("memory.model"), "{e}");
        // A config without the papers' list cannot select it.
        let e = err_of("gpgpusim-gtx480", &["memory.model=paper"]);
        assert_eq!(e.key(), Some("memory.paper"), "{e}");
        for bad in [
            "memory.paper=[\"l1d.ways\"]",
            "memory.paper=[3]",
            "memory.paper=[\"unset l1d..ways\"]",
            "memory.paper=[\"memory.model=hardware\"]",
        ] {
            let e = err_of("gtx480", &["memory.model=paper", bad]);
            assert_eq!(e.key(), Some("memory.paper"), "{bad}: {e}");
        }
        // A setting naming a key that does not exist is the ordinary unknown-key error.
        let e = err_of(
            "gtx480",
            &["memory.model=paper", "memory.paper=[\"l1d.wayz=4\"]"],
        );
        assert_eq!(e.key(), Some("l1d.wayz"), "{e}");
    }

    #[test]
    fn the_four_configs_load_with_their_papers_values() {
        let names = available_configs(&default_configs_dir());
        for n in ["gtx480", "maxwell-ltrf", "qv100", "rtx2060-scaled"] {
            assert!(names.iter().any(|x| x == n), "{n} missing from {names:?}");
        }
        let g = load("gtx480", &[]).unwrap();
        assert_eq!(
            (
                g.gpu.num_sms,
                g.sm.max_warps,
                g.sm.max_threads,
                g.sm.max_ctas
            ),
            (15, 48, 1536, 8)
        );
        assert_eq!(g.sm.registers * 4, 128 * 1024);
        assert_eq!(g.l1d.size_bytes, 16 * 1024);
        assert_eq!(g.sm.shared_memory_bytes, 48 * 1024);
        assert_eq!(g.l2.slice.size_bytes * u64::from(g.l2.slices), 768 * 1024);

        let m = load("maxwell-ltrf", &[]).unwrap();
        assert_eq!(
            (m.gpu.num_sms, m.gpu.core_clock_mhz, m.sm.max_warps),
            (24, 1137, 64)
        );
        assert_eq!(
            (m.register_file.banks, m.sm.registers * 4),
            (16, 256 * 1024)
        );
        assert_eq!((m.l1d.size_bytes, m.l1d.ways), (16 * 1024, 4));
        assert_eq!(
            (
                m.l2.slice.size_bytes * u64::from(m.l2.slices),
                m.l2.slice.ways
            ),
            (2 << 20, 8)
        );
        assert_eq!(
            (m.dram.channels, m.dram.scheduler),
            (8, DramSchedulerPolicy::FrFcfs)
        );
        assert_eq!(m.sm.scheduler, SchedulerPolicy::TwoLevel);

        let r = load("rtx2060-scaled", &[]).unwrap();
        assert_eq!(
            (r.gpu.num_sms, r.sm.max_warps, r.sm.max_threads),
            (10, 32, 1024)
        );
        assert_eq!(
            (r.sm.registers * 4, r.sm.scheduler),
            (256 * 1024, SchedulerPolicy::Gto)
        );
        assert_eq!(r.l2.slice.size_bytes * u64::from(r.l2.slices), 1 << 20);
        assert_eq!(
            u64::from(r.sm.shared_memory_bytes) + r.l1d.size_bytes,
            64 * 1024
        );

        let v = load("qv100", &[]).unwrap();
        assert_eq!(
            (
                v.gpu.num_sms,
                v.sm.max_warps,
                v.sm.schedulers,
                v.sm.registers
            ),
            (80, 64, 4, 65536)
        );
        // One 128 KB L1D/shared array; shared memory takes up to 96 KB of it per launch.
        assert_eq!(v.l1d.size_bytes, 128 * 1024);
        assert_eq!(
            v.l1d.shared_carveouts.last(),
            Some(&u64::from(v.sm.shared_memory_bytes))
        );
        assert_eq!(v.l2.slice.size_bytes * u64::from(v.l2.slices), 6 << 20);
        assert_eq!(v.pipeline.timing(OpClass::Fp64).latency, Cycles::new(8));
    }

    #[test]
    fn a_config_survives_a_serialization_round_trip() {
        let g = load("qv100", &[]).unwrap();
        let text = toml::to_string(&g).unwrap();
        let mut back = GpuConfig::from_toml(&text, "round trip", &[]).unwrap();
        // Every energy is now written in the config, so each one's source says so.
        assert!(back
            .energy
            .sources
            .values()
            .all(|s| s == energy::sized::EXPLICIT_SOURCE));
        back.energy.sources = g.energy.sources.clone();
        assert_eq!(back, g);
    }

    #[test]
    fn compute_capability_is_a_key_with_a_sm_70_default() {
        assert_eq!(load("gtx480", &[]).unwrap().gpu.compute_capability, 70);
        let a = load("gtx480", &["gpu.compute_capability=86"]).unwrap();
        assert_eq!(a.gpu.compute_capability, 86);
        let e = load("gtx480", &["gpu.compute_capability=860"]).unwrap_err();
        assert!(e.to_string().contains("gpu.compute_capability"), "{e}");
        // The default is not written out, so existing statistics files stay as they were.
        let text = toml::to_string(&load("gtx480", &[]).unwrap()).unwrap();
        assert!(!text.contains("compute_capability"), "{text}");
    }

    #[test]
    fn overrides_set_values_by_dotted_path() {
        let g = load(
            "gtx480",
            &[
                "l1d.ways=2",
                "sm.scheduler=two_level",
                "register_file.bank_latency = 6",
                "pipeline.classes.fp32.latency=7",
            ],
        )
        .unwrap();
        assert_eq!(g.l1d.ways, 2);
        assert_eq!(g.l1d.sets(), 64);
        assert_eq!(g.sm.scheduler, SchedulerPolicy::TwoLevel);
        assert_eq!(g.register_file.bank_latency, Cycles::new(6));
        assert_eq!(g.pipeline.timing(OpClass::Fp32).latency, Cycles::new(7));
        let i = load(
            "gtx480",
            &[
                "register_file.design=\"ideal\"",
                "register_file.ideal_capacity_registers=262144",
            ],
        )
        .unwrap();
        assert_eq!(i.register_capacity(), 262144);
        // Without a capacity, the ideal design has the baseline's: equal occupancy.
        let base = load("gtx480", &[]).unwrap();
        let i = load("gtx480", &["register_file.design=\"ideal\""]).unwrap();
        assert_eq!(i.register_capacity(), base.register_capacity());
        assert_eq!(base.register_capacity(), u64::from(base.sm.registers));
        let u = load("gtx480", &["register_file.design=\"ideal-unlimited\""]).unwrap();
        assert_eq!(u.register_capacity(), u64::MAX);
    }

    #[test]
    fn mrf_energy_follows_the_technology_unless_overridden() {
        let one = load("gtx480", &[]).unwrap().energy;
        let mrf = |e: &energy::EnergyConfig, access| e.kind("mrf", access).unwrap().pj;
        // LTRF Table 2's power column, #1…#7.
        for (tech, power) in [
            (1, 1.0),
            (2, 8.0),
            (3, 8.0),
            (4, 3.2),
            (5, 3.2),
            (6, 1.05),
            (7, 0.65),
        ] {
            let t = format!("register_file.technology={tech}");
            let e = load("gtx480", &[&t]).unwrap().energy;
            assert_eq!(e.mrf_technology_scale, Some(power), "#{tech}");
            assert_eq!(mrf(&e, "read"), power * mrf(&one, "read"), "#{tech}");
            assert_eq!(mrf(&e, "write"), power * mrf(&one, "write"), "#{tech}");
            // Only the MRF: the cache LTRF puts in front of it keeps its energy.
            assert_eq!(e.ltrf_cache_read_pj, one.ltrf_cache_read_pj);
        }
        // An explicit factor wins, whichever override comes first.
        for overrides in [
            [
                "register_file.technology=6",
                "energy.mrf_technology_scale=0.5",
            ],
            [
                "energy.mrf_technology_scale=0.5",
                "register_file.technology=6",
            ],
        ] {
            let e = load("gtx480", &overrides).unwrap().energy;
            assert_eq!(e.mrf_technology_scale, Some(0.5));
            assert_eq!(mrf(&e, "read"), 0.5 * mrf(&one, "read"));
        }
        let e = err_of("gtx480", &["energy.mrf_technology_scale=-1"]);
        assert_eq!(e.key(), Some("energy.mrf_technology_scale"), "{e}");
    }

    #[test]
    fn sized_energies_follow_the_configured_sizes_unless_set() {
        let orf = |n: u8, more: &[&str]| {
            let mut o = vec![
                "register_file.design=\"orf-lrf\"".to_owned(),
                format!("register_file.orf_lrf.orf_entries={n}"),
            ];
            o.extend(more.iter().map(|s| (*s).to_owned()));
            let o: Vec<&str> = o.iter().map(String::as_str).collect();
            load("gtx480", &o).unwrap().energy
        };
        let three = orf(3, &[]);
        let six = orf(6, &[]);
        // Gebhart MICRO'11 Table 3: 6 entries 2.0 pJ per 128 bits against 3 entries' 1.2.
        assert!((six.orf_read_pj - (8.0 * 2.0 + 12.16)).abs() < 1e-9);
        assert!(six.orf_read_pj > three.orf_read_pj);
        assert_eq!(
            six.sources["orf_read_pj"],
            "Gebhart MICRO'11 Table 3, 6-entry row"
        );
        // The RFC follows its own key, whatever the design.
        let rfc = load("gtx480", &["register_file.rfc.entries_per_thread=4"])
            .unwrap()
            .energy;
        assert!((rfc.rfc_write_pj - (8.0 * 6.1 + 12.16)).abs() < 1e-9);
        // An explicit value wins, from an override or the config's own table.
        let set = orf(6, &["energy.orf_read_pj=7.5"]);
        assert_eq!(set.orf_read_pj, 7.5);
        assert_eq!(set.orf_write_pj, six.orf_write_pj);
        assert_eq!(set.sources["orf_read_pj"], energy::sized::EXPLICIT_SOURCE);
        let text = std::fs::read_to_string(default_configs_dir().join("gtx480.toml")).unwrap();
        let own = GpuConfig::from_toml(
            &format!("{text}\n[energy]\nrfc_read_pj = 3.0\n"),
            "inline",
            &[],
        )
        .unwrap();
        assert_eq!(own.energy.rfc_read_pj, 3.0);
        // A size no table covers is refused for the design that uses it, naming the key
        // and the energies that would price it; set, they are accepted.
        let cerf = [
            "register_file.design=\"cerf\"",
            "register_file.cerf.size_bytes=65536",
        ];
        let e = err_of("gtx480", &cerf);
        assert_eq!(e.key(), Some("register_file.cerf.size_bytes"), "{e}");
        assert!(e.to_string().contains("energy.cerf_tag_lookup_pj"), "{e}");
        let mut priced = cerf.to_vec();
        priced.extend([
            "energy.cerf_data_read_pj=40",
            "energy.cerf_data_write_pj=50",
            "energy.cerf_tag_lookup_pj=8",
        ]);
        assert_eq!(
            load("gtx480", &priced).unwrap().energy.cerf_data_read_pj,
            40.0
        );
        let wir = [
            "register_file.design=\"wir\"",
            "register_file.wir.verify_cache_entries=16",
        ];
        let e = err_of("gtx480", &wir);
        assert_eq!(
            e.key(),
            Some("register_file.wir.verify_cache_entries"),
            "{e}"
        );
        // Another design does not use the WIR tables: not refused.
        assert!(load("gtx480", &wir[1..]).is_ok());
    }

    #[test]
    fn energy_keys_override_and_unknown_ones_are_named() {
        let c = load("gtx480", &[]).unwrap();
        // Every default, with technology #1's factor on the MRF filled in.
        assert_eq!(
            c.energy,
            energy::EnergyConfig {
                mrf_technology_scale: Some(1.0),
                ..energy::EnergyConfig::default()
            }
        );
        let c = load("gtx480", &["energy.mrf_read_pj=12.5"]).unwrap();
        assert_eq!(c.energy.mrf_read_pj, 12.5);
        assert_eq!(
            c.energy.orf_read_pj,
            energy::EnergyConfig::default().orf_read_pj
        );
        assert_eq!(
            err_of("gtx480", &["energy.mrf_raed_pj=1"]).key(),
            Some("energy.mrf_raed_pj")
        );
        let e = err_of("gtx480", &["energy.l2_read_pj=-3"]);
        assert_eq!(e.key(), Some("energy.l2_read_pj"), "{e}");
    }

    #[test]
    fn loading_by_path_works_and_unknown_names_list_the_available_ones() {
        let p = default_configs_dir().join("qv100.toml");
        assert_eq!(load(&p.display().to_string(), &[]).unwrap().gpu.num_sms, 80);
        let e = err_of("gtx48", &[]).to_string();
        assert!(
            e.contains("gtx48") && e.contains("gtx480") && e.contains("qv100"),
            "{e}"
        );
    }

    #[test]
    fn unknown_keys_are_named_with_their_full_path() {
        let e = err_of("gtx480", &["l1d.wayz=4"]);
        assert_eq!(e.key(), Some("l1d.wayz"), "{e}");
        let e = err_of("gtx480", &["pipeline.classes.fp32.latncy=4"]);
        assert_eq!(e.key(), Some("pipeline.classes.fp32.latncy"), "{e}");
        let e = err_of("gtx480", &["gpu.frequency=4"]);
        assert!(
            e.to_string().contains("gpu.frequency: unknown field"),
            "{e}"
        );
        let e = err_of("gtx480", &["nosuchsection.x=1"]);
        assert_eq!(e.key(), Some("nosuchsection"), "{e}");
    }

    #[test]
    fn wrong_types_and_missing_keys_are_named() {
        let e = err_of("gtx480", &["l2.slice.ways=\"eight\""]);
        assert_eq!(e.key(), Some("l2.slice.ways"), "{e}");
        let e = err_of("gtx480", &["sm.scheduler=fifo"]);
        assert_eq!(e.key(), Some("sm.scheduler"), "{e}");
        let text = std::fs::read_to_string(default_configs_dir().join("gtx480.toml")).unwrap();
        let without = text.replace("mshrs = 64", "");
        let e = GpuConfig::from_toml(&without, "edited", &[]).unwrap_err();
        assert_eq!(e.key(), Some("l1d.mshrs"), "{e}");
        let e = GpuConfig::from_toml("[gpu]\nnum_sms = 1\n", "tiny", &[]).unwrap_err();
        assert!(
            e.to_string().contains("gpu.core_clock_mhz") || e.to_string().contains("missing"),
            "{e}"
        );
    }

    #[test]
    fn impossible_values_are_rejected_naming_the_key() {
        let cases: &[(&str, &str, &str)] = &[
            ("gpu.num_sms=0", "gpu.num_sms", "at least 1"),
            ("l1d.ways=3", "l1d.ways", "must divide size_bytes"),
            ("l1d.size_bytes=12288", "l1d.size_bytes", "power of two"),
            ("l1d.latency=0", "l1d.latency", "at least 1 cycle"),
            ("l1d.sector_bytes=24", "l1d.sector_bytes", "power of two"),
            (
                "l1d.line_bytes=64",
                "l1d.line_bytes",
                "must equal l2.slice.line_bytes",
            ),
            ("l2.slice.mshrs=0", "l2.slice.mshrs", "at least 1"),
            ("l2.slices=7", "l2.slices", "dram.channels"),
            ("sm.max_threads=4096", "sm.max_threads", "sm.max_warps"),
            (
                "register_file.bank_latency=0",
                "register_file.bank_latency",
                "at least 1",
            ),
            (
                "register_file.collectors=\"specialised\"",
                "register_file.specialised_collectors",
                "required",
            ),
            (
                "pipeline.classes.int.unit=\"int\"",
                "pipeline.classes.int.unit",
                "none",
            ),
            ("dram.row_bytes=3000", "dram.row_bytes", "power of two"),
            (
                "interconnect.bytes_per_cycle=0",
                "interconnect.bytes_per_cycle",
                "at least 1",
            ),
        ];
        for &(o, key, fragment) in cases {
            let e = err_of("gtx480", &[o]);
            assert_eq!(e.key(), Some(key), "{o}: {e}");
            let text = e.to_string();
            assert!(
                text.starts_with(&format!("{key}: ")) && text.contains(fragment),
                "{o}: {text}"
            );
        }
    }

    #[test]
    fn configs_are_found_in_the_repository_of_the_executable() {
        if std::env::var_os(CONFIGS_DIR_ENV).is_some() {
            // The variable wins over everything below; nothing else to check here.
            assert_eq!(
                find_configs_dir(None),
                PathBuf::from(std::env::var_os(CONFIGS_DIR_ENV).unwrap())
            );
            return;
        }
        let repo = std::env::temp_dir().join(format!("regsim-configs-{}", std::process::id()));
        std::fs::create_dir_all(repo.join("configs")).unwrap();
        let exe = repo.join("target/release/regsim");
        assert_eq!(find_configs_dir(Some(&exe)), repo.join("configs"));
        // No configs/ there: fall back to the source tree's.
        let elsewhere = repo.join("configs/target/release/regsim");
        assert_eq!(find_configs_dir(Some(&elsewhere)), source_configs_dir());
        assert_eq!(find_configs_dir(None), source_configs_dir());
        assert!(source_configs_dir().join("gtx480.toml").is_file());
        std::fs::remove_dir_all(&repo).unwrap();
    }

    #[test]
    fn malformed_overrides_are_rejected() {
        assert!(Override::parse("l1d.ways").is_err());
        assert!(Override::parse("l1d..ways=4").is_err());
        assert!(Override::parse("l1d.ways=").is_err());
        let e = Override::parse("sm.scheduler=\"gto\"\nsm.max_warps=1").unwrap_err();
        assert!(e.to_string().contains("line break"), "{e}");
        let e = err_of("gtx480", &["l1d.ways.x=4"]);
        assert!(matches!(e, ConfigError::Override { .. }), "{e}");
    }

    #[test]
    fn the_gpgpusim_transcriptions_carry_their_options() {
        let g = load("gpgpusim-gtx480", &[]).unwrap();
        // -gpgpu_cache:dl1 N:32:128:4,L:L:m:N:H and -gpgpu_l1_latency 35.
        assert_eq!((g.l1d.sets(), g.l1d.ways, g.l1d.latency.get()), (32, 4, 35));
        assert_eq!(g.l1d.fetch, FetchGranularity::Line);
        assert_eq!(
            g.l1d.set_index,
            IndexFunction::Xor {
                bits: vec![13, 14, 15, 17, 19]
            }
        );
        assert_eq!(g.l1d.local_write_policy, Some(WritePolicy::WriteBack));
        // -gpgpu_dram_timing_opt, -gpgpu_l2_rop_latency, -dram_latency.
        let d = &g.dram;
        assert_eq!(
            [d.t_ccd, d.t_rrd, d.t_rcd, d.t_ras, d.t_rp, d.t_rc, d.t_cl, d.t_wl].map(|t| t.get()),
            [2, 6, 12, 28, 12, 40, 12, 4]
        );
        assert_eq!((g.l2.slice.latency.get(), d.latency.get()), (120, 100));
        assert_eq!(g.l2.slices, 12);
        assert_eq!(g.pipeline.timing(OpClass::IntDiv).latency.get(), 145);
        assert_eq!(g.pipeline.timing(OpClass::Fp64).unit, UnitKind::Sfu);

        let v = load("gpgpusim-qv100", &[]).unwrap();
        assert_eq!(v.gpu.kernel_launch_latency.get(), 5000);
        assert_eq!(v.sm.scheduler, SchedulerPolicy::Lrr);
        assert!(v.pipeline.sub_core && v.register_file.partition_by_scheduler);
        assert_eq!(
            v.l2.slice.set_index,
            IndexFunction::Polynomial { polynomial: 37 }
        );
        assert_eq!(v.l1d.shared_carveouts.last(), Some(&98304));
        assert!(v.icache.perfect && v.constant_cache.perfect);
        assert_eq!(v.pipeline.timing(OpClass::Sfu).latency.get(), 100);
        // The optional classes fall back where a config does not set them.
        let q = load("qv100", &[]).unwrap();
        assert_eq!(
            q.pipeline.timing(OpClass::IntSimple),
            q.pipeline.timing(OpClass::Int)
        );
        assert_eq!(
            q.pipeline.timing(OpClass::Fp32Div),
            q.pipeline.timing(OpClass::Sfu)
        );
    }

    #[test]
    fn new_mechanism_keys_are_checked() {
        let e = err_of(
            "gpgpusim-gtx480",
            &["l1d.set_index={ function = \"polynomial\", polynomial = 19 }"],
        );
        assert_eq!(e.key(), Some("l1d.set_index"), "{e}");
        let e = err_of("gpgpusim-gtx480", &["dram.bank_groups=3"]);
        assert_eq!(e.key(), Some("dram.bank_groups"), "{e}");
        let e = err_of("gpgpusim-gtx480", &["dram.address_mapping.pattern=RRBBCC"]);
        assert_eq!(e.key(), Some("dram.address_mapping.pattern"), "{e}");
        let e = err_of("gpgpusim-qv100", &["l1d.shared_carveouts=[0, 100]"]);
        assert_eq!(e.key(), Some("l1d.shared_carveouts"), "{e}");
    }
}

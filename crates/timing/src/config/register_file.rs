//! The register file's parameters: the design and each design's section (CERF, the
//! register-file cache), banks, collectors and port sharing.

use crate::time::Cycles;
use serde::{Deserialize, Serialize};

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

/// How many bank reads a source operand wider than 32 bits (a 64-bit pair, a 128-bit
/// quad) costs the collector units.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WideOperandReads {
    /// Each 32-bit register of the operand is its own bank read (an f64 FMA's three
    /// pairs are six reads), in the bank of that register: GPGPU-Sim-style 32-bit banks.
    #[default]
    PerRegister,
    /// The whole operand is one read, in the bank of its first register (banks as wide
    /// as the widest operand); the read delivers all its registers.
    PerOperand,
}

impl WideOperandReads {
    /// Whether this is the default (left out of serialized configs).
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }
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
    /// How many bank reads a 64- or 128-bit source operand costs ([`WideOperandReads`]).
    #[serde(default, skip_serializing_if = "WideOperandReads::is_default")]
    pub wide_operand_reads: WideOperandReads,
    /// Bank reads of a matrix (`tensor` class: `wmma.mma`, `mma.sync`) instruction's
    /// sources: absent, one per source register it names (a `wmma.mma` m16n16k16 f32
    /// names 24); `n`, at most `n` operand
    /// slots: its source registers (after `wide_operand_reads`) split in order into `n`
    /// groups as even as possible, each one read in the bank of its first register that
    /// delivers the group. Turing's HMMA.1688 has 7 source slots (Malekeh §2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tensor_operand_slots: Option<u32>,
    /// An instruction whose bank reads (after `wide_operand_reads` and
    /// `tensor_operand_slots`) exceed `operands_per_collector` takes several collector
    /// units of its kind and partition, ⌈reads / operands_per_collector⌉ (at most as many
    /// as serve it), which collect their shares in parallel and dispatch it once, when
    /// all have arrived; it issues only when that many are free. Default false: one unit
    /// holds every operand of an instruction (`operands_per_collector` sizes energy only).
    /// Baseline and ideal designs only.
    #[serde(default, skip_serializing_if = "super::memory::is_false")]
    pub multi_collector: bool,
    /// Instructions the collector units of one scheduler may dispatch per cycle (0, the
    /// default: no limit beyond the execution units).
    #[serde(default)]
    pub dispatch_per_scheduler: u32,
    /// The modern core's result queue (Huerta et al. MICRO'25, register file): a result
    /// of a variable-latency instruction (memory, SFU; anything not on the `sp`, `int` or
    /// `dp` unit) waits for its banks' write ports behind the fixed-latency results that
    /// want them in the same cycle, whose writes the compiler's stall counts rely on. Its
    /// delays are counted as `result_queue_write_delays`. Needs `sm.core = "modern"`;
    /// taken by `design = "baseline"` and `"reuse-cache"` (the modern core's banks), while
    /// the collector designs run on the modern core keep their own write arbitration
    /// (default false: every result oldest first).
    #[serde(default, skip_serializing_if = "super::memory::is_false")]
    pub result_queue: bool,
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
    /// `[register_file.reuse_cache]`: how the compiler prepares the program for
    /// `design = "reuse-cache"`.
    #[serde(default, skip_serializing_if = "ReuseCacheConfig::is_default")]
    pub reuse_cache: ReuseCacheConfig,
}

/// The instruction order the reuse bits of `design = "reuse-cache"` are set on, which is
/// the order the program runs in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReuseSchedule {
    /// Each block reordered for operand reuse, as ptxas orders SASS
    /// ([`compiler::reuse_schedule`]; the list schedule is regsim's).
    #[default]
    Reuse,
    /// PTX order, as written.
    Program,
}

/// `[register_file.reuse_cache]`: read by `design = "reuse-cache"` and by the modern
/// core's `baseline` (the same banks with the cache off), so that the cache's off/on
/// comparison can run one program order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReuseCacheConfig {
    /// `schedule = "reuse"` or `"program"`; absent: `"reuse"` under `reuse-cache` (what
    /// ptxas does), `"program"` under `baseline` (the program as written).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schedule: Option<ReuseSchedule>,
}

impl ReuseCacheConfig {
    fn is_default(&self) -> bool {
        *self == ReuseCacheConfig::default()
    }

    /// The order `design` runs the program in.
    pub fn schedule_for(&self, design: RegisterFileDesign) -> ReuseSchedule {
        match design {
            RegisterFileDesign::ReuseCache => self.schedule.unwrap_or(ReuseSchedule::Reuse),
            _ => self.schedule.unwrap_or(ReuseSchedule::Program),
        }
    }
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

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

use crate::time::{Cycles, MemCycles};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

mod error;
mod location;
mod memory;
mod register_file;
mod sampling;
mod sm;
#[cfg(test)]
mod tests;

pub use error::*;
pub use location::*;
pub use memory::*;
pub use register_file::*;
pub use sampling::*;
pub use sm::*;

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
    /// Per-SM texture cache (read-only; `tex` and `tld4` fetches). Absent: texture
    /// fetches have no memory side and finish with the `mem` class's latency (the timing
    /// model before the texture path); every shipped config has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub texture_cache: Option<CacheConfig>,
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
    /// `[sampling]`: sampled simulation (optional; default off).
    #[serde(default, skip_serializing_if = "SamplingConfig::is_default")]
    pub sampling: SamplingConfig,
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
    /// SMs of each GPC (graphics processing cluster), in SM order: the CTAs of a
    /// thread-block cluster are resident at once on SMs of one GPC. Empty (the default):
    /// one GPC of all SMs. The list must add up to `num_sms`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpc_sms: Vec<u32>,
}

impl ChipConfig {
    /// The SM ranges of the GPCs, in order.
    pub fn gpcs(&self) -> Vec<std::ops::Range<usize>> {
        if self.gpc_sms.is_empty() {
            return std::iter::once(0..self.num_sms as usize).collect();
        }
        let mut start = 0;
        self.gpc_sms
            .iter()
            .map(|&n| {
                let r = start..start + n as usize;
                start = r.end;
                r
            })
            .collect()
    }
}

fn default_compute_capability() -> u32 {
    70
}

fn is_default_compute_capability(v: &u32) -> bool {
    *v == default_compute_capability()
}

impl GpuConfig {
    /// Whether the design runs `register_file.reuse_cache.schedule`: the reuse cache, and
    /// the modern core's `baseline` (the same banks with the cache off). Every other
    /// design runs the program as written and refuses the key.
    pub fn reads_reuse_schedule(&self) -> bool {
        let design = self.register_file.design;
        design == RegisterFileDesign::ReuseCache
            || (design == RegisterFileDesign::Baseline && self.sm.core == Core::Modern)
    }

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
        // Likewise a modern config's collector-core preset (`sm.collector`) when the
        // collector core is selected.
        let mut paper = paper_memory_settings(&doc, origin)?;
        paper.extend(memory::collector_core_settings(&doc, origin)?);
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
            l1d_bytes: self.l1d.size_bytes,
            l1d_ways: self.energy.l1d_priced_ways.unwrap_or(self.l1d.ways),
            l1d_ways_priced_explicitly: self.energy.l1d_priced_ways.is_some(),
            l1d_line_bytes: self.l1d.line_bytes,
            l2_slice_bytes: self.l2.slice.size_bytes,
            l2_ways: self.l2.slice.ways,
            l2_line_bytes: self.l2.slice.line_bytes,
            shared_memory_array_bytes: if self.l1d.shared_carveouts.is_empty() {
                self.sm.shared_memory_bytes.into()
            } else {
                self.l1d.size_bytes
            },
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
        self.sampling.validate()?;
        if let Err(energy::EnergyError::Invalid { key, message }) = self.energy.validate() {
            return Err(invalid(format!("energy.{key}"), message));
        }
        let g = &self.gpu;
        nonzero("gpu.num_sms", g.num_sms)?;
        nonzero("gpu.core_clock_mhz", g.core_clock_mhz)?;
        nonzero("gpu.memory_clock_mhz", g.memory_clock_mhz)?;
        if !g.gpc_sms.is_empty() {
            let sum: u64 = g.gpc_sms.iter().map(|&n| u64::from(n)).sum();
            if g.gpc_sms.contains(&0) || sum != u64::from(g.num_sms) {
                return Err(invalid(
                    "gpu.gpc_sms",
                    format!(
                        "{:?} adds up to {sum} SMs (each GPC at least one); gpu.num_sms is {} \
                         (when changing gpu.num_sms, set the GPCs too, e.g. gpu.gpc_sms=[{}] \
                         for one GPC)",
                        g.gpc_sms, g.num_sms, g.num_sms
                    ),
                ));
            }
        }
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
        if sm.core == Core::Modern && sm.dependence == Dependence::Scoreboard {
            return Err(invalid(
                "sm.core",
                "\"modern\" has no scoreboard for fixed-latency results: it needs sm.dependence = \"stall_counter\" or \"control_bits\"",
            ));
        }
        if sm.dependence == Dependence::ControlBits && sm.core != Core::Modern {
            return Err(invalid(
                "sm.dependence",
                "\"control_bits\" are the modern core's: it needs sm.core = \"modern\"",
            ));
        }
        if let Some(b) = sm.memory_buffer.filter(|b| b.entries > 0) {
            if sm.core != Core::Modern {
                return Err(invalid(
                    "sm.memory_buffer",
                    "the memory-instruction buffer is the modern core's: it needs sm.core = \"modern\"",
                ));
            }
            nonzero("sm.memory_buffer.issue_interval", b.issue_interval)?;
            if b.entries > 1024 || b.issue_interval > 1_000_000 {
                return Err(invalid(
                    "sm.memory_buffer",
                    "at most 1024 entries and an issue interval of at most 1000000 cycles",
                ));
            }
        }
        if sm.constant_operands && sm.core != Core::Modern {
            return Err(invalid(
                "sm.constant_operands",
                "constant-bank operands are timed on the modern core: it needs sm.core = \"modern\"",
            ));
        }
        if sm.l0_stream_buffer > 0 && sm.core != Core::Modern {
            return Err(invalid(
                "sm.l0_stream_buffer",
                "the L0 instruction cache's stream buffer is the modern core's: it needs sm.core = \"modern\"",
            ));
        }
        if sm.l0_stream_buffer > 1024 {
            return Err(invalid("sm.l0_stream_buffer", "at most 1024 lines"));
        }
        if let Some(l0) = sm.l0_icache {
            if sm.core != Core::Modern {
                return Err(invalid(
                    "sm.l0_icache",
                    "the per-sub-core L0 instruction cache is the modern core's: it needs sm.core = \"modern\"",
                ));
            }
            if !(1..=32).contains(&l0.ways) {
                return Err(invalid(
                    "sm.l0_icache.ways",
                    format_args!("{} ways: must be 1 to 32", l0.ways),
                ));
            }
            // 1 MiB per sub-core (64x the 16 KB measured on Turing); checked here, not in
            // crate::limits, whose keys exist in every config.
            if l0.size_bytes > 1 << 20 {
                return Err(invalid(
                    "sm.l0_icache.size_bytes",
                    format_args!(
                        "{} is over the limit of 1048576 (regsim's bound for this key)",
                        l0.size_bytes
                    ),
                ));
            }
            let set_bytes = u64::from(l0.ways) * u64::from(self.icache.line_bytes);
            // (A zero icache.line_bytes is refused below, naming that key.)
            if set_bytes > 0 && (l0.size_bytes == 0 || u64::from(l0.size_bytes) % set_bytes != 0) {
                return Err(invalid(
                    "sm.l0_icache.size_bytes",
                    format_args!(
                        "{} bytes is not a whole number of sets (at least one) of \
                         sm.l0_icache.ways ({}) lines of icache.line_bytes ({}): a multiple \
                         of {set_bytes}",
                        l0.size_bytes, l0.ways, self.icache.line_bytes
                    ),
                ));
            }
        }
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
        if sm.register_allocation_unit > sm.registers {
            // A warp's allocation would never fit: every launch would be refused.
            return Err(invalid(
                "sm.register_allocation_unit",
                format_args!(
                    "{} is over the limit of {} (sm.registers: one warp's allocation must fit \
                     the register file)",
                    sm.register_allocation_unit, sm.registers
                ),
            ));
        }
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
        validate_operand_reads(rf)?;
        if rf.reuse_cache.schedule.is_some() && !self.reads_reuse_schedule() {
            return Err(invalid(
                "register_file.reuse_cache.schedule",
                "only register_file.design = \"reuse-cache\" and the modern core's \"baseline\" \
                 (sm.core = \"modern\") run a reuse schedule",
            ));
        }
        if rf.result_queue && self.sm.core != Core::Modern {
            return Err(invalid(
                "register_file.result_queue",
                "the result queue is the modern core's: it needs sm.core = \"modern\"",
            ));
        }
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
        for (name, c) in [
            ("constant_cache", &self.constant_cache),
            ("icache", &self.icache),
            ("l2.slice", &self.l2.slice),
        ]
        .into_iter()
        .chain(self.texture_cache.as_ref().map(|t| ("texture_cache", t)))
        {
            if c.bypass_global_loads {
                return Err(invalid(
                    format!("{name}.bypass_global_loads"),
                    "only the L1D (l1d.bypass_global_loads) can be bypassed by global loads",
                ));
            }
        }
        if let Some(t) = &self.texture_cache {
            validate_cache("texture_cache", t)?;
        }
        validate_cache("l2.slice", &self.l2.slice)?;
        let l2 = &self.l2.slice;
        for (name, c) in [
            ("l1d", &self.l1d),
            ("constant_cache", &self.constant_cache),
            ("icache", &self.icache),
        ]
        .into_iter()
        .chain(self.texture_cache.as_ref().map(|t| ("texture_cache", t)))
        {
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
        if let Some(a) = self.l2.atomic_unit {
            nonzero("l2.atomic_unit.interval", a.interval)?;
        }

        let ic = &self.interconnect;
        nonzero_cycles("interconnect.latency", ic.latency)?;
        nonzero("interconnect.bytes_per_cycle", ic.bytes_per_cycle)?;
        nonzero("interconnect.control_bytes", ic.control_bytes)?;
        let max_packet = ic.control_bytes + l2.line_bytes;
        if ic.input_buffer_bytes < max_packet {
            return Err(invalid(
                "interconnect.input_buffer_bytes",
                format_args!(
                    "must hold at least one write packet: interconnect.control_bytes ({}) + \
                     l2.slice.line_bytes ({}) = {max_packet} bytes",
                    ic.control_bytes, l2.line_bytes
                ),
            ));
        }

        if ic.flit_bytes > 0 {
            // A packet occupies whole flits: the largest must still fit the input buffer,
            // or no write ever crosses (a run that only stops at the cycle limit).
            let flit = u64::from(ic.flit_bytes);
            let in_flits = u64::from(max_packet).div_ceil(flit) * flit;
            if in_flits > u64::from(ic.input_buffer_bytes) {
                return Err(invalid(
                    "interconnect.flit_bytes",
                    format_args!(
                        "a write packet of {max_packet} bytes takes {in_flits} bytes in \
                         flits of {flit}, more than interconnect.input_buffer_bytes ({})",
                        ic.input_buffer_bytes
                    ),
                ));
            }
        }

        nonzero("l2.slices", self.l2.slices)?;
        let per_packet = if self.l2.sector_lookups {
            l2.sectors_per_line()
        } else {
            1
        };
        if self.l2.input_queue_entries != 0 && self.l2.input_queue_entries < per_packet {
            return Err(invalid(
                "l2.input_queue_entries",
                format_args!(
                    "must be 0 (unbounded) or at least {per_packet}, the entries of one \
                     packet"
                ),
            ));
        }
        if self.interconnect.injection_backpressure == InjectionBackpressure::MissQueue
            && self.l1d.miss_queue_entries == 0
        {
            return Err(invalid(
                "interconnect.injection_backpressure",
                "\"miss_queue\" needs a bounded L1D miss queue (l1d.miss_queue_entries)",
            ));
        }
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
            crate::memory::l2::check_mapping(m, d.channels, d.banks, self.l2.slices / d.channels)
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
            // Ours: CERF's array holds registers and L1D lines (CERF Table I); the paper's
            // Fermi-class SM keeps shared memory in its own storage, so the array takes
            // none of a unified L1's shared-memory carve-outs (the `[l1d]` carve-outs of
            // qv100/rtx-a6000/h100 are whole ways of a different geometry). Shared memory
            // keeps its own banks as on every config.
            c.shared_carveouts.clear();
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

/// `register_file.wide_operand_reads`, `tensor_operand_slots` and `multi_collector`: in
/// range, and only with the designs whose collectors read the instruction's own operands
/// (the per-operand rule, the units spanned) or any register list in operand order (the
/// tensor slots).
fn validate_operand_reads(rf: &RegisterFileConfig) -> Result<(), ConfigError> {
    use RegisterFileDesign as D;
    let plain = matches!(rf.design, D::Baseline | D::Ideal | D::IdealUnlimited);
    if rf.wide_operand_reads != WideOperandReads::PerRegister && !plain {
        return Err(invalid(
            "register_file.wide_operand_reads",
            format_args!(
                "\"per_operand\" is modelled for the baseline and ideal designs only, not \
                 design = {:?}",
                rf.design
            ),
        ));
    }
    if rf.multi_collector && !plain {
        return Err(invalid(
            "register_file.multi_collector",
            format_args!(
                "is modelled for the baseline and ideal designs only, not design = {:?}",
                rf.design
            ),
        ));
    }
    if let Some(n) = rf.tensor_operand_slots {
        let max = crate::rf::baseline::MAX_REGS as u32;
        if n == 0 || n > max {
            return Err(invalid(
                "register_file.tensor_operand_slots",
                format_args!("must be between 1 and {max}, not {n}"),
            ));
        }
        // Malekeh's per-instruction state is 32-bit operand masks (its wide-instruction
        // refusal, `SimError::TooWideForDesign`).
        if matches!(rf.design, D::Malekeh) && n > 32 {
            return Err(invalid(
                "register_file.tensor_operand_slots",
                format_args!("must be at most 32 under design = \"malekeh\", not {n}"),
            ));
        }
        if !(plain || matches!(rf.design, D::Malekeh | D::Bow)) {
            return Err(invalid(
                "register_file.tensor_operand_slots",
                format_args!(
                    "is modelled for the baseline, ideal, malekeh and bow designs only, not \
                     design = {:?}",
                    rf.design
                ),
            ));
        }
    }
    Ok(())
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

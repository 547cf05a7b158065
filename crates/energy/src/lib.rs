//! Energy: event counts in, joules out.
//!
//! The timing model and the register-file designs report *events* — `count` accesses of
//! kind `access` (`read`, `write`, `lookup`, `transfer`, …) to a named `structure`
//! (`mrf`, `collector`, `orf`, `cerf_tag`, `l1d`, …; the list is DESIGN-HELPERS.md's
//! "energy structure names", plus the memory hierarchy and execution). This crate owns
//! the energy of one event of each kind ([`EnergyConfig`], the `[energy]` table of a GPU
//! config, every key overridable with `--set energy.KEY=VALUE`) and turns a list of
//! events into joules per structure and access kind ([`EnergyConfig::account`]). It
//! never drives timing, and it depends on nothing else of regsim: the compiler (ORF/LRF
//! allocation, [`gebhart`]), the timing model (its config) and the runtime (statistics)
//! all depend on it.
//!
//! # Units
//! Register-file events are *warp-wide 32-bit register accesses* (32 lanes × 32 bits =
//! 1024 bits). Gebhart MICRO'11 Table 3/4 energies are per 128-bit access (one register
//! of a four-lane SIMT cluster), so a warp-wide access is [`CLUSTERS_PER_WARP`] = 8 of
//! them; wire energy is Table 4's 1.9 pJ per 32 bits per mm, so moving a warp register
//! over `d` mm costs `32 × 1.9 × d` pJ. Memory events are the timing model's counters:
//! cache accesses (one per request the cache sees), shared-memory passes (one per
//! conflict-free bank cycle), DRAM bytes. Execution events are active lanes (thread
//! instructions) per opcode class.
//!
//! # One scale for every design
//! The papers characterise their structures in different technologies (Gebhart: 40 nm
//! synthesis; CERF: CACTI 6.5; WIR: CACTI and Design Compiler at 45 nm). Where a paper
//! gives its numbers next to its own register-file access energy (CERF Table III), we
//! carry over the *ratio* to that register-file access, times our MRF access energy
//! (Gebhart's), so that every design is compared on one scale. WIR Table III gives
//! absolute per-operation energies of its added tables and no register-file figure, so
//! those are taken as they are (45 nm against Gebhart's 40 nm: the same generation).
//! Defaults without a number in any of the five papers say where they come from; they
//! are placeholders for a study to override, and the report says so.
//!
//! # Sized structures
//! The per-access energy of the RFC, ORF, LTRF cache, CERF array, WIR tables, L1D, L2
//! slices and shared memory follows their configured size ([`sized`]; the caches by CERF
//! Table III's rows, their capacity, associativity and line size): a GPU config fills them in from the papers' tables
//! when it is loaded, an explicit `energy.*` value wins, and [`EnergyConfig::sources`]
//! (written into every report) says which table row each one came from.

pub mod gebhart;
pub mod sized;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// 128-bit (four-lane) accesses per warp-wide 32-bit register access: Gebhart's tables
/// are per 128 bits, a warp register is 32 lanes × 32 bits.
pub const CLUSTERS_PER_WARP: f64 = 8.0;
/// 32-bit words in a warp register (one per lane).
pub const WORDS_PER_WARP: f64 = 32.0;

/// Gebhart MICRO'11 Table 4: wire energy of 32 bits over 1 mm, pJ.
const WIRE_PJ_PER_MM: f64 = 1.9;
/// Gebhart Table 4 / §5.2: MRF to the datapath (the private-datapath distance, 1 mm; the
/// text gives the shared one as 1 mm and the private wires as 5× and 20× shorter for
/// the ORF and the LRF).
const MRF_DISTANCE_MM: f64 = 1.0;
/// Gebhart Table 4: ORF to the private datapath.
const ORF_DISTANCE_MM: f64 = 0.2;
/// Gebhart Table 4: LRF to the private datapath.
const LRF_DISTANCE_MM: f64 = 0.05;

/// Moving one warp register over `mm` of wire, pJ.
fn wire_pj(mm: f64) -> f64 {
    WORDS_PER_WARP * WIRE_PJ_PER_MM * mm
}

/// A 128-bit access energy from Gebhart's tables scaled to a warp-wide access.
fn per_warp(pj_per_128_bits: f64) -> f64 {
    CLUSTERS_PER_WARP * pj_per_128_bits
}

/// CERF Table III: 128 KB register file read energy, pJ per bank access. CERF's other
/// primitives are carried over as ratios to it (see the crate docs).
const CERF_RF_READ_PJ: f64 = 4.62;

/// A CERF Table III primitive (pJ per bank access in CERF's technology) on our scale.
fn cerf_scaled(pj: f64) -> f64 {
    pj / CERF_RF_READ_PJ * gebhart_mrf_read()
}

/// Gebhart's MRF read energy per warp access (bank only).
fn gebhart_mrf_read() -> f64 {
    per_warp(gebhart::EnergyModel::default().mrf_read_pj)
}

/// What a structure belongs to, for totals: the register file (everything a design
/// changes), the memory hierarchy, or execution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Group {
    RegisterFile,
    Memory,
    Execution,
}

/// The default `constant_cache_read_pj` (see [`EnergyConfig::constant_cache_read_pj`]).
pub fn constant_cache_read_pj() -> f64 {
    cerf_scaled(sized::data_plus_tag(sized::CERF_L1D_READ_PJ))
        * sized::sram_scale(2 * 1024, sized::CERF_L1D_BYTES)
}

/// The energy of one event of every kind, pJ. The `[energy]` table of a GPU config
/// (every key optional; unknown keys are errors naming the key). Keys are
/// `<structure>_<access>_pj`. The defaults of the sized structures (RFC, ORF, LTRF
/// cache, CERF, WIR tables) are for the GTX 480 config's default sizes; a GPU config
/// replaces them by its own sizes' ([`sized`]). The placeholders, values no paper gives
/// ([`PLACEHOLDER_KEYS`]), are DRAM energy per byte and execution energy per lane.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EnergyConfig {
    /// MRF bank read, warp-wide, bank only (the trip to the collector is a `crossbar`
    /// transfer). Gebhart Table 4: 8 pJ per 128 bits (see [`gebhart`] for the digit our
    /// copy of the table lost), × 8.
    pub mrf_read_pj: f64,
    /// MRF bank write, warp-wide, including the result's wire back from the datapath
    /// (there is no separate event for it). Gebhart Table 4: 11 pJ per 128 bits × 8, plus
    /// 32 × 1.9 pJ/mm × 1 mm.
    pub mrf_write_pj: f64,
    /// Factor on the MRF's per-access read and write energy for the main register
    /// file's cell technology. Absent (the default), a GPU config fills in its
    /// `register_file.technology`'s relative power from LTRF Table 2 (#1 1, #2/#3 8,
    /// #4/#5 3.2, #6 TFET 1.05, #7 DWM 0.65) when it is loaded; set, it overrides that.
    /// Outside a GPU config, absent means 1 (configuration #1). See
    /// [`Self::mrf_scale`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mrf_technology_scale: Option<f64>,
    /// The associativity the L1D's energy is priced at ([`sized`]: the tag lookup reads
    /// one tag per way); absent (the default), `l1d.ways`. For configs whose `l1d.ways`
    /// is a modelling device rather than the hardware's (4 sets over the whole array, so
    /// that shared-memory carve-outs are whole ways), which the rule would price as a
    /// 256-way tag lookup.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub l1d_priced_ways: Option<u32>,
    /// An operand read out of a collector unit into the execution unit. Gebhart Table 3,
    /// one-entry row (a one-register flip-flop buffer per thread, the closest
    /// characterised structure to an operand buffer): 0.7 pJ × 8. No paper gives a
    /// collector figure.
    pub collector_read_pj: f64,
    /// An operand latched into a collector unit: Gebhart Table 3, one-entry row, 2.0 pJ
    /// × 8 (as [`Self::collector_read_pj`]).
    pub collector_write_pj: f64,
    /// A register moved over the operand crossbar: from an MRF bank (or CERF's array) to
    /// the collector side, or a result into an operand buffer (the timing model's ledger
    /// rules). Gebhart's wire model, 32 words × 1.9 pJ/mm × 1 mm (Table 4's
    /// MRF-to-datapath distance).
    pub crossbar_transfer_pj: f64,
    /// RFC (Gebhart ISCA'11 hardware register-file cache) read: Table 3 of MICRO'11 at
    /// `register_file.rfc.entries_per_thread` (default six: 2.0 pJ × 8), plus the ORF's
    /// 0.2 mm of wire.
    pub rfc_read_pj: f64,
    /// RFC write: Table 3 at the configured entries (six: 6.7 pJ × 8), plus 0.2 mm.
    pub rfc_write_pj: f64,
    /// RFC tag lookup, per 32-bit register looked up (warp-wide): no paper gives it, so
    /// an estimate ([`sized::RFC_TAG_TO_DATA_READ`]): CACTI 6.5's tag-to-data ratio for a
    /// tagged array of warp registers, CERF Table III's integrated tag against its
    /// register-file read (0.75 / 4.62 = 0.16), times the RFC's Table 3 read at the
    /// configured entries without the wire (six: 0.16 × 2.0 pJ × 8 = 2.6 pJ). Off with
    /// `register_file.rfc.charge_tag_lookups = false`.
    pub rfc_tag_lookup_pj: f64,
    /// ORF read: Table 3 at `register_file.orf_lrf.orf_entries` (default three, the
    /// paper's most efficient design: 1.2 pJ × 8), plus Table 4's 0.2 mm to the private
    /// datapath.
    pub orf_read_pj: f64,
    /// ORF write: Table 3 at the configured entries (three: 4.4 pJ × 8), plus 0.2 mm.
    pub orf_write_pj: f64,
    /// LRF read: Table 3 one-entry row (see [`gebhart`]), 0.7 pJ × 8, plus Table 4's
    /// 0.05 mm.
    pub lrf_read_pj: f64,
    /// LRF write: Table 4, 2 pJ × 8, plus 0.05 mm.
    pub lrf_write_pj: f64,
    /// LTRF's register-file cache read. LTRF gives no per-access figure (Table 2 is
    /// relative power of main register files; §5 says LTRF as a whole uses 23% less
    /// power). We model the cache as a Gebhart Table 3 ORF of
    /// `register_file.ltrf.registers_per_interval` entries; the default 16 exceeds the
    /// table, so its largest (eight-entry) row, 3.4 pJ × 8, a lower bound; plus the
    /// ORF's 0.2 mm of wire.
    pub ltrf_cache_read_pj: f64,
    /// LTRF cache write: as the read (eight-entry row: 10.9 pJ × 8), plus 0.2 mm.
    pub ltrf_cache_write_pj: f64,
    /// CERF integrated data array read: CERF Table III, "128KB integrated: the same as
    /// 128KB RF", i.e. our MRF read. Table III has no other array size: a
    /// `register_file.cerf.size_bytes` other than the register file's is refused unless
    /// the CERF energies are set.
    pub cerf_data_read_pj: f64,
    /// CERF integrated data array write: the same as our MRF write (Table III).
    pub cerf_data_write_pj: f64,
    /// CERF integrated tag lookup: Table III, 0.75 pJ against the RF's 4.62 pJ read, on
    /// our MRF read's scale.
    pub cerf_tag_lookup_pj: f64,
    /// Malekeh caching collector unit read. Malekeh's energy model (extended AccelWattch)
    /// gives no number in the paper; a CCU is a collector unit with tags, so the
    /// collector's figure (Gebhart Table 3 one-entry row).
    pub ccu_read_pj: f64,
    /// CCU write: as [`Self::collector_write_pj`].
    pub ccu_write_pj: f64,
    /// One bank access granted by the operand collector's arbiter (every design: the
    /// timing model's ledger charges each granted port). No paper gives a figure; we use the
    /// 1.35 pJ per operation WIR Table III gives its register allocator (a small 1r1w
    /// queue of comparable size, 45 nm) as a stand-in.
    pub arbiter_request_pj: f64,
    /// BOW operand window read: BOW's buffers replace the collector units, so the
    /// collector's figure (no number in Malekeh's comparison).
    pub bow_window_read_pj: f64,
    /// BOW operand window write: the collector write figure.
    pub bow_window_write_pj: f64,
    /// WIR reuse buffer table lookup: WIR Table III, 4.71 pJ per operation.
    pub wir_reuse_buffer_lookup_pj: f64,
    /// WIR reuse buffer write: Table III, 4.71 pJ.
    pub wir_reuse_buffer_write_pj: f64,
    /// WIR rename table read: Table III, 3.50 pJ.
    pub wir_rename_table_read_pj: f64,
    /// WIR rename table write: Table III, 3.50 pJ.
    pub wir_rename_table_write_pj: f64,
    /// WIR value signature buffer lookup, including the hash of the result it is looked
    /// up by: Table III, 4.96 pJ + 4.85 pJ (hash generation).
    pub wir_vsb_lookup_pj: f64,
    /// WIR value signature buffer write: Table III, 4.96 pJ.
    pub wir_vsb_write_pj: f64,
    /// WIR verify cache lookup: Table III, 2.93 pJ.
    pub wir_verify_cache_lookup_pj: f64,
    /// A register read to verify a value signature hit: an MRF bank read. The timing
    /// model charges verify reads as `mrf` reads (its ledger prices one bank read the same
    /// in every design), so no event of this kind is reported; the key is kept so that
    /// existing configs still load.
    pub wir_verify_read_read_pj: f64,
    /// A constant-bank operand (`sm.constant_operands`): one warp-wide 32-bit value read
    /// from the constant cache and broadcast to the lanes. No paper gives a figure; an
    /// estimate: CERF Table III's 16 KB L1D read (data + tag, on our scale) times the
    /// square-root capacity law for a 2 KB array (the L1 constant cache Jia et al. measure
    /// on Volta, arXiv:1804.06826; MICRO'25 §5.4 names a per-sub-core L0 constant cache
    /// for fixed-latency instructions but gives no size): [`CONSTANT_CACHE_READ_PJ`].
    /// Absent: that estimate (the key is written out only when set, so that the configs
    /// without constant operands echo the same `[energy]` table as before it existed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub constant_cache_read_pj: Option<f64>,
    /// L1D read (data + tag): CERF Table III, 0.72 + 0.47 pJ for its 16 KB 4-way L1D of
    /// 128-byte lines, on our MRF read's scale; another capacity, associativity or line
    /// size scales the data and tag rows by the bits-sensed rule ([`sized`]).
    pub l1d_read_pj: f64,
    /// L1D write (data + tag): CERF Table III, 0.61 + 0.64 pJ, scaled as the read.
    pub l1d_write_pj: f64,
    /// L2 read (data + tag): CERF Table III, 5.52 + 1.05 pJ for a 64 KB 8-way slice of
    /// 128-byte lines, on our scale, scaled as the L1D's by its slice's organisation.
    pub l2_read_pj: f64,
    /// L2 write (data + tag): CERF Table III, 3.95 + 1.91 pJ, scaled as the read.
    pub l2_write_pj: f64,
    /// One conflict-free pass of the shared memory banks. No paper gives a figure; the
    /// shared memory sits in the L1D's kind of SRAM (Fermi carves it out of the same
    /// array), so CERF Table III's 16 KB L1D data read (0.72 pJ, on our scale), without
    /// the tag, times sqrt(array / 16 KB) for the array it lives in ([`sized`]); the
    /// default is the GTX 480's separate 48 KB.
    pub shared_memory_access_pj: f64,
    /// DRAM, per byte read. None of the five papers gives DRAM energy (CERF leaves it
    /// out on purpose). Default 20 pJ/bit = 160 pJ/byte, the order of magnitude usually
    /// quoted for GDDR5-class off-chip access in the GPU energy literature; a
    /// placeholder to override.
    pub dram_read_byte_pj: f64,
    /// DRAM, per byte written: as [`Self::dram_read_byte_pj`].
    pub dram_write_byte_pj: f64,
    /// Execution energy per active lane of an FP32 instruction. None of the five papers
    /// gives functional-unit energy (WIR takes it from GPUWattch runs). Placeholders:
    /// FP64 FMA 50 pJ per lane (the 40 nm figure commonly quoted for a double-precision
    /// FMA), FP32 a quarter of it (multiplier area grows with the square of the mantissa
    /// width), integer add/logic and address generation 4 pJ, integer multiply as FP32,
    /// divide and transcendentals as FP64, control 1 pJ.
    pub execute_fp32_pj: f64,
    /// Integer add, logic, shifts, moves: see [`Self::execute_fp32_pj`].
    pub execute_int_pj: f64,
    /// Integer multiply: see [`Self::execute_fp32_pj`].
    pub execute_int_mul_pj: f64,
    /// Integer divide: see [`Self::execute_fp32_pj`].
    pub execute_int_div_pj: f64,
    /// Transcendentals: see [`Self::execute_fp32_pj`].
    pub execute_sfu_pj: f64,
    /// FP64: see [`Self::execute_fp32_pj`].
    pub execute_fp64_pj: f64,
    /// Address generation of loads and stores: see [`Self::execute_fp32_pj`].
    pub execute_mem_pj: f64,
    /// Branches, barriers: see [`Self::execute_fp32_pj`].
    pub execute_control_pj: f64,
    /// Where values came from, by key: the table row of each sized structure's energy
    /// ([`Self::fill_sized`]), [`sized::EXPLICIT_SOURCE`] for keys the user set, and a
    /// note for each placeholder. Not a config key (empty when deserialized on its
    /// own; [`Self::fill_sized`] fills it); copied into every report.
    #[serde(skip, default)]
    pub sources: BTreeMap<String, String>,
}

/// The keys whose defaults are placeholders: none of the five papers gives a number for
/// DRAM or for execution, and the defaults are orders of magnitude to override (see
/// each field). A report's `placeholder_joules` is what they priced.
pub const PLACEHOLDER_KEYS: [&str; 10] = [
    "dram_read_byte_pj",
    "dram_write_byte_pj",
    "execute_fp32_pj",
    "execute_int_pj",
    "execute_int_mul_pj",
    "execute_int_div_pj",
    "execute_sfu_pj",
    "execute_fp64_pj",
    "execute_mem_pj",
    "execute_control_pj",
];

/// Structures off the chip: their joules are a report's `off_chip_joules`.
pub const OFF_CHIP_STRUCTURES: [&str; 1] = ["dram"];

/// The source recorded for a placeholder the user did not set.
pub const PLACEHOLDER_SOURCE: &str =
    "placeholder: none of the five papers gives a figure (an order of magnitude to override)";

impl Default for EnergyConfig {
    fn default() -> Self {
        let g = gebhart::EnergyModel::default();
        let t3 = |row: usize| {
            (
                gebhart::TABLE3_ORF_READ_PJ[row - 1],
                gebhart::TABLE3_ORF_WRITE_PJ[row - 1],
            )
        };
        let (mrf_read, mrf_write) = Self::mrf_defaults();
        let (one_r, one_w) = t3(1);
        // The sized structures at the default sizes (warp-wide, with the ORF's wire).
        let (rfc_r, rfc_w) = sized::table3(6);
        let (orf_r, orf_w) = sized::table3(3);
        let (ltrf_r, ltrf_w) = sized::table3(8);
        let fp64 = 50.0;
        let mut c = EnergyConfig {
            mrf_read_pj: mrf_read,
            mrf_write_pj: mrf_write,
            mrf_technology_scale: None,
            l1d_priced_ways: None,
            collector_read_pj: per_warp(one_r),
            collector_write_pj: per_warp(one_w),
            crossbar_transfer_pj: wire_pj(MRF_DISTANCE_MM),
            rfc_read_pj: rfc_r,
            rfc_write_pj: rfc_w,
            rfc_tag_lookup_pj: sized::rfc_tag_lookup(6),
            orf_read_pj: orf_r,
            orf_write_pj: orf_w,
            lrf_read_pj: per_warp(g.lrf_read_pj) + wire_pj(LRF_DISTANCE_MM),
            lrf_write_pj: per_warp(g.lrf_write_pj) + wire_pj(LRF_DISTANCE_MM),
            ltrf_cache_read_pj: ltrf_r,
            ltrf_cache_write_pj: ltrf_w,
            cerf_data_read_pj: mrf_read,
            cerf_data_write_pj: mrf_write,
            cerf_tag_lookup_pj: cerf_scaled(sized::CERF_TAG_READ_PJ),
            ccu_read_pj: per_warp(one_r),
            ccu_write_pj: per_warp(one_w),
            arbiter_request_pj: 1.35,
            bow_window_read_pj: per_warp(one_r),
            bow_window_write_pj: per_warp(one_w),
            wir_reuse_buffer_lookup_pj: sized::WIR_REUSE_BUFFER_PJ,
            wir_reuse_buffer_write_pj: sized::WIR_REUSE_BUFFER_PJ,
            wir_rename_table_read_pj: 3.50,
            wir_rename_table_write_pj: 3.50,
            wir_vsb_lookup_pj: sized::WIR_VSB_PJ + sized::WIR_HASH_PJ,
            wir_vsb_write_pj: sized::WIR_VSB_PJ,
            wir_verify_cache_lookup_pj: sized::WIR_VERIFY_CACHE_PJ,
            wir_verify_read_read_pj: mrf_read,
            constant_cache_read_pj: None,
            l1d_read_pj: cerf_scaled(sized::data_plus_tag(sized::CERF_L1D_READ_PJ)),
            l1d_write_pj: cerf_scaled(sized::data_plus_tag(sized::CERF_L1D_WRITE_PJ)),
            l2_read_pj: cerf_scaled(sized::data_plus_tag(sized::CERF_L2_READ_PJ)),
            l2_write_pj: cerf_scaled(sized::data_plus_tag(sized::CERF_L2_WRITE_PJ)),
            // 48 KB of shared memory against Table III's 16 KB L1D data row.
            shared_memory_access_pj: cerf_scaled(sized::CERF_L1D_DATA_READ_PJ)
                * sized::sram_scale(48 * 1024, sized::CERF_L1D_BYTES),
            dram_read_byte_pj: 160.0,
            dram_write_byte_pj: 160.0,
            execute_fp32_pj: fp64 / 4.0,
            execute_int_pj: 4.0,
            execute_int_mul_pj: fp64 / 4.0,
            execute_int_div_pj: fp64,
            execute_sfu_pj: fp64,
            execute_fp64_pj: fp64,
            execute_mem_pj: 4.0,
            execute_control_pj: 1.0,
            sources: BTreeMap::new(),
        };
        // The values above are the default sizes' rows (a test checks it); this records
        // where they came from (no design is named, so nothing is refused).
        let filled = c.fill_sized(&sized::StructureSizes::default(), |_| false);
        debug_assert!(filled.is_ok(), "{filled:?}");
        c
    }
}

/// One kind of event and its energy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EventKind {
    pub structure: &'static str,
    pub access: &'static str,
    pub group: Group,
    /// The config key (`energy.<key>`).
    pub key: &'static str,
    /// pJ per event, after [`EnergyConfig::mrf_scale`].
    pub pj: f64,
}

/// Errors: unknown structures and access kinds, impossible values.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum EnergyError {
    #[error("energy: unknown structure `{structure}` (known: {known})")]
    UnknownStructure { structure: String, known: String },
    #[error("energy: structure `{structure}` has no access kind `{access}` (known: {known})")]
    UnknownAccess {
        structure: String,
        access: String,
        known: String,
    },
    #[error("energy.{key}: {message}")]
    Invalid { key: String, message: String },
}

/// One event count, as reported by the timing model or a design.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event<'a> {
    pub structure: &'a str,
    pub access: &'a str,
    pub count: u64,
}

/// Energy of one access kind of one structure.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AccessEnergy {
    pub access: String,
    pub count: u64,
    pub pj_per_event: f64,
    pub joules: f64,
}

/// Energy of one structure, by access kind.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StructureEnergy {
    pub structure: String,
    pub group: Group,
    pub joules: f64,
    pub accesses: Vec<AccessEnergy>,
}

/// Joules of a list of events: per structure (sorted by name), per group, on and off
/// the chip, and in total.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct EnergyReport {
    /// The factor the MRF's energies were priced with ([`EnergyConfig::mrf_scale`]).
    pub mrf_technology_scale: f64,
    /// Everything: `on_chip_joules + off_chip_joules`, and also
    /// `register_file_joules + memory_joules + execution_joules`.
    pub total_joules: f64,
    /// The register-file structures (every design's storage, collectors, crossbar,
    /// tags and tables). From the papers' tables, no placeholder.
    pub register_file_joules: f64,
    /// L1D, L2, shared memory (from CERF Table III) and DRAM (a placeholder per byte).
    pub memory_joules: f64,
    /// Functional units: placeholders per active lane (no paper gives a figure).
    pub execution_joules: f64,
    /// The SM (register file, execution) and the on-chip memories (L1D, L2, shared):
    /// everything but [`OFF_CHIP_STRUCTURES`]. Includes the execution placeholders.
    pub on_chip_joules: f64,
    /// DRAM, priced at the placeholder `energy.dram_*_byte_pj` unless set.
    pub off_chip_joules: f64,
    /// The part of the total priced at a [`PLACEHOLDER_KEYS`] value the user did not
    /// set (DRAM bytes, execution lanes).
    pub placeholder_joules: f64,
    /// [`EnergyConfig::sources`]: which table row, placeholder or user setting each
    /// sized or placeholder energy came from, by key.
    pub sources: BTreeMap<String, String>,
    pub structures: Vec<StructureEnergy>,
}

impl EnergyReport {
    /// Joules of one structure (0 when it had no events).
    pub fn structure_joules(&self, structure: &str) -> f64 {
        self.structures
            .iter()
            .find(|s| s.structure == structure)
            .map_or(0.0, |s| s.joules)
    }
}

impl EnergyConfig {
    /// The factor on the MRF's per-access energy: `mrf_technology_scale`, 1 when absent.
    pub fn mrf_scale(&self) -> f64 {
        self.mrf_technology_scale.unwrap_or(1.0)
    }

    /// Every event kind with its energy, in the order of the fields.
    pub fn kinds(&self) -> Vec<EventKind> {
        use Group::*;
        let s = self.mrf_scale();
        let k = |structure, access, group, key, pj| EventKind {
            structure,
            access,
            group,
            key,
            pj,
        };
        vec![
            k(
                "mrf",
                "read",
                RegisterFile,
                "mrf_read_pj",
                self.mrf_read_pj * s,
            ),
            k(
                "mrf",
                "write",
                RegisterFile,
                "mrf_write_pj",
                self.mrf_write_pj * s,
            ),
            k(
                "collector",
                "read",
                RegisterFile,
                "collector_read_pj",
                self.collector_read_pj,
            ),
            k(
                "collector",
                "write",
                RegisterFile,
                "collector_write_pj",
                self.collector_write_pj,
            ),
            k(
                "crossbar",
                "transfer",
                RegisterFile,
                "crossbar_transfer_pj",
                self.crossbar_transfer_pj,
            ),
            k("rfc", "read", RegisterFile, "rfc_read_pj", self.rfc_read_pj),
            k(
                "rfc",
                "write",
                RegisterFile,
                "rfc_write_pj",
                self.rfc_write_pj,
            ),
            k(
                "rfc_tag",
                "lookup",
                RegisterFile,
                "rfc_tag_lookup_pj",
                self.rfc_tag_lookup_pj,
            ),
            k("orf", "read", RegisterFile, "orf_read_pj", self.orf_read_pj),
            k(
                "orf",
                "write",
                RegisterFile,
                "orf_write_pj",
                self.orf_write_pj,
            ),
            k("lrf", "read", RegisterFile, "lrf_read_pj", self.lrf_read_pj),
            k(
                "lrf",
                "write",
                RegisterFile,
                "lrf_write_pj",
                self.lrf_write_pj,
            ),
            k(
                "ltrf_cache",
                "read",
                RegisterFile,
                "ltrf_cache_read_pj",
                self.ltrf_cache_read_pj,
            ),
            k(
                "ltrf_cache",
                "write",
                RegisterFile,
                "ltrf_cache_write_pj",
                self.ltrf_cache_write_pj,
            ),
            k(
                "cerf_data",
                "read",
                RegisterFile,
                "cerf_data_read_pj",
                self.cerf_data_read_pj,
            ),
            k(
                "cerf_data",
                "write",
                RegisterFile,
                "cerf_data_write_pj",
                self.cerf_data_write_pj,
            ),
            k(
                "cerf_tag",
                "lookup",
                RegisterFile,
                "cerf_tag_lookup_pj",
                self.cerf_tag_lookup_pj,
            ),
            k("ccu", "read", RegisterFile, "ccu_read_pj", self.ccu_read_pj),
            k(
                "ccu",
                "write",
                RegisterFile,
                "ccu_write_pj",
                self.ccu_write_pj,
            ),
            k(
                "arbiter",
                "request",
                RegisterFile,
                "arbiter_request_pj",
                self.arbiter_request_pj,
            ),
            k(
                "bow_window",
                "read",
                RegisterFile,
                "bow_window_read_pj",
                self.bow_window_read_pj,
            ),
            k(
                "bow_window",
                "write",
                RegisterFile,
                "bow_window_write_pj",
                self.bow_window_write_pj,
            ),
            k(
                "wir_reuse_buffer",
                "lookup",
                RegisterFile,
                "wir_reuse_buffer_lookup_pj",
                self.wir_reuse_buffer_lookup_pj,
            ),
            k(
                "wir_reuse_buffer",
                "write",
                RegisterFile,
                "wir_reuse_buffer_write_pj",
                self.wir_reuse_buffer_write_pj,
            ),
            k(
                "wir_rename_table",
                "read",
                RegisterFile,
                "wir_rename_table_read_pj",
                self.wir_rename_table_read_pj,
            ),
            k(
                "wir_rename_table",
                "write",
                RegisterFile,
                "wir_rename_table_write_pj",
                self.wir_rename_table_write_pj,
            ),
            k(
                "wir_vsb",
                "lookup",
                RegisterFile,
                "wir_vsb_lookup_pj",
                self.wir_vsb_lookup_pj,
            ),
            k(
                "wir_vsb",
                "write",
                RegisterFile,
                "wir_vsb_write_pj",
                self.wir_vsb_write_pj,
            ),
            k(
                "wir_verify_cache",
                "lookup",
                RegisterFile,
                "wir_verify_cache_lookup_pj",
                self.wir_verify_cache_lookup_pj,
            ),
            k(
                "wir_verify_read",
                "read",
                RegisterFile,
                "wir_verify_read_read_pj",
                self.wir_verify_read_read_pj * s,
            ),
            k(
                "constant_cache",
                "read",
                RegisterFile,
                "constant_cache_read_pj",
                self.constant_cache_read_pj
                    .unwrap_or_else(constant_cache_read_pj),
            ),
            k("l1d", "read", Memory, "l1d_read_pj", self.l1d_read_pj),
            k("l1d", "write", Memory, "l1d_write_pj", self.l1d_write_pj),
            k("l2", "read", Memory, "l2_read_pj", self.l2_read_pj),
            k("l2", "write", Memory, "l2_write_pj", self.l2_write_pj),
            k(
                "shared_memory",
                "access",
                Memory,
                "shared_memory_access_pj",
                self.shared_memory_access_pj,
            ),
            k(
                "dram",
                "read_byte",
                Memory,
                "dram_read_byte_pj",
                self.dram_read_byte_pj,
            ),
            k(
                "dram",
                "write_byte",
                Memory,
                "dram_write_byte_pj",
                self.dram_write_byte_pj,
            ),
            k(
                "execute",
                "fp32",
                Execution,
                "execute_fp32_pj",
                self.execute_fp32_pj,
            ),
            k(
                "execute",
                "int",
                Execution,
                "execute_int_pj",
                self.execute_int_pj,
            ),
            k(
                "execute",
                "int_mul",
                Execution,
                "execute_int_mul_pj",
                self.execute_int_mul_pj,
            ),
            k(
                "execute",
                "int_div",
                Execution,
                "execute_int_div_pj",
                self.execute_int_div_pj,
            ),
            k(
                "execute",
                "sfu",
                Execution,
                "execute_sfu_pj",
                self.execute_sfu_pj,
            ),
            k(
                "execute",
                "fp64",
                Execution,
                "execute_fp64_pj",
                self.execute_fp64_pj,
            ),
            k(
                "execute",
                "mem",
                Execution,
                "execute_mem_pj",
                self.execute_mem_pj,
            ),
            k(
                "execute",
                "control",
                Execution,
                "execute_control_pj",
                self.execute_control_pj,
            ),
        ]
    }

    /// Every value finite and not negative; the error names the key.
    pub fn validate(&self) -> Result<(), EnergyError> {
        // The scale first: a bad one would otherwise be reported as a bad MRF energy.
        let mut checks: Vec<(&str, f64)> = vec![("mrf_technology_scale", self.mrf_scale())];
        checks.extend(self.kinds().iter().map(|k| (k.key, k.pj)));
        for (key, v) in checks {
            if !v.is_finite() || v < 0.0 {
                return Err(EnergyError::Invalid {
                    key: key.to_owned(),
                    message: format!("{v} is not a finite, non-negative energy"),
                });
            }
        }
        Ok(())
    }

    /// The event kind of `structure`/`access`; an error naming what is unknown.
    pub fn kind(&self, structure: &str, access: &str) -> Result<EventKind, EnergyError> {
        let kinds = self.kinds();
        let of_structure: Vec<&EventKind> =
            kinds.iter().filter(|k| k.structure == structure).collect();
        if of_structure.is_empty() {
            let mut names: Vec<&str> = kinds.iter().map(|k| k.structure).collect();
            names.dedup();
            return Err(EnergyError::UnknownStructure {
                structure: structure.to_owned(),
                known: names.join(", "),
            });
        }
        of_structure
            .iter()
            .find(|k| k.access == access)
            .map(|k| **k)
            .ok_or_else(|| EnergyError::UnknownAccess {
                structure: structure.to_owned(),
                access: access.to_owned(),
                known: of_structure
                    .iter()
                    .map(|k| k.access)
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    /// Joules of `events` (repeated kinds add up), per structure and access kind. An
    /// unknown structure or access kind is an error, never a silent zero.
    pub fn account<'a>(
        &self,
        events: impl IntoIterator<Item = Event<'a>>,
    ) -> Result<EnergyReport, EnergyError> {
        // (structure, access) -> (count, kind); BTreeMap for a sorted, deterministic report.
        let mut counts: BTreeMap<(&'static str, &'static str), (u64, EventKind)> = BTreeMap::new();
        for e in events {
            let kind = self.kind(e.structure, e.access)?;
            counts
                .entry((kind.structure, kind.access))
                .or_insert((0, kind))
                .0 += e.count;
        }
        let mut report = EnergyReport {
            mrf_technology_scale: self.mrf_scale(),
            sources: self.sources.clone(),
            ..EnergyReport::default()
        };
        for ((structure, access), (count, kind)) in counts {
            let joules = count as f64 * kind.pj * 1e-12;
            if report.structures.last().map(|s| s.structure.as_str()) != Some(structure) {
                report.structures.push(StructureEnergy {
                    structure: structure.to_owned(),
                    group: kind.group,
                    joules: 0.0,
                    accesses: Vec::new(),
                });
            }
            if let Some(s) = report.structures.last_mut() {
                s.joules += joules;
                s.accesses.push(AccessEnergy {
                    access: access.to_owned(),
                    count,
                    pj_per_event: kind.pj,
                    joules,
                });
            }
            match kind.group {
                Group::RegisterFile => report.register_file_joules += joules,
                Group::Memory => report.memory_joules += joules,
                Group::Execution => report.execution_joules += joules,
            }
            if OFF_CHIP_STRUCTURES.contains(&structure) {
                report.off_chip_joules += joules;
            } else {
                report.on_chip_joules += joules;
            }
            if PLACEHOLDER_KEYS.contains(&kind.key)
                && self.sources.get(kind.key).map(String::as_str) != Some(sized::EXPLICIT_SOURCE)
            {
                report.placeholder_joules += joules;
            }
            report.total_joules += joules;
        }
        Ok(report)
    }

    /// Joules of a single-level register file serving `operand_reads` reads and
    /// `operand_writes` writes, charged by the timing model's ledger rules
    /// (`timing::rf::ledger`): every read an arbiter request, an MRF bank read, a crossbar
    /// transfer and a collector write and read; every write an arbiter request and an
    /// MRF write. The denominator of a design's normalized register-file energy.
    pub fn single_level_mrf_joules(&self, operand_reads: u64, operand_writes: u64) -> f64 {
        let s = self.mrf_scale();
        let read = self.arbiter_request_pj
            + self.mrf_read_pj * s
            + self.crossbar_transfer_pj
            + self.collector_write_pj
            + self.collector_read_pj;
        let write = self.arbiter_request_pj + self.mrf_write_pj * s;
        (operand_reads as f64 * read + operand_writes as f64 * write) * 1e-12
    }
}

#[cfg(test)]
mod tests;

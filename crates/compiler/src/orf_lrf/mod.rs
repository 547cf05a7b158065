//! Allocation of values to a three-level register-file hierarchy — the last result file
//! (LRF), the operand register file (ORF) and the main register file (MRF) — by the
//! compiler, after Gebhart, Keckler and Dally, "A Compile-Time Managed Multi-Level Register
//! File Hierarchy", MICRO'11, §4.2–4.6.
//!
//! The pass runs on register-allocated code: every function is allocated by
//! [`crate::regalloc`] (with spill code materialised if a register cap forces spills), and
//! a value is a definition of an *architectural* register, counted in 32-bit registers: a
//! 64-bit value is two registers, takes two ORF entries and never fits the one-entry LRF.
//! Predicates live in their own file, outside the hierarchy ([`ReadFrom::Pred`]).
//!
//! What the allocator does, by section of the paper:
//! - §4.1: values cross strands ([`crate::strands`]) only through the MRF.
//! - §4.2, Figure 7: for each strand, values produced in it are ranked by the energy their
//!   ORF allocation saves (Figure 6) divided by the number of instruction slots they occupy
//!   the ORF, and allocated greedily, first fit over the ORF entries, if they save more than
//!   θ. A value read outside its strand (or where its location is uncertain) is also
//!   written to the MRF; one read only inside it never touches the MRF.
//! - §4.3: when a value does not fit, its range is shortened by sending its last read in the
//!   strand to the MRF, until it fits or stops saving energy.
//! - §4.4: a value read several times in a strand that does not write it is loaded into the
//!   ORF by its first read (from the MRF); later reads that the first dominates read the
//!   ORF (Figure 9's savings, in the same priority queue, with partial ranges too).
//! - §4.5, Figure 10: values stay in the ORF across forward branches inside a strand. A
//!   read may use the ORF only if every definition that reaches it is in the strand, writes
//!   the same ORF entry, and no path from one of them to the read leaves the strand; so a
//!   value written on one side of a hammock only (10(a)) is read from the MRF at the merge,
//!   a side with an extra read may write both (10(b)), and writes on both sides to one
//!   entry serve the merge from the ORF (10(c)).
//! - §4.6: the LRF is allocated first, by the same ranking with LRF energies and full ranges
//!   only; a value goes to the LRF or the ORF, never both (the MRF as well if needed). Only
//!   the private ALU datapath reaches the LRF: values produced or read there by the SFU,
//!   MEM or TEX units, or by control and warp-wide instructions, never use it. A 64-bit
//!   value never does either, unless [`OrfLrfConfig::split_64bit_integers`] lets a 64-bit
//!   integer value in as its two 32-bit halves. With a split
//!   LRF ([`LrfMode::Split`]) each of the operand slots A, B, C has its own one-entry bank;
//!   a value read in more than one slot stays out of it.
//!
//! Choices the paper leaves open: a value with no reads at all is a candidate too (Figure
//! 6 credits it the MRF write it avoids) if a fixed-latency ALU produced it — a late write
//! from a variable-latency unit could land after its entry was reused; long-latency results
//! never enter the ORF or LRF (their first use ends the strand anyway). Registers that
//! carry a device function's `.reg` return values are written to the MRF always. The
//! "instruction slots" a value occupies are the instructions on paths from its writes to
//! its reads, minus one.
//!
//! [`check`] verifies an allocation independently: a forward dataflow over the contents of
//! every ORF entry, LRF bank and the MRF proves that each read finds the current value of
//! its register where the annotation says, and the structural rules above.

mod allocate;
mod checker;
mod report;

use serde::{Deserialize, Serialize};

use crate::inst_info::OperandSites;
use crate::regalloc::AllocConfig;
use crate::strands::{StrandConfig, Strands};

pub use allocate::allocate;
pub use checker::{check, CheckError};
/// The energy tables live in the energy crate (`energy::gebhart`); re-exported so the
/// allocation's config keeps its `energy.*` keys.
pub use energy::gebhart::{AccessEnergy, EnergyModel, Level};
pub use report::{
    AccessCounts, CountsError, FunctionOrfLrf, InstAnnotation, LevelCounts, OperandAnnotation,
    OrfLrfError, OrfLrfReport,
};

/// The last result file's organisation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LrfMode {
    /// No LRF: the two-level ORF/MRF hierarchy of §4.2–4.5.
    None,
    /// One entry per thread.
    Unified,
    /// One entry per thread for each operand slot A, B, C (§3.2).
    Split,
}

impl LrfMode {
    /// Number of one-entry banks.
    pub fn banks(self) -> u8 {
        match self {
            LrfMode::None => 0,
            LrfMode::Unified => 1,
            LrfMode::Split => 3,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            LrfMode::None => "none",
            LrfMode::Unified => "unified",
            LrfMode::Split => "split",
        }
    }
}

/// Settings of the allocation. The defaults are the paper's most energy-efficient design:
/// three ORF entries per thread, a split LRF, partial-range and read-operand allocation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OrfLrfConfig {
    /// ORF entries per thread, 1…8 (Table 3 has energies for these), or 0 for no ORF.
    pub orf_entries: u8,
    pub lrf: LrfMode,
    /// §4.3 partial-range allocation.
    pub partial_range: bool,
    /// §4.4 read-operand allocation.
    pub read_operands: bool,
    /// §4.5: let ORF and LRF values cross forward branches inside a strand; without it a
    /// value's ORF reads must be in the blocks of its writes (§4.2's baseline).
    pub forward_branches: bool,
    /// Let a 64-bit value computed and read only by integer ALU instructions use the
    /// LRF, as its two 32-bit halves (default false: a 64-bit value never fits the
    /// one-entry LRF). The hardware runs 64-bit integer arithmetic — PTX's address
    /// arithmetic, `mul.wide`, 64-bit moves and selects — as a pair of 32-bit
    /// instructions on the halves (IADD/IADD.X, IMAD/IMAD.HI), so each half is a 32-bit
    /// result that an LRF entry can hold; FP64 instructions read a register pair as one
    /// 64-bit operand, so doubles stay out. The pass keeps one level per operand, so both
    /// halves go to the same LRF bank and are priced as two 32-bit accesses: an upper
    /// bound, which assumes the pair's instructions can be ordered so that each half is
    /// read before the other is written (issue 21 item 5, docs/results/notes/gebhart.md).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub split_64bit_integers: bool,
    pub strands: StrandConfig,
    pub energy: EnergyModel,
    /// The register allocator's settings (a cap may force spill code, which the pass then
    /// sees as ordinary local loads and stores).
    pub registers: AllocConfig,
}

impl Default for OrfLrfConfig {
    fn default() -> Self {
        OrfLrfConfig {
            orf_entries: 3,
            lrf: LrfMode::Split,
            partial_range: true,
            read_operands: true,
            forward_branches: true,
            split_64bit_integers: false,
            strands: StrandConfig::default(),
            energy: EnergyModel::default(),
            registers: AllocConfig::default(),
        }
    }
}

impl OrfLrfConfig {
    /// 32-bit registers a value in one LRF entry may have: 2 with
    /// [`Self::split_64bit_integers`] (two halves, integer values only), 1 otherwise.
    pub fn lrf_max_units(&self) -> u8 {
        if self.split_64bit_integers {
            2
        } else {
            1
        }
    }

    /// Checks the ranges the energy tables cover.
    pub fn validate(&self) -> Result<(), OrfLrfError> {
        if self.orf_entries > 8 {
            return Err(OrfLrfError::Config(format!(
                "orf_entries is {}; Table 3 covers 1 to 8 entries per thread (0 for none)",
                self.orf_entries
            )));
        }
        Ok(())
    }
}

/// Where a source operand is read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "level", rename_all = "lowercase")]
pub enum ReadFrom {
    Mrf,
    /// ORF entries `entry …` (one per 32-bit register of the value).
    Orf {
        entry: u8,
    },
    /// LRF bank `bank` (0 when unified; the operand slot when split).
    Lrf {
        bank: u8,
    },
    /// A predicate register: the predicate file, outside the hierarchy.
    Pred,
}

impl ReadFrom {
    pub fn level(self) -> Option<Level> {
        match self {
            ReadFrom::Mrf => Some(Level::Mrf),
            ReadFrom::Orf { .. } => Some(Level::Orf),
            ReadFrom::Lrf { .. } => Some(Level::Lrf),
            ReadFrom::Pred => None,
        }
    }
}

/// Where a result is written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct WriteTo {
    pub mrf: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub orf: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lrf: Option<u8>,
    /// A predicate: the predicate file.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub pred: bool,
}

/// How one kind of allocation fared in a function.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllocationStats {
    /// Values (webs within a strand) placed in the LRF.
    pub lrf_values: u32,
    /// Values placed in the ORF with all their reads in the strand.
    pub orf_full: u32,
    /// Values placed in the ORF for a shortened range (§4.3).
    pub orf_partial: u32,
    /// Read operands loaded into the ORF (§4.4).
    pub read_operand_groups: u32,
    /// Values with no reads whose MRF write the ORF or LRF absorbed.
    pub dead_values: u32,
    /// Values that would save energy but found no room.
    pub not_placed: u32,
}

/// The allocation of one function: a level for every register operand.
#[derive(Clone, Debug, PartialEq)]
pub struct Annotations {
    pub(crate) sites: OperandSites,
    pub(crate) strands: Strands,
    /// Per use operand (the flat numbering of [`OperandSites`]).
    pub(crate) reads: Vec<ReadFrom>,
    /// Per use operand: the ORF entry a read-operand load fills.
    pub(crate) fills: Vec<Option<u8>>,
    /// Per def operand.
    pub(crate) writes: Vec<WriteTo>,
    pub stats: AllocationStats,
}

impl Annotations {
    pub fn strands(&self) -> &Strands {
        &self.strands
    }

    pub fn sites(&self) -> &OperandSites {
        &self.sites
    }

    /// Where each entry of `uses(inst)` is read from.
    pub fn reads(&self, inst: ir::InstId) -> &[ReadFrom] {
        let start = self.sites.first_use(inst);
        &self.reads[start..start + self.sites.uses(inst).len()]
    }

    /// The ORF entry each entry of `uses(inst)` also writes (read-operand allocation).
    pub fn fills(&self, inst: ir::InstId) -> &[Option<u8>] {
        let start = self.sites.first_use(inst);
        &self.fills[start..start + self.sites.uses(inst).len()]
    }

    /// Where each entry of `defs(inst)` is written.
    pub fn writes(&self, inst: ir::InstId) -> &[WriteTo] {
        let start = self.sites.first_def(inst);
        &self.writes[start..start + self.sites.defs(inst).len()]
    }
}

/// 32-bit registers a register of class `class` occupies, as the register allocator
/// lays it out (0 for a predicate, which lives outside the hierarchy).
pub fn register_units(class: ir::RegClass) -> u8 {
    let width = crate::regalloc::ir_input::width_of(class);
    if width.is_predicate() {
        0
    } else {
        width.units() as u8
    }
}

#[cfg(test)]
mod tests;

//! Register allocation: PTX's unlimited virtual registers onto the 32-bit architectural
//! registers `R0…R(n-1)` of one thread, and predicates onto the predicate file `P0…P(m-1)`.
//!
//! A 16- or 32-bit value takes one register, a 64-bit value an aligned even/odd pair and a
//! 128-bit value an aligned quad. The allocator is a Chaitin–Briggs graph colourer
//! (Briggs, Cooper, Torczon, "Improvements to graph coloring register allocation", TOPLAS
//! 1994): conservative coalescing of copies, simplification with optimistic spilling, and
//! colour selection biased towards copy partners. Degrees are weighted for aligned
//! multi-register values as in Smith, Ramsey, Holloway, "A generalized algorithm for
//! graph-coloring register allocation" (PLDI 2004). It minimises registers per thread by
//! trying register budgets upwards from the peak register pressure; under a cap
//! ([`AllocConfig::max_registers`], like `nvcc -maxrregcount`) it spills to local memory,
//! choosing victims by Chaitin's cost (references weighted by 10^loop depth, over degree) and
//! rewriting every reference to a short-lived temporary with a reload before it and a
//! spill after it.
//!
//! The allocator sees a function only through [`AllocInput`]. Its result is checked by
//! [`check`], an independent symbolic dataflow check (see [`checker`]).
//!
//! Stages, one file each: [`func`] (the allocator's own copy of the function, which spill
//! rewriting edits and which the IR's liveness analysis runs on), [`interference`],
//! [`color`], and [`driver`] (budget search, spill rounds, the result). [`ir_input`] adapts
//! a lowered [`ir::Function`], [`spill_code`] turns spill edits into `ld.local`/`st.local`,
//! and [`program`] allocates whole programs.

pub mod checker;
mod color;
mod driver;
mod func;
mod interference;
pub mod ir_input;
pub mod program;
pub mod spill_code;

#[cfg(test)]
mod tests;

use std::fmt;

use ir::{InstId, RegId, RegisterEffects};
use serde::{Deserialize, Serialize};

pub use checker::{check, CheckError};
pub use driver::allocate;
pub use ir_input::IrInput;
pub use program::{allocate_program, registers_per_thread, KernelRegisters};
pub use spill_code::insert_spill_code;

/// The hardware's predicate file size on current NVIDIA GPUs (`P0`–`P6`; `PT` is constant).
pub const HARDWARE_PREDICATES: u32 = 7;

/// What a virtual register needs from the register files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum RegWidth {
    /// A predicate: one entry of the predicate file.
    Pred,
    /// A 16- or 32-bit value: one 32-bit register.
    W32,
    /// A 64-bit value: an aligned pair `R2k:R2k+1`.
    W64,
    /// A 128-bit value: an aligned quad `R4k…R4k+3`.
    W128,
}

impl RegWidth {
    /// Registers of its file that a value of this width occupies (also its alignment).
    pub fn units(self) -> u32 {
        match self {
            RegWidth::Pred | RegWidth::W32 => 1,
            RegWidth::W64 => 2,
            RegWidth::W128 => 4,
        }
    }

    pub fn is_predicate(self) -> bool {
        self == RegWidth::Pred
    }
}

impl fmt::Display for RegWidth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RegWidth::Pred => "pred",
            RegWidth::W32 => "32-bit",
            RegWidth::W64 => "64-bit",
            RegWidth::W128 => "128-bit",
        })
    }
}

/// An unguarded whole-register copy `dst = src` between registers of the same width: the
/// allocator tries to give both the same register so the copy can be deleted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Copy {
    pub dst: RegId,
    pub src: RegId,
}

/// How the allocator sees a function: its CFG and register effects, plus what the
/// allocator needs beyond them.
pub trait AllocInput: RegisterEffects {
    /// The register class and size of `reg`.
    fn reg_width(&self, reg: RegId) -> RegWidth;
    /// Nesting depth of natural loops around `block` (0 outside loops): spill costs weigh a
    /// reference by 10^depth.
    fn loop_depth(&self, block: ir::BlockId) -> u32;
    /// `Some` if `inst` is a plain copy; copies whose widths differ are ignored.
    fn copy(&self, inst: InstId) -> Option<Copy> {
        let _ = inst;
        None
    }
}

/// A 32-bit architectural register `R<n>`; a wider value is named by its base register.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize,
)]
pub struct PhysReg(pub u32);

/// A predicate register `P<n>`.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize,
)]
pub struct PredReg(pub u32);

/// A slot of the thread's spill area in local memory.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize,
)]
pub struct SpillSlot(pub u32);

impl fmt::Display for PhysReg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "R{}", self.0)
    }
}
impl fmt::Display for PredReg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "P{}", self.0)
    }
}
impl fmt::Display for SpillSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "S{}", self.0)
    }
}

/// Where a virtual register lives for its whole lifetime.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Location {
    /// Never read or written by any instruction: needs no storage.
    Unused,
    /// Registers `base … base + width.units() - 1`.
    Reg(PhysReg),
    Pred(PredReg),
    /// In local memory; each instruction that references it sees it in the register given
    /// by [`Allocation::spilled_operands`], loaded and stored by [`Allocation::edits`].
    Spill(SpillSlot),
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Unused => f.write_str("unused"),
            Location::Reg(r) => r.fmt(f),
            Location::Pred(p) => p.fmt(f),
            Location::Spill(s) => s.fmt(f),
        }
    }
}

/// The register a spilled virtual register occupies while instruction `inst` reads or
/// writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SpilledOperand {
    pub inst: InstId,
    pub vreg: RegId,
    pub reg: PhysReg,
}

/// A move between a register and a spill slot, to become an `ld.local` / `st.local`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Edit {
    /// Immediately before `before`: load `vreg` from `slot` into `reg`.
    Reload {
        before: InstId,
        vreg: RegId,
        slot: SpillSlot,
        reg: PhysReg,
    },
    /// Immediately after `after`: store `vreg` from `reg` into `slot`.
    Spill {
        after: InstId,
        vreg: RegId,
        slot: SpillSlot,
        reg: PhysReg,
    },
}

/// One spill slot: its size and its byte offset in the thread's local spill area.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SpillSlotInfo {
    pub width: RegWidth,
    pub offset: u32,
}

/// The allocator's result. Plain data: the checker verifies it rather than trusting it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Allocation {
    /// Indexed by virtual register.
    pub locations: Vec<Location>,
    /// For every reference of a spilled virtual register, sorted by (instruction, vreg).
    pub spilled_operands: Vec<SpilledOperand>,
    /// Edits at the same instruction apply in this order.
    pub edits: Vec<Edit>,
    /// Indexed by [`SpillSlot`].
    pub spill_slots: Vec<SpillSlotInfo>,
    /// Registers per thread: highest register index used + 1 (a pair counts both halves).
    pub registers_used: u32,
    /// Predicate registers used: highest index + 1. May exceed [`HARDWARE_PREDICATES`]:
    /// predicates are never spilled, see [`Allocation::exceeds_hardware_predicates`].
    pub predicates_used: u32,
    /// Copy instructions whose source and destination share a register: deletable.
    pub coalesced_copies: Vec<InstId>,
}

impl Allocation {
    pub fn location(&self, vreg: RegId) -> Location {
        self.locations
            .get(vreg.index())
            .copied()
            .unwrap_or(Location::Unused)
    }

    /// The location instruction `inst` reads or writes `vreg` in: its register, or for a
    /// spilled register the temporary register it occupies at `inst`.
    pub fn operand_location(&self, inst: InstId, vreg: RegId) -> Location {
        match self.location(vreg) {
            Location::Spill(_) => self
                .spilled_operands
                .binary_search_by_key(&(inst, vreg), |o| (o.inst, o.vreg))
                .map(|i| Location::Reg(self.spilled_operands[i].reg))
                .unwrap_or(Location::Unused),
            loc => loc,
        }
    }

    /// Bytes of local memory per thread that spill slots take.
    pub fn spill_bytes(&self) -> u32 {
        self.spill_slots
            .iter()
            .map(|s| s.offset + 4 * s.width.units())
            .max()
            .unwrap_or(0)
    }

    /// Virtual registers that live in local memory.
    pub fn spilled_vregs(&self) -> usize {
        self.locations
            .iter()
            .filter(|l| matches!(l, Location::Spill(_)))
            .count()
    }

    /// True if more predicates are needed than real GPUs have ([`HARDWARE_PREDICATES`]):
    /// a real compiler would keep the rest in general registers.
    pub fn exceeds_hardware_predicates(&self) -> bool {
        self.predicates_used > HARDWARE_PREDICATES
    }
}

/// Allocator settings.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllocConfig {
    /// Cap on registers per thread (`nvcc -maxrregcount`); `None` never spills. ptxas's own
    /// default cap is 255.
    pub max_registers: Option<u32>,
}

impl AllocConfig {
    pub fn with_max_registers(max_registers: u32) -> Self {
        AllocConfig {
            max_registers: Some(max_registers),
        }
    }
}

/// Why a function could not be allocated.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AllocError {
    #[error("instruction {inst} needs more than {max_registers} registers for its own operands")]
    CapTooSmall { inst: InstId, max_registers: u32 },
    #[error("malformed function: {0}")]
    InvalidInput(String),
}

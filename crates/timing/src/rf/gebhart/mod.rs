//! Gebhart, Keckler and Dally's register-file hierarchies: the hardware register-file
//! cache with two-level scheduling (ISCA'11, as MICRO'11 §2.2 and §6 evaluate it:
//! [`rfc`]) and the compile-time managed ORF/LRF/MRF hierarchy (MICRO'11 §3–§4:
//! [`orf_lrf`]).
//!
//! Both sit in front of the baseline's banked MRF ([`crate::rf::baseline::Baseline`]):
//! an instruction still takes an operand collector, but only its operands that the upper
//! levels do not serve are requested from the MRF banks, and only results (and writebacks) that reach the MRF
//! take MRF write ports. So `RfStats::reads`/`writes` keep meaning MRF bank accesses and
//! the designs compare with the baseline on the same keys. The upper levels have no bank
//! conflicts (3 read ports and 1 write port per lane, MICRO'11 §3.2) and the latency of
//! the MRF's default one cycle: the paper's designs change energy, not the pipeline
//! ("the processor experiences no performance penalty for accessing values from the MRF
//! versus the LRF or ORF", §4), so a result written only to an upper level completes one
//! cycle after it is handed over, like an uncontended MRF write.

pub mod orf_lrf;
pub mod rfc;

use crate::config::OpClass;
use crate::kernel_info::{RegFileKind, RegOperand};
use crate::rf::baseline::MAX_REGS;
use crate::rf::InstToken;
use crate::time::{Cycle, Cycles};

/// Whether an instruction of `class` runs on a lane's private datapath (the ALUs, which
/// alone reach the LRF, MICRO'11 §3.2) rather than the shared one (SFU, MEM, TEX).
pub(crate) fn private_datapath(class: OpClass) -> bool {
    matches!(
        class,
        OpClass::Fp32 | OpClass::Int | OpClass::IntMul | OpClass::Fp64
    )
}

/// Up to [`MAX_REGS`] register operands collected without allocation (the ones an
/// instruction sends to the MRF).
pub(crate) struct OperandList {
    ops: [RegOperand; MAX_REGS],
    len: usize,
}

impl OperandList {
    pub(crate) fn new() -> Self {
        OperandList {
            ops: [RegOperand {
                file: RegFileKind::General,
                reg: 0,
                width: 1,
                hint: Default::default(),
            }; MAX_REGS],
            len: 0,
        }
    }

    pub(crate) fn push(&mut self, op: RegOperand) {
        if self.len < MAX_REGS {
            self.ops[self.len] = op;
            self.len += 1;
        }
    }

    pub(crate) fn as_slice(&self) -> &[RegOperand] {
        &self.ops[..self.len]
    }
}

/// Results written only to an upper level: complete one cycle after they are handed over.
#[derive(Default)]
pub(crate) struct UpperWrites {
    pending: Vec<(InstToken, Cycle)>,
}

impl UpperWrites {
    pub(crate) fn push(&mut self, token: InstToken, now: Cycle) {
        self.pending.push((token, now + Cycles::new(1)));
    }

    /// Moves the writes done by `now` to `out`.
    pub(crate) fn complete(&mut self, now: Cycle, out: &mut Vec<InstToken>) {
        let mut i = 0;
        while i < self.pending.len() {
            if self.pending[i].1 <= now {
                out.push(self.pending.remove(i).0);
            } else {
                i += 1;
            }
        }
    }

    pub(crate) fn next_event(&self, now: Cycle) -> Option<Cycle> {
        self.pending
            .iter()
            .map(|&(_, t)| t.max(now + Cycles::new(1)))
            .min()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }
}

/// Grows `v` so that index `i` exists (tokens and slots are dense, so this stops
/// allocating once the SM's in-flight window has been seen).
pub(crate) fn slot<T: Default + Clone>(v: &mut Vec<T>, i: usize) -> &mut T {
    if v.len() <= i {
        v.resize(i + 1, T::default());
    }
    &mut v[i]
}

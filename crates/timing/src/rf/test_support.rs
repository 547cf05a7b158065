//! Helpers the register-file designs' unit tests share.

use crate::config::{default_configs_dir, GpuConfig};
use crate::kernel_info::{OperandHint, RegFileKind, RegOperand};
use crate::rf::{Candidate, InstToken, IssuedInst, RegisterFile};
use crate::time::Cycle;
use crate::Override;

/// GPU config `name` with `overrides` applied (test input: panics if it does not load).
/// gtx480 and qv100 get the papers' simplified memory system, which the designs' papers
/// simulated and these tests' answers assume.
pub(crate) fn config(name: &str, overrides: &[&str]) -> GpuConfig {
    let paper = ["memory.model=paper"];
    let base: &[&str] = if matches!(name, "gtx480" | "qv100") {
        &paper
    } else {
        &[]
    };
    let o: Vec<Override> = base
        .iter()
        .chain(overrides)
        .map(|s| Override::parse(s).unwrap())
        .collect();
    GpuConfig::load(name, &default_configs_dir(), &o).unwrap()
}

/// The 32-bit general register `reg` as an operand without hints.
pub(crate) fn general(reg: u16) -> RegOperand {
    RegOperand {
        file: RegFileKind::General,
        reg,
        width: 1,
        hint: OperandHint::default(),
    }
}

/// Issues candidate `c` as instruction `token` at cycle `now` if `rf` accepts it; returns
/// whether it did.
pub(crate) fn try_accept(
    rf: &mut impl RegisterFile,
    token: u32,
    c: Candidate<'_>,
    now: u64,
) -> bool {
    if rf.can_accept(&c, Cycle::new(now)).is_err() {
        return false;
    }
    let step = emu::WarpStep::default();
    rf.accept(
        IssuedInst {
            token: InstToken(token),
            inst: c,
            step: &step,
        },
        Cycle::new(now),
    );
    true
}

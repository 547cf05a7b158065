//! Helpers the register-file designs' unit tests share.

use crate::config::{default_configs_dir, GpuConfig};
use crate::kernel_info::{OperandHint, RegFileKind, RegOperand};
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

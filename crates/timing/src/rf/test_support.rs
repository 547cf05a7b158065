//! Helpers the register-file designs' unit tests share.

use crate::config::{default_configs_dir, GpuConfig};
use crate::kernel_info::{OperandHint, RegFileKind, RegOperand};
use crate::Override;

/// GPU config `name` with `overrides` applied (test input: panics if it does not load).
pub(crate) fn config(name: &str, overrides: &[&str]) -> GpuConfig {
    let o: Vec<Override> = overrides
        .iter()
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

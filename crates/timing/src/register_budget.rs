//! `[compiler]`: the per-thread register budget the program is compiled for, and the rule
//! that recompiles it for a larger register file (LTRF §7.1: a larger file "enables both
//! more registers per thread and more warps").
//!
//! `compiler.max_registers_per_thread`:
//! - `"architecture"` (default): `sm.max_registers_per_thread`, the ISA's limit; a
//!   program is compiled as ptxas would compile it, whatever the file's size.
//! - `"from_capacity"`: the occupancy-maximizing budget the register file permits: the
//!   most registers per thread such that the file still holds `sm.max_warps` warps —
//!   `capacity / max_warps` registers per warp, rounded down to
//!   `sm.register_allocation_unit`, over 32 threads — capped by the architecture's limit
//!   (and at least [`MIN_BUDGET`]). On LTRF's Maxwell (64 K registers, 64 warps, units of
//!   256) that is 32 at configuration #1 and 255 at the 8x technologies, so a program
//!   that needs 96 registers spills at #1 and not at #6/#7.
//! - a number `N`: that budget (under the architecture's limit).
//!
//! With a rule other than `"architecture"`, the statistics give each kernel's registers,
//! spilled values and theoretical occupancy both under the budget and under the
//! architecture's limit (`occupancy.before_budget`).

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::config::{invalid, ConfigError, GpuConfig, WARP_SIZE};

/// The smallest budget `"from_capacity"` gives (a file too small for `max_warps` warps
/// of this many registers then limits occupancy instead).
pub const MIN_BUDGET: u32 = 16;

/// `compiler.max_registers_per_thread`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RegisterBudget {
    /// `sm.max_registers_per_thread`.
    #[default]
    Architecture,
    /// The occupancy-maximizing budget of the register file's capacity.
    FromCapacity,
    /// A fixed budget.
    Fixed(u32),
}

impl Serialize for RegisterBudget {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RegisterBudget::Architecture => s.serialize_str("architecture"),
            RegisterBudget::FromCapacity => s.serialize_str("from_capacity"),
            RegisterBudget::Fixed(n) => s.serialize_u32(*n),
        }
    }
}

impl<'de> Deserialize<'de> for RegisterBudget {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Number(i64),
            Name(String),
        }
        match Raw::deserialize(d)? {
            Raw::Number(n) => u32::try_from(n)
                .ok()
                .filter(|&n| n > 0)
                .map(RegisterBudget::Fixed)
                .ok_or_else(|| serde::de::Error::custom("a budget must be at least 1 register")),
            Raw::Name(s) => match s.as_str() {
                "architecture" => Ok(RegisterBudget::Architecture),
                "from_capacity" => Ok(RegisterBudget::FromCapacity),
                _ => Err(serde::de::Error::custom(format_args!(
                    "unknown budget `{s}`: \"architecture\", \"from_capacity\" or a number"
                ))),
            },
        }
    }
}

/// `[compiler]`: how programs are compiled for the simulated GPU.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CompilerConfig {
    /// The register budget per thread (see the module docs).
    pub max_registers_per_thread: RegisterBudget,
}

impl CompilerConfig {
    /// Whether every key is at its default (the section is then left out of a
    /// serialized config).
    pub fn is_default(&self) -> bool {
        *self == CompilerConfig::default()
    }
}

/// The budget a program is compiled under, and what it is compared with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// Registers per thread the allocator may use.
    pub registers: u32,
    /// The architecture's limit, when the rule is not `"architecture"`: the allocation
    /// under it is reported beside the budget's.
    pub compared_with: Option<u32>,
}

/// The budget of `cfg` (see the module docs).
pub fn budget(cfg: &GpuConfig) -> Budget {
    let arch = cfg.sm.max_registers_per_thread;
    match cfg.compiler.max_registers_per_thread {
        RegisterBudget::Architecture => Budget {
            registers: arch,
            compared_with: None,
        },
        RegisterBudget::Fixed(n) => Budget {
            registers: n.min(arch),
            compared_with: Some(arch),
        },
        RegisterBudget::FromCapacity => Budget {
            registers: from_capacity(cfg),
            compared_with: Some(arch),
        },
    }
}

/// The occupancy-maximizing budget of `cfg`'s register file.
pub fn from_capacity(cfg: &GpuConfig) -> u32 {
    let arch = cfg.sm.max_registers_per_thread;
    let capacity = cfg.register_capacity();
    if capacity == u64::MAX {
        return arch;
    }
    let unit = u64::from(cfg.sm.register_allocation_unit.max(1));
    let per_warp = capacity / u64::from(cfg.sm.max_warps.max(1)) / unit * unit;
    let per_thread = per_warp / u64::from(WARP_SIZE);
    u32::try_from(per_thread)
        .unwrap_or(u32::MAX)
        .clamp(MIN_BUDGET.min(arch), arch)
}

/// Checks the section.
pub fn validate(cfg: &GpuConfig) -> Result<(), ConfigError> {
    if let RegisterBudget::Fixed(n) = cfg.compiler.max_registers_per_thread {
        if n > cfg.sm.max_registers_per_thread {
            return Err(invalid(
                "compiler.max_registers_per_thread",
                format_args!(
                    "{n} exceeds the architecture's sm.max_registers_per_thread = {}",
                    cfg.sm.max_registers_per_thread
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::default_configs_dir;
    use crate::Override;

    fn cfg(overrides: &[&str]) -> Result<GpuConfig, ConfigError> {
        let o: Vec<_> = overrides
            .iter()
            .map(|s| Override::parse(s).unwrap())
            .collect();
        GpuConfig::load("maxwell-ltrf", &default_configs_dir(), &o)
    }

    #[test]
    fn from_capacity_is_the_budget_that_keeps_every_warp_resident() {
        let rule = "compiler.max_registers_per_thread=from_capacity";
        // 65536 / 64 warps = 1024 per warp = 32 per thread.
        assert_eq!(budget(&cfg(&[rule]).unwrap()).registers, 32);
        // The baseline #1 with the cache's 16 KB: 69632 / 64 = 1088, down to 1024.
        let plus = cfg(&[rule, "sm.registers=69632"]).unwrap();
        assert_eq!(budget(&plus).registers, 32);
        // 8x: 256 per thread, capped at the architecture's 255, for every design.
        for design in ["baseline", "ltrf", "ltrf-conf"] {
            let d = format!("register_file.design=\"{design}\"");
            let c = cfg(&[rule, "register_file.technology=6", &d]).unwrap();
            let b = budget(&c);
            assert_eq!((b.registers, b.compared_with), (255, Some(255)), "{design}");
        }
        let ideal = cfg(&[
            rule,
            "register_file.design=\"ideal\"",
            "register_file.ideal_capacity_registers=131072",
        ])
        .unwrap();
        assert_eq!(budget(&ideal).registers, 64);
        // The default: the architecture's limit, nothing to compare.
        let b = budget(&cfg(&[]).unwrap());
        assert_eq!((b.registers, b.compared_with), (255, None));
        assert_eq!(
            budget(&cfg(&["compiler.max_registers_per_thread=40"]).unwrap()).registers,
            40
        );
    }

    #[test]
    fn a_bad_budget_is_refused_naming_the_key() {
        for bad in ["most", "0", "300"] {
            let e = cfg(&[&format!("compiler.max_registers_per_thread={bad}")]).unwrap_err();
            assert_eq!(
                e.key(),
                Some("compiler.max_registers_per_thread"),
                "{bad}: {e}"
            );
        }
    }
}

//! Main-register-file (MRF) technologies as LTRF models them (Sadrosadati et al., Table 2,
//! §2.2 and §6 "Design Points"): per technology, how many banks the file has, how long a
//! bank is busy with one access, the bank's latency relative to configuration #1's bank,
//! and the network between the banks and the collectors (or the LTRF cache).
//!
//! `register_file.technology` names a preset, one row of Table 2 (by number, 1…7, or by
//! name: [`TABLE2`]); each `[register_file.mrf]` key set in the config overrides one
//! column of it ([`MrfOrganisation`]). The resolved organisation ([`MrfModel`]) is what
//! the banks use, for every design:
//! - **Banks**: `register_file.banks` (configuration #1's 16) times the preset's bank
//!   multiplier (8 for the rows with "8x" banks of 1x size: #3, #5, #6, #7).
//! - **Occupancy**: Table 2's timings come from CACTI's *non-pipelined* bank models and
//!   NVSim (§2.2), so a bank port is busy for the whole access (`occupancy =
//!   "non_pipelined"`, every preset); `"pipelined"` accepts a new access every cycle.
//! - **Latency**: `register_file.bank_latency` is configuration #1's bank latency in
//!   cycles (a sourced config value, see `configs/maxwell-ltrf.toml`); a technology's bank
//!   takes `relative_bank_latency` times that.
//! - **Network**: a crossbar (#1, #2, #4: its traversal is inside #1's access, as in the
//!   GPGPU-Sim model LTRF §6 starts from) or a flattened butterfly (Kim et al., MICRO'07:
//!   any two routers of a two-dimensional flattened butterfly are at most
//!   [`BUTTERFLY_HOPS`] hops apart), whose hops each add `hop_latency` times #1's bank
//!   latency to an access without occupying the bank.
//!
//! Table 2's latency column is the *average access latency measured in GPGPU-Sim*,
//! including the queuing of bank conflicts (§2.2), and the paper gives no bank-only
//! figure. The presets split it so that the unloaded access (bank plus network) is
//! Table 2's number and the queuing comes out of our model instead: configuration #3 has
//! #1's banks (HP SRAM, 16 KB each) behind a flattened butterfly and is 1.5x, so the
//! butterfly's two hops are 0.5x (a hop 0.25x) and every flattened-butterfly row's bank is
//! its Table 2 latency less 0.5x. The crossbar rows' banks are their Table 2 latency.
//! This attributes #1-relative queuing differences to the bank; it is the one split the
//! table allows.

use serde::{Deserialize, Deserializer, Serialize};

use crate::config::{invalid, ConfigError};
use crate::time::Cycles;

/// The network between the MRF banks and the operand collectors / LTRF cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MrfNetwork {
    /// One crossbar stage, inside the bank access time of configuration #1.
    Crossbar,
    /// A flattened butterfly: [`BUTTERFLY_HOPS`] router hops of `hop_latency` each.
    FlattenedButterfly,
}

/// Router hops of a two-dimensional flattened butterfly between any bank and any
/// collector (Kim et al., MICRO'07: one hop per dimension).
pub const BUTTERFLY_HOPS: u32 = 2;

/// How long a bank port is taken by one access.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BankOccupancy {
    /// A port accepts a new access every cycle whatever the latency.
    Pipelined,
    /// A port is busy for the bank's whole access latency (CACTI's non-pipelined banks).
    NonPipelined,
}

/// One row of LTRF Table 2 and the preset it defines.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TechnologyRow {
    /// The preset's name (`register_file.technology = "NAME"`).
    pub name: &'static str,
    /// Cell technology, banks and network, as Table 2 gives them.
    pub description: &'static str,
    /// Banks relative to #1 (16 banks).
    pub bank_multiplier: u32,
    /// The network between banks and collectors.
    pub network: MrfNetwork,
    /// Capacity relative to #1.
    pub capacity: u32,
    /// Area relative to #1, in hundredths.
    pub area_percent: u32,
    /// Power relative to #1, in hundredths.
    pub power_percent: u32,
    /// Table 2's access latency relative to #1, in hundredths (banks, network and the
    /// paper's queuing).
    pub latency_percent: u32,
}

impl TechnologyRow {
    /// The preset's bank latency relative to #1's bank (the module docs' split).
    pub fn relative_bank_latency(&self) -> f64 {
        let network = match self.network {
            MrfNetwork::Crossbar => 0.0,
            MrfNetwork::FlattenedButterfly => f64::from(BUTTERFLY_HOPS) * BUTTERFLY_HOP_LATENCY,
        };
        f64::from(self.latency_percent) / 100.0 - network
    }
}

/// The preset hop latency of the flattened butterfly, relative to #1's bank: #3 (1.5x,
/// #1's bank behind the butterfly) less #1, over two hops.
pub const BUTTERFLY_HOP_LATENCY: f64 = 0.25;

/// A row: name, description, (banks, network), (capacity, area %, power %, latency %).
const fn row(
    name: &'static str,
    description: &'static str,
    (bank_multiplier, network): (u32, MrfNetwork),
    (capacity, area_percent, power_percent, latency_percent): (u32, u32, u32, u32),
) -> TechnologyRow {
    TechnologyRow {
        name,
        description,
        bank_multiplier,
        network,
        capacity,
        area_percent,
        power_percent,
        latency_percent,
    }
}

use MrfNetwork::{Crossbar, FlattenedButterfly};

/// LTRF Table 2: the main register-file configurations, relative to #1 (256 KB, 16 banks
/// of 16 KB, HP SRAM). Columns: name, description, banks, network, capacity, area, power,
/// latency (the last three in hundredths).
pub const TABLE2: [TechnologyRow; 7] = [
    row(
        "hp-sram",
        "HP SRAM, 1x banks of 1x, crossbar",
        (1, Crossbar),
        (1, 100, 100, 100),
    ),
    row(
        "hp-sram-large-banks",
        "HP SRAM, 1x banks of 8x, crossbar",
        (1, Crossbar),
        (8, 800, 800, 125),
    ),
    row(
        "hp-sram-8x-banks",
        "HP SRAM, 8x banks of 1x, flattened butterfly",
        (8, FlattenedButterfly),
        (8, 800, 800, 150),
    ),
    row(
        "lstp-sram-large-banks",
        "LSTP SRAM, 1x banks of 8x, crossbar",
        (1, Crossbar),
        (8, 800, 320, 160),
    ),
    row(
        "lstp-sram-8x-banks",
        "LSTP SRAM, 8x banks of 1x, flattened butterfly",
        (8, FlattenedButterfly),
        (8, 800, 320, 280),
    ),
    row(
        "tfet-sram",
        "TFET SRAM, 8x banks of 1x, flattened butterfly",
        (8, FlattenedButterfly),
        (8, 800, 105, 530),
    ),
    row(
        "dwm",
        "DWM, 8x banks of 1x, flattened butterfly",
        (8, FlattenedButterfly),
        (8, 25, 65, 630),
    ),
];

/// `register_file.technology`: a configuration of LTRF Table 2, by number (1…7) or by
/// preset name ([`TABLE2`]); default 1, the baseline HP SRAM. It applies to every design.
/// Serialized as its number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct MrfTechnology(pub u8);

impl Default for MrfTechnology {
    fn default() -> Self {
        MrfTechnology(1)
    }
}

impl<'de> Deserialize<'de> for MrfTechnology {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Number(i64),
            Name(String),
        }
        match Raw::deserialize(d)? {
            // Out-of-range numbers are refused by `validate`, naming the table's range.
            Raw::Number(n) => Ok(MrfTechnology(u8::try_from(n).unwrap_or(0))),
            Raw::Name(name) => MrfTechnology::from_name(&name).ok_or_else(|| {
                let names: Vec<&str> = TABLE2.iter().map(|r| r.name).collect();
                serde::de::Error::custom(format_args!(
                    "unknown technology `{name}`: LTRF Table 2's are 1 to {} or {}",
                    TABLE2.len(),
                    names.join(", ")
                ))
            }),
        }
    }
}

impl MrfTechnology {
    /// The preset called `name` (a [`TechnologyRow::name`]).
    pub fn from_name(name: &str) -> Option<Self> {
        TABLE2
            .iter()
            .position(|r| r.name == name)
            .map(|i| MrfTechnology(i as u8 + 1))
    }

    /// Its row of Table 2 (#1 for an invalid number; [`Self::validate`] rejects those).
    pub fn row(self) -> &'static TechnologyRow {
        TABLE2
            .get(usize::from(self.0).wrapping_sub(1))
            .unwrap_or(&TABLE2[0])
    }

    /// Registers available for occupancy: `registers` times the relative capacity.
    pub fn capacity(self, registers: u64) -> u64 {
        registers.saturating_mul(u64::from(self.row().capacity))
    }

    /// The factor on the MRF's per-access energy: Table 2's relative power (#1 1, #2/#3
    /// 8, #4/#5 3.2, #6 1.05, #7 0.65). It is the default of
    /// `energy.mrf_technology_scale` (filled in when a GPU config is loaded).
    ///
    /// Table 2's "power consumption" is the power of the whole register file, normalized
    /// to #1, from CACTI/NVSim numbers fed into GPGPU-Sim runs of the same workloads, so
    /// at the same access rate; it includes leakage (LSTP cells' gain over HP is mostly
    /// standby power, and the paper chose #6 because a 2 MB TFET file "consumes a similar
    /// amount of power" as the 256 KB baseline). Our energy model has no static term:
    /// joules are event counts times energy per event. So we carry the ratio over as a
    /// per-access energy ratio of the MRF's reads and writes, which is exact when the
    /// file's power is dynamic and the access rate is the baseline's. It makes a slower
    /// design's MRF no cheaper per second and credits LSTP's leakage saving to every
    /// access instead; the paper gives no split between the two to do better.
    pub fn relative_power(self) -> f64 {
        f64::from(self.row().power_percent) / 100.0
    }

    /// Rejects numbers outside Table 2.
    pub fn validate(self) -> Result<(), ConfigError> {
        if (1..=TABLE2.len()).contains(&usize::from(self.0)) {
            Ok(())
        } else {
            Err(invalid(
                "register_file.technology",
                format_args!(
                    "{} is not a configuration of LTRF Table 2 (1 to {})",
                    self.0,
                    TABLE2.len()
                ),
            ))
        }
    }
}

/// `[register_file.mrf]`: the MRF organisation; every key absent takes the value of the
/// `register_file.technology` preset.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MrfOrganisation {
    /// Banks relative to `register_file.banks` (the preset's 1 or 8).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bank_multiplier: Option<u32>,
    /// A bank's access latency relative to `register_file.bank_latency` (#1's bank).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relative_bank_latency: Option<f64>,
    /// Whether a bank port is busy for the whole access (`non_pipelined`, every preset).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub occupancy: Option<BankOccupancy>,
    /// Crossbar or flattened butterfly.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<MrfNetwork>,
    /// A flattened-butterfly hop's latency relative to `register_file.bank_latency`
    /// (preset: [`BUTTERFLY_HOP_LATENCY`]); unused with a crossbar.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hop_latency: Option<f64>,
}

impl MrfOrganisation {
    /// Whether no key is set (the section is then left out of a serialized config).
    pub fn is_default(&self) -> bool {
        *self == MrfOrganisation::default()
    }
}

/// The MRF organisation the banks use: the preset with the config's overrides, in cycles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MrfModel {
    /// MRF banks per SM.
    pub banks: u32,
    /// Cycles a bank port is taken by one access (1 when pipelined).
    pub occupancy: Cycles,
    /// Cycles from a bank's grant to the value at the collector (bank plus network).
    pub latency: Cycles,
}

/// Largest bank count after the multiplier (bank numbers are 8-bit in the arbiter, and
/// the LTRF cache's banks are numbered after the MRF's).
pub const MAX_MULTIPLIED_BANKS: u32 = 190;

impl MrfModel {
    /// Resolves `technology` with `org`'s overrides for a file of `banks` banks (#1's)
    /// whose #1 bank takes `bank_latency` cycles. Latencies round to the nearest cycle
    /// (halves up), at least one: with `bank_latency = 1`, #1…#7 take 1, 1, 2, 2, 3, 5
    /// and 6 cycles, and their banks are busy for 1, 1, 1, 2, 2, 5 and 6.
    pub fn new(
        technology: MrfTechnology,
        org: &MrfOrganisation,
        banks: u32,
        bank_latency: Cycles,
    ) -> Self {
        let row = technology.row();
        let base = bank_latency.get() as f64;
        let bank_rel = org
            .relative_bank_latency
            .unwrap_or_else(|| row.relative_bank_latency());
        let network_rel = match org.network.unwrap_or(row.network) {
            MrfNetwork::Crossbar => 0.0,
            MrfNetwork::FlattenedButterfly => {
                f64::from(BUTTERFLY_HOPS) * org.hop_latency.unwrap_or(BUTTERFLY_HOP_LATENCY)
            }
        };
        let cycles = |rel: f64| Cycles::new(((base * rel + 0.5).floor() as u64).max(1));
        let bank = cycles(bank_rel);
        let occupancy = match org.occupancy.unwrap_or(BankOccupancy::NonPipelined) {
            BankOccupancy::Pipelined => Cycles::new(1),
            BankOccupancy::NonPipelined => bank,
        };
        MrfModel {
            banks: banks.saturating_mul(org.bank_multiplier.unwrap_or(row.bank_multiplier)),
            occupancy,
            latency: cycles(bank_rel + network_rel),
        }
    }

    /// Checks the overrides, and that the multiplied banks stay numberable.
    pub fn validate(
        technology: MrfTechnology,
        org: &MrfOrganisation,
        banks: u32,
    ) -> Result<(), ConfigError> {
        let m = org
            .bank_multiplier
            .unwrap_or(technology.row().bank_multiplier);
        if m == 0 {
            return Err(invalid(
                "register_file.mrf.bank_multiplier",
                "must be at least 1",
            ));
        }
        if m > 1 && banks.saturating_mul(m) > MAX_MULTIPLIED_BANKS {
            let key = if org.bank_multiplier.is_some() {
                "register_file.mrf.bank_multiplier"
            } else {
                "register_file.technology"
            };
            return Err(invalid(
                key,
                format_args!(
                    "register_file.banks = {banks} times {m} exceeds the \
                     {MAX_MULTIPLIED_BANKS} banks the arbiter numbers"
                ),
            ));
        }
        for (key, v) in [
            (
                "register_file.mrf.relative_bank_latency",
                org.relative_bank_latency,
            ),
            ("register_file.mrf.hop_latency", org.hop_latency),
        ] {
            if let Some(v) = v {
                if !(0.0..=1000.0).contains(&v) {
                    return Err(invalid(key, "must be a number from 0 to 1000"));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(tech: u8, org: &MrfOrganisation, base: u64) -> MrfModel {
        MrfModel::new(MrfTechnology(tech), org, 16, Cycles::new(base))
    }

    #[test]
    fn presets_keep_table_2s_unloaded_latency_and_split_off_the_butterfly() {
        let none = MrfOrganisation::default();
        let got: Vec<(u32, u64, u64)> = (1..=7)
            .map(|t| {
                let m = model(t, &none, 1);
                (m.banks, m.latency.get(), m.occupancy.get())
            })
            .collect();
        assert_eq!(
            got,
            [
                (16, 1, 1),
                (16, 1, 1),
                (128, 2, 1),
                (16, 2, 2),
                (128, 3, 2),
                (128, 5, 5),
                (128, 6, 6)
            ]
        );
        // At #1's 10 cycles: #6 is 53 cycles, 48 of them in the bank.
        let m = model(6, &none, 10);
        assert_eq!((m.latency.get(), m.occupancy.get()), (53, 48));
    }

    #[test]
    fn overrides_replace_one_column_each() {
        let org = MrfOrganisation {
            occupancy: Some(BankOccupancy::Pipelined),
            network: Some(MrfNetwork::Crossbar),
            bank_multiplier: Some(2),
            ..MrfOrganisation::default()
        };
        let m = model(7, &org, 1);
        assert_eq!((m.banks, m.latency.get(), m.occupancy.get()), (32, 6, 1));
        let org = MrfOrganisation {
            hop_latency: Some(2.0),
            relative_bank_latency: Some(3.0),
            ..MrfOrganisation::default()
        };
        assert_eq!(model(6, &org, 1).latency.get(), 3 + 2 * 2);
    }

    #[test]
    fn presets_are_found_by_name_and_a_wrong_name_is_refused() {
        for (i, r) in TABLE2.iter().enumerate() {
            assert_eq!(
                MrfTechnology::from_name(r.name),
                Some(MrfTechnology(i as u8 + 1))
            );
        }
        assert_eq!(MrfTechnology::from_name("sram"), None);
        let bad = MrfOrganisation {
            bank_multiplier: Some(0),
            ..MrfOrganisation::default()
        };
        let e = MrfModel::validate(MrfTechnology(1), &bad, 16).unwrap_err();
        assert_eq!(e.key(), Some("register_file.mrf.bank_multiplier"));
        let e = MrfModel::validate(MrfTechnology(6), &MrfOrganisation::default(), 32);
        assert_eq!(e.unwrap_err().key(), Some("register_file.technology"));
        assert!(MrfModel::validate(MrfTechnology(6), &MrfOrganisation::default(), 16).is_ok());
    }
}

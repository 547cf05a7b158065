//! The energy model of the compile-time ORF/LRF allocation, Gebhart MICRO'11 §5.2: bank access energies from
//! Table 3 (ORF by entries per thread) and Table 4 (MRF, LRF), plus wire energy from the
//! distances and the per-bit wire energy of Table 4; and the savings functions of Figure 6
//! (a value produced in a strand) and Figure 9 (a read operand).
//!
//! Provenance of the defaults. Table 3 and the distances and wire energy of Table 4 are as
//! our copy of the paper gives them. The plain-text copy lost two numbers of Table 4: the
//! MRF and LRF *read* energies survive only as "/ 11 pJ" and "/ 2 pJ". The LRF read energy
//! is taken from Table 3's one-entry row (0.7 pJ read, 2.0 pJ write — the LRF is a
//! one-entry-per-thread file and its write energy matches that row); the MRF read energy,
//! 8 pJ, is from the published table and is *not* in our text. The MRF-to-private-datapath
//! distance is also missing from the text; §5.2 says the private datapath's wire energy
//! is 5× lower for the ORF (0.2 mm) and 20× lower for the LRF (0.05 mm), which makes it
//! 1 mm. Every value is a field of [`EnergyModel`], so a study can change them.
//!
//! Units: Table 3's energies are for accessing 128 bits, i.e. one 32-bit register of the
//! four lanes of a SIMT cluster; wire energy is per 32 bits per mm, so an access moves
//! `4 × 1.9 pJ/mm × distance` over wires. An access below is one 32-bit register of one
//! cluster; a 64-bit value costs two.
//!
//! Moved here from `compiler::orf_lrf` so the compiler's allocation and the run-time
//! energy accounting ([`crate::EnergyConfig`]) read the same tables.

use serde::{Deserialize, Serialize};

/// Which datapath an access travels to: the private one (ALUs, next to the ORF/LRF) or
/// the shared one (SFU, memory, texture units), farther away (Table 4's distances).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    Private,
    Shared,
}

/// Table 3: ORF read and write energy (pJ per 128-bit access) for 1…8 entries per thread.
pub const TABLE3_ORF_READ_PJ: [f64; 8] = [0.7, 1.2, 1.2, 1.9, 2.0, 2.0, 2.4, 3.4];
pub const TABLE3_ORF_WRITE_PJ: [f64; 8] = [2.0, 3.8, 4.4, 6.1, 6.0, 6.7, 7.7, 10.9];

/// A storage level of the hierarchy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Mrf,
    Orf,
    Lrf,
}

impl Level {
    pub const ALL: [Level; 3] = [Level::Mrf, Level::Orf, Level::Lrf];

    pub fn as_str(self) -> &'static str {
        match self {
            Level::Mrf => "MRF",
            Level::Orf => "ORF",
            Level::Lrf => "LRF",
        }
    }
}

/// Bank and wire energies (Tables 3 and 4) and the allocation threshold θ of Figure 7.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EnergyModel {
    pub mrf_read_pj: f64,
    pub mrf_write_pj: f64,
    /// ORF read energy per entries-per-thread (index 0 is one entry); Table 3.
    pub orf_read_pj: [f64; 8],
    pub orf_write_pj: [f64; 8],
    pub lrf_read_pj: f64,
    pub lrf_write_pj: f64,
    /// Wire energy of 32 bits over 1 mm (Table 4: 1.9 pJ/mm).
    pub wire_pj_per_mm: f64,
    /// 32-bit words per access (four lanes per SIMT cluster).
    pub words_per_access: f64,
    pub mrf_to_private_mm: f64,
    pub mrf_to_shared_mm: f64,
    pub orf_to_private_mm: f64,
    pub orf_to_shared_mm: f64,
    pub lrf_to_private_mm: f64,
    /// θ of Figure 7: a value is allocated only if its savings exceed it.
    pub threshold_pj: f64,
}

impl Default for EnergyModel {
    fn default() -> Self {
        EnergyModel {
            mrf_read_pj: 8.0,
            mrf_write_pj: 11.0,
            orf_read_pj: TABLE3_ORF_READ_PJ,
            orf_write_pj: TABLE3_ORF_WRITE_PJ,
            lrf_read_pj: 0.7,
            lrf_write_pj: 2.0,
            wire_pj_per_mm: 1.9,
            words_per_access: 4.0,
            mrf_to_private_mm: 1.0,
            mrf_to_shared_mm: 1.0,
            orf_to_private_mm: 0.2,
            orf_to_shared_mm: 0.4,
            lrf_to_private_mm: 0.05,
            threshold_pj: 0.0,
        }
    }
}

/// The access energies of one configuration (entries per thread fixed), in pJ per 32-bit
/// register access of one cluster, bank and wire together.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AccessEnergy {
    bank_read: [f64; 3],
    bank_write: [f64; 3],
    /// Wire energy per access from each level to the private and the shared datapath.
    wire_private: [f64; 3],
    wire_shared: [f64; 3],
}

impl AccessEnergy {
    /// The energies with `orf_entries` (1…8) ORF entries per thread.
    pub fn new(model: &EnergyModel, orf_entries: u8) -> Self {
        let k = usize::from(orf_entries.clamp(1, 8)) - 1;
        let wire = |mm: f64| model.words_per_access * model.wire_pj_per_mm * mm;
        AccessEnergy {
            bank_read: [model.mrf_read_pj, model.orf_read_pj[k], model.lrf_read_pj],
            bank_write: [
                model.mrf_write_pj,
                model.orf_write_pj[k],
                model.lrf_write_pj,
            ],
            wire_private: [
                wire(model.mrf_to_private_mm),
                wire(model.orf_to_private_mm),
                wire(model.lrf_to_private_mm),
            ],
            // The shared datapath never reaches the LRF; the value is only for totals.
            wire_shared: [
                wire(model.mrf_to_shared_mm),
                wire(model.orf_to_shared_mm),
                wire(model.lrf_to_private_mm),
            ],
        }
    }

    fn wire(&self, level: Level, path: Path) -> f64 {
        if path == Path::Private {
            self.wire_private[level as usize]
        } else {
            self.wire_shared[level as usize]
        }
    }

    /// One 32-bit read of `level` by an instruction on `unit`.
    pub fn read(&self, level: Level, unit: impl Into<Path>) -> f64 {
        self.bank_read[level as usize] + self.wire(level, unit.into())
    }

    /// One 32-bit write of `level` by a result of an instruction on `unit`.
    pub fn write(&self, level: Level, unit: impl Into<Path>) -> f64 {
        self.bank_write[level as usize] + self.wire(level, unit.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_papers_tables() {
        let m = EnergyModel::default();
        let e = AccessEnergy::new(&m, 3);
        // MRF read by the private datapath: 8 pJ bank + 4 words × 1.9 pJ/mm × 1 mm.
        assert!((e.read(Level::Mrf, Path::Private) - 15.6).abs() < 1e-9);
        // Three-entry ORF (Table 3 row 3): 1.2 pJ read + 4 × 1.9 × 0.2 mm of wire.
        assert!((e.read(Level::Orf, Path::Private) - 2.72).abs() < 1e-9);
        assert!((e.read(Level::Orf, Path::Shared) - (1.2 + 3.04)).abs() < 1e-9);
        assert!((e.write(Level::Orf, Path::Private) - (4.4 + 1.52)).abs() < 1e-9);
        assert!((e.write(Level::Lrf, Path::Private) - (2.0 + 0.38)).abs() < 1e-9);
        // Eight entries: the last row.
        let e8 = AccessEnergy::new(&m, 8);
        assert!((e8.write(Level::Orf, Path::Private) - (10.9 + 1.52)).abs() < 1e-9);
    }
}

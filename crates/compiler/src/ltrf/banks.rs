//! Register banks and the bank conflicts of a prefetch (LTRF §4).
//!
//! The main register file is split into `B` single-ported banks; a prefetch reads the
//! interval's whole working set, and registers in the same bank are read one after
//! another. The paper: "A register-interval has no register bank conflict if all
//! registers of its register working-set reside in different main register file banks. A
//! register-interval has N register bank conflicts if at most N+1 registers reside in the
//! same register bank." So the conflicts of an interval are the largest number of its
//! working-set registers in any one bank, minus one: the extra serial bank accesses its
//! prefetch needs. A 64-bit value is two registers and may occupy two banks. An interval
//! with an empty working set prefetches nothing and is left out of the histograms.
//!
//! Which bank a register is in is a [`BankMapping`]: by default register `r` is in bank
//! `r mod B` (consecutive registers in consecutive banks, as in GPGPU-Sim); the paper's
//! walk-through example (§4.3, two registers per bank) is `blocked:2`, bank `(r / 2) mod B`.

use std::fmt;

use serde::{Deserialize, Serialize};

/// How register numbers map to banks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BankMapping {
    /// Bank `r mod B`.
    #[default]
    Interleaved,
    /// Bank `(r / registers_per_bank) mod B`.
    Blocked { registers_per_bank: u32 },
}

impl BankMapping {
    pub fn bank(self, register: u32, banks: u32) -> u32 {
        match self {
            BankMapping::Interleaved => register % banks,
            BankMapping::Blocked { registers_per_bank } => {
                (register / registers_per_bank.max(1)) % banks
            }
        }
    }
}

impl fmt::Display for BankMapping {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BankMapping::Interleaved => f.write_str("interleaved (bank = r mod B)"),
            BankMapping::Blocked { registers_per_bank } => {
                write!(
                    f,
                    "blocked:{registers_per_bank} (bank = (r / {registers_per_bank}) mod B)"
                )
            }
        }
    }
}

impl std::str::FromStr for BankMapping {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s == "interleaved" {
            return Ok(BankMapping::Interleaved);
        }
        if let Some(k) = s.strip_prefix("blocked:") {
            return match k.parse::<u32>() {
                Ok(k) if k > 0 => Ok(BankMapping::Blocked {
                    registers_per_bank: k,
                }),
                _ => Err(format!("bad registers per bank in '{s}'")),
            };
        }
        Err(format!(
            "unknown bank mapping '{s}' (expected interleaved or blocked:K)"
        ))
    }
}

/// A bank configuration: how many banks and how registers map to them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Banks {
    pub count: u32,
    pub mapping: BankMapping,
}

impl Banks {
    pub fn new(count: u32, mapping: BankMapping) -> Self {
        Banks { count, mapping }
    }

    pub fn bank(&self, register: u32) -> u32 {
        self.mapping.bank(register, self.count)
    }

    /// Bank conflicts of a prefetch of `working_set` (distinct registers): the most
    /// registers in one bank, minus one; 0 for an empty set.
    pub fn conflicts(&self, working_set: &[u32]) -> u32 {
        let mut per_bank = vec![0u32; self.count as usize];
        for &r in working_set {
            per_bank[self.bank(r) as usize] += 1;
        }
        per_bank.into_iter().max().unwrap_or(0).saturating_sub(1)
    }
}

/// How many intervals have 0, 1, 2, and 3 or more bank conflicts. In JSON an object with
/// the keys `"0"`, `"1"`, `"2"` and `"3+"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConflictHistogram(pub [u32; 4]);

impl Serialize for ConflictHistogram {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(4))?;
        for (key, count) in ["0", "1", "2", "3+"].iter().zip(self.0) {
            map.serialize_entry(key, &count)?;
        }
        map.end()
    }
}

impl ConflictHistogram {
    pub fn add(&mut self, conflicts: u32) {
        self.0[(conflicts as usize).min(3)] += 1;
    }

    pub fn total(&self) -> u32 {
        self.0.iter().sum()
    }

    /// Fraction of the counted intervals with no conflict; 1 if there are none (nothing
    /// to prefetch conflicts with nothing).
    pub fn conflict_free_fraction(&self) -> f64 {
        match self.total() {
            0 => 1.0,
            t => f64::from(self.0[0]) / f64::from(t),
        }
    }
}

impl fmt::Display for ConflictHistogram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [a, b, c, d] = self.0;
        write!(f, "0:{a} 1:{b} 2:{c} 3+:{d}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conflicts_are_the_fullest_bank_minus_one() {
        let b = Banks::new(4, BankMapping::Interleaved);
        assert_eq!(b.conflicts(&[]), 0);
        assert_eq!(b.conflicts(&[0, 1, 2, 3]), 0);
        assert_eq!(b.conflicts(&[0, 4]), 1);
        assert_eq!(b.conflicts(&[0, 4, 8, 1, 5]), 2);
        assert_eq!(b.conflicts(&[3, 7, 11, 15, 19]), 4);
    }

    #[test]
    fn blocked_mapping_matches_the_papers_example() {
        // §4.3: four banks of two registers; R0, R1 in bank 0 and R4, R5 in bank 2.
        let b = Banks::new(4, "blocked:2".parse().unwrap());
        assert_eq!([0, 1, 4, 5].map(|r| b.bank(r)), [0, 0, 2, 2]);
        assert_eq!(b.conflicts(&[0, 1, 4, 5]), 1);
    }

    #[test]
    fn histogram_buckets_three_and_more_together() {
        let mut h = ConflictHistogram::default();
        for c in [0, 0, 1, 2, 3, 7] {
            h.add(c);
        }
        assert_eq!(h.0, [2, 1, 1, 2]);
        assert!((h.conflict_free_fraction() - 2.0 / 6.0).abs() < 1e-12);
        assert_eq!(ConflictHistogram::default().conflict_free_fraction(), 1.0);
    }

    #[test]
    fn mapping_parses() {
        assert_eq!("interleaved".parse(), Ok(BankMapping::Interleaved));
        assert!("blocked:0".parse::<BankMapping>().is_err());
        assert!("modulo".parse::<BankMapping>().is_err());
    }
}

//! `[register_file.wir]`: the variant of WIR (Kim and Ro, HPCA'18, §VII-A "machine
//! models") and the sizes of its tables (Table II).

use serde::{Deserialize, Serialize};

use crate::config::ConfigError;

/// The paper's machine models, each a set of the optimisations of §V–§VI.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum WirVariant {
    /// Register renaming, reuse buffer and value signature buffer.
    R,
    /// R with load reuse (§VI-A).
    RL,
    /// RL with pending-retry (§VI-B).
    RLP,
    /// RLP with the verify cache (§VI-C).
    RLPV,
    /// RLPV without load reuse.
    RPV,
    /// RLPV with the capped-register policy (§V-E) instead of max-register.
    RLPVc,
    /// R without the value signature buffer: every convergent write takes a new register.
    NoVSB,
}

impl WirVariant {
    /// Loads may reuse (§VI-A).
    pub fn load_reuse(self) -> bool {
        matches!(self, Self::RL | Self::RLP | Self::RLPV | Self::RLPVc)
    }
    /// A reuse-buffer miss reserves its entry and later hits wait for it (§VI-B).
    pub fn pending_retry(self) -> bool {
        matches!(self, Self::RLP | Self::RLPV | Self::RPV | Self::RLPVc)
    }
    /// Verify reads go through the verify cache (§VI-C).
    pub fn verify_cache(self) -> bool {
        matches!(self, Self::RLPV | Self::RPV | Self::RLPVc)
    }
    /// Physical registers in use are capped at the logical registers of the resident
    /// warps (§V-E); otherwise every register of the file may hold renamed values.
    pub fn capped_registers(self) -> bool {
        self == Self::RLPVc
    }
    /// Results are matched against existing registers through the VSB (§V-A).
    pub fn value_signatures(self) -> bool {
        self != Self::NoVSB
    }
}

/// How the value signature buffer is organised (§V-A).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VsbOrganisation {
    /// The paper's: entries directly indexed by the low bits of a 32-bit H3 hash of the
    /// value (its signature), each holding the signature and a register; a new signature
    /// replaces whatever its entry held, and a hit is confirmed by a verify read.
    DirectMapped,
    /// Ours, from before device addresses were deterministic: fully associative with FIFO
    /// replacement and 64-bit signatures, so which values it holds depended only on the
    /// order of writes, never on pointer values. Kept to compare with.
    FullyAssociative,
}

/// The WIR design's parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WirConfig {
    /// Which optimisations are on (default RLPV, the paper's full design).
    pub variant: WirVariant,
    /// Reuse-buffer entries, directly indexed by a hash of the tag (Table II: 256).
    pub reuse_buffer_entries: u32,
    /// Value-signature-buffer entries (Table II: 256).
    pub vsb_entries: u32,
    /// The VSB's organisation (`direct-mapped`, the paper's, or `fully-associative`).
    pub vsb: VsbOrganisation,
    /// Verify-cache entries, fully associative, LRU (Table II: 8).
    pub verify_cache_entries: u32,
    /// Pending-retry queue entries (§VI-B: 16).
    pub retry_queue_entries: u32,
    /// Cycles the rename and reuse stages add between issue and operand read (Figure 5
    /// adds both in front of the register read stage: 2).
    pub front_stages: u32,
    /// Cycles the register-allocation stage adds to every write (§VII-E: "pipelined into
    /// 2 cycles for hash generation and table access"; with the 2 front stages, the 4
    /// cycles the paper adds to every warp instruction).
    pub allocation_stages: u32,
    /// Whether PTX's kernel prologue (`ld.param` of a kernel parameter, `cvta`) may be
    /// reused. The paper simulates PTXplus (§VII-A), the machine ISA, where a kernel
    /// parameter is a constant-bank operand of the instruction that uses it and generic
    /// addresses need no conversion: those instructions do not exist there, so by
    /// default they execute without reuse here instead of counting as reused work.
    pub reuse_prologue: bool,
}

impl Default for WirConfig {
    fn default() -> Self {
        WirConfig {
            variant: WirVariant::RLPV,
            reuse_buffer_entries: 256,
            vsb_entries: 256,
            vsb: VsbOrganisation::DirectMapped,
            verify_cache_entries: 8,
            retry_queue_entries: 16,
            front_stages: 2,
            allocation_stages: 2,
            reuse_prologue: false,
        }
    }
}

impl WirConfig {
    /// Rejects table sizes the design cannot work with; errors name the key.
    pub fn validate(&self) -> Result<(), ConfigError> {
        for (key, v) in [
            ("reuse_buffer_entries", self.reuse_buffer_entries),
            ("vsb_entries", self.vsb_entries),
        ] {
            if v == 0 {
                return Err(ConfigError::Invalid {
                    key: format!("register_file.wir.{key}"),
                    message: "must be at least 1".into(),
                });
            }
        }
        Ok(())
    }
}

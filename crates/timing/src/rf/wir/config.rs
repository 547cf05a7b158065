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

/// The WIR design's parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WirConfig {
    /// Which optimisations are on (default RLPV, the paper's full design).
    pub variant: WirVariant,
    /// Reuse-buffer entries, directly indexed by a hash of the tag (Table II: 256).
    pub reuse_buffer_entries: u32,
    /// Value-signature-buffer entries (Table II: 256; fully associative here, see
    /// `tables::ValueSignatureBuffer` for why).
    pub vsb_entries: u32,
    /// Verify-cache entries, fully associative, LRU (Table II: 8).
    pub verify_cache_entries: u32,
    /// Pending-retry queue entries (§VI-B: 16).
    pub retry_queue_entries: u32,
    /// Cycles the rename and reuse stages add between issue and operand read (Figure 5
    /// adds both in front of the register read stage: 2).
    pub front_stages: u32,
    /// Cycles the register-allocation stage (hash, VSB lookup) adds to every write
    /// (Figure 5: 1).
    pub allocation_stages: u32,
}

impl Default for WirConfig {
    fn default() -> Self {
        WirConfig {
            variant: WirVariant::RLPV,
            reuse_buffer_entries: 256,
            vsb_entries: 256,
            verify_cache_entries: 8,
            retry_queue_entries: 16,
            front_stages: 2,
            allocation_stages: 1,
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

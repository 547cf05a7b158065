//! `[sampling]`: sampled simulation ([`crate::sampling`]): which parts of a program are
//! simulated in detail and which are executed functionally and estimated.

use super::*;
use serde::{Deserialize, Serialize};

/// `[sampling]`. Off by default: every CTA of every launch is simulated in detail.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SamplingConfig {
    /// Sample: simulate a subset of each launch, and one representative of repeated
    /// launches, in detail; execute the rest functionally and estimate its cycles.
    pub enabled: bool,
    /// Strata a long launch's CTAs (in launch order) are cut into; one sample of
    /// `waves` waves is simulated in detail in each, the others are executed
    /// functionally and priced at their stratum's rate. A launch that would leave fewer
    /// than half of its CTAs to skip is simulated in full.
    pub strata: u32,
    /// CTA waves (SMs x CTAs per SM) in each sample; at least 2: the first warms up
    /// (it replaces the previous sample's CTAs on the SMs), the others measure.
    pub waves: u32,
    /// Waves of skipped CTAs just before each sample whose global accesses warm the L1
    /// data caches and the L2 (functionally: tags installed, no time, no counts).
    pub warm_waves: u32,
    /// Launches of one kernel signature (name, grid, block, dynamic shared memory)
    /// simulated in detail before later launches of the same signature and basic-block
    /// vector are estimated from them (the first of them runs on cold caches). Their
    /// spread gives the prediction interval: 3 give it two degrees of freedom (one, from
    /// 2 launches that happen to agree, proved too few to see launch-to-launch
    /// variation).
    pub launches: u32,
    /// Of the launches that would be estimated from a cluster, every `recheck`-th is
    /// simulated in detail instead and joins the cluster, so that the prediction
    /// interval (from the members' spread) sees how launches vary along the run; 0:
    /// never.
    pub recheck: u32,
    /// Largest distance between basic-block vectors (per-instruction execution counts,
    /// each normalised to sum 1; Manhattan distance, 0 to 2) at which a launch counts as
    /// a repeat of a detailed one.
    pub bbv_distance: f64,
}

impl Default for SamplingConfig {
    fn default() -> Self {
        SamplingConfig {
            enabled: false,
            strata: 8,
            waves: 2,
            warm_waves: 2,
            launches: 3,
            recheck: 4,
            bbv_distance: 0.005,
        }
    }
}

impl SamplingConfig {
    pub(super) fn is_default(&self) -> bool {
        *self == Self::default()
    }

    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        if !(2..=10_000).contains(&self.strata) {
            return Err(invalid(
                "sampling.strata",
                format_args!("{} strata: between 2 and 10000", self.strata),
            ));
        }
        if !(2..=1_000_000).contains(&self.waves) {
            return Err(invalid(
                "sampling.waves",
                format_args!(
                    "{} waves: at least 2 are needed (warm-up, measurement), at most 1000000",
                    self.waves
                ),
            ));
        }
        if self.warm_waves > 1_000_000 {
            return Err(invalid(
                "sampling.warm_waves",
                format_args!("{} waves: at most 1000000", self.warm_waves),
            ));
        }
        if !(1..=1_000_000).contains(&self.launches) {
            return Err(invalid(
                "sampling.launches",
                format_args!("{} launches: between 1 and 1000000", self.launches),
            ));
        }
        if self.recheck > 1_000_000 {
            return Err(invalid(
                "sampling.recheck",
                format_args!("{}: at most 1000000 (0: never)", self.recheck),
            ));
        }
        if !(0.0..=2.0).contains(&self.bbv_distance) {
            return Err(invalid(
                "sampling.bbv_distance",
                format_args!(
                    "{}: a Manhattan distance between normalised vectors lies in 0..=2",
                    self.bbv_distance
                ),
            ));
        }
        Ok(())
    }
}

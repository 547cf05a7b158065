//! Sampled simulation (`[sampling]`, `regsim run --sample`): parts of a long launch's
//! CTAs are simulated in detail and the others executed functionally, with their cycles
//! estimated; repeated launches of one kernel are clustered and later members are
//! executed functionally and estimated from a detailed one. In the spirit of TBPoint
//! (thread-block sampling with warm-up, and launches grouped by what they execute) and
//! of SMARTS (systematic samples with functional warming), not their algorithms.
//!
//! - **Within a launch** ([`CtaPlan`]): with `W` = SMs x CTAs per SM, a launch's CTAs
//!   (in launch order, the order the GPU takes them in) are cut into `strata` strata,
//!   and `waves x W` consecutive CTAs of each are simulated in detail: the first sample
//!   at the launch's start, the last at its end, the others spread evenly. Detailed
//!   samples follow each other without draining the GPU: when a sample's last CTA is
//!   placed, the next free slot first executes the CTAs up to the next sample
//!   functionally (values and instruction counts exact), the last `warm_waves x W` of
//!   them recording the global sectors they touch, which are installed in the L2 and
//!   the L1Ds ([`crate::memory::MemorySystem::warm`]); then the next sample's CTAs are
//!   placed. A sample's first wave replaces the previous sample's CTAs on the SMs; its
//!   rate (cycles per warp instruction issued) is measured from then to the next
//!   sample's first placement (whole waves of placements, so lockstep waves are
//!   measured whole). Estimate: the detailed run's cycles plus every stratum's skipped
//!   warp instructions at its own rate ([`extrapolate`]). Bound at 95% confidence:
//!   Student's `t(strata - 1)` times the standard error, each stratum's rate variance
//!   estimated from its neighbours' (successive differences, as for systematic
//!   samples).
//! - **Across launches**: a launch's signature is its kernel name, grid, block and
//!   dynamic shared memory, and its basic-block vector (per-instruction execution counts,
//!   normalised; recorded by an emulator step observer). The first `launches` launches
//!   of a signature are simulated (and sampled) in detail and form a cluster; a later
//!   launch of that signature runs functionally on trial and, if its vector and warp
//!   instruction count lie within `bbv_distance` of the cluster, is estimated at the
//!   members' mean cycles per warp instruction (without the first, cold launch once
//!   two others follow it). Its bound is the 95% prediction
//!   interval for one more launch from those members' cycles per instruction
//!   (`t(n - 1) x s x sqrt(1 + 1/n)`, [`predict`]) plus the members' largest own
//!   (sampling) bound and the distances. Every `recheck`-th launch that would be
//!   estimated is simulated in detail instead and joins the cluster, so that the
//!   interval sees the variation along the run. Otherwise (no fit) the trial is undone
//!   and the launch simulated in detail, joining or starting a cluster.
//!
//! The estimate stands in a kernel's `cycles` (and `ipc`); warp and thread instructions
//! are exact; energy events are scaled by warp instructions; the other counters
//! (memory, register file, stalls, occupancy) are those of the detailed part. What was
//! simulated in detail (the CTA ranges), the estimate and the bound are in `sampling` of
//! each kernel and of the total. Estimated parts do not advance the simulated clock.

use std::sync::{Arc, Mutex};

use std::io::Write as _;

use emu::memory::snapshot::Snapshot;
use emu::{Emulator, RunStats, StepObserver, WarpStep};
use serde::Serialize;

use crate::config::SamplingConfig;
use crate::rf::EnergyEvent;
use crate::stats::KernelStats;

/// The confidence level of every bound.
pub const CONFIDENCE: f64 = 0.95;

/// Two-sided 95% quantiles of Student's t for 1 to 30 degrees of freedom.
const T95: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// Student's t quantile for a two-sided 95% interval with `dof` degrees of freedom.
pub fn t95(dof: usize) -> f64 {
    match dof {
        0 => f64::INFINITY,
        1..=30 => T95[dof - 1],
        _ => 1.96,
    }
}

/// A run of consecutive CTAs simulated in detail, `start..end`. Its first wave(s)
/// (`start..measure_from`) warm up: they replace the previous sample's CTAs on the SMs.
/// The stratum's rate is measured from the placement of CTA `measure_from` to that of
/// CTA `measure_until` (whole waves later: the next sample's first CTA, or for the
/// last sample the start of its final, draining wave).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct CtaSample {
    pub start: u64,
    pub measure_from: u64,
    pub measure_until: u64,
    pub end: u64,
}

/// Which CTAs of a launch run in detail: one sample in each stratum (a contiguous run of
/// CTAs in launch order), the first at the launch's start (it fills the GPU: one more
/// warm-up wave), the last at its end (it drains it: one more wave after the measured
/// ones), the others shifted evenly in between, so that the detailed run never drains
/// before the launch's end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CtaPlan {
    pub samples: Vec<CtaSample>,
    /// Stratum `h` is CTAs `bounds[h]..bounds[h + 1]`; sample `h` lies inside it.
    pub bounds: Vec<u64>,
    pub total: u64,
}

impl CtaPlan {
    /// Every CTA in detail.
    pub fn full(total: u64) -> Self {
        CtaPlan {
            samples: vec![CtaSample {
                start: 0,
                measure_from: 0,
                measure_until: total,
                end: total,
            }],
            bounds: vec![0, total],
            total,
        }
    }

    /// `strata` samples of `waves` waves of `wave` CTAs (one warm-up wave, the others
    /// measured; the first and the last sample one wave longer) over a launch of
    /// `total` CTAs; the whole launch when that would leave fewer than half of them to
    /// skip.
    pub fn stratified(total: u64, wave: u64, strata: u64, waves: u64) -> Self {
        let wave = wave.max(1);
        let measured = wave * (waves.max(2) - 1);
        let length = wave + measured;
        let strata = strata.max(2);
        if total < 2 * (strata * length + 2 * wave) {
            return CtaPlan::full(total);
        }
        let bounds: Vec<u64> = (0..=strata).map(|h| total * h / strata).collect();
        let last = strata - 1;
        let mut samples: Vec<CtaSample> = (0..strata)
            .map(|h| {
                let (lo, hi) = (bounds[h as usize], bounds[h as usize + 1]);
                let (start, warm, len) = if h == 0 {
                    (0, 2 * wave, length + wave)
                } else if h == last {
                    (hi - length - wave, wave, length + wave)
                } else {
                    (lo + (hi - lo - length) * h / last, wave, length)
                };
                CtaSample {
                    start,
                    measure_from: start + warm,
                    measure_until: start + warm + measured,
                    end: start + len,
                }
            })
            .collect();
        for h in 0..last as usize {
            samples[h].measure_until = samples[h + 1].start;
        }
        CtaPlan {
            samples,
            bounds,
            total,
        }
    }

    /// Whether every CTA runs in detail.
    pub fn is_full(&self) -> bool {
        self.samples.len() == 1 && self.samples[0].start == 0 && self.samples[0].end == self.total
    }

    /// The CTA after the last one simulated in detail.
    pub fn total_end(&self) -> u64 {
        self.samples.last().map_or(0, |s| s.end)
    }

    /// CTAs simulated in detail.
    pub fn detailed_ctas(&self) -> u64 {
        self.samples.iter().map(|s| s.end - s.start).sum()
    }

    /// The CTAs run in detail, as `[start, end)` pairs.
    pub fn ranges(&self) -> Vec<[u64; 2]> {
        self.samples.iter().map(|s| [s.start, s.end]).collect()
    }
}

/// One stratum as measured: the warp instructions of its skipped CTAs, and the cycles and
/// warp instructions of its sample's measured part.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stratum {
    pub skipped_instructions: f64,
    pub span_cycles: f64,
    pub span_instructions: f64,
}

impl Stratum {
    /// Cycles per warp instruction (0 if nothing was measured).
    fn rate(&self) -> f64 {
        if self.span_instructions > 0.0 {
            self.span_cycles / self.span_instructions
        } else {
            0.0
        }
    }
}

/// An extrapolated launch: its cycles and the half-width of the 95% interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Extrapolation {
    pub cycles: f64,
    pub bound: f64,
}

/// The stratified estimate of a launch whose samples ran in `detailed_cycles` (one
/// continuous detailed run: the GPU never drained between samples): every stratum's
/// skipped warp instructions priced at its own sample's cycles per instruction. With one
/// sample per stratum the variance within a stratum is estimated from the differences
/// between neighbouring strata's rates (the successive-difference estimator of
/// systematic sampling; a trend along the grid shows up as variance, so the bound errs
/// wide), and the strata are independent: the bound is `t(S - 1)` standard errors.
pub fn extrapolate(detailed_cycles: u64, strata: &[Stratum]) -> Extrapolation {
    let rates: Vec<f64> = strata.iter().map(Stratum::rate).collect();
    let detailed = detailed_cycles as f64;
    let cycles = detailed
        + strata
            .iter()
            .zip(&rates)
            .map(|(s, r)| s.skipped_instructions * r)
            .sum::<f64>();
    if strata.len() < 2 {
        // No second stratum to compare with: claim nothing about the skipped part.
        return Extrapolation {
            cycles,
            bound: cycles - detailed,
        };
    }
    let variance: f64 = (0..strata.len())
        .map(|h| {
            let neighbours: Vec<f64> = [h.checked_sub(1), Some(h + 1)]
                .into_iter()
                .flatten()
                .filter_map(|j| rates.get(j))
                .map(|r| (rates[h] - r).powi(2) / 2.0)
                .collect();
            let v = neighbours.iter().sum::<f64>() / neighbours.len() as f64;
            strata[h].skipped_instructions.powi(2) * v
        })
        .sum();
    Extrapolation {
        cycles,
        bound: t95(strata.len() - 1) * variance.sqrt(),
    }
}

/// A detailed CTA's placement on an SM: when, and how many warp instructions the
/// launch had issued by then.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    pub cta: u64,
    /// Cycles since the launch's start.
    pub cycle: u64,
    pub issued: u64,
}

/// The strata of `plan` measured: `placed` holds every detailed CTA's placement, in
/// order; `cta_instructions` the warp instructions of every CTA of the launch. A
/// sample's measured span runs from the placement of CTA `measure_from` to that of CTA
/// `measure_until` (whole waves of placements, so that CTAs moving in lockstep waves
/// are measured over whole waves too); its rate is the cycles per warp instruction
/// issued meanwhile.
pub fn measure_strata(
    plan: &CtaPlan,
    placed: &[Placement],
    cta_instructions: &[u64],
) -> Vec<Stratum> {
    let at = |cta: u64| {
        placed
            .binary_search_by_key(&cta, |p| p.cta)
            .ok()
            .map(|i| placed[i])
    };
    let instructions = |r: std::ops::Range<u64>| -> f64 {
        r.filter_map(|c| cta_instructions.get(c as usize))
            .map(|&i| i as f64)
            .sum()
    };
    plan.samples
        .iter()
        .enumerate()
        .map(|(h, s)| {
            let (lo, hi) = (plan.bounds[h], plan.bounds[h + 1]);
            let (span_cycles, span_instructions) = match (at(s.measure_from), at(s.measure_until)) {
                (Some(a), Some(b)) => (
                    b.cycle.saturating_sub(a.cycle) as f64,
                    b.issued.saturating_sub(a.issued) as f64,
                ),
                _ => (0.0, 0.0),
            };
            Stratum {
                skipped_instructions: instructions(lo..s.start) + instructions(s.end..hi),
                span_cycles,
                span_instructions,
            }
        })
        .collect()
}

/// A launch's basic-block vector: warp instructions executed per (function,
/// instruction).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Bbv {
    counts: Vec<Vec<u64>>,
    total: u64,
}

impl Bbv {
    fn add(&mut self, func: usize, inst: usize) {
        if self.counts.len() <= func {
            self.counts.resize(func + 1, Vec::new());
        }
        let f = &mut self.counts[func];
        if f.len() <= inst {
            f.resize(inst + 1, 0);
        }
        f[inst] += 1;
        self.total += 1;
    }

    /// Warp instructions counted.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Manhattan distance between the two vectors normalised to sum 1 (0: the same
    /// mix; 2: disjoint).
    pub fn distance(&self, other: &Bbv) -> f64 {
        if self.total == 0 || other.total == 0 {
            return if self.total == other.total { 0.0 } else { 2.0 };
        }
        let (a, b) = (self.total as f64, other.total as f64);
        let funcs = self.counts.len().max(other.counts.len());
        let mut d = 0.0;
        for f in 0..funcs {
            let x = self.counts.get(f).map_or(&[][..], Vec::as_slice);
            let y = other.counts.get(f).map_or(&[][..], Vec::as_slice);
            for i in 0..x.len().max(y.len()) {
                let p = x.get(i).copied().unwrap_or(0) as f64 / a;
                let q = y.get(i).copied().unwrap_or(0) as f64 / b;
                d += (p - q).abs();
            }
        }
        d
    }
}

/// What a launch's recording collects besides its vector: warp instructions per CTA
/// (linear index) and, while warming is on, the global sectors its CTAs touch.
#[derive(Default)]
struct Recorded {
    bbv: Bbv,
    /// The grid, to number CTAs; `None`: no per-CTA counts.
    grid: Option<[u32; 3]>,
    cta_instructions: Vec<u64>,
    warming: bool,
    /// `(cta, sector address, store)` of global accesses while warming, in order.
    touched: Vec<Touch>,
}

/// A global access recorded for warming the caches: the CTA, the address of the sector
/// (emulator address, aligned down to [`WARM_SECTOR`] bytes) and whether it was a store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Touch {
    pub cta: u64,
    pub sector: u64,
    pub store: bool,
}

/// The granularity of recorded accesses: the smallest sector of any config's caches.
pub const WARM_SECTOR: u64 = 32;

/// What the recording observer shares with [`BbvRecording`]: what it recorded and the
/// observer it stands in front of.
type Shared = Arc<Mutex<(Recorded, Option<Box<dyn StepObserver>>)>>;

/// The step observer that records a launch's [`Bbv`] (and per-CTA counts and touched
/// sectors), passing every step on to the observer it replaced.
struct BbvObserver(Shared);

impl StepObserver for BbvObserver {
    /// The recording reads no destinations: only the observer it stands in front of may.
    fn reads_destinations(&self) -> bool {
        self.0.lock().map_or(true, |shared| {
            shared.1.as_ref().is_some_and(|o| o.reads_destinations())
        })
    }

    fn observe(&mut self, cta: [u32; 3], warp: u32, step: &WarpStep) {
        if let Ok(mut shared) = self.0.lock() {
            let (rec, inner) = &mut *shared;
            rec.bbv.add(step.func.index(), step.inst.index());
            if let Some([gx, gy, _]) = rec.grid {
                let linear = u64::from(cta[0])
                    + u64::from(gx) * (u64::from(cta[1]) + u64::from(gy) * u64::from(cta[2]));
                if let Some(n) = rec.cta_instructions.get_mut(linear as usize) {
                    *n += 1;
                }
                if rec.warming {
                    if let Some(mem) = &step.mem {
                        let store = mem.kind != emu::AccessKind::Load;
                        let mut last = u64::MAX;
                        for lane in 0..32 {
                            if step.exec_mask & (1 << lane) == 0
                                || step.lane_spaces[lane] != emu::MemSpace::Global
                            {
                                continue;
                            }
                            let a = step.addrs[lane];
                            let end = a + u64::from(mem.bytes.max(1)) - 1;
                            let mut sector = a - a % WARM_SECTOR;
                            while sector <= end {
                                if sector != last {
                                    rec.touched.push(Touch {
                                        cta: linear,
                                        sector,
                                        store,
                                    });
                                    last = sector;
                                }
                                sector += WARM_SECTOR;
                            }
                        }
                    }
                }
            }
            if let Some(o) = inner {
                o.observe(cta, warp, step);
            }
        }
    }
}

/// Records the basic-block vector of everything `emu` executes until
/// [`BbvRecording::finish`], which gives the emulator its own observer back.
pub struct BbvRecording(Shared);

impl BbvRecording {
    pub fn start(emu: &mut Emulator) -> Self {
        Self::start_counting(emu, None)
    }

    /// Also counts warp instructions per CTA of a launch of `grid`, and records touched
    /// sectors while [`BbvRecording::set_warming`] is on.
    pub fn start_counting(emu: &mut Emulator, grid: Option<[u32; 3]>) -> Self {
        let ctas = grid.map_or(0, |g| g.iter().map(|&d| d as usize).product());
        let rec = Recorded {
            grid,
            cta_instructions: vec![0; ctas],
            ..Recorded::default()
        };
        let shared: Shared = Arc::new(Mutex::new((rec, emu.step_observer.take())));
        emu.step_observer = Some(Box::new(BbvObserver(Arc::clone(&shared))));
        BbvRecording(shared)
    }

    /// Records (`true`) or stops recording the global sectors executed CTAs touch.
    pub fn set_warming(&self, on: bool) {
        if let Ok(mut shared) = self.0.lock() {
            shared.0.warming = on;
        }
    }

    /// The sectors recorded since the last call.
    pub fn take_touched(&self) -> Vec<Touch> {
        self.0
            .lock()
            .map(|mut s| std::mem::take(&mut s.0.touched))
            .unwrap_or_default()
    }

    /// The recorded vector and warp instructions per CTA; `emu` gets its previous
    /// observer back.
    pub fn finish_counts(self, emu: &mut Emulator) -> (Bbv, Vec<u64>) {
        drop(emu.step_observer.take());
        match self.0.lock() {
            Ok(mut shared) => {
                emu.step_observer = shared.1.take();
                let rec = std::mem::take(&mut shared.0);
                (rec.bbv, rec.cta_instructions)
            }
            Err(_) => (Bbv::default(), Vec::new()),
        }
    }

    /// The recorded vector; `emu` gets its previous observer back.
    pub fn finish(self, emu: &mut Emulator) -> Bbv {
        self.finish_counts(emu).0
    }
}

/// What sampling did with one launch, in its statistics (`sampling`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KernelSample {
    /// `full` (every CTA in detail), `ctas` (the CTAs of `detailed` in detail, the
    /// rest functionally) or `cluster` (functionally, estimated from launch
    /// `representative`).
    pub method: &'static str,
    /// CTAs simulated in detail.
    pub detailed_ctas: u64,
    /// Which: `[start, end)` ranges of linear CTA indices (one per stratum; empty for
    /// `cluster`); the rest ran functionally.
    pub detailed: Vec<[u64; 2]>,
    /// The launch's CTAs.
    pub total_ctas: u64,
    /// Cycles simulated in detail.
    pub detailed_cycles: u64,
    /// Warp instructions simulated in detail.
    pub detailed_warp_instructions: u64,
    /// The estimate of the launch's cycles (also its `cycles`).
    pub estimated_cycles: u64,
    /// Half-width of the interval around the estimate, in cycles.
    pub bound_cycles: u64,
    /// `bound_cycles / estimated_cycles`.
    pub relative_bound: f64,
    /// The interval's confidence level.
    pub confidence: f64,
    /// The launch's cluster (numbered in order of creation).
    pub cluster: usize,
    /// For `cluster`: the index (in the run's kernel list) of the detailed launch it was
    /// estimated from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub representative: Option<usize>,
    /// For `cluster`: the basic-block vector distance to the representative.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bbv_distance: Option<f64>,
}

/// Sampling over the whole run, in the total's statistics.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TotalSample {
    /// Launches simulated entirely in detail.
    pub full_launches: u64,
    /// Launches simulated in part (their first CTA waves).
    pub sampled_launches: u64,
    /// Launches executed functionally and estimated from their cluster.
    pub estimated_launches: u64,
    /// Cycles simulated in detail.
    pub detailed_cycles: u64,
    /// Estimated cycles (also `cycles`).
    pub estimated_cycles: u64,
    /// Half-width of the interval around the estimate: the launches' bounds summed (they
    /// may err the same way).
    pub bound_cycles: u64,
    /// `bound_cycles / estimated_cycles`.
    pub relative_bound: f64,
    /// The intervals' confidence level.
    pub confidence: f64,
}

impl TotalSample {
    /// The summary of `kernels`, if any was sampled.
    pub fn of(kernels: &[KernelStats]) -> Option<TotalSample> {
        let mut t = TotalSample {
            confidence: CONFIDENCE,
            ..TotalSample::default()
        };
        let mut any = false;
        for s in kernels.iter().filter_map(|k| k.sampling.as_ref()) {
            any = true;
            match s.method {
                "full" => t.full_launches += 1,
                "ctas" => t.sampled_launches += 1,
                _ => t.estimated_launches += 1,
            }
            t.detailed_cycles += s.detailed_cycles;
            t.estimated_cycles += s.estimated_cycles;
            t.bound_cycles += s.bound_cycles;
        }
        t.relative_bound = ratio(t.bound_cycles, t.estimated_cycles);
        any.then_some(t)
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// A launch signature's identity before its vector: name, grid, block, dynamic shared
/// memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchKey {
    pub name: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_shared: u32,
}

/// A detailed launch of a cluster.
#[derive(Clone, Debug)]
struct Member {
    /// Index in the run's kernel list.
    kernel: usize,
    stats: KernelStats,
    relative_bound: f64,
}

struct Cluster {
    key: LaunchKey,
    bbv: Bbv,
    members: Vec<Member>,
}

/// What to do with a launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plan {
    /// Simulate it (the first waves in detail).
    Detailed,
    /// Execute it functionally on trial: estimated from its cluster if it fits one, else
    /// undone and simulated.
    Estimated,
}

/// The clusters of a run's launches and the policy.
pub struct Sampler {
    cfg: SamplingConfig,
    clusters: Vec<Cluster>,
    /// Per signature: launches estimated since its last detailed one (for `recheck`).
    repeats: Vec<(LaunchKey, u32)>,
    /// Whether a launch has been estimated: estimated launches leave the caches as they
    /// were, so a detailed launch after one starts from other cache contents than in a
    /// full run.
    estimated_any: bool,
}

impl Sampler {
    pub fn new(cfg: SamplingConfig) -> Self {
        Sampler {
            cfg,
            clusters: Vec::new(),
            repeats: Vec::new(),
            estimated_any: false,
        }
    }

    fn repeats_of(&mut self, key: &LaunchKey) -> &mut u32 {
        let i = match self.repeats.iter().position(|(k, _)| k == key) {
            Some(i) => i,
            None => {
                self.repeats.push((key.clone(), 0));
                self.repeats.len() - 1
            }
        };
        &mut self.repeats[i].1
    }

    /// The CTAs of a launch of `total` CTAs to simulate in detail, with `wave` CTAs
    /// resident at once.
    pub fn plan_ctas(&self, total: u64, wave: u64) -> CtaPlan {
        CtaPlan::stratified(
            total,
            wave,
            u64::from(self.cfg.strata),
            u64::from(self.cfg.waves),
        )
    }

    /// CTAs recorded to warm the caches before a sample: `warm_waves` waves.
    pub fn warm_ctas(&self, wave: u64) -> u64 {
        wave.saturating_mul(u64::from(self.cfg.warm_waves))
    }

    /// Whether a launch of `key` is simulated, or tried functionally and estimated if it
    /// fits a cluster.
    /// Every `recheck`-th repeat of a signature is simulated in detail instead: it joins
    /// its cluster, so the members' spread measures launch-to-launch variation along the
    /// whole run, not just at its start.
    pub fn plan(&self, key: &LaunchKey) -> Plan {
        let recheck = self.cfg.recheck;
        let repeats = self
            .repeats
            .iter()
            .find(|(k, _)| k == key)
            .map_or(0, |r| r.1);
        if recheck > 0 && repeats + 1 >= recheck {
            return Plan::Detailed;
        }
        if self
            .clusters
            .iter()
            .any(|c| self.is_complete(c) && &c.key == key)
        {
            Plan::Estimated
        } else {
            Plan::Detailed
        }
    }

    /// Files a detailed launch (`kernel`: its index in the run's kernel list) and returns
    /// its cluster. A launch after estimated ones found other cache contents than the
    /// full run's launch did: joining a cluster, its bound widens by the cluster's
    /// prediction interval (launch-to-launch variation covers a different start).
    pub fn add_detailed(
        &mut self,
        key: LaunchKey,
        bbv: Bbv,
        kernel: usize,
        stats: &mut KernelStats,
        relative_bound: f64,
    ) -> usize {
        *self.repeats_of(&key) = 0;
        let limit = self.cfg.bbv_distance;
        if self.estimated_any {
            if let Some((i, _)) = self.nearest(&key, &bbv, true).filter(|&(_, d)| d <= limit) {
                let p = predict(&warm_cpis(&self.clusters[i].members));
                let cycles = stats.cycles;
                if let Some(s) = &mut stats.sampling {
                    s.bound_cycles += (cycles as f64 * p.relative_bound).ceil() as u64;
                    s.relative_bound = ratio(s.bound_cycles, cycles);
                }
            }
        }
        let member = Member {
            kernel,
            stats: stats.clone(),
            relative_bound,
        };
        if let Some((i, _)) = self.nearest(&key, &bbv, false).filter(|&(_, d)| d <= limit) {
            self.clusters[i].members.push(member);
            self.clusters[i].bbv = bbv;
            return i;
        }
        self.clusters.push(Cluster {
            key,
            bbv,
            members: vec![member],
        });
        self.clusters.len() - 1
    }

    /// A cluster estimates launches once it has `launches` detailed members, whose
    /// spread measures how much launches of one vector vary (caches cold or warm).
    fn is_complete(&self, c: &Cluster) -> bool {
        c.members.len() >= self.cfg.launches as usize
    }

    /// The cluster of `key` nearest to `bbv`, with its distance; only complete ones if
    /// `complete`.
    fn nearest(&self, key: &LaunchKey, bbv: &Bbv, complete: bool) -> Option<(usize, f64)> {
        self.clusters
            .iter()
            .enumerate()
            .filter(|(_, c)| &c.key == key && (!complete || self.is_complete(c)))
            .map(|(i, c)| (i, c.bbv.distance(bbv)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
    }

    /// The statistics of a launch of `key` executed functionally (`executed`, vector
    /// `bbv`), estimated from its nearest cluster; `None` if its signature has none
    /// within `bbv_distance`, in vector or in warp instructions.
    pub fn estimate(
        &mut self,
        key: &LaunchKey,
        bbv: &Bbv,
        executed: RunStats,
        start_cycle: u64,
        total_ctas: u64,
    ) -> Option<KernelStats> {
        let (i, distance) = self.nearest(key, bbv, true)?;
        let cluster = &self.clusters[i];
        let rep = cluster.members.last()?;
        let scale = executed.warp_instructions as f64 / rep.stats.warp_instructions.max(1) as f64;
        let count_difference = (scale - 1.0).abs();
        let limit = self.cfg.bbv_distance;
        if distance > limit || count_difference > limit {
            return None;
        }
        let p = predict(&warm_cpis(&cluster.members));
        let members_bound = cluster
            .members
            .iter()
            .map(|m| m.relative_bound)
            .fold(0.0, f64::max);
        let cycles = (p.cpi * executed.warp_instructions as f64).round().max(1.0) as u64;
        let relative = p.relative_bound + members_bound + distance + count_difference;
        let bound = (cycles as f64 * relative).ceil() as u64;
        let mut stats = rep.stats.clone();
        stats.start_cycle = start_cycle;
        stats.cycles = cycles;
        stats.warp_instructions = executed.warp_instructions;
        stats.thread_instructions = executed.thread_instructions;
        stats.ipc = crate::stats::ipc(executed.warp_instructions, cycles);
        scale_energy_events(&mut stats.energy_events, scale);
        stats.sampling = Some(KernelSample {
            method: "cluster",
            detailed_ctas: 0,
            detailed: Vec::new(),
            total_ctas,
            detailed_cycles: 0,
            detailed_warp_instructions: 0,
            estimated_cycles: cycles,
            bound_cycles: bound,
            relative_bound: ratio(bound, cycles),
            confidence: CONFIDENCE,
            cluster: i,
            representative: Some(rep.kernel),
            bbv_distance: Some(distance),
        });
        *self.repeats_of(key) += 1;
        self.estimated_any = true;
        Some(stats)
    }
}

/// The cycles per warp instruction of a cluster's members that predict its repeats: a
/// signature's first launch runs on caches that its repeats find warm, so with at least
/// 2 members after it, it is left out.
fn warm_cpis(members: &[Member]) -> Vec<f64> {
    let warm = match members.len() {
        0..=2 => members,
        _ => &members[1..],
    };
    warm.iter()
        .map(|m| m.stats.cycles as f64 / m.stats.warp_instructions.max(1) as f64)
        .collect()
}

/// The prediction for a further launch of a cluster from its detailed members' cycles
/// per warp instruction: their mean, and the half-width of the 95% prediction interval
/// for one more launch, `t(n - 1) x s x sqrt(1 + 1/n)`, relative to the mean (a
/// member's own sampling bound and the vector distance are added by the caller).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Prediction {
    pub cpi: f64,
    pub relative_bound: f64,
}

pub fn predict(cpis: &[f64]) -> Prediction {
    let n = cpis.len();
    if n == 0 {
        return Prediction {
            cpi: 0.0,
            relative_bound: f64::INFINITY,
        };
    }
    let mean = cpis.iter().sum::<f64>() / n as f64;
    if n == 1 {
        // One launch says nothing about how launches vary.
        return Prediction {
            cpi: mean,
            relative_bound: 1.0,
        };
    }
    let variance = cpis.iter().map(|c| (c - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let half = t95(n - 1) * variance.sqrt() * (1.0 + 1.0 / n as f64).sqrt();
    Prediction {
        cpi: mean,
        relative_bound: half / mean.max(f64::MIN_POSITIVE),
    }
}

/// A detailed launch's sampling record, for [`finish_detailed`].
pub struct DetailedRun {
    pub plan: CtaPlan,
    /// Every detailed CTA's placement, in order.
    pub placed: Vec<Placement>,
    /// Warp instructions of every CTA of the launch.
    pub cta_instructions: Vec<u64>,
    /// The CTAs skipped, executed functionally.
    pub rest: RunStats,
}

/// Turns the statistics of a launch's detailed part into the launch's estimate (cycles,
/// instructions, energy events, `sampling`); returns the bound relative to the
/// estimate.
pub fn finish_detailed(stats: &mut KernelStats, run: &DetailedRun) -> f64 {
    let detailed_cycles = stats.cycles;
    let detailed_warp_instructions = stats.warp_instructions;
    let sampled = !run.plan.is_full();
    let (cycles, bound, method) = if sampled {
        let strata = measure_strata(&run.plan, &run.placed, &run.cta_instructions);
        let e = extrapolate(detailed_cycles, &strata);
        (
            e.cycles.round().max(1.0) as u64,
            e.bound.ceil() as u64,
            "ctas",
        )
    } else {
        (detailed_cycles, 0, "full")
    };
    if sampled {
        let warp = detailed_warp_instructions + run.rest.warp_instructions;
        scale_energy_events(
            &mut stats.energy_events,
            warp as f64 / detailed_warp_instructions.max(1) as f64,
        );
        stats.cycles = cycles;
        stats.warp_instructions = warp;
        stats.thread_instructions += run.rest.thread_instructions;
        stats.ipc = crate::stats::ipc(warp, cycles);
    }
    stats.sampling = Some(KernelSample {
        method,
        detailed_ctas: run.plan.detailed_ctas(),
        detailed: run.plan.ranges(),
        total_ctas: run.plan.total,
        detailed_cycles,
        detailed_warp_instructions,
        estimated_cycles: cycles,
        bound_cycles: bound,
        relative_bound: ratio(bound, cycles),
        confidence: CONFIDENCE,
        cluster: 0,
        representative: None,
        bbv_distance: None,
    });
    ratio(bound, cycles)
}

/// Executes the skipped CTAs `ctas` of `launch` functionally; with `warm_from`, records
/// the global sectors the CTAs from `warm_from` on touch and returns them, for the
/// caches to be warmed with before the next detailed CTAs. `bound` bounds the whole of
/// it (issue 26: a CTA that never ends stops there, [`crate::RunLimits::functional_bound`]);
/// `Ok(Err(stop))` when it stopped the run.
pub fn skip_ctas(
    launch: &mut emu::Launch<'_>,
    recording: Option<&BbvRecording>,
    ctas: std::ops::Range<u64>,
    warm_from: u64,
    bound: &emu::RunBound,
) -> Result<Result<(RunStats, Vec<Touch>), emu::FunctionalStop>, emu::ExecError> {
    let warm_from = warm_from.clamp(ctas.start, ctas.end);
    let cold = match launch.run_ctas_bounded(ctas.start..warm_from, bound)? {
        Ok(cold) => cold,
        Err(stop) => return Ok(Err(stop)),
    };
    // The warm part gets what the cold one left of the instruction budget.
    let rest_bound = emu::RunBound {
        max_warp_instructions: bound
            .max_warp_instructions
            .map(|m| m.saturating_sub(cold.warp_instructions)),
        ..bound.clone()
    };
    if let Some(r) = recording {
        r.set_warming(true);
    }
    let warm = launch.run_ctas_bounded(warm_from..ctas.end, &rest_bound);
    let touched = recording.map(|r| {
        r.set_warming(false);
        r.take_touched()
    });
    let warm = match warm? {
        Ok(warm) => warm,
        Err(mut stop) => {
            stop.stats.warp_instructions += cold.warp_instructions;
            stop.stats.thread_instructions += cold.thread_instructions;
            return Ok(Err(stop));
        }
    };
    Ok(Ok((
        RunStats {
            warp_instructions: cold.warp_instructions + warm.warp_instructions,
            thread_instructions: cold.thread_instructions + warm.thread_instructions,
        },
        touched.unwrap_or_default(),
    )))
}

/// Executes a whole launch functionally, recording its vector: what an estimated launch
/// runs. `bound` bounds it as [`skip_ctas`]'s bounds the skipped CTAs; `Ok(Err(stop))`
/// when it stopped the run.
pub fn run_launch(
    emu: &mut Emulator,
    kernel: emu::KernelRef,
    config: emu::LaunchConfig,
    params: &[u8],
    bound: &emu::RunBound,
) -> Result<(Result<RunStats, emu::FunctionalStop>, Bbv), emu::ExecError> {
    let recording = BbvRecording::start(emu);
    let executed = match emu.launch(kernel, config, params) {
        Ok(mut launch) => launch.run_ctas_bounded(0..config.num_ctas(), bound),
        Err(e) => Err(e),
    };
    let bbv = recording.finish(emu);
    Ok((executed?, bbv))
}

/// Device `printf` output held back during a trial run.
#[derive(Clone, Default)]
struct HeldOutput(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for HeldOutput {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if let Ok(mut held) = self.0.lock() {
            held.extend_from_slice(buf);
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Runs a launch of `key` functionally on trial and returns its estimated statistics if
/// it fits one of `sampler`'s clusters; otherwise (or if it faults, or `bound` stops the
/// trial) puts device memory back as it was, discards its `printf` output and returns
/// `None`: the launch is then simulated, and a launch the bound stopped meets the same
/// limit there (`bound` is at most what the timed run could issue before its limits,
/// [`crate::RunLimits::functional_bound`]).
#[allow(clippy::too_many_arguments)]
pub fn try_estimate(
    sampler: &mut Sampler,
    emu: &mut Emulator,
    kernel: emu::KernelRef,
    config: emu::LaunchConfig,
    params: &[u8],
    key: &LaunchKey,
    start_cycle: u64,
    bound: &emu::RunBound,
) -> Result<Option<KernelStats>, emu::ExecError> {
    let memory_error = |e| emu::ExecError::new(emu::ErrorKind::Memory(e), emu::Location::default());
    let snapshot = Snapshot::take(&emu.memory).map_err(memory_error)?;
    let held = HeldOutput::default();
    let printf = std::mem::replace(&mut emu.printf_sink, Box::new(held.clone()));
    let run = run_launch(emu, kernel, config, params, bound);
    emu.printf_sink = printf;
    let estimate = match &run {
        Ok((Ok(executed), bbv)) => {
            sampler.estimate(key, bbv, *executed, start_cycle, config.num_ctas())
        }
        Ok((Err(_), _)) | Err(_) => None,
    };
    match estimate {
        Some(stats) => {
            if let Ok(held) = held.0.lock() {
                // Device printf output is best effort, as in the emulator itself.
                let _ = emu.printf_sink.write_all(&held);
            }
            Ok(Some(stats))
        }
        None => {
            snapshot.restore(&mut emu.memory).map_err(memory_error)?;
            Ok(None)
        }
    }
}

/// Energy event counts scaled by `factor` (rounded).
pub fn scale_energy_events(events: &mut [EnergyEvent], factor: f64) {
    for e in events {
        e.count = (e.count as f64 * factor).round() as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_lie_one_per_stratum_first_at_the_start_last_at_the_end() {
        let p = CtaPlan::stratified(1000, 10, 4, 2);
        assert_eq!(p.bounds, vec![0, 250, 500, 750, 1000]);
        let got: Vec<[u64; 4]> = p
            .samples
            .iter()
            .map(|s| [s.start, s.measure_from, s.measure_until, s.end])
            .collect();
        // The first sample warms up for two waves (the fill, then one), the last drains
        // for one; the middle ones are shifted by a third of their strata's slack.
        assert_eq!(
            got,
            vec![
                [0, 20, 326, 30],
                [326, 336, 653, 346],
                [653, 663, 970, 673],
                [970, 980, 990, 1000],
            ]
        );
        assert_eq!(p.detailed_ctas(), 100);
        assert!(!p.is_full());
        // Fewer than half the CTAs left to skip: all in detail.
        assert!(CtaPlan::stratified(199, 10, 4, 2).is_full());
        assert!(!CtaPlan::stratified(200, 10, 4, 2).is_full());
    }

    /// A fluid model of a launch with a known answer: `slots` CTAs resident at once, CTA
    /// `i` runs for `cost(i)` cycles issuing `instructions(i)` warp instructions evenly;
    /// a free slot takes the next CTA of `ctas`. Returns the placements (with the
    /// instructions issued by then) and the cycle the last CTA ends.
    fn fluid(
        ctas: &[u64],
        slots: usize,
        cost: impl Fn(u64) -> f64,
        instructions: impl Fn(u64) -> u64,
    ) -> (Vec<Placement>, f64) {
        let mut free = vec![0.0f64; slots];
        let mut started: Vec<(f64, f64, f64)> = Vec::new();
        let mut placed = Vec::new();
        for &c in ctas {
            let (slot, &t) = free
                .iter()
                .enumerate()
                .min_by(|a, b| a.1.total_cmp(b.1))
                .expect("slots");
            let issued: f64 = started
                .iter()
                .map(|&(s, d, n)| n * ((t - s) / d).clamp(0.0, 1.0))
                .sum();
            placed.push(Placement {
                cta: c,
                cycle: t.round() as u64,
                issued: issued.round() as u64,
            });
            started.push((t, cost(c), instructions(c) as f64));
            free[slot] = t + cost(c);
        }
        (placed, free.iter().copied().fold(0.0, f64::max))
    }

    /// The sampled estimate of the fluid model against its full run.
    fn fluid_check(
        total: u64,
        wave: u64,
        cost: impl Fn(u64) -> f64 + Copy,
        instructions: impl Fn(u64) -> u64 + Copy,
    ) -> (f64, f64, f64) {
        let all: Vec<u64> = (0..total).collect();
        let (_, truth) = fluid(&all, wave as usize, cost, instructions);
        let plan = CtaPlan::stratified(total, wave, 8, 2);
        assert!(!plan.is_full());
        let detailed: Vec<u64> = plan.samples.iter().flat_map(|s| s.start..s.end).collect();
        let (placed, cycles) = fluid(&detailed, wave as usize, cost, instructions);
        let counts: Vec<u64> = all.iter().map(|&c| instructions(c)).collect();
        let strata = measure_strata(&plan, &placed, &counts);
        let e = extrapolate(cycles.round() as u64, &strata);
        (truth, e.cycles, e.bound)
    }

    #[test]
    fn uniform_ctas_in_lockstep_waves_are_estimated_exactly() {
        // 2000 CTAs of 1000 cycles, 20 at a time: 100 waves.
        let (truth, estimate, bound) = fluid_check(2000, 20, |_| 1000.0, |_| 100);
        assert_eq!(truth, 100_000.0);
        assert!((estimate - truth).abs() < 0.01 * truth, "{estimate}");
        assert!(
            (estimate - truth).abs() <= bound + 1.0,
            "{estimate} {bound}"
        );
    }

    #[test]
    fn a_trend_along_the_grid_is_followed_and_bounded() {
        // CTAs get 2.5x dearer from the grid's start to its end, with a ripple of 129
        // CTAs (a grid row) on top: a prefix would see only the cheap start.
        let cost = |c: u64| {
            let x = c as f64 / 6000.0;
            800.0 * (1.0 + 1.5 * x) * (1.0 + 0.2 * (c as f64 * std::f64::consts::TAU / 129.0).sin())
        };
        let (truth, estimate, bound) = fluid_check(6000, 30, cost, |c| 100 + c % 7);
        let error = (estimate - truth) / truth;
        assert!(error.abs() < 0.03, "error {error}");
        assert!(
            (estimate - truth).abs() <= bound,
            "{estimate} vs {truth} ± {bound}"
        );
        // The trend counts as variance: wide, but not useless.
        assert!(bound / truth < 0.25, "bound {bound} of {truth}");
    }

    #[test]
    fn strata_of_one_rate_have_no_bound_and_differing_ones_do() {
        let stratum = |skipped: f64, cycles: f64| Stratum {
            skipped_instructions: skipped,
            span_cycles: cycles,
            span_instructions: 100.0,
        };
        let same = extrapolate(500, &[stratum(1000.0, 50.0), stratum(1000.0, 50.0)]);
        assert_eq!(same.cycles, 1500.0);
        assert_eq!(same.bound, 0.0);
        // Rates 0.5 and 0.7: each stratum's variance (0.2^2 / 2) times its skipped
        // instructions squared, t(1) = 12.706 standard errors.
        let two = extrapolate(500, &[stratum(1000.0, 50.0), stratum(1000.0, 70.0)]);
        assert!((two.cycles - 1700.0).abs() < 1e-9);
        let expected = 12.706 * (2.0 * 1000.0f64.powi(2) * 0.02).sqrt();
        assert!((two.bound - expected).abs() < 1e-6, "{two:?} {expected}");
        // One stratum: nothing to compare with, the whole skipped part is the bound.
        let one = extrapolate(500, &[stratum(1000.0, 50.0)]);
        assert_eq!((one.cycles, one.bound), (1000.0, 500.0));
    }

    #[test]
    fn the_prediction_interval_widens_with_the_spread_and_narrows_with_members() {
        let same = predict(&[2.0, 2.0, 2.0]);
        assert_eq!((same.cpi, same.relative_bound), (2.0, 0.0));
        // Two members 1% apart: s = 0.0141 x 2, t(1) = 12.706, sqrt(1.5).
        let two = predict(&[1.99, 2.01]);
        assert!((two.cpi - 2.0).abs() < 1e-12);
        let expected = 12.706 * (0.02f64 / 2f64.sqrt()) * 1.5f64.sqrt() / 2.0;
        assert!((two.relative_bound - expected).abs() < 1e-9, "{two:?}");
        // The same spread over more members: a narrower interval.
        let five = predict(&[1.99, 2.01, 1.99, 2.01, 2.0]);
        assert!(five.relative_bound < two.relative_bound / 3.0, "{five:?}");
        // One member claims nothing narrower than 100%.
        assert_eq!(predict(&[3.0]).relative_bound, 1.0);
    }

    #[test]
    fn t_quantiles_fall_with_degrees_of_freedom() {
        assert!(t95(0).is_infinite());
        assert_eq!(t95(1), 12.706);
        assert_eq!(t95(11), 2.201);
        assert_eq!(t95(1000), 1.96);
    }

    #[test]
    fn bbv_distance_is_zero_for_the_same_mix_and_two_for_disjoint_ones() {
        let mut a = Bbv::default();
        let mut b = Bbv::default();
        for _ in 0..3 {
            a.add(0, 1);
            b.add(0, 1);
            b.add(0, 1);
        }
        assert_eq!(a.distance(&b), 0.0);
        let mut c = Bbv::default();
        c.add(1, 0);
        assert_eq!(a.distance(&c), 2.0);
        a.add(0, 2);
        let d = a.distance(&b);
        assert!((d - 0.5).abs() < 1e-12, "{d}");
    }
}

//! Sampled simulation (`[sampling]`, `regsim run --sample`): a launch's first CTA waves
//! are simulated in detail and its other CTAs executed functionally, with their cycles
//! extrapolated; repeated launches of one kernel are clustered and later members are
//! executed functionally and estimated from a detailed one. In the spirit of TBPoint
//! (thread-block sampling with warm-up, and launches grouped by what they execute), not
//! its algorithm.
//!
//! - **Within a launch**: with `W` = SMs x CTAs per SM, the first `waves x W` CTAs are
//!   simulated in detail. The first wave warms the caches; from the retirement of the
//!   `W`-th CTA to that of the `(m - W)`-th (when the last detailed CTA started) the GPU
//!   runs in steady state, and that window, cut into intervals, gives cycles per warp
//!   instruction (a ratio estimator). The CTAs left are executed functionally (values and
//!   instruction counts exact) and their warp instructions priced at that rate: the
//!   estimate adds them to the detailed part's cycles (a fluid extrapolation: CTAs go on
//!   retiring at the steady rate). How the remaining CTAs' last wave meets the end is
//!   unknown: between up to a wave of them hidden in the detailed part's drain and all
//!   of them in whole waves after it. The bound at 95% confidence is the farther of
//!   those two from the estimate plus Student's t times the standard error of the
//!   remaining time (the intervals' residual variance, both from estimating the rate and
//!   from the remaining run's own variation).
//! - **Across launches**: a launch's signature is its kernel name, grid, block and
//!   dynamic shared memory, and its basic-block vector (per-instruction execution counts,
//!   normalised; recorded by an emulator step observer). The first `launches` launches
//!   of a signature are simulated (and sampled) in detail and form a cluster; a later
//!   launch of that signature runs functionally and is estimated from the cluster's
//!   latest detailed member, scaled by warp instructions. Its bound adds the detailed
//!   members' spread of cycles per instruction and the vector distance. A launch whose
//!   vector lies farther than `bbv_distance` from every cluster of its signature is
//!   still estimated from the nearest (with that distance in its bound), and the next
//!   launch of the signature is simulated in detail, starting a new cluster.
//!
//! The estimate stands in a kernel's `cycles` (and `ipc`); warp and thread instructions
//! are exact; energy events are scaled by warp instructions; the other counters
//! (memory, register file, stalls, occupancy) are those of the detailed part. What was
//! simulated in detail, the estimate and the bound are in `sampling` of each kernel and
//! of the total. Estimated parts do not advance the simulated clock.

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

/// How many intervals the steady window is cut into (at most).
const INTERVALS: u64 = 12;

/// The GPU's state after a retirement event of a detailed launch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Retirement {
    /// Cycles since the launch started.
    pub cycle: u64,
    /// CTAs retired so far.
    pub retired: u64,
    /// Warp instructions issued so far.
    pub issued: u64,
}

/// An extrapolated launch: its cycles and the half-width of the 95% interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Extrapolation {
    pub cycles: f64,
    pub bound: f64,
    /// Intervals of the steady window the rate was measured on.
    pub intervals: usize,
}

/// Extrapolates a launch of which the first `detailed_ctas` (a whole number of waves of
/// `wave` CTAs, at least three) were simulated in `detailed_cycles`, with `remaining_ctas`
/// CTAs of `remaining_instructions` warp instructions executed functionally.
/// `retirements` are the detailed run's, in order.
pub fn extrapolate(
    retirements: &[Retirement],
    wave: u64,
    detailed_ctas: u64,
    detailed_cycles: u64,
    remaining_ctas: u64,
    remaining_instructions: u64,
) -> Extrapolation {
    let from = wave;
    let to = detailed_ctas.saturating_sub(wave);
    let at = |target: u64| retirements.iter().find(|r| r.retired >= target).copied();
    let window = to.saturating_sub(from);
    let j = window.min(INTERVALS);
    let mut points = Vec::new();
    if j > 0 {
        for k in 0..=j {
            if let Some(r) = at(from + window * k / j) {
                points.push(r);
            }
        }
    }
    // Intervals: (cycles, instructions), empty ones dropped.
    let intervals: Vec<(f64, f64)> = points
        .windows(2)
        .map(|p| {
            (
                (p[1].cycle - p[0].cycle) as f64,
                (p[1].issued - p[0].issued) as f64,
            )
        })
        .filter(|&(c, i)| c > 0.0 && i > 0.0)
        .collect();
    let (sum_c, sum_i) = intervals
        .iter()
        .fold((0.0, 0.0), |(c, i), &(dc, di)| (c + dc, i + di));
    let detailed = detailed_cycles as f64;
    let rest_i = remaining_instructions as f64;
    if intervals.len() < 2 || sum_i == 0.0 {
        // No steady window to measure: price the rest at the whole detailed run's rate
        // and claim nothing about it.
        let issued = retirements.last().map_or(0, |r| r.issued) as f64;
        let cpi = if issued > 0.0 { detailed / issued } else { 0.0 };
        let rest = rest_i * cpi;
        return Extrapolation {
            cycles: detailed + rest,
            bound: rest,
            intervals: intervals.len(),
        };
    }
    let n = intervals.len();
    let cpi = sum_c / sum_i;
    let mean_i = sum_i / n as f64;
    let s2 = intervals
        .iter()
        .map(|&(c, i)| (c - cpi * i).powi(2))
        .sum::<f64>()
        / (n - 1) as f64;
    // The remaining run spans `k` intervals' worth of instructions: the rate's error
    // scales with k, the run's own variation with its square root.
    let k = rest_i / mean_i;
    let variance = k * k * s2 / n as f64 + k * s2;
    let fluid = detailed + rest_i * cpi;
    // The same rate per CTA, to count in waves.
    let per_cta = if remaining_ctas > 0 {
        rest_i * cpi / remaining_ctas as f64
    } else {
        0.0
    };
    let wave = wave.max(1);
    // At most: the remaining CTAs run in whole waves after the detailed ones drained.
    let whole_waves = detailed + (remaining_ctas.div_ceil(wave) * wave) as f64 * per_cta;
    // At least: up to a wave of them fits into the slots the detailed ones' drain leaves.
    let overlapped = detailed + remaining_ctas.saturating_sub(wave) as f64 * per_cta;
    let shape = (whole_waves - fluid).max(fluid - overlapped);
    Extrapolation {
        cycles: fluid,
        bound: shape + t95(n - 1) * variance.sqrt(),
        intervals: n,
    }
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

/// What the recording observer shares with [`BbvRecording`]: the vector so far and the
/// observer it stands in front of.
type Shared = Arc<Mutex<(Bbv, Option<Box<dyn StepObserver>>)>>;

/// The step observer that records a launch's [`Bbv`], passing every step on to the
/// observer it replaced.
struct BbvObserver(Shared);

impl StepObserver for BbvObserver {
    fn observe(&mut self, cta: [u32; 3], warp: u32, step: &WarpStep) {
        if let Ok(mut shared) = self.0.lock() {
            let (bbv, inner) = &mut *shared;
            bbv.add(step.func.index(), step.inst.index());
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
        let shared: Shared = Arc::new(Mutex::new((Bbv::default(), emu.step_observer.take())));
        emu.step_observer = Some(Box::new(BbvObserver(Arc::clone(&shared))));
        BbvRecording(shared)
    }

    /// The recorded vector; `emu` gets its previous observer back.
    pub fn finish(self, emu: &mut Emulator) -> Bbv {
        drop(emu.step_observer.take());
        match self.0.lock() {
            Ok(mut shared) => {
                emu.step_observer = shared.1.take();
                std::mem::take(&mut shared.0)
            }
            Err(_) => Bbv::default(),
        }
    }
}

/// What sampling did with one launch, in its statistics (`sampling`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KernelSample {
    /// `full` (every CTA in detail), `ctas` (the first `detailed_ctas` in detail, the
    /// rest functionally) or `cluster` (functionally, estimated from launch
    /// `representative`).
    pub method: &'static str,
    /// The CTAs simulated in detail: linear indices `0..detailed_ctas`.
    pub detailed_ctas: u64,
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
}

impl Sampler {
    pub fn new(cfg: SamplingConfig) -> Self {
        Sampler {
            cfg,
            clusters: Vec::new(),
        }
    }

    /// CTAs of a launch of `total` CTAs to simulate in detail, with `wave` CTAs resident
    /// at once: all of them, or the first `waves` waves.
    pub fn detailed_ctas(&self, total: u64, wave: u64) -> u64 {
        let m = wave.saturating_mul(u64::from(self.cfg.waves));
        // The steady window needs at least two CTAs.
        let m = m.max(2 * wave + 2);
        if total <= m {
            total
        } else {
            m
        }
    }

    /// Whether a launch of `key` is simulated, or tried functionally and estimated if it
    /// fits a cluster.
    pub fn plan(&self, key: &LaunchKey) -> Plan {
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
    /// its cluster.
    pub fn add_detailed(
        &mut self,
        key: LaunchKey,
        bbv: Bbv,
        kernel: usize,
        stats: &KernelStats,
        relative_bound: f64,
    ) -> usize {
        let member = Member {
            kernel,
            stats: stats.clone(),
            relative_bound,
        };
        let limit = self.cfg.bbv_distance;
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
        let cpi = |s: &KernelStats| s.cycles as f64 / s.warp_instructions.max(1) as f64;
        let rep_cpi = cpi(&rep.stats);
        // The members' spread of cycles per instruction around the representative's.
        let spread = cluster
            .members
            .iter()
            .map(|m| (cpi(&m.stats) - rep_cpi).abs() / rep_cpi.max(f64::MIN_POSITIVE))
            .fold(0.0, f64::max);
        let cycles = (rep.stats.cycles as f64 * scale).round().max(1.0) as u64;
        let relative = rep.relative_bound + spread + distance + count_difference;
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
        Some(stats)
    }
}

/// A detailed launch's sampling record, for [`finish_detailed`].
pub struct DetailedRun {
    /// CTAs resident at once (SMs x CTAs per SM).
    pub wave: u64,
    pub detailed_ctas: u64,
    pub total_ctas: u64,
    /// The detailed part's retirements.
    pub retirements: Vec<Retirement>,
    /// The CTAs after the detailed ones, executed functionally.
    pub rest: RunStats,
}

/// Turns the statistics of a launch's detailed part into the launch's estimate (cycles,
/// instructions, energy events, `sampling`); returns the bound relative to the
/// estimate.
pub fn finish_detailed(stats: &mut KernelStats, run: &DetailedRun) -> f64 {
    let detailed_cycles = stats.cycles;
    let detailed_warp_instructions = stats.warp_instructions;
    let remaining = run.total_ctas - run.detailed_ctas;
    let (cycles, bound, method) = if remaining == 0 {
        (detailed_cycles, 0, "full")
    } else {
        let e = extrapolate(
            &run.retirements,
            run.wave,
            run.detailed_ctas,
            detailed_cycles,
            remaining,
            run.rest.warp_instructions,
        );
        (
            e.cycles.round().max(1.0) as u64,
            e.bound.ceil() as u64,
            "ctas",
        )
    };
    if remaining > 0 {
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
        detailed_ctas: run.detailed_ctas,
        total_ctas: run.total_ctas,
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

/// Executes a whole launch functionally, recording its vector: what an estimated launch
/// runs.
pub fn run_launch(
    emu: &mut Emulator,
    kernel: emu::KernelRef,
    config: emu::LaunchConfig,
    params: &[u8],
) -> Result<(RunStats, Bbv), emu::ExecError> {
    let recording = BbvRecording::start(emu);
    let executed = match emu.launch(kernel, config, params) {
        Ok(mut launch) => launch.run_ctas(0..config.num_ctas()),
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
/// it fits one of `sampler`'s clusters; otherwise (or if it faults) puts device memory
/// back as it was, discards its `printf` output and returns `None`: the launch is then
/// simulated.
pub fn try_estimate(
    sampler: &mut Sampler,
    emu: &mut Emulator,
    kernel: emu::KernelRef,
    config: emu::LaunchConfig,
    params: &[u8],
    key: &LaunchKey,
    start_cycle: u64,
) -> Result<Option<KernelStats>, emu::ExecError> {
    let memory_error = |e| emu::ExecError::new(emu::ErrorKind::Memory(e), emu::Location::default());
    let snapshot = Snapshot::take(&emu.memory).map_err(memory_error)?;
    let held = HeldOutput::default();
    let printf = std::mem::replace(&mut emu.printf_sink, Box::new(held.clone()));
    let run = run_launch(emu, kernel, config, params);
    emu.printf_sink = printf;
    let estimate = match &run {
        Ok((executed, bbv)) => {
            sampler.estimate(key, bbv, *executed, start_cycle, config.num_ctas())
        }
        Err(_) => None,
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

    /// Retirements of a launch whose CTAs all take `d` cycles and `i` warp instructions,
    /// `wave` at a time, in lockstep waves.
    fn lockstep(ctas: u64, wave: u64, d: u64, i: u64) -> Vec<Retirement> {
        (1..=ctas.div_ceil(wave))
            .map(|w| Retirement {
                cycle: w * d,
                retired: (w * wave).min(ctas),
                issued: (w * wave).min(ctas) * i,
            })
            .collect()
    }

    #[test]
    fn uniform_waves_extrapolate_exactly_when_the_rest_is_whole_waves() {
        let r = lockstep(50, 10, 100, 7);
        let e = extrapolate(&r, 10, 50, 500, 150, 150 * 7);
        assert_eq!(e.cycles, 2000.0);
        // Up to a wave of the rest might have hidden in the drain.
        assert_eq!(e.bound, 100.0);
    }

    #[test]
    fn a_partial_last_wave_is_inside_the_bound() {
        // 205 CTAs in lockstep waves of 10 take 21 waves; the fluid estimate says 20.5.
        let r = lockstep(50, 10, 100, 7);
        let e = extrapolate(&r, 10, 50, 500, 155, 155 * 7);
        let truth = 2100.0;
        assert!((e.cycles - truth).abs() <= e.bound, "{e:?}");
        assert!(e.bound <= 100.0, "{e:?}");
    }

    #[test]
    fn noisy_intervals_widen_the_bound_and_noise_free_ones_do_not() {
        let mut r = Vec::new();
        let (mut c, mut n) = (0, 0);
        for k in 1..=60u64 {
            c += if k % 2 == 0 { 30 } else { 10 };
            n += 100;
            r.push(Retirement {
                cycle: c,
                retired: k,
                issued: n,
            });
        }
        let noisy = extrapolate(&r, 10, 60, c, 600, 60_000);
        assert!(noisy.bound > 0.0);
        assert!(noisy.intervals >= 2);
        // 20 cycles per 100 instructions on average.
        let rest = noisy.cycles - c as f64;
        assert!((rest - 12_000.0).abs() < 1_500.0, "{noisy:?}");
    }

    #[test]
    fn without_a_steady_window_the_whole_rest_is_the_bound() {
        let r = [Retirement {
            cycle: 100,
            retired: 3,
            issued: 30,
        }];
        let e = extrapolate(&r, 1, 3, 100, 10, 100);
        assert!(
            (e.cycles - (100.0 + 100.0 * 100.0 / 30.0)).abs() < 1e-9,
            "{e:?}"
        );
        assert!((e.bound - (e.cycles - 100.0)).abs() < 1e-9, "{e:?}");
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

    #[test]
    fn detailed_ctas_are_whole_waves_or_the_whole_launch() {
        let s = Sampler::new(SamplingConfig {
            enabled: true,
            ..SamplingConfig::default()
        });
        assert_eq!(s.detailed_ctas(1000, 30), 150);
        assert_eq!(s.detailed_ctas(150, 30), 150);
        assert_eq!(s.detailed_ctas(100, 30), 100);
        // One CTA at a time: the window still holds two.
        assert_eq!(s.detailed_ctas(1000, 1), 5);
    }
}

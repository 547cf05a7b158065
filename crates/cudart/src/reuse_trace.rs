//! The functional profiling pass behind Malekeh's trace-exact reuse distances
//! (`register_file.malekeh.reuse_distances = "trace"`, `timing::rf::malekeh::trace`):
//! before a launch is timed, the kernel runs once functionally on the same device memory,
//! every warp's executed instructions are recorded, and the memory is put back as it was
//! (contents, allocations made by device-side `malloc`, stray-access warnings); device
//! `printf` output of the pass is discarded. The timing run then executes the launch as
//! it would have without the pass.
//!
//! The streams need only control flow: when the kernel's control does not depend on
//! memory it can write (`emu::control_slice`), the pass executes only the instructions
//! that branches, barriers, exits and guards depend on and steps over the rest, so the
//! timing run is the launch's only full emulation; the streams, and so the statistics,
//! are those of a pass that executes everything.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use emu::control_slice::ControlSlice;
use emu::memory::snapshot::Snapshot;
use emu::memory::MemError;
use emu::{Emulator, KernelRef, LaunchConfig, StepObserver, WarpStep};
use timing::rf::malekeh::trace::ExecutedStep;

/// A warp of a launch: its CTA's index and its index within the CTA.
pub type WarpKey = ([u32; 3], u32);

/// Every warp's executed stream, keyed by CTA index and warp within the CTA.
pub type Streams = HashMap<WarpKey, Vec<ExecutedStep>>;

/// The streams being recorded, in the order their warps first executed, with the index
/// of each warp's stream and the warp that executed last: the emulator runs a warp for
/// many steps in a row, so most steps append to the same stream without hashing.
#[derive(Default)]
struct Recording {
    streams: Vec<(WarpKey, Vec<ExecutedStep>)>,
    index: HashMap<WarpKey, usize>,
    last: Option<usize>,
}

impl Recording {
    fn push(&mut self, key: WarpKey, step: ExecutedStep) {
        let at = match self.last {
            Some(i) if self.streams[i].0 == key => i,
            _ => {
                let next = self.streams.len();
                let i = *self.index.entry(key).or_insert(next);
                if i == next {
                    self.streams.push((key, Vec::new()));
                }
                self.last = Some(i);
                i
            }
        };
        self.streams[at].1.push(step);
    }
}

#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Recording>>);

impl StepObserver for Recorder {
    fn observe(&mut self, cta: [u32; 3], warp: u32, step: &WarpStep) {
        let mut s = self.0.lock().unwrap_or_else(|p| p.into_inner());
        s.push(
            (cta, warp),
            ExecutedStep {
                func: step.func,
                inst: step.inst,
                full_write: step.exec_mask == step.active_mask,
            },
        );
    }
}

/// Runs `kernel` functionally and returns every warp's stream, leaving the emulator's
/// memory as it found it; `None` when the kernel faults in the pass (the timed run
/// faults the same way and reports it) or `bound` stops the pass (the timed run then
/// meets the same limit: [`profile_bound`]). An error only when the memory cannot be
/// copied or put back.
pub fn profile_streams(
    emu: &mut Emulator,
    kernel: KernelRef,
    config: LaunchConfig,
    params: &[u8],
    bound: &emu::RunBound,
) -> Result<Option<Streams>, MemError> {
    let snapshot = Snapshot::take(&emu.memory)?;
    let recorder = Recorder::default();
    let observer = emu.step_observer.replace(Box::new(recorder.clone()));
    let printf = std::mem::replace(&mut emu.printf_sink, Box::new(std::io::sink()));
    let slice = emu
        .module(kernel.module)
        .and_then(|m| ControlSlice::of(m, kernel.func));
    let run = match &slice {
        Some(slice) => emu.run_control_slice_bounded(kernel, config, params, slice, bound),
        None => emu.run_bounded(kernel, config, params, bound),
    };
    emu.step_observer = observer;
    emu.printf_sink = printf;
    snapshot.restore(&mut emu.memory)?;
    if !matches!(run, Ok(Ok(_))) {
        return Ok(None);
    }
    let mut recording = recorder.0.lock().unwrap_or_else(|p| p.into_inner());
    Ok(Some(
        std::mem::take(&mut recording.streams).into_iter().collect(),
    ))
}

/// The bound of the profiling pass under the timing run's `limits`: its deadline and
/// interrupt, and at most the warp instructions the timed run could issue before its
/// instruction or cycle limit (every scheduler of every SM issuing its full width every
/// cycle), so a never-ending kernel stops there as the timed run would, and a kernel the
/// timed run can finish is never stopped.
pub fn profile_bound(limits: &timing::RunLimits, config: &timing::GpuConfig) -> emu::RunBound {
    let per_cycle = u64::from(config.gpu.num_sms)
        .saturating_mul(u64::from(config.sm.schedulers))
        .saturating_mul(u64::from(config.sm.issue_width));
    let by_cycles = limits.max_cycles.map(|c| c.saturating_mul(per_cycle));
    let max_warp_instructions = match (by_cycles, limits.max_instructions) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    emu::RunBound {
        max_warp_instructions,
        deadline: limits.deadline.map(|(at, _)| at),
        interrupt: limits.interrupt.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ir::{FuncId, InstId};

    fn step(inst: u32) -> ExecutedStep {
        ExecutedStep {
            func: FuncId(0),
            inst: InstId(inst),
            full_write: true,
        }
    }

    #[test]
    fn interleaved_warps_keep_their_own_streams_in_order() {
        let (a, b, c) = (([0, 0, 0], 0), ([0, 0, 0], 1), ([1, 0, 0], 0));
        let mut r = Recording::default();
        for (key, inst) in [(a, 0), (a, 1), (b, 0), (a, 2), (c, 0), (b, 1), (b, 2)] {
            r.push(key, step(inst));
        }
        let streams: Streams = r.streams.into_iter().collect();
        let insts = |k| streams[&k].iter().map(|s| s.inst.0).collect::<Vec<_>>();
        assert_eq!(streams.len(), 3);
        assert_eq!(insts(a), [0, 1, 2]);
        assert_eq!(insts(b), [0, 1, 2]);
        assert_eq!(insts(c), [0]);
    }
}

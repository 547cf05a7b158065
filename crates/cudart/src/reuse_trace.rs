//! The functional profiling pass behind Malekeh's trace-exact reuse distances
//! (`register_file.malekeh.reuse_distances = "trace"`, `timing::rf::malekeh::trace`):
//! before a launch is timed, the kernel runs once functionally on the same device memory,
//! every warp's executed instructions are recorded, and the memory is put back as it was
//! (contents, allocations made by device-side `malloc`, stray-access warnings); device
//! `printf` output of the pass is discarded. The timing run then executes the launch as
//! it would have without the pass.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use emu::memory::snapshot::Snapshot;
use emu::memory::MemError;
use emu::{Emulator, KernelRef, LaunchConfig, StepObserver, WarpStep};
use timing::rf::malekeh::trace::ExecutedStep;

/// Every warp's executed stream, keyed by CTA index and warp within the CTA.
pub type Streams = HashMap<([u32; 3], u32), Vec<ExecutedStep>>;

#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Streams>>);

impl StepObserver for Recorder {
    fn observe(&mut self, cta: [u32; 3], warp: u32, step: &WarpStep) {
        let mut s = self.0.lock().unwrap_or_else(|p| p.into_inner());
        s.entry((cta, warp)).or_default().push(ExecutedStep {
            func: step.func,
            inst: step.inst,
            full_write: step.exec_mask == step.active_mask,
        });
    }
}

/// Runs `kernel` functionally and returns every warp's stream, leaving the emulator's
/// memory as it found it; `None` when the kernel faults in the pass (the timed run
/// faults the same way and reports it). An error only when the memory cannot be copied
/// or put back.
pub fn profile_streams(
    emu: &mut Emulator,
    kernel: KernelRef,
    config: LaunchConfig,
    params: &[u8],
) -> Result<Option<Streams>, MemError> {
    let snapshot = Snapshot::take(&emu.memory)?;
    let recorder = Recorder::default();
    let observer = emu.step_observer.replace(Box::new(recorder.clone()));
    let printf = std::mem::replace(&mut emu.printf_sink, Box::new(std::io::sink()));
    let run = emu.run(kernel, config, params);
    emu.step_observer = observer;
    emu.printf_sink = printf;
    snapshot.restore(&mut emu.memory)?;
    if run.is_err() {
        return Ok(None);
    }
    let mut streams = recorder.0.lock().unwrap_or_else(|p| p.into_inner());
    Ok(Some(std::mem::take(&mut *streams)))
}

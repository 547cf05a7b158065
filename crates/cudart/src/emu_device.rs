//! The [`Device`] the library runs on: the functional emulator (`emu::Emulator`).
//!
//! Memory is the emulator's global allocation table at its fixed simulated addresses, so
//! every pointer the program gets is one kernels can access, and the same in every run;
//! the runtime copies through [`Device::host_bytes`]. Modules are the program's PTX,
//! parsed and lowered by the emulator, which also allocates and initialises their
//! `__device__`/`__constant__` variables: `cudaMemcpyToSymbol` and friends copy to the
//! very bytes kernels read. Launches run the whole grid to completion on the calling
//! thread; a fault comes back as a [`KernelFault`] naming kernel, PTX line, CTA, thread
//! and address.
//!
//! Registers per thread (`cudaFuncGetAttributes().numRegs`) come from the simulator's own
//! register allocator (`compiler::regalloc`) run on the kernel's PTX, computed once per
//! module on first request.
//!
//! In timing mode ([`EmuDevice::with_timing`]) one `timing::TimingSimulator` lives as long
//! as the device: it drives the emulator instruction by instruction (values and atomics
//! follow simulated order) and keeps time, caches and DRAM state across launches. Each
//! kernel's register allocation (`timing::KernelInfo`, with the same allocator settings as
//! `numRegs`) is computed on its first launch and cached. A launch the timing model
//! refuses (a CTA that fits on no SM) or cannot finish comes back as
//! [`DeviceError::Simulation`].
//!
//! Every module loads through the load-time pipeline (`compiler::pipeline`, with the
//! environment's transforms from [`EmuDevice::with_program_settings`] and, in timing mode,
//! the annotation passes the register-file design declares), and `numRegs` and the timing
//! model use the compiled program's own allocation and annotations; with profiling ([`crate::profiling`]) the emulator reports
//! every executed instruction to the profiler.

use std::collections::HashMap;

use emu::memory::{AllocKind as EmuAllocKind, MemError};
use emu::{Emulator, ErrorKind, ExecError, LaunchConfig};
use timing::{GpuConfig, KernelInfo, SimError, TimingSimulator};

use crate::device::{
    AllocKind, Device, DeviceError, Dim3, FaultKind, KernelFault, KernelResources, KernelStats,
    Launch, MemoryWarning, ModuleId, TextureTarget,
};
use crate::error::CudaError;
use crate::profiling::{ProfileReport, SharedProfiler};
use crate::stats::demangle;
use crate::transforms::{self, ProgramTransforms};
use compiler::pipeline::{CompiledFunction, PassSet};

pub struct EmuDevice {
    emu: Emulator,
    /// The emulator's handle of each module, indexed by [`ModuleId`].
    modules: Vec<emu::ModuleId>,
    /// Name under which PTX locations are reported (`<program>.ptx`).
    ptx_file_name: String,
    /// The timing model, in timing mode.
    timing: Option<TimingModel>,
    /// Compiler transforms applied at load; the register cap (or 255) for every kernel.
    transforms: ProgramTransforms,
    /// The annotation passes the timing model's register-file design needs.
    design_passes: PassSet,
    /// Allocation and annotations of each function of each module, by `FuncId`.
    compiled: HashMap<ModuleId, Vec<Option<CompiledFunction>>>,
    /// Per module, its functions allocated under `transforms.compare_with` alone.
    compared: HashMap<ModuleId, Vec<Option<CompiledFunction>>>,
    profiler: Option<SharedProfiler>,
    /// Stray-access warnings of the emulator already handed to the runtime.
    strays_reported: usize,
    /// Whether the first host-visible allocation has checked its addresses are fixed.
    said_host_visible_not_fixed: bool,
    /// The run limits in functional mode (`--max-instructions`, `--timeout`, signals;
    /// there are no cycles), and the warp instructions the run has executed so far.
    functional_limits: timing::RunLimits,
    functional_instructions: u64,
}

/// The cycle-level model driving the emulator, and what it needs per kernel.
struct TimingModel {
    sim: TimingSimulator,
    /// Allocated static facts of each launched kernel, by module and (mangled) name.
    infos: HashMap<(ModuleId, String), KernelInfo>,
}

impl std::fmt::Debug for EmuDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmuDevice")
            .field("memory", &self.emu.memory)
            .field("modules", &self.modules.len())
            .finish()
    }
}

impl Default for EmuDevice {
    fn default() -> Self {
        Self::new()
    }
}

impl EmuDevice {
    pub fn new() -> EmuDevice {
        let program = std::env::current_exe()
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "program".to_string());
        let mut emu = Emulator::new();
        emu.printf_sink = Box::new(CStdout);
        EmuDevice::with_emulator(emu, format!("{program}.ptx"))
    }

    /// A device on a given emulator (tests redirect its printf sink), reporting PTX
    /// locations in `ptx_file_name`.
    pub fn with_emulator(emu: Emulator, ptx_file_name: String) -> EmuDevice {
        EmuDevice {
            emu,
            modules: Vec::new(),
            ptx_file_name,
            timing: None,
            transforms: ProgramTransforms::default(),
            design_passes: PassSet::default(),
            compiled: HashMap::new(),
            compared: HashMap::new(),
            profiler: None,
            strays_reported: 0,
            said_host_visible_not_fixed: false,
            functional_limits: timing::RunLimits::default(),
            functional_instructions: 0,
        }
    }

    /// Times every launch on the cycle-level model of `config` (timing mode).
    pub fn with_timing(mut self, config: GpuConfig) -> EmuDevice {
        self.design_passes = timing::rf::required_passes(&config);
        self.timing = Some(TimingModel {
            sim: TimingSimulator::new(config),
            infos: HashMap::new(),
        });
        self
    }

    /// Loads modules with `transforms` applied; with `profile`, profiles every executed
    /// instruction.
    pub fn with_program_settings(mut self, transforms: ProgramTransforms, profile: bool) -> Self {
        self.transforms = transforms;
        if profile {
            let p = SharedProfiler::default();
            self.emu.step_observer = Some(Box::new(p.clone()));
            self.profiler = Some(p);
        }
        self
    }

    /// Bounds functional launches by `limits` (without the timing model; its cycle limit
    /// and watchdog do not apply): the warp instructions over the run, the deadline and
    /// the interrupt flag, which stop a kernel as the timing model's limits do.
    pub fn set_functional_limits(&mut self, limits: timing::RunLimits) {
        self.functional_limits = limits;
    }

    /// The timing model, in timing mode (to set its run limits and progress hook).
    pub fn timing_mut(&mut self) -> Option<&mut TimingSimulator> {
        self.timing.as_mut().map(|t| &mut t.sim)
    }

    pub fn emulator(&self) -> &Emulator {
        &self.emu
    }

    pub fn emulator_mut(&mut self) -> &mut Emulator {
        &mut self.emu
    }

    fn emu_module(&self, module: ModuleId) -> Result<emu::ModuleId, DeviceError> {
        self.modules
            .get(module.0 as usize)
            .copied()
            .ok_or_else(|| DeviceError::BadModule(format!("module {} is not loaded", module.0)))
    }
}

/// The C library's `stdout` stream, where device `printf` output goes: sharing the
/// program's own buffer keeps device and host output in program order, as with CUDA's
/// runtime, even when stdout is a pipe and fully buffered.
struct CStdout;

extern "C" {
    /// glibc's `FILE *stdout`.
    static stdout: *mut std::ffi::c_void;
    fn fwrite(ptr: *const u8, size: usize, n: usize, stream: *mut std::ffi::c_void) -> usize;
    fn fflush(stream: *mut std::ffi::c_void) -> i32;
}

impl std::io::Write for CStdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // SAFETY: `stdout` is initialised by the C library before any constructor runs,
        // and `buf` is valid for `buf.len()` bytes.
        let n = unsafe { fwrite(buf.as_ptr(), 1, buf.len(), stdout) };
        if n == 0 && !buf.is_empty() {
            return Err(std::io::Error::other("fwrite to stdout failed"));
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        // SAFETY: as above.
        match unsafe { fflush(stdout) } {
            0 => Ok(()),
            _ => Err(std::io::Error::last_os_error()),
        }
    }
}

/// What the program sees of a launch the timing model did not complete: a fault is a
/// fault (a barrier deadlock one whose detail lists every live warp); a CTA that fits on
/// no SM is `cudaErrorLaunchOutOfResources`, as on a GPU that lacks the registers or
/// shared memory; a model failure is a launch failure; a run limit stops the run.
fn simulation_error(mut e: SimError) -> DeviceError {
    if let SimError::DoesNotFit { kernel, .. }
    | SimError::ClusterDoesNotFit { kernel, .. }
    | SimError::NoProgress { kernel, .. }
    | SimError::Stopped { kernel, .. }
    | SimError::AfterStop { kernel }
    | SimError::UnsupportedOnTarget { kernel, .. }
    | SimError::TooWideForDesign { kernel, .. } = &mut e
    {
        *kernel = demangle(kernel);
    }
    let (code, message) = match e {
        SimError::Exec(e) => return DeviceError::Fault(Box::new(fault(&e))),
        SimError::Deadlock { error, warps } => {
            let mut f = fault(&error);
            f.detail = format!("{}; {warps}", f.detail);
            return DeviceError::Fault(Box::new(f));
        }
        SimError::Stopped {
            ref stats,
            ref reason,
            ..
        } => {
            let mut message = e.to_string();
            if let (timing::StopReason::Interrupted, Some(sig)) =
                (reason, crate::run_control::caught_signal())
            {
                let by = format!("{reason} by {}", crate::run_control::signal_name(sig));
                message = message.replacen(&reason.to_string(), &by, 1);
            }
            let stats = Box::new(KernelStats {
                warp_instructions: stats.warp_instructions,
                thread_instructions: stats.thread_instructions,
                timing: Some(stats.clone()),
            });
            return DeviceError::Stopped { message, stats };
        }
        SimError::DoesNotFit { .. } => (CudaError::LaunchOutOfResources, e.to_string()),
        SimError::ClusterDoesNotFit { .. } => (CudaError::InvalidClusterSize, e.to_string()),
        SimError::AfterStop { .. } => (CudaError::LaunchFailure, e.to_string()),
        // What a GPU without the architecture's instructions reports for the kernel.
        SimError::UnsupportedOnTarget { .. } => (CudaError::NoKernelImageForDevice, e.to_string()),
        // A limit of the register-file model, not of the GPU: the launch fails.
        SimError::TooWideForDesign { .. } => (CudaError::LaunchFailure, e.to_string()),
        SimError::NoProgress { .. } | SimError::WrongKernelInfo { .. } => (
            CudaError::LaunchFailure,
            format!("timing model failure (please report): {e}"),
        ),
    };
    DeviceError::Simulation { code, message }
}

/// The line of a functional run a bound stopped, worded as the timing model's: "kernel K
/// stopped after N warp instructions: the instruction limit (M warp instructions) was
/// reached; CTA (x,y,z): W warps live (…): warp 0 (next: PTX line L) ready to issue; …".
fn functional_stop_message(
    kernel: &str,
    stop: &emu::FunctionalStop,
    limits: &timing::RunLimits,
) -> String {
    let reason = match stop.cause {
        emu::StopCause::Instructions => {
            timing::StopReason::MaxInstructions(limits.max_instructions.unwrap_or(0))
        }
        emu::StopCause::Deadline => timing::StopReason::Timeout(
            limits
                .deadline
                .map_or(std::time::Duration::ZERO, |(_, timeout)| timeout),
        ),
        emu::StopCause::Interrupt => timing::StopReason::Interrupted,
    };
    let mut why = reason.to_string();
    if let (timing::StopReason::Interrupted, Some(sig)) =
        (&reason, crate::run_control::caught_signal())
    {
        why = format!("{why} by {}", crate::run_control::signal_name(sig));
    }
    format!(
        "kernel {} stopped after {} warp instructions: {why}; {}",
        demangle(kernel),
        stop.stats.warp_instructions,
        stop.live_warps()
    )
}

/// Converts an emulator error into the fault a real GPU would report.
fn fault(e: &ExecError) -> KernelFault {
    let kind = match &e.kind {
        ErrorKind::Memory(MemError::Misaligned { .. }) => FaultKind::MisalignedAddress,
        ErrorKind::Memory(_) | ErrorKind::LocalOverflow { .. } => FaultKind::IllegalAddress,
        ErrorKind::Assert(_) => FaultKind::Assert,
        _ => FaultKind::LaunchFailure,
    };
    let address = match &e.kind {
        ErrorKind::Memory(
            MemError::Unallocated { addr, .. }
            | MemError::OutOfBounds { addr, .. }
            | MemError::Misaligned { addr, .. }
            | MemError::SpaceOverflow { addr, .. },
        ) => Some(*addr),
        ErrorKind::BadCallTarget(addr) => Some(*addr),
        _ => None,
    };
    let l = &e.location;
    let dim = |[x, y, z]: [u32; 3]| Dim3 { x, y, z };
    KernelFault {
        kind,
        kernel: l.kernel.clone(),
        function: (!l.function.is_empty() && l.function != l.kernel).then(|| l.function.clone()),
        ptx_line: (l.line > 0).then_some(l.line),
        // One line: nvcc spreads calls over several source lines.
        instruction: Some(l.inst_text.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|t| !t.is_empty()),
        cta: dim(l.cta),
        thread: l.thread.map(dim),
        address,
        detail: e.kind.to_string(),
    }
}

impl Device for EmuDevice {
    fn malloc(&mut self, size: usize, kind: AllocKind) -> Result<u64, DeviceError> {
        let kind = match kind {
            AllocKind::Device => EmuAllocKind::Device,
            AllocKind::PinnedHost => EmuAllocKind::Host,
            AllocKind::Managed => EmuAllocKind::Managed,
        };
        if kind.is_host_visible() && !self.said_host_visible_not_fixed {
            self.said_host_visible_not_fixed = true;
            if !emu::memory::address_space::host_visible_addresses_fixed() {
                eprintln!(
                    "regsim: cannot reserve the simulated address space in this process; \
                     managed and pinned memory get host addresses that vary between runs"
                );
            }
        }
        self.emu
            .memory
            .alloc(size as u64, kind)
            .map_err(|_| DeviceError::OutOfMemory(size))
    }

    fn free(&mut self, ptr: u64) -> Result<(), DeviceError> {
        // Module variables belong to their module, not to cudaFree.
        if matches!(
            self.emu.memory.kind_of(ptr),
            Some(
                EmuAllocKind::GlobalVariable
                    | EmuAllocKind::ConstVariable
                    | EmuAllocKind::ManagedVariable
            )
        ) {
            return Err(DeviceError::NotAllocated(ptr));
        }
        self.emu
            .memory
            .free(ptr)
            .map_err(|_| DeviceError::NotAllocated(ptr))
    }

    fn check_range(&self, ptr: u64, len: usize) -> Result<(), DeviceError> {
        let (base, size) = self
            .emu
            .memory
            .allocation_of(ptr)
            .ok_or(DeviceError::OutOfBounds { ptr, len })?;
        if ptr.saturating_add(len as u64) <= base.saturating_add(size) {
            Ok(())
        } else {
            Err(DeviceError::OutOfBounds { ptr, len })
        }
    }

    fn host_bytes(&self, ptr: u64, len: usize) -> Result<*mut u8, DeviceError> {
        self.emu
            .memory
            .host_ptr(ptr, len as u64)
            .map_err(|_| DeviceError::OutOfBounds { ptr, len })
    }

    fn load_module(&mut self, ptx: &str) -> Result<ModuleId, DeviceError> {
        let id = u32::try_from(self.modules.len())
            .map_err(|_| DeviceError::BadModule("too many modules".into()))?;
        let options = self.transforms.load_options(self.design_passes.clone());
        let (emu_id, compiled, compared) = transforms::load_compared(
            &mut self.emu,
            &self.ptx_file_name,
            ptx,
            &options,
            self.transforms.compare_with,
        )
        .map_err(DeviceError::BadModule)?;
        self.compiled.insert(ModuleId(id), compiled);
        if let Some(c) = compared {
            self.compared.insert(ModuleId(id), c);
        }
        self.modules.push(emu_id);
        Ok(ModuleId(id))
    }

    fn symbol_address(
        &mut self,
        module: ModuleId,
        name: &str,
        _size: usize,
    ) -> Result<u64, DeviceError> {
        let m = self.emu_module(module)?;
        self.emu
            .symbol_address(m, name)
            .map(|(addr, _)| addr)
            .ok_or_else(|| DeviceError::UnknownSymbol(name.to_string()))
    }

    fn launch(&mut self, launch: &Launch<'_>) -> Result<KernelStats, DeviceError> {
        let m = self.emu_module(launch.module)?;
        let kernel = self
            .emu
            .kernel(m, launch.kernel)
            .ok_or_else(|| DeviceError::UnknownKernel(launch.kernel.to_string()))?;
        let config = LaunchConfig {
            grid: [launch.grid.x, launch.grid.y, launch.grid.z],
            block: [launch.block.x, launch.block.y, launch.block.z],
            dynamic_shared: u32::try_from(launch.dynamic_shared_bytes)
                .map_err(|_| DeviceError::OutOfMemory(launch.dynamic_shared_bytes))?,
            cluster: launch.cluster,
        };
        if let (Some(p), Some(loaded)) = (&self.profiler, self.emu.module(m)) {
            p.begin_launch(m.0, &loaded.program, config.grid);
        }
        let Some(t) = &mut self.timing else {
            let limits = &self.functional_limits;
            let bound = emu::RunBound {
                max_warp_instructions: limits
                    .max_instructions
                    .map(|m| m.saturating_sub(self.functional_instructions)),
                deadline: limits.deadline.map(|(at, _)| at),
                interrupt: limits.interrupt.clone(),
            };
            let result = self
                .emu
                .run_bounded(kernel, config, launch.params, &bound)
                .map_err(|e| DeviceError::Fault(Box::new(fault(&e))))?;
            let stats = match &result {
                Ok(stats) => *stats,
                Err(stop) => stop.stats,
            };
            self.functional_instructions += stats.warp_instructions;
            let stats = KernelStats {
                warp_instructions: stats.warp_instructions,
                thread_instructions: stats.thread_instructions,
                timing: None,
            };
            return match result {
                Ok(_) => Ok(stats),
                Err(stop) => Err(DeviceError::Stopped {
                    message: functional_stop_message(launch.kernel, &stop, limits),
                    stats: Box::new(stats),
                }),
            };
        };
        let key = (launch.module, launch.kernel.to_string());
        if !t.infos.contains_key(&key) {
            let program = &self
                .emu
                .module(m)
                .ok_or_else(|| {
                    DeviceError::BadModule(format!("module {} is not loaded", launch.module.0))
                })?
                .program;
            let compiled = self
                .compiled
                .get(&launch.module)
                .map_or(&[][..], Vec::as_slice);
            let mut info =
                KernelInfo::from_compiled(program, compiled, kernel.func).map_err(|e| {
                    DeviceError::Simulation {
                        code: CudaError::LaunchFailure,
                        message: format!("cannot simulate kernel {}: {e}", demangle(launch.kernel)),
                    }
                })?;
            let config = t.sim.config();
            if config.sm.constant_operands {
                timing::constant_operands::attach(&mut info, program, |f| {
                    compiled
                        .get(f.index())
                        .and_then(Option::as_ref)
                        .map(|c| &c.allocation)
                });
            }
            if config.sm.dependence == timing::config::Dependence::ControlBits {
                timing::control_bits::attach(&mut info, program, &config.pipeline, |f| {
                    compiled
                        .get(f.index())
                        .and_then(Option::as_ref)
                        .map(|c| &c.allocation)
                });
            }
            info.before_budget = self
                .compared
                .get(&launch.module)
                .map(|c| timing::kernel_info::AllocationSummary::of(program, c, kernel.func));
            t.infos.insert(key.clone(), info);
        }
        let malekeh = &t.sim.config().register_file.malekeh;
        if t.sim.config().register_file.design == timing::config::RegisterFileDesign::Malekeh
            && malekeh.wants_trace()
        {
            let rthld = malekeh.rthld;
            let bound = crate::reuse_trace::profile_bound(t.sim.limits(), t.sim.config());
            let streams = crate::reuse_trace::profile_streams(
                &mut self.emu,
                kernel,
                config,
                launch.params,
                &bound,
            )
            .map_err(|e| DeviceError::Simulation {
                code: CudaError::LaunchFailure,
                message: format!(
                    "cannot profile kernel {} for reuse distances: {e}",
                    demangle(launch.kernel)
                ),
            })?;
            if let Some(info) = t.infos.get_mut(&key) {
                let trace = streams.map(|s| {
                    std::sync::Arc::new(timing::rf::malekeh::trace::ReuseTrace::new(s, info, rthld))
                });
                info.reuse_trace = trace;
            }
        }
        let info = &t.infos[&key];
        let stats = t
            .sim
            .simulate_kernel(&mut self.emu, kernel, config, launch.params, info)
            .map_err(simulation_error)?;
        Ok(KernelStats {
            warp_instructions: stats.warp_instructions,
            thread_instructions: stats.thread_instructions,
            timing: Some(Box::new(stats)),
        })
    }

    fn simulated_ms(&self) -> Option<f64> {
        let t = self.timing.as_ref()?;
        let mhz = f64::from(t.sim.config().gpu.core_clock_mhz);
        Some(t.sim.now().get() as f64 / (mhz * 1000.0))
    }

    fn timing_report(&self) -> Option<timing::Report> {
        Some(self.timing.as_ref()?.sim.report())
    }

    fn host_wrote(&mut self, ptr: u64, len: usize) {
        if let Some(t) = &mut self.timing {
            t.sim
                .host_wrote(self.emu.memory.allocations(), ptr, len as u64);
        }
    }

    fn take_memory_warnings(&mut self) -> Vec<MemoryWarning> {
        let new = &self.emu.memory.stray_warnings[self.strays_reported..];
        self.strays_reported += new.len();
        new.iter()
            .map(|w| {
                let l = &w.location;
                MemoryWarning {
                    kernel: demangle(&l.kernel),
                    ptx_line: l.line,
                    instruction: l.inst_text.trim().to_string(),
                    cta: l.cta,
                    thread: l.thread,
                    message: w.access.to_string(),
                    bytes: w.access.size,
                    offset: w.access.addr.wrapping_sub(w.access.base) as i64,
                    allocation_bytes: w.access.len,
                }
            })
            .collect()
    }

    fn profile_report(&mut self) -> Option<ProfileReport> {
        let emu = &self.emu;
        let report = self
            .profiler
            .as_ref()?
            .report(|m| emu.module(emu::ModuleId(m)).map(|l| &l.program));
        Some(report)
    }

    fn bind_texture(
        &mut self,
        target: TextureTarget<'_>,
        binding: Option<emu::TextureBinding>,
    ) -> Result<(), DeviceError> {
        let table = &mut self.emu.textures;
        match (target, binding) {
            (TextureTarget::Reference(name), Some(b)) => {
                table.by_name.insert(name.to_string(), b);
            }
            (TextureTarget::Reference(name), None) => {
                table.by_name.remove(name);
            }
            (TextureTarget::Object(h), Some(b)) => {
                table.by_handle.insert(h, b);
            }
            (TextureTarget::Object(h), None) => {
                table.by_handle.remove(&h);
            }
        }
        Ok(())
    }

    fn kernel_resources(
        &mut self,
        module: ModuleId,
        kernel: &str,
    ) -> Result<KernelResources, DeviceError> {
        let m = self.emu_module(module)?;
        let k = self
            .emu
            .kernel(m, kernel)
            .ok_or_else(|| DeviceError::UnknownKernel(kernel.to_string()))?;
        let loaded = self
            .emu
            .module(m)
            .ok_or_else(|| DeviceError::BadModule(format!("module {} is not loaded", module.0)))?;
        let program = &loaded.program;
        let compiled = self.compiled.get(&module).map_or(&[][..], Vec::as_slice);
        let registers = KernelInfo::from_compiled(program, compiled, k.func)
            .ok()
            .map(|info| info.registers_per_thread);
        let const_bytes = program
            .variables
            .iter()
            .filter(|v| v.space == ir::VarSpace::Const)
            .map(|v| v.size)
            .sum::<u64>();
        Ok(KernelResources {
            shared_bytes: loaded.kernel_static_shared(k.func) as usize,
            const_bytes: const_bytes as usize,
            local_bytes: loaded
                .funcs
                .get(k.func.index())
                .map_or(0, |f| f.frame_size as usize),
            registers,
            cluster: program
                .functions
                .get(k.func.index())
                .and_then(|f| f.directives.reqnctapercluster),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `out[tid] = table[0] + tid` over a 4-byte-per-thread buffer, with a `.global`
    /// variable, static shared memory and a `.local` array.
    const PTX: &str = "\
.version 7.8
.target sm_70
.address_size 64
.global .align 4 .u32 table[2] = {40, 2};
.visible .entry _Z5storePj(.param .u64 out)
{
\t.reg .b32 %r<4>;
\t.reg .b64 %rd<4>;
\t.shared .align 4 .b8 tile[128];
\t.local .align 4 .b8 scratch[24];
\tld.param.u64 %rd1, [out];
\tmov.u32 %r1, %tid.x;
\tld.global.u32 %r2, [table];
\tadd.u32 %r3, %r2, %r1;
\tmul.wide.u32 %rd2, %r1, 4;
\tadd.u64 %rd3, %rd1, %rd2;
\tst.global.u32 [%rd3], %r3;
\tret;
}
";

    fn launch_store(
        dev: &mut EmuDevice,
        m: ModuleId,
        out: u64,
        threads: u32,
    ) -> Result<KernelStats, DeviceError> {
        dev.launch(&Launch {
            module: m,
            kernel: "_Z5storePj",
            grid: Dim3 { x: 1, y: 1, z: 1 },
            block: Dim3 {
                x: threads,
                y: 1,
                z: 1,
            },
            dynamic_shared_bytes: 0,
            params: &out.to_le_bytes(),
            cluster: None,
        })
    }

    #[test]
    fn modules_symbols_and_launches_share_memory() {
        let mut dev = EmuDevice::with_emulator(Emulator::new(), "t.ptx".into());
        let m = dev.load_module(PTX).unwrap();
        let table = dev.symbol_address(m, "table", 8).unwrap();
        assert!(
            dev.check_range(table, 8).is_ok(),
            "symbols are device memory"
        );
        assert_eq!(
            dev.emulator().memory.read_uint(table, 4).unwrap(),
            40,
            "initialiser"
        );
        dev.emu.memory.write_uint(table, 4, 1000).unwrap();
        assert_eq!(
            dev.symbol_address(m, "nothing", 4),
            Err(DeviceError::UnknownSymbol("nothing".into()))
        );
        assert!(
            dev.free(table).is_err(),
            "module variables are not cudaFree-able"
        );

        let out = dev.malloc(64 * 4, AllocKind::Device).unwrap();
        let stats = launch_store(&mut dev, m, out, 64).unwrap();
        assert_eq!(stats.warp_instructions, 2 * 8);
        assert_eq!(stats.thread_instructions, 64 * 8);
        assert_eq!(dev.emu.memory.read_uint(out + 4 * 63, 4).unwrap(), 1063);

        let res = dev.kernel_resources(m, "_Z5storePj").unwrap();
        assert_eq!(res.shared_bytes, 128);
        assert_eq!(
            res.local_bytes, 32,
            "24 bytes rounded up to the 16-byte frame"
        );
        assert!(
            matches!(res.registers, Some(r) if (4..=16).contains(&r)),
            "{res:?}"
        );
    }

    #[test]
    fn an_out_of_bounds_store_is_a_located_fault() {
        let mut dev = EmuDevice::with_emulator(Emulator::new(), "t.ptx".into());
        let m = dev.load_module(PTX).unwrap();
        let out = dev.malloc(40 * 4, AllocKind::Device).unwrap();
        let Err(DeviceError::Fault(f)) = launch_store(&mut dev, m, out, 64) else {
            panic!("the store past 160 bytes must fault");
        };
        assert_eq!(f.kind, FaultKind::IllegalAddress);
        assert_eq!(f.cuda_error(), crate::error::CudaError::IllegalAddress);
        assert_eq!(f.kernel, "_Z5storePj");
        assert_eq!(f.ptx_line, Some(17));
        assert_eq!(f.instruction.as_deref(), Some("st.global.u32 [%rd3], %r3;"));
        assert_eq!(f.cta, Dim3 { x: 0, y: 0, z: 0 });
        assert_eq!(f.thread, Some(Dim3 { x: 40, y: 0, z: 0 }));
        assert_eq!(f.address, Some(out + 160));
        assert_eq!(
            dev.load_module("not ptx").map_err(|e| e.cuda_error()),
            Err(crate::error::CudaError::InvalidPtx)
        );
    }

    #[test]
    fn allocations_live_in_the_emulator_table() {
        let mut dev = EmuDevice::new();
        let a = dev.malloc(100, AllocKind::Managed).unwrap();
        assert!(dev.check_range(a, 100).is_ok());
        assert!(dev.check_range(a + 1, 100).is_err());
        assert!(dev.check_range(a + 100, 1).is_err());
        dev.free(a).unwrap();
        assert_eq!(dev.free(a), Err(DeviceError::NotAllocated(a)));
    }
}

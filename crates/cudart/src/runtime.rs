//! The runtime's state and the semantics of the CUDA runtime calls, independent of the C
//! ABI (`exports.rs` is a thin, panic-proof shell around this) and generic over the
//! [`Device`] so it can be tested with the host-only double.
//!
//! Execution is synchronous: a launch runs the kernel to completion before returning, so
//! streams only need to keep their handles valid. Events record the device's simulated
//! clock in timing mode (so `cudaEventElapsedTime` measures simulated time: cycles over the
//! core clock) and the host's wall clock in functional mode. Errors follow CUDA's rules:
//! a failing call returns its code and records it as the last error (read and cleared by
//! `cudaGetLastError`); a kernel fault is *sticky*: it is printed once and every later call
//! that needs the device returns it until `cudaDeviceReset`.

use std::collections::{HashMap, HashSet};
use std::io::Write as _;
use std::time::Instant;

use crate::config::{Config, GpuSelection, Mode};
use crate::device::{
    AllocKind, Device, DeviceError, Dim3, KernelResources, Launch, MemoryWarning, ModuleId,
    TextureTarget,
};
use crate::error::CudaError;
use crate::fatbin::FatBinary;
use crate::kernel_abi::{self, KernelSignature};
use crate::props::{GpuDescription, MAX_BLOCK_DIM, MAX_GRID_DIM};
use crate::stats::{self, KernelRecord, RunStats};
use crate::texture::{self as tex, Sampler, TexelLayout};

pub type CudaResult<T> = Result<T, CudaError>;

/// `cudaMemcpyKind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyKind {
    HostToHost,
    HostToDevice,
    DeviceToHost,
    DeviceToDevice,
    Default,
}

impl CopyKind {
    pub fn from_raw(kind: i32) -> CudaResult<CopyKind> {
        Ok(match kind {
            0 => CopyKind::HostToHost,
            1 => CopyKind::HostToDevice,
            2 => CopyKind::DeviceToHost,
            3 => CopyKind::DeviceToDevice,
            4 => CopyKind::Default,
            _ => return Err(CudaError::InvalidMemcpyDirection),
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallConfig {
    pub grid: Dim3,
    pub block: Dim3,
    pub shared_bytes: usize,
    pub stream: u64,
}

/// What `cuModuleLoadData` was given.
#[derive(Debug, Clone, Copy)]
pub enum ModuleImage<'a> {
    Ptx(&'a str),
    /// A fatbinary container (`0xBA55ED50`), as embedded in programs.
    Fatbin(&'a [u8]),
}

#[derive(Debug)]
struct LoadedModule {
    id: ModuleId,
    signatures: HashMap<String, KernelSignature>,
}

#[derive(Debug)]
struct FatbinRecord {
    /// The selected PTX, or the message explaining why there is none.
    ptx: Result<String, String>,
    /// The compute capability that PTX targets (80 for `compute_80`), which
    /// `cudaFuncGetAttributes` reports as `ptxVersion`: CUB picks its tuning policy by it
    /// and refuses (`cudaErrorInvalidDeviceFunction`) a version it was not compiled for.
    ptx_arch: Option<u32>,
    module: Option<Result<LoadedModule, CudaError>>,
}

/// When an event was recorded.
#[derive(Debug, Clone, Copy)]
enum EventTime {
    /// Host time (functional mode).
    Wall(Instant),
    /// The device's simulated clock (timing mode).
    Simulated { ms: f64 },
}

#[derive(Debug, Clone)]
struct KernelRef {
    fatbin: usize,
    name: String,
}

#[derive(Debug, Clone)]
struct TextureRef {
    /// The reference's PTX name (`.global .texref NAME`).
    name: String,
    /// `cudaReadModeNormalizedFloat`, fixed by the `texture<>` template at registration.
    read_normalized: bool,
    binding: Option<TextureBinding>,
}

/// What a legacy texture reference is bound to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TextureBinding {
    /// Linear memory; `pitch2d` = (width, height, pitch) for `cudaBindTexture2D`.
    Linear {
        ptr: u64,
        size: usize,
        pitch2d: Option<(usize, usize, usize)>,
    },
    Array(u64),
}

/// Where texels live for a texture object (`cudaResourceDesc`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextureResource {
    Array(u64),
    Linear {
        ptr: u64,
        format: ArrayFormat,
        size: usize,
    },
    Pitch2D {
        ptr: u64,
        format: ArrayFormat,
        width: usize,
        height: usize,
        pitch: usize,
    },
}

/// Channel bit widths and `cudaChannelFormatKind` of a CUDA array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArrayFormat {
    pub bits: [i32; 4],
    pub kind: i32,
}

#[derive(Debug, Clone)]
struct ArrayRecord {
    format: ArrayFormat,
    width: usize,
    height: usize,
    row_bytes: usize,
    data: u64,
}

#[derive(Debug, Clone)]
struct VariableRef {
    fatbin: usize,
    name: String,
    size: usize,
}

/// The PTX name of a texture reference registered under its C++ name: `::tex` is `tex`,
/// `::ns::tex` is mangled as nvcc mangles namespace-scope variables (`_ZN2ns3texE`).
fn ptx_texture_name(cpp_name: &str) -> String {
    let name = cpp_name.strip_prefix("::").unwrap_or(cpp_name);
    let parts: Vec<&str> = name.split("::").collect();
    if parts.len() < 2 || parts.iter().any(|p| p.is_empty()) {
        return name.to_string();
    }
    let mut mangled = String::from("_ZN");
    for p in parts {
        mangled.push_str(&format!("{}{p}", p.len()));
    }
    mangled.push('E');
    mangled
}

pub struct Runtime<D: Device> {
    pub device: D,
    pub gpu: GpuDescription,
    config: Config,
    fatbins: Vec<FatbinRecord>,
    functions: HashMap<u64, KernelRef>,
    variables: HashMap<u64, VariableRef>,
    textures: HashMap<u64, TextureRef>,
    arrays: HashMap<u64, ArrayRecord>,
    texture_objects: HashSet<u64>,
    call_configs: Vec<CallConfig>,
    /// The cluster shape of the next launch (`cudaLaunchKernelEx`'s
    /// `cudaLaunchAttributeClusterDimension`), taken by [`Runtime::launch`].
    pub next_launch_cluster: Option<[u32; 3]>,
    /// Kernels (host stubs) allowed clusters above the portable 8 CTAs
    /// (`cudaFuncAttributeNonPortableClusterSizeAllowed`).
    pub nonportable_clusters: HashSet<u64>,
    last_error: CudaError,
    sticky: Option<CudaError>,
    records: Vec<KernelRecord>,
    /// Wall-clock seconds spent in launches.
    launch_seconds: f64,
    /// Stray kernel accesses that succeeded, in the order reported.
    memory_warnings: Vec<MemoryWarning>,
    /// The GPU config the device simulates, once loaded.
    gpu_selection: Option<GpuSelection>,
    /// Why the device could not be created: sticky for the whole process, even across
    /// `cudaDeviceReset`.
    init_error: Option<CudaError>,
    next_handle: u64,
    streams: HashMap<u64, ()>,
    events: HashMap<u64, Option<EventTime>>,
    current_device: i32,
    /// Where diagnostics go; stderr in the library, a buffer in tests.
    log: Box<dyn FnMut(&str) + Send>,
    /// Why the run ended early (a run limit stopped a kernel, a signal, a timeout in host
    /// code): the statistics are marked incomplete with it.
    incomplete: Option<String>,
    /// A run limit stopped a kernel: the process must end (the library's exports do).
    stopped: bool,
}

impl<D: Device> Runtime<D> {
    pub fn new(device: D, config: Config) -> Runtime<D> {
        Runtime::with_log(
            device,
            config,
            Box::new(|line: &str| {
                let _ = writeln!(std::io::stderr(), "{line}");
            }),
        )
    }

    pub fn with_log(device: D, config: Config, mut log: Box<dyn FnMut(&str) + Send>) -> Runtime<D> {
        for warning in &config.warnings {
            log(&format!("regsim: {warning}"));
        }
        Runtime {
            device,
            gpu: GpuDescription::default(),
            config,
            fatbins: Vec::new(),
            functions: HashMap::new(),
            variables: HashMap::new(),
            textures: HashMap::new(),
            arrays: HashMap::new(),
            texture_objects: HashSet::new(),
            call_configs: Vec::new(),
            next_launch_cluster: None,
            nonportable_clusters: HashSet::new(),
            last_error: CudaError::Success,
            sticky: None,
            records: Vec::new(),
            launch_seconds: 0.0,
            memory_warnings: Vec::new(),
            gpu_selection: None,
            init_error: None,
            next_handle: 1,
            streams: HashMap::new(),
            events: HashMap::new(),
            current_device: 0,
            log,
            incomplete: None,
            stopped: false,
        }
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    pub fn records(&self) -> &[KernelRecord] {
        &self.records
    }

    /// The device simulates `selection`: `cudaGetDeviceProperties` describes it.
    pub fn set_gpu(&mut self, selection: GpuSelection) {
        self.gpu = GpuDescription::from_config(&selection.name, &selection.config);
        self.gpu_selection = Some(selection);
    }

    /// The device could not be created (`why` is one line): every call that needs the
    /// device fails with `cudaErrorNoDevice` from now on.
    pub fn fail_device(&mut self, why: &str) {
        self.say(&format!("regsim: {why}"));
        self.init_error = Some(CudaError::NoDevice);
        self.sticky = self.init_error;
        self.last_error = CudaError::NoDevice;
    }

    fn say(&mut self, line: &str) {
        (self.log)(line);
    }

    // ----- errors -------------------------------------------------------------------

    /// Records the outcome of a call as CUDA does and returns its code.
    pub fn finish<T>(&mut self, result: CudaResult<T>) -> CudaResult<T> {
        if let Err(e) = result {
            self.last_error = e;
        }
        result
    }

    /// Fails with the sticky error, if a kernel has faulted.
    pub fn check_sticky(&self) -> CudaResult<()> {
        self.sticky.map_or(Ok(()), Err)
    }

    /// `cudaGetLastError`: returns and clears the last error (a sticky one stays).
    pub fn take_last_error(&mut self) -> CudaError {
        let e = self.last_error;
        self.last_error = self.sticky.unwrap_or(CudaError::Success);
        e
    }

    pub fn peek_last_error(&self) -> CudaError {
        self.last_error
    }

    pub fn reset(&mut self) {
        self.sticky = self.init_error;
        self.last_error = self.init_error.unwrap_or(CudaError::Success);
        self.call_configs.clear();
    }

    fn device_error(&mut self, e: DeviceError) -> CudaError {
        let code = e.cuda_error();
        match &e {
            DeviceError::Fault(fault) => {
                let mut fault = (**fault).clone();
                fault.kernel = stats::demangle(&fault.kernel);
                fault.function = fault.function.map(|f| stats::demangle(&f));
                let line = format!("regsim: kernel fault: {fault}");
                self.say(&line);
                self.sticky = Some(code);
                self.last_error = code;
            }
            DeviceError::Simulation { message, .. } => {
                let line = format!("regsim: {message}");
                self.say(&line);
                self.sticky = Some(code);
                self.last_error = code;
            }
            DeviceError::Unavailable(_) | DeviceError::BadModule(_) => {
                let line = format!("regsim: {e}");
                self.say(&line);
            }
            _ => {}
        }
        code
    }

    // ----- registration -------------------------------------------------------------

    /// `__cudaRegisterFatBinary` with the container bytes; returns the handle index.
    pub fn register_fatbin(&mut self, container: &[u8]) -> usize {
        let target = self.gpu.arch;
        let mut ptx_arch = None;
        let ptx = FatBinary::parse(container)
            .map_err(|e| e.to_string())
            .and_then(|fb| {
                let choice = fb.select_ptx(target).map_err(|e| e.to_string())?;
                let arch = choice.entry.arch;
                ptx_arch = Some(arch);
                let text = choice.entry.ptx_text().map_err(|e| e.to_string())?;
                if choice.newer_than_target {
                    self.say(&format!(
                        "regsim: warning: the program has no PTX for compute_{target} or older; \
                     running its compute_{arch} PTX"
                    ));
                }
                Ok(text)
            });
        self.fatbins.push(FatbinRecord {
            ptx,
            ptx_arch,
            module: None,
        });
        self.fatbins.len() - 1
    }

    /// The driver API's `cuModuleLoadData`: a module from PTX text (what a program that
    /// compiles kernels at run time loads) or a fatbinary container, loaded at once so that
    /// bad PTX fails here as it does on a GPU. Returns the module's index.
    pub fn load_module_image(&mut self, image: ModuleImage<'_>) -> CudaResult<usize> {
        self.check_sticky()?;
        let index = match image {
            ModuleImage::Ptx(text) => {
                self.fatbins.push(FatbinRecord {
                    ptx: Ok(text.to_string()),
                    ptx_arch: ptx_target_arch(text),
                    module: None,
                });
                self.fatbins.len() - 1
            }
            ModuleImage::Fatbin(container) => self.register_fatbin(container),
        };
        self.module(index)?;
        Ok(index)
    }

    /// The driver API's `cuModuleGetFunction`: a new handle for kernel `name` of module
    /// `module`, launched like a registered host stub.
    pub fn module_function(&mut self, module: usize, name: &str) -> CudaResult<u64> {
        if !self.module(module)?.signatures.contains_key(name) {
            return Err(CudaError::InvalidSymbol);
        }
        let handle = self.new_handle();
        self.register_function(module, handle, name.to_string());
        Ok(handle)
    }

    pub fn register_function(&mut self, fatbin: usize, host_fn: u64, name: String) {
        self.functions.insert(host_fn, KernelRef { fatbin, name });
    }

    pub fn register_variable(&mut self, fatbin: usize, host_var: u64, name: String, size: usize) {
        self.variables
            .insert(host_var, VariableRef { fatbin, name, size });
    }

    /// The PTX chosen for a registered fatbinary (for diagnostics and tests).
    pub fn ptx(&self, fatbin: usize) -> Option<&str> {
        self.fatbins.get(fatbin).and_then(|f| f.ptx.as_deref().ok())
    }

    fn module(&mut self, fatbin: usize) -> CudaResult<&LoadedModule> {
        let record = self
            .fatbins
            .get(fatbin)
            .ok_or(CudaError::InvalidResourceHandle)?;
        if record.module.is_none() {
            let loaded = match &record.ptx {
                Err(msg) => {
                    let msg = format!("regsim: {msg}");
                    self.say(&msg);
                    Err(CudaError::NoKernelImageForDevice)
                }
                Ok(text) => {
                    let text = text.clone();
                    self.load(&text)
                }
            };
            self.fatbins[fatbin].module = Some(loaded);
        }
        match &self.fatbins[fatbin].module {
            Some(Ok(m)) => Ok(m),
            Some(Err(e)) => Err(*e),
            None => Err(CudaError::Unknown),
        }
    }

    fn load(&mut self, text: &str) -> CudaResult<LoadedModule> {
        let signatures = match kernel_abi::kernel_signatures(text) {
            Ok(s) => s,
            Err(e) => {
                self.say(&format!("regsim: {e}"));
                return Err(CudaError::InvalidPtx);
            }
        };
        let id = self
            .device
            .load_module(text)
            .map_err(|e| self.device_error(e))?;
        // As ptxas refuses to compile it, a module with a kernel whose own `.shared` or
        // `.local` arrays no block or thread may have is refused: every CTA of any kernel
        // of the module allocates the module's shared layout, and a warp its kernel's
        // frame 32 times (4 GiB of `.shared` in one kernel aborted the launch of another).
        let mut names: Vec<&String> = signatures.keys().collect();
        names.sort();
        for name in names {
            let Ok(r) = self.device.kernel_resources(id, name) else {
                continue;
            };
            let local_limit = emu::exec::Limits::default().local_bytes_per_thread;
            let max_shared = self.gpu.shared_mem_per_block_optin as usize;
            let reason = if r.shared_bytes > max_shared {
                format!(
                    "{} bytes of static shared memory (`.shared`) per block, more than the \
                     {max_shared} the GPU has",
                    r.shared_bytes
                )
            } else if r.local_bytes as u64 > local_limit {
                format!(
                    "{} bytes of local memory (`.local`) per thread, more than the \
                     {local_limit} a thread may have",
                    r.local_bytes
                )
            } else {
                continue;
            };
            self.say(&format!(
                "regsim: kernel {}: module refused: {reason} (ptxas refuses such a kernel)",
                stats::demangle(name)
            ));
            return Err(CudaError::InvalidPtx);
        }
        Ok(LoadedModule { id, signatures })
    }

    // ----- launches -----------------------------------------------------------------

    pub fn push_call_config(&mut self, config: CallConfig) {
        self.call_configs.push(config);
    }

    pub fn pop_call_config(&mut self) -> CudaResult<CallConfig> {
        self.call_configs
            .pop()
            .ok_or(CudaError::MissingConfiguration)
    }

    /// `cudaLaunchKernel`. `read_arg(i, size)` returns the bytes of argument `i`.
    pub fn launch(
        &mut self,
        host_fn: u64,
        grid: Dim3,
        block: Dim3,
        shared_bytes: usize,
        mut read_arg: impl FnMut(usize, usize) -> Option<Vec<u8>>,
    ) -> CudaResult<()> {
        let asked_cluster = self.next_launch_cluster.take();
        self.check_sticky()?;
        let kernel = self
            .functions
            .get(&host_fn)
            .cloned()
            .ok_or(CudaError::InvalidDeviceFunction)?;
        let module = self.module(kernel.fatbin)?;
        let module_id = module.id;
        // A launch the GPU refuses gets one line naming the kernel and the reason.
        let resources = self.device.kernel_resources(module_id, &kernel.name).ok();
        let nonportable = self.nonportable_clusters.contains(&host_fn);
        if let Err((code, reason)) = self
            .check_launch_config(grid, block, shared_bytes, resources)
            .and_then(|()| self.check_cluster(grid, asked_cluster, resources, nonportable))
        {
            let line = format!(
                "regsim: kernel {} grid {grid} block {block}: launch refused: {reason}",
                stats::demangle(&kernel.name)
            );
            self.say(&line);
            return Err(code);
        }
        let module = self.module(kernel.fatbin)?;
        let signature = module
            .signatures
            .get(&kernel.name)
            .cloned()
            .ok_or(CudaError::InvalidDeviceFunction)?;

        let mut params = vec![0u8; signature.size];
        for (i, slot) in signature.params.iter().enumerate() {
            let bytes = read_arg(i, slot.size).ok_or(CudaError::InvalidValue)?;
            let dst = params
                .get_mut(slot.offset..slot.offset + slot.size)
                .ok_or(CudaError::InvalidValue)?;
            dst.copy_from_slice(bytes.get(..slot.size).ok_or(CudaError::InvalidValue)?);
        }

        let launch = Launch {
            module: module_id,
            kernel: &kernel.name,
            grid,
            block,
            dynamic_shared_bytes: shared_bytes,
            params: &params,
            cluster: asked_cluster,
        };
        let started = Instant::now();
        let result = self.device.launch(&launch);
        self.launch_seconds += started.elapsed().as_secs_f64();
        for w in self.device.take_memory_warnings() {
            let line = w.line();
            self.say(&line);
            self.memory_warnings.push(w);
        }
        match result {
            Ok(stats) => {
                let record = KernelRecord {
                    name: stats::demangle(&kernel.name),
                    mangled: kernel.name.clone(),
                    grid,
                    block,
                    stats,
                };
                let line = record.summary_line();
                self.say(&line);
                self.records.push(record);
                Ok(())
            }
            // The kernel's statistics up to the stop are kept; the run ends.
            Err(DeviceError::Stopped { message, stats }) => {
                self.records.push(KernelRecord {
                    name: stats::demangle(&kernel.name),
                    mangled: kernel.name.clone(),
                    grid,
                    block,
                    stats: *stats,
                });
                self.say(&format!("regsim: run stopped: {message}"));
                self.mark_incomplete(message);
                self.stopped = true;
                self.sticky = Some(CudaError::LaunchFailure);
                self.last_error = CudaError::LaunchFailure;
                Err(CudaError::LaunchFailure)
            }
            // A fault is reported by the next call, as on a real GPU; the launch itself
            // was accepted. So is a launch the timing model could not complete.
            Err(e @ (DeviceError::Fault(_) | DeviceError::Simulation { .. })) => {
                self.device_error(e);
                Ok(())
            }
            Err(e) => Err(self.device_error(e)),
        }
    }

    /// Why the GPU would refuse a launch of this shape: the CUDA error and a reason.
    /// The CUDA runtime's checks of a launch with thread-block clusters (CUDA C++
    /// Programming Guide, "Thread Block Clusters"): clusters need compute capability
    /// 9.0; a launch attribute and a compiled-in `__cluster_dims__` must agree; a cluster
    /// holds at most 8 CTAs (portable), 16 when the kernel allows non-portable sizes
    /// (sm_90's limit); the grid is a whole number of clusters.
    fn check_cluster(
        &self,
        grid: Dim3,
        asked: Option<[u32; 3]>,
        resources: Option<KernelResources>,
        nonportable: bool,
    ) -> Result<(), (CudaError, String)> {
        let declared = resources.and_then(|r| r.cluster);
        let Some(shape) = asked.or(declared) else {
            return Ok(());
        };
        let refuse = |reason: String| Err((CudaError::InvalidClusterSize, reason));
        if self.gpu.arch < 90 {
            return Err((
                CudaError::NotSupported,
                format!(
                    "thread-block clusters ({}x{}x{} CTAs) need compute capability 9.0 or \
                     newer; this GPU is {}.{}",
                    shape[0],
                    shape[1],
                    shape[2],
                    self.gpu.arch / 10,
                    self.gpu.arch % 10
                ),
            ));
        }
        if let (Some(a), Some(d)) = (asked, declared) {
            if a != d {
                return refuse(format!(
                    "the launch asks for clusters of {}x{}x{} CTAs, the kernel is compiled \
                     with __cluster_dims__({}, {}, {})",
                    a[0], a[1], a[2], d[0], d[1], d[2]
                ));
            }
        }
        let size: u64 = shape.iter().map(|&c| u64::from(c)).product();
        let limit = if nonportable { 16 } else { 8 };
        if size == 0 || size > limit {
            return refuse(format!(
                "a cluster of {}x{}x{} = {size} CTAs; the limit is {limit}{}",
                shape[0],
                shape[1],
                shape[2],
                if nonportable {
                    ""
                } else {
                    " (16 with cudaFuncAttributeNonPortableClusterSizeAllowed)"
                }
            ));
        }
        let g = [grid.x, grid.y, grid.z];
        if (0..3).any(|i| !g[i].is_multiple_of(shape[i])) {
            return refuse(format!(
                "grid {grid} is not a whole number of {}x{}x{} clusters",
                shape[0], shape[1], shape[2]
            ));
        }
        Ok(())
    }

    fn check_launch_config(
        &self,
        grid: Dim3,
        block: Dim3,
        shared_bytes: usize,
        resources: Option<KernelResources>,
    ) -> Result<(), (CudaError, String)> {
        let refuse = |reason: String| Err((CudaError::InvalidConfiguration, reason));
        let dims_ok = |d: Dim3, max: [u32; 3]| d.x <= max[0] && d.y <= max[1] && d.z <= max[2];
        if grid.count() == 0 || block.count() == 0 {
            return refuse("zero-sized grid or block".into());
        }
        if !dims_ok(grid, MAX_GRID_DIM) {
            let [x, y, z] = MAX_GRID_DIM;
            return refuse(format!("grid exceeds the maximum ({x},{y},{z})"));
        }
        if !dims_ok(block, MAX_BLOCK_DIM) {
            let [x, y, z] = MAX_BLOCK_DIM;
            return refuse(format!("block exceeds the maximum ({x},{y},{z})"));
        }
        let threads = block.count();
        if threads > u64::from(self.gpu.max_threads_per_block) {
            return refuse(format!(
                "{threads} threads per block, more than the {} the GPU allows",
                self.gpu.max_threads_per_block
            ));
        }
        let static_shared = resources.map_or(0, |r| r.shared_bytes);
        let shared = static_shared.saturating_add(shared_bytes);
        if shared > self.gpu.shared_mem_per_block_optin as usize {
            return refuse(format!(
                "{shared} bytes of shared memory per block ({static_shared} static, \
                 {shared_bytes} dynamic), more than the {} the GPU has",
                self.gpu.shared_mem_per_block_optin
            ));
        }
        let local = resources.map_or(0, |r| r.local_bytes) as u64;
        let local_limit = emu::exec::Limits::default().local_bytes_per_thread;
        if local > local_limit {
            return Err((
                CudaError::LaunchOutOfResources,
                format!(
                    "{local} bytes of local memory (`.local`) per thread, more than the \
                     {local_limit} a thread may have"
                ),
            ));
        }
        if let Some(regs) = resources.and_then(|r| r.registers) {
            let needed = u64::from(regs) * threads;
            if needed > u64::from(self.gpu.regs_per_block) {
                return Err((
                    CudaError::LaunchOutOfResources,
                    format!(
                        "{regs} registers per thread x {threads} threads = {needed} registers, \
                         more than the {} a block may use",
                        self.gpu.regs_per_block
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Marks the run incomplete (the first reason given is kept): the statistics say
    /// `"complete": false` and why.
    pub fn mark_incomplete(&mut self, reason: String) {
        self.incomplete.get_or_insert(reason);
    }

    /// Whether a run limit stopped a kernel: the run must end now, with the statistics
    /// written ([`Runtime::finish_process`]).
    pub fn stopped(&self) -> bool {
        self.stopped
    }

    /// The statistics of the run so far.
    pub fn run_stats(&self) -> serde_json::Value {
        let report = self.device.timing_report();
        self.stats_view(report.as_ref()).to_json()
    }

    fn stats_view<'a>(&'a self, report: Option<&'a timing::Report>) -> RunStats<'a> {
        RunStats {
            mode: self.config.mode,
            gpu: self.gpu_selection.as_ref(),
            records: &self.records,
            report,
            launch_seconds: self.launch_seconds,
            memory_warnings: &self.memory_warnings,
            incomplete: self.incomplete.as_deref(),
        }
    }

    /// At process exit: writes the stats file and prints the summary, if asked for.
    pub fn finish_process(&mut self) {
        let profile = self.device.profile_report();
        let report = self.device.timing_report();
        let view = self.stats_view(report.as_ref());
        let mut lines = Vec::new();
        if let Some(path) = &self.config.stats_path {
            let mut json = view.to_json();
            if let Some(p) = &profile {
                p.add_to(&mut json);
            }
            let text = serde_json::to_string_pretty(&json).unwrap_or_default();
            if let Err(e) = std::fs::write(path, text + "\n") {
                lines.push(format!(
                    "regsim: cannot write stats to {}: {e}",
                    path.display()
                ));
            }
        }
        if self.config.summary {
            lines.push(view.summary().trim_end().to_string());
            if let Some(p) = &profile {
                lines.push(p.summary().trim_end().to_string());
            }
        }
        for line in lines {
            self.say(&line);
        }
    }

    /// Whether launches run on the timing model.
    pub fn mode(&self) -> Mode {
        self.config.mode
    }

    // ----- memory -------------------------------------------------------------------

    pub fn malloc(&mut self, size: usize, kind: AllocKind) -> CudaResult<u64> {
        self.check_sticky()?;
        self.device
            .malloc(size, kind)
            .map_err(|e| self.device_error(e))
    }

    pub fn free(&mut self, ptr: u64) -> CudaResult<()> {
        self.check_sticky()?;
        if ptr == 0 {
            return Ok(());
        }
        self.device.free(ptr).map_err(|_| CudaError::InvalidValue)
    }

    /// Fails with `cudaErrorInvalidValue` unless `[ptr, ptr+len)` is device memory.
    pub fn check_device_range(&self, ptr: u64, len: usize) -> CudaResult<()> {
        self.check_sticky()?;
        if self.is_device(ptr, len) {
            Ok(())
        } else {
            Err(CudaError::InvalidValue)
        }
    }

    fn is_device(&self, ptr: u64, len: usize) -> bool {
        self.device.check_range(ptr, len).is_ok()
    }

    /// Where the runtime reads or writes `[ptr, ptr+len)`: the device's host bytes when
    /// the range is device memory, else `ptr` itself, a host pointer, unless the caller's
    /// copy kind says it must be device memory or it lies in the simulated address space
    /// (where no host pointer can be, as with unified addressing).
    fn bytes_at(&self, ptr: u64, len: usize, must_be_device: bool) -> CudaResult<*mut u8> {
        match self.device.host_bytes(ptr, len) {
            Ok(p) => Ok(p),
            Err(_) if !must_be_device && !emu::memory::address_space::contains(ptr) => {
                Ok(ptr as *mut u8)
            }
            Err(_) => Err(CudaError::InvalidValue),
        }
    }

    /// `cudaMemcpy`. Any pointer into device memory is translated (unified addressing),
    /// whatever the kind; a side the kind names as device must be device memory.
    ///
    /// # Safety
    /// Host-side pointers must be valid for `len` bytes, as CUDA requires of its callers.
    pub unsafe fn memcpy(
        &mut self,
        dst: u64,
        src: u64,
        len: usize,
        kind: CopyKind,
    ) -> CudaResult<()> {
        self.check_sticky()?;
        if len == 0 {
            return Ok(());
        }
        if dst == 0 || src == 0 {
            return Err(CudaError::InvalidValue);
        }
        let (dst_dev, src_dev) = match kind {
            CopyKind::HostToHost => (false, false),
            CopyKind::HostToDevice => (true, false),
            CopyKind::DeviceToHost => (false, true),
            CopyKind::DeviceToDevice => (true, true),
            CopyKind::Default => (false, false),
        };
        let d = self.bytes_at(dst, len, dst_dev)?;
        let s = self.bytes_at(src, len, src_dev)?;
        // SAFETY: device ranges were checked against live allocations and translated;
        // host ranges are the caller's promise. `copy` tolerates overlap.
        unsafe { std::ptr::copy(s, d, len) };
        let host_to_device = match kind {
            CopyKind::HostToDevice => true,
            CopyKind::Default => self.is_device(dst, len) && !self.is_device(src, len),
            _ => false,
        };
        if host_to_device {
            self.device.host_wrote(dst, len);
        }
        Ok(())
    }

    /// Tells the device that the host wrote `[dst, dst+len)` of device memory by a path
    /// other than [`Runtime::memcpy`] with a host-to-device kind (a 2D copy's rows).
    pub fn host_wrote(&mut self, dst: u64, len: usize) {
        self.device.host_wrote(dst, len);
    }

    /// `cudaMemset` on device memory.
    pub fn memset(&mut self, dst: u64, value: u8, len: usize) -> CudaResult<()> {
        self.check_sticky()?;
        if len == 0 {
            return Ok(());
        }
        let p = self.bytes_at(dst, len, true)?;
        // SAFETY: the range lies inside a live allocation.
        unsafe { std::ptr::write_bytes(p, value, len) };
        Ok(())
    }

    /// Checks a pitched/2D region: `height` rows of `width` bytes, `pitch` apart.
    pub fn check_2d(&self, ptr: u64, pitch: usize, width: usize, height: usize) -> CudaResult<()> {
        if height == 0 || width == 0 {
            return Ok(());
        }
        let span = pitch
            .checked_mul(height - 1)
            .and_then(|s| s.checked_add(width))
            .ok_or(CudaError::InvalidValue)?;
        self.device
            .check_range(ptr, span)
            .map_err(|_| CudaError::InvalidValue)
    }

    // ----- symbols ------------------------------------------------------------------

    /// Device address and size of the `__device__`/`__constant__` variable whose host
    /// shadow is at `host_var`.
    pub fn symbol(&mut self, host_var: u64) -> CudaResult<(u64, usize)> {
        self.check_sticky()?;
        let var = self
            .variables
            .get(&host_var)
            .cloned()
            .ok_or(CudaError::InvalidSymbol)?;
        let module = self.module(var.fatbin)?.id;
        let addr = self
            .device
            .symbol_address(module, &var.name, var.size)
            .map_err(|e| self.device_error(e))?;
        Ok((addr, var.size))
    }

    // ----- streams and events -------------------------------------------------------

    fn new_handle(&mut self) -> u64 {
        let h = self.next_handle;
        self.next_handle += 1;
        h
    }

    pub fn stream_create(&mut self) -> u64 {
        let h = self.new_handle();
        self.streams.insert(h, ());
        h
    }

    pub fn stream_destroy(&mut self, stream: u64) -> CudaResult<()> {
        self.streams
            .remove(&stream)
            .map(|_| ())
            .ok_or(CudaError::InvalidResourceHandle)
    }

    /// Stream 0 (legacy), 1 and 2 (the per-thread default streams) and created streams.
    pub fn check_stream(&self, stream: u64) -> CudaResult<()> {
        if stream <= 2 || self.streams.contains_key(&stream) {
            Ok(())
        } else {
            Err(CudaError::InvalidResourceHandle)
        }
    }

    pub fn event_create(&mut self) -> u64 {
        let h = self.new_handle();
        self.events.insert(h, None);
        h
    }

    pub fn event_record(&mut self, event: u64) -> CudaResult<()> {
        let now = match self.device.simulated_ms() {
            Some(ms) => EventTime::Simulated { ms },
            None => EventTime::Wall(Instant::now()),
        };
        let slot = self
            .events
            .get_mut(&event)
            .ok_or(CudaError::InvalidResourceHandle)?;
        *slot = Some(now);
        Ok(())
    }

    pub fn event_check(&self, event: u64) -> CudaResult<()> {
        self.events
            .get(&event)
            .map(|_| ())
            .ok_or(CudaError::InvalidResourceHandle)
    }

    /// Milliseconds between two recorded events: simulated time in timing mode, host
    /// wall-clock time in functional mode.
    pub fn event_elapsed(&self, start: u64, end: u64) -> CudaResult<f32> {
        let s = self
            .events
            .get(&start)
            .ok_or(CudaError::InvalidResourceHandle)?;
        let e = self
            .events
            .get(&end)
            .ok_or(CudaError::InvalidResourceHandle)?;
        match (s, e) {
            (Some(EventTime::Wall(s)), Some(EventTime::Wall(e))) => {
                Ok(e.saturating_duration_since(*s).as_secs_f32() * 1000.0)
            }
            (Some(EventTime::Simulated { ms: s }), Some(EventTime::Simulated { ms: e })) => {
                Ok((e - s).max(0.0) as f32)
            }
            _ => Err(CudaError::InvalidResourceHandle),
        }
    }

    pub fn event_destroy(&mut self, event: u64) -> CudaResult<()> {
        self.events
            .remove(&event)
            .map(|_| ())
            .ok_or(CudaError::InvalidResourceHandle)
    }

    // ----- textures and arrays ------------------------------------------------------

    /// `__cudaRegisterTexture`. `read_normalized` is the template's read mode
    /// (`cudaReadModeNormalizedFloat`), which the program cannot change later. nvcc passes
    /// the C++ name (`::tex`, `::ns::tex`), not the PTX one.
    pub fn register_texture(&mut self, host_ref: u64, name: &str, read_normalized: bool) {
        self.textures.insert(
            host_ref,
            TextureRef {
                name: ptx_texture_name(name),
                read_normalized,
                binding: None,
            },
        );
    }

    pub fn array_create(
        &mut self,
        format: ArrayFormat,
        width: usize,
        height: usize,
    ) -> CudaResult<u64> {
        let elem = tex::texel_bytes(format)?;
        let row_bytes = width.checked_mul(elem).ok_or(CudaError::InvalidValue)?;
        let size = row_bytes
            .checked_mul(height.max(1))
            .ok_or(CudaError::MemoryAllocation)?;
        let data = self.malloc(size, AllocKind::Device)?;
        let handle = self.new_handle();
        self.arrays.insert(
            handle,
            ArrayRecord {
                format,
                width,
                height: height.max(1),
                row_bytes,
                data,
            },
        );
        Ok(handle)
    }

    pub fn array_destroy(&mut self, handle: u64) -> CudaResult<()> {
        let array = self
            .arrays
            .remove(&handle)
            .ok_or(CudaError::InvalidResourceHandle)?;
        self.free(array.data)
    }

    /// (data address, bytes per row, rows) of an array.
    pub fn array_layout(&self, handle: u64) -> CudaResult<(u64, usize, usize)> {
        let a = self
            .arrays
            .get(&handle)
            .ok_or(CudaError::InvalidResourceHandle)?;
        Ok((a.data, a.row_bytes, a.height))
    }

    pub fn array_format(&self, handle: u64) -> CudaResult<ArrayFormat> {
        self.arrays
            .get(&handle)
            .map(|a| a.format)
            .ok_or(CudaError::InvalidResourceHandle)
    }

    /// The array's format and texel layout.
    fn array_texels(&self, handle: u64) -> CudaResult<(ArrayFormat, TexelLayout)> {
        let a = self
            .arrays
            .get(&handle)
            .ok_or(CudaError::InvalidResourceHandle)?;
        Ok((
            a.format,
            TexelLayout {
                base: a.data,
                width: a.width,
                height: a.height,
                pitch: a.row_bytes,
            },
        ))
    }

    /// Linear memory as texels: `pitch2d` = (width, height, pitch) for 2D bindings, else
    /// one row of `size` bytes.
    fn linear_texels(
        &self,
        ptr: u64,
        format: ArrayFormat,
        size: usize,
        pitch2d: Option<(usize, usize, usize)>,
    ) -> CudaResult<TexelLayout> {
        let texel = tex::texel_bytes(format)?;
        let (width, height, pitch) = pitch2d.unwrap_or((size / texel, 1, size));
        let row = width.checked_mul(texel).ok_or(CudaError::InvalidValue)?;
        if row > pitch {
            return Err(CudaError::InvalidPitchValue);
        }
        self.check_2d(ptr, pitch, row, height)?;
        Ok(TexelLayout {
            base: ptr,
            width,
            height,
            pitch,
        })
    }

    /// `cudaBindTexture(2D)`: `sampler` holds the reference's attributes as the program set
    /// them (its read mode is overridden by the one registered).
    pub fn bind_texture_linear(
        &mut self,
        texref: u64,
        ptr: u64,
        format: ArrayFormat,
        sampler: Sampler,
        size: usize,
        pitch2d: Option<(usize, usize, usize)>,
    ) -> CudaResult<()> {
        self.check_sticky()?;
        let layout = self.linear_texels(ptr, format, size, pitch2d)?;
        self.bind_reference(
            texref,
            format,
            sampler,
            layout,
            TextureBinding::Linear { ptr, size, pitch2d },
        )
    }

    pub fn bind_texture_array(
        &mut self,
        texref: u64,
        array: u64,
        sampler: Sampler,
    ) -> CudaResult<()> {
        self.check_sticky()?;
        let (format, layout) = self.array_texels(array)?;
        self.bind_reference(
            texref,
            format,
            sampler,
            layout,
            TextureBinding::Array(array),
        )
    }

    fn bind_reference(
        &mut self,
        texref: u64,
        format: ArrayFormat,
        sampler: Sampler,
        layout: TexelLayout,
        record: TextureBinding,
    ) -> CudaResult<()> {
        let tex = self
            .textures
            .get_mut(&texref)
            .ok_or(CudaError::InvalidTexture)?;
        let sampler = Sampler {
            read_normalized: tex.read_normalized,
            ..sampler
        };
        let binding = tex::binding(format, &sampler, layout)?;
        tex.binding = Some(record);
        let name = tex.name.clone();
        self.device
            .bind_texture(TextureTarget::Reference(&name), Some(binding))
            .map_err(|e| self.device_error(e))
    }

    pub fn unbind_texture(&mut self, texref: u64) -> CudaResult<()> {
        let tex = self
            .textures
            .get_mut(&texref)
            .ok_or(CudaError::InvalidTexture)?;
        tex.binding = None;
        let name = tex.name.clone();
        self.device
            .bind_texture(TextureTarget::Reference(&name), None)
            .map_err(|e| self.device_error(e))
    }

    pub fn texture_binding(&self, texref: u64) -> Option<&TextureBinding> {
        self.textures.get(&texref).and_then(|t| t.binding.as_ref())
    }

    /// `cudaCreateTextureObject`.
    pub fn texture_object_create(
        &mut self,
        resource: TextureResource,
        sampler: Sampler,
    ) -> CudaResult<u64> {
        self.check_sticky()?;
        let (format, layout) = match resource {
            TextureResource::Array(a) => self.array_texels(a)?,
            TextureResource::Linear { ptr, format, size } => {
                (format, self.linear_texels(ptr, format, size, None)?)
            }
            TextureResource::Pitch2D {
                ptr,
                format,
                width,
                height,
                pitch,
            } => (
                format,
                self.linear_texels(ptr, format, 0, Some((width, height, pitch)))?,
            ),
        };
        let binding = tex::binding(format, &sampler, layout)?;
        let h = self.new_handle();
        self.device
            .bind_texture(TextureTarget::Object(h), Some(binding))
            .map_err(|e| self.device_error(e))?;
        self.texture_objects.insert(h);
        Ok(h)
    }

    pub fn texture_object_destroy(&mut self, handle: u64) -> CudaResult<()> {
        if !self.texture_objects.remove(&handle) {
            return Err(CudaError::InvalidValue);
        }
        self.device
            .bind_texture(TextureTarget::Object(handle), None)
            .map_err(|e| self.device_error(e))
    }

    // ----- functions ----------------------------------------------------------------

    /// Static resources of the kernel registered for `host_fn` (`cudaFuncGetAttributes`).
    pub fn kernel_resources(&mut self, host_fn: u64) -> CudaResult<KernelResources> {
        self.check_sticky()?;
        let kernel = self
            .functions
            .get(&host_fn)
            .cloned()
            .ok_or(CudaError::InvalidDeviceFunction)?;
        let module = self.module(kernel.fatbin)?.id;
        self.device
            .kernel_resources(module, &kernel.name)
            .map_err(|e| self.device_error(e))
    }

    /// The compute capability of the PTX the kernel registered for `host_fn` was loaded
    /// from (`cudaFuncAttributes::ptxVersion`), when its fatbinary or `.target` says.
    pub fn kernel_ptx_arch(&self, host_fn: u64) -> Option<u32> {
        let kernel = self.functions.get(&host_fn)?;
        self.fatbins.get(kernel.fatbin)?.ptx_arch
    }

    pub fn check_function(&self, host_fn: u64) -> CudaResult<()> {
        self.check_sticky()?;
        self.functions
            .get(&host_fn)
            .map(|_| ())
            .ok_or(CudaError::InvalidDeviceFunction)
    }

    /// Resident blocks per SM of the kernel registered for `host_fn` at a block size
    /// (`cudaOccupancyMaxActiveBlocksPerMultiprocessor`). With a GPU config, exactly what
    /// the timing model allows (threads, warps, CTAs, shared memory and the kernel's
    /// registers from the simulator's allocator); without one, threads, blocks and
    /// dynamic shared memory of the device description.
    pub fn occupancy(
        &mut self,
        host_fn: u64,
        block_size: i32,
        dynamic_shared: usize,
    ) -> CudaResult<i32> {
        self.check_function(host_fn)?;
        let threads = u32::try_from(block_size)
            .ok()
            .filter(|&t| t > 0 && t <= self.gpu.max_threads_per_block)
            .ok_or(CudaError::InvalidValue)?;
        let blocks = match self.gpu_selection.clone() {
            Some(selection) => {
                let res = self.kernel_resources(host_fn)?;
                let shape = timing::occupancy::CtaShape {
                    threads,
                    registers_per_thread: res.registers.unwrap_or(0),
                    shared_bytes: (res.shared_bytes + dynamic_shared) as u64,
                };
                timing::occupancy::occupancy(&selection.config, shape).ctas_per_sm
            }
            None => {
                let warps = threads.div_ceil(32);
                let by_threads = (self.gpu.max_threads_per_sm / 32) / warps;
                let by_shared = (self.gpu.shared_mem_per_sm as usize)
                    .checked_div(dynamic_shared)
                    .map_or(u32::MAX, |b| u32::try_from(b).unwrap_or(u32::MAX));
                by_threads.min(self.gpu.max_blocks_per_sm).min(by_shared)
            }
        };
        Ok(i32::try_from(blocks).unwrap_or(i32::MAX))
    }

    /// `(largest cluster, clusters resident at once)` for the kernel registered for
    /// `host_fn` at a block shape (`cudaOccupancyMaxPotentialClusterSize`,
    /// `cudaOccupancyMaxActiveClusters`), by the timing model's co-scheduling rule: a
    /// cluster is resident on the SMs of one GPC (`gpu.gpc_sms`; without a GPU config,
    /// one GPC of every SM), spread over them, and each SM holds the kernel's
    /// `occupancy` CTAs. So a GPC of `s` SMs holds `floor(s · ctas_per_sm / size)`
    /// clusters of `size` CTAs, the GPU their sum over GPCs; the largest cluster is the
    /// portable 8 (16 with non-portable sizes allowed), or fewer if the largest GPC holds
    /// fewer CTAs. `cluster` is the launch's cluster dimension attribute: it must agree
    /// with a shape compiled into the kernel; without either there is no count (`None`).
    pub fn cluster_occupancy(
        &mut self,
        host_fn: u64,
        block: Dim3,
        dynamic_shared: usize,
        cluster: Option<[u32; 3]>,
    ) -> CudaResult<(i32, Option<i32>)> {
        let threads = i32::try_from(block.count()).map_err(|_| CudaError::InvalidValue)?;
        let ctas_per_sm =
            u64::try_from(self.occupancy(host_fn, threads, dynamic_shared)?).unwrap_or(0);
        let resources = self.kernel_resources(host_fn)?;
        let nonportable = self.nonportable_clusters.contains(&host_fn);
        let gpc_sms: Vec<u64> = match &self.gpu_selection {
            Some(selection) => selection
                .config
                .gpu
                .gpcs()
                .iter()
                .map(|g| g.len() as u64)
                .collect(),
            None => vec![u64::from(self.gpu.sm_count)],
        };
        let limit: u64 = if nonportable { 16 } else { 8 };
        let largest = gpc_sms.iter().copied().max().unwrap_or(0) * ctas_per_sm;
        let potential = limit.min(largest);
        let Some(shape) = cluster.or(resources.cluster) else {
            return Ok((potential as i32, None));
        };
        let whole = Dim3 {
            x: shape[0],
            y: shape[1],
            z: shape[2],
        };
        self.check_cluster(whole, cluster, Some(resources), nonportable)
            .map_err(|(code, _)| code)?;
        let size: u64 = shape.iter().map(|&c| u64::from(c)).product();
        let active: u64 = gpc_sms.iter().map(|s| s * ctas_per_sm / size).sum();
        Ok((
            potential as i32,
            Some(i32::try_from(active).unwrap_or(i32::MAX)),
        ))
    }

    // ----- devices ------------------------------------------------------------------

    pub fn set_device(&mut self, device: i32) -> CudaResult<()> {
        if device != 0 {
            return Err(CudaError::InvalidDevice);
        }
        self.current_device = device;
        Ok(())
    }

    pub fn current_device(&self) -> i32 {
        self.current_device
    }
}

/// The compute capability a PTX module's `.target` directive names (`sm_80`, `sm_90a`:
/// 80, 90), for PTX text loaded without a fatbinary's architecture field.
fn ptx_target_arch(text: &str) -> Option<u32> {
    let line = text
        .lines()
        .map(str::trim_start)
        .find(|l| l.starts_with(".target"))?;
    let sm = line
        .split([' ', '\t', ','])
        .find_map(|w| w.strip_prefix("sm_"))?;
    let digits: String = sm.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::device::{FaultKind, HostDevice, KernelFault, KernelStats};

    /// HostDevice memory plus a scripted launch result and a log of launches.
    struct ScriptedDevice {
        host: HostDevice,
        launches: Launches,
        fault: bool,
        /// Launches end as if a run limit stopped them.
        stop: bool,
        /// `Device::host_wrote` calls, in order.
        host_writes: Vec<(u64, usize)>,
    }

    impl Device for ScriptedDevice {
        fn malloc(&mut self, size: usize, kind: AllocKind) -> Result<u64, DeviceError> {
            self.host.malloc(size, kind)
        }
        fn free(&mut self, ptr: u64) -> Result<(), DeviceError> {
            self.host.free(ptr)
        }
        fn check_range(&self, ptr: u64, len: usize) -> Result<(), DeviceError> {
            self.host.check_range(ptr, len)
        }
        fn host_bytes(&self, ptr: u64, len: usize) -> Result<*mut u8, DeviceError> {
            self.host.host_bytes(ptr, len)
        }
        fn host_wrote(&mut self, ptr: u64, len: usize) {
            self.host_writes.push((ptr, len));
        }
        fn load_module(&mut self, ptx: &str) -> Result<ModuleId, DeviceError> {
            self.host.load_module(ptx)
        }
        fn symbol_address(
            &mut self,
            m: ModuleId,
            name: &str,
            size: usize,
        ) -> Result<u64, DeviceError> {
            self.host.symbol_address(m, name, size)
        }
        fn launch(&mut self, launch: &Launch<'_>) -> Result<KernelStats, DeviceError> {
            self.launches
                .lock()
                .unwrap()
                .push((launch.kernel.to_string(), launch.params.to_vec()));
            if self.fault {
                return Err(DeviceError::Fault(Box::new(KernelFault {
                    kind: FaultKind::IllegalAddress,
                    kernel: launch.kernel.to_string(),
                    function: None,
                    ptx_line: Some(17),
                    instruction: Some("st.global.u32 [%rd4], %r1;".to_string()),
                    cta: Dim3 { x: 3, y: 0, z: 0 },
                    thread: Some(Dim3 { x: 5, y: 0, z: 0 }),
                    address: Some(0xdead),
                    detail: "load from unallocated memory".to_string(),
                })));
            }
            let stats = KernelStats {
                warp_instructions: 12,
                thread_instructions: 345,
                timing: None,
            };
            if self.stop {
                return Err(DeviceError::Stopped {
                    message: "kernel k stopped at cycle 9: the cycle limit (10 cycles) was \
                              reached; 2 warps live"
                        .to_string(),
                    stats: Box::new(stats),
                });
            }
            Ok(stats)
        }
        fn bind_texture(
            &mut self,
            target: TextureTarget<'_>,
            binding: Option<emu::TextureBinding>,
        ) -> Result<(), DeviceError> {
            self.host.bind_texture(target, binding)
        }
        fn kernel_resources(
            &mut self,
            module: ModuleId,
            kernel: &str,
        ) -> Result<KernelResources, DeviceError> {
            self.host.kernel_resources(module, kernel)
        }
    }

    const PTX: &str = ".version 7.8\n.target sm_70\n.address_size 64\n\
        .visible .entry _Z1kifPf(.param .u32 p0, .param .f32 p1, .param .u64 p2)\n{\n ret;\n}\n";

    fn container(ptx: &str) -> Vec<u8> {
        let payload: Vec<u8> = ptx.bytes().chain([0]).collect();
        let padded = payload.len().next_multiple_of(8);
        let mut e = Vec::new();
        e.extend_from_slice(&1u16.to_le_bytes());
        e.extend_from_slice(&0x0101u16.to_le_bytes());
        e.extend_from_slice(&0x40u32.to_le_bytes());
        e.extend_from_slice(&(padded as u64).to_le_bytes());
        e.extend_from_slice(&[0; 8]);
        e.extend_from_slice(&8u16.to_le_bytes());
        e.extend_from_slice(&7u16.to_le_bytes());
        e.extend_from_slice(&70u32.to_le_bytes());
        e.extend_from_slice(&[0; 8]);
        e.extend_from_slice(&0x11u64.to_le_bytes());
        e.extend_from_slice(&[0; 16]);
        e.extend_from_slice(&payload);
        e.resize(0x40 + padded, 0);
        let mut c = Vec::new();
        c.extend_from_slice(&crate::fatbin::CONTAINER_MAGIC.to_le_bytes());
        c.extend_from_slice(&1u16.to_le_bytes());
        c.extend_from_slice(&16u16.to_le_bytes());
        c.extend_from_slice(&(e.len() as u64).to_le_bytes());
        c.extend_from_slice(&e);
        c
    }

    type Log = Arc<Mutex<Vec<String>>>;
    type Launches = Arc<Mutex<Vec<(String, Vec<u8>)>>>;

    fn runtime(fault: bool) -> (Runtime<ScriptedDevice>, Log, Launches) {
        let log: Log = Arc::default();
        let launches: Launches = Arc::default();
        let sink = log.clone();
        let dev = ScriptedDevice {
            host: HostDevice::new(),
            launches: launches.clone(),
            fault,
            stop: false,
            host_writes: Vec::new(),
        };
        let rt = Runtime::with_log(
            dev,
            Config::default(),
            Box::new(move |l: &str| sink.lock().unwrap().push(l.to_string())),
        );
        (rt, log, launches)
    }

    fn args(values: Vec<Vec<u8>>) -> impl FnMut(usize, usize) -> Option<Vec<u8>> {
        move |i, _| values.get(i).cloned()
    }

    const GRID: Dim3 = Dim3 { x: 2, y: 1, z: 1 };
    const BLOCK: Dim3 = Dim3 { x: 64, y: 1, z: 1 };

    #[test]
    fn launch_packs_parameters_and_records_stats() {
        let (mut rt, log, launches) = runtime(false);
        let fb = rt.register_fatbin(&container(PTX));
        rt.register_function(fb, 0x1000, "_Z1kifPf".to_string());
        let a = vec![7u8, 0, 0, 0];
        let b = 1.5f32.to_le_bytes().to_vec();
        let c = 0x1122334455667788u64.to_le_bytes().to_vec();
        rt.launch(0x1000, GRID, BLOCK, 0, args(vec![a, b, c]))
            .unwrap();
        let launched = launches.lock().unwrap();
        assert_eq!(launched[0].0, "_Z1kifPf");
        let mut expected = vec![7, 0, 0, 0];
        expected.extend_from_slice(&1.5f32.to_le_bytes());
        expected.extend_from_slice(&0x1122334455667788u64.to_le_bytes());
        assert_eq!(launched[0].1, expected);
        assert_eq!(rt.records().len(), 1);
        assert_eq!(rt.records()[0].stats.thread_instructions, 345);
        assert_eq!(log.lock().unwrap()[0], "regsim: kernel k(int, float, float*) grid (2,1,1) block (64,1,1): 12 warp instructions, 345 thread instructions");
        assert_eq!(rt.records()[0].mangled, "_Z1kifPf");
    }

    #[test]
    fn occupancy_follows_the_gpu_config() {
        let (mut rt, _, _) = runtime(false);
        let fb = rt.register_fatbin(&container(PTX));
        rt.register_function(fb, 0x1000, "_Z1kifPf".to_string());
        // The default description (a V100): 2048 threads per SM.
        assert_eq!(rt.occupancy(0x1000, 256, 0), Ok(8));
        let selection = Config {
            gpu: Some("gtx480".into()),
            ..Config::default()
        }
        .gpu_selection()
        .unwrap();
        rt.set_gpu(selection);
        assert_eq!(rt.gpu.sm_count, 15);
        // gtx480: 1536 threads, 48 KB of shared memory per SM.
        assert_eq!(rt.occupancy(0x1000, 256, 0), Ok(6));
        assert_eq!(rt.occupancy(0x1000, 256, 20_000), Ok(2));
        assert_eq!(rt.occupancy(0x1000, 2048, 0), Err(CudaError::InvalidValue));
        assert_eq!(
            rt.occupancy(0x2000, 256, 0),
            Err(CudaError::InvalidDeviceFunction)
        );
    }

    #[test]
    fn cluster_occupancy_follows_the_gpc_rule() {
        let (mut rt, _, _) = runtime(false);
        let fb = rt.register_fatbin(&container(PTX));
        rt.register_function(fb, 0x1000, "_Z1kifPf".to_string());
        let selection = Config {
            gpu: Some("h100".into()),
            ..Config::default()
        }
        .gpu_selection()
        .unwrap();
        rt.set_gpu(selection);
        let block = |x| Dim3 { x, y: 1, z: 1 };
        // h100: GPCs of 18, 18 and six of 16 SMs (gpu.gpc_sms); 256-thread CTAs, 8 per
        // SM (2048 threads), 1024-thread CTAs 2 per SM.
        assert_eq!(rt.occupancy(0x1000, 256, 0), Ok(8));
        assert_eq!(rt.occupancy(0x1000, 1024, 0), Ok(2));
        // Clusters of 4 x 256: 144/4 = 36 per 18-SM GPC, 128/4 = 32 per 16-SM GPC.
        let q = |rt: &mut Runtime<_>, b, c| rt.cluster_occupancy(0x1000, block(b), 0, c);
        assert_eq!(
            q(&mut rt, 256, Some([4, 1, 1])),
            Ok((8, Some(2 * 36 + 6 * 32)))
        );
        assert_eq!(
            q(&mut rt, 256, Some([2, 2, 2])),
            Ok((8, Some(2 * 18 + 6 * 16)))
        );
        // 3 x 1024: 36/3 = 12 per big GPC, floor(32/3) = 10 per small one.
        assert_eq!(
            q(&mut rt, 1024, Some([3, 1, 1])),
            Ok((8, Some(2 * 12 + 6 * 10)))
        );
        // Without a cluster shape there is no count; above the portable 8 is refused.
        assert_eq!(q(&mut rt, 256, None), Ok((8, None)));
        assert_eq!(
            q(&mut rt, 256, Some([9, 1, 1])),
            Err(CudaError::InvalidClusterSize)
        );
        rt.nonportable_clusters.insert(0x1000);
        assert_eq!(
            q(&mut rt, 256, Some([16, 1, 1])),
            Ok((16, Some(2 * 9 + 6 * 8)))
        );
        // A GPU below compute capability 9.0 has no clusters.
        let gtx480 = Config {
            gpu: Some("gtx480".into()),
            ..Config::default()
        }
        .gpu_selection()
        .unwrap();
        rt.set_gpu(gtx480);
        assert_eq!(
            q(&mut rt, 256, Some([2, 1, 1])),
            Err(CudaError::NotSupported)
        );
    }

    #[test]
    fn ptx_version_of_a_kernel_is_its_ptx_target_not_the_gpu() {
        let (mut rt, _, _) = runtime(false);
        // The fatbinary's PTX is compute_70 whatever GPU runs it.
        let fb = rt.register_fatbin(&container(PTX));
        rt.register_function(fb, 0x1000, "_Z1kifPf".to_string());
        assert_eq!(rt.kernel_ptx_arch(0x1000), Some(70));
        assert_eq!(rt.kernel_ptx_arch(0x2000), None);
        // PTX text loaded by the driver API: its `.target`.
        let text = PTX.replace(".target sm_70", ".target sm_90a");
        let module = rt.load_module_image(ModuleImage::Ptx(&text)).unwrap();
        let handle = rt.module_function(module, "_Z1kifPf").unwrap();
        assert_eq!(rt.kernel_ptx_arch(handle), Some(90));
    }

    #[test]
    fn ptx_target_arch_reads_the_target_directive() {
        assert_eq!(ptx_target_arch(".version 8.5\n.target sm_80\n"), Some(80));
        assert_eq!(
            ptx_target_arch(".version 8.0\n  .target sm_90a, debug\n"),
            Some(90)
        );
        assert_eq!(ptx_target_arch(".version 8.0\n"), None);
        assert_eq!(ptx_target_arch(".target sm_\n"), None);
    }

    #[test]
    fn bad_configurations_and_unknown_functions() {
        let (mut rt, _, _) = runtime(false);
        let fb = rt.register_fatbin(&container(PTX));
        rt.register_function(fb, 0x1000, "_Z1kifPf".to_string());
        let big = Dim3 {
            x: 1025,
            y: 1,
            z: 1,
        };
        assert_eq!(
            rt.launch(0x1000, GRID, big, 0, args(vec![])),
            Err(CudaError::InvalidConfiguration)
        );
        assert_eq!(
            rt.launch(0x1000, Dim3 { x: 0, y: 1, z: 1 }, BLOCK, 0, args(vec![])),
            Err(CudaError::InvalidConfiguration)
        );
        assert_eq!(
            rt.launch(0x2000, GRID, BLOCK, 0, args(vec![])),
            Err(CudaError::InvalidDeviceFunction)
        );
        assert_eq!(rt.pop_call_config(), Err(CudaError::MissingConfiguration));
    }

    #[test]
    fn a_fault_is_sticky_until_reset() {
        let (mut rt, log, _) = runtime(true);
        let fb = rt.register_fatbin(&container(PTX));
        rt.register_function(fb, 0x1000, "_Z1kifPf".to_string());
        let zero = |_: usize, n: usize| Some(vec![0u8; n]);
        assert_eq!(rt.launch(0x1000, GRID, BLOCK, 0, zero), Ok(()));
        let msg = log.lock().unwrap().join("\n");
        assert!(
            msg.contains(
                "kernel k(int, float, float*), PTX line 17 (st.global.u32 [%rd4], %r1;), \
                 CTA (3,0,0), thread (5,0,0), address 0xdead"
            ),
            "{msg}"
        );
        assert_eq!(
            rt.malloc(16, AllocKind::Device),
            Err(CudaError::IllegalAddress)
        );
        assert_eq!(rt.take_last_error(), CudaError::IllegalAddress);
        assert_eq!(
            rt.take_last_error(),
            CudaError::IllegalAddress,
            "sticky errors are not cleared"
        );
        rt.reset();
        assert!(rt.malloc(16, AllocKind::Device).is_ok());
    }

    #[test]
    fn a_stopped_launch_keeps_its_statistics_and_marks_the_run_incomplete() {
        let (mut rt, log, _) = runtime(false);
        let fb = rt.register_fatbin(&container(PTX));
        rt.register_function(fb, 0x1000, "_Z1kifPf".to_string());
        let zero = |_: usize, n: usize| Some(vec![0u8; n]);
        assert_eq!(rt.launch(0x1000, GRID, BLOCK, 0, zero), Ok(()));
        assert!(!rt.stopped());
        assert_eq!(rt.run_stats()["complete"], true);
        rt.device.stop = true;
        assert_eq!(
            rt.launch(0x1000, GRID, BLOCK, 0, zero),
            Err(CudaError::LaunchFailure)
        );
        assert!(rt.stopped());
        let why = "kernel k stopped at cycle 9: the cycle limit (10 cycles) was reached; 2 \
                   warps live";
        assert_eq!(
            log.lock().unwrap().last().map(String::as_str),
            Some(format!("regsim: run stopped: {why}").as_str())
        );
        let json = rt.run_stats();
        assert_eq!(json["complete"], false);
        assert_eq!(json["incomplete_reason"], why);
        // The stopped kernel's figures so far are kept beside the completed one's.
        assert_eq!(json["kernels"].as_array().map(Vec::len), Some(2));
        assert_eq!(json["total"]["warp_instructions"], 24);
        // A later reason does not replace the first.
        rt.mark_incomplete("interrupted".into());
        assert_eq!(rt.run_stats()["incomplete_reason"], why);
        assert_eq!(
            rt.malloc(16, AllocKind::Device),
            Err(CudaError::LaunchFailure)
        );
    }

    #[test]
    fn program_without_ptx_gets_the_rebuild_message_once() {
        let (mut rt, log, _) = runtime(false);
        let mut c = container(PTX);
        c[16] = 2; // the only entry becomes a cubin
        let fb = rt.register_fatbin(&c);
        rt.register_function(fb, 0x1000, "_Z1kifPf".to_string());
        let zero = |_: usize, n: usize| Some(vec![0u8; n]);
        assert_eq!(
            rt.launch(0x1000, GRID, BLOCK, 0, zero),
            Err(CudaError::NoKernelImageForDevice)
        );
        assert_eq!(
            rt.launch(0x1000, GRID, BLOCK, 0, zero),
            Err(CudaError::NoKernelImageForDevice)
        );
        let lines = log.lock().unwrap();
        assert_eq!(lines.len(), 1);
        assert!(
            lines[0].contains("Rebuild it with PTX included"),
            "{}",
            lines[0]
        );
    }

    #[test]
    fn texture_references_get_their_ptx_names() {
        assert_eq!(ptx_texture_name("::tex_lin"), "tex_lin");
        assert_eq!(ptx_texture_name("tex_lin"), "tex_lin");
        assert_eq!(ptx_texture_name("::img::input"), "_ZN3img5inputE");
    }

    #[test]
    fn texture_bindings_reach_the_device() {
        let (mut rt, _, _) = runtime(false);
        rt.register_texture(0x40, "::tex", false);
        let d = rt.malloc(64, AllocKind::Device).unwrap();
        let f32x1 = ArrayFormat {
            bits: [32, 0, 0, 0],
            kind: 2,
        };
        let sampler = Sampler {
            filter_mode: 1,
            address_mode: [1, 1],
            ..Sampler::default()
        };
        rt.bind_texture_linear(0x40, d, f32x1, sampler, 64, None)
            .unwrap();
        let b = rt
            .device
            .host
            .texture(TextureTarget::Reference("tex"))
            .unwrap();
        assert_eq!((b.base, b.width, b.height), (d, 16, 1));
        assert_eq!(b.filter, emu::texture::FilterMode::Linear);
        assert_eq!(
            rt.bind_texture_linear(0x40, d, f32x1, sampler, 68, None),
            Err(CudaError::InvalidValue),
            "past the allocation"
        );
        rt.unbind_texture(0x40).unwrap();
        assert!(rt
            .device
            .host
            .texture(TextureTarget::Reference("tex"))
            .is_none());

        let obj = rt
            .texture_object_create(
                TextureResource::Pitch2D {
                    ptr: d,
                    format: f32x1,
                    width: 4,
                    height: 4,
                    pitch: 16,
                },
                Sampler::default(),
            )
            .unwrap();
        let b = rt.device.host.texture(TextureTarget::Object(obj)).unwrap();
        assert_eq!((b.width, b.height, b.pitch), (4, 4, 16));
        assert_eq!(
            rt.texture_object_create(
                TextureResource::Pitch2D {
                    ptr: d,
                    format: f32x1,
                    width: 5,
                    height: 4,
                    pitch: 16,
                },
                Sampler::default(),
            ),
            Err(CudaError::InvalidPitchValue)
        );
        rt.texture_object_destroy(obj).unwrap();
        assert!(rt.device.host.texture(TextureTarget::Object(obj)).is_none());
    }

    #[test]
    fn memcpy_checks_device_ranges() {
        let (mut rt, _, _) = runtime(false);
        let d = rt.malloc(64, AllocKind::Device).unwrap();
        let src = [1u8; 64];
        let mut back = [0u8; 64];
        unsafe {
            rt.memcpy(d, src.as_ptr() as u64, 64, CopyKind::HostToDevice)
                .unwrap();
            assert_eq!(
                rt.memcpy(d, src.as_ptr() as u64, 65, CopyKind::HostToDevice),
                Err(CudaError::InvalidValue)
            );
            rt.memset(d + 8, 9, 8).unwrap();
            rt.memcpy(back.as_mut_ptr() as u64, d, 64, CopyKind::DeviceToHost)
                .unwrap();
        }
        assert_eq!(back[7], 1);
        assert_eq!(back[8], 9);
        assert_eq!(back[16], 1);
        assert_eq!(rt.free(d + 1), Err(CudaError::InvalidValue));
        assert_eq!(rt.free(d), Ok(()));
        assert_eq!(rt.memset(d, 0, 1), Err(CudaError::InvalidValue));
    }

    #[test]
    fn host_to_device_copies_are_reported_to_the_device() {
        let (mut rt, _, _) = runtime(false);
        let d = rt.malloc(64, AllocKind::Device).unwrap();
        let e = rt.malloc(64, AllocKind::Device).unwrap();
        let src = [1u8; 64];
        let mut back = [0u8; 64];
        let host = src.as_ptr() as u64;
        unsafe {
            rt.memcpy(d, host, 64, CopyKind::HostToDevice).unwrap();
            rt.memcpy(d + 8, host, 16, CopyKind::Default).unwrap();
            rt.memcpy(e, d, 64, CopyKind::DeviceToDevice).unwrap();
            rt.memcpy(e, d, 32, CopyKind::Default).unwrap();
            rt.memcpy(back.as_mut_ptr() as u64, d, 64, CopyKind::DeviceToHost)
                .unwrap();
        }
        rt.memset(d, 0, 64).unwrap();
        assert_eq!(rt.device.host_writes, vec![(d, 64), (d + 8, 16)]);
    }
}

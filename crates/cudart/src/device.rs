//! What the runtime needs from the simulated GPU, behind one trait, and a host-only test
//! double that implements it.
//!
//! Device pointers are the device's own addresses (the emulator's fixed simulated layout,
//! `emu::memory::address_space`); the runtime copies to and from device memory through
//! the host bytes the device says are behind a range ([`Device::host_bytes`]). Memory the
//! host program dereferences itself (managed, pinned) is host memory at its device
//! address, so those pointers work on both sides. The test double here identity-maps
//! everything.

use std::alloc::{self, Layout};
use std::collections::{BTreeMap, HashMap};

use thiserror::Error;

use crate::error::CudaError;

#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

impl Dim3 {
    pub fn count(self) -> u64 {
        u64::from(self.x) * u64::from(self.y) * u64::from(self.z)
    }
}

impl std::fmt::Display for Dim3 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "({},{},{})", self.x, self.y, self.z)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ModuleId(pub u32);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AllocKind {
    Device,
    /// Page-locked host memory (`cudaMallocHost`, `cudaHostAlloc`): kernels may read it.
    PinnedHost,
    Managed,
}

/// One kernel launch, with its arguments already packed into the PTX parameter layout.
#[derive(Debug, Clone, Copy)]
pub struct Launch<'a> {
    pub module: ModuleId,
    pub kernel: &'a str,
    pub grid: Dim3,
    pub block: Dim3,
    pub dynamic_shared_bytes: usize,
    pub params: &'a [u8],
    /// The cluster shape `cudaLaunchKernelEx` asked for (`None`: the kernel's own
    /// `.reqnctapercluster`, or no clusters).
    pub cluster: Option<[u32; 3]>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct KernelStats {
    pub warp_instructions: u64,
    pub thread_instructions: u64,
    /// Everything the timing model measured (cycles, IPC, stalls, occupancy, register
    /// file, memory), in timing mode.
    pub timing: Option<Box<timing::KernelStats>>,
}

/// A kernel that went wrong while running: what a real GPU reports as a sticky error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelFault {
    pub kind: FaultKind,
    /// The kernel's name as the user wrote it (demangled) or, failing that, as in the PTX.
    pub kernel: String,
    /// The device function the fault happened in, when it is not the kernel itself.
    pub function: Option<String>,
    pub ptx_line: Option<u32>,
    /// The faulting PTX instruction's text.
    pub instruction: Option<String>,
    pub cta: Dim3,
    /// `None` when the fault belongs to no single thread (a barrier deadlock).
    pub thread: Option<Dim3>,
    pub address: Option<u64>,
    pub detail: String,
}

/// The class of a kernel fault, which decides the CUDA error the program sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// Out-of-bounds or unallocated access, shared/local overflow.
    IllegalAddress,
    MisalignedAddress,
    /// A failed device-side `assert()`.
    Assert,
    /// Everything else: `trap`, a barrier deadlock, an instruction the simulator does not
    /// execute, runaway recursion.
    LaunchFailure,
}

impl KernelFault {
    /// The code a real GPU reports for this kind of fault (CUDA 11.8 `driver_types.h`).
    pub fn cuda_error(&self) -> CudaError {
        match self.kind {
            FaultKind::IllegalAddress => CudaError::IllegalAddress,
            FaultKind::MisalignedAddress => CudaError::MisalignedAddress,
            FaultKind::Assert => CudaError::Assert,
            FaultKind::LaunchFailure => CudaError::LaunchFailure,
        }
    }
}

impl std::fmt::Display for KernelFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "kernel {}", self.kernel)?;
        if let Some(func) = &self.function {
            write!(f, ", in function {func}")?;
        }
        if let Some(line) = self.ptx_line {
            write!(f, ", PTX line {line}")?;
        }
        if let Some(text) = &self.instruction {
            write!(f, " ({text})")?;
        }
        write!(f, ", CTA {}", self.cta)?;
        if let Some(thread) = self.thread {
            write!(f, ", thread {thread}")?;
        }
        if let Some(addr) = self.address {
            write!(f, ", address {addr:#x}")?;
        }
        write!(f, ": {}", self.detail)
    }
}

#[derive(Debug, Error, Clone, PartialEq)]
pub enum DeviceError {
    #[error("out of device memory ({0} bytes requested)")]
    OutOfMemory(usize),
    #[error("{0:#x} is not a live device allocation")]
    NotAllocated(u64),
    #[error("{len} bytes at {ptr:#x} are not inside one device allocation")]
    OutOfBounds { ptr: u64, len: usize },
    #[error("PTX module does not load: {0}")]
    BadModule(String),
    #[error("kernel {0} is not in the module")]
    UnknownKernel(String),
    #[error("symbol {0} is not in the module")]
    UnknownSymbol(String),
    #[error("{0}")]
    Fault(Box<KernelFault>),
    #[error("{0} is not available in this build of the simulator")]
    Unavailable(&'static str),
    /// The timing model could not simulate the launch (a CTA that fits on no SM, or a
    /// model failure): a launch failure for the program, sticky like a fault.
    #[error("{message}")]
    Simulation { code: CudaError, message: String },
    /// A run limit (`REGSIM_MAX_CYCLES`, `REGSIM_MAX_INSTRUCTIONS`, `REGSIM_TIMEOUT`) or
    /// an interrupt stopped the kernel: `message` says which, where and what every live
    /// warp waits for; `stats` are the kernel's statistics up to the stop. The run ends.
    #[error("{message}")]
    Stopped {
        message: String,
        stats: Box<KernelStats>,
    },
}

impl DeviceError {
    pub fn cuda_error(&self) -> CudaError {
        match self {
            DeviceError::OutOfMemory(_) => CudaError::MemoryAllocation,
            DeviceError::NotAllocated(_) | DeviceError::OutOfBounds { .. } => {
                CudaError::InvalidValue
            }
            DeviceError::BadModule(_) => CudaError::InvalidPtx,
            DeviceError::UnknownKernel(_) => CudaError::InvalidDeviceFunction,
            DeviceError::UnknownSymbol(_) => CudaError::InvalidSymbol,
            DeviceError::Fault(f) => f.cuda_error(),
            DeviceError::Unavailable(_) => CudaError::NotSupported,
            DeviceError::Simulation { code, .. } => *code,
            DeviceError::Stopped { .. } => CudaError::LaunchFailure,
        }
    }
}

/// What a texture binding names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextureTarget<'a> {
    /// A legacy texture reference, by its PTX name (`.global .texref NAME`).
    Reference(&'a str),
    /// A texture object handle (`cudaCreateTextureObject`).
    Object(u64),
}

/// Static resources of one kernel (`cudaFuncGetAttributes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct KernelResources {
    /// Bytes of statically declared shared memory.
    pub shared_bytes: usize,
    /// Bytes of `.const` variables in the kernel's module.
    pub const_bytes: usize,
    /// Bytes of local memory per thread (the kernel's own frame).
    pub local_bytes: usize,
    /// Registers per thread, when the register allocator has assigned them.
    pub registers: Option<u32>,
    /// The cluster shape the kernel declares (`.reqnctapercluster`, `__cluster_dims__`).
    pub cluster: Option<[u32; 3]>,
}

/// A kernel access just outside an allocation that succeeded, where it happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryWarning {
    /// Demangled kernel name.
    pub kernel: String,
    pub ptx_line: u32,
    pub instruction: String,
    pub cta: [u32; 3],
    pub thread: Option<[u32; 3]>,
    /// What the access was (size, address, distance from the allocation).
    pub message: String,
    /// Bytes accessed.
    pub bytes: u64,
    /// The access's address minus the allocation's base (negative: before it).
    pub offset: i64,
    /// The allocation's size.
    pub allocation_bytes: u64,
}

impl MemoryWarning {
    /// The stderr line.
    pub fn line(&self) -> String {
        let [x, y, z] = self.cta;
        let thread = self
            .thread
            .map_or(String::new(), |[a, b, c]| format!(", thread ({a},{b},{c})"));
        format!(
            "regsim: memory warning: kernel {}, PTX line {} ({}), CTA ({x},{y},{z}){thread}: \
             {}; allowed as on a GPU (within 64 KB of an allocation), \
             `regsim run --strict-memory` makes it a fault",
            self.kernel, self.ptx_line, self.instruction, self.message
        )
    }

    /// The `memory_warnings` entry of the statistics (without host addresses, which differ
    /// from run to run).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "kernel": self.kernel,
            "ptx_line": self.ptx_line,
            "instruction": self.instruction,
            "cta": self.cta,
            "thread": self.thread,
            "bytes": self.bytes,
            "offset": self.offset,
            "allocation_bytes": self.allocation_bytes,
        })
    }
}

/// The simulated GPU as the runtime sees it.
pub trait Device {
    /// Allocates `size` bytes (at least 256-byte aligned, like cudaMalloc) and returns
    /// their device address; for managed and pinned memory that is also a host pointer to
    /// them.
    fn malloc(&mut self, size: usize, kind: AllocKind) -> Result<u64, DeviceError>;
    fn free(&mut self, ptr: u64) -> Result<(), DeviceError>;
    /// Whether `[ptr, ptr+len)` lies inside one live allocation.
    fn check_range(&self, ptr: u64, len: usize) -> Result<(), DeviceError>;
    /// The host bytes behind `[ptr, ptr+len)`, which must lie inside one live allocation:
    /// where the runtime copies to and from device memory. Valid until that allocation is
    /// freed.
    fn host_bytes(&self, ptr: u64, len: usize) -> Result<*mut u8, DeviceError>;
    fn load_module(&mut self, ptx: &str) -> Result<ModuleId, DeviceError>;
    /// Address of a `.global` / `.const` variable of the module; `size` is what the host
    /// registered for it.
    fn symbol_address(
        &mut self,
        module: ModuleId,
        name: &str,
        size: usize,
    ) -> Result<u64, DeviceError>;
    /// Runs a kernel to completion.
    fn launch(&mut self, launch: &Launch<'_>) -> Result<KernelStats, DeviceError>;
    /// Binds (`Some`) or unbinds (`None`) a texture for the kernels that sample it.
    fn bind_texture(
        &mut self,
        target: TextureTarget<'_>,
        binding: Option<emu::TextureBinding>,
    ) -> Result<(), DeviceError>;
    /// Static resources of a kernel of a loaded module.
    fn kernel_resources(
        &mut self,
        module: ModuleId,
        kernel: &str,
    ) -> Result<KernelResources, DeviceError>;
    /// The simulated clock in milliseconds since the device started, when the device
    /// models time (timing mode); `None` for a device without a clock.
    fn simulated_ms(&self) -> Option<f64> {
        None
    }
    /// The timing model's report over every launch so far, in timing mode.
    fn timing_report(&self) -> Option<timing::Report> {
        None
    }
    /// The host wrote `[ptr, ptr+len)` of device memory (a host-to-device copy), for a
    /// timing model that warms its caches with host copies; nothing by default.
    fn host_wrote(&mut self, _ptr: u64, _len: usize) {}
    /// Kernel accesses outside an allocation that succeeded (as on a GPU) since the last
    /// call, once per kernel and instruction.
    fn take_memory_warnings(&mut self) -> Vec<MemoryWarning> {
        Vec::new()
    }
    /// The profiles of the executed instructions, when they were asked for; at exit.
    fn profile_report(&mut self) -> Option<crate::profiling::ProfileReport> {
        None
    }
}

const ALLOC_ALIGN: usize = 256;

/// Memory only: real host allocations and a table of them, no kernel execution. It lets
/// the runtime's memory, registration and error paths be tested without the emulator.
#[derive(Debug, Default)]
pub struct HostDevice {
    allocations: BTreeMap<u64, usize>,
    modules: Vec<String>,
    symbols: HashMap<(ModuleId, String), u64>,
    references: HashMap<String, emu::TextureBinding>,
    objects: HashMap<u64, emu::TextureBinding>,
}

impl HostDevice {
    pub fn new() -> HostDevice {
        HostDevice::default()
    }

    pub fn module_text(&self, module: ModuleId) -> Option<&str> {
        self.modules.get(module.0 as usize).map(String::as_str)
    }

    /// What a texture is bound to.
    pub fn texture(&self, target: TextureTarget<'_>) -> Option<&emu::TextureBinding> {
        match target {
            TextureTarget::Reference(name) => self.references.get(name),
            TextureTarget::Object(h) => self.objects.get(&h),
        }
    }
}

impl Device for HostDevice {
    fn malloc(&mut self, size: usize, _kind: AllocKind) -> Result<u64, DeviceError> {
        // Zero-byte allocations still get a distinct address, as on CUDA.
        let layout = Layout::from_size_align(size.max(1), ALLOC_ALIGN)
            .map_err(|_| DeviceError::OutOfMemory(size))?;
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            return Err(DeviceError::OutOfMemory(size));
        }
        self.allocations.insert(ptr as u64, size);
        Ok(ptr as u64)
    }

    fn free(&mut self, ptr: u64) -> Result<(), DeviceError> {
        let size = self
            .allocations
            .remove(&ptr)
            .ok_or(DeviceError::NotAllocated(ptr))?;
        let layout = Layout::from_size_align(size.max(1), ALLOC_ALIGN)
            .map_err(|_| DeviceError::NotAllocated(ptr))?;
        // SAFETY: `ptr` came from `alloc_zeroed` with this layout and is freed only once,
        // because it has just been removed from the table.
        unsafe { alloc::dealloc(ptr as *mut u8, layout) };
        Ok(())
    }

    fn check_range(&self, ptr: u64, len: usize) -> Result<(), DeviceError> {
        let (&start, &size) = self
            .allocations
            .range(..=ptr)
            .next_back()
            .ok_or(DeviceError::OutOfBounds { ptr, len })?;
        let end = start.saturating_add(size as u64);
        if ptr.saturating_add(len as u64) <= end && (ptr < end || len == 0) {
            Ok(())
        } else {
            Err(DeviceError::OutOfBounds { ptr, len })
        }
    }

    fn host_bytes(&self, ptr: u64, len: usize) -> Result<*mut u8, DeviceError> {
        self.check_range(ptr, len)?;
        Ok(ptr as *mut u8)
    }

    fn load_module(&mut self, ptx: &str) -> Result<ModuleId, DeviceError> {
        self.modules.push(ptx.to_string());
        Ok(ModuleId(u32::try_from(self.modules.len() - 1).map_err(
            |_| DeviceError::BadModule("too many modules".into()),
        )?))
    }

    fn symbol_address(
        &mut self,
        module: ModuleId,
        name: &str,
        size: usize,
    ) -> Result<u64, DeviceError> {
        if let Some(&addr) = self.symbols.get(&(module, name.to_string())) {
            return Ok(addr);
        }
        let addr = self.malloc(size, AllocKind::Device)?;
        self.symbols.insert((module, name.to_string()), addr);
        Ok(addr)
    }

    fn launch(&mut self, _launch: &Launch<'_>) -> Result<KernelStats, DeviceError> {
        Err(DeviceError::Unavailable(
            "kernel execution (the functional emulator)",
        ))
    }

    fn bind_texture(
        &mut self,
        target: TextureTarget<'_>,
        binding: Option<emu::TextureBinding>,
    ) -> Result<(), DeviceError> {
        match (target, binding) {
            (TextureTarget::Reference(name), Some(b)) => {
                self.references.insert(name.to_string(), b);
            }
            (TextureTarget::Reference(name), None) => {
                self.references.remove(name);
            }
            (TextureTarget::Object(h), Some(b)) => {
                self.objects.insert(h, b);
            }
            (TextureTarget::Object(h), None) => {
                self.objects.remove(&h);
            }
        }
        Ok(())
    }

    fn kernel_resources(
        &mut self,
        _module: ModuleId,
        _kernel: &str,
    ) -> Result<KernelResources, DeviceError> {
        Ok(KernelResources::default())
    }
}

impl Drop for HostDevice {
    fn drop(&mut self) {
        let ptrs: Vec<u64> = self.allocations.keys().copied().collect();
        for ptr in ptrs {
            let _ = self.free(ptr);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_checked_against_allocations() {
        let mut dev = HostDevice::new();
        let a = dev.malloc(100, AllocKind::Device).unwrap();
        assert_eq!(a % 256, 0);
        assert!(dev.check_range(a, 100).is_ok());
        assert!(dev.check_range(a + 99, 1).is_ok());
        assert_eq!(
            dev.check_range(a + 50, 51),
            Err(DeviceError::OutOfBounds {
                ptr: a + 50,
                len: 51
            })
        );
        assert!(dev.check_range(a - 1, 1).is_err());
        dev.free(a).unwrap();
        assert!(dev.check_range(a, 1).is_err());
        assert_eq!(dev.free(a), Err(DeviceError::NotAllocated(a)));
    }
}

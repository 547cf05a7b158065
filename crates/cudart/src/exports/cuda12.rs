//! Entry points CUDA 12 programs import that CUDA 11.8's runtime lacked: the CUDA 12
//! `cudaDeviceProp` (`_v2`), nvcc 12's kernel-handle launch path (`__cudaGetKernel`,
//! `__cudaLaunchKernel`), `cudaLaunchKernelExC`, and the `_v2` forms of calls whose
//! arguments changed. The rest of CUDA 12.9's exports are in `unsupported_list.rs`.

use std::ffi::{c_int, c_uint, c_ulonglong, c_void};

use super::{call, cudaError_t, launch as call_launch, put, report_unsupported, ActiveDevice};
use crate::device::Dim3;
use crate::props::CudaDevicePropV12;
use crate::runtime::{CudaResult, Runtime};
use crate::soname::api_major;

/// `cudaRuntimeGetVersion`/`cudaDriverGetVersion` as the loaded soname's programs expect:
/// CUDA 11.8 as `libcudart.so.11.0`, CUDA 12.9 (the toolchain scripts/install-cuda12-
/// toolchain.sh assembles) as `libcudart.so.12`.
pub(super) fn cuda_version() -> c_int {
    if api_major() >= 12 {
        12090
    } else {
        11080
    }
}

cuda_fn!(fn cudaGetDeviceProperties_v2(rt, prop: *mut CudaDevicePropV12, device: c_int) {
    if device != 0 {
        return Err(crate::error::CudaError::InvalidDevice);
    }
    put(prop, rt.gpu.properties_v12())
});

/// `cudaGetDeviceProperties` of the CUDA 12 runtime: the program's struct has CUDA 12's
/// layout (CUDA 12 headers map the name to `_v2`, but clang's wrapper headers do not).
pub(super) fn device_properties_v12(
    rt: &mut Runtime<ActiveDevice>,
    prop: *mut CudaDevicePropV12,
) -> CudaResult<()> {
    // SAFETY: non-null out-pointers are valid for writes by the CUDA calling contract.
    unsafe { put(prop, rt.gpu.properties_v12()) }
}

// nvcc 12's launch stubs look a kernel up once (`__cudaGetKernel`) and launch the handle.
// A handle is the host stub's address, which is what the runtime registered.
cuda_fn!(fn __cudaGetKernel(rt, kernel: *mut *const c_void, func: *const c_void) {
    rt.check_function(func as u64)?;
    put(kernel, func)
});
cuda_fn!(fn cudaGetKernel(rt, kernel: *mut *const c_void, func: *const c_void) {
    rt.check_function(func as u64)?;
    put(kernel, func)
});
cuda_fn!(fn __cudaLaunchKernel(rt, kernel: *const c_void, grid: Dim3, block: Dim3, args: *mut *mut c_void, shared_mem: usize, stream: *mut c_void) {
    call_launch(rt, kernel, grid, block, args, shared_mem, stream)
});
cuda_fn!(fn __cudaLaunchKernel_ptsz(rt, kernel: *const c_void, grid: Dim3, block: Dim3, args: *mut *mut c_void, shared_mem: usize, stream: *mut c_void) {
    call_launch(rt, kernel, grid, block, args, shared_mem, stream)
});

/// `cudaLaunchConfig_t` (56 bytes).
#[repr(C)]
pub struct LaunchConfig {
    pub grid: Dim3,
    pub block: Dim3,
    pub dynamic_smem_bytes: usize,
    pub stream: *mut c_void,
    pub attrs: *const LaunchAttribute,
    pub num_attrs: c_uint,
}

/// `cudaLaunchAttribute`: the id, padding, and a 64-byte value union.
#[repr(C)]
pub struct LaunchAttribute {
    pub id: c_int,
    pub pad: [u8; 4],
    pub value: [u8; 64],
}

/// `cudaLaunchAttributeID`s that are hints a synchronous, single-stream simulator may
/// ignore without changing results: access policy window (1), synchronization policy (3),
/// cluster scheduling policy (5), programmatic stream serialization (6: launches run one
/// after another anyway), priority (8), memory sync domain map and domain (9, 10),
/// preferred shared-memory carve-out (14). Cluster dimensions (4) set the launch's cluster
/// shape; cooperative launch (2) and the rest are refused, naming the attribute.
fn harmless_attribute(id: c_int) -> bool {
    matches!(id, 1 | 3 | 5 | 6 | 8 | 9 | 10 | 14)
}

/// The cluster shape among `num` launch attributes at `attrs` (`None` without one).
/// With `launching`, an attribute that would change what a launch does and that regsim
/// does not model is refused, naming `caller` and the attribute (an occupancy query
/// ignores the others).
///
/// # Safety
/// `attrs` is null or points at `num` attributes (`cudaLaunchAttribute` and
/// `CUlaunchAttribute` have one layout).
pub(super) unsafe fn cluster_attribute(
    attrs: *const LaunchAttribute,
    num: c_uint,
    caller: &str,
    launching: bool,
) -> CudaResult<Option<[u32; 3]>> {
    let mut cluster = None;
    if attrs.is_null() {
        return Ok(None);
    }
    for i in 0..num as usize {
        // SAFETY: `attrs` holds `num` entries.
        let attr = unsafe { &*attrs.add(i) };
        let id = attr.id;
        if id == CLUSTER_DIMENSION {
            // `clusterDim`: three unsigned ints at the start of the value union.
            let word = |k: usize| {
                let b = &attr.value[4 * k..4 * k + 4];
                u32::from_le_bytes([b[0], b[1], b[2], b[3]])
            };
            cluster = Some([word(0), word(1), word(2)]);
            continue;
        }
        if launching && !harmless_attribute(id) {
            report_unsupported(&format!("{caller} with launch attribute {id}"));
            return Err(crate::error::CudaError::NotSupported);
        }
    }
    Ok(cluster)
}

/// A launch with attributes (`cudaLaunchKernelExC`, and the driver's `cuLaunchKernelEx`
/// through the same path): the cluster dimension sets the launch's cluster shape.
///
/// # Safety
/// As [`cluster_attribute`]; `args` as for `cudaLaunchKernel`.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn launch_with_attributes(
    rt: &mut Runtime<ActiveDevice>,
    caller: &str,
    func: *const c_void,
    grid: Dim3,
    block: Dim3,
    dynamic_smem_bytes: usize,
    stream: *mut c_void,
    (attrs, num_attrs): (*const LaunchAttribute, c_uint),
    args: *mut *mut c_void,
) -> CudaResult<()> {
    rt.next_launch_cluster = unsafe { cluster_attribute(attrs, num_attrs, caller, true)? };
    let result = unsafe { call_launch(rt, func, grid, block, args, dynamic_smem_bytes, stream) };
    // A launch refused before the runtime took the shape must not pass it on.
    rt.next_launch_cluster = None;
    result
}

unsafe fn launch_ex(
    rt: &mut Runtime<ActiveDevice>,
    config: *const LaunchConfig,
    func: *const c_void,
    args: *mut *mut c_void,
) -> CudaResult<()> {
    if config.is_null() {
        return Err(crate::error::CudaError::InvalidValue);
    }
    // SAFETY: a non-null config points at a cudaLaunchConfig_t.
    let c = unsafe { &*config };
    unsafe {
        launch_with_attributes(
            rt,
            "cudaLaunchKernelExC",
            func,
            c.grid,
            c.block,
            c.dynamic_smem_bytes,
            c.stream,
            (c.attrs, c.num_attrs),
            args,
        )
    }
}

/// `cudaOccupancyMaxActiveClusters` and `cudaOccupancyMaxPotentialClusterSize` from a
/// launch configuration (`Runtime::cluster_occupancy`).
unsafe fn cluster_occupancy(
    rt: &mut Runtime<ActiveDevice>,
    func: *const c_void,
    config: *const LaunchConfig,
    caller: &str,
) -> CudaResult<(i32, Option<i32>)> {
    if config.is_null() {
        return Err(crate::error::CudaError::InvalidValue);
    }
    // SAFETY: a non-null config points at a cudaLaunchConfig_t.
    let c = unsafe { &*config };
    let cluster = unsafe { cluster_attribute(c.attrs, c.num_attrs, caller, false)? };
    rt.cluster_occupancy(func as u64, c.block, c.dynamic_smem_bytes, cluster)
}

cuda_fn!(fn cudaOccupancyMaxActiveClusters(rt, clusters: *mut c_int, func: *const c_void, config: *const LaunchConfig) {
    let (_, active) = unsafe { cluster_occupancy(rt, func, config, "cudaOccupancyMaxActiveClusters")? };
    put(clusters, active.ok_or(crate::error::CudaError::InvalidClusterSize)?)
});
cuda_fn!(fn cudaOccupancyMaxPotentialClusterSize(rt, size: *mut c_int, func: *const c_void, config: *const LaunchConfig) {
    let (potential, _) = unsafe { cluster_occupancy(rt, func, config, "cudaOccupancyMaxPotentialClusterSize")? };
    put(size, potential)
});

/// `cudaLaunchAttributeClusterDimension`.
const CLUSTER_DIMENSION: c_int = 4;

cuda_fn!(fn cudaLaunchKernelExC(rt, config: *const LaunchConfig, func: *const c_void, args: *mut *mut c_void) {
    launch_ex(rt, config, func, args)
});
cuda_fn!(fn cudaLaunchKernelExC_ptsz(rt, config: *const LaunchConfig, func: *const c_void, args: *mut *mut c_void) {
    launch_ex(rt, config, func, args)
});

cuda_fn!(fn cudaEventElapsedTime_v2(rt, ms: *mut f32, start: *mut c_void, end: *mut c_void) {
    put(ms, rt.event_elapsed(start as u64, end as u64)?)
});

/// `cudaMemLocation` (passed by value): a type and an id.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct MemLocation {
    pub kind: c_int,
    pub id: c_int,
}

// Unified-memory hints: nothing to move (host and device share the bytes); the range is
// checked as CUDA does.
cuda_fn!(fn cudaMemPrefetchAsync_v2(rt, dev_ptr: *const c_void, count: usize, _location: MemLocation, _flags: c_uint, stream: *mut c_void) {
    rt.check_stream(stream as u64)?;
    rt.check_device_range(dev_ptr as u64, count)
});
cuda_fn!(fn cudaMemPrefetchAsync_v2_ptsz(rt, dev_ptr: *const c_void, count: usize, _location: MemLocation, _flags: c_uint, stream: *mut c_void) {
    rt.check_stream(stream as u64)?;
    rt.check_device_range(dev_ptr as u64, count)
});
cuda_fn!(fn cudaMemAdvise_v2(rt, dev_ptr: *const c_void, count: usize, _advice: c_int, _location: MemLocation) {
    rt.check_device_range(dev_ptr as u64, count)
});

cuda_fn!(fn cudaInitDevice(rt, device: c_int, _device_flags: c_uint, _flags: c_uint) {
    rt.set_device(device)
});
cuda_fn!(fn cudaStreamGetId(rt, stream: *mut c_void, id: *mut c_ulonglong) {
    rt.check_stream(stream as u64)?;
    put(id, stream as c_ulonglong)
});
cuda_fn!(fn cudaStreamGetId_ptsz(rt, stream: *mut c_void, id: *mut c_ulonglong) {
    rt.check_stream(stream as u64)?;
    put(id, stream as c_ulonglong)
});
cuda_fn!(fn cudaStreamGetDevice(rt, stream: *mut c_void, device: *mut c_int) {
    rt.check_stream(stream as u64)?;
    put(device, rt.current_device())
});
cuda_fn!(fn cudaStreamGetDevice_ptsz(rt, stream: *mut c_void, device: *mut c_int) {
    rt.check_stream(stream as u64)?;
    put(device, rt.current_device())
});

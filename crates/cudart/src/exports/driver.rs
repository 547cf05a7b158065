//! The driver API (`libcuda.so.1`) that programs compiling or loading their kernels at run
//! time use: initialization, the device, one context, modules from PTX text or a
//! fatbinary (`cuModuleLoadData(Ex)`), functions, memory, launches and streams. `regsim
//! run` gives the program this same file as `libcuda.so.1`, so driver and runtime calls
//! share one [`Runtime`] and device (docs/cuda12.md).
//!
//! Results are `CUresult` codes ([`cu_result`]); the runtime API's last error is not
//! touched. Every other driver function is absent: a program that links one fails to
//! load with the loader naming it, and `cuGetProcAddress`/`cudaGetDriverEntryPoint`
//! return no address for it.

use std::ffi::{c_char, c_int, c_uint, c_ulonglong, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use super::{
    call, cudaError_t, hook, launch, panic_message, put, report_unsupported, with_runtime,
    ActiveDevice,
};
use crate::device::{AllocKind, Dim3};
use crate::error::CudaError;
use crate::fatbin;
use crate::runtime::{CopyKind, CudaResult, ModuleImage, Runtime};

pub type CUresult = c_int;

/// The `CUresult` for a runtime error: the same number where the two enums agree, else
/// the driver's name for the condition.
pub fn cu_result(e: CudaError) -> CUresult {
    match e {
        CudaError::InitializationError => 3,
        CudaError::InvalidConfiguration
        | CudaError::InvalidPitchValue
        | CudaError::InvalidHostPointer
        | CudaError::InvalidDevicePointer
        | CudaError::InvalidTexture
        | CudaError::InvalidChannelDescriptor
        | CudaError::InvalidMemcpyDirection
        | CudaError::MissingConfiguration => 1,
        CudaError::InvalidSymbol => 500,
        CudaError::InvalidDeviceFunction => 400,
        other => other.code(),
    }
}

static INITIALIZED: AtomicBool = AtomicBool::new(false);

/// The one context: a stable, unique address.
static PRIMARY_CONTEXT: u8 = 0;
fn primary_context() -> u64 {
    &PRIMARY_CONTEXT as *const u8 as u64
}
/// The calling thread's current context (one for the process: programs use one thread).
static CURRENT: AtomicU64 = AtomicU64::new(0);
static PUSHED: Mutex<Vec<u64>> = Mutex::new(Vec::new());

/// Runs a driver call's body under the runtime's lock with panics contained.
fn cu_call(
    name: &str,
    body: impl FnOnce(&mut Runtime<ActiveDevice>) -> CudaResult<()>,
) -> CUresult {
    // Tensor maps are plain data: a runtime-API program encodes them without cuInit, as
    // the runtime has initialised the driver.
    let needs_init = !matches!(
        name,
        "cuInit"
            | "cuDriverGetVersion"
            | "cuTensorMapEncodeTiled"
            | "cuTensorMapEncodeIm2col"
            | "cuTensorMapReplaceAddress"
    );
    if needs_init && !INITIALIZED.load(Ordering::SeqCst) {
        return 3; // CUDA_ERROR_NOT_INITIALIZED
    }
    match catch_unwind(AssertUnwindSafe(|| with_runtime(body))) {
        Ok(Ok(())) => 0,
        Ok(Err(e)) => cu_result(e),
        Err(payload) => {
            eprintln!(
                "regsim: internal error in {name}: {}",
                panic_message(payload.as_ref())
            );
            999
        }
    }
}

macro_rules! cu_fn {
    (fn $name:ident($rt:ident $(, $arg:ident : $ty:ty)* $(,)?) $body:block) => {
        #[no_mangle]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> CUresult {
            cu_call(stringify!($name), |$rt| {
                #[allow(unused_unsafe)]
                unsafe { $body }
            })
        }
    };
}

fn device_zero(device: c_int) -> CudaResult<()> {
    if device == 0 {
        Ok(())
    } else {
        Err(CudaError::InvalidDevice)
    }
}

// ----- initialization and the device ----------------------------------------------------

cu_fn!(fn cuInit(_rt, _flags: c_uint) {
    INITIALIZED.store(true, Ordering::SeqCst);
    Ok(())
});
cu_fn!(fn cuDriverGetVersion(_rt, version: *mut c_int) { put(version, super::cuda12::cuda_version()) });
cu_fn!(fn cuDeviceGetCount(_rt, count: *mut c_int) { put(count, 1) });
cu_fn!(fn cuDeviceGet(_rt, device: *mut c_int, ordinal: c_int) {
    device_zero(ordinal)?;
    put(device, 0)
});
cu_fn!(fn cuDeviceGetName(rt, name: *mut c_char, len: c_int, device: c_int) {
    device_zero(device)?;
    let len = usize::try_from(len).map_err(|_| CudaError::InvalidValue)?;
    if name.is_null() || len == 0 {
        return Err(CudaError::InvalidValue);
    }
    let bytes = rt.gpu.name.as_bytes();
    let n = bytes.len().min(len - 1);
    // SAFETY: `name` holds `len` bytes by the API's contract.
    std::ptr::copy_nonoverlapping(bytes.as_ptr(), name as *mut u8, n);
    *name.add(n) = 0;
    Ok(())
});
// CU_DEVICE_ATTRIBUTE_* numbers are cudaDeviceAttr's.
cu_fn!(fn cuDeviceGetAttribute(rt, value: *mut c_int, attr: c_int, device: c_int) {
    device_zero(device)?;
    put(value, rt.gpu.attribute(attr).ok_or(CudaError::InvalidValue)?)
});
cu_fn!(fn cuDeviceTotalMem_v2(rt, bytes: *mut usize, device: c_int) {
    device_zero(device)?;
    put(bytes, usize::try_from(rt.gpu.global_mem_bytes).unwrap_or(usize::MAX))
});
cu_fn!(fn cuDeviceComputeCapability(rt, major: *mut c_int, minor: *mut c_int, device: c_int) {
    device_zero(device)?;
    let arch = c_int::try_from(rt.gpu.arch).unwrap_or(0);
    put(major, arch / 10)?;
    put(minor, arch % 10)
});

// ----- contexts ---------------------------------------------------------------------------

cu_fn!(fn cuCtxCreate_v2(_rt, context: *mut u64, _flags: c_uint, device: c_int) {
    device_zero(device)?;
    CURRENT.store(primary_context(), Ordering::SeqCst);
    put(context, primary_context())
});
cu_fn!(fn cuDevicePrimaryCtxRetain(_rt, context: *mut u64, device: c_int) {
    device_zero(device)?;
    put(context, primary_context())
});
cu_fn!(fn cuDevicePrimaryCtxRelease_v2(_rt, device: c_int) { device_zero(device) });
cu_fn!(fn cuCtxDestroy_v2(_rt, context: u64) {
    if context != primary_context() {
        return Err(CudaError::InvalidResourceHandle);
    }
    let _ = CURRENT.compare_exchange(context, 0, Ordering::SeqCst, Ordering::SeqCst);
    Ok(())
});
cu_fn!(fn cuCtxGetCurrent(_rt, context: *mut u64) { put(context, CURRENT.load(Ordering::SeqCst)) });
cu_fn!(fn cuCtxSetCurrent(_rt, context: u64) {
    if context != 0 && context != primary_context() {
        return Err(CudaError::InvalidResourceHandle);
    }
    CURRENT.store(context, Ordering::SeqCst);
    Ok(())
});
cu_fn!(fn cuCtxPushCurrent_v2(_rt, context: u64) {
    if context != primary_context() {
        return Err(CudaError::InvalidResourceHandle);
    }
    let previous = CURRENT.swap(context, Ordering::SeqCst);
    PUSHED.lock().unwrap_or_else(|p| p.into_inner()).push(previous);
    Ok(())
});
cu_fn!(fn cuCtxPopCurrent_v2(_rt, context: *mut u64) {
    let previous = PUSHED.lock().unwrap_or_else(|p| p.into_inner()).pop().unwrap_or(0);
    let popped = CURRENT.swap(previous, Ordering::SeqCst);
    if !context.is_null() {
        put(context, popped)?;
    }
    Ok(())
});
cu_fn!(fn cuCtxGetDevice(_rt, device: *mut c_int) { put(device, 0) });
// Launches are synchronous: a fault is reported by the next call, as here.
cu_fn!(fn cuCtxSynchronize(rt) { rt.check_sticky() });

// ----- modules and functions ------------------------------------------------------------

/// What a `cuModuleLoadData` image pointer holds.
unsafe fn module_image<'a>(image: *const c_void) -> CudaResult<ModuleImage<'a>> {
    if image.is_null() {
        return Err(CudaError::InvalidValue);
    }
    // SAFETY: every image kind starts with at least 4 readable bytes (PTX text is longer
    // than its NUL).
    let head = unsafe { std::slice::from_raw_parts(image as *const u8, 4) };
    let magic = u32::from_le_bytes([head[0], head[1], head[2], head[3]]);
    if magic == fatbin::CONTAINER_MAGIC {
        // SAFETY: a container starts with its 16-byte header, which gives its size.
        let header = unsafe {
            std::slice::from_raw_parts(image as *const u8, fatbin::CONTAINER_HEADER_SIZE)
        };
        let size = fatbin::container_size(header).map_err(|_| CudaError::InvalidKernelImage)?;
        return Ok(ModuleImage::Fatbin(unsafe {
            std::slice::from_raw_parts(image as *const u8, size)
        }));
    }
    if magic == fatbin::WRAPPER_MAGIC {
        let container =
            unsafe { super::read_container(image) }.map_err(|_| CudaError::InvalidKernelImage)?;
        return Ok(ModuleImage::Fatbin(container));
    }
    if head == b"\x7fELF" {
        report_unsupported(
            "cuModuleLoadData of a cubin (machine code; regsim runs PTX: load the PTX, or a \
             fatbinary that holds it)",
        );
        return Err(CudaError::NoKernelImageForDevice);
    }
    // SAFETY: otherwise the image is NUL-terminated PTX text.
    let text = unsafe { CStr::from_ptr(image as *const c_char) };
    text.to_str()
        .map(ModuleImage::Ptx)
        .map_err(|_| CudaError::InvalidPtx)
}

/// Module handles are the runtime's module index plus one (never null).
fn module_index(module: u64) -> CudaResult<usize> {
    usize::try_from(module)
        .ok()
        .and_then(|m| m.checked_sub(1))
        .ok_or(CudaError::InvalidResourceHandle)
}

unsafe fn load_module(
    rt: &mut Runtime<ActiveDevice>,
    module: *mut u64,
    image: *const c_void,
) -> CudaResult<()> {
    let image = unsafe { module_image(image) }?;
    let index = rt.load_module_image(image)?;
    unsafe { put(module, index as u64 + 1) }
}

cu_fn!(fn cuModuleLoadData(rt, module: *mut u64, image: *const c_void) {
    load_module(rt, module, image)
});
// JIT options (optimization level, log buffers, ...) change nothing the simulator does.
cu_fn!(fn cuModuleLoadDataEx(rt, module: *mut u64, image: *const c_void, _num_options: c_uint, _options: *mut c_int, _values: *mut *mut c_void) {
    load_module(rt, module, image)
});
// Kernels stay loaded until exit, as with the runtime API.
cu_fn!(fn cuModuleUnload(_rt, module: u64) { module_index(module).map(|_| ()) });
cu_fn!(fn cuModuleGetFunction(rt, function: *mut u64, module: u64, name: *const c_char) {
    if name.is_null() {
        return Err(CudaError::InvalidValue);
    }
    let name = CStr::from_ptr(name).to_string_lossy().into_owned();
    put(function, rt.module_function(module_index(module)?, &name)?)
});

// ----- memory -----------------------------------------------------------------------------

cu_fn!(fn cuMemAlloc_v2(rt, ptr: *mut u64, size: usize) {
    if size == 0 {
        return Err(CudaError::InvalidValue);
    }
    put(ptr, rt.malloc(size, AllocKind::Device)?)
});
cu_fn!(fn cuMemFree_v2(rt, ptr: u64) { rt.free(ptr) });
cu_fn!(fn cuMemcpyHtoD_v2(rt, dst: u64, src: *const c_void, count: usize) {
    rt.memcpy(dst, src as u64, count, CopyKind::HostToDevice)
});
cu_fn!(fn cuMemcpyDtoH_v2(rt, dst: *mut c_void, src: u64, count: usize) {
    rt.memcpy(dst as u64, src, count, CopyKind::DeviceToHost)
});
cu_fn!(fn cuMemcpyDtoD_v2(rt, dst: u64, src: u64, count: usize) {
    rt.memcpy(dst, src, count, CopyKind::DeviceToDevice)
});
cu_fn!(fn cuMemsetD8_v2(rt, dst: u64, value: u8, count: usize) { rt.memset(dst, value, count) });
cu_fn!(fn cuMemsetD32_v2(rt, dst: u64, value: c_uint, count: usize) {
    let bytes = count.checked_mul(4).ok_or(CudaError::InvalidValue)?;
    let pattern: Vec<u8> = std::iter::repeat_n(value.to_le_bytes(), count).flatten().collect();
    rt.memcpy(dst, pattern.as_ptr() as u64, bytes, CopyKind::HostToDevice)
});

// ----- launches and streams ---------------------------------------------------------------

cu_fn!(fn cuLaunchKernel(rt, function: u64, gx: c_uint, gy: c_uint, gz: c_uint, bx: c_uint, by: c_uint, bz: c_uint, shared: c_uint, stream: *mut c_void, params: *mut *mut c_void, extra: *mut *mut c_void) {
    if !extra.is_null() {
        // CU_LAUNCH_PARAM_BUFFER_POINTER: the arguments packed by the program.
        report_unsupported("cuLaunchKernel with packed arguments (`extra`)");
        return Err(CudaError::NotSupported);
    }
    let grid = Dim3 { x: gx, y: gy, z: gz };
    let block = Dim3 { x: bx, y: by, z: bz };
    launch(rt, function as *const c_void, grid, block, params, shared as usize, stream)
});
/// `CUlaunchConfig`: grid and block dimensions, dynamic shared memory, the stream and
/// the launch attributes (`CUlaunchAttribute`, laid out as `cudaLaunchAttribute`).
#[repr(C)]
pub struct CuLaunchConfig {
    pub grid: [c_uint; 3],
    pub block: [c_uint; 3],
    pub shared_mem_bytes: c_uint,
    pub stream: *mut c_void,
    pub attrs: *const super::cuda12::LaunchAttribute,
    pub num_attrs: c_uint,
}

// `cuLaunchKernelEx`: `cudaLaunchKernelExC`'s path (the cluster dimension attribute,
// CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4, sets the launch's cluster shape).
cu_fn!(fn cuLaunchKernelEx(rt, config: *const CuLaunchConfig, function: u64, params: *mut *mut c_void, extra: *mut *mut c_void) {
    if !extra.is_null() {
        report_unsupported("cuLaunchKernelEx with packed arguments (`extra`)");
        return Err(CudaError::NotSupported);
    }
    if config.is_null() {
        return Err(CudaError::InvalidValue);
    }
    // SAFETY: a non-null config points at a CUlaunchConfig.
    let c = unsafe { &*config };
    let [gx, gy, gz] = c.grid;
    let [bx, by, bz] = c.block;
    unsafe {
        super::cuda12::launch_with_attributes(
            rt,
            "cuLaunchKernelEx",
            function as *const c_void,
            Dim3 { x: gx, y: gy, z: gz },
            Dim3 { x: bx, y: by, z: bz },
            c.shared_mem_bytes as usize,
            c.stream,
            (c.attrs, c.num_attrs),
            params,
        )
    }
});
// `cuOccupancyMaxActiveClusters` and `cuOccupancyMaxPotentialClusterSize`: the runtime's.
cu_fn!(fn cuOccupancyMaxActiveClusters(rt, clusters: *mut c_int, function: u64, config: *const CuLaunchConfig) {
    let (_, active) = unsafe { driver_cluster_occupancy(rt, function, config)? };
    put(clusters, active.ok_or(CudaError::InvalidClusterSize)?)
});
cu_fn!(fn cuOccupancyMaxPotentialClusterSize(rt, size: *mut c_int, function: u64, config: *const CuLaunchConfig) {
    let (potential, _) = unsafe { driver_cluster_occupancy(rt, function, config)? };
    put(size, potential)
});

unsafe fn driver_cluster_occupancy(
    rt: &mut Runtime<ActiveDevice>,
    function: u64,
    config: *const CuLaunchConfig,
) -> CudaResult<(i32, Option<i32>)> {
    if config.is_null() {
        return Err(CudaError::InvalidValue);
    }
    // SAFETY: a non-null config points at a CUlaunchConfig.
    let c = unsafe { &*config };
    let cluster =
        unsafe { super::cuda12::cluster_attribute(c.attrs, c.num_attrs, "cuOccupancy", false)? };
    let [bx, by, bz] = c.block;
    rt.cluster_occupancy(
        function,
        Dim3 {
            x: bx,
            y: by,
            z: bz,
        },
        c.shared_mem_bytes as usize,
        cluster,
    )
}

cu_fn!(fn cuStreamCreate(rt, stream: *mut *mut c_void, _flags: c_uint) {
    put(stream, rt.stream_create() as *mut c_void)
});
cu_fn!(fn cuStreamDestroy_v2(rt, stream: *mut c_void) { rt.stream_destroy(stream as u64) });
cu_fn!(fn cuStreamSynchronize(rt, stream: *mut c_void) {
    rt.check_stream(stream as u64)?;
    rt.check_sticky()
});

// ----- errors -------------------------------------------------------------------------------

/// (code, name, message) of the `CUresult`s this library returns.
#[rustfmt::skip]
const RESULTS: &[(CUresult, &CStr, &CStr)] = &[
    (0, c"CUDA_SUCCESS", c"no error"),
    (1, c"CUDA_ERROR_INVALID_VALUE", c"invalid argument"),
    (2, c"CUDA_ERROR_OUT_OF_MEMORY", c"out of memory"),
    (3, c"CUDA_ERROR_NOT_INITIALIZED", c"initialization error"),
    (
        100,
        c"CUDA_ERROR_NO_DEVICE",
        c"no CUDA-capable device is detected",
    ),
    (101, c"CUDA_ERROR_INVALID_DEVICE", c"invalid device ordinal"),
    (
        200,
        c"CUDA_ERROR_INVALID_IMAGE",
        c"device kernel image is invalid",
    ),
    (
        209,
        c"CUDA_ERROR_NO_BINARY_FOR_GPU",
        c"no kernel image is available for execution on the device",
    ),
    (
        218,
        c"CUDA_ERROR_INVALID_PTX",
        c"a PTX JIT compilation failed",
    ),
    (
        400,
        c"CUDA_ERROR_INVALID_HANDLE",
        c"invalid resource handle",
    ),
    (500, c"CUDA_ERROR_NOT_FOUND", c"named symbol not found"),
    (600, c"CUDA_ERROR_NOT_READY", c"device not ready"),
    (
        700,
        c"CUDA_ERROR_ILLEGAL_ADDRESS",
        c"an illegal memory access was encountered",
    ),
    (
        701,
        c"CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
        c"too many resources requested for launch",
    ),
    (710, c"CUDA_ERROR_ASSERT", c"device-side assert triggered"),
    (
        715,
        c"CUDA_ERROR_ILLEGAL_INSTRUCTION",
        c"an illegal instruction was encountered",
    ),
    (716, c"CUDA_ERROR_MISALIGNED_ADDRESS", c"misaligned address"),
    (
        719,
        c"CUDA_ERROR_LAUNCH_FAILED",
        c"unspecified launch failure",
    ),
    (801, c"CUDA_ERROR_NOT_SUPPORTED", c"operation not supported"),
    (999, c"CUDA_ERROR_UNKNOWN", c"unknown error"),
];

fn describe(code: CUresult, out: *const *const c_char, message: bool) -> CUresult {
    hook("cuGetErrorString", 999, || {
        let Some((_, name, text)) = RESULTS.iter().find(|(c, _, _)| *c == code) else {
            return 1;
        };
        if out.is_null() {
            return 1;
        }
        let s = if message { text } else { name };
        // SAFETY: a non-null out-pointer is valid for a write.
        unsafe { (out as *mut *const c_char).write(s.as_ptr()) };
        0
    })
}

#[no_mangle]
pub extern "C" fn cuGetErrorString(code: CUresult, out: *const *const c_char) -> CUresult {
    describe(code, out, true)
}

#[no_mangle]
pub extern "C" fn cuGetErrorName(code: CUresult, out: *const *const c_char) -> CUresult {
    describe(code, out, false)
}

// ----- tensor maps (TMA) --------------------------------------------------------------------

/// `len` values at `p`, or the error naming the null argument.
unsafe fn tensor_map_array<'a, T>(
    func: &str,
    p: *const T,
    len: usize,
    what: &str,
) -> CudaResult<&'a [T]> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(tensor_map_error(func, &format!("{what} is null")));
    }
    // SAFETY: the API's contract: the array holds one value per dimension.
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}

/// Prints why a tensor map was refused; what the simulator does not model is
/// `CUDA_ERROR_NOT_SUPPORTED`, every other broken rule `CUDA_ERROR_INVALID_VALUE`.
fn tensor_map_error(func: &str, reason: &str) -> CudaError {
    eprintln!("regsim: {func}: {reason}");
    if reason.contains("not supported by the simulator") {
        CudaError::NotSupported
    } else {
        CudaError::InvalidValue
    }
}

/// Writes `map` as the 128-byte `CUtensorMap` at `out` (64-byte aligned).
unsafe fn write_tensor_map(
    func: &str,
    out: *mut u8,
    map: &emu::tensor_map::TensorMap,
) -> CudaResult<()> {
    if out.is_null() || !(out as usize).is_multiple_of(64) {
        return Err(tensor_map_error(
            func,
            &format!("tensorMap {out:p} is not a 64-byte aligned CUtensorMap"),
        ));
    }
    let bytes = map.encode();
    // SAFETY: a CUtensorMap is 128 bytes.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), out, bytes.len()) };
    Ok(())
}

// The map is regsim's own encoding of the arguments (emu::tensor_map), which the
// emulator's cp.async.bulk.tensor reads back.
cu_fn!(fn cuTensorMapEncodeTiled(_rt, tensor_map: *mut u8, data_type: c_uint, rank: c_uint, global_address: *mut c_void, global_dim: *const u64, global_strides: *const u64, box_dim: *const c_uint, element_strides: *const c_uint, interleave: c_uint, swizzle: c_uint, l2_promotion: c_uint, oob_fill: c_uint) {
    let n = if (1..=5).contains(&rank) { rank as usize } else { 0 };
    let map = emu::tensor_map::TensorMap::tiled(
        data_type,
        rank,
        global_address as u64,
        tensor_map_array("cuTensorMapEncodeTiled", global_dim, n, "globalDim")?,
        tensor_map_array("cuTensorMapEncodeTiled", global_strides, n.saturating_sub(1), "globalStrides")?,
        tensor_map_array("cuTensorMapEncodeTiled", box_dim, n, "boxDim")?,
        tensor_map_array("cuTensorMapEncodeTiled", element_strides, n, "elementStrides")?,
        interleave,
        swizzle,
        l2_promotion,
        oob_fill,
    )
    .map_err(|e| tensor_map_error("cuTensorMapEncodeTiled", &e))?;
    write_tensor_map("cuTensorMapEncodeTiled", tensor_map, &map)
});
// An im2col map (emu::tensor_map_im2col): the corners hold rank - 2 values, W first.
cu_fn!(fn cuTensorMapEncodeIm2col(_rt, tensor_map: *mut u8, data_type: c_uint, rank: c_uint, global_address: *mut c_void, global_dim: *const u64, global_strides: *const u64, lower_corner: *const c_int, upper_corner: *const c_int, channels_per_pixel: c_uint, pixels_per_column: c_uint, element_strides: *const c_uint, interleave: c_uint, swizzle: c_uint, l2_promotion: c_uint, oob_fill: c_uint) {
    let n = if (3..=5).contains(&rank) { rank as usize } else { 0 };
    let map = emu::tensor_map::TensorMap::im2col(
        data_type,
        rank,
        global_address as u64,
        tensor_map_array("cuTensorMapEncodeIm2col", global_dim, n, "globalDim")?,
        tensor_map_array("cuTensorMapEncodeIm2col", global_strides, n.saturating_sub(1), "globalStrides")?,
        tensor_map_array("cuTensorMapEncodeIm2col", lower_corner, n.saturating_sub(2), "pixelBoxLowerCorner")?,
        tensor_map_array("cuTensorMapEncodeIm2col", upper_corner, n.saturating_sub(2), "pixelBoxUpperCorner")?,
        channels_per_pixel,
        pixels_per_column,
        tensor_map_array("cuTensorMapEncodeIm2col", element_strides, n, "elementStrides")?,
        interleave,
        swizzle,
        l2_promotion,
        oob_fill,
    )
    .map_err(|e| tensor_map_error("cuTensorMapEncodeIm2col", &e))?;
    write_tensor_map("cuTensorMapEncodeIm2col", tensor_map, &map)
});
cu_fn!(fn cuTensorMapReplaceAddress(_rt, tensor_map: *mut u8, global_address: *mut c_void) {
    if tensor_map.is_null() {
        return Err(tensor_map_error("cuTensorMapReplaceAddress", "tensorMap is null"));
    }
    let mut bytes = [0u8; 128];
    // SAFETY: a CUtensorMap is 128 bytes.
    unsafe { std::ptr::copy_nonoverlapping(tensor_map, bytes.as_mut_ptr(), 128) };
    let mut map = emu::tensor_map::TensorMap::decode(&bytes).map_err(|e| tensor_map_error("cuTensorMapReplaceAddress", &e))?;
    map.global_address = global_address as u64;
    if let Some(ic) = map.im2col {
        let map = emu::tensor_map::TensorMap::im2col(
            map.data_type,
            map.rank,
            map.global_address,
            &map.dims,
            &map.strides[1..],
            &ic.lower,
            &ic.upper,
            ic.channels_per_pixel,
            ic.pixels_per_column,
            &map.element_strides,
            map.interleave,
            map.swizzle,
            map.l2_promotion,
            map.oob_fill,
        )
        .map_err(|e| tensor_map_error("cuTensorMapReplaceAddress", &e))?;
        return write_tensor_map("cuTensorMapReplaceAddress", tensor_map, &map);
    }
    let map = emu::tensor_map::TensorMap::tiled(
        map.data_type,
        map.rank,
        map.global_address,
        &map.dims,
        &map.strides[1..],
        &map.box_dims,
        &map.element_strides,
        map.interleave,
        map.swizzle,
        map.l2_promotion,
        map.oob_fill,
    )
    .map_err(|e| tensor_map_error("cuTensorMapReplaceAddress", &e))?;
    write_tensor_map("cuTensorMapReplaceAddress", tensor_map, &map)
});

// ----- entry points by name -------------------------------------------------------------------

/// The address of driver function `name` (CUDA 12's headers map `cuMemAlloc` to
/// `cuMemAlloc_v2` and so on, so the `_v2` form is tried first), or null.
fn driver_entry(name: &str) -> *const c_void {
    let table: &[(&str, *const c_void)] = &[
        ("cuInit", cuInit as *const c_void),
        ("cuDriverGetVersion", cuDriverGetVersion as *const c_void),
        ("cuDeviceGetCount", cuDeviceGetCount as *const c_void),
        ("cuDeviceGet", cuDeviceGet as *const c_void),
        ("cuDeviceGetName", cuDeviceGetName as *const c_void),
        (
            "cuDeviceGetAttribute",
            cuDeviceGetAttribute as *const c_void,
        ),
        ("cuDeviceTotalMem_v2", cuDeviceTotalMem_v2 as *const c_void),
        (
            "cuDeviceComputeCapability",
            cuDeviceComputeCapability as *const c_void,
        ),
        ("cuCtxCreate_v2", cuCtxCreate_v2 as *const c_void),
        (
            "cuDevicePrimaryCtxRetain",
            cuDevicePrimaryCtxRetain as *const c_void,
        ),
        (
            "cuDevicePrimaryCtxRelease_v2",
            cuDevicePrimaryCtxRelease_v2 as *const c_void,
        ),
        ("cuCtxDestroy_v2", cuCtxDestroy_v2 as *const c_void),
        ("cuCtxGetCurrent", cuCtxGetCurrent as *const c_void),
        ("cuCtxSetCurrent", cuCtxSetCurrent as *const c_void),
        ("cuCtxPushCurrent_v2", cuCtxPushCurrent_v2 as *const c_void),
        ("cuCtxPopCurrent_v2", cuCtxPopCurrent_v2 as *const c_void),
        ("cuCtxGetDevice", cuCtxGetDevice as *const c_void),
        ("cuCtxSynchronize", cuCtxSynchronize as *const c_void),
        ("cuModuleLoadData", cuModuleLoadData as *const c_void),
        ("cuModuleLoadDataEx", cuModuleLoadDataEx as *const c_void),
        ("cuModuleUnload", cuModuleUnload as *const c_void),
        ("cuModuleGetFunction", cuModuleGetFunction as *const c_void),
        ("cuMemAlloc_v2", cuMemAlloc_v2 as *const c_void),
        ("cuMemFree_v2", cuMemFree_v2 as *const c_void),
        ("cuMemcpyHtoD_v2", cuMemcpyHtoD_v2 as *const c_void),
        ("cuMemcpyDtoH_v2", cuMemcpyDtoH_v2 as *const c_void),
        ("cuMemcpyDtoD_v2", cuMemcpyDtoD_v2 as *const c_void),
        ("cuMemsetD8_v2", cuMemsetD8_v2 as *const c_void),
        ("cuMemsetD32_v2", cuMemsetD32_v2 as *const c_void),
        ("cuLaunchKernel", cuLaunchKernel as *const c_void),
        ("cuLaunchKernelEx", cuLaunchKernelEx as *const c_void),
        (
            "cuOccupancyMaxActiveClusters",
            cuOccupancyMaxActiveClusters as *const c_void,
        ),
        (
            "cuOccupancyMaxPotentialClusterSize",
            cuOccupancyMaxPotentialClusterSize as *const c_void,
        ),
        ("cuStreamCreate", cuStreamCreate as *const c_void),
        ("cuStreamDestroy_v2", cuStreamDestroy_v2 as *const c_void),
        ("cuStreamSynchronize", cuStreamSynchronize as *const c_void),
        ("cuGetErrorString", cuGetErrorString as *const c_void),
        ("cuGetErrorName", cuGetErrorName as *const c_void),
        (
            "cuTensorMapEncodeTiled",
            cuTensorMapEncodeTiled as *const c_void,
        ),
        (
            "cuTensorMapEncodeIm2col",
            cuTensorMapEncodeIm2col as *const c_void,
        ),
        (
            "cuTensorMapReplaceAddress",
            cuTensorMapReplaceAddress as *const c_void,
        ),
    ];
    let versioned = format!("{name}_v2");
    table
        .iter()
        .find(|(n, _)| *n == versioned)
        .or_else(|| table.iter().find(|(n, _)| *n == name))
        .map_or(std::ptr::null(), |(_, f)| *f)
}

/// Writes the address of `symbol` (null if absent) and, where given, whether it was
/// found (0) or not (1): the shared part of `cuGetProcAddress` and
/// `cudaGetDriverEntryPoint`.
unsafe fn entry_point(
    symbol: *const c_char,
    out: *mut *const c_void,
    status: *mut c_int,
) -> CudaResult<()> {
    INITIALIZED.store(true, Ordering::SeqCst);
    if symbol.is_null() || out.is_null() {
        return Err(CudaError::InvalidValue);
    }
    let name = unsafe { CStr::from_ptr(symbol) }.to_string_lossy();
    let f = driver_entry(&name);
    unsafe {
        put(out, f)?;
        if !status.is_null() {
            put(status, c_int::from(f.is_null()))?;
        }
    }
    Ok(())
}

cu_fn!(fn cuGetProcAddress_v2(_rt, symbol: *const c_char, out: *mut *const c_void, _version: c_int, _flags: c_ulonglong, status: *mut c_int) {
    entry_point(symbol, out, status)?;
    if (*out).is_null() { Err(CudaError::InvalidSymbol) } else { Ok(()) }
});

// The runtime API's way to the driver, which it initializes (as cudart does). CUDA 12
// adds the status out-parameter (CUDA 11's callers pass three arguments, so the fourth
// register is not theirs to read).
cuda_fn!(fn cudaGetDriverEntryPoint(_rt, symbol: *const c_char, out: *mut *const c_void, _flags: c_ulonglong, status: *mut c_int) {
    let status = if crate::soname::api_major() >= 12 { status } else { std::ptr::null_mut() };
    entry_point(symbol, out, status)
});
cuda_fn!(fn cudaGetDriverEntryPoint_ptsz(_rt, symbol: *const c_char, out: *mut *const c_void, _flags: c_ulonglong, status: *mut c_int) {
    let status = if crate::soname::api_major() >= 12 { status } else { std::ptr::null_mut() };
    entry_point(symbol, out, status)
});
cuda_fn!(fn cudaGetDriverEntryPointByVersion(_rt, symbol: *const c_char, out: *mut *const c_void, _version: c_uint, _flags: c_ulonglong, status: *mut c_int) {
    entry_point(symbol, out, status)
});
cuda_fn!(fn cudaGetDriverEntryPointByVersion_ptsz(_rt, symbol: *const c_char, out: *mut *const c_void, _version: c_uint, _flags: c_ulonglong, status: *mut c_int) {
    entry_point(symbol, out, status)
});

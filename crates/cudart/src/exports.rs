//! The C ABI: every function a program built with `nvcc -cudart shared` may import from
//! `libcudart.so.11.0`.
//!
//! Each export is a thin shell: it turns C pointers into values, calls [`Runtime`] under
//! the global lock, records the error as CUDA does, and never lets a Rust panic unwind into
//! C (a panic becomes `cudaErrorUnknown` plus one line on stderr). Pointer arguments are
//! trusted the way CUDA trusts them: non-null pointers must be valid for what the call
//! writes or reads.

#![allow(non_snake_case, non_camel_case_types, clippy::missing_safety_doc)]

use std::collections::HashSet;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Mutex, MutexGuard, Once, OnceLock};

use crate::config::{Config, Mode};
use crate::device::{AllocKind, Dim3};
use crate::emu_device::EmuDevice;
use crate::error::{self, CudaError};
use crate::fatbin::{self, Wrapper};
use crate::props::CudaDeviceProp;
use crate::run_control;
use crate::runtime::{ArrayFormat, CallConfig, CopyKind, CudaResult, Runtime, TextureResource};
use crate::texture::Sampler;

/// The device the library runs kernels on.
type ActiveDevice = EmuDevice;

pub type cudaError_t = c_int;

static RUNTIME: Mutex<Option<Runtime<ActiveDevice>>> = Mutex::new(None);
static AT_EXIT: Once = Once::new();

extern "C" {
    fn atexit(callback: extern "C" fn()) -> c_int;
}

extern "C" fn write_stats_at_exit() {
    let _ = catch_unwind(|| {
        if let Some(rt) = lock().as_mut() {
            rt.finish_process();
        }
    });
}

/// The runtime as the environment contract configures it: the GPU config loaded and
/// validated (a bad one leaves a runtime whose every device call fails, after one line
/// naming the problem), and in timing mode the timing model on it.
fn start_runtime() -> Runtime<ActiveDevice> {
    let started = std::time::Instant::now();
    let mut config = Config::from_env();
    run_control::install_signal_handlers();
    let deadline = config
        .limits
        .timeout_seconds
        .map(|s| (started + std::time::Duration::from_secs_f64(s), s));
    run_control::spawn_watcher(deadline, end_outside_the_simulator);
    match config.gpu_selection() {
        Ok(selection) => {
            let transforms = config
                .transforms
                .under_budget(timing::register_budget::budget(&selection.config));
            let mut device =
                EmuDevice::new().with_program_settings(transforms, config.profile_registers);
            device.emulator_mut().memory.stray_policy = if config.strict_memory {
                emu::StrayPolicy::Fault
            } else {
                emu::StrayPolicy::Allow
            };
            if config.mode == Mode::Functional {
                device.set_functional_limits(run_control::timing_limits(&config.limits, started));
            }
            if config.mode == Mode::Timing {
                device = device.with_timing(selection.config.clone());
                if let Some(sim) = device.timing_mut() {
                    sim.set_limits(run_control::timing_limits(&config.limits, started));
                    // One by default: the parallel part of a cycle is small so far, and
                    // its speed-up is not yet measured on free cores (docs/parallel.md).
                    let threads = config.threads.unwrap_or(1);
                    if let Err(e) = sim.set_threads(threads) {
                        config.warnings.push(format!(
                            "cannot start {threads} simulation threads ({e}); using one"
                        ));
                    }
                    if config.progress {
                        sim.set_progress_hook(run_control::progress_hook());
                    }
                }
            }
            let mut rt = runtime_on(device, config);
            rt.set_gpu(selection);
            rt
        }
        Err(e) => {
            let mut rt = runtime_on(EmuDevice::new(), config);
            rt.fail_device(&format!("invalid GPU configuration: {e}"));
            rt
        }
    }
}

/// A runtime whose diagnostics go to stderr, after erasing the progress line.
fn runtime_on(device: ActiveDevice, config: Config) -> Runtime<ActiveDevice> {
    Runtime::with_log(
        device,
        config,
        Box::new(|line: &str| {
            run_control::clear_progress_line();
            let _ = writeln!(std::io::stderr(), "{line}");
        }),
    )
}

/// The watcher's end of a run stopped outside a launch (a signal, the time limit in the
/// program's own code): statistics so far, marked incomplete, then the exit. Returns
/// false, doing nothing, while a call holds the runtime.
fn end_outside_the_simulator(reason: String, exit: run_control::Exit) -> bool {
    let mut guard = match RUNTIME.try_lock() {
        Ok(g) => g,
        Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
        Err(std::sync::TryLockError::WouldBlock) => return false,
    };
    let Some(rt) = guard.as_mut() else {
        return false;
    };
    run_control::clear_progress_line();
    eprintln!("regsim: run stopped: {reason}");
    rt.mark_incomplete(reason);
    rt.finish_process();
    run_control::exit_process(exit)
}

fn lock() -> MutexGuard<'static, Option<Runtime<ActiveDevice>>> {
    // A panic while holding the lock has already been reported; keep serving calls.
    RUNTIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn with_runtime<T>(f: impl FnOnce(&mut Runtime<ActiveDevice>) -> T) -> T {
    let mut guard = lock();
    let rt = guard.get_or_insert_with(start_runtime);
    AT_EXIT.call_once(|| {
        // SAFETY: registering a plain extern "C" function with the C library.
        unsafe { atexit(write_stats_at_exit) };
    });
    f(rt)
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string())
}

/// Runs a call's body under the lock, recording its error, with panics contained.
fn call(
    name: &str,
    body: impl FnOnce(&mut Runtime<ActiveDevice>) -> CudaResult<()>,
) -> cudaError_t {
    match catch_unwind(AssertUnwindSafe(|| {
        with_runtime(|rt| {
            let result = body(rt);
            rt.finish(result)
        })
    })) {
        Ok(Ok(())) => CudaError::Success.code(),
        Ok(Err(e)) => e.code(),
        Err(payload) => {
            eprintln!(
                "regsim: internal error in {name}: {}",
                panic_message(payload.as_ref())
            );
            CudaError::Unknown.code()
        }
    }
}

/// For the registration hooks, which return nothing: contain panics, report them.
fn hook<T>(name: &str, fallback: T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|payload| {
        eprintln!(
            "regsim: internal error in {name}: {}",
            panic_message(payload.as_ref())
        );
        fallback
    })
}

/// Writes `value` through an out-pointer, or fails with cudaErrorInvalidValue on null.
unsafe fn put<T>(out: *mut T, value: T) -> CudaResult<()> {
    if out.is_null() {
        return Err(CudaError::InvalidValue);
    }
    // SAFETY: non-null out-pointers are valid for writes by the CUDA calling contract.
    unsafe { out.write_unaligned(value) };
    Ok(())
}

unsafe fn c_string(ptr: *const c_char) -> Option<String> {
    if ptr.is_null() {
        return None;
    }
    // SAFETY: non-null name pointers from nvcc's registration code are NUL-terminated.
    Some(
        unsafe { CStr::from_ptr(ptr) }
            .to_string_lossy()
            .into_owned(),
    )
}

/// Defines `extern "C" fn $name(args) -> cudaError_t` whose body returns `CudaResult<()>`
/// and sees the runtime as `$rt`.
macro_rules! cuda_fn {
    ($(#[$meta:meta])* fn $name:ident($rt:ident $(, $arg:ident : $ty:ty)* $(,)?) $body:block) => {
        $(#[$meta])*
        #[no_mangle]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> cudaError_t {
            call(stringify!($name), |$rt| {
                #[allow(unused_unsafe)]
                unsafe { $body }
            })
        }
    };
}

// ----- registration ---------------------------------------------------------------------

/// The handle nvcc's code keeps for a registered fatbinary: a unique heap cell holding our
/// index, so the pointer the program stores is real and stable.
fn handle_index(handle: *mut *mut c_void) -> Option<usize> {
    if handle.is_null() {
        return None;
    }
    // SAFETY: non-null handles are the cells `__cudaRegisterFatBinary` leaked below.
    Some(unsafe { *handle } as usize)
}

#[no_mangle]
pub unsafe extern "C" fn __cudaRegisterFatBinary(fat_cubin: *mut c_void) -> *mut *mut c_void {
    hook("__cudaRegisterFatBinary", std::ptr::null_mut(), || {
        let index = with_runtime(|rt| match unsafe { read_container(fat_cubin) } {
            Ok(bytes) => rt.register_fatbin(bytes),
            Err(e) => {
                eprintln!("regsim: cannot read the program's fatbinary: {e}");
                rt.register_fatbin(&[])
            }
        });
        Box::into_raw(Box::new(index as *mut c_void))
    })
}

/// The container bytes a `__fatBinC_Wrapper_t` points to.
unsafe fn read_container(wrapper: *const c_void) -> Result<&'static [u8], fatbin::FatbinError> {
    if wrapper.is_null() {
        return Err(fatbin::FatbinError::BadWrapperMagic(0));
    }
    // SAFETY: the wrapper is a static 24-byte struct in the program's data.
    let w = Wrapper::parse(unsafe {
        std::slice::from_raw_parts(wrapper as *const u8, fatbin::WRAPPER_SIZE)
    })?;
    if w.data == 0 {
        return Err(fatbin::FatbinError::BadContainerMagic(0));
    }
    // SAFETY: `data` points at the container in the program's `.nv_fatbin` section; its
    // 16-byte header is read first and gives the size of the rest.
    let header =
        unsafe { std::slice::from_raw_parts(w.data as *const u8, fatbin::CONTAINER_HEADER_SIZE) };
    let size = fatbin::container_size(header)?;
    // SAFETY: as above, the section holds the whole container the header describes.
    Ok(unsafe { std::slice::from_raw_parts(w.data as *const u8, size) })
}

#[no_mangle]
pub unsafe extern "C" fn __cudaRegisterFatBinaryEnd(_handle: *mut *mut c_void) {}

#[no_mangle]
pub unsafe extern "C" fn __cudaUnregisterFatBinary(_handle: *mut *mut c_void) {
    // Kernels stay registered until exit: destructors of other objects may still launch.
}

#[no_mangle]
pub unsafe extern "C" fn __cudaInitModule(_handle: *mut *mut c_void) -> c_char {
    1
}

#[no_mangle]
pub unsafe extern "C" fn __cudaRegisterFunction(
    handle: *mut *mut c_void,
    host_fun: *const c_char,
    _device_fun: *mut c_char,
    device_name: *const c_char,
    _thread_limit: c_int,
    _tid: *mut c_void,
    _bid: *mut c_void,
    _block_dim: *mut c_void,
    _grid_dim: *mut c_void,
    _warp_size: *mut c_int,
) {
    hook("__cudaRegisterFunction", (), || {
        let (Some(index), Some(name)) = (handle_index(handle), unsafe { c_string(device_name) })
        else {
            return;
        };
        with_runtime(|rt| rt.register_function(index, host_fun as u64, name));
    })
}

#[no_mangle]
pub unsafe extern "C" fn __cudaRegisterVar(
    handle: *mut *mut c_void,
    host_var: *mut c_char,
    _device_address: *mut c_char,
    device_name: *const c_char,
    _ext: c_int,
    size: usize,
    _constant: c_int,
    _global: c_int,
) {
    hook("__cudaRegisterVar", (), || {
        let (Some(index), Some(name)) = (handle_index(handle), unsafe { c_string(device_name) })
        else {
            return;
        };
        with_runtime(|rt| rt.register_variable(index, host_var as u64, name, size));
    })
}

/// A `__managed__` variable: host code reaches it through `*host_var_ptr`, which must
/// point at the device copy before `main` runs. A `__managed__` variable is host-visible
/// memory (host memory at its device address: `emu::memory`), so that is the
/// device address itself.
#[no_mangle]
pub unsafe extern "C" fn __cudaRegisterManagedVar(
    handle: *mut *mut c_void,
    host_var_ptr: *mut *mut c_void,
    _device_address: *mut c_char,
    device_name: *const c_char,
    _ext: c_int,
    size: usize,
    _constant: c_int,
    _global: c_int,
) {
    hook("__cudaRegisterManagedVar", (), || {
        let (Some(index), Some(name)) = (handle_index(handle), unsafe { c_string(device_name) })
        else {
            return;
        };
        let key = host_var_ptr as u64;
        let addr = with_runtime(|rt| {
            rt.register_variable(index, key, name.clone(), size);
            rt.symbol(key)
        });
        match addr {
            Ok((addr, _)) if !host_var_ptr.is_null() => unsafe {
                *host_var_ptr = addr as *mut c_void
            },
            Ok(_) => {}
            Err(e) => eprintln!(
                "regsim: managed variable {name} is unavailable: {}",
                error::message_of(e.code())
            ),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn __cudaRegisterTexture(
    handle: *mut *mut c_void,
    host_var: *const c_void,
    _device_address: *const *const c_void,
    device_name: *const c_char,
    _dim: c_int,
    norm: c_int,
    _ext: c_int,
) {
    hook("__cudaRegisterTexture", (), || {
        let (Some(_), Some(name)) = (handle_index(handle), unsafe { c_string(device_name) }) else {
            return;
        };
        with_runtime(|rt| rt.register_texture(host_var as u64, &name, norm != 0));
    })
}

#[no_mangle]
pub unsafe extern "C" fn __cudaRegisterSurface(
    _handle: *mut *mut c_void,
    _host_var: *const c_void,
    _device_address: *const *const c_void,
    device_name: *const c_char,
    _dim: c_int,
    _ext: c_int,
) {
    hook("__cudaRegisterSurface", (), || {
        let name = unsafe { c_string(device_name) }.unwrap_or_default();
        report_unsupported(&format!("surface reference {name}"));
    })
}

#[no_mangle]
pub unsafe extern "C" fn __cudaRegisterHostVar() {}

// ----- launches -------------------------------------------------------------------------

#[no_mangle]
pub unsafe extern "C" fn __cudaPushCallConfiguration(
    grid: Dim3,
    block: Dim3,
    shared_mem: usize,
    stream: *mut c_void,
) -> c_uint {
    hook("__cudaPushCallConfiguration", 1, || {
        with_runtime(|rt| {
            rt.push_call_config(CallConfig {
                grid,
                block,
                shared_bytes: shared_mem,
                stream: stream as u64,
            })
        });
        0
    })
}

cuda_fn!(fn __cudaPopCallConfiguration(rt, grid: *mut Dim3, block: *mut Dim3, shared_mem: *mut usize, stream: *mut *mut c_void) {
    let c = rt.pop_call_config()?;
    put(grid, c.grid)?;
    put(block, c.block)?;
    put(shared_mem, c.shared_bytes)?;
    put(stream, c.stream as *mut c_void)
});

unsafe fn launch(
    rt: &mut Runtime<ActiveDevice>,
    func: *const c_void,
    grid: Dim3,
    block: Dim3,
    args: *mut *mut c_void,
    shared: usize,
    stream: *mut c_void,
) -> CudaResult<()> {
    rt.check_stream(stream as u64)?;
    let result = rt.launch(func as u64, grid, block, shared, |i, size| {
        if args.is_null() {
            return None;
        }
        // SAFETY: `args` has one pointer per kernel parameter, each to a value of the
        // parameter's size, as cudaLaunchKernel requires.
        let p = unsafe { *args.add(i) } as *const u8;
        (!p.is_null()).then(|| unsafe { std::slice::from_raw_parts(p, size) }.to_vec())
    });
    if rt.stopped() {
        // A run limit or a signal stopped the kernel: the statistics so far, then the
        // end of the process (run_control's contract).
        rt.finish_process();
        run_control::exit_process(run_control::Exit::after_stop());
    }
    result
}

cuda_fn!(fn cudaLaunchKernel(rt, func: *const c_void, grid: Dim3, block: Dim3, args: *mut *mut c_void, shared_mem: usize, stream: *mut c_void) {
    launch(rt, func, grid, block, args, shared_mem, stream)
});

cuda_fn!(fn cudaLaunchKernel_ptsz(rt, func: *const c_void, grid: Dim3, block: Dim3, args: *mut *mut c_void, shared_mem: usize, stream: *mut c_void) {
    launch(rt, func, grid, block, args, shared_mem, stream)
});

// ----- memory ---------------------------------------------------------------------------

cuda_fn!(fn cudaMalloc(rt, dev_ptr: *mut *mut c_void, size: usize) {
    malloc_device_into(rt, dev_ptr, size)
});

cuda_fn!(fn cudaMallocManaged(rt, dev_ptr: *mut *mut c_void, size: usize, _flags: c_uint) {
    if dev_ptr.is_null() {
        return Err(CudaError::InvalidValue);
    }
    let p = rt.malloc(size, AllocKind::Managed)?;
    put(dev_ptr, p as *mut c_void)
});

cuda_fn!(fn cudaMallocHost(rt, ptr: *mut *mut c_void, size: usize) {
    if ptr.is_null() {
        return Err(CudaError::InvalidValue);
    }
    let p = rt.malloc(size, AllocKind::PinnedHost)?;
    put(ptr, p as *mut c_void)
});

cuda_fn!(fn cudaHostAlloc(rt, ptr: *mut *mut c_void, size: usize, _flags: c_uint) {
    if ptr.is_null() {
        return Err(CudaError::InvalidValue);
    }
    let p = rt.malloc(size, AllocKind::PinnedHost)?;
    put(ptr, p as *mut c_void)
});

cuda_fn!(fn cudaHostGetDevicePointer(rt, dev_ptr: *mut *mut c_void, host: *mut c_void, _flags: c_uint) {
    rt.check_sticky()?;
    put(dev_ptr, host)
});

cuda_fn!(fn cudaFree(rt, ptr: *mut c_void) { rt.free(ptr as u64) });
cuda_fn!(fn cudaFreeHost(rt, ptr: *mut c_void) { rt.free(ptr as u64) });

// Stream-ordered allocation: streams execute synchronously, so these are the plain calls.
cuda_fn!(fn cudaMallocAsync(rt, dev_ptr: *mut *mut c_void, size: usize, stream: *mut c_void) {
    rt.check_stream(stream as u64)?;
    malloc_device_into(rt, dev_ptr, size)
});
cuda_fn!(fn cudaMallocAsync_ptsz(rt, dev_ptr: *mut *mut c_void, size: usize, stream: *mut c_void) {
    rt.check_stream(stream as u64)?;
    malloc_device_into(rt, dev_ptr, size)
});
cuda_fn!(fn cudaFreeAsync(rt, ptr: *mut c_void, stream: *mut c_void) {
    rt.check_stream(stream as u64)?;
    rt.free(ptr as u64)
});
cuda_fn!(fn cudaFreeAsync_ptsz(rt, ptr: *mut c_void, stream: *mut c_void) {
    rt.check_stream(stream as u64)?;
    rt.free(ptr as u64)
});

unsafe fn malloc_device_into(
    rt: &mut Runtime<ActiveDevice>,
    dev_ptr: *mut *mut c_void,
    size: usize,
) -> CudaResult<()> {
    if dev_ptr.is_null() {
        return Err(CudaError::InvalidValue);
    }
    let p = rt.malloc(size, AllocKind::Device)?;
    put(dev_ptr, p as *mut c_void)
}

// Unified-memory hints: host and device share the very bytes, so there is nothing to move;
// the range is still checked as CUDA does.
cuda_fn!(fn cudaMemPrefetchAsync(rt, dev_ptr: *const c_void, count: usize, _dst_device: c_int, stream: *mut c_void) {
    rt.check_stream(stream as u64)?;
    rt.check_device_range(dev_ptr as u64, count)
});
cuda_fn!(fn cudaMemPrefetchAsync_ptsz(rt, dev_ptr: *const c_void, count: usize, _dst_device: c_int, stream: *mut c_void) {
    rt.check_stream(stream as u64)?;
    rt.check_device_range(dev_ptr as u64, count)
});
cuda_fn!(fn cudaMemAdvise(rt, dev_ptr: *const c_void, count: usize, _advice: c_int, _device: c_int) {
    rt.check_device_range(dev_ptr as u64, count)
});

cuda_fn!(fn cudaMemGetInfo(rt, free: *mut usize, total: *mut usize) {
    let total_bytes = usize::try_from(rt.gpu.global_mem_bytes).unwrap_or(usize::MAX);
    put(free, total_bytes)?;
    put(total, total_bytes)
});

cuda_fn!(fn cudaMemcpy(rt, dst: *mut c_void, src: *const c_void, count: usize, kind: c_int) {
    rt.memcpy(dst as u64, src as u64, count, CopyKind::from_raw(kind)?)
});

cuda_fn!(fn cudaMemcpyAsync(rt, dst: *mut c_void, src: *const c_void, count: usize, kind: c_int, stream: *mut c_void) {
    rt.check_stream(stream as u64)?;
    rt.memcpy(dst as u64, src as u64, count, CopyKind::from_raw(kind)?)
});

cuda_fn!(fn cudaMemset(rt, ptr: *mut c_void, value: c_int, count: usize) {
    rt.memset(ptr as u64, value as u8, count)
});

cuda_fn!(fn cudaMemsetAsync(rt, ptr: *mut c_void, value: c_int, count: usize, stream: *mut c_void) {
    rt.check_stream(stream as u64)?;
    rt.memset(ptr as u64, value as u8, count)
});

/// Rows are padded to 512 bytes, the texture pitch alignment real GPUs report.
const PITCH_ALIGN: usize = 512;

cuda_fn!(fn cudaMallocPitch(rt, dev_ptr: *mut *mut c_void, pitch: *mut usize, width: usize, height: usize) {
    if dev_ptr.is_null() || pitch.is_null() {
        return Err(CudaError::InvalidValue);
    }
    let row = width.max(1).checked_next_multiple_of(PITCH_ALIGN).ok_or(CudaError::MemoryAllocation)?;
    let size = row.checked_mul(height).ok_or(CudaError::MemoryAllocation)?;
    let p = rt.malloc(size, AllocKind::Device)?;
    put(dev_ptr, p as *mut c_void)?;
    put(pitch, row)
});

#[allow(clippy::too_many_arguments)] // mirrors cudaMemcpy2D
unsafe fn memcpy_2d(
    rt: &mut Runtime<ActiveDevice>,
    dst: u64,
    dpitch: usize,
    src: u64,
    spitch: usize,
    width: usize,
    height: usize,
    kind: c_int,
) -> CudaResult<()> {
    let kind = CopyKind::from_raw(kind)?;
    if width > dpitch || width > spitch {
        return Err(CudaError::InvalidPitchValue);
    }
    if matches!(kind, CopyKind::HostToDevice | CopyKind::DeviceToDevice) {
        rt.check_2d(dst, dpitch, width, height)?;
    }
    if matches!(kind, CopyKind::DeviceToHost | CopyKind::DeviceToDevice) {
        rt.check_2d(src, spitch, width, height)?;
    }
    for row in 0..height {
        let d = dst + (row * dpitch) as u64;
        let s = src + (row * spitch) as u64;
        // SAFETY: device rows are inside the checked region; host rows are the caller's.
        unsafe { rt.memcpy(d, s, width, CopyKind::HostToHost)? };
        if kind == CopyKind::HostToDevice {
            rt.host_wrote(d, width);
        }
    }
    Ok(())
}

cuda_fn!(fn cudaMemcpy2D(rt, dst: *mut c_void, dpitch: usize, src: *const c_void, spitch: usize, width: usize, height: usize, kind: c_int) {
    memcpy_2d(rt, dst as u64, dpitch, src as u64, spitch, width, height, kind)
});

cuda_fn!(fn cudaMemcpy2DAsync(rt, dst: *mut c_void, dpitch: usize, src: *const c_void, spitch: usize, width: usize, height: usize, kind: c_int, stream: *mut c_void) {
    rt.check_stream(stream as u64)?;
    memcpy_2d(rt, dst as u64, dpitch, src as u64, spitch, width, height, kind)
});

cuda_fn!(fn cudaMemset2D(rt, ptr: *mut c_void, pitch: usize, value: c_int, width: usize, height: usize) {
    rt.check_2d(ptr as u64, pitch, width, height)?;
    for row in 0..height {
        rt.memset(ptr as u64 + (row * pitch) as u64, value as u8, width)?;
    }
    Ok(())
});

// ----- arrays and textures --------------------------------------------------------------

/// `cudaChannelFormatDesc`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChannelFormatDesc {
    pub x: c_int,
    pub y: c_int,
    pub z: c_int,
    pub w: c_int,
    /// `cudaChannelFormatKind`: 0 signed, 1 unsigned, 2 float.
    pub f: c_int,
}

#[no_mangle]
pub extern "C" fn cudaCreateChannelDesc(
    x: c_int,
    y: c_int,
    z: c_int,
    w: c_int,
    f: c_int,
) -> ChannelFormatDesc {
    ChannelFormatDesc { x, y, z, w, f }
}

cuda_fn!(fn cudaMallocArray(rt, array: *mut *mut c_void, desc: *const ChannelFormatDesc, width: usize, height: usize, _flags: c_uint) {
    if array.is_null() || desc.is_null() {
        return Err(CudaError::InvalidValue);
    }
    let desc = desc.read_unaligned();
    let handle = rt.array_create(desc.format(), width, height)?;
    put(array, handle as *mut c_void)
});

cuda_fn!(fn cudaFreeArray(rt, array: *mut c_void) { rt.array_destroy(array as u64) });

cuda_fn!(fn cudaGetChannelDesc(rt, desc: *mut ChannelFormatDesc, array: *const c_void) {
    let f = rt.array_format(array as u64)?;
    put(desc, ChannelFormatDesc { x: f.bits[0], y: f.bits[1], z: f.bits[2], w: f.bits[3], f: f.kind })
});

cuda_fn!(fn cudaMemcpyToArray(rt, array: *mut c_void, w_offset: usize, h_offset: usize, src: *const c_void, count: usize, kind: c_int) {
    let kind = CopyKind::from_raw(kind)?;
    let (base, row_bytes, _) = rt.array_layout(array as u64)?;
    let start = base + (h_offset * row_bytes + w_offset) as u64;
    let src_kind = if matches!(kind, CopyKind::DeviceToDevice) { CopyKind::DeviceToDevice } else { CopyKind::HostToDevice };
    rt.memcpy(start, src as u64, count, src_kind)
});

cuda_fn!(fn cudaMemcpy2DToArray(rt, array: *mut c_void, w_offset: usize, h_offset: usize, src: *const c_void, spitch: usize, width: usize, height: usize, kind: c_int) {
    let (base, row_bytes, _) = rt.array_layout(array as u64)?;
    let start = base + (h_offset * row_bytes + w_offset) as u64;
    memcpy_2d(rt, start, row_bytes, src as u64, spitch, width, height, kind)
});

cuda_fn!(fn cudaMemcpyFromArray(rt, dst: *mut c_void, array: *const c_void, w_offset: usize, h_offset: usize, count: usize, kind: c_int) {
    let kind = CopyKind::from_raw(kind)?;
    let (base, row_bytes, _) = rt.array_layout(array as u64)?;
    let start = base + (h_offset * row_bytes + w_offset) as u64;
    let k = if matches!(kind, CopyKind::DeviceToDevice) { CopyKind::DeviceToDevice } else { CopyKind::DeviceToHost };
    rt.memcpy(dst as u64, start, count, k)
});

/// The leading fields of `struct textureReference`: what a program sets on a `texture<>`
/// object before binding it.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct TextureReference {
    pub normalized: c_int,
    pub filter_mode: c_int,
    pub address_mode: [c_int; 3],
    pub channel_desc: ChannelFormatDesc,
}

/// The reference's sampler and channel format (`desc` overrides the latter when given).
unsafe fn texture_reference(
    texref: *const c_void,
    desc: *const ChannelFormatDesc,
) -> CudaResult<(ArrayFormat, Sampler)> {
    if texref.is_null() {
        return Err(CudaError::InvalidTexture);
    }
    // SAFETY: a non-null texref points to the program's `textureReference`.
    let r = unsafe { (texref as *const TextureReference).read_unaligned() };
    let d = if desc.is_null() {
        r.channel_desc
    } else {
        // SAFETY: non-null descriptor pointers are valid by the CUDA calling contract.
        unsafe { desc.read_unaligned() }
    };
    Ok((
        d.format(),
        Sampler {
            normalized_coords: r.normalized != 0,
            filter_mode: r.filter_mode,
            address_mode: [r.address_mode[0], r.address_mode[1]],
            read_normalized: false,
        },
    ))
}

impl ChannelFormatDesc {
    fn format(&self) -> ArrayFormat {
        ArrayFormat {
            bits: [self.x, self.y, self.z, self.w],
            kind: self.f,
        }
    }
}

cuda_fn!(fn cudaBindTexture(rt, offset: *mut usize, texref: *const c_void, dev_ptr: *const c_void, desc: *const ChannelFormatDesc, size: usize) {
    if !offset.is_null() {
        put(offset, 0)?;
    }
    let (format, sampler) = texture_reference(texref, desc)?;
    rt.bind_texture_linear(texref as u64, dev_ptr as u64, format, sampler, size, None)
});

cuda_fn!(fn cudaBindTexture2D(rt, offset: *mut usize, texref: *const c_void, dev_ptr: *const c_void, desc: *const ChannelFormatDesc, width: usize, height: usize, pitch: usize) {
    if !offset.is_null() {
        put(offset, 0)?;
    }
    let (format, sampler) = texture_reference(texref, desc)?;
    let size = pitch.checked_mul(height).ok_or(CudaError::InvalidValue)?;
    rt.bind_texture_linear(texref as u64, dev_ptr as u64, format, sampler, size, Some((width, height, pitch)))
});

cuda_fn!(fn cudaBindTextureToArray(rt, texref: *const c_void, array: *const c_void, desc: *const ChannelFormatDesc) {
    let (_, sampler) = texture_reference(texref, desc)?;
    rt.bind_texture_array(texref as u64, array as u64, sampler)
});

cuda_fn!(fn cudaUnbindTexture(rt, texref: *const c_void) { rt.unbind_texture(texref as u64) });

/// `struct cudaResourceDesc`: the resource type and the largest union member (pitch2D).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ResourceDesc {
    pub res_type: c_int,
    pub dev_ptr: *mut c_void,
    pub desc: ChannelFormatDesc,
    pub width_or_size: usize,
    pub height: usize,
    pub pitch_in_bytes: usize,
}

/// The leading fields of `struct cudaTextureDesc`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct TextureDesc {
    pub address_mode: [c_int; 3],
    pub filter_mode: c_int,
    pub read_mode: c_int,
    pub srgb: c_int,
    pub border_color: [f32; 4],
    pub normalized_coords: c_int,
}

cuda_fn!(fn cudaCreateTextureObject(rt, tex_object: *mut u64, res_desc: *const ResourceDesc, tex_desc: *const TextureDesc, _view_desc: *const c_void) {
    if tex_object.is_null() || res_desc.is_null() || tex_desc.is_null() {
        return Err(CudaError::InvalidValue);
    }
    let r = res_desc.read_unaligned();
    let t = tex_desc.read_unaligned();
    // cudaResourceType: 0 array, 1 mipmapped array, 2 linear, 3 pitch2D.
    let resource = match r.res_type {
        // The array handle is the union's first member.
        0 => TextureResource::Array(r.dev_ptr as u64),
        2 => TextureResource::Linear { ptr: r.dev_ptr as u64, format: r.desc.format(), size: r.width_or_size },
        3 => TextureResource::Pitch2D {
            ptr: r.dev_ptr as u64,
            format: r.desc.format(),
            width: r.width_or_size,
            height: r.height,
            pitch: r.pitch_in_bytes,
        },
        1 => {
            report_unsupported("cudaCreateTextureObject of a mipmapped array");
            return Err(CudaError::NotSupported);
        }
        _ => return Err(CudaError::InvalidValue),
    };
    let sampler = Sampler {
        normalized_coords: t.normalized_coords != 0,
        filter_mode: t.filter_mode,
        address_mode: [t.address_mode[0], t.address_mode[1]],
        read_normalized: t.read_mode == 1,
    };
    let handle = rt.texture_object_create(resource, sampler)?;
    put(tex_object, handle)
});

cuda_fn!(fn cudaDestroyTextureObject(rt, tex_object: u64) { rt.texture_object_destroy(tex_object) });

// ----- symbols --------------------------------------------------------------------------

unsafe fn symbol_range(
    rt: &mut Runtime<ActiveDevice>,
    symbol: *const c_void,
    count: usize,
    offset: usize,
) -> CudaResult<u64> {
    let (addr, size) = rt.symbol(symbol as u64)?;
    if offset.checked_add(count).is_none_or(|end| end > size) {
        return Err(CudaError::InvalidValue);
    }
    Ok(addr + offset as u64)
}

cuda_fn!(fn cudaMemcpyToSymbol(rt, symbol: *const c_void, src: *const c_void, count: usize, offset: usize, kind: c_int) {
    let kind = CopyKind::from_raw(kind)?;
    let dst = symbol_range(rt, symbol, count, offset)?;
    let k = if matches!(kind, CopyKind::DeviceToDevice) { CopyKind::DeviceToDevice } else { CopyKind::HostToDevice };
    rt.memcpy(dst, src as u64, count, k)
});

cuda_fn!(fn cudaMemcpyToSymbolAsync(rt, symbol: *const c_void, src: *const c_void, count: usize, offset: usize, kind: c_int, stream: *mut c_void) {
    rt.check_stream(stream as u64)?;
    let kind = CopyKind::from_raw(kind)?;
    let dst = symbol_range(rt, symbol, count, offset)?;
    let k = if matches!(kind, CopyKind::DeviceToDevice) { CopyKind::DeviceToDevice } else { CopyKind::HostToDevice };
    rt.memcpy(dst, src as u64, count, k)
});

cuda_fn!(fn cudaMemcpyFromSymbol(rt, dst: *mut c_void, symbol: *const c_void, count: usize, offset: usize, kind: c_int) {
    let kind = CopyKind::from_raw(kind)?;
    let src = symbol_range(rt, symbol, count, offset)?;
    let k = if matches!(kind, CopyKind::DeviceToDevice) { CopyKind::DeviceToDevice } else { CopyKind::DeviceToHost };
    rt.memcpy(dst as u64, src, count, k)
});

cuda_fn!(fn cudaMemcpyFromSymbolAsync(rt, dst: *mut c_void, symbol: *const c_void, count: usize, offset: usize, kind: c_int, stream: *mut c_void) {
    rt.check_stream(stream as u64)?;
    let kind = CopyKind::from_raw(kind)?;
    let src = symbol_range(rt, symbol, count, offset)?;
    let k = if matches!(kind, CopyKind::DeviceToDevice) { CopyKind::DeviceToDevice } else { CopyKind::DeviceToHost };
    rt.memcpy(dst as u64, src, count, k)
});

cuda_fn!(fn cudaGetSymbolAddress(rt, dev_ptr: *mut *mut c_void, symbol: *const c_void) {
    let (addr, _) = rt.symbol(symbol as u64)?;
    put(dev_ptr, addr as *mut c_void)
});

cuda_fn!(fn cudaGetSymbolSize(rt, size: *mut usize, symbol: *const c_void) {
    let (_, n) = rt.symbol(symbol as u64)?;
    put(size, n)
});

// ----- synchronisation, streams, events -------------------------------------------------

cuda_fn!(fn cudaDeviceSynchronize(rt) { rt.check_sticky() });
cuda_fn!(fn cudaThreadSynchronize(rt) { rt.check_sticky() });

cuda_fn!(fn cudaStreamCreate(rt, stream: *mut *mut c_void) {
    let h = rt.stream_create();
    put(stream, h as *mut c_void)
});

cuda_fn!(fn cudaStreamCreateWithFlags(rt, stream: *mut *mut c_void, _flags: c_uint) {
    let h = rt.stream_create();
    put(stream, h as *mut c_void)
});

cuda_fn!(fn cudaStreamCreateWithPriority(rt, stream: *mut *mut c_void, _flags: c_uint, _priority: c_int) {
    let h = rt.stream_create();
    put(stream, h as *mut c_void)
});

cuda_fn!(fn cudaStreamDestroy(rt, stream: *mut c_void) { rt.stream_destroy(stream as u64) });

cuda_fn!(fn cudaStreamSynchronize(rt, stream: *mut c_void) {
    rt.check_stream(stream as u64)?;
    rt.check_sticky()
});

cuda_fn!(fn cudaStreamQuery(rt, stream: *mut c_void) {
    rt.check_stream(stream as u64)?;
    rt.check_sticky()
});

cuda_fn!(fn cudaStreamWaitEvent(rt, stream: *mut c_void, event: *mut c_void, _flags: c_uint) {
    rt.check_stream(stream as u64)?;
    rt.event_check(event as u64)
});

cuda_fn!(fn cudaEventCreate(rt, event: *mut *mut c_void) {
    let h = rt.event_create();
    put(event, h as *mut c_void)
});

cuda_fn!(fn cudaEventCreateWithFlags(rt, event: *mut *mut c_void, _flags: c_uint) {
    let h = rt.event_create();
    put(event, h as *mut c_void)
});

cuda_fn!(fn cudaEventRecord(rt, event: *mut c_void, stream: *mut c_void) {
    rt.check_stream(stream as u64)?;
    rt.event_record(event as u64)
});

cuda_fn!(fn cudaEventSynchronize(rt, event: *mut c_void) {
    rt.event_check(event as u64)?;
    rt.check_sticky()
});

cuda_fn!(fn cudaEventQuery(rt, event: *mut c_void) { rt.event_check(event as u64) });

cuda_fn!(fn cudaEventElapsedTime(rt, ms: *mut f32, start: *mut c_void, end: *mut c_void) {
    let t = rt.event_elapsed(start as u64, end as u64)?;
    put(ms, t)
});

cuda_fn!(fn cudaEventDestroy(rt, event: *mut c_void) { rt.event_destroy(event as u64) });

// ----- devices --------------------------------------------------------------------------

cuda_fn!(fn cudaGetDeviceCount(_rt, count: *mut c_int) { put(count, 1) });
cuda_fn!(fn cudaSetDevice(rt, device: c_int) { rt.set_device(device) });
cuda_fn!(fn cudaGetDevice(rt, device: *mut c_int) { put(device, rt.current_device()) });
cuda_fn!(fn cudaSetDeviceFlags(_rt, _flags: c_uint) { Ok(()) });
cuda_fn!(fn cudaGetDeviceFlags(_rt, flags: *mut c_uint) { put(flags, 0) });

cuda_fn!(fn cudaGetDeviceProperties(rt, prop: *mut CudaDeviceProp, device: c_int) {
    if device != 0 {
        return Err(CudaError::InvalidDevice);
    }
    if crate::soname::api_major() >= 12 {
        return cuda12::device_properties_v12(rt, prop.cast());
    }
    put(prop, rt.gpu.properties())
});

cuda_fn!(fn cudaDeviceGetAttribute(rt, value: *mut c_int, attr: c_int, device: c_int) {
    if device != 0 {
        return Err(CudaError::InvalidDevice);
    }
    put(value, rt.gpu.attribute(attr).ok_or(CudaError::InvalidValue)?)
});

/// `cudaFuncAttributes` (CUDA 11.8 layout, 56 bytes).
#[repr(C)]
pub struct FuncAttributes {
    pub shared_size_bytes: usize,
    pub const_size_bytes: usize,
    pub local_size_bytes: usize,
    pub max_threads_per_block: c_int,
    pub num_regs: c_int,
    pub ptx_version: c_int,
    pub binary_version: c_int,
    pub cache_mode_ca: c_int,
    pub max_dynamic_shared_size_bytes: c_int,
    pub preferred_shmem_carveout: c_int,
}

/// Registers per thread reported when the simulator's register allocator cannot allocate
/// a kernel (it then still runs functionally): the sm_70 ABI minimum.
const FALLBACK_REGISTERS: c_int = 16;

cuda_fn!(fn cudaFuncGetAttributes(rt, attr: *mut FuncAttributes, func: *const c_void) {
    let res = rt.kernel_resources(func as u64)?;
    let arch = c_int::try_from(rt.gpu.arch).unwrap_or(0);
    // The PTX's own target, as a GPU reports it for JIT-compiled PTX; the binary is the
    // device's.
    let ptx_arch = rt.kernel_ptx_arch(func as u64).and_then(|a| c_int::try_from(a).ok()).unwrap_or(arch);
    put(attr, FuncAttributes {
        shared_size_bytes: res.shared_bytes,
        const_size_bytes: res.const_bytes,
        local_size_bytes: res.local_bytes,
        max_threads_per_block: c_int::try_from(rt.gpu.max_threads_per_block).unwrap_or(1024),
        // From the simulator's own register allocator, as ptxas would report them.
        num_regs: res.registers.and_then(|r| c_int::try_from(r).ok()).unwrap_or(FALLBACK_REGISTERS),
        ptx_version: ptx_arch,
        binary_version: arch,
        cache_mode_ca: 0,
        max_dynamic_shared_size_bytes: c_int::try_from(rt.gpu.shared_mem_per_block).unwrap_or(0),
        preferred_shmem_carveout: -1,
    })
});

cuda_fn!(fn cudaFuncSetCacheConfig(rt, func: *const c_void, _config: c_int) { rt.check_function(func as u64) });
cuda_fn!(fn cudaFuncSetAttribute(rt, func: *const c_void, attr: c_int, value: c_int) {
    rt.check_function(func as u64)?;
    // cudaFuncAttributeNonPortableClusterSizeAllowed (CUDA 12's driver_types.h): clusters
    // of up to 16 CTAs; the other attributes change nothing a simulator models.
    if attr == 14 {
        if value != 0 {
            rt.nonportable_clusters.insert(func as u64);
        } else {
            rt.nonportable_clusters.remove(&(func as u64));
        }
    }
    Ok(())
});
cuda_fn!(fn cudaFuncSetSharedMemConfig(rt, func: *const c_void, _config: c_int) { rt.check_function(func as u64) });
cuda_fn!(fn cudaDeviceSetCacheConfig(_rt, _config: c_int) { Ok(()) });
cuda_fn!(fn cudaDeviceGetCacheConfig(_rt, config: *mut c_int) { put(config, 0) });
cuda_fn!(fn cudaThreadSetCacheConfig(_rt, _config: c_int) { Ok(()) });
cuda_fn!(fn cudaDeviceSetSharedMemConfig(_rt, _config: c_int) { Ok(()) });

/// `cudaLimit` values: stack size, printf FIFO, malloc heap.
fn limit_value(limit: c_int) -> CudaResult<usize> {
    match limit {
        0 => Ok(1024),
        1 => Ok(1 << 20),
        2 => Ok(8 << 20),
        _ => Err(CudaError::InvalidValue),
    }
}

cuda_fn!(fn cudaDeviceSetLimit(_rt, limit: c_int, _value: usize) { limit_value(limit).map(|_| ()) });
cuda_fn!(fn cudaDeviceGetLimit(_rt, value: *mut usize, limit: c_int) { put(value, limit_value(limit)?) });
cuda_fn!(fn cudaThreadSetLimit(_rt, limit: c_int, _value: usize) { limit_value(limit).map(|_| ()) });

cuda_fn!(fn cudaOccupancyMaxActiveBlocksPerMultiprocessor(rt, num_blocks: *mut c_int, func: *const c_void, block_size: c_int, dynamic_smem: usize) {
    put(num_blocks, rt.occupancy(func as u64, block_size, dynamic_smem)?)
});

cuda_fn!(fn cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(rt, num_blocks: *mut c_int, func: *const c_void, block_size: c_int, dynamic_smem: usize, _flags: c_uint) {
    put(num_blocks, rt.occupancy(func as u64, block_size, dynamic_smem)?)
});

// 1000 × major + 10 × minor, of the CUDA version the loaded soname serves.
cuda_fn!(fn cudaDriverGetVersion(_rt, version: *mut c_int) { put(version, cuda12::cuda_version()) });
cuda_fn!(fn cudaRuntimeGetVersion(_rt, version: *mut c_int) { put(version, cuda12::cuda_version()) });

cuda_fn!(fn cudaDeviceReset(rt) {
    rt.reset();
    Ok(())
});

cuda_fn!(fn cudaThreadExit(rt) {
    rt.reset();
    Ok(())
});

cuda_fn!(fn cudaProfilerStart(_rt) { Ok(()) });
cuda_fn!(fn cudaProfilerStop(_rt) { Ok(()) });

// ----- errors ---------------------------------------------------------------------------

#[no_mangle]
pub extern "C" fn cudaGetLastError() -> cudaError_t {
    hook("cudaGetLastError", CudaError::Unknown.code(), || {
        with_runtime(|rt| rt.take_last_error().code())
    })
}

#[no_mangle]
pub extern "C" fn cudaPeekAtLastError() -> cudaError_t {
    hook("cudaPeekAtLastError", CudaError::Unknown.code(), || {
        with_runtime(|rt| rt.peek_last_error().code())
    })
}

/// NUL-terminated copies of the names and messages, made once and never freed.
fn c_strings() -> &'static Vec<(c_int, CString, CString)> {
    static STRINGS: OnceLock<Vec<(c_int, CString, CString)>> = OnceLock::new();
    STRINGS.get_or_init(|| {
        let mut codes: Vec<c_int> = (0..1000)
            .filter(|&c| error::name_of(c) != "cudaErrorUnknown" || c == 999)
            .collect();
        codes.push(-1);
        codes
            .into_iter()
            .map(|c| {
                let name = CString::new(error::name_of(c)).unwrap_or_default();
                let msg = CString::new(error::message_of(c)).unwrap_or_default();
                (c, name, msg)
            })
            .collect()
    })
}

fn error_c_string(code: cudaError_t, message: bool) -> *const c_char {
    hook(
        "cudaGetErrorString",
        c"unrecognized error code".as_ptr(),
        || {
            let table = c_strings();
            let entry = table
                .iter()
                .find(|(c, _, _)| *c == code)
                .or_else(|| table.iter().find(|(c, _, _)| *c == -1));
            match entry {
                Some((_, name, msg)) => {
                    if message {
                        msg.as_ptr()
                    } else {
                        name.as_ptr()
                    }
                }
                None => c"unrecognized error code".as_ptr(),
            }
        },
    )
}

#[no_mangle]
pub extern "C" fn cudaGetErrorString(error: cudaError_t) -> *const c_char {
    error_c_string(error, true)
}

#[no_mangle]
pub extern "C" fn cudaGetErrorName(error: cudaError_t) -> *const c_char {
    error_c_string(error, false)
}

// ----- everything else ------------------------------------------------------------------

/// Prints one line per unsupported feature (the first time it is used).
pub(crate) fn report_unsupported(what: &str) {
    static SEEN: Mutex<Option<HashSet<String>>> = Mutex::new(None);
    let mut seen = SEEN.lock().unwrap_or_else(|p| p.into_inner());
    if seen
        .get_or_insert_with(HashSet::new)
        .insert(what.to_string())
    {
        eprintln!("regsim: {what} is not supported by the simulator");
    }
}

/// Every other libcudart.so.11.0 export: one line on stderr, `cudaErrorNotSupported`.
/// Declared without parameters: on x86-64 the caller's arguments are simply ignored.
macro_rules! unsupported {
    ($($name:ident)*) => {$(
        #[no_mangle]
        pub extern "C" fn $name() -> cudaError_t {
            hook(stringify!($name), CudaError::NotSupported.code(), || {
                report_unsupported(stringify!($name));
                with_runtime(|rt| rt.finish::<()>(Err(CudaError::NotSupported)).err().map_or(0, CudaError::code))
            })
        }
    )*};
}

include!("unsupported_list.rs");

mod cuda12;
mod driver;

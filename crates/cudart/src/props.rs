//! `cudaDeviceProp` with CUDA 11.8's exact layout (728 bytes), filled in for the simulated
//! GPU, and `cudaDeviceGetAttribute` answered from the same description.

use std::ffi::c_int;

/// CUDA 11.8 `struct cudaDeviceProp`; the offsets are asserted in the tests against values
/// measured with `offsetof` on the toolkit's `driver_types.h`.
#[repr(C)]
#[derive(Clone, Copy)]
#[allow(non_snake_case)]
pub struct CudaDeviceProp {
    pub name: [u8; 256],
    pub uuid: [u8; 16],
    pub luid: [u8; 8],
    pub luidDeviceNodeMask: u32,
    pub totalGlobalMem: usize,
    pub sharedMemPerBlock: usize,
    pub regsPerBlock: c_int,
    pub warpSize: c_int,
    pub memPitch: usize,
    pub maxThreadsPerBlock: c_int,
    pub maxThreadsDim: [c_int; 3],
    pub maxGridSize: [c_int; 3],
    pub clockRate: c_int,
    pub totalConstMem: usize,
    pub major: c_int,
    pub minor: c_int,
    pub textureAlignment: usize,
    pub texturePitchAlignment: usize,
    pub deviceOverlap: c_int,
    pub multiProcessorCount: c_int,
    pub kernelExecTimeoutEnabled: c_int,
    pub integrated: c_int,
    pub canMapHostMemory: c_int,
    pub computeMode: c_int,
    pub maxTexture1D: c_int,
    pub maxTexture1DMipmap: c_int,
    pub maxTexture1DLinear: c_int,
    pub maxTexture2D: [c_int; 2],
    pub maxTexture2DMipmap: [c_int; 2],
    pub maxTexture2DLinear: [c_int; 3],
    pub maxTexture2DGather: [c_int; 2],
    pub maxTexture3D: [c_int; 3],
    pub maxTexture3DAlt: [c_int; 3],
    pub maxTextureCubemap: c_int,
    pub maxTexture1DLayered: [c_int; 2],
    pub maxTexture2DLayered: [c_int; 3],
    pub maxTextureCubemapLayered: [c_int; 2],
    pub maxSurface1D: c_int,
    pub maxSurface2D: [c_int; 2],
    pub maxSurface3D: [c_int; 3],
    pub maxSurface1DLayered: [c_int; 2],
    pub maxSurface2DLayered: [c_int; 3],
    pub maxSurfaceCubemap: c_int,
    pub maxSurfaceCubemapLayered: [c_int; 2],
    pub surfaceAlignment: usize,
    pub concurrentKernels: c_int,
    pub ECCEnabled: c_int,
    pub pciBusID: c_int,
    pub pciDeviceID: c_int,
    pub pciDomainID: c_int,
    pub tccDriver: c_int,
    pub asyncEngineCount: c_int,
    pub unifiedAddressing: c_int,
    pub memoryClockRate: c_int,
    pub memoryBusWidth: c_int,
    pub l2CacheSize: c_int,
    pub persistingL2CacheMaxSize: c_int,
    pub maxThreadsPerMultiProcessor: c_int,
    pub streamPrioritiesSupported: c_int,
    pub globalL1CacheSupported: c_int,
    pub localL1CacheSupported: c_int,
    pub sharedMemPerMultiprocessor: usize,
    pub regsPerMultiprocessor: c_int,
    pub managedMemory: c_int,
    pub isMultiGpuBoard: c_int,
    pub multiGpuBoardGroupID: c_int,
    pub hostNativeAtomicSupported: c_int,
    pub singleToDoublePrecisionPerfRatio: c_int,
    pub pageableMemoryAccess: c_int,
    pub concurrentManagedAccess: c_int,
    pub computePreemptionSupported: c_int,
    pub canUseHostPointerForRegisteredMem: c_int,
    pub cooperativeLaunch: c_int,
    pub cooperativeMultiDeviceLaunch: c_int,
    pub sharedMemPerBlockOptin: usize,
    pub pageableMemoryAccessUsesHostPageTables: c_int,
    pub directManagedMemAccessFromHost: c_int,
    pub maxBlocksPerMultiProcessor: c_int,
    pub accessPolicyMaxWindowSize: c_int,
    pub reservedSharedMemPerBlock: usize,
}

/// CUDA 12's `struct cudaDeviceProp` (1032 bytes): CUDA 11.8's fields unchanged, then the
/// fields CUDA 12.0 added and a reserved tail. `cudaGetDeviceProperties_v2` writes it, and
/// so does `cudaGetDeviceProperties` when the library is loaded as `libcudart.so.12`.
#[repr(C)]
#[derive(Clone, Copy)]
#[allow(non_snake_case)]
pub struct CudaDevicePropV12 {
    pub base: CudaDeviceProp,
    pub hostRegisterSupported: c_int,
    pub sparseCudaArraySupported: c_int,
    pub hostRegisterReadOnlySupported: c_int,
    pub timelineSemaphoreInteropSupported: c_int,
    pub memoryPoolsSupported: c_int,
    pub gpuDirectRDMASupported: c_int,
    pub gpuDirectRDMAFlushWritesOptions: u32,
    pub gpuDirectRDMAWritesOrdering: c_int,
    pub memoryPoolSupportedHandleTypes: u32,
    pub deferredMappingCudaArraySupported: c_int,
    pub ipcEventSupported: c_int,
    pub clusterLaunch: c_int,
    pub unifiedFunctionPointers: c_int,
    pub reserved: [c_int; 63],
}

/// The simulated GPU as programs see it. The defaults describe a Volta-class sm_70 part
/// (the V100's published limits); a GPU config file will override them.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuDescription {
    pub name: String,
    pub arch: u32,
    pub sm_count: u32,
    pub global_mem_bytes: u64,
    pub shared_mem_per_block: u32,
    pub shared_mem_per_block_optin: u32,
    pub shared_mem_per_sm: u32,
    pub regs_per_block: u32,
    pub regs_per_sm: u32,
    pub max_threads_per_block: u32,
    pub max_threads_per_sm: u32,
    pub max_blocks_per_sm: u32,
    pub const_mem_bytes: u32,
    pub clock_khz: u32,
    pub memory_clock_khz: u32,
    pub memory_bus_bits: u32,
    pub l2_bytes: u32,
}

impl Default for GpuDescription {
    fn default() -> Self {
        GpuDescription {
            name: "regsim simulated GPU (sm_70)".to_string(),
            arch: 70,
            sm_count: 80,
            global_mem_bytes: 16 << 30,
            shared_mem_per_block: 48 << 10,
            shared_mem_per_block_optin: 96 << 10,
            shared_mem_per_sm: 96 << 10,
            regs_per_block: 65536,
            regs_per_sm: 65536,
            max_threads_per_block: 1024,
            max_threads_per_sm: 2048,
            max_blocks_per_sm: 32,
            const_mem_bytes: 64 << 10,
            clock_khz: 1_530_000,
            memory_clock_khz: 877_000,
            memory_bus_bits: 4096,
            l2_bytes: 6 << 20,
        }
    }
}

impl GpuDescription {
    /// The GPU a timing config simulates, as `cudaGetDeviceProperties` reports it. The
    /// compute capability is `gpu.compute_capability` (default 7.0); per-SM limits, clocks
    /// and cache sizes come from the config. The bus width is chosen so that the usual
    /// peak-bandwidth formula, `2 x memoryClockRate x memoryBusWidth / 8`, gives the
    /// simulated DRAM bandwidth (`dram.channels x dram.bytes_per_cycle` per memory clock).
    pub fn from_config(name: &str, cfg: &timing::GpuConfig) -> GpuDescription {
        let base = GpuDescription::default();
        let sat = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
        let registers = sat(cfg.register_capacity());
        let shared = cfg.sm.shared_memory_bytes;
        GpuDescription {
            name: format!("regsim {name} (simulated)"),
            arch: cfg.gpu.compute_capability,
            sm_count: cfg.gpu.num_sms,
            shared_mem_per_block: shared.min(48 << 10),
            shared_mem_per_block_optin: shared,
            shared_mem_per_sm: shared,
            regs_per_block: registers.min(65536),
            regs_per_sm: registers,
            max_threads_per_block: cfg.sm.max_threads.min(MAX_BLOCK_DIM[0]),
            max_threads_per_sm: cfg.sm.max_threads,
            max_blocks_per_sm: cfg.sm.max_ctas,
            clock_khz: cfg.gpu.core_clock_mhz.saturating_mul(1000),
            memory_clock_khz: cfg.gpu.memory_clock_mhz.saturating_mul(1000),
            memory_bus_bits: sat(u64::from(cfg.dram.channels)
                * u64::from(cfg.dram.bytes_per_cycle)
                * 4),
            l2_bytes: sat(u64::from(cfg.l2.slices) * cfg.l2.slice.size_bytes),
            ..base
        }
    }
}

pub const MAX_BLOCK_DIM: [u32; 3] = [1024, 1024, 64];
pub const MAX_GRID_DIM: [u32; 3] = [i32::MAX as u32, 65535, 65535];

fn int(v: u32) -> c_int {
    c_int::try_from(v).unwrap_or(c_int::MAX)
}

impl GpuDescription {
    pub fn properties(&self) -> CudaDeviceProp {
        // SAFETY: CudaDeviceProp is plain integers and byte arrays; all-zero is valid.
        let mut p: CudaDeviceProp = unsafe { std::mem::zeroed() };
        let name = self.name.as_bytes();
        let n = name.len().min(p.name.len() - 1);
        p.name[..n].copy_from_slice(&name[..n]);
        p.uuid = *b"regsim-simulated";
        p.totalGlobalMem = usize::try_from(self.global_mem_bytes).unwrap_or(usize::MAX);
        p.sharedMemPerBlock = self.shared_mem_per_block as usize;
        p.regsPerBlock = int(self.regs_per_block);
        p.warpSize = 32;
        p.memPitch = i32::MAX as usize;
        p.maxThreadsPerBlock = int(self.max_threads_per_block);
        p.maxThreadsDim = MAX_BLOCK_DIM.map(int);
        p.maxGridSize = MAX_GRID_DIM.map(int);
        p.clockRate = int(self.clock_khz);
        p.totalConstMem = self.const_mem_bytes as usize;
        p.major = int(self.arch / 10);
        p.minor = int(self.arch % 10);
        p.textureAlignment = 512;
        p.texturePitchAlignment = 32;
        p.deviceOverlap = 1;
        p.multiProcessorCount = int(self.sm_count);
        p.canMapHostMemory = 1;
        p.maxTexture1D = 131072;
        p.maxTexture1DMipmap = 32768;
        p.maxTexture1DLinear = 1 << 27;
        p.maxTexture2D = [131072, 65536];
        p.maxTexture2DMipmap = [32768, 32768];
        p.maxTexture2DLinear = [131072, 65000, 2097120];
        p.maxTexture2DGather = [32768, 32768];
        p.maxTexture3D = [16384, 16384, 16384];
        p.maxTexture3DAlt = [8192, 8192, 32768];
        p.maxTextureCubemap = 32768;
        p.maxTexture1DLayered = [32768, 2048];
        p.maxTexture2DLayered = [32768, 32768, 2048];
        p.maxTextureCubemapLayered = [32768, 2046];
        p.maxSurface1D = 32768;
        p.maxSurface2D = [131072, 65536];
        p.maxSurface3D = [16384, 16384, 16384];
        p.maxSurface1DLayered = [32768, 2048];
        p.maxSurface2DLayered = [32768, 32768, 2048];
        p.maxSurfaceCubemap = 32768;
        p.maxSurfaceCubemapLayered = [32768, 2046];
        p.surfaceAlignment = 512;
        p.concurrentKernels = 1;
        p.asyncEngineCount = 1;
        p.unifiedAddressing = 1;
        p.memoryClockRate = int(self.memory_clock_khz);
        p.memoryBusWidth = int(self.memory_bus_bits);
        p.l2CacheSize = int(self.l2_bytes);
        p.maxThreadsPerMultiProcessor = int(self.max_threads_per_sm);
        p.globalL1CacheSupported = 1;
        p.localL1CacheSupported = 1;
        p.sharedMemPerMultiprocessor = self.shared_mem_per_sm as usize;
        p.regsPerMultiprocessor = int(self.regs_per_sm);
        p.managedMemory = 1;
        p.hostNativeAtomicSupported = 1;
        p.singleToDoublePrecisionPerfRatio = 2;
        p.pageableMemoryAccess = 1;
        p.concurrentManagedAccess = 1;
        p.computePreemptionSupported = 1;
        p.canUseHostPointerForRegisteredMem = 1;
        p.cooperativeLaunch = 1;
        p.sharedMemPerBlockOptin = self.shared_mem_per_block_optin as usize;
        p.pageableMemoryAccessUsesHostPageTables = 1;
        p.directManagedMemAccessFromHost = 1;
        p.maxBlocksPerMultiProcessor = int(self.max_blocks_per_sm);
        p
    }

    /// The CUDA 12 layout: the 11.8 fields, stream-ordered allocation (which the runtime
    /// implements), and thread-block clusters on sm_90 and newer.
    pub fn properties_v12(&self) -> CudaDevicePropV12 {
        // SAFETY: plain integers and byte arrays; all-zero is valid.
        let mut p: CudaDevicePropV12 = unsafe { std::mem::zeroed() };
        p.base = self.properties();
        p.memoryPoolsSupported = 1;
        p.clusterLaunch = c_int::from(self.arch >= 90);
        p
    }

    /// `cudaDeviceGetAttribute`: the value of attribute number `attr` (CUDA 11.8's
    /// `cudaDeviceAttr`), or `None` for a number that is not an attribute.
    pub fn attribute(&self, attr: c_int) -> Option<c_int> {
        let p = self.properties();
        let sz = |v: usize| c_int::try_from(v).unwrap_or(c_int::MAX);
        Some(match attr {
            1 => p.maxThreadsPerBlock,
            2..=4 => p.maxThreadsDim[(attr - 2) as usize],
            5..=7 => p.maxGridSize[(attr - 5) as usize],
            8 => sz(p.sharedMemPerBlock),
            9 => sz(p.totalConstMem),
            10 => p.warpSize,
            11 => sz(p.memPitch),
            12 => p.regsPerBlock,
            13 => p.clockRate,
            14 => sz(p.textureAlignment),
            15 => p.deviceOverlap,
            16 => p.multiProcessorCount,
            17 => p.kernelExecTimeoutEnabled,
            18 => p.integrated,
            19 => p.canMapHostMemory,
            20 => p.computeMode,
            21 => p.maxTexture1D,
            22 | 23 => p.maxTexture2D[(attr - 22) as usize],
            24..=26 => p.maxTexture3D[(attr - 24) as usize],
            27 | 28 => p.maxTexture2DLayered[(attr - 27) as usize],
            29 => p.maxTexture2DLayered[2],
            30 => sz(p.surfaceAlignment),
            31 => p.concurrentKernels,
            32 => p.ECCEnabled,
            33 => p.pciBusID,
            34 => p.pciDeviceID,
            35 => p.tccDriver,
            36 => p.memoryClockRate,
            37 => p.memoryBusWidth,
            38 => p.l2CacheSize,
            39 => p.maxThreadsPerMultiProcessor,
            40 => p.asyncEngineCount,
            41 => p.unifiedAddressing,
            42 | 43 => p.maxTexture1DLayered[(attr - 42) as usize],
            45 | 46 => p.maxTexture2DGather[(attr - 45) as usize],
            47..=49 => p.maxTexture3DAlt[(attr - 47) as usize],
            50 => p.pciDomainID,
            51 => sz(p.texturePitchAlignment),
            52 => p.maxTextureCubemap,
            53 | 54 => p.maxTextureCubemapLayered[(attr - 53) as usize],
            55 => p.maxSurface1D,
            56 | 57 => p.maxSurface2D[(attr - 56) as usize],
            58..=60 => p.maxSurface3D[(attr - 58) as usize],
            61 | 62 => p.maxSurface1DLayered[(attr - 61) as usize],
            63..=65 => p.maxSurface2DLayered[(attr - 63) as usize],
            66 => p.maxSurfaceCubemap,
            67 | 68 => p.maxSurfaceCubemapLayered[(attr - 67) as usize],
            69 => p.maxTexture1DLinear,
            70..=72 => p.maxTexture2DLinear[(attr - 70) as usize],
            73 | 74 => p.maxTexture2DMipmap[(attr - 73) as usize],
            75 => p.major,
            76 => p.minor,
            77 => p.maxTexture1DMipmap,
            78 => p.streamPrioritiesSupported,
            79 => p.globalL1CacheSupported,
            80 => p.localL1CacheSupported,
            81 => sz(p.sharedMemPerMultiprocessor),
            82 => p.regsPerMultiprocessor,
            83 => p.managedMemory,
            84 => p.isMultiGpuBoard,
            85 => p.multiGpuBoardGroupID,
            86 => p.hostNativeAtomicSupported,
            87 => p.singleToDoublePrecisionPerfRatio,
            88 => p.pageableMemoryAccess,
            89 => p.concurrentManagedAccess,
            90 => p.computePreemptionSupported,
            91 => p.canUseHostPointerForRegisteredMem,
            92..=94 => 0,
            95 => p.cooperativeLaunch,
            96 => p.cooperativeMultiDeviceLaunch,
            97 => sz(p.sharedMemPerBlockOptin),
            98 | 99 => 0,
            100 => p.pageableMemoryAccessUsesHostPageTables,
            101 => p.directManagedMemAccessFromHost,
            106 => p.maxBlocksPerMultiProcessor,
            108 => p.persistingL2CacheMaxSize,
            109 => p.accessPolicyMaxWindowSize,
            111 => sz(p.reservedSharedMemPerBlock),
            112..=121 => 0,
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn cuda_12_layout_extends_the_11_8_one() {
        // offsetof() against CUDA 12.9's driver_types.h.
        assert_eq!(size_of::<CudaDevicePropV12>(), 1032);
        assert_eq!(offset_of!(CudaDevicePropV12, hostRegisterSupported), 728);
        assert_eq!(offset_of!(CudaDevicePropV12, memoryPoolsSupported), 744);
        assert_eq!(offset_of!(CudaDevicePropV12, clusterLaunch), 772);
        assert_eq!(offset_of!(CudaDevicePropV12, reserved), 780);
        let mut gpu = GpuDescription {
            arch: 90,
            ..GpuDescription::default()
        };
        let p = gpu.properties_v12();
        assert_eq!((p.base.major, p.base.minor, p.clusterLaunch), (9, 0, 1));
        gpu.arch = 80;
        assert_eq!(gpu.properties_v12().clusterLaunch, 0);
    }

    #[test]
    fn layout_matches_cuda_11_8() {
        // Measured with offsetof() against CUDA 11.8's driver_types.h.
        assert_eq!(size_of::<CudaDeviceProp>(), 728);
        assert_eq!(offset_of!(CudaDeviceProp, uuid), 256);
        assert_eq!(offset_of!(CudaDeviceProp, luidDeviceNodeMask), 280);
        assert_eq!(offset_of!(CudaDeviceProp, totalGlobalMem), 288);
        assert_eq!(offset_of!(CudaDeviceProp, regsPerBlock), 304);
        assert_eq!(offset_of!(CudaDeviceProp, memPitch), 312);
        assert_eq!(offset_of!(CudaDeviceProp, maxThreadsDim), 324);
        assert_eq!(offset_of!(CudaDeviceProp, maxGridSize), 336);
        assert_eq!(offset_of!(CudaDeviceProp, clockRate), 348);
        assert_eq!(offset_of!(CudaDeviceProp, totalConstMem), 352);
        assert_eq!(offset_of!(CudaDeviceProp, major), 360);
        assert_eq!(offset_of!(CudaDeviceProp, textureAlignment), 368);
        assert_eq!(offset_of!(CudaDeviceProp, multiProcessorCount), 388);
        assert_eq!(offset_of!(CudaDeviceProp, maxTexture1D), 408);
        assert_eq!(offset_of!(CudaDeviceProp, maxTexture2DLinear), 436);
        assert_eq!(offset_of!(CudaDeviceProp, maxTextureCubemapLayered), 504);
        assert_eq!(offset_of!(CudaDeviceProp, maxSurfaceCubemapLayered), 560);
        assert_eq!(offset_of!(CudaDeviceProp, surfaceAlignment), 568);
        assert_eq!(offset_of!(CudaDeviceProp, concurrentKernels), 576);
        assert_eq!(offset_of!(CudaDeviceProp, memoryClockRate), 608);
        assert_eq!(offset_of!(CudaDeviceProp, l2CacheSize), 616);
        assert_eq!(offset_of!(CudaDeviceProp, maxThreadsPerMultiProcessor), 624);
        assert_eq!(offset_of!(CudaDeviceProp, sharedMemPerMultiprocessor), 640);
        assert_eq!(offset_of!(CudaDeviceProp, regsPerMultiprocessor), 648);
        assert_eq!(
            offset_of!(CudaDeviceProp, cooperativeMultiDeviceLaunch),
            692
        );
        assert_eq!(offset_of!(CudaDeviceProp, sharedMemPerBlockOptin), 696);
        assert_eq!(offset_of!(CudaDeviceProp, maxBlocksPerMultiProcessor), 712);
        assert_eq!(offset_of!(CudaDeviceProp, accessPolicyMaxWindowSize), 716);
        assert_eq!(offset_of!(CudaDeviceProp, reservedSharedMemPerBlock), 720);
    }

    #[test]
    fn attributes_agree_with_properties() {
        let gpu = GpuDescription::default();
        assert_eq!(gpu.attribute(75), Some(7));
        assert_eq!(gpu.attribute(76), Some(0));
        assert_eq!(gpu.attribute(16), Some(80));
        assert_eq!(gpu.attribute(10), Some(32));
        assert_eq!(gpu.attribute(4), Some(64));
        assert_eq!(gpu.attribute(8), Some(48 * 1024));
        assert_eq!(gpu.attribute(44), None);
        assert_eq!(gpu.attribute(5000), None);
    }

    #[test]
    fn a_timing_config_describes_the_device() {
        let cfg = timing::GpuConfig::load(
            "gtx480",
            &timing::config::source_configs_dir(),
            &[timing::Override::parse("gpu.num_sms=7").unwrap()],
        )
        .unwrap();
        let gpu = GpuDescription::from_config("gtx480", &cfg);
        let p = gpu.properties();
        assert_eq!(p.multiProcessorCount, 7);
        assert_eq!(p.clockRate, 700_000);
        assert_eq!(p.regsPerMultiprocessor, 32768);
        assert_eq!(p.maxThreadsPerMultiProcessor, 1536);
        assert_eq!(p.maxThreadsPerBlock, 1024);
        assert_eq!(p.maxBlocksPerMultiProcessor, 8);
        assert_eq!(p.sharedMemPerMultiprocessor, 48 << 10);
        assert_eq!(p.l2CacheSize, 768 << 10);
        assert_eq!((p.major, p.minor), (7, 0));
        // 2 x 924 MHz x 768 bits / 8 = 6 channels x 32 B x 924 MHz.
        assert_eq!(p.memoryBusWidth, 768);
        assert_eq!(gpu.attribute(16), Some(7));
        assert_eq!(gpu.attribute(82), Some(32768));
        assert!(gpu.name.contains("gtx480"));
    }
}

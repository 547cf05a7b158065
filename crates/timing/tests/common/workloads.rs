//! Kernels of the built-in workloads (nvcc PTX from `workloads/ptx/nvcc/`) at their
//! default sizes (the memory-bound ones added with issue 8 and 12, from `matvec_rows` on,
//! at a fraction of them, to keep the test cheap), with valid inputs set up here in Rust, for the simulation-rate bench
//! and the "every workload kernel runs" test. The values only need to be valid (in
//! bounds); the workloads' self-checks run through the CUDA runtime path.

use emu::{Emulator, KernelRef, LaunchConfig};
use timing::KernelInfo;

/// One kernel launch of a workload.
pub struct Case {
    pub workload: &'static str,
    pub kernel: &'static str,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_shared: u32,
    /// Builds the parameter values, allocating inputs.
    pub params: fn(&mut Emulator) -> Vec<u64>,
}

fn floats(emu: &mut Emulator, n: usize, seed: u32) -> u64 {
    let a = emu
        .memory
        .alloc(4 * n as u64, emu::AllocKind::Device)
        .expect("alloc");
    let mut x = seed;
    for i in 0..n {
        x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        let v = 1.0 + (x >> 8) as f32 / (1u32 << 24) as f32;
        emu.memory
            .write_uint(a + 4 * i as u64, 4, u64::from(v.to_bits()))
            .expect("write");
    }
    a
}

fn zeros(emu: &mut Emulator, bytes: u64) -> u64 {
    emu.memory
        .alloc(bytes, emu::AllocKind::Device)
        .expect("alloc")
}

fn f32b(v: f32) -> u64 {
    u64::from(v.to_bits())
}

/// `n` integers below `bound` (all bits for `u32::MAX`; deterministic LCG).
fn ints(emu: &mut Emulator, n: usize, seed: u32, bound: u32) -> u64 {
    let a = emu
        .memory
        .alloc(4 * n.max(1) as u64, emu::AllocKind::Device)
        .expect("alloc");
    let mut x = seed;
    for i in 0..n {
        x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        let v = if bound == u32::MAX {
            x
        } else {
            (x >> 8) % bound.max(1)
        };
        emu.memory
            .write_uint(a + 4 * i as u64, 4, u64::from(v))
            .expect("write");
    }
    a
}

/// CSR offsets of `n` rows of `degree` entries each (`0, degree, 2 degree, ...`).
fn csr_offsets(emu: &mut Emulator, n: usize, degree: u32) -> u64 {
    let a = zeros(emu, 4 * (n as u64 + 1));
    for i in 0..=n {
        emu.memory
            .write_uint(a + 4 * i as u64, 4, u64::from(degree) * i as u64)
            .expect("write");
    }
    a
}

/// The kernels.
pub fn cases() -> Vec<Case> {
    vec![
        Case {
            workload: "saxpy",
            kernel: "_Z5saxpyifPKfPf",
            grid: [48, 1, 1],
            block: [256, 1, 1],
            dynamic_shared: 0,
            params: |e| {
                let n = 200_003;
                vec![n as u64, f32b(2.5), floats(e, n, 1), floats(e, n, 2)]
            },
        },
        Case {
            workload: "reduction",
            kernel: "_Z10reduce_sumPKfPfi",
            grid: [64, 1, 1],
            block: [256, 1, 1],
            dynamic_shared: 1024,
            params: |e| {
                let n = (1 << 16) + 777;
                vec![floats(e, n, 3), zeros(e, 4 * 64), n as u64]
            },
        },
        Case {
            workload: "sgemm_tiled",
            kernel: "_Z11sgemm_tiledPKfS0_Pfiii",
            grid: [5, 4, 1],
            block: [16, 16, 1],
            dynamic_shared: 0,
            params: |e| {
                let (m, n, k) = (64, 80, 96);
                vec![
                    floats(e, m * k, 4),
                    floats(e, k * n, 5),
                    zeros(e, 4 * (m * n) as u64),
                    m as u64,
                    n as u64,
                    k as u64,
                ]
            },
        },
        Case {
            workload: "stencil2d",
            kernel: "_Z8stencil5PKfPfii",
            grid: [9, 7, 1],
            block: [16, 16, 1],
            dynamic_shared: 0,
            params: |e| {
                let (w, h) = (130, 98);
                vec![
                    floats(e, w * h, 6),
                    zeros(e, 4 * (w * h) as u64),
                    w as u64,
                    h as u64,
                ]
            },
        },
        Case {
            workload: "transpose",
            kernel: "_Z15transpose_tiledILi1EEvPKfPfii",
            grid: [8, 6, 1],
            block: [32, 8, 1],
            dynamic_shared: 0,
            params: |e| {
                let (w, h) = (250, 190);
                vec![
                    floats(e, w * h, 7),
                    zeros(e, 4 * (w * h) as u64),
                    w as u64,
                    h as u64,
                ]
            },
        },
        Case {
            workload: "blackscholes",
            kernel: "_Z13black_scholesPKfS0_S0_PfS1_i",
            grid: [40, 1, 1],
            block: [128, 1, 1],
            dynamic_shared: 0,
            params: |e| {
                let n = 20_000;
                vec![
                    floats(e, n, 8),
                    floats(e, n, 9),
                    floats(e, n, 10),
                    zeros(e, 4 * n as u64),
                    zeros(e, 4 * n as u64),
                    n as u64,
                ]
            },
        },
        Case {
            workload: "nbody",
            kernel: "_Z10nbody_stepPK6float4S1_PS_S2_iff",
            grid: [4, 1, 1],
            block: [128, 1, 1],
            dynamic_shared: 0,
            params: |e| {
                let n = 500;
                vec![
                    floats(e, 4 * n, 11),
                    floats(e, 4 * n, 12),
                    zeros(e, 16 * n as u64),
                    zeros(e, 16 * n as u64),
                    n as u64,
                    f32b(0.01),
                    f32b(0.001),
                ]
            },
        },
        Case {
            workload: "histogram",
            kernel: "_Z12histogram256PKhiPj",
            grid: [32, 1, 1],
            block: [192, 1, 1],
            dynamic_shared: 0,
            params: |e| {
                let n = 131_072 + 13;
                vec![floats(e, n / 4 + 1, 13), n as u64, zeros(e, 4 * 256)]
            },
        },
        Case {
            workload: "sgemm_regblock",
            kernel: "_Z14sgemm_regblockPKfS0_Pfiii",
            grid: [2, 2, 1],
            block: [64, 1, 1],
            dynamic_shared: 0,
            params: |e| {
                let n = 128;
                vec![
                    floats(e, n * n, 14),
                    floats(e, n * n, 15),
                    zeros(e, 4 * (n * n) as u64),
                    n as u64,
                    n as u64,
                    n as u64,
                ]
            },
        },
        Case {
            workload: "scan",
            kernel: "_Z11scan_blocksPKiPiS1_i",
            grid: [118, 1, 1],
            block: [256, 1, 1],
            dynamic_shared: 0,
            params: |e| {
                let n = 60_000;
                vec![
                    ints(e, n, 16, 100),
                    zeros(e, 4 * n as u64),
                    zeros(e, 4 * 118),
                    n as u64,
                ]
            },
        },
        Case {
            workload: "devfunc_call",
            kernel: "_Z14devfunc_kernelPKiPKjiPjPiS4_Pf",
            grid: [65, 1, 1],
            block: [128, 1, 1],
            dynamic_shared: 0,
            params: |e| {
                let n = 8192 + 3;
                vec![
                    ints(e, n, 17, 1000),
                    ints(e, n, 18, u32::MAX),
                    n as u64,
                    zeros(e, 4 * n as u64),
                    zeros(e, 4 * n as u64),
                    zeros(e, 4 * n as u64),
                    zeros(e, 4 * n as u64),
                ]
            },
        },
        Case {
            workload: "divergent_loops",
            kernel: "_Z15divergent_loopsPKjiPiPj",
            grid: [33, 1, 1],
            block: [64, 1, 1],
            dynamic_shared: 0,
            params: |e| {
                let n = 2048 + 17;
                vec![
                    ints(e, n, 19, 10_000),
                    n as u64,
                    zeros(e, 4 * n as u64),
                    zeros(e, 4 * n as u64),
                ]
            },
        },
        Case {
            workload: "local_array",
            kernel: "_Z15sort_per_threadPKiPiS1_i",
            grid: [33, 1, 1],
            block: [128, 1, 1],
            dynamic_shared: 0,
            params: |e| {
                let total = 4096 + 40;
                vec![
                    ints(e, total * 16, 20, 1000),
                    zeros(e, 4 * (total * 16) as u64),
                    zeros(e, 4 * (total * 8) as u64),
                    total as u64,
                ]
            },
        },
        Case {
            workload: "warp_intrinsics",
            kernel: "_Z8warp_opsPKiiPiS1_S1_",
            grid: [257, 1, 1],
            block: [128, 1, 1],
            dynamic_shared: 0,
            params: |e| {
                let n = (1 << 15) + 20;
                vec![
                    ints(e, n, 21, 1000),
                    n as u64,
                    zeros(e, 4 * n as u64),
                    zeros(e, 4 * n as u64),
                    zeros(e, 4 * 8 * 1100),
                ]
            },
        },
        Case {
            workload: "kmeans",
            kernel: "_Z13kmeans_assignPKfiPi",
            grid: [24, 1, 1],
            block: [128, 1, 1],
            dynamic_shared: 0,
            params: |e| {
                let n = 3000;
                vec![floats(e, n * 8, 22), n as u64, zeros(e, 4 * n as u64)]
            },
        },
        Case {
            workload: "matvec_rows",
            kernel: "_Z11matvec_rowsPKfS0_Pfii",
            grid: [1, 1, 1],
            block: [64, 1, 1],
            dynamic_shared: 0,
            params: |e| {
                let (rows, cols) = (64, 1024);
                vec![
                    floats(e, rows * cols, 23),
                    floats(e, cols, 24),
                    zeros(e, 4 * rows as u64),
                    rows as u64,
                    cols as u64,
                ]
            },
        },
        Case {
            workload: "conv2d",
            kernel: "_Z7conv3x3PKfPfii",
            grid: [7, 3, 1],
            block: [16, 16, 1],
            dynamic_shared: 0,
            params: |e| {
                let (w, h) = (100, 40);
                vec![
                    floats(e, w * h, 25),
                    zeros(e, 4 * (w * h) as u64),
                    w as u64,
                    h as u64,
                ]
            },
        },
        Case {
            workload: "pagerank_pull",
            kernel: "_Z13pagerank_pullPKiS0_PKfPfif",
            grid: [8, 1, 1],
            block: [128, 1, 1],
            dynamic_shared: 0,
            params: |e| {
                let n = 1024;
                vec![
                    csr_offsets(e, n, 4),
                    ints(e, 4 * n, 26, n as u32),
                    floats(e, n, 27),
                    zeros(e, 4 * n as u64),
                    n as u64,
                    f32b(0.85),
                ]
            },
        },
        Case {
            workload: "syrk",
            kernel: "_Z4syrkPKfPfiiff",
            grid: [1, 64, 1],
            block: [64, 1, 1],
            dynamic_shared: 0,
            params: |e| {
                let (n, k) = (64, 32);
                vec![
                    floats(e, n * k, 28),
                    floats(e, n * n, 29),
                    n as u64,
                    k as u64,
                    f32b(1.5),
                    f32b(0.5),
                ]
            },
        },
        Case {
            workload: "knn",
            kernel: "_Z3knnPKfS0_iiiPiPf",
            grid: [2, 1, 1],
            block: [128, 1, 1],
            dynamic_shared: 0,
            params: |e| {
                let (nq, nr, d) = (256, 8, 24);
                vec![
                    floats(e, nq * d, 30),
                    floats(e, nr * d, 31),
                    nq as u64,
                    nr as u64,
                    d as u64,
                    zeros(e, 4 * 4 * nq as u64),
                    zeros(e, 4 * 4 * nq as u64),
                ]
            },
        },
        Case {
            workload: "atax",
            kernel: "_Z9atax_rowsPKfS0_Pfii",
            grid: [8, 1, 1],
            block: [64, 1, 1],
            dynamic_shared: 0,
            params: |e| {
                let (n, m) = (512, 100);
                vec![
                    floats(e, n * m, 32),
                    floats(e, m, 33),
                    zeros(e, 4 * n as u64),
                    n as u64,
                    m as u64,
                ]
            },
        },
    ]
}

/// A parameter buffer from values at the kernel's declared offsets.
pub fn params_buffer(emu: &Emulator, k: KernelRef, values: &[u64]) -> Vec<u8> {
    let ps = emu.kernel_params(k).expect("kernel");
    let size = ps.iter().map(|p| p.offset + p.size).max().unwrap_or(0) as usize;
    let mut buf = vec![0u8; size];
    for (p, v) in ps.iter().zip(values) {
        let o = p.offset as usize;
        buf[o..o + p.size as usize].copy_from_slice(&v.to_le_bytes()[..p.size as usize]);
    }
    buf
}

/// A loaded kernel with its inputs, ready to simulate.
pub struct Prepared {
    pub emu: Emulator,
    pub kernel: KernelRef,
    pub info: KernelInfo,
    pub params: Vec<u8>,
    pub launch: LaunchConfig,
}

/// Loads `c`'s PTX, allocates registers, sets up inputs.
pub fn prepare(c: &Case) -> Prepared {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../workloads/ptx/nvcc");
    let path = format!("{root}/{}.ptx", c.workload);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut emu = Emulator::new();
    let m = emu
        .load_ptx(c.workload, &text)
        .unwrap_or_else(|e| panic!("{}: {e}", c.workload));
    let kernel = emu
        .kernel(m, c.kernel)
        .unwrap_or_else(|| panic!("{}: no kernel {}", c.workload, c.kernel));
    let info = KernelInfo::compile(
        &emu.module(m).expect("module").program,
        kernel.func,
        &Default::default(),
    )
    .unwrap_or_else(|e| panic!("{}: {e}", c.workload));
    let values = (c.params)(&mut emu);
    let params = params_buffer(&emu, kernel, &values);
    Prepared {
        emu,
        kernel,
        info,
        params,
        launch: LaunchConfig {
            grid: c.grid,
            block: c.block,
            dynamic_shared: c.dynamic_shared,
            cluster: None,
        },
    }
}

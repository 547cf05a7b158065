//! Shared helpers of the timing integration tests: load PTX, lay out parameters, run one
//! kernel through emu + timing.
#![allow(dead_code)]

pub mod workloads;

use emu::{Emulator, KernelRef, LaunchConfig};
use timing::config::default_configs_dir;
use timing::{GpuConfig, KernelInfo, KernelStats, Override, TimingSimulator};

/// Every `register_file.design`.
pub const DESIGNS: [&str; 13] = [
    "baseline",
    "ideal",
    "ideal-unlimited",
    "rfc",
    "orf-lrf",
    "ltrf",
    "ltrf-plus",
    "ltrf-conf",
    "cerf",
    "malekeh",
    "bow",
    "wir",
    "reuse-cache",
];

pub fn config(name: &str, overrides: &[&str]) -> GpuConfig {
    let o: Vec<Override> = overrides
        .iter()
        .map(|s| Override::parse(s).unwrap())
        .collect();
    GpuConfig::load(name, &default_configs_dir(), &o).unwrap()
}

/// A test program of the emulator's `tests/data/modern/`.
pub fn modern_ptx(name: &str) -> String {
    let path = format!(
        "{}/../emu/tests/data/modern/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

pub fn workload(name: &str) -> String {
    let path = format!(
        "{}/../../workloads/ptx/nvcc/{name}.ptx",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A parameter buffer from values at the kernel's declared offsets.
pub fn params(emu: &Emulator, k: KernelRef, values: &[u64]) -> Vec<u8> {
    let ps = emu.kernel_params(k).expect("kernel");
    let size = ps.iter().map(|p| p.offset + p.size).max().unwrap_or(0) as usize;
    let mut buf = vec![0u8; size];
    for (p, v) in ps.iter().zip(values) {
        let o = p.offset as usize;
        buf[o..o + p.size as usize].copy_from_slice(&v.to_le_bytes()[..p.size as usize]);
    }
    buf
}

/// An emulator with `ptx` loaded, the kernel `name` and its allocated info.
pub fn load(ptx: &str, name: &str) -> (Emulator, KernelRef, KernelInfo) {
    let mut emu = Emulator::new();
    let m = emu
        .load_ptx("test.ptx", ptx)
        .unwrap_or_else(|e| panic!("{e}"));
    let k = emu
        .kernel(m, name)
        .unwrap_or_else(|| panic!("no kernel {name}"));
    let program = &emu.module(m).unwrap().program;
    let info = KernelInfo::compile(program, k.func, &Default::default()).unwrap();
    (emu, k, info)
}

/// The kernel's info compiled with the passes `cfg`'s register-file design needs, as
/// `regsim run` compiles it.
pub fn compiled_info(emu: &Emulator, k: KernelRef, cfg: &GpuConfig) -> KernelInfo {
    let program = &emu.module(k.module).expect("module").program;
    let options = compiler::pipeline::LoadOptions {
        max_registers: None,
        passes: timing::rf::required_passes(cfg),
    };
    let compiled = compiler::pipeline::compile(program, &options).unwrap_or_else(|e| panic!("{e}"));
    KernelInfo::from_compiled(&compiled.program, &compiled.functions, k.func)
        .unwrap_or_else(|e| panic!("{e}"))
}

pub fn alloc_f32(emu: &mut Emulator, values: &[f32]) -> u64 {
    let a = emu
        .memory
        .alloc(4 * values.len() as u64, emu::AllocKind::Device)
        .unwrap();
    for (i, v) in values.iter().enumerate() {
        emu.memory
            .write_uint(a + 4 * i as u64, 4, u64::from(v.to_bits()))
            .unwrap();
    }
    a
}

pub fn alloc_u32(emu: &mut Emulator, values: &[u32]) -> u64 {
    let a = emu
        .memory
        .alloc(4 * values.len().max(1) as u64, emu::AllocKind::Device)
        .unwrap();
    for (i, v) in values.iter().enumerate() {
        emu.memory
            .write_uint(a + 4 * i as u64, 4, u64::from(*v))
            .unwrap();
    }
    a
}

pub fn read_u32(emu: &Emulator, addr: u64, n: usize) -> Vec<u32> {
    (0..n)
        .map(|i| emu.memory.read_uint(addr + 4 * i as u64, 4).unwrap() as u32)
        .collect()
}

/// Runs one launch on a fresh simulator.
pub fn run(
    cfg: GpuConfig,
    emu: &mut Emulator,
    k: KernelRef,
    info: &KernelInfo,
    launch: LaunchConfig,
    p: &[u8],
) -> KernelStats {
    let mut sim = TimingSimulator::new(cfg);
    sim.simulate_kernel(emu, k, launch, p, info)
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Runs the launch twice on one simulator and returns the second run's statistics: the
/// instruction cache (and data caches) are warm, so the front end's cold misses do not
/// blur a known answer.
pub fn run_warm(
    cfg: GpuConfig,
    emu: &mut Emulator,
    k: KernelRef,
    info: &KernelInfo,
    launch: LaunchConfig,
    p: &[u8],
) -> KernelStats {
    let mut sim = TimingSimulator::new(cfg);
    sim.simulate_kernel(emu, k, launch, p, info)
        .unwrap_or_else(|e| panic!("{e}"));
    sim.simulate_kernel(emu, k, launch, p, info)
        .unwrap_or_else(|e| panic!("{e}"))
}

/// A kernel `chain(.param .u64 out)`: `n` dependent `add.s32` on one register, then a
/// store of the result.
pub fn add_chain(n: usize) -> String {
    let mut s = String::from(
        ".version 7.0\n.target sm_70\n.address_size 64\n\
         .visible .entry chain(.param .u64 out)\n{\n.reg .b32 %r<4>;\n.reg .b64 %rd<2>;\n\
         ld.param.u64 %rd1, [out];\nmov.u32 %r1, 0;\n",
    );
    for _ in 0..n {
        s.push_str("add.s32 %r1, %r1, 1;\n");
    }
    s.push_str("st.global.u32 [%rd1], %r1;\nret;\n}\n");
    s
}

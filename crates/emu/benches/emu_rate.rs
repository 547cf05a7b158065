//! Functional emulation rate: warp instructions per second, single thread, on the tiled
//! SGEMM workload kernel (shared-memory tiles, barriers, FMA inner loop) and on saxpy.
//!
//! Run with `cargo bench -p emu --bench emu_rate`.

use std::time::Instant;

use emu::{AllocKind, Emulator, LaunchConfig};

fn ptx(name: &str) -> String {
    let path = format!(
        "{}/../../workloads/ptx/nvcc/{name}.ptx",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn param_buf(emu: &Emulator, k: emu::KernelRef, values: &[u64]) -> Vec<u8> {
    let ps = emu.kernel_params(k).expect("kernel params");
    let size = ps.iter().map(|p| p.offset + p.size).max().unwrap_or(0) as usize;
    let mut buf = vec![0u8; size];
    for (p, v) in ps.iter().zip(values) {
        let o = p.offset as usize;
        buf[o..o + p.size as usize].copy_from_slice(&v.to_le_bytes()[..p.size as usize]);
    }
    buf
}

fn report(name: &str, warp_insts: u64, secs: f64) {
    println!(
        "{name:<12} {warp_insts:>12} warp instructions in {secs:>7.3} s = {:>6.2} M warp instr/s",
        warp_insts as f64 / secs / 1e6
    );
}

fn main() {
    let mut emu = Emulator::new();
    let m = emu
        .load_ptx("sgemm_tiled.ptx", &ptx("sgemm_tiled"))
        .expect("load sgemm_tiled");
    let k = emu.kernel(m, "_Z11sgemm_tiledPKfS0_Pfiii").expect("kernel");
    let n = 128u64;
    let a = emu
        .memory
        .alloc(4 * n * n, AllocKind::Device)
        .expect("alloc");
    let b = emu
        .memory
        .alloc(4 * n * n, AllocKind::Device)
        .expect("alloc");
    let c = emu
        .memory
        .alloc(4 * n * n, AllocKind::Device)
        .expect("alloc");
    for i in 0..n * n {
        emu.memory
            .write_uint(a + 4 * i, 4, ((i % 7) as f32).to_bits() as u64)
            .expect("init");
        emu.memory
            .write_uint(b + 4 * i, 4, ((i % 5) as f32 * 0.5).to_bits() as u64)
            .expect("init");
    }
    let p = param_buf(&emu, k, &[a, b, c, n, n, n]);
    let cfg = LaunchConfig {
        grid: [(n / 16) as u32, (n / 16) as u32, 1],
        block: [16, 16, 1],
        dynamic_shared: 0,
        cluster: None,
    };
    let t = Instant::now();
    let stats = emu.run(k, cfg, &p).expect("sgemm runs");
    report(
        "sgemm_tiled",
        stats.warp_instructions,
        t.elapsed().as_secs_f64(),
    );

    let m = emu
        .load_ptx("saxpy.ptx", &ptx("saxpy"))
        .expect("load saxpy");
    let k = emu.kernel(m, "_Z5saxpyifPKfPf").expect("kernel");
    let len = 1u64 << 20;
    let x = emu.memory.alloc(4 * len, AllocKind::Device).expect("alloc");
    let y = emu.memory.alloc(4 * len, AllocKind::Device).expect("alloc");
    let p = param_buf(&emu, k, &[len, 2.0f32.to_bits() as u64, x, y]);
    let t = Instant::now();
    let stats = emu
        .run(k, LaunchConfig::linear(1024, 256), &p)
        .expect("saxpy runs");
    report("saxpy", stats.warp_instructions, t.elapsed().as_secs_f64());
}

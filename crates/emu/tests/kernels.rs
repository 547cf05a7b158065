//! Kernel-level tests: PTX text → parse → lower → load → launch, checking memory.

use std::io::Write;
use std::sync::{Arc, Mutex};

use emu::{Emulator, ErrorKind, KernelRef, LaunchConfig, ModuleId};

const BASICS: &str = include_str!("data/basics.ptx");

fn workload(name: &str) -> String {
    let path = format!(
        "{}/../../workloads/ptx/nvcc/{name}.ptx",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Builds a parameter buffer from values at the kernel's declared offsets.
fn params(emu: &Emulator, k: KernelRef, values: &[u64]) -> Vec<u8> {
    let ps = emu.kernel_params(k).expect("kernel");
    let size = ps.iter().map(|p| p.offset + p.size).max().unwrap_or(0) as usize;
    let mut buf = vec![0u8; size];
    for (p, v) in ps.iter().zip(values) {
        let o = p.offset as usize;
        buf[o..o + p.size as usize].copy_from_slice(&v.to_le_bytes()[..p.size as usize]);
    }
    buf
}

fn load(emu: &mut Emulator, name: &str, text: &str) -> ModuleId {
    emu.load_ptx(name, text).unwrap_or_else(|e| panic!("{e}"))
}

fn read_u32s(emu: &Emulator, addr: u64, n: usize) -> Vec<u32> {
    (0..n)
        .map(|i| emu.memory.read_uint(addr + 4 * i as u64, 4).unwrap() as u32)
        .collect()
}

#[derive(Clone, Default)]
struct Sink(Arc<Mutex<Vec<u8>>>);
impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn divergent_branches_loops_and_early_exit() {
    let mut emu = Emulator::new();
    let m = load(&mut emu, "basics.ptx", BASICS);
    let k = emu.kernel(m, "diverge").unwrap();
    let out = emu.memory.alloc(4 * 64, emu::AllocKind::Device).unwrap();
    emu.memory.memset(out, 0xEE, 4 * 64).unwrap();
    let p = params(&emu, k, &[out, 50]);
    let stats = emu.run(k, LaunchConfig::linear(1, 64), &p).unwrap();
    let got = read_u32s(&emu, out, 64);
    for (t, &v) in got.iter().enumerate() {
        let t = t as u32;
        let want = if t >= 50 {
            0xEEEE_EEEE
        } else if t % 2 == 1 {
            3 * t
        } else if t < 8 {
            u32::MAX
        } else {
            100 + t
        };
        assert_eq!(v, want, "thread {t}");
    }
    assert!(stats.warp_instructions > 0 && stats.thread_instructions > stats.warp_instructions);
}

#[test]
fn shared_memory_barriers_reductions_and_warp_ops() {
    let mut emu = Emulator::new();
    let m = load(&mut emu, "basics.ptx", BASICS);
    let k = emu.kernel(m, "reverse").unwrap();
    let out = emu.memory.alloc(4 * 64, emu::AllocKind::Device).unwrap();
    let counts = emu
        .memory
        .alloc(8 + 4 * 64, emu::AllocKind::Device)
        .unwrap();
    let p = params(&emu, k, &[out, counts]);
    emu.run(k, LaunchConfig::linear(1, 64), &p).unwrap();
    let got = read_u32s(&emu, out, 64);
    assert_eq!(got, (0..64).rev().collect::<Vec<u32>>());
    let c = read_u32s(&emu, counts, 2 + 64);
    assert_eq!(c[0], (0..64).filter(|t| t % 3 == 0).count() as u32);
    let ballot: u32 = (0..32).filter(|t| t % 3 == 0).fold(0, |m, t| m | 1 << t);
    assert_eq!(c[1], ballot);
    for t in 0..64u32 {
        assert_eq!(c[2 + t as usize], t + (t ^ 1), "bfly of lane {t}");
    }
}

#[test]
fn barrier_deadlock_is_reported_with_location() {
    let mut emu = Emulator::new();
    let m = load(&mut emu, "basics.ptx", BASICS);
    let k = emu.kernel(m, "deadlock").unwrap();
    let e = emu.run(k, LaunchConfig::linear(1, 64), &[]).unwrap_err();
    match &e.kind {
        ErrorKind::BarrierDeadlock {
            barrier: 0,
            waiting,
            missing,
        } => {
            assert_eq!(
                (waiting.as_slice(), missing.as_slice()),
                (&[0][..], &[1][..])
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(e.location.inst_text.contains("bar.sync 0"), "{e}");
    assert_eq!(e.location.kernel, "deadlock");
}

#[test]
fn misaligned_access_names_kernel_line_thread_and_address() {
    let mut emu = Emulator::new();
    let m = load(&mut emu, "basics.ptx", BASICS);
    let k = emu.kernel(m, "misaligned").unwrap();
    let out = emu.memory.alloc(64, emu::AllocKind::Device).unwrap();
    let p = params(&emu, k, &[out]);
    let e = emu.run(k, LaunchConfig::linear(1, 32), &p).unwrap_err();
    assert!(
        matches!(e.kind, ErrorKind::Memory(emu::MemError::Misaligned { .. })),
        "{e}"
    );
    assert_eq!(e.location.kernel, "misaligned");
    assert_eq!(e.location.thread, Some([0, 0, 0]));
    assert!(e.location.inst_text.contains("st.global.u32"), "{e}");
    let text = e.to_string();
    assert!(
        text.contains("basics.ptx:") && text.contains(&format!("{:#x}", out + 2)),
        "{text}"
    );
}

#[test]
fn out_of_bounds_global_access_is_an_error() {
    let mut emu = Emulator::new();
    let m = load(&mut emu, "basics.ptx", BASICS);
    let k = emu.kernel(m, "diverge").unwrap();
    let out = emu.memory.alloc(4 * 16, emu::AllocKind::Device).unwrap();
    let p = params(&emu, k, &[out, 64]);
    let e = emu.run(k, LaunchConfig::linear(1, 64), &p).unwrap_err();
    assert!(matches!(e.kind, ErrorKind::Memory(_)), "{e}");
    assert!(e.location.lane.is_some());
}

#[test]
fn device_calls_recursion_atomics_and_printf() {
    let mut emu = Emulator::new();
    let sink = Sink::default();
    emu.printf_sink = Box::new(sink.clone());
    let m = load(&mut emu, "basics.ptx", BASICS);
    let k = emu.kernel(m, "calls").unwrap();
    let out = emu.memory.alloc(4 * 40, emu::AllocKind::Device).unwrap();
    let sum = emu.memory.alloc(4, emu::AllocKind::Device).unwrap();
    let p = params(&emu, k, &[out, sum]);
    emu.run(k, LaunchConfig::linear(1, 40), &p).unwrap();
    let got = read_u32s(&emu, out, 13);
    let mut f = 1u32;
    for (t, &v) in got.iter().enumerate() {
        if t > 1 {
            f = f.wrapping_mul(t as u32);
        }
        assert_eq!(v, f, "fact({t})");
    }
    assert_eq!(emu.memory.read_uint(sum, 4).unwrap(), (0..40).sum::<u64>());
    let text = String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
    assert_eq!(text, "tid 5 fact 120\n");
}

#[test]
fn saxpy_workload() {
    let mut emu = Emulator::new();
    let m = load(&mut emu, "saxpy.ptx", &workload("saxpy"));
    let k = emu.kernel(m, "_Z5saxpyifPKfPf").unwrap();
    let n = 5000usize;
    let x = emu
        .memory
        .alloc(4 * n as u64, emu::AllocKind::Device)
        .unwrap();
    let y = emu
        .memory
        .alloc(4 * n as u64, emu::AllocKind::Device)
        .unwrap();
    let a = 1.7f32;
    let xs: Vec<f32> = (0..n).map(|i| (i as f32) * 0.25 - 3.0).collect();
    let ys: Vec<f32> = (0..n).map(|i| 1.0 / (i as f32 + 1.0)).collect();
    for i in 0..n {
        emu.memory
            .write_uint(x + 4 * i as u64, 4, xs[i].to_bits() as u64)
            .unwrap();
        emu.memory
            .write_uint(y + 4 * i as u64, 4, ys[i].to_bits() as u64)
            .unwrap();
    }
    let p = params(&emu, k, &[n as u64, a.to_bits() as u64, x, y]);
    emu.run(k, LaunchConfig::linear(8, 128), &p).unwrap();
    for i in 0..n {
        let got = f32::from_bits(emu.memory.read_uint(y + 4 * i as u64, 4).unwrap() as u32);
        assert_eq!(got, xs[i].mul_add(a, ys[i]), "y[{i}]");
    }
}

#[test]
fn reduction_workload_matches_the_same_summation_order() {
    let mut emu = Emulator::new();
    let m = load(&mut emu, "reduction.ptx", &workload("reduction"));
    let k = emu.kernel(m, "_Z10reduce_sumPKfPfi").unwrap();
    let n = 20_000usize;
    let (blocks, threads) = (16u32, 128u32);
    let vals: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1000) as f32 / 997.0).collect();
    let d_in = emu
        .memory
        .alloc(4 * n as u64, emu::AllocKind::Device)
        .unwrap();
    let d_part = emu
        .memory
        .alloc(4 * blocks as u64, emu::AllocKind::Device)
        .unwrap();
    for (i, v) in vals.iter().enumerate() {
        emu.memory
            .write_uint(d_in + 4 * i as u64, 4, v.to_bits() as u64)
            .unwrap();
    }
    let p = params(&emu, k, &[d_in, d_part, n as u64]);
    let mut cfg = LaunchConfig::linear(blocks, threads);
    cfg.dynamic_shared = 4 * threads;
    emu.run(k, cfg, &p).unwrap();
    for b in 0..blocks as usize {
        let mut partial: Vec<f32> = (0..threads as usize)
            .map(|t| {
                let mut s = 0f32;
                let mut i = b * threads as usize + t;
                while i < n {
                    s += vals[i];
                    i += (blocks * threads) as usize;
                }
                s
            })
            .collect();
        let mut s = threads as usize / 2;
        while s > 0 {
            for t in 0..s {
                partial[t] += partial[t + s];
            }
            s /= 2;
        }
        let got = f32::from_bits(emu.memory.read_uint(d_part + 4 * b as u64, 4).unwrap() as u32);
        assert_eq!(got, partial[0], "block {b}");
    }
}

#[test]
fn every_workload_ptx_loads() {
    let dir = format!("{}/../../workloads/ptx/nvcc", env!("CARGO_MANIFEST_DIR"));
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    let mut failures = Vec::new();
    for e in entries.flatten() {
        let path = e.path();
        if path.extension().is_some_and(|x| x == "ptx") {
            let text = std::fs::read_to_string(&path).unwrap();
            let mut emu = Emulator::new();
            if let Err(err) = emu.load_ptx(&path.display().to_string(), &text) {
                failures.push(format!("{}: {err}", path.display()));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

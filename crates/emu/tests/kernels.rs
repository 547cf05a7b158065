//! Kernel-level tests: PTX text → parse → lower → load → launch, checking memory.

use std::io::Write;
use std::sync::{Arc, Mutex};

use emu::control_slice::ControlSlice;
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

#[test]
fn warp_intrinsics_workload() {
    let mut emu = Emulator::new();
    let m = load(
        &mut emu,
        "warp_intrinsics.ptx",
        &workload("warp_intrinsics"),
    );
    let k = emu
        .kernel(m, "_Z8warp_opsPKiiPiS1_S1_")
        .expect("warp_ops kernel");
    let n = 1000usize + 20;
    let threads = 128u32;
    let blocks = (n as u32).div_ceil(threads);
    let warps = (blocks * threads / 32) as usize;
    let mut seed = 8675309u64;
    let input: Vec<i32> = (0..n)
        .map(|_| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 33) % 2001) as i32 - 1000
        })
        .collect();
    let alloc = |emu: &mut Emulator, bytes: usize| {
        emu.memory
            .alloc(bytes as u64, emu::AllocKind::Device)
            .unwrap()
    };
    let (d_in, d_scan, d_seg, d_warp) = (
        alloc(&mut emu, 4 * n),
        alloc(&mut emu, 4 * n),
        alloc(&mut emu, 4 * n),
        alloc(&mut emu, 32 * warps),
    );
    for (i, v) in input.iter().enumerate() {
        emu.memory
            .write_uint(d_in + 4 * i as u64, 4, *v as u32 as u64)
            .unwrap();
    }
    let p = params(&emu, k, &[d_in, n as u64, d_scan, d_seg, d_warp]);
    emu.run(k, LaunchConfig::linear(blocks, threads), &p)
        .unwrap();
    let scan = read_u32s(&emu, d_scan, n);
    let seg = read_u32s(&emu, d_seg, n);
    let wout = read_u32s(&emu, d_warp, 8 * warps);
    for w in 0..warps {
        let vals: Vec<i32> = (0..32)
            .map(|l| input.get(w * 32 + l).copied().unwrap_or(0))
            .collect();
        let valid = |l: usize| w * 32 + l < n;
        let mut running = 0;
        let mut expect = [0i32, i32::MIN, vals[w & 31], 0, 0, 0, 1, 1];
        for l in 0..32 {
            expect[0] += vals[l];
            if valid(l) && vals[l] > expect[1] {
                expect[1] = vals[l];
            }
            if valid(l) && vals[l] > 0 {
                expect[3] |= 1 << l;
                expect[4] += 1;
            }
            if vals[l] > 900 {
                expect[5] = 1;
            }
            if !valid(l) {
                expect[6] = 0;
            }
            running += vals[l];
            let s: i32 = vals[l & !7..(l & !7) + 8].iter().sum();
            if valid(l) {
                assert_eq!(
                    scan[w * 32 + l] as i32,
                    running,
                    "scan of warp {w} lane {l}"
                );
                assert_eq!(
                    seg[w * 32 + l] as i32,
                    s,
                    "segment sum of warp {w} lane {l}"
                );
            }
        }
        let got: Vec<i32> = wout[8 * w..8 * w + 8].iter().map(|&x| x as i32).collect();
        assert_eq!(got, expect, "warp {w}");
    }
}

mod devfunc_reference {
    //! The host reference functions of workloads/devfunc_call, in Rust.
    pub fn rotate_left(x: u32, k: i32) -> u32 {
        x.rotate_left(k as u32)
    }
    pub fn mix_rounds(mut a: u32, mut b: u32, mut c: u32, rounds: i32) -> u32 {
        for _ in 0..rounds {
            a = a.wrapping_add(b);
            c ^= a;
            c = rotate_left(c, 13);
            b = b.wrapping_add(c);
            a ^= b;
            a = rotate_left(a, 7);
            c = c.wrapping_add(a.wrapping_mul(0x2545f491));
        }
        a ^ b ^ c
    }
    pub fn hash_pair(key: u32, index: u32) -> u32 {
        let first = mix_rounds(key, index, 0x9e3779b9, 3 + (index & 3) as i32);
        mix_rounds(first, key, index, 2)
    }
    pub fn clamped_window_sum(
        values: &[i32],
        start: usize,
        count: usize,
        lo: i32,
        hi: i32,
    ) -> (i32, i32) {
        let mut sum = 0;
        let mut clipped = 0;
        for &v in &values[start..start + count] {
            let c = v.clamp(lo, hi);
            clipped += (c != v) as i32;
            sum += c;
        }
        (sum, clipped)
    }
}

#[test]
fn devfunc_call_workload() {
    use devfunc_reference::*;
    let mut emu = Emulator::new();
    let m = load(&mut emu, "devfunc_call.ptx", &workload("devfunc_call"));
    let k = emu
        .module(m)
        .unwrap()
        .program
        .kernels()
        .next()
        .map(|(f, _)| emu::KernelRef { module: m, func: f })
        .expect("a kernel");
    let n = 1000usize + 3;
    let mut state = 60606u32;
    let mut next = || {
        state = state.wrapping_mul(1664525).wrapping_add(1013904223);
        state
    };
    let mut values = Vec::new();
    let mut keys = Vec::new();
    for _ in 0..n {
        values.push(((next() as u64 * 61) >> 32) as i32 - 30);
        keys.push(next());
    }
    let bufs: Vec<u64> = (0..6)
        .map(|_| {
            emu.memory
                .alloc(4 * n as u64, emu::AllocKind::Device)
                .unwrap()
        })
        .collect();
    for i in 0..n {
        emu.memory
            .write_uint(bufs[0] + 4 * i as u64, 4, values[i] as u32 as u64)
            .unwrap();
        emu.memory
            .write_uint(bufs[1] + 4 * i as u64, 4, keys[i] as u64)
            .unwrap();
    }
    let p = params(
        &emu,
        k,
        &[
            bufs[0], bufs[1], n as u64, bufs[2], bufs[3], bufs[4], bufs[5],
        ],
    );
    emu.run(k, LaunchConfig::linear((n as u32).div_ceil(128), 128), &p)
        .unwrap();
    let hashes = read_u32s(&emu, bufs[2], n);
    let sums = read_u32s(&emu, bufs[3], n);
    let clips = read_u32s(&emu, bufs[4], n);
    for i in 0..n {
        let h = hash_pair(keys[i], i as u32);
        let window = 1 + (h % 16) as usize;
        let start = if i < n - 16 { i } else { n - 16 };
        let (sum, clipped) = clamped_window_sum(&values, start, window, -20, 20);
        assert_eq!(hashes[i], h, "hash[{i}]");
        assert_eq!(
            (sums[i] as i32, clips[i] as i32),
            (sum, clipped),
            "window {i}"
        );
    }
}

/// A failing device `assert` (a call to the `__assertfail` built-in) is located at the
/// call, not at the instruction after it.
#[test]
fn failed_assert_is_located_at_the_call() {
    let ptx = "\
.version 7.8
.target sm_70
.address_size 64
.extern .func __assertfail(.param .b64 msg, .param .b64 file, .param .b32 line, .param .b64 func, .param .b64 size)
;
.global .align 1 .b8 msg[6] = {120, 32, 60, 32, 53, 0};
.global .align 1 .b8 file[5] = {97, 46, 99, 117, 0};
.visible .entry check(.param .u32 x)
{
	.reg .pred %p<2>;
	.reg .b32 %r<3>;
	.reg .b64 %rd<3>;
	ld.param.u32 %r1, [x];
	setp.lt.s32 %p1, %r1, 5;
	@%p1 bra DONE;
	mov.u64 %rd1, msg;
	mov.u64 %rd2, file;
	mov.u32 %r2, 88;
	{
	.param .b64 p0;
	st.param.b64 [p0], %rd1;
	.param .b64 p1;
	st.param.b64 [p1], %rd2;
	.param .b32 p2;
	st.param.b32 [p2], %r2;
	.param .b64 p3;
	st.param.b64 [p3], 0;
	.param .b64 p4;
	st.param.b64 [p4], 1;
	call.uni __assertfail, (p0, p1, p2, p3, p4);
	}
DONE:
	ret;
}
";
    let mut emu = Emulator::new();
    let m = load(&mut emu, "assert.ptx", ptx);
    let k = emu.kernel(m, "check").unwrap();
    assert!(emu
        .run(k, LaunchConfig::linear(1, 4), &3u32.to_le_bytes())
        .is_ok());
    let e = emu
        .run(k, LaunchConfig::linear(1, 4), &7u32.to_le_bytes())
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Assert("x < 5 (a.cu:88)".to_string()));
    assert_eq!(e.location.line, 30, "{e}");
    assert!(
        e.location.inst_text.starts_with("call.uni __assertfail"),
        "{e}"
    );
    assert_eq!(e.location.thread, Some([0, 0, 0]));
}

/// Counts what a [`emu::StepObserver`] sees, shared with the test.
#[derive(Clone, Default)]
struct StepTally(Arc<Mutex<(u64, u64, u64)>>);
impl emu::StepObserver for StepTally {
    fn observe(&mut self, _cta: [u32; 3], _warp: u32, step: &emu::WarpStep) {
        let mut t = self.0.lock().unwrap();
        t.0 += 1;
        t.1 += u64::from(step.exec_mask.count_ones());
        if step.event == (emu::StepEvent::Exit { done: true }) {
            t.2 += 1;
        }
    }
}

#[test]
fn a_step_observer_sees_every_executed_warp_instruction() {
    let mut emu = Emulator::new();
    let m = load(&mut emu, "basics.ptx", BASICS);
    let k = emu.kernel(m, "diverge").unwrap();
    let out = emu.memory.alloc(4 * 64, emu::AllocKind::Device).unwrap();
    let p = params(&emu, k, &[out, 50]);
    let tally = StepTally::default();
    emu.step_observer = Some(Box::new(tally.clone()));
    let stats = emu.run(k, LaunchConfig::linear(3, 64), &p).unwrap();
    let (warp, thread, exited) = *tally.0.lock().unwrap();
    assert_eq!(warp, stats.warp_instructions);
    assert_eq!(thread, stats.thread_instructions);
    assert_eq!(exited, 3 * 2, "every warp of every CTA exits once");
}

const GATHER: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry gather(.param .u64 tex, .param .u64 out)
{
    .reg .b32 %r<6>;
    .reg .f32 %f<8>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [tex];
    ld.param.u64 %rd2, [out];
    mov.f32 %f1, 0f3F800000;
    mov.f32 %f2, 0f3F800000;
    tld4.g.2d.v4.f32.f32 {%f3, %f4, %f5, %f6}, [%rd1, {%f1, %f2}];
    st.global.v4.f32 [%rd2], {%f3, %f4, %f5, %f6};
    txq.width.b32 %r1, [%rd1];
    txq.height.b32 %r2, [%rd1];
    txq.channel_data_type.b32 %r3, [%rd1];
    txq.addr_mode_1.b32 %r4, [%rd1];
    st.global.v4.u32 [%rd2+16], {%r1, %r2, %r3, %r4};
    txq.array_size.b32 %r5, [%rd1];
    ret;
}
"#;

#[test]
fn tld4_gathers_and_txq_answers_through_a_texture_handle() {
    use emu::texture::{AddressMode, ChannelFormat, FilterMode, TextureBinding};
    let mut emu = Emulator::new();
    let m = load(&mut emu, "gather.ptx", GATHER);
    let k = emu.kernel(m, "gather").unwrap();
    // 3×2 RG float texture: channel c of (x, y) is 100·c + 10·y + x.
    let (w, h) = (3u64, 2u64);
    let base = emu.memory.alloc(8 * w * h, emu::AllocKind::Device).unwrap();
    for y in 0..h {
        for x in 0..w {
            for c in 0..2 {
                let v = (100 * c + 10 * y + x) as f32;
                let addr = base + 8 * (y * w + x) + 4 * c;
                emu.memory.write_uint(addr, 4, v.to_bits() as u64).unwrap();
            }
        }
    }
    let handle = 0x7e57;
    emu.textures.by_handle.insert(
        handle,
        TextureBinding {
            base,
            width: w,
            height: h,
            pitch: 8 * w,
            format: ChannelFormat::Float32,
            channels: 2,
            address_mode: [AddressMode::Clamp, AddressMode::Wrap],
            filter: FilterMode::Point,
            normalized_coords: false,
            read_normalized: false,
        },
    );
    let out = emu.memory.alloc(32, emu::AllocKind::Device).unwrap();
    let p = params(&emu, k, &[handle, out]);
    let err = emu.run(k, LaunchConfig::linear(1, 1), &p).unwrap_err();
    // Everything up to the array-size query ran: (1, 1) is the corner of texels 0..=1.
    let gathered: Vec<f32> = read_u32s(&emu, out, 4)
        .into_iter()
        .map(f32::from_bits)
        .collect();
    assert_eq!(gathered, [110.0, 111.0, 101.0, 100.0]);
    assert_eq!(read_u32s(&emu, out + 16, 4), [3, 2, 0x10DE, 0]);
    assert!(
        err.to_string().contains("txq.array_size"),
        "a query the binding cannot answer is an error: {err}"
    );
}

// ---- Programs as current compilers emit them for sm_80/sm_90a (PTX ISA 7.8 to 9.x): the
// committed PTX in `data/modern/` (nvcc 11.8 output beside its `.cu` source, or the LLVM
// NVPTX back end's form). ----

fn modern_data(name: &str) -> String {
    let path = format!("{}/tests/data/modern/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn alloc_u32s(emu: &mut Emulator, values: &[u32]) -> u64 {
    let a = emu
        .memory
        .alloc(4 * values.len().max(1) as u64, emu::AllocKind::Device)
        .unwrap();
    for (i, v) in values.iter().enumerate() {
        emu.memory
            .write_uint(a + 4 * i as u64, 4, *v as u64)
            .unwrap();
    }
    a
}

#[test]
fn llvm_one_element_vectors_and_cache_policies_at_isa_8_and_9() {
    for version in ["8.4", "9.0"] {
        let text = modern_data("vector1.llvm-sm90a.ptx")
            .replace(".version 8.4", &format!(".version {version}"));
        let mut emu = Emulator::new();
        let m = emu
            .load_ptx("vector1.ptx", &text)
            .unwrap_or_else(|e| panic!("{e}"));
        let k = emu.kernel(m, "triple").unwrap();
        let input: Vec<u32> = (0..64).map(|i| i * 7 + 1).collect();
        let a = alloc_u32s(&mut emu, &input);
        let out = alloc_u32s(&mut emu, &[0; 64]);
        let p = params(&emu, k, &[a, out]);
        emu.run(k, LaunchConfig::linear(1, 64), &p).unwrap();
        let want: Vec<u32> = input.iter().map(|x| 3 * x).collect();
        assert_eq!(read_u32s(&emu, out, 64), want, "ISA {version}");
    }
}

#[test]
fn nvcc_cache_operators_and_access_property_hints() {
    let mut emu = Emulator::new();
    let m = emu
        .load_ptx("hints.ptx", &modern_data("hints.nvcc-sm80.ptx"))
        .unwrap_or_else(|e| panic!("{e}"));
    let n = 100u32;
    let input: Vec<u32> = (0..n).map(|i| (i as f32 * 0.5).to_bits()).collect();
    let a = alloc_u32s(&mut emu, &input);
    let out = alloc_u32s(&mut emu, &vec![0; n as usize]);
    let k = emu.kernel(m, "_Z5hintsPKfPfi").unwrap();
    let p = params(&emu, k, &[a, out, n as u64]);
    emu.run(k, LaunchConfig::linear(1, 128), &p).unwrap();
    let f = |i: u32| i as f32 * 0.5;
    let got = read_u32s(&emu, out, n as usize);
    for i in 0..n {
        let want = f(i) + f((i + 1) % n) + f((i + 2) % n) + f((i + 3) % n);
        assert_eq!(f32::from_bits(got[i as usize]), want, "hints out[{i}]");
    }
    // annotated_ptr<persisting>: createpolicy + .L2::cache_hint loads and stores.
    let k = emu.kernel(m, "_Z6policyPfi").unwrap();
    let p = params(&emu, k, &[a, n as u64]);
    emu.run(k, LaunchConfig::linear(1, 128), &p).unwrap();
    let got = read_u32s(&emu, a, n as usize);
    for i in 0..n {
        assert_eq!(
            f32::from_bits(got[i as usize]),
            f(i) * 2.0 + 1.0,
            "policy p[{i}]"
        );
    }
}

#[test]
fn cp_async_data_are_visible_only_after_the_wait_that_covers_their_group() {
    let mut emu = Emulator::new();
    let m = emu
        .load_ptx("cp_async.ptx", &modern_data("cp_async.nvcc-sm80.ptx"))
        .unwrap_or_else(|e| panic!("{e}"));
    let k = emu.kernel(m, "_Z14cp_async_orderPK4int4Pi").unwrap();
    let input: Vec<u32> = (0..256).map(|i| 1000 + i).collect();
    let a = alloc_u32s(&mut emu, &input);
    let out = alloc_u32s(&mut emu, &[0; 224]);
    let p = params(&emu, k, &[a, out]);
    emu.run(k, LaunchConfig::linear(1, 32), &p).unwrap();
    let got = read_u32s(&emu, out, 224);
    for t in 0..32usize {
        let lane = |i: usize| got[i * 32 + t] as i32;
        // Before any wait: neither group is visible.
        assert_eq!((lane(0), lane(1)), (-1, -2), "lane {t} before the waits");
        // wait_group 1: the older group is visible, the newer one is not.
        assert_eq!(lane(2), input[4 * t] as i32, "lane {t} after wait_group 1");
        assert_eq!(lane(3), -2, "lane {t}: group 2 visible too early");
        // wait_group 0: both.
        assert_eq!(
            lane(4),
            input[128 + 4 * t + 3] as i32,
            "lane {t} after wait_group 0"
        );
        // An uncommitted copy stays invisible until wait_all; its last 8 bytes are zeros.
        assert_eq!(lane(5), -3, "lane {t} before wait_all");
        let want = (input[4 * t] + input[4 * t + 1]) as i32;
        assert_eq!(lane(6), want, "lane {t} after wait_all (zero fill)");
    }
}

/// f16 bits of a value f16 represents exactly (a normal number or zero).
fn f16_bits(x: f32) -> u16 {
    if x == 0.0 {
        return 0;
    }
    let b = x.to_bits();
    let exp = ((b >> 23) & 0xFF) as i32 - 127 + 15;
    assert!(
        (1..31).contains(&exp) && b & 0x1FFF == 0,
        "{x} is not an f16"
    );
    ((b >> 16) & 0x8000) as u16 | (exp as u16) << 10 | ((b >> 13) & 0x3FF) as u16
}

const MMA_M16N8K16: &str = "
.version 8.0
.target sm_80
.address_size 64
.visible .entry mma16(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)
{
  .reg .b32 %r<8>;
  .reg .f32 %f<8>;
  .reg .b64 %rd<12>;
  ld.param.u64 %rd1, [pa];
  ld.param.u64 %rd2, [pb];
  ld.param.u64 %rd3, [pc];
  ld.param.u64 %rd4, [pd];
  mov.u32 %r7, %tid.x;
  mul.wide.u32 %rd5, %r7, 16;
  mul.wide.u32 %rd6, %r7, 8;
  add.s64 %rd7, %rd1, %rd5;
  ld.global.v4.b32 {%r0, %r1, %r2, %r3}, [%rd7];
  add.s64 %rd8, %rd2, %rd6;
  ld.global.v2.b32 {%r4, %r5}, [%rd8];
  add.s64 %rd9, %rd3, %rd5;
  ld.global.v4.f32 {%f0, %f1, %f2, %f3}, [%rd9];
  mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f4, %f5, %f6, %f7}, {%r0, %r1, %r2, %r3}, {%r4, %r5}, {%f0, %f1, %f2, %f3};
  add.s64 %rd10, %rd4, %rd5;
  st.global.v4.f32 [%rd10], {%f4, %f5, %f6, %f7};
  ret;
}
";

#[test]
fn mma_sync_m16n8k16_follows_the_isa_fragment_layouts() {
    // Values that f16 holds exactly; the f32 results are exact too.
    let a = |i: usize, k: usize| ((i * 5 + k * 3) % 9) as f32 * 0.25 - 1.0;
    let b = |k: usize, j: usize| ((k * 7 + j) % 5) as f32 * 0.5 - 1.0;
    let c = |i: usize, j: usize| (i * 8 + j) as f32;
    let pair = |lo: f32, hi: f32| u32::from(f16_bits(lo)) | u32::from(f16_bits(hi)) << 16;
    // The ISA's tables ("Matrix Fragments for mma.m16n8k16 with floating point type"),
    // written out per register: groupID g = lane / 4, threadID_in_group t = lane % 4.
    let (mut ra, mut rb, mut rc) = (vec![], vec![], vec![]);
    for lane in 0..32 {
        let (g, t) = (lane / 4, lane % 4);
        ra.push(pair(a(g, 2 * t), a(g, 2 * t + 1)));
        ra.push(pair(a(g + 8, 2 * t), a(g + 8, 2 * t + 1)));
        ra.push(pair(a(g, 2 * t + 8), a(g, 2 * t + 9)));
        ra.push(pair(a(g + 8, 2 * t + 8), a(g + 8, 2 * t + 9)));
        rb.push(pair(b(2 * t, g), b(2 * t + 1, g)));
        rb.push(pair(b(2 * t + 8, g), b(2 * t + 9, g)));
        for (i, j) in [
            (g, 2 * t),
            (g, 2 * t + 1),
            (g + 8, 2 * t),
            (g + 8, 2 * t + 1),
        ] {
            rc.push(c(i, j).to_bits());
        }
    }
    let mut emu = Emulator::new();
    let m = load(&mut emu, "mma.ptx", MMA_M16N8K16);
    let k = emu.kernel(m, "mma16").unwrap();
    let pa = alloc_u32s(&mut emu, &ra);
    let pb = alloc_u32s(&mut emu, &rb);
    let pc = alloc_u32s(&mut emu, &rc);
    let pd = alloc_u32s(&mut emu, &[0; 128]);
    let p = params(&emu, k, &[pa, pb, pc, pd]);
    emu.run(k, LaunchConfig::linear(1, 32), &p).unwrap();
    let got = read_u32s(&emu, pd, 128);
    for lane in 0..32 {
        let (g, t) = (lane / 4, lane % 4);
        for (e, (i, j)) in [
            (g, 2 * t),
            (g, 2 * t + 1),
            (g + 8, 2 * t),
            (g + 8, 2 * t + 1),
        ]
        .into_iter()
        .enumerate()
        {
            let want = (0..16).fold(c(i, j), |acc, kk| a(i, kk).mul_add(b(kk, j), acc));
            assert_eq!(
                f32::from_bits(got[lane * 4 + e]),
                want,
                "D[{i}][{j}] in lane {lane}"
            );
        }
    }
}

/// A one-CTA kernel `name(pin, pout)` for ISA 8.0 on `target`: each thread loads 16 bytes
/// of `pin` into `%r1..%r4` and points `%r7` at its 16 bytes of the shared `tile`; `body`
/// follows.
fn tile_kernel(target: &str, name: &str, body: &str) -> String {
    format!(
        ".version 8.0
.target {target}
.address_size 64
.visible .entry {name}(.param .u64 pin, .param .u64 pout)
{{
  .reg .b32 %r<20>;
  .reg .b64 %rd<8>;
  .shared .align 16 .b8 tile[1024];
  ld.param.u64 %rd1, [pin];
  ld.param.u64 %rd2, [pout];
  mov.u32 %r0, %tid.x;
  mul.wide.u32 %rd3, %r0, 16;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.v4.b32 {{%r1, %r2, %r3, %r4}}, [%rd4];
  shl.b32 %r5, %r0, 4;
  mov.u32 %r6, tile;
  add.s32 %r7, %r6, %r5;
{body}}}
"
    )
}

/// After `tile_kernel`'s prologue: ldmatrix x4 and x2.trans of the stored tile.
const LDMATRIX: &str = "
  st.shared.v4.b32 [%r7], {%r1, %r2, %r3, %r4};
  bar.sync 0;
  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r8, %r9, %r10, %r11}, [%r7];
  ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%r12, %r13}, [%r7];
  mul.wide.u32 %rd5, %r0, 32;
  add.s64 %rd6, %rd2, %rd5;
  st.global.v4.b32 [%rd6], {%r8, %r9, %r10, %r11};
  st.global.v2.b32 [%rd6+16], {%r12, %r13};
  ret;
";

#[test]
fn ldmatrix_gives_each_thread_its_rows_and_their_transpose() {
    // 32 rows of eight 16-bit elements: element (row r, column c) is r * 8 + c.
    let input: Vec<u32> = (0..128)
        .map(|w| {
            let e = 2 * w as u32;
            e | (e + 1) << 16
        })
        .collect();
    let mut emu = Emulator::new();
    let m = load(&mut emu, "ldm.ptx", &tile_kernel("sm_80", "ldm", LDMATRIX));
    let k = emu.kernel(m, "ldm").unwrap();
    let pin = alloc_u32s(&mut emu, &input);
    let pout = alloc_u32s(&mut emu, &[0; 256]);
    let p = params(&emu, k, &[pin, pout]);
    emu.run(k, LaunchConfig::linear(1, 32), &p).unwrap();
    let got = read_u32s(&emu, pout, 256);
    let el = |r: u32, c: u32| r * 8 + c;
    for lane in 0..32u32 {
        let (g, t) = (lane / 4, lane % 4);
        for j in 0..4 {
            // Matrix j's rows come from lanes 8j..8j+7: thread holds row g, columns 2t, 2t+1.
            let want = el(8 * j + g, 2 * t) | el(8 * j + g, 2 * t + 1) << 16;
            assert_eq!(got[(lane * 8 + j) as usize], want, "lane {lane} matrix {j}");
        }
        for j in 0..2 {
            // Transposed: column g, rows 2t and 2t+1.
            let want = el(8 * j + 2 * t, g) | el(8 * j + 2 * t + 1, g) << 16;
            assert_eq!(
                got[(lane * 8 + 4 + j) as usize],
                want,
                "lane {lane} trans {j}"
            );
        }
    }
}

/// After `tile_kernel`'s prologue: movmatrix of each lane's first word, and of the result
/// again (the transpose's transpose).
const MOVMATRIX: &str = "
  movmatrix.sync.aligned.m8n8.trans.b16 %r8, %r1;
  movmatrix.sync.aligned.m8n8.trans.b16 %r9, %r8;
  mul.wide.u32 %rd5, %r0, 8;
  add.s64 %rd6, %rd2, %rd5;
  st.global.v2.b32 [%rd6], {%r8, %r9};
  ret;
";

#[test]
fn movmatrix_transposes_the_8x8_matrix_across_the_warp() {
    // Lane l's first word (input word 4l) holds row l/4, columns 2(l%4) and 2(l%4)+1 of an
    // 8x8 matrix whose element (r, c) is 0x100·r + c + 0x8000 (distinct, high bit set).
    let el = |r: u32, c: u32| 0x8000 | (0x100 * r + c);
    let mut input = vec![0u32; 128];
    for lane in 0..32u32 {
        let (g, t) = (lane / 4, lane % 4);
        input[(4 * lane) as usize] = el(g, 2 * t) | el(g, 2 * t + 1) << 16;
    }
    let mut emu = Emulator::new();
    let m = load(
        &mut emu,
        "movm.ptx",
        &tile_kernel("sm_80", "movm", MOVMATRIX),
    );
    let k = emu.kernel(m, "movm").unwrap();
    let pin = alloc_u32s(&mut emu, &input);
    let pout = alloc_u32s(&mut emu, &[0; 64]);
    let p = params(&emu, k, &[pin, pout]);
    emu.run(k, LaunchConfig::linear(1, 32), &p).unwrap();
    let got = read_u32s(&emu, pout, 64);
    for lane in 0..32u32 {
        let (g, t) = (lane / 4, lane % 4);
        // The transpose in the same layout: row g of the transpose is column g.
        let want = el(2 * t, g) | el(2 * t + 1, g) << 16;
        assert_eq!(got[(2 * lane) as usize], want, "lane {lane}");
        assert_eq!(
            got[(2 * lane + 1) as usize],
            input[(4 * lane) as usize],
            "lane {lane} twice"
        );
    }
}

/// The producer/consumer ring of `data/modern/mbarrier_ring.sm90.ptx` (mbarriers and
/// elect.sync, PTX ISA 8.0).
fn mbarrier_ring() -> String {
    modern_data("mbarrier_ring.sm90.ptx")
}

#[test]
fn mbarrier_ring_passes_every_block_from_producer_to_consumer_in_order() {
    let mut emu = Emulator::new();
    let m = load(&mut emu, "ring.ptx", &mbarrier_ring());
    let k = emu.kernel(m, "ring").unwrap();
    let n = 9u32;
    let input: Vec<u32> = (0..32 * n).map(|i| 7 * i + 3).collect();
    let pin = alloc_u32s(&mut emu, &input);
    let pout = alloc_u32s(&mut emu, &vec![0; input.len()]);
    let p = params(&emu, k, &[pin, pout, n as u64]);
    emu.run(k, LaunchConfig::linear(2, 64), &p).unwrap();
    assert_eq!(read_u32s(&emu, pout, input.len()), input);
}

/// elect.sync with a partial member mask; arrive tokens, pending_count, test_wait with a
/// state, arrive_drop.
const MBARRIER_COUNTS: &str = "
.version 8.0
.target sm_90
.address_size 64
.visible .entry counts(.param .u64 pout)
{
  .reg .b32 %r<20>;
  .reg .b64 %rd<10>;
  .reg .pred %p<8>;
  .shared .align 8 .b64 bar;
  ld.param.u64 %rd1, [pout];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 16;
  add.s64 %rd3, %rd1, %rd2;
  elect.sync %r2|%p1, 0xfffffff0;
  selp.u32 %r3, 1, 0, %p1;
  setp.eq.u32 %p2, %r1, 0;
  @%p2 mbarrier.init.shared.b64 [bar], 40;
  mbarrier.arrive.shared.b64 %rd4, [bar];
  mbarrier.pending_count.b64 %r4, %rd4;
  mbarrier.test_wait.shared.b64 %p3, [bar], %rd4;
  setp.lt.u32 %p4, %r1, 8;
  @%p4 mbarrier.arrive_drop.shared.b64 %rd5, [bar];
  mbarrier.test_wait.shared.b64 %p5, [bar], %rd4;
  selp.u32 %r5, 1, 0, %p3;
  selp.u32 %r6, 2, 0, %p5;
  or.b32 %r7, %r5, %r6;
  st.global.v4.u32 [%rd3], {%r2, %r3, %r4, %r7};
  ret;
}
";

#[test]
fn elect_picks_the_lowest_member_and_mbarrier_counts_arrivals() {
    let mut emu = Emulator::new();
    let m = load(&mut emu, "counts.ptx", MBARRIER_COUNTS);
    let k = emu.kernel(m, "counts").unwrap();
    let pout = alloc_u32s(&mut emu, &[0; 128]);
    let p = params(&emu, k, &[pout]);
    emu.run(k, LaunchConfig::linear(1, 32), &p).unwrap();
    let got = read_u32s(&emu, pout, 128);
    for lane in 0..32u32 {
        let row = &got[4 * lane as usize..4 * lane as usize + 4];
        // Leader: lane 4, the lowest lane of the mask 0xfffffff0.
        assert_eq!(row[0], 4, "lane {lane} leader");
        assert_eq!(row[1], u32::from(lane == 4), "lane {lane} is-leader");
        // Lanes arrive in order: lane l leaves 40 - (l + 1) pending.
        assert_eq!(row[2], 40 - (lane + 1), "lane {lane} pending count");
        // Incomplete after the 32 arrivals, complete after 8 more (arrive_drop).
        assert_eq!(row[3], 2, "lane {lane} test_wait before/after");
    }
}

#[test]
fn an_over_arrived_mbarrier_is_an_error_naming_the_lane() {
    // 16 expected; arrivals of 3: lanes 0-4 leave 13, 10, 7, 4, 1 pending, lane 5 over-arrives.
    let text = MBARRIER_COUNTS
        .replace(
            "@%p2 mbarrier.init.shared.b64 [bar], 40;",
            "@%p2 mbarrier.init.shared.b64 [bar], 16;",
        )
        .replace(
            "mbarrier.arrive.shared.b64 %rd4, [bar];",
            "mbarrier.arrive.shared.b64 %rd4, [bar], 3;",
        );
    let mut emu = Emulator::new();
    let m = load(&mut emu, "over.ptx", &text);
    let k = emu.kernel(m, "counts").unwrap();
    let pout = alloc_u32s(&mut emu, &[0; 128]);
    let p = params(&emu, k, &[pout]);
    let e = emu.run(k, LaunchConfig::linear(1, 32), &p).unwrap_err();
    assert!(
        matches!(e.kind, ErrorKind::Mbarrier(_)) && e.location.lane == Some(5),
        "{e}"
    );
    assert!(e.to_string().contains("pending arrivals"), "{e}");
}

/// After `tile_kernel`'s prologue: stmatrix x4 and x2.trans, read back.
const STMATRIX: &str = "
  stmatrix.sync.aligned.m8n8.x4.shared.b16 [%r7], {%r1, %r2, %r3, %r4};
  add.s32 %r8, %r7, 512;
  stmatrix.sync.aligned.m8n8.x2.trans.shared::cta.b16 [%r8], {%r1, %r2};
  bar.sync 0;
  ld.shared.v4.b32 {%r9, %r10, %r11, %r12}, [%r7];
  ld.shared.v4.b32 {%r13, %r14, %r15, %r16}, [%r8];
  mul.wide.u32 %rd5, %r0, 32;
  add.s64 %rd6, %rd2, %rd5;
  st.global.v4.b32 [%rd6], {%r9, %r10, %r11, %r12};
  st.global.v4.b32 [%rd6+16], {%r13, %r14, %r15, %r16};
  ret;
";

#[test]
fn stmatrix_writes_each_threads_fragment_to_its_rows_and_their_transpose() {
    // Lane l's register j holds the 16-bit values 1000·j + 2l and 1000·j + 2l + 1.
    let mut input = vec![0u32; 128];
    for lane in 0..32u32 {
        for j in 0..4u32 {
            let v = 1000 * j + 2 * lane;
            input[(lane * 4 + j) as usize] = v | (v + 1) << 16;
        }
    }
    let mut emu = Emulator::new();
    let m = load(&mut emu, "stm.ptx", &tile_kernel("sm_90", "stm", STMATRIX));
    let k = emu.kernel(m, "stm").unwrap();
    let pin = alloc_u32s(&mut emu, &input);
    let pout = alloc_u32s(&mut emu, &[0; 256]);
    let p = params(&emu, k, &[pin, pout]);
    emu.run(k, LaunchConfig::linear(1, 32), &p).unwrap();
    let got = read_u32s(&emu, pout, 256);
    // The 16-bit element c of the row at lane i's address.
    let elem = |i: u32, c: u32, second: bool| {
        let w = got[(i * 8 + if second { 4 } else { 0 } + c / 2) as usize];
        (w >> (16 * (c % 2))) & 0xFFFF
    };
    for i in 0..32u32 {
        let (j, r) = (i / 8, i % 8);
        for c in 0..8 {
            // ISA: row r of matrix j is held by lanes 4r..4r+3, two columns each.
            let lane = 4 * r + c / 2;
            assert_eq!(
                elem(i, c, false),
                1000 * j + 2 * lane + c % 2,
                "row {i} col {c}"
            );
            if j < 2 {
                // Transposed: lane 4c + r/2 holds column c, rows r & !1 and r | 1.
                let lane = 4 * c + r / 2;
                assert_eq!(
                    elem(i, c, true),
                    1000 * j + 2 * lane + r % 2,
                    "trans row {i} col {c}"
                );
            }
        }
    }
}

/// Device memory holding `values`, each `size` bytes little-endian.
fn alloc_sized(emu: &mut Emulator, values: &[u64], size: u64) -> u64 {
    let a = emu
        .memory
        .alloc(size * values.len().max(1) as u64, emu::AllocKind::Device)
        .unwrap();
    for (i, v) in values.iter().enumerate() {
        emu.memory
            .write_uint(a + size * i as u64, size as u32, *v)
            .unwrap();
    }
    a
}

/// Runs one kernel of `mma_shapes.nvcc-sm80.ptx` (nvcc 11.8 from `mma_shapes.cu`, whose
/// threads gather fragments with the ISA's formulas): A, B and C as raw element bits of
/// `sizes` bytes each; returns D's raw bits (C's size), row-major.
fn run_mma_shape(kernel: &str, a: &[u64], b: &[u64], c: &[u64], sizes: [u64; 3]) -> Vec<u64> {
    let mut emu = Emulator::new();
    let m = load(
        &mut emu,
        "mma_shapes.ptx",
        &modern_data("mma_shapes.nvcc-sm80.ptx"),
    );
    let k = emu
        .kernel(m, kernel)
        .unwrap_or_else(|| panic!("no kernel {kernel}"));
    let pa = alloc_sized(&mut emu, a, sizes[0]);
    let pb = alloc_sized(&mut emu, b, sizes[1]);
    let pc = alloc_sized(&mut emu, c, sizes[2]);
    let pd = alloc_sized(&mut emu, &vec![0; c.len()], sizes[2]);
    let p = params(&emu, k, &[pa, pb, pc, pd]);
    emu.run(k, LaunchConfig::linear(1, 32), &p).unwrap();
    (0..c.len() as u64)
        .map(|i| {
            emu.memory
                .read_uint(pd + sizes[2] * i, sizes[2] as u32)
                .unwrap()
        })
        .collect()
}

#[test]
fn nvcc_mma_tf32_shapes_match_a_cpu_product() {
    for (kernel, k) in [
        ("_Z12tf32_m16n8k8PKfS0_S0_Pf", 8u32),
        ("_Z12tf32_m16n8k4PKfS0_S0_Pf", 4),
    ] {
        // Values tf32 holds exactly (11 significant bits), so the f32 FMA chain is exact.
        let av = |i: u32, kk: u32| ((i * 3 + kk * 5) % 13) as f32 * 0.125 - 0.75;
        let bv = |kk: u32, j: u32| ((kk * 7 + j) % 9) as f32 * 0.5 - 2.0;
        let cv = |i: u32, j: u32| (i * 8 + j) as f32;
        let a: Vec<u64> = (0..16 * k)
            .map(|x| av(x / k, x % k).to_bits().into())
            .collect();
        let b: Vec<u64> = (0..k * 8)
            .map(|x| bv(x / 8, x % 8).to_bits().into())
            .collect();
        let c: Vec<u64> = (0..128)
            .map(|x| cv(x / 8, x % 8).to_bits().into())
            .collect();
        let d = run_mma_shape(kernel, &a, &b, &c, [4, 4, 4]);
        for i in 0..16 {
            for j in 0..8 {
                let want = (0..k).fold(cv(i, j), |acc, kk| acc + av(i, kk) * bv(kk, j));
                let got = f32::from_bits(d[(i * 8 + j) as usize] as u32);
                assert_eq!(got, want, "{kernel} D[{i}][{j}]");
            }
        }
    }
}

#[test]
fn nvcc_mma_integer_shapes_match_a_cpu_product_and_saturate() {
    // s8 x s8, m16n8k16.
    let av = |i: u32, kk: u32| ((i * 5 + kk * 3) % 17) as i64 - 8;
    let bv = |kk: u32, j: u32| ((kk * 11 + j * 7) % 23) as i64 - 11;
    let cv = |i: u32, j: u32| (i as i64 - 4) * 100 + j as i64;
    let a: Vec<u64> = (0..256).map(|x| av(x / 16, x % 16) as u8 as u64).collect();
    let b: Vec<u64> = (0..128).map(|x| bv(x / 8, x % 8) as u8 as u64).collect();
    let c: Vec<u64> = (0..128).map(|x| cv(x / 8, x % 8) as u32 as u64).collect();
    let d = run_mma_shape("_Z11s8_m16n8k16PKaS0_PKiPi", &a, &b, &c, [1, 1, 4]);
    for i in 0..16 {
        for j in 0..8 {
            let want = (0..16).fold(cv(i, j), |acc, kk| acc + av(i, kk) * bv(kk, j));
            assert_eq!(
                d[(i * 8 + j) as usize] as u32 as i32 as i64,
                want,
                "s8 D[{i}][{j}]"
            );
        }
    }
    // u8 x s8, m16n8k32 with .satfinite; rows 0 and 1 of C sit near the s32 limits.
    let av = |i: u32, kk: u32| ((i * 13 + kk * 7) % 256) as i64;
    let bv = |kk: u32, j: u32| ((kk * 5 + j * 3) % 256) as i64 - 128;
    let cv = |i: u32, j: u32| match i {
        0 => i32::MAX as i64 - j as i64,
        1 => i32::MIN as i64 + j as i64,
        _ => i as i64 * 1000 - j as i64,
    };
    let a: Vec<u64> = (0..512).map(|x| av(x / 32, x % 32) as u64).collect();
    let b: Vec<u64> = (0..256).map(|x| bv(x / 8, x % 8) as u8 as u64).collect();
    let c: Vec<u64> = (0..128)
        .map(|x| cv(x / 8, x % 8) as i32 as u32 as u64)
        .collect();
    let d = run_mma_shape(
        "_Z23u8s8_m16n8k32_satfinitePKhPKaPKiPi",
        &a,
        &b,
        &c,
        [1, 1, 4],
    );
    let mut saturated = 0;
    for i in 0..16 {
        for j in 0..8 {
            let exact = (0..32).fold(cv(i, j), |acc, kk| acc + av(i, kk) * bv(kk, j));
            let want = exact.clamp(i32::MIN as i64, i32::MAX as i64);
            saturated += usize::from(want != exact);
            assert_eq!(
                d[(i * 8 + j) as usize] as u32 as i32 as i64,
                want,
                "u8s8 D[{i}][{j}]"
            );
        }
    }
    assert!(saturated > 0, "the test reaches the saturation");
}

#[test]
fn nvcc_mma_f64_m8n8k4_matches_an_fma_chain() {
    let av = |i: u32, kk: u32| 1.0 + f64::from(i * 4 + kk) / 7.0;
    let bv = |kk: u32, j: u32| f64::from(kk + 2) / 3.0 - f64::from(j);
    let cv = |i: u32, j: u32| f64::from(i) * 0.1 + f64::from(j);
    let a: Vec<u64> = (0..32).map(|x| av(x / 4, x % 4).to_bits()).collect();
    let b: Vec<u64> = (0..32).map(|x| bv(x / 8, x % 8).to_bits()).collect();
    let c: Vec<u64> = (0..64).map(|x| cv(x / 8, x % 8).to_bits()).collect();
    let d = run_mma_shape("_Z10f64_m8n8k4PKdS0_S0_Pd", &a, &b, &c, [8, 8, 8]);
    for i in 0..8 {
        for j in 0..8 {
            let want = (0..4).fold(cv(i, j), |acc, kk| av(i, kk).mul_add(bv(kk, j), acc));
            assert_eq!(f64::from_bits(d[(i * 8 + j) as usize]), want, "D[{i}][{j}]");
        }
    }
}

/// bf16 and bf16x2 conversions and arithmetic as sm_80/sm_90 code emits them, and their
/// f16x2 counterparts: one thread, inputs from `pin` (f32 bits), 16 words out.
const BF16_OPS: &str = "
.version 8.0
.target sm_90
.address_size 64
.visible .entry bf16ops(.param .u64 pin, .param .u64 pout)
{
  .reg .b16 %h<12>;
  .reg .b32 %r<24>;
  .reg .f32 %f<8>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [pin];
  ld.param.u64 %rd2, [pout];
  ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1];
  cvt.rn.bf16.f32 %h1, %f1;
  cvt.rn.bf16x2.f32 %r1, %f2, %f3;
  cvt.f32.bf16 %f5, %h1;
  mov.b32 %r2, {%h1, %h1};
  fma.rn.bf16x2 %r3, %r1, %r2, %r1;
  cvt.rn.bf16.f32 %h2, %f4;
  fma.rn.bf16 %h3, %h1, %h2, %h1;
  max.bf16 %h4, %h1, %h2;
  min.bf16x2 %r4, %r1, %r2;
  neg.bf16 %h5, %h2;
  abs.bf16x2 %r5, %r1;
  add.rn.bf16 %h6, %h1, %h2;
  mul.rn.bf16x2 %r6, %r1, %r1;
  cvt.rn.f16x2.f32 %r7, %f2, %f3;
  fma.rn.f16x2 %r8, %r7, %r7, %r7;
  max.f16x2 %r9, %r7, %r8;
  neg.f16x2 %r10, %r7;
  cvt.u32.u16 %r11, %h1;
  cvt.u32.u16 %r12, %h3;
  cvt.u32.u16 %r13, %h4;
  cvt.u32.u16 %r14, %h5;
  cvt.u32.u16 %r15, %h6;
  mov.b32 %r16, %f5;
  st.global.v4.b32 [%rd2], {%r11, %r1, %r16, %r3};
  st.global.v4.b32 [%rd2+16], {%r12, %r13, %r4, %r14};
  st.global.v4.b32 [%rd2+32], {%r5, %r15, %r6, %r7};
  st.global.v4.b32 [%rd2+48], {%r8, %r9, %r10, %r10};
  ret;
}
";

#[test]
fn bf16_conversions_and_arithmetic_give_the_hand_computed_bits() {
    let mut emu = Emulator::new();
    let m = load(&mut emu, "bf16.ptx", BF16_OPS);
    let k = emu.kernel(m, "bf16ops").unwrap();
    // 1 + 2^-8 + 2^-9 rounds up to 1 + 2^-7 in bf16 (0x3F81); 2.5 (0x4020); -3 (0xC040);
    // 0.5 (0x3F00).
    let x = 1.0f32 + 2f32.powi(-8) + 2f32.powi(-9);
    let pin = alloc_u32s(
        &mut emu,
        &[
            x.to_bits(),
            2.5f32.to_bits(),
            (-3.0f32).to_bits(),
            0.5f32.to_bits(),
        ],
    );
    let pout = alloc_u32s(&mut emu, &[0; 16]);
    let p = params(&emu, k, &[pin, pout]);
    emu.run(k, LaunchConfig::linear(1, 1), &p).unwrap();
    let got = read_u32s(&emu, pout, 16);
    let h1 = 0x3F81u32; // 1.0078125
    assert_eq!(got[0], h1, "cvt.rn.bf16.f32 rounds to nearest even");
    // cvt.rn.bf16x2.f32 d, a, b: a in the upper half, b in the lower.
    assert_eq!(got[1], 0x4020_C040, "cvt.rn.bf16x2.f32");
    assert_eq!(f32::from_bits(got[2]), 1.0078125, "cvt.f32.bf16 is exact");
    // fma.rn.bf16x2, one rounding (ulp 2^-5 in [4, 8)): -3 * 1.0078125 - 3 = -6.0234375
    // -> -6.03125 (0xC0C1); 2.5 * 1.0078125 + 2.5 = 5.01953125 -> 5.03125 (0x40A1).
    assert_eq!(got[3], 0x40A1_C0C1, "fma.rn.bf16x2");
    // fma.rn.bf16: 1.0078125 * 0.5 + 1.0078125 = 1.51171875, halfway between 1.5078125
    // (odd mantissa 0x41) and 1.515625 (even, 0x42): to even, 0x3FC2.
    assert_eq!(got[4], 0x3FC2, "fma.rn.bf16");
    assert_eq!(got[5], h1, "max.bf16");
    assert_eq!(
        got[6], 0x3F81_C040,
        "min.bf16x2: (2.5, 1.0078) -> 1.0078; (-3, 1.0078) -> -3"
    );
    assert_eq!(got[7], 0xBF00, "neg.bf16");
    assert_eq!(got[8], 0x4020_4040, "abs.bf16x2");
    // add.rn.bf16: 1.0078125 + 0.5 = 1.5078125 (0x3FC1).
    assert_eq!(got[9], 0x3FC1, "add.rn.bf16");
    // mul.rn.bf16x2: 2.5^2 = 6.25 (0x40C8), (-3)^2 = 9 (0x4110).
    assert_eq!(got[10], 0x40C8_4110, "mul.rn.bf16x2");
    // f16x2: cvt packs 2.5 (0x4100) high and -3 (0xC200) low.
    assert_eq!(got[11], 0x4100_C200, "cvt.rn.f16x2.f32");
    // fma.rn.f16x2 x*x + x: 2.5 -> 8.75 (0x4860), -3 -> 6 (0x4600).
    assert_eq!(got[12], 0x4860_4600, "fma.rn.f16x2");
    assert_eq!(got[13], 0x4860_4600, "max.f16x2");
    assert_eq!(got[14], 0xC100_4200, "neg.f16x2");
}

/// A CTA runs one kernel, so a kernel's static shared footprint is its own variables,
/// the module's and the device functions', not every kernel's (CUB's and CUTLASS's
/// modules hold many kernels with 30 KB tiles each: summed, none would launch).
#[test]
fn static_shared_memory_is_per_kernel() {
    let ptx = "\
.version 8.0
.target sm_80
.address_size 64
.shared .align 4 .b8 common[8];
.func helper()
{
\t.shared .align 4 .b8 scratch[100];
\tret;
}
.visible .entry first(.param .u64 out)
{
\t.shared .align 16 .b8 tile_a[30000];
\tret;
}
.visible .entry second(.param .u64 out)
{
\t.shared .align 16 .b8 tile_b[20000];
\tret;
}
";
    let mut emu = Emulator::new();
    let id = load(&mut emu, "two_kernels.ptx", ptx);
    let module = emu.module(id).expect("loaded");
    let first = emu.kernel(id, "first").expect("first").func;
    let second = emu.kernel(id, "second").expect("second").func;
    // common 0..8, scratch 8..108, tile_a 112..30112, tile_b 30112..50112.
    assert_eq!(module.static_shared, 50_112);
    assert_eq!(module.kernel_static_shared(first), 30_112);
    assert_eq!(module.kernel_static_shared(second), 8 + 100 + 4 + 20_000);
}

/// `data/modern/cvt_tf32.sm90.ptx`: each form of `cvt` to tf32, on values at the
/// rounding edges (results written out by hand from the rules in `semantics/convert.rs`).
#[test]
fn cvt_to_tf32_rounds_each_form_at_the_edges() {
    let mut emu = Emulator::new();
    let m = load(&mut emu, "tf32.ptx", &modern_data("cvt_tf32.sm90.ptx"));
    let k = emu.kernel(m, "tf32").unwrap();
    // (input, [rna, rna.satfinite, rn, rn.relu, rz, rz.satfinite.relu])
    let cases: [(u32, [u32; 6]); 8] = [
        // 1 + half an ulp (tie, even below): rna up, rn down.
        (
            0x3F80_1000,
            [
                0x3F80_2000,
                0x3F80_2000,
                0x3F80_0000,
                0x3F80_0000,
                0x3F80_0000,
                0x3F80_0000,
            ],
        ),
        // -(1 + 3 half ulps) (tie, odd below): up in magnitude for both; relu gives +0.
        (
            0xBF80_3000,
            [0xBF80_4000, 0xBF80_4000, 0xBF80_4000, 0, 0xBF80_2000, 0],
        ),
        // Just below a tie.
        (
            0x3F80_0FFF,
            [
                0x3F80_0000,
                0x3F80_0000,
                0x3F80_0000,
                0x3F80_0000,
                0x3F80_0000,
                0x3F80_0000,
            ],
        ),
        // The largest f32: overflows to infinity when rounding to nearest.
        (
            0x7F7F_FFFF,
            [
                0x7F80_0000,
                0x7F7F_E000,
                0x7F80_0000,
                0x7F80_0000,
                0x7F7F_E000,
                0x7F7F_E000,
            ],
        ),
        // -infinity.
        (
            0xFF80_0000,
            [0xFF80_0000, 0xFF7F_E000, 0xFF80_0000, 0, 0xFF80_0000, 0],
        ),
        // A quiet NaN with low payload bits.
        (
            0x7FC0_1234,
            [
                0x7FC0_0000,
                0x7FBF_E000,
                0x7FFF_FFFF,
                0x7FFF_FFFF,
                0x7FFF_FFFF,
                0x7FFF_FFFF,
            ],
        ),
        // A subnormal on a tie (even below).
        (
            0x0000_5000,
            [
                0x0000_6000,
                0x0000_6000,
                0x0000_4000,
                0x0000_4000,
                0x0000_4000,
                0x0000_4000,
            ],
        ),
        // -0.
        (
            0x8000_0000,
            [0x8000_0000, 0x8000_0000, 0x8000_0000, 0, 0x8000_0000, 0],
        ),
    ];
    let input: Vec<u32> = cases.iter().map(|c| c.0).collect();
    let pin = alloc_u32s(&mut emu, &input);
    let pout = alloc_u32s(&mut emu, &vec![0; 6 * input.len()]);
    let p = params(&emu, k, &[pin, pout]);
    emu.run(k, LaunchConfig::linear(1, input.len() as u32), &p)
        .unwrap();
    let out = read_u32s(&emu, pout, 6 * input.len());
    for (i, (x, want)) in cases.iter().enumerate() {
        assert_eq!(&out[6 * i..6 * i + 6], want, "input {x:#010x}");
    }
}

/// `data/modern/cluster1.sm90.ptx`: a kernel declaring a cluster of one CTA reads the
/// cluster special registers, synchronises on the cluster barrier, and reaches shared
/// memory through `mapa` and `.shared::cluster` loads and atomics.
#[test]
fn a_cluster_of_one_cta_has_rank_0_and_its_own_shared_memory() {
    let ctas = 3u32;
    let mut emu = Emulator::new();
    let m = load(&mut emu, "cl.ptx", &modern_data("cluster1.sm90.ptx"));
    let k = emu.kernel(m, "cl").unwrap();
    let pout = alloc_u32s(&mut emu, &vec![0; (ctas * 32 * 8) as usize]);
    let p = params(&emu, k, &[pout]);
    emu.run(k, LaunchConfig::linear(ctas, 32), &p).unwrap();
    let out = read_u32s(&emu, pout, (ctas * 32 * 8) as usize);
    for c in 0..ctas {
        for t in 0..32u32 {
            let row = &out[8 * (32 * c + t) as usize..][..8];
            // Right neighbour's 10 (t + 1) read before, plus this thread's word after the
            // left neighbour's atomic added one.
            let sum = 10 * ((t + 1) % 32) + 10 * t + 1;
            assert_eq!(row, [c, ctas, 0, 1, 0, 1, 1, sum], "CTA {c} thread {t}");
        }
    }
    let far = emu.kernel(m, "far").unwrap();
    let p = params(&emu, far, &[pout]);
    let e = emu
        .run(far, LaunchConfig::linear(1, 32), &p)
        .unwrap_err()
        .to_string();
    assert!(e.contains("mapa to CTA rank 1"), "{e}");
    assert!(e.contains("far"), "{e}");
}

/// `data/modern/setmaxnreg.sm90a.ptx`: a warp-specialised kernel runs to the known
/// answers, and each rule of `setmaxnreg` a functional run can check stops its kernel
/// with the rule, the kernel and the line.
#[test]
fn setmaxnreg_warp_specialisation_and_its_rules() {
    let mut emu = Emulator::new();
    let m = load(&mut emu, "smn.ptx", &modern_data("setmaxnreg.sm90a.ptx"));
    let k = emu.kernel(m, "ws").unwrap();
    let pout = alloc_u32s(&mut emu, &[0; 768]);
    let spin = 5u64;
    let p = params(&emu, k, &[pout, spin]);
    emu.run(k, LaunchConfig::linear(2, 384), &p).unwrap();
    let out = read_u32s(&emu, pout, 384);
    for (t, &v) in out.iter().enumerate() {
        let t = t as u32;
        assert_eq!(v, 7 * (3 * (t % 128) + 5) + t / 128, "thread {t}");
    }
    for (name, threads, want, line) in [
        (
            "partial",
            64,
            "belongs to an incomplete warpgroup (warps 0..3",
            62,
        ),
        ("diverge", 128, "lanes 0x0000ffff of warp 0 execute it", 73),
        ("mismatch", 128, "warp 0 of its warpgroup set 40", 85),
        (
            "unsynced",
            128,
            "warp 0 executes its setmaxnreg #2 where warp 1",
            96,
        ),
    ] {
        let k = emu.kernel(m, name).unwrap();
        let e = emu
            .run(k, LaunchConfig::linear(1, threads), &[])
            .unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("setmaxnreg: ") && text.contains(want),
            "{name}: {text}"
        );
        assert!(text.contains(name), "{name}: {text}");
        assert_eq!(e.location.line, line, "{name}: {text}");
    }
}

/// `data/modern/bulk_copy.sm90.ptx`: a global-to-shared `cp.async.bulk` completing on an
/// mbarrier, then a shared-to-global one in a bulk group, give the known answers; a size
/// that is not a multiple of 16, a misaligned source and a block past the end of shared
/// memory are located errors.
#[test]
fn bulk_copies_move_blocks_through_shared_memory() {
    let mut emu = Emulator::new();
    let m = load(&mut emu, "bulk.ptx", &modern_data("bulk_copy.sm90.ptx"));
    let k = emu.kernel(m, "bulk").unwrap();
    let input: Vec<u32> = (0..256).map(|i| 3 * i + 1).collect();
    let pin = alloc_u32s(&mut emu, &input);
    let pout = alloc_u32s(&mut emu, &[0; 256 + 64]);
    let p = params(&emu, k, &[pin, pout]);
    emu.run(k, LaunchConfig::linear(1, 64), &p).unwrap();
    let out = read_u32s(&emu, pout, 256);
    let want: Vec<u32> = input.iter().map(|x| 2 * x).collect();
    assert_eq!(out, want);
    for (name, want, line) in [
        (
            "bad_size",
            "size 40 is not a positive multiple of 16 bytes",
            77,
        ),
        ("misaligned", "is not 16-byte aligned", 90),
        ("overflow", "shared", 104),
    ] {
        let k = emu.kernel(m, name).unwrap();
        let p = params(&emu, k, &[pin]);
        let e = emu.run(k, LaunchConfig::linear(1, 32), &p).unwrap_err();
        let text = e.to_string();
        assert!(text.contains(want), "{name}: {text}");
        assert_eq!(e.location.line, line, "{name}: {text}");
        assert_eq!(e.location.lane, Some(0), "{name}: {text}");
    }
}

/// A kernel frame over the per-thread local limit is refused when the module lowers, at
/// the declaration, and (for a program a pass enlarged) at launch, naming the kernel
/// (1 GiB of `.local` was allocated 32 times per warp, aborting the process).
#[test]
fn a_kernel_frame_over_the_local_limit_is_refused_at_launch() {
    let mut emu = Emulator::new();
    let text = |size: u64| {
        format!(
            ".version 7.0\n.target sm_70\n.address_size 64\n\
             .visible .entry big()\n{{\n\t.reg .b32 %r<2>;\n\
             \t.local .align 8 .b8 buf[{size}];\n\tmov.u32 %r1, %tid.x;\n\
             \tst.local.u32 [buf], %r1;\n\tret;\n}}\n"
        )
    };
    let e = emu
        .load_ptx("big.ptx", &text(1 << 30))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(
            "big.ptx:7:22: in kernel 'big': 1073741824 bytes of local memory (`.local`) per \
             thread, more than the 524288 a thread may have"
        ),
        "{e}"
    );
    let source = text(8);
    let ast = ptx::parse("big.ptx", &source).unwrap();
    let mut program = ir::lower(&ast, "big.ptx", &source).unwrap();
    program.functions[0].vars[0].size = 1 << 30;
    let m = emu.load_program(program).unwrap();
    let k = emu.kernel(m, "big").unwrap();
    let e = emu.run(k, LaunchConfig::linear(1, 32), &[]).unwrap_err();
    assert_eq!(
        e.kind,
        ErrorKind::LocalOverflow {
            needed: 1 << 30,
            limit: 512 * 1024
        }
    );
    assert_eq!(e.location.kernel, "big");
}

// ---- The control slice (`emu::control_slice`): a run that steps over everything
// outside it executes the full run's instruction stream, with the same lanes, and
// writes no memory; kernels whose control reads memory they could write have no slice.

/// `loop_guard`: control from the thread index and a parameter only (a tid-dependent
/// trip count, a divergent `if`, guarded instructions, a barrier), with global loads,
/// FP work and stores outside it. `load_branch`: a branch on a loaded value.
const SLICE_PTX: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry loop_guard(.param .u64 in, .param .u64 out, .param .u32 n)
{
    .reg .pred %p<4>;
    .reg .b32 %r<10>;
    .reg .f32 %f<6>;
    .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %tid.x;
    mul.wide.u32 %rd3, %r2, 4;
    add.s64 %rd4, %rd1, %rd3;
    add.s64 %rd5, %rd2, %rd3;
    ld.global.f32 %f1, [%rd4];
    rem.u32 %r3, %r2, 5;
    add.s32 %r4, %r3, %r1;
    mov.u32 %r5, 0;
    mov.f32 %f2, 0f00000000;
$L_loop:
    fma.rn.f32 %f2, %f1, %f1, %f2;
    and.b32 %r6, %r5, 1;
    setp.eq.u32 %p1, %r6, 0;
@%p1 add.f32 %f2, %f2, 0f3F800000;
    add.s32 %r5, %r5, 1;
    setp.lt.u32 %p2, %r5, %r4;
@%p2 bra $L_loop;
    bar.sync 0;
    setp.gt.u32 %p3, %r2, 40;
@%p3 bra $L_skip;
    mul.f32 %f3, %f2, 0f40000000;
    st.global.f32 [%rd5], %f3;
$L_skip:
    st.global.f32 [%rd4], %f2;
    ret;
}

.visible .entry nc_branch(.param .u64 in, .param .u64 out)
{
    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<5>;
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd4, [out];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    ld.global.nc.u32 %r2, [%rd3];
    setp.eq.u32 %p1, %r2, 0;
@%p1 bra $L_end;
    st.global.u32 [%rd4], %r1;
$L_end:
    ret;
}

.visible .entry load_branch(.param .u64 in)
{
    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [in];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    ld.global.u32 %r2, [%rd3];
    setp.eq.u32 %p1, %r2, 0;
@%p1 bra $L_end;
    st.global.u32 [%rd3], %r1;
$L_end:
    ret;
}
"#;

/// Every step as the stream recorder sees it: CTA, warp, instruction, lanes.
type SliceStep = ([u32; 3], u32, u32, u32, u32, u32);

#[derive(Clone, Default)]
struct Steps(Arc<Mutex<Vec<SliceStep>>>);
impl emu::StepObserver for Steps {
    fn observe(&mut self, cta: [u32; 3], warp: u32, step: &emu::WarpStep) {
        self.0.lock().unwrap().push((
            cta,
            warp,
            step.func.0,
            step.inst.0,
            step.active_mask,
            step.exec_mask,
        ));
    }
}

fn slice_setup() -> (Emulator, ModuleId) {
    let mut emu = Emulator::new();
    let m = load(&mut emu, "slice.ptx", SLICE_PTX);
    (emu, m)
}

#[test]
fn the_slice_run_executes_the_full_runs_stream_and_writes_nothing() {
    let (mut emu, m) = slice_setup();
    let k = emu.kernel(m, "loop_guard").unwrap();
    let slice = ControlSlice::of(emu.module(m).unwrap(), k.func).expect("a slice");
    // The global load, the FP work, the stores and the out-address arithmetic.
    assert_eq!(slice.skipped(), 12, "{slice:?}");
    let (input, out) = (
        emu.memory.alloc(4 * 64, emu::AllocKind::Device).unwrap(),
        emu.memory.alloc(4 * 64, emu::AllocKind::Device).unwrap(),
    );
    let p = params(&emu, k, &[input, out, 3]);
    let config = LaunchConfig::linear(2, 64);

    let sliced = Steps::default();
    emu.step_observer = Some(Box::new(sliced.clone()));
    let slice_stats = emu.run_control_slice(k, config, &p, &slice).unwrap();
    let untouched = (0..64).all(|i| emu.memory.read_uint(out + 4 * i, 4).unwrap() == 0);
    assert!(untouched, "a stepped-over store wrote memory");

    let full = Steps::default();
    emu.step_observer = Some(Box::new(full.clone()));
    let full_stats = emu.run(k, config, &p).unwrap();
    assert_ne!(
        emu.memory.read_uint(out, 4).unwrap(),
        0,
        "the full run stores"
    );

    let (sliced, full) = (sliced.0.lock().unwrap(), full.0.lock().unwrap());
    assert!(full.len() > 100, "{} steps", full.len());
    assert_eq!(*sliced, *full);
    assert_eq!(slice_stats, full_stats);
    // Some guarded instruction ran on part of its warp: the lanes are compared.
    assert!(full.iter().any(|s| s.5 != s.4 && s.5 != 0));
}

#[test]
fn control_that_reads_writable_memory_has_no_slice() {
    let (emu, m) = slice_setup();
    let k = emu.kernel(m, "load_branch").unwrap();
    assert_eq!(ControlSlice::of(emu.module(m).unwrap(), k.func), None);
    // Read-only (`.nc`) data may steer control: only the store and its address are out.
    let k = emu.kernel(m, "nc_branch").unwrap();
    let slice = ControlSlice::of(emu.module(m).unwrap(), k.func).expect("a slice");
    assert_eq!(slice.skipped(), 2, "{slice:?}");
}

#[test]
fn kmeans_control_needs_almost_none_of_its_instructions() {
    let mut emu = Emulator::new();
    let m = load(&mut emu, "kmeans.ptx", &workload("kmeans"));
    let k = emu.kernel(m, "_Z13kmeans_assignPKfiPi").unwrap();
    let module = emu.module(m).unwrap();
    let total = module.program.functions[k.func.index()].insts.len();
    let slice = ControlSlice::of(module, k.func).expect("a slice");
    assert!(
        slice.skipped() * 4 > total * 3,
        "{} of {total} stepped over",
        slice.skipped()
    );
}

/// The 3-D float tensor of `tma.sm90a.ptx` (8 x 6 x 4, element (x, y, z) = 1000 z +
/// 100 y + x + 1) at `base`, boxes of 4 x 4 x 2 with element stride 2 along y, NaN fill.
fn tma_map(base: u64) -> [u8; 128] {
    emu::tensor_map::TensorMap::tiled(
        7,
        3,
        base,
        &[8, 6, 4],
        &[32, 192],
        &[4, 4, 2],
        &[1, 2, 1],
        0,
        0,
        0,
        1,
    )
    .unwrap()
    .encode()
}

/// The parameter buffer of a kernel whose parameters are tensor maps (128 bytes) or
/// 64-bit values.
fn tma_params(emu: &Emulator, k: KernelRef, values: &[&[u8]]) -> Vec<u8> {
    let ps = emu.kernel_params(k).expect("kernel");
    let size = ps.iter().map(|p| p.offset + p.size).max().unwrap_or(0) as usize;
    let mut buf = vec![0u8; size];
    for (p, v) in ps.iter().zip(values) {
        let o = p.offset as usize;
        assert_eq!(p.size as usize, v.len());
        buf[o..o + v.len()].copy_from_slice(v);
    }
    buf
}

/// TMA through tensor maps in kernel parameters: a 3-D box with an element stride,
/// partly outside the tensor (NaN-filled), loaded on an mbarrier; stored back whole and
/// clipped at the tensor's edge; a map that is not one, a copy of the wrong rank and a
/// misaligned box are located errors.
#[test]
fn tensor_copies_move_boxes_through_tensor_maps() {
    let mut emu = Emulator::new();
    let m = load(&mut emu, "tma.ptx", &modern_data("tma.sm90a.ptx"));
    let value = |x: u32, y: u32, z: u32| 1000 * z + 100 * y + x + 1;
    let mut tensor = Vec::new();
    for z in 0..4 {
        for y in 0..6 {
            for x in 0..8 {
                tensor.push(value(x, y, z));
            }
        }
    }
    let src = alloc_u32s(&mut emu, &tensor);
    let dst = alloc_u32s(&mut emu, &[0xEEEE_EEEE; 8 * 6 * 4]);
    let out = alloc_u32s(&mut emu, &[0; 48]);
    let k = emu.kernel(m, "tma3d").unwrap();
    let p = tma_params(&emu, k, &[&tma_map(src), &tma_map(dst), &out.to_le_bytes()]);
    emu.run(k, LaunchConfig::linear(1, 32), &p).unwrap();
    // Box element (i, j, k) is tensor element (6 + i, -1 + 2j, 3 + k).
    let nan = 0x7FFF_FFFF;
    let mut want = [nan; 16];
    want[4] = value(6, 1, 3);
    want[5] = value(7, 1, 3);
    assert_eq!(read_u32s(&emu, out, 16), want);
    let mut stored = vec![0xEEEE_EEEE; 8 * 6 * 4];
    let at = |x: usize, y: usize, z: usize| x + 8 * y + 48 * z;
    for (e, &v) in want.iter().enumerate() {
        let (i, j, k) = (e % 4, (e / 4) % 2, e / 8);
        stored[at(i, 2 * j, k)] = v;
    }
    stored[at(6, 5, 3)] = want[0];
    stored[at(7, 5, 3)] = want[1];
    assert_eq!(read_u32s(&emu, dst, 8 * 6 * 4), stored);
    let zeros = [0u8; 128];
    for (name, map, want, line) in [
        (
            "bad_map",
            &zeros,
            "not a tensor map made by cuTensorMapEncodeTiled",
            73,
        ),
        (
            "wrong_rank",
            &tma_map(src),
            "has 3 dimensions, the copy .2d",
            85,
        ),
        ("misaligned", &tma_map(src), "is not 128-byte aligned", 99),
    ] {
        let k = emu.kernel(m, name).unwrap();
        let p = tma_params(&emu, k, &[map]);
        let e = emu.run(k, LaunchConfig::linear(1, 32), &p).unwrap_err();
        let text = e.to_string();
        assert!(text.contains(want), "{name}: {text}");
        assert!(text.contains("cp.async.bulk"), "{name}: {text}");
        assert_eq!(e.location.line, line, "{name}: {text}");
    }
}

const GLOBAL_LOADS: &str = "
.version 8.0 .target sm_80 .address_size 64
.visible .entry loads(.param .u64 pin, .param .u64 pout, .param .u32 skew)
{
  .reg .b32 %r<8>; .reg .b64 %rd<12>; .reg .s16 %h<2>;
  ld.param.u64 %rd1, [pin]; ld.param.u64 %rd2, [pout]; ld.param.u32 %r7, [skew];
  mov.u32 %r0, %tid.x;
  cvt.u64.u32 %rd3, %r0;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.s8 %r1, [%rd4];
  ld.global.s8 %rd5, [%rd4+1];
  shl.b64 %rd6, %rd3, 3;
  add.s64 %rd7, %rd1, %rd6;
  ld.global.s16 %h0, [%rd7+2];
  cvt.s32.s16 %r2, %h0;
  ld.global.v2.u32 {%r3, %r4}, [%rd7+64];
  mul.wide.u32 %rd8, %r0, 32;
  add.s64 %rd9, %rd2, %rd8;
  st.global.u32 [%rd9], %r1;
  st.global.u64 [%rd9+8], %rd5;
  st.global.u32 [%rd9+16], %r2;
  st.global.u32 [%rd9+20], %r3;
  st.global.u32 [%rd9+24], %r4;
  mul.lo.u32 %r5, %r0, %r7;
  cvt.u64.u32 %rd10, %r5;
  add.s64 %rd11, %rd7, %rd10;
  ld.global.u32 %r6, [%rd11];
  st.global.u32 [%rd9+28], %r6;
  ret;
}
";

/// Global loads of each width from a register plus offset: sign extension to 32 and 64
/// bits, vector elements, and the lane an error names (the first failing lane in lane
/// order), as the emulator's load path must give them.
#[test]
fn global_loads_extend_signs_fill_vectors_and_name_the_failing_lane() {
    let run = |skew: u64| {
        let mut emu = Emulator::new();
        let m = load(&mut emu, "loads.ptx", GLOBAL_LOADS);
        let k = emu.kernel(m, "loads").unwrap();
        let bytes: Vec<u8> = (0..320u32).map(|i| (i * 37 + 200) as u8).collect();
        let words: Vec<u32> = bytes
            .chunks(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let a = alloc_u32s(&mut emu, &words);
        let out = alloc_u32s(&mut emu, &[0; 32 * 8]);
        let p = params(&emu, k, &[a, out, skew]);
        let result = emu.run(k, LaunchConfig::linear(1, 32), &p);
        (emu, result, bytes, out)
    };
    let (emu, result, b, out) = run(0);
    result.unwrap();
    let got = read_u32s(&emu, out, 32 * 8);
    for t in 0..32usize {
        let row = &got[t * 8..t * 8 + 8];
        let word = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        assert_eq!(row[0], b[t] as i8 as i32 as u32, "s8 to 32 bits, lane {t}");
        let wide = u64::from(row[3]) << 32 | u64::from(row[2]);
        assert_eq!(
            wide,
            b[t + 1] as i8 as i64 as u64,
            "s8 to 64 bits, lane {t}"
        );
        let half = i16::from_le_bytes([b[8 * t + 2], b[8 * t + 3]]);
        assert_eq!(row[4], half as i32 as u32, "s16, lane {t}");
        assert_eq!(row[5], word(64 + 8 * t), "v2 element 0, lane {t}");
        assert_eq!(row[6], word(68 + 8 * t), "v2 element 1, lane {t}");
        assert_eq!(row[7], word(8 * t), "u32, lane {t}");
    }
    // Lane t's last load reads 4 bytes at 8t + t * skew: with skew 2, lanes 1, 3, ... are
    // misaligned and lane 1 is named; with skew 12, lane 16 (20 * 16 + 4 > 320 bytes) is
    // the first out of bounds.
    let (_, result, ..) = run(2);
    let e = result.unwrap_err();
    assert!(
        matches!(e.kind, ErrorKind::Memory(emu::MemError::Misaligned { .. })),
        "{e}"
    );
    assert_eq!(e.location.lane, Some(1), "{e}");
    let (_, result, ..) = run(12);
    let e = result.unwrap_err();
    assert!(matches!(e.kind, ErrorKind::Memory(_)), "{e}");
    assert!(
        !matches!(e.kind, ErrorKind::Memory(emu::MemError::Misaligned { .. })),
        "{e}"
    );
    assert_eq!(e.location.lane, Some(16), "{e}");
}

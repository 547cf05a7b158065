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

const LDMATRIX: &str = "
.version 8.0
.target sm_80
.address_size 64
.visible .entry ldm(.param .u64 pin, .param .u64 pout)
{
  .reg .b32 %r<16>;
  .reg .b64 %rd<8>;
  .shared .align 16 .b8 tile[512];
  ld.param.u64 %rd1, [pin];
  ld.param.u64 %rd2, [pout];
  mov.u32 %r0, %tid.x;
  mul.wide.u32 %rd3, %r0, 16;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.v4.b32 {%r1, %r2, %r3, %r4}, [%rd4];
  shl.b32 %r5, %r0, 4;
  mov.u32 %r6, tile;
  add.s32 %r7, %r6, %r5;
  st.shared.v4.b32 [%r7], {%r1, %r2, %r3, %r4};
  bar.sync 0;
  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r8, %r9, %r10, %r11}, [%r7];
  ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%r12, %r13}, [%r7];
  mul.wide.u32 %rd5, %r0, 32;
  add.s64 %rd6, %rd2, %rd5;
  st.global.v4.b32 [%rd6], {%r8, %r9, %r10, %r11};
  st.global.v2.b32 [%rd6+16], {%r12, %r13};
  ret;
}
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
    let m = load(&mut emu, "ldm.ptx", LDMATRIX);
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

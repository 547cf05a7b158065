//! Known answers of the modern core's constant-bank operands (`sm.constant_operands`,
//! on rtx-a6000 and h100): a kernel parameter read by arithmetic is that instruction's
//! constant operand, as in SASS (`FFMA R2, R2, c[0x0][0x160], R2`), not a load: the load
//! takes no issue slot and no register, its consumers wait for nothing on it and read it
//! from the constant cache (one `constant_cache read` per operand on the energy ledger),
//! and the instruction count drops by the folded loads. And the L0 instruction cache's
//! stream buffer (`sm.l0_stream_buffer`): a straight-line kernel larger than the L0 misses
//! less with it.

mod common;

use common::*;
use emu::{Emulator, KernelRef, LaunchConfig};
use timing::{GpuConfig, KernelInfo, KernelStats};

/// One warp: `n` dependent FMAs `x = x * a + a`, where `a` is a kernel parameter.
fn fma_chain(n: usize) -> String {
    let mut s = String::from(
        ".version 7.0\n.target sm_70\n.address_size 64\n\
         .visible .entry chain(.param .f32 a, .param .u64 out)\n{\n\
         .reg .f32 %f<4>;\n.reg .b64 %rd<2>;\n\
         ld.param.f32 %f1, [a];\nld.param.u64 %rd1, [out];\nmov.f32 %f2, 0f00000000;\n",
    );
    for _ in 0..n {
        s.push_str("fma.rn.f32 %f2, %f2, %f1, %f1;\n");
    }
    s.push_str("st.global.f32 [%rd1], %f2;\nret;\n}\n");
    s
}

/// `ptx`'s kernel `name` compiled as `regsim run` does for `cfg`: its design's passes,
/// the constant operands when `cfg` asks for them, then the control bits.
fn compiled(ptx: &str, name: &str, cfg: &GpuConfig) -> (Emulator, KernelRef, KernelInfo, usize) {
    let (emu, k, _) = load(ptx, name);
    let program = &emu.module(k.module).expect("module").program;
    let options = compiler::pipeline::LoadOptions {
        max_registers: None,
        passes: timing::rf::required_passes(cfg),
    };
    let c = compiler::pipeline::compile(program, &options).unwrap_or_else(|e| panic!("{e}"));
    let mut info = KernelInfo::from_compiled(&c.program, &c.functions, k.func)
        .unwrap_or_else(|e| panic!("{e}"));
    let allocation = |f: ir::FuncId| {
        c.functions
            .get(f.index())
            .and_then(Option::as_ref)
            .map(|c| &c.allocation)
    };
    let folded = if cfg.sm.constant_operands {
        timing::constant_operands::attach(&mut info, &c.program, allocation)
    } else {
        0
    };
    timing::control_bits::attach(&mut info, &c.program, &cfg.pipeline, allocation);
    (emu, k, info, folded)
}

fn run_fma_chain(n: usize, overrides: &[&str]) -> (KernelStats, usize) {
    let mut o = vec!["gpu.num_sms=1"];
    o.extend_from_slice(overrides);
    let cfg = config("rtx-a6000", &o);
    let (mut emu, k, info, folded) = compiled(&fma_chain(n), "chain", &cfg);
    let out = alloc_u32(&mut emu, &[7]);
    let mut p = 2.0f32.to_bits().to_le_bytes().to_vec();
    p.extend_from_slice(&[0; 4]);
    p.extend_from_slice(&out.to_le_bytes());
    let s = run_warm(cfg, &mut emu, k, &info, LaunchConfig::linear(1, 32), &p);
    // x = 2x + 2 from 0, n times: 2^(n+1) - 2.
    let expected = (2.0f64.powi(n as i32 + 1) - 2.0) as f32;
    assert_eq!(read_u32(&emu, out, 1), [expected.to_bits()]);
    (s, folded)
}

fn event(s: &KernelStats, structure: &str, access: &str) -> u64 {
    s.energy_events
        .iter()
        .find(|e| e.structure == structure && e.access == access)
        .map_or(0, |e| e.count)
}

const OFF: &str = "sm.constant_operands=false";

#[test]
fn a_parameter_read_by_ffmas_is_their_constant_operand_not_a_load() {
    let n = 24;
    let (on, folded) = run_fma_chain(n, &[]);
    let (off, none) = run_fma_chain(n, &[OFF]);
    // `a` folds into the FMAs; `out` (a store's address) stays a load.
    assert_eq!((folded, none), (1, 0));
    assert_eq!(on.warp_instructions, off.warp_instructions - 1);
    let c = on
        .constant_operands
        .expect("rtx-a6000 times constant operands");
    assert_eq!((c.folded_loads, c.operands), (1, n as u64));
    assert_eq!(off.constant_operands, None);
    // One constant-cache read per FMA, on the ledger; without them none.
    assert_eq!(event(&on, "constant_cache", "read"), n as u64);
    assert_eq!(event(&off, "constant_cache", "read"), 0);
    // Each FMA reads one register (x) instead of two, and `a` is written to no register.
    assert_eq!(
        event(&off, "mrf", "write") - event(&on, "mrf", "write"),
        1,
        "the folded load's register write"
    );
    // Without the fold the first FMA waits for the constant-cache load; with it, the
    // chain starts at once: the difference is the load's latency less the one issue
    // slot it took.
    assert!(on.cycles < off.cycles, "{} vs {}", on.cycles, off.cycles);
    let per_fma = |o: &[&str]| {
        let long = run_fma_chain(80, o).0.cycles;
        let short = run_fma_chain(16, o).0.cycles;
        (long - short) as f64 / 64.0
    };
    // The chain itself runs at the FP32 dependent latency either way.
    assert_eq!(per_fma(&[]), per_fma(&[OFF]));
}

#[test]
fn constant_operands_and_the_stream_buffer_are_refused_on_the_collector_core() {
    for key in ["sm.constant_operands=true", "sm.l0_stream_buffer=16"] {
        let o = [timing::Override::parse(key).unwrap()];
        let err = timing::GpuConfig::load("gtx480", &timing::config::default_configs_dir(), &o)
            .map(|_| ())
            .unwrap_err()
            .to_string();
        let name = key.split('=').next().unwrap_or(key);
        assert!(err.contains(name), "{err}");
    }
}

/// One warp: `n` independent adds in a straight line (8 bytes of code each), then a store.
fn straight_line(n: usize) -> String {
    let mut s = String::from(
        ".version 7.0\n.target sm_70\n.address_size 64\n\
         .visible .entry line(.param .u64 out)\n{\n.reg .b32 %r<8>;\n.reg .b64 %rd<2>;\n\
         ld.param.u64 %rd1, [out];\nmov.u32 %r1, 1;\nmov.u32 %r2, 0;\n",
    );
    for k in 0..n {
        s.push_str(&format!("add.u32 %r{}, %r1, {};\n", 3 + k % 4, k % 7));
    }
    s.push_str("st.global.u32 [%rd1], %r1;\nret;\n}\n");
    s
}

fn run_straight_line(n: usize, overrides: &[&str]) -> KernelStats {
    let mut o = vec!["gpu.num_sms=1"];
    o.extend_from_slice(overrides);
    let cfg = config("rtx-a6000", &o);
    let (mut emu, k, info, _) = compiled(&straight_line(n), "line", &cfg);
    let out = alloc_u32(&mut emu, &[0]);
    let p = params(&emu, k, &[out]);
    let s = run(cfg, &mut emu, k, &info, LaunchConfig::linear(1, 32), &p);
    assert_eq!(read_u32(&emu, out, 1), [1]);
    s
}

#[test]
fn the_stream_buffer_prefetches_a_straight_line_kernel_larger_than_the_l0() {
    // 3000 instructions: 24 KB of code, more than the 16 KB L0.
    let n = 3000;
    let with = run_straight_line(n, &["sm.l0_stream_buffer=16"]);
    let without = run_straight_line(n, &["sm.l0_stream_buffer=0"]);
    let (w, wo) = (
        with.l0_icache.expect("modern core"),
        without.l0_icache.expect("modern core"),
    );
    let line_bytes = u64::from(config("rtx-a6000", &[]).icache.line_bytes);
    let lines = (8 * (n as u64 + 6)).div_ceil(line_bytes);
    // Without a prefetcher every line of the kernel is a cold miss.
    assert_eq!(wo.prefetches, 0);
    assert!(wo.misses >= lines, "{wo:?} for {lines} lines");
    // With it only the first line and the lines the stream runs behind miss; every line
    // it prefetched in time is a useful prefetch.
    assert!(w.misses * 4 < wo.misses, "{w:?} against {wo:?}");
    assert!(w.useful_prefetches + w.misses >= lines, "{w:?}");
    assert!(w.prefetches >= w.useful_prefetches, "{w:?}");
    // The stream stops at the kernel's last line.
    assert!(w.prefetches < lines, "{w:?} for {lines} lines");
    assert!(
        with.cycles < without.cycles,
        "{} vs {}",
        with.cycles,
        without.cycles
    );
}

/// A kernel of two lines: the stream requests the second and nothing past the end of the
/// code, so the kernel ends when its warp does (before, the stream's sixteen requests
/// past the code kept an empty kernel running until they returned from DRAM).
#[test]
fn the_stream_buffer_stops_at_the_end_of_the_code() {
    let n = 20;
    let with = run_straight_line(n, &["sm.l0_stream_buffer=16"]);
    let without = run_straight_line(n, &["sm.l0_stream_buffer=0"]);
    let w = with.l0_icache.expect("modern core");
    let line_bytes = u64::from(config("rtx-a6000", &[]).icache.line_bytes);
    let lines = (8 * (n as u64 + 6)).div_ceil(line_bytes);
    assert!(lines >= 2, "{lines}");
    assert!(w.prefetches < lines, "{w:?} for {lines} lines");
    assert!(
        with.cycles <= without.cycles,
        "{} vs {}",
        with.cycles,
        without.cycles
    );
}

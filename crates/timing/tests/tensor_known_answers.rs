//! Tensor-core instructions under every register-file design: a fragment is several
//! registers, and every one of them reaches the design as a read (A, B, C) or a write (D),
//! which is what a register-file study measures. One warp executes one `mma.sync`
//! m16n8k16 (ten source registers, four results); the same kernel without the `mma`
//! is the control, so the difference in the SM's operand counts is exactly the fragment.

mod common;

use common::*;
use emu::LaunchConfig;
use timing::config::OpClass;
use timing::{GpuConfig, TimingSimulator};

const MMA: &str = "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f4, %f5, %f6, %f7}, \
                   {%r0, %r1, %r2, %r3}, {%r4, %r5}, {%f0, %f1, %f2, %f3};";

fn kernel(with_mma: bool) -> String {
    format!(
        ".version 8.0
.target sm_80
.address_size 64
.visible .entry mma16(.param .u64 pd)
{{
  .reg .b32 %r<8>;
  .reg .f32 %f<8>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [pd];
  mov.b32 %r0, 0x3C003C00;
  mov.b32 %r1, 0x3C003C00;
  mov.b32 %r2, 0x3C003C00;
  mov.b32 %r3, 0x3C003C00;
  mov.b32 %r4, 0x40004000;
  mov.b32 %r5, 0x40004000;
  mov.f32 %f0, 0f3F000000;
  mov.f32 %f1, 0f3F000000;
  mov.f32 %f2, 0f3F000000;
  mov.f32 %f3, 0f3F000000;
  {}
  mov.u32 %r7, %tid.x;
  mul.wide.u32 %rd2, %r7, 16;
  add.s64 %rd3, %rd1, %rd2;
  st.global.v4.f32 [%rd3], {{%f4, %f5, %f6, %f7}};
  ret;
}}
",
        if with_mma { MMA } else { "" }
    )
}

fn design_config(design: &str, extra: &[&str]) -> GpuConfig {
    let d = format!("register_file.design=\"{design}\"");
    let o: Vec<&str> = std::iter::once(d.as_str())
        .chain(extra.iter().copied())
        .collect();
    config("gtx480", &o)
}

/// Runs one warp; returns the SM's operand counts, the register file's statistics and
/// the stored results.
fn run_one(
    design: &str,
    with_mma: bool,
) -> (
    timing::rf::ledger::OperandCounts,
    timing::rf::RfStats,
    Vec<u32>,
) {
    run_with(design, with_mma, &[]).0
}

/// [`run_one`] under config overrides `extra`, with the register file's ledger.
#[allow(clippy::type_complexity)]
fn run_with(
    design: &str,
    with_mma: bool,
    extra: &[&str],
) -> (
    (
        timing::rf::ledger::OperandCounts,
        timing::rf::RfStats,
        Vec<u32>,
    ),
    timing::rf::ledger::Ledger,
) {
    let cfg = design_config(design, extra);
    let (mut emu, k, _) = load(&kernel(with_mma), "mma16");
    let info = compiled_info(&emu, k, &cfg);
    let out = alloc_u32(&mut emu, &[0; 128]);
    let p = params(&emu, k, &[out]);
    let mut sim = TimingSimulator::new(cfg);
    let s = sim
        .simulate_kernel(&mut emu, k, LaunchConfig::linear(1, 32), &p, &info)
        .unwrap_or_else(|e| panic!("{design}: {e}"));
    (
        (
            sim.operand_counts(),
            s.register_file,
            read_u32(&emu, out, 128),
        ),
        sim.register_file_ledger(),
    )
}

#[test]
fn every_design_reads_and_writes_every_fragment_register() {
    for design in DESIGNS {
        let (with, rf_with, got) = run_one(design, true);
        let (without, rf_without, _) = run_one(design, false);
        // A (4) + B (2) + C (4) registers read, D (4) written.
        assert_eq!(
            with.source_registers - without.source_registers,
            10,
            "{design}: fragment sources"
        );
        assert_eq!(
            with.result_registers - without.result_registers,
            4,
            "{design}: fragment results"
        );
        // Ones times twos over k = 16, plus 0.5: a design changes timing, never values.
        assert!(
            got.iter().all(|&v| f32::from_bits(v) == 32.5),
            "{design}: {:?}",
            &got[..4]
        );
        if design == "baseline" {
            assert_eq!(rf_with.reads - rf_without.reads, 10, "baseline bank reads");
            assert_eq!(
                rf_with.writes - rf_without.writes,
                4,
                "baseline bank writes"
            );
        }
    }
}

#[test]
fn the_tensor_class_takes_its_configured_latency() {
    let (emu, k, info) = load(&kernel(true), "mma16");
    let _ = emu;
    let mma = (0..)
        .map(ir::InstId::new)
        .find(|&i| info.inst(k.func, i).class == OpClass::Tensor)
        .expect("the mma is a tensor-class instruction");
    assert_eq!(info.srcs(k.func, info.inst(k.func, mma)).len(), 10);
    assert_eq!(info.dsts(k.func, info.inst(k.func, mma)).len(), 4);
    // A longer tensor latency delays the dependent store by the difference, once the
    // mma is on the critical path.
    let cycles = |latency: u32| {
        let cfg = config(
            "gtx480",
            &[&format!(
                "pipeline.classes.tensor={{ unit = \"sp\", latency = {latency}, initiation_interval = 2 }}"
            )],
        );
        let (mut emu, k, info) = load(&kernel(true), "mma16");
        let out = alloc_u32(&mut emu, &[0; 128]);
        let p = params(&emu, k, &[out]);
        run_warm(cfg, &mut emu, k, &info, LaunchConfig::linear(1, 32), &p).cycles
    };
    // (Below about 80 cycles the kernel's other latencies hide the mma's.)
    assert_eq!(cycles(230) - cycles(130), 100);
}

/// The kernels of `crates/emu/tests/data/modern/mma_shapes.nvcc-sm80.ptx` (nvcc 11.8:
/// tf32, 8-bit integer and f64 `mma.sync`) and the bytes of their A, B, C and D elements.
const SHAPE_KERNELS: [(&str, [u64; 3]); 5] = [
    ("_Z12tf32_m16n8k8PKfS0_S0_Pf", [4, 4, 4]),
    ("_Z12tf32_m16n8k4PKfS0_S0_Pf", [4, 4, 4]),
    ("_Z11s8_m16n8k16PKaS0_PKiPi", [1, 1, 4]),
    ("_Z23u8s8_m16n8k32_satfinitePKhPKaPKiPi", [1, 1, 4]),
    ("_Z10f64_m8n8k4PKdS0_S0_Pd", [8, 8, 8]),
];

/// D of one of `SHAPE_KERNELS` on 1 warp, in timing mode under `design` (`None`: the
/// functional emulator alone), from fixed pseudo-random inputs.
fn shape_kernel_d(kernel: &str, sizes: [u64; 3], design: Option<&str>) -> Vec<u64> {
    let path = format!(
        "{}/../emu/tests/data/modern/mma_shapes.nvcc-sm80.ptx",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let (mut emu, k, _) = load(&text, kernel);
    let mut alloc = |n: u64, size: u64, seed: u64| {
        let a = emu
            .memory
            .alloc(n * size, emu::AllocKind::Device)
            .expect("alloc");
        for i in 0..n {
            let x = (i * 2_654_435_761 + seed * 97) % 251;
            let v = if size == 8 {
                (x as f64 / 8.0 - 15.0).to_bits()
            } else if size == 4 && kernel.contains("tf32") {
                u64::from((x as f32 / 16.0 - 7.0).to_bits())
            } else {
                x
            };
            emu.memory
                .write_uint(a + i * size, size as u32, v)
                .expect("write");
        }
        a
    };
    let pa = alloc(512, sizes[0], 1);
    let pb = alloc(256, sizes[1], 2);
    let pc = alloc(128, sizes[2], 3);
    let pd = alloc(128, sizes[2], 4);
    let p = params(&emu, k, &[pa, pb, pc, pd]);
    let launch = LaunchConfig::linear(1, 32);
    match design {
        None => {
            emu.run(k, launch, &p).unwrap_or_else(|e| panic!("{e}"));
        }
        Some(design) => {
            let cfg = design_config(design, &[]);
            let info = compiled_info(&emu, k, &cfg);
            TimingSimulator::new(cfg)
                .simulate_kernel(&mut emu, k, launch, &p, &info)
                .unwrap_or_else(|e| panic!("{kernel} under {design}: {e}"));
        }
    }
    (0..128)
        .map(|i| {
            emu.memory
                .read_uint(pd + sizes[2] * i, sizes[2] as u32)
                .expect("read")
        })
        .collect()
}

#[test]
fn every_design_computes_the_tf32_integer_and_f64_shapes_as_the_emulator_does() {
    for (kernel, sizes) in SHAPE_KERNELS {
        let want = shape_kernel_d(kernel, sizes, None);
        assert!(want.iter().any(|&x| x != 0), "{kernel}: a non-trivial D");
        for design in DESIGNS {
            assert_eq!(
                shape_kernel_d(kernel, sizes, Some(design)),
                want,
                "{kernel} under {design}"
            );
        }
    }
}

#[test]
fn an_mma_with_seven_operand_slots_takes_seven_bank_reads_and_delivers_its_fragments() {
    // `register_file.tensor_operand_slots = 7` (Turing's HMMA): the ten fragment
    // registers are read in seven bank accesses that together deliver all ten.
    let slots = ["register_file.tensor_operand_slots=7"];
    for design in ["baseline", "malekeh", "bow"] {
        let ((_, rf, got), ledger) = run_with(design, true, &slots);
        let ((_, rf_ten, _), ledger_ten) = run_with(design, true, &[]);
        assert!(got.iter().all(|&v| f32::from_bits(v) == 32.5), "{design}");
        assert_eq!(
            ledger.delivered_total(),
            ledger_ten.delivered_total(),
            "{design}"
        );
        if design == "baseline" {
            assert_eq!(rf_ten.reads - rf.reads, 3, "baseline: 10 reads become 7");
        } else {
            assert!(rf.reads <= rf_ten.reads, "{design}");
        }
    }
}

/// A one-warp kernel `chain(.param .u64 out)`: seven dependent `inst %rN+1, %rN;` from
/// lane `l`'s word `l | (l + 32) << 16`, then a store of the last result.
fn warp_move_chain(inst: &str) -> String {
    let mut s = String::from(
        ".version 7.8\n.target sm_80\n.address_size 64\n\
         .visible .entry chain(.param .u64 out)\n{\n.reg .b32 %r<12>;\n.reg .b64 %rd<4>;\n\
         ld.param.u64 %rd1, [out];\nmov.u32 %r0, %tid.x;\nadd.u32 %r10, %r0, 32;\n\
         shl.b32 %r10, %r10, 16;\nor.b32 %r1, %r0, %r10;\n",
    );
    for i in 1..8 {
        s.push_str(
            &inst
                .replace("{d}", &format!("%r{}", i + 1))
                .replace("{a}", &format!("%r{i}")),
        );
        s.push('\n');
    }
    s.push_str(
        "mul.wide.u32 %rd2, %r0, 4;\nadd.s64 %rd3, %rd1, %rd2;\n\
         st.global.u32 [%rd3], %r8;\nret;\n}\n",
    );
    s
}

const MOVMATRIX: &str = "movmatrix.sync.aligned.m8n8.trans.b16 {d}, {a};";
const SHFL: &str = "shfl.sync.bfly.b32 {d}, {a}, 1, 31, -1;";

/// Cycles of [`warp_move_chain`] of `inst` under `design` on gtx480 with the shuffle
/// class at `latency`, and the stored words.
fn warp_move_run(inst: &str, design: &str, latency: u32) -> (u64, Vec<u32>) {
    let cfg = design_config(
        design,
        &[&format!(
            "pipeline.classes.shuffle={{ unit = \"sp\", latency = {latency}, initiation_interval = 1 }}"
        )],
    );
    let (mut emu, k, _) = load(&warp_move_chain(inst), "chain");
    let info = compiled_info(&emu, k, &cfg);
    let out = alloc_u32(&mut emu, &[0; 32]);
    let p = params(&emu, k, &[out]);
    let s = run_warm(cfg, &mut emu, k, &info, LaunchConfig::linear(1, 32), &p);
    (s.cycles, read_u32(&emu, out, 32))
}

#[test]
fn movmatrix_is_timed_as_a_shuffle_and_transposes_under_every_design() {
    // A movmatrix takes the shuffle class's latency: on the critical path, 7 of them
    // move the end by 7 times a change of that latency, exactly as 7 shuffles do. (At
    // short latencies the parameter load's latency hides the first of the chain.)
    let (m60, _) = warp_move_run(MOVMATRIX, "baseline", 60);
    let (m70, _) = warp_move_run(MOVMATRIX, "baseline", 70);
    let (s60, _) = warp_move_run(SHFL, "baseline", 60);
    let (s70, _) = warp_move_run(SHFL, "baseline", 70);
    assert_eq!(m70 - m60, 70);
    assert_eq!(s70 - s60, 70);
    assert_eq!(m60, s60, "same class, same chain, same cycles");
    // An odd number of transposes is one transpose. Element (r, c) of the source is in
    // lane 4r + c/2, half c % 2, so its value is 4r + c/2 + 32 (c % 2).
    let el = |r: u32, c: u32| 4 * r + c / 2 + 32 * (c % 2);
    let want: Vec<u32> = (0..32)
        .map(|lane| {
            let (g, t) = (lane / 4, lane % 4);
            el(2 * t, g) | el(2 * t + 1, g) << 16
        })
        .collect();
    for design in DESIGNS {
        let (_, got) = warp_move_run(MOVMATRIX, design, 20);
        assert_eq!(got, want, "{design}");
    }
}

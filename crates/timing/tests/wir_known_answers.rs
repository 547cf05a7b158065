//! Known answers of the WIR design (Kim and Ro, HPCA'18) through emu + timing: reuse of
//! repeated computations, value sharing through the VSB, §VI-A's load rules, and the
//! pool's reference counts.

mod common;

use common::*;
use emu::LaunchConfig;
use timing::KernelStats;

const HEADER: &str = ".version 7.0\n.target sm_70\n.address_size 64\n";

fn extra(s: &KernelStats, key: &str) -> u64 {
    s.register_file
        .extra
        .get(key)
        .copied()
        .unwrap_or_else(|| panic!("no {key}"))
}

/// Runs `body` (after `ld.param.u64 %rd1, [out]`) as kernel `k` on one warp of one SM,
/// with `n` u32 words at `out` initialised to `init`; returns the stats and the words.
fn run_wir(body: &str, n: usize, init: u32, overrides: &[&str]) -> (KernelStats, Vec<u32>) {
    let ptx = format!(
        "{HEADER}.visible .entry k(.param .u64 out)\n{{\n.reg .pred %p<4>;\n.reg .b32 %r<32>;\n\
         .reg .b64 %rd<8>;\n.shared .align 4 .b32 sh[64];\nld.param.u64 %rd1, [out];\n{body}\nret;\n}}\n"
    );
    let (mut emu, k, info) = load(&ptx, "k");
    let out = alloc_u32(&mut emu, &vec![init; n]);
    let p = params(&emu, k, &[out]);
    let mut o = vec!["gpu.num_sms=1", "register_file.design=\"wir\""];
    o.extend_from_slice(overrides);
    let s = run(
        config("gtx480", &o),
        &mut emu,
        k,
        &info,
        LaunchConfig::linear(1, 32),
        &p,
    );
    let words = read_u32(&emu, out, n);
    (s, words)
}

/// Thread `tid` stores `v` at `out[tid]`.
const STORE_PER_THREAD: &str = "mov.u32 %r30, %tid.x;\nmul.wide.u32 %rd6, %r30, 4;\n\
                                add.s64 %rd7, %rd1, %rd6;\n";

#[test]
fn the_same_computation_from_the_same_inputs_is_reused() {
    let body = format!(
        "mov.u32 %r1, %tid.x;\nadd.s32 %r2, %r1, 7;\nmul.lo.s32 %r3, %r2, %r2;\n\
         add.s32 %r4, %r1, 7;\nmul.lo.s32 %r5, %r4, %r4;\nadd.s32 %r6, %r3, %r5;\n\
         {STORE_PER_THREAD}st.global.u32 [%rd7], %r6;"
    );
    let (s, words) = run_wir(&body, 32, 0, &[]);
    let want: Vec<u32> = (0..32).map(|t: u32| 2 * (t + 7) * (t + 7)).collect();
    assert_eq!(words, want);
    // The second add and the second mul reuse the first ones; nothing else repeats.
    assert_eq!(
        extra(&s, "wir_reuse_hits"),
        2,
        "{:#?}",
        s.register_file.extra
    );
    assert_eq!(extra(&s, "wir_reused_alu"), 2);
    assert_eq!(extra(&s, "wir_value_mismatches"), 0);
    // Reused instructions read and write no register (2 sources, 2 results), nor does a
    // result the VSB finds in a register already (`%r30`, the thread index again).
    assert_eq!(extra(&s, "wir_register_reads_avoided"), 2);
    assert_eq!(extra(&s, "wir_vsb_false_positives"), 0);
    assert_eq!(
        extra(&s, "wir_register_writes_avoided"),
        2 + extra(&s, "wir_vsb_hits")
    );
    assert!(extra(&s, "wir_vsb_hits") >= 1);
    // The pool is empty again once the kernel has ended.
    assert_eq!(extra(&s, "wir_physical_registers_in_use"), 0);
}

/// `%r2` and `%r3` hold the same values computed by different operations; the two
/// multiplies then have equal sources; thread `tid` stores `6 * (tid + 2)`.
fn equal_values_body() -> String {
    format!(
        "mov.u32 %r1, %tid.x;\nadd.s32 %r2, %r1, 2;\nsub.s32 %r3, %r1, -2;\n\
         mul.lo.s32 %r4, %r2, 3;\nmul.lo.s32 %r5, %r3, 3;\nadd.s32 %r6, %r4, %r5;\n\
         {STORE_PER_THREAD}st.global.u32 [%rd7], %r6;"
    )
}

#[test]
fn without_renaming_of_equal_values_only_identical_sources_reuse() {
    // %r2 and %r3 hold the same values computed by different operations: the VSB maps
    // both onto one register, so the two multiplies have the same physical source.
    let body = equal_values_body();
    let (s, words) = run_wir(&body, 32, 0, &[]);
    assert_eq!(words, (0..32).map(|t: u32| 6 * (t + 2)).collect::<Vec<_>>());
    assert!(
        extra(&s, "wir_vsb_hits") >= 1,
        "{:?}",
        s.register_file.extra
    );
    assert_eq!(extra(&s, "wir_vsb_false_positives"), 0);
    assert_eq!(extra(&s, "wir_reused_alu"), 1, "the second multiply");

    // NoVSB gives every result its own register: the multiplies differ in sources.
    let (s, words2) = run_wir(&body, 32, 0, &["register_file.wir.variant=\"NoVSB\""]);
    assert_eq!(words2, words);
    assert_eq!(extra(&s, "wir_vsb_lookups"), 0);
    assert_eq!(extra(&s, "wir_reused_alu"), 0);
}

#[test]
fn a_load_after_a_store_by_the_warp_is_not_reused() {
    // Every lane loads out[0]; with the store in between the second load must read 5.
    let load = "ld.global.u32 %r1, [%rd1];\nld.global.u32 %r2, [%rd1];\n";
    let with_store = "ld.global.u32 %r1, [%rd1];\nmov.u32 %r9, 5;\nst.global.u32 [%rd1], %r9;\n\
                      ld.global.u32 %r2, [%rd1];\n";
    let tail = format!("add.s32 %r3, %r1, %r2;\n{STORE_PER_THREAD}st.global.u32 [%rd7+4], %r3;");
    let (plain, w) = run_wir(&format!("{load}{tail}"), 33, 3, &[]);
    assert_eq!(w[1..], [6; 32]);
    assert_eq!(
        extra(&plain, "wir_reused_load"),
        1,
        "the second load reuses the first"
    );
    let (stored, w) = run_wir(&format!("{with_store}{tail}"), 33, 3, &[]);
    assert_eq!(w[1..], [8; 32], "3 + 5");
    assert_eq!(extra(&stored, "wir_reused_load"), 0);
    assert_eq!(
        extra(&stored, "wir_stale_loads"),
        0,
        "the rule, not the check, refused"
    );
    // Without load reuse (RPV) neither reuses.
    let (s, _) = run_wir(
        &format!("{load}{tail}"),
        33,
        3,
        &["register_file.wir.variant=\"RPV\""],
    );
    assert_eq!(extra(&s, "wir_reused_load"), 0);
}

#[test]
fn shared_loads_reuse_only_within_one_barrier_interval() {
    let init = "mov.u32 %r9, %tid.x;\nshl.b32 %r10, %r9, 2;\nmov.u32 %r11, sh;\n\
                add.s32 %r12, %r11, %r10;\nst.shared.u32 [%r12], %r9;\nbar.sync 0;\n";
    let tail = format!("add.s32 %r3, %r1, %r2;\n{STORE_PER_THREAD}st.global.u32 [%rd7], %r3;");
    let same_interval =
        format!("{init}ld.shared.u32 %r1, [%r12];\nld.shared.u32 %r2, [%r12];\n{tail}");
    let across_barrier = format!(
        "{init}ld.shared.u32 %r1, [%r12];\nbar.sync 0;\nld.shared.u32 %r2, [%r12];\n{tail}"
    );
    let (a, w) = run_wir(&same_interval, 32, 0, &[]);
    assert_eq!(w, (0..32).map(|t: u32| 2 * t).collect::<Vec<_>>());
    assert_eq!(extra(&a, "wir_reused_load"), 1);
    let (b, w2) = run_wir(&across_barrier, 32, 0, &[]);
    assert_eq!(w2, w);
    assert_eq!(
        extra(&b, "wir_reused_load"),
        0,
        "the entry is from before the barrier"
    );
}

#[test]
fn divergent_instructions_neither_reuse_nor_share_registers() {
    // Lanes below 16 compute the same add twice under a branch: divergent, so no reuse,
    // and the pinned destination gets a dummy MOV for the inactive lanes.
    let body = format!(
        "mov.u32 %r1, %tid.x;\nmov.u32 %r2, 0;\nsetp.lt.u32 %p1, %r1, 16;\n@!%p1 bra SKIP;\n\
         add.s32 %r2, %r1, 7;\nadd.s32 %r3, %r1, 7;\nadd.s32 %r2, %r2, %r3;\nSKIP:\n\
         {STORE_PER_THREAD}st.global.u32 [%rd7], %r2;"
    );
    let (s, words) = run_wir(&body, 32, 0, &[]);
    let want: Vec<u32> = (0..32)
        .map(|t| if t < 16 { 2 * (t + 7) } else { 0 })
        .collect();
    assert_eq!(words, want);
    assert_eq!(extra(&s, "wir_reused_alu"), 0);
    assert!(
        extra(&s, "wir_dummy_movs") >= 1,
        "{:?}",
        s.register_file.extra
    );
}

#[test]
fn statistics_are_deterministic_and_the_baseline_counts_stay_comparable() {
    let body = format!(
        "mov.u32 %r1, %tid.x;\nadd.s32 %r2, %r1, 7;\nadd.s32 %r4, %r1, 7;\nadd.s32 %r6, %r2, %r4;\n\
         {STORE_PER_THREAD}st.global.u32 [%rd7], %r6;"
    );
    let (a, _) = run_wir(&body, 32, 0, &[]);
    let (b, _) = run_wir(&body, 32, 0, &[]);
    assert_eq!(a.register_file, b.register_file);
    assert_eq!(a.cycles, b.cycles);
    assert_eq!(a.register_file.design, "wir");
    // `reads`/`writes` are main-register-file bank accesses: fewer than the operands.
    assert!(
        a.register_file.reads < extra(&a, "wir_operand_reads") + extra(&a, "wir_verify_reads") + 1
    );
}

/// Every workload kernel under every variant: reuse never gives another value than the
/// emulator computed (debug builds also assert it inside the design), the memory the
/// kernel leaves is the functional run's, and the pool is empty at the end.
#[test]
fn every_workload_kernel_reuses_only_equal_values_under_every_variant() {
    use common::workloads::{cases, prepare};
    for c in cases() {
        for variant in ["R", "RL", "RLP", "RLPV", "RPV", "RLPVc", "NoVSB"] {
            let set = format!("register_file.wir.variant=\"{variant}\"");
            let cfg = config("gtx480", &["register_file.design=\"wir\"", &set]);
            let mut p = prepare(&c);
            let mut sim = timing::TimingSimulator::new(cfg);
            let s = sim
                .simulate_kernel(&mut p.emu, p.kernel, p.launch, &p.params, &p.info)
                .unwrap_or_else(|e| panic!("{} under {variant}: {e}", c.workload));
            let what = format!("{} under {variant}", c.workload);
            assert_eq!(extra(&s, "wir_value_mismatches"), 0, "{what}");
            assert_eq!(extra(&s, "wir_pool_overflow"), 0, "{what}");
            assert_eq!(extra(&s, "wir_physical_registers_in_use"), 0, "{what}");
        }
    }
}

/// A verify read (§V-A: a value signature hit confirmed by reading the matched register
/// from its bank, variant RLP without the verify cache) is one MRF bank read and its trip
/// over the crossbar, charged once: as `mrf` read, with no separate `wir_verify_read`
/// event. Before the ledger it was also charged as `wir_verify_read`.
#[test]
fn a_verify_read_is_charged_once_as_a_bank_read() {
    let body = equal_values_body();
    let (s, _) = run_wir(&body, 32, 0, &["register_file.wir.variant=\"RLP\""]);
    let verify = extra(&s, "wir_verify_reads");
    assert!(verify >= 1, "{:?}", s.register_file.extra);
    let count = |structure: &str, access: &str| {
        s.energy_events
            .iter()
            .find(|e| e.structure == structure && e.access == access)
            .map_or(0, |e| e.count)
    };
    assert_eq!(count("wir_verify_read", "read"), 0);
    let operands = extra(&s, "wir_operand_reads") - extra(&s, "wir_register_reads_avoided");
    let dummies = extra(&s, "wir_dummy_movs");
    assert_eq!(s.register_file.reads, operands + verify + dummies);
    assert_eq!(count("mrf", "read"), s.register_file.reads);
    assert_eq!(count("crossbar", "transfer"), s.register_file.reads);
    // Only operands go through a collector.
    assert_eq!(count("collector", "write"), operands);
}

//! Known answers of Gebhart's register-file hierarchies (`--rf rfc`, `--rf orf-lrf`)
//! through the whole simulator: small kernels whose register traffic can be counted by
//! hand, and the equivalences with the baseline.

mod common;

use common::workloads::{cases, prepare};
use common::{config, load, params, run};
use emu::LaunchConfig;
use ir::InstId;
use timing::kernel_info::HierarchyLevel;
use timing::{KernelInfo, KernelStats, TimingSimulator};

/// One warp: a value computed before a global load and read after it.
const AFTER_LOAD: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry k(.param .u64 p)
{
    .reg .b32 %r<6>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [p];
    mov.u32 %r1, %tid.x;
    add.s32 %r2, %r1, 1;
    ld.global.u32 %r3, [%rd1];
    add.s32 %r4, %r3, %r2;
    st.global.u32 [%rd1], %r4;
    ret;
}
"#;

const TWO_LEVEL: &str = "sm.scheduler=\"two_level\"";

fn one_warp() -> LaunchConfig {
    LaunchConfig {
        grid: [1, 1, 1],
        block: [32, 1, 1],
        dynamic_shared: 0,
        cluster: None,
    }
}

fn simulate(ptx: &str, overrides: &[&str], edit: impl Fn(&mut KernelInfo)) -> KernelStats {
    let (mut emu, k, mut info) = load(ptx, "k");
    edit(&mut info);
    let buf = common::alloc_u32(&mut emu, &[5; 32]);
    let p = params(&emu, k, &[buf]);
    run(
        config("gtx480", overrides),
        &mut emu,
        k,
        &info,
        one_warp(),
        &p,
    )
}

fn extra(s: &KernelStats, key: &str) -> u64 {
    *s.register_file
        .extra
        .get(key)
        .unwrap_or_else(|| panic!("no {key} in {:?}", s.register_file.extra))
}

/// Hand count, in 32-bit registers. The allocator gives %rd1 = R0:R1, %r1 = R2,
/// %r2 = R3, %r3 = %r4 = R2. `ld.param` is short-latency but its cold constant-cache miss
/// returns after `mov` and `add` have written: RFC (oldest first) R2, R3 (`add` read R2:
/// a hit), then R0, R1. `ld.global` reads R0:R1 (2 hits) and writes R2 to the MRF (long
/// latency). The second `add` depends on the load: the warp leaves the active set and its
/// 4 entries are written back to the MRF. Back in, `add` reads R2 and R3 from the MRF
/// (2 misses: R3 is a value read after a long-latency load) and writes R2 to the RFC;
/// `st` reads R0:R1 (2 misses) and R2 (1 hit).
#[test]
fn a_value_read_after_a_long_latency_load_misses_once_the_warp_was_deactivated() {
    let s = simulate(
        AFTER_LOAD,
        &[TWO_LEVEL, "register_file.design=\"rfc\""],
        |_| {},
    );
    assert_eq!(s.register_file.design, "rfc");
    assert_eq!(extra(&s, "rfc_read_hits"), 4);
    assert_eq!(extra(&s, "rfc_read_misses"), 4);
    assert_eq!(extra(&s, "rfc_writebacks_deactivation"), 4);
    assert_eq!(extra(&s, "rfc_writebacks_eviction"), 0);
    assert_eq!(extra(&s, "rfc_writes"), 5, "R2, R3, R0, R1, R2");
    assert_eq!(extra(&s, "rfc_results_to_mrf"), 1, "the load's r3");
    // MRF: 4 misses read, 4 writebacks and the load's result written.
    assert_eq!((s.register_file.reads, s.register_file.writes), (4, 5));
    assert_eq!(extra(&s, "rfc_operand_reads"), 8);
    assert_eq!(extra(&s, "rfc_operand_writes"), 6);
    assert!(extra(&s, "rfc_deactivations") >= 1);
}

/// Sets the liveness bit on `add %r2, %r1, 1`'s read of %r1 (AFTER_LOAD's last read of
/// it).
fn mark_first_add_reads_dead(info: &mut KernelInfo) {
    let f = info.kernel;
    let (srcs, _) = info
        .function_mut(f)
        .and_then(|f| f.operands_mut(InstId::new(2)))
        .expect("add");
    for s in srcs.iter_mut() {
        s.hint.dead_after = true;
    }
}

/// With the liveness bit on `add %r2, %r1, 1`'s read of %r1, the flush at the load
/// writes back 3 values instead of 4.
#[test]
fn dead_values_are_never_written_back() {
    let s = simulate(
        AFTER_LOAD,
        &[TWO_LEVEL, "register_file.design=\"rfc\""],
        mark_first_add_reads_dead,
    );
    assert_eq!(extra(&s, "rfc_writebacks_deactivation"), 3);
    assert_eq!(s.register_file.writes, 4);
}

/// Two entries, in the order of the hand count above: `ld.param`'s late pair evicts R2
/// and R3 (both live: written back), and the deactivation writes back R0:R1.
#[test]
fn fifo_eviction_writes_back_the_oldest_live_value() {
    let s = simulate(
        AFTER_LOAD,
        &[
            TWO_LEVEL,
            "register_file.design=\"rfc\"",
            "register_file.rfc.entries_per_thread=2",
        ],
        |_| {},
    );
    assert_eq!(extra(&s, "rfc_evictions"), 2);
    assert_eq!(extra(&s, "rfc_writebacks_eviction"), 2);
    assert_eq!(extra(&s, "rfc_writebacks_deactivation"), 2);
    // Eviction writebacks read the RFC: 4 hits + 2 eviction reads + 2 flush reads.
    assert_eq!(extra(&s, "rfc_reads"), 8);
    assert_eq!(s.register_file.writes, 5);
}

/// With the three-level hardware variant, a result of the ALU goes to the LRF and the
/// next instruction reads it there.
#[test]
fn the_hardware_lrf_serves_the_next_alu_instruction() {
    let s = simulate(
        AFTER_LOAD,
        &[
            TWO_LEVEL,
            "register_file.design=\"rfc\"",
            "register_file.rfc.lrf=true",
        ],
        |_| {},
    );
    // mov's R2 is in the LRF when add reads it; add's R3 displaces it into the RFC; the
    // parameter load (a memory instruction) writes the RFC. The deactivation writes back
    // the LRF's R3 and the RFC's R2, R0, R1. After it, add's R2 goes to the LRF; st (the
    // memory unit cannot reach the LRF) moves it into the RFC and reads it there.
    assert_eq!(extra(&s, "rfc_lrf_hits"), 1);
    assert_eq!(extra(&s, "rfc_lrf_writes"), 3);
    assert_eq!(extra(&s, "rfc_writebacks_deactivation"), 4);
    // The totals of hits and misses do not depend on where the hits are.
    assert_eq!(extra(&s, "rfc_read_hits"), 4);
    assert_eq!(extra(&s, "rfc_read_misses"), 4);
}

/// `entries_per_thread = 0` is the baseline: same MRF traffic, same cycles, on every
/// built-in workload kernel, under the same two-level scheduler.
#[test]
fn an_rfc_without_entries_is_the_baseline() {
    for c in cases() {
        let go = |overrides: &[&str]| {
            let mut p = prepare(&c);
            let mut sim = TimingSimulator::new(config("gtx480", overrides));
            let mut s = sim
                .simulate_kernel(&mut p.emu, p.kernel, p.launch, &p.params, &p.info)
                .unwrap_or_else(|e| panic!("{}: {e}", c.workload));
            s.simulation = Default::default();
            s
        };
        let base = go(&[TWO_LEVEL]);
        let mut rfc = go(&[
            TWO_LEVEL,
            "register_file.design=\"rfc\"",
            "register_file.rfc.entries_per_thread=0",
        ]);
        assert_eq!(rfc.register_file.design, "rfc");
        assert_eq!(extra(&rfc, "rfc_read_hits"), 0);
        rfc.register_file.design = base.register_file.design.clone();
        rfc.register_file.extra = base.register_file.extra.clone();
        // The RFC reports its (empty) structure's events; everything else is the same.
        assert!(rfc
            .energy_events
            .iter()
            .filter(|e| e.structure == "rfc")
            .all(|e| e.count == 0));
        rfc.energy_events.retain(|e| e.structure != "rfc");
        assert_eq!(rfc, base, "{}", c.workload);
    }
}

/// A dependent chain through the LRF: each value is consumed only by the next
/// instruction, so the compiler puts it in the LRF and the MRF serves none of the
/// chain's operands.
const CHAIN: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry k(.param .u64 p)
{
    .reg .b32 %r<6>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [p];
    mov.u32 %r1, %tid.x;
    add.s32 %r2, %r1, 1;
    mul.lo.s32 %r3, %r2, 3;
    xor.b32 %r4, %r3, 7;
    st.global.u32 [%rd1], %r4;
    ret;
}
"#;

#[test]
fn a_dependent_chain_reads_only_the_lrf() {
    let design = ["register_file.design=\"orf-lrf\"", TWO_LEVEL];
    // By hand, as the pass would annotate: %r1..%r4 written to and read from the LRF.
    let s = simulate(CHAIN, &design, |info| {
        let f = info.kernel;
        let fi = info.function_mut(f).expect("kernel");
        for i in 1..=4 {
            let (srcs, dsts) = fi.operands_mut(InstId::new(i)).expect("inst");
            for d in dsts.iter_mut() {
                d.hint.level = HierarchyLevel::LastResult;
            }
            if i > 1 {
                srcs[0].hint.level = HierarchyLevel::LastResult;
            }
        }
        let (srcs, _) = fi.operands_mut(InstId::new(5)).expect("st");
        for s in srcs.iter_mut() {
            if s.width == 1 {
                s.hint.level = HierarchyLevel::LastResult;
            }
        }
    });
    assert_eq!(s.register_file.design, "orf-lrf");
    assert_eq!(extra(&s, "orf_lrf_lrf_reads"), 4);
    assert_eq!(extra(&s, "orf_lrf_lrf_writes"), 4);
    assert_eq!(extra(&s, "orf_lrf_stale_reads"), 0);
    // The MRF serves only %rd1 (2 registers, in st) and is written only by ld.param.
    assert_eq!((s.register_file.reads, s.register_file.writes), (2, 2));
    assert_eq!(extra(&s, "orf_lrf_operand_reads"), 6);
}

/// The kernel info as the CUDA runtime builds it for `cfg`: the load-time pipeline runs
/// the passes the design asks for.
fn compiled_info(emu: &emu::Emulator, k: emu::KernelRef, cfg: &timing::GpuConfig) -> KernelInfo {
    use compiler::pipeline::{compile, LoadOptions};
    let program = &emu.module(k.module).expect("module").program;
    let options = LoadOptions {
        max_registers: None,
        passes: timing::rf::required_passes(cfg),
    };
    let c = compile(program, &options).unwrap_or_else(|e| panic!("{e}"));
    KernelInfo::from_compiled(&c.program, &c.functions, k.func).unwrap_or_else(|e| panic!("{e}"))
}

/// The same chain annotated by the ORF/LRF pass itself (default: 3 ORF entries, split
/// LRF): every value of the chain is read once by the next instruction, so the pass puts
/// the ALU-to-ALU ones in the LRF and the two the store reads (%r4 and the address %rd1:
/// the memory unit cannot reach the LRF) in the ORF. Nothing is read from or written to
/// the MRF.
#[test]
fn the_orf_lrf_pass_keeps_a_dependent_chain_out_of_the_mrf() {
    let cfg = config("gtx480", &["register_file.design=\"orf-lrf\"", TWO_LEVEL]);
    let (mut emu, k, _) = load(CHAIN, "k");
    let info = compiled_info(&emu, k, &cfg);
    let buf = common::alloc_u32(&mut emu, &[0; 32]);
    let p = params(&emu, k, &[buf]);
    let s = run(cfg, &mut emu, k, &info, one_warp(), &p);
    assert_eq!(extra(&s, "orf_lrf_stale_reads"), 0);
    assert_eq!(extra(&s, "orf_lrf_lrf_reads"), 3, "add, mul, xor");
    assert_eq!(extra(&s, "orf_lrf_orf_reads"), 3, "st's %r4 and %rd1");
    assert_eq!(extra(&s, "orf_lrf_mrf_operand_reads"), 0);
    assert_eq!((s.register_file.reads, s.register_file.writes), (0, 0));
    // By width: the 32-bit chain in the LRF and %r4 in the ORF; %rd1, 64-bit, takes two
    // ORF entries and never the LRF.
    let x = |k: &str| extra(&s, &format!("orf_lrf_{k}"));
    assert_eq!(
        (x("w32_reads"), x("w32_lrf_reads"), x("w32_orf_reads")),
        (4, 3, 1)
    );
    assert_eq!(
        (x("w64_reads"), x("w64_orf_reads"), x("w64_lrf_reads")),
        (2, 2, 0)
    );
}

/// Address arithmetic: `mul.wide` → `add.s64` → store. %rd2 is written and read by
/// integer ALU instructions only (the hardware's IMAD/IMAD.HI and IADD/IADD.X pairs).
const ADDRESS: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry k(.param .u64 p)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [p];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r1;
    ret;
}
"#;

/// `register_file.orf_lrf.split_64bit_integers`: %rd2 (64-bit, integer ALU only) is read
/// from the LRF as its two halves; by default it never is. The address %rd3 feeds the
/// store (the memory unit) and stays out of the LRF either way.
#[test]
fn split_64bit_integers_serves_address_arithmetic_halves_from_the_lrf() {
    let w64_lrf = |more: &[&str]| {
        let mut o = vec!["register_file.design=\"orf-lrf\"", TWO_LEVEL];
        o.extend_from_slice(more);
        let cfg = config("gtx480", &o);
        let (mut emu, k, _) = load(ADDRESS, "k");
        let info = compiled_info(&emu, k, &cfg);
        let buf = common::alloc_u32(&mut emu, &[0; 32]);
        let p = params(&emu, k, &[buf]);
        let s = run(cfg, &mut emu, k, &info, one_warp(), &p);
        assert_eq!(extra(&s, "orf_lrf_stale_reads"), 0);
        let x = |k: &str| extra(&s, &format!("orf_lrf_{k}"));
        (x("w64_lrf_reads"), x("w64_reads"))
    };
    assert_eq!(w64_lrf(&[]), (0, 6), "%rd1, %rd2, %rd3: 2 registers each");
    assert_eq!(
        w64_lrf(&["register_file.orf_lrf.split_64bit_integers=true"]),
        (2, 6),
        "%rd2's two halves"
    );
}

/// On every built-in workload kernel, with the pass's annotations: warps leave the active
/// set only at strand ends, and the counts add up: every operand is served by exactly one
/// level, and the MRF's bank reads are the operands sent to it.
#[test]
fn orf_lrf_annotations_hold_on_every_workload_kernel() {
    let cfg = config("gtx480", &["register_file.design=\"orf-lrf\"", TWO_LEVEL]);
    for c in cases() {
        let mut p = prepare(&c);
        p.info = compiled_info(&p.emu, p.kernel, &cfg);
        let mut sim = TimingSimulator::new(cfg.clone());
        let s = sim
            .simulate_kernel(&mut p.emu, p.kernel, p.launch, &p.params, &p.info)
            .unwrap_or_else(|e| panic!("{}: {e}", c.workload));
        let x = |k: &str| extra(&s, &format!("orf_lrf_{k}"));
        assert_eq!(x("midstrand_deactivations"), 0, "{}", c.workload);
        assert_eq!(
            x("operand_reads"),
            x("mrf_operand_reads") + x("orf_reads") + x("lrf_reads"),
            "{}",
            c.workload
        );
        assert_eq!(
            s.register_file.reads,
            x("mrf_operand_reads"),
            "{}",
            c.workload
        );
        assert!(x("operand_reads") > 0, "{}", c.workload);
        // The breakdowns by value width and by strand length add up to the totals.
        let sum = |prefixes: &[String], k: &str| -> u64 {
            prefixes.iter().map(|p| x(&format!("{p}_{k}"))).sum()
        };
        let widths = ["w32".to_string(), "w64".to_string()];
        let strands: Vec<String> = ["1", "2_3", "4_7", "8_15", "16_31", "32up"]
            .iter()
            .map(|b| format!("strand_{b}"))
            .collect();
        for (k, total) in [
            ("reads", "operand_reads"),
            ("orf_reads", "orf_reads"),
            ("lrf_reads", "lrf_reads"),
            ("mrf_reads", "mrf_operand_reads"),
        ] {
            assert_eq!(sum(&widths, k), x(total), "{} {k}", c.workload);
            assert_eq!(sum(&strands, k), x(total), "{} {k}", c.workload);
        }
        assert_eq!(
            sum(&strands, "instructions"),
            s.warp_instructions,
            "{}",
            c.workload
        );
        assert!(
            sum(&strands, "strands") >= x("strand_ends"),
            "{}",
            c.workload
        );
    }
}

/// Bad settings of either design are refused with the key named; the ORF/LRF pass's
/// settings live in the design's own section.
#[test]
fn bad_hierarchy_settings_name_their_key() {
    use timing::config::default_configs_dir;
    use timing::{ConfigError, GpuConfig, Override};
    let load = |o: &str| {
        GpuConfig::load(
            "gtx480",
            &default_configs_dir(),
            &[Override::parse(o).expect("override")],
        )
    };
    for (o, key) in [
        (
            "register_file.rfc.entries_per_thread=9",
            "register_file.rfc.entries_per_thread",
        ),
        (
            "register_file.orf_lrf.orf_entries=12",
            "register_file.orf_lrf.orf_entries",
        ),
    ] {
        match load(o) {
            Err(ConfigError::Invalid { key: k, .. }) => assert_eq!(k, key, "{o}"),
            other => panic!("{o}: {other:?}"),
        }
    }
    let both = GpuConfig::load(
        "gtx480",
        &default_configs_dir(),
        &[
            Override::parse("register_file.rfc.entries_per_thread=0").expect("override"),
            Override::parse("register_file.rfc.lrf=true").expect("override"),
        ],
    );
    assert!(
        matches!(both, Err(ConfigError::Invalid { ref key, .. }) if key == "register_file.rfc.lrf"),
        "{both:?}"
    );
    // Unknown keys of the pass's config are refused too (it denies unknown fields).
    assert!(load("register_file.orf_lrf.orf_entry=3").is_err());
    let ok = load("register_file.orf_lrf.lrf=\"unified\"").expect("valid");
    assert_eq!(
        ok.register_file.orf_lrf.lrf,
        compiler::orf_lrf::LrfMode::Unified
    );
    let passes = timing::rf::required_passes(&ok);
    assert!(passes.orf_lrf.is_none(), "the baseline runs no pass");
    let mut orf = ok.clone();
    orf.register_file.design = timing::config::RegisterFileDesign::OrfLrf;
    let passes = timing::rf::required_passes(&orf);
    assert_eq!(passes.orf_lrf, Some(orf.register_file.orf_lrf.clone()));
    orf.register_file.design = timing::config::RegisterFileDesign::Rfc;
    assert!(timing::rf::required_passes(&orf).liveness_bits);
}

/// The energy events are the hand counts of the first known answer, under the structure
/// names the energy model maps to joules: MRF bank accesses (misses, writebacks, the
/// load's result), RFC reads (4 hits + 4 writeback reads) and writes (5 results), and
/// the operands latched by collectors and read out of them (the 4 MRF reads), the
/// arbiter's grants (4 reads and 5 writes).
#[test]
fn energy_events_count_each_structure() {
    let (mut emu, k, info) = load(AFTER_LOAD, "k");
    let buf = common::alloc_u32(&mut emu, &[5; 32]);
    let p = params(&emu, k, &[buf]);
    let mut sim = TimingSimulator::new(config(
        "gtx480",
        &[TWO_LEVEL, "register_file.design=\"rfc\""],
    ));
    sim.simulate_kernel(&mut emu, k, one_warp(), &p, &info)
        .unwrap_or_else(|e| panic!("{e}"));
    let events: Vec<(&str, &str, u64)> = sim
        .register_file_energy_events()
        .iter()
        .map(|e| (e.structure, e.access, e.count))
        .collect();
    assert_eq!(
        events,
        [
            ("arbiter", "request", 9),
            ("collector", "read", 4),
            ("collector", "write", 4),
            ("crossbar", "transfer", 4),
            ("mrf", "read", 4),
            ("mrf", "write", 5),
            ("rfc", "read", 8),
            ("rfc", "write", 5),
            // Every register read (8) or written (6) is looked up in the tags.
            ("rfc_tag", "lookup", 14),
        ]
    );
    // Without the tag charge, the same run has no tag events (and still counts them).
    let mut sim = TimingSimulator::new(config(
        "gtx480",
        &[
            TWO_LEVEL,
            "register_file.design=\"rfc\"",
            "register_file.rfc.charge_tag_lookups=false",
        ],
    ));
    let (mut emu, k, info) = load(AFTER_LOAD, "k");
    let buf = common::alloc_u32(&mut emu, &[5; 32]);
    let p = params(&emu, k, &[buf]);
    let s = sim
        .simulate_kernel(&mut emu, k, one_warp(), &p, &info)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(extra(&s, "rfc_tag_lookups"), 14);
    assert!(sim
        .register_file_energy_events()
        .iter()
        .all(|e| e.structure != "rfc_tag"));
}

/// The three-level variant with the liveness bit on `add %r2, %r1, 1`'s read of %r1
/// (R2, in the LRF): when add's result R3 displaces it, the dead R2 is dropped instead of
/// moving into the RFC (§6.2: liveness inhibits the writeback of dead values), so the
/// RFC gets one write fewer and the deactivation writes back 3 values (LRF R3, RFC R0 and
/// R1) instead of 4. The other demotion (st reading R2 after the load) stays.
#[test]
fn a_dead_displaced_lrf_value_never_reaches_the_rfc() {
    let design = [
        TWO_LEVEL,
        "register_file.design=\"rfc\"",
        "register_file.rfc.lrf=true",
    ];
    let plain = simulate(AFTER_LOAD, &design, |_| {});
    let dead = simulate(AFTER_LOAD, &design, mark_first_add_reads_dead);
    let x = |s: &KernelStats, k: &str| extra(s, &format!("rfc_{k}"));
    assert_eq!(x(&plain, "lrf_demotions"), 2);
    assert_eq!(x(&plain, "lrf_dead_dropped"), 0);
    assert_eq!(x(&dead, "lrf_demotions"), 1, "only st's read moves R2");
    assert_eq!(x(&dead, "lrf_dead_dropped"), 1);
    assert_eq!(x(&dead, "writes"), x(&plain, "writes") - 1);
    assert_eq!(x(&plain, "writebacks_deactivation"), 4);
    assert_eq!(x(&dead, "writebacks_deactivation"), 3);
    assert_eq!(dead.register_file.writes, plain.register_file.writes - 1);
    // The LRF read of the demotion is gone too.
    assert_eq!(x(&dead, "lrf_reads"), x(&plain, "lrf_reads") - 1);
}

/// `add %r2` writes a value nothing reads (AFTER_LOAD, with the second add reading %r1). The liveness-bits pass (which the RFC asks for)
/// marks the result dead at its definition, so the flush at the load's dependence does
/// not write it back; with the result's bit cleared, it is written back.
#[test]
fn a_value_never_read_is_never_written_back() {
    // AFTER_LOAD with the second add reading %r1: nothing reads %r2.
    let never_read = AFTER_LOAD.replace("add.s32 %r4, %r3, %r2;", "add.s32 %r4, %r3, %r1;");
    assert_ne!(never_read, AFTER_LOAD);
    for lrf in [false, true] {
        let lrf_set = format!("register_file.rfc.lrf={lrf}");
        let cfg = config(
            "gtx480",
            &["register_file.design=\"rfc\"", TWO_LEVEL, &lrf_set],
        );
        let go = |clear_result_bits: bool| {
            let (mut emu, k, _) = load(&never_read, "k");
            let mut info = compiled_info(&emu, k, &cfg);
            let kf = info.kernel;
            let add = info
                .function_mut(kf)
                .and_then(|f| f.operands_mut(InstId::new(2)))
                .expect("add");
            assert!(add.1[0].hint.dead_after, "the pass marks %r2 dead");
            if clear_result_bits {
                for i in 0..7 {
                    let f = info.kernel;
                    if let Some((_, dsts)) = info
                        .function_mut(f)
                        .and_then(|f| f.operands_mut(InstId::new(i)))
                    {
                        dsts.iter_mut().for_each(|d| d.hint.dead_after = false);
                    }
                }
            }
            let buf = common::alloc_u32(&mut emu, &[5; 32]);
            let p = params(&emu, k, &[buf]);
            run(cfg.clone(), &mut emu, k, &info, one_warp(), &p)
        };
        let (bits, cleared) = (go(false), go(true));
        let x = |s: &KernelStats, k: &str| extra(s, &format!("rfc_{k}"));
        assert_eq!(x(&bits, "results_dead"), 1, "lrf={lrf}");
        assert_eq!(x(&cleared, "results_dead"), 0, "lrf={lrf}");
        let writebacks =
            |s: &KernelStats| x(s, "writebacks_deactivation") + x(s, "writebacks_eviction");
        assert_eq!(writebacks(&bits) + 1, writebacks(&cleared), "lrf={lrf}");
        assert_eq!(
            bits.register_file.writes + 1,
            cleared.register_file.writes,
            "lrf={lrf}"
        );
    }
}

/// On every built-in workload kernel, with the liveness bits of the load-time pipeline:
/// every operand read is a hit or a miss, the MRF reads exactly the misses, and writes
/// exactly the results that bypass the RFC plus the writebacks; and over the suite the
/// dead bits remove writebacks against the same runs without them.
#[test]
fn rfc_traffic_adds_up_and_dead_bits_remove_writebacks() {
    let cfg = config("gtx480", &["register_file.design=\"rfc\"", TWO_LEVEL]);
    let (mut with_bits, mut without) = (0u64, 0u64);
    for c in cases() {
        let go = |bits: bool| {
            let mut p = prepare(&c);
            if bits {
                p.info = compiled_info(&p.emu, p.kernel, &cfg);
            }
            let mut sim = TimingSimulator::new(cfg.clone());
            sim.simulate_kernel(&mut p.emu, p.kernel, p.launch, &p.params, &p.info)
                .unwrap_or_else(|e| panic!("{}: {e}", c.workload))
        };
        for (bits, total) in [(true, &mut with_bits), (false, &mut without)] {
            let s = go(bits);
            let x = |k: &str| extra(&s, &format!("rfc_{k}"));
            let w = c.workload;
            assert_eq!(x("read_hits") + x("read_misses"), x("operand_reads"), "{w}");
            assert_eq!(s.register_file.reads, x("read_misses"), "{w}");
            let writebacks = x("writebacks_eviction") + x("writebacks_deactivation");
            assert_eq!(
                s.register_file.writes,
                x("results_to_mrf") + writebacks,
                "{w}"
            );
            assert_eq!(x("reads"), x("read_hits") + writebacks, "{w}");
            *total += writebacks;
        }
    }
    assert!(
        with_bits < without,
        "dead bits: {with_bits} writebacks, none: {without}"
    );
}

/// A four-iteration loop: with `flush_at_backward_branches`, each of the three taken
/// back edges writes back the live counter and empties the RFC, so the next iteration's
/// `add` misses on it three more times than without the flush.
#[test]
fn the_backward_branch_variant_flushes_at_each_taken_back_edge() {
    const LOOP: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry k(.param .u64 p)
{
    .reg .pred %p<2>;
    .reg .b32 %r<3>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [p];
    mov.u32 %r1, 0;
$LOOP:
    add.s32 %r1, %r1, 1;
    setp.lt.u32 %p1, %r1, 4;
    @%p1 bra $LOOP;
    st.global.u32 [%rd1], %r1;
    ret;
}
"#;
    let rfc = [TWO_LEVEL, "register_file.design=\"rfc\""];
    let keep = simulate(LOOP, &rfc, |_| {});
    let flush = simulate(
        LOOP,
        &[
            rfc[0],
            rfc[1],
            "register_file.rfc.flush_at_backward_branches=true",
        ],
        |_| {},
    );
    assert_eq!(extra(&flush, "rfc_backward_flushes"), 3);
    assert_eq!(extra(&flush, "rfc_writebacks_backward_branch"), 3);
    assert_eq!(
        extra(&flush, "rfc_read_misses"),
        extra(&keep, "rfc_read_misses") + 3
    );
    assert!(!keep
        .register_file
        .extra
        .contains_key("rfc_backward_flushes"));
}

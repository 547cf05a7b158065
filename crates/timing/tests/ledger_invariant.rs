//! The ledger invariant (`timing::rf::ledger`): on every register-file design and every
//! built-in workload kernel,
//! - every source register of every issued warp instruction is served by exactly one
//!   structure (the ledger's deliveries add up to the SM's own count of issued source
//!   registers),
//! - every result register lands in exactly the structures the design's rules name (the
//!   ledger's writes per sink add up to the SM's count of results written back), and
//! - every event is charged exactly once (the ledger's event counts equal the design's
//!   own statistics: bank reads and writes, arbitrated accesses, its `extra` counters).
//!
//! The normal suite runs a fast subset of workloads
//! (`every_design_accounts_for_every_operand_on_short_workloads`); every workload runs in
//! the ignored test, with
//! `cargo nextest run --release -p timing --run-ignored only -E 'binary(ledger_invariant)'`
//! (about three minutes on two cores). The workloads are the test harness's kernels
//! (`common::workloads::cases`).

mod common;

use common::workloads::{cases, prepare, Case};
use common::*;
use compiler::pipeline::{compile, LoadOptions};
use timing::kernel_info::KernelInfo;
use timing::rf::ledger::{Charge, Ledger, OperandCounts, Sink, Source};
use timing::rf::RfStats;
use timing::{GpuConfig, TimingSimulator};

/// Every design, and BOW with its write bypass (BOW-WR).
fn designs() -> impl Iterator<Item = &'static str> {
    DESIGNS.into_iter().chain(["bow-wr"])
}

const SHORT: [&str; 5] = [
    "saxpy",
    "reduction",
    "scan",
    "divergent_loops",
    "devfunc_call",
];

fn design_config(design: &str) -> timing::config::GpuConfig {
    match design {
        "bow-wr" => config(
            "gtx480",
            &[
                "register_file.design=\"bow\"",
                "register_file.bow.write_bypass=true",
            ],
        ),
        d => config("gtx480", &[&format!("register_file.design=\"{d}\"")]),
    }
}

struct Run {
    ledger: Ledger,
    sm: OperandCounts,
    rf: RfStats,
}

/// The kernel as `regsim run` loads it for `cfg`'s design: with the design's compiler
/// passes.
fn pipeline_info(emu: &emu::Emulator, k: emu::KernelRef, cfg: &GpuConfig) -> KernelInfo {
    let program = &emu.module(k.module).expect("module").program;
    let options = LoadOptions {
        max_registers: None,
        passes: timing::rf::required_passes(cfg),
    };
    let compiled = compile(program, &options).unwrap_or_else(|e| panic!("{e}"));
    KernelInfo::from_compiled(&compiled.program, &compiled.functions, k.func)
        .unwrap_or_else(|e| panic!("{e}"))
}

fn run(c: &Case, design: &str) -> Run {
    let cfg = design_config(design);
    let mut p = prepare(c);
    p.info = pipeline_info(&p.emu, p.kernel, &cfg);
    let mut sim = TimingSimulator::new(cfg);
    let s = sim
        .simulate_kernel(&mut p.emu, p.kernel, p.launch, &p.params, &p.info)
        .unwrap_or_else(|e| panic!("{} on {design}: {e}", c.workload));
    Run {
        ledger: sim.register_file_ledger(),
        sm: sim.operand_counts(),
        rf: s.register_file,
    }
}

fn extra(rf: &RfStats, key: &str) -> u64 {
    rf.extra
        .get(key)
        .copied()
        .unwrap_or_else(|| panic!("no {key}"))
}

/// The invariant for one design on one workload; `at` names them in failures.
fn check(design: &str, r: &Run, at: &str) {
    let l = &r.ledger;
    let rf = &r.rf;
    let sm = &r.sm;
    assert!(sm.source_registers > 0 && sm.result_registers > 0, "{at}");

    // Every source register served by exactly one structure. Malekeh and BOW look each
    // register up once per instruction; the others read it once per operand.
    let sources = match design {
        "malekeh" | "bow" | "bow-wr" => sm.distinct_source_registers,
        _ => sm.source_registers,
    };
    assert_eq!(l.delivered_total(), sources, "{at}: deliveries");

    // Every result register where the design's rules put it.
    let w = |s: Sink| l.written(s);
    let landed = match design {
        // Every result goes to the main storage; Malekeh also keeps some in its CCU.
        "baseline" | "ideal" | "ideal-unlimited" | "malekeh" | "bow" | "reuse-cache" => {
            w(Sink::MrfBank)
        }
        "cerf" => w(Sink::CerfArray),
        "rfc" => w(Sink::MrfBank) + w(Sink::Rfc) + w(Sink::Lrf) + w(Sink::Dropped),
        // One level per result (the compiler's annotation), and the MRF too where it says
        // `also_main`: at least one landing each, and the MRF's are the design's count.
        "orf-lrf" => {
            let levels = w(Sink::Orf) + w(Sink::Lrf) + w(Sink::MrfBank);
            assert!(levels >= sm.result_registers, "{at}: {levels} landings");
            extra(rf, "orf_lrf_operand_writes")
        }
        "ltrf" | "ltrf-plus" | "ltrf-conf" => w(Sink::MrfBank) + w(Sink::LtrfCache),
        // BOW-WR: a result whose writer is still in the window goes there only.
        "bow-wr" => w(Sink::MrfBank) + extra(rf, "bow_writes_deferred"),
        "wir" => w(Sink::MrfBank) + w(Sink::Renamed),
        d => panic!("no rule for {d}"),
    };
    assert_eq!(landed, sm.result_registers, "{at}: result registers");

    // Every event charged once: the ledger against the design's own counters.
    let c = |k: Charge| l.count(k);
    let d = |s: Source| l.delivered(s);
    let arbitrated_upper = match design {
        "ltrf" | "ltrf-plus" | "ltrf-conf" => {
            extra(rf, "ltrf_cache_operand_reads") + extra(rf, "ltrf_cache_result_writes")
        }
        _ => 0,
    };
    assert_eq!(
        c(Charge::ArbiterRequest),
        rf.reads + rf.writes + arbitrated_upper,
        "{at}: arbiter requests"
    );
    let buffered = d(Source::MrfBank) + d(Source::CerfArray) + d(Source::LtrfCache);
    let kept = w(Sink::OperandBuffer);
    let (buf_w, buf_r) = match design {
        "malekeh" => (Charge::CcuWrite, Charge::CcuRead),
        "bow" | "bow-wr" => (Charge::BowWindowWrite, Charge::BowWindowRead),
        _ => (Charge::CollectorWrite, Charge::CollectorRead),
    };
    assert_eq!(c(buf_w), buffered + kept, "{at}: operand buffer writes");
    let late = match design {
        "bow-wr" => extra(rf, "bow_writes_late"),
        _ => 0,
    };
    assert_eq!(
        c(buf_r),
        buffered + d(Source::OperandBuffer) + late,
        "{at}: operand buffer reads"
    );
    assert_eq!(
        c(Charge::CrossbarTransfer),
        rf.reads + kept,
        "{at}: every bank read and every result kept in a buffer crosses once"
    );
    match design {
        "cerf" => {
            assert_eq!(c(Charge::MrfRead) + c(Charge::MrfWrite), 0, "{at}");
            assert_eq!(d(Source::CerfArray), rf.reads, "{at}");
            // The array's data banks serve register reads and the L1D side's reads (hits,
            // victims), register writes and its writes (fills, stores); a refused access
            // (a bank conflict) is retried or served later, and charged once.
            assert_eq!(
                c(Charge::CerfDataRead),
                rf.reads + extra(rf, "cerf_line_data_reads"),
                "{at}"
            );
            assert_eq!(
                c(Charge::CerfDataWrite),
                rf.writes + extra(rf, "cerf_line_data_writes"),
                "{at}"
            );
            assert_eq!(
                c(Charge::CerfTagLookup),
                extra(rf, "cerf_tag_lookups"),
                "{at}"
            );
            assert_eq!(
                extra(rf, "cerf_tag_lookups"),
                extra(rf, "cerf_register_tag_lookups") + extra(rf, "cerf_line_tag_lookups"),
                "{at}"
            );
            assert_eq!(
                d(Source::CerfArray),
                extra(rf, "cerf_operand_reads"),
                "{at}"
            );
        }
        _ => {
            assert_eq!(c(Charge::MrfRead), rf.reads, "{at}: MRF reads");
            assert_eq!(c(Charge::MrfWrite), rf.writes, "{at}: MRF writes");
        }
    }
    match design {
        "baseline" | "ideal" | "ideal-unlimited" => {
            assert_eq!(d(Source::MrfBank), rf.reads, "{at}");
            assert_eq!(w(Sink::MrfBank), rf.writes, "{at}");
        }
        "reuse-cache" => {
            // A hit is a source the cache's sub-entry serves: no bank read.
            assert_eq!(d(Source::MrfBank), rf.reads, "{at}");
            let hits: u64 = (0..3)
                .map(|k| extra(rf, &format!("reuse_cache_hits_slot{k}")))
                .sum();
            assert_eq!(d(Source::OperandBuffer), hits, "{at}");
        }
        "malekeh" => {
            assert_eq!(d(Source::OperandBuffer), extra(rf, "malekeh_hits"), "{at}");
            assert_eq!(kept, extra(rf, "malekeh_dest_kept"), "{at}");
            assert_eq!(
                c(Charge::CcuRead),
                extra(rf, "malekeh_operand_reads"),
                "{at}"
            );
        }
        "bow" | "bow-wr" => {
            assert_eq!(d(Source::OperandBuffer), extra(rf, "bow_forwarded"), "{at}");
            assert_eq!(
                c(Charge::BowWindowRead) - late,
                extra(rf, "bow_operand_reads"),
                "{at}"
            );
        }
        "rfc" => {
            assert_eq!(c(Charge::RfcRead), extra(rf, "rfc_reads"), "{at}");
            assert_eq!(c(Charge::RfcWrite), extra(rf, "rfc_writes"), "{at}");
            assert_eq!(
                c(Charge::RfcTagLookup),
                extra(rf, "rfc_tag_lookups"),
                "{at}"
            );
            assert_eq!(
                extra(rf, "rfc_tag_lookups"),
                extra(rf, "rfc_operand_reads") + extra(rf, "rfc_operand_writes"),
                "{at}: every register read or written is looked up once"
            );
            assert_eq!(
                d(Source::Rfc) + d(Source::Lrf),
                extra(rf, "rfc_read_hits"),
                "{at}"
            );
        }
        "orf-lrf" => {
            assert_eq!(d(Source::Orf), extra(rf, "orf_lrf_orf_reads"), "{at}");
            assert_eq!(d(Source::Lrf), extra(rf, "orf_lrf_lrf_reads"), "{at}");
            assert_eq!(c(Charge::OrfWrite), extra(rf, "orf_lrf_orf_writes"), "{at}");
            assert_eq!(c(Charge::LrfWrite), extra(rf, "orf_lrf_lrf_writes"), "{at}");
            assert_eq!(
                w(Sink::MrfBank),
                extra(rf, "orf_lrf_mrf_operand_writes"),
                "{at}"
            );
        }
        "ltrf" | "ltrf-plus" | "ltrf-conf" => {
            assert_eq!(
                d(Source::LtrfCache),
                extra(rf, "ltrf_cache_operand_reads"),
                "{at}"
            );
            assert_eq!(
                c(Charge::LtrfCacheWrite),
                extra(rf, "ltrf_cache_result_writes") + extra(rf, "ltrf_cache_fills"),
                "{at}"
            );
            assert_eq!(
                c(Charge::LtrfCacheRead),
                extra(rf, "ltrf_cache_operand_reads") + extra(rf, "ltrf_writebacks"),
                "{at}"
            );
        }
        "wir" => {
            // A verify read is one bank read, charged once (no separate event).
            assert_eq!(
                rf.reads,
                d(Source::MrfBank) + extra(rf, "wir_verify_reads") + extra(rf, "wir_dummy_movs"),
                "{at}: WIR bank reads"
            );
            assert_eq!(
                rf.writes,
                w(Sink::MrfBank) + extra(rf, "wir_dummy_movs"),
                "{at}: WIR bank writes"
            );
            assert_eq!(
                d(Source::ReuseBuffer),
                extra(rf, "wir_register_reads_avoided"),
                "{at}"
            );
            assert!(l.events().iter().all(|e| e.structure != "wir_verify_read"));
        }
        _ => {}
    }
}

fn check_workloads(names: Option<&[&str]>) {
    for c in cases() {
        if names.is_some_and(|n| !n.contains(&c.workload)) {
            continue;
        }
        for design in designs() {
            let r = run(&c, design);
            check(design, &r, &format!("{} on {design}", c.workload));
        }
    }
}

#[test]
fn every_design_accounts_for_every_operand_on_short_workloads() {
    check_workloads(Some(&SHORT));
}

#[test]
#[ignore = "every workload on every design: about three minutes; see the module docs"]
fn every_design_accounts_for_every_operand_on_every_workload() {
    check_workloads(None);
}

/// One warp: `ld.param` (a 64-bit result), then 10 source registers (the first add names
/// `%r1` twice, which the kernel's operand list holds once) and 9 result registers.
const TINY: &str = ".version 7.0\n.target sm_70\n.address_size 64\n\
    .visible .entry k(.param .u64 out)\n{\n.reg .b32 %r<8>;\n.reg .b64 %rd<4>;\n\
    ld.param.u64 %rd1, [out];\nmov.u32 %r1, %tid.x;\nadd.s32 %r2, %r1, %r1;\n\
    add.s32 %r3, %r2, 7;\nmul.wide.u32 %rd2, %r1, 4;\nadd.s64 %rd3, %rd1, %rd2;\n\
    st.global.u32 [%rd3], %r3;\nret;\n}\n";

fn run_tiny(design: &str) -> Run {
    let cfg = design_config(design);
    let (mut emu, k, _) = load(TINY, "k");
    let info = pipeline_info(&emu, k, &cfg);
    let out = alloc_u32(&mut emu, &[0; 32]);
    let p = params(&emu, k, &[out]);
    let mut sim = TimingSimulator::new(cfg);
    let s = sim
        .simulate_kernel(&mut emu, k, emu::LaunchConfig::linear(1, 32), &p, &info)
        .unwrap_or_else(|e| panic!("{design}: {e}"));
    assert_eq!(
        read_u32(&emu, out, 32),
        (0..32).map(|t| 2 * t + 7).collect::<Vec<u32>>()
    );
    Run {
        ledger: sim.register_file_ledger(),
        sm: sim.operand_counts(),
        rf: s.register_file,
    }
}

#[test]
fn the_sm_counts_the_hand_counted_operands_and_the_baseline_pays_each_read_once() {
    let r = run_tiny("baseline");
    assert_eq!(
        (
            r.sm.source_registers,
            r.sm.distinct_source_registers,
            r.sm.result_registers
        ),
        (10, 10, 9)
    );
    let l = &r.ledger;
    assert_eq!(l.delivered(Source::MrfBank), 10);
    for c in [
        Charge::MrfRead,
        Charge::CrossbarTransfer,
        Charge::CollectorWrite,
        Charge::CollectorRead,
    ] {
        assert_eq!(l.count(c), 10, "{c:?}");
    }
    assert_eq!(l.count(Charge::MrfWrite), 9);
    assert_eq!(l.count(Charge::ArbiterRequest), 19);
}

/// CERF's registers live in its integrated array, which keeps the MRF's banks on the far
/// side of the operand crossbar: each register read pays the crossbar transfer and the
/// collector as a baseline MRF read does (before the ledger CERF paid neither crossbar
/// nor collector read).
#[test]
fn cerf_register_reads_pay_the_crossbar() {
    let r = run_tiny("cerf");
    let l = &r.ledger;
    assert_eq!(l.delivered(Source::CerfArray), 10);
    assert_eq!(l.count(Charge::CrossbarTransfer), 10);
    assert_eq!(l.count(Charge::CollectorWrite), 10);
    assert_eq!(l.count(Charge::CollectorRead), 10);
    assert_eq!(l.count(Charge::MrfRead), 0);
    assert_eq!(l.written(Sink::CerfArray), 9);
    check("cerf", &r, "tiny on cerf");
}

/// Malekeh and BOW charge a result kept in the operand buffer by one rule: a crossbar
/// transfer to the collector side (Malekeh §3.1's port D) and a buffer write. Before the
/// ledger BOW's window writes of results paid no crossbar.
#[test]
fn malekeh_and_bow_charge_a_result_kept_in_the_buffer_alike() {
    for (design, kept_key, write) in [
        ("malekeh", "malekeh_dest_kept", Charge::CcuWrite),
        ("bow", "bow_window_writes", Charge::BowWindowWrite),
    ] {
        let r = run_tiny(design);
        let l = &r.ledger;
        let kept = l.written(Sink::OperandBuffer);
        assert!(kept > 0, "{design}: no result kept");
        let kept_stat = match design {
            // BOW's own counter also counts the bank reads latched into the window.
            "bow" => extra(&r.rf, kept_key) - r.rf.reads,
            _ => extra(&r.rf, kept_key),
        };
        assert_eq!(kept, kept_stat, "{design}");
        assert_eq!(
            l.count(Charge::CrossbarTransfer),
            r.rf.reads + kept,
            "{design}"
        );
        assert_eq!(l.count(write), r.rf.reads + kept, "{design}");
        // Every source register looked up once per instruction.
        assert_eq!(l.delivered_total(), 10, "{design}");
        check(design, &r, design);
    }
}

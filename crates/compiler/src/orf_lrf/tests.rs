//! Unit tests of the ORF/LRF allocation on small kernels, and of its checker on
//! allocations corrupted on purpose.

use ir::{InstId, Program, RegisterEffects};

use super::*;
use crate::test_support::lower;

fn kernel(body: &str) -> Program {
    lower(&format!(
        ".version 7.8\n.target sm_70\n.address_size 64\n\
         .visible .entry k(.param .u64 a, .param .f32 x)\n{{\n\
         .reg .pred %p<4>;\n.reg .b32 %r<16>;\n.reg .f32 %f<16>;\n.reg .b64 %rd<8>;\n\
         ld.param.u64 %rd1, [a];\nld.param.f32 %f1, [x];\n{body}\nret;\n}}\n"
    ))
}

/// The level each read of `reg` has, in instruction order.
fn reads_of(p: &Program, a: &Annotations, reg: &str) -> Vec<ReadFrom> {
    let f = &p.functions[0];
    let mut out = Vec::new();
    for i in 0..f.num_insts() {
        let id = InstId::new(i);
        for (k, &r) in f.uses(id).iter().enumerate() {
            if f.reg(r).name == reg {
                out.push(a.reads(id)[k]);
            }
        }
    }
    out
}

fn writes_of(p: &Program, a: &Annotations, reg: &str) -> Vec<WriteTo> {
    let f = &p.functions[0];
    let mut out = Vec::new();
    for i in 0..f.num_insts() {
        let id = InstId::new(i);
        for (k, &r) in f.defs(id).iter().enumerate() {
            if f.reg(r).name == reg {
                out.push(a.writes(id)[k]);
            }
        }
    }
    out
}

fn run(p: &Program, config: &OrfLrfConfig) -> Annotations {
    let f = &p.functions[0];
    let a = allocate(f, config);
    check(f, &a, config).expect("a fresh allocation passes its check");
    a
}

const HAMMOCK: &str = "
    ld.global.u32 %r4, [%rd1];
    setp.eq.s32 %p1, %r4, 0;
    @%p1 bra BB8;
    add.s32 %r1, %r4, 7;
    bra.uni BB9;
BB8:
    add.s32 %r1, %r4, 9;
BB9:
    add.s32 %r2, %r1, 1;
    st.global.u32 [%rd1], %r2;";

#[test]
fn writes_on_both_sides_of_a_hammock_share_an_orf_entry() {
    let p = kernel(HAMMOCK);
    let config = OrfLrfConfig {
        lrf: LrfMode::None,
        ..OrfLrfConfig::default()
    };
    let a = run(&p, &config);
    let w = writes_of(&p, &a, "%r1");
    assert_eq!(w.len(), 2);
    assert!(w[0].orf.is_some() && w[0].orf == w[1].orf, "{w:?}");
    assert!(!w[0].mrf && !w[1].mrf, "no read needs the MRF: {w:?}");
    assert_eq!(
        reads_of(&p, &a, "%r1"),
        vec![ReadFrom::Orf {
            entry: w[0].orf.unwrap_or(9)
        }]
    );

    // Without §4.5 the merge cannot read the ORF.
    let baseline = OrfLrfConfig {
        forward_branches: false,
        ..config
    };
    let a = run(&p, &baseline);
    assert_eq!(reads_of(&p, &a, "%r1"), vec![ReadFrom::Mrf]);
    assert!(writes_of(&p, &a, "%r1")
        .iter()
        .all(|w| w.mrf && w.orf.is_none()));
}

#[test]
fn the_lrf_serves_only_the_private_datapath_and_one_slot_when_split() {
    let p = kernel(
        "add.f32 %f2, %f1, %f1;
         mul.f32 %f3, %f2, %f2;
         add.f32 %f4, %f3, 0f3F800000;
         sqrt.rn.f32 %f5, %f4;
         add.f32 %f6, %f5, 0f3F800000;
         st.global.f32 [%rd1], %f6;",
    );
    let split = run(&p, &OrfLrfConfig::default());
    // %f2 is read in slots a and b: not in the split LRF; %f3 only in slot a: bank 0.
    assert!(!matches!(
        reads_of(&p, &split, "%f2")[0],
        ReadFrom::Lrf { .. }
    ));
    assert_eq!(reads_of(&p, &split, "%f3"), vec![ReadFrom::Lrf { bank: 0 }]);
    // %f4 feeds the SFU and %f6 the store: never the LRF.
    for reg in ["%f4", "%f6"] {
        assert!(
            reads_of(&p, &split, reg)
                .iter()
                .all(|r| !matches!(r, ReadFrom::Lrf { .. })),
            "{reg}"
        );
    }
    // The SFU's result never goes to the LRF either.
    assert!(writes_of(&p, &split, "%f5").iter().all(|w| w.lrf.is_none()));

    let unified = run(
        &p,
        &OrfLrfConfig {
            lrf: LrfMode::Unified,
            ..OrfLrfConfig::default()
        },
    );
    assert_eq!(
        reads_of(&p, &unified, "%f2"),
        vec![ReadFrom::Lrf { bank: 0 }, ReadFrom::Lrf { bank: 0 }]
    );
}

#[test]
fn without_orf_or_lrf_everything_is_in_the_mrf() {
    let p = kernel(HAMMOCK);
    let config = OrfLrfConfig {
        orf_entries: 0,
        lrf: LrfMode::None,
        ..OrfLrfConfig::default()
    };
    let a = run(&p, &config);
    assert!(a
        .reads
        .iter()
        .all(|r| matches!(r, ReadFrom::Mrf | ReadFrom::Pred)));
    assert!(a
        .writes
        .iter()
        .all(|w| w.pred || (w.mrf && w.orf.is_none() && w.lrf.is_none())));
    let report = OrfLrfReport::new(&p, &config).expect("report");
    assert!((report.static_counts.normalized_energy() - 1.0).abs() < 1e-12);
}

#[test]
fn the_checker_rejects_corrupted_allocations() {
    let p = kernel(HAMMOCK);
    let f = &p.functions[0];
    let config = OrfLrfConfig {
        lrf: LrfMode::None,
        ..OrfLrfConfig::default()
    };
    let good = run(&p, &config);
    let merge = (0..f.num_insts())
        .map(InstId::new)
        .find(|&i| ir::print::inst_to_string(Some(&p), f, f.inst(i)).starts_with("add.s32 %r2"))
        .expect("the merge's add");
    let first_use = good.sites.first_use(merge);
    let entry = match good.reads[first_use] {
        ReadFrom::Orf { entry } => entry,
        other => panic!("expected an ORF read, got {other:?}"),
    };

    // Another entry holds nothing the merge wants.
    let mut wrong_entry = good.clone();
    wrong_entry.reads[first_use] = ReadFrom::Orf {
        entry: (entry + 1) % config.orf_entries,
    };
    assert!(check(f, &wrong_entry, &config).is_err());

    // The MRF was never written, so reading it there is wrong.
    let mut stale_mrf = good.clone();
    stale_mrf.reads[first_use] = ReadFrom::Mrf;
    assert!(check(f, &stale_mrf, &config).is_err());

    // An entry past the configured ORF.
    let mut too_far = good.clone();
    too_far.reads[first_use] = ReadFrom::Orf { entry: 3 };
    assert!(check(f, &too_far, &config).is_err());

    // The LRF on the store (the MEM unit).
    let mut lrf_store = good.clone();
    let store = InstId(merge.0 + 1);
    let value = good.sites.first_use(store) + 1;
    lrf_store.reads[value] = ReadFrom::Lrf { bank: 0 };
    let split = OrfLrfConfig::default();
    let errors = check(f, &lrf_store, &split).expect_err("the LRF on the MEM unit");
    assert!(
        errors.iter().any(|e| e.what.contains("mem unit")),
        "{errors:?}"
    );

    // Dropping the strand boundary's effect: a value read across it from the ORF.
    let mut across = good.clone();
    let load_addr = good.sites.first_use(InstId(2));
    across.reads[load_addr] = ReadFrom::Orf { entry: 0 };
    across.writes[0] = WriteTo {
        mrf: true,
        orf: Some(0),
        ..WriteTo::default()
    };
    assert!(check(f, &across, &config).is_ok(), "same strand: fine");
    let later = good.sites.first_use(store);
    across.reads[later] = ReadFrom::Orf { entry: 0 };
    assert!(
        check(f, &across, &config).is_err(),
        "after the strand ended"
    );
}

#[test]
fn partial_ranges_and_read_operands_can_be_turned_off() {
    let p = kernel(
        "ld.global.u32 %r10, [%rd1];
         add.s32 %r1, %r10, 1;
         add.s32 %r2, %r10, 2;
         add.s32 %r3, %r10, 3;
         add.s32 %r4, %r1, %r2;
         st.global.u32 [%rd1], %r4;
         st.global.u32 [%rd1+4], %r3;",
    );
    let base = OrfLrfConfig {
        lrf: LrfMode::None,
        ..OrfLrfConfig::default()
    };
    // %r10 comes from the previous strand: its first read loads it for the next two.
    let a = run(&p, &base);
    let reads = reads_of(&p, &a, "%r10");
    assert_eq!(reads[0], ReadFrom::Mrf);
    assert!(matches!(reads[1], ReadFrom::Orf { .. }) && reads[1] == reads[2]);
    assert_eq!(a.stats.read_operand_groups, 1);
    let a = run(
        &p,
        &OrfLrfConfig {
            read_operands: false,
            ..base.clone()
        },
    );
    assert!(reads_of(&p, &a, "%r10").iter().all(|r| *r == ReadFrom::Mrf));
    assert_eq!(a.stats.read_operand_groups, 0);
}

#[test]
fn dynamic_counts_scale_with_execution_counts() {
    let p = kernel(HAMMOCK);
    let mut report = OrfLrfReport::new(&p, &OrfLrfConfig::default()).expect("report");
    let n = p.functions[0].insts.len();
    let twice = report.functions[0]
        .dynamic_counts(&vec![2; n])
        .expect("counts");
    let s = report.functions[0].static_counts;
    assert_eq!(twice.reads.mrf, 2 * s.reads.mrf);
    assert_eq!(twice.writes.orf, 2 * s.writes.orf);
    assert!((twice.energy_pj - 2.0 * s.energy_pj).abs() < 1e-9);
    assert!(report.functions[0].dynamic_counts(&vec![1; n + 1]).is_err());

    // Skipping the taken side of the hammock changes the counts.
    let mut counts = vec![1; n];
    counts[5] = 0;
    counts[6] = 0;
    report.add_dynamic_counts(&[counts]).expect("counts");
    let d = report.dynamic_counts.expect("dynamic counts");
    assert!(d.reads.total() < s.reads.total());
    let json = serde_json::to_value(&report).expect("json");
    assert!(json["functions"][0]["dynamic_counts"]["reads"]["mrf"].is_u64());
    assert_eq!(json["register_view"], "architectural");
    assert!(report.to_string().contains("dynamic reads:"));
}

/// clang lays a loop's latch out before its header: the value defined before the loop
/// reaches the latch only around the loop, through the strand boundary of the header's
/// load, so the latch must read it from the MRF although both are in one strand.
#[test]
fn a_value_that_reaches_a_read_only_across_a_boundary_is_not_in_the_orf_or_lrf() {
    let p = kernel(
        "mov.u32 %r1, 10;
         bra.uni HEAD;
LATCH:
         add.s32 %r1, %r1, -2;
         setp.ne.s32 %p1, %r1, 0;
         @%p1 bra HEAD;
         bra.uni DONE;
HEAD:
         ld.global.u32 %r2, [%rd1];
         add.s32 %r3, %r2, %r1;
         st.global.u32 [%rd1], %r3;
         bra.uni LATCH;
DONE:",
    );
    for lrf in [LrfMode::None, LrfMode::Unified, LrfMode::Split] {
        for orf_entries in [0, 1, 3] {
            let config = OrfLrfConfig {
                lrf,
                orf_entries,
                ..OrfLrfConfig::default()
            };
            let a = run(&p, &config);
            // Reads of %r1: the latch's add (around the loop), setp, the header's add.
            let reads = reads_of(&p, &a, "%r1");
            assert_eq!(reads[0], ReadFrom::Mrf, "{lrf:?} {orf_entries}");
        }
    }
}

#[test]
fn split_64bit_integers_lets_address_arithmetic_halves_into_the_lrf() {
    // `mul.wide` → `add.s64` → load: the hardware's IMAD/IMAD.HI and IADD/IADD.X pairs.
    // %rd2 is written and read by integer ALU instructions only, in slot b; %rd3 feeds
    // the load (the MEM unit); the f64 chain %fd1 → %fd2 is FP64, which reads pairs whole.
    let p = lower(
        ".version 7.8\n.target sm_70\n.address_size 64\n\
         .visible .entry k(.param .u64 a, .param .f64 x)\n{\n\
         .reg .b32 %r<8>;\n.reg .b64 %rd<8>;\n.reg .f64 %fd<8>;\n\
         ld.param.u64 %rd1, [a];\nld.param.f64 %fd1, [x];\nmov.u32 %r1, %tid.x;\n\
         mul.wide.s32 %rd2, %r1, 8;\n\
         add.s64 %rd3, %rd1, %rd2;\n\
         ld.global.f64 %fd2, [%rd3];\n\
         add.f64 %fd3, %fd2, %fd1;\n\
         mul.f64 %fd4, %fd3, %fd3;\n\
         st.global.f64 [%rd3], %fd4;\nret;\n}\n",
    );
    let whole = run(&p, &OrfLrfConfig::default());
    let halves_config = OrfLrfConfig {
        split_64bit_integers: true,
        ..OrfLrfConfig::default()
    };
    let halves = run(&p, &halves_config);
    let in_lrf = |a: &Annotations, reg: &str| {
        reads_of(&p, a, reg)
            .iter()
            .any(|r| matches!(r, ReadFrom::Lrf { .. }))
    };
    // By default no 64-bit value is in the LRF.
    for reg in ["%rd2", "%rd3", "%fd3"] {
        assert!(!in_lrf(&whole, reg), "{reg}");
    }
    // With halves, the integer product is (slot b of the add), written there too.
    assert_eq!(
        reads_of(&p, &halves, "%rd2"),
        vec![ReadFrom::Lrf { bank: 1 }]
    );
    assert!(writes_of(&p, &halves, "%rd2")
        .iter()
        .all(|w| w.lrf == Some(1)));
    // The address feeds the MEM unit and the double is FP64: still out.
    assert!(!in_lrf(&halves, "%rd3"));
    assert!(!in_lrf(&halves, "%fd3"));

    // The checker accepts the halves only with the option, and never for an FP64 value.
    let f = &p.functions[0];
    assert!(check(f, &halves, &OrfLrfConfig::default()).is_err());
    let mul = (0..f.num_insts())
        .map(InstId::new)
        .find(|&i| ir::print::inst_to_string(Some(&p), f, f.inst(i)).starts_with("mul.f64"))
        .expect("the mul.f64");
    let mut fp64 = whole.clone();
    fp64.reads[fp64.sites.first_use(mul)] = ReadFrom::Lrf { bank: 0 };
    let errors = check(f, &fp64, &halves_config).expect_err("an FP64 value in the LRF");
    assert!(
        errors
            .iter()
            .any(|e| e.what.contains("(2 registers) in LRF bank")),
        "{errors:?}"
    );
}

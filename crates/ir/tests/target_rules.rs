//! The module's `.target` allows each instruction's form (PTX ISA "Target ISA notes";
//! each row below was checked against ptxas 12.9, which refuses the same forms below the
//! same targets): a newer instruction is an error at its line, naming the feature, the
//! target it needs and the module's.

fn lower(target: &str, body: &str) -> Result<(), String> {
    let src = format!(
        ".version 8.7\n.target {target}\n.address_size 64\n.visible .entry k()\n{{\n\
         .reg .b32 %r<40>;\n.reg .f32 %f<40>;\n.reg .b64 %rd<8>;\n.reg .pred %p<4>;\n\
         {body}\nret;\n}}\n"
    );
    let module = ptx::parse("t.ptx", &src).map_err(|e| format!("parse: {e}"))?;
    ir::lower(&module, "t.ptx", &src)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

const FP8: &str = "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32 {%f0,%f1,%f2,%f3}, \
                   {%r0,%r1,%r2,%r3}, {%r4,%r5}, {%f4,%f5,%f6,%f7};";
const F16_K16: &str = "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f0,%f1,%f2,%f3}, \
                       {%r0,%r1,%r2,%r3}, {%r4,%r5}, {%f4,%f5,%f6,%f7};";
const F16_K8: &str = "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%f0,%f1,%f2,%f3}, \
                      {%r0,%r1}, {%r2}, {%f4,%f5,%f6,%f7};";
const S8_K16: &str = "mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32 {%r0,%r1}, {%r2}, {%r3}, \
                      {%r4,%r5};";

/// (instruction, oldest target that takes it, a target just below it).
const ROWS: &[(&str, &str, &str)] = &[
    (FP8, "sm_89", "sm_86"),
    (F16_K16, "sm_80", "sm_75"),
    (F16_K8, "sm_75", "sm_70"),
    (S8_K16, "sm_75", "sm_70"),
    ("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r1}, [%r0];", "sm_75", "sm_70"),
    ("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%r0], {%r1};", "sm_90", "sm_89"),
    ("redux.sync.add.u32 %r1, %r2, 0xffffffff;", "sm_80", "sm_75"),
    ("mbarrier.init.shared.b64 [%r0], 1;", "sm_80", "sm_75"),
    ("mbarrier.expect_tx.shared.b64 [%r0], 16;", "sm_90", "sm_89"),
    (
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r0], [%rd0], 16, [%r1];",
        "sm_90",
        "sm_89",
    ),
    ("barrier.cluster.arrive;", "sm_90", "sm_89"),
    ("mapa.shared::cluster.u32 %r1, %r0, 1;", "sm_90", "sm_89"),
    ("getctarank.shared::cluster.u32 %r1, %r0;", "sm_90", "sm_89"),
    ("elect.sync %r1|%p1, 0xffffffff;", "sm_90", "sm_89"),
    ("fence.proxy.async;", "sm_90", "sm_89"),
];

#[test]
fn each_form_needs_its_target_and_is_refused_below_it_at_its_line() {
    for (inst, ok, below) in ROWS {
        lower(ok, inst).unwrap_or_else(|e| panic!("{inst} on {ok}: {e}"));
        lower("sm_90a", inst).unwrap_or_else(|e| panic!("{inst} on sm_90a: {e}"));
        let e = lower(below, inst).expect_err(inst);
        // The instruction is on line 10 of the module.
        assert!(e.contains("t.ptx:10:"), "{inst}: {e}");
        assert!(
            e.contains(&format!(
                "requires .target {ok} or higher; the module's .target is {below}"
            )),
            "{inst}: {e}"
        );
    }
}

#[test]
fn fp8_mma_is_refused_below_sm_89_with_the_feature_named() {
    let e = lower("sm_80", FP8).unwrap_err();
    assert!(
        e.contains(
            "in kernel 'k': mma with an fp8 (.e4m3/.e5m2) type requires .target sm_89 or \
             higher; the module's .target is sm_80"
        ),
        "{e}"
    );
    // m16n8k16 with fp8 inputs and f16 accumulators (PTX ISA 8.7) too.
    let k16 = "mma.sync.aligned.m16n8k16.row.col.f16.e4m3.e4m3.f16 {%r0,%r1}, {%r2,%r3}, \
               {%r4}, {%r5,%r6};";
    assert!(lower("sm_86", k16).unwrap_err().contains("sm_89"));
    lower("sm_89", k16).unwrap();
}

#[test]
fn warpgroup_instructions_need_exactly_sm_90a() {
    for inst in [
        "wgmma.fence.sync.aligned;",
        "wgmma.commit_group.sync.aligned;",
        "wgmma.wait_group.sync.aligned 0;",
        "setmaxnreg.inc.sync.aligned.u32 64;",
    ] {
        lower("sm_90a", inst).unwrap_or_else(|e| panic!("{inst}: {e}"));
        for t in ["sm_90", "sm_80"] {
            let e = lower(t, inst).expect_err(inst);
            assert!(
                e.contains(&format!(
                    "requires .target sm_90a; the module's .target is {t}"
                )),
                "{inst}: {e}"
            );
        }
    }
}

#[test]
fn every_error_is_reported_and_plain_instructions_need_no_target() {
    let e = lower("sm_70", &format!("{F16_K16}\n{FP8}")).unwrap_err();
    assert!(e.contains("t.ptx:10:") && e.contains("t.ptx:11:"), "{e}");
    // wmma with f16 is sm_70's; plain instructions need nothing.
    lower("sm_70", "add.u32 %r1, %r2, %r3;").unwrap();
}

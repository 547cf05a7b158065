//! The `.target` rules of memory instructions: `.shared::cluster` addresses (sm_90) and the
//! half-precision atomics (`.f16x2` sm_60, `.f16` and `.b16` cas sm_70, `.bf16` and
//! `.bf16x2` sm_90). Each row was found by running ptxas 12.9 on a one-instruction module
//! at every target from sm_60 up: below the row's target it refuses the instruction
//! ("Feature '::cluster' requires .target sm_90 or higher", "Instruction
//! 'atom.add.bf16x2.global' requires .target sm_90 or higher").

fn lower(target: &str, body: &str) -> Result<(), String> {
    let src = format!(
        ".version 8.7\n.target {target}\n.address_size 64\n.visible .entry k()\n{{\n\
         .reg .b32 %r<40>;\n.reg .b16 %h<8>;\n.reg .b64 %rd<8>;\n.reg .pred %p<4>;\n\
         {body}\nret;\n}}\n"
    );
    let module = ptx::parse("t.ptx", &src).map_err(|e| format!("parse: {e}"))?;
    ir::lower(&module, "t.ptx", &src)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// (instruction, oldest target that takes it, a target just below it).
const ROWS: &[(&str, &str, &str)] = &[
    ("ld.shared::cluster.u32 %r1, [%r0];", "sm_90", "sm_89"),
    (
        "ld.shared::cluster.v2.u32 {%r1, %r2}, [%rd0];",
        "sm_90",
        "sm_89",
    ),
    (
        "ld.acquire.cluster.shared::cluster.u32 %r1, [%r0];",
        "sm_90",
        "sm_89",
    ),
    ("st.shared::cluster.u32 [%r0], %r1;", "sm_90", "sm_89"),
    (
        "atom.shared::cluster.add.u32 %r1, [%r0], %r2;",
        "sm_90",
        "sm_89",
    ),
    (
        "atom.shared::cluster.cas.b32 %r1, [%r0], %r2, %r3;",
        "sm_90",
        "sm_89",
    ),
    (
        "atom.shared::cluster.add.noftz.f16x2 %r1, [%r0], %r2;",
        "sm_90",
        "sm_89",
    ),
    ("red.shared::cluster.add.u32 [%r0], %r2;", "sm_90", "sm_89"),
    ("isspacep.shared::cluster %p1, %rd0;", "sm_90", "sm_89"),
    ("cvta.shared::cluster.u64 %rd1, %rd0;", "sm_90", "sm_89"),
    ("cvta.to.shared::cluster.u64 %rd1, %rd0;", "sm_90", "sm_89"),
    (
        "atom.global.add.noftz.bf16x2 %r1, [%rd0], %r2;",
        "sm_90",
        "sm_89",
    ),
    (
        "atom.shared.add.noftz.bf16x2 %r1, [%r0], %r2;",
        "sm_90",
        "sm_89",
    ),
    (
        "atom.global.add.noftz.bf16 %h1, [%rd0], %h2;",
        "sm_90",
        "sm_89",
    ),
    ("red.global.add.noftz.bf16x2 [%rd0], %r2;", "sm_90", "sm_89"),
    (
        "atom.global.add.noftz.f16 %h1, [%rd0], %h2;",
        "sm_70",
        "sm_62",
    ),
    ("red.global.add.noftz.f16 [%rd0], %h2;", "sm_70", "sm_62"),
    (
        "atom.global.cas.b16 %h1, [%rd0], %h2, %h3;",
        "sm_70",
        "sm_62",
    ),
    (
        "atom.global.add.noftz.f16x2 %r1, [%rd0], %r2;",
        "sm_60",
        "sm_53",
    ),
    (
        "atom.shared.add.noftz.f16x2 %r1, [%r0], %r2;",
        "sm_60",
        "sm_53",
    ),
    ("red.global.add.noftz.f16x2 [%rd0], %r2;", "sm_60", "sm_53"),
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
fn the_feature_is_named_and_cta_shared_memory_is_not_restricted() {
    let e = lower("sm_80", "ld.shared::cluster.u32 %r1, [%r0];").unwrap_err();
    assert!(
        e.contains(
            "in kernel 'k': ld/st on .shared::cluster requires .target sm_90 or higher; \
             the module's .target is sm_80"
        ),
        "{e}"
    );
    let e = lower("sm_86", "atom.global.add.noftz.bf16x2 %r1, [%rd0], %r2;").unwrap_err();
    assert!(e.contains("atom/red add with .bf16 or .bf16x2"), "{e}");
    // ptxas takes these at sm_60/sm_70: the rules above are not a blanket refusal.
    for inst in [
        "ld.shared::cta.u32 %r1, [%r0];",
        "ld.shared.u32 %r1, [%r0];",
        "atom.shared::cta.add.u32 %r1, [%r0], %r2;",
        "atom.global.add.f32 %r1, [%rd0], %r2;",
        "atom.global.cas.b32 %r1, [%rd0], %r2, %r3;",
    ] {
        lower("sm_60", inst).unwrap_or_else(|e| panic!("{inst} on sm_60: {e}"));
    }
}

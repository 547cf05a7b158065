//! Spill code materialised in a lowered function: under a cap below the pressure, the
//! allocation's edits become `ld.local`/`st.local` instructions on the spill area, the new
//! function passes the IR verifier, and the checker accepts it with its new allocation.

use compiler::regalloc::spill_code::SPILL_AREA_NAME;
use compiler::regalloc::{allocate, check, insert_spill_code, AllocConfig, Edit, IrInput};
use ir::op::Space;
use ir::Op;

const KERNEL: &str = r#"
.version 7.0
.target sm_70
.address_size 64

.visible .entry sum4(.param .u64 p)
{
    .reg .b32 %r<10>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [p];
    cvta.to.global.u64 %rd2, %rd1;
    ld.global.u32 %r1, [%rd2];
    ld.global.u32 %r2, [%rd2+4];
    ld.global.u32 %r3, [%rd2+8];
    ld.global.u32 %r4, [%rd2+12];
    add.s32 %r5, %r1, %r2;
    add.s32 %r6, %r3, %r4;
    add.s32 %r7, %r5, %r6;
    add.s32 %r8, %r7, %r1;
    st.global.u32 [%rd2], %r8;
    ret;
}
"#;

fn local_accesses(f: &ir::Function) -> (usize, usize) {
    let loads = f
        .insts
        .iter()
        .filter(|i| matches!(&i.op, Op::Ld(a) if a.space == Space::Local))
        .count();
    let stores = f
        .insts
        .iter()
        .filter(|i| matches!(&i.op, Op::St(a) if a.space == Space::Local))
        .count();
    (loads, stores)
}

#[test]
fn spills_become_local_loads_and_stores_that_check() {
    let module = ptx::parse("sum4.ptx", KERNEL).expect("parses");
    let program = ir::lower(&module, "sum4.ptx", KERNEL).expect("lowers");
    let f = &program.functions[0];
    let input = IrInput::new(f);

    let free = allocate(&input, &AllocConfig::default()).expect("allocates");
    check(&input, &free).expect("checks");
    // %rd2 (a pair) and %r1..%r4 are live together.
    assert_eq!(free.registers_used, 6);
    let (same, same_alloc) = insert_spill_code(f, &free).expect("no-op");
    assert_eq!(&same, f);
    assert_eq!(same_alloc, free);

    let capped = allocate(&input, &AllocConfig::with_max_registers(4)).expect("allocates");
    check(&input, &capped).expect("checks");
    assert!(capped.registers_used <= 4);
    assert!(capped.spilled_vregs() > 0);
    let reloads = capped
        .edits
        .iter()
        .filter(|e| matches!(e, Edit::Reload { .. }))
        .count();
    let spills = capped.edits.len() - reloads;

    let (g, galloc) = insert_spill_code(f, &capped).expect("inserts");
    ir::verify(&g).expect("verifies");
    check(&IrInput::new(&g), &galloc).expect("the rewritten function checks");
    assert_eq!(galloc.registers_used, capped.registers_used);
    assert_eq!(g.insts.len(), f.insts.len() + capped.edits.len());
    assert_eq!(local_accesses(&g), (reloads, spills));
    assert!(g
        .vars
        .iter()
        .any(|v| v.name == SPILL_AREA_NAME && v.size == u64::from(capped.spill_bytes())));
    let text = ir::print::function_to_string(Some(&program), &g);
    assert!(text.contains("ld.local"), "{text}");
    assert!(text.contains("st.local"), "{text}");
}

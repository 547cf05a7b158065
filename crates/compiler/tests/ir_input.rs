//! The allocator's view of lowered PTX: widths from register classes, copies, loop depths.

use compiler::regalloc::{AllocInput, IrInput, RegWidth};
use ir::{BlockId, ControlFlowGraph, InstId, RegId, RegisterEffects};

const KERNEL: &str = r#"
.version 7.0
.target sm_70
.address_size 64

.visible .entry k(.param .u32 n)
{
    .reg .pred %p<3>;
    .reg .b8 %c<3>;
    .reg .b16 %rs<3>;
    .reg .b32 %r<6>;
    .reg .b64 %rd<3>;
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %r1;
    mov.u16 %rs2, %rs1;
    cvt.u64.u32 %rd1, %r2;
    mov.u32 %r3, 0;
$L_loop:
    add.s32 %r3, %r3, 1;
    setp.lt.s32 %p1, %r3, %r2;
    @%p1 mov.u32 %r4, %r3;
    @%p1 bra $L_loop;
    ret;
}
"#;

fn reg(f: &ir::Function, name: &str) -> RegId {
    let i = f.regs.iter().position(|r| r.name == name).expect(name);
    RegId::new(i)
}

#[test]
fn widths_copies_and_loop_depths() {
    let module = ptx::parse("k.ptx", KERNEL).expect("parses");
    let program = ir::lower(&module, "k.ptx", KERNEL).expect("lowers");
    let f = &program.functions[0];
    let input = IrInput::new(f);
    assert_eq!(input.reg_width(reg(f, "%p1")), RegWidth::Pred);
    assert_eq!(input.reg_width(reg(f, "%c1")), RegWidth::W32);
    assert_eq!(input.reg_width(reg(f, "%rs1")), RegWidth::W32);
    assert_eq!(input.reg_width(reg(f, "%r1")), RegWidth::W32);
    assert_eq!(input.reg_width(reg(f, "%rd1")), RegWidth::W64);

    let copies: Vec<(RegId, RegId)> = (0..input.num_insts())
        .filter_map(|i| input.copy(InstId::new(i)))
        .map(|c| (c.dst, c.src))
        .collect();
    // The guarded mov and the mov of an immediate are not copies.
    assert_eq!(
        copies,
        vec![
            (reg(f, "%r2"), reg(f, "%r1")),
            (reg(f, "%rs2"), reg(f, "%rs1"))
        ]
    );

    let depths: Vec<u32> = (0..input.num_blocks())
        .map(|b| input.loop_depth(BlockId::new(b)))
        .collect();
    assert_eq!(depths.iter().filter(|&&d| d == 1).count(), 1, "{depths:?}");
    assert_eq!(depths[0], 0);
}

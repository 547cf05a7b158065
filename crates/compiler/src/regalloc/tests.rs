//! Tests on synthetic functions: hand-written cases with known answers, the checker
//! rejecting deliberately broken allocations, an exhaustive sweep over small CFGs and a
//! proptest fuzzer over random CFGs.

use ir::{BlockId, ControlFlowGraph, InstId, RegId, RegisterEffects};

use super::*;

mod fuzz;

/// One synthetic instruction.
#[derive(Clone, Debug, Default)]
pub(crate) struct TInst {
    pub uses: Vec<RegId>,
    pub defs: Vec<RegId>,
    pub partial: bool,
    pub copy: bool,
}

/// A synthetic function: blocks of instructions over registers of given widths.
#[derive(Clone, Debug, Default)]
pub(crate) struct TestFunc {
    pub widths: Vec<RegWidth>,
    pub insts: Vec<TInst>,
    pub blocks: Vec<Vec<InstId>>,
    pub succs: Vec<Vec<BlockId>>,
    pub preds: Vec<Vec<BlockId>>,
    pub depth: Vec<u32>,
}

impl TestFunc {
    /// Blocks described by their successor lists; instructions are added with [`Self::inst`].
    pub(crate) fn new(widths: &[RegWidth], succs: &[&[usize]]) -> Self {
        let n = succs.len();
        let mut f = TestFunc {
            widths: widths.to_vec(),
            blocks: vec![Vec::new(); n],
            succs: succs
                .iter()
                .map(|s| s.iter().map(|&b| BlockId::new(b)).collect())
                .collect(),
            preds: vec![Vec::new(); n],
            depth: vec![0; n],
            ..Default::default()
        };
        f.compute_preds();
        f
    }

    pub(crate) fn compute_preds(&mut self) {
        self.preds = vec![Vec::new(); self.succs.len()];
        for (b, ss) in self.succs.iter().enumerate() {
            for s in ss {
                if !self.preds[s.index()].contains(&BlockId::new(b)) {
                    self.preds[s.index()].push(BlockId::new(b));
                }
            }
        }
    }

    /// Appends an instruction to `block`: `defs = op(uses)`.
    pub(crate) fn inst(&mut self, block: usize, defs: &[u32], uses: &[u32]) -> InstId {
        self.push(
            block,
            TInst {
                uses: uses.iter().map(|&r| RegId(r)).collect(),
                defs: defs.iter().map(|&r| RegId(r)).collect(),
                ..Default::default()
            },
        )
    }

    pub(crate) fn push(&mut self, block: usize, inst: TInst) -> InstId {
        let id = InstId::new(self.insts.len());
        self.insts.push(inst);
        self.blocks[block].push(id);
        id
    }
}

impl ControlFlowGraph for TestFunc {
    fn num_blocks(&self) -> usize {
        self.blocks.len()
    }
    fn entry(&self) -> BlockId {
        BlockId(0)
    }
    fn successors(&self, block: BlockId) -> &[BlockId] {
        &self.succs[block.index()]
    }
    fn predecessors(&self, block: BlockId) -> &[BlockId] {
        &self.preds[block.index()]
    }
}

impl RegisterEffects for TestFunc {
    fn num_regs(&self) -> usize {
        self.widths.len()
    }
    fn num_insts(&self) -> usize {
        self.insts.len()
    }
    fn block_insts(&self, block: BlockId) -> &[InstId] {
        &self.blocks[block.index()]
    }
    fn uses(&self, inst: InstId) -> &[RegId] {
        &self.insts[inst.index()].uses
    }
    fn defs(&self, inst: InstId) -> &[RegId] {
        &self.insts[inst.index()].defs
    }
    fn defs_are_partial(&self, inst: InstId) -> bool {
        self.insts[inst.index()].partial
    }
}

impl AllocInput for TestFunc {
    fn reg_width(&self, reg: RegId) -> RegWidth {
        self.widths[reg.index()]
    }
    fn loop_depth(&self, block: BlockId) -> u32 {
        self.depth[block.index()]
    }
    fn copy(&self, inst: InstId) -> Option<Copy> {
        let i = &self.insts[inst.index()];
        match (i.copy, i.defs.as_slice(), i.uses.as_slice()) {
            (true, [dst], [src]) => Some(Copy {
                dst: *dst,
                src: *src,
            }),
            _ => None,
        }
    }
}

/// Allocates and checks; panics with the function on failure.
pub(crate) fn allocate_checked(f: &TestFunc, config: &AllocConfig) -> Allocation {
    let alloc = allocate(f, config).unwrap_or_else(|e| panic!("{e}\n{f:#?}"));
    if let Err(e) = check(f, &alloc) {
        panic!("checker: {e}\n{f:#?}\n{alloc:#?}");
    }
    if let Some(cap) = config.max_registers {
        assert!(alloc.registers_used <= cap, "{alloc:#?}");
    }
    assert_eq!(
        allocate(f, config).as_ref(),
        Ok(&alloc),
        "not deterministic"
    );
    alloc
}

use RegWidth::{Pred, W128, W32, W64};

fn no_cap() -> AllocConfig {
    AllocConfig::default()
}

#[test]
fn straight_line_uses_pressure_many_registers() {
    // v0, v1 live together; v2 = v0 + v1; v3 = v2 * v2: two registers suffice.
    let mut f = TestFunc::new(&[W32; 4], &[&[]]);
    f.inst(0, &[0], &[]);
    f.inst(0, &[1], &[]);
    f.inst(0, &[2], &[0, 1]);
    f.inst(0, &[3], &[2]);
    f.inst(0, &[], &[3]);
    let a = allocate_checked(&f, &no_cap());
    assert_eq!(a.registers_used, 2);
    assert_eq!(a.spilled_vregs(), 0);
}

#[test]
fn pairs_are_aligned_and_counted_fully() {
    // A 32-bit value live across the definition of a 64-bit one: the pair at R0:R1 and
    // the 32-bit value at R2 is optimal.
    let mut f = TestFunc::new(&[W32, W64], &[&[]]);
    f.inst(0, &[0], &[]);
    f.inst(0, &[1], &[]);
    f.inst(0, &[], &[0, 1]);
    let a = allocate_checked(&f, &no_cap());
    assert_eq!(a.registers_used, 3);
    let Location::Reg(base) = a.location(RegId(1)) else {
        panic!("{a:?}")
    };
    assert_eq!(base.0 % 2, 0);
}

#[test]
fn quads_are_aligned() {
    let mut f = TestFunc::new(&[W32, W128, W64], &[&[]]);
    f.inst(0, &[0], &[]);
    f.inst(0, &[2], &[]);
    f.inst(0, &[1], &[]);
    f.inst(0, &[], &[0, 1, 2]);
    let a = allocate_checked(&f, &no_cap());
    assert_eq!(a.registers_used, 7);
    let Location::Reg(base) = a.location(RegId(1)) else {
        panic!("{a:?}")
    };
    assert_eq!(base.0 % 4, 0);
}

#[test]
fn predicates_get_their_own_file() {
    let mut f = TestFunc::new(&[Pred, Pred, W32], &[&[]]);
    f.inst(0, &[0], &[]);
    f.inst(0, &[1], &[]);
    f.inst(0, &[2], &[0, 1]);
    f.inst(0, &[], &[2]);
    let a = allocate_checked(&f, &no_cap());
    assert_eq!(a.predicates_used, 2);
    assert_eq!(a.registers_used, 1);
    assert!(matches!(a.location(RegId(0)), Location::Pred(_)));
    assert!(!a.exceeds_hardware_predicates());
}

#[test]
fn more_predicates_than_hardware_are_reported_not_refused() {
    let n = 9;
    let mut f = TestFunc::new(&vec![Pred; n], &[&[]]);
    for p in 0..n as u32 {
        f.inst(0, &[p], &[]);
    }
    f.inst(0, &[], &(0..n as u32).collect::<Vec<_>>());
    let a = allocate_checked(&f, &no_cap());
    assert_eq!(a.predicates_used, 9);
    assert!(a.exceeds_hardware_predicates());
}

#[test]
fn copies_are_coalesced() {
    // v1 = v0 (copy); v2 = v1 + 1: all three can share one register.
    let mut f = TestFunc::new(&[W32; 3], &[&[]]);
    f.inst(0, &[0], &[]);
    let c = f.push(
        0,
        TInst {
            defs: vec![RegId(1)],
            uses: vec![RegId(0)],
            copy: true,
            ..Default::default()
        },
    );
    f.inst(0, &[2], &[1]);
    f.inst(0, &[], &[2]);
    let a = allocate_checked(&f, &no_cap());
    assert_eq!(a.registers_used, 1);
    assert_eq!(a.coalesced_copies, vec![c]);
}

#[test]
fn copy_source_still_live_can_share_with_destination() {
    // v1 = v0; use v0; use v1: both hold the same value, one register.
    let mut f = TestFunc::new(&[W32; 2], &[&[]]);
    f.inst(0, &[0], &[]);
    f.push(
        0,
        TInst {
            defs: vec![RegId(1)],
            uses: vec![RegId(0)],
            copy: true,
            ..Default::default()
        },
    );
    f.inst(0, &[], &[0]);
    f.inst(0, &[], &[1]);
    let a = allocate_checked(&f, &no_cap());
    assert_eq!(a.location(RegId(0)), a.location(RegId(1)));
}

#[test]
fn guarded_definition_keeps_the_old_value_alive() {
    // v0 = ..; v1 = ..; @p v0 = v1; use v0. Without the guard, v1 could take v0's register.
    let mut f = TestFunc::new(&[W32, W32, Pred], &[&[]]);
    f.inst(0, &[2], &[]);
    f.inst(0, &[0], &[]);
    f.inst(0, &[1], &[]);
    f.push(
        0,
        TInst {
            defs: vec![RegId(0)],
            uses: vec![RegId(1), RegId(2)],
            partial: true,
            ..Default::default()
        },
    );
    f.inst(0, &[], &[0]);
    let a = allocate_checked(&f, &no_cap());
    assert_ne!(a.location(RegId(0)), a.location(RegId(1)));
}

#[test]
fn checker_rejects_a_guarded_write_over_another_value_read_later() {
    // v1 = ..; @p v0 = ..; use v0; use v1. With v0 and v1 in one register, the guarded
    // write leaves a mixture of v1 and v0 there: both later reads must fail.
    let mut f = TestFunc::new(&[W32, W32, Pred], &[&[]]);
    f.inst(0, &[2], &[]);
    f.inst(0, &[1], &[]);
    let guarded = f.push(
        0,
        TInst {
            defs: vec![RegId(0)],
            uses: vec![RegId(2)],
            partial: true,
            ..Default::default()
        },
    );
    let use0 = f.inst(0, &[], &[0]);
    f.inst(0, &[], &[1]);
    let mut a = allocate_checked(&f, &no_cap());
    assert_ne!(a.location(RegId(0)), a.location(RegId(1)));
    a.locations[0] = a.locations[1];
    let err = check(&f, &a).unwrap_err();
    assert!(
        matches!(err, CheckError::ValueNotHeld { inst, vreg: RegId(0), .. } if inst == use0),
        "{err}"
    );
    // Without the later reads, a guarded write of a dead value may land anywhere not live.
    let mut g = f.clone();
    g.blocks[0].retain(|&i| i < use0);
    let b = allocate_checked(&g, &no_cap());
    assert!(matches!(b.location(RegId(0)), Location::Reg(_)));
    let _ = guarded;
}

#[test]
fn registers_live_into_the_entry_get_distinct_registers() {
    // v0 and v1 are read before written: both must keep their incoming values.
    let mut f = TestFunc::new(&[W32; 3], &[&[]]);
    f.inst(0, &[2], &[0]);
    f.inst(0, &[], &[1, 2]);
    let a = allocate_checked(&f, &no_cap());
    assert_ne!(a.location(RegId(0)), a.location(RegId(1)));
    assert!(matches!(a.location(RegId(0)), Location::Reg(_)));
}

#[test]
fn unreferenced_registers_are_unused() {
    let mut f = TestFunc::new(&[W32; 3], &[&[]]);
    f.inst(0, &[0], &[]);
    f.inst(0, &[], &[0]);
    let a = allocate_checked(&f, &no_cap());
    assert_eq!(a.location(RegId(1)), Location::Unused);
    assert_eq!(a.registers_used, 1);
}

/// A loop: `n` values defined before it, two used inside it, all used after it.
fn loop_with_pressure(n: u32) -> TestFunc {
    let mut f = TestFunc::new(&vec![W32; n as usize + 1], &[&[1], &[1, 2], &[]]);
    f.depth = vec![0, 1, 0];
    for r in 0..n {
        f.inst(0, &[r], &[]);
    }
    f.inst(1, &[n], &[0, 1]);
    f.inst(1, &[0], &[n, 0]);
    for r in 0..n {
        f.inst(2, &[], &[r]);
    }
    f
}

#[test]
fn spills_under_a_cap_and_prefers_values_outside_loops() {
    let f = loop_with_pressure(8);
    let free = allocate_checked(&f, &no_cap());
    assert_eq!(free.registers_used, 9);
    let capped = allocate_checked(&f, &AllocConfig::with_max_registers(6));
    assert!(capped.registers_used <= 6);
    assert!(capped.spilled_vregs() > 0);
    // v0, v1 and v8 are referenced in the loop: spilling them costs 10x as much.
    for r in [0, 1, 8] {
        assert!(
            !matches!(capped.location(RegId(r)), Location::Spill(_)),
            "{capped:#?}"
        );
    }
    assert!(!capped.edits.is_empty());
}

#[test]
fn cap_too_small_for_one_instruction_is_an_error() {
    let mut f = TestFunc::new(&[W64, W64, W64], &[&[]]);
    f.inst(0, &[0], &[]);
    f.inst(0, &[1], &[]);
    f.inst(0, &[2], &[0, 1]);
    f.inst(0, &[], &[2]);
    assert!(matches!(
        allocate(&f, &AllocConfig::with_max_registers(3)),
        Err(AllocError::CapTooSmall { .. })
    ));
    allocate_checked(&f, &AllocConfig::with_max_registers(4));
}

#[test]
fn malformed_input_is_an_error_not_a_panic() {
    let mut f = TestFunc::new(&[W32], &[&[]]);
    f.succs[0].push(BlockId(5));
    f.inst(0, &[0], &[]);
    assert!(matches!(
        allocate(&f, &no_cap()),
        Err(AllocError::InvalidInput(_))
    ));
    let mut g = TestFunc::new(&[W32], &[&[]]);
    g.inst(0, &[3], &[]);
    assert!(matches!(
        allocate(&g, &no_cap()),
        Err(AllocError::InvalidInput(_))
    ));
}

// ---- The checker rejects broken allocations ----

/// v0 and v1 live together, then both used.
fn two_live() -> TestFunc {
    let mut f = TestFunc::new(&[W32, W32], &[&[]]);
    f.inst(0, &[0], &[]);
    f.inst(0, &[1], &[]);
    f.inst(0, &[], &[0, 1]);
    f
}

#[test]
fn checker_rejects_interfering_registers_sharing_a_register() {
    let f = two_live();
    let mut a = allocate_checked(&f, &no_cap());
    a.locations[1] = a.locations[0];
    let err = check(&f, &a).unwrap_err();
    assert!(
        matches!(
            err,
            CheckError::ValueNotHeld {
                inst: InstId(2),
                vreg: RegId(0),
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn checker_rejects_a_pair_on_an_odd_base() {
    let mut f = TestFunc::new(&[W64], &[&[]]);
    f.inst(0, &[0], &[]);
    f.inst(0, &[], &[0]);
    let mut a = allocate_checked(&f, &no_cap());
    a.locations[0] = Location::Reg(PhysReg(1));
    a.registers_used = 3;
    let err = check(&f, &a).unwrap_err();
    assert!(
        matches!(err, CheckError::Misaligned { vreg: RegId(0), .. }),
        "{err}"
    );
}

#[test]
fn checker_rejects_a_pair_overlapping_another_value() {
    // v0 (32-bit) at R1 overlaps v1 (64-bit) at R0:R1.
    let mut f = TestFunc::new(&[W32, W64], &[&[]]);
    f.inst(0, &[0], &[]);
    f.inst(0, &[1], &[]);
    f.inst(0, &[], &[0, 1]);
    let mut a = allocate_checked(&f, &no_cap());
    a.locations[0] = Location::Reg(PhysReg(1));
    a.locations[1] = Location::Reg(PhysReg(0));
    a.registers_used = 2;
    let err = check(&f, &a).unwrap_err();
    assert!(
        matches!(err, CheckError::ValueNotHeld { vreg: RegId(0), .. }),
        "{err}"
    );
}

#[test]
fn checker_rejects_a_missing_reload() {
    let f = loop_with_pressure(8);
    let mut a = allocate_checked(&f, &AllocConfig::with_max_registers(6));
    let first_reload = a
        .edits
        .iter()
        .position(|e| matches!(e, Edit::Reload { .. }))
        .expect("the capped allocation reloads");
    let Edit::Reload { before, vreg, .. } = a.edits.remove(first_reload) else {
        unreachable!()
    };
    let err = check(&f, &a).unwrap_err();
    assert!(
        matches!(err, CheckError::ValueNotHeld { inst, vreg: v, .. } if inst == before && v == vreg),
        "{err}"
    );
}

#[test]
fn checker_rejects_a_missing_spill() {
    let f = loop_with_pressure(8);
    let mut a = allocate_checked(&f, &AllocConfig::with_max_registers(6));
    let first_spill = a
        .edits
        .iter()
        .position(|e| matches!(e, Edit::Spill { .. }))
        .expect("the capped allocation spills");
    a.edits.remove(first_spill);
    let err = check(&f, &a).unwrap_err();
    assert!(
        matches!(err, CheckError::ReloadOfWrongValue { .. }),
        "{err}"
    );
}

#[test]
fn checker_rejects_a_clobbered_value_on_one_path_only() {
    // bb0 defines v0, branches to bb1 (defines v1) or bb2; bb3 joins and reads v0.
    let mut f = TestFunc::new(&[W32, W32], &[&[1, 2], &[3], &[3], &[]]);
    f.inst(0, &[0], &[]);
    f.inst(1, &[1], &[]);
    f.inst(1, &[], &[1]);
    f.inst(3, &[], &[0]);
    let mut a = allocate_checked(&f, &no_cap());
    assert_ne!(a.location(RegId(0)), a.location(RegId(1)));
    a.locations[1] = a.locations[0];
    let err = check(&f, &a).unwrap_err();
    assert!(
        matches!(
            err,
            CheckError::ValueNotHeld {
                inst: InstId(3),
                vreg: RegId(0),
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn checker_rejects_two_entry_values_in_one_register() {
    let mut f = TestFunc::new(&[W32, W32], &[&[]]);
    f.inst(0, &[], &[0, 1]);
    let mut a = allocate_checked(&f, &no_cap());
    a.locations[1] = a.locations[0];
    assert!(check(&f, &a).is_err());
}

#[test]
fn checker_rejects_a_stale_copy_in_a_register() {
    // Spilled v0 is written at i0 (in R0) and again at i1 (in R1); i2 reads it from R0
    // without a reload. R0 did hold v0 once, but not its current value.
    let mut f = TestFunc::new(&[W32], &[&[]]);
    let i0 = f.inst(0, &[0], &[]);
    let i1 = f.inst(0, &[0], &[]);
    let i2 = f.inst(0, &[], &[0]);
    let operand = |inst, reg| SpilledOperand {
        inst,
        vreg: RegId(0),
        reg: PhysReg(reg),
    };
    let spill = |after, reg| Edit::Spill {
        after,
        vreg: RegId(0),
        slot: SpillSlot(0),
        reg: PhysReg(reg),
    };
    let a = Allocation {
        locations: vec![Location::Spill(SpillSlot(0))],
        spilled_operands: vec![operand(i0, 0), operand(i1, 1), operand(i2, 0)],
        edits: vec![spill(i0, 0), spill(i1, 1)],
        spill_slots: vec![SpillSlotInfo {
            width: W32,
            offset: 0,
        }],
        registers_used: 2,
        ..Default::default()
    };
    let err = check(&f, &a).unwrap_err();
    assert!(
        matches!(err, CheckError::ValueNotHeld { inst, .. } if inst == i2),
        "{err}"
    );
    // Reading it from R1, where the current value is, passes.
    let mut b = a;
    b.spilled_operands[2].reg = PhysReg(1);
    check(&f, &b).unwrap();
}

#[test]
fn checker_rejects_wrong_file_and_out_of_range() {
    let mut f = TestFunc::new(&[Pred, W32], &[&[]]);
    f.inst(0, &[0], &[]);
    f.inst(0, &[1], &[0]);
    f.inst(0, &[], &[1]);
    let a = allocate_checked(&f, &no_cap());
    let mut b = a.clone();
    b.locations[0] = Location::Reg(PhysReg(0));
    assert!(matches!(check(&f, &b), Err(CheckError::WrongFile { .. })));
    let mut c = a.clone();
    c.locations[1] = Location::Reg(PhysReg(5));
    assert!(matches!(check(&f, &c), Err(CheckError::OutOfRange { .. })));
    let mut d = a;
    d.locations[1] = Location::Unused;
    assert!(matches!(
        check(&f, &d),
        Err(CheckError::MissingLocation { .. })
    ));
}

#[test]
fn checker_accepts_a_hand_written_correct_allocation_with_spills() {
    // v0 = ..; spill v0 to S0; v1 = ..; reload v0 into R1; use v0, v1.
    let mut f = TestFunc::new(&[W32, W32], &[&[]]);
    let d0 = f.inst(0, &[0], &[]);
    f.inst(0, &[1], &[]);
    let u = f.inst(0, &[], &[0, 1]);
    let a = Allocation {
        locations: vec![Location::Spill(SpillSlot(0)), Location::Reg(PhysReg(0))],
        spilled_operands: vec![
            SpilledOperand {
                inst: d0,
                vreg: RegId(0),
                reg: PhysReg(0),
            },
            SpilledOperand {
                inst: u,
                vreg: RegId(0),
                reg: PhysReg(1),
            },
        ],
        edits: vec![
            Edit::Spill {
                after: d0,
                vreg: RegId(0),
                slot: SpillSlot(0),
                reg: PhysReg(0),
            },
            Edit::Reload {
                before: u,
                vreg: RegId(0),
                slot: SpillSlot(0),
                reg: PhysReg(1),
            },
        ],
        spill_slots: vec![SpillSlotInfo {
            width: W32,
            offset: 0,
        }],
        registers_used: 2,
        predicates_used: 0,
        coalesced_copies: vec![],
    };
    check(&f, &a).unwrap();
    // The same with the reload into R0, where v1 lives: v1's use then fails.
    let mut b = a.clone();
    b.spilled_operands[1].reg = PhysReg(0);
    if let Edit::Reload { reg, .. } = &mut b.edits[1] {
        *reg = PhysReg(0);
    }
    let err = check(&f, &b).unwrap_err();
    assert!(
        matches!(err, CheckError::ValueNotHeld { vreg: RegId(1), .. }),
        "{err}"
    );
}

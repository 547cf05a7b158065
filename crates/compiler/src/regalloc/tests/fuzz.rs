//! Random and exhaustive CFGs: every allocation, with and without a tight cap, must pass
//! the checker and be deterministic.

use proptest::prelude::*;

use super::*;

/// Registers of one width, and a distinct-register operand list drawn from them.
fn width_strategy() -> impl Strategy<Value = RegWidth> {
    prop_oneof![
        2 => Just(Pred),
        5 => Just(W32),
        2 => Just(W64),
        1 => Just(W128),
    ]
}

#[derive(Clone, Debug)]
struct InstShape {
    uses: Vec<usize>,
    defs: Vec<usize>,
    partial: bool,
    copy: bool,
}

fn inst_strategy() -> impl Strategy<Value = InstShape> {
    (
        prop::collection::vec(any::<usize>(), 0..=3),
        prop::collection::vec(any::<usize>(), 0..=2),
        prop::bool::weighted(0.15),
        prop::bool::weighted(0.2),
    )
        .prop_map(|(uses, defs, partial, copy)| InstShape {
            uses,
            defs,
            partial,
            copy,
        })
}

/// A random function: up to 7 blocks with random edges (loops, unreachable blocks and
/// exits included), random defs and uses of up to 14 registers of random widths, guarded
/// definitions, copies, and reads before writes.
fn func_strategy() -> impl Strategy<Value = TestFunc> {
    (
        prop::collection::vec(width_strategy(), 1..=14),
        prop::collection::vec(
            (
                prop::collection::vec(any::<usize>(), 0..=2),
                prop::collection::vec(inst_strategy(), 0..=7),
                0u32..=2,
            ),
            1..=7,
        ),
    )
        .prop_map(|(widths, blocks)| build(widths, &blocks))
}

fn build(widths: Vec<RegWidth>, blocks: &[(Vec<usize>, Vec<InstShape>, u32)]) -> TestFunc {
    let n = blocks.len();
    let succs: Vec<Vec<usize>> = blocks
        .iter()
        .map(|(s, _, _)| s.iter().map(|x| x % n).collect())
        .collect();
    let succ_refs: Vec<&[usize]> = succs.iter().map(|s| s.as_slice()).collect();
    let nregs = widths.len();
    let mut f = TestFunc::new(&widths, &succ_refs);
    f.depth = blocks.iter().map(|b| b.2).collect();
    for (b, (_, insts, _)) in blocks.iter().enumerate() {
        for shape in insts {
            let mut uses: Vec<RegId> = shape.uses.iter().map(|&r| RegId::new(r % nregs)).collect();
            uses.dedup();
            let mut defs: Vec<RegId> = shape.defs.iter().map(|&r| RegId::new(r % nregs)).collect();
            defs.dedup();
            let copy = shape.copy
                && !shape.partial
                && defs.len() == 1
                && uses.len() == 1
                && f.widths[defs[0].index()] == f.widths[uses[0].index()];
            f.push(
                b,
                TInst {
                    uses,
                    defs,
                    partial: shape.partial,
                    copy,
                },
            );
        }
    }
    f
}

/// The registers one instruction needs for its own operands if everything else is
/// spilled, rounded up to a whole quad so alignment can never be what fails.
fn operand_need(f: &TestFunc) -> u32 {
    let need = f
        .insts
        .iter()
        .map(|i| {
            let mut regs: Vec<RegId> = i.uses.iter().chain(&i.defs).copied().collect();
            regs.sort();
            regs.dedup();
            regs.iter()
                .filter(|r| !f.widths[r.index()].is_predicate())
                .map(|r| f.widths[r.index()].units())
                .sum::<u32>()
        })
        .max()
        .unwrap_or(0);
    need.div_ceil(4) * 4
}

/// 400 cases per property in the normal suite; `REGSIM_FUZZ_CASES=N` for a longer run.
fn cases() -> u32 {
    std::env::var("REGSIM_FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(400)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn random_cfgs_allocate_and_check_without_cap(f in func_strategy()) {
        allocate_checked(&f, &no_cap());
    }

    #[test]
    fn random_cfgs_allocate_and_check_under_a_tight_cap(f in func_strategy(), extra in 0u32..4) {
        let free = allocate_checked(&f, &no_cap());
        let cap = operand_need(&f).max(4) + extra;
        let capped = allocate_checked(&f, &AllocConfig::with_max_registers(cap));
        prop_assert!(capped.registers_used <= cap);
        if free.registers_used <= cap {
            prop_assert_eq!(capped.spilled_vregs(), 0);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases() / 4, ..ProptestConfig::default() })]

    /// Caps too small for some instructions: either a checked allocation within the cap or
    /// `CapTooSmall`, never a panic or an endless spill loop.
    #[test]
    fn tiny_caps_allocate_or_refuse(f in func_strategy(), cap in 0u32..6) {
        match allocate(&f, &AllocConfig::with_max_registers(cap)) {
            Ok(a) => {
                prop_assert!(a.registers_used <= cap);
                if let Err(e) = check(&f, &a) {
                    return Err(TestCaseError::fail(format!("{e}")));
                }
            }
            Err(AllocError::CapTooSmall { .. }) => {}
            Err(e) => return Err(TestCaseError::fail(format!("{e}"))),
        }
    }
}

/// A tiny deterministic generator for the exhaustive sweep.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, bound: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % bound
    }
}

/// Every CFG on three blocks where each block has at most two successors (343 graphs),
/// each with four instruction patterns, allocated without a cap and under a cap of 4.
#[test]
fn exhaustive_three_block_cfgs() {
    let succ_sets: Vec<Vec<usize>> = vec![
        vec![],
        vec![0],
        vec![1],
        vec![2],
        vec![0, 1],
        vec![0, 2],
        vec![1, 2],
    ];
    let widths = vec![W32, W32, W64, Pred, W32, W128];
    let mut checked = 0;
    for a in &succ_sets {
        for b in &succ_sets {
            for c in &succ_sets {
                for seed in 0..4u64 {
                    let mut rng = Lcg(seed * 7919 + 17);
                    let blocks: Vec<(Vec<usize>, Vec<InstShape>, u32)> = [a, b, c]
                        .iter()
                        .map(|s| {
                            let insts = (0..1 + rng.next(3))
                                .map(|_| InstShape {
                                    uses: (0..rng.next(3)).map(|_| rng.next(6)).collect(),
                                    defs: (0..rng.next(3)).map(|_| rng.next(6)).collect(),
                                    partial: rng.next(6) == 0,
                                    copy: rng.next(4) == 0,
                                })
                                .collect();
                            ((*s).clone(), insts, rng.next(2) as u32)
                        })
                        .collect();
                    let f = build(widths.clone(), &blocks);
                    allocate_checked(&f, &no_cap());
                    let cap = operand_need(&f).max(4);
                    allocate_checked(&f, &AllocConfig::with_max_registers(cap));
                    checked += 1;
                }
            }
        }
    }
    assert_eq!(checked, 343 * 4);
}

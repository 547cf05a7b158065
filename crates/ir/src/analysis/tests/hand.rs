//! Hand-checked cases: small graphs whose every answer was worked out on paper.

use crate::analysis::dataflow::{solve, Analysis, Direction};
use crate::analysis::testing::TestFunction;
use crate::analysis::*;
use crate::entity::{BlockId, InstId, RegId};
use crate::graph::RegisterEffects;

fn bb(i: u32) -> BlockId {
    BlockId(i)
}

fn bbs(ids: &[u32]) -> Vec<BlockId> {
    ids.iter().map(|&i| BlockId(i)).collect()
}

fn regs(set: &BitSet<RegId>) -> Vec<u32> {
    set.iter().map(|r| r.0).collect()
}

fn idoms(t: &DominatorTree, n: u32) -> Vec<Option<u32>> {
    (0..n).map(|b| t.idom(bb(b)).map(|d| d.0)).collect()
}

fn ipdoms(t: &PostDominatorTree, n: u32) -> Vec<Option<u32>> {
    (0..n)
        .map(|b| t.immediate_post_dominator(bb(b)).map(|d| d.0))
        .collect()
}

/// 0 → {1, 2} → 3.
fn diamond() -> TestFunction {
    TestFunction::from_edges(4, &[(0, 1), (0, 2), (1, 3), (2, 3)])
}

#[test]
fn diamond_dominators_and_reconvergence() {
    let g = diamond();
    let dom = DominatorTree::with_cfg(&g);
    assert_eq!(idoms(&dom, 4), vec![None, Some(0), Some(0), Some(0)]);
    assert!(dom.dominates(bb(0), bb(3)));
    assert!(!dom.dominates(bb(1), bb(3)));
    assert_eq!(dom.depth(bb(3)), Some(1));
    assert_eq!(dom.children(bb(0)).collect::<Vec<_>>(), bbs(&[1, 2, 3]));

    let pdom = PostDominatorTree::with_cfg(&g);
    assert_eq!(ipdoms(&pdom, 4), vec![Some(3), Some(3), Some(3), None]);
    assert!(pdom.post_dominates(bb(3), bb(0)));
    assert!(!pdom.post_dominates(bb(1), bb(0)));
    assert_eq!(pdom.depth(bb(3)), 1);
    assert_eq!(pdom.depth(bb(0)), 2);
    assert!(pdom.virtual_exit_sources().is_empty());

    let loops = LoopAnalysis::with_cfg(&g, &dom);
    assert!(loops.loops().is_empty());
    assert!(loops.is_reducible());

    // One interval holds everything; the derived graph G2 is the single-node limit.
    let intervals = IntervalAnalysis::with_cfg(&g);
    assert_eq!(intervals.levels().len(), 2);
    assert_eq!(intervals.level(0).nodes(IntervalId(0)), &[0, 1, 2, 3]);
    assert_eq!(intervals.level(1).num_nodes(), 1);
    assert!(intervals.is_reducible());
}

#[test]
fn diamond_liveness_and_chains() {
    // bb0: i0 v0 = ; i1 v1 =      bb1: i2 v2 = v0     bb2: i3 v2 = v1, v0     bb3: i4 = v2
    let mut g = diamond();
    g.inst(0, &[0], &[]);
    g.inst(0, &[1], &[]);
    g.inst(1, &[2], &[0]);
    g.inst(2, &[2], &[1, 0]);
    g.inst(3, &[], &[2]);
    let live = Liveness::with_function(&g);
    assert_eq!(regs(live.live_out(bb(0))), vec![0, 1]);
    assert_eq!(regs(live.live_in(bb(1))), vec![0]);
    assert_eq!(regs(live.live_in(bb(2))), vec![0, 1]);
    assert_eq!(regs(live.live_in(bb(3))), vec![2]);
    assert_eq!(regs(live.live_in(bb(0))), Vec::<u32>::new());
    for (inst, dead) in [(2, vec![true]), (3, vec![true, true]), (4, vec![true])] {
        assert_eq!(
            live.dead_after_operands(InstId(inst)).collect::<Vec<_>>(),
            dead,
            "i{inst}"
        );
    }
    // bb0 holds v0 and v1 at its end; bb2 reads both and writes v2 into one of them.
    assert_eq!(live.block_pressure(bb(0)), 2);
    assert_eq!(live.pressure_at(InstId(3)), 2);
    assert_eq!(live.max_pressure(), 2);

    let chains = DefUseChains::with_function(&g);
    let c = chains.use_defs(InstId(4), 0);
    assert_eq!(c.defs, &[InstId(2), InstId(3)]);
    assert!(!c.from_entry);
    assert_eq!(
        chains.def_uses(InstId(0), 0),
        &[
            UseSite {
                inst: InstId(2),
                operand: 0
            },
            UseSite {
                inst: InstId(3),
                operand: 1
            }
        ]
    );
}

/// 0 → 1 (outer header) → 2 (inner header) → 3 → {2, 4}; 4 → 1; 1 → 5 (exit).
fn nested_loops() -> TestFunction {
    TestFunction::from_edges(6, &[(0, 1), (1, 2), (1, 5), (2, 3), (3, 2), (3, 4), (4, 1)])
}

#[test]
fn nested_loops_structure() {
    let g = nested_loops();
    let dom = DominatorTree::with_cfg(&g);
    assert_eq!(
        idoms(&dom, 6),
        vec![None, Some(0), Some(1), Some(2), Some(3), Some(1)]
    );
    let pdom = PostDominatorTree::with_cfg(&g);
    assert_eq!(
        ipdoms(&pdom, 6),
        vec![Some(1), Some(5), Some(3), Some(4), Some(1), None]
    );

    let loops = LoopAnalysis::with_cfg(&g, &dom);
    assert_eq!(loops.loops().len(), 2);
    let outer = loops.get(LoopId(0));
    assert_eq!(outer.header, bb(1));
    assert_eq!(outer.blocks, bbs(&[1, 2, 3, 4]));
    assert_eq!(outer.latches, bbs(&[4]));
    assert_eq!(outer.exits, vec![(bb(1), bb(5))]);
    assert_eq!((outer.parent, outer.depth), (None, 1));
    let inner = loops.get(LoopId(1));
    assert_eq!(inner.header, bb(2));
    assert_eq!(inner.blocks, bbs(&[2, 3]));
    assert_eq!(inner.latches, bbs(&[3]));
    assert_eq!(inner.exits, vec![(bb(3), bb(4))]);
    assert_eq!((inner.parent, inner.depth), (Some(LoopId(0)), 2));
    let depths: Vec<u32> = (0..6).map(|b| loops.loop_depth(bb(b))).collect();
    assert_eq!(depths, vec![0, 1, 2, 2, 1, 0]);
    assert_eq!(
        loops.children(LoopId(0)).collect::<Vec<_>>(),
        vec![LoopId(1)]
    );
    assert!(loops.is_loop_header(bb(2)) && !loops.is_loop_header(bb(3)));

    // G1: {0} {1 5} {2 3 4}; G2: {I0} {I1 I2}; G3: one interval of two nodes; G4: one node.
    let intervals = IntervalAnalysis::with_cfg(&g);
    let sizes: Vec<(usize, usize)> = intervals
        .levels()
        .iter()
        .map(|l| (l.num_nodes(), l.num_intervals()))
        .collect();
    assert_eq!(sizes, vec![(6, 3), (3, 2), (2, 1), (1, 1)]);
    let l0 = intervals.level(0);
    assert_eq!(l0.nodes(IntervalId(1)), &[1, 5]);
    assert_eq!(l0.nodes(IntervalId(2)), &[2, 3, 4]);
    assert_eq!(
        intervals.level(1).blocks(IntervalId(1)),
        bbs(&[1, 2, 3, 4, 5])
    );
    assert_eq!(intervals.level(1).header_block(IntervalId(1)), bb(1));
    assert!(intervals.is_reducible());
}

#[test]
fn while_loop_with_break_and_continue() {
    // 1: while (c) { 2: if (x) { 3: if (b) break; 5: ... } else { 4: continue } } 6: return
    let g = TestFunction::from_edges(
        7,
        &[
            (0, 1),
            (1, 2),
            (1, 6),
            (2, 3),
            (2, 4),
            (3, 6),
            (3, 5),
            (4, 1),
            (5, 1),
        ],
    );
    let dom = DominatorTree::with_cfg(&g);
    assert_eq!(
        idoms(&dom, 7),
        vec![None, Some(0), Some(1), Some(2), Some(2), Some(3), Some(1)]
    );
    let pdom = PostDominatorTree::with_cfg(&g);
    // The branch in 2 reconverges only after the loop: the break skips the latch.
    assert_eq!(
        ipdoms(&pdom, 7),
        vec![Some(1), Some(6), Some(6), Some(6), Some(1), Some(1), None]
    );
    let loops = LoopAnalysis::with_cfg(&g, &dom);
    assert_eq!(loops.loops().len(), 1);
    let l = loops.get(LoopId(0));
    assert_eq!(l.blocks, bbs(&[1, 2, 3, 4, 5]));
    assert_eq!(l.latches, bbs(&[4, 5]));
    assert_eq!(l.exits, vec![(bb(1), bb(6)), (bb(3), bb(6))]);
    assert_eq!(l.exit_targets(), bbs(&[6]));
}

#[test]
fn multiple_exits_reconverge_at_function_exit() {
    let g = TestFunction::from_edges(5, &[(0, 1), (0, 2), (2, 3), (2, 4)]);
    let pdom = PostDominatorTree::with_cfg(&g);
    assert_eq!(ipdoms(&pdom, 5), vec![None; 5]);
    assert!(!pdom.post_dominates(bb(2), bb(0)));
    assert!(pdom.post_dominates(bb(2), bb(2)));
    assert_eq!(
        pdom.dump(&Namer::default()),
        "post-dominators:\n  bb0: ipdom exit\n  bb1: ipdom exit\n  bb2: ipdom exit\n  bb3: ipdom exit\n  bb4: ipdom exit\n"
    );
}

#[test]
fn infinite_loop_gets_a_virtual_exit_edge_at_its_header() {
    // 0 → {1, 4}; 1 → 2 → 3 → 2 forever; 4 returns. The region {1, 2, 3} cannot exit;
    // its terminal cycle is {2, 3}, entered at 2.
    let g = TestFunction::from_edges(5, &[(0, 1), (0, 4), (1, 2), (2, 3), (3, 2)]);
    let pdom = PostDominatorTree::with_cfg(&g);
    assert_eq!(pdom.virtual_exit_sources(), &[bb(2)]);
    assert_eq!(ipdoms(&pdom, 5), vec![None, Some(2), None, Some(2), None]);
    let dump = pdom.dump(&Namer::default());
    assert!(dump.ends_with("  virtual exit edges from: bb2\n"), "{dump}");

    // A function that never returns at all.
    let spin = TestFunction::from_edges(3, &[(0, 1), (1, 2), (2, 1)]);
    let pdom = PostDominatorTree::with_cfg(&spin);
    assert_eq!(pdom.virtual_exit_sources(), &[bb(1)]);
    assert_eq!(ipdoms(&pdom, 3), vec![Some(1), None, Some(1)]);

    // Liveness has no boundary inside the loop: values read in it stay live around it.
    let mut spin = spin;
    spin.inst(0, &[0], &[]);
    spin.inst(2, &[1], &[0, 1]);
    let live = Liveness::with_function(&spin);
    assert_eq!(regs(live.live_in(bb(1))), vec![0, 1]);
    assert_eq!(
        live.dead_after_operands(InstId(1)).collect::<Vec<_>>(),
        vec![false, true]
    );
}

#[test]
fn unreachable_blocks_are_outside_the_dominator_tree_and_the_intervals() {
    // 2 is unreachable and jumps into 1.
    let mut g = TestFunction::from_edges(3, &[(0, 1), (2, 1)]);
    g.inst(2, &[0], &[]);
    g.inst(1, &[], &[0]);
    let dom = DominatorTree::with_cfg(&g);
    assert_eq!(idoms(&dom, 3), vec![None, Some(0), None]);
    assert!(!dom.is_reachable(bb(2)));
    assert!(!dom.dominates(bb(2), bb(2)));
    assert!(!dom.dominates(bb(2), bb(1)));
    assert!(dom.dominates(bb(0), bb(1)));
    assert_eq!(dom.depth(bb(2)), None);
    assert_eq!(
        dom.dump(&Namer::default()),
        "dominators:\n  bb0: entry\n  bb1: idom bb0, depth 1\n  bb2: unreachable\n"
    );

    let pdom = PostDominatorTree::with_cfg(&g);
    assert_eq!(ipdoms(&pdom, 3), vec![Some(1), None, Some(1)]);

    let intervals = IntervalAnalysis::with_cfg(&g);
    let l0 = intervals.level(0);
    assert_eq!(l0.nodes(IntervalId(0)), &[0, 1]);
    assert_eq!(l0.interval_of_block(bb(2)), None);
    assert!(intervals.is_reducible());

    // The use in 1 sees the undefined entry value along 0 → 1, and 2's write along 2 → 1.
    let chains = DefUseChains::with_function(&g);
    let c = chains.use_defs(InstId(1), 0);
    assert!(c.from_entry);
    assert_eq!(c.defs, &[InstId(0)]);
    let live = Liveness::with_function(&g);
    assert_eq!(regs(live.live_in(bb(1))), vec![0]);
    assert_eq!(regs(live.live_out(bb(2))), vec![0]);
}

#[test]
fn irreducible_graph_has_no_natural_loop_and_a_limit_graph_of_three() {
    // Two entries into the cycle 1 ⇄ 2.
    let g = TestFunction::from_edges(4, &[(0, 1), (0, 2), (1, 2), (2, 1), (2, 3)]);
    let dom = DominatorTree::with_cfg(&g);
    let loops = LoopAnalysis::with_cfg(&g, &dom);
    assert!(loops.loops().is_empty());
    assert!(!loops.is_reducible());
    // Depth-first from 0 goes 0 → 1 → 2, so 2 → 1 is the retreating edge.
    assert_eq!(loops.irreducible_edges(), &[(bb(2), bb(1))]);

    let intervals = IntervalAnalysis::with_cfg(&g);
    assert!(!intervals.is_reducible());
    assert_eq!(intervals.limit_graph_size(), 3);
    let l0 = intervals.level(0);
    assert_eq!(l0.num_intervals(), 3);
    assert_eq!(l0.nodes(IntervalId(2)), &[2, 3]);
    assert_eq!(
        intervals.dump(&Namer::default()),
        "intervals:\n  level 0: 4 nodes, 3 intervals\n    I0: header bb0, nodes [bb0]\n    \
         I1: header bb1, nodes [bb1]\n    I2: header bb2, nodes [bb2 bb3]\n  \
         level 1: 3 nodes, 3 intervals\n    I0: header bb0, nodes [I0]\n    \
         I1: header bb1, nodes [I1]\n    I2: header bb2, nodes [I2]\n  \
         limit graph: 3 nodes (irreducible)\n"
    );
}

/// The ten-node flow graph of the dragon book's dominator, natural-loop and interval
/// examples (Aho, Sethi and Ullman §10.4/§10.10), nodes renumbered from 0:
/// 1→2,3  2→3  3→4  4→3,5,6  5→7  6→7  7→4,8  8→3,9,10  9→1  10→7.
fn textbook() -> TestFunction {
    let edges: Vec<(u32, u32)> = [
        (1, 2),
        (1, 3),
        (2, 3),
        (3, 4),
        (4, 3),
        (4, 5),
        (4, 6),
        (5, 7),
        (6, 7),
        (7, 4),
        (7, 8),
        (8, 3),
        (8, 9),
        (8, 10),
        (9, 1),
        (10, 7),
    ]
    .iter()
    .map(|&(a, b)| (a - 1, b - 1))
    .collect();
    TestFunction::from_edges(10, &edges)
}

#[test]
fn textbook_intervals() {
    let g = textbook();
    let intervals = IntervalAnalysis::with_cfg(&g);
    // I(1) = {1,2}, I(3) = {3}, I(4) = {4,5,6}, I(7) = {7,8,9,10}; then {I1} {I3} {I4 I7};
    // then {J1} {J3 J4}; then one interval of two; then the single-node limit graph.
    let l0 = intervals.level(0);
    let level0: Vec<Vec<u32>> = l0.intervals().map(|i| l0.nodes(i).to_vec()).collect();
    assert_eq!(
        level0,
        vec![vec![0, 1], vec![2], vec![3, 4, 5], vec![6, 7, 8, 9]]
    );
    let l1 = intervals.level(1);
    let level1: Vec<Vec<u32>> = l1.intervals().map(|i| l1.nodes(i).to_vec()).collect();
    assert_eq!(level1, vec![vec![0], vec![1], vec![2, 3]]);
    assert_eq!(l1.blocks(IntervalId(2)), bbs(&[3, 4, 5, 6, 7, 8, 9]));
    assert_eq!(l1.header_block(IntervalId(2)), bb(3));
    let sizes: Vec<(usize, usize)> = intervals
        .levels()
        .iter()
        .map(|l| (l.num_nodes(), l.num_intervals()))
        .collect();
    assert_eq!(sizes, vec![(10, 4), (4, 3), (3, 2), (2, 1), (1, 1)]);
    assert!(intervals.is_reducible());
    assert_eq!(
        intervals.level(2).interval_of_block(bb(6)),
        Some(IntervalId(1))
    );
}

#[test]
fn textbook_natural_loops() {
    let g = textbook();
    let dom = DominatorTree::with_cfg(&g);
    assert_eq!(
        idoms(&dom, 10),
        vec![
            None,
            Some(0),
            Some(0),
            Some(2),
            Some(3),
            Some(3),
            Some(3),
            Some(6),
            Some(7),
            Some(7)
        ]
    );
    let loops = LoopAnalysis::with_cfg(&g, &dom);
    let found: Vec<(u32, Vec<BlockId>, Option<LoopId>)> = loops
        .loops()
        .iter()
        .map(|l| (l.header.0, l.blocks.clone(), l.parent))
        .collect();
    assert_eq!(
        found,
        vec![
            (0, bbs(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]), None),
            (2, bbs(&[2, 3, 4, 5, 6, 7, 9]), Some(LoopId(0))),
            (3, bbs(&[3, 4, 5, 6, 7, 9]), Some(LoopId(1))),
            (6, bbs(&[6, 7, 9]), Some(LoopId(2))),
        ]
    );
    assert_eq!(loops.get(LoopId(1)).latches, bbs(&[3, 7]));
    assert!(loops.is_reducible());
}

#[test]
fn loop_with_a_guarded_write() {
    // bb0: i0 v0, v3 =          bb1: i2 v2 = v0, v1       bb2: i4 v0 = v0     bb3: i5 = v1
    //      i1 v1 =                   i3 @v3 v1 = v2 (guarded)
    // edges 0→1, 1→2, 1→3, 2→1
    let mut g = TestFunction::from_edges(4, &[(0, 1), (1, 2), (1, 3), (2, 1)]);
    g.inst(0, &[0, 3], &[]);
    g.inst(0, &[1], &[]);
    g.inst(1, &[2], &[0, 1]);
    g.guarded_inst(1, &[1], &[3, 2]);
    g.inst(2, &[0], &[0]);
    g.inst(3, &[], &[1]);
    let live = Liveness::with_function(&g);
    let ins: Vec<Vec<u32>> = (0..4).map(|b| regs(live.live_in(bb(b)))).collect();
    assert_eq!(ins, vec![vec![], vec![0, 1, 3], vec![0, 1, 3], vec![1]]);
    let outs: Vec<Vec<u32>> = (0..4).map(|b| regs(live.live_out(bb(b)))).collect();
    assert_eq!(
        outs,
        vec![vec![0, 1, 3], vec![0, 1, 3], vec![0, 1, 3], vec![]]
    );
    let dead: Vec<Vec<bool>> = (0..6)
        .map(|i| live.dead_after_operands(InstId(i)).collect())
        .collect();
    assert_eq!(
        dead,
        vec![
            vec![],
            vec![],
            vec![false, false],
            vec![false, true],
            vec![true],
            vec![true]
        ]
    );
    let pressure: Vec<u32> = (0..6).map(|i| live.pressure_at(InstId(i))).collect();
    assert_eq!(pressure, vec![2, 3, 4, 4, 3, 1]);
    let blocks: Vec<u32> = (0..4).map(|b| live.block_pressure(bb(b))).collect();
    assert_eq!(blocks, vec![3, 4, 3, 1]);
    assert_eq!(live.max_pressure(), 4);

    let chains = DefUseChains::with_function(&g);
    let defs = |i: u32, k: usize| {
        chains
            .use_defs(InstId(i), k)
            .defs
            .iter()
            .map(|d| d.0)
            .collect::<Vec<_>>()
    };
    assert_eq!(defs(2, 0), vec![0, 4]);
    // The guarded write in i3 does not hide i1's write.
    assert_eq!(defs(2, 1), vec![1, 3]);
    assert_eq!(defs(5, 0), vec![1, 3]);
    assert_eq!(defs(3, 1), vec![2]);
    assert_eq!(defs(4, 0), vec![0, 4]);
    let uses = |i: u32, k: usize| {
        chains
            .def_uses(InstId(i), k)
            .iter()
            .map(|u| (u.inst.0, u.operand))
            .collect::<Vec<_>>()
    };
    assert_eq!(uses(0, 0), vec![(2, 0), (4, 0)]);
    assert_eq!(uses(0, 1), vec![(3, 0)]);
    assert_eq!(uses(3, 0), vec![(2, 1), (5, 0)]);
    assert_eq!(uses(2, 0), vec![(3, 1)]);
}

#[test]
fn guarded_write_keeps_the_old_value_live() {
    // i0 v0 = ; i1 @p v0 = v1 ; i2 = v0. Were i1 unguarded, i0's value would die at once.
    let mut g = TestFunction::from_edges(1, &[]);
    g.inst(0, &[0], &[]);
    g.guarded_inst(0, &[0], &[1]);
    g.inst(0, &[], &[0]);
    let live = Liveness::with_function(&g);
    let after: Vec<Vec<u32>> = live.live_after_each(&g, bb(0)).iter().map(regs).collect();
    assert_eq!(after, vec![vec![0, 1], vec![0], vec![]]);
    assert_eq!(regs(live.live_in(bb(0))), vec![1]);
    let chains = DefUseChains::with_function(&g);
    assert_eq!(chains.use_defs(InstId(2), 0).defs, &[InstId(0), InstId(1)]);
    let v1 = chains.use_defs(InstId(1), 0);
    assert!(v1.from_entry && v1.defs.is_empty());

    let mut unguarded = TestFunction::from_edges(1, &[]);
    unguarded.inst(0, &[0], &[]);
    unguarded.inst(0, &[0], &[1]);
    unguarded.inst(0, &[], &[0]);
    let live = Liveness::with_function(&unguarded);
    let after: Vec<Vec<u32>> = live
        .live_after_each(&unguarded, bb(0))
        .iter()
        .map(regs)
        .collect();
    assert_eq!(after, vec![vec![1], vec![0], vec![]]);
}

#[test]
fn liveness_dump_marks_last_reads() {
    let mut g = TestFunction::from_edges(2, &[(0, 1)]);
    g.inst(0, &[0], &[]);
    g.inst(1, &[1], &[0, 0]);
    let live = Liveness::with_function(&g);
    let reg_names = |r: RegId| format!("%r{}", r.0);
    let names = Namer {
        reg: &reg_names,
        ..Namer::default()
    };
    assert_eq!(
        live.dump(&g, &names),
        "liveness:\n  bb0: in [], out [%r0], pressure 1\n    i0 | uses [] | live-after [%r0] | pressure 1\n  \
         bb1: in [%r0], out [], pressure 1\n    i1 | uses [%r0(dead) %r0(dead)] | live-after [] | pressure 1\n  \
         max pressure 1\n"
    );
}

/// Counts how often each block is transferred, to check the solver's visit order.
struct CountingLiveness<'a> {
    visits: &'a std::cell::RefCell<Vec<u32>>,
}

impl<G: RegisterEffects + ?Sized> Analysis<G> for CountingLiveness<'_> {
    type Domain = BitSet<RegId>;
    const DIRECTION: Direction = Direction::Backward;
    fn bottom_value(&self, g: &G) -> BitSet<RegId> {
        BitSet::new_empty(g.num_regs())
    }
    fn initialize_boundary(&self, _g: &G, _state: &mut BitSet<RegId>) {}
    fn apply_inst_effect(&self, g: &G, state: &mut BitSet<RegId>, inst: InstId) {
        liveness::LiveRegisters.apply_inst_effect(g, state, inst);
    }
    fn apply_block_effect(&self, g: &G, state: &mut BitSet<RegId>, block: BlockId) {
        self.visits.borrow_mut()[block.index()] += 1;
        for &inst in g.block_insts(block).iter().rev() {
            liveness::LiveRegisters.apply_inst_effect(g, state, inst);
        }
    }
}

#[test]
fn acyclic_backward_problem_visits_each_block_once() {
    // In postorder every successor is final before its predecessors are visited.
    let mut g = TestFunction::from_edges(6, &[(0, 1), (0, 2), (1, 3), (2, 3), (3, 4), (3, 5)]);
    g.inst(4, &[], &[0]);
    g.inst(5, &[], &[1]);
    let visits = std::cell::RefCell::new(vec![0; 6]);
    let results = solve(CountingLiveness { visits: &visits }, &g);
    assert_eq!(*visits.borrow(), vec![1; 6]);
    assert_eq!(regs(results.flow_entry_state(bb(0))), vec![0, 1]);
}

#[test]
fn analyses_context_caches_and_invalidates() {
    let g = nested_loops();
    let mut ctx: Analyses<TestFunction> = Analyses::new();
    assert!(!ctx.is_valid(AnalysisKind::Loops));
    assert_eq!(ctx.loop_analysis(&g).loops().len(), 2);
    // Loops needed dominators, which are now cached too.
    assert!(ctx.is_valid(AnalysisKind::Dominators));
    ctx.ensure(&g, AnalysisSet::ALL);
    assert!(AnalysisKind::ALL.iter().all(|&k| ctx.is_valid(k)));
    ctx.invalidate(AnalysisSet::REGISTERS);
    assert!(!ctx.is_valid(AnalysisKind::Liveness) && !ctx.is_valid(AnalysisKind::DefUse));
    assert!(ctx.get_dominator_tree().is_some() && ctx.get_liveness().is_none());
    // Invalidating dominators takes the loops built on them along.
    ctx.invalidate(AnalysisSet::of(&[AnalysisKind::Dominators]));
    assert!(!ctx.is_valid(AnalysisKind::Loops));
    assert!(ctx.is_valid(AnalysisKind::PostDominators));
    ctx.clear_all();
    assert!(AnalysisKind::ALL.iter().all(|&k| !ctx.is_valid(k)));
    let dump = ctx.dump(
        &g,
        AnalysisSet::of(&[AnalysisKind::Loops]),
        &Namer::default(),
    );
    assert_eq!(
        dump,
        "loops:\n  loop0: header bb1, depth 1, parent -, blocks [bb1 bb2 bb3 bb4], latches [bb4], exits [bb1->bb5]\n  \
         loop1: header bb2, depth 2, parent loop0, blocks [bb2 bb3], latches [bb3], exits [bb3->bb4]\n"
    );
}

#[test]
fn summaries_serialize_to_the_numbers_the_dumps_show() {
    let mut g = nested_loops();
    g.inst(0, &[0], &[]);
    g.inst(3, &[], &[0]);
    let mut ctx: Analyses<TestFunction> = Analyses::new();
    let json = |v: serde_json::Value| v.to_string();
    assert_eq!(
        json(serde_json::to_value(ctx.dominator_tree(&g).summary()).unwrap()),
        r#"{"idom":[null,0,1,2,3,1]}"#
    );
    assert_eq!(
        json(serde_json::to_value(ctx.post_dominator_tree(&g).summary()).unwrap()),
        r#"{"ipdom":[1,5,3,4,1,null],"virtual_exit_sources":[]}"#
    );
    let loops = serde_json::to_value(ctx.loop_analysis(&g).summary()).unwrap();
    assert_eq!(loops["loops"][1]["blocks"].to_string(), "[2,3]");
    assert_eq!(loops["loops"][1]["parent"].to_string(), "0");
    let intervals = serde_json::to_value(ctx.interval_analysis(&g).summary()).unwrap();
    assert_eq!(
        intervals["levels"][0][2].to_string(),
        r#"{"header_block":2,"nodes":[2,3,4]}"#
    );
    assert_eq!(intervals["reducible"], serde_json::Value::Bool(true));
    let live = serde_json::to_value(ctx.liveness(&g).summary()).unwrap();
    assert_eq!(live["blocks"][2]["live_in"].to_string(), "[0]");
    assert_eq!(live["blocks"][5]["live_in"].to_string(), "[]");
    assert_eq!(live["max_pressure"].to_string(), "1");
}

#[test]
fn empty_and_single_block_functions() {
    let empty = TestFunction::from_edges(0, &[]);
    let mut ctx: Analyses<TestFunction> = Analyses::new();
    let dump = ctx.dump(&empty, AnalysisSet::ALL, &Namer::default());
    assert_eq!(
        dump,
        "dominators:\npost-dominators:\nloops:\nintervals:\n  limit graph: 0 nodes (reducible)\n\
         liveness:\n  max pressure 0\ndef-use:\n"
    );

    let mut one = TestFunction::from_edges(1, &[]);
    one.inst(0, &[0, 0], &[1, 1]);
    let mut ctx: Analyses<TestFunction> = Analyses::new();
    ctx.ensure(&one, AnalysisSet::ALL);
    let live = ctx.get_liveness().unwrap();
    // A register written twice by one instruction is counted once.
    assert_eq!(live.pressure_at(InstId(0)), 1);
    assert_eq!(regs(live.live_in(bb(0))), vec![1]);
    let chains = ctx.get_def_use_chains().unwrap();
    assert!(chains.use_defs(InstId(0), 1).from_entry);
    assert!(chains.def_uses(InstId(0), 1).is_empty());
    assert_eq!(
        ctx.get_post_dominator_tree()
            .unwrap()
            .immediate_post_dominator(bb(0)),
        None
    );
}

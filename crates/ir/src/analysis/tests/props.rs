//! Property tests: every analysis on random functions against the naive definitions.

use std::collections::BTreeSet;

use proptest::prelude::*;

use super::naive;
use crate::analysis::dataflow::{solve, Analysis, Direction, ProgramPoint};
use crate::analysis::testing::{arbitrary, TestFunction};
use crate::analysis::{
    BitSet, DefUseChains, DominatorTree, IntervalAnalysis, Liveness, LoopAnalysis,
    PostDominatorTree,
};
use crate::entity::{BlockId, InstId, RegId};
use crate::graph::{ControlFlowGraph, RegisterEffects};

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 256,
        ..ProptestConfig::default()
    }
}

fn blocks(g: &TestFunction) -> impl DoubleEndedIterator<Item = BlockId> {
    (0..g.num_blocks()).map(BlockId::new)
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn dominators_match_path_removal(g in arbitrary::function(10, 1)) {
        let tree = DominatorTree::with_cfg(&g);
        let dom = naive::dominates(&g);
        let reach = naive::reachable_from(&g, g.entry().index());
        for a in blocks(&g) {
            prop_assert_eq!(tree.is_reachable(a), reach[a.index()]);
            for b in blocks(&g) {
                prop_assert_eq!(tree.dominates(a, b), dom[a.index()][b.index()], "{} dom {}", a, b);
            }
            // The immediate dominator is the strict dominator that all others dominate.
            match tree.idom(a) {
                None => prop_assert!(a == g.entry() || !reach[a.index()]),
                Some(i) => {
                    prop_assert!(dom[i.index()][a.index()] && i != a);
                    for s in blocks(&g).filter(|&s| s != a && dom[s.index()][a.index()]) {
                        prop_assert!(dom[s.index()][i.index()]);
                    }
                    prop_assert_eq!(tree.depth(a), tree.depth(i).map(|d| d + 1));
                }
            }
        }
    }

    #[test]
    fn post_dominators_match_path_removal_on_the_reverse_graph(g in arbitrary::function(10, 1)) {
        let tree = PostDominatorTree::with_cfg(&g);
        let sources = tree.virtual_exit_sources().to_vec();
        let real = naive::reaches_real_exit(&g);
        // The virtual edges: only from blocks that cannot reach an exit, at most one per
        // cycle of such blocks, and each from a block that every block it reaches can
        // reach back (a terminal component).
        for &s in &sources {
            prop_assert!(!real[s.index()]);
            let from_s = naive::reachable_from(&g, s.index());
            for x in blocks(&g).filter(|x| from_s[x.index()]) {
                prop_assert!(naive::reachable_from(&g, x.index())[s.index()]);
            }
            for &t in sources.iter().filter(|&&t| t != s) {
                prop_assert!(!from_s[t.index()]);
            }
        }
        let pdom = naive::post_dominates(&g, &sources);
        for a in blocks(&g) {
            for b in blocks(&g) {
                prop_assert_eq!(tree.post_dominates(a, b), pdom[a.index()][b.index()], "{} pdom {}", a, b);
            }
            if let Some(i) = tree.immediate_post_dominator(a) {
                prop_assert!(pdom[i.index()][a.index()] && i != a);
                for s in blocks(&g).filter(|&s| s != a && pdom[s.index()][a.index()]) {
                    prop_assert!(pdom[s.index()][i.index()]);
                }
            } else {
                // Reconverging at the exit: no block strictly post-dominates `a`.
                prop_assert!(blocks(&g).all(|s| s == a || !pdom[s.index()][a.index()]));
            }
        }
    }

    #[test]
    fn loops_match_the_definition(g in arbitrary::function(10, 1)) {
        let tree = DominatorTree::with_cfg(&g);
        let loops = LoopAnalysis::with_cfg(&g, &tree);
        let expected = naive::natural_loops(&g);
        prop_assert_eq!(loops.loops().len(), expected.len());
        for l in loops.loops() {
            let (latches, body) = &expected[&l.header];
            prop_assert_eq!(&l.latches.iter().copied().collect::<BTreeSet<_>>(), latches);
            prop_assert_eq!(&l.blocks.iter().copied().collect::<BTreeSet<_>>(), body);
            match l.parent {
                Some(p) => {
                    let parent = loops.get(p);
                    prop_assert!(l.blocks.iter().all(|&b| parent.contains(b)));
                    prop_assert!(parent.blocks.len() > l.blocks.len());
                    prop_assert_eq!(l.depth, parent.depth + 1);
                }
                None => prop_assert_eq!(l.depth, 1),
            }
            // The parent is the smallest other loop holding the header.
            let smallest = loops
                .loops()
                .iter()
                .filter(|o| o.header != l.header && o.contains(l.header))
                .map(|o| o.blocks.len())
                .min();
            prop_assert_eq!(l.parent.map(|p| loops.get(p).blocks.len()), smallest);
            for &(from, to) in &l.exits {
                prop_assert!(l.contains(from) && !l.contains(to));
            }
        }
        for b in blocks(&g) {
            let holding = loops.loops().iter().filter(|l| l.contains(b)).count() as u32;
            prop_assert_eq!(loops.loop_depth(b), holding);
        }
        prop_assert_eq!(loops.is_reducible(), naive::reducible_by_t1_t2(&g));
    }

    #[test]
    fn intervals_partition_into_single_entry_regions(g in arbitrary::function(12, 1)) {
        let intervals = IntervalAnalysis::with_cfg(&g);
        let reach = naive::reachable_from(&g, g.entry().index());
        prop_assert_eq!(intervals.is_reducible(), naive::reducible_by_t1_t2(&g));
        let levels = intervals.levels();
        prop_assert!(!levels.is_empty());
        for (k, level) in levels.iter().enumerate() {
            let edges = level.graph_edges();
            let preds = |n: u32| edges.iter().filter(move |e| e.1 == n).map(|e| e.0);
            let mut seen = BTreeSet::new();
            for i in level.intervals() {
                let nodes = level.nodes(i);
                prop_assert_eq!(nodes[0], level.header_node(i));
                for (pos, &node) in nodes.iter().enumerate() {
                    prop_assert!(seen.insert(node), "node {} in two intervals", node);
                    prop_assert_eq!(level.interval_of_node(node), Some(i));
                    // Single entry: every predecessor of a non-header node is inside, and
                    // joined before it.
                    if pos > 0 {
                        for p in preds(node) {
                            prop_assert!(nodes[..pos].contains(&p));
                        }
                    }
                }
                // Maximal: no outside node has all its predecessors inside.
                let root = if k == 0 { g.entry().0 } else { 0 };
                for other in 0..level.num_nodes() as u32 {
                    if nodes.contains(&other) || other == root || level.interval_of_node(other).is_none() {
                        continue;
                    }
                    prop_assert!(preds(other).any(|p| !nodes.contains(&p)));
                }
            }
            if k == 0 {
                let covered: BTreeSet<u32> = blocks(&g).filter(|b| reach[b.index()]).map(|b| b.0).collect();
                prop_assert_eq!(&seen, &covered);
            } else {
                prop_assert_eq!(seen.len(), levels[k - 1].num_intervals());
            }
            for b in blocks(&g) {
                let expected = if k == 0 {
                    level.interval_of_node(b.0).filter(|_| reach[b.index()])
                } else {
                    levels[k - 1].interval_of_block(b).and_then(|i| level.interval_of_node(i.0))
                };
                prop_assert_eq!(level.interval_of_block(b), expected);
            }
            for i in level.intervals() {
                let header = level.header_block(i);
                prop_assert_eq!(level.interval_of_block(header), Some(i));
            }
            // The sequence shrinks until the limit graph.
            if k + 1 < levels.len() {
                let self_loop = edges.iter().any(|e| e.0 == e.1);
                prop_assert!(level.num_intervals() < seen.len() || self_loop);
            } else {
                prop_assert_eq!(level.num_intervals(), seen.len());
            }
        }
    }

    #[test]
    fn liveness_matches_path_search(g in arbitrary::function(8, 5)) {
        let live = Liveness::with_function(&g);
        let regs: Vec<RegId> = (0..g.num_regs()).map(RegId::new).collect();
        let mut max = 0;
        for b in blocks(&g) {
            let insts = g.block_insts(b);
            let at = |k: usize| -> BTreeSet<RegId> {
                regs.iter().copied().filter(|&r| naive::live_at(&g, (b.index(), k), r)).collect()
            };
            let set = |s: &BitSet<RegId>| s.iter().collect::<BTreeSet<_>>();
            prop_assert_eq!(set(live.live_in(b)), at(0));
            prop_assert_eq!(set(live.live_out(b)), at(insts.len()));
            let after = live.live_after_each(&g, b);
            let mut block_max = at(0).len().max(at(insts.len()).len());
            for (k, &inst) in insts.iter().enumerate() {
                let live_after = at(k + 1);
                prop_assert_eq!(set(&after[k]), live_after.clone());
                let kills = !g.defs_are_partial(inst);
                for (j, &r) in g.uses(inst).iter().enumerate() {
                    let dead = (kills && g.defs(inst).contains(&r)) || !live_after.contains(&r);
                    prop_assert_eq!(live.is_dead_after(inst, j), dead, "{} operand {}", inst, j);
                }
                let written: BTreeSet<RegId> = live_after.iter().chain(g.defs(inst)).copied().collect();
                let pressure = at(k).len().max(written.len());
                prop_assert_eq!(live.pressure_at(inst) as usize, pressure);
                block_max = block_max.max(pressure);
            }
            prop_assert_eq!(live.block_pressure(b) as usize, block_max);
            max = max.max(block_max);
        }
        prop_assert_eq!(live.max_pressure() as usize, max);
    }

    #[test]
    fn reaching_definitions_match_path_search(g in arbitrary::function(8, 4)) {
        let chains = DefUseChains::with_function(&g);
        let loc = naive::locations(&g);
        let entry = (g.entry().index(), 0);
        let mut expected_def_uses: std::collections::BTreeMap<(InstId, usize), Vec<(InstId, u32)>> =
            Default::default();
        for (&inst, &point) in &loc {
            for (j, &r) in g.uses(inst).iter().enumerate() {
                let chain = chains.use_defs(inst, j);
                let reach = naive::reachable_from(&g, g.entry().index());
                let from_entry = reach[point.0] && naive::value_reaches(&g, entry, point, r);
                prop_assert_eq!(chain.from_entry, from_entry, "{} operand {}", inst, j);
                let mut defs = BTreeSet::new();
                for (&d, &dp) in &loc {
                    for (m, &dr) in g.defs(d).iter().enumerate() {
                        if dr == r && naive::value_reaches(&g, naive::after(dp), point, r) {
                            defs.insert(d);
                            expected_def_uses.entry((d, m)).or_default().push((inst, j as u32));
                        }
                    }
                }
                prop_assert_eq!(chain.defs.iter().copied().collect::<BTreeSet<_>>(), defs);
                prop_assert!(chain.defs.windows(2).all(|w| w[0] < w[1]));
            }
        }
        for &d in loc.keys() {
            for m in 0..g.defs(d).len() {
                let got: Vec<(InstId, u32)> = chains.def_uses(d, m).iter().map(|u| (u.inst, u.operand)).collect();
                let mut want = expected_def_uses.remove(&(d, m)).unwrap_or_default();
                want.sort();
                prop_assert_eq!(got, want, "{} def {}", d, m);
            }
        }
    }

    #[test]
    fn cursor_agrees_with_block_walks(g in arbitrary::function(8, 5)) {
        let results = solve(crate::analysis::liveness::LiveRegisters, &g);
        let live = Liveness::with_function(&g);
        let mut cursor = results.cursor(&g);
        // Seek in a scrambled order so the cursor must both reset and advance.
        for b in blocks(&g).rev() {
            let after = live.live_after_each(&g, b);
            let n = g.block_insts(b).len();
            for k in (0..n).rev().chain(0..n) {
                prop_assert_eq!(cursor.seek_after(b, k), &after[k]);
            }
            prop_assert_eq!(cursor.seek_to_block_start(b), live.live_in(b));
            prop_assert_eq!(cursor.seek_to_block_end(b), live.live_out(b));
        }
        let forward = solve(WrittenRegisters, &g);
        let mut cursor = forward.cursor(&g);
        for b in blocks(&g) {
            let n = g.block_insts(b).len();
            for k in (0..=n).rev() {
                let expected: BTreeSet<RegId> = (0..g.num_regs())
                    .map(RegId::new)
                    .filter(|&r| possibly_written(&g, (b.index(), k), r))
                    .collect();
                prop_assert_eq!(cursor.seek(ProgramPoint { block: b, index: k }).iter().collect::<BTreeSet<_>>(), expected);
            }
        }
    }
}

/// A forward test problem: registers some instruction may have written on a path from the
/// entry to this point.
struct WrittenRegisters;

impl<G: RegisterEffects + ?Sized> Analysis<G> for WrittenRegisters {
    type Domain = BitSet<RegId>;
    const DIRECTION: Direction = Direction::Forward;
    fn bottom_value(&self, g: &G) -> BitSet<RegId> {
        BitSet::new_empty(g.num_regs())
    }
    fn initialize_boundary(&self, _g: &G, _state: &mut BitSet<RegId>) {}
    fn apply_inst_effect(&self, g: &G, state: &mut BitSet<RegId>, inst: InstId) {
        state.extend(g.defs(inst).iter().copied());
    }
}

/// Some path into `point` passes an instruction writing `r`. (The search is told about a
/// register nothing writes, so no instruction stops it.)
fn possibly_written(g: &TestFunction, point: (usize, usize), r: RegId) -> bool {
    naive::locations(g).iter().any(|(&i, &p)| {
        g.defs(i).contains(&r) && naive::value_reaches(g, naive::after(p), point, RegId(u32::MAX))
    })
}

#[test]
fn large_function_solves_without_blowup() {
    // 4000 blocks in nested loops over 3000 registers: must finish in well under a second
    // in an optimised test build; a quadratic solver would not.
    let n = 4000u32;
    let mut edges = Vec::new();
    for b in 0..n - 1 {
        edges.push((b, b + 1));
        if b % 10 == 9 {
            edges.push((b, b - 9));
        }
        if b % 100 == 99 {
            edges.push((b, b - 99));
        }
    }
    let mut g = TestFunction::from_edges(n as usize, &edges);
    for b in 0..n {
        let r = (b * 7) % 3000;
        g.inst(b, &[r], &[(r + 1) % 3000, (r + 1500) % 3000]);
        g.inst(b, &[(r + 2) % 3000], &[r]);
    }
    let start = std::time::Instant::now();
    let live = Liveness::with_function(&g);
    let chains = DefUseChains::with_function(&g);
    let elapsed = start.elapsed();
    assert!(live.max_pressure() > 0);
    assert!(!chains.use_defs(InstId(1), 0).defs.is_empty());
    assert!(elapsed.as_secs() < 20, "analyses took {elapsed:?}");
}

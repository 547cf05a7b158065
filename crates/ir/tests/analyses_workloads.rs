//! Runs every analysis on every function of every PTX file under `workloads/ptx/` (what
//! nvcc and clang really emit) and checks the facts that must hold of any function, so a
//! panic or an inconsistency on real code shows up here rather than in a pass.

mod common;

use ir::analysis::{Analyses, AnalysisSet};
use ir::{BlockId, ControlFlowGraph, Function, RegisterEffects};

fn check(f: &Function) -> Vec<String> {
    let mut problems = Vec::new();
    let mut analyses: Analyses<Function> = Analyses::new();
    analyses.ensure(f, AnalysisSet::ALL);
    let dom = analyses.get_dominator_tree().expect("computed");
    let pdom = analyses.get_post_dominator_tree().expect("computed");
    let loops = analyses.get_loop_analysis().expect("computed");
    let intervals = analyses.get_interval_analysis().expect("computed");
    let live = analyses.get_liveness().expect("computed");
    let chains = analyses.get_def_use_chains().expect("computed");
    let blocks = (0..f.num_blocks()).map(BlockId::new);

    for b in blocks.clone().filter(|&b| dom.is_reachable(b)) {
        if !dom.dominates(f.entry(), b) {
            problems.push(format!("entry does not dominate {b}"));
        }
        if let Some(p) = pdom.immediate_post_dominator(b) {
            if !pdom.strictly_post_dominates(p, b) {
                problems.push(format!("ipdom({b}) = {p} does not post-dominate it"));
            }
        }
    }
    for l in loops.loops() {
        if l.blocks.iter().any(|&b| !dom.dominates(l.header, b)) {
            problems.push(format!(
                "loop at {} holds a block its header does not dominate",
                l.header
            ));
        }
    }
    if loops.is_reducible() != intervals.is_reducible() {
        problems.push("loops and intervals disagree on reducibility".to_string());
    }
    // Liveness and reaching definitions agree: a register live into the entry is read
    // somewhere with the entry's (undefined) value reaching the read, and the converse.
    let live_at_entry: Vec<u32> = live.live_in(f.entry()).iter().map(|r| r.0).collect();
    let mut read_undefined: Vec<u32> = Vec::new();
    for b in blocks.clone().filter(|&b| dom.is_reachable(b)) {
        for &i in f.block_insts(b) {
            for (k, r) in f.uses(i).iter().enumerate() {
                if chains.use_defs(i, k).from_entry {
                    read_undefined.push(r.0);
                }
            }
        }
    }
    read_undefined.sort();
    read_undefined.dedup();
    if live_at_entry != read_undefined {
        problems.push(format!(
            "live into the entry {live_at_entry:?} but read undefined {read_undefined:?}"
        ));
    }
    // Every read in reachable code sees some definition (possibly the entry's), and the
    // use-def and def-use chains are the same relation read both ways.
    for b in blocks.filter(|&b| dom.is_reachable(b)) {
        for &i in f.block_insts(b) {
            for (k, &r) in f.uses(i).iter().enumerate() {
                let chain = chains.use_defs(i, k);
                if chain.defs.is_empty() && !chain.from_entry {
                    problems.push(format!("{i} operand {k} is reached by no definition"));
                }
                for &d in chain.defs {
                    let listed = f.defs(d).iter().enumerate().any(|(m, &dr)| {
                        dr == r
                            && chains
                                .def_uses(d, m)
                                .iter()
                                .any(|u| u.inst == i && u.operand as usize == k)
                    });
                    if !listed {
                        problems.push(format!("{d} reaches {i} operand {k} only one way"));
                    }
                }
            }
        }
    }
    if live.max_pressure() as usize > f.num_regs() {
        problems.push(format!(
            "pressure {} above {} registers",
            live.max_pressure(),
            f.num_regs()
        ));
    }
    problems
}

#[test]
fn analyses_hold_on_every_workload_function() {
    let root = common::workloads_ptx_dir();
    let files = common::ptx_files(&root);
    assert!(!files.is_empty(), "no .ptx files under {}", root.display());
    let mut failures = Vec::new();
    let mut functions = 0;
    for path in &files {
        let name = path.display().to_string();
        let source = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{name}: {e}"));
        let Ok(module) = ptx::parse(&name, &source) else {
            continue; // the front end's own tests report this
        };
        let Ok(program) = ir::lower(&module, &name, &source) else {
            continue;
        };
        for f in program.functions.iter().filter(|f| f.has_body) {
            functions += 1;
            for p in check(f) {
                failures.push(format!("{name}: {}: {p}", f.name));
            }
        }
    }
    assert!(functions > 0);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

//! The register-file passes (strands, ORF/LRF allocation, reuse distance, register-usage
//! profile) on every function of every workload's PTX (`workloads/ptx/{nvcc,clang}`),
//! checking invariants that an independent recomputation can confirm. Fails if no PTX is
//! found, so it cannot pass by finding nothing.

use std::collections::VecDeque;

mod common;

use compiler::strands::{StrandConfig, Strands};
use ir::{ControlFlowGraph, Function, InstId, Op, Operand, RegisterEffects};

/// Every function with a body of every workload, with a name for messages.
fn workload_functions() -> Vec<(String, ir::Program)> {
    let files = common::nvcc_and_clang_ptx();
    assert!(
        !files.is_empty(),
        "no PTX under {}/{{nvcc,clang}}",
        common::workloads_dir().join("ptx").display()
    );
    files
        .iter()
        .map(|p| (p.display().to_string(), common::load(p)))
        .collect()
}

fn successors(f: &Function, inst: InstId) -> Vec<InstId> {
    compiler::strands::successors(f, inst).collect()
}

/// Strand invariants, each checked independently of how the pass placed the boundaries.
fn check_strands(where_: &str, f: &Function, s: &Strands, config: &StrandConfig) {
    let n = f.num_insts();
    // Every backward branch ends a strand, and so does every predecessor of its target.
    for i in 0..n {
        let id = InstId::new(i);
        if !matches!(f.inst(id).op, Op::Bra { .. }) {
            continue;
        }
        for t in f.srcs(id).iter().filter_map(|o| match o {
            Operand::Block(b) => Some(*b),
            _ => None,
        }) {
            let target = f.block(t);
            let from = f.block(f.block_of(id).expect("block"));
            if target.start <= from.start {
                assert!(
                    s.ends_strand(id),
                    "{where_}: backward branch i{i} does not end a strand"
                );
                for &p in f.predecessors(t) {
                    let last = InstId(f.block(p).end - 1);
                    assert!(
                        s.ends_strand(last),
                        "{where_}: {last} enters a loop header mid-strand"
                    );
                }
            }
        }
        if matches!(f.inst(id).op, Op::Ret { .. } | Op::Exit) {
            assert!(
                s.ends_strand(id),
                "{where_}: i{i} exits without ending its strand"
            );
        }
    }
    // The bit is per instruction: a block begins a strand on all incoming edges or none.
    for b in 0..f.blocks.len() {
        let preds = f.predecessors(ir::BlockId::new(b));
        let ends: Vec<bool> = preds
            .iter()
            .map(|&p| s.ends_strand(InstId(f.block(p).end - 1)))
            .collect();
        assert!(
            ends.iter().all(|&e| e) || ends.iter().all(|&e| !e),
            "{where_}: bb{b} begins a strand on some incoming edges only"
        );
    }
    // Strands are acyclic: Kahn's algorithm over the edges inside strands visits all.
    let mut indegree = vec![0u32; n];
    for i in 0..n {
        for t in s.successors_in_strand(f, InstId::new(i)) {
            indegree[t.index()] += 1;
        }
    }
    let mut queue: VecDeque<usize> = (0..n).filter(|&i| indegree[i] == 0).collect();
    let mut seen = 0;
    while let Some(i) = queue.pop_front() {
        seen += 1;
        for t in s.successors_in_strand(f, InstId::new(i)) {
            indegree[t.index()] -= 1;
            if indegree[t.index()] == 0 {
                queue.push_back(t.index());
            }
        }
    }
    assert_eq!(seen, n, "{where_}: a strand contains a cycle");
    // Edges inside a strand join instructions of the same strand number.
    for i in 0..n {
        for t in s.successors_in_strand(f, InstId::new(i)) {
            assert_eq!(
                s.strand_of(InstId::new(i)),
                s.strand_of(t),
                "{where_}: i{i} -> {t}"
            );
        }
    }
    // Every path from a long-latency result to a read or overwrite of its register passes
    // a point where the warp waits, and every wait begins a strand.
    for i in 0..n {
        let id = InstId::new(i);
        if s.waits_before(id) {
            let starts = i == 0
                || f.blocks.iter().enumerate().any(|(b, blk)| {
                    blk.start == i as u32
                        && f.predecessors(ir::BlockId::new(b))
                            .iter()
                            .all(|&p| s.ends_strand(InstId(f.block(p).end - 1)))
                })
                || (f.block_of(id).map(|b| f.block(b).start) != Some(i as u32)
                    && s.ends_strand(InstId::new(i - 1)));
            assert!(starts, "{where_}: the warp waits before i{i} mid-strand");
        }
        let long = compiler::inst_info::result_latency(
            &f.inst(id).op,
            config.shared_memory_is_long_latency,
        ) == compiler::inst_info::ResultLatency::Long;
        if !long || f.defs(id).is_empty() {
            continue;
        }
        let regs = f.defs(id).to_vec();
        let mut seen = vec![false; n];
        let mut work: Vec<InstId> = successors(f, id);
        while let Some(x) = work.pop() {
            if seen[x.index()] || s.waits_before(x) {
                continue;
            }
            seen[x.index()] = true;
            let touches = f.uses(x).iter().chain(f.defs(x)).any(|r| regs.contains(r));
            assert!(
                !touches,
                "{where_}: {x} touches the result of long-latency i{i} without a wait"
            );
            let waits_after = matches!(f.inst(x).op, Op::Call(_))
                || (config.barriers_end_strands
                    && matches!(
                        f.inst(x).op,
                        Op::Bar {
                            kind: ir::op::BarrierKind::Sync
                                | ir::op::BarrierKind::RedPopc
                                | ir::op::BarrierKind::Red(_),
                            ..
                        }
                    ));
            if !waits_after {
                work.extend(successors(f, x));
            }
        }
    }
}

#[test]
fn strands_of_every_workload_function_hold_their_invariants() {
    let mut functions = 0;
    for (name, program) in workload_functions() {
        for f in program.functions.iter().filter(|f| f.has_body) {
            for config in [
                StrandConfig::default(),
                StrandConfig {
                    shared_memory_is_long_latency: true,
                    barriers_end_strands: false,
                },
            ] {
                let s = Strands::compute(f, &config);
                check_strands(&format!("{name} {}", f.name), f, &s, &config);
            }
            functions += 1;
        }
    }
    assert!(functions > 0);
}

#[test]
fn orf_lrf_allocation_of_every_workload_function_checks() {
    use compiler::inst_info::Datapath;
    use compiler::orf_lrf::{LrfMode, OrfLrfConfig, OrfLrfReport, ReadFrom};
    let mut configs = Vec::new();
    for orf_entries in [0, 1, 2, 3, 5, 8] {
        for lrf in [LrfMode::None, LrfMode::Unified, LrfMode::Split] {
            configs.push(OrfLrfConfig {
                orf_entries,
                lrf,
                ..OrfLrfConfig::default()
            });
        }
    }
    configs.push(OrfLrfConfig {
        partial_range: false,
        read_operands: false,
        forward_branches: false,
        ..OrfLrfConfig::default()
    });
    configs.push(OrfLrfConfig {
        registers: compiler::AllocConfig::with_max_registers(32),
        ..OrfLrfConfig::default()
    });
    let (mut functions, mut lrf_reads, mut orf_reads, mut spilled) = (0, 0, 0, 0);
    for (name, program) in workload_functions() {
        for config in &configs {
            // `new` runs the independent checker on every function and fails if it objects.
            let report = OrfLrfReport::new(&program, config)
                .unwrap_or_else(|e| panic!("{name} {config:?}: {e}"));
            for (f, rf) in program
                .functions
                .iter()
                .filter(|f| f.has_body)
                .zip(&report.functions)
            {
                let where_ = format!(
                    "{name} {} orf {} lrf {:?}",
                    f.name, config.orf_entries, config.lrf
                );
                assert_eq!(f.name, rf.name);
                spilled += usize::from(rf.spill_code);
                if !rf.spill_code {
                    // Every register operand is annotated.
                    let uses: usize = (0..f.num_insts())
                        .map(|i| f.uses(InstId::new(i)).len())
                        .sum();
                    let annotated: usize = rf.instructions.iter().map(|i| i.reads.len()).sum();
                    assert_eq!(uses, annotated, "{where_}");
                }
                for inst in &rf.instructions {
                    for o in &inst.reads {
                        match o.read {
                            Some(ReadFrom::Lrf { .. }) => {
                                assert_eq!(
                                    inst.unit,
                                    Datapath::Alu,
                                    "{where_} i{}: LRF read",
                                    inst.inst
                                );
                                lrf_reads += 1;
                            }
                            Some(ReadFrom::Orf { entry }) => {
                                assert!(entry < config.orf_entries, "{where_} i{}", inst.inst);
                                orf_reads += 1;
                            }
                            Some(_) => {}
                            None => panic!("{where_} i{}: read without a level", inst.inst),
                        }
                    }
                    for o in &inst.writes {
                        let w = o
                            .write
                            .unwrap_or_else(|| panic!("{where_} i{}: no level", inst.inst));
                        if w.lrf.is_some() {
                            assert_eq!(
                                inst.unit,
                                Datapath::Alu,
                                "{where_} i{}: LRF write",
                                inst.inst
                            );
                        }
                        assert!(w.orf.is_none_or(|e| e < config.orf_entries), "{where_}");
                        assert!(
                            w.pred || w.mrf || w.orf.is_some() || w.lrf.is_some(),
                            "{where_}"
                        );
                    }
                }
                if config.orf_entries == 0 && config.lrf == LrfMode::None {
                    assert!(
                        (rf.static_counts.normalized_energy() - 1.0).abs() < 1e-9,
                        "{where_}"
                    );
                } else {
                    assert!(
                        rf.static_counts.energy_pj <= rf.static_counts.baseline_energy_pj + 1e-9,
                        "{where_}"
                    );
                }
                functions += 1;
            }
        }
    }
    assert!(functions > 0 && lrf_reads > 0 && orf_reads > 0);
    assert!(spilled > 0, "a cap of 32 registers spills somewhere");
}

/// The shortest distance from `from` to the next read of `reg`, by breadth-first search
/// over instructions: the naive definition the dataflow solution must equal.
fn next_read_by_search(f: &Function, from: InstId, reg: ir::RegId) -> Option<u32> {
    let n = f.num_insts();
    let mut seen = vec![false; n];
    let mut frontier: VecDeque<(InstId, u32)> =
        successors(f, from).into_iter().map(|s| (s, 1)).collect();
    while let Some((x, d)) = frontier.pop_front() {
        if std::mem::replace(&mut seen[x.index()], true) {
            continue;
        }
        if f.uses(x).contains(&reg) {
            return Some(d);
        }
        if f.defs(x).contains(&reg) && !f.defs_are_partial(x) {
            continue;
        }
        frontier.extend(successors(f, x).into_iter().map(|s| (s, d + 1)));
    }
    None
}

#[test]
fn reuse_distances_of_every_workload_function_match_a_breadth_first_search() {
    use compiler::reuse_distance::{ReuseDistanceConfig, ReuseDistanceReport, ReuseDistances};
    let (mut operands, mut near) = (0u64, 0u64);
    for (name, program) in workload_functions() {
        for f in program.functions.iter().filter(|f| f.has_body) {
            let d = ReuseDistances::compute(f);
            for i in 0..f.num_insts() {
                let id = InstId::new(i);
                let pred = |r: ir::RegId| f.reg(r).class == ir::RegClass::Pred;
                let overwrites = |r: ir::RegId| !f.defs_are_partial(id) && f.defs(id).contains(&r);
                for (k, &r) in f.uses(id).iter().enumerate() {
                    let expected = if pred(r) || overwrites(r) {
                        None
                    } else {
                        next_read_by_search(f, id, r)
                    };
                    assert_eq!(
                        d.use_distances(id)[k],
                        expected,
                        "{name} {} i{i} use {k}",
                        f.name
                    );
                }
                for (k, &r) in f.defs(id).iter().enumerate() {
                    let expected = if pred(r) {
                        None
                    } else {
                        next_read_by_search(f, id, r)
                    };
                    assert_eq!(
                        d.def_distances(id)[k],
                        expected,
                        "{name} {} i{i} def {k}",
                        f.name
                    );
                }
            }
        }
        let report = ReuseDistanceReport::new(&program, &ReuseDistanceConfig::default());
        assert_eq!(
            report.sources.counts.iter().sum::<u64>(),
            report.sources.total
        );
        operands += report.sources.total + report.destinations.total;
        near += report.sources.near + report.destinations.near;
    }
    assert!(operands > 0 && near > 0 && near < operands);
}

/// The static register-usage profile of every workload: its histograms account for every
/// definition, and every read-once value has a lifetime. Run with `--nocapture` to see
/// the figures.
#[test]
fn static_register_profile_of_the_workloads() {
    use compiler::register_profile::{RegisterProfile, StaticRegisterProfile};
    let mut by_compiler: std::collections::BTreeMap<String, RegisterProfile> = Default::default();
    for (name, program) in workload_functions() {
        let report = StaticRegisterProfile::new(&program);
        let defs: u64 = program
            .functions
            .iter()
            .filter(|f| f.has_body)
            .map(|f| {
                (0..f.num_insts())
                    .map(|i| f.defs(InstId::new(i)).len() as u64)
                    .sum::<u64>()
            })
            .sum();
        let t = &report.total;
        assert_eq!(t.registers.values + t.predicates.values, defs, "{name}");
        for h in [&t.registers, &t.predicates] {
            assert_eq!(h.reads.iter().sum::<u64>(), h.values, "{name}");
            assert_eq!(
                h.read_once_lifetime.iter().sum::<u64>(),
                h.reads[1],
                "{name}"
            );
        }
        let compiler = if name.contains("/clang/") {
            "clang"
        } else {
            "nvcc"
        };
        by_compiler
            .entry(compiler.to_string())
            .or_default()
            .merge(t);
    }
    let mut all = RegisterProfile::default();
    for (compiler, p) in &by_compiler {
        println!("{compiler}:\n{p}");
        all.merge(p);
    }
    println!("all:\n{all}");
    assert!(all.registers.values > 1000);
}

//! LTRF register-intervals and bank-aware renumbering on every kernel of every workload's
//! PTX (nvcc and clang): for N = 8, 16 and 32 registers per interval with 16 banks, every
//! interval must be a valid single-entry region within the bound (the interval checker),
//! the renumbered allocation must pass the renumbering checker, and renumbering must not
//! add conflicts overall. With `--nocapture` it prints the conflict-free fractions next to
//! the paper's (LTRF §7.3, Figure 16).

use std::path::{Path, PathBuf};

mod common;

use common::{load, nvcc_and_clang_ptx, workloads_dir};
use compiler::ltrf::{
    architectural_function, check_intervals, ltrf_with_numbering, numbering_for, CellView,
    FunctionLtrf, LtrfConfig, NumberingKind, RenumberUnit,
};
use compiler::regalloc::Location;
use ir::{InstId, RegisterEffects};

/// The renumbered function written with architectural register names passes the IR
/// verifier, and every operand of every instruction names the register the renumbered
/// allocation gives the virtual register it had.
fn check_architectural(result: &FunctionLtrf, where_: &str) {
    let f = &result.function;
    let alloc = &result.renumbering.allocation;
    let g = architectural_function(f, alloc).unwrap_or_else(|e| panic!("{where_}: {e}"));
    if let Err(errors) = ir::verify(&g) {
        panic!("{where_}: architectural function fails the verifier: {errors:?}");
    }
    let number = |name: &str| -> u32 {
        name.trim_start_matches(|c: char| !c.is_ascii_digit())
            .parse()
            .unwrap()
    };
    for i in 0..f.num_insts() {
        let inst = InstId::new(i);
        let old = f.uses(inst).iter().chain(f.defs(inst));
        let new = g.uses(inst).iter().chain(g.defs(inst));
        for (&o, &n) in old.zip(new) {
            let expect = match alloc.location(o) {
                Location::Reg(r) => r.0,
                Location::Pred(p) => p.0,
                other => panic!("{where_}: {o} at {other}"),
            };
            assert_eq!(number(&g.reg(n).name), expect, "{where_} {inst}");
        }
    }
}

/// The paper's averages (§7.3): conflict-free prefetches before (LTRF) and after (LTRFconf).
const PAPER: [(u32, f64, f64); 3] = [(8, 0.58, 0.95), (16, 0.23, 0.88), (32, 0.094, 0.24)];

#[derive(Default)]
struct Tally {
    kernels: u32,
    mean_before: f64,
    mean_after: f64,
    /// After renaming whole registers (a permutation).
    mean_permuted: f64,
    /// Conflict-free intervals before, after, after a permutation; intervals.
    pooled: [u32; 4],
    intervals: u32,
    instructions: u64,
    min_len: u32,
    max_len: u32,
    working_set: f64,
}

#[test]
fn every_workload_kernel_forms_intervals_and_renumbers() {
    let files = nvcc_and_clang_ptx();
    assert!(
        !files.is_empty(),
        "no PTX under {}",
        workloads_dir().join("ptx").display()
    );
    let mut tallies: Vec<[Tally; 3]> = Vec::new();
    let mut functions = 0;
    let mut kernels_with_conflicts = 0;
    for (n_index, &(n, _, _)) in PAPER.iter().enumerate() {
        let _ = n_index;
        let mut per_compiler: [Tally; 3] = Default::default();
        for path in &files {
            let compiler_index = usize::from(path.to_string_lossy().contains("/clang/"));
            let program = load(path);
            for f in program.functions.iter().filter(|f| f.has_body) {
                let where_ = format!("{} {} N={n}", path.display(), f.name);
                let (g, numbering) = numbering_for(f, NumberingKind::Allocated, None)
                    .unwrap_or_else(|e| panic!("{where_}: {e}"));
                let config = LtrfConfig {
                    registers_per_interval: n,
                    ..LtrfConfig::default()
                };
                let permuted = ltrf_with_numbering(
                    Some(&program),
                    g.clone(),
                    numbering.clone(),
                    &LtrfConfig {
                        renumber_unit: RenumberUnit::Register,
                        ..config.clone()
                    },
                )
                .unwrap_or_else(|e| panic!("{where_} (permutation): {e}"))
                .report;
                let result = ltrf_with_numbering(Some(&program), g, numbering, &config)
                    .unwrap_or_else(|e| panic!("{where_}: {e}"));
                // Independent re-checks of the invariants the pass already checked.
                let view = CellView::new(&result.function, &result.before).unwrap();
                check_intervals(&view, &result.intervals)
                    .unwrap_or_else(|e| panic!("{where_}: {e}"));
                let r = &result.report;
                for d in &r.interval_details {
                    assert!(
                        d.working_set.len() <= n as usize
                            || d.kind == compiler::ltrf::IntervalKind::Oversized,
                        "{where_}: interval {} has {} registers",
                        d.id,
                        d.working_set.len()
                    );
                    assert!(d.working_set_after.len() <= d.working_set.len(), "{where_}");
                }
                if n == 16 {
                    check_architectural(&result, &where_);
                }
                let before: u32 = r.interval_details.iter().map(|d| d.conflicts_before).sum();
                let after: u32 = r.interval_details.iter().map(|d| d.conflicts_after).sum();
                assert!(
                    after <= before,
                    "{where_}: renumbering added conflicts ({before} -> {after})"
                );
                let after_permuted: u32 = permuted
                    .interval_details
                    .iter()
                    .map(|d| d.conflicts_after)
                    .sum();
                assert!(
                    after_permuted <= before,
                    "{where_}: the permutation added conflicts"
                );
                if before > 0 {
                    kernels_with_conflicts += 1;
                }
                functions += 1;
                if f.kind != ir::FunctionKind::Kernel || r.prefetching_intervals == 0 {
                    continue;
                }
                for index in [compiler_index, 2] {
                    let t = &mut per_compiler[index];
                    t.kernels += 1;
                    t.mean_before += r.conflict_free_fraction_before;
                    t.mean_after += r.conflict_free_fraction_after;
                    t.mean_permuted += permuted.conflict_free_fraction_after;
                    t.pooled[0] += r.conflicts_before.0[0];
                    t.pooled[1] += r.conflicts_after.0[0];
                    t.pooled[2] += permuted.conflicts_after.0[0];
                    t.pooled[3] += r.prefetching_intervals;
                    t.intervals += r.intervals;
                    t.instructions += u64::from(r.instructions);
                    t.min_len = if t.kernels == 1 {
                        r.instructions_per_interval.min
                    } else {
                        t.min_len.min(r.instructions_per_interval.min)
                    };
                    t.max_len = t.max_len.max(r.instructions_per_interval.max);
                    t.working_set += r.working_set.avg * f64::from(r.intervals);
                }
            }
        }
        tallies.push(per_compiler);
    }
    assert!(functions > 0);
    assert!(
        kernels_with_conflicts > 0,
        "no kernel had a bank conflict to remove"
    );

    eprintln!("conflict-free prefetching intervals, 16 banks (mean of the kernels' fractions; pooled over all their intervals)");
    eprintln!(
        "{:>3} {:<6} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7}",
        "N",
        "ptx",
        "kernels",
        "before",
        "after",
        "perm.",
        "before",
        "after",
        "perm.",
        "paper",
        "paper"
    );
    eprintln!(
        "{:>3} {:<6} {:>7} {:>23} {:>23} {:>7} {:>7}",
        "", "", "", "mean over kernels", "pooled", "before", "after"
    );
    for (tally, &(n, paper_before, paper_after)) in tallies.iter().zip(&PAPER) {
        for (name, t) in ["nvcc", "clang", "all"].iter().zip(tally) {
            let k = f64::from(t.kernels.max(1));
            let pooled = |x: u32| 100.0 * f64::from(x) / f64::from(t.pooled[3].max(1));
            eprintln!(
                "{n:>3} {name:<6} {:>7} {:>6.1}% {:>6.1}% {:>6.1}% {:>6.1}% {:>6.1}% {:>6.1}% {:>6.1}% {:>6.1}%",
                t.kernels,
                100.0 * t.mean_before / k,
                100.0 * t.mean_after / k,
                100.0 * t.mean_permuted / k,
                pooled(t.pooled[0]),
                pooled(t.pooled[1]),
                pooled(t.pooled[2]),
                100.0 * paper_before,
                100.0 * paper_after,
            );
        }
    }
    eprintln!();
    eprintln!(
        "{:>3} {:<6} {:>9} {:>18} {:>9} {:>9} {:>16}",
        "N", "ptx", "intervals", "insts/interval avg", "min", "max", "working set avg"
    );
    for (tally, &(n, _, _)) in tallies.iter().zip(&PAPER) {
        for (name, t) in ["nvcc", "clang", "all"].iter().zip(tally) {
            let i = f64::from(t.intervals.max(1));
            eprintln!(
                "{n:>3} {name:<6} {:>9} {:>18.1} {:>9} {:>9} {:>16.1}",
                t.intervals,
                t.instructions as f64 / i,
                t.min_len,
                t.max_len,
                t.working_set / i,
            );
        }
    }
}

/// Unusual configurations must not break anything: one register per interval (almost every
/// instruction is oversized), one bank, banks that are not a power of two, blocked
/// mappings, the virtual numbering (renumbering then re-packs registers), a register cap
/// that forces spill code, and both renumbering units. Every result must pass both checkers (the pass runs them).
#[test]
fn odd_configurations_run_on_every_workload() {
    let files = nvcc_and_clang_ptx();
    assert!(!files.is_empty());
    let configs = [
        (1, 16, "interleaved", NumberingKind::Allocated, None),
        (5, 1, "interleaved", NumberingKind::Allocated, None),
        (12, 6, "blocked:3", NumberingKind::Allocated, None),
        (16, 16, "interleaved", NumberingKind::Virtual, None),
        (16, 32, "blocked:2", NumberingKind::Allocated, Some(24)),
        (7, 5, "interleaved", NumberingKind::Allocated, None),
    ];
    let mut runs = 0;
    for path in &files {
        let program = load(path);
        for (k, &(n, banks, mapping, numbering, max_registers)) in configs.iter().enumerate() {
            let config = LtrfConfig {
                registers_per_interval: n,
                banks,
                bank_mapping: mapping.parse().unwrap(),
                numbering,
                max_registers,
                // Whole registers renamed in every other configuration.
                renumber_unit: if k % 2 == 0 {
                    RenumberUnit::LiveRange
                } else {
                    RenumberUnit::Register
                },
                renumber_search_rounds: 20,
            };
            let report = compiler::ltrf::ltrf(&program, &config)
                .unwrap_or_else(|e| panic!("{} {config:?}: {e}", path.display()));
            for k in report.kernels.iter().chain(&report.device_functions) {
                assert!(k.registers_after <= k.registers, "{}", k.name);
                runs += 1;
            }
        }
    }
    assert!(runs > 0);
}

/// The golden tests of both passes exist (the shared golden harness would pass without
/// them).
#[test]
fn golden_files_exist_for_ltrf_and_liveness_bits() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    for pass in ["ltrf", "liveness-bits"] {
        let files: Vec<PathBuf> = std::fs::read_dir(root.join(pass))
            .unwrap_or_else(|e| panic!("tests/golden/{pass}: {e}"))
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "ptx"))
            .collect();
        assert!(!files.is_empty(), "no golden files for {pass}");
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            assert!(
                text.contains("==== expected output"),
                "{} has no expected output",
                f.display()
            );
        }
    }
}

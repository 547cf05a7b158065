//! Register allocation of every function of every workload's PTX (nvcc and clang output):
//! without a cap and under a cap of 32 registers (which forces spills on some kernels),
//! each allocation must pass the checker, and so must the function with its spill code
//! materialised (which must also pass the IR verifier).

mod common;

use common::{load, ptx_files_under, workloads_dir};
use compiler::regalloc::{
    allocate, check, insert_spill_code, registers_per_thread, AllocConfig, IrInput,
};

#[test]
fn every_workload_function_allocates_and_checks() {
    let files = ptx_files_under(&workloads_dir().join("ptx"));
    assert!(
        !files.is_empty(),
        "no PTX under {}",
        workloads_dir().display()
    );
    let (mut functions, mut spilled) = (0, 0);
    for path in &files {
        let program = load(path);
        for f in program.functions.iter().filter(|f| f.has_body) {
            let input = IrInput::new(f);
            for config in [AllocConfig::default(), AllocConfig::with_max_registers(32)] {
                let where_ = format!("{} {} {config:?}", path.display(), f.name);
                let alloc = allocate(&input, &config).unwrap_or_else(|e| panic!("{where_}: {e}"));
                check(&input, &alloc).unwrap_or_else(|e| panic!("{where_}: {e}"));
                if let Some(cap) = config.max_registers {
                    assert!(alloc.registers_used <= cap, "{where_}");
                }
                if alloc.spilled_vregs() > 0 {
                    spilled += 1;
                }
                let (g, galloc) =
                    insert_spill_code(f, &alloc).unwrap_or_else(|e| panic!("{where_}: {e}"));
                if let Err(errors) = ir::verify(&g) {
                    panic!("{where_}: spill code fails the verifier: {errors:?}");
                }
                check(&IrInput::new(&g), &galloc)
                    .unwrap_or_else(|e| panic!("{where_} with spill code: {e}"));
                assert_eq!(galloc.spilled_vregs(), 0);
            }
            functions += 1;
        }
    }
    assert!(functions > 0);
    // sgemm_regblock needs about 96 registers: a cap of 32 must spill somewhere.
    assert!(spilled > 0, "no function spilled under a cap of 32");
}

/// Registers per thread next to ptxas's counts for the nvcc PTX (run with `--nocapture` to
/// see the table). Every kernel in the table must be found.
#[test]
fn register_counts_next_to_ptxas() {
    let table = std::fs::read_to_string(workloads_dir().join("ptxas-registers.tsv"))
        .expect("workloads/ptxas-registers.tsv");
    let mut rows = 0;
    let (mut ours_total, mut ptxas_total) = (0u64, 0u64);
    eprintln!(
        "{:<16} {:<44} {:>6} {:>6} {:>6}",
        "workload", "kernel", "ptxas", "ours", "preds"
    );
    for line in table.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        let [workload, kernel, ptxas] = cols[..] else {
            panic!("bad row {line:?}")
        };
        let ptxas: u32 = ptxas.parse().expect("register count");
        let program = load(&workloads_dir().join(format!("ptx/nvcc/{workload}.ptx")));
        let counts = registers_per_thread(&program, &AllocConfig::default())
            .unwrap_or_else(|e| panic!("{workload}: {e}"));
        let k = counts
            .iter()
            .find(|k| k.name == kernel)
            .unwrap_or_else(|| panic!("{workload}: no kernel {kernel}"));
        eprintln!(
            "{workload:<16} {kernel:<44} {ptxas:>6} {:>6} {:>6}",
            k.registers, k.predicates
        );
        // An empty kernel (CUB's EmptyKernel is `ret;`) needs no register; ptxas reports
        // its minimum allocation, 4, for it.
        assert!(k.registers > 0 || ptxas <= 4, "{kernel}");
        ours_total += u64::from(k.registers);
        ptxas_total += u64::from(ptxas);
        rows += 1;
    }
    eprintln!("total: ptxas {ptxas_total}, ours {ours_total}");
    assert!(rows > 0);
}

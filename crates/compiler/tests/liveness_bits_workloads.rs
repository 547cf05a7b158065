//! Liveness bits on every function of every workload's PTX (nvcc and clang), under the
//! allocated and the virtual numbering: a dead bit (for the warp) is never set where plain
//! CFG liveness says the value is still needed, and divergence does clear some bits that
//! plain liveness would set. With `--nocapture` it prints the counts.

mod common;

use compiler::liveness_bits::{liveness_bits, LivenessBitsConfig};
use compiler::ltrf::NumberingKind;

#[test]
fn every_workload_function_gets_conservative_bits() {
    let files = common::nvcc_and_clang_ptx();
    assert!(!files.is_empty(), "no workload PTX found");
    for numbering in [NumberingKind::Allocated, NumberingKind::Virtual] {
        let config = LivenessBitsConfig {
            numbering,
            ..LivenessBitsConfig::default()
        };
        let (mut operands, mut thread, mut warp, mut kept, mut functions) = (0, 0, 0, 0, 0);
        for path in &files {
            let name = path.display().to_string();
            let program = common::load(path);
            let report = liveness_bits(&program, &config).unwrap_or_else(|e| panic!("{name}: {e}"));
            for f in &report.functions {
                for i in &f.instructions {
                    for o in &i.operands {
                        assert!(
                            o.dead_for_thread || !o.dead_after,
                            "{name} {} i{}: {} dead for the warp but not the thread",
                            f.name,
                            i.inst,
                            o.reg
                        );
                    }
                }
                functions += 1;
            }
            operands += report.general.operands;
            thread += report.general.dead_for_thread;
            warp += report.general.dead_after;
            kept += report.general.kept_for_divergence;
        }
        eprintln!(
            "{}: {functions} functions, {operands} register operands, {thread} dead for the thread, {warp} dead bits set, {kept} kept for divergence",
            numbering.as_str()
        );
        assert!(functions > 0);
        assert!(warp > 0, "no dead bit set anywhere");
        assert!(
            kept > 0,
            "divergence never mattered: the SIMT rule is untested on workloads"
        );
        assert_eq!(thread, warp + kept);
    }
}

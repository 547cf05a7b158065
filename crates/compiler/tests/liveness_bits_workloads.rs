//! Liveness bits on every function of every workload's PTX (nvcc and clang), under the
//! allocated and the virtual numbering: a dead bit (for the warp) is never set where plain
//! CFG liveness says the value is still needed, and divergence does clear some bits that
//! plain liveness would set. With `--nocapture` it prints the counts.

use std::path::{Path, PathBuf};

use compiler::liveness_bits::{liveness_bits, LivenessBitsConfig};
use compiler::ltrf::NumberingKind;

fn ptx_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads/ptx");
    let mut out = Vec::new();
    for compiler in ["nvcc", "clang"] {
        let Ok(entries) = std::fs::read_dir(dir.join(compiler)) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "ptx"))
            .collect();
        paths.sort();
        out.extend(paths);
    }
    out
}

#[test]
fn every_workload_function_gets_conservative_bits() {
    let files = ptx_files();
    assert!(!files.is_empty(), "no workload PTX found");
    for numbering in [NumberingKind::Allocated, NumberingKind::Virtual] {
        let config = LivenessBitsConfig {
            numbering,
            ..LivenessBitsConfig::default()
        };
        let (mut operands, mut thread, mut warp, mut kept, mut functions) = (0, 0, 0, 0, 0);
        for path in &files {
            let name = path.display().to_string();
            let source = std::fs::read_to_string(path).unwrap();
            let module = ptx::parse(&name, &source).unwrap();
            let program = ir::lower(&module, &name, &source).unwrap();
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

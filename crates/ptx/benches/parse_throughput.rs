//! Parse throughput on ~20 MB of realistic PTX: the checked-in nvcc/clang test PTX plus
//! any workload PTX, with module headers dropped and kernels renamed per copy, repeated.
//!
//! `cargo bench -p ptx --bench parse_throughput` prints MB/s for parse and for print.

use std::path::Path;
use std::time::{Duration, Instant};

const TARGET_BYTES: usize = 20 << 20;

fn ptx_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() && p.file_name().is_some_and(|n| n != "printed") {
            ptx_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "ptx") {
            out.push(p);
        }
    }
}

/// Module bodies without `.version`/`.target`/`.address_size` (only one of each is allowed).
fn bodies() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    ptx_files(&root.join("tests/data"), &mut files);
    ptx_files(&root.join("../../workloads/ptx"), &mut files);
    files.sort();
    files
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .map(|text| {
            text.lines()
                .filter(|l| {
                    let l = l.trim_start();
                    !(l.starts_with(".version")
                        || l.starts_with(".target")
                        || l.starts_with(".address_size"))
                })
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect()
}

fn synthesise() -> String {
    let bodies = bodies();
    assert!(!bodies.is_empty(), "no PTX found for the benchmark");
    let mut text = String::from(".version 7.8\n.target sm_86\n.address_size 64\n");
    let mut copy = 0usize;
    while text.len() < TARGET_BYTES {
        for body in &bodies {
            text.push_str(&body.replace(".entry ", &format!(".entry c{copy}_")));
            text.push('\n');
        }
        copy += 1;
    }
    text
}

fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut last = None;
    for _ in 0..runs {
        let start = Instant::now();
        let v = f();
        best = best.min(start.elapsed());
        last = Some(v);
    }
    (best, last.unwrap_or_else(|| unreachable!("runs > 0")))
}

fn main() {
    let text = synthesise();
    let mb = text.len() as f64 / 1e6;
    let (parse_time, module) = best_of(5, || ptx::parse("bench.ptx", &text));
    let module = match module {
        Ok(m) => m,
        Err(e) => panic!("benchmark input does not parse:\n{e}"),
    };
    let (print_time, printed) = best_of(5, || ptx::print(&module));
    println!(
        "parse: {:.1} MB in {:.3} s = {:.0} MB/s ({} module items)",
        mb,
        parse_time.as_secs_f64(),
        mb / parse_time.as_secs_f64(),
        module.items.len()
    );
    println!(
        "print: {:.1} MB in {:.3} s = {:.0} MB/s",
        printed.len() as f64 / 1e6,
        print_time.as_secs_f64(),
        printed.len() as f64 / 1e6 / print_time.as_secs_f64()
    );
}

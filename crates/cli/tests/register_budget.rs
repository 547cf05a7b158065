//! Recompilation for a larger register file, as a user runs it: on maxwell-ltrf,
//! `compiler.max_registers_per_thread = "from_capacity"` compiles sgemm_regblock (93
//! registers under the architecture's 255) for the occupancy-maximizing budget: 32 at
//! Table 2's #1, where it spills, and 255 at the 8x technologies, where it does not. The
//! stats give the kernel under the architecture's limit beside it. Cost (release, one
//! core): about 5 s.

mod common;

use common::{regsim, run_workload_stats};
use std::path::Path;

/// Runs sgemm_regblock on maxwell-ltrf under `sets`; the program must print PASS.
fn run(sets: &[&str]) -> serde_json::Value {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("register-budget-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let stats = dir.join(format!("{}.json", sets.join("_").replace(['/', '"'], "_")));
    let mut args = vec!["--gpu", "maxwell-ltrf", "--rf", "ltrf"];
    for s in sets {
        args.extend(["--set", s]);
    }
    run_workload_stats("sgemm_regblock", &args, &stats)
}

/// The registers per thread of sgemm_regblock's kernel as `regsim compile --emit
/// annotations` allocates them on maxwell-ltrf under `sets`.
fn compiled_registers(sets: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "compile",
        "workloads/ptx/nvcc/sgemm_regblock.ptx",
        "--emit",
        "annotations",
        "--json",
        "--gpu",
        "maxwell-ltrf",
        "--rf",
        "ltrf",
    ];
    for s in sets {
        args.extend(["--set", s]);
    }
    let out = regsim(&args);
    assert!(out.status.success(), "{sets:?}: {out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    v["kernels"][0]["registers"].clone()
}

fn occupancy(stats: &serde_json::Value) -> &serde_json::Value {
    &stats["kernels"][0]["occupancy"]
}

#[test]
fn recompilation_for_the_8x_file_removes_sgemm_regblocks_spills() {
    let rule = "compiler.max_registers_per_thread=from_capacity";
    let one = run(&[rule, "register_file.technology=1"]);
    let o = occupancy(&one);
    assert_eq!(o["registers_per_thread"], 32, "{o}");
    assert!(o["spill_slots"].as_u64().unwrap() > 0, "{o}");
    // `regsim compile --emit annotations` allocates under the same budget.
    assert_eq!(
        compiled_registers(&[rule, "register_file.technology=1"]),
        32
    );
    let before = &o["before_budget"];
    assert_eq!(before["budget"], 32, "{o}");
    assert_eq!(before["spill_slots"], 0, "{o}");
    assert!(before["registers_per_thread"].as_u64().unwrap() > 32, "{o}");

    let eight = run(&[rule, "register_file.technology=\"tfet-sram\""]);
    let o = occupancy(&eight);
    assert!(o.get("spill_slots").is_none(), "no spills at 8x: {o}");
    assert_eq!(o["before_budget"]["budget"], 255, "{o}");
    assert_eq!(
        o["registers_per_thread"], o["before_budget"]["registers_per_thread"],
        "{o}"
    );
    assert_eq!(
        compiled_registers(&[rule, "register_file.technology=\"tfet-sram\""]),
        o["registers_per_thread"]
    );
    // A fixed budget, and the architecture's (the default), as the runtime applies them.
    assert_eq!(
        compiled_registers(&["compiler.max_registers_per_thread=40"]),
        40
    );
    assert_eq!(compiled_registers(&[]), o["registers_per_thread"]);
    // Without the rule the program is compiled as ptxas would: nothing to compare.
    let plain = run(&["register_file.technology=1"]);
    assert!(occupancy(&plain).get("before_budget").is_none());
    assert!(occupancy(&plain).get("spill_slots").is_none());
}

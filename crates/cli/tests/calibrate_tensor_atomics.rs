//! `regsim calibrate`'s tensor-core and atomic rows (issue 25, item 5): a dependent chain
//! of `mma.sync` m16n8k16 and of `wmma.mma` m16n16k16, and a dependent chain of
//! `atom.add` on one global and one shared address. No published figure for them was
//! found for rtx-a6000 (docs/calibration.md), so its rows print the measurement with "no
//! published figure" (h100's compare with our run on Hopper silicon); the tests check
//! that they are measured, and measured as the configs' mechanisms say (the tensor
//! class's latency is the floor of a dependent mma).

use std::process::{Command, Output};

fn calibrate(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_regsim"))
        .arg("calibrate")
        .args(args)
        .env_remove("REGSIM_CUDART")
        .env_remove("REGSIM_CONFIGS")
        .env_remove("REGSIM_CALIBRATE_PROGRAM")
        .output()
        .expect("the regsim binary runs")
}

fn ok(out: &Output) -> &Output {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn measured(v: &serde_json::Value, test: &str) -> f64 {
    let r = v["results"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["test"] == test))
        .unwrap_or_else(|| panic!("no {test} in {v}"));
    r["measured"]
        .as_f64()
        .unwrap_or_else(|| panic!("{test} not measured: {r}"))
}

const NEW_ROWS: [&str; 4] = ["mma_dep", "wmma_dep", "atom_global_dep", "atom_shared_dep"];

#[test]
fn rtx_a6000_prints_the_tensor_and_atomic_rows_without_a_published_figure() {
    let out = calibrate(&["--gpu", "rtx-a6000"]);
    let table = String::from_utf8_lossy(&ok(&out).stdout).into_owned();
    for test in NEW_ROWS {
        let line = table
            .lines()
            .find(|l| l.starts_with(&format!("{test} ")))
            .unwrap_or_else(|| panic!("no {test} row in\n{table}"));
        assert!(line.ends_with("no published figure"), "{line}");
    }
}

#[test]
fn dependent_mma_and_atomic_chains_follow_the_configs_mechanisms() {
    let a6000: serde_json::Value =
        serde_json::from_slice(&ok(&calibrate(&["--gpu", "rtx-a6000", "--json"])).stdout).unwrap();
    let h100: serde_json::Value =
        serde_json::from_slice(&ok(&calibrate(&["--gpu", "h100", "--json"])).stdout).unwrap();
    // configs/rtx-a6000.toml: tensor latency 32; configs/h100.toml: 19. A dependent mma
    // waits for the previous one's accumulator: at least the latency, plus its operand
    // reads (a few cycles, not another latency).
    for (v, latency) in [(&a6000, 32.0), (&h100, 19.0)] {
        for test in ["mma_dep", "wmma_dep"] {
            let m = measured(v, test);
            assert!(
                m >= latency && m <= latency + 12.0,
                "{test}: {m} vs {latency}"
            );
        }
    }
    assert!(measured(&h100, "mma_dep") < measured(&a6000, "mma_dep"));
    for v in [&a6000, &h100] {
        // A global atomic is performed at the L2: slower than an L1 hit, not a DRAM trip.
        let g = measured(v, "atom_global_dep");
        assert!(g > 100.0 && g < 400.0, "atom_global_dep {g}");
        // A shared atomic stays in the SM: the order of a shared load.
        let s = measured(v, "atom_shared_dep");
        assert!(s > 10.0 && s < 60.0, "atom_shared_dep {s}");
    }
}

//! Device addresses are the same in every run (issue 22): a program that prints every
//! kind of device pointer it sees (cudaMalloc, managed, pinned, module variables,
//! `__managed__`, device-side malloc, shared and local windows) prints the same values,
//! and its statistics (wall time aside) are byte for byte the same, when the host's
//! address space is laid out differently: address randomisation on, off (`setarch -R`),
//! and a large unrelated host allocation made first. WIR with the paper's VSB, whose
//! entries are indexed by hashes of register values (pointers among them), is the design
//! these runs use; bfs, whose registers hold many pointers, is checked the same way.

mod common;

use common::{repo_root, without_wall_clock, workloads};
use std::path::{Path, PathBuf};
use std::process::Command;

/// How a run perturbs the host's address space.
#[derive(Clone, Copy, Debug)]
enum Host {
    Plain,
    /// `setarch <arch> -R`: no address randomisation.
    NoRandomisation,
    /// The program allocates and touches this many bytes first.
    Ballast(u64),
}

fn setarch() -> Option<String> {
    let arch = Command::new("uname").arg("-m").output().ok()?;
    let arch = String::from_utf8_lossy(&arch.stdout).trim().to_string();
    let ok = Command::new("setarch")
        .args([arch.as_str(), "-R", "true"])
        .status()
        .is_ok_and(|s| s.success());
    ok.then_some(arch)
}

/// Runs `bin` under `regsim run --rf wir`; returns stdout and the stats file's text with
/// the wall-time lines removed.
fn run(bin: &Path, host: Host, tag: &str) -> (String, String) {
    let name = bin.file_name().unwrap().to_string_lossy().into_owned();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("device-addresses-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let stats = dir.join(format!("{name}-{tag}.json"));
    let regsim = env!("CARGO_BIN_EXE_regsim");
    let mut cmd = match host {
        Host::NoRandomisation => {
            let mut c = Command::new("setarch");
            c.arg(setarch().expect("setarch works"))
                .arg("-R")
                .arg(regsim);
            c
        }
        _ => Command::new(regsim),
    };
    cmd.args(["run", "--gpu", "gtx480", "--rf", "wir", "--stats"])
        .arg(&stats)
        .arg("--")
        .arg(bin)
        .env_remove("REGSIM_CUDART")
        .env_remove("REGSIM_CONFIGS")
        .env_remove("HOST_BALLAST_BYTES");
    if let Host::Ballast(bytes) = host {
        cmd.env("HOST_BALLAST_BYTES", bytes.to_string());
    }
    let out = cmd.output().expect("the regsim binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() && stdout.lines().last() == Some("PASS"),
        "{name} {host:?}: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&stats).expect("stats");
    (stdout, without_wall_clock(&text))
}

fn hosts() -> Vec<(Host, &'static str)> {
    let mut hosts = vec![
        (Host::Plain, "plain"),
        (Host::Ballast(256 << 20), "ballast"),
    ];
    if setarch().is_some() {
        hosts.push((Host::NoRandomisation, "no-aslr"));
    } else {
        eprintln!("setarch unavailable: address randomisation stays on in every run");
    }
    hosts
}

fn program(name: &str) -> PathBuf {
    repo_root()
        .join("crates/cudart/tests/programs/bin")
        .join(name)
}

#[test]
fn device_pointers_and_statistics_do_not_depend_on_the_host() {
    let bin = program("device_addresses");
    let runs: Vec<(String, String)> = hosts()
        .into_iter()
        .map(|(h, tag)| run(&bin, h, tag))
        .collect();
    let (out, stats) = &runs[0];
    for (o, s) in &runs[1..] {
        assert_eq!(o, out, "device pointers differ between runs");
        assert!(s == stats, "statistics differ between runs");
    }
    // The fixed layout (emu::memory::address_space): device memory from 0x1000_0000_0000
    // after 64 KB of stray-access padding, host-visible memory from 0x1800_0000_0000, the
    // generic windows far above.
    let value = |what: &str| -> u64 {
        let line = out
            .lines()
            .find(|l| l.starts_with(what))
            .unwrap_or_else(|| panic!("no {what} in {out}"));
        let hex = line.rsplit("0x").next().unwrap();
        u64::from_str_radix(hex.trim(), 16).unwrap()
    };
    assert_eq!(value("__device__ symbol"), 0x1000_0001_0000);
    assert_eq!(value("__managed__ var"), 0x1800_0001_0000);
    assert_eq!(value("dev_var in kernel"), value("__device__ symbol"));
    for what in ["cudaMalloc in", "cudaMalloc out", "device malloc"] {
        assert!(
            (0x1000_0000_0000..0x1800_0000_0000).contains(&value(what)),
            "{what}"
        );
        assert_eq!(value(what) % 256, 0, "{what} is aligned like cudaMalloc");
    }
    for what in ["managed ", "pinned"] {
        assert!(
            (0x1800_0000_0000..0x2000_0000_0000).contains(&value(what)),
            "{what}"
        );
    }
    assert_eq!(value("shared (generic)"), 0xfe00_0000_0000_0000);
}

#[test]
fn wir_with_the_papers_vsb_is_deterministic_on_a_pointer_heavy_workload() {
    let bfs = workloads()
        .into_iter()
        .find(|w| w.file_name().is_some_and(|n| n == "bfs"))
        .expect("the bfs workload");
    let runs: Vec<(String, String)> = hosts()
        .into_iter()
        .filter(|(h, _)| !matches!(h, Host::Ballast(_)))
        .map(|(h, tag)| run(&bfs, h, tag))
        .chain([run(&bfs, Host::Plain, "again")])
        .collect();
    for (o, s) in &runs[1..] {
        assert_eq!(o, &runs[0].0);
        assert!(s == &runs[0].1, "bfs statistics differ between runs");
    }
    assert!(runs[0].1.contains("\"wir_vsb_hits\""), "a WIR run");
}

//! Absurd config values are refused before anything is allocated: every bounded key of
//! `timing::limits` at a huge value, through `regsim run --set`, under a 1 GB address-space
//! limit (`ulimit -v`), exits 2 with an error naming the key, the value and the limit, not
//! an aborted allocation; values at the bounds run.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// `regsim run --gpu gtx480 --set SETS... -- saxpy` under `ulimit -v KB`, killed after
/// `limit`.
fn run_limited(kb: u64, sets: &[String], limit: Duration) -> Output {
    let regsim = env!("CARGO_BIN_EXE_regsim");
    let saxpy = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads/bin/saxpy");
    let mut script = format!("ulimit -v {kb}; exec '{regsim}' run --gpu gtx480");
    for s in sets {
        script.push_str(&format!(" --set '{s}'"));
    }
    script.push_str(&format!(" -- '{}'", saxpy.display()));
    let mut child = Command::new("sh")
        .args(["-c", &script])
        .env_remove("REGSIM_CONFIGS")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("sh starts");
    let start = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("{sets:?} still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

fn bounded_keys() -> Vec<(String, u64)> {
    let mut keys: Vec<(String, u64)> = timing::limits::LIMITS
        .iter()
        .map(|l| (l.key.to_owned(), l.max))
        .collect();
    for cache in ["l1d", "constant_cache", "icache", "l2.slice"] {
        for (key, max, _) in timing::limits::CACHE_LIMITS {
            keys.push((format!("{cache}.{key}"), *max));
        }
    }
    keys
}

#[test]
fn every_bounded_key_at_an_absurd_value_is_refused_without_allocating() {
    for (key, max) in bounded_keys() {
        for value in [1u64 << 31, 1 << 40] {
            let out = run_limited(
                1_000_000,
                &[format!("{key}={value}")],
                Duration::from_secs(30),
            );
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{key}={value}: {err}");
            assert!(!err.contains("memory allocation"), "{key}={value}: {err}");
            assert!(err.contains(&key), "{key}={value}: {err}");
            // A u32 key cannot even hold 2^40: that is a type error naming the key.
            if value == 1 << 31 || key.ends_with("size_bytes") {
                assert!(
                    err.contains(&format!("{value} is over the limit of {max}")),
                    "{key}={value}: {err}"
                );
            }
        }
    }
}

#[test]
fn values_at_the_bounds_run() {
    for sets in [
        vec!["gpu.num_sms=1024".to_owned()],
        vec!["register_file.banks=1024".to_owned()],
        vec![
            "sm.max_warps=1024".to_owned(),
            "sm.max_ctas=1024".to_owned(),
            "register_file.collector_units=1024".to_owned(),
        ],
        vec![
            "l1d.size_bytes=134217728".to_owned(),
            "l1d.ways=128".to_owned(),
            // Far outside the energy tables' sizes: priced explicitly, as the load error asks.
            "energy.l1d_read_pj=1000".to_owned(),
            "energy.l1d_write_pj=1000".to_owned(),
        ],
    ] {
        let out = run_limited(4_000_000, &sets, Duration::from_secs(60));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{sets:?}: {err}");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("PASS"),
            "{sets:?}"
        );
    }
}

//! `tests/programs/wmma_types.cu` (nvcc 11.8, sm_80, `<mma.h>`; build.sh): small GEMMs
//! through `wmma` of every type nvcc 11.8 emits (tf32 m16n16k8, double m8n8k4, `__half`
//! m32n8k16/m8n32k16 with float accumulators, signed and
//! unsigned char m16n16k16/m32n8k16/m8n32k16 with and without saturation,
//! `experimental::precision::s4/u4` m8n8k32 and `b1` m8n8k128 XOR/AND), checked element by
//! element against a host product: PASS on rtx-a6000 and h100 functionally and under
//! every register-file design. The floating-point results are bit-identical to the host's
//! FMA chain (the emulator's definition; a GPU may differ in the last bits).

mod common;

use std::path::{Path, PathBuf};

fn program() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/bin/wmma_types")
}

fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let exe = program();
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--", exe.to_str().expect("UTF-8 path")]);
    let out = common::regsim(&all);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Every case's line: none wrong, every float bit-exact, and (with saturation) some
/// saturated; 25 cases in all.
fn check_lines(so: &str, what: &str) {
    let lines: Vec<&str> = so.lines().filter(|l| l.contains(" wrong")).collect();
    assert_eq!(lines.len(), 25, "{what}: {so}");
    for l in lines {
        assert!(l.contains(", 0 wrong"), "{what}: {l}");
        if let Some(rest) = l.split(" wrong, ").nth(1) {
            if let Some((n, total)) = rest
                .strip_suffix(" exact")
                .and_then(|r| r.split_once(" of "))
            {
                assert_eq!(n, total, "{what}: {l}");
            }
        }
        if l.contains("satf") {
            assert!(!l.ends_with(" 0 saturations"), "{what}: {l}");
        }
    }
}

#[test]
fn every_wmma_type_passes_on_rtx_a6000_and_h100_under_every_design() {
    for gpu in ["rtx-a6000", "h100"] {
        let (code, so, se) = run(&["--gpu", gpu, "--functional"]);
        assert_eq!(code, Some(0), "{gpu}: {so}{se}");
        assert!(so.ends_with("PASS\n"), "{gpu}: {so}{se}");
        check_lines(&so, gpu);
        for design in common::DESIGNS {
            let (code, so, se) = run(&["--gpu", gpu, "--rf", design]);
            assert_eq!(code, Some(0), "{gpu} {design}: {so}{se}");
            assert!(so.ends_with("PASS\n"), "{gpu} {design}: {so}{se}");
            check_lines(&so, &format!("{gpu} {design}"));
        }
    }
}

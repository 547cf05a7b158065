//! `tests/programs/multicast.cu` (clang-19, sm_90, built by `tests/programs/build.sh`)
//! under `regsim run`: a multicast bulk copy into the four CTAs of each cluster and a copy
//! from each CTA into the next one's shared memory, checked on the host, PASS in
//! functional and timing mode on h100 and under every register-file design.

mod common;

use std::path::Path;

fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let exe = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/bin/multicast");
    let exe = exe.to_str().expect("a UTF-8 path");
    let all: Vec<&str> = ["run"]
        .iter()
        .chain(args)
        .chain(&["--", exe])
        .copied()
        .collect();
    let out = common::regsim(&all);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_multicast_program_passes_in_functional_and_timing_mode() {
    for args in [
        &["--gpu", "h100", "--functional"][..],
        &["--gpu", "h100", "--summary"][..],
    ] {
        let (code, so, se) = run(args);
        assert_eq!(code, Some(0), "{args:?}\n{so}\n{se}");
        assert!(so.ends_with("PASS\n"), "{args:?}: {so}");
        assert!(se.contains("regsim: kernel spread("), "{args:?}: {se}");
    }
}

#[test]
fn the_multicast_program_passes_under_every_design() {
    for design in common::DESIGNS {
        let (code, so, se) = run(&["--gpu", "h100", "--rf", design]);
        assert_eq!(code, Some(0), "{design}\n{so}\n{se}");
        assert!(so.ends_with("PASS\n"), "{design}: {so}");
    }
}

//! The texture path as a user sees it: the texture workloads pass and their statistics
//! show texture-cache lookups whose misses reach the L2; a program without texture
//! fetches has no texture section.

mod common;

use common::run_workload_stats;

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("regsim-texture-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir.join(name)
}

#[test]
fn texture_workloads_send_their_misses_to_the_l2() {
    for (workload, gpu) in [
        ("tex_object", "gpgpusim-gtx480"),
        ("tex_reference", "gpgpusim-gtx480"),
        ("tex_object", "qv100"),
        ("tex_reference", "qv100"),
    ] {
        let stats = run_workload_stats(
            workload,
            &["--gpu", gpu],
            &scratch(&format!("{workload}-{gpu}.json")),
        );
        let tex = &stats["total"]["memory"]["texture_cache"];
        let n = |k: &str| {
            tex[k]
                .as_u64()
                .unwrap_or_else(|| panic!("{workload} {gpu}: {k}"))
        };
        assert!(n("reads") > 0, "{workload} {gpu}: {tex}");
        assert!(
            n("misses") > 0 && n("l2_reads") >= n("misses"),
            "{workload} {gpu}: {tex}"
        );
        assert_eq!(
            n("hits") + n("misses") + n("sector_misses") + n("mshr_merges"),
            n("reads")
        );
        // The texture cache's L2 reads are among the L2's reads.
        let l2_reads = stats["total"]["memory"]["l2"]["reads"].as_u64().unwrap();
        assert!(l2_reads >= n("l2_reads"), "{workload} {gpu}");
        // Per kernel too: the kernels' texture reads add up to the total.
        let per_kernel: u64 = stats["kernels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k["memory"]["texture_cache"]["reads"].as_u64().unwrap_or(0))
            .sum();
        assert_eq!(per_kernel, n("reads"), "{workload} {gpu}");
    }
}

#[test]
fn a_program_without_texture_fetches_has_no_texture_section() {
    let stats = run_workload_stats("saxpy", &["--gpu", "qv100"], &scratch("saxpy.json"));
    assert!(stats["total"]["memory"].get("texture_cache").is_none());
    assert!(stats["total"]["memory"].get("l1d").is_some());
}

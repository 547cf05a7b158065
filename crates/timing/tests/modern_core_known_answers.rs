//! Known answers of the modern core's memory pipeline (issue 25, after Huerta et al.,
//! MICRO'25, memory-pipeline section): the per-sub-core memory-instruction buffer
//! (`sm.memory_buffer`) lets one memory instruction leave every `issue_interval` cycles
//! and stalls a sub-core's memory issue while it is full; it and the result queue
//! (`register_file.result_queue`, known answers in `rf/reuse_cache.rs`) are refused on the
//! collector core.

mod common;

use common::*;
use emu::LaunchConfig;
use timing::KernelStats;

/// One warp: `n` independent shared-memory stores, then one global store.
fn stores(n: usize) -> String {
    let mut s = String::from(
        ".version 7.0\n.target sm_70\n.address_size 64\n\
         .visible .entry stores(.param .u64 out)\n{\n.reg .b32 %r<4>;\n.reg .b64 %rd<2>;\n\
         .shared .align 4 .b32 buf[1024];\n\
         ld.param.u64 %rd1, [out];\nmov.u32 %r1, 7;\n",
    );
    for k in 0..n {
        s.push_str(&format!("st.shared.u32 [buf+{}], %r1;\n", 4 * (k % 1024)));
    }
    s.push_str("st.global.u32 [%rd1], %r1;\nret;\n}\n");
    s
}

fn run_stores(n: usize, overrides: &[&str]) -> KernelStats {
    let mut o = vec!["gpu.num_sms=1"];
    o.extend_from_slice(overrides);
    let cfg = config("rtx-a6000", &o);
    let (mut emu, k, info) = load(&stores(n), "stores");
    let out = alloc_u32(&mut emu, &[0]);
    let p = params(&emu, k, &[out]);
    let s = run_warm(cfg, &mut emu, k, &info, LaunchConfig::linear(1, 32), &p);
    assert_eq!(read_u32(&emu, out, 1), [7]);
    s
}

#[test]
fn a_run_of_memory_instructions_leaves_the_buffer_one_every_issue_interval() {
    let per_store = |o: &[&str]| {
        let (long, short) = (run_stores(96, o), run_stores(32, o));
        assert!(
            long.stalls.memory_buffer > short.stalls.memory_buffer,
            "a full buffer stalls issue: {:?}",
            long.stalls
        );
        (long.cycles - short.cycles) as f64 / 64.0
    };
    // MICRO'25 (Ampere): one memory instruction every 4 cycles per sub-core.
    assert_eq!(per_store(&[]), 4.0);
    assert_eq!(per_store(&["sm.memory_buffer.issue_interval=2"]), 2.0);
}

#[test]
fn the_buffer_and_the_result_queue_are_refused_on_the_collector_core() {
    let o = [
        "sm.memory_buffer.entries=5",
        "sm.memory_buffer.issue_interval=4",
    ]
    .map(|s| timing::Override::parse(s).unwrap());
    let err = timing::GpuConfig::load("gtx480", &timing::config::default_configs_dir(), &o)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(err.contains("sm.memory_buffer"), "{err}");
    // qv100's collector-core preset unsets the key; the user's --set still wins.
    let o = ["sm.core=collector", "register_file.result_queue=true"]
        .map(|s| timing::Override::parse(s).unwrap());
    let err = timing::GpuConfig::load("qv100", &timing::config::default_configs_dir(), &o)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(err.contains("register_file.result_queue"), "{err}");
}

//! qv100's HBM2 write timings (2026-11-28): tWL, tWTR and tWR are GPGPU-Sim's SM7_QV100
//! values, the config Accel-Sim correlated against a V100 (Khairy et al., ISCA 2020),
//! which `gpgpusim-qv100` transcribes; the other HBM2 command timings stay off in `qv100`
//! (its header's "Not modelled"), and `memory.model = "paper"` does not touch them.

use timing::config::default_configs_dir;
use timing::{GpuConfig, Override};

fn load(name: &str, overrides: &[&str]) -> GpuConfig {
    let o: Vec<Override> = overrides
        .iter()
        .map(|s| Override::parse(s).unwrap())
        .collect();
    GpuConfig::load(name, &default_configs_dir(), &o).unwrap()
}

#[test]
fn qv100_has_sm7_qv100s_write_timings_and_no_other_hbm2_command_timing() {
    let q = load("qv100", &[]);
    let g = load("gpgpusim-qv100", &[]);
    let w = |c: &GpuConfig| [c.dram.t_wl, c.dram.t_wtr, c.dram.t_wr].map(|t| t.get());
    assert_eq!(w(&q), [2, 3, 10]);
    assert_eq!(
        w(&q),
        w(&g),
        "qv100's write timings are the transcription's"
    );
    // Not modelled in qv100: bank groups, tCCD(_L), tRRD, tRAS, tRC, tRTP.
    let d = &q.dram;
    assert_eq!(
        [d.t_ccd, d.t_ccd_l, d.t_rrd, d.t_ras, d.t_rc, d.t_rtp].map(|t| t.get()),
        [0; 6]
    );
    assert!(d.bank_groups <= 1, "bank groups {}", d.bank_groups);
    // The paper-simplified memory system and the collector preset keep the write timings.
    for set in ["memory.model=paper", "sm.core=collector"] {
        assert_eq!(w(&load("qv100", &[set])), [2, 3, 10], "{set}");
    }
    // The key turns them off again.
    let off = load("qv100", &["dram.t_wl=0", "dram.t_wtr=0", "dram.t_wr=0"]);
    assert_eq!(w(&off), [0, 0, 0]);
}

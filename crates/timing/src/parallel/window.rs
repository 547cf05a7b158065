//! The bound of windowed stepping (`docs/parallel.md`, "Step 3, second part"): the most
//! cycles every SM could step without a merge while the statistics stay those of one
//! thread, computed from the config, or why a config must stay cycle by cycle.
//!
//! The kernel loop (`gpu.rs`) takes W from here at each kernel with `--threads` 2 or
//! more and steps windows of `min(W, 64)` cycles; a config that must stay cycle by
//! cycle uses the per-cycle scheme ([`crate::parallel`]). Tests check the bound against
//! every shipped config.

use crate::config::{GpuConfig, RegisterFileDesign};

/// Why a config is stepped cycle by cycle rather than in windows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PerCycle {
    /// The bound is this many cycles, fewer than two: a window would be one cycle.
    ShortLatency(u64),
    /// Bounded slice input queues (`l2.input_queue_entries`): a crossing the slice
    /// refuses gives its bytes back to its SM's injection backlog, which the SM reads
    /// when it issues, in the same cycle.
    SliceInputQueues,
    /// Bounded SM ejection buffers (`interconnect.ejection_buffer_entries`): a slice's
    /// reply crosses (a shared event) only while its SM's reply FIFO has room, which the
    /// SM's own takes change in the same cycle.
    EjectionBuffers,
    /// `interconnect.head_of_line_blocking`: a packet crossing to its slice (a shared
    /// event) holds its SM's output port, whose backlog the SM reads when it issues.
    HeadOfLineBlocking,
    /// WIR's value-based reuse reads each result's values at issue, before a global
    /// load's or atomic's value is performed at the merge.
    ValuesReadAtIssue,
    /// An L1 fill port (`fill_port_bytes`): replies wait in the SM's reply FIFO, which a
    /// shared event (`SmReply`) takes from, writing the SM's front end.
    ReplyFifo,
}

/// The most cycles `W` every SM may step between merges, or why the config must be
/// stepped cycle by cycle: the smaller of
///
/// - `interconnect.latency`: every reply, fill or completion that reaches an SM crossed
///   the interconnect, which takes that long, so one reaching an SM in `[t, t + W)` was
///   decided by the shared memory system before `t`;
/// - the `mem` class latency plus the L1D latency: the earliest an instruction can read
///   a global load's result, which the merge writes into its registers.
pub fn window_cycles(cfg: &GpuConfig) -> Result<u64, PerCycle> {
    if cfg.l2.input_queue_entries > 0 {
        return Err(PerCycle::SliceInputQueues);
    }
    if cfg.interconnect.ejection_buffer_entries > 0 {
        return Err(PerCycle::EjectionBuffers);
    }
    if cfg.interconnect.head_of_line_blocking {
        return Err(PerCycle::HeadOfLineBlocking);
    }
    let l1d = cfg.l1d_array();
    if [&l1d, &cfg.constant_cache, &cfg.icache]
        .into_iter()
        .chain(cfg.texture_cache.as_ref())
        .any(|c| c.fill_port_bytes > 0)
    {
        return Err(PerCycle::ReplyFifo);
    }
    if cfg.register_file.design == RegisterFileDesign::Wir {
        return Err(PerCycle::ValuesReadAtIssue);
    }
    let crossing = cfg.interconnect.latency.get();
    let load_to_use = cfg.pipeline.classes.mem.latency.get() + cfg.l1d.latency.get();
    let w = crossing.min(load_to_use);
    if w < 2 {
        return Err(PerCycle::ShortLatency(w));
    }
    Ok(w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{default_configs_dir, Override};

    fn load(name: &str, overrides: &[&str]) -> GpuConfig {
        let o: Vec<Override> = overrides
            .iter()
            .map(|s| Override::parse(s).unwrap())
            .collect();
        GpuConfig::load(name, &default_configs_dir(), &o).unwrap()
    }

    #[test]
    fn the_shipped_configs_allow_windows_of_twenty_cycles_but_the_gpgpusim_transcriptions() {
        // The table in docs/parallel.md.
        for name in ["gtx480", "qv100", "rtx-a6000"] {
            assert_eq!(window_cycles(&load(name, &[])), Ok(20), "{name}");
        }
        // h100: interconnect 61 (its silicon L2 path), so the load-to-use bound 4 + 23.
        assert_eq!(window_cycles(&load("h100", &[])), Ok(27));
        for name in ["gpgpusim-gtx480", "gpgpusim-qv100"] {
            assert_eq!(
                window_cycles(&load(name, &[])),
                Err(PerCycle::SliceInputQueues),
                "{name}"
            );
        }
    }

    #[test]
    fn the_bound_is_the_shorter_of_the_crossing_and_the_load_to_use_latency() {
        let g = load("gtx480", &["interconnect.latency=50"]);
        assert_eq!(window_cycles(&g), Ok(24));
        let g = load("gtx480", &["interconnect.latency=50", "l1d.latency=30"]);
        assert_eq!(window_cycles(&g), Ok(34));
        let g = load("gtx480", &["interconnect.latency=7"]);
        assert_eq!(window_cycles(&g), Ok(7));
    }

    #[test]
    fn a_one_cycle_bound_or_a_design_reading_values_at_issue_steps_cycle_by_cycle() {
        let g = load("gtx480", &["interconnect.latency=1"]);
        assert_eq!(window_cycles(&g), Err(PerCycle::ShortLatency(1)));
        let g = load("gtx480", &["register_file.design=wir"]);
        assert_eq!(window_cycles(&g), Err(PerCycle::ValuesReadAtIssue));
        let g = load(
            "gtx480",
            &["memory.model=paper", "l2.input_queue_entries=8"],
        );
        assert_eq!(window_cycles(&g), Err(PerCycle::SliceInputQueues));
        let g = load("gtx480", &["interconnect.head_of_line_blocking=true"]);
        assert_eq!(window_cycles(&g), Err(PerCycle::HeadOfLineBlocking));
        let g = load("gtx480", &["interconnect.ejection_buffer_entries=4"]);
        assert_eq!(window_cycles(&g), Err(PerCycle::EjectionBuffers));
        let g = load("gtx480", &["l1d.fill_port_bytes=32"]);
        assert_eq!(window_cycles(&g), Err(PerCycle::ReplyFifo));
    }
}

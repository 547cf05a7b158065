//! Counters of the fill ports, the SMs' reply FIFOs and their ejection buffers
//! (`fill_port_bytes` of a cache, `interconnect.ejection_buffer_entries`). The mechanisms
//! themselves are in [`crate::memory`]'s façade: a fill port is a cycle until which a
//! cache's data array is busy with a fill, and a FIFO of the fills waiting for it.
//!
//! What they model (GPGPU-Sim 4.2's caches and LD/ST unit, as its configs describe them;
//! no code of it is used): each cache has a fill port apart from its data port, and a fill
//! holds it `atom / data_port_width` cycles (the atom a sector in a sectored cache, else
//! the line); a fill that finds it busy waits, at the head of the SM's response FIFO for
//! an L1 and at the head of the DRAM-to-L2 queue for an L2 sub-partition. The SM's LD/ST
//! unit handles the head of its response FIFO once per cycle, and the cluster takes a
//! packet from the network only while its ejection buffer
//! (`-gpgpu_n_cluster_ejection_buffer_size`) has room.

use serde::Serialize;

/// Waits at the fill ports and the SMs' reply FIFOs (left out of the stats file when all
/// are zero, as they are without the keys).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FillPortStats {
    /// Replies an SM took later than they arrived (its reply FIFO: one reply per cycle,
    /// a fill only when its L1's fill port is free).
    pub delayed_replies: u64,
    /// Cycles those replies waited in the reply FIFO after arriving, summed.
    pub reply_wait_cycles: u64,
    /// L2 fills that found their slice's fill port busy.
    pub delayed_l2_fills: u64,
    /// Cycles they waited for it (in the DRAM-to-L2 queue), summed.
    pub l2_fill_wait_cycles: u64,
    /// Crossings of replies refused because their SM's ejection buffer was full (each
    /// refusal counted once per attempt).
    pub ejection_refusals: u64,
}

impl FillPortStats {
    /// Whether every counter is zero.
    pub fn is_unused(&self) -> bool {
        *self == Self::default()
    }

    /// `after - before`, counter by counter (per-kernel figures).
    pub fn since(&self, before: &Self) -> Self {
        Self {
            delayed_replies: self.delayed_replies.saturating_sub(before.delayed_replies),
            reply_wait_cycles: self
                .reply_wait_cycles
                .saturating_sub(before.reply_wait_cycles),
            delayed_l2_fills: self
                .delayed_l2_fills
                .saturating_sub(before.delayed_l2_fills),
            l2_fill_wait_cycles: self
                .l2_fill_wait_cycles
                .saturating_sub(before.l2_fill_wait_cycles),
            ejection_refusals: self
                .ejection_refusals
                .saturating_sub(before.ejection_refusals),
        }
    }
}

impl std::ops::AddAssign for FillPortStats {
    fn add_assign(&mut self, o: Self) {
        self.delayed_replies += o.delayed_replies;
        self.reply_wait_cycles += o.reply_wait_cycles;
        self.delayed_l2_fills += o.delayed_l2_fills;
        self.l2_fill_wait_cycles += o.l2_fill_wait_cycles;
        self.ejection_refusals += o.ejection_refusals;
    }
}

/// Cycles a fill holds the fill port of a cache configured by `cfg`:
/// `ceil(atom / fill_port_bytes)`, the atom being a sector when the cache fetches sectors
/// and the line otherwise; `None` without a fill port (`fill_port_bytes = 0`).
pub fn fill_cycles(cfg: &crate::config::CacheConfig) -> Option<u64> {
    if cfg.fill_port_bytes == 0 {
        return None;
    }
    let atom = match cfg.fetch {
        crate::config::FetchGranularity::Sector => cfg.sector_bytes,
        crate::config::FetchGranularity::Line => cfg.line_bytes,
    };
    Some(u64::from(atom.div_ceil(cfg.fill_port_bytes).max(1)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{default_configs_dir, GpuConfig};

    #[test]
    fn only_the_gpgpusim_transcriptions_have_fill_ports_and_ejection_buffers() {
        // SM2_GTX480: dl1 and tex without a data-port field (the line, 128), dl2 32;
        // SM7_QV100: dl1 32, dl2 32, tex 128; -gpgpu_n_cluster_ejection_buffer_size 32.
        let dir = default_configs_dir();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "toml") {
                continue;
            }
            let name = path.file_stem().unwrap().to_str().unwrap().to_owned();
            let g = GpuConfig::load(&name, &dir, &[]).unwrap();
            let tex = g.texture_cache.as_ref().map_or(0, |t| t.fill_port_bytes);
            let got = (
                g.l1d.fill_port_bytes,
                g.l2.slice.fill_port_bytes,
                tex,
                g.interconnect.ejection_buffer_entries,
                g.constant_cache.fill_port_bytes + g.icache.fill_port_bytes,
            );
            let want = match name.as_str() {
                "gpgpusim-gtx480" => (128, 32, 128, 32, 0),
                "gpgpusim-qv100" => (32, 32, 128, 32, 0),
                _ => (0, 0, 0, 0, 0),
            };
            assert_eq!(got, want, "{name}");
            // One cycle a fill in both transcriptions (a fill of one atom).
            if want.0 > 0 {
                assert_eq!(fill_cycles(&g.l1d), Some(1), "{name}");
                assert_eq!(fill_cycles(&g.l2.slice), Some(1), "{name}");
            }
        }
    }

    #[test]
    fn a_fill_holds_the_port_for_its_atom_over_the_port_width() {
        let dir = crate::config::default_configs_dir();
        let mut c = crate::config::GpuConfig::load("gpgpusim-gtx480", &dir, &[])
            .unwrap()
            .l1d;
        c.fill_port_bytes = 0;
        assert_eq!(fill_cycles(&c), None);
        c.fetch = crate::config::FetchGranularity::Line;
        c.fill_port_bytes = 128;
        assert_eq!(fill_cycles(&c), Some(1));
        c.fill_port_bytes = 32;
        assert_eq!(fill_cycles(&c), Some(4));
        c.fill_port_bytes = 48;
        assert_eq!(fill_cycles(&c), Some(3));
        c.fetch = crate::config::FetchGranularity::Sector;
        assert_eq!(fill_cycles(&c), Some(1));
        c.fill_port_bytes = 8;
        assert_eq!(fill_cycles(&c), Some(4));
    }
}

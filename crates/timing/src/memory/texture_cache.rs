//! The texture path: a per-SM, read-only texture cache in front of the L2.
//!
//! A texture fetch (`tex`, `tld4`) reads texels of global memory; the emulator reports one
//! address per lane, the first texel of the lane's footprint
//! ([`emu::texture::TextureBinding::fetch_address`]). The SM coalesces them into lines
//! like any load and issues them to [`crate::memory::Space::Texture`]: the façade looks
//! them up in the SM's texture cache (`[texture_cache]`, a [`crate::memory::cache::Cache`]
//! like the constant cache, hit latency `texture_cache.latency`), and a miss goes through
//! the interconnect to the line's L2 slice and, missing there, to DRAM, as an L1D miss
//! does; the fill completes the fetch. So the texture fetch latency is the cache's hit
//! latency, or that plus the round trip of [`crate::memory::MemorySystem::unloaded_load_latency`].
//!
//! GPGPU-Sim's texture cache (`-gpgpu_tex_cache:l1`, mshr type `T`) keeps requests in
//! order through a fragment FIFO; here a fetch completes when its last line is back,
//! and hits of a later fetch may finish before misses of an earlier one (the scoreboard
//! orders their consumers). Texels of a CUDA array are at linear addresses (the runtime
//! allocates arrays pitch-linear), not in the hardware's block-linear layout, so a 2D
//! neighbourhood spans as many lines as the rows it covers.

use crate::memory::cache::CacheStats;
use serde::Serialize;

/// Counters of the texture caches: the cache's own and the L2 traffic its misses cause.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TextureStats {
    /// The texture caches' lookups (as every cache counts them).
    #[serde(flatten)]
    pub cache: CacheStats,
    /// Read requests the texture caches sent to the L2 (one per missing line).
    pub l2_reads: u64,
    /// Sectors those requests asked for.
    pub l2_read_sectors: u64,
}

impl TextureStats {
    /// No texture fetch reached the cache: the stats file leaves the section out, so
    /// programs without texture fetches report what they reported before the texture path.
    pub fn is_unused(&self) -> bool {
        *self == Self::default()
    }

    /// `after - before`, counter by counter (per-kernel figures).
    pub fn since(&self, before: &Self) -> Self {
        let (a, b) = (&self.cache, &before.cache);
        let cache = CacheStats {
            reads: a.reads.saturating_sub(b.reads),
            writes: a.writes.saturating_sub(b.writes),
            hits: a.hits.saturating_sub(b.hits),
            misses: a.misses.saturating_sub(b.misses),
            sector_misses: a.sector_misses.saturating_sub(b.sector_misses),
            mshr_merges: a.mshr_merges.saturating_sub(b.mshr_merges),
            reservation_fails: a.reservation_fails.saturating_sub(b.reservation_fails),
            evictions: a.evictions.saturating_sub(b.evictions),
            writebacks: a.writebacks.saturating_sub(b.writebacks),
            sectors_fetched: a.sectors_fetched.saturating_sub(b.sectors_fetched),
            sector_accesses: a.sector_accesses.saturating_sub(b.sector_accesses),
            sector_access_misses: a
                .sector_access_misses
                .saturating_sub(b.sector_access_misses),
            sector_pending_hits: a.sector_pending_hits.saturating_sub(b.sector_pending_hits),
        };
        TextureStats {
            cache,
            l2_reads: self.l2_reads.saturating_sub(before.l2_reads),
            l2_read_sectors: self.l2_read_sectors.saturating_sub(before.l2_read_sectors),
        }
    }
}

impl std::ops::AddAssign for TextureStats {
    fn add_assign(&mut self, o: Self) {
        self.cache += o.cache;
        self.l2_reads += o.l2_reads;
        self.l2_read_sectors += o.l2_read_sectors;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_subtracts_every_counter_and_unused_means_all_zero() {
        let mut after = TextureStats::default();
        assert!(after.is_unused());
        after.cache.reads = 10;
        after.cache.hits = 7;
        after.l2_reads = 3;
        after.l2_read_sectors = 12;
        assert!(!after.is_unused());
        let mut before = TextureStats::default();
        before.cache.reads = 4;
        before.l2_reads = 1;
        let d = after.since(&before);
        assert_eq!((d.cache.reads, d.cache.hits), (6, 7));
        assert_eq!((d.l2_reads, d.l2_read_sectors), (2, 12));
        let mut sum = d;
        sum += before;
        assert_eq!(sum.cache.reads, 10);
        assert_eq!(sum.l2_reads, 3);
    }
}

//! Thread-block clusters (PTX ISA 8.0, "Cluster of Cooperative Thread Arrays"): the CTAs
//! of a cluster run at the same time, each can read and write the others' shared memory
//! (distributed shared memory, the `.shared::cluster` state space), and all of them
//! synchronise through the cluster barrier (`barrier.cluster.arrive` / `.wait`).
//!
//! A cluster of more than one CTA keeps what its CTAs share in one [`ClusterState`],
//! reached from every CTA of the cluster through an `Arc`: each rank's shared memory and
//! the barrier. A CTA of such a cluster has no shared memory of its own in [`super::Cta`];
//! it locks its rank's memory for the duration of one warp instruction, and a remote access
//! locks the other rank's (never its own twice, never while another rank's lock is held).
//!
//! Addresses (regsim's encoding; the ISA leaves it opaque): a `.shared::cluster` address
//! is the `.shared::cta` offset with the target rank plus one in bits 24-28
//! ([`CLUSTER_RANK_SHIFT`]); bits 24-28 zero name the executing CTA, so every `.shared`
//! address is also a valid `.shared::cluster` address of its own CTA, as the ISA requires.
//! `mapa` writes the rank bits; generic addresses carry them inside the shared window.

use std::sync::{Arc, Mutex, MutexGuard};

use crate::memory::FlatSpace;

/// Bit where the target rank (plus one) of a `.shared::cluster` address starts. Shared
/// memory per CTA is at most 228 KB on sm_90, far below 2^24.
pub const CLUSTER_RANK_SHIFT: u32 = 24;
/// Largest cluster (CTAs): sm_90's non-portable limit (CUDA C++ Programming Guide,
/// "Thread Block Clusters": 8 portable, 16 with `cudaFuncAttributeNonPortableClusterSizeAllowed`).
pub const MAX_CLUSTER_CTAS: u32 = 16;

/// Splits a `.shared::cluster` offset into the rank it names (`None`: the executing
/// CTA) and the offset within that rank's shared memory.
#[inline]
pub fn split_cluster_address(a: u64) -> (Option<u32>, u64) {
    let rank = (a >> CLUSTER_RANK_SHIFT) & 0x1F;
    let offset = a & ((1 << CLUSTER_RANK_SHIFT) - 1);
    if rank == 0 {
        (None, a)
    } else {
        (Some(rank as u32 - 1), offset)
    }
}

/// The `.shared::cluster` offset of `offset` in the shared memory of rank `rank`.
#[inline]
pub fn cluster_address(rank: u32, offset: u64) -> u64 {
    (u64::from(rank + 1) << CLUSTER_RANK_SHIFT) | (offset & ((1 << CLUSTER_RANK_SHIFT) - 1))
}

/// The cluster barrier (PTX ISA, `barrier.cluster`): one phase after another; a phase
/// completes when every non-exited thread of the cluster has arrived (exiting threads
/// release it when they were the ones missing, as `exit` documents).
#[derive(Debug, Default)]
pub(crate) struct ClusterBarrier {
    /// Phases completed so far.
    pub phase: u64,
    /// Threads that arrived in the current phase.
    pub arrived: u32,
    /// Threads of the cluster that have not exited.
    pub live: u32,
}

impl ClusterBarrier {
    /// Completes the phase when every live thread arrived; true when it did.
    pub fn complete_if_all_arrived(&mut self) -> bool {
        if self.arrived > 0 && self.arrived >= self.live {
            self.phase += 1;
            self.arrived = 0;
            true
        } else {
            false
        }
    }
}

/// What the CTAs of one cluster share.
#[derive(Debug)]
pub struct ClusterState {
    /// Cluster shape in CTAs.
    pub shape: [u32; 3],
    /// Each rank's shared memory.
    pub(crate) shared: Vec<Mutex<FlatSpace>>,
    /// Ranks whose CTA has finished (its shared memory may no longer be accessed).
    pub(crate) finished: Mutex<Vec<bool>>,
    pub(crate) barrier: Mutex<ClusterBarrier>,
}

/// Locks a mutex of cluster state; a poisoned lock (a panic elsewhere) still holds valid
/// bytes, so its data are used as they are.
#[inline]
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl ClusterState {
    pub(crate) fn new(shape: [u32; 3], shared_bytes: usize, threads: u32) -> Self {
        let n = shape.iter().product::<u32>() as usize;
        ClusterState {
            shape,
            shared: (0..n)
                .map(|_| Mutex::new(FlatSpace::new(shared_bytes)))
                .collect(),
            finished: Mutex::new(vec![false; n]),
            barrier: Mutex::new(ClusterBarrier {
                phase: 0,
                arrived: 0,
                live: threads * n as u32,
            }),
        }
    }

    pub fn size(&self) -> u32 {
        self.shared.len() as u32
    }

    /// Phases of the cluster barrier completed so far.
    pub fn barrier_phase(&self) -> u64 {
        lock(&self.barrier).phase
    }
}

/// A CTA's place in its cluster.
#[derive(Debug, Clone)]
pub struct ClusterMember {
    pub state: Arc<ClusterState>,
    /// `%cluster_ctarank`.
    pub rank: u32,
    /// `%clusterid`.
    pub id: [u32; 3],
    /// `%cluster_ctaid`.
    pub ctaid: [u32; 3],
}

/// The cluster a CTA at `cta` belongs to in a launch of cluster shape `shape`: its
/// `%clusterid`, `%cluster_ctaid` and rank (x fastest, as `%cluster_ctarank` is defined).
pub fn place_in_cluster(cta: [u32; 3], shape: [u32; 3]) -> ([u32; 3], [u32; 3], u32) {
    let id = [cta[0] / shape[0], cta[1] / shape[1], cta[2] / shape[2]];
    let ctaid = [cta[0] % shape[0], cta[1] % shape[1], cta[2] % shape[2]];
    let rank = ctaid[0] + ctaid[1] * shape[0] + ctaid[2] * shape[0] * shape[1];
    (id, ctaid, rank)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_round_trip_and_rank_zero_bits_name_the_own_cta() {
        assert_eq!(split_cluster_address(0x40), (None, 0x40));
        let a = cluster_address(3, 0x1_2340);
        assert_eq!(a, 0x0400_0000 | 0x1_2340);
        assert_eq!(split_cluster_address(a), (Some(3), 0x1_2340));
        assert_eq!(split_cluster_address(cluster_address(15, 8)), (Some(15), 8));
        // mapa of an address that already names a rank keeps only the offset.
        assert_eq!(cluster_address(1, a), cluster_address(1, 0x1_2340));
    }

    #[test]
    fn ranks_are_x_fastest_within_the_cluster() {
        assert_eq!(
            place_in_cluster([5, 3, 0], [2, 2, 1]),
            ([2, 1, 0], [1, 1, 0], 3)
        );
        assert_eq!(
            place_in_cluster([4, 0, 0], [4, 1, 1]),
            ([1, 0, 0], [0, 0, 0], 0)
        );
        assert_eq!(
            place_in_cluster([1, 1, 1], [2, 2, 2]),
            ([0, 0, 0], [1, 1, 1], 7)
        );
    }

    #[test]
    fn a_phase_completes_when_every_live_thread_arrived() {
        let mut b = ClusterBarrier {
            live: 64,
            ..Default::default()
        };
        b.arrived = 32;
        assert!(!b.complete_if_all_arrived());
        // The other 32 threads exit: the barrier they held up completes.
        b.live = 32;
        assert!(b.complete_if_all_arrived());
        assert_eq!((b.phase, b.arrived), (1, 0));
        // Nobody arrived: nothing completes.
        assert!(!b.complete_if_all_arrived());
    }
}

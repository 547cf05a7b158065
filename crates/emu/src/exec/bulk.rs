//! Non-tensor bulk copies (`cp.async.bulk`, PTX ISA 8.0, sm_90): one thread moves a
//! block of a multiple of 16 bytes between global and shared memory. A global-to-shared
//! copy completes its bytes as transactions on an mbarrier (`complete_tx`), which is how
//! the threads that read the block learn that it has arrived; a shared-to-global copy
//! completes through the thread's bulk async-groups.
//!
//! The source is read when the copy issues. A functional run writes the destination and
//! completes the transaction bytes at once (a copy that took no time). A launch with
//! `defer_bulk_copies` (the timing model's) keeps a global-to-shared copy's bytes until
//! [`super::Launch::complete_bulk_copy`], which the timing model calls when the copy's
//! data arrive: until then the mbarrier's phase cannot complete, so a consumer's
//! `try_wait` spins as long as the copy takes.
//!
//! Tensor copies (`cp.async.bulk.tensor`, TMA) use the same path: the box, gathered from
//! the tensor (with the out-of-bounds fill) into its dense image, lands in 16-byte chunks
//! at the addresses the tensor map's swizzle gives them ([`crate::tensor_map`]).

use super::cluster::{self, ClusterMember};
use super::mbarrier;
use crate::error::ErrorKind;
use crate::memory::FlatSpace;
use crate::tensor_map::swizzle_address;

/// A global-to-shared bulk copy read and not yet written.
#[derive(Debug)]
pub(crate) struct PendingBulkCopy {
    /// The step's [`super::WarpStep::bulk_copy`]: every lane's copy of one instruction.
    pub id: u32,
    /// Where the bytes land: a `.shared::cta` offset of the issuing CTA, or a
    /// `.shared::cluster` offset naming the destination CTA's rank
    /// ([`cluster::cluster_address`]: multicast copies and copies into another CTA's
    /// shared memory, which [`land_in`] lands there).
    pub shared_offset: u64,
    /// The mbarrier's shared-memory offset (`.shared::cluster`-encoded like
    /// `shared_offset`; always in the destination's CTA).
    pub mbarrier: u64,
    pub data: Vec<u8>,
    /// The tensor map's swizzle (0 for a non-tensor copy).
    pub swizzle: u32,
    /// The instruction (function index, pc), for errors at completion.
    pub at: (usize, u32),
}

/// A global-to-shared copy (bulk or tensor) whose bytes have been read: kept in `pending`
/// for the timing model to complete when `defer` (it knows when they arrive), else landed
/// now.
pub(super) fn arrive(
    copy: PendingBulkCopy,
    defer: bool,
    pending: &mut Vec<PendingBulkCopy>,
    shared: &mut FlatSpace,
) -> Result<(), ErrorKind> {
    arrive_in(copy, defer, pending, shared, None)
}

/// [`arrive`] for a copy whose destination may be another CTA of the cluster `member`
/// belongs to (`own` is the issuing CTA's shared memory, locked by the caller).
pub(super) fn arrive_in(
    copy: PendingBulkCopy,
    defer: bool,
    pending: &mut Vec<PendingBulkCopy>,
    own: &mut FlatSpace,
    member: Option<&ClusterMember>,
) -> Result<(), ErrorKind> {
    if defer {
        pending.push(copy);
        Ok(())
    } else {
        land_in(&copy, own, member)
    }
}

/// Lands `copy` in the CTA its offsets name: the issuing CTA's `own` shared memory, or
/// another rank's of the cluster of `member` (locked here: the caller holds only its own
/// rank's lock, as every distributed-shared-memory access does). A destination CTA that
/// has exited is an error (its shared memory is gone).
pub(super) fn land_in(
    copy: &PendingBulkCopy,
    own: &mut FlatSpace,
    member: Option<&ClusterMember>,
) -> Result<(), ErrorKind> {
    let (rank, offset) = cluster::split_cluster_address(copy.shared_offset);
    let (_, mbar) = cluster::split_cluster_address(copy.mbarrier);
    match (rank, member) {
        (Some(r), Some(m)) if r != m.rank => {
            let exited = cluster::lock(&m.state.finished)
                .get(r as usize)
                .copied()
                .unwrap_or(true);
            let Some(memory) = m.state.shared.get(r as usize).filter(|_| !exited) else {
                return Err(ErrorKind::BulkCopy(format!(
                    "the copy's destination, CTA rank {r} of the cluster, has exited before \
                     the copy landed (wait at the cluster barrier before exiting)"
                )));
            };
            land(
                &mut cluster::lock(memory),
                offset,
                &copy.data,
                copy.swizzle,
                mbar,
            )
        }
        _ => land(own, offset, &copy.data, copy.swizzle, mbar),
    }
}

/// Writes `data` (a multiple of 16 bytes) to shared memory at `shared_offset`, each
/// 16-byte chunk where `swizzle` puts it, and completes its bytes as transactions on the
/// mbarrier at `mbarrier`.
pub(super) fn land(
    shared: &mut FlatSpace,
    shared_offset: u64,
    data: &[u8],
    swizzle: u32,
    mbarrier: u64,
) -> Result<(), ErrorKind> {
    for (k, chunk) in data.chunks(8).enumerate() {
        let mut b = [0u8; 8];
        b[..chunk.len()].copy_from_slice(chunk);
        let at = swizzle_address(shared_offset + 8 * k as u64, swizzle);
        shared.write_uint("shared", at, chunk.len() as u32, u64::from_le_bytes(b))?;
    }
    let word = shared.read_uint("shared", mbarrier, 8)?;
    let new = mbarrier::change_tx(word, -(data.len() as i64)).map_err(|m| {
        ErrorKind::BulkCopy(format!(
            "completing {} bytes on the mbarrier at shared offset {mbarrier:#x}: {m}",
            data.len()
        ))
    })?;
    shared.write_uint("shared", mbarrier, 8, new)?;
    Ok(())
}

/// The dense image of `size` bytes (a multiple of 16) of a box that lies in shared memory
/// at `shared_offset` under `swizzle`: what a shared-to-global tensor copy reads.
pub(super) fn gather(
    shared: &FlatSpace,
    shared_offset: u64,
    size: u64,
    swizzle: u32,
) -> Result<Vec<u8>, ErrorKind> {
    let mut data = Vec::with_capacity(size as usize);
    for k in (0..size).step_by(8) {
        let at = swizzle_address(shared_offset + k, swizzle);
        data.extend_from_slice(&shared.read_uint("shared", at, 8)?.to_le_bytes());
    }
    Ok(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn landing_writes_the_bytes_and_completes_the_phase() {
        let mut shared = FlatSpace::new(256);
        let word = mbarrier::init(1).unwrap();
        // One arrival with 32 transaction bytes expected: the phase waits for the copy.
        let (word, _) = mbarrier::arrive(word, 1, 32, false, false).unwrap();
        shared.write_uint("shared", 0, 8, word).unwrap();
        let data: Vec<u8> = (0..32).collect();
        land(&mut shared, 64, &data, 0, 0).unwrap();
        assert_eq!(&shared.bytes[64..96], &data[..]);
        let after = shared.read_uint("shared", 0, 8).unwrap();
        assert!(mbarrier::phase_complete(after, 0, true), "{after:#x}");
        // Past the end of shared memory: a located error, not a panic.
        assert!(land(&mut shared, 240, &data, 0, 0).is_err());
    }

    #[test]
    fn a_swizzled_box_lands_permuted_and_gathers_back_in_order() {
        let mut shared = FlatSpace::new(2048);
        let word = mbarrier::init(1).unwrap();
        let (word, _) = mbarrier::arrive(word, 1, 1024, false, false).unwrap();
        shared.write_uint("shared", 0, 8, word).unwrap();
        let data: Vec<u8> = (0..1024).map(|i| (i / 16) as u8).collect();
        // 128-byte swizzle from offset 1024: row r's chunk c lands at chunk c ^ (r % 8).
        land(&mut shared, 1024, &data, 3, 0).unwrap();
        for r in 0..8usize {
            for c in 0..8usize {
                let at = 1024 + r * 128 + (c ^ r) * 16;
                assert_eq!(shared.bytes[at], (r * 8 + c) as u8, "row {r} chunk {c}");
            }
        }
        assert_eq!(gather(&shared, 1024, 1024, 3).unwrap(), data);
        assert!(mbarrier::phase_complete(
            shared.read_uint("shared", 0, 8).unwrap(),
            0,
            true
        ));
    }
}

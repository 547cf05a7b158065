//! Deterministic multi-threaded stepping of the SMs (`--threads`, issue 27).
//!
//! Each SM owns a memory front end ([`crate::memory::SmMemory`]: its L1 caches, shared
//! memory, requests, injection backlog and an outbox of events for the shared queue), and
//! an SM's cycle is split in two ([`Sm::cycle_private`], [`Sm::cycle_shared`]). The private
//! part (stall accounting, the writeback stage, the LD/ST stage and the register file's
//! cycle) reads and writes only its SM and its front end, and reads (never writes) the
//! config, the address map and the interconnect. The shared part (issue and fetch) calls
//! the emulator (global memory, atomics, `printf`), the address map and the whole memory
//! system, whose order decides values and timing.
//!
//! So each cycle, the private parts of the SMs due run in parallel on a rayon pool, each
//! on its front end split off the memory system ([`MemorySystem::front_ends`]), each
//! followed by the CTA-private part of its issue stage ([`Sm::issue_private`]): the
//! instructions that touch only the SM and the warp's CTA (registers, shared, local and
//! parameter memory, barriers; `emu::is_cta_private`) issue on the thread's own emulator
//! executor ([`emu::Launch::cta_private_executor`]), and the stage stops before the first
//! other one. Global loads (`ld.global`) issue there too, with their reads deferred: the
//! executor computes the addresses, the SM builds the memory operation and keeps the
//! load (`PendingLoad`), and the SM's turn performs the reads in issue order before
//! anything else, so each sees the stores of every lower SM's cycle, as with one thread
//! (not under WIR, which reads values at issue). Then, on the calling thread in SM
//! order, each SM's outbox goes onto the
//! event queue ([`MemorySystem::flush_sm`]) and its shared part runs, going on with issue
//! where it stopped. That is the one-thread order of every event and every global effect:
//! an event a front end schedules is at least a cycle later (config validation refuses
//! zero latencies), no event runs during the SMs' phase (the memory system has run up to
//! the cycle before it), a CTA-private instruction reads and writes nothing another SM
//! sees, and an SM's shared part touches no other SM's private state or front end. Which
//! SMs are due is fixed before the cycle (an SM's cycle changes only its own wake-up
//! time). So every statistic, value, line of output and error is the same for every
//! thread count by construction; tests compare them.
//!
//! What is *not* parallel: the other instructions with global effects (global stores,
//! constant, generic and texture accesses, atomics outside shared memory, `printf`),
//! everything after the first of them in its SM's cycle, the reads of the deferred
//! loads, fetch (it follows issue within the cycle and reads the shared queue) and the
//! shared memory system. Under a step observer issue stays serial. `docs/parallel.md`
//! measures the split and describes what is left.

use rayon::{ThreadPool, ThreadPoolBuildError, ThreadPoolBuilder};

use crate::kernel_info::KernelInfo;
use crate::memory::address_map::AddressMap;
use crate::memory::{MemorySystem, SmId, SmMemory};
use crate::sm::{Addresses, IssueCtx, Sm};
use crate::time::Cycle;

/// What the parallel phase needs to run the CTA-private part of the issue stage
/// ([`Sm::issue_private`]): an executor of the launch per thread
/// ([`emu::Launch::cta_private_executor`]), the address map (read-only) and whether
/// texture fetches have a cache of their own.
pub(crate) struct PrivateIssue<'a, 'e> {
    pub executors: &'a mut [emu::Launch<'e>],
    pub addresses: &'a AddressMap,
    pub texture_path: bool,
}

/// The threads that step the SMs: the calling thread, and with more than one a pool of
/// `threads - 1` workers.
pub(crate) struct SmThreads {
    threads: usize,
    pool: Option<ThreadPool>,
}

impl SmThreads {
    /// One thread: every SM cycle runs whole on the calling thread.
    pub fn serial() -> Self {
        SmThreads {
            threads: 1,
            pool: None,
        }
    }

    /// `threads` threads (1 or more; 0 is taken as 1).
    pub fn new(threads: usize) -> Result<Self, ThreadPoolBuildError> {
        if threads <= 1 {
            return Ok(Self::serial());
        }
        let pool = ThreadPoolBuilder::new()
            .num_threads(threads - 1)
            .thread_name(|i| format!("regsim-sm-{i}"))
            .build()?;
        Ok(SmThreads {
            threads,
            pool: Some(pool),
        })
    }

    /// The number of threads.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Runs [`Sm::cycle_private`] at `now` for every SM `i` due (`wake_at[i] <= now`),
    /// in parallel, each on its own split-off memory front end, then with `issue` (one
    /// executor per thread) [`Sm::issue_private`], and returns `true`; the caller then
    /// runs, in SM order, [`MemorySystem::flush_sm`] and [`Sm::cycle_shared`] for those
    /// SMs. Returns `false` and does nothing with one thread or fewer than two SMs due
    /// (the caller runs [`Sm::cycle`] whole).
    pub fn private_phase(
        &self,
        sms: &mut [Sm],
        memory: &mut MemorySystem,
        wake_at: &[Cycle],
        now: Cycle,
        info: &KernelInfo,
        issue: Option<PrivateIssue<'_, '_>>,
    ) -> bool {
        let Some(pool) = &self.pool else {
            return false;
        };
        if wake_at.iter().filter(|&&t| t <= now).take(2).count() < 2 {
            return false;
        }
        let (shared, fronts) = memory.front_ends();
        let shared = &shared;
        // Contiguous chunks, one per thread: the calling thread runs the first itself.
        let chunk = sms.len().div_ceil(self.threads).max(1);
        let (addresses, texture_path) = issue
            .as_ref()
            .map_or((None, false), |p| (Some(p.addresses), p.texture_path));
        let step = |first: usize,
                    sms: &mut [Sm],
                    fronts: &mut [SmMemory],
                    at: &[Cycle],
                    executor: Option<&mut emu::Launch<'_>>| {
            let mut issue = executor.zip(addresses).map(|(launch, map)| IssueCtx {
                launch,
                info,
                addresses: Addresses::Private {
                    map,
                    unplaced: false,
                },
                texture_path,
                private_only: true,
            });
            for (i, ((sm, front), &t)) in sms.iter_mut().zip(fronts).zip(at).enumerate() {
                if t <= now {
                    let port = shared.port(SmId((first + i) as u32), front);
                    sm.cycle_private(now, info, port);
                    if let Some(cx) = issue.as_mut() {
                        sm.issue_private(now, cx);
                    }
                }
            }
        };
        let mut executors = issue.map(|p| p.executors.iter_mut());
        let mut parts = sms
            .chunks_mut(chunk)
            .zip(fronts.chunks_mut(chunk))
            .zip(wake_at.chunks(chunk))
            .enumerate()
            .map(|(k, ((sms, fronts), at))| {
                let executor = executors.as_mut().and_then(|e| e.next());
                (k * chunk, sms, fronts, at, executor)
            });
        let first = parts.next();
        pool.in_place_scope(|scope| {
            for (from, sms, fronts, at, executor) in parts {
                scope.spawn(move |_| step(from, sms, fronts, at, executor));
            }
            if let Some((from, sms, fronts, at, executor)) = first {
                step(from, sms, fronts, at, executor);
            }
        });
        true
    }
}

/// The most threads a run may ask for (`--threads`, `REGSIM_THREADS`).
pub const MAX_THREADS: usize = 1024;

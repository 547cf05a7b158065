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
//! on its front end split off the memory system ([`MemorySystem::front_ends`]); then, on
//! the calling thread in SM order, each SM's outbox goes onto the event queue
//! ([`MemorySystem::flush_sm`]) and its shared part runs. That is the one-thread order of
//! every event: an event a front end schedules is at least a cycle later (config
//! validation refuses zero latencies), no event runs during the SMs' phase (the memory
//! system has run up to the cycle before it), and an SM's shared part touches no other
//! SM's private state or front end. Which SMs are due is fixed before the cycle (an SM's
//! cycle changes only its own wake-up time). So every statistic and every value is the
//! same for every thread count by construction; tests compare them.
//!
//! What is *not* parallel: issue and fetch, because issue executes the instruction in the
//! emulator (values, global memory) and fetch follows issue within the cycle. Making
//! them parallel needs an emulator that logs global memory effects and performs them at
//! the merge; `docs/parallel.md` measures the split and describes that work.

use rayon::{ThreadPool, ThreadPoolBuildError, ThreadPoolBuilder};

use crate::kernel_info::KernelInfo;
use crate::memory::{MemorySystem, SmId, SmMemory};
use crate::sm::Sm;
use crate::time::Cycle;

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
    /// in parallel, each on its own split-off memory front end, and returns `true`; the
    /// caller then runs, in SM order, [`MemorySystem::flush_sm`] and [`Sm::cycle_shared`]
    /// for those SMs. Returns `false` and does nothing with one thread or fewer than two
    /// SMs due (the caller runs [`Sm::cycle`] whole).
    pub fn private_phase(
        &self,
        sms: &mut [Sm],
        memory: &mut MemorySystem,
        wake_at: &[Cycle],
        now: Cycle,
        info: &KernelInfo,
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
        let step = |first: usize, sms: &mut [Sm], fronts: &mut [SmMemory], at: &[Cycle]| {
            for (i, ((sm, front), &t)) in sms.iter_mut().zip(fronts).zip(at).enumerate() {
                if t <= now {
                    let port = shared.port(SmId((first + i) as u32), front);
                    sm.cycle_private(now, info, port);
                }
            }
        };
        let mut parts = sms
            .chunks_mut(chunk)
            .zip(fronts.chunks_mut(chunk))
            .zip(wake_at.chunks(chunk))
            .enumerate()
            .map(|(k, ((sms, fronts), at))| (k * chunk, sms, fronts, at));
        let first = parts.next();
        pool.in_place_scope(|scope| {
            for (from, sms, fronts, at) in parts {
                scope.spawn(move |_| step(from, sms, fronts, at));
            }
            if let Some((from, sms, fronts, at)) = first {
                step(from, sms, fronts, at);
            }
        });
        true
    }
}

/// The most threads a run may ask for (`--threads`, `REGSIM_THREADS`).
pub const MAX_THREADS: usize = 1024;

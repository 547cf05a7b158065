//! Deterministic multi-threaded stepping of the SMs (`--threads`, issue 27).
//!
//! An SM's cycle is split in two ([`Sm::cycle_private`], [`Sm::cycle_shared`]). The
//! private part (stall accounting and the writeback stage: the SM's own event queue,
//! register-file write requests, scoreboard releases of the stall counter, the LD/ST
//! queue) reads and writes nothing outside its SM. The shared part calls the memory system
//! (one event queue, request ids, the interconnect, L2 and DRAM), the emulator (global
//! memory, atomics, `printf`) and the address map, whose order decides values and timing.
//!
//! So each cycle, the private parts of the SMs due run in parallel on a rayon pool, and
//! then the shared parts run on the calling thread in SM order, exactly as with one
//! thread. Which SMs are due is fixed before the cycle (an SM's cycle changes only its own
//! wake-up time), no SM's shared part touches another SM's private state, and the private
//! parts of different SMs touch disjoint state, so every statistic and every value is the
//! same for every thread count by construction; tests compare them.
//!
//! What is *not* parallel: the operand-collection, issue and fetch stages, because they
//! call the memory system (the register file's cycle receives it, for CERF) or the
//! emulator in the middle of the stage. Making them parallel needs a memory-system front
//! end per SM whose requests are merged in SM order, and an emulator that orders global
//! memory effects itself; `docs/parallel.md` measures the split and describes that work.

use rayon::{ThreadPool, ThreadPoolBuildError, ThreadPoolBuilder};

use crate::kernel_info::KernelInfo;
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
    /// in parallel, and returns `true`; the caller then runs only [`Sm::cycle_shared`]
    /// for those SMs. Returns `false` and does nothing with one thread or fewer than two
    /// SMs due (the caller runs [`Sm::cycle`] whole).
    pub fn private_phase(
        &self,
        sms: &mut [Sm],
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
        // Contiguous chunks, one per thread: the calling thread runs the first itself.
        let chunk = sms.len().div_ceil(self.threads).max(1);
        let step = |sms: &mut [Sm], at: &[Cycle]| {
            for (sm, &t) in sms.iter_mut().zip(at) {
                if t <= now {
                    sm.cycle_private(now, info);
                }
            }
        };
        let mut parts = sms.chunks_mut(chunk).zip(wake_at.chunks(chunk));
        let first = parts.next();
        pool.in_place_scope(|scope| {
            for (sms, at) in parts {
                scope.spawn(move |_| step(sms, at));
            }
            if let Some((sms, at)) = first {
                step(sms, at);
            }
        });
        true
    }
}

/// The most threads a run may ask for (`--threads`, `REGSIM_THREADS`).
pub const MAX_THREADS: usize = 1024;

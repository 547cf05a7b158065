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
//! So each cycle, the private parts of the SMs due run in parallel on a crew of threads
//! started once ([`crew`]: they spin between cycles rather than sleep), each
//! on its front end split off the memory system ([`MemorySystem::front_ends`]), each
//! followed by the CTA-private part of its issue stage ([`Sm::issue_private`]): the
//! instructions that touch only the SM and the warp's CTA (registers, shared, local and
//! parameter memory, barriers; `emu::is_cta_private`) issue on the part's own emulator
//! executor ([`emu::Launch::cta_private_executor`]), and the stage stops before the first
//! other one. Global loads, stores, atomics and reductions (`ld.global`, `st.global`,
//! `atom.global`, `red.global`) issue there too, their memory accesses deferred: the
//! executor computes the addresses and reads the operands (a store's values, an atomic's
//! operands), the SM builds the memory operation and keeps the access
//! (`PendingAccess`), and the SM's turn performs them in issue order before anything
//! else (an atomic's old values written to its registers there), so each sees the
//! effects of every lower SM's cycle, as with one thread (not under WIR, which reads
//! values at issue). Then, on the calling thread in SM order, each SM's outbox goes
//! onto the event queue ([`MemorySystem::flush_sm`]) and its shared part runs, going on with issue
//! where it stopped. That is the one-thread order of every event and every global effect:
//! an event a front end schedules is at least a cycle later (config validation refuses
//! zero latencies), no event runs during the SMs' phase (the memory system has run up to
//! the cycle before it), a CTA-private instruction reads and writes nothing another SM
//! sees, and an SM's shared part touches no other SM's private state or front end. Which
//! SMs are due is fixed before the cycle (an SM's cycle changes only its own wake-up
//! time). So every statistic, value, line of output and error is the same for every
//! thread count by construction; tests compare them.
//!
//! What is *not* parallel: the other instructions with global effects (constant, generic
//! and texture accesses, generic atomics, bulk copies, `printf`), everything after the
//! first of them in its SM's cycle, the deferred accesses themselves, fetch (it follows
//! issue within the cycle and reads the shared queue) and the shared memory system. Under a step observer issue stays serial.
//!
//! **Windows.** Where [`window::window_cycles`] allows W ≥ 2, the kernel loop runs one
//! crew phase per window instead ([`SmThreads::window_phase`]): every SM steps the
//! cycles `[t, t + W)` on its thread ([`Sm::step_window`]), its own memory events from
//! its queue included (each logged with what it scheduled), its global accesses deferred
//! and tagged by cycle, and stops at the first thing only the merge can do (an issue
//! stage that stopped, a CTA retire). The merge, on the calling thread, replays the
//! window cycle by cycle in the one-thread order ([`MemorySystem::replay_cycle`],
//! [`MemorySystem::replay_phase`]; the deferred accesses in their cycle's SM turn; the
//! stopped SMs live from their stop; CTA placement at each retire). `docs/parallel.md`
//! measures both schemes.

mod crew;
pub mod window;

use crate::kernel_info::KernelInfo;
use crate::memory::address_map::AddressMap;
use crate::memory::{MemorySystem, SmId};
use crate::sm::{Addresses, IssueCtx, Sm, WindowStep};
use crate::time::Cycle;
use crew::Crew;

/// What the parallel phase needs to run the CTA-private part of the issue stage
/// ([`Sm::issue_private`]): an executor of the launch per thread
/// ([`emu::Launch::cta_private_executor`]), the address map (read-only) and whether
/// texture fetches have a cache of their own.
pub(crate) struct PrivateIssue<'a, 'e> {
    pub executors: &'a mut [emu::Launch<'e>],
    pub addresses: &'a AddressMap,
    pub texture_path: bool,
}

/// The fewest SMs due in a cycle for its private parts to run in parallel; with fewer,
/// the caller runs [`Sm::cycle`] whole, inline.
const MIN_SMS_DUE: usize = 2;

/// The threads that step the SMs: the calling thread, and with more than one a crew of
/// `threads - 1` workers started once and kept awake between cycles ([`crew`]).
pub(crate) struct SmThreads {
    crew: Option<Crew>,
}

impl SmThreads {
    /// One thread: every SM cycle runs whole on the calling thread.
    pub fn serial() -> Self {
        SmThreads { crew: None }
    }

    /// `threads` threads (1 or more; 0 is taken as 1). Fails only if a thread cannot be
    /// started.
    pub fn new(threads: usize) -> std::io::Result<Self> {
        if threads <= 1 {
            return Ok(Self::serial());
        }
        Ok(SmThreads {
            crew: Some(Crew::start(threads - 1)?),
        })
    }

    /// The number of threads.
    pub fn threads(&self) -> usize {
        self.crew.as_ref().map_or(1, |c| c.workers() + 1)
    }

    /// Runs [`Sm::cycle_private`] at `now` for every SM `i` due (`wake_at[i] <= now`),
    /// in parallel, each on its own split-off memory front end, then with `issue` (one
    /// executor per thread) [`Sm::issue_private`], and returns `true`; the caller then
    /// runs, in SM order, [`MemorySystem::flush_sm`] and [`Sm::cycle_shared`] for those
    /// SMs. Returns `false` and does nothing with one thread or fewer than
    /// [`MIN_SMS_DUE`] SMs due (the caller runs [`Sm::cycle`] whole).
    ///
    /// The phase has one part per thread; part `k` of `T` takes the due SMs whose rank
    /// among the due ones is in `k * due / T .. (k + 1) * due / T` (contiguous runs of
    /// SMs, the same number due in each, give or take one) and executor `k`, and runs on
    /// whichever thread claims it first ([`crew`]). Which thread steps an SM changes no
    /// result: its private part touches only the SM and its front end, and an executor
    /// keeps nothing from one instruction to the next but counts, summed at the end of
    /// the kernel.
    pub fn private_phase(
        &self,
        sms: &mut [Sm],
        memory: &mut MemorySystem,
        wake_at: &[Cycle],
        now: Cycle,
        info: &KernelInfo,
        issue: Option<PrivateIssue<'_, '_>>,
    ) -> bool {
        let Some(crew) = &self.crew else {
            return false;
        };
        let due = wake_at.iter().filter(|&&t| t <= now).count();
        if due < MIN_SMS_DUE {
            return false;
        }
        let threads = crew.workers() + 1;
        let (shared, fronts) = memory.front_ends();
        let (addresses, texture_path) = issue
            .as_ref()
            .map_or((None, false), |p| (Some(p.addresses), p.texture_path));
        let n = sms.len().min(fronts.len()).min(wake_at.len());
        let sms = Disjoint::new(sms);
        let fronts = Disjoint::new(fronts);
        let executors = issue.map(|p| Disjoint::new(p.executors));
        let step = |k: usize| {
            let (first, end) = (k * due / threads, (k + 1) * due / threads);
            if first == end {
                return;
            }
            // SAFETY: part `k` (run once, on one thread) alone takes executor `k`, and the
            // SMs (with their front ends) of ranks `first..end`, which no other part's
            // range holds; nothing else touches them until `Crew::run` returns.
            let executor = executors
                .as_ref()
                .filter(|e| k < e.len)
                .map(|e| unsafe { e.get(k) });
            let mut issue = executor.zip(addresses).map(|(launch, map)| IssueCtx {
                launch,
                info,
                addresses: Addresses::Private {
                    map,
                    unplaced: false,
                },
                texture_path,
                private_only: true,
                window: false,
            });
            let mut rank = 0;
            for (i, &t) in wake_at[..n].iter().enumerate() {
                if t > now {
                    continue;
                }
                if rank >= end {
                    break;
                }
                if rank >= first {
                    // SAFETY: as above; `i < n`, within both slices.
                    let (sm, front) = unsafe { (sms.get(i), fronts.get(i)) };
                    sm.cycle_private(now, info, shared.port(SmId(i as u32), front));
                    if let Some(cx) = issue.as_mut() {
                        sm.issue_private(now, cx);
                    }
                }
                rank += 1;
            }
        };
        crew.run(&step);
        true
    }
}

impl SmThreads {
    /// Steps every SM through the window `t..end` on its thread ([`Sm::step_window`]),
    /// in parallel, and writes what each did to `out` (by SM); the caller merges
    /// ([`MemorySystem::replay_cycle`]). Part `k` of `T` takes the SMs `k * n / T ..
    /// (k + 1) * n / T` and executor `k`. Returns `false` and does nothing with one
    /// thread.
    pub fn window_phase(
        &self,
        sms: &mut [Sm],
        memory: &mut MemorySystem,
        (t, end): (Cycle, Cycle),
        (info, all_placed): (&KernelInfo, bool),
        issue: PrivateIssue<'_, '_>,
        out: &mut [WindowStep],
    ) -> bool {
        let Some(crew) = &self.crew else {
            return false;
        };
        let threads = crew.workers() + 1;
        let (shared, fronts) = memory.front_ends();
        let n = sms.len().min(fronts.len()).min(out.len());
        let (map, texture_path) = (issue.addresses, issue.texture_path);
        let sms = Disjoint::new(sms);
        let fronts = Disjoint::new(fronts);
        let out = Disjoint::new(out);
        let executors = Disjoint::new(issue.executors);
        let step = |k: usize| {
            let (first, last) = (k * n / threads, (k + 1) * n / threads);
            if first == last || k >= executors.len {
                return;
            }
            // SAFETY: part `k` (run once, on one thread) alone takes executor `k` and the
            // SMs, front ends and results `first..last`, which no other part's range
            // holds; nothing else touches them until `Crew::run` returns.
            let launch = unsafe { executors.get(k) };
            let mut cx = IssueCtx {
                launch,
                info,
                addresses: Addresses::Private {
                    map,
                    unplaced: false,
                },
                texture_path,
                private_only: true,
                window: true,
            };
            for i in first..last {
                // SAFETY: as above; `i < n`, within every slice.
                let (sm, front, o) = unsafe { (sms.get(i), fronts.get(i), out.get(i)) };
                *o = sm.step_window((t, end), &shared, front, &mut cx, all_placed);
            }
        };
        crew.run(&step);
        true
    }
}

/// A slice whose elements the parts of one phase take by index, each a set of indices
/// no other part takes: `&mut` access to each element from any thread, as the
/// `split_at_mut` of a slice would give, without splitting it on the caller.
struct Disjoint<'a, T> {
    ptr: *mut T,
    len: usize,
    _slice: std::marker::PhantomData<&'a mut [T]>,
}

// SAFETY: sharing a `Disjoint` lets each thread reach `&mut T`s (through the unsafe `get`,
// whose callers keep the indices disjoint): what sending a `&mut T` to it allows.
unsafe impl<T: Send> Sync for Disjoint<'_, T> {}

impl<'a, T> Disjoint<'a, T> {
    fn new(slice: &'a mut [T]) -> Self {
        Disjoint {
            ptr: slice.as_mut_ptr(),
            len: slice.len(),
            _slice: std::marker::PhantomData,
        }
    }

    /// Element `i`.
    ///
    /// # Safety
    /// `i < len`, and while the result lives no other reference to element `i` exists
    /// (no two parts, nor two calls, take the same index).
    #[allow(clippy::mut_from_ref)]
    unsafe fn get(&self, i: usize) -> &'a mut T {
        debug_assert!(i < self.len);
        // SAFETY: in bounds, and exclusive by the caller's contract.
        unsafe { &mut *self.ptr.add(i) }
    }
}

/// The most threads a run may ask for (`--threads`, `REGSIM_THREADS`).
pub const MAX_THREADS: usize = 1024;

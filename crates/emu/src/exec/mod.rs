//! The SIMT interpreter: warps of 32 lanes executing one warp instruction per
//! [`Launch::execute`] call.
//!
//! Divergence follows the immediate-post-dominator reconvergence stack (Fung et al.,
//! MICRO 2007, §3): each warp has a stack of `(pc, mask, reconvergence pc)` entries; a
//! divergent branch turns the top entry into the reconvergence entry and pushes one entry
//! per path, and an entry is popped when its pc reaches its reconvergence pc. Calls push a
//! frame (own registers, own region of each lane's local memory) whose entries sit above
//! the caller's on the same stack. Barriers are per CTA and count warps (a warp arrives as
//! a whole, as on the hardware regsim models).
//!
//! Nothing here knows about time: the caller decides which warp runs next. Registers are
//! stored per frame as `u64` values indexed `reg * 32 + lane`, so one register of a warp is
//! one contiguous 256-byte row.

mod alu;
mod bulk;
pub mod cluster;
#[cfg(test)]
mod deferred_tests;
#[cfg(test)]
mod local_at_exit;
mod matrix;
mod matrix_b1;
mod matrix_sparse;
mod mbarrier;
pub mod printf;
mod private;
pub mod run_bound;
pub mod wgmma;

pub use private::{is_cta_private, is_deferrable_access, DeferredAccess, DeviceStandIn};
pub use run_bound::{FunctionalStop, LiveWarp, RunBound, StopCause};

use std::io::Write;

use ir::function::FunctionKind;
use ir::op::BarrierKind;
use ir::{FuncId, InstId, RegId};

use crate::error::{ErrorKind, ExecError, Location};
use crate::memory::local::LocalMemory;
use crate::memory::{FlatSpace, GlobalMemory};
use crate::module::{LoadedModule, NO_PC};

pub const WARP_SIZE: u32 = 32;
/// Barriers 0-15 of `bar`/`barrier`, and the cluster barrier.
const MAX_BARRIERS: usize = 17;
/// The barrier `barrier.cluster.wait` uses: a CTA barrier when the cluster is one CTA,
/// the id a warp waits at ([`WarpStatus::AtBarrier`]) for a larger cluster's barrier.
pub const CLUSTER_BARRIER: usize = 16;

/// Grid and block shape of a launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchConfig {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// Bytes of dynamic shared memory (`extern __shared__`).
    pub dynamic_shared: u32,
    /// The cluster shape the launch asks for (`cudaLaunchAttributeClusterDimension`);
    /// `None` takes the kernel's `.reqnctapercluster`, or clusters of one CTA.
    pub cluster: Option<[u32; 3]>,
}

impl LaunchConfig {
    pub fn linear(grid: u32, block: u32) -> Self {
        LaunchConfig {
            grid: [grid, 1, 1],
            block: [block, 1, 1],
            dynamic_shared: 0,
            cluster: None,
        }
    }
    pub fn threads_per_cta(&self) -> u32 {
        self.block[0] * self.block[1] * self.block[2]
    }
    pub fn num_ctas(&self) -> u64 {
        self.grid.iter().map(|&g| g as u64).product()
    }
}

/// Resource limits of the emulated device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub max_call_depth: usize,
    pub local_bytes_per_thread: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_call_depth: 1024,
            local_bytes_per_thread: ir::MAX_LOCAL_BYTES_PER_THREAD,
        }
    }
}

/// The state space a memory access resolved to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemSpace {
    Global,
    Shared,
    Local,
    Const,
    Param,
    /// A texture fetch's texels (`tex`, `tld4`): global memory read through the texture
    /// path; the lane's address is [`crate::texture::TextureBinding::fetch_address`].
    Texture,
}

/// Whether an access reads, writes or does both atomically.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AccessKind {
    Load,
    Store,
    Atomic,
}

/// The memory side of a warp instruction: one address per lane in `WarpStep::addrs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemInfo {
    /// Space of the first executing lane (generic accesses may mix spaces across lanes;
    /// see `lane_spaces`).
    pub space: MemSpace,
    pub kind: AccessKind,
    /// Bytes each lane accesses (all vector elements).
    pub bytes: u32,
}

/// Control events a warp instruction caused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepEvent {
    None,
    /// The warp arrived at barrier `id` and waits.
    BarrierWait {
        id: u32,
    },
    /// The warp arrived at barrier `id` and that released it (and every waiting warp).
    BarrierRelease {
        id: u32,
    },
    /// `bar.arrive`: arrived without waiting.
    BarrierArrive {
        id: u32,
    },
    /// Some lanes exited; `done` when the whole warp has.
    Exit {
        done: bool,
    },
    Call {
        callee: FuncId,
    },
    Return,
}

/// What one executed warp instruction did. Reused between steps (no allocation).
#[derive(Clone, Debug)]
pub struct WarpStep {
    pub func: FuncId,
    pub inst: InstId,
    /// Lanes at this pc before the guard.
    pub active_mask: u32,
    /// Lanes that executed (after the guard).
    pub exec_mask: u32,
    pub mem: Option<MemInfo>,
    /// Per-lane address (valid for lanes in `exec_mask` when `mem` is `Some`).
    pub addrs: [u64; 32],
    pub lane_spaces: [MemSpace; 32],
    /// A texture fetch whose footprint is two texel rows (bilinear 2D filtering, `tld4`):
    /// the bytes between the rows, the second row's texels being `addrs[lane] +
    /// texture_row_pitch`; 0 for one row. Valid when `mem` is a texture fetch.
    pub texture_row_pitch: u64,
    /// Destination registers written and their per-lane values after the instruction
    /// (none in a run of [`Launch::run_ctas`] whose observer does not read them:
    /// [`StepObserver::reads_destinations`]).
    pub num_dsts: u8,
    pub dst_regs: [RegId; 4],
    pub dst_values: [[u64; 32]; 4],
    /// Where the warp goes next (`None` once it has exited).
    pub next_pc: Option<(FuncId, InstId)>,
    pub event: StepEvent,
    /// A global-to-shared `cp.async.bulk` whose bytes wait for
    /// [`Launch::complete_bulk_copy`] (a launch with `defer_bulk_copies`): its id.
    pub bulk_copy: Option<u32>,
    /// Lanes whose `.shared::cluster` access went to another CTA's shared memory
    /// (distributed shared memory, through the SM-to-SM network).
    pub remote_shared: u32,
    /// A global access (load, store, atomic or reduction) an executor of deferred
    /// accesses did not perform ([`Launch::cta_private_executor`]): the index of the call
    /// frame whose registers it reads and writes. Its addresses are in `addrs`, the
    /// operands it read at issue in `deferred_values`; [`Launch::complete_access`]
    /// performs it.
    pub deferred_access: Option<usize>,
    /// The operands a deferred access read at issue, lane by lane in lane order: a
    /// store's elements, an atomic's or reduction's two operands (`b`, `c`); empty for a
    /// load. Valid when `deferred_access` is `Some`.
    pub deferred_values: Vec<u64>,
}

impl Default for WarpStep {
    fn default() -> Self {
        WarpStep {
            func: FuncId(0),
            inst: InstId(0),
            active_mask: 0,
            exec_mask: 0,
            mem: None,
            addrs: [0; 32],
            lane_spaces: [MemSpace::Global; 32],
            texture_row_pitch: 0,
            num_dsts: 0,
            dst_regs: [RegId(0); 4],
            dst_values: [[0; 32]; 4],
            next_pc: None,
            event: StepEvent::None,
            bulk_copy: None,
            remote_shared: 0,
            deferred_access: None,
            deferred_values: Vec::new(),
        }
    }
}

/// Watches every warp instruction a launch executes, whoever drives the launch (the
/// functional loop or the timing model): profilers of the executed stream implement it.
/// Called after the instruction has executed, never for one that faulted.
pub trait StepObserver: Send {
    /// Warp `warp` of the CTA `cta` executed `step`.
    fn observe(&mut self, cta: [u32; 3], warp: u32, step: &WarpStep);

    /// Whether the observer reads [`WarpStep::dst_regs`] and [`WarpStep::dst_values`]:
    /// a functional run ([`Launch::run_ctas`]) records them only for an observer that
    /// does (copying each destination's 32 lanes is a sizeable part of a step).
    fn reads_destinations(&self) -> bool {
        true
    }
}

/// Whether a warp can run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WarpStatus {
    Ready,
    /// Waiting at barrier `id`.
    AtBarrier(u32),
    Exited,
}

#[derive(Clone, Copy, Debug)]
struct SimtEntry {
    pc: u32,
    mask: u32,
    rpc: u32,
}

#[derive(Debug)]
struct Frame {
    func: usize,
    regs: Vec<u64>,
    local_base: u64,
    stack_base: usize,
    param_addrs: Vec<u64>,
    ret_addrs: Vec<u64>,
}

#[derive(Debug, Clone, Copy)]
struct PendingRed {
    reg: u32,
    mask: u32,
    kind: BarrierKind,
}

/// One lane's `cp.async` whose data are not visible yet: the shared-memory offset it
/// writes, the bytes it read (zero-filled past its source size) and its commit group.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PendingCopy {
    pub group: u32,
    pub shared_offset: u64,
    pub len: u8,
    pub bytes: [u8; 16],
}

#[derive(Debug)]
struct Warp {
    index: u32,
    valid: u32,
    exited: u32,
    status: WarpStatus,
    frames: Vec<Frame>,
    stack: Vec<SimtEntry>,
    carry: u32,
    /// Each lane's local memory (empty: the warp's functions have no frames).
    local: Vec<LocalMemory>,
    pending_red: Option<PendingRed>,
    /// `cp.async` copies not yet made visible by a wait, oldest first.
    async_copies: Vec<PendingCopy>,
    /// `cp.async.commit_group`s executed: the open group's number.
    async_groups: u32,
    /// Pc of the barrier the warp waits at (for deadlock reports).
    wait_pc: u32,
    instructions: u64,
    /// `setmaxnreg`s the warp executed, and the count the last one set (0: none yet).
    setmaxnregs: u32,
    maxnreg: u16,
    /// Global-to-shared bulk copies waiting for [`Launch::complete_bulk_copy`], and the
    /// id the next one gets.
    bulk_copies: Vec<bulk::PendingBulkCopy>,
    bulk_next: u32,
    /// Lanes that arrived at the cluster barrier and have not waited yet, and the phase
    /// they arrived in (clusters of more than one CTA).
    cluster_arrived: u32,
    cluster_phase: u64,
    /// `wgmma.mma_async`s the warp executed, and the last one's (function, pc): the four
    /// warps of a warpgroup must execute the same ones (checked as each warp exits).
    wgmmas: u32,
    last_wgmma: (usize, u32),
}

impl Warp {
    /// Threads of the warp that have not exited.
    fn live_threads(&self) -> u32 {
        if self.status == WarpStatus::Exited {
            0
        } else {
            (self.valid & !self.exited).count_ones()
        }
    }
}

#[derive(Debug, Default, Clone, Copy)]
struct Barrier {
    arrived: u32,
    waiting: u32,
    expected_warps: u32,
    popc: u32,
    all: bool,
    any: bool,
}

/// One resident CTA.
#[derive(Debug)]
pub struct Cta {
    pub id: [u32; 3],
    /// The CTA's shared memory; empty for a CTA of a cluster of several, whose memory is
    /// its rank's in [`cluster::ClusterState`].
    shared: FlatSpace,
    warps: Vec<Warp>,
    barriers: [Barrier; MAX_BARRIERS],
    /// Its cluster, when the launch has clusters of more than one CTA.
    cluster: Option<cluster::ClusterMember>,
}

impl Cta {
    pub fn num_warps(&self) -> usize {
        self.warps.len()
    }
    pub fn warp_status(&self, w: usize) -> WarpStatus {
        self.warps.get(w).map_or(WarpStatus::Exited, |w| w.status)
    }
    /// True when every warp has exited.
    pub fn is_done(&self) -> bool {
        self.warps.iter().all(|w| w.status == WarpStatus::Exited)
    }
    /// Its cluster (clusters of more than one CTA only).
    pub fn cluster(&self) -> Option<&cluster::ClusterMember> {
        self.cluster.as_ref()
    }
    /// Releases the warps waiting at the cluster barrier whose phase another CTA of the
    /// cluster completed; true when any was released.
    pub fn wake_cluster_waiters(&mut self) -> bool {
        let Some(c) = &self.cluster else {
            return false;
        };
        let waiting = WarpStatus::AtBarrier(CLUSTER_BARRIER as u32);
        if !self.warps.iter().any(|w| w.status == waiting) {
            return false;
        }
        let phase = c.state.barrier_phase();
        let mut woke = false;
        for w in &mut self.warps {
            if w.status == waiting && w.cluster_phase < phase {
                w.status = WarpStatus::Ready;
                w.cluster_arrived = 0;
                woke = true;
            }
        }
        woke
    }
}

/// Counts of a functional run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunStats {
    pub warp_instructions: u64,
    pub thread_instructions: u64,
}

/// A kernel launch in progress: parameter buffer, grid shape and the resident CTAs.
pub struct Launch<'e> {
    pub(crate) mem: &'e mut GlobalMemory,
    pub(crate) module: &'e LoadedModule,
    pub(crate) out: &'e mut (dyn Write + Send),
    pub(crate) textures: &'e crate::texture::TextureTable,
    observer: Option<&'e mut dyn StepObserver>,
    kernel: usize,
    pub config: LaunchConfig,
    params: FlatSpace,
    limits: Limits,
    step: WarpStep,
    /// Externally supplied cycle count for `%clock`; `None` uses the instruction count.
    pub clock: Option<u64>,
    pub stats: RunStats,
    /// The lane of the first stray access of the executing instruction.
    stray_lane: Option<usize>,
    /// Global loads, stores, atomics and reductions compute their addresses, read their
    /// operands and leave the memory access to [`Launch::complete_access`]
    /// (`WarpStep::deferred_access`): executors of the parallel phase only.
    pub(crate) defer_global: bool,

    /// Global-to-shared `cp.async.bulk` copies keep their bytes until
    /// [`Launch::complete_bulk_copy`] (the timing model, which knows when they arrive);
    /// otherwise they land when they issue.
    pub defer_bulk_copies: bool,
    /// The instructions to step over (a profiling run of the control slice,
    /// [`crate::Emulator::run_control_slice`]); `None` executes everything.
    pub(crate) step_over: Option<&'e crate::control_slice::ControlSlice>,
    /// The cluster shape in CTAs ([1, 1, 1] without clusters).
    cluster_shape: [u32; 3],
    /// `%is_explicit_cluster`: the kernel declares a cluster or the launch asks for one.
    explicit_cluster: bool,
    /// Cluster-barrier phases completed by this launch's CTAs (clusters of several CTAs):
    /// a caller that holds CTAs of a cluster elsewhere wakes their waiters when it grows
    /// ([`Cta::wake_cluster_waiters`]).
    pub cluster_releases: u64,
    /// Register storage of finished CTAs' warps ([`Launch::recycle_cta`]), for the next
    /// CTAs to start with.
    spare_regs: Vec<Vec<u64>>,
    /// Whether steps record their destinations' values (`WarpStep::dst_values`): always,
    /// except inside [`Launch::run_ctas`] when no observer reads them.
    record_destinations: bool,
}

/// The most warps' register storage [`Launch::recycle_cta`] keeps (a CTA has at most 32
/// warps).
const MAX_SPARE_REGS: usize = 64;

type ExecResult<T> = Result<T, ExecError>;

/// Per-lane iteration over a mask.
#[inline]
fn lanes(mask: u32) -> impl Iterator<Item = usize> {
    let mut m = mask;
    std::iter::from_fn(move || {
        if m == 0 {
            None
        } else {
            let l = m.trailing_zeros();
            m &= m - 1;
            Some(l as usize)
        }
    })
}

impl<'e> Launch<'e> {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        mem: &'e mut GlobalMemory,
        module: &'e LoadedModule,
        out: &'e mut (dyn Write + Send),
        textures: &'e crate::texture::TextureTable,
        observer: Option<&'e mut dyn StepObserver>,
        kernel: FuncId,
        config: LaunchConfig,
        params: &[u8],
        limits: Limits,
    ) -> ExecResult<Launch<'e>> {
        let f = module.program.functions.get(kernel.index());
        let bad = |msg: String| {
            ExecError::new(
                ErrorKind::Launch(msg),
                Location {
                    kernel: f.map_or(String::new(), |f| f.name.clone()),
                    ..Default::default()
                },
            )
        };
        let f = f.ok_or_else(|| bad(format!("no function {kernel}")))?;
        if f.kind != FunctionKind::Kernel || !f.has_body {
            return Err(bad(format!("'{}' is not a kernel with a body", f.name)));
        }
        let threads = config.threads_per_cta();
        if threads == 0 || threads > 1024 || config.grid.contains(&0) {
            return Err(bad(format!(
                "grid {:?} block {:?} is not launchable",
                config.grid, config.block
            )));
        }
        // A kernel frame over the per-thread limit would be allocated 32 times per warp
        // when its CTA starts (1 GiB of `.local` aborted the process): refused here.
        let frame = module.funcs.get(kernel.index()).map_or(0, |e| e.frame_size);
        if frame > limits.local_bytes_per_thread {
            return Err(ExecError::new(
                ErrorKind::LocalOverflow {
                    needed: frame,
                    limit: limits.local_bytes_per_thread,
                },
                Location {
                    kernel: f.name.clone(),
                    ..Default::default()
                },
            ));
        }
        let declared = f.directives.reqnctapercluster;
        let cluster_shape = match (config.cluster, declared) {
            (Some(asked), Some(d)) if asked != d => {
                return Err(bad(format!(
                    "the launch asks for clusters of {asked:?} CTAs, but the kernel declares \
                     .reqnctapercluster {d:?}"
                )))
            }
            (Some(c), _) | (None, Some(c)) => c,
            (None, None) => {
                // PTX ISA, ".explicitcluster": the kernel must be launched with cluster
                // dimensions (its own `.reqnctapercluster` or the launch's).
                if f.directives.explicitcluster {
                    return Err(bad(
                        "the kernel declares .explicitcluster without .reqnctapercluster, so \
                         the launch must give a cluster shape (cudaLaunchKernelEx's cluster \
                         dimension attribute)"
                            .to_string(),
                    ));
                }
                [1, 1, 1]
            }
        };
        let size: u64 = cluster_shape.iter().map(|&c| u64::from(c)).product();
        // PTX ISA, ".maxclusterrank": at most that many CTAs in a cluster.
        if let Some(max) = f.directives.maxclusterrank {
            if size > u64::from(max) {
                return Err(bad(format!(
                    "a cluster of {cluster_shape:?} = {size} CTAs, but the kernel declares \
                     .maxclusterrank {max}"
                )));
            }
        }
        if cluster_shape.contains(&0) || size > u64::from(cluster::MAX_CLUSTER_CTAS) {
            return Err(bad(format!(
                "cluster shape {cluster_shape:?} is not from 1 to {} CTAs",
                cluster::MAX_CLUSTER_CTAS
            )));
        }
        if (0..3).any(|i| !config.grid[i].is_multiple_of(cluster_shape[i])) {
            return Err(bad(format!(
                "grid {:?} is not a whole number of clusters of {cluster_shape:?} CTAs",
                config.grid
            )));
        }
        let explicit_cluster = config.cluster.is_some() || f.directives.explicit_cluster();
        let mut pbuf = FlatSpace::new((f.param_size as usize).max(params.len()));
        pbuf.bytes[..params.len()].copy_from_slice(params);
        if (params.len() as u64) < f.param_size {
            return Err(bad(format!(
                "parameter buffer has {} bytes, kernel needs {}",
                params.len(),
                f.param_size
            )));
        }
        Ok(Launch {
            mem,
            module,
            out,
            textures,
            observer,
            kernel: kernel.index(),
            config,
            params: pbuf,
            limits,
            step: WarpStep::default(),
            clock: None,
            stats: RunStats::default(),
            stray_lane: None,
            defer_global: false,
            defer_bulk_copies: false,
            step_over: None,
            cluster_shape,
            explicit_cluster,
            cluster_releases: 0,
            spare_regs: Vec::new(),
            record_destinations: true,
        })
    }

    /// The cluster shape in CTAs ([1, 1, 1] without clusters).
    pub fn cluster_shape(&self) -> [u32; 3] {
        self.cluster_shape
    }

    /// CTAs per cluster.
    pub fn cluster_size(&self) -> u32 {
        self.cluster_shape.iter().product()
    }

    /// Clusters in the grid.
    pub fn num_clusters(&self) -> u64 {
        self.config.num_ctas() / u64::from(self.cluster_size())
    }

    /// Creates the CTAs of the cluster with linear index `linear` (clusters x fastest),
    /// in rank order; for clusters of one CTA, the CTA with that linear index.
    pub fn start_cluster(&mut self, linear: u64) -> ExecResult<Vec<Cta>> {
        let size = self.cluster_size();
        if size == 1 {
            return Ok(vec![self.start_cta(linear)?]);
        }
        let [gx, gy, _] = self.config.grid;
        let s = self.cluster_shape;
        let (cx, cy) = (u64::from(gx / s[0]), u64::from(gy / s[1]));
        let cid = [
            (linear % cx) as u32,
            ((linear / cx) % cy) as u32,
            (linear / (cx * cy)) as u32,
        ];
        let state = std::sync::Arc::new(cluster::ClusterState::new(
            s,
            self.shared_bytes(),
            self.config.threads_per_cta(),
        ));
        let mut ctas = Vec::with_capacity(size as usize);
        for rank in 0..size {
            let ctaid = [rank % s[0], (rank / s[0]) % s[1], rank / (s[0] * s[1])];
            let id = [
                cid[0] * s[0] + ctaid[0],
                cid[1] * s[1] + ctaid[1],
                cid[2] * s[2] + ctaid[2],
            ];
            let member = cluster::ClusterMember {
                state: state.clone(),
                rank,
                id: cid,
                ctaid,
            };
            ctas.push(self.make_cta(id, Some(member)));
        }
        Ok(ctas)
    }

    fn shared_bytes(&self) -> usize {
        (self.module.dynamic_shared_base + self.config.dynamic_shared as u64) as usize
    }

    pub fn kernel_name(&self) -> &str {
        &self.module.program.functions[self.kernel].name
    }

    /// Creates the CTA with linear index `linear` (x fastest).
    /// A launch with clusters of several CTAs starts whole clusters
    /// ([`Launch::start_cluster`]); this is an error there.
    pub fn start_cta(&mut self, linear: u64) -> ExecResult<Cta> {
        if self.cluster_size() > 1 {
            return Err(ExecError::new(
                ErrorKind::Launch(format!(
                    "a CTA of a launch with clusters of {:?} CTAs started alone",
                    self.cluster_shape
                )),
                Location {
                    kernel: self.kernel_name().to_string(),
                    ..Default::default()
                },
            ));
        }
        let [gx, gy, _] = self.config.grid;
        let id = [
            (linear % gx as u64) as u32,
            ((linear / gx as u64) % gy as u64) as u32,
            (linear / (gx as u64 * gy as u64)) as u32,
        ];
        Ok(self.make_cta(id, None))
    }

    fn make_cta(&mut self, id: [u32; 3], cluster: Option<cluster::ClusterMember>) -> Cta {
        let threads = self.config.threads_per_cta();
        let nwarps = threads.div_ceil(WARP_SIZE);
        let module = self.module;
        let ef = &module.funcs[self.kernel];
        let shared = FlatSpace::new(if cluster.is_some() {
            0
        } else {
            self.shared_bytes()
        });
        let mut warps = Vec::with_capacity(nwarps as usize);
        for w in 0..nwarps {
            let first = w * WARP_SIZE;
            let n = (threads - first).min(WARP_SIZE);
            let valid = if n == 32 { u32::MAX } else { (1u32 << n) - 1 };
            let mut warp = Warp {
                index: w,
                valid,
                exited: 0,
                status: WarpStatus::Ready,
                frames: vec![Frame {
                    func: self.kernel,
                    regs: zeroed_regs(&mut self.spare_regs, ef.num_regs * 32),
                    local_base: 0,
                    stack_base: 0,
                    param_addrs: Vec::new(),
                    ret_addrs: Vec::new(),
                }],
                stack: vec![SimtEntry {
                    pc: 0,
                    mask: valid,
                    rpc: NO_PC,
                }],
                carry: 0,
                local: Vec::new(),
                pending_red: None,
                async_copies: Vec::new(),
                async_groups: 0,
                wait_pc: 0,
                instructions: 0,
                setmaxnregs: 0,
                maxnreg: 0,
                bulk_copies: Vec::new(),
                bulk_next: 0,
                cluster_arrived: 0,
                cluster_phase: 0,
                wgmmas: 0,
                last_wgmma: (0, 0),
            };
            if ef.frame_size > 0 {
                // Pages are allocated at their first write, so a large frame costs what
                // its threads touch (`memory::local`).
                warp.local = (0..32).map(|_| LocalMemory::new(ef.frame_size)).collect();
            }
            warps.push(warp);
        }
        Cta {
            id,
            shared,
            warps,
            barriers: [Barrier::default(); MAX_BARRIERS],
            cluster,
        }
    }

    /// Runs every CTA of the grid in order, warps round-robin in slices, and returns the
    /// instruction counts.
    pub fn run_functional(&mut self) -> ExecResult<RunStats> {
        // Nothing bounds the run, so nothing stops it: both outcomes leave the counts.
        let _ = self.run_functional_bounded(&RunBound::default())?;
        Ok(self.stats)
    }

    /// Runs the CTAs of cluster `linear` together, warps round-robin in slices across
    /// them (a warp waiting at the cluster barrier resumes when the others complete it).
    /// `bound` stops it as it stops [`Launch::run_ctas_bounded`]; `before` is the count
    /// the bound's instruction budget starts from.
    fn run_cluster(
        &mut self,
        linear: u64,
        bound: &RunBound,
        before: RunStats,
    ) -> ExecResult<Option<FunctionalStop>> {
        const SLICE: u32 = 256;
        let mut check = run_bound::BoundCheck::new(bound, before);
        let mut ctas = self.start_cluster(linear)?;
        loop {
            let mut progressed = false;
            for cta in &mut ctas {
                progressed |= cta.wake_cluster_waiters();
                for w in 0..cta.warps.len() {
                    let mut n = 0;
                    while cta.warps[w].status == WarpStatus::Ready && n < SLICE {
                        if let Some(cause) = check.stop(self.stats) {
                            let stats = check.since(self.stats);
                            return Ok(Some(self.functional_stop(cta, cause, stats)));
                        }
                        self.execute(cta, w)?;
                        n += 1;
                        progressed = true;
                    }
                }
            }
            if ctas.iter().all(Cta::is_done) {
                return Ok(None);
            }
            if !progressed {
                let stuck = ctas.iter().find(|c| !c.is_done()).unwrap_or(&ctas[0]);
                return Err(self.deadlock_error(stuck));
            }
        }
    }

    /// Runs CTAs `ctas` (linear indices) one after another, warps round-robin in slices,
    /// and returns their instruction counts.
    pub fn run_ctas(&mut self, ctas: std::ops::Range<u64>) -> ExecResult<RunStats> {
        match self.run_ctas_bounded(ctas, &RunBound::default())? {
            Ok(stats) => Ok(stats),
            // Nothing bounds the run, so nothing stops it.
            Err(stop) => Ok(stop.stats),
        }
    }

    /// Runs the whole grid as [`Launch::run_functional`] does, until `bound` stops it
    /// (`Ok(Err(stop))`, [`run_bound`]).
    pub fn run_functional_bounded(
        &mut self,
        bound: &RunBound,
    ) -> ExecResult<Result<RunStats, FunctionalStop>> {
        if self.cluster_size() > 1 {
            // Clusters of several CTAs run together, one cluster after another.
            let before = self.stats;
            for c in 0..self.num_clusters() {
                if let Some(stop) = self.run_cluster(c, bound, before)? {
                    return Ok(Err(stop));
                }
            }
            return Ok(Ok(RunStats {
                warp_instructions: self.stats.warp_instructions - before.warp_instructions,
                thread_instructions: self.stats.thread_instructions - before.thread_instructions,
            }));
        }
        self.run_ctas_bounded(0..self.config.num_ctas(), bound)
    }

    /// Runs CTAs `ctas` as [`Launch::run_ctas`] does, until `bound` stops the run: then
    /// `Ok(Err(stop))` with the counts so far and the live warps of the CTA it was in.
    pub fn run_ctas_bounded(
        &mut self,
        ctas: std::ops::Range<u64>,
        bound: &RunBound,
    ) -> ExecResult<Result<RunStats, FunctionalStop>> {
        // Nothing reads the steps but the observer.
        let record = self
            .observer
            .as_deref()
            .is_some_and(|o| o.reads_destinations());
        let saved = std::mem::replace(&mut self.record_destinations, record);
        let result = self.run_ctas_in_order(ctas, bound);
        self.record_destinations = saved;
        result
    }

    /// [`Launch::run_ctas_bounded`]'s loop.
    fn run_ctas_in_order(
        &mut self,
        ctas: std::ops::Range<u64>,
        bound: &RunBound,
    ) -> ExecResult<Result<RunStats, FunctionalStop>> {
        const SLICE: u32 = 256;
        let mut check = run_bound::BoundCheck::new(bound, self.stats);
        for linear in ctas {
            // Clusters of several CTAs run together ([`Launch::run_functional`]).
            let mut cta = self.start_cta(linear)?;
            loop {
                let mut progressed = false;
                for w in 0..cta.warps.len() {
                    let mut n = 0;
                    while cta.warps[w].status == WarpStatus::Ready && n < SLICE {
                        if let Some(cause) = check.stop(self.stats) {
                            let stats = check.since(self.stats);
                            return Ok(Err(self.functional_stop(&cta, cause, stats)));
                        }
                        self.execute(&mut cta, w)?;
                        n += 1;
                        progressed = true;
                    }
                }
                if cta.is_done() {
                    break;
                }
                if !progressed {
                    return Err(self.deadlock_error(&cta));
                }
            }
            self.recycle_cta(cta);
        }
        Ok(Ok(check.since(self.stats)))
    }

    /// The stop of a functional run in `cta`: its live warps and where each is.
    fn functional_stop(&self, cta: &Cta, cause: StopCause, stats: RunStats) -> FunctionalStop {
        let warps = cta
            .warps
            .iter()
            .filter(|w| w.status != WarpStatus::Exited)
            .map(|w| {
                let barrier = match w.status {
                    WarpStatus::AtBarrier(b) => Some(b),
                    _ => None,
                };
                let func = w.frames.last().map_or(self.kernel, |f| f.func);
                let pc = match barrier {
                    Some(_) => Some(w.wait_pc),
                    None => w.stack.last().map(|e| e.pc),
                };
                let ptx_line = pc.and_then(|pc| self.inst_line(FuncId(func as u32), InstId(pc)));
                LiveWarp {
                    warp: w.index,
                    ptx_line,
                    barrier,
                }
            })
            .collect();
        FunctionalStop {
            cause,
            stats,
            cta: cta.id,
            warps,
        }
    }

    /// Takes back a finished CTA's register storage for the CTAs started after it
    /// ([`Launch::start_cta`] zeroes it again): a CTA then allocates no registers and
    /// faults no fresh pages in.
    pub fn recycle_cta(&mut self, cta: Cta) {
        for warp in cta.warps {
            for frame in warp.frames {
                if self.spare_regs.len() < MAX_SPARE_REGS {
                    self.spare_regs.push(frame.regs);
                }
            }
        }
    }

    /// The PTX line of instruction `inst` of function `func` of the launched module.
    pub fn inst_line(&self, func: FuncId, inst: InstId) -> Option<u32> {
        let f = self.module.program.functions.get(func.index())?;
        f.insts.get(inst.index()).map(|i| i.line).filter(|&l| l > 0)
    }

    /// The error for a CTA whose live warps all wait at barriers that cannot complete.
    pub fn deadlock_error(&self, cta: &Cta) -> ExecError {
        let first = cta
            .warps
            .iter()
            .find(|w| matches!(w.status, WarpStatus::AtBarrier(_)));
        let (barrier, pc, warp) = match first {
            Some(w) => match w.status {
                WarpStatus::AtBarrier(b) => (b, w.wait_pc, w),
                _ => unreachable!(),
            },
            None => return self.error_at(cta, 0, ErrorKind::WarpNotReady(0), None),
        };
        let waiting: Vec<u32> = cta
            .warps
            .iter()
            .filter(|w| w.status == WarpStatus::AtBarrier(barrier))
            .map(|w| w.index)
            .collect();
        let missing: Vec<u32> = cta
            .warps
            .iter()
            .filter(|w| w.status != WarpStatus::AtBarrier(barrier))
            .map(|w| w.index)
            .collect();
        let mut e = self.error_at(
            cta,
            warp.index as usize,
            ErrorKind::BarrierDeadlock {
                barrier,
                waiting,
                missing,
            },
            None,
        );
        let f = &self.module.program.functions[warp.frames.last().map_or(self.kernel, |f| f.func)];
        if let Some(inst) = f.insts.get(pc as usize) {
            e.location.line = inst.line;
            e.location.inst_text = self.module.program.inst_text(inst).to_string();
        }
        e
    }

    /// Logs an allowed stray access of the instruction just executed, once per kernel
    /// and instruction.
    #[cold]
    fn note_stray(
        &mut self,
        cta: &Cta,
        w: usize,
        (func, inst): (FuncId, InstId),
        access: crate::memory::StrayAccess,
    ) {
        let lane = self.stray_lane.take();
        let prog = &self.module.program;
        let f = &prog.functions[func.index()];
        let (line, inst_text) = f
            .insts
            .get(inst.0 as usize)
            .map_or((0, String::new()), |i| {
                (i.line, prog.inst_text(i).to_string())
            });
        let kernel = &prog.functions[self.kernel].name;
        let seen = self.mem.stray_warnings.iter().any(|s| {
            s.location.kernel == *kernel
                && s.location.function == f.name
                && s.location.line == line
                && s.location.inst_text == inst_text
        });
        if seen {
            return;
        }
        let mut location = Location {
            kernel: kernel.clone(),
            function: f.name.clone(),
            file: prog.file_name.clone(),
            line,
            inst_text,
            cta: cta.id,
            ..Default::default()
        };
        if let Some(warp) = cta.warps.get(w) {
            location.warp = Some(warp.index);
            if let Some(l) = lane {
                let t = warp.index * WARP_SIZE + l as u32;
                let [bx, by, _] = self.config.block;
                location.thread = Some([t % bx, (t / bx) % by, t / (bx * by)]);
                location.lane = Some(l as u32);
            }
        }
        self.mem
            .stray_warnings
            .push(crate::memory::StrayWarning { location, access });
    }

    fn error_at(&self, cta: &Cta, w: usize, kind: ErrorKind, lane: Option<usize>) -> ExecError {
        let at = cta.warps.get(w).and_then(|warp| {
            let (frame, top) = (warp.frames.last()?, warp.stack.last()?);
            Some((frame.func, top.pc))
        });
        self.error_at_inst(cta, w, at, kind, lane)
    }

    /// [`Launch::error_at`] for instruction `at` (function index and pc) of the warp.
    fn error_at_inst(
        &self,
        cta: &Cta,
        w: usize,
        at: Option<(usize, u32)>,
        kind: ErrorKind,
        lane: Option<usize>,
    ) -> ExecError {
        let prog = &self.module.program;
        let kernel = prog.functions[self.kernel].name.clone();
        let mut loc = Location {
            kernel: kernel.clone(),
            file: prog.file_name.clone(),
            cta: cta.id,
            ..Default::default()
        };
        if let Some(warp) = cta.warps.get(w) {
            loc.warp = Some(warp.index);
            if let Some((func, pc)) = at {
                let f = &prog.functions[func];
                loc.function = f.name.clone();
                if let Some(inst) = f.insts.get(pc as usize) {
                    loc.line = inst.line;
                    loc.inst_text = prog.inst_text(inst).to_string();
                }
            }
            if let Some(l) = lane {
                let t = warp.index * WARP_SIZE + l as u32;
                let [bx, by, _] = self.config.block;
                loc.thread = Some([t % bx, (t / bx) % by, t / (bx * by)]);
                loc.lane = Some(l as u32);
            }
        }
        ExecError::new(kind, loc)
    }

    /// Lands the global-to-shared bulk copies of warp `w` that started with id `id`
    /// ([`WarpStep::bulk_copy`]): their bytes reach shared memory and complete as
    /// transactions on their mbarriers. Copies already landed (or of a CTA that has
    /// finished) are ignored.
    pub fn complete_bulk_copy(&mut self, cta: &mut Cta, w: usize, id: u32) -> ExecResult<()> {
        let Some(warp) = cta.warps.get_mut(w) else {
            return Ok(());
        };
        let mut copies = std::mem::take(&mut warp.bulk_copies);
        let mut result = Ok(());
        let member = cta.cluster.as_ref();
        let mut guard = member.map(|c| cluster::lock(&c.state.shared[c.rank as usize]));
        let shared = match guard.as_deref_mut() {
            Some(s) => s,
            None => &mut cta.shared,
        };
        copies.retain(|c| {
            if c.id != id || result.is_err() {
                return true;
            }
            if let Err(kind) = bulk::land_in(c, shared, member) {
                result = Err((kind, c.at));
            }
            false
        });
        drop(guard);
        if let Some(warp) = cta.warps.get_mut(w) {
            warp.bulk_copies = copies;
        }
        result.map_err(|(kind, at)| self.error_at_inst(cta, w, Some(at), kind, None))
    }

    /// An error of warp `w` located at the instruction of the last `execute` (for the
    /// timing model's checks of what it executed, such as `setmaxnreg`'s register pool).
    pub fn error_at_last_step(&self, cta: &Cta, w: usize, kind: ErrorKind) -> ExecError {
        let func = self.step.func.index();
        self.error_at_inst(cta, w, Some((func, self.step.inst.0)), kind, None)
    }

    /// The step record of the last `execute`.
    pub fn last_step(&self) -> &WarpStep {
        &self.step
    }

    /// Executes one warp instruction of warp `w` of `cta`.
    pub fn execute(&mut self, cta: &mut Cta, w: usize) -> ExecResult<&WarpStep> {
        match cta.warps.get(w).map(|w| w.status) {
            Some(WarpStatus::Ready) => {}
            _ => return Err(self.error_at(cta, w, ErrorKind::WarpNotReady(w as u32), None)),
        }
        let live_before = if cta.cluster.is_some() {
            cta.warps[w].live_threads()
        } else {
            0
        };
        match self.step_warp(cta, w) {
            Ok(()) => {
                if cta.cluster.is_some() {
                    self.cluster_exits(cta, w, live_before);
                }
                if cta.warps[w].status == WarpStatus::Exited {
                    self.check_warpgroup(cta, w)?;
                }
                if let Some(access) = self.mem.take_stray() {
                    self.note_stray(cta, w, (self.step.func, self.step.inst), access);
                }
                if let Some(o) = self.observer.as_deref_mut() {
                    o.observe(cta.id, w as u32, &self.step);
                }
                Ok(&self.step)
            }
            Err((kind, lane)) => Err(self.error_at(cta, w, kind, lane)),
        }
    }
}

impl Launch<'_> {
    /// Warp `w` has exited: every warp of its warpgroup (four consecutive warps) that has
    /// exited too must have executed as many `wgmma.mma_async`s. The ISA requires all 128
    /// threads of the warpgroup to execute each one (`.sync.aligned`; "behavior is
    /// undefined" otherwise), so a mismatch is an error located at the last `wgmma` of the
    /// warp that executed more, rather than a product of the rows of some warps only.
    fn check_warpgroup(&self, cta: &Cta, w: usize) -> ExecResult<()> {
        let me = &cta.warps[w];
        let group = w / 4;
        for (p, peer) in cta.warps.iter().enumerate().skip(4 * group).take(4) {
            if p == w || peer.status != WarpStatus::Exited || peer.wgmmas == me.wgmmas {
                continue;
            }
            let (more, fewer) = if peer.wgmmas > me.wgmmas {
                (p, w)
            } else {
                (w, p)
            };
            let (m, f) = (&cta.warps[more], &cta.warps[fewer]);
            let kind = ErrorKind::Wgmma(format!(
                "warp {} of warpgroup {group} executed wgmma.mma_async {} time{} and warp {} \
                 {} time{}; all four warps of a warpgroup must execute every \
                 wgmma.mma_async (.sync.aligned; the ISA leaves anything else undefined)",
                m.index,
                m.wgmmas,
                if m.wgmmas == 1 { "" } else { "s" },
                f.index,
                f.wgmmas,
                if f.wgmmas == 1 { "" } else { "s" },
            ));
            return Err(self.error_at_inst(cta, more, Some(m.last_wgmma), kind, None));
        }
        Ok(())
    }

    /// Threads of warp `w` of a cluster's CTA that exited in the last step: they leave
    /// the cluster barrier (arrivals of the current phase withdrawn), which may complete
    /// its phase; the CTA's last exit marks its shared memory as gone.
    fn cluster_exits(&mut self, cta: &mut Cta, w: usize, live_before: u32) {
        let Some(c) = &cta.cluster else { return };
        let warp = &mut cta.warps[w];
        let gone = live_before - warp.live_threads().min(live_before);
        if gone == 0 {
            return;
        }
        let mut bar = cluster::lock(&c.state.barrier);
        if warp.cluster_phase == bar.phase && warp.cluster_arrived != 0 {
            let withdrawn = (warp.cluster_arrived & warp.exited).count_ones();
            if warp.status == WarpStatus::Exited {
                bar.arrived -= warp.cluster_arrived.count_ones().min(bar.arrived);
                warp.cluster_arrived = 0;
            } else {
                bar.arrived -= withdrawn.min(bar.arrived);
                warp.cluster_arrived &= !warp.exited;
            }
        }
        bar.live -= gone.min(bar.live);
        let released = bar.complete_if_all_arrived();
        let phase = bar.phase;
        drop(bar);
        if released {
            self.cluster_releases += 1;
            release_cluster_waiters(&mut cta.warps, phase);
        }
        if cta.is_done() {
            if let Some(c) = &cta.cluster {
                if let Some(f) = cluster::lock(&c.state.finished).get_mut(c.rank as usize) {
                    *f = true;
                }
            }
        }
    }
}

/// Releases the warps of a CTA that wait at the cluster barrier for a phase before
/// `phase`.
fn release_cluster_waiters(warps: &mut [Warp], phase: u64) {
    let waiting = WarpStatus::AtBarrier(CLUSTER_BARRIER as u32);
    for w in warps {
        if w.status == waiting && w.cluster_phase < phase {
            w.status = WarpStatus::Ready;
            w.cluster_arrived = 0;
        }
    }
}

/// `len` zeroed registers: spare storage if there is some, else a new allocation.
fn zeroed_regs(spare: &mut Vec<Vec<u64>>, len: usize) -> Vec<u64> {
    match spare.pop() {
        Some(mut regs) => {
            regs.clear();
            regs.resize(len, 0);
            regs
        }
        None => vec![0; len],
    }
}

/// An error before location is attached: what, and which lane.
pub(crate) type LaneError = (ErrorKind, Option<usize>);

//! One warp instruction: operand reads, the per-lane semantics of every decoded [`Op`],
//! memory accesses, warp-wide operations, barriers and control flow.

use std::mem::MaybeUninit;

use ir::function::{Dim, SpecialReg};
use ir::op::{self, AtomOp, BarrierKind, BoolOp, Callee, CmpOp, Op, Precision, ScalarType, Space};

use super::cluster::{self, ClusterMember};
use super::{
    lanes, matrix, matrix_sparse, mbarrier, printf, AccessKind, Barrier, Cta, Frame, LaneError,
    Launch, MemInfo, MemSpace, PendingCopy, PendingRed, SimtEntry, StepEvent, Warp, WarpStatus,
    WarpStep, WARP_SIZE,
};
use crate::error::ErrorKind;
use crate::memory::local::{LocalMemory, LocalOverflow};
use crate::memory::{
    check_aligned, FlatSpace, MemError, FUNC_WINDOW, LOCAL_WINDOW, PARAM_WINDOW, SHARED_WINDOW,
    WINDOW_SIZE,
};
use crate::module::{Base, ExecFunction, Src, NO_PC};
use crate::semantics::compare::{apply_bool, cmp_float, cmp_int};
use crate::semantics::convert::{cvt, f32_to_tf32, CvtRounding, CvtType, Tf32Rounding};
use crate::semantics::exact::Rounding;
use crate::semantics::float::{self as fl, FpMode, Transcendental};
use crate::semantics::half::{self, HalfKind, HalfOp};
use crate::semantics::int::{self, IntType};
use crate::tensor_map::TensorMap;
use crate::texture::TexCoords;

/// Makes the warp's `cp.async` copies of commit groups below `visible_before` visible in
/// shared memory, oldest first, and keeps the rest pending.
fn complete_copies(
    warp: &mut Warp,
    shared: &mut FlatSpace,
    visible_before: u32,
) -> Result<(), LaneError> {
    let mut kept = 0;
    for i in 0..warp.async_copies.len() {
        let c = warp.async_copies[i];
        if c.group < visible_before {
            for k in 0..c.len as u64 {
                shared
                    .write_uint("shared", c.shared_offset + k, 1, c.bytes[k as usize] as u64)
                    .map_err(|e| (e.into(), None))?;
            }
        } else {
            warp.async_copies[kept] = c;
            kept += 1;
        }
    }
    warp.async_copies.truncate(kept);
    Ok(())
}

/// Where a lane's access lands.
#[derive(Clone, Copy, Debug)]
enum Phys {
    Global(u64),
    Shared(u64),
    Local(u64),
    Param(u64),
    /// Offset in the shared memory of another CTA of the cluster (rank, offset); the
    /// executing CTA's own rank is [`Phys::Shared`].
    Cluster(u32, u64),
}

/// Values needed to read special registers.
struct SpecialCtx {
    block: [u32; 3],
    grid: [u32; 3],
    cta: [u32; 3],
    warp: u32,
    clock: u64,
    dynamic_shared: u32,
    total_shared: u32,
    /// `%is_explicit_cluster`: the kernel declares a cluster or the launch asks for one.
    explicit_cluster: bool,
    cluster_shape: [u32; 3],
    /// `%clusterid`, `%cluster_ctaid` and `%cluster_ctarank`.
    cluster_id: [u32; 3],
    cluster_ctaid: [u32; 3],
    cluster_rank: u32,
}

fn int_type(ty: ScalarType) -> IntType {
    if ty == ScalarType::Pred {
        return IntType {
            bits: 1,
            signed: false,
        };
    }
    IntType {
        bits: ty.bits().clamp(8, 64),
        signed: ty.is_signed_int(),
    }
}

fn rounding(r: Option<op::Rounding>) -> Rounding {
    match r {
        Some(op::Rounding::Rz) | Some(op::Rounding::Rzi) => Rounding::Zero,
        Some(op::Rounding::Rm) | Some(op::Rounding::Rmi) => Rounding::Down,
        Some(op::Rounding::Rp) | Some(op::Rounding::Rpi) => Rounding::Up,
        _ => Rounding::NearestEven,
    }
}

fn fp_mode(m: &op::FloatMode) -> FpMode {
    FpMode {
        rnd: rounding(m.rounding),
        ftz: m.ftz,
        sat: m.sat,
    }
}

fn half_kind(ty: ScalarType) -> Option<(HalfKind, bool)> {
    match ty {
        ScalarType::F16 => Some((HalfKind::F16, false)),
        ScalarType::F16x2 => Some((HalfKind::F16, true)),
        ScalarType::Bf16 => Some((HalfKind::Bf16, false)),
        ScalarType::Bf16x2 => Some((HalfKind::Bf16, true)),
        _ => None,
    }
}

fn cvt_type(ty: ScalarType) -> Option<CvtType> {
    Some(match ty {
        ScalarType::F16 => CvtType::F16,
        ScalarType::Bf16 => CvtType::Bf16,
        ScalarType::F32 => CvtType::F32,
        ScalarType::F64 => CvtType::F64,
        t if t.is_float() => return None,
        ScalarType::Pred | ScalarType::B128 => return None,
        t => CvtType::Int(int_type(t)),
    })
}

fn unsupported(what: impl std::fmt::Display) -> LaneError {
    (ErrorKind::Unsupported(what.to_string()), None)
}

#[inline]
fn mask_bits(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// Reads a source operand for one lane. Registers and register-based addresses, almost
/// every operand the per-lane loops read, are read in place; the other kinds through a
/// call (the whole `match` was not inlined: a call per lane and operand).
#[inline(always)]
fn read(frame: &Frame, sc: &SpecialCtx, src: Src, lane: usize) -> u64 {
    match src {
        Src::Reg(r) => frame.regs[r as usize * 32 + lane],
        Src::Addr {
            base: Base::Reg(r),
            offset,
        } => frame.regs[r as usize * 32 + lane].wrapping_add(offset as u64),
        _ => read_other(frame, sc, src, lane),
    }
}

/// A source operand's values in the 32 lanes, for the per-lane operations without side
/// effects (`rows!` in `step_warp`): a register's row in place; an immediate, or a special
/// register the same in every lane, in every lane of `tmp`; any other operand read into
/// `tmp` for the lanes of `exec` (the others are never used).
#[inline(always)]
fn operand_row<'a>(
    frame: &'a Frame,
    sc: &SpecialCtx,
    src: Src,
    exec: u32,
    tmp: &'a mut MaybeUninit<[u64; 32]>,
) -> &'a [u64; 32] {
    match src {
        Src::Reg(r) => reg_row(&frame.regs, r),
        Src::Imm(v) => tmp.write([v; 32]),
        Src::Special(s) if special_is_uniform(s) => tmp.write([special(sc, s, 0); 32]),
        _ => {
            let row = tmp.write([0; 32]);
            for l in lanes(exec) {
                row[l] = read_other(frame, sc, src, l);
            }
            row
        }
    }
}

/// Register `r`'s row: its value in each of the 32 lanes.
#[inline(always)]
fn reg_row(regs: &[u64], r: u32) -> &[u64; 32] {
    let start = r as usize * 32;
    regs[start..start + 32]
        .try_into()
        .expect("a register row holds 32 lanes")
}

/// Writes the lanes of `exec` of `out` to destination `dst` (nothing when it is not a
/// register): a whole row at once for a full warp.
#[inline(always)]
fn store_row(regs: &mut [u64], dst: Src, exec: u32, out: &[u64; 32]) {
    if let Src::Reg(r) = dst {
        let start = r as usize * 32;
        let row = &mut regs[start..start + 32];
        if exec == u32::MAX {
            row.copy_from_slice(out);
        } else {
            for l in lanes(exec) {
                row[l] = out[l];
            }
        }
    }
}

/// [`read`] for the operands other than registers.
#[inline(never)]
fn read_other(frame: &Frame, sc: &SpecialCtx, src: Src, lane: usize) -> u64 {
    match src {
        Src::Reg(r) => frame.regs[r as usize * 32 + lane],
        Src::NotReg(r) => (frame.regs[r as usize * 32 + lane] & 1) ^ 1,
        Src::Imm(v) => v,
        Src::Special(s) => special(sc, s, lane),
        Src::FrameAddr(o) => frame.local_base + o,
        Src::ParamAddr(Base::FuncParam(i)) => {
            LOCAL_WINDOW + frame.param_addrs.get(i as usize).copied().unwrap_or(0)
        }
        Src::ParamAddr(Base::FuncRet(i)) => {
            LOCAL_WINDOW + frame.ret_addrs.get(i as usize).copied().unwrap_or(0)
        }
        Src::Func(f) => FUNC_WINDOW + f.index() as u64,
        Src::Addr { base, offset } => base_addr(frame, base, lane).wrapping_add(offset as u64),
        _ => 0,
    }
}

#[inline]
fn base_addr(frame: &Frame, base: Base, lane: usize) -> u64 {
    match base {
        Base::Reg(r) => frame.regs[r as usize * 32 + lane],
        Base::Fixed(a) => a,
        Base::Frame(o) => frame.local_base + o,
        Base::FuncParam(i) => frame
            .param_addrs
            .get(i as usize)
            .copied()
            .unwrap_or(u64::MAX),
        Base::FuncRet(i) => frame.ret_addrs.get(i as usize).copied().unwrap_or(u64::MAX),
        Base::KernelParam(o) => o,
    }
}

/// Whether special register `s` reads the same in every lane of a warp (see [`special`]).
fn special_is_uniform(s: SpecialReg) -> bool {
    !matches!(
        s,
        SpecialReg::Tid(_)
            | SpecialReg::Laneid
            | SpecialReg::LanemaskEq
            | SpecialReg::LanemaskLt
            | SpecialReg::LanemaskLe
            | SpecialReg::LanemaskGt
            | SpecialReg::LanemaskGe
    )
}

fn special(sc: &SpecialCtx, s: SpecialReg, lane: usize) -> u64 {
    let t = sc.warp * WARP_SIZE + lane as u32;
    let [bx, by, _] = sc.block;
    let dim = |d: Dim, v: [u32; 3]| v[d as usize] as u64;
    let lane = lane as u32;
    match s {
        SpecialReg::Tid(Dim::X) => (t % bx) as u64,
        SpecialReg::Tid(Dim::Y) => ((t / bx) % by) as u64,
        SpecialReg::Tid(Dim::Z) => (t / (bx * by)) as u64,
        SpecialReg::Ntid(d) => dim(d, sc.block),
        SpecialReg::Ctaid(d) => dim(d, sc.cta),
        SpecialReg::Nctaid(d) => dim(d, sc.grid),
        SpecialReg::Laneid => lane as u64,
        SpecialReg::Warpid => sc.warp as u64,
        SpecialReg::Nwarpid => 64,
        SpecialReg::Smid | SpecialReg::Gridid => 0,
        SpecialReg::Nsmid => 1,
        SpecialReg::Clock => sc.clock & 0xFFFF_FFFF,
        SpecialReg::ClockHi => sc.clock >> 32,
        SpecialReg::Clock64 | SpecialReg::Globaltimer => sc.clock,
        SpecialReg::GlobaltimerLo => sc.clock & 0xFFFF_FFFF,
        SpecialReg::GlobaltimerHi => sc.clock >> 32,
        SpecialReg::LanemaskEq => 1u64 << lane,
        SpecialReg::LanemaskLt => (1u64 << lane) - 1,
        SpecialReg::LanemaskLe => (1u64 << (lane + 1)) - 1,
        SpecialReg::LanemaskGt => (!((1u64 << (lane + 1)) - 1)) & 0xFFFF_FFFF,
        SpecialReg::LanemaskGe => (!((1u64 << lane) - 1)) & 0xFFFF_FFFF,
        SpecialReg::DynamicSmemSize => sc.dynamic_shared as u64,
        SpecialReg::TotalSmemSize => sc.total_shared as u64,
        SpecialReg::Envreg(_) | SpecialReg::Pm(_) => 0,
        // Without clusters every CTA is a cluster of one: rank 0 at (0, 0, 0) of 1x1x1.
        SpecialReg::Clusterid(d) => dim(d, sc.cluster_id),
        SpecialReg::Nclusterid(d) => dim(
            d,
            [
                sc.grid[0] / sc.cluster_shape[0],
                sc.grid[1] / sc.cluster_shape[1],
                sc.grid[2] / sc.cluster_shape[2],
            ],
        ),
        SpecialReg::ClusterCtaid(d) => dim(d, sc.cluster_ctaid),
        SpecialReg::ClusterNctaid(d) => dim(d, sc.cluster_shape),
        SpecialReg::ClusterCtarank => sc.cluster_rank as u64,
        SpecialReg::ClusterNctarank => sc.cluster_shape.iter().product::<u32>() as u64,
        SpecialReg::IsExplicitCluster => sc.explicit_cluster as u64,
    }
}

/// The address an access of `space` uses, from the base-plus-offset sum `addr`. PTX
/// address arithmetic is done in the width of the address: shared and local addresses are
/// 32-bit offsets in their windows, and a 32-bit base register makes a 32-bit address in
/// any space, so the sum wraps modulo 2^32 (`ld.shared.u32 %r1, [%r2+68]` with `%r2` =
/// 0xFFFFFFC0 reads offset 4, not 0x1_0000_0004).
#[inline]
fn effective_address(space: Space, base: Base, addr: u64, reg_bits: &[u8]) -> u64 {
    addr & address_mask(space, base, reg_bits)
}

/// The mask [`effective_address`] applies (the same for every lane of an access).
#[inline]
fn address_mask(space: Space, base: Base, reg_bits: &[u8]) -> u64 {
    let narrow = match space {
        Space::Shared | Space::SharedCluster | Space::Local => true,
        _ => matches!(base, Base::Reg(r) if reg_bits.get(r as usize).is_some_and(|&b| b <= 32)),
    };
    if narrow {
        0xFFFF_FFFF
    } else {
        u64::MAX
    }
}

/// Resolves an address of `space` to a concrete space and offset.
fn resolve(space: Space, base: Base, addr: u64, in_kernel: bool) -> Phys {
    let generic = |a: u64| {
        if (SHARED_WINDOW..SHARED_WINDOW + WINDOW_SIZE).contains(&a) {
            shared_cluster(a - SHARED_WINDOW)
        } else if (LOCAL_WINDOW..LOCAL_WINDOW + WINDOW_SIZE).contains(&a) {
            Phys::Local(a - LOCAL_WINDOW)
        } else if (PARAM_WINDOW..PARAM_WINDOW + WINDOW_SIZE).contains(&a) {
            Phys::Param(a - PARAM_WINDOW)
        } else {
            Phys::Global(a)
        }
    };
    match space {
        Space::Global | Space::Const => Phys::Global(addr),
        Space::Shared => Phys::Shared(addr),
        Space::SharedCluster => shared_cluster(addr),
        Space::Local => Phys::Local(addr),
        Space::Param => match base {
            Base::KernelParam(_) => Phys::Param(addr),
            Base::Frame(_) | Base::FuncParam(_) | Base::FuncRet(_) => Phys::Local(addr),
            _ => match generic(addr) {
                Phys::Global(a) if in_kernel => Phys::Param(a),
                Phys::Global(a) => Phys::Local(a),
                p => p,
            },
        },
        Space::Generic => generic(addr),
    }
}

/// True for an access to another CTA's shared memory (distributed shared memory).
#[inline]
fn is_remote(p: Phys, member: Option<&ClusterMember>) -> bool {
    matches!(p, Phys::Cluster(r, _) if member.is_some_and(|c| c.rank != r))
}

/// `st.async`/`red.async` (PTX ISA 8.1): after a lane's data has landed, its `bytes`
/// complete on the mbarrier at `addr` (`complete_tx`), in whichever CTA of the cluster
/// holds that barrier (the destination's, in the ISA's use).
fn async_complete_tx(
    sp: &mut Spaces<'_>,
    (space, base, addr): (Space, Base, u64),
    bytes: u32,
    l: usize,
    in_kernel: bool,
) -> Result<(), (ErrorKind, Option<usize>)> {
    let bad = |m: String| (ErrorKind::Mbarrier(m), Some(l));
    check_aligned(addr, 8).map_err(|e| (e.into(), Some(l)))?;
    let p = resolve(space, base, addr, in_kernel);
    let (Phys::Shared(offset) | Phys::Cluster(_, offset)) = p else {
        return Err(bad(format!(
            "the mbarrier object at {addr:#x} is not in shared memory"
        )));
    };
    let word = sp.read(p, 8, l).map_err(|k| (k, Some(l)))?;
    let new = mbarrier::change_tx(word, -i64::from(bytes))
        .map_err(|m| bad(format!("{m} (mbarrier at shared offset {offset:#x})")))?;
    sp.write(p, 8, l, new).map_err(|k| (k, Some(l)))
}

/// The destination of `st.async`/`red.async` must be shared memory of the cluster.
fn async_destination(
    p: Phys,
    opcode: &str,
    addr: u64,
    l: usize,
) -> Result<(), (ErrorKind, Option<usize>)> {
    match p {
        Phys::Shared(_) | Phys::Cluster(..) => Ok(()),
        _ => Err((
            ErrorKind::AsyncStore(format!(
                "{opcode}: address {addr:#x} is not in the shared memory of the cluster"
            )),
            Some(l),
        )),
    }
}

/// A `.shared::cluster` offset: the executing CTA's shared memory, or another rank's.
#[inline]
fn shared_cluster(a: u64) -> Phys {
    match cluster::split_cluster_address(a) {
        (None, a) => Phys::Shared(a),
        (Some(rank), offset) => Phys::Cluster(rank, offset),
    }
}

fn phys_space(p: Phys, space: Space) -> MemSpace {
    match p {
        Phys::Global(_) if space == Space::Const => MemSpace::Const,
        Phys::Global(_) => MemSpace::Global,
        Phys::Shared(_) | Phys::Cluster(..) => MemSpace::Shared,
        Phys::Local(_) => MemSpace::Local,
        Phys::Param(_) => MemSpace::Param,
    }
}

/// The memory a warp instruction can touch.
struct Spaces<'a> {
    global: &'a mut crate::memory::GlobalMemory,
    shared: &'a mut FlatSpace,
    local: &'a mut Vec<LocalMemory>,
    params: &'a FlatSpace,
    /// The executing CTA's cluster (clusters of several CTAs).
    cluster: Option<&'a ClusterMember>,
}

/// What a `.shared::cluster` access of rank `rank` reaches: the executing CTA's own
/// memory (`None`), or that rank's, which must exist and not have finished.
fn remote_rank(
    cluster: Option<&ClusterMember>,
    rank: u32,
) -> Result<Option<&ClusterMember>, ErrorKind> {
    match cluster {
        None if rank == 0 => Ok(None),
        Some(c) if c.rank == rank => Ok(None),
        Some(c) if rank < c.state.size() => {
            if cluster::lock(&c.state.finished)
                .get(rank as usize)
                .copied()
                .unwrap_or(false)
            {
                return Err(ErrorKind::Unsupported(format!(
                    "a .shared::cluster access to CTA rank {rank} of the cluster, which has \
                     exited (a CTA's shared memory is gone once it exits: wait at the \
                     cluster barrier first)"
                )));
            }
            Ok(Some(c))
        }
        c => Err(ErrorKind::Unsupported(format!(
            "a .shared::cluster access to CTA rank {rank}, outside the cluster of {} CTAs",
            c.map_or(1, |c| c.state.size())
        ))),
    }
}

impl Spaces<'_> {
    #[inline]
    fn read(&self, p: Phys, size: u32, lane: usize) -> Result<u64, ErrorKind> {
        Ok(match p {
            Phys::Global(a) => self.global.read_uint(a, size)?,
            Phys::Shared(a) => self.shared.read_uint("shared", a, size)?,
            Phys::Cluster(rank, a) => match remote_rank(self.cluster, rank)? {
                None => self.shared.read_uint("shared", a, size)?,
                Some(c) => {
                    cluster::lock(&c.state.shared[rank as usize]).read_uint("shared", a, size)?
                }
            },
            Phys::Param(a) => self.params.read_uint("param", a, size)?,
            Phys::Local(a) => match self.local.get(lane) {
                Some(l) => l
                    .read_uint(a, size)
                    .map_err(|e| local_overflow(e, a, size))?,
                None => {
                    return Err(MemError::SpaceOverflow {
                        space: "local",
                        addr: a,
                        size: size as u64,
                        limit: 0,
                    }
                    .into())
                }
            },
        })
    }

    fn write(&mut self, p: Phys, size: u32, lane: usize, v: u64) -> Result<(), ErrorKind> {
        match p {
            Phys::Global(a) => self.global.write_uint(a, size, v)?,
            Phys::Shared(a) => self.shared.write_uint("shared", a, size, v)?,
            Phys::Cluster(rank, a) => match remote_rank(self.cluster, rank)? {
                None => self.shared.write_uint("shared", a, size, v)?,
                Some(c) => cluster::lock(&c.state.shared[rank as usize])
                    .write_uint("shared", a, size, v)?,
            },
            Phys::Param(a) => {
                return Err(MemError::SpaceOverflow {
                    space: "param (read-only)",
                    addr: a,
                    size: size as u64,
                    limit: 0,
                }
                .into())
            }
            Phys::Local(a) => match self.local.get_mut(lane) {
                Some(l) => l
                    .write_uint(a, size, v)
                    .map_err(|e| local_overflow(e, a, size))?,
                None => {
                    return Err(MemError::SpaceOverflow {
                        space: "local",
                        addr: a,
                        size: size as u64,
                        limit: 0,
                    }
                    .into())
                }
            },
        }
        Ok(())
    }
}

/// A local access past the end of the thread's local memory, as the error of any flat
/// space.
#[cold]
fn local_overflow(e: LocalOverflow, addr: u64, size: u32) -> MemError {
    MemError::SpaceOverflow {
        space: "local",
        addr,
        size: size as u64,
        limit: e.limit,
    }
}

/// Reads a NUL-terminated string at a generic address (printf formats and `%s`).
fn read_cstring(sp: &Spaces, addr: u64, lane: usize) -> Result<Vec<u8>, ErrorKind> {
    let mut out = Vec::new();
    let mut a = addr;
    while out.len() < 1 << 16 {
        let b = sp.read(resolve(Space::Generic, Base::Reg(0), a, false), 1, lane)? as u8;
        if b == 0 {
            break;
        }
        out.push(b);
        a += 1;
    }
    Ok(out)
}

fn float_bin(kind: u8, ty: ScalarType, m: FpMode, a: u64, b: u64) -> Result<u64, LaneError> {
    // kind: 0 add, 1 sub, 2 mul
    Ok(match ty {
        ScalarType::F32 => {
            let (x, y) = (f32::from_bits(a as u32), f32::from_bits(b as u32));
            let r = match kind {
                0 => fl::add(x, y, m),
                1 => fl::sub(x, y, m),
                _ => fl::mul(x, y, m),
            };
            r.to_bits() as u64
        }
        ScalarType::F64 => {
            let (x, y) = (f64::from_bits(a), f64::from_bits(b));
            match kind {
                0 => fl::add(x, y, m),
                1 => fl::sub(x, y, m),
                _ => fl::mul(x, y, m),
            }
            .to_bits()
        }
        t => match half_kind(t) {
            Some((k, pair)) => {
                let hop = match kind {
                    0 => HalfOp::Add,
                    1 => HalfOp::Sub,
                    _ => HalfOp::Mul,
                };
                let f = |x: u16, y: u16| half::binary16(hop, x, y, k, m.rnd, m.ftz, m.sat);
                if pair {
                    half::x2(a as u32, b as u32, f) as u64
                } else {
                    f(a as u16, b as u16) as u64
                }
            }
            None => return Err(unsupported(format!("float arithmetic on .{t}"))),
        },
    })
}

fn float_fma(ty: ScalarType, m: FpMode, a: u64, b: u64, c: u64) -> Result<u64, LaneError> {
    Ok(match ty {
        ScalarType::F32 => fl::fma(
            f32::from_bits(a as u32),
            f32::from_bits(b as u32),
            f32::from_bits(c as u32),
            m,
        )
        .to_bits() as u64,
        ScalarType::F64 => {
            fl::fma(f64::from_bits(a), f64::from_bits(b), f64::from_bits(c), m).to_bits()
        }
        t => match half_kind(t) {
            Some((k, false)) => {
                half::fma16(a as u16, b as u16, c as u16, k, m.rnd, m.ftz, m.sat) as u64
            }
            Some((k, true)) => {
                let lo = half::fma16(a as u16, b as u16, c as u16, k, m.rnd, m.ftz, m.sat) as u64;
                let hi = half::fma16(
                    (a >> 16) as u16,
                    (b >> 16) as u16,
                    (c >> 16) as u16,
                    k,
                    m.rnd,
                    m.ftz,
                    m.sat,
                ) as u64;
                lo | (hi << 16)
            }
            None => return Err(unsupported(format!("fma on .{t}"))),
        },
    })
}

/// Unary float operations by kind.
#[derive(Clone, Copy)]
enum FUn {
    Rcp(Precision),
    Sqrt(Precision),
    Rsqrt,
    Trans(Transcendental),
    Abs,
    Neg,
}

fn float_un(op: FUn, ty: ScalarType, ftz: bool, a: u64) -> Result<u64, LaneError> {
    let ieee = |p: Precision| match p {
        Precision::Ieee(r) => Some(FpMode {
            rnd: rounding(Some(r)),
            ftz,
            sat: false,
        }),
        _ => None,
    };
    Ok(match ty {
        ScalarType::F32 => {
            let x = f32::from_bits(a as u32);
            let r = match op {
                FUn::Rcp(p) => ieee(p).map_or_else(|| fl::rcp_approx(x, ftz), |m| fl::rcp(x, m)),
                FUn::Sqrt(p) => ieee(p).map_or_else(|| fl::sqrt_approx(x, ftz), |m| fl::sqrt(x, m)),
                FUn::Rsqrt => fl::rsqrt_approx(x, ftz),
                FUn::Trans(t) => fl::approx_f32(t, x, ftz),
                FUn::Abs => fl::abs(x, ftz),
                FUn::Neg => fl::neg(x, ftz),
            };
            r.to_bits() as u64
        }
        ScalarType::F64 => {
            let x = f64::from_bits(a);
            match op {
                FUn::Rcp(p) => ieee(p).map_or_else(|| fl::rcp_approx(x, ftz), |m| fl::rcp(x, m)),
                FUn::Sqrt(p) => ieee(p).map_or_else(|| fl::sqrt_approx(x, ftz), |m| fl::sqrt(x, m)),
                FUn::Rsqrt => fl::rsqrt_approx(x, ftz),
                FUn::Trans(t) => fl::approx_f32(t, x as f32, ftz) as f64,
                FUn::Abs => fl::abs(x, ftz),
                FUn::Neg => fl::neg(x, ftz),
            }
            .to_bits()
        }
        t => match (half_kind(t), op) {
            (Some((k, pair)), FUn::Abs | FUn::Neg | FUn::Trans(_)) => {
                let f = |x: u16| -> u16 {
                    let x = half::flush16(x, k, ftz);
                    match op {
                        FUn::Abs => x & 0x7FFF,
                        FUn::Neg => x ^ 0x8000,
                        FUn::Trans(tr) => half::from_f32(
                            fl::approx_f32(tr, half::to_f32(x, k), false),
                            k,
                            Rounding::NearestEven,
                        ),
                        _ => x,
                    }
                };
                if pair {
                    (f(a as u16) as u64) | ((f((a >> 16) as u16) as u64) << 16)
                } else {
                    f(a as u16) as u64
                }
            }
            _ => return Err(unsupported(format!("unary float operation on .{t}"))),
        },
    })
}

fn float_minmax(
    ty: ScalarType,
    ftz: bool,
    nan: bool,
    want_max: bool,
    a: u64,
    b: u64,
) -> Result<u64, LaneError> {
    Ok(match ty {
        ScalarType::F32 => {
            let (x, y) = (f32::from_bits(a as u32), f32::from_bits(b as u32));
            (if want_max {
                fl::max(x, y, ftz, nan)
            } else {
                fl::min(x, y, ftz, nan)
            })
            .to_bits() as u64
        }
        ScalarType::F64 => {
            let (x, y) = (f64::from_bits(a), f64::from_bits(b));
            (if want_max {
                fl::max(x, y, ftz, nan)
            } else {
                fl::min(x, y, ftz, nan)
            })
            .to_bits()
        }
        t => match half_kind(t) {
            Some((k, pair)) => {
                let f = |x: u16, y: u16| half::minmax16(x, y, k, ftz, nan, want_max);
                if pair {
                    half::x2(a as u32, b as u32, f) as u64
                } else {
                    f(a as u16, b as u16) as u64
                }
            }
            None => return Err(unsupported(format!("min/max on .{t}"))),
        },
    })
}

fn compare(ty: ScalarType, cmp: CmpOp, ftz: bool, a: u64, b: u64) -> bool {
    match ty {
        ScalarType::F32 => cmp_float(f32::from_bits(a as u32), f32::from_bits(b as u32), cmp, ftz),
        ScalarType::F64 => cmp_float(f64::from_bits(a), f64::from_bits(b), cmp, ftz),
        ScalarType::F16 | ScalarType::Bf16 => {
            let k = if ty == ScalarType::F16 {
                HalfKind::F16
            } else {
                HalfKind::Bf16
            };
            cmp_float(
                half::to_f32(a as u16, k),
                half::to_f32(b as u16, k),
                cmp,
                ftz,
            )
        }
        t => cmp_int(int_type(t), a, b, cmp),
    }
}

fn atomic_op(op: AtomOp, ty: ScalarType, old: u64, b: u64, c: u64) -> Result<u64, LaneError> {
    let t = int_type(ty);
    Ok(match op {
        AtomOp::Add => match ty {
            ScalarType::F32 => {
                (f32::from_bits(old as u32) + f32::from_bits(b as u32)).to_bits() as u64
            }
            ScalarType::F64 => (f64::from_bits(old) + f64::from_bits(b)).to_bits(),
            ScalarType::F16 | ScalarType::F16x2 | ScalarType::Bf16 | ScalarType::Bf16x2 => {
                float_bin(0, ty, FpMode::RN, old, b)?
            }
            _ => t.wrap(old.wrapping_add(b)),
        },
        AtomOp::Min | AtomOp::Max => match ty {
            ScalarType::F32 | ScalarType::F64 => {
                float_minmax(ty, false, false, op == AtomOp::Max, old, b)?
            }
            _ => int::min_max(t, old, b, op == AtomOp::Max),
        },
        AtomOp::Inc => {
            if t.wrap(old) >= t.wrap(b) {
                0
            } else {
                t.wrap(old + 1)
            }
        }
        AtomOp::Dec => {
            if t.wrap(old) == 0 || t.wrap(old) > t.wrap(b) {
                t.wrap(b)
            } else {
                t.wrap(old - 1)
            }
        }
        AtomOp::And => old & b,
        AtomOp::Or => old | b,
        AtomOp::Xor => old ^ b,
        AtomOp::Exch => b,
        AtomOp::Cas => {
            if t.wrap(old) == t.wrap(b) {
                c
            } else {
                old
            }
        }
    })
}

impl Launch<'_> {
    /// Performs `access`, a global access an executor deferred, with `values`, the
    /// operands it read at issue: lane by lane in lane order, a load reads each lane's
    /// elements into the registers of the access's frame, a store writes its elements,
    /// an atomic or reduction reads, combines and writes (an atomic's old value into its
    /// destination), each with the checks, errors and stray notes executing it would
    /// have given.
    pub(super) fn perform_deferred(
        &mut self,
        cta: &mut Cta,
        w: usize,
        access: &super::DeferredAccess,
        values: &[u64],
    ) -> Result<(), LaneError> {
        let module = self.module;
        let ef: &ExecFunction = &module.funcs[access.func.index()];
        let f = &module.program.functions[access.func.index()];
        let inst = f
            .insts
            .get(access.inst.0 as usize)
            .ok_or_else(|| unsupported("a deferred access outside its function"))?;
        let start = inst.operands_start as usize;
        let dsts = &ef.srcs[start..start + inst.num_dsts as usize];
        let Cta {
            shared,
            warps,
            cluster: member,
            ..
        } = cta;
        let mut guard = member
            .as_ref()
            .map(|c| cluster::lock(&c.state.shared[c.rank as usize]));
        let shared = match guard.as_deref_mut() {
            Some(s) => s,
            None => shared,
        };
        let warp = warps
            .get_mut(w)
            .ok_or_else(|| unsupported("a deferred access of a warp that is gone"))?;
        let in_kernel = access.frame == 0;
        let mut sp = Spaces {
            global: self.mem,
            shared,
            local: &mut warp.local,
            params: &self.params,
            cluster: member.as_ref(),
        };
        let mut values = values.iter().copied();
        let mut value = || {
            values
                .next()
                .ok_or_else(|| unsupported("a deferred access without its operands"))
        };
        match &inst.op {
            Op::Ld(ma) | Op::Ldu(ma) => {
                let esize = (ma.ty.bits() / 8).max(1);
                let n = ma.lanes.max(1) as u32;
                let elements = (esize, n, ma.ty.is_signed_int() && esize < 8);
                // The load's frame returned meanwhile (`ret` in the same cycle): nothing
                // to write.
                let Some(frame) = warp.frames.get_mut(access.frame) else {
                    return Ok(());
                };
                for l in lanes(access.exec_mask) {
                    let addr = access.addrs[l];
                    check_aligned(addr, (esize * n).min(16).next_power_of_two())
                        .map_err(|e| (e.into(), Some(l)))?;
                    let p = resolve(ma.space, Base::Reg(0), addr, in_kernel);
                    load_lane(&sp, p, elements, (dsts, &ef.reg_bits), &mut frame.regs, l)
                        .map_err(|k| (k, Some(l)))?;
                    if self.stray_lane.is_none() && sp.global.has_stray() {
                        self.stray_lane = Some(l);
                    }
                }
            }
            Op::St(ma) => {
                let esize = (ma.ty.bits() / 8).max(1);
                let n = ma.lanes.max(1) as u32;
                for l in lanes(access.exec_mask) {
                    let addr = access.addrs[l];
                    check_aligned(addr, (esize * n).min(16).next_power_of_two())
                        .map_err(|e| (e.into(), Some(l)))?;
                    let p = resolve(ma.space, Base::Reg(0), addr, in_kernel);
                    for e in 0..n {
                        let pe = offset_phys(p, (e * esize) as u64);
                        let v = value()?;
                        sp.write(pe, esize.min(8), l, v).map_err(|k| (k, Some(l)))?;
                        if self.stray_lane.is_none() && sp.global.has_stray() {
                            self.stray_lane = Some(l);
                        }
                    }
                }
            }
            Op::Atom(a) | Op::Red(a) => {
                let size = (a.ty.bits() / 8).max(4);
                let m = mask_bits(size * 8);
                let dst = match (&inst.op, dsts.first()) {
                    (Op::Atom(_), Some(Src::Reg(r))) => Some(*r as usize),
                    _ => None,
                };
                for l in lanes(access.exec_mask) {
                    let addr = access.addrs[l];
                    let (bv, cv) = (value()?, value()?);
                    check_aligned(addr, size).map_err(|e| (e.into(), Some(l)))?;
                    let p = resolve(a.space, Base::Reg(0), addr, in_kernel);
                    let old = sp.read(p, size, l).map_err(|k| (k, Some(l)))?;
                    let new = atomic_op(a.op, a.ty, old, bv, cv)? & m;
                    sp.write(p, size, l, new).map_err(|k| (k, Some(l)))?;
                    if self.stray_lane.is_none() && sp.global.has_stray() {
                        self.stray_lane = Some(l);
                    }
                    // The atomic's frame returned meanwhile: its old values go nowhere.
                    if let (Some(r), Some(frame)) = (dst, warp.frames.get_mut(access.frame)) {
                        frame.regs[r * 32 + l] = old;
                    }
                }
            }
            op => return Err(unsupported(format!("{op}: not a deferred access"))),
        }
        Ok(())
    }

    /// Executes the next instruction of warp `w`; errors carry the faulting lane.
    pub(super) fn step_warp(&mut self, cta: &mut Cta, w: usize) -> Result<(), LaneError> {
        let module = self.module;
        let Cta {
            id: cta_id,
            shared,
            warps,
            barriers,
            cluster: member,
        } = cta;
        let member: Option<&ClusterMember> = member.as_ref();
        // A CTA of a cluster of several holds its rank's shared memory for the step.
        let mut guard = member.map(|c| cluster::lock(&c.state.shared[c.rank as usize]));
        let shared: &mut FlatSpace = match guard.as_deref_mut() {
            Some(s) => s,
            None => shared,
        };
        let live_warps = warps
            .iter()
            .filter(|x| x.status != WarpStatus::Exited)
            .count() as u32;
        let warp = &mut warps[w];
        settle(warp);
        let Some(top) = warp.stack.last().copied() else {
            // Nothing left to run: the warp has exited, which may complete a barrier the
            // other warps wait at (exited threads do not count toward it). The step
            // reports an exit, not the previous warp's instruction.
            warp.status = WarpStatus::Exited;
            // Its local memory goes with it, not with its CTA (issue 26).
            warp.local = Vec::new();
            let step = &mut self.step;
            step.active_mask = 0;
            step.exec_mask = 0;
            step.mem = None;
            step.num_dsts = 0;
            step.event = StepEvent::Exit { done: true };
            step.next_pc = None;
            after_exit(barriers, warps);
            return Ok(());
        };
        let ti = warp.stack.len() - 1;
        let fidx = warp.frames.last().map_or(self.kernel, |f| f.func);
        let ef: &ExecFunction = &module.funcs[fidx];
        let f = &module.program.functions[fidx];
        let pc = top.pc;
        let step = &mut self.step;
        step.func = ef.id;
        step.inst = ir::InstId(pc);
        step.active_mask = top.mask;
        step.mem = None;
        step.num_dsts = 0;
        step.event = StepEvent::None;
        step.deferred_access = None;
        step.bulk_copy = None;
        step.remote_shared = 0;
        let Some(inst) = f.insts.get(pc as usize) else {
            // Falling off the end of a body: an implicit `ret`/`exit` for these lanes.
            step.exec_mask = top.mask;
            let mask = top.mask;
            finish_lanes(warp, mask, warp.frames.len() == 1);
            step.event = StepEvent::Exit {
                done: warp.status == WarpStatus::Exited,
            };
            after_exit(barriers, warps);
            return Ok(());
        };
        let start = inst.operands_start as usize;
        let nd = inst.num_dsts as usize;
        let ops = &ef.srcs[start..start + nd + inst.num_srcs as usize];
        let (dsts, srcs) = ops.split_at(nd);
        let frame_i = warp.frames.len() - 1;
        let active = top.mask;
        let exec = match inst.guard {
            Some(g) => {
                let regs = &warp.frames[frame_i].regs;
                let base = g.reg.index() * 32;
                let mut m = 0u32;
                for l in lanes(active) {
                    if (regs[base + l] & 1 == 1) != g.negated {
                        m |= 1 << l;
                    }
                }
                m
            }
            None => active,
        };
        step.exec_mask = exec;
        let sc = SpecialCtx {
            block: self.config.block,
            grid: self.config.grid,
            cta: *cta_id,
            warp: warp.index,
            clock: self.clock.unwrap_or(self.stats.warp_instructions),
            dynamic_shared: self.config.dynamic_shared,
            total_shared: shared.bytes.len() as u32,
            explicit_cluster: self.explicit_cluster,
            cluster_shape: self.cluster_shape,
            cluster_id: member.map_or(*cta_id, |c| c.id),
            cluster_ctaid: member.map_or([0; 3], |c| c.ctaid),
            cluster_rank: member.map_or(0, |c| c.rank),
        };
        self.stats.warp_instructions += 1;
        self.stats.thread_instructions += exec.count_ones() as u64;
        warp.instructions += 1;
        let mut next = pc + 1;
        let in_kernel = frame_i == 0;
        if self.step_over.is_some_and(|s| s.skips(fidx, pc)) {
            warp.stack[ti].pc = next;
            settle(warp);
            step.next_pc = next_pc(warp, module);
            return Ok(());
        }

        macro_rules! rd {
            ($s:expr, $l:expr) => {
                read(&warp.frames[frame_i], &sc, $s, $l)
            };
        }
        macro_rules! wr {
            ($d:expr, $l:expr, $v:expr) => {{
                let v: u64 = $v;
                if let Src::Reg(r) = $d {
                    warp.frames[frame_i].regs[r as usize * 32 + $l] = v;
                }
            }};
        }
        // The memory one warp instruction can touch (a macro: the borrows stay per field).
        macro_rules! spaces {
            () => {
                Spaces {
                    global: self.mem,
                    shared,
                    local: &mut warp.local,
                    params: &self.params,
                    cluster: member,
                }
            };
        }
        // The mbarrier operand (source `$i`) of st.async/red.async in lane `$l`:
        // (space, base, effective address).
        macro_rules! async_mbarrier {
            ($space:expr, $i:expr, $l:expr) => {{
                let (msrc, mbase) = match srcs.get($i).copied().unwrap_or(Src::Sink) {
                    s @ Src::Addr { base, .. } => (s, base),
                    s => (s, Base::Reg(0)),
                };
                let raw = read(&warp.frames[frame_i], &sc, msrc, $l);
                (
                    $space,
                    mbase,
                    effective_address($space, mbase, raw, &ef.reg_bits),
                )
            }};
        }
        macro_rules! map {
            (|$l:ident| $e:expr) => {{
                for $l in lanes(exec) {
                    let v = $e;
                    wr!(dsts[0], $l, v);
                }
            }};
        }
        // A per-lane operation without side effects over whole rows (`operand_row`): each
        // source is looked at once per instruction, not once per lane, and a full warp's
        // lanes run in one loop over 0..32 (the order of `lanes`: the same first error).
        macro_rules! rows {
            (|$($x:ident = $s:ident),+| $e:expr) => {{
                let frame = &warp.frames[frame_i];
                let mut out = [0u64; 32];
                $(
                    let mut $x = MaybeUninit::uninit();
                    let $x = operand_row(frame, &sc, $s, exec, &mut $x);
                )+
                if exec == u32::MAX {
                    for l in 0..32 {
                        $( let $x = $x[l]; )+
                        out[l] = $e;
                    }
                } else {
                    for l in lanes(exec) {
                        $( let $x = $x[l]; )+
                        out[l] = $e;
                    }
                }
                store_row(&mut warp.frames[frame_i].regs, dsts[0], exec, &out);
            }};
        }
        macro_rules! src {
            ($i:expr) => {
                *srcs
                    .get($i)
                    .ok_or_else(|| unsupported(format!("{}: missing operand {}", inst.op, $i)))?
            };
        }

        match &inst.op {
            Op::Add { ty, sat, carry } | Op::Sub { ty, sat, carry } => {
                let t = int_type(*ty);
                let is_add = matches!(inst.op, Op::Add { .. });
                let (a, b) = (src!(0), src!(1));
                if *carry == op::Carry::None {
                    if is_add {
                        rows!(|x = a, y = b| int::add(t, x, y, *sat));
                    } else {
                        rows!(|x = a, y = b| int::sub(t, x, y, *sat));
                    }
                } else {
                    for l in lanes(exec) {
                        let cin = carry.reads() && warp.carry >> l & 1 == 1;
                        let (v, cout) = if is_add {
                            int::add_carry(t, rd!(a, l), rd!(b, l), cin)
                        } else {
                            int::sub_borrow(t, rd!(a, l), rd!(b, l), cin)
                        };
                        wr!(dsts[0], l, v);
                        if carry.writes() {
                            warp.carry = (warp.carry & !(1 << l)) | ((cout as u32) << l);
                        }
                    }
                }
            }
            Op::Mul { ty, mode } => {
                let t = int_type(*ty);
                let part = *mode;
                let (a, b) = (src!(0), src!(1));
                rows!(|x = a, y = b| int::mul(t, x, y, part));
            }
            Op::Mad {
                ty,
                mode,
                sat,
                carry,
            } => {
                let t = int_type(*ty);
                let part = *mode;
                let (a, b, c) = (src!(0), src!(1), src!(2));
                if *carry == op::Carry::None {
                    rows!(|x = a, y = b, z = c| int::mad(t, x, y, z, part, *sat));
                } else {
                    for l in lanes(exec) {
                        let cin = carry.reads() && warp.carry >> l & 1 == 1;
                        let (v, cout) =
                            int::mad_carry(t, rd!(a, l), rd!(b, l), rd!(c, l), part, cin);
                        wr!(dsts[0], l, v);
                        if carry.writes() {
                            warp.carry = (warp.carry & !(1 << l)) | ((cout as u32) << l);
                        }
                    }
                }
            }
            Op::Mul24 { ty, hi } => {
                let t = int_type(*ty);
                let (a, b) = (src!(0), src!(1));
                rows!(|x = a, y = b| int::mul24(t, x, y, *hi));
            }
            Op::Mad24 { ty, hi, .. } => {
                let t = int_type(*ty);
                let (a, b, c) = (src!(0), src!(1), src!(2));
                rows!(|x = a, y = b, z = c| int::mad24(t, x, y, z, *hi));
            }
            Op::Sad { ty } => {
                let t = int_type(*ty);
                let (a, b, c) = (src!(0), src!(1), src!(2));
                rows!(|x = a, y = b, z = c| int::sad(t, x, y, z));
            }
            Op::Div { ty } => {
                let t = int_type(*ty);
                let (a, b) = (src!(0), src!(1));
                rows!(|x = a, y = b| int::div(t, x, y));
            }
            Op::Rem { ty } => {
                let t = int_type(*ty);
                let (a, b) = (src!(0), src!(1));
                rows!(|x = a, y = b| int::rem(t, x, y));
            }
            Op::Min { ty, relu } | Op::Max { ty, relu } => {
                let t = int_type(*ty);
                let want_max = matches!(inst.op, Op::Max { .. });
                let (a, b) = (src!(0), src!(1));
                if *relu {
                    rows!(|x = a, y = b| {
                        let v = int::min_max(t, x, y, want_max);
                        if t.sext(v) < 0 {
                            0
                        } else {
                            v
                        }
                    });
                } else {
                    rows!(|x = a, y = b| int::min_max(t, x, y, want_max));
                }
            }
            Op::Abs { ty } => {
                let t = int_type(*ty);
                let a = src!(0);
                rows!(|x = a| int::abs(t, x));
            }
            Op::Neg { ty } => {
                let t = int_type(*ty);
                let a = src!(0);
                rows!(|x = a| int::neg(t, x));
            }
            Op::And { ty } | Op::Or { ty } | Op::Xor { ty } => {
                let m = int_type(*ty).mask();
                let (a, b) = (src!(0), src!(1));
                match inst.op {
                    Op::And { .. } => rows!(|x = a, y = b| m & (x & y)),
                    Op::Or { .. } => rows!(|x = a, y = b| m & (x | y)),
                    _ => rows!(|x = a, y = b| m & (x ^ y)),
                }
            }
            Op::Not { ty } => {
                let m = int_type(*ty).mask();
                let a = src!(0);
                rows!(|x = a| !x & m);
            }
            Op::Cnot { ty } => {
                let t = int_type(*ty);
                let a = src!(0);
                rows!(|x = a| int::cnot(t, x));
            }
            Op::Lop3 { ty } => {
                let m = int_type(*ty).mask();
                let (a, b, c, lut) = (src!(0), src!(1), src!(2), src!(3));
                rows!(|x = a, y = b, z = c, u = lut| int::lop3(x, y, z, u as u8) & m);
            }
            Op::Shl { ty } => {
                let t = int_type(*ty);
                let (a, b) = (src!(0), src!(1));
                rows!(|x = a, y = b| int::shl(t, x, y as u32));
            }
            Op::Shr { ty } => {
                let t = int_type(*ty);
                let (a, b) = (src!(0), src!(1));
                rows!(|x = a, y = b| int::shr(t, x, y as u32));
            }
            Op::Bfe { ty } => {
                let t = int_type(*ty);
                let (a, b, c) = (src!(0), src!(1), src!(2));
                rows!(|x = a, y = b, z = c| int::bfe(t, x, y as u32, z as u32));
            }
            Op::Bfi { ty } => {
                let t = int_type(*ty);
                let (a, b, c, d) = (src!(0), src!(1), src!(2), src!(3));
                rows!(|x = a, y = b, z = c, u = d| int::bfi(t, x, y, z as u32, u as u32));
            }
            Op::Bfind { ty, shiftamt } => {
                let t = int_type(*ty);
                let a = src!(0);
                rows!(|x = a| int::bfind(t, x, *shiftamt));
            }
            Op::Popc { ty } => {
                let t = int_type(*ty);
                let a = src!(0);
                rows!(|x = a| int::popc(t, x));
            }
            Op::Clz { ty } => {
                let t = int_type(*ty);
                let a = src!(0);
                rows!(|x = a| int::clz(t, x));
            }
            Op::Brev { ty } => {
                let t = int_type(*ty);
                let a = src!(0);
                rows!(|x = a| int::brev(t, x));
            }
            Op::Prmt { mode } => {
                let (a, b, c) = (src!(0), src!(1), src!(2));
                rows!(|x = a, y = b, z = c| int::prmt(x as u32, y as u32, z as u32, *mode) as u64);
            }
            Op::Dp4a { a_ty, b_ty } => {
                let (a, b, c) = (src!(0), src!(1), src!(2));
                let (sa, sb) = (a_ty.is_signed_int(), b_ty.is_signed_int());
                rows!(|x = a, y = b, z = c| int::dp4a(x as u32, sa, y as u32, sb, z as u32) as u64);
            }
            Op::Dp2a { a_ty, b_ty, hi } => {
                let (a, b, c) = (src!(0), src!(1), src!(2));
                let (sa, sb) = (a_ty.is_signed_int(), b_ty.is_signed_int());
                rows!(|x = a, y = b, z = c| int::dp2a(
                    x as u32, sa, y as u32, sb, z as u32, *hi
                ) as u64);
            }
            Op::Shf { dir, amount } => {
                let (a, b, c) = (src!(0), src!(1), src!(2));
                let left = *dir == op::ShiftDir::Left;
                let clamp = *amount == op::ShiftAmount::Clamp;
                rows!(|x = a, y = b, z = c| int::shf(
                    x as u32, y as u32, z as u32, left, clamp
                ) as u64);
            }
            Op::FAdd { ty, mode } | Op::FSub { ty, mode } | Op::FMul { ty, mode } => {
                let kind = match inst.op {
                    Op::FAdd { .. } => 0,
                    Op::FSub { .. } => 1,
                    _ => 2,
                };
                let m = fp_mode(mode);
                let (a, b) = (src!(0), src!(1));
                let f32s = |x: u64, y: u64| (f32::from_bits(x as u32), f32::from_bits(y as u32));
                // `float_bin`'s f32 cases, chosen once per instruction.
                match (*ty, kind) {
                    (ScalarType::F32, 0) => rows!(|x = a, y = b| {
                        let (x, y) = f32s(x, y);
                        fl::add(x, y, m).to_bits() as u64
                    }),
                    (ScalarType::F32, 2) => rows!(|x = a, y = b| {
                        let (x, y) = f32s(x, y);
                        fl::mul(x, y, m).to_bits() as u64
                    }),
                    _ => rows!(|x = a, y = b| float_bin(kind, *ty, m, x, y)?),
                }
            }
            Op::Fma { ty, mode } => {
                let m = fp_mode(mode);
                let (a, b, c) = (src!(0), src!(1), src!(2));
                if *ty == ScalarType::F32 {
                    // `float_fma`'s f32 case, chosen once per instruction.
                    rows!(|x = a, y = b, z = c| fl::fma(
                        f32::from_bits(x as u32),
                        f32::from_bits(y as u32),
                        f32::from_bits(z as u32),
                        m
                    )
                    .to_bits() as u64);
                } else {
                    rows!(|x = a, y = b, z = c| float_fma(*ty, m, x, y, z)?);
                }
            }
            Op::FDiv { ty, precision, ftz } => {
                let (a, b) = (src!(0), src!(1));
                for l in lanes(exec) {
                    let (x, y) = (rd!(a, l), rd!(b, l));
                    let v = match (ty, precision) {
                        (ScalarType::F32, Precision::Approx) => fl::div_approx_f32(
                            f32::from_bits(x as u32),
                            f32::from_bits(y as u32),
                            *ftz,
                        )
                        .to_bits()
                            as u64,
                        (ScalarType::F32, Precision::Full) => fl::div_full_f32(
                            f32::from_bits(x as u32),
                            f32::from_bits(y as u32),
                            *ftz,
                        )
                        .to_bits()
                            as u64,
                        (ScalarType::F32, Precision::Ieee(r)) => {
                            let m = FpMode {
                                rnd: rounding(Some(*r)),
                                ftz: *ftz,
                                sat: false,
                            };
                            fl::div(f32::from_bits(x as u32), f32::from_bits(y as u32), m).to_bits()
                                as u64
                        }
                        (ScalarType::F64, p) => {
                            let r = match p {
                                Precision::Ieee(r) => rounding(Some(*r)),
                                _ => Rounding::NearestEven,
                            };
                            fl::div(
                                f64::from_bits(x),
                                f64::from_bits(y),
                                FpMode {
                                    rnd: r,
                                    ftz: *ftz,
                                    sat: false,
                                },
                            )
                            .to_bits()
                        }
                        _ => return Err(unsupported(format!("div on .{ty}"))),
                    };
                    wr!(dsts[0], l, v);
                }
            }
            Op::Rcp { ty, precision, ftz } | Op::Sqrt { ty, precision, ftz } => {
                let u = if matches!(inst.op, Op::Rcp { .. }) {
                    FUn::Rcp(*precision)
                } else {
                    FUn::Sqrt(*precision)
                };
                let a = src!(0);
                rows!(|x = a| float_un(u, *ty, *ftz, x)?);
            }
            Op::Rsqrt { ty, ftz } => {
                let a = src!(0);
                rows!(|x = a| float_un(FUn::Rsqrt, *ty, *ftz, x)?);
            }
            Op::Sin { ftz } | Op::Cos { ftz } | Op::Lg2 { ftz } => {
                let t = match inst.op {
                    Op::Sin { .. } => Transcendental::Sin,
                    Op::Cos { .. } => Transcendental::Cos,
                    _ => Transcendental::Lg2,
                };
                let a = src!(0);
                rows!(|x = a| fl::approx_f32(t, f32::from_bits(x as u32), *ftz).to_bits() as u64);
            }
            Op::Ex2 { .. } | Op::Tanh { .. } => {
                let (t, ty, ftz) = match inst.op {
                    Op::Ex2 { ty, ftz } => (Transcendental::Ex2, ty, ftz),
                    Op::Tanh { ty } => (Transcendental::Tanh, ty, false),
                    _ => unreachable!(),
                };
                let ty = &ty;
                let a = src!(0);
                rows!(|x = a| float_un(FUn::Trans(t), *ty, ftz, x)?);
            }
            Op::FMin { ty, ftz, nan } | Op::FMax { ty, ftz, nan } => {
                let want_max = matches!(inst.op, Op::FMax { .. });
                let (a, b) = (src!(0), src!(1));
                rows!(|x = a, y = b| float_minmax(*ty, *ftz, *nan, want_max, x, y)?);
            }
            Op::FAbs { ty, ftz } | Op::FNeg { ty, ftz } => {
                let u = if matches!(inst.op, Op::FAbs { .. }) {
                    FUn::Abs
                } else {
                    FUn::Neg
                };
                let a = src!(0);
                rows!(|x = a| float_un(u, *ty, *ftz, x)?);
            }
            Op::Copysign { ty } => {
                let (a, b) = (src!(0), src!(1));
                let sign = if *ty == ScalarType::F64 {
                    1u64 << 63
                } else {
                    1u64 << 31
                };
                rows!(|x = a, y = b| (y & !sign & mask_bits(ty.bits())) | (x & sign));
            }
            Op::Testp { ty, class } => {
                let a = src!(0);
                let is64 = *ty == ScalarType::F64;
                rows!(|x = a| {
                    (if is64 {
                        fl::testp(f64::from_bits(x), *class)
                    } else {
                        fl::testp(f32::from_bits(x as u32), *class)
                    }) as u64
                });
            }
            Op::Setp {
                ty,
                cmp,
                ftz,
                combine,
            } => {
                let c = *cmp;
                let (a, b) = (src!(0), src!(1));
                let comb = *combine;
                let pc_src = srcs.get(2).copied();
                // Over whole rows, as `rows!` (two destinations).
                let (mut trues, mut falses) = ([0u64; 32], [0u64; 32]);
                {
                    let frame = &warp.frames[frame_i];
                    let (mut ta, mut tb, mut tp) = (
                        MaybeUninit::uninit(),
                        MaybeUninit::uninit(),
                        MaybeUninit::uninit(),
                    );
                    let ra = operand_row(frame, &sc, a, exec, &mut ta);
                    let rb = operand_row(frame, &sc, b, exec, &mut tb);
                    let combined = match (comb, pc_src) {
                        (Some(op), Some(p)) => {
                            Some((op, operand_row(frame, &sc, p, exec, &mut tp)))
                        }
                        _ => None,
                    };
                    let mut lane = |l: usize| {
                        let mut t = compare(*ty, c, *ftz, ra[l], rb[l]);
                        let mut f = !t;
                        if let Some((op, rp)) = combined {
                            let pv = rp[l] & 1 == 1;
                            t = apply_bool(op, t, pv);
                            f = apply_bool(op, f, pv);
                        }
                        trues[l] = t as u64;
                        falses[l] = f as u64;
                    };
                    if exec == u32::MAX {
                        (0..32).for_each(&mut lane);
                    } else {
                        lanes(exec).for_each(&mut lane);
                    }
                }
                let regs = &mut warp.frames[frame_i].regs;
                store_row(regs, dsts[0], exec, &trues);
                if let Some(&q) = dsts.get(1) {
                    store_row(regs, q, exec, &falses);
                }
            }
            Op::Set {
                dst_ty,
                ty,
                cmp,
                ftz,
                combine,
            } => {
                let c = *cmp;
                let (a, b) = (src!(0), src!(1));
                let comb = *combine;
                let pc_src = srcs.get(2).copied();
                let one = if *dst_ty == ScalarType::F32 {
                    1.0f32.to_bits() as u64
                } else {
                    0xFFFF_FFFF
                };
                match (comb, pc_src) {
                    (Some(op), Some(p)) => rows!(|x = a, y = b, z = p| {
                        let t = apply_bool(op, compare(*ty, c, *ftz, x, y), z & 1 == 1);
                        if t {
                            one
                        } else {
                            0
                        }
                    }),
                    _ => rows!(|x = a, y = b| if compare(*ty, c, *ftz, x, y) {
                        one
                    } else {
                        0
                    }),
                }
            }
            Op::Selp { .. } => {
                let (a, b, c) = (src!(0), src!(1), src!(2));
                rows!(|x = a, y = b, z = c| if z & 1 == 1 { x } else { y });
            }
            Op::Slct { cmp_ty, ftz, .. } => {
                let (a, b, c) = (src!(0), src!(1), src!(2));
                rows!(|x = a, y = b, cv = c| {
                    let ge = if *cmp_ty == ScalarType::F32 {
                        let x = fl::flush(f32::from_bits(cv as u32), *ftz);
                        x >= 0.0
                    } else {
                        (cv as u32 as i32) >= 0
                    };
                    if ge {
                        x
                    } else {
                        y
                    }
                });
            }
            Op::Mov { ty } => {
                let a = src!(0);
                let m = if *ty == ScalarType::Pred {
                    1
                } else {
                    mask_bits(ty.bits())
                };
                rows!(|x = a| x & m);
            }
            Op::Pack { ty, lanes: n } => {
                let width = ty.bits() / *n as u32;
                let m = mask_bits(width);
                for l in lanes(exec) {
                    let mut v = 0u64;
                    for (i, &s) in srcs.iter().enumerate().take(*n as usize) {
                        v |= (rd!(s, l) & m) << (i as u32 * width);
                    }
                    wr!(dsts[0], l, v);
                }
            }
            Op::Unpack { ty, lanes: n } => {
                let width = ty.bits() / *n as u32;
                let m = mask_bits(width);
                let a = src!(0);
                for l in lanes(exec) {
                    let v = rd!(a, l);
                    for (i, &d) in dsts.iter().enumerate().take(*n as usize) {
                        wr!(d, l, (v >> (i as u32 * width)) & m);
                    }
                }
            }
            Op::Cvt {
                dst: ScalarType::Tf32,
                rounding: r,
                relu,
                satfinite,
                ..
            } => {
                let mode = match r {
                    Some(op::Rounding::Rna) => Tf32Rounding::NearestAway,
                    Some(op::Rounding::Rz) => Tf32Rounding::Zero,
                    _ => Tf32Rounding::NearestEven,
                };
                let a = src!(0);
                rows!(|x = a| f32_to_tf32(x as u32, mode, *satfinite, *relu) as u64);
            }
            Op::Cvt {
                dst,
                src: sty,
                rounding: r,
                ftz,
                sat,
                relu,
                ..
            } => {
                let rnd = match r {
                    None => CvtRounding::None,
                    Some(x) if x.is_integer_rounding() => CvtRounding::Integer(rounding(Some(*x))),
                    Some(x) => CvtRounding::Float(rounding(Some(*x))),
                };
                let a = src!(0);
                match (cvt_type(*dst), cvt_type(*sty)) {
                    (Some(d), Some(s)) => {
                        let dst_bits = dsts.first().and_then(|d| match d {
                            Src::Reg(r) => ef.reg_bits.get(*r as usize).copied(),
                            _ => None,
                        });
                        let ext = matches!(d, CvtType::Int(t) if t.signed && t.bits < 64);
                        rows!(|x = a| {
                            let mut v = cvt(d, s, x, rnd, *ftz, *sat);
                            if ext {
                                if let (CvtType::Int(t), Some(b)) = (d, dst_bits) {
                                    v = (t.sext(v) as u64) & mask_bits(b as u32);
                                }
                            }
                            if *relu && v >> (dst.bits() - 1) & 1 == 1 {
                                0
                            } else {
                                v
                            }
                        });
                    }
                    (None, Some(CvtType::F32))
                        if matches!(dst, ScalarType::F16x2 | ScalarType::Bf16x2) =>
                    {
                        // cvt.rn.f16x2.f32 d, a, b: a goes to the upper half.
                        let b = src!(1);
                        let k = if *dst == ScalarType::F16x2 {
                            HalfKind::F16
                        } else {
                            HalfKind::Bf16
                        };
                        let rm = match rnd {
                            CvtRounding::Float(x) => x,
                            _ => Rounding::NearestEven,
                        };
                        rows!(|x = a, y = b| {
                            let hi = half::from_f32(f32::from_bits(x as u32), k, rm) as u64;
                            let lo = half::from_f32(f32::from_bits(y as u32), k, rm) as u64;
                            let relu_fix = |h: u64| if *relu && h & 0x8000 != 0 { 0 } else { h };
                            (relu_fix(hi) << 16) | relu_fix(lo)
                        });
                    }
                    _ => return Err(unsupported(format!("cvt.{dst}.{sty}"))),
                }
            }
            Op::Cvta {
                to_generic,
                space,
                ty,
            } => {
                // `cvta.to.<space>.u32` makes a 32-bit address in the space: the
                // window arithmetic wraps. (Generic addresses keep their window bits.)
                let width = if *to_generic {
                    u64::MAX
                } else {
                    mask_bits(ty.bits())
                };
                let window = match space {
                    Space::Shared | Space::SharedCluster => Some(SHARED_WINDOW),
                    Space::Local => Some(LOCAL_WINDOW),
                    Space::Param => Some(PARAM_WINDOW),
                    _ => None,
                };
                let a = src!(0);
                rows!(|v = a| {
                    (match (window, to_generic) {
                        (None, _) => v,
                        (Some(w), true) => v.wrapping_add(w),
                        (Some(w), false) => v.wrapping_sub(w),
                    }) & width
                });
            }
            Op::Isspacep { space } => {
                let a = src!(0);
                map!(|l| {
                    let v = rd!(a, l);
                    let p = resolve(Space::Generic, Base::Reg(0), v, in_kernel);
                    (match space {
                        Space::Shared | Space::SharedCluster => matches!(p, Phys::Shared(_)),
                        Space::Local => matches!(p, Phys::Local(_)),
                        Space::Param => matches!(p, Phys::Param(_)),
                        Space::Const => {
                            self.mem.kind_of(v) == Some(crate::memory::AllocKind::ConstVariable)
                        }
                        Space::Global => matches!(p, Phys::Global(_)),
                        Space::Generic => true,
                    }) as u64
                });
            }
            Op::Ld(ma) | Op::Ldu(ma) | Op::St(ma) => {
                let is_store = matches!(inst.op, Op::St(_));
                let esize = (ma.ty.bits() / 8).max(1);
                let n = ma.lanes.max(1) as u32;
                let (addr_src, base) = match src!(0) {
                    s @ Src::Addr { base, .. } => (s, base),
                    s => (s, Base::Reg(0)),
                };
                step.mem = Some(MemInfo {
                    space: MemSpace::Global,
                    kind: if is_store {
                        AccessKind::Store
                    } else {
                        AccessKind::Load
                    },
                    bytes: esize * n,
                });
                // An executor of the parallel phase leaves a global load's read and a
                // global store's write to the launch (`Launch::complete_access`), in the
                // one-thread order; a store's values are read here, at issue.
                let defer = self.defer_global && ma.space == Space::Global;
                if defer {
                    let frame = &warp.frames[frame_i];
                    step.deferred_values.clear();
                    for l in lanes(exec) {
                        step.addrs[l] =
                            effective_address(ma.space, base, read(frame, &sc, addr_src, l), &ef.reg_bits);
                        step.lane_spaces[l] = MemSpace::Global;
                        if is_store {
                            for e in 0..n as usize {
                                let src = srcs.get(1 + e).copied().unwrap_or(Src::Sink);
                                step.deferred_values.push(read(frame, &sc, src, l));
                            }
                        }
                    }
                    step.deferred_access = Some(frame_i);
                }
                let signed = ma.ty.is_signed_int() && esize < 8;
                let address_mask = address_mask(ma.space, base, &ef.reg_bits);
                // The common load, `ld.global` from a register plus offset, by a loop of
                // its own (the same lane order, reads and errors as the loop below).
                let global_base = match addr_src {
                    Src::Reg(r) => Some((r, 0)),
                    Src::Addr {
                        base: Base::Reg(r),
                        offset,
                    } => Some((r, offset as u64)),
                    _ => None,
                };
                let fast = match global_base {
                    Some((addr_reg, offset))
                        if !is_store && !defer && ma.space == Space::Global =>
                    {
                        let load = GlobalLoad {
                            exec,
                            addr_reg,
                            offset,
                            address_mask,
                            elements: (esize, n, signed),
                            dsts,
                            reg_bits: &ef.reg_bits,
                        };
                        let regs = &mut warp.frames[frame_i].regs;
                        load_global(self.mem, &load, regs, step, &mut self.stray_lane)?;
                        true
                    }
                    _ => false,
                };
                let mut sp = spaces!();
                // A load from one address in every lane (the address is no register: a
                // constant, a kernel parameter): the first lane reads, the others take its
                // values. The same reads and results as the loop below, whose first lane
                // would fail or stray exactly as this one does; not for local memory, which
                // is each lane's own.
                let uniform_address = matches!(
                    addr_src,
                    Src::Imm(_)
                        | Src::FrameAddr(_)
                        | Src::ParamAddr(_)
                        | Src::Addr {
                            base: Base::Fixed(_) | Base::KernelParam(_),
                            ..
                        }
                );
                let mut uniform = false;
                if uniform_address && !is_store && !defer && !fast && exec != 0 {
                    let l0 = exec.trailing_zeros() as usize;
                    let addr = read(&warp.frames[frame_i], &sc, addr_src, l0) & address_mask;
                    let p = resolve(ma.space, base, addr, in_kernel);
                    if !matches!(p, Phys::Local(_)) {
                        uniform = true;
                        step.addrs[l0] = addr;
                        check_aligned(addr, (esize * n).min(16).next_power_of_two())
                            .map_err(|e| (e.into(), Some(l0)))?;
                        let space = phys_space(p, ma.space);
                        step.lane_spaces[l0] = space;
                        if let Some(m) = step.mem.as_mut() {
                            m.space = space;
                        }
                        let elements = (esize, n, signed);
                        let regs = &mut warp.frames[frame_i].regs;
                        load_lane(&sp, p, elements, (dsts, &ef.reg_bits), regs, l0)
                            .map_err(|k| (k, Some(l0)))?;
                        if self.stray_lane.is_none() && sp.global.has_stray() {
                            self.stray_lane = Some(l0);
                        }
                        if exec == u32::MAX {
                            step.addrs = [addr; 32];
                            step.lane_spaces = [space; 32];
                            for d in dsts.iter().take(n as usize) {
                                if let Src::Reg(r) = *d {
                                    let row = r as usize * 32;
                                    let v = regs[row + l0];
                                    regs[row..row + 32].fill(v);
                                }
                            }
                        } else {
                            for l in lanes(exec & !(1 << l0)) {
                                step.addrs[l] = addr;
                                step.lane_spaces[l] = space;
                                for d in dsts.iter().take(n as usize) {
                                    if let Src::Reg(r) = *d {
                                        let row = r as usize * 32;
                                        regs[row + l] = regs[row + l0];
                                    }
                                }
                            }
                        }
                    }
                }
                let mut first = true;
                for l in lanes(if defer || fast || uniform { 0 } else { exec }) {
                    let addr = read(&warp.frames[frame_i], &sc, addr_src, l) & address_mask;
                    step.addrs[l] = addr;
                    check_aligned(addr, (esize * n).min(16).next_power_of_two())
                        .map_err(|e| (e.into(), Some(l)))?;
                    let p = resolve(ma.space, base, addr, in_kernel);
                    if ma.complete_tx {
                        async_destination(p, "st.async", addr, l)?;
                    }
                    step.lane_spaces[l] = phys_space(p, ma.space);
                    if is_remote(p, member) {
                        step.remote_shared |= 1 << l;
                    }
                    if first {
                        if let Some(m) = step.mem.as_mut() {
                            m.space = step.lane_spaces[l];
                        }
                        first = false;
                    }
                    if !is_store {
                        let elements = (esize, n, signed);
                        let regs = &mut warp.frames[frame_i].regs;
                        load_lane(&sp, p, elements, (dsts, &ef.reg_bits), regs, l)
                            .map_err(|k| (k, Some(l)))?;
                        if self.stray_lane.is_none() && sp.global.has_stray() {
                            self.stray_lane = Some(l);
                        }
                        continue;
                    }
                    for e in 0..n {
                        let pe = offset_phys(p, (e * esize) as u64);
                        let v = read(
                            &warp.frames[frame_i],
                            &sc,
                            srcs.get(1 + e as usize).copied().unwrap_or(Src::Sink),
                            l,
                        );
                        sp.write(pe, esize.min(8), l, v).map_err(|k| (k, Some(l)))?;
                        if self.stray_lane.is_none() && sp.global.has_stray() {
                            self.stray_lane = Some(l);
                        }
                    }
                    if ma.complete_tx {
                        let mbar = async_mbarrier!(ma.space, 1 + n as usize, l);
                        async_complete_tx(&mut sp, mbar, esize * n, l, in_kernel)?;
                    }
                }
            }
            // Proxy fences order the generic and async proxies, which the emulator's
            // memory never separates; dependent grids run after their primaries finish.
            Op::Prefetch { .. }
            | Op::Fence { .. }
            | Op::FenceProxy(_)
            | Op::GridDepControl { .. }
            | Op::CpAsyncBulkCommit
            | Op::CpAsyncBulkWait { .. }
            // wgmma results are written at issue; the timing model makes the wait wait.
            | Op::WgmmaFence
            | Op::WgmmaCommit
            | Op::WgmmaWait { .. }
            | Op::Nanosleep
            | Op::BarWarpSync => {}
            Op::CpAsync(c) => {
                let (dst, src) = (src!(0), src!(1));
                let (Src::Addr { base: dbase, .. }, Src::Addr { base: sbase, .. }) = (dst, src)
                else {
                    return Err(unsupported("cp.async: address operands expected"));
                };
                let size = u32::from(c.size);
                step.mem = Some(MemInfo {
                    space: MemSpace::Global,
                    kind: AccessKind::Load,
                    bytes: size,
                });
                let sp = spaces!();
                for l in lanes(exec) {
                    let frame = &warp.frames[frame_i];
                    let d = effective_address(
                        Space::Shared,
                        dbase,
                        read(frame, &sc, dst, l),
                        &ef.reg_bits,
                    );
                    let a = effective_address(
                        Space::Global,
                        sbase,
                        read(frame, &sc, src, l),
                        &ef.reg_bits,
                    );
                    let valid = if c.src_size {
                        (read(frame, &sc, src!(3), l) as u32).min(size)
                    } else {
                        size
                    };
                    step.addrs[l] = a;
                    step.lane_spaces[l] = MemSpace::Global;
                    check_aligned(d, size).map_err(|e| (e.into(), Some(l)))?;
                    check_aligned(a, size).map_err(|e| (e.into(), Some(l)))?;
                    let Phys::Shared(shared_offset) = resolve(Space::Shared, dbase, d, in_kernel)
                    else {
                        return Err((
                            ErrorKind::Unsupported(
                                "cp.async: the destination is not shared memory".into(),
                            ),
                            Some(l),
                        ));
                    };
                    let p = resolve(Space::Global, sbase, a, in_kernel);
                    let mut bytes = [0u8; 16];
                    // Only the source bytes below `src_size` are read: a zero source size
                    // is how compilers predicate a copy off, often with a wild pointer.
                    for (i, b) in bytes.iter_mut().enumerate().take(valid as usize) {
                        *b = sp
                            .read(offset_phys(p, i as u64), 1, l)
                            .map_err(|k| (k, Some(l)))? as u8;
                    }
                    if self.stray_lane.is_none() && sp.global.has_stray() {
                        self.stray_lane = Some(l);
                    }
                    warp.async_copies.push(PendingCopy {
                        group: warp.async_groups,
                        shared_offset,
                        len: c.size,
                        bytes,
                    });
                }
            }
            Op::CpAsyncBulk(c) if c.direction == op::BulkCopyDirection::SharedToCluster => {
                let defer = self.defer_bulk_copies;
                let id = warp.bulk_next;
                let sp = spaces!();
                let mut remote = 0u32;
                for l in lanes(exec) {
                    let frame = &warp.frames[frame_i];
                    let copy = peer_bulk_copy(&sp, frame, &sc, srcs, l, &ef.reg_bits, in_kernel)
                        .map_err(|k| (k, Some(l)))?;
                    step.addrs[l] = copy.source;
                    step.lane_spaces[l] = MemSpace::Shared;
                    if copy.remote {
                        remote |= 1 << l;
                    }
                    let copy = super::bulk::PendingBulkCopy {
                        id,
                        shared_offset: copy.destination,
                        mbarrier: copy.mbarrier,
                        data: copy.data,
                        swizzle: 0,
                        at: (fidx, pc),
                    };
                    super::bulk::arrive_in(copy, defer, &mut warp.bulk_copies, sp.shared, member)
                        .map_err(|k| (k, Some(l)))?;
                }
                if exec != 0 {
                    // Timed as a read of the source through this SM's shared-memory banks,
                    // plus the SM-to-SM network's latency where the destination is another
                    // CTA's (docs/tensor-cores.md).
                    step.mem = Some(MemInfo {
                        space: MemSpace::Shared,
                        kind: AccessKind::Load,
                        bytes: 16,
                    });
                    step.remote_shared |= remote;
                    if defer {
                        step.bulk_copy = Some(id);
                        warp.bulk_next = id.wrapping_add(1);
                    }
                }
            }
            Op::CpAsyncBulk(c) => {
                let (dst, src, size_src) = (src!(0), src!(1), src!(2));
                let (Src::Addr { base: dbase, .. }, Src::Addr { base: sbase, .. }) = (dst, src)
                else {
                    return Err(unsupported("cp.async.bulk: address operands expected"));
                };
                let to_shared = matches!(c.direction, op::BulkCopyDirection::GlobalToShared { .. });
                let multicast = c.direction.multicast();
                let (dspace, sspace) = if multicast {
                    (Space::SharedCluster, Space::Global)
                } else if to_shared {
                    (Space::Shared, Space::Global)
                } else {
                    (Space::Global, Space::Shared)
                };
                let defer = self.defer_bulk_copies && to_shared;
                let id = warp.bulk_next;
                let mut timed = 0u32;
                let mut sp = spaces!();
                for l in lanes(exec) {
                    let frame = &warp.frames[frame_i];
                    let fail = |m: String| (ErrorKind::BulkCopy(m), Some(l));
                    let d =
                        effective_address(dspace, dbase, read(frame, &sc, dst, l), &ef.reg_bits);
                    let a =
                        effective_address(sspace, sbase, read(frame, &sc, src, l), &ef.reg_bits);
                    let size = read(frame, &sc, size_src, l) as u32;
                    if size == 0 || !size.is_multiple_of(16) {
                        return Err(fail(format!(
                            "size {size} is not a positive multiple of 16 bytes"
                        )));
                    }
                    for (what, x) in [("destination", d), ("source", a)] {
                        if !x.is_multiple_of(16) {
                            return Err(fail(format!(
                                "the {what} address {x:#x} is not 16-byte aligned"
                            )));
                        }
                    }
                    let (pd, ps) = (
                        resolve(dspace, dbase, d, in_kernel),
                        resolve(sspace, sbase, a, in_kernel),
                    );
                    let (shared_side, global_addr) = if to_shared { (pd, a) } else { (ps, d) };
                    let shared_offset = match shared_side {
                        Phys::Shared(o) => o,
                        // Multicast: the offset within each destination CTA.
                        Phys::Cluster(_, o) if multicast => o,
                        _ => {
                            return Err(fail(format!(
                                "the {} is not shared memory",
                                if to_shared { "destination" } else { "source" }
                            )))
                        }
                    };
                    // Both ends in bounds before anything moves.
                    if !multicast {
                        sp.read(offset_phys(pd, u64::from(size) - 8), 8, l)
                            .map_err(|k| (k, Some(l)))?;
                    }
                    let mut data = Vec::with_capacity(size as usize);
                    for k in (0..u64::from(size)).step_by(8) {
                        let v = sp
                            .read(offset_phys(ps, k), 8, l)
                            .map_err(|k| (k, Some(l)))?;
                        data.extend_from_slice(&v.to_le_bytes());
                    }
                    step.addrs[l] = global_addr;
                    step.lane_spaces[l] = MemSpace::Global;
                    // The memory system sees at most 63 lines of one lane's block (the
                    // coalescer's 64-line capacity).
                    timed = timed.max(size.min(63 * 128 - (global_addr % 128) as u32));
                    if multicast {
                        let copy = super::bulk::PendingBulkCopy {
                            id,
                            shared_offset,
                            mbarrier: 0,
                            data,
                            swizzle: 0,
                            at: (fidx, pc),
                        };
                        let operands = (src!(3), src!(4));
                        let mc = MulticastCtx {
                            frame,
                            sc: &sc,
                            reg_bits: &ef.reg_bits,
                            in_kernel,
                        };
                        mc.copy(&mut sp, operands, l, copy, defer, &mut warp.bulk_copies)
                            .map_err(|k| (k, Some(l)))?;
                    } else if to_shared {
                        let moff =
                            bulk_mbarrier(&sp, frame, &sc, src!(3), l, &ef.reg_bits, in_kernel)
                                .map_err(|k| (k, Some(l)))?;
                        let copy = super::bulk::PendingBulkCopy {
                            id,
                            shared_offset,
                            mbarrier: moff,
                            data,
                            swizzle: 0,
                            at: (fidx, pc),
                        };
                        super::bulk::arrive(copy, defer, &mut warp.bulk_copies, sp.shared)
                            .map_err(|k| (k, Some(l)))?;
                    } else {
                        for (k, chunk) in data.chunks(8).enumerate() {
                            let mut b = [0u8; 8];
                            b.copy_from_slice(chunk);
                            sp.write(offset_phys(pd, 8 * k as u64), 8, l, u64::from_le_bytes(b))
                                .map_err(|k| (k, Some(l)))?;
                        }
                    }
                    if self.stray_lane.is_none() && sp.global.has_stray() {
                        self.stray_lane = Some(l);
                    }
                }
                if exec != 0 {
                    bulk_step(step, warp, to_shared, defer, id, timed);
                }
            }
            Op::CpAsyncBulkTensor(t) => {
                let n = usize::from(t.dims);
                let (map_src, shared_src) = (src!(0), src!(n + 1));
                let to_shared = matches!(t.direction, op::BulkCopyDirection::GlobalToShared { .. });
                let multicast = t.direction.multicast();
                let box_space = if multicast {
                    Space::SharedCluster
                } else {
                    Space::Shared
                };
                let defer = self.defer_bulk_copies && to_shared;
                let id = warp.bulk_next;
                let mut timed = 0u32;
                let mut sp = spaces!();
                for l in lanes(exec) {
                    let frame = &warp.frames[frame_i];
                    let fail = |m: String| (ErrorKind::BulkCopy(m), Some(l));
                    // The tensor map: a generic address of param, const or global memory,
                    // or a kernel parameter named directly.
                    let mbase = match map_src {
                        Src::Addr { base, .. } => base,
                        _ => Base::Reg(0),
                    };
                    let ma = read(frame, &sc, map_src, l);
                    let mspace = match mbase {
                        Base::KernelParam(_) => Space::Param,
                        _ => Space::Generic,
                    };
                    let mp = resolve(mspace, mbase, ma, in_kernel);
                    let mut bytes = [0u8; 128];
                    for (k, b) in bytes.chunks_mut(8).enumerate() {
                        let v = sp
                            .read(offset_phys(mp, 8 * k as u64), 8, l)
                            .map_err(|e| fail(format!("reading the tensor map at {ma:#x}: {e}")))?;
                        b.copy_from_slice(&v.to_le_bytes());
                    }
                    let map = TensorMap::decode(&bytes)
                        .map_err(|e| fail(format!("the tensor map at {ma:#x}: {e}")))?;
                    if map.rank != u32::from(t.dims) {
                        return Err(fail(format!(
                            "the tensor map at {ma:#x} has {} dimensions, the copy .{}d",
                            map.rank, t.dims
                        )));
                    }
                    let mut coords = [0i32; 5];
                    for (i, c) in coords.iter_mut().enumerate().take(n) {
                        *c = read(frame, &sc, src!(1 + i), l) as u32 as i32;
                    }
                    let sbase = match shared_src {
                        Src::Addr { base, .. } => base,
                        _ => Base::Reg(0),
                    };
                    let s = effective_address(
                        box_space,
                        sbase,
                        read(frame, &sc, shared_src, l),
                        &ef.reg_bits,
                    );
                    let shared_offset = match resolve(box_space, sbase, s, in_kernel) {
                        Phys::Shared(o) => o,
                        // Multicast: the offset within each destination CTA.
                        Phys::Cluster(_, o) if multicast => o,
                        _ => {
                            return Err(fail(format!("the box at {s:#x} is not in shared memory")))
                        }
                    };
                    if !s.is_multiple_of(128) {
                        return Err(fail(format!(
                            "the shared-memory box at {s:#x} is not 128-byte aligned"
                        )));
                    }
                    let size = map.box_bytes();
                    if shared_offset + size > sp.shared.bytes.len() as u64 {
                        return Err(fail(format!(
                            "the box of {size} bytes at shared offset {shared_offset:#x} \
                             passes the end of shared memory ({} bytes)",
                            sp.shared.bytes.len()
                        )));
                    }
                    let esize = map.element_size();
                    let eb = esize as usize;
                    let mut first = None;
                    if t.im2col != map.im2col.is_some() {
                        return Err(fail(format!(
                            "the tensor map at {ma:#x} is {}, the copy .{}",
                            if t.im2col { "tiled" } else { "an im2col map" },
                            if t.im2col { "im2col" } else { "tile" }
                        )));
                    }
                    if to_shared {
                        let fill = map.fill_value().to_le_bytes();
                        let mut data = vec![0u8; size as usize];
                        let elements: Vec<crate::tensor_map::BoxElement> = if t.im2col {
                            // The offsets follow the mbarrier (W first, 16 bits each).
                            let mut offsets = [0u32; 3];
                            for (i, o) in offsets.iter_mut().enumerate().take(n - 2) {
                                *o = u32::from(read(frame, &sc, src!(n + 3 + i), l) as u16);
                            }
                            let offsets = &offsets[..n - 2];
                            map.im2col_elements(&coords[..n], offsets)
                                .map_err(|e| fail(format!("the tensor map at {ma:#x}: {e}")))?
                        } else {
                            map.box_elements(&coords[..n]).collect()
                        };
                        for e in elements {
                            let dst = &mut data[e.offset as usize..][..eb];
                            match e.global {
                                Some(a) => {
                                    first = first.or(Some(a));
                                    let v = sp
                                        .read(Phys::Global(a), esize, l)
                                        .map_err(|k| (k, Some(l)))?;
                                    dst.copy_from_slice(&v.to_le_bytes()[..eb]);
                                }
                                None => dst.copy_from_slice(&fill[..eb]),
                            }
                        }
                        if multicast {
                            let copy = super::bulk::PendingBulkCopy {
                                id,
                                shared_offset,
                                mbarrier: 0,
                                data,
                                swizzle: map.swizzle,
                                at: (fidx, pc),
                            };
                            // The ctaMask follows the im2col offsets, if any (PTX ISA
                            // operand order).
                            let offsets = if t.im2col { n - 2 } else { 0 };
                            let operands = (src!(n + 2), src!(n + 3 + offsets));
                            let mc = MulticastCtx {
                                frame,
                                sc: &sc,
                                reg_bits: &ef.reg_bits,
                                in_kernel,
                            };
                            mc.copy(&mut sp, operands, l, copy, defer, &mut warp.bulk_copies)
                                .map_err(|k| (k, Some(l)))?;
                        } else {
                            let moff = bulk_mbarrier(
                                &sp,
                                frame,
                                &sc,
                                src!(n + 2),
                                l,
                                &ef.reg_bits,
                                in_kernel,
                            )
                            .map_err(|k| (k, Some(l)))?;
                            let copy = super::bulk::PendingBulkCopy {
                                id,
                                shared_offset,
                                mbarrier: moff,
                                data,
                                swizzle: map.swizzle,
                                at: (fidx, pc),
                            };
                            super::bulk::arrive(copy, defer, &mut warp.bulk_copies, sp.shared)
                                .map_err(|k| (k, Some(l)))?;
                        }
                    } else {
                        let data = super::bulk::gather(sp.shared, shared_offset, size, map.swizzle)
                            .map_err(|k| (k, Some(l)))?;
                        // Elements outside the tensor are not written.
                        for e in map.box_elements(&coords[..n]) {
                            if let Some(a) = e.global {
                                first = first.or(Some(a));
                                let mut v = [0u8; 8];
                                v[..eb].copy_from_slice(&data[e.offset as usize..][..eb]);
                                sp.write(Phys::Global(a), esize, l, u64::from_le_bytes(v))
                                    .map_err(|k| (k, Some(l)))?;
                            }
                        }
                    }
                    // Timed as one bulk copy of the box's bytes from its first element
                    // inside the tensor (docs/tensor-cores.md).
                    let ga = first.unwrap_or(map.global_address);
                    step.addrs[l] = ga;
                    step.lane_spaces[l] = MemSpace::Global;
                    let bytes = u32::try_from(size).unwrap_or(u32::MAX);
                    timed = timed.max(bytes.min(63 * 128 - (ga % 128) as u32));
                    if self.stray_lane.is_none() && sp.global.has_stray() {
                        self.stray_lane = Some(l);
                    }
                }
                if exec != 0 {
                    bulk_step(step, warp, to_shared, defer, id, timed);
                }
            }
            Op::WmmaLoad(w) | Op::WmmaStore(w) => {
                let is_store = matches!(inst.op, Op::WmmaStore(_));
                let addr_src = src!(0);
                let stride_src = src!(srcs.len().saturating_sub(1));
                let base = match addr_src {
                    Src::Addr { base, .. } => base,
                    _ => Base::Reg(0),
                };
                let frag = matrix::Frag::of(w.role);
                let nregs = (w.fragment_regs() as usize).min(8);
                let distinct = matrix::distinct_regs(frag, w.shape, w.ty);
                // Elements of 1 (.b1) and 4 (.s4/.u4) bits are addressed in bits: the
                // stride and the offsets count elements, as for every type (ISA
                // "wmma.load").
                let ebits = matrix::element_bits(w.ty);
                let esize = ebits.div_ceil(8);
                let (rows, cols) = frag.dims(w.shape);
                let (majors, minor) = match w.layout {
                    op::MatrixLayout::Row => (rows, cols),
                    op::MatrixLayout::Col => (cols, rows),
                };
                // What the memory system sees: the warp covers the tile, each lane a
                // contiguous share of one row (the hardware's loads move the tile once;
                // the replicated registers are filled inside the SM).
                let row_bytes = (minor * ebits).div_ceil(8);
                let chunk = ((majors * minor * ebits).div_ceil(8 * WARP_SIZE))
                    .min(row_bytes)
                    .max(1);
                let lanes_per_row = (row_bytes / chunk).max(1);
                step.mem = Some(MemInfo {
                    space: MemSpace::Global,
                    kind: if is_store {
                        AccessKind::Store
                    } else {
                        AccessKind::Load
                    },
                    bytes: chunk,
                });
                let mut sp = spaces!();
                let mut first = true;
                for l in lanes(exec) {
                    let frame = &warp.frames[frame_i];
                    let start = effective_address(
                        w.space,
                        base,
                        read(frame, &sc, addr_src, l),
                        &ef.reg_bits,
                    );
                    let ld = read(frame, &sc, stride_src, l) & 0xFFFF_FFFF;
                    let lane = l as u32;
                    step.addrs[l] = start
                        .wrapping_add(u64::from(lane / lanes_per_row) * (ld * u64::from(ebits) / 8))
                        .wrapping_add(u64::from(lane % lanes_per_row * chunk));
                    let p0 = resolve(w.space, base, start, in_kernel);
                    step.lane_spaces[l] = phys_space(p0, w.space);
                    if first {
                        if let Some(m) = step.mem.as_mut() {
                            m.space = step.lane_spaces[l];
                        }
                        first = false;
                    }
                    let mut regs = [0u64; 8];
                    if is_store {
                        for (i, r) in regs.iter_mut().enumerate().take(nregs) {
                            *r = read(frame, &sc, src!(1 + i), l);
                        }
                    }
                    for e in 0..frag.elements(w.shape) {
                        let (r, c) = matrix::coords(frag, w.shape, w.ty, lane, e);
                        let bit = matrix::element_offset(w.layout, ld, r, c) * u64::from(ebits);
                        let a = start.wrapping_add(bit / 8);
                        let shift = (bit % 8) as u32;
                        check_aligned(a, esize).map_err(|e| (e.into(), Some(l)))?;
                        let p = resolve(w.space, base, a, in_kernel);
                        if is_store {
                            // D is never narrower than 16 bits (the decoder's rule).
                            let v = matrix::get_bits(&regs, w.ty, e);
                            sp.write(p, esize, l, v).map_err(|k| (k, Some(l)))?;
                        } else {
                            let v = sp.read(p, esize, l).map_err(|k| (k, Some(l)))?;
                            matrix::set_bits(&mut regs, w.ty, e, v >> shift);
                        }
                    }
                    if self.stray_lane.is_none() && sp.global.has_stray() {
                        self.stray_lane = Some(l);
                    }
                    if !is_store {
                        matrix::replicate(&mut regs[..nregs], distinct);
                        for (i, v) in regs.iter().enumerate().take(nregs) {
                            if let Some(Src::Reg(r)) = dsts.get(i) {
                                warp.frames[frame_i].regs[*r as usize * 32 + l] = *v;
                            }
                        }
                    }
                }
            }
            Op::Mma(o) => {
                let [na, nb, nc, nd] = o.regs().map(usize::from);
                let nm = usize::from(o.sparse.is_some());
                if na.max(nb).max(nc).max(nd) > 8 || srcs.len() < na + nb + nc + nm {
                    return Err(unsupported(format!("{}: malformed fragments", inst.op)));
                }
                let frame = &warp.frames[frame_i];
                let gather = |start: usize, n: usize| {
                    let mut out = [[0u64; 8]; 32];
                    for (lane, regs) in out.iter_mut().enumerate() {
                        for (i, r) in regs.iter_mut().enumerate().take(n) {
                            *r = read(frame, &sc, srcs[start + i], lane);
                        }
                    }
                    out
                };
                let a = gather(0, na);
                let b = gather(na, nb);
                let c = gather(na + nb, nc);
                let d = if o.sparse.is_some() {
                    let meta: [u32; 32] = std::array::from_fn(|lane| {
                        read(frame, &sc, srcs[na + nb + nc], lane) as u32
                    });
                    matrix_sparse::multiply(o, &a, &b, &c, &meta)
                        .map_err(|(lane, m)| (ErrorKind::MmaSparse(m), Some(lane)))?
                } else {
                    matrix::multiply(o, &a, &b, &c)
                };
                for l in lanes(exec) {
                    for (i, v) in d[l].iter().enumerate().take(nd) {
                        if let Some(&dst) = dsts.get(i) {
                            wr!(dst, l, *v);
                        }
                    }
                }
            }
            Op::Wgmma(o) => {
                if exec != 0 {
                    if exec != warp.valid {
                        return Err((
                            ErrorKind::Wgmma(format!(
                                "lanes {exec:#010x} of warp {} execute wgmma.mma_async; every \
                                 thread of the warp must (.sync.aligned)",
                                warp.index
                            )),
                            None,
                        ));
                    }
                    // The warpgroup's four warps must exist (whole 128-thread groups).
                    let group = warp.index / 4;
                    let threads = self.config.threads_per_cta();
                    if threads < 128 * (group + 1) {
                        return Err((
                            ErrorKind::Wgmma(format!(
                                "warp {} executes wgmma.mma_async, but its warpgroup {group} \
                                 has {} of its 128 threads (a CTA of {threads}): a warpgroup \
                                 is four whole warps",
                                warp.index,
                                threads - 128 * group
                            )),
                            None,
                        ));
                    }
                    warp.wgmmas += 1;
                    warp.last_wgmma = (fidx, pc);
                    let na = usize::from(o.a_fragment_regs()).max(1);
                    let nd = usize::from(o.d_regs());
                    if srcs.len() < 2 + na + nd || dsts.len() < nd {
                        return Err(unsupported(format!("{}: malformed operands", inst.op)));
                    }
                    let l0 = lanes(exec).next().unwrap_or(0);
                    let frame = &warp.frames[frame_i];
                    // scale-d and the descriptors are warp-uniform (.aligned): lane 0's.
                    let scale_d = read(frame, &sc, srcs[0], l0) & 1 == 1;
                    let b_desc = read(frame, &sc, srcs[1 + na], l0);
                    let mut a_regs = [[0u32; 4]; 32];
                    let a = if o.a_regs {
                        for (lane, r) in a_regs.iter_mut().enumerate() {
                            for (i, x) in r.iter_mut().enumerate() {
                                *x = read(frame, &sc, srcs[1 + i], lane) as u32;
                            }
                        }
                        super::wgmma::ASource::Regs(&a_regs)
                    } else {
                        super::wgmma::ASource::Desc(read(frame, &sc, srcs[1], l0))
                    };
                    let c: Vec<Vec<u32>> = (0..32)
                        .map(|lane| {
                            (0..nd)
                                .map(|i| read(frame, &sc, srcs[2 + na + i], lane) as u32)
                                .collect()
                        })
                        .collect();
                    let mut rd_shared = |at: u64, bytes: u32| {
                        shared
                            .read_uint("shared", at, bytes)
                            .map_err(|e| e.to_string())
                    };
                    let meta: [u32; 32] = match o.sparse {
                        Some(_) if srcs.len() > 2 + na + nd => std::array::from_fn(|lane| {
                            read(frame, &sc, srcs[2 + na + nd], lane) as u32
                        }),
                        _ => [0; 32],
                    };
                    let d = super::wgmma::multiply_sparse(
                        o,
                        (w % 4) as u32,
                        a,
                        b_desc,
                        &c,
                        scale_d,
                        &meta,
                        &mut rd_shared,
                    )
                    .map_err(|m| (ErrorKind::Wgmma(m), Some(l0)))?;
                    for l in lanes(exec) {
                        for (i, v) in d[l].iter().enumerate() {
                            wr!(dsts[i], l, u64::from(*v));
                        }
                    }
                }
            }
            Op::Ldmatrix(lm) | Op::Stmatrix(lm) => {
                let is_store = matches!(inst.op, Op::Stmatrix(_));
                let addr_src = src!(0);
                let base = match addr_src {
                    Src::Addr { base, .. } => base,
                    _ => Base::Reg(0),
                };
                let count = usize::from(lm.count.min(4));
                let sources = 8 * count;
                step.mem = Some(MemInfo {
                    space: MemSpace::Shared,
                    kind: if is_store {
                        AccessKind::Store
                    } else {
                        AccessKind::Load
                    },
                    bytes: 16,
                });
                // stmatrix: every lane's registers (the instruction is warp-wide).
                let mut regs = [[0u32; 4]; 32];
                if is_store {
                    if srcs.len() < 1 + count {
                        return Err(unsupported(format!("{}: malformed operands", inst.op)));
                    }
                    for (lane, r) in regs.iter_mut().enumerate() {
                        for (j, x) in r.iter_mut().enumerate().take(count) {
                            *x = rd!(srcs[1 + j], lane) as u32;
                        }
                    }
                }
                let mut sp = spaces!();
                // Lanes 0..8·count give the rows' addresses (ISA: threads 8j..8j+7 give
                // matrix j's rows), whether or not they hold results.
                let mut rows = [[0u16; 8]; 32];
                let mut row_addr = [0u64; 32];
                let mut row_space = [MemSpace::Shared; 32];
                for i in 0..sources {
                    let frame = &warp.frames[frame_i];
                    let a = effective_address(
                        lm.space,
                        base,
                        read(frame, &sc, addr_src, i),
                        &ef.reg_bits,
                    );
                    check_aligned(a, 16).map_err(|e| (e.into(), Some(i)))?;
                    let p = resolve(lm.space, base, a, in_kernel);
                    row_addr[i] = a;
                    row_space[i] = phys_space(p, lm.space);
                    for (c, x) in rows[i].iter_mut().enumerate() {
                        let at = offset_phys(p, 2 * c as u64);
                        if is_store {
                            let (j, r) = ((i / 8) as u32, (i % 8) as u32);
                            let v = matrix::stmatrix_element(lm, &regs, j, r, c as u32);
                            sp.write(at, 2, i, u64::from(v)).map_err(|k| (k, Some(i)))?;
                        } else {
                            *x = sp.read(at, 2, i).map_err(|k| (k, Some(i)))? as u16;
                        }
                    }
                }
                if self.stray_lane.is_none() && sp.global.has_stray() {
                    self.stray_lane = Some(0);
                }
                let mut first = true;
                for l in lanes(exec) {
                    step.addrs[l] = row_addr[l % sources];
                    step.lane_spaces[l] = row_space[l % sources];
                    if first {
                        if let Some(m) = step.mem.as_mut() {
                            m.space = step.lane_spaces[l];
                        }
                        first = false;
                    }
                    if is_store {
                        continue;
                    }
                    for j in 0..u32::from(lm.count) {
                        if let Some(&dst) = dsts.get(j as usize) {
                            wr!(
                                dst,
                                l,
                                u64::from(matrix::ldmatrix_reg(lm, &rows, l as u32, j))
                            );
                        }
                    }
                }
            }
            Op::CpAsyncCommit => {
                if exec != 0 {
                    warp.async_groups += 1;
                }
            }
            Op::CpAsyncWait { all } => {
                if exec != 0 {
                    let visible_before = if *all {
                        warp.async_groups += 1;
                        warp.async_groups
                    } else {
                        let n = match src!(0) {
                            Src::Imm(n) => n as u32,
                            _ => 0,
                        };
                        warp.async_groups.saturating_sub(n)
                    };
                    complete_copies(warp, shared, visible_before)?;
                }
            }
            Op::Mbarrier(b) if b.kind == op::MbarrierKind::PendingCount => {
                let s = src!(0);
                map!(|l| mbarrier::pending_count(rd!(s, l)))
            }
            Op::Mbarrier(b) => {
                use op::MbarrierKind as K;
                let (addr_src, base) = match src!(0) {
                    s @ Src::Addr { base, .. } => (s, base),
                    s => (s, Base::Reg(0)),
                };
                if let K::CpAsyncArrive { .. } = b.kind {
                    // The arrive waits for the thread's earlier copies: they complete now.
                    complete_copies(warp, shared, u32::MAX)?;
                }
                step.mem = Some(MemInfo {
                    space: MemSpace::Shared,
                    kind: if matches!(b.kind, K::Wait { .. }) {
                        AccessKind::Load
                    } else {
                        AccessKind::Atomic
                    },
                    bytes: 8,
                });
                let mut sp = spaces!();
                for l in lanes(exec) {
                    let frame = &warp.frames[frame_i];
                    let arg = |i: usize| srcs.get(i).map(|&s| read(frame, &sc, s, l) as u32);
                    let addr = effective_address(
                        b.space,
                        base,
                        read(frame, &sc, addr_src, l),
                        &ef.reg_bits,
                    );
                    step.addrs[l] = addr;
                    step.lane_spaces[l] = MemSpace::Shared;
                    check_aligned(addr, 8).map_err(|e| (e.into(), Some(l)))?;
                    let p = resolve(b.space, base, addr, in_kernel);
                    // An arrive may reach another CTA's mbarrier (`.shared::cluster`).
                    if is_remote(p, member) {
                        if !matches!(b.kind, K::Arrive { .. }) {
                            return Err((
                                ErrorKind::Mbarrier(format!(
                                    "the mbarrier object at {addr:#x} belongs to another CTA \
                                     of the cluster: only an arrive may reach it"
                                )),
                                Some(l),
                            ));
                        }
                        step.remote_shared |= 1 << l;
                    }
                    let (Phys::Shared(offset) | Phys::Cluster(_, offset)) = p else {
                        return Err((
                            ErrorKind::Mbarrier(format!(
                                "the mbarrier object at {addr:#x} is not in shared memory"
                            )),
                            Some(l),
                        ));
                    };
                    let bad = |m: String| {
                        (
                            ErrorKind::Mbarrier(format!(
                                "{m} (mbarrier at shared offset {offset:#x})"
                            )),
                            Some(l),
                        )
                    };
                    let word = sp.read(p, 8, l).map_err(|k| (k, Some(l)))?;
                    let (new, result) = match b.kind {
                        K::Init => (
                            mbarrier::init(u64::from(arg(1).unwrap_or(0))).map_err(bad)?,
                            None,
                        ),
                        K::Arrive {
                            drop,
                            no_complete,
                            expect_tx,
                        } => {
                            let (count, tx) = if expect_tx {
                                (1, arg(1).unwrap_or(0))
                            } else {
                                (arg(1).unwrap_or(1), 0)
                            };
                            let (w, token) = mbarrier::arrive(
                                word,
                                u64::from(count),
                                u64::from(tx),
                                drop,
                                no_complete,
                            )
                            .map_err(bad)?;
                            (w, Some(token))
                        }
                        K::ExpectTx | K::CompleteTx => {
                            let tx = i64::from(arg(1).unwrap_or(0));
                            let delta = if b.kind == K::ExpectTx { tx } else { -tx };
                            (mbarrier::change_tx(word, delta).map_err(bad)?, None)
                        }
                        K::Wait { parity, .. } => {
                            let operand = srcs.get(1).map_or(0, |&s| read(frame, &sc, s, l));
                            let done = mbarrier::phase_complete(word, operand, parity);
                            (word, Some(u64::from(done)))
                        }
                        K::Inval => (0, None),
                        K::CpAsyncArrive { noinc: true } => (
                            mbarrier::arrive(word, 1, 0, false, false).map_err(bad)?.0,
                            None,
                        ),
                        K::CpAsyncArrive { noinc: false } => {
                            mbarrier::check_initialised(word).map_err(bad)?;
                            (word, None)
                        }
                        K::PendingCount => (word, None),
                    };
                    if new != word {
                        sp.write(p, 8, l, new).map_err(|k| (k, Some(l)))?;
                    }
                    if let (Some(v), Some(&Src::Reg(r))) = (result, dsts.first()) {
                        warp.frames[frame_i].regs[r as usize * 32 + l] = v;
                    }
                }
            }
            Op::Elect => {
                let mask_src = src!(0);
                // The leader: the lowest active lane that the member mask names.
                let leader = lanes(exec).find(|&l| (rd!(mask_src, l) >> l) & 1 == 1);
                for l in lanes(exec) {
                    wr!(dsts[0], l, leader.unwrap_or(0) as u64);
                    if let Some(&p) = dsts.get(1) {
                        wr!(p, l, u64::from(leader == Some(l)));
                    }
                }
            }
            Op::CreatePolicy(kind) => {
                let a = src!(0);
                map!(|l| kind.encode(rd!(a, l)))
            }
            Op::Atom(a) | Op::Red(a) => {
                let is_atom = matches!(inst.op, Op::Atom(_));
                let size = (a.ty.bits() / 8).max(4);
                let (addr_src, base) = match src!(0) {
                    s @ Src::Addr { base, .. } => (s, base),
                    s => (s, Base::Reg(0)),
                };
                // red.async's third source is its mbarrier, not a compare value.
                let c = match srcs.get(2) {
                    Some(&c) if !a.complete_tx => c,
                    _ => Src::Imm(0),
                };
                let b = src!(1);
                step.mem = Some(MemInfo {
                    space: MemSpace::Global,
                    kind: AccessKind::Atomic,
                    bytes: size,
                });
                let mut sp = spaces!();
                let m = mask_bits(size * 8);
                // An executor of the parallel phase reads the addresses and operands here
                // and leaves the read-modify-write, and an atomic's old values, to the
                // launch (`Launch::complete_access`), in the one-thread order.
                let defer = self.defer_global && a.space == Space::Global;
                if defer {
                    let frame = &warp.frames[frame_i];
                    step.deferred_values.clear();
                    for l in lanes(exec) {
                        step.addrs[l] =
                            effective_address(a.space, base, read(frame, &sc, addr_src, l), &ef.reg_bits);
                        step.lane_spaces[l] = MemSpace::Global;
                        step.deferred_values.push(read(frame, &sc, b, l));
                        step.deferred_values.push(read(frame, &sc, c, l));
                    }
                    step.deferred_access = Some(frame_i);
                }
                for l in lanes(if defer { 0 } else { exec }) {
                    let addr = effective_address(
                        a.space,
                        base,
                        read(&warp.frames[frame_i], &sc, addr_src, l),
                        &ef.reg_bits,
                    );
                    step.addrs[l] = addr;
                    check_aligned(addr, size).map_err(|e| (e.into(), Some(l)))?;
                    let p = resolve(a.space, base, addr, in_kernel);
                    if a.complete_tx {
                        async_destination(p, "red.async", addr, l)?;
                    }
                    step.lane_spaces[l] = phys_space(p, a.space);
                    if is_remote(p, member) {
                        step.remote_shared |= 1 << l;
                    }
                    let old = sp.read(p, size, l).map_err(|k| (k, Some(l)))?;
                    let bv = read(&warp.frames[frame_i], &sc, b, l);
                    let cv = read(&warp.frames[frame_i], &sc, c, l);
                    let new = atomic_op(a.op, a.ty, old, bv, cv)? & m;
                    sp.write(p, size, l, new).map_err(|k| (k, Some(l)))?;
                    if self.stray_lane.is_none() && sp.global.has_stray() {
                        self.stray_lane = Some(l);
                    }
                    if a.complete_tx {
                        let mbar = async_mbarrier!(a.space, 2, l);
                        async_complete_tx(&mut sp, mbar, size, l, in_kernel)?;
                    }
                    if is_atom {
                        if let Some(Src::Reg(r)) = dsts.first() {
                            warp.frames[frame_i].regs[*r as usize * 32 + l] = old;
                        }
                    }
                }
                if let (Some(mi), Some(l)) = (step.mem.as_mut(), lanes(exec).next()) {
                    mi.space = step.lane_spaces[l];
                }
            }
            // With clusters of one CTA, arriving at the cluster barrier is recorded by the
            // wait, a barrier of all the CTA's threads (exited ones excepted).
            Op::Bar {
                kind: BarrierKind::Arrive,
                cluster: true,
                ..
            } if member.is_none() => {}
            // Clusters of several CTAs: the cluster barrier counts threads of every CTA.
            Op::Bar {
                kind,
                cluster: true,
                ..
            } if member.is_some() => {
                let Some(c) = member else {
                    return Err(unsupported("barrier.cluster without a cluster"));
                };
                if exec != 0 {
                    let mut bar = cluster::lock(&c.state.barrier);
                    if *kind == BarrierKind::Arrive {
                        if warp.cluster_arrived == 0 {
                            warp.cluster_phase = bar.phase;
                        }
                        // A thread arriving twice before the phase completes is undefined
                        // in the ISA; it counts once here.
                        let new = exec & !warp.cluster_arrived;
                        warp.cluster_arrived |= new;
                        bar.arrived += new.count_ones();
                        if bar.complete_if_all_arrived() {
                            self.cluster_releases += 1;
                            let phase = bar.phase;
                            drop(bar);
                            warp.stack[ti].pc = next;
                            super::release_cluster_waiters(warps, phase);
                            step.event = StepEvent::BarrierRelease {
                                id: super::CLUSTER_BARRIER as u32,
                            };
                            let warp = &mut warps[w];
                            settle(warp);
                            step.next_pc = next_pc(warp, module);
                            return Ok(());
                        } else {
                            step.event = StepEvent::BarrierArrive {
                                id: super::CLUSTER_BARRIER as u32,
                            };
                        }
                    } else {
                        if exec & !warp.cluster_arrived != 0 {
                            return Err((
                                ErrorKind::Unsupported(
                                    "barrier.cluster.wait by threads that did not execute \
                                     barrier.cluster.arrive before it"
                                        .to_string(),
                                ),
                                lanes(exec & !warp.cluster_arrived).next(),
                            ));
                        }
                        if warp.cluster_phase < bar.phase {
                            warp.cluster_arrived = 0;
                        } else {
                            warp.status = WarpStatus::AtBarrier(super::CLUSTER_BARRIER as u32);
                            warp.wait_pc = pc;
                            step.event = StepEvent::BarrierWait {
                                id: super::CLUSTER_BARRIER as u32,
                            };
                        }
                    }
                }
            }
            Op::Mapa { space, .. } => {
                let (a, rank) = (src!(0), src!(1));
                let size = member.map_or(1, |c| c.state.size());
                for l in lanes(exec) {
                    let r = rd!(rank, l) as u32;
                    if r >= size {
                        return Err((
                            ErrorKind::Unsupported(format!(
                                "mapa to CTA rank {r}, outside the cluster of {size} CTA{}",
                                if size == 1 { "" } else { "s" }
                            )),
                            Some(l),
                        ));
                    }
                    let v = rd!(a, l);
                    // A generic address keeps its window; the rank goes below it.
                    let (window, offset) = if *space == Space::SharedCluster {
                        (0, v & 0xFFFF_FFFF)
                    } else if (SHARED_WINDOW..SHARED_WINDOW + WINDOW_SIZE).contains(&v) {
                        (SHARED_WINDOW, v - SHARED_WINDOW)
                    } else {
                        return Err((
                            ErrorKind::Unsupported(format!(
                                "mapa of the generic address {v:#x}, which is not in shared \
                                 memory"
                            )),
                            Some(l),
                        ));
                    };
                    let (_, offset) = cluster::split_cluster_address(offset);
                    // The own rank maps to the plain offset, valid in .shared::cta too.
                    let own = member.map_or(0, |c| c.rank);
                    let mapped = if r == own {
                        offset
                    } else {
                        cluster::cluster_address(r, offset)
                    };
                    wr!(dsts[0], l, window + mapped);
                }
            }
            Op::Getctarank { space, .. } => {
                let a = src!(0);
                let size = member.map_or(1, |c| c.state.size());
                let own = member.map_or(0, |c| c.rank);
                for l in lanes(exec) {
                    let v = rd!(a, l);
                    let offset = if *space == Space::SharedCluster {
                        v & 0xFFFF_FFFF
                    } else if (SHARED_WINDOW..SHARED_WINDOW + WINDOW_SIZE).contains(&v) {
                        v - SHARED_WINDOW
                    } else {
                        return Err((
                            ErrorKind::Unsupported(format!(
                                "getctarank of the generic address {v:#x}, which is not in \
                                 shared memory"
                            )),
                            Some(l),
                        ));
                    };
                    // Rank bits zero: the executing CTA's own shared memory.
                    let rank = cluster::split_cluster_address(offset).0.unwrap_or(own);
                    if rank >= size {
                        return Err((
                            ErrorKind::Unsupported(format!(
                                "getctarank of {v:#x}, an address of CTA rank {rank}, outside \
                                 the cluster of {size} CTA{}",
                                if size == 1 { "" } else { "s" }
                            )),
                            Some(l),
                        ));
                    }
                    wr!(dsts[0], l, u64::from(rank));
                }
            }
            Op::Setmaxnreg { inc, count } => {
                setmaxnreg(warps, w, exec, (*inc, *count))?;
                let warp = &mut warps[w];
                warp.stack[ti].pc = next;
                settle(warp);
                step.next_pc = next_pc(warp, module);
                return Ok(());
            }
            Op::Bar { kind, cluster, .. } => {
                if exec != 0 {
                    let Some(l0) = lanes(exec).next() else {
                        unreachable!()
                    };
                    let id = if *cluster {
                        super::CLUSTER_BARRIER
                    } else {
                        (rd!(src!(0), l0) & 15) as usize
                    };
                    let is_red = matches!(kind, BarrierKind::RedPopc | BarrierKind::Red(_));
                    let has_count = srcs.len() >= if is_red { 3 } else { 2 };
                    let count = has_count.then(|| rd!(srcs[1], l0) as u32);
                    let bar: &mut Barrier = &mut barriers[id];
                    if bar.arrived == 0 {
                        bar.all = true;
                        bar.any = false;
                        bar.popc = 0;
                    }
                    bar.arrived += 1;
                    bar.expected_warps = count.map_or(0, |c| c.div_ceil(WARP_SIZE).max(1));
                    if is_red {
                        let p = srcs[srcs.len() - 1];
                        for l in lanes(exec) {
                            let v = read(&warp.frames[frame_i], &sc, p, l) & 1 == 1;
                            bar.popc += v as u32;
                            bar.all &= v;
                            bar.any |= v;
                        }
                        if let Some(Src::Reg(r)) = dsts.first() {
                            warp.pending_red = Some(PendingRed {
                                reg: *r,
                                mask: exec,
                                kind: *kind,
                            });
                        }
                    }
                    if *kind == BarrierKind::Arrive {
                        step.event = StepEvent::BarrierArrive { id: id as u32 };
                    } else {
                        bar.waiting |= 1 << w;
                        warp.status = WarpStatus::AtBarrier(id as u32);
                        warp.wait_pc = pc;
                        step.event = StepEvent::BarrierWait { id: id as u32 };
                    }
                    let expected = if bar.expected_warps > 0 {
                        bar.expected_warps
                    } else {
                        live_warps
                    };
                    warp.stack[ti].pc = next;
                    if bar.arrived >= expected {
                        release(bar, warps);
                        step.event = StepEvent::BarrierRelease { id: id as u32 };
                    }
                    let warp = &mut warps[w];
                    settle(warp);
                    step.next_pc = next_pc(warp, module);
                    return Ok(());
                }
            }
            Op::Shfl { mode, .. } => {
                let (a, b, c) = (src!(0), src!(1), src!(2));
                let mut vals = [0u64; 32];
                for (l, v) in vals.iter_mut().enumerate() {
                    *v = rd!(a, l);
                }
                for l in lanes(exec) {
                    let bv = rd!(b, l) as u32 & 31;
                    let cv = rd!(c, l) as u32;
                    let seg = (cv >> 8) & 31;
                    let clamp = cv & 31;
                    let lane = l as u32;
                    let max_lane = (lane & seg) | (clamp & !seg);
                    let min_lane = lane & seg;
                    let (j, ok) = match mode {
                        op::ShuffleMode::Up => {
                            (lane.wrapping_sub(bv), lane >= bv && lane - bv >= max_lane)
                        }
                        op::ShuffleMode::Down => (lane + bv, lane + bv <= max_lane),
                        op::ShuffleMode::Bfly => (lane ^ bv, (lane ^ bv) <= max_lane),
                        op::ShuffleMode::Idx => {
                            let j = min_lane | (bv & !seg);
                            (j, j <= max_lane)
                        }
                    };
                    let src_lane = if ok { j as usize & 31 } else { l };
                    wr!(dsts[0], l, vals[src_lane] & 0xFFFF_FFFF);
                    if let Some(&p) = dsts.get(1) {
                        wr!(p, l, ok as u64);
                    }
                }
            }
            Op::Movmatrix => {
                let a = src!(0);
                let mut vals = [0u32; 32];
                for (l, v) in vals.iter_mut().enumerate() {
                    *v = rd!(a, l) as u32;
                }
                for l in lanes(exec) {
                    wr!(
                        dsts[0],
                        l,
                        u64::from(matrix::movmatrix_reg(&vals, l as u32))
                    );
                }
            }
            Op::Vote { mode, .. } => {
                let a = src!(0);
                let mut ballot = 0u32;
                for l in lanes(exec) {
                    if rd!(a, l) & 1 == 1 {
                        ballot |= 1 << l;
                    }
                }
                let v = match mode {
                    op::VoteMode::All => (ballot == exec) as u64,
                    op::VoteMode::Any => (ballot != 0) as u64,
                    op::VoteMode::Uni => (ballot == 0 || ballot == exec) as u64,
                    op::VoteMode::Ballot => ballot as u64,
                };
                map!(|_l| v);
            }
            Op::Match { all, ty } => {
                let a = src!(0);
                let m = mask_bits(ty.bits());
                let mut vals = [0u64; 32];
                for l in lanes(exec) {
                    vals[l] = rd!(a, l) & m;
                }
                let same = |l: usize| {
                    lanes(exec)
                        .filter(|&k| vals[k] == vals[l])
                        .fold(0u32, |acc, k| acc | 1 << k)
                };
                let all_same =
                    lanes(exec).all(|k| vals[k] == vals[lanes(exec).next().unwrap_or(0)]);
                for l in lanes(exec) {
                    let v = if *all {
                        if all_same {
                            exec
                        } else {
                            0
                        }
                    } else {
                        same(l)
                    };
                    wr!(dsts[0], l, v as u64);
                    if let Some(&p) = dsts.get(1) {
                        wr!(p, l, all_same as u64);
                    }
                }
            }
            Op::Activemask => map!(|_l| exec as u64),
            Op::Redux { op: rop, ty } => {
                let a = src!(0);
                let t = int_type(*ty);
                let mut acc: Option<u64> = None;
                for l in lanes(exec) {
                    let v = t.wrap(rd!(a, l));
                    acc = Some(match (acc, rop) {
                        (None, _) => v,
                        (Some(x), op::ReduxOp::Add) => t.wrap(x.wrapping_add(v)),
                        (Some(x), op::ReduxOp::Min) => int::min_max(t, x, v, false),
                        (Some(x), op::ReduxOp::Max) => int::min_max(t, x, v, true),
                        (Some(x), op::ReduxOp::And) => x & v,
                        (Some(x), op::ReduxOp::Or) => x | v,
                        (Some(x), op::ReduxOp::Xor) => x ^ v,
                    });
                }
                let v = acc.unwrap_or(0);
                map!(|_l| v);
            }
            Op::Bra { .. } => {
                let target = match src!(0) {
                    Src::Block(t) => t,
                    _ => return Err(unsupported("bra without a block target")),
                };
                let taken = exec;
                let not_taken = active & !exec;
                if not_taken == 0 {
                    next = target;
                } else if taken != 0 {
                    let r = ef.reconverge[pc as usize];
                    let e = &mut warp.stack[ti];
                    if e.rpc == r {
                        *e = SimtEntry {
                            pc: pc + 1,
                            mask: not_taken,
                            rpc: r,
                        };
                    } else {
                        e.pc = r;
                        warp.stack.push(SimtEntry {
                            pc: pc + 1,
                            mask: not_taken,
                            rpc: r,
                        });
                    }
                    warp.stack.push(SimtEntry {
                        pc: target,
                        mask: taken,
                        rpc: r,
                    });
                    settle(warp);
                    step.next_pc = next_pc(warp, module);
                    return Ok(());
                }
            }
            Op::Call(call) => {
                if exec != 0 {
                    let (callee, args) = match call.callee {
                        // The callee operand comes first for direct calls too.
                        Callee::Direct(fid) => (fid, srcs.get(1..).unwrap_or(&[])),
                        Callee::Indirect => {
                            let t = srcs.first().copied().unwrap_or(Src::Sink);
                            let Some(l0) = lanes(exec).next() else {
                                unreachable!()
                            };
                            let v = rd!(t, l0);
                            let idx = v.wrapping_sub(FUNC_WINDOW);
                            if v < FUNC_WINDOW || idx as usize >= module.funcs.len() {
                                return Err((ErrorKind::BadCallTarget(v), Some(l0)));
                            }
                            (ir::FuncId(idx as u32), srcs.get(1..).unwrap_or(&[]))
                        }
                    };
                    let cf = &module.program.functions[callee.index()];
                    if !cf.has_body {
                        let mut sp = Spaces {
                            global: self.mem,
                            shared,
                            local: &mut warp.local,
                            params: &self.params,
                            cluster: member,
                        };
                        builtin(
                            &cf.name,
                            &mut sp,
                            &warp.frames[frame_i],
                            &sc,
                            args,
                            dsts,
                            exec,
                            self.out,
                        )?;
                        // Only now: a built-in's error is located at the call.
                        warp.stack[ti].pc = next;
                        settle(warp);
                        step.next_pc = next_pc(warp, module);
                        return Ok(());
                    }
                    if warp.frames.len() >= self.limits.max_call_depth {
                        return Err((
                            ErrorKind::CallDepth {
                                limit: self.limits.max_call_depth,
                            },
                            None,
                        ));
                    }
                    warp.stack[ti].pc = next;
                    let cef = &module.funcs[callee.index()];
                    let caller = &warp.frames[frame_i];
                    let local_base = caller.local_base + ef.frame_size;
                    let mut frame = Frame {
                        func: callee.index(),
                        regs: vec![0; cef.num_regs * 32],
                        local_base,
                        stack_base: warp.stack.len(),
                        param_addrs: Vec::with_capacity(args.len()),
                        ret_addrs: Vec::with_capacity(dsts.len()),
                    };
                    for (i, a) in args.iter().enumerate() {
                        match *a {
                            Src::Addr { base, offset } => frame
                                .param_addrs
                                .push(base_addr(caller, base, 0).wrapping_add(offset as u64)),
                            Src::FrameAddr(o) => frame.param_addrs.push(caller.local_base + o),
                            s => {
                                frame.param_addrs.push(u64::MAX);
                                if let Some(r) = cf.params.get(i).and_then(|p| p.reg) {
                                    for l in lanes(exec) {
                                        frame.regs[r.index() * 32 + l] = read(caller, &sc, s, l);
                                    }
                                }
                            }
                        }
                    }
                    for d in dsts {
                        frame.ret_addrs.push(match *d {
                            Src::Addr { base, offset } => {
                                base_addr(caller, base, 0).wrapping_add(offset as u64)
                            }
                            Src::FrameAddr(o) => caller.local_base + o,
                            _ => u64::MAX,
                        });
                    }
                    let needed = local_base + cef.frame_size;
                    if needed > self.limits.local_bytes_per_thread {
                        return Err((
                            ErrorKind::LocalOverflow {
                                needed,
                                limit: self.limits.local_bytes_per_thread,
                            },
                            None,
                        ));
                    }
                    if cef.frame_size > 0 {
                        if warp.local.is_empty() {
                            warp.local = vec![LocalMemory::default(); 32];
                        }
                        for l in warp.local.iter_mut() {
                            l.grow_to(needed);
                        }
                    }
                    warp.frames.push(frame);
                    warp.stack.push(SimtEntry {
                        pc: 0,
                        mask: exec,
                        rpc: NO_PC,
                    });
                    step.event = StepEvent::Call { callee };
                    step.next_pc = next_pc(warp, module);
                    return Ok(());
                }
            }
            Op::Ret { .. } | Op::Exit => {
                let is_exit = matches!(inst.op, Op::Exit) || frame_i == 0;
                if exec != active {
                    warp.stack[ti].pc = next;
                }
                finish_lanes(warp, exec, is_exit);
                step.event = if is_exit {
                    StepEvent::Exit {
                        done: warp.status == WarpStatus::Exited,
                    }
                } else {
                    StepEvent::Return
                };
                if is_exit {
                    after_exit(barriers, warps);
                }
                let warp = &mut warps[w];
                step.next_pc = next_pc(warp, module);
                return Ok(());
            }
            Op::Trap | Op::Brkpt => {
                if exec != 0 {
                    return Err((ErrorKind::Trap, lanes(exec).next()));
                }
            }
            Op::Tex(t) => {
                let (tex_src, coords) = match srcs.split_first() {
                    Some((s, rest)) => (
                        *s,
                        if t.has_sampler {
                            rest.get(1..).unwrap_or(&[])
                        } else {
                            rest
                        },
                    ),
                    None => return Err(unsupported("tex without operands")),
                };
                let name = inst.op.opcode();
                let two_d = t.geometry == op::TexGeometry::D2;
                let supported = match t.gather {
                    None => matches!(t.geometry, op::TexGeometry::D1 | op::TexGeometry::D2),
                    Some(_) => two_d && t.coord_ty == ScalarType::F32,
                };
                if !supported {
                    return Err(unsupported(format!(
                        "{name}.{}.{}",
                        t.geometry.as_str(),
                        t.coord_ty
                    )));
                }
                for l in lanes(exec) {
                    let binding = match tex_src {
                        Src::Addr {
                            base: Base::Fixed(a),
                            ..
                        } => self.textures.by_name.get(texture_name(module, a)),
                        s => self.textures.by_handle.get(&rd!(s, l)),
                    }
                    .ok_or_else(|| {
                        (
                            ErrorKind::Texture(format!("{name} from an unbound texture")),
                            Some(l),
                        )
                    })?;
                    let c0 = rd!(coords.first().copied().unwrap_or(Src::Imm(0)), l);
                    let c1 = rd!(coords.get(1).copied().unwrap_or(Src::Imm(0)), l);
                    let (u, v) = (f32::from_bits(c0 as u32), f32::from_bits(c1 as u32));
                    let float = |footprint| TexCoords::Float {
                        u,
                        v,
                        two_d,
                        footprint,
                    };
                    let coords = match t.gather {
                        Some(_) => float(true),
                        None if t.coord_ty == ScalarType::F32 => float(false),
                        None => TexCoords::Int(c0 as i32, c1 as i32),
                    };
                    step.addrs[l] = binding.fetch_address(coords);
                    step.lane_spaces[l] = MemSpace::Texture;
                    if step.mem.is_none() {
                        // A filtered or gathered footprint is two texels wide and, in 2D,
                        // two rows high (the first lane's binding speaks for the warp).
                        let (wide, rows) = binding.footprint(coords);
                        step.texture_row_pitch = if rows == 2 { binding.pitch } else { 0 };
                        step.mem = Some(MemInfo {
                            space: MemSpace::Texture,
                            kind: AccessKind::Load,
                            bytes: (binding.texel_bytes() * wide) as u32,
                        });
                    }
                    let values = match t.gather {
                        Some(comp) => {
                            let c = match comp {
                                op::TexComponent::R => 0,
                                op::TexComponent::G => 1,
                                op::TexComponent::B => 2,
                                op::TexComponent::A => 3,
                            };
                            binding.gather(self.mem, u, v, c)
                        }
                        None if t.coord_ty == ScalarType::F32 => {
                            binding.sample(self.mem, u, v, two_d)
                        }
                        None => binding.fetch_int(self.mem, c0 as i32, c1 as i32),
                    }
                    .map_err(|e| (e.into(), Some(l)))?;
                    // Float texels travel as f32 bits, integer texels as their own bits.
                    for (d, v) in dsts.iter().zip(values) {
                        wr!(*d, l, v.to_bits() as u64);
                    }
                }
            }
            Op::Txq { query, .. } => {
                let tex_src = src!(0);
                for l in lanes(exec) {
                    let binding = match tex_src {
                        Src::Addr {
                            base: Base::Fixed(a),
                            ..
                        } => self.textures.by_name.get(texture_name(module, a)),
                        s => self.textures.by_handle.get(&rd!(s, l)),
                    }
                    .ok_or_else(|| {
                        (
                            ErrorKind::Texture("txq of an unbound texture".into()),
                            Some(l),
                        )
                    })?;
                    let value = binding.query(*query).ok_or_else(|| {
                        (
                            ErrorKind::Texture(format!(
                                "txq.{}: not known for a 1D or 2D texture binding",
                                query.as_str()
                            )),
                            Some(l),
                        )
                    })?;
                    wr!(dsts[0], l, value as u64);
                }
            }
        }

        // Record destination values for the timing model (not in a functional run whose
        // observer, if any, does not read them: `Launch::run_ctas`).
        let frame = &warp.frames[frame_i];
        let mut n = 0;
        for d in dsts
            .iter()
            .take(if self.record_destinations { 4 } else { 0 })
        {
            if let Src::Reg(r) = *d {
                step.dst_regs[n] = ir::RegId(r);
                step.dst_values[n]
                    .copy_from_slice(&frame.regs[r as usize * 32..r as usize * 32 + 32]);
                n += 1;
            }
        }
        step.num_dsts = n as u8;
        warp.stack[ti].pc = next;
        settle(warp);
        step.next_pc = next_pc(warp, module);
        Ok(())
    }
}

/// `setmaxnreg` by warp `w` (PTX ISA §9.7.19.x): the rules the ISA states that a
/// functional run can check. Every thread of the warp executes it (`.sync.aligned`); its
/// warpgroup (the four warps `4k..4k+3` of the CTA) is complete; the warps of a
/// warpgroup execute the same `setmaxnreg` (the n-th of each names the same count), and
/// synchronize before the next (no warp executes its (n+1)-th before every other has
/// executed its n-th); `.inc` never lowers and `.dec` never raises the count a previous
/// `setmaxnreg` of the warp set. The register pool itself (what `.inc` waits for) is the
/// timing model's: the launch's register count is its to know.
fn setmaxnreg(
    warps: &mut [Warp],
    w: usize,
    exec: u32,
    (inc, count): (bool, u16),
) -> Result<(), LaneError> {
    let fail = |msg: String| Err((ErrorKind::Setmaxnreg(msg), None));
    let action = if inc { "inc" } else { "dec" };
    let warp = &warps[w];
    if exec != warp.valid {
        return fail(format!(
            "lanes {exec:#010x} of warp {} execute it; every thread of the warp must \
             (.sync.aligned)",
            warp.index
        ));
    }
    let group = w / 4 * 4;
    let peers = warps.get(group..group + 4);
    if peers.is_none_or(|p| p.iter().any(|x| x.valid != u32::MAX)) {
        return fail(format!(
            "warp {} belongs to an incomplete warpgroup (warps {}..{} of a CTA of {} \
             warps, 128 threads each group): every warp of a warpgroup must execute it",
            warp.index,
            group,
            group + 3,
            warps.len()
        ));
    }
    let n = warp.setmaxnregs + 1;
    if warp.maxnreg != 0 && (inc && count < warp.maxnreg || !inc && count > warp.maxnreg) {
        return fail(format!(
            ".{action} to {count} registers from the warp's {} (set by its previous \
             setmaxnreg)",
            warp.maxnreg
        ));
    }
    for (i, p) in warps[group..group + 4].iter().enumerate() {
        if group + i == w {
            continue;
        }
        if p.setmaxnregs > n || p.setmaxnregs + 1 < n {
            return fail(format!(
                "warp {} executes its setmaxnreg #{n} where warp {} of its warpgroup has \
                 executed {}: the warps of a warpgroup must synchronize between setmaxnregs",
                warp.index, p.index, p.setmaxnregs
            ));
        }
        if p.setmaxnregs == n && p.maxnreg != count {
            return fail(format!(
                "warp {} sets {count} registers where warp {} of its warpgroup set {}: \
                 the warps of a warpgroup must execute the same setmaxnreg",
                warp.index, p.index, p.maxnreg
            ));
        }
    }
    let warp = &mut warps[w];
    warp.setmaxnregs = n;
    warp.maxnreg = count;
    Ok(())
}

/// Bookkeeping after lanes exited: barriers waiting for "every live warp" may now be
/// complete.
fn after_exit(barriers: &mut [Barrier; super::MAX_BARRIERS], warps: &mut [Warp]) {
    let live = warps
        .iter()
        .filter(|x| x.status != WarpStatus::Exited)
        .count() as u32;
    for bar in barriers.iter_mut() {
        if bar.arrived > 0 && bar.expected_warps == 0 && bar.arrived >= live {
            release(bar, warps);
        }
    }
}

/// A global load from a register plus offset (see [`load_global`]).
struct GlobalLoad<'a> {
    exec: u32,
    addr_reg: u32,
    offset: u64,
    address_mask: u64,
    /// Element size, elements, sign-extended.
    elements: (u32, u32, bool),
    dsts: &'a [Src],
    reg_bits: &'a [u8],
}

/// The lanes' reads of `load`, lane by lane as the general loop of `step_warp` does them
/// (the addresses and spaces recorded in `step`, each lane's alignment checked before its
/// read, the first lane after which a stray access is known recorded in `stray_lane`),
/// in a function of its own so that its loop keeps its values in registers.
#[inline(never)]
fn load_global(
    global: &crate::memory::GlobalMemory,
    load: &GlobalLoad<'_>,
    regs: &mut [u64],
    step: &mut super::WarpStep,
    stray_lane: &mut Option<usize>,
) -> Result<(), LaneError> {
    let (esize, n, signed) = load.elements;
    let align = (esize * n).min(16).next_power_of_two();
    let base = load.addr_reg as usize * 32;
    // The common case: every lane aligned and inside one allocation, where no lane can
    // fault or stray: one look-up of the allocation for the warp, then the lanes' reads in
    // place (each lane's address comes from its own lane of the address register, so
    // computing them all first reads what the loop below reads).
    if load.exec != 0 {
        let (mut lo, mut hi, mut bits) = (u64::MAX, 0u64, 0u64);
        for l in lanes(load.exec) {
            let addr = regs[base + l].wrapping_add(load.offset) & load.address_mask;
            step.addrs[l] = addr;
            lo = lo.min(addr);
            hi = hi.max(addr);
            bits |= addr;
        }
        let span = hi
            .checked_add(u64::from(esize * n))
            .filter(|_| bits & u64::from(align - 1) == 0)
            .and_then(|end| global.span(lo, end - lo));
        if let Some(span) = span {
            for l in lanes(load.exec) {
                step.lane_spaces[l] = MemSpace::Global;
                let at = (step.addrs[l] - lo) as usize;
                for e in 0..n {
                    let raw = read_le(&span[at + (e * esize) as usize..], esize.min(8));
                    let dst = (load.dsts.get(e as usize), load.reg_bits);
                    write_loaded(regs, dst, l, raw, (esize, signed));
                }
            }
            if stray_lane.is_none() && global.has_stray() {
                *stray_lane = Some(load.exec.trailing_zeros() as usize);
            }
            return Ok(());
        }
    }
    for l in lanes(load.exec) {
        let addr = regs[base + l].wrapping_add(load.offset) & load.address_mask;
        step.addrs[l] = addr;
        check_aligned(addr, align).map_err(|e| (e.into(), Some(l)))?;
        step.lane_spaces[l] = MemSpace::Global;
        for e in 0..n {
            let raw = global
                .read_uint(addr + u64::from(e * esize), esize.min(8))
                .map_err(|e| (e.into(), Some(l)))?;
            let dst = (load.dsts.get(e as usize), load.reg_bits);
            write_loaded(regs, dst, l, raw, (esize, signed));
        }
        if stray_lane.is_none() && global.has_stray() {
            *stray_lane = Some(l);
        }
    }
    Ok(())
}

/// The little-endian value of the first `size` (1, 2, 4 or 8) bytes of `bytes`.
#[inline(always)]
fn read_le(bytes: &[u8], size: u32) -> u64 {
    match size {
        4 => u64::from(u32::from_le_bytes(
            bytes[..4]
                .try_into()
                .expect("a 4-byte slice converts to 4 bytes"),
        )),
        8 => u64::from_le_bytes(
            bytes[..8]
                .try_into()
                .expect("an 8-byte slice converts to 8 bytes"),
        ),
        _ => {
            let mut b = [0u8; 8];
            b[..size as usize].copy_from_slice(&bytes[..size as usize]);
            u64::from_le_bytes(b)
        }
    }
}

/// Writes lane `l`'s element `raw` of a load (`esize` bytes) to its destination, if a
/// register (`reg_bits` wide; a narrow signed integer is sign-extended to it).
#[inline(always)]
fn write_loaded(
    regs: &mut [u64],
    (dst, reg_bits): (Option<&Src>, &[u8]),
    l: usize,
    raw: u64,
    (esize, signed): (u32, bool),
) {
    if let Some(Src::Reg(r)) = dst {
        regs[*r as usize * 32 + l] = if signed {
            let rb = reg_bits.get(*r as usize).copied().unwrap_or(64) as u32;
            (IntType {
                bits: esize * 8,
                signed: true,
            }
            .sext(raw) as u64)
                & mask_bits(rb)
        } else {
            raw
        };
    }
}

/// Lane `l`'s read of a load: `n` elements of `esize` bytes from `p` into the registers
/// `dsts` of `regs` (`reg_bits` wide; a narrow signed integer is sign-extended to it).
#[inline(always)]
fn load_lane(
    sp: &Spaces<'_>,
    p: Phys,
    (esize, n, signed): (u32, u32, bool),
    (dsts, reg_bits): (&[Src], &[u8]),
    regs: &mut [u64],
    l: usize,
) -> Result<(), ErrorKind> {
    for e in 0..n {
        let raw = sp.read(offset_phys(p, (e * esize) as u64), esize.min(8), l)?;
        write_loaded(
            regs,
            (dsts.get(e as usize), reg_bits),
            l,
            raw,
            (esize, signed),
        );
    }
    Ok(())
}

/// The shared-memory offset of a bulk copy's mbarrier operand `mbar`, which must be an
/// initialised, 8-byte aligned mbarrier in shared memory.
fn bulk_mbarrier(
    sp: &Spaces<'_>,
    frame: &Frame,
    sc: &SpecialCtx,
    mbar: Src,
    l: usize,
    reg_bits: &[u8],
    in_kernel: bool,
) -> Result<u64, ErrorKind> {
    let fail = |m: String| ErrorKind::BulkCopy(m);
    let mbase = match mbar {
        Src::Addr { base, .. } => base,
        _ => Base::Reg(0),
    };
    let m = effective_address(Space::Shared, mbase, read(frame, sc, mbar, l), reg_bits);
    let Phys::Shared(moff) = resolve(Space::Shared, mbase, m, in_kernel) else {
        return Err(fail(format!(
            "the mbarrier at {m:#x} is not in shared memory"
        )));
    };
    if !m.is_multiple_of(8) {
        return Err(fail(format!(
            "the mbarrier at {m:#x} is not 8-byte aligned"
        )));
    }
    let word = sp.read(Phys::Shared(moff), 8, l)?;
    mbarrier::check_initialised(word)
        .map_err(|e| fail(format!("{e} (mbarrier at shared offset {moff:#x})")))?;
    Ok(moff)
}

/// What a `.multicast::cluster` copy needs to read its mbarrier and ctaMask operands.
struct MulticastCtx<'a> {
    frame: &'a Frame,
    sc: &'a SpecialCtx,
    reg_bits: &'a [u8],
    in_kernel: bool,
}

impl MulticastCtx<'_> {
    /// Lands (or keeps, when `defer`) the bytes `copy` read in every CTA of the cluster the
    /// lane's ctaMask names (PTX ISA 8.0, `cp.async.bulk`: the data land at the same
    /// CTA-relative offset as the destination in each destination CTA, and the mbarrier
    /// signal goes to the same CTA-relative offset as the mbarrier operand in each of
    /// them). `copy` carries the destination's offset within a CTA; `operands` are the
    /// mbarrier and the mask. Everything is checked before anything lands: the mask names
    /// only ranks of the cluster, each destination's block fits its shared memory and each
    /// destination's mbarrier is initialised.
    fn copy(
        &self,
        sp: &mut Spaces<'_>,
        (mbar, mask_src): (Src, Src),
        l: usize,
        copy: super::bulk::PendingBulkCopy,
        defer: bool,
        pending: &mut Vec<super::bulk::PendingBulkCopy>,
    ) -> Result<(), ErrorKind> {
        let fail = |m: String| ErrorKind::BulkCopy(m);
        let size = sp.cluster.map_or(1, |c| c.state.size());
        let mask = read(self.frame, self.sc, mask_src, l) & 0xFFFF;
        if mask == 0 {
            return Err(fail(
                "the ctaMask of a .multicast::cluster copy is 0: it names no CTA".into(),
            ));
        }
        if mask >> size != 0 {
            let rank = 63 - mask.leading_zeros();
            return Err(fail(format!(
                "the ctaMask {mask:#06x} names CTA rank {rank}, outside the cluster of {size} \
                 CTA{}",
                if size == 1 { "" } else { "s" }
            )));
        }
        let mbase = match mbar {
            Src::Addr { base, .. } => base,
            _ => Base::Reg(0),
        };
        let m = effective_address(
            Space::SharedCluster,
            mbase,
            read(self.frame, self.sc, mbar, l),
            self.reg_bits,
        );
        let moff = match resolve(Space::SharedCluster, mbase, m, self.in_kernel) {
            Phys::Shared(o) | Phys::Cluster(_, o) => o,
            _ => {
                return Err(fail(format!(
                    "the mbarrier at {m:#x} is not in shared memory"
                )))
            }
        };
        if !m.is_multiple_of(8) {
            return Err(fail(format!(
                "the mbarrier at {m:#x} is not 8-byte aligned"
            )));
        }
        let bytes = copy.data.len() as u64;
        let ranks = (0..size).filter(|r| mask >> r & 1 != 0);
        for r in ranks.clone() {
            let end = copy.shared_offset + bytes.max(8) - 8;
            sp.read(Phys::Cluster(r, end), 8, l).map_err(|e| {
                fail(format!(
                    "the block of {bytes} bytes at shared offset {:#x} of CTA rank {r}: {e}",
                    copy.shared_offset
                ))
            })?;
            let word = sp.read(Phys::Cluster(r, moff), 8, l)?;
            mbarrier::check_initialised(word).map_err(|e| {
                fail(format!(
                    "{e} (mbarrier at shared offset {moff:#x} of CTA rank {r})"
                ))
            })?;
        }
        let mut data = Some(copy.data);
        let last = ranks.clone().next_back();
        for r in ranks {
            let bytes = if Some(r) == last {
                data.take().unwrap_or_default()
            } else {
                data.clone().unwrap_or_default()
            };
            let one = super::bulk::PendingBulkCopy {
                id: copy.id,
                shared_offset: cluster::cluster_address(r, copy.shared_offset),
                mbarrier: cluster::cluster_address(r, moff),
                data: bytes,
                swizzle: copy.swizzle,
                at: copy.at,
            };
            super::bulk::arrive_in(one, defer, pending, sp.shared, sp.cluster)?;
        }
        Ok(())
    }
}

/// A `cp.async.bulk.shared::cluster.shared::cta` copy's lane, read and checked.
struct PeerCopy {
    /// The source's `.shared::cta` offset.
    source: u64,
    /// The destination and its mbarrier, `.shared::cluster`-encoded with their rank.
    destination: u64,
    mbarrier: u64,
    /// True when the destination is another CTA's shared memory.
    remote: bool,
    data: Vec<u8>,
}

/// Reads lane `l`'s `cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes
/// [dst], [src], size, [mbar]` (PTX ISA 8.0): the block at `src` in the executing CTA's
/// shared memory, bound for `dst` in the shared memory of a CTA of the cluster (a `mapa`ed
/// address, or the CTA's own), completing on `mbar`, which must be in the destination's
/// CTA (the ISA's rule for this form). Sizes and addresses are multiples of 16 bytes.
fn peer_bulk_copy(
    sp: &Spaces<'_>,
    frame: &Frame,
    sc: &SpecialCtx,
    srcs: &[Src],
    l: usize,
    reg_bits: &[u8],
    in_kernel: bool,
) -> Result<PeerCopy, ErrorKind> {
    let fail = |m: String| ErrorKind::BulkCopy(m);
    let [dst, src, size_src, mbar] = srcs[..] else {
        return Err(fail("expected [dst], [src], size, [mbar]".into()));
    };
    let own = sp.cluster.map_or(0, |c| c.rank);
    let base = |s: Src| match s {
        Src::Addr { base, .. } => base,
        _ => Base::Reg(0),
    };
    // A `.shared::cluster` address: its rank and offset within that CTA.
    let cluster_side = |s: Src, what: &str| -> Result<(u64, u32, u64), ErrorKind> {
        let b = base(s);
        let a = effective_address(Space::SharedCluster, b, read(frame, sc, s, l), reg_bits);
        match resolve(Space::SharedCluster, b, a, in_kernel) {
            Phys::Shared(o) => Ok((a, own, o)),
            Phys::Cluster(r, o) => Ok((a, r, o)),
            _ => Err(fail(format!("the {what} at {a:#x} is not shared memory"))),
        }
    };
    let size = read(frame, sc, size_src, l) as u32;
    if size == 0 || !size.is_multiple_of(16) {
        return Err(fail(format!(
            "size {size} is not a positive multiple of 16 bytes"
        )));
    }
    let (d, drank, doff) = cluster_side(dst, "destination")?;
    let (m, mrank, moff) = cluster_side(mbar, "mbarrier")?;
    let sb = base(src);
    let a = effective_address(Space::Shared, sb, read(frame, sc, src, l), reg_bits);
    let Phys::Shared(soff) = resolve(Space::Shared, sb, a, in_kernel) else {
        return Err(fail(format!(
            "the source at {a:#x} is not the CTA's shared memory"
        )));
    };
    for (what, x) in [("destination", d), ("source", a)] {
        if !x.is_multiple_of(16) {
            return Err(fail(format!(
                "the {what} address {x:#x} is not 16-byte aligned"
            )));
        }
    }
    if !m.is_multiple_of(8) {
        return Err(fail(format!(
            "the mbarrier at {m:#x} is not 8-byte aligned"
        )));
    }
    if mrank != drank {
        return Err(fail(format!(
            "the mbarrier at {m:#x} is in CTA rank {mrank} of the cluster and the destination \
             at {d:#x} in rank {drank}: they must be in the same CTA"
        )));
    }
    let len = u64::from(size);
    // Both ends in bounds and the mbarrier initialised before anything moves.
    sp.read(Phys::Cluster(drank, doff + len - 8), 8, l)?;
    let word = sp.read(Phys::Cluster(drank, moff), 8, l)?;
    mbarrier::check_initialised(word).map_err(|e| {
        fail(format!(
            "{e} (mbarrier at shared offset {moff:#x} of CTA rank {drank})"
        ))
    })?;
    let mut data = Vec::with_capacity(size as usize);
    for k in (0..len).step_by(8) {
        data.extend_from_slice(&sp.read(Phys::Shared(soff + k), 8, l)?.to_le_bytes());
    }
    Ok(PeerCopy {
        source: soff,
        destination: cluster::cluster_address(drank, doff),
        mbarrier: cluster::cluster_address(drank, moff),
        remote: drank != own,
        data,
    })
}

/// What the timing model learns of a bulk copy: a global load (to shared memory) or store
/// of `timed` bytes, and the id its landing will carry when it is deferred.
fn bulk_step(
    step: &mut WarpStep,
    warp: &mut Warp,
    to_shared: bool,
    defer: bool,
    id: u32,
    timed: u32,
) {
    let kind = [AccessKind::Store, AccessKind::Load][usize::from(to_shared)];
    step.mem = Some(MemInfo {
        space: MemSpace::Global,
        kind,
        bytes: timed,
    });
    if defer {
        step.bulk_copy = Some(id);
        warp.bulk_next = id.wrapping_add(1);
    }
}

fn offset_phys(p: Phys, o: u64) -> Phys {
    match p {
        Phys::Global(a) => Phys::Global(a + o),
        Phys::Shared(a) => Phys::Shared(a + o),
        Phys::Cluster(r, a) => Phys::Cluster(r, a + o),
        Phys::Local(a) => Phys::Local(a + o),
        Phys::Param(a) => Phys::Param(a + o),
    }
}

fn texture_name(module: &crate::module::LoadedModule, addr: u64) -> &str {
    module
        .program
        .variables
        .iter()
        .zip(&module.var_addr)
        .find(|(v, &a)| a == addr && matches!(v.ty, ptx::ast::VariableType::TexRef))
        .map_or("", |(v, _)| v.name.as_str())
}

/// Releases every warp waiting at `bar`, delivering `bar.red` results.
fn release(bar: &mut Barrier, warps: &mut [Warp]) {
    for (i, wp) in warps.iter_mut().enumerate() {
        if bar.waiting >> i & 1 == 1 {
            wp.status = WarpStatus::Ready;
            if let Some(pr) = wp.pending_red.take() {
                let v = match pr.kind {
                    BarrierKind::RedPopc => bar.popc as u64,
                    BarrierKind::Red(BoolOp::And) => bar.all as u64,
                    BarrierKind::Red(_) => bar.any as u64,
                    _ => 0,
                };
                if let Some(frame) = wp.frames.last_mut() {
                    for l in lanes(pr.mask) {
                        if let Some(slot) = frame.regs.get_mut(pr.reg as usize * 32 + l) {
                            *slot = v;
                        }
                    }
                }
            }
        }
    }
    *bar = Barrier::default();
}

/// Removes finished lanes: `exit` removes them from every entry of every frame; `ret`
/// from the current frame's entries only (they resume in the caller).
fn finish_lanes(warp: &mut Warp, mask: u32, exit: bool) {
    let from = if exit {
        0
    } else {
        warp.frames.last().map_or(0, |f| f.stack_base)
    };
    for e in &mut warp.stack[from..] {
        e.mask &= !mask;
    }
    if exit {
        warp.exited |= mask;
    }
    settle(warp);
    if warp.status == WarpStatus::Exited {
        // Its local memory goes with it, not with its CTA (issue 26): a CTA whose other
        // warps run on holds only theirs. Here, on the exit path, rather than in the
        // inlined `settle` every step calls.
        warp.local = Vec::new();
    }
}

/// Pops finished stack entries (empty, or at their reconvergence point) and frames whose
/// entries are all gone; marks the warp exited when nothing is left.
#[inline]
pub(in crate::exec) fn settle(warp: &mut Warp) {
    loop {
        while let Some(t) = warp.stack.last() {
            if t.mask == 0 || t.pc == t.rpc {
                warp.stack.pop();
            } else {
                break;
            }
        }
        match warp.frames.last() {
            Some(f) if warp.frames.len() > 1 && f.stack_base >= warp.stack.len() => {
                warp.frames.pop();
            }
            _ => break,
        }
    }
    if warp.stack.is_empty() || warp.exited == warp.valid {
        warp.stack.clear();
        warp.status = WarpStatus::Exited;
    }
}

fn next_pc(warp: &Warp, module: &crate::module::LoadedModule) -> Option<(ir::FuncId, ir::InstId)> {
    let t = warp.stack.last()?;
    let f = warp.frames.last()?;
    Some((module.funcs[f.func].id, ir::InstId(t.pc)))
}

/// Calls to functions without a body: the CUDA device runtime's `vprintf`, `malloc`,
/// `free` and `__assertfail`.
#[allow(clippy::too_many_arguments)]
fn builtin(
    name: &str,
    sp: &mut Spaces,
    frame: &Frame,
    sc: &SpecialCtx,
    args: &[Src],
    rets: &[Src],
    exec: u32,
    out: &mut dyn std::io::Write,
) -> Result<(), LaneError> {
    // Arguments and results are `.param` variables in the caller's frame.
    let arg = |sp: &Spaces, i: usize, size: u32, l: usize| -> Result<u64, LaneError> {
        match args.get(i) {
            Some(&Src::Addr { base, offset }) => {
                let a = base_addr(frame, base, l).wrapping_add(offset as u64);
                sp.read(Phys::Local(a), size, l).map_err(|k| (k, Some(l)))
            }
            Some(&Src::FrameAddr(o)) => sp
                .read(Phys::Local(frame.local_base + o), size, l)
                .map_err(|k| (k, Some(l))),
            Some(&s) => Ok(read(frame, sc, s, l)),
            None => Err(unsupported(format!("{name}: missing argument {i}"))),
        }
    };
    let set_ret = |sp: &mut Spaces, size: u32, l: usize, v: u64| -> Result<(), LaneError> {
        let a = match rets.first() {
            Some(&Src::Addr { base, offset }) => {
                base_addr(frame, base, l).wrapping_add(offset as u64)
            }
            Some(&Src::FrameAddr(o)) => frame.local_base + o,
            _ => return Ok(()),
        };
        sp.write(Phys::Local(a), size, l, v)
            .map_err(|k| (k, Some(l)))?;
        Ok(())
    };
    match name {
        "vprintf" => {
            for l in lanes(exec) {
                let fmt_addr = arg(sp, 0, 8, l)?;
                let args_addr = arg(sp, 1, 8, l)?;
                let fmt = read_cstring(sp, fmt_addr, l).map_err(|k| (k, Some(l)))?;
                let text = printf::format(
                    &fmt,
                    |off, size| {
                        sp.read(
                            resolve(Space::Generic, Base::Reg(0), args_addr + off, false),
                            size,
                            l,
                        )
                        .ok()
                    },
                    |addr| read_cstring(sp, addr, l).ok(),
                );
                // A closed stdout must not stop the kernel.
                let _ = out.write_all(&text);
                set_ret(sp, 4, l, text.len() as u64)?;
            }
            Ok(())
        }
        "malloc" => {
            for l in lanes(exec) {
                let size = arg(sp, 0, 8, l)?;
                let p = sp
                    .global
                    .alloc(size, crate::memory::AllocKind::Device)
                    .unwrap_or(0);
                set_ret(sp, 8, l, p)?;
            }
            Ok(())
        }
        "free" => {
            for l in lanes(exec) {
                let p = arg(sp, 0, 8, l)?;
                if p != 0 {
                    sp.global.free(p).map_err(|e| (e.into(), Some(l)))?;
                }
            }
            Ok(())
        }
        "__assertfail" => {
            let l = lanes(exec).next().unwrap_or(0);
            let msg = arg(sp, 0, 8, l)
                .ok()
                .and_then(|a| read_cstring(sp, a, l).ok())
                .unwrap_or_default();
            let file = arg(sp, 1, 8, l)
                .ok()
                .and_then(|a| read_cstring(sp, a, l).ok())
                .unwrap_or_default();
            let line = arg(sp, 2, 4, l).unwrap_or(0);
            Err((
                ErrorKind::Assert(format!(
                    "{} ({}:{})",
                    String::from_utf8_lossy(&msg),
                    String::from_utf8_lossy(&file),
                    line
                )),
                Some(l),
            ))
        }
        _ => Err((ErrorKind::UndefinedFunction(name.to_string()), None)),
    }
}

//! The control slice of a kernel: the instructions a functional run must execute for
//! every warp to follow the same instruction stream, with the same active and executed
//! lanes, as a run that executes everything. A profiling pass that only records the
//! executed stream (Malekeh's trace-exact reuse distances, `cudart::reuse_trace`) runs
//! the slice and steps over the rest ([`crate::Emulator::run_control_slice`]).
//!
//! The slice holds the instructions that steer control (branches, returns, exits,
//! barriers), and, transitively, every instruction that writes a register one of them
//! reads, or one that a guard predicate reads (a guard decides which lanes execute). It is
//! flow-insensitive (a register is needed everywhere once any needed instruction reads
//! it), so it can only hold too much. A kernel has no slice ([`ControlSlice::of`] gives
//! `None`, and the pass executes everything) when its control depends on memory that the
//! kernel could write (a load from global, shared, local or generic space, an atomic, a
//! texture fetch), when it calls functions, or when it uses an instruction with state
//! beyond its registers (carry flags, mbarriers, bulk copies, `setmaxnreg`, cluster
//! barriers). Loads from kernel parameters, constant memory and `ld.global.nc` are in
//! the slice when needed: none can change during a launch (`.nc` data must stay
//! read-only for the kernel's lifetime, PTX ISA `ld.global.nc`).
//!
//! Stepping over an instruction only advances the warp's pc: its registers keep stale
//! values, which no executed instruction reads, and memory is not touched. A fault of a
//! stepped-over instruction (an access out of bounds) does not happen in such a run; the
//! run that executes everything reports it.

use ir::op::{Carry, Op, Space};
use ir::{exec_class, ExecClass, FuncId};

use crate::module::{Base, LoadedModule, Src};

/// What stepping over an instruction would change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// Computes registers from registers or from read-only memory: stepped over unless
    /// the slice needs a result.
    Pure,
    /// Touches memory the kernel can write, or state outside the warp's registers that
    /// nothing in control reads: stepped over unless the slice needs a result, which
    /// leaves the kernel without a slice.
    Memory,
    /// Steers control: always executed.
    Control,
    /// State the slice cannot follow: the kernel has no slice.
    Opaque,
}

fn role(op: &Op) -> Role {
    match op {
        Op::Add { carry, .. } | Op::Sub { carry, .. } | Op::Mad { carry, .. }
            if *carry != Carry::None =>
        {
            return Role::Opaque
        }
        // `ld.global.nc`: the ISA requires its data to stay read-only for the kernel's
        // lifetime, so no stepped-over store can change what it reads.
        Op::Ld(m) if matches!(m.space, Space::Param | Space::Const) || m.nc => return Role::Pure,
        Op::St(m) if m.space == Space::Param => return Role::Opaque,
        Op::Bar { cluster: true, .. }
        | Op::Call(_)
        | Op::Mbarrier(_)
        | Op::CpAsyncBulk(_)
        | Op::CpAsyncBulkCommit
        | Op::CpAsyncBulkWait { .. }
        | Op::GridDepControl { .. }
        | Op::Wgmma(_)
        | Op::WgmmaFence
        | Op::WgmmaCommit
        | Op::WgmmaWait { .. }
        | Op::Setmaxnreg { .. } => return Role::Opaque,
        _ => {}
    }
    let class = exec_class(op);
    if class.is_control() || class == ExecClass::Misc {
        Role::Control
    } else if class.is_memory() || class == ExecClass::Tensor {
        Role::Memory
    } else {
        Role::Pure
    }
}

/// The register an operand reads, if any (an address's base register included).
fn reg_of(s: &Src) -> Option<u32> {
    match *s {
        Src::Reg(r) | Src::NotReg(r) => Some(r),
        Src::Addr {
            base: Base::Reg(r), ..
        }
        | Src::ParamAddr(Base::Reg(r)) => Some(r),
        _ => None,
    }
}

/// Marks register `r` needed.
fn mark(r: usize, needed_reg: &mut Vec<bool>) {
    if needed_reg.len() <= r {
        needed_reg.resize(r + 1, false);
    }
    needed_reg[r] = true;
}

/// The instructions of one kernel a functional run may step over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ControlSlice {
    /// The kernel's function index.
    func: usize,
    /// Per instruction: stepped over.
    skip: Vec<bool>,
}

impl ControlSlice {
    /// The slice of `kernel` in `module`; `None` when the kernel's control cannot be
    /// followed without executing everything (module docs).
    pub fn of(module: &LoadedModule, kernel: FuncId) -> Option<ControlSlice> {
        let f = module.program.functions.get(kernel.index())?;
        let ef = module.funcs.get(kernel.index())?;
        let roles: Vec<Role> = f.insts.iter().map(|i| role(&i.op)).collect();
        if roles.contains(&Role::Opaque) {
            return None;
        }
        let operands = |i: &ir::function::Inst| {
            let start = i.operands_start as usize;
            let nd = i.num_dsts as usize;
            let ops = ef.srcs.get(start..start + nd + i.num_srcs as usize)?;
            Some(ops.split_at(nd))
        };
        let mut needed_reg = vec![false; ef.num_regs];
        for i in &f.insts {
            if let Some(g) = i.guard {
                mark(g.reg.index(), &mut needed_reg);
            }
        }
        let mut needed = vec![false; f.insts.len()];
        loop {
            let mut changed = false;
            for (k, i) in f.insts.iter().enumerate() {
                if needed[k] {
                    continue;
                }
                let (dsts, srcs) = operands(i)?;
                let wanted = roles[k] == Role::Control
                    || dsts
                        .iter()
                        .filter_map(reg_of)
                        .any(|r| needed_reg.get(r as usize).copied().unwrap_or(false));
                if !wanted {
                    continue;
                }
                if roles[k] == Role::Memory {
                    return None;
                }
                needed[k] = true;
                changed = true;
                for r in srcs.iter().filter_map(reg_of) {
                    mark(r as usize, &mut needed_reg);
                }
            }
            if !changed {
                break;
            }
        }
        Some(ControlSlice {
            func: kernel.index(),
            skip: needed.iter().map(|n| !n).collect(),
        })
    }

    /// Whether instruction `pc` of function `func` (an index) is stepped over.
    #[inline]
    pub fn skips(&self, func: usize, pc: u32) -> bool {
        func == self.func && self.skip.get(pc as usize).copied().unwrap_or(false)
    }

    /// How many of the kernel's instructions are stepped over.
    pub fn skipped(&self) -> usize {
        self.skip.iter().filter(|s| **s).count()
    }
}

//! Executing CTA-private instructions on any thread (issue 27, `docs/parallel.md`, step 2).
//!
//! A launch splits into what every executor reads and nobody writes during it (the
//! module, the kernel, the grid shape, the parameter buffer, the texture bindings, the
//! limits), what each executor owns (the step record, the instruction counts, the clock)
//! and the device state that SMs share (global memory with its allocation table and
//! stray-access log, the `printf` sink, the step observer), which only the launch's own
//! executor reaches.
//!
//! [`Launch::cta_private_executor`] makes an executor of the same launch that holds the
//! read-only part by reference, owns its step record and counts, and has a
//! [`DeviceStandIn`] instead of the device: an empty global memory and a sink that
//! discards. It executes the instructions [`Launch::next_is_cta_private`] accepts, whose
//! effects stay inside the warp's CTA (registers, shared and local memory, barriers, the
//! SIMT stack) and whose inputs are the CTA's state and the read-only part. Such an
//! instruction gives the same values, events and errors on any executor, so the timing
//! model may execute the CTA-private instructions of different SMs on different threads
//! while the rest runs on the launch itself, in the one-thread order.
//!
//! Everything else is not CTA-private: global, constant and generic accesses (generic
//! addresses may reach global memory), atomics and reductions outside shared memory,
//! distributed shared memory (`.shared::cluster`), textures, `cp.async` (its source is
//! global), `wmma` loads and stores, `mbarrier`, `isspacep` (the allocation table may
//! change during a kernel, `malloc`), indirect calls and calls of built-ins (`vprintf`,
//! `malloc`, `free`). Operations are told apart by their [`ir::ExecClass`], so a new
//! memory operation is not CTA-private unless it is named here.

use std::io::{Sink, Write};

use ir::op::{Callee, Op, Space};
use ir::{exec_class, ExecClass};

use super::alu::settle;
use super::{Cta, Launch, RunStats, WarpStep};
use crate::memory::GlobalMemory;

/// What an executor of CTA-private instructions has instead of the device: an empty
/// global memory (any access to it is an error, never a value) and a `printf` sink that
/// discards.
pub struct DeviceStandIn {
    mem: GlobalMemory,
    out: Sink,
}

impl Default for DeviceStandIn {
    fn default() -> Self {
        DeviceStandIn {
            mem: GlobalMemory::new(),
            out: std::io::sink(),
        }
    }
}

/// Whether instruction `inst` of `program` only reads and writes its CTA's state and the
/// launch's read-only part (see the module documentation).
pub fn is_cta_private(program: &ir::Program, inst: &ir::Inst) -> bool {
    // Shared memory of the CTA itself; local memory of the thread; the parameter buffer
    // (read-only) or a device function's parameters (local memory).
    let cta_space = |s: Space| matches!(s, Space::Shared | Space::Local | Space::Param);
    match &inst.op {
        Op::Ld(a) | Op::St(a) => cta_space(a.space),
        Op::Atom(a) | Op::Red(a) => a.space == Space::Shared,
        Op::Ldmatrix(l) | Op::Stmatrix(l) => l.space == Space::Shared,
        Op::Call(c) => match c.callee {
            Callee::Direct(f) => program.functions.get(f.index()).is_some_and(|f| f.has_body),
            Callee::Indirect => false,
        },
        // The allocation table may change during a kernel (`malloc`); an mbarrier may be
        // a generic address.
        Op::Isspacep { .. } | Op::Mbarrier(_) => false,
        // Registers, the warp's own state (`cp.async` groups, fences, which the emulator's
        // single memory never needs), branches, returns and CTA barriers; every other
        // memory operation (`ldu`, `cp.async`, `wmma` loads and stores, textures) reaches
        // global memory.
        op => !matches!(
            exec_class(op),
            ExecClass::Load
                | ExecClass::Store
                | ExecClass::Atomic
                | ExecClass::Texture
                | ExecClass::Call
        ),
    }
}

/// A global access an executor deferred ([`WarpStep::deferred_access`]), for
/// [`Launch::complete_access`]: the instruction (a load, store, atomic or reduction), the
/// call frame whose registers it reads and writes, its lanes and their addresses. The
/// operands it read at issue (a store's values, an atomic's operands) travel beside it
/// ([`WarpStep::deferred_values`]).
#[derive(Clone, Copy, Debug)]
pub struct DeferredAccess {
    pub func: ir::FuncId,
    pub inst: ir::InstId,
    pub frame: usize,
    pub exec_mask: u32,
    pub addrs: [u64; 32],
}

impl DeferredAccess {
    /// The access `step` deferred, if it deferred one.
    pub fn of(step: &WarpStep) -> Option<DeferredAccess> {
        step.deferred_access.map(|frame| DeferredAccess {
            func: step.func,
            inst: step.inst,
            frame,
            exec_mask: step.exec_mask,
            addrs: step.addrs,
        })
    }
}

/// Whether `inst` is a global access an executor of deferred accesses executes without
/// touching memory: `ld.global`, `ldu.global`, `st.global`, and `atom.global` /
/// `red.global` (an explicit global address, never shared or local memory, which later
/// instructions of the CTA may read or change before the access is performed).
pub fn is_deferrable_access(inst: &ir::Inst) -> bool {
    match &inst.op {
        Op::Ld(a) | Op::Ldu(a) | Op::St(a) => a.space == Space::Global,
        Op::Atom(a) | Op::Red(a) => a.space == Space::Global,
        _ => false,
    }
}

impl<'e> Launch<'e> {
    /// An executor of this launch for CTA-private instructions only (module
    /// documentation): it shares the launch's read-only part, owns its step record and
    /// counts (its `clock` is unset) and uses `stand_in` instead of the device. It
    /// borrows nothing from `self`, so the launch keeps executing meanwhile. With
    /// `defer_global` it also executes global accesses ([`is_deferrable_access`]) without
    /// touching memory: the step reports the addresses and the access
    /// ([`WarpStep::deferred_access`]), the operands it read are in
    /// [`WarpStep::deferred_values`], and [`Launch::complete_access`] on the launch itself
    /// performs it later (reads, writes, the atomic's old values into the registers), in
    /// the one-thread order.
    pub fn cta_private_executor<'s>(
        &self,
        stand_in: &'s mut DeviceStandIn,
        defer_global: bool,
    ) -> Launch<'s>
    where
        'e: 's,
    {
        Launch {
            mem: &mut stand_in.mem,
            module: self.module,
            out: &mut stand_in.out as &mut (dyn Write + Send),
            textures: self.textures,
            observer: None,
            kernel: self.kernel,
            config: self.config,
            params: self.params.clone(),
            limits: self.limits,
            step: WarpStep::default(),
            clock: None,
            stats: RunStats::default(),
            stray_lane: None,
            defer_global,
            defer_bulk_copies: self.defer_bulk_copies,
            step_over: None,
            cluster_shape: self.cluster_shape,
            explicit_cluster: self.explicit_cluster,
            cluster_releases: 0,
            spare_regs: Vec::new(),
            record_destinations: true,
        }
    }

    /// Performs `access`, deferred by an executor of warp `w` of `cta`
    /// ([`Launch::cta_private_executor`]) with `values`, the operands that executor read at
    /// issue ([`WarpStep::deferred_values`]): a load reads global memory into the
    /// registers, a store writes the values, an atomic or reduction performs its
    /// read-modify-write (an atomic's old values into its destination), lane by lane as
    /// executing the instruction would, with the same errors and stray-access warnings,
    /// located at the instruction.
    pub fn complete_access(
        &mut self,
        cta: &mut Cta,
        w: usize,
        access: &DeferredAccess,
        values: &[u64],
    ) -> Result<(), crate::ExecError> {
        let at = (access.func, access.inst);
        match self.perform_deferred(cta, w, access, values) {
            Ok(()) => {
                if let Some(stray) = self.mem.take_stray() {
                    self.note_stray(cta, w, at, stray);
                }
                Ok(())
            }
            Err((kind, lane)) => {
                let at = Some((access.func.index(), access.inst.0));
                Err(self.error_at_inst(cta, w, at, kind, lane))
            }
        }
    }

    /// Whether a step observer watches this launch (it sees instructions only on the
    /// executor that runs them).
    pub fn is_observed(&self) -> bool {
        self.observer.is_some()
    }

    /// Whether the next instruction of warp `w` of `cta` is CTA-private
    /// ([`is_cta_private`]; running off the end of a body, an implicit exit, is) or, on an
    /// executor of deferred accesses, a deferrable access ([`is_deferrable_access`]). Settles
    /// the warp's reconvergence stack first, as executing it would.
    pub fn next_is_cta_private(&self, cta: &mut Cta, w: usize) -> bool {
        let Some(warp) = cta.warps.get_mut(w) else {
            return false;
        };
        settle(warp);
        let (Some(top), Some(frame)) = (warp.stack.last(), warp.frames.last()) else {
            // An exited warp: executing it reports the exit (or the error) on any thread,
            // but that is rare enough to leave to the launch.
            return false;
        };
        let program = &self.module.program;
        program
            .functions
            .get(frame.func)
            .and_then(|f| f.insts.get(top.pc as usize))
            .is_none_or(|inst| {
                is_cta_private(program, inst) || (self.defer_global && is_deferrable_access(inst))
            })
    }

    /// Whether the next instruction of warp `w` of `cta` changes its call frames: a
    /// call, a return or an exit (running off the end of a body, or an exited warp,
    /// counts). Settles the reconvergence stack first, as executing it would.
    pub fn next_changes_frames(&self, cta: &mut Cta, w: usize) -> bool {
        let Some(warp) = cta.warps.get_mut(w) else {
            return true;
        };
        settle(warp);
        let (Some(top), Some(frame)) = (warp.stack.last(), warp.frames.last()) else {
            return true;
        };
        self.module
            .program
            .functions
            .get(frame.func)
            .and_then(|f| f.insts.get(top.pc as usize))
            .is_none_or(|inst| matches!(inst.op, Op::Call(_) | Op::Ret { .. } | Op::Exit))
    }

    /// Adds an executor's instruction counts to this launch's.
    pub fn add_stats(&mut self, other: RunStats) {
        self.stats.warp_instructions += other.warp_instructions;
        self.stats.thread_instructions += other.thread_instructions;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Emulator, LaunchConfig};

    const KERNEL: &str = ".version 7.0\n.target sm_70\n.address_size 64\n\
        .extern .func (.param .b32 status) vprintf(.param .b64 fmt, .param .b64 args);\n\
        .func (.param .b32 r) twice(.param .b32 x)\n{\n.reg .b32 %t<2>;\n\
        ld.param.b32 %t1, [x];\nadd.s32 %t1, %t1, %t1;\nst.param.b32 [r], %t1;\nret;\n}\n\
        .visible .entry k(.param .u64 p)\n{\n.shared .align 4 .b32 s[32];\n\
        .reg .pred %p<2>;\n.reg .b32 %r<8>;\n.reg .b64 %rd<8>;\n\
        ld.param.u64 %rd1, [p];\n\
        mov.u32 %r1, %tid.x;\n\
        st.shared.u32 [s], %r1;\n\
        atom.shared.add.u32 %r2, [s], 1;\n\
        bar.sync 0;\n\
        ld.global.u32 %r3, [%rd1];\n\
        ld.u32 %r4, [%rd1];\n\
        atom.global.add.u32 %r5, [%rd1], 1;\n\
        ld.const.u32 %r6, [%rd1];\n\
        {\n.param .b32 a;\nst.param.b32 [a], %r1;\n.param .b32 b;\n\
        call (b), twice, (a);\nld.param.b32 %r7, [b];\n}\n\
        {\n.param .b64 f;\nst.param.b64 [f], %rd1;\n.param .b64 g;\nst.param.b64 [g], %rd1;\n\
        .param .b32 st;\ncall.uni (st), vprintf, (f, g);\n}\n\
        ret;\n}\n";

    /// The kernel's instructions (in order) and whether each is CTA-private.
    fn classified() -> Vec<(String, bool)> {
        let mut emu = Emulator::new();
        let m = emu.load_ptx("k.ptx", KERNEL).unwrap();
        let module = emu.module(m).unwrap();
        let k = emu.kernel(m, "k").unwrap();
        let p = &module.program;
        p.function(k.func)
            .insts
            .iter()
            .map(|i| (p.inst_text(i).to_string(), is_cta_private(p, i)))
            .collect()
    }

    /// An emulator with the kernel loaded and a 64-byte buffer for its parameter.
    fn emulator() -> (Emulator, crate::KernelRef, u64) {
        let mut emu = Emulator::new();
        let m = emu.load_ptx("k.ptx", KERNEL).unwrap();
        let k = emu.kernel(m, "k").unwrap();
        let out = emu.memory.alloc(64, crate::AllocKind::Device).unwrap();
        (emu, k, out)
    }

    #[test]
    fn only_instructions_confined_to_the_cta_are_private() {
        let got = classified();
        let private = |prefix: &str| {
            got.iter()
                .find(|(t, _)| t.starts_with(prefix))
                .unwrap_or_else(|| panic!("no {prefix} in {got:?}"))
                .1
        };
        for p in [
            "ld.param.u64",
            "mov.u32",
            "st.shared",
            "atom.shared",
            "bar.sync",
            "call (b), twice",
            "ret",
        ] {
            assert!(private(p), "{p} should be CTA-private: {got:?}");
        }
        for p in [
            "ld.global",
            "ld.u32",
            "atom.global",
            "ld.const",
            "call.uni (st), vprintf",
        ] {
            assert!(!private(p), "{p} should not be CTA-private: {got:?}");
        }
    }

    #[test]
    fn an_executor_runs_private_instructions_as_the_launch_does_and_has_no_device() {
        let (mut emu, k, out) = emulator();
        let params = out.to_le_bytes();
        let mut launch = emu.launch(k, LaunchConfig::linear(1, 32), &params).unwrap();
        let mut stand_in = DeviceStandIn::default();
        let mut executor = launch.cta_private_executor(&mut stand_in, false);
        let mut on_launch = launch.start_cta(0).unwrap();
        let mut on_executor = launch.start_cta(0).unwrap();
        // Every CTA-private instruction up to the first global load: same steps.
        let mut steps = 0;
        while executor.next_is_cta_private(&mut on_executor, 0) {
            let a = launch.execute(&mut on_launch, 0).unwrap().clone();
            let b = executor.execute(&mut on_executor, 0).unwrap();
            assert_eq!(
                (a.inst, a.exec_mask, a.next_pc),
                (b.inst, b.exec_mask, b.next_pc)
            );
            assert_eq!(
                a.dst_values[..a.num_dsts as usize],
                b.dst_values[..b.num_dsts as usize]
            );
            steps += 1;
        }
        assert_eq!(steps, 5, "ld.param, mov, st.shared, atom.shared, bar.sync");
        assert_eq!(executor.stats.warp_instructions, 5);
        // The executor has no device memory: a global load is an error, never a value.
        assert!(launch.execute(&mut on_launch, 0).is_ok());
        assert!(executor.execute(&mut on_executor, 0).is_err());
    }
    #[test]
    fn a_deferred_load_reads_memory_when_completed_as_the_load_would() {
        let (mut emu, k, out) = emulator();
        emu.memory.write_uint(out, 4, 0x1234_5678).unwrap();
        let params = out.to_le_bytes();
        let mut launch = emu.launch(k, LaunchConfig::linear(1, 32), &params).unwrap();
        let mut stand_in = DeviceStandIn::default();
        let mut executor = launch.cta_private_executor(&mut stand_in, true);
        let mut on_launch = launch.start_cta(0).unwrap();
        let mut on_executor = launch.start_cta(0).unwrap();
        for _ in 0..5 {
            launch.execute(&mut on_launch, 0).unwrap();
            executor.execute(&mut on_executor, 0).unwrap();
        }
        // `ld.global` runs on an executor of deferred accesses, without its read.
        assert!(executor.next_is_cta_private(&mut on_executor, 0));
        let step = executor.execute(&mut on_executor, 0).unwrap();
        let load = DeferredAccess::of(step).expect("the load is deferred");
        assert!(step.deferred_values.is_empty());
        assert_eq!(
            (load.addrs[0], load.frame, load.exec_mask),
            (out, 0, u32::MAX)
        );
        launch.execute(&mut on_launch, 0).unwrap();
        let regs = |c: &Cta| c.warps[0].frames[0].regs.clone();
        assert_ne!(regs(&on_launch), regs(&on_executor));
        launch
            .complete_access(&mut on_executor, 0, &load, &[])
            .unwrap();
        assert_eq!(regs(&on_launch), regs(&on_executor));
        // The generic load after it is neither CTA-private nor deferrable.
        assert!(!executor.next_is_cta_private(&mut on_executor, 0));
    }
}

//! A ptxas-like latency schedule of loads, before register allocation (`sm.load_schedule
//! = true`; h100 sets it): within each basic block, every load is issued as early as its
//! dependences allow, ahead of arithmetic and of memory instructions it provably
//! commutes with, so that independent loads are in flight together.
//!
//! Why: nvcc's PTX puts each load next to its first use (`ld, ld, fma, ld, ld, fma`), and
//! an in-order core running that order has one load's latency exposed at a time. ptxas
//! schedules for latency: in the sm_90 SASS of the built-in workloads (ptxas 11.8,
//! `cuobjdump -sass`) matvec_rows issues all 32 loads of its (16-times unrolled) loop body
//! before the first FFMA, and sgemm_regblock its ten global loads before the eight shared
//! stores they feed, where the PTX alternates load and store. Measured on an H200
//! (docs/correlate.md, "Whole programs on Hopper silicon"), regsim running PTX order was
//! 2.9-3.7x slower than silicon on such low-occupancy kernels; sgemm_regblock with its
//! loads hoisted in the CUDA source ran 2.1x faster in regsim.
//!
//! What is ours (ptxas's scheduler is not published): a greedy list schedule over the
//! block's dependence graph on virtual registers, which places the earliest ready load
//! first, then the earliest ready instruction that a later load of the block waits for
//! (its address arithmetic), otherwise the earliest in PTX order, and lets no instruction
//! move more than [`WINDOW`] PTX positions ahead of the first unplaced one (a bound on
//! the registers the hoisted values hold). It does not unroll loops, which ptxas also
//! does, nor balance register pressure.
//!
//! Dependences: read after write, write after read and write after write on virtual
//! registers (predicates included). Walls as in [`crate::reuse_schedule::movement`]
//! (branches, calls, barriers, fences, carry chains, special-register reads): nothing
//! crosses them, so a block's terminator stays last. Memory, texture and warp-collective
//! instructions keep their order among themselves except for pairs that commute:
//! two weak loads; a weak load and a weak store to different known state spaces (not
//! generic, and `.shared` and `.shared::cluster` count as one); a read-only load
//! (`ld.global.nc`, `ldu`, `ld.const`: nothing writes that data during the kernel) and a
//! weak store of any space.

use ir::op::{MemAccess, MemOrder, Space};
use ir::{BlockId, ControlFlowGraph, Function, InstId, Op, Program, RegisterEffects};

use crate::reuse_schedule::{movement, Movement};

/// How far (in PTX positions) an instruction may move ahead of the first unplaced one.
/// Ours, as the reuse schedule's: a loop body of the built-in workloads fits.
pub const WINDOW: usize = 32;

/// A plain access of `i`: a load (`ld`, `ldu`) or a store (`st`), weak, with its space and
/// whether the data is read-only for the kernel.
#[derive(Clone, Copy)]
enum Access {
    Load { space: Space, read_only: bool },
    Store { space: Space },
    Other,
}

fn access(f: &Function, i: InstId) -> Access {
    let weak = |a: &MemAccess| a.order == MemOrder::Weak;
    match &f.inst(i).op {
        Op::Ld(a) if weak(a) => Access::Load {
            space: a.space,
            read_only: a.nc || a.space == Space::Const,
        },
        Op::Ldu(a) if weak(a) => Access::Load {
            space: a.space,
            read_only: true,
        },
        Op::St(a) if weak(a) => Access::Store { space: a.space },
        _ => Access::Other,
    }
}

/// Two known spaces that cannot hold the same byte (generic can be any of them).
fn disjoint(a: Space, b: Space) -> bool {
    let family = |s: Space| match s {
        Space::SharedCluster => Space::Shared,
        s => s,
    };
    a != Space::Generic && b != Space::Generic && family(a) != family(b)
}

/// Whether two memory-class instructions may be reordered (see the module docs).
fn commute(a: Access, b: Access) -> bool {
    match (a, b) {
        (Access::Load { .. }, Access::Load { .. }) => true,
        (Access::Load { space, read_only }, Access::Store { space: s })
        | (Access::Store { space: s }, Access::Load { space, read_only }) => {
            read_only || disjoint(space, s)
        }
        _ => false,
    }
}

/// The order (local indices) the list schedule gives `insts`, one block.
fn block_order(f: &Function, insts: &[InstId]) -> Vec<usize> {
    let n = insts.len();
    let mut succs: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut preds = vec![0u32; n];
    // Read-after-write producers in the block, per instruction.
    let mut producers: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut edge = |from: usize, to: usize| {
        if from != to {
            succs[from].push(to);
            preds[to] += 1;
        }
    };
    let mut last_write: std::collections::HashMap<u32, usize> = Default::default();
    let mut reads_since: std::collections::HashMap<u32, Vec<usize>> = Default::default();
    let mut last_wall: Option<usize> = None;
    let mut since_wall: Vec<usize> = Vec::new();
    let mut memory: Vec<(usize, Access)> = Vec::new();
    let mut is_load = vec![false; n];
    for (j, &inst) in insts.iter().enumerate() {
        for v in f.uses(inst) {
            if let Some(&w) = last_write.get(&v.0) {
                edge(w, j);
                producers[j].push(w);
            }
        }
        for v in f.defs(inst) {
            if let Some(&w) = last_write.get(&v.0) {
                edge(w, j);
            }
            if let Some(readers) = reads_since.get_mut(&v.0) {
                for &r in readers.iter() {
                    edge(r, j);
                }
                readers.clear();
            }
        }
        for v in f.defs(inst) {
            last_write.insert(v.0, j);
        }
        for v in f.uses(inst) {
            reads_since.entry(v.0).or_default().push(j);
        }
        match movement(f, inst) {
            Movement::Wall => {
                for &p in &since_wall {
                    edge(p, j);
                }
                if let Some(w) = last_wall {
                    edge(w, j);
                }
                since_wall.clear();
                memory.clear();
                last_wall = Some(j);
                continue;
            }
            Movement::Ordered => {
                let a = access(f, inst);
                is_load[j] = matches!(a, Access::Load { .. });
                for &(i, b) in &memory {
                    if !commute(b, a) {
                        edge(i, j);
                    }
                }
                memory.push((j, a));
            }
            Movement::Free => {}
        }
        if let Some(w) = last_wall {
            edge(w, j);
        }
        since_wall.push(j);
    }
    // What a load of the block reads, directly or through other instructions (its
    // address arithmetic): placed early, it lets the load move up. Register dataflow
    // only: every instruction before a barrier precedes the loads after it.
    let mut feeds = is_load.clone();
    for j in (0..n).rev() {
        if feeds[j] {
            for &p in &producers[j] {
                feeds[p] = true;
            }
        }
    }
    let mut placed = vec![false; n];
    let mut ready: Vec<usize> = (0..n).filter(|&j| preds[j] == 0).collect();
    let mut order = Vec::with_capacity(n);
    let mut first_unplaced = 0;
    while order.len() < n {
        // The earliest ready load inside the window, else the earliest ready instruction
        // a later load waits for, else the earliest ready instruction.
        let within = |j: &&usize| **j < first_unplaced + WINDOW;
        let pick = ready
            .iter()
            .filter(within)
            .filter(|&&j| is_load[j])
            .min()
            .or_else(|| ready.iter().filter(within).filter(|&&j| feeds[j]).min())
            .or_else(|| ready.iter().filter(within).min())
            .copied();
        // The first unplaced instruction is always ready (its predecessors are all
        // earlier in PTX order, so placed); keep PTX order should that ever not hold.
        let Some(j) = pick else {
            return (0..n).collect();
        };
        ready.retain(|&r| r != j);
        placed[j] = true;
        order.push(j);
        while first_unplaced < n && placed[first_unplaced] {
            first_unplaced += 1;
        }
        for &s in &succs[j] {
            preds[s] -= 1;
            if preds[s] == 0 {
                ready.push(s);
            }
        }
    }
    order
}

/// `f` with each block in its load schedule.
pub fn schedule(f: &Function) -> Function {
    let mut g = f.clone();
    let mut moved = false;
    for b in 0..f.num_blocks() {
        let insts = f.block_insts(BlockId::new(b));
        if insts.len() < 3 {
            continue;
        }
        let order = block_order(f, insts);
        for (pos, &j) in order.iter().enumerate() {
            moved |= pos != j;
            g.insts[insts[pos].index()] = f.inst(insts[j]).clone();
        }
    }
    if moved {
        g.compute_effects();
    }
    g
}

/// `program` with every function's blocks in their load schedule.
pub fn schedule_program(program: &Program) -> Program {
    let mut p = program.clone();
    for f in &mut p.functions {
        if f.num_insts() > 0 {
            *f = schedule(f);
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::lower;

    fn texts(p: &Program, f: &Function) -> Vec<String> {
        (0..f.num_insts())
            .map(|i| ir::print::inst_to_string(Some(p), f, f.inst(InstId::new(i))))
            .collect()
    }

    /// The block's instructions in PTX order and in the load schedule.
    fn scheduled(body: &str) -> (Vec<String>, Vec<String>) {
        let src = format!(
            ".version 7.8\n.target sm_80\n.address_size 64\n\
             .visible .entry k(.param .u64 p)\n{{\n\
             .reg .f32 %f<16>;\n.reg .b32 %r<8>;\n.reg .b64 %rd<4>;\n.reg .pred %p<3>;\n\
             .shared .f32 s[64];\n\
             {body}\n}}\n"
        );
        let p = lower(&src);
        let g = schedule_program(&p);
        (texts(&p, &p.functions[0]), texts(&g, &g.functions[0]))
    }

    fn pos(t: &[String], what: &str) -> usize {
        t.iter()
            .position(|s| s.contains(what))
            .unwrap_or_else(|| panic!("{what} not in {t:?}"))
    }

    /// nvcc's `ld, ld, fma, ld, ld, fma`: the second pair of loads moves above the first
    /// FMA, which keeps its place after the loads it reads; the dependent FMA stays after
    /// its producer.
    #[test]
    fn loads_move_above_independent_arithmetic() {
        let (before, after) = scheduled(
            "ld.param.u64 %rd1, [p];\n\
             ld.global.nc.f32 %f1, [%rd1];\n\
             ld.global.nc.f32 %f2, [%rd1+4];\n\
             fma.rn.f32 %f3, %f1, %f2, %f2;\n\
             ld.global.nc.f32 %f4, [%rd1+8];\n\
             ld.global.nc.f32 %f5, [%rd1+12];\n\
             fma.rn.f32 %f6, %f4, %f5, %f3;\n\
             st.global.f32 [%rd1], %f6;\n\
             ret;",
        );
        assert!(pos(&before, "[%rd1+8]") > pos(&before, "fma.rn.f32 %f3"));
        assert!(
            pos(&after, "[%rd1+12]") < pos(&after, "fma.rn.f32 %f3"),
            "{after:?}"
        );
        assert!(pos(&after, "fma.rn.f32 %f3") < pos(&after, "fma.rn.f32 %f6"));
        assert!(pos(&after, "fma.rn.f32 %f6") < pos(&after, "st.global"));
        assert_eq!(after.last(), before.last());
    }

    /// sgemm_regblock's `ld.global.nc, st.shared, ld.global.nc, st.shared`: the loads pass
    /// the shared store (different spaces) and a read-only load passes a global store; a
    /// coherent global load does not pass a global store, a shared load does not pass a
    /// shared store, and nothing passes a barrier.
    #[test]
    fn loads_pass_only_stores_they_commute_with() {
        let (_, after) = scheduled(
            "ld.param.u64 %rd1, [p];\n\
             mov.u32 %r1, s;\n\
             ld.global.nc.f32 %f1, [%rd1];\n\
             st.shared.f32 [%r1], %f1;\n\
             ld.global.nc.f32 %f2, [%rd1+4];\n\
             st.shared.f32 [%r1+4], %f2;\n\
             st.global.f32 [%rd1+64], %f2;\n\
             ld.global.nc.f32 %f3, [%rd1+8];\n\
             ld.global.f32 %f4, [%rd1+12];\n\
             ld.shared.f32 %f5, [%r1+8];\n\
             bar.sync 0;\n\
             ld.global.nc.f32 %f6, [%rd1+16];\n\
             add.f32 %f7, %f3, %f4;\n\
             add.f32 %f8, %f5, %f6;\n\
             add.f32 %f9, %f7, %f8;\n\
             st.global.f32 [%rd1], %f9;\n\
             ret;",
        );
        let st_shared = pos(&after, "st.shared.f32 [%r1]");
        assert!(pos(&after, "[%rd1+4]") < st_shared, "{after:?}");
        assert!(
            pos(&after, "[%rd1+8]") < pos(&after, "[%rd1+64]"),
            "{after:?}"
        );
        assert!(
            pos(&after, "[%rd1+12]") > pos(&after, "[%rd1+64]"),
            "{after:?}"
        );
        assert!(pos(&after, "ld.shared") > pos(&after, "st.shared.f32 [%r1+4]"));
        let bar = pos(&after, "bar.sync");
        assert!(pos(&after, "[%rd1+16]") > bar, "{after:?}");
        assert!(pos(&after, "ld.shared") < bar);
    }

    /// A block with nothing to hoist keeps PTX order exactly.
    #[test]
    fn a_block_without_a_movable_load_is_unchanged() {
        let (before, after) = scheduled(
            "ld.param.u64 %rd1, [p];\n\
             ld.global.f32 %f1, [%rd1];\n\
             add.f32 %f2, %f1, %f1;\n\
             st.global.f32 [%rd1], %f2;\n\
             ld.global.f32 %f3, [%rd1+4];\n\
             st.global.f32 [%rd1+4], %f3;\n\
             ret;",
        );
        assert_eq!(before, after);
    }
}

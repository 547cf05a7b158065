//! A ptxas-like local schedule for the register-file cache (`register_file.reuse_cache.
//! schedule = "reuse"`, the default): within each basic block, instructions are
//! reordered, respecting every dependence, so that consecutive readers of an operand slot
//! read the same register there, and [`crate::reuse_bits`] then marks the reuse bits on
//! that order. The emulator and the timing model run the reordered program, so the
//! register-file cache sees the order the bits were computed on.
//!
//! Why: on NVIDIA's cores since Maxwell the compiler, not the hardware, decides what the
//! register-file cache keeps (Huerta et al., MICRO 2025, register-file section: a reuse
//! bit per source operand; 37.9% of CUTLASS sgemm's static instructions carry one), and
//! ptxas orders SASS to create reuse. PTX order, as nvcc writes it, is not that order.
//!
//! What is ours (ptxas's scheduler is not published): a greedy list schedule over the
//! block's dependence graph. At each step, among the instructions whose predecessors are
//! all placed and whose position in PTX order is within [`WINDOW`] of the first unplaced
//! one, it takes the one whose source slots read the most registers the cache would
//! still hold (the register each slot last read, unless it was written since or read by
//! a memory instruction; the rule of [`crate::reuse_bits`]); among those with a gain, one
//! that does not read the result of the instruction just placed (a dependent pair
//! stalls); otherwise the first in PTX order. An instruction moves only where it makes a reuse: without one the block keeps
//! PTX order. It does not swap commutative operands or rename registers, which ptxas
//! also uses to create reuse.
//!
//! Dependences, on virtual registers and on the allocated physical registers (their
//! 32-bit units; predicates apart): read after write, write after read, write after
//! write. Only arithmetic instructions move ([`Movement::Free`]: no memory, no carry flag,
//! no special register such as `%clock`); memory, texture and warp-collective
//! instructions keep their order among themselves ([`Movement::Ordered`]) while
//! arithmetic moves across them; everything else (branches, calls, barriers, fences,
//! carry chains, special-register reads) is a wall nothing crosses
//! ([`Movement::Wall`]), so a block's terminator stays last and a `%clock` read times
//! what it timed in PTX order. The register-allocation checker
//! ([`crate::regalloc::check`]) verifies the reordered function with its allocation.

use std::collections::HashMap;

use ir::op::Carry;
use ir::{ControlFlowGraph, Function, InstId, Op, Operand, RegisterEffects};

use crate::regalloc::ir_input::width_of;
use crate::reuse_bits::{slots, uses_cache, written, SLOTS};
use crate::{Allocation, Location};

/// How far (in PTX positions) an instruction may move ahead of the first unplaced one.
/// Ours: large enough for the unrolled inner loops of the built-in GEMMs and stencils,
/// small enough that a block's latency structure stays PTX's.
pub const WINDOW: usize = 32;

/// How an instruction may move (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Movement {
    /// Pure register arithmetic: moves wherever its register dependences allow.
    Free,
    /// Memory, texture and warp-collective: keeps its order among these.
    Ordered,
    /// Nothing moves across it.
    Wall,
}

/// The movement class of instruction `i` of `f`, from its hardware class
/// ([`ir::exec_class`]): arithmetic is free unless it uses the carry flag or reads a
/// special register.
pub fn movement(f: &Function, i: InstId) -> Movement {
    use ir::ExecClass as E;
    let inst = f.inst(i);
    let special = f
        .operands_of(inst)
        .iter()
        .any(|o| matches!(o, Operand::Special(_)));
    let carry = matches!(
        &inst.op,
        Op::Add { carry, .. } | Op::Sub { carry, .. } | Op::Mad { carry, .. } if *carry != Carry::None
    );
    if special || carry {
        return Movement::Wall;
    }
    match ir::exec_class(&inst.op) {
        E::Shuffle
        | E::WarpVote
        | E::Load
        | E::Store
        | E::Atomic
        | E::Prefetch
        | E::Texture
        | E::Tensor => Movement::Ordered,
        E::Fence | E::Branch | E::Call | E::Return | E::Barrier | E::Misc => Movement::Wall,
        _ => Movement::Free,
    }
}

/// A dependence key: a virtual register, a 32-bit physical register or a predicate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Key {
    Virtual(u32),
    Unit(u32),
    Pred(u32),
}

/// The keys `inst` touches through `vregs` (its uses or its defs).
fn keys(f: &Function, alloc: &Allocation, inst: InstId, vregs: &[ir::RegId], out: &mut Vec<Key>) {
    out.clear();
    for &v in vregs {
        out.push(Key::Virtual(v.0));
        match alloc.operand_location(inst, v) {
            Location::Reg(r) => {
                let units = width_of(f.reg(v).class).units();
                out.extend((r.0..r.0 + units).map(Key::Unit));
            }
            Location::Pred(p) => out.push(Key::Pred(p.0)),
            Location::Unused | Location::Spill(_) => {}
        }
    }
}

/// The dependence graph of one block: per local index, its successors and the number of
/// its predecessors (an edge may be counted twice; both counts agree).
struct Dag {
    succs: Vec<Vec<usize>>,
    preds: Vec<u32>,
    /// Local indices of the instructions each one reads a register of (read after write).
    producers: Vec<Vec<usize>>,
}

fn dependences(f: &Function, alloc: &Allocation, insts: &[InstId]) -> Dag {
    let n = insts.len();
    let mut dag = Dag {
        succs: vec![Vec::new(); n],
        preds: vec![0; n],
        producers: vec![Vec::new(); n],
    };
    let edge = |dag: &mut Dag, from: usize, to: usize| {
        if from != to {
            dag.succs[from].push(to);
            dag.preds[to] += 1;
        }
    };
    let mut last_write: HashMap<Key, usize> = HashMap::new();
    let mut reads_since: HashMap<Key, Vec<usize>> = HashMap::new();
    let (mut last_ordered, mut last_wall): (Option<usize>, Option<usize>) = (None, None);
    let mut since_wall: Vec<usize> = Vec::new();
    let (mut uses, mut defs) = (Vec::new(), Vec::new());
    for (j, &inst) in insts.iter().enumerate() {
        keys(f, alloc, inst, f.uses(inst), &mut uses);
        keys(f, alloc, inst, f.defs(inst), &mut defs);
        for k in &uses {
            if let Some(&w) = last_write.get(k) {
                edge(&mut dag, w, j);
                if w != j && !dag.producers[j].contains(&w) {
                    dag.producers[j].push(w);
                }
            }
        }
        for k in &defs {
            if let Some(&w) = last_write.get(k) {
                edge(&mut dag, w, j);
            }
            if let Some(readers) = reads_since.get_mut(k) {
                for &r in readers.iter() {
                    edge(&mut dag, r, j);
                }
                readers.clear();
            }
        }
        for k in &defs {
            last_write.insert(*k, j);
        }
        for k in &uses {
            reads_since.entry(*k).or_default().push(j);
        }
        match movement(f, inst) {
            Movement::Wall => {
                for &p in &since_wall {
                    edge(&mut dag, p, j);
                }
                if let Some(w) = last_wall {
                    edge(&mut dag, w, j);
                }
                since_wall.clear();
                last_wall = Some(j);
                last_ordered = None;
                continue;
            }
            Movement::Ordered => {
                if let Some(o) = last_ordered {
                    edge(&mut dag, o, j);
                }
                last_ordered = Some(j);
            }
            Movement::Free => {}
        }
        if let Some(w) = last_wall {
            edge(&mut dag, w, j);
        }
        since_wall.push(j);
    }
    dag
}

/// What each operand slot's cache sub-entry would hold: the register and width it last
/// read, unless written since.
type Held = [Option<(u32, crate::RegWidth)>; SLOTS];

/// The order (local indices) the list schedule gives `insts`, one block.
fn block_order(f: &Function, alloc: &Allocation, insts: &[InstId]) -> Vec<usize> {
    let n = insts.len();
    let dag = dependences(f, alloc, insts);
    let slot_regs: Vec<Vec<(u32, crate::RegWidth)>> = insts
        .iter()
        .map(|&i| {
            slots(f, alloc, i)
                .into_iter()
                .take(SLOTS)
                .map(|(_, r, w)| (r, w))
                .collect()
        })
        .collect();
    let written: Vec<Vec<(u32, u32)>> = insts.iter().map(|&i| written(f, alloc, i)).collect();
    let mut preds = dag.preds.clone();
    let mut placed = vec![false; n];
    let mut ready: Vec<usize> = (0..n).filter(|&j| preds[j] == 0).collect();
    let mut order = Vec::with_capacity(n);
    let mut held: Held = [None; SLOTS];
    let mut first_unplaced = 0;
    // A memory instruction reads its sources outside the cache: it gains nothing and
    // leaves the slots it reads empty (crate::reuse_bits::uses_cache).
    let cached: Vec<bool> = insts.iter().map(|&i| uses_cache(f, i)).collect();
    let gain = |held: &Held, j: usize| {
        if !cached[j] {
            return 0;
        }
        slot_regs[j]
            .iter()
            .zip(held)
            .filter(|(s, h)| Some(**s) == **h)
            .count()
    };
    while order.len() < n {
        let last = order.last().copied();
        let mut best: Option<(usize, usize, bool)> = None;
        for &j in &ready {
            if j >= first_unplaced + WINDOW {
                continue;
            }
            let g = gain(&held, j);
            let independent = last.is_none_or(|l| !dag.producers[j].contains(&l));
            let better = match best {
                None => true,
                Some((b, bg, bi)) => {
                    (g, g > 0 && independent, std::cmp::Reverse(j))
                        > (bg, bg > 0 && bi, std::cmp::Reverse(b))
                }
            };
            if better {
                best = Some((j, g, independent));
            }
        }
        // The first unplaced instruction is always ready (its predecessors are all
        // earlier in PTX order, so placed) and inside the window; keep PTX order should
        // that ever not hold.
        let Some((j, _, _)) = best else {
            return (0..n).collect();
        };
        ready.retain(|&r| r != j);
        placed[j] = true;
        order.push(j);
        while first_unplaced < n && placed[first_unplaced] {
            first_unplaced += 1;
        }
        for (k, s) in slot_regs[j].iter().enumerate() {
            held[k] = cached[j].then_some(*s);
        }
        for &(lo, hi) in &written[j] {
            for h in held.iter_mut() {
                if h.is_some_and(|(r, w)| r < hi && lo < r + w.units()) {
                    *h = None;
                }
            }
        }
        for &s in &dag.succs[j] {
            preds[s] -= 1;
            if preds[s] == 0 {
                ready.push(s);
            }
        }
    }
    order
}

/// `f` with each block in its reuse schedule and `alloc` with its instruction
/// references renumbered to match. A function whose allocation still has spill edits
/// (spill code not materialised) is returned as it is.
pub fn schedule(f: &Function, alloc: &Allocation) -> (Function, Allocation) {
    if !alloc.edits.is_empty() {
        return (f.clone(), alloc.clone());
    }
    let mut g = f.clone();
    // new_of[old] = new instruction id.
    let mut new_of: Vec<u32> = (0..f.num_insts() as u32).collect();
    for b in 0..f.num_blocks() {
        let insts = f.block_insts(ir::BlockId::new(b));
        if insts.len() < 3 {
            continue;
        }
        let order = block_order(f, alloc, insts);
        for (pos, &j) in order.iter().enumerate() {
            let (old, new) = (insts[j], insts[pos]);
            g.insts[new.index()] = f.inst(old).clone();
            new_of[old.index()] = new.0;
        }
    }
    g.compute_effects();
    let mut a = alloc.clone();
    let renumber = |i: InstId| InstId::new(new_of[i.index()] as usize);
    for o in &mut a.spilled_operands {
        o.inst = renumber(o.inst);
    }
    a.spilled_operands.sort_by_key(|o| (o.inst, o.vreg));
    for c in &mut a.coalesced_copies {
        *c = renumber(*c);
    }
    a.coalesced_copies.sort();
    (g, a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::regalloc::IrInput;
    use crate::test_support::lower;
    use crate::{allocate, AllocConfig};

    fn texts(p: &ir::Program, f: &Function) -> Vec<String> {
        (0..f.num_insts())
            .map(|i| ir::print::inst_to_string(Some(p), f, f.inst(InstId::new(i))))
            .collect()
    }

    fn scheduled(body: &str) -> (Vec<String>, Vec<String>, Vec<Vec<bool>>) {
        let src = format!(
            ".version 7.8\n.target sm_80\n.address_size 64\n\
             .visible .entry k(.param .u64 p)\n{{\n\
             .reg .f32 %f<16>;\n.reg .b32 %r<8>;\n.reg .b64 %rd<4>;\n.reg .pred %p<3>;\n\
             {body}\n}}\n"
        );
        let p = lower(&src);
        let f = &p.functions[0];
        let alloc = allocate(&IrInput::new(f), &AllocConfig::default()).unwrap();
        let (g, galloc) = schedule(f, &alloc);
        crate::check(&IrInput::new(&g), &galloc).expect("the schedule keeps the dataflow");
        let bits = crate::reuse_bits::compute(&g, &galloc);
        (texts(&p, f), texts(&p, &g), bits)
    }

    /// Two independent pairs of FMAs interleaved in PTX: the schedule puts the two that
    /// read `%f1, %f2` in slots 0 and 1 next to each other, then the two that read
    /// `%f3, %f1`.
    #[test]
    fn independent_instructions_move_next_to_a_reader_of_the_same_slot() {
        let (before, after, bits) = scheduled(
            "ld.param.u64 %rd1, [p];\n\
             ld.global.f32 %f1, [%rd1];\n\
             ld.global.f32 %f2, [%rd1+4];\n\
             ld.global.f32 %f3, [%rd1+8];\n\
             fma.rn.f32 %f4, %f1, %f2, %f3;\n\
             fma.rn.f32 %f5, %f3, %f3, %f1;\n\
             fma.rn.f32 %f6, %f1, %f2, %f2;\n\
             fma.rn.f32 %f7, %f3, %f1, %f2;\n\
             add.f32 %f8, %f4, %f5;\n\
             add.f32 %f9, %f6, %f7;\n\
             add.f32 %f10, %f8, %f9;\n\
             st.global.f32 [%rd1], %f10;\n\
             ret;",
        );
        let fmas = |t: &[String]| -> Vec<String> {
            t.iter().filter(|s| s.starts_with("fma")).cloned().collect()
        };
        let (b, a) = (fmas(&before), fmas(&after));
        assert_eq!(a[0], b[0]);
        assert_eq!(
            a[1], b[2],
            "the second reader of %f1, %f2 moves up: {after:?}"
        );
        assert_eq!(a[2], b[1]);
        assert_eq!(a[3], b[3]);
        // Loads, the store and the return keep their places.
        for (x, y) in before.iter().zip(&after) {
            if !x.starts_with("fma") {
                assert_eq!(x, y);
            }
        }
        // The reuse bits on the new order (one per entry of the instruction's uses): the
        // first FMA keeps f1 and f2 for the second; slot 2 (f3) is next read with f2.
        let at = |n: usize| {
            after
                .iter()
                .enumerate()
                .filter(|(_, s)| s.starts_with("fma"))
                .nth(n)
                .unwrap()
                .0
        };
        assert_eq!(bits[at(0)], [true, true, false], "{after:?}");
        assert_eq!(bits[at(1)], [false, false, false]);
        // The third reads f3, f3, f1 (slots: f3, f1), the fourth f3, f1, f2.
        assert_eq!(bits[at(2)], [true, false, true]);
    }

    /// A write to the register between two readers of a slot: no move breaks it, and
    /// dependent instructions never pass their producer.
    #[test]
    fn dependences_hold_the_program_order() {
        let (before, after, _) = scheduled(
            "ld.param.u64 %rd1, [p];\n\
             ld.global.f32 %f1, [%rd1];\n\
             ld.global.f32 %f2, [%rd1+4];\n\
             fma.rn.f32 %f3, %f1, %f2, %f2;\n\
             add.f32 %f1, %f3, %f2;\n\
             fma.rn.f32 %f4, %f1, %f2, %f2;\n\
             st.global.f32 [%rd1], %f4;\n\
             ret;",
        );
        assert_eq!(before, after);
    }

    /// A `%clock` read is a wall: an FMA that would gain a reuse by crossing it stays.
    #[test]
    fn nothing_crosses_a_special_register_read() {
        let (before, after, _) = scheduled(
            "ld.param.u64 %rd1, [p];\n\
             ld.global.f32 %f1, [%rd1];\n\
             ld.global.f32 %f2, [%rd1+4];\n\
             fma.rn.f32 %f3, %f1, %f2, %f2;\n\
             mov.u32 %r1, %clock;\n\
             fma.rn.f32 %f4, %f1, %f2, %f2;\n\
             st.global.f32 [%rd1], %f4;\n\
             st.global.f32 [%rd1+4], %f3;\n\
             st.global.u32 [%rd1+8], %r1;\n\
             ret;",
        );
        assert_eq!(before, after);
        assert_eq!(movement_of("mov.u32 %r1, %clock;"), Movement::Wall);
        assert_eq!(movement_of("add.cc.u32 %r1, %r2, %r3;"), Movement::Wall);
        assert_eq!(movement_of("add.u32 %r1, %r2, %r3;"), Movement::Free);
        assert_eq!(movement_of("ld.global.u32 %r1, [%rd1];"), Movement::Ordered);
        assert_eq!(movement_of("bar.sync 0;"), Movement::Wall);
    }

    fn movement_of(inst: &str) -> Movement {
        let p = lower(&format!(
            ".version 7.8\n.target sm_80\n.address_size 64\n.visible .entry k()\n{{\n\
             .reg .b32 %r<4>;\n.reg .b64 %rd<2>;\n{inst}\nret;\n}}\n"
        ));
        movement(&p.functions[0], InstId::new(0))
    }

    /// Loads keep their order among themselves; arithmetic may cross them.
    #[test]
    fn memory_keeps_its_order_and_arithmetic_crosses_it() {
        let (before, after, _) = scheduled(
            "ld.param.u64 %rd1, [p];\n\
             ld.global.f32 %f1, [%rd1];\n\
             ld.global.f32 %f2, [%rd1+4];\n\
             mul.f32 %f3, %f1, %f2;\n\
             ld.global.f32 %f5, [%rd1+12];\n\
             ld.global.f32 %f4, [%rd1+8];\n\
             mul.f32 %f6, %f1, %f2;\n\
             add.f32 %f7, %f3, %f6;\n\
             add.f32 %f7, %f7, %f4;\n\
             add.f32 %f7, %f7, %f5;\n\
             st.global.f32 [%rd1], %f7;\n\
             ret;",
        );
        let pos = |t: &[String], s: &str| t.iter().position(|x| x.contains(s)).unwrap();
        // The second multiply moves up next to the first (both read f1, f2 in slots 0, 1).
        assert_eq!(
            pos(&after, "mul.f32 %f6"),
            pos(&after, "mul.f32 %f3") + 1,
            "{after:?}"
        );
        // The loads of f5 and f4 keep their order.
        assert!(pos(&after, "[%rd1+12]") < pos(&after, "[%rd1+8]"));
        assert_ne!(before, after);
    }
}

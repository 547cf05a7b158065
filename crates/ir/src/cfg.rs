//! Basic blocks and control-flow edges.
//!
//! Leaders are the first instruction, every labelled instruction and every instruction
//! after a `bra`, `ret`, `exit` or `trap`. A block's successors follow from its last
//! instruction: an unguarded `bra` has its target; a guarded `bra` has its target, then
//! the fall-through block; an unguarded `ret`/`exit`/`trap` has none; anything else falls
//! through. Unreachable blocks are kept. Block 0 is the entry; it has predecessors only
//! if the function's first instruction is a branch target (neither nvcc nor clang emits
//! that: kernels start by loading parameters). Consecutive labels name one block, which
//! keeps the first label's name.

use crate::entity::BlockId;
use crate::function::{Block, Function, Operand};

/// A label at an instruction position (`inst == insts.len()` for a label at the very end).
pub(crate) struct LabelPos<'a> {
    pub name: &'a str,
    pub inst: u32,
}

/// Splits `f.insts` into blocks at the labels and after terminators, rewrites branch
/// operands from label indices (`Operand::Block(BlockId(label index))`, as lowering
/// writes them) to block ids, and computes the edges.
pub(crate) fn split_blocks(f: &mut Function, labels: &[LabelPos<'_>]) {
    let n = f.insts.len() as u32;
    let mut leader = vec![false; n as usize + 1];
    leader[0] = true;
    for l in labels {
        leader[l.inst as usize] = true;
    }
    for (i, inst) in f.insts.iter().enumerate() {
        if inst.op.ends_block() {
            leader[i + 1] = true;
        }
    }
    // An empty block at the end exists only if a label names it.
    leader[n as usize] = labels.iter().any(|l| l.inst == n) || n == 0;

    let mut block_at = vec![BlockId(u32::MAX); n as usize + 1];
    let mut blocks: Vec<Block> = Vec::new();
    for i in 0..=n {
        if leader[i as usize] {
            if let Some(last) = blocks.last_mut() {
                last.end = i;
            }
            blocks.push(Block {
                label: None,
                start: i,
                end: n,
                succs: Vec::new(),
                preds: Vec::new(),
            });
        }
        block_at[i as usize] = BlockId::new(blocks.len() - 1);
    }
    for l in labels {
        let b = &mut blocks[block_at[l.inst as usize].index()];
        if b.label.is_none() {
            b.label = Some(l.name.to_string());
        }
    }
    for op in f.operands.iter_mut() {
        if let Operand::Block(label) = op {
            *label = labels
                .get(label.index())
                .map_or(*label, |l| block_at[l.inst as usize]);
        }
    }
    f.blocks = blocks;
    compute_edges(f);
}

/// What a block's last instruction says about where control goes next.
pub(crate) struct Exits {
    /// Successors in order: a branch target, then the fall-through block; no duplicates.
    pub succs: Vec<BlockId>,
    /// The block is a branch whose target operand is not a block.
    pub missing_target: bool,
    /// Control would fall through past the last block.
    pub falls_off_end: bool,
}

/// The successors the terminator of block `b` implies (the block ranges must be sound).
pub(crate) fn exits(f: &Function, b: usize) -> Exits {
    let block = &f.blocks[b];
    let next = (b + 1 < f.blocks.len()).then(|| BlockId::new(b + 1));
    let mut succs = Vec::with_capacity(2);
    let mut missing_target = false;
    let mut falls_through = true;
    if let Some(last) = block.end.checked_sub(1).filter(|&l| l >= block.start) {
        let inst = &f.insts[last as usize];
        if inst.op.is_branch() {
            let start = inst.operands_start as usize + inst.num_dsts as usize;
            match f.operands.get(start) {
                Some(Operand::Block(t)) => succs.push(*t),
                _ => missing_target = true,
            }
        }
        if inst.op.ends_block() {
            falls_through = inst.guard.is_some();
        }
    }
    if falls_through {
        succs.extend(next);
    }
    succs.dedup();
    Exits {
        succs,
        missing_target,
        falls_off_end: falls_through && next.is_none(),
    }
}

/// Recomputes every block's successors and predecessors from the block ranges and the
/// blocks' last instructions.
pub fn compute_edges(f: &mut Function) {
    let num_blocks = f.blocks.len();
    let succs: Vec<Vec<BlockId>> = (0..num_blocks).map(|b| exits(f, b).succs).collect();
    let mut preds: Vec<Vec<BlockId>> = vec![Vec::new(); num_blocks];
    for (b, s) in succs.iter().enumerate() {
        for t in s {
            if let Some(p) = preds.get_mut(t.index()) {
                if !p.contains(&BlockId::new(b)) {
                    p.push(BlockId::new(b));
                }
            }
        }
    }
    for ((block, s), p) in f.blocks.iter_mut().zip(succs).zip(preds) {
        block.succs = s;
        block.preds = p;
    }
}

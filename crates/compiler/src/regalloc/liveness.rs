//! Live registers at block boundaries: the classic backward may-dataflow
//! `in(b) = use(b) ∪ (out(b) − def(b))`, `out(b) = ∪ in(succ)`, iterated to a fixpoint.
//! A partial (guarded) definition does not kill: the old value survives in the lanes it
//! does not write, so it counts as a use too.

use ir::{BlockId, RegisterEffects};

use super::bitset::BitSet;

pub(crate) struct Liveness {
    pub live_in: Vec<BitSet>,
    pub live_out: Vec<BitSet>,
}

impl Liveness {
    pub(crate) fn compute(f: &impl RegisterEffects) -> Self {
        let n = f.num_blocks();
        let regs = f.num_regs();
        let mut gen = Vec::with_capacity(n);
        let mut kill = Vec::with_capacity(n);
        for b in (0..n).map(BlockId::new) {
            let mut g = BitSet::new(regs);
            let mut k = BitSet::new(regs);
            for &i in f.block_insts(b).iter().rev() {
                let partial = f.defs_are_partial(i);
                for &d in f.defs(i) {
                    if partial {
                        g.insert(d.index());
                    } else {
                        g.remove(d.index());
                        k.insert(d.index());
                    }
                }
                for &u in f.uses(i) {
                    g.insert(u.index());
                }
            }
            gen.push(g);
            kill.push(k);
        }
        let mut live_in = gen.clone();
        let mut live_out = vec![BitSet::new(regs); n];
        let mut changed = true;
        while changed {
            changed = false;
            for b in (0..n).rev() {
                let mut out = BitSet::new(regs);
                for &s in f.successors(BlockId::new(b)) {
                    out.union_with(&live_in[s.index()]);
                }
                if out != live_out[b] {
                    let mut inn = out.clone();
                    for r in kill[b].iter() {
                        inn.remove(r);
                    }
                    inn.union_with(&gen[b]);
                    live_in[b] = inn;
                    live_out[b] = out;
                    changed = true;
                }
            }
        }
        Liveness { live_in, live_out }
    }
}

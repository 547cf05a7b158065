//! The control bits NVIDIA's compiler sets on every instruction since Maxwell, as Huerta
//! et al. ("Dissecting and Modeling the Architecture of Modern GPU Cores", MICRO 2025,
//! arXiv:2503.20481, issue-stage and "Control bits" sections) describe them, computed on
//! the allocated PTX:
//!
//! - **Stall count** (4 bits, 1–15): cycles the warp waits after issuing this instruction
//!   before it may issue its next one. It covers the results of *fixed-latency*
//!   producers: an instruction issues no earlier than `latency` cycles after each of its
//!   producers in the block. Within a block, each instruction's issue cycle is the
//!   earliest its producers allow (assuming every instruction issues as soon as its stall
//!   count lets it), and the stall count is the gap to the next one. A block's last
//!   instruction also covers every fixed-latency result of the block still pending, so
//!   no fixed-latency dependence crosses a block boundary (our rule: it keeps the pass
//!   local to a block; ptxas schedules across blocks).
//! - **Dependence counters** SB0–SB5: a *variable-latency* producer (memory, the SFU,
//!   and any unit whose latency does not fit the 4-bit stall count) increments the
//!   counter assigned to it at issue, and the counter is decremented when its result is
//!   written. Counters are assigned round robin over the function's variable-latency
//!   producers in program order (our rule). Two producers may therefore share a
//!   counter, and a consumer of the first then also waits for the second (over-waiting,
//!   the price of six counters).
//! - **Wait mask** (6 bits): the counters that must be zero before this instruction
//!   issues: those of every pending variable-latency write of a register it reads (RAW)
//!   or writes (WAW). Pending writes are a forward dataflow over the CFG (a register may
//!   be pending from any predecessor), and waiting on a counter clears every register
//!   pending on it.
//! - **Yield bit**: MICRO'25 reports the bit but not the compiler's rule for setting it.
//!   Ours: an instruction yields when the next instruction of its block has a non-empty
//!   wait mask, i.e. when its warp is likely to block next, so the scheduler may look at
//!   other warps first.
//!
//! Stores and other instructions without a register result take no counter: regsim's
//! emulator reads source registers at issue, so there is no write-after-read hazard on a
//! store's data to cover (SASS uses a counter for it).

use ir::{BlockId, ControlFlowGraph, Function, InstId, RegisterEffects};

use crate::regalloc::ir_input::width_of;
use crate::{Allocation, Location};

/// Dependence counters per warp (SB0–SB5).
pub const COUNTERS: u8 = 6;
/// The largest stall count the 4-bit field holds.
pub const MAX_STALL: u32 = 15;

/// How an instruction's result becomes available.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Producer {
    /// No register result to wait for.
    None,
    /// A fixed-latency unit: the result can be read `n` cycles after issue.
    Fixed(u32),
    /// Memory, the SFU, or a latency longer than [`MAX_STALL`]: a dependence counter.
    Variable,
    /// Not an instruction of the machine program: a load SASS reads as a constant-bank
    /// operand of its consumers. It takes no issue slot (no stall count of its own, the
    /// previous instruction's covers the gap to the next), no counter, and its consumers
    /// wait for nothing on its register (their wait masks and stall counts ignore it).
    Folded,
}

/// The control bits of one instruction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ControlBits {
    /// Cycles from this instruction's issue to its warp's next issue (1–15).
    pub stall: u8,
    /// The scheduler should prefer another warp after this instruction.
    pub yield_: bool,
    /// The counter this instruction increments at issue and its write decrements.
    pub write_counter: Option<u8>,
    /// Bit `c`: wait until counter SB`c` is zero before issuing.
    pub wait_mask: u8,
}

impl ControlBits {
    /// SASS-style text: `wait=SB0|SB2 wr=SB1 stall=4 yield`.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        if self.wait_mask != 0 {
            let names: Vec<String> = (0..COUNTERS)
                .filter(|c| self.wait_mask & (1 << c) != 0)
                .map(|c| format!("SB{c}"))
                .collect();
            out.push_str(&format!("wait={} ", names.join("|")));
        }
        if let Some(c) = self.write_counter {
            out.push_str(&format!("wr=SB{c} "));
        }
        out.push_str(&format!("stall={}", self.stall));
        if self.yield_ {
            out.push_str(" yield");
        }
        out
    }
}

/// The register cells (32-bit general registers, then predicates) an operand covers.
struct Cells {
    general: u32,
}

impl Cells {
    fn of(
        &self,
        alloc: &Allocation,
        f: &Function,
        inst: InstId,
        v: ir::RegId,
    ) -> std::ops::Range<usize> {
        match alloc.operand_location(inst, v) {
            Location::Reg(r) => {
                let w = width_of(f.reg(v).class).units();
                r.0 as usize..(r.0 + w) as usize
            }
            Location::Pred(p) => {
                let c = (self.general + p.0) as usize;
                c..c + 1
            }
            Location::Unused | Location::Spill(_) => 0..0,
        }
    }
}

/// The control bits of every instruction of `f` (allocated by `alloc`), indexed by
/// `InstId`. `producer` says how each instruction's result becomes available.
pub fn compute(
    f: &Function,
    alloc: &Allocation,
    producer: impl Fn(InstId) -> Producer,
) -> Vec<ControlBits> {
    let n = f.num_insts();
    let mut bits = vec![
        ControlBits {
            stall: 1,
            ..ControlBits::default()
        };
        n
    ];
    let kind: Vec<Producer> = (0..n)
        .map(|i| {
            let id = InstId::new(i);
            match producer(id) {
                Producer::Folded => Producer::Folded,
                _ if f.defs(id).is_empty() => Producer::None,
                Producer::Fixed(l) if l > MAX_STALL => Producer::Variable,
                p => p,
            }
        })
        .collect();
    // Registers a folded load defines: read as constant operands, never waited for.
    let mut constant = vec![false; f.regs.len()];
    for (i, k) in kind.iter().enumerate() {
        if *k == Producer::Folded {
            for &v in f.defs(InstId::new(i)) {
                constant[v.index()] = true;
            }
        }
    }
    let cells = Cells {
        general: alloc.registers_used,
    };
    let num_cells = (alloc.registers_used + alloc.predicates_used) as usize + 1;

    // Counters, round robin in program order.
    let mut next = 0u8;
    for (i, k) in kind.iter().enumerate() {
        if *k == Producer::Variable {
            bits[i].write_counter = Some(next);
            next = (next + 1) % COUNTERS;
        }
    }

    // Wait masks: pending[c] = counters with a write of cell c in flight.
    let blocks = f.num_blocks();
    let mut entry: Vec<Vec<u8>> = vec![vec![0; num_cells]; blocks];
    let mut exit: Vec<Option<Vec<u8>>> = vec![None; blocks];
    let mut changed = true;
    while changed {
        changed = false;
        for b in 0..blocks {
            let block = BlockId::new(b);
            let mut state = vec![0u8; num_cells];
            for &p in f.predecessors(block) {
                if let Some(out) = &exit[p.index()] {
                    for (s, o) in state.iter_mut().zip(out) {
                        *s |= o;
                    }
                }
            }
            if exit[b].is_some() && state == entry[b] {
                continue;
            }
            entry[b] = state.clone();
            for &i in f.block_insts(block) {
                if kind[i.index()] == Producer::Folded {
                    continue;
                }
                let mut wait = 0u8;
                for &v in f
                    .uses(i)
                    .iter()
                    .chain(f.defs(i))
                    .filter(|v| !constant[v.index()])
                {
                    for c in cells.of(alloc, f, i, v) {
                        wait |= state.get(c).copied().unwrap_or(0);
                    }
                }
                if wait != 0 {
                    for s in state.iter_mut() {
                        *s &= !wait;
                    }
                }
                bits[i.index()].wait_mask = wait;
                let written = match bits[i.index()].write_counter {
                    Some(c) => 1u8 << c,
                    None => 0,
                };
                for &v in f.defs(i) {
                    for c in cells.of(alloc, f, i, v) {
                        if let Some(s) = state.get_mut(c) {
                            *s = written;
                        }
                    }
                }
            }
            if exit[b].as_ref() != Some(&state) {
                exit[b] = Some(state);
                changed = true;
            }
        }
    }

    // Stall counts and yield bits, per block.
    let mut ready = vec![0u64; num_cells];
    for b in 0..blocks {
        let insts: Vec<InstId> = f
            .block_insts(BlockId::new(b))
            .iter()
            .copied()
            .filter(|&i| kind[i.index()] != Producer::Folded)
            .collect();
        ready.iter_mut().for_each(|r| *r = 0);
        let mut issue: Vec<u64> = Vec::with_capacity(insts.len());
        let mut pending_until = 0u64;
        for (k, &i) in insts.iter().enumerate() {
            let mut t = issue.last().map_or(0, |&p| p + 1);
            for &v in f.uses(i).iter().filter(|v| !constant[v.index()]) {
                for c in cells.of(alloc, f, i, v) {
                    t = t.max(ready.get(c).copied().unwrap_or(0));
                }
            }
            if let Some(&prev) = issue.last() {
                bits[insts[k - 1].index()].stall = (t - prev).min(u64::from(MAX_STALL)) as u8;
            }
            issue.push(t);
            if let Producer::Fixed(l) = kind[i.index()] {
                let done = t + u64::from(l);
                pending_until = pending_until.max(done);
                for &v in f.defs(i) {
                    for c in cells.of(alloc, f, i, v) {
                        if let Some(r) = ready.get_mut(c) {
                            *r = done;
                        }
                    }
                }
            }
        }
        if let (Some(&last), Some(&t)) = (insts.last(), issue.last()) {
            let gap = pending_until
                .saturating_sub(t)
                .clamp(1, u64::from(MAX_STALL));
            bits[last.index()].stall = gap as u8;
        }
        for pair in insts.windows(2) {
            bits[pair[0].index()].yield_ = bits[pair[1].index()].wait_mask != 0;
        }
    }
    bits
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::regalloc::IrInput;
    use crate::test_support::lower;
    use crate::{allocate, AllocConfig};

    /// Loads and `ld.param` are variable, `add`/`fma`/`mul`/`setp` fixed at 4 cycles,
    /// everything else has no result to wait for.
    fn bits_of(src: &str) -> (Vec<String>, Vec<ControlBits>) {
        let p = lower(src);
        let f = &p.functions[0];
        let alloc = allocate(&IrInput::new(f), &AllocConfig::default()).unwrap();
        let text: Vec<String> = (0..f.num_insts())
            .map(|i| ir::print::inst_to_string(Some(&p), f, f.inst(InstId::new(i))))
            .collect();
        let bits = compute(f, &alloc, |i| {
            let t = &text[i.index()];
            if t.starts_with("ld") {
                Producer::Variable
            } else if t.starts_with("rcp") {
                Producer::Fixed(20)
            } else {
                Producer::Fixed(4)
            }
        });
        (text, bits)
    }

    fn find(text: &[String], prefix: &str, nth: usize) -> usize {
        text.iter()
            .enumerate()
            .filter(|(_, t)| t.starts_with(prefix))
            .nth(nth)
            .map(|(i, _)| i)
            .unwrap_or_else(|| panic!("no {prefix} #{nth} in {text:?}"))
    }

    /// A kernel `k` with parameters `params` and body `body`.
    fn kernel(params: &str, body: &str) -> String {
        format!(".version 7.8\n.target sm_70\n.address_size 64\n.visible .entry k({params})\n{{\n{body}}}\n")
    }

    const CHAIN: &str = "\
    .reg .f32 %f<8>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [p];
    ld.global.f32 %f1, [%rd1];
    ld.global.f32 %f2, [%rd1+4];
    add.f32 %f3, %f1, %f1;
    fma.rn.f32 %f4, %f3, %f3, %f3;
    mul.f32 %f5, %f2, %f2;
    add.f32 %f6, %f4, %f2;
    st.global.f32 [%rd1], %f6;
    st.global.f32 [%rd1+4], %f5;
    ret;
";

    #[test]
    fn stall_counts_cover_fixed_latency_and_counters_cover_loads() {
        let (text, bits) = bits_of(&kernel(".param .u64 p", CHAIN));
        let param = find(&text, "ld.param", 0);
        let (ld1, ld2) = (find(&text, "ld.global", 0), find(&text, "ld.global", 1));
        let (add1, fma, mul, add2) = (
            find(&text, "add", 0),
            find(&text, "fma", 0),
            find(&text, "mul", 0),
            find(&text, "add", 1),
        );
        // Three variable-latency producers: SB0, SB1, SB2 in program order.
        assert_eq!(bits[param].write_counter, Some(0));
        assert_eq!(bits[ld1].write_counter, Some(1));
        assert_eq!(bits[ld2].write_counter, Some(2));
        // The loads wait for the parameter's counter; add1 for ld1's, mul for ld2's.
        assert_eq!(bits[ld1].wait_mask, 0b001);
        assert_eq!(bits[ld2].wait_mask, 0);
        assert_eq!(bits[add1].wait_mask, 0b010);
        assert_eq!(bits[mul].wait_mask, 0b100);
        assert_eq!(bits[fma].wait_mask, 0);
        // add1 -> fma is a dependent pair: add1 stalls the 4-cycle latency. fma -> mul
        // are independent (1), but add2 needs fma's result 4 cycles after fma issued,
        // one of which mul took: mul stalls 3. The store reads add2's result.
        assert_eq!(bits[add1].stall, 4);
        assert_eq!(bits[fma].stall, 1);
        assert_eq!(bits[mul].stall, 3);
        assert_eq!(bits[add2].stall, 4);
        // Yield before an instruction that waits on a counter.
        assert!(bits[ld2].yield_ && bits[fma].yield_);
        assert!(!bits[add1].yield_ && !bits[mul].yield_);
        assert_eq!(bits[mul].to_text(), "wait=SB2 stall=3");
    }

    #[test]
    fn a_load_sharing_a_counter_makes_an_earlier_producers_consumer_wait_for_it() {
        let body = "\
    .reg .f32 %f<16>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [p];
    ld.param.u64 %rd2, [q];
    ld.global.f32 %f1, [%rd2];
    ld.global.f32 %f2, [%rd2+4];
    ld.global.f32 %f3, [%rd2+8];
    ld.global.f32 %f4, [%rd2+12];
    ld.global.f32 %f5, [%rd2+16];
    st.global.f32 [%rd1], %f1;
    st.global.f32 [%rd1+4], %f5;
    ret;
";
        let (text, bits) = bits_of(&kernel(".param .u64 p, .param .u64 q", body));
        // The parameters take SB0 and SB1, the loads SB2..SB5 and then SB0 again.
        assert_eq!(bits[find(&text, "ld.param", 0)].write_counter, Some(0));
        assert_eq!(bits[find(&text, "ld.param", 1)].write_counter, Some(1));
        assert_eq!(bits[find(&text, "ld.global", 4)].write_counter, Some(0));
        // The first load waits for q's counter; the others find it already zero.
        assert_eq!(bits[find(&text, "ld.global", 0)].wait_mask, 0b000010);
        assert_eq!(bits[find(&text, "ld.global", 1)].wait_mask, 0);
        // The first store reads p (SB0) and f1 (SB2). SB0 now also counts the fifth
        // load: the store waits for that load too, which it does not read.
        assert_eq!(bits[find(&text, "st.global", 0)].wait_mask, 0b000101);
        // Waiting on SB0 released f5 as well: the second store waits for nothing.
        assert_eq!(bits[find(&text, "st.global", 1)].wait_mask, 0);
    }

    #[test]
    fn a_long_fixed_latency_takes_a_counter_and_loops_carry_pending_loads() {
        let body = "\
    .reg .f32 %f<8>;
    .reg .b64 %rd<3>;
    .reg .pred %p<2>;
    ld.param.u64 %rd1, [p];
    mov.f32 %f2, 0f00000000;
LOOP:
    ld.global.f32 %f1, [%rd1];
    rcp.rn.f32 %f3, %f2;
    add.f32 %f2, %f2, %f3;
    setp.lt.f32 %p1, %f2, %f1;
    @%p1 bra LOOP;
    st.global.f32 [%rd1], %f2;
    ret;
";
        let (text, bits) = bits_of(&kernel(".param .u64 p", body));
        let rcp = find(&text, "rcp", 0);
        // Latency 20 does not fit the stall field: a counter.
        assert_eq!(bits[rcp].write_counter, Some(2));
        let add = find(&text, "add", 0);
        assert_eq!(bits[add].wait_mask, 0b100);
        // setp waits for the load. The load waits for the parameter's counter: pending
        // on entry from the first block (on the back edge nothing is pending).
        let setp = find(&text, "setp", 0);
        assert_eq!(bits[setp].wait_mask, 0b010);
        let ld = find(&text, "ld.global", 0);
        assert_eq!(bits[ld].wait_mask, 0b001);
        // The branch reads setp's predicate (4 cycles); as the block's last instruction
        // it would cover any fixed result still pending, and none is.
        assert_eq!(bits[setp].stall, 4);
        let bra = find(&text, "@%p1 bra", 0);
        assert_eq!(bits[bra].stall, 1);
        // A block ending right after a fixed-latency write covers it: mov (4 cycles)
        // then the fall-through into LOOP.
        let mov = find(&text, "mov", 0);
        assert_eq!(bits[mov].stall, 4);
    }
}

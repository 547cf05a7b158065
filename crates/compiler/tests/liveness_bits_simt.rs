//! An independent, dynamic check of the liveness bits' divergence rule: random PTX kernels
//! run as one warp of four lanes on a model of the immediate-post-dominator reconvergence
//! stack (the emulator's), with every branch, guard and path order chosen at random. A
//! dead bit (for the warp) claims that after the instruction no lane of the warp reads the
//! register before writing it; the run records every lane's reads and writes and checks
//! each claim against what the lanes did afterwards, under the virtual numbering and the
//! allocator's (where registers are shared, so a cell's next reader may be another value's
//! instruction). Plain CFG liveness (the thread bits)
//! must fail this check on some programs — divergent lanes still need values it calls dead —
//! or the test would not tell the two apart.

use ir::analysis::PostDominatorTree;
use ir::{BlockId, ControlFlowGraph, Function, InstId, Op, RegisterEffects};

use compiler::liveness_bits::LivenessBits;
use compiler::ltrf::virtual_numbering;
use compiler::regalloc::{allocate, AllocConfig, Allocation, IrInput, Location};

const LANES: usize = 4;
const REGS: u32 = 5;
const PREDS: u32 = 2;

/// xorshift64: deterministic and good enough to pick shapes and branches.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u32) -> u32 {
        (self.next() % u64::from(n)) as u32
    }
    fn chance(&mut self, percent: u32) -> bool {
        self.below(100) < percent
    }
}

/// A random kernel: blocks of adds (some guarded) and compares, each ending in a
/// conditional or unconditional branch, a uniform branch, a guarded or plain exit, or a
/// fall-through.
fn random_kernel(rng: &mut Rng) -> String {
    let blocks = 2 + rng.below(6);
    let mut body = String::new();
    for r in 0..REGS {
        body += &format!("    mov.u32 %r{r}, %tid.x;\n");
    }
    for p in 0..PREDS {
        body += &format!("    setp.lt.u32 %p{p}, %r{p}, 2;\n");
    }
    for b in 0..blocks {
        body += &format!("L{b}:\n");
        for _ in 0..rng.below(5) {
            let (d, a, c) = (rng.below(REGS), rng.below(REGS), rng.below(REGS));
            let p = rng.below(PREDS);
            body += &match rng.below(6) {
                0 => format!("    setp.lt.u32 %p{p}, %r{a}, %r{c};\n"),
                1 => format!("    @%p{p} add.u32 %r{d}, %r{a}, %r{c};\n"),
                2 => format!("    mov.u32 %r{d}, 7;\n"),
                _ => format!("    add.u32 %r{d}, %r{a}, %r{c};\n"),
            };
        }
        let target = rng.below(blocks);
        let p = rng.below(PREDS);
        let last = b + 1 == blocks;
        body += &match rng.below(10) {
            0..=3 => format!("    @%p{p} bra L{target};\n"),
            4 => format!("    bra L{target};\n"),
            5 => format!("    @%p{p} bra.uni L{target};\n"),
            6 => format!("    @%p{p} exit;\n"),
            7 => "    exit;\n".to_string(),
            _ => String::new(),
        };
        if last {
            body += "    exit;\n";
        }
    }
    format!(
        ".version 7.8\n.target sm_70\n.address_size 64\n.visible .entry k()\n{{\n    .reg .u32 %r<{REGS}>;\n    .reg .pred %p<{PREDS}>;\n{body}}}\n"
    )
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Access {
    Read,
    Write,
}

struct Entry {
    /// `None`: the function's exit (lanes reconverging there are done).
    block: Option<BlockId>,
    mask: u32,
    reconverge: Option<BlockId>,
}

/// One warp's run: per lane, `(time, register, access)` in time order; and every dead-bit
/// claim `(time, register, which bit set: thread, warp)`.
struct Run {
    events: Vec<Vec<(u64, u32, Access)>>,
    claims: Vec<(u64, u32, bool, bool, InstId)>,
}

/// The storage cells of a virtual register under a numbering: its architectural registers,
/// or its predicate register (numbered from 1000).
fn cells(numbering: &Allocation, f: &Function, r: ir::RegId) -> Vec<u32> {
    match numbering.location(r) {
        Location::Reg(base) => {
            let units = if f.reg(r).class == ir::RegClass::B64 {
                2
            } else {
                1
            };
            (base.0..base.0 + units).collect()
        }
        Location::Pred(p) => vec![1000 + p.0],
        other => panic!("{r} is at {other}"),
    }
}

fn run(
    f: &Function,
    numbering: &Allocation,
    bits: &LivenessBits,
    pdom: &PostDominatorTree,
    rng: &mut Rng,
) -> Run {
    let mut out = Run {
        events: vec![Vec::new(); LANES],
        claims: Vec::new(),
    };
    let all = (1u32 << LANES) - 1;
    let mut stack = vec![Entry {
        block: Some(f.entry()),
        mask: all,
        reconverge: None,
    }];
    let mut time = 0u64;
    let mut steps = 0;
    while let Some(top) = stack.last() {
        steps += 1;
        if steps > 200 {
            break;
        }
        let (Some(block), mask) = (top.block, top.mask) else {
            stack.pop();
            continue;
        };
        if mask == 0 || Some(block) == top.reconverge {
            stack.pop();
            continue;
        }
        let mut exited = 0u32;
        let mut guard_true = 0u32;
        let insts = f.block_insts(block);
        for &inst in insts {
            time += 1;
            let i = f.inst(inst);
            let live = mask & !exited;
            // Which live lanes the guard lets through.
            guard_true = match i.guard {
                None => live,
                Some(_) if matches!(i.op, Op::Bra { uni: true }) => {
                    if rng.chance(50) {
                        live
                    } else {
                        0
                    }
                }
                Some(_) => (0..LANES as u32)
                    .filter(|&l| live & (1 << l) != 0 && rng.chance(50))
                    .fold(0, |m, l| m | (1 << l)),
            };
            let uses = f.uses(inst);
            for (slot, &r) in uses.iter().enumerate() {
                let is_guard = slot == 0 && i.guard.is_some();
                let readers = if is_guard { live } else { guard_true };
                let thread = bits.is_dead_for_thread(inst, slot);
                let warp = bits.is_dead_after(inst, slot);
                for c in cells(numbering, f, r) {
                    for lane in 0..LANES {
                        if readers & (1 << lane) != 0 {
                            out.events[lane].push((2 * time, c, Access::Read));
                        }
                    }
                    if thread || warp {
                        out.claims.push((2 * time, c, thread, warp, inst));
                    }
                }
            }
            for &d in f.defs(inst) {
                for c in cells(numbering, f, d) {
                    for lane in 0..LANES {
                        if guard_true & (1 << lane) != 0 {
                            out.events[lane].push((2 * time + 1, c, Access::Write));
                        }
                    }
                }
            }
            if matches!(i.op, Op::Exit) {
                exited |= guard_true;
            }
        }
        // Lanes that exited leave every entry.
        if exited != 0 {
            for e in stack.iter_mut() {
                e.mask &= !exited;
            }
        }
        let live = mask & !exited;
        let last = insts.last().map(|&l| f.inst(l));
        let succs = f.successors(block);
        // Where each live lane goes next.
        let mut groups: Vec<(Option<BlockId>, u32)> = Vec::new();
        for lane in 0..LANES as u32 {
            if live & (1 << lane) == 0 {
                continue;
            }
            let next = match last.map(|l| &l.op) {
                Some(Op::Bra { .. }) if succs.len() == 2 => {
                    Some(if guard_true & (1 << lane) != 0 {
                        succs[0]
                    } else {
                        succs[1]
                    })
                }
                _ => succs.first().copied(),
            };
            match groups.iter_mut().find(|g| g.0 == next) {
                Some(g) => g.1 |= 1 << lane,
                None => groups.push((next, 1 << lane)),
            }
        }
        let top = stack.last_mut().expect("running entry");
        match groups.len() {
            0 => {
                top.mask = 0;
            }
            1 => {
                top.block = groups[0].0;
                top.mask = groups[0].1;
            }
            _ => {
                let ip = pdom.immediate_post_dominator(block);
                let reconverge_outer = top.reconverge;
                *top = Entry {
                    block: ip,
                    mask: live,
                    reconverge: reconverge_outer,
                };
                if rng.chance(50) {
                    groups.reverse();
                }
                for (next, m) in groups {
                    stack.push(Entry {
                        block: next,
                        mask: m,
                        reconverge: ip,
                    });
                }
            }
        }
    }
    out
}

/// The first claim some lane contradicts by reading the register before writing it.
fn violation(run: &Run, warp: bool) -> Option<(u64, u32, InstId, usize)> {
    for &(t, r, thread_bit, warp_bit, inst) in &run.claims {
        if (warp && !warp_bit) || (!warp && !thread_bit) {
            continue;
        }
        for (lane, events) in run.events.iter().enumerate() {
            let next = events.iter().find(|&&(te, re, _)| te > t && re == r);
            if matches!(next, Some(&(_, _, Access::Read))) {
                return Some((t, r, inst, lane));
            }
        }
    }
    None
}

#[test]
fn warp_dead_bits_hold_on_random_divergent_runs() {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let (mut programs, mut runs, mut thread_violations, mut claims) = (0, 0, 0, 0);
    for _ in 0..400 {
        let src = random_kernel(&mut rng);
        let module = ptx::parse("random.ptx", &src).expect("generated PTX parses");
        let program = ir::lower(&module, "random.ptx", &src).expect("generated PTX lowers");
        let f = &program.functions[0];
        let pdom = PostDominatorTree::with_cfg(f);
        let allocated = allocate(&IrInput::new(f), &AllocConfig::default()).unwrap();
        programs += 1;
        let mut thread_failed = false;
        for numbering in [virtual_numbering(f), allocated] {
            let bits = LivenessBits::compute(f, &numbering).unwrap();
            for _ in 0..25 {
                let r = run(f, &numbering, &bits, &pdom, &mut rng);
                claims += r.claims.iter().filter(|c| c.3).count();
                if let Some((t, cell, inst, lane)) = violation(&r, true) {
                    panic!(
                        "dead bit at {inst} (time {t}) on cell {cell} but lane {lane} reads it later:\n{src}"
                    );
                }
                thread_failed |= violation(&r, false).is_some();
                runs += 1;
            }
        }
        thread_violations += usize::from(thread_failed);
    }
    eprintln!(
        "{programs} programs, {runs} runs, {claims} warp dead-bit claims checked; plain liveness wrong on {thread_violations} programs"
    );
    assert!(claims > 1000, "too few claims checked: {claims}");
    assert!(
        thread_violations > 0,
        "plain liveness never failed: the runs do not exercise divergence"
    );
}

//! Trace-exact reuse distances for Malekeh (`register_file.malekeh.reuse_distances =
//! "trace"`): the paper measures reuse distance on executed traces ("We used accel-sim in
//! trace mode and annotated the traces with precise reuse distances and their binary
//! approximation", §8), where our compiler pass (`compiler::reuse_distance`) takes the
//! shortest distance over CFG paths. Here a functional profiling pass (the runtime runs
//! the kernel once on a copy of device memory before timing it) records every warp's
//! dynamic instruction stream; for each operand of each dynamic instruction the distance
//! is the number of the warp's instructions up to and including the next one that reads
//! one of its registers, ended (no reuse) by an instruction that writes the register on
//! all its active lanes first, and for a source also by its own instruction writing it —
//! the static pass's definition on the executed path instead of the shortest one. The
//! design keeps the near/far bit of each distance against RTHLD.
//!
//! The timing run executes the same stream unless warps race (atomics, spin loops): each
//! dynamic instruction carries its static identity, and a warp whose stream departs from
//! the recorded one falls back to the static hints from there on (counted as
//! `malekeh_trace_mismatches`).

use std::collections::HashMap;

use ir::{FuncId, InstId};

use crate::kernel_info::{KernelInfo, RegFileKind, RegOperand};

/// Source operands with a bit of their own in an entry; further ones use the static hint.
pub const TRACE_SRC_BITS: usize = 12;
/// Destination operands with a bit of their own in an entry.
pub const TRACE_DST_BITS: usize = 4;

/// One executed warp instruction as the profiling pass saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExecutedStep {
    /// Its function.
    pub func: FuncId,
    /// Its instruction.
    pub inst: InstId,
    /// It executed on every lane that reached it (its writes end the old values).
    pub full_write: bool,
}

/// The near/far bits of one dynamic instruction's operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceEntry {
    func: u32,
    inst: u32,
    /// Bit `k` (`k < TRACE_SRC_BITS`): the `k`-th source operand is near; bit
    /// `TRACE_SRC_BITS + k`: the `k`-th destination operand.
    near: u16,
}

impl TraceEntry {
    /// Whether this is the dynamic instruction `(func, inst)`.
    #[inline]
    pub fn is(&self, func: FuncId, inst: InstId) -> bool {
        self.func == func.0 && self.inst == inst.0
    }
    /// Whether source operand `k` is near; `None` past the bits kept.
    #[inline]
    pub fn src_near(&self, k: usize) -> Option<bool> {
        (k < TRACE_SRC_BITS).then(|| self.near & (1 << k) != 0)
    }
    /// The destination operands' bits (bit `k`: operand `k` is near).
    #[inline]
    pub fn dst_bits(&self) -> u8 {
        (self.near >> TRACE_SRC_BITS) as u8
    }
}

/// Every warp's stream of a launch with its operands' near/far bits.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReuseTrace {
    /// The streams, in the order of their keys.
    warps: Vec<Vec<TraceEntry>>,
    /// CTA index and warp within the CTA to the index in `warps`.
    index: HashMap<([u32; 3], u32), usize>,
    /// The RTHLD the bits were computed with.
    rthld: u32,
}

const NONE: u64 = u64::MAX;

impl ReuseTrace {
    /// The trace of `streams` (each warp's executed instructions, keyed by CTA index and
    /// warp within the CTA) with `info`'s operands and near meaning at most `rthld`.
    pub fn new(
        streams: HashMap<([u32; 3], u32), Vec<ExecutedStep>>,
        info: &KernelInfo,
        rthld: u32,
    ) -> Self {
        let mut next_read = Vec::new();
        let mut keyed: Vec<_> = streams.into_iter().collect();
        keyed.sort_unstable_by_key(|(k, _)| *k);
        let index = keyed
            .iter()
            .enumerate()
            .map(|(i, (k, _))| (*k, i))
            .collect();
        let warps = keyed
            .iter()
            .map(|(_, s)| Self::warp(s, info, rthld, &mut next_read))
            .collect();
        ReuseTrace {
            warps,
            index,
            rthld,
        }
    }

    /// The RTHLD of the bits.
    pub fn rthld(&self) -> u32 {
        self.rthld
    }

    /// The index of the stream of the warp `warp` of CTA `cta`.
    pub fn find(&self, cta: [u32; 3], warp: u32) -> Option<usize> {
        self.index.get(&(cta, warp)).copied()
    }

    /// Entry `pos` of stream `w` (an index from [`ReuseTrace::find`]).
    #[inline]
    pub fn entry(&self, w: usize, pos: usize) -> Option<&TraceEntry> {
        self.warps.get(w)?.get(pos)
    }

    /// Warps recorded.
    pub fn len(&self) -> usize {
        self.warps.len()
    }

    /// True when no warp was recorded.
    pub fn is_empty(&self) -> bool {
        self.warps.is_empty()
    }

    /// One warp's entries: a backward pass keeping each register's next read.
    fn warp(
        stream: &[ExecutedStep],
        info: &KernelInfo,
        rthld: u32,
        next_read: &mut Vec<u64>,
    ) -> Vec<TraceEntry> {
        next_read.clear();
        let mut out = vec![
            TraceEntry {
                func: 0,
                inst: 0,
                near: 0
            };
            stream.len()
        ];
        let general = |o: &&RegOperand| o.file == RegFileKind::General;
        for (i, step) in stream.iter().enumerate().rev() {
            let ii = info.inst(step.func, step.inst);
            let (srcs, dsts) = (info.srcs(step.func, ii), info.dsts(step.func, ii));
            let at = i as u64;
            let near_of = |next: &[u64], o: &RegOperand| {
                o.regs()
                    .filter_map(|r| next.get(r as usize).copied())
                    .filter(|&n| n != NONE)
                    .min()
                    .is_some_and(|n| n - at <= u64::from(rthld))
            };
            let mut near = 0u16;
            for (k, d) in dsts.iter().enumerate().take(TRACE_DST_BITS) {
                if general(&d) && near_of(next_read, d) {
                    near |= 1 << (TRACE_SRC_BITS + k);
                }
            }
            for d in dsts.iter().filter(general) {
                for r in d.regs() {
                    let r = r as usize;
                    if next_read.len() <= r {
                        next_read.resize(r + 1, NONE);
                    }
                    if step.full_write {
                        next_read[r] = NONE;
                    }
                }
            }
            for (k, s) in srcs.iter().enumerate().take(TRACE_SRC_BITS) {
                if general(&s) && near_of(next_read, s) {
                    near |= 1 << k;
                }
            }
            for s in srcs.iter().filter(general) {
                for r in s.regs() {
                    let r = r as usize;
                    if next_read.len() <= r {
                        next_read.resize(r + 1, NONE);
                    }
                    next_read[r] = at;
                }
            }
            out[i] = TraceEntry {
                func: step.func.0,
                inst: step.inst.0,
                near,
            };
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use compiler::AllocConfig;

    const PTX: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry k(.param .u64 p)
{
    .reg .b32 %r<5>;
    .reg .b64 %rd<2>;
    mov.u32 %r1, %tid.x;
    add.s32 %r2, %r1, 1;
    add.s32 %r3, %r2, 2;
    add.s32 %r3, %r3, 3;
    add.s32 %r4, %r1, %r3;
    ld.param.u64 %rd1, [p];
    st.global.u32 [%rd1], %r4;
    ret;
}
"#;

    fn info() -> KernelInfo {
        let ast = ptx::parse("t.ptx", PTX).unwrap();
        let p = ir::lower(&ast, "t.ptx", PTX).unwrap();
        let (k, _) = p.kernels().next().unwrap();
        KernelInfo::compile(&p, k, &AllocConfig::default()).unwrap()
    }

    /// The entries of one warp executing `insts` (`full`: whether each wrote all lanes).
    fn run(info: &KernelInfo, insts: &[(u32, bool)], rthld: u32) -> Vec<TraceEntry> {
        let stream = insts
            .iter()
            .map(|&(i, full_write)| ExecutedStep {
                func: info.kernel,
                inst: InstId(i),
                full_write,
            })
            .collect();
        let t = ReuseTrace::new(HashMap::from([(([0, 0, 0], 0), stream)]), info, rthld);
        let w = t.find([0, 0, 0], 0).unwrap();
        assert_eq!(t.find([1, 0, 0], 0), None);
        (0..insts.len()).map(|p| *t.entry(w, p).unwrap()).collect()
    }

    #[test]
    fn distances_follow_the_executed_stream() {
        let info = info();
        // `add %r2, %r1, 1` (1) reads %r1, read again by `add %r4, %r1, %r3` (4): three
        // instructions on the straight line.
        let line: Vec<_> = (0..5).map(|i| (i, true)).collect();
        let e = run(&info, &line, 2);
        assert!(e[1].is(info.kernel, InstId(1)));
        assert_eq!(e[1].src_near(0), Some(false), "distance 3 > RTHLD 2");
        assert_eq!(run(&info, &line, 3)[1].src_near(0), Some(true));
        // `mov %r1` (0): its result is read by the very next instruction.
        assert_eq!(e[0].dst_bits() & 1, 1);
        // `add %r3, %r3, 3` (3): %r3 is overwritten by nothing and read next at 4.
        assert_eq!(
            e[3].src_near(0),
            Some(false),
            "its own write ends the old %r3"
        );
        assert_eq!(e[3].dst_bits() & 1, 1);
        // A stream that skips 2 and 3 reads %r1 at distance 1.
        assert_eq!(
            run(&info, &[(0, true), (1, true), (4, true)], 2)[1].src_near(0),
            Some(true)
        );
        // A write of %r1 on every lane in between ends its reuse; on some lanes it does not.
        let killed = run(&info, &[(0, true), (1, true), (0, true), (4, true)], 8);
        assert_eq!(killed[1].src_near(0), Some(false));
        let partial = run(&info, &[(0, true), (1, true), (0, false), (4, true)], 2);
        assert_eq!(partial[1].src_near(0), Some(true));
        // The last read of a register has no reuse.
        assert_eq!(e[4].src_near(0), Some(false));
    }
}

//! What the register-file passes need to know about one instruction beyond its register
//! effects: which function unit executes it (Gebhart MICRO'11 §3.2: the private ALU
//! datapath of a SIMT lane versus the shared SFU, MEM and TEX datapath), whether its result
//! arrives after a long, variable latency (§4.1: global, local and texture loads), and which
//! operand of the instruction each entry of `uses(inst)` and `defs(inst)` belongs to.
//!
//! The datapath is a projection of the one operation classification the compiler and
//! the timing model share, [`ir::ExecClass`]:
//! - SFU: transcendentals (`rcp sqrt rsqrt sin cos lg2 ex2 tanh`), floating-point `div`
//!   and integer `div`/`rem` (the hardware builds them from the SFU's reciprocal).
//! - MEM: loads, stores, atomics, reductions, prefetches and fences (the LD/ST unit).
//! - TEX: `tex`, `tld4`, `txq`.
//! - Warp-wide operations (`shfl vote match redux activemask`) move data between lanes, so
//!   they are not part of a lane's private datapath either.
//! - Control (`bra call ret exit trap bar nanosleep brkpt`) only reads predicates,
//!   barrier operands or call arguments; it is not the private ALU datapath.
//! - Everything else, conversions and 64-bit arithmetic included, is the private ALU.

use ir::op::Space;
use ir::{Function, InstId, Op, Operand, RegisterEffects};
use serde::{Deserialize, Serialize};

/// The function unit an instruction executes on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Datapath {
    /// A lane's private ALU: the only unit that may access the LRF.
    Alu,
    /// Special function unit.
    Sfu,
    /// The port to memory.
    Mem,
    /// Texture unit.
    Tex,
    /// Cross-lane operations.
    Warp,
    /// Branches, calls, returns, barriers.
    Control,
}

/// The energy model's view of a datapath: only private versus shared matters to wires.
impl From<Datapath> for energy::gebhart::Path {
    fn from(d: Datapath) -> Self {
        if d.is_private() {
            energy::gebhart::Path::Private
        } else {
            energy::gebhart::Path::Shared
        }
    }
}

impl Datapath {
    /// True for the lane's private datapath (Gebhart §3.2), which reaches the LRF.
    pub fn is_private(self) -> bool {
        self == Datapath::Alu
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Datapath::Alu => "alu",
            Datapath::Sfu => "sfu",
            Datapath::Mem => "mem",
            Datapath::Tex => "tex",
            Datapath::Warp => "warp",
            Datapath::Control => "control",
        }
    }
}

/// The unit that executes `op`.
pub fn datapath(op: &Op) -> Datapath {
    use ir::ExecClass as E;
    match ir::exec_class(op) {
        E::Transcendental | E::FloatDiv | E::DoubleDiv | E::IntDiv => Datapath::Sfu,
        E::Load | E::Store | E::Atomic | E::Prefetch | E::Fence => Datapath::Mem,
        E::Texture => Datapath::Tex,
        // A matrix multiply reads the whole warp's registers: never the private datapath.
        E::Shuffle | E::WarpVote | E::Tensor => Datapath::Warp,
        E::Branch | E::Call | E::Return | E::Barrier | E::Misc => Datapath::Control,
        E::IntSimple
        | E::IntAdd
        | E::IntMinMax
        | E::IntMul
        | E::IntMad
        | E::FloatAdd
        | E::FloatSimple
        | E::FloatConvert
        | E::FloatMinMax
        | E::FloatMul
        | E::FloatFma
        | E::DoubleAdd
        | E::DoubleSimple
        | E::DoubleConvert
        | E::DoubleMinMax
        | E::DoubleMul
        | E::DoubleFma => Datapath::Alu,
    }
}

/// How long until an instruction's results can be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ResultLatency {
    /// A fixed pipeline latency the scoreboard covers (ALU, SFU, shared memory, constant
    /// and parameter loads, warp-wide operations).
    Short,
    /// DRAM or texture latency (Gebhart Table 2: 400 cycles): the two-level scheduler
    /// deschedules a warp that depends on it.
    Long,
}

/// The latency class of `op`'s results. `shared_is_long` makes shared-memory loads and
/// atomics long-latency too (the paper treats them as short: Table 2 gives shared memory
/// the SFU's 20 cycles, against 400 for DRAM and textures).
pub fn result_latency(op: &Op, shared_is_long: bool) -> ResultLatency {
    let space_latency = |space: Space| match space {
        // A generic address may point to global memory.
        Space::Global | Space::Local | Space::Generic => ResultLatency::Long,
        Space::Shared | Space::SharedCluster if shared_is_long => ResultLatency::Long,
        Space::Shared | Space::SharedCluster | Space::Const | Space::Param => ResultLatency::Short,
    };
    match op {
        Op::Ld(m) | Op::Ldu(m) => space_latency(m.space),
        Op::WmmaLoad(w) => space_latency(w.space),
        Op::Atom(a) => space_latency(a.space),
        Op::Tex(_) | Op::Txq { .. } => ResultLatency::Long,
        _ => ResultLatency::Short,
    }
}

/// Which operand of an instruction a register read or write belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum OperandRef {
    /// The guard predicate `@p`.
    Guard,
    /// Source operand `k` (its index among the instruction's sources).
    Src(u8),
    /// Destination operand `k`.
    Dst(u8),
}

impl OperandRef {
    /// The operand slot a source occupies (A = 0, B = 1, C = 2, …); `None` for the guard
    /// and destinations.
    pub fn slot(self) -> Option<u8> {
        match self {
            OperandRef::Src(k) => Some(k),
            _ => None,
        }
    }
}

/// For every instruction, the operand behind each entry of `uses(inst)` and `defs(inst)`,
/// in the same order (the order of `ir::Function::compute_effects`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OperandSites {
    use_start: Vec<u32>,
    uses: Vec<OperandRef>,
    def_start: Vec<u32>,
    defs: Vec<u8>,
}

impl OperandSites {
    pub fn new(f: &Function) -> Self {
        let mut sites = OperandSites {
            use_start: vec![0],
            def_start: vec![0],
            ..Default::default()
        };
        for (i, inst) in f.insts.iter().enumerate() {
            if inst.guard.is_some() {
                sites.uses.push(OperandRef::Guard);
            }
            let id = InstId::new(i);
            for (k, op) in f.dsts(id).iter().enumerate() {
                match op {
                    Operand::Reg(_) => sites.defs.push(k as u8),
                    other if other.reg().is_some() => sites.uses.push(OperandRef::Dst(k as u8)),
                    _ => {}
                }
            }
            for (k, op) in f.srcs(id).iter().enumerate() {
                if op.reg().is_some() {
                    sites.uses.push(OperandRef::Src(k as u8));
                }
            }
            debug_assert_eq!(
                sites.uses.len() - *sites.use_start.last().unwrap_or(&0) as usize,
                f.uses(id).len()
            );
            debug_assert_eq!(
                sites.defs.len() - *sites.def_start.last().unwrap_or(&0) as usize,
                f.defs(id).len()
            );
            sites.use_start.push(sites.uses.len() as u32);
            sites.def_start.push(sites.defs.len() as u32);
        }
        sites
    }

    /// The operand of each entry of `uses(inst)`.
    pub fn uses(&self, inst: InstId) -> &[OperandRef] {
        let i = inst.index();
        &self.uses[self.use_start[i] as usize..self.use_start[i + 1] as usize]
    }

    /// The destination index of each entry of `defs(inst)`.
    pub fn defs(&self, inst: InstId) -> &[u8] {
        let i = inst.index();
        &self.defs[self.def_start[i] as usize..self.def_start[i + 1] as usize]
    }

    /// Position of `inst`'s first use in the flat numbering of all use operands.
    pub fn first_use(&self, inst: InstId) -> usize {
        self.use_start[inst.index()] as usize
    }

    /// Position of `inst`'s first def in the flat numbering of all def operands.
    pub fn first_def(&self, inst: InstId) -> usize {
        self.def_start[inst.index()] as usize
    }

    pub fn num_uses(&self) -> usize {
        self.uses.len()
    }

    pub fn num_defs(&self) -> usize {
        self.defs.len()
    }
}

/// The bins the reports use for distances in instructions (reuse distances, lifetimes):
/// upper bounds 1, 2, 3, 7, 15, 31 and unbounded.
pub const DISTANCE_BIN_BOUNDS: [u64; 7] = [1, 2, 3, 7, 15, 31, u64::MAX];
pub const DISTANCE_BIN_LABELS: [&str; 7] = ["1", "2", "3", "4-7", "8-15", "16-31", "32+"];

/// The bin of [`DISTANCE_BIN_BOUNDS`] a distance falls in.
pub fn distance_bin(d: u64) -> usize {
    DISTANCE_BIN_BOUNDS
        .iter()
        .position(|&b| d <= b)
        .unwrap_or(DISTANCE_BIN_BOUNDS.len() - 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::lower;

    const KERNEL: &str = r#"
.version 7.8
.target sm_70
.address_size 64
.visible .entry k(.param .u64 p)
{
    .reg .pred %p<2>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [p];
    ld.global.f32 %f1, [%rd1+4];
    setp.gt.f32 %p1, %f1, 0f00000000;
    @%p1 sqrt.rn.f32 %f2, %f1;
    ld.shared.f32 %f3, [%rd1];
    st.global.f32 [%rd1], %f2;
    ret;
}
"#;

    #[test]
    fn operand_sites_follow_the_effect_order() {
        let p = lower(KERNEL);
        let f = &p.functions[0];
        let sites = OperandSites::new(f);
        // `@%p1 sqrt %f2, %f1`: guard, then the source.
        assert_eq!(
            sites.uses(InstId(3)),
            &[OperandRef::Guard, OperandRef::Src(0)]
        );
        assert_eq!(sites.defs(InstId(3)), &[0]);
        // `st [%rd1], %f2`: the address base is source 0, the value source 1.
        assert_eq!(
            sites.uses(InstId(5)),
            &[OperandRef::Src(0), OperandRef::Src(1)]
        );
        assert!(sites.defs(InstId(5)).is_empty());
        assert_eq!(
            sites.num_uses(),
            (0..7).map(|i| f.uses(InstId(i)).len()).sum::<usize>()
        );
    }

    #[test]
    fn units_and_latencies() {
        let p = lower(KERNEL);
        let f = &p.functions[0];
        let op = |i: u32| &f.insts[i as usize].op;
        assert_eq!(datapath(op(0)), Datapath::Mem);
        assert_eq!(datapath(op(2)), Datapath::Alu);
        assert_eq!(datapath(op(3)), Datapath::Sfu);
        assert_eq!(datapath(op(6)), Datapath::Control);
        assert_eq!(result_latency(op(0), false), ResultLatency::Short);
        assert_eq!(result_latency(op(1), false), ResultLatency::Long);
        assert_eq!(result_latency(op(4), false), ResultLatency::Short);
        assert_eq!(result_latency(op(4), true), ResultLatency::Long);
        assert_eq!(result_latency(op(3), true), ResultLatency::Short);
    }
}

//! Register-usage profiles like the motivation figures of the register-file papers: how
//! many times each value written to a register is read (Gebhart MICRO'11 Figure 2(a);
//! CERF Figure 2(a)), and how long values that are read once live, in instructions, from
//! their write to their read (Gebhart Figure 2(b)).
//!
//! A *value* is one write of a register: statically a def operand of the IR, dynamically
//! one lane's write when an instruction executes. Reads are counted per operand, so an
//! instruction reading a register in two operands reads it twice. General registers and
//! predicates are profiled apart; the figures are about general registers.
//!
//! - Static ([`StaticRegisterProfile`]): from the def-use chains, a value's reads are the
//!   use operands it reaches, and a read-once value's lifetime is the shortest path, in
//!   instructions along the CFG, from its definition to that read (1 when the next
//!   instruction reads it). A value read in a loop counts once however often the loop
//!   runs: the static profile describes the code, not the run.
//! - Dynamic ([`DynamicRegisterProfiler`]): fed the instructions each warp executes (by
//!   an emulator), it follows every lane's values: a lane's write starts a value, each
//!   read by that lane counts, and the value ends at the next write or when the warp
//!   ends. Lifetimes count the warp's executed instructions between the write and the
//!   read. Registers are per function; a recursive call shares its caller's registers
//!   of the same function, which this does not model.
//!
//! What the papers' text says (the figures themselves are plots): Gebhart MICRO'11 §2:
//! "Up to 70% of values are only read once and 50% of all values produced are only read
//! once, within three instructions of being produced." CERF §II-D: "around 60% registers
//! are used less than twice, and less than 10% are used more than twice."

use std::collections::{BTreeMap, VecDeque};
use std::fmt;

use ir::analysis::DefUseChains;
use ir::{FuncId, Function, InstId, Program, RegClass, RegisterEffects};
use serde::{Deserialize, Serialize};

use crate::inst_info::{
    distance_bin, OperandRef, OperandSites, DISTANCE_BIN_BOUNDS, DISTANCE_BIN_LABELS,
};

/// Reads per value and lifetimes of read-once values, for one register class.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsageHistogram {
    pub values: u64,
    /// Values read 0, 1, 2, and 3 or more times.
    pub reads: [u64; 4],
    /// Read-once values by lifetime, in the bins of
    /// [`crate::inst_info::DISTANCE_BIN_BOUNDS`] (1, 2, 3, 4–7, 8–15, 16–31, 32+).
    pub read_once_lifetime: [u64; 7],
}

impl UsageHistogram {
    /// Records a value read `reads` times; `lifetime` is its write-to-read distance when
    /// it is read once.
    pub fn add(&mut self, reads: u64, lifetime: Option<u64>) {
        self.values += 1;
        self.reads[reads.min(3) as usize] += 1;
        if reads == 1 {
            if let Some(l) = lifetime {
                self.read_once_lifetime[distance_bin(l)] += 1;
            }
        }
    }

    pub fn merge(&mut self, other: &UsageHistogram) {
        self.values += other.values;
        for (a, b) in self.reads.iter_mut().zip(other.reads) {
            *a += b;
        }
        for (a, b) in self
            .read_once_lifetime
            .iter_mut()
            .zip(other.read_once_lifetime)
        {
            *a += b;
        }
    }

    fn fraction(&self, n: u64) -> f64 {
        if self.values == 0 {
            0.0
        } else {
            n as f64 / self.values as f64
        }
    }

    /// Fractions of values read 0, 1, 2 and 3+ times.
    pub fn read_fractions(&self) -> [f64; 4] {
        self.reads.map(|n| self.fraction(n))
    }

    /// Fraction of all values that are read once, within `k` instructions (`k` ≤ 3 is
    /// exact; larger `k` rounds to the bins).
    pub fn read_once_within(&self, k: u64) -> f64 {
        let n: u64 = DISTANCE_BIN_BOUNDS
            .iter()
            .zip(self.read_once_lifetime)
            .filter(|(&b, _)| b <= k)
            .map(|(_, n)| n)
            .sum();
        self.fraction(n)
    }
}

impl fmt::Display for UsageHistogram {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [r0, r1, r2, r3] = self.read_fractions();
        write!(
            out,
            "{} value{}; read 0: {:.1}%, 1: {:.1}%, 2: {:.1}%, 3+: {:.1}%; read once within 3 instructions: {:.1}% of all values",
            self.values,
            if self.values == 1 { "" } else { "s" },
            100.0 * r0,
            100.0 * r1,
            100.0 * r2,
            100.0 * r3,
            100.0 * self.read_once_within(3)
        )?;
        let once = self.reads[1];
        let lifetimes: Vec<String> = DISTANCE_BIN_LABELS
            .iter()
            .zip(self.read_once_lifetime)
            .map(|(l, n)| {
                let pct = if once == 0 {
                    0.0
                } else {
                    100.0 * n as f64 / once as f64
                };
                format!("{l}: {pct:.1}%")
            })
            .collect();
        write!(
            out,
            "\n      lifetime of read-once values (instructions): {}",
            lifetimes.join(", ")
        )
    }
}

/// General registers and predicates apart.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegisterProfile {
    pub registers: UsageHistogram,
    pub predicates: UsageHistogram,
}

impl RegisterProfile {
    pub fn merge(&mut self, other: &RegisterProfile) {
        self.registers.merge(&other.registers);
        self.predicates.merge(&other.predicates);
    }

    fn class_mut(&mut self, class: RegClass) -> &mut UsageHistogram {
        if class == RegClass::Pred {
            &mut self.predicates
        } else {
            &mut self.registers
        }
    }
}

impl fmt::Display for RegisterProfile {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(out, "    registers: {}", self.registers)?;
        write!(out, "    predicates: {}", self.predicates)
    }
}

const PAPERS: &str =
    "papers (their text): Gebhart MICRO'11 Figure 2: up to 70% of values are read once, \
and 50% of all values are read once within three instructions; CERF Figure 2(a): about 60% of \
registers are read fewer than twice, fewer than 10% more than twice";

/// The static profile of one function.
pub fn static_profile(f: &Function) -> RegisterProfile {
    let du = DefUseChains::with_function(f);
    let mut profile = RegisterProfile::default();
    for i in 0..f.num_insts() {
        let id = InstId::new(i);
        for (k, &r) in f.defs(id).iter().enumerate() {
            let uses = du.def_uses(id, k);
            let lifetime = match uses {
                [only] => distance_to(f, id, only.inst, r),
                _ => None,
            };
            profile
                .class_mut(f.reg(r).class)
                .add(uses.len() as u64, lifetime);
        }
    }
    profile
}

/// The shortest path in instructions from `from` to `to` on which `reg` keeps the value
/// `from` wrote (no unguarded write of it on the way).
fn distance_to(f: &Function, from: InstId, to: InstId, reg: ir::RegId) -> Option<u64> {
    let mut seen = vec![false; f.num_insts()];
    let mut frontier: VecDeque<(InstId, u64)> = crate::strands::successors(f, from)
        .map(|s| (s, 1))
        .collect();
    while let Some((x, d)) = frontier.pop_front() {
        if x == to {
            return Some(d);
        }
        if std::mem::replace(&mut seen[x.index()], true)
            || (!f.defs_are_partial(x) && f.defs(x).contains(&reg))
        {
            continue;
        }
        frontier.extend(crate::strands::successors(f, x).map(|s| (s, d + 1)));
    }
    None
}

/// One function's static profile.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionProfile {
    pub name: String,
    pub kind: String,
    pub profile: RegisterProfile,
}

/// `regsim compile FILE --pass register-profile`: the static profile of every function.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StaticRegisterProfile {
    pub functions: Vec<FunctionProfile>,
    pub total: RegisterProfile,
}

impl StaticRegisterProfile {
    pub fn new(program: &Program) -> Self {
        let mut total = RegisterProfile::default();
        let functions = program
            .functions
            .iter()
            .filter(|f| f.has_body)
            .map(|f| {
                let profile = static_profile(f);
                total.merge(&profile);
                FunctionProfile {
                    name: f.name.clone(),
                    kind: f.kind.as_str().to_string(),
                    profile,
                }
            })
            .collect();
        StaticRegisterProfile { functions, total }
    }
}

impl fmt::Display for StaticRegisterProfile {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            out,
            "register-usage profile, static (reads are the use operands a definition reaches; lifetime is the shortest CFG path)"
        )?;
        for f in &self.functions {
            writeln!(out, "  {} {}:", f.kind, f.name)?;
            writeln!(out, "{}", f.profile)?;
        }
        writeln!(out, "  total:")?;
        writeln!(out, "{}", self.total)?;
        writeln!(out, "  {PAPERS}")
    }
}

/// One warp instruction as an emulator executed it (`emu::WarpStep` carries these).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExecutedInst {
    /// Any number that names the warp uniquely for the run (e.g. CTA and warp index).
    pub warp: u64,
    pub func: FuncId,
    pub inst: InstId,
    /// Lanes at this instruction before its guard: they read the guard predicate.
    pub active_mask: u32,
    /// Lanes that executed it (after the guard): they read its sources and write its
    /// destinations.
    pub exec_mask: u32,
}

/// One lane's current value of one register.
#[derive(Clone, Copy, Debug, Default)]
struct LaneValue {
    live: bool,
    reads: u32,
    written_at: u64,
    first_read_at: u64,
}

/// The values of one warp: per function, per register, per lane.
#[derive(Default)]
struct WarpValues {
    executed: u64,
    functions: BTreeMap<u32, Vec<[LaneValue; 32]>>,
}

/// What the profiler keeps of one function: its registers' classes and, per instruction,
/// the registers it reads (and whether the read is the guard's) and writes.
struct FunctionShape {
    classes: Vec<RegClass>,
    use_start: Vec<u32>,
    uses: Vec<(ir::RegId, bool)>,
    def_start: Vec<u32>,
    defs: Vec<ir::RegId>,
}

impl FunctionShape {
    fn new(f: &Function) -> Self {
        let sites = OperandSites::new(f);
        let mut shape = FunctionShape {
            classes: f.regs.iter().map(|r| r.class).collect(),
            use_start: vec![0],
            uses: Vec::new(),
            def_start: vec![0],
            defs: Vec::new(),
        };
        for i in 0..f.num_insts() {
            let id = InstId::new(i);
            shape.uses.extend(
                f.uses(id)
                    .iter()
                    .zip(sites.uses(id))
                    .map(|(&r, &op)| (r, op == OperandRef::Guard)),
            );
            shape.defs.extend_from_slice(f.defs(id));
            shape.use_start.push(shape.uses.len() as u32);
            shape.def_start.push(shape.defs.len() as u32);
        }
        shape
    }

    fn num_insts(&self) -> usize {
        self.use_start.len() - 1
    }

    fn uses(&self, inst: InstId) -> &[(ir::RegId, bool)] {
        let i = inst.index();
        &self.uses[self.use_start[i] as usize..self.use_start[i + 1] as usize]
    }

    fn defs(&self, inst: InstId) -> &[ir::RegId] {
        let i = inst.index();
        &self.defs[self.def_start[i] as usize..self.def_start[i + 1] as usize]
    }
}

/// Builds a [`DynamicRegisterProfile`] from the instructions warps execute. It keeps what
/// it needs of the program, so it does not borrow it while the emulator runs.
pub struct DynamicRegisterProfiler {
    functions: Vec<Option<FunctionShape>>,
    warps: BTreeMap<u64, WarpValues>,
    profile: RegisterProfile,
    instructions: u64,
    /// Lane reads of registers no instruction of the run had written.
    undefined_reads: u64,
    /// Warps already ended by [`DynamicRegisterProfiler::end_warp`].
    ended_warps: u64,
}

/// The dynamic profile of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DynamicRegisterProfile {
    pub profile: RegisterProfile,
    /// Warp instructions observed.
    pub instructions: u64,
    pub warps: u64,
    pub undefined_reads: u64,
}

impl fmt::Display for DynamicRegisterProfile {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            out,
            "register-usage profile, dynamic: {} warp instructions of {} warps (per-lane values; lifetime in the warp's instructions)",
            self.instructions, self.warps
        )?;
        writeln!(out, "{}", self.profile)?;
        if self.undefined_reads > 0 {
            writeln!(
                out,
                "    {} lane reads of registers never written in the run",
                self.undefined_reads
            )?;
        }
        writeln!(out, "  {PAPERS}")
    }
}

impl DynamicRegisterProfiler {
    pub fn new(program: &Program) -> Self {
        DynamicRegisterProfiler {
            functions: program
                .functions
                .iter()
                .map(|f| f.has_body.then(|| FunctionShape::new(f)))
                .collect(),
            warps: BTreeMap::new(),
            profile: RegisterProfile::default(),
            instructions: 0,
            undefined_reads: 0,
            ended_warps: 0,
        }
    }

    /// Records one executed warp instruction. Instructions of one warp must arrive in
    /// execution order; warps may interleave.
    pub fn observe(&mut self, step: &ExecutedInst) {
        let Some(Some(f)) = self.functions.get(step.func.index()) else {
            return;
        };
        if step.inst.index() >= f.num_insts() {
            return;
        }
        self.instructions += 1;
        let warp = self.warps.entry(step.warp).or_default();
        warp.executed += 1;
        let now = warp.executed;
        let values = warp
            .functions
            .entry(step.func.0)
            .or_insert_with(|| vec![[LaneValue::default(); 32]; f.classes.len()]);
        for &(r, guard) in f.uses(step.inst) {
            let mask = if guard {
                step.active_mask
            } else {
                step.exec_mask
            };
            for lane in lanes(mask) {
                let v = &mut values[r.index()][lane];
                if !v.live {
                    self.undefined_reads += 1;
                    continue;
                }
                v.reads += 1;
                if v.reads == 1 {
                    v.first_read_at = now;
                }
            }
        }
        for &r in f.defs(step.inst) {
            let class = f.classes[r.index()];
            for lane in lanes(step.exec_mask) {
                let v = &mut values[r.index()][lane];
                if v.live {
                    record(&mut self.profile, class, v);
                }
                *v = LaneValue {
                    live: true,
                    reads: 0,
                    written_at: now,
                    first_read_at: 0,
                };
            }
        }
    }

    /// Ends every value of `warp` (call when the warp exits, to bound memory).
    pub fn end_warp(&mut self, warp: u64) {
        if let Some(w) = self.warps.remove(&warp) {
            self.ended_warps += 1;
            self.flush(w);
        }
    }

    fn flush(&mut self, w: WarpValues) {
        for (func, regs) in w.functions {
            let Some(Some(f)) = self.functions.get(func as usize) else {
                continue;
            };
            for (r, lanes) in regs.iter().enumerate() {
                let class = f.classes[r];
                for v in lanes.iter().filter(|v| v.live) {
                    record(&mut self.profile, class, v);
                }
            }
        }
    }

    /// Ends every warp and returns the profile.
    pub fn finish(mut self) -> DynamicRegisterProfile {
        let warps = std::mem::take(&mut self.warps);
        let count = warps.len() as u64;
        for (_, w) in warps {
            self.flush(w);
        }
        DynamicRegisterProfile {
            profile: self.profile,
            instructions: self.instructions,
            warps: count + self.ended_warps,
            undefined_reads: self.undefined_reads,
        }
    }
}

fn record(profile: &mut RegisterProfile, class: RegClass, v: &LaneValue) {
    let lifetime = (v.reads == 1).then(|| v.first_read_at - v.written_at);
    profile.class_mut(class).add(u64::from(v.reads), lifetime);
}

fn lanes(mask: u32) -> impl Iterator<Item = usize> {
    (0..32).filter(move |l| mask & (1 << l) != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::lower;

    const KERNEL: &str = r#"
.version 7.8
.target sm_70
.address_size 64
.visible .entry k(.param .u64 a)
{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [a];
    mov.u32 %r1, %tid.x;
    add.s32 %r2, %r1, 1;
    mul.lo.s32 %r3, %r2, %r2;
    setp.gt.s32 %p1, %r3, 10;
    @%p1 add.s32 %r3, %r3, %r1;
    mov.u32 %r4, 5;
    st.global.u32 [%rd1], %r3;
    ret;
}
"#;

    #[test]
    fn static_profile_counts_reads_and_lifetimes() {
        let p = lower(KERNEL);
        let prof = static_profile(&p.functions[0]);
        // Values: %rd1 (read once, by the store 7 on), %r1 (read twice), %r2 (twice, in one
        // instruction), %r3 at i3 (read by setp, the guarded add and the store: 3), %r3 at
        // i5 (read once by the store, 2 on), %r4 (never read).
        assert_eq!(prof.registers.values, 6);
        assert_eq!(prof.registers.reads, [1, 2, 2, 1]);
        // Lifetimes of the read-once values: 7 (%rd1: i0 -> i7) and 2 (%r3: i5 -> i7).
        assert_eq!(prof.registers.read_once_lifetime, [0, 1, 0, 1, 0, 0, 0]);
        assert_eq!(prof.predicates.values, 1);
        assert_eq!(prof.predicates.reads, [0, 1, 0, 0]);
        assert!((prof.registers.read_once_within(3) - 1.0 / 6.0).abs() < 1e-12);
    }

    #[test]
    fn dynamic_profile_follows_each_lane() {
        let p = lower(KERNEL);
        let mut prof = DynamicRegisterProfiler::new(&p);
        // Two lanes run; the guard is true in lane 0 only.
        for inst in 0..9u32 {
            let exec_mask = if inst == 5 { 0b01 } else { 0b11 };
            prof.observe(&ExecutedInst {
                warp: 7,
                func: FuncId(0),
                inst: InstId(inst),
                active_mask: 0b11,
                exec_mask,
            });
        }
        let d = prof.finish();
        assert_eq!(d.instructions, 9);
        assert_eq!(d.warps, 1);
        let r = d.profile.registers;
        // Lane 0 runs the guarded add: %rd1 1 read, %r1 2, %r2 2, %r3 of i3 2 (setp, add;
        // the add's write ends it), %r3 of i5 1, %r4 0. Lane 1: %rd1 1, %r1 1, %r2 2,
        // %r3 of i3 2 (setp, store), %r4 0.
        assert_eq!(r.values, 11);
        assert_eq!(r.reads, [2, 4, 5, 0]);
        assert_eq!(d.undefined_reads, 0);
        // The predicate is read by both active lanes (the guard).
        assert_eq!(d.profile.predicates.reads, [0, 2, 0, 0]);
    }

    #[test]
    fn on_straight_line_code_the_dynamic_profile_is_the_static_one_per_lane() {
        let p = lower(&KERNEL.replace("@%p1 add", "add"));
        let f = &p.functions[0];
        let stat = static_profile(f);
        let mut prof = DynamicRegisterProfiler::new(&p);
        for warp in 0..3 {
            for inst in 0..f.insts.len() as u32 {
                prof.observe(&ExecutedInst {
                    warp,
                    func: FuncId(0),
                    inst: InstId(inst),
                    active_mask: u32::MAX,
                    exec_mask: u32::MAX,
                });
            }
            prof.end_warp(warp);
        }
        let d = prof.finish();
        assert_eq!(d.warps, 3);
        let per_lane = |h: &UsageHistogram| {
            let mut h = *h;
            h.values *= 96;
            h.reads = h.reads.map(|n| n * 96);
            h.read_once_lifetime = h.read_once_lifetime.map(|n| n * 96);
            h
        };
        assert_eq!(d.profile.registers, per_lane(&stat.registers));
        assert_eq!(d.profile.predicates, per_lane(&stat.predicates));
    }
}

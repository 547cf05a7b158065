//! Register reuse-distance hints, after Abaie Shoushtary, Arnau, Tubella and González,
//! "Lightweight Register File Caching in Collector Units for GPUs" (Malekeh), §3–4: the
//! compiler gives every source and destination operand the distance to the next read of
//! its register, and the hardware keeps one bit of it — *near* or *far* against a
//! threshold RTHLD — to steer the collector-unit cache's replacement (evict far values
//! first) and write policies (cache a result only if it is near).
//!
//! The paper measures reuse distances on traces; a compiler has to define them on the CFG.
//! Here the distance from an operand of instruction `i` is the number of instructions the
//! same warp executes after `i` up to and including the next instruction that reads the
//! same value of the register — 1 when the very next instruction reads it — minimised over
//! all paths (the nearest possible reuse: a loop's back edge counts, so a value read at
//! the top of the next iteration is near if the body is short). A path on which the
//! register is written (by an unguarded write) before it is read carries no reuse of this
//! value; a guarded write may leave it in some lanes and does not end the search. A
//! source whose own instruction overwrites its register has no reuse. A call counts as one
//! instruction (the callee's are not counted), so distances across calls are lower
//! bounds. A register no path reads again has no distance ("never", always far).
//!
//! Registers are the function's virtual registers. A register allocation maps values that
//! are live at the same time to different registers and a redefinition ends a distance in
//! both views, so the distances are those of the allocated registers too. Predicates live
//! in their own file and get no hint.
//!
//! The shortest distances are a backward dataflow problem: `N(before x) = 1` if `x` reads
//! the register, unbounded if `x` overwrites it, else `N(after x) + 1`, with the minimum
//! over successors — Bellman–Ford over the CFG, solved by the IR's dataflow solver.

use std::fmt;

use ir::analysis::dataflow::{solve, Analysis, Direction, JoinSemiLattice, ResultsVisitor};
use ir::{BlockId, Function, InstId, Program, RegClass, RegisterEffects};
use serde::{Deserialize, Serialize};

use crate::inst_info::{distance_bin, OperandRef, OperandSites, DISTANCE_BIN_LABELS};

/// Settings of the hints.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReuseDistanceConfig {
    /// RTHLD: a distance at most this is near, above it far. The paper's text gives no
    /// value; 8 instructions is ours (the collector unit's cache table has 8 slots).
    pub rthld: u32,
}

impl Default for ReuseDistanceConfig {
    fn default() -> Self {
        ReuseDistanceConfig { rthld: 8 }
    }
}

/// Distances per register at one program point; `NEVER` where no read follows.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Distances(Vec<u32>);

const NEVER: u32 = u32::MAX;

impl JoinSemiLattice for Distances {
    /// The minimum: the nearest reuse over the paths that meet here.
    fn join(&mut self, other: &Self) -> bool {
        let mut changed = false;
        for (a, &b) in self.0.iter_mut().zip(&other.0) {
            if b < *a {
                *a = b;
                changed = true;
            }
        }
        changed
    }
}

struct NextRead;

impl<G: RegisterEffects + ?Sized> Analysis<G> for NextRead {
    type Domain = Distances;
    const DIRECTION: Direction = Direction::Backward;

    fn bottom_value(&self, g: &G) -> Distances {
        Distances(vec![NEVER; g.num_regs()])
    }

    fn initialize_boundary(&self, _g: &G, _state: &mut Distances) {}

    fn apply_inst_effect(&self, g: &G, state: &mut Distances, inst: InstId) {
        for d in state.0.iter_mut() {
            *d = d.saturating_add(1);
        }
        if !g.defs_are_partial(inst) {
            for &r in g.defs(inst) {
                state.0[r.index()] = NEVER;
            }
        }
        for &r in g.uses(inst) {
            state.0[r.index()] = 1;
        }
    }
}

/// The reuse distance of every register operand of one function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReuseDistances {
    sites: OperandSites,
    /// Per use operand (the flat numbering of [`OperandSites`]); `None` for never or for
    /// a predicate.
    uses: Vec<Option<u32>>,
    /// Per def operand.
    defs: Vec<Option<u32>>,
}

impl ReuseDistances {
    pub fn compute(f: &Function) -> ReuseDistances {
        let sites = OperandSites::new(f);
        let mut uses = vec![None; sites.num_uses()];
        let mut defs = vec![None; sites.num_defs()];
        struct Collect<'a> {
            f: &'a Function,
            sites: &'a OperandSites,
            uses: &'a mut Vec<Option<u32>>,
            defs: &'a mut Vec<Option<u32>>,
        }
        impl ResultsVisitor<Distances> for Collect<'_> {
            fn visit_after_inst(&mut self, inst: InstId, _index: usize, after: &Distances) {
                let f = self.f;
                let hint = |r: ir::RegId| {
                    let d = after.0[r.index()];
                    (f.reg(r).class != RegClass::Pred && d != NEVER).then_some(d)
                };
                let overwrites =
                    |r: ir::RegId| !f.defs_are_partial(inst) && f.defs(inst).contains(&r);
                let first = self.sites.first_use(inst);
                for (k, &r) in f.uses(inst).iter().enumerate() {
                    self.uses[first + k] = if overwrites(r) { None } else { hint(r) };
                }
                let first = self.sites.first_def(inst);
                for (k, &r) in f.defs(inst).iter().enumerate() {
                    self.defs[first + k] = hint(r);
                }
            }
        }
        let results = solve(NextRead, f);
        let mut scratch = Distances(Vec::new());
        let mut collect = Collect {
            f,
            sites: &sites,
            uses: &mut uses,
            defs: &mut defs,
        };
        for b in 0..f.blocks.len() {
            results.visit_block(f, BlockId::new(b), &mut scratch, &mut collect);
        }
        ReuseDistances { sites, uses, defs }
    }

    /// The distance of each entry of `uses(inst)` (`None`: never reused, or a predicate).
    pub fn use_distances(&self, inst: InstId) -> &[Option<u32>] {
        let start = self.sites.first_use(inst);
        &self.uses[start..start + self.sites.uses(inst).len()]
    }

    /// The distance of each entry of `defs(inst)`.
    pub fn def_distances(&self, inst: InstId) -> &[Option<u32>] {
        let start = self.sites.first_def(inst);
        &self.defs[start..start + self.sites.defs(inst).len()]
    }

    pub fn sites(&self) -> &OperandSites {
        &self.sites
    }
}

/// The binary hint of Malekeh §4.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Hint {
    Near,
    Far,
}

impl Hint {
    pub fn of(distance: Option<u32>, rthld: u32) -> Hint {
        match distance {
            Some(d) if d <= rthld => Hint::Near,
            _ => Hint::Far,
        }
    }
}

/// A histogram of distances: `counts[k]` for bin `k` of
/// [`crate::inst_info::DISTANCE_BIN_BOUNDS`], then one bin for "never".
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DistanceHistogram {
    pub counts: [u64; 8],
    pub near: u64,
    pub total: u64,
}

impl DistanceHistogram {
    fn add(&mut self, d: Option<u32>, rthld: u32) {
        let bin = match d {
            None => 7,
            Some(d) => distance_bin(u64::from(d)),
        };
        self.counts[bin] += 1;
        self.total += 1;
        if Hint::of(d, rthld) == Hint::Near {
            self.near += 1;
        }
    }

    fn merge(&mut self, other: &DistanceHistogram) {
        for (a, b) in self.counts.iter_mut().zip(other.counts) {
            *a += b;
        }
        self.near += other.near;
        self.total += other.total;
    }

    pub fn near_fraction(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            self.near as f64 / self.total as f64
        }
    }
}

impl fmt::Display for DistanceHistogram {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        let labels = DISTANCE_BIN_LABELS.iter().chain(&["never"]);
        let pct = |n: u64| {
            if self.total == 0 {
                0.0
            } else {
                100.0 * n as f64 / self.total as f64
            }
        };
        let bins: Vec<String> = labels
            .zip(self.counts)
            .map(|(l, n)| format!("{l}: {n} ({:.1}%)", pct(n)))
            .collect();
        write!(
            out,
            "{} operands, near {:.1}%; {}",
            self.total,
            100.0 * self.near_fraction(),
            bins.join(", ")
        )
    }
}

/// One register operand's hint.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OperandHint {
    /// `guard`, `src0`…, `dst0`….
    pub operand: String,
    pub reg: String,
    /// `None`: never read again (or a predicate, which gets no hint).
    pub distance: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<Hint>,
}

/// One instruction's hints.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstHints {
    pub inst: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block: Option<String>,
    pub text: String,
    pub sources: Vec<OperandHint>,
    pub destinations: Vec<OperandHint>,
}

/// The hints of one function.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionReuseDistances {
    pub name: String,
    pub kind: String,
    pub sources: DistanceHistogram,
    pub destinations: DistanceHistogram,
    pub instructions: Vec<InstHints>,
}

/// `regsim compile FILE --pass reuse-distance`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReuseDistanceReport {
    pub config: ReuseDistanceConfig,
    pub functions: Vec<FunctionReuseDistances>,
    pub sources: DistanceHistogram,
    pub destinations: DistanceHistogram,
}

impl ReuseDistanceReport {
    pub fn new(program: &Program, config: &ReuseDistanceConfig) -> Self {
        let mut sources = DistanceHistogram::default();
        let mut destinations = DistanceHistogram::default();
        let functions: Vec<FunctionReuseDistances> = program
            .functions
            .iter()
            .filter(|f| f.has_body)
            .map(|f| {
                let r = function_report(program, f, &ReuseDistances::compute(f), config);
                sources.merge(&r.sources);
                destinations.merge(&r.destinations);
                r
            })
            .collect();
        ReuseDistanceReport {
            config: config.clone(),
            functions,
            sources,
            destinations,
        }
    }
}

fn function_report(
    program: &Program,
    f: &Function,
    d: &ReuseDistances,
    config: &ReuseDistanceConfig,
) -> FunctionReuseDistances {
    let mut sources = DistanceHistogram::default();
    let mut destinations = DistanceHistogram::default();
    let mut instructions = Vec::with_capacity(f.num_insts());
    let is_pred = |r: ir::RegId| f.reg(r).class == RegClass::Pred;
    for (b, block) in f.blocks.iter().enumerate() {
        for i in block.start..block.end {
            let id = InstId(i);
            let mut srcs = Vec::new();
            for (k, (&r, &op)) in f.uses(id).iter().zip(d.sites.uses(id)).enumerate() {
                let distance = d.use_distances(id)[k];
                if !is_pred(r) {
                    sources.add(distance, config.rthld);
                }
                srcs.push(OperandHint {
                    operand: match op {
                        OperandRef::Guard => "guard".to_string(),
                        OperandRef::Src(k) => format!("src{k}"),
                        OperandRef::Dst(k) => format!("dst{k}"),
                    },
                    reg: f.reg(r).name.clone(),
                    distance,
                    hint: (!is_pred(r)).then(|| Hint::of(distance, config.rthld)),
                });
            }
            let mut dsts = Vec::new();
            for (k, (&r, &dst)) in f.defs(id).iter().zip(d.sites.defs(id)).enumerate() {
                let distance = d.def_distances(id)[k];
                if !is_pred(r) {
                    destinations.add(distance, config.rthld);
                }
                dsts.push(OperandHint {
                    operand: format!("dst{dst}"),
                    reg: f.reg(r).name.clone(),
                    distance,
                    hint: (!is_pred(r)).then(|| Hint::of(distance, config.rthld)),
                });
            }
            instructions.push(InstHints {
                inst: i,
                block: (i == block.start).then(|| ir::print::block_name(f, BlockId::new(b))),
                text: ir::print::inst_to_string(Some(program), f, f.inst(id)),
                sources: srcs,
                destinations: dsts,
            });
        }
    }
    FunctionReuseDistances {
        name: f.name.clone(),
        kind: f.kind.as_str().to_string(),
        sources,
        destinations,
        instructions,
    }
}

fn operand_text(o: &OperandHint) -> String {
    let d = o
        .distance
        .map_or_else(|| "-".to_string(), |d| d.to_string());
    match o.hint {
        Some(Hint::Near) => format!("{}:{d}n", o.reg),
        Some(Hint::Far) => format!("{}:{d}f", o.reg),
        None => o.reg.clone(),
    }
}

impl fmt::Display for ReuseDistanceReport {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            out,
            "reuse distance (Malekeh §3-4): instructions to the next read of the value, \
             minimum over CFG paths; near (n) if at most RTHLD = {}, far (f) above; - never",
            self.config.rthld
        )?;
        for f in &self.functions {
            writeln!(out, "\n{} {}", f.kind, f.name)?;
            writeln!(out, "  sources: {}", f.sources)?;
            writeln!(out, "  destinations: {}", f.destinations)?;
            for inst in &f.instructions {
                if let Some(label) = &inst.block {
                    writeln!(out, "  {label}:")?;
                }
                let srcs: Vec<String> = inst.sources.iter().map(operand_text).collect();
                let dsts: Vec<String> = inst.destinations.iter().map(operand_text).collect();
                let mut notes = srcs.join(" ");
                if !dsts.is_empty() {
                    notes = format!("{notes} -> {}", dsts.join(" "));
                }
                let text = format!("i{:<4} {}", inst.inst, inst.text);
                if notes.trim().is_empty() {
                    writeln!(out, "    {text}")?;
                } else {
                    writeln!(out, "    {text:<52} ; {}", notes.trim_start())?;
                }
            }
        }
        writeln!(out, "\ntotal sources: {}", self.sources)?;
        writeln!(out, "total destinations: {}", self.destinations)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::lower;

    const LOOP: &str = r#"
.version 7.8
.target sm_70
.address_size 64
.visible .entry k(.param .u32 n, .param .u64 a)
{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<2>;
    ld.param.u32 %r1, [n];
    mov.u32 %r2, 0;
    mov.u32 %r3, 7;
LOOP:
    add.s32 %r4, %r2, %r3;
    mul.lo.s32 %r5, %r4, 3;
    add.s32 %r2, %r2, 1;
    setp.lt.s32 %p1, %r2, %r1;
    @%p1 bra LOOP;
    ld.param.u64 %rd1, [a];
    st.global.u32 [%rd1], %r5;
    ret;
}
"#;

    #[test]
    fn distances_follow_the_shortest_path_and_stop_at_redefinitions() {
        let p = lower(LOOP);
        let f = &p.functions[0];
        let d = ReuseDistances::compute(f);
        // i0 ld %r1: next read at the setp (i6), through i1..i6.
        assert_eq!(d.def_distances(InstId(0)), &[Some(6)]);
        // i3 add %r4 = %r2 + %r3: %r2 is read again at i5 (2 on); %r3 around the loop at
        // i3 again: i4..i7 then i3 is 5.
        assert_eq!(d.use_distances(InstId(3)), &[Some(2), Some(5)]);
        // %r4 is read by the very next instruction.
        assert_eq!(d.def_distances(InstId(3)), &[Some(1)]);
        // i5 add %r2 = %r2 + 1 reads and overwrites %r2: the source has no reuse; the new
        // value is read by the setp next.
        assert_eq!(d.use_distances(InstId(5)), &[None]);
        assert_eq!(d.def_distances(InstId(5)), &[Some(1)]);
        // %r5 (i4): on the exit path read by the store: i5 … i9 → 5; around the loop it
        // is overwritten first.
        assert_eq!(d.def_distances(InstId(4)), &[Some(5)]);
        // The store's reads are the last ones.
        assert_eq!(d.use_distances(InstId(9)), &[None, None]);
        // Predicates get no hint.
        assert_eq!(d.use_distances(InstId(7)), &[None]);
        assert_eq!(Hint::of(Some(8), 8), Hint::Near);
        assert_eq!(Hint::of(Some(9), 8), Hint::Far);
        assert_eq!(Hint::of(None, 8), Hint::Far);
    }

    #[test]
    fn report_histograms_count_every_general_register_operand() {
        let p = lower(LOOP);
        let r = ReuseDistanceReport::new(&p, &ReuseDistanceConfig { rthld: 2 });
        let f = &p.functions[0];
        let general = |regs: &[ir::RegId]| {
            regs.iter()
                .filter(|r| f.reg(**r).class != RegClass::Pred)
                .count() as u64
        };
        let srcs: u64 = (0..f.num_insts())
            .map(|i| general(f.uses(InstId::new(i))))
            .sum();
        assert_eq!(r.sources.total, srcs);
        assert_eq!(r.sources.counts.iter().sum::<u64>(), srcs);
        // Near with RTHLD 2: %r2 at i3 (2), %r4 at i4 (1)... and not %r3 (5).
        let i3 = &r.functions[0].instructions[3];
        assert_eq!(i3.sources[0].hint, Some(Hint::Near));
        assert_eq!(i3.sources[1].hint, Some(Hint::Far));
        let json = serde_json::to_string(&r).expect("json");
        assert!(json.contains("\"hint\":\"near\""));
    }
}

//! The allocator proper: values and their eligible reads (§4.2, §4.5), candidates and
//! their savings (Figures 6 and 9), the regions they would occupy, and the greedy
//! placement of Figure 7 with the LRF first (§4.6), partial ranges (§4.3) and read
//! operands (§4.4). See the module docs of [`super`] for the rules.

use std::collections::BTreeMap;

use ir::analysis::{BitSet, DefUseChains, DominatorTree};
use ir::{Function, InstId, RegId, RegisterEffects};

use super::{
    register_units, AllocationStats, Annotations, LrfMode, OrfLrfConfig, ReadFrom, WriteTo,
};
use crate::inst_info::{
    datapath, result_latency, Datapath, OperandRef, OperandSites, ResultLatency,
};
use crate::strands::Strands;
use crate::union_find::UnionFind;
use energy::gebhart::{AccessEnergy, Level};

/// Allocates the ORF and LRF of `f` (which should be register-allocated, see the module
/// docs) and returns a level for every register operand.
pub fn allocate(f: &Function, config: &OrfLrfConfig) -> Annotations {
    let strands = Strands::compute(f, &config.strands);
    let sites = OperandSites::new(f);
    let facts = Facts::new(f, &strands, &sites, config);
    let energy = AccessEnergy::new(&config.energy, config.orf_entries.max(1));
    let mut placer = Placer::new(&facts, config, energy);
    placer.run();
    let (reads, fills, writes, stats) = placer.finish();
    drop(facts);
    Annotations {
        sites,
        strands,
        reads,
        fills,
        writes,
        stats,
    }
}

/// Integer ALU arithmetic (moves and selects included): what the hardware runs as a pair
/// of 32-bit instructions on a 64-bit value's halves.
pub(super) fn is_integer_alu(op: &ir::Op) -> bool {
    use ir::ExecClass as E;
    matches!(
        ir::exec_class(op),
        E::IntSimple | E::IntAdd | E::IntMinMax | E::IntMul | E::IntMad
    )
}

/// Everything the allocator asks about the function, computed once.
pub(super) struct Facts<'a> {
    pub f: &'a Function,
    pub strands: &'a Strands,
    unit: Vec<Datapath>,
    /// Per instruction: integer ALU arithmetic, which the hardware runs on 32-bit halves
    /// of a 64-bit value (`split_64bit_integers`).
    integer: Vec<bool>,
    long: Vec<bool>,
    /// Per register: 32-bit registers it occupies (0 for predicates).
    units: Vec<u8>,
    /// Per register: must always be written to the MRF (a device function's `.reg`
    /// return value, read by the caller).
    pinned: Vec<bool>,
    use_inst: Vec<InstId>,
    use_reg: Vec<RegId>,
    use_op: Vec<OperandRef>,
    def_inst: Vec<InstId>,
    def_reg: Vec<RegId>,
    /// Per use: the def operands that reach it, and whether an undefined value may.
    reaching: Vec<Vec<u32>>,
    from_entry: Vec<bool>,
    /// Per def: the use operands it reaches.
    def_uses: Vec<Vec<u32>>,
    preds_in_strand: Vec<Vec<InstId>>,
    domtree: DominatorTree,
    block_of: Vec<u32>,
}

impl<'a> Facts<'a> {
    fn new(
        f: &'a Function,
        strands: &'a Strands,
        sites: &OperandSites,
        config: &OrfLrfConfig,
    ) -> Self {
        let n = f.num_insts();
        let du = DefUseChains::with_function(f);
        let mut use_inst = Vec::with_capacity(sites.num_uses());
        let mut use_reg = Vec::with_capacity(sites.num_uses());
        let mut use_op = Vec::with_capacity(sites.num_uses());
        let mut def_inst = Vec::with_capacity(sites.num_defs());
        let mut def_reg = Vec::with_capacity(sites.num_defs());
        for i in 0..n {
            let id = InstId::new(i);
            for (k, &r) in f.uses(id).iter().enumerate() {
                use_inst.push(id);
                use_reg.push(r);
                use_op.push(sites.uses(id)[k]);
            }
            for &r in f.defs(id) {
                def_inst.push(id);
                def_reg.push(r);
            }
        }
        let def_site = |inst: InstId, reg: RegId| -> Option<u32> {
            let k = f.defs(inst).iter().position(|&d| d == reg)?;
            Some((sites.first_def(inst) + k) as u32)
        };
        let mut reaching = Vec::with_capacity(use_inst.len());
        let mut from_entry = Vec::with_capacity(use_inst.len());
        for i in 0..n {
            let id = InstId::new(i);
            for (k, &r) in f.uses(id).iter().enumerate() {
                let chain = du.use_defs(id, k);
                reaching.push(chain.defs.iter().filter_map(|&d| def_site(d, r)).collect());
                from_entry.push(chain.from_entry);
            }
        }
        let mut def_uses = Vec::with_capacity(def_inst.len());
        for i in 0..n {
            let id = InstId::new(i);
            for k in 0..f.defs(id).len() {
                def_uses.push(
                    du.def_uses(id, k)
                        .iter()
                        .map(|u| (sites.first_use(u.inst) + u.operand as usize) as u32)
                        .collect(),
                );
            }
        }
        let mut preds_in_strand = vec![Vec::new(); n];
        for i in 0..n {
            for s in strands.successors_in_strand(f, InstId::new(i)) {
                preds_in_strand[s.index()].push(InstId::new(i));
            }
        }
        let mut pinned = vec![false; f.regs.len()];
        for p in &f.return_params {
            if let Some(r) = p.reg {
                pinned[r.index()] = true;
            }
        }
        let mut block_of = vec![u32::MAX; n];
        for (b, block) in f.blocks.iter().enumerate() {
            for i in block.start..block.end {
                block_of[i as usize] = b as u32;
            }
        }
        let shared_long = config.strands.shared_memory_is_long_latency;
        Facts {
            f,
            strands,
            unit: f.insts.iter().map(|i| datapath(&i.op)).collect(),
            integer: f.insts.iter().map(|i| is_integer_alu(&i.op)).collect(),
            long: f
                .insts
                .iter()
                .map(|i| result_latency(&i.op, shared_long) == ResultLatency::Long)
                .collect(),
            units: f.regs.iter().map(|r| register_units(r.class)).collect(),
            pinned,
            use_inst,
            use_reg,
            use_op,
            def_inst,
            def_reg,
            reaching,
            from_entry,
            def_uses,
            preds_in_strand,
            domtree: DominatorTree::with_cfg(f),
            block_of,
        }
    }

    fn strand(&self, inst: InstId) -> u32 {
        self.strands.strand_of(inst)
    }

    /// Instruction-level dominance: every path from the entry to `b` passes `a` first.
    fn dominates(&self, a: InstId, b: InstId) -> bool {
        let (ba, bb) = (self.block_of[a.index()], self.block_of[b.index()]);
        if ba == bb {
            a < b
        } else {
            self.domtree
                .strictly_dominates(ir::BlockId(ba), ir::BlockId(bb))
        }
    }
}

/// How an ORF copy of a register came to be: written by a definition of it, or loaded
/// by a read of it (§4.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Copy {
    Written,
    Loaded,
}

/// What a candidate is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Definitions in a strand and the reads they serve there (Figure 6).
    Value,
    /// A definition nobody reads (Figure 6 without reads).
    Dead,
    /// Reads of a value the strand does not produce, loaded by the first (Figure 9).
    ReadOperand,
}

#[derive(Clone, Debug)]
struct Candidate {
    kind: Kind,
    units: u8,
    /// The def operands of a `Dead` candidate (one); the reaching defs of the reads are
    /// derived for `Value`.
    dead_def: Option<u32>,
    /// The use operand that loads a `ReadOperand` candidate.
    loader: Option<u32>,
    /// Use operands that would read the ORF or LRF, in instruction order.
    reads: Vec<u32>,
}

/// One way to place a candidate: its reads, writers, region and savings.
struct Trial {
    reads: Vec<u32>,
    writers: Vec<u32>,
    region: Vec<u32>,
    savings: f64,
    slots: u32,
}

struct Placer<'f, 'a> {
    facts: &'f Facts<'a>,
    config: &'f OrfLrfConfig,
    energy: AccessEnergy,
    /// See [`Placer::invalid_reach`] (computed on demand).
    invalid_reach: BTreeMap<(u32, u32, Copy), BitSet<usize>>,
    orf: Vec<BitSet<usize>>,
    lrf: Vec<BitSet<usize>>,
    reads: Vec<ReadFrom>,
    fills: Vec<Option<u8>>,
    /// Per def operand: the ORF entry or LRF bank it writes, if allocated.
    def_level: Vec<Option<ReadFrom>>,
    stats: AllocationStats,
    fwd: Vec<u32>,
    bwd: Vec<u32>,
    stamp: u32,
}

impl<'f, 'a> Placer<'f, 'a> {
    fn new(facts: &'f Facts<'a>, config: &'f OrfLrfConfig, energy: AccessEnergy) -> Self {
        let n = facts.f.num_insts();
        let points = 2 * n;
        let reads = facts
            .use_reg
            .iter()
            .map(|r| {
                if facts.units[r.index()] == 0 {
                    ReadFrom::Pred
                } else {
                    ReadFrom::Mrf
                }
            })
            .collect();
        Placer {
            facts,
            config,
            energy,
            invalid_reach: BTreeMap::new(),
            orf: vec![BitSet::new_empty(points); usize::from(config.orf_entries)],
            lrf: vec![BitSet::new_empty(points); usize::from(config.lrf.banks())],
            reads,
            fills: vec![None; facts.use_inst.len()],
            def_level: vec![None; facts.def_inst.len()],
            stats: AllocationStats::default(),
            fwd: vec![0; n],
            bwd: vec![0; n],
            stamp: 0,
        }
    }

    /// The instructions that a path from `from` can reach with its ORF copy of `reg`
    /// invalid: the path crossed a strand boundary, or (for [`Copy::Loaded`]) passed a
    /// definition of `reg`, which the loaded copy does not follow. For [`Copy::Written`]
    /// a full redefinition starts another value, whose own check covers the rest of the
    /// path, so the search stops there.
    fn invalid_reach(&mut self, from: InstId, reg: RegId, copy: Copy) -> &BitSet<usize> {
        let facts = self.facts;
        self.invalid_reach
            .entry((from.0, reg.0, copy))
            .or_insert_with(|| {
                let f = facts.f;
                let n = f.num_insts();
                let defines = |x: InstId| f.defs(x).contains(&reg);
                // Whether the copy is invalid on the edges out of `x`, given it was on entry.
                let after = |x: InstId, invalid: bool| -> Option<bool> {
                    match copy {
                        Copy::Written if defines(x) && !f.defs_are_partial(x) => None,
                        Copy::Written => Some(invalid || facts.strands.ends_strand(x)),
                        Copy::Loaded => Some(invalid || facts.strands.ends_strand(x) || defines(x)),
                    }
                };
                let mut valid_seen = vec![false; n];
                let mut invalid = BitSet::new_empty(n);
                let mut work: Vec<(InstId, bool)> = Vec::new();
                // The copy starts valid after `from`, which writes (or loads) it.
                let start = match copy {
                    Copy::Written => Some(facts.strands.ends_strand(from)),
                    Copy::Loaded => after(from, false),
                };
                if let Some(out) = start {
                    work.extend(crate::strands::successors(f, from).map(|y| (y, out)));
                }
                while let Some((x, bad)) = work.pop() {
                    let first = if bad {
                        invalid.insert(x.index())
                    } else {
                        !std::mem::replace(&mut valid_seen[x.index()], true)
                    };
                    if first {
                        if let Some(out) = after(x, bad) {
                            work.extend(crate::strands::successors(f, x).map(|y| (y, out)));
                        }
                    }
                }
                invalid
            })
    }

    /// True if use `u` can be served from the ORF or LRF by the definitions reaching it.
    fn eligible(&mut self, u: usize) -> bool {
        let facts = self.facts;
        let reg = facts.use_reg[u];
        let inst = facts.use_inst[u];
        if facts.units[reg.index()] == 0
            || facts.pinned[reg.index()]
            || facts.from_entry[u]
            || facts.reaching[u].is_empty()
        {
            return false;
        }
        let strand = facts.strand(inst);
        for &d in &facts.reaching[u] {
            let di = facts.def_inst[d as usize];
            if facts.strand(di) != strand
                || facts.long[di.index()]
                || (!self.config.forward_branches
                    && facts.block_of[di.index()] != facts.block_of[inst.index()])
            {
                return false;
            }
        }
        let defs: Vec<InstId> = facts.reaching[u]
            .iter()
            .map(|&d| facts.def_inst[d as usize])
            .collect();
        defs.into_iter().all(|di| {
            !self
                .invalid_reach(di, reg, Copy::Written)
                .contains(inst.index())
        })
    }

    fn candidates(&mut self) -> Vec<Candidate> {
        let facts = self.facts;
        let mut out = Vec::new();
        // Webs: definitions that reach a common use are one value.
        let mut web = UnionFind::new(facts.def_inst.len());
        for reaching in &facts.reaching {
            for w in reaching.windows(2) {
                web.union(w[0], w[1]);
            }
        }
        let mut values: BTreeMap<(u32, u32), Vec<u32>> = BTreeMap::new();
        let mut ineligible: BTreeMap<(u32, u32), Vec<u32>> = BTreeMap::new();
        for u in 0..facts.use_inst.len() {
            let reg = facts.use_reg[u];
            if facts.units[reg.index()] == 0 {
                continue;
            }
            let strand = facts.strand(facts.use_inst[u]);
            if self.eligible(u) {
                let root = web.find(facts.reaching[u][0]);
                values.entry((strand, root)).or_default().push(u as u32);
            } else {
                ineligible
                    .entry((strand, reg.0))
                    .or_default()
                    .push(u as u32);
            }
        }
        for reads in values.into_values() {
            let units = facts.units[facts.use_reg[reads[0] as usize].index()];
            out.push(Candidate {
                kind: Kind::Value,
                units,
                dead_def: None,
                loader: None,
                reads,
            });
        }
        for d in 0..facts.def_inst.len() {
            let reg = facts.def_reg[d];
            let inst = facts.def_inst[d];
            if facts.def_uses[d].is_empty()
                && facts.units[reg.index()] > 0
                && !facts.pinned[reg.index()]
                && facts.unit[inst.index()] == Datapath::Alu
                && !facts.long[inst.index()]
            {
                out.push(Candidate {
                    kind: Kind::Dead,
                    units: facts.units[reg.index()],
                    dead_def: Some(d as u32),
                    loader: None,
                    reads: Vec::new(),
                });
            }
        }
        if self.config.read_operands && self.config.orf_entries > 0 {
            for ((_, reg), mut reads) in ineligible {
                while !reads.is_empty() {
                    let loader = reads.remove(0);
                    let li = facts.use_inst[loader as usize];
                    let mut followers = Vec::new();
                    let mut rest = Vec::new();
                    for &u in &reads {
                        if self.follows(li, facts.use_inst[u as usize], RegId(reg)) {
                            followers.push(u);
                        } else {
                            rest.push(u);
                        }
                    }
                    if !followers.is_empty() {
                        out.push(Candidate {
                            kind: Kind::ReadOperand,
                            units: facts.units[reg as usize],
                            dead_def: None,
                            loader: Some(loader),
                            reads: followers,
                        });
                    }
                    reads = rest;
                }
            }
        }
        out
    }

    /// True if a read at `to` can use the ORF copy that a read of `reg` at `from` loads:
    /// every path to `to` passes `from`, and none from there carries the copy across a
    /// strand boundary or a definition of `reg`.
    fn follows(&mut self, from: InstId, to: InstId, reg: RegId) -> bool {
        let facts = self.facts;
        from != to
            && facts.dominates(from, to)
            && (self.config.forward_branches
                || facts.block_of[from.index()] == facts.block_of[to.index()])
            && !self
                .invalid_reach(from, reg, Copy::Loaded)
                .contains(to.index())
    }

    /// The points (`2i` read, `2i + 1` write of instruction `i`) on paths inside the strand
    /// from the writes at `writers` to the reads at `readers`.
    fn region(&mut self, writers: &[InstId], readers: &[InstId]) -> Vec<u32> {
        let facts = self.facts;
        self.stamp += 1;
        let stamp = self.stamp;
        let mut work: Vec<InstId> = Vec::new();
        let mut reached = Vec::new();
        for &w in writers {
            work.extend(facts.strands.successors_in_strand(facts.f, w));
        }
        while let Some(x) = work.pop() {
            if self.fwd[x.index()] != stamp {
                self.fwd[x.index()] = stamp;
                reached.push(x);
                work.extend(facts.strands.successors_in_strand(facts.f, x));
            }
        }
        for &r in readers {
            work.extend(facts.preds_in_strand[r.index()].iter().copied());
        }
        while let Some(x) = work.pop() {
            if self.bwd[x.index()] != stamp {
                self.bwd[x.index()] = stamp;
                work.extend(facts.preds_in_strand[x.index()].iter().copied());
            }
        }
        let mut points = Vec::new();
        reached.extend(writers.iter().copied());
        reached.sort_unstable();
        reached.dedup();
        for x in reached {
            let in_fwd = self.fwd[x.index()] == stamp;
            let in_bwd = self.bwd[x.index()] == stamp;
            if in_fwd && (in_bwd || readers.contains(&x)) {
                points.push(2 * x.0);
            }
            if (in_fwd || writers.contains(&x)) && in_bwd {
                points.push(2 * x.0 + 1);
            }
        }
        if readers.is_empty() {
            points.extend(writers.iter().map(|w| 2 * w.0 + 1));
        }
        points.sort_unstable();
        points.dedup();
        points
    }

    /// The candidate's first `k` reads placed at `level`.
    fn trial(&mut self, c: &Candidate, k: usize, level: Level) -> Trial {
        let facts = self.facts;
        let e = self.energy;
        let units = f64::from(c.units);
        let reads: Vec<u32> = c.reads[..k].to_vec();
        let read_savings: f64 = reads
            .iter()
            .map(|&u| {
                let unit = facts.unit[facts.use_inst[u as usize].index()];
                units * (e.read(Level::Mrf, unit) - e.read(level, unit))
            })
            .sum();
        let (writers, write_points, savings) = match c.kind {
            Kind::ReadOperand => {
                let loader = c.loader.unwrap_or_default() as usize;
                let li = facts.use_inst[loader];
                let cost = units * e.write(level, facts.unit[li.index()]);
                (Vec::new(), vec![li], read_savings - cost)
            }
            Kind::Value | Kind::Dead => {
                let writers = self.writers(c, &reads);
                let mut savings = read_savings;
                for &d in &writers {
                    let unit = facts.unit[facts.def_inst[d as usize].index()];
                    savings -= units * e.write(level, unit);
                    let all_served = facts.def_uses[d as usize]
                        .iter()
                        .all(|u| reads.binary_search(u).is_ok());
                    if all_served && !facts.pinned[facts.def_reg[d as usize].index()] {
                        savings += units * e.write(Level::Mrf, unit);
                    }
                }
                let points = writers
                    .iter()
                    .map(|&d| facts.def_inst[d as usize])
                    .collect();
                (writers, points, savings)
            }
        };
        let read_insts: Vec<InstId> = reads.iter().map(|&u| facts.use_inst[u as usize]).collect();
        let region = self.region(&write_points, &read_insts);
        let mut insts: Vec<u32> = region.iter().map(|p| p / 2).collect();
        insts.dedup();
        Trial {
            reads,
            writers,
            slots: (insts.len() as u32).saturating_sub(1).max(1),
            region,
            savings,
        }
    }

    /// The def operands that write a `Value` or `Dead` candidate serving `reads`: every
    /// definition that reaches one of them (all must write the entry, Figure 10(c)).
    fn writers(&self, c: &Candidate, reads: &[u32]) -> Vec<u32> {
        let facts = self.facts;
        let mut writers: Vec<u32> = match c.dead_def {
            Some(d) => vec![d],
            None => reads
                .iter()
                .flat_map(|&u| facts.reaching[u as usize].iter().copied())
                .collect(),
        };
        writers.sort_unstable();
        writers.dedup();
        writers
    }

    /// The LRF bank the candidate would use, if it may use the LRF at all.
    fn lrf_banks(&self, c: &Candidate) -> Vec<u8> {
        let facts = self.facts;
        if self.config.lrf == LrfMode::None
            || c.kind == Kind::ReadOperand
            || c.units == 0
            || c.units > self.config.lrf_max_units()
        {
            return Vec::new();
        }
        // Only the private ALU reaches the LRF; a 64-bit value enters it as its halves
        // only if every instruction that writes or reads it works on halves.
        let ok = |i: InstId| {
            facts.unit[i.index()].is_private() && (c.units == 1 || facts.integer[i.index()])
        };
        let private_reads = c.reads.iter().all(|&u| ok(facts.use_inst[u as usize]));
        let private_writes = self
            .writers(c, &c.reads)
            .iter()
            .all(|&d| ok(facts.def_inst[d as usize]));
        if !private_reads || !private_writes {
            return Vec::new();
        }
        match self.config.lrf {
            LrfMode::None => Vec::new(),
            LrfMode::Unified => vec![0],
            LrfMode::Split => {
                let slots: Vec<Option<u8>> = c
                    .reads
                    .iter()
                    .map(|&u| facts.use_op[u as usize].slot())
                    .collect();
                match slots.first() {
                    None => vec![0, 1, 2],
                    Some(&Some(s)) if s < 3 && slots.iter().all(|&x| x == Some(s)) => vec![s],
                    _ => Vec::new(),
                }
            }
        }
    }

    fn free(entries: &[BitSet<usize>], first: usize, units: usize, region: &[u32]) -> bool {
        (first..first + units).all(|e| region.iter().all(|&p| !entries[e].contains(p as usize)))
    }

    fn take(entries: &mut [BitSet<usize>], first: usize, units: usize, region: &[u32]) {
        for entry in &mut entries[first..first + units] {
            for &p in region {
                entry.insert(p as usize);
            }
        }
    }

    fn commit(&mut self, c: &Candidate, t: &Trial, at: ReadFrom) {
        for &u in &t.reads {
            self.reads[u as usize] = at;
        }
        for &d in &t.writers {
            self.def_level[d as usize] = Some(at);
        }
        if let (Some(loader), ReadFrom::Orf { entry }) = (c.loader, at) {
            self.fills[loader as usize] = Some(entry);
        }
    }

    fn run(&mut self) {
        let facts = self.facts;
        let threshold = self.config.energy.threshold_pj;
        let candidates = self.candidates();
        let strand_of = |c: &Candidate| -> u32 {
            let inst = match (c.dead_def, c.loader, c.reads.first()) {
                (Some(d), _, _) => facts.def_inst[d as usize],
                (_, Some(l), _) => facts.use_inst[l as usize],
                (_, _, Some(&u)) => facts.use_inst[u as usize],
                _ => InstId(0),
            };
            facts.strand(inst)
        };
        let mut placed = vec![false; candidates.len()];

        // §4.6: the LRF first, full ranges only.
        let mut order: Vec<(u32, f64, usize)> = Vec::new();
        let mut lrf_trials: Vec<Option<Trial>> = Vec::new();
        for (i, c) in candidates.iter().enumerate() {
            if self.lrf_banks(c).is_empty() {
                lrf_trials.push(None);
                continue;
            }
            let t = self.trial(c, c.reads.len(), Level::Lrf);
            if t.savings > threshold {
                order.push((strand_of(c), t.savings / f64::from(t.slots), i));
            }
            lrf_trials.push(Some(t));
        }
        sort_by_priority(&mut order);
        for &(_, _, i) in &order {
            let c = &candidates[i];
            let Some(t) = lrf_trials[i].take() else {
                continue;
            };
            let bank = self
                .lrf_banks(c)
                .into_iter()
                .find(|&b| Self::free(&self.lrf, usize::from(b), 1, &t.region));
            if let Some(bank) = bank {
                Self::take(&mut self.lrf, usize::from(bank), 1, &t.region);
                self.commit(c, &t, ReadFrom::Lrf { bank });
                placed[i] = true;
                if c.kind == Kind::Dead {
                    self.stats.dead_values += 1;
                } else {
                    self.stats.lrf_values += 1;
                }
            }
        }

        // §4.2–4.5: the ORF, with partial ranges.
        let n_orf = usize::from(self.config.orf_entries);
        let mut order = Vec::new();
        for (i, c) in candidates.iter().enumerate() {
            if placed[i] || n_orf < usize::from(c.units) {
                continue;
            }
            let t = self.trial(c, c.reads.len(), Level::Orf);
            if t.savings > threshold {
                order.push((strand_of(c), t.savings / f64::from(t.slots), i));
            }
        }
        sort_by_priority(&mut order);
        for &(_, _, i) in &order {
            let c = &candidates[i];
            let units = usize::from(c.units);
            let mut k = c.reads.len();
            loop {
                let t = self.trial(c, k, Level::Orf);
                if t.savings <= threshold {
                    self.stats.not_placed += 1;
                    break;
                }
                let entry =
                    (0..=n_orf - units).find(|&e| Self::free(&self.orf, e, units, &t.region));
                if let Some(entry) = entry {
                    Self::take(&mut self.orf, entry, units, &t.region);
                    self.commit(c, &t, ReadFrom::Orf { entry: entry as u8 });
                    match c.kind {
                        Kind::Dead => self.stats.dead_values += 1,
                        Kind::ReadOperand => self.stats.read_operand_groups += 1,
                        Kind::Value if k < c.reads.len() => self.stats.orf_partial += 1,
                        Kind::Value => self.stats.orf_full += 1,
                    }
                    break;
                }
                if !self.config.partial_range || k <= 1 {
                    self.stats.not_placed += 1;
                    break;
                }
                k -= 1;
            }
        }
    }

    /// Reads, fills, writes and statistics of the placement.
    fn finish(
        self,
    ) -> (
        Vec<ReadFrom>,
        Vec<Option<u8>>,
        Vec<WriteTo>,
        AllocationStats,
    ) {
        let facts = self.facts;
        let writes = (0..facts.def_inst.len())
            .map(|d| {
                let reg = facts.def_reg[d];
                if facts.units[reg.index()] == 0 {
                    return WriteTo {
                        pred: true,
                        ..WriteTo::default()
                    };
                }
                let mut w = WriteTo {
                    mrf: true,
                    ..WriteTo::default()
                };
                match self.def_level[d] {
                    Some(ReadFrom::Orf { entry }) => w.orf = Some(entry),
                    Some(ReadFrom::Lrf { bank }) => w.lrf = Some(bank),
                    _ => return w,
                }
                w.mrf = facts.pinned[reg.index()]
                    || facts.def_uses[d]
                        .iter()
                        .any(|&u| self.reads[u as usize] == ReadFrom::Mrf);
                w
            })
            .collect();
        (self.reads, self.fills, writes, self.stats)
    }
}

/// Strand by strand, highest savings per slot first; ties in candidate order.
fn sort_by_priority(order: &mut [(u32, f64, usize)]) {
    order.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)).then(a.2.cmp(&b.2)));
}

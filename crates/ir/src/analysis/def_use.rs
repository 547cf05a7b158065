//! Reaching definitions, and the use-def and def-use chains built from them.
//!
//! A definition (one register written by one instruction) reaches a point if some path
//! from it to the point has no other full definition of the register; a partial
//! (guarded) definition generates its own definition but kills nothing. This is the
//! classic forward may-analysis (Aho, Sethi and Ullman §10.5), solved by
//! [`super::dataflow`] over sets of definition *sites*. Every register also has a pseudo
//! definition at the function entry; when it reaches a use, the register may be read
//! before anything wrote it on some path (undefined, or a kernel parameter loaded
//! elsewhere).
//!
//! Chains are stored flat: for each use operand (an entry of `uses(inst)`) the defining
//! instructions that reach it, increasing, plus the from-entry bit; for each def operand
//! (an entry of `defs(inst)`) the use operands it reaches, in order.

use std::fmt::Write;

use crate::entity::{BlockId, InstId, RegId};
use crate::graph::RegisterEffects;

use super::bitset::BitSet;
use super::dataflow::{solve, Analysis, Direction, ResultsVisitor};
use super::Namer;

/// The reaching-definitions dataflow problem over definition sites. Site `r` for
/// `r < num_regs` is register `r`'s pseudo definition at the entry; the real sites follow,
/// one per def operand in instruction order.
#[derive(Clone, Debug)]
pub struct ReachingDefinitions {
    num_regs: usize,
    /// Per instruction, the first of its real sites (relative to `num_regs`).
    def_start: Vec<u32>,
    /// Per register, every site that defines it (its pseudo site first).
    sites_of_reg_start: Vec<u32>,
    sites_of_reg: Vec<u32>,
}

impl ReachingDefinitions {
    pub fn new<G: RegisterEffects + ?Sized>(g: &G) -> Self {
        let num_regs = g.num_regs();
        let mut def_start = Vec::with_capacity(g.num_insts() + 1);
        def_start.push(0u32);
        let mut count = vec![1u32; num_regs];
        for i in 0..g.num_insts() {
            let defs = g.defs(InstId::new(i));
            for d in defs {
                count[d.index()] += 1;
            }
            def_start.push(def_start[i] + defs.len() as u32);
        }
        let mut sites_of_reg_start = vec![0u32; num_regs + 1];
        for r in 0..num_regs {
            sites_of_reg_start[r + 1] = sites_of_reg_start[r] + count[r];
        }
        let mut fill: Vec<u32> = sites_of_reg_start[..num_regs].to_vec();
        let mut sites_of_reg = vec![0u32; sites_of_reg_start[num_regs] as usize];
        for r in 0..num_regs {
            sites_of_reg[fill[r] as usize] = r as u32;
            fill[r] += 1;
        }
        for (i, &first) in def_start[..g.num_insts()].iter().enumerate() {
            for (k, d) in g.defs(InstId::new(i)).iter().enumerate() {
                let site = (num_regs as u32) + first + k as u32;
                sites_of_reg[fill[d.index()] as usize] = site;
                fill[d.index()] += 1;
            }
        }
        ReachingDefinitions {
            num_regs,
            def_start,
            sites_of_reg_start,
            sites_of_reg,
        }
    }

    /// Number of sites: pseudo entry definitions plus def operands.
    pub fn num_sites(&self) -> usize {
        self.num_regs + *self.def_start.last().unwrap_or(&0) as usize
    }

    /// The site of def operand `operand` of `inst`.
    pub fn site(&self, inst: InstId, operand: usize) -> usize {
        self.num_regs + self.def_start[inst.index()] as usize + operand
    }

    /// Every site defining `reg`: its entry pseudo site, then the real ones in instruction
    /// order.
    pub fn sites_of_reg(&self, reg: RegId) -> &[u32] {
        let r = reg.index();
        &self.sites_of_reg
            [self.sites_of_reg_start[r] as usize..self.sites_of_reg_start[r + 1] as usize]
    }

    /// True if `site` is a register's pseudo definition at the function entry.
    pub fn is_entry_site(&self, site: usize) -> bool {
        site < self.num_regs
    }
}

impl<G: RegisterEffects + ?Sized> Analysis<G> for ReachingDefinitions {
    type Domain = BitSet;
    const DIRECTION: Direction = Direction::Forward;

    fn bottom_value(&self, _g: &G) -> BitSet {
        BitSet::new_empty(self.num_sites())
    }

    fn initialize_boundary(&self, _g: &G, state: &mut BitSet) {
        for r in 0..self.num_regs {
            state.insert(r);
        }
    }

    #[inline]
    fn apply_inst_effect(&self, g: &G, state: &mut BitSet, inst: InstId) {
        let defs = g.defs(inst);
        if !g.defs_are_partial(inst) {
            for &d in defs {
                for &site in self.sites_of_reg(d) {
                    state.remove(site as usize);
                }
            }
        }
        let first = self.site(inst, 0);
        for k in 0..defs.len() {
            state.insert(first + k);
        }
    }
}

/// A use operand: entry `operand` of `uses(inst)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct UseSite {
    pub inst: InstId,
    pub operand: u32,
}

/// The definitions reaching one use operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UseDefChain<'a> {
    /// Instructions whose write of the register reaches the use, increasing.
    pub defs: &'a [InstId],
    /// True if some path from the entry reaches the use without writing the register.
    pub from_entry: bool,
}

/// Use-def and def-use chains of a function.
#[derive(Clone, Debug, Default)]
pub struct DefUseChains {
    valid: bool,
    /// Per instruction, the first of its use operands, and of its def operands, in the
    /// flat numbering of all operands.
    use_start: Vec<u32>,
    def_start: Vec<u32>,
    use_defs_start: Vec<u32>,
    use_defs: Vec<InstId>,
    use_from_entry: BitSet,
    def_uses_start: Vec<u32>,
    def_uses: Vec<UseSite>,
}

impl DefUseChains {
    /// Empty, invalid chains; [`DefUseChains::compute`] fills them.
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_function<G: RegisterEffects + ?Sized>(g: &G) -> Self {
        let mut chains = Self::new();
        chains.compute(g);
        chains
    }

    pub fn compute<G: RegisterEffects + ?Sized>(&mut self, g: &G) {
        let analysis = ReachingDefinitions::new(g);
        let results = solve(analysis, g);
        let analysis = results.analysis();

        let mut use_start = Vec::with_capacity(g.num_insts() + 1);
        use_start.push(0u32);
        for i in 0..g.num_insts() {
            use_start.push(use_start[i] + g.uses(InstId::new(i)).len() as u32);
        }
        let num_uses = use_start[g.num_insts()] as usize;

        let mut collector = ChainCollector {
            g,
            analysis,
            use_start: &use_start,
            pairs: Vec::new(),
            from_entry: BitSet::new_empty(num_uses),
        };
        let mut state = BitSet::new_empty(analysis.num_sites());
        for b in 0..g.num_blocks() {
            results.visit_block(g, BlockId::new(b), &mut state, &mut collector);
        }
        let ChainCollector {
            mut pairs,
            from_entry,
            ..
        } = collector;

        // Site numbers are in instruction order, so sorting by (use, site) lists each use's
        // defining instructions increasing.
        pairs.sort_unstable();
        let num_real_sites = analysis.num_sites() - g.num_regs();
        let site_inst: Vec<InstId> = (0..g.num_insts())
            .flat_map(|i| std::iter::repeat_n(InstId::new(i), g.defs(InstId::new(i)).len()))
            .collect();
        let mut use_defs_start = vec![0u32; num_uses + 1];
        let mut use_defs = Vec::with_capacity(pairs.len());
        let mut use_index = 0;
        for &(u, site) in &pairs {
            while use_index < u as usize {
                use_index += 1;
                use_defs_start[use_index] = use_defs.len() as u32;
            }
            let inst = site_inst[site as usize];
            if use_defs.len() as u32 == use_defs_start[use_index] || use_defs.last() != Some(&inst)
            {
                use_defs.push(inst);
            }
        }
        while use_index < num_uses {
            use_index += 1;
            use_defs_start[use_index] = use_defs.len() as u32;
        }

        let use_site_of: Vec<UseSite> = (0..g.num_insts())
            .flat_map(|i| {
                (0..g.uses(InstId::new(i)).len()).map(move |k| UseSite {
                    inst: InstId::new(i),
                    operand: k as u32,
                })
            })
            .collect();
        let mut by_site: Vec<(u32, u32)> = pairs.iter().map(|&(u, s)| (s, u)).collect();
        by_site.sort_unstable();
        let mut def_uses_start = vec![0u32; num_real_sites + 1];
        for &(s, _) in &by_site {
            def_uses_start[s as usize + 1] += 1;
        }
        for s in 0..num_real_sites {
            def_uses_start[s + 1] += def_uses_start[s];
        }
        let def_uses = by_site
            .iter()
            .map(|&(_, u)| use_site_of[u as usize])
            .collect();

        self.def_start = analysis.def_start.clone();
        self.use_start = use_start;
        self.use_defs_start = use_defs_start;
        self.use_defs = use_defs;
        self.use_from_entry = from_entry;
        self.def_uses_start = def_uses_start;
        self.def_uses = def_uses;
        self.valid = true;
    }

    pub fn clear(&mut self) {
        *self = Self::default();
    }

    pub fn is_valid(&self) -> bool {
        self.valid
    }

    /// The definitions reaching use operand `operand` of `inst`.
    pub fn use_defs(&self, inst: InstId, operand: usize) -> UseDefChain<'_> {
        let u = self.use_start[inst.index()] as usize + operand;
        debug_assert!(u < self.use_start[inst.index() + 1] as usize);
        UseDefChain {
            defs: &self.use_defs
                [self.use_defs_start[u] as usize..self.use_defs_start[u + 1] as usize],
            from_entry: self.use_from_entry.contains(u),
        }
    }

    /// The use operands that def operand `operand` of `inst` reaches, in instruction order.
    pub fn def_uses(&self, inst: InstId, operand: usize) -> &[UseSite] {
        let s = self.def_start[inst.index()] as usize + operand;
        debug_assert!(s < self.def_start[inst.index() + 1] as usize);
        &self.def_uses[self.def_uses_start[s] as usize..self.def_uses_start[s + 1] as usize]
    }

    /// One line per instruction: each use with the definitions reaching it (`entry` for
    /// the pseudo definition), each def with the uses it reaches (`inst:operand`).
    pub fn dump<G: RegisterEffects + ?Sized>(&self, g: &G, names: &Namer) -> String {
        let mut out = String::from("def-use:\n");
        for b in 0..g.num_blocks() {
            for &inst in g.block_insts(BlockId::new(b)) {
                let mut parts = Vec::new();
                for (k, &r) in g.uses(inst).iter().enumerate() {
                    let chain = self.use_defs(inst, k);
                    let mut defs: Vec<String> = Vec::new();
                    if chain.from_entry {
                        defs.push("entry".to_string());
                    }
                    defs.extend(chain.defs.iter().map(|&d| (names.inst)(d)));
                    parts.push(format!("{}<-[{}]", (names.reg)(r), defs.join(" ")));
                }
                for (k, &r) in g.defs(inst).iter().enumerate() {
                    let uses: Vec<String> = self
                        .def_uses(inst, k)
                        .iter()
                        .map(|u| format!("{}:{}", (names.inst)(u.inst), u.operand))
                        .collect();
                    parts.push(format!("{}->[{}]", (names.reg)(r), uses.join(" ")));
                }
                writeln!(out, "  {}: {}", (names.inst)(inst), parts.join(" "))
                    .expect("writing to a String cannot fail");
            }
        }
        out
    }
}

/// Records, before each instruction, which sites of each used register are live.
struct ChainCollector<'a, G: ?Sized> {
    g: &'a G,
    analysis: &'a ReachingDefinitions,
    use_start: &'a [u32],
    /// (flat use operand, real site relative to the first real site).
    pairs: Vec<(u32, u32)>,
    from_entry: BitSet,
}

impl<G: RegisterEffects + ?Sized> ResultsVisitor<BitSet> for ChainCollector<'_, G> {
    fn visit_before_inst(&mut self, inst: InstId, _index: usize, reaching: &BitSet) {
        let num_regs = self.analysis.num_regs;
        let first_use = self.use_start[inst.index()];
        for (k, &r) in self.g.uses(inst).iter().enumerate() {
            let u = first_use + k as u32;
            for &site in self.analysis.sites_of_reg(r) {
                if !reaching.contains(site as usize) {
                    continue;
                }
                if self.analysis.is_entry_site(site as usize) {
                    self.from_entry.insert(u as usize);
                } else {
                    self.pairs.push((u, site - num_regs as u32));
                }
            }
        }
    }
}

//! The report of `--pass ltrf`: per function the intervals, their sizes and working sets,
//! the bank-conflict histograms before and after renumbering, and what the checker proved;
//! as text ([`std::fmt::Display`]) and as JSON (serde).

use std::fmt;

use ir::{BlockId, ControlFlowGraph, Function, InstId, Program, RegisterEffects};
use serde::Serialize;

use crate::regalloc::Allocation;

use super::banks::{Banks, ConflictHistogram};
use super::checker::RenumberCheck;
use super::intervals::{IntervalKind, Piece, RegisterIntervals};
use super::numbering::CellView;
use super::renumber::{RenumberStats, Renumbering};
use super::LtrfConfig;

/// Average, minimum and maximum of a list of counts (all 0 for an empty list).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Summary {
    pub avg: f64,
    pub min: u32,
    pub max: u32,
}

impl Summary {
    pub fn of(values: impl IntoIterator<Item = u32>) -> Summary {
        let (mut n, mut sum, mut min, mut max) = (0u64, 0u64, u32::MAX, 0u32);
        for v in values {
            n += 1;
            sum += u64::from(v);
            min = min.min(v);
            max = max.max(v);
        }
        if n == 0 {
            return Summary::default();
        }
        Summary {
            avg: sum as f64 / n as f64,
            min,
            max,
        }
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "avg {:.1}, min {}, max {}", self.avg, self.min, self.max)
    }
}

/// One register-interval in the report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IntervalReport {
    pub id: u32,
    /// Where the interval starts (its prefetch point): block name, and `+k` when it starts
    /// `k` instructions into the block.
    pub header: String,
    /// The first instruction (`None` for an interval of one empty block).
    pub first_inst: Option<u32>,
    pub blocks: u32,
    pub instructions: u32,
    pub kind: IntervalKind,
    /// The prefetch bit-vector before renumbering, as register numbers.
    pub working_set: Vec<u32>,
    pub working_set_after: Vec<u32>,
    pub conflicts_before: u32,
    pub conflicts_after: u32,
}

/// One instruction of the listing: its interval and the registers it touches.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ListingLine {
    pub inst: u32,
    /// The label of the block this instruction starts, if it starts one.
    pub block: Option<String>,
    pub interval: u32,
    /// True for the first instruction of an interval's header: where the prefetch is.
    pub prefetch: bool,
    pub text: String,
    pub registers: Vec<u32>,
    pub registers_after: Vec<u32>,
}

/// The pass's results for one function.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FunctionLtrfReport {
    pub name: String,
    /// Registers per thread (32-bit) of the numbering the intervals were formed on.
    pub registers: u32,
    /// Registers per thread after renumbering (never more).
    pub registers_after: u32,
    pub instructions: u32,
    /// Register-intervals after pass 2.
    pub intervals: u32,
    pub pass1_intervals: u32,
    pub pass2_rounds: u32,
    pub call_intervals: u32,
    /// Intervals of a single instruction wider than `N`.
    pub oversized_intervals: u32,
    /// Intervals with a non-empty working set: the prefetches the histograms count.
    pub prefetching_intervals: u32,
    /// Static instructions per interval.
    pub instructions_per_interval: Summary,
    /// Working-set sizes (registers prefetched), before and after renumbering.
    pub working_set: Summary,
    pub working_set_after: Summary,
    /// Bank conflicts per prefetching interval: how many have 0, 1, 2, 3+.
    pub conflicts_before: ConflictHistogram,
    pub conflicts_after: ConflictHistogram,
    pub conflict_free_fraction_before: f64,
    pub conflict_free_fraction_after: f64,
    pub max_conflicts_before: u32,
    pub max_conflicts_after: u32,
    pub renumbering: RenumberStats,
    pub check: RenumberCheck,
    pub interval_details: Vec<IntervalReport>,
    pub listing: Vec<ListingLine>,
}

/// The report of one program.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LtrfReport {
    pub file: String,
    pub config: LtrfConfig,
    /// How registers map to banks, in words.
    pub bank_rule: String,
    pub kernels: Vec<FunctionLtrfReport>,
    pub device_functions: Vec<FunctionLtrfReport>,
}

fn header_name(func: &Function, piece: Piece) -> String {
    let block = ir::print::block_name(func, piece.block);
    if piece.start == 0 {
        block
    } else {
        format!("{block}+{}", piece.start)
    }
}

#[allow(clippy::too_many_arguments)]
pub(super) fn function_report(
    program: Option<&Program>,
    func: &Function,
    before: &CellView<'_>,
    after: &CellView<'_>,
    intervals: &RegisterIntervals,
    numbering: &Allocation,
    renumbering: &Renumbering,
    check: RenumberCheck,
    banks: Banks,
) -> FunctionLtrfReport {
    let mut details = Vec::with_capacity(intervals.len());
    let (mut hist_before, mut hist_after) =
        (ConflictHistogram::default(), ConflictHistogram::default());
    let (mut max_before, mut max_after) = (0, 0);
    for id in intervals.ids() {
        let interval = intervals.interval(id);
        let insts: Vec<InstId> = intervals.insts(before, id).collect();
        let mut ws_after: Vec<u32> = insts
            .iter()
            .flat_map(|&i| after.touched(i).iter().copied())
            .collect();
        ws_after.sort_unstable();
        ws_after.dedup();
        let cb = banks.conflicts(&interval.working_set);
        let ca = banks.conflicts(&ws_after);
        if !interval.working_set.is_empty() {
            hist_before.add(cb);
            hist_after.add(ca);
            max_before = max_before.max(cb);
            max_after = max_after.max(ca);
        }
        let mut blocks: Vec<_> = interval.pieces.iter().map(|p| p.block).collect();
        blocks.sort_unstable();
        blocks.dedup();
        details.push(IntervalReport {
            id: id.0,
            header: header_name(func, interval.header()),
            first_inst: insts.first().map(|i| i.0),
            blocks: blocks.len() as u32,
            instructions: interval.instructions,
            kind: interval.kind,
            working_set: interval.working_set.clone(),
            working_set_after: ws_after,
            conflicts_before: cb,
            conflicts_after: ca,
        });
    }
    let mut listing = Vec::with_capacity(func.num_insts());
    let headers: Vec<Option<u32>> = details.iter().map(|d| d.first_inst).collect();
    for b in 0..func.num_blocks() {
        let block = BlockId::new(b);
        for (k, &inst) in func.block_insts(block).iter().enumerate() {
            let interval = intervals.interval_of(inst).0;
            listing.push(ListingLine {
                inst: inst.0,
                block: (k == 0).then(|| ir::print::block_name(func, block)),
                interval,
                prefetch: headers[interval as usize] == Some(inst.0),
                text: ir::print::inst_to_string(program, func, func.inst(inst)),
                registers: before.touched(inst).to_vec(),
                registers_after: after.touched(inst).to_vec(),
            });
        }
    }
    let count = |k: IntervalKind| details.iter().filter(|d| d.kind == k).count() as u32;
    FunctionLtrfReport {
        name: func.name.clone(),
        registers: numbering.registers_used,
        registers_after: renumbering.allocation.registers_used,
        instructions: func.num_insts() as u32,
        intervals: intervals.len() as u32,
        pass1_intervals: intervals.pass1_intervals,
        pass2_rounds: intervals.pass2_rounds,
        call_intervals: count(IntervalKind::Call),
        oversized_intervals: count(IntervalKind::Oversized),
        prefetching_intervals: hist_before.total(),
        instructions_per_interval: Summary::of(details.iter().map(|d| d.instructions)),
        working_set: Summary::of(details.iter().map(|d| d.working_set.len() as u32)),
        working_set_after: Summary::of(details.iter().map(|d| d.working_set_after.len() as u32)),
        conflicts_before: hist_before,
        conflicts_after: hist_after,
        conflict_free_fraction_before: hist_before.conflict_free_fraction(),
        conflict_free_fraction_after: hist_after.conflict_free_fraction(),
        max_conflicts_before: max_before,
        max_conflicts_after: max_after,
        renumbering: renumbering.stats,
        check,
        interval_details: details,
        listing,
    }
}

/// `[R0 R1 R4]`
struct Registers<'a>(&'a [u32]);

impl fmt::Display for Registers<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (k, r) in self.0.iter().enumerate() {
            if k > 0 {
                f.write_str(" ")?;
            }
            write!(f, "R{r}")?;
        }
        f.write_str("]")
    }
}

fn percent(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

impl fmt::Display for FunctionLtrfReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{}: {} registers, {} instructions, {} intervals (pass 1: {}, pass 2 rounds: {}; {} call, {} oversized)",
            self.name,
            self.registers,
            self.instructions,
            self.intervals,
            self.pass1_intervals,
            self.pass2_rounds,
            self.call_intervals,
            self.oversized_intervals,
        )?;
        writeln!(
            f,
            "  instructions per interval: {}",
            self.instructions_per_interval
        )?;
        writeln!(
            f,
            "  working set: {} (after renumbering: {})",
            self.working_set, self.working_set_after
        )?;
        writeln!(
            f,
            "  bank conflicts over {} prefetching intervals: before {} ({} conflict-free, max {}), after {} ({} conflict-free, max {})",
            self.prefetching_intervals,
            self.conflicts_before,
            percent(self.conflict_free_fraction_before),
            self.max_conflicts_before,
            self.conflicts_after,
            percent(self.conflict_free_fraction_after),
            self.max_conflicts_after,
        )?;
        let r = &self.renumbering;
        writeln!(
            f,
            "  renumbering: {} live ranges, {} ICG edges, {} improper colours, {} kept for lack of room; {} local moves from the {} assignment; {} moved; {} registers after; checker passed ({} registers, {} intervals)",
            r.live_ranges,
            r.icg_edges,
            r.improper_colours,
            r.kept_for_lack_of_room,
            r.local_moves,
            match r.start {
                super::renumber::RenumberStart::Colouring => "colouring's",
                super::renumber::RenumberStart::Permutation => "register permutation's",
                super::renumber::RenumberStart::Original => "original",
            },
            r.moved,
            self.registers_after,
            self.check.registers_checked,
            self.check.intervals_checked,
        )?;
        for d in &self.interval_details {
            let kind = match d.kind {
                IntervalKind::Normal => "",
                IntervalKind::Call => " call",
                IntervalKind::Oversized => " oversized",
            };
            writeln!(
                f,
                "  I{} at {}{kind}: {} instructions in {} blocks, working set {} {} conflicts -> {} {} conflicts",
                d.id,
                d.header,
                d.instructions,
                d.blocks,
                Registers(&d.working_set),
                d.conflicts_before,
                Registers(&d.working_set_after),
                d.conflicts_after,
            )?;
        }
        for line in &self.listing {
            if let Some(label) = &line.block {
                writeln!(f, "  {label}:")?;
            }
            let mark = if line.prefetch { '>' } else { ' ' };
            let regs = if line.registers.is_empty() {
                String::new()
            } else {
                format!(
                    " ; {} -> {}",
                    Registers(&line.registers),
                    Registers(&line.registers_after)
                )
            };
            let text = format!(
                "   {mark}I{:<3} i{:<4} {:<44}{regs}",
                line.interval, line.inst, line.text
            );
            writeln!(f, "{}", text.trim_end())?;
        }
        Ok(())
    }
}

impl fmt::Display for LtrfReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.config;
        writeln!(
            f,
            "ltrf: N = {} registers per interval, {} banks, {}, {} registers{}",
            c.registers_per_interval,
            c.banks,
            self.bank_rule,
            c.numbering.as_str(),
            match c.max_registers {
                Some(m) => format!(", at most {m} per thread"),
                None => String::new(),
            }
        )?;
        for k in &self.kernels {
            write!(f, "kernel {k}")?;
        }
        for d in &self.device_functions {
            write!(f, "function {d}")?;
        }
        Ok(())
    }
}

//! Register numberings: the view the register-file passes take of a function's registers.
//!
//! The LTRF paper counts, prefetches and banks *architectural 32-bit registers* (§3.2: one
//! bit of the prefetch bit-vector per register; §4: a register's bank follows from its
//! number). A numbering says where every virtual register lives in those terms. It is an
//! [`Allocation`]: either the register allocator's, or [`virtual_numbering`], in which every
//! virtual register that is referenced gets registers of its own, numbered in declaration
//! order — what the passes count before allocation exists. Either way a 16- or 32-bit value
//! takes one 32-bit register, a 64-bit value an aligned pair and a 128-bit value an aligned
//! quad, so a 64-bit value counts as two registers. Predicates live in the separate
//! predicate file: they are never prefetched, banked or counted in a working set, but they
//! do get liveness bits.
//!
//! [`CellView`] turns a function and a numbering into a function over *cells*: cell `c <
//! general_cells()` is the 32-bit register `Rc`, the cells after it are the predicate
//! registers. It implements [`RegisterEffects`], so the IR's analyses (liveness above all)
//! run on architectural registers unchanged, and a value that shares a register with
//! another (a coalesced copy) is seen as the register it is.

use ir::{BlockId, ControlFlowGraph, Function, InstId, Op, RegClass, RegId, RegisterEffects};

use crate::regalloc::ir_input::width_of;
use crate::regalloc::{Allocation, Location, PhysReg, PredReg};

/// Which numbering a pass ran on.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum NumberingKind {
    /// The register allocator's architectural registers (the default: the paper works on
    /// register-allocated code).
    #[default]
    Allocated,
    /// Before allocation: every virtual register its own registers ([`virtual_numbering`]).
    Virtual,
}

impl NumberingKind {
    pub fn as_str(self) -> &'static str {
        match self {
            NumberingKind::Allocated => "allocated",
            NumberingKind::Virtual => "virtual",
        }
    }
}

impl std::str::FromStr for NumberingKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "allocated" => Ok(NumberingKind::Allocated),
            "virtual" => Ok(NumberingKind::Virtual),
            _ => Err(format!(
                "unknown numbering '{s}' (expected allocated or virtual)"
            )),
        }
    }
}

/// Why a numbering cannot be viewed as cells.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NumberingError {
    #[error("the numbering has {locations} locations for {registers} registers")]
    WrongLength { locations: usize, registers: usize },
    #[error("{vreg} is referenced by {inst} but the numbering gives it no register")]
    Unplaced { vreg: RegId, inst: InstId },
    #[error("{vreg} is spilled: materialise spill code first (regalloc::insert_spill_code)")]
    Spilled { vreg: RegId },
    #[error("{vreg} is a {class} register but the numbering puts it in {location}")]
    WrongFile {
        vreg: RegId,
        class: &'static str,
        location: Location,
    },
}

/// The numbering in which every referenced virtual register has registers of its own:
/// general registers numbered in declaration order (each aligned to its width, so a pair
/// may leave a one-register hole before it), predicates likewise. Unreferenced registers
/// are [`Location::Unused`].
pub fn virtual_numbering(func: &Function) -> Allocation {
    let mut referenced = vec![false; func.regs.len()];
    for i in 0..func.num_insts() {
        let inst = InstId::new(i);
        for &r in func.uses(inst).iter().chain(func.defs(inst)) {
            referenced[r.index()] = true;
        }
    }
    let mut locations = vec![Location::Unused; func.regs.len()];
    let (mut next_reg, mut next_pred) = (0u32, 0u32);
    for (r, info) in func.regs.iter().enumerate() {
        if !referenced[r] {
            continue;
        }
        if info.class == RegClass::Pred {
            locations[r] = Location::Pred(PredReg(next_pred));
            next_pred += 1;
        } else {
            let units = width_of(info.class).units();
            let base = next_reg.div_ceil(units) * units;
            locations[r] = Location::Reg(PhysReg(base));
            next_reg = base + units;
        }
    }
    Allocation {
        locations,
        registers_used: next_reg,
        predicates_used: next_pred,
        ..Allocation::default()
    }
}

/// A function whose registers are the cells of a numbering (see the module docs).
pub struct CellView<'f> {
    func: &'f Function,
    general: u32,
    predicates: u32,
    /// Cells of each virtual register: `(first cell, count)`; count 0 if it has none.
    reg_cells: Vec<(u32, u32)>,
    use_starts: Vec<u32>,
    use_cells: Vec<RegId>,
    def_starts: Vec<u32>,
    def_cells: Vec<RegId>,
    /// Per instruction, where its use slots start in `slot_ends`.
    slot_starts: Vec<u32>,
    /// Per use slot of [`Function::uses`], one past its last cell in `use_cells`.
    slot_ends: Vec<u32>,
    /// Per instruction, the general-register cells it reads or writes, sorted, once each.
    touched_starts: Vec<u32>,
    touched: Vec<u32>,
}

impl<'f> CellView<'f> {
    /// The cells of `func` under `numbering`, which must place every referenced register in
    /// its own file and spill nothing.
    pub fn new(func: &'f Function, numbering: &Allocation) -> Result<Self, NumberingError> {
        if numbering.locations.len() != func.regs.len() {
            return Err(NumberingError::WrongLength {
                locations: numbering.locations.len(),
                registers: func.regs.len(),
            });
        }
        let general = numbering.registers_used;
        let predicates = numbering.predicates_used;
        let mut reg_cells = vec![(0u32, 0u32); func.regs.len()];
        for (r, info) in func.regs.iter().enumerate() {
            let vreg = RegId::new(r);
            let wrong_file = |location| NumberingError::WrongFile {
                vreg,
                class: info.class.as_str(),
                location,
            };
            reg_cells[r] = match (numbering.locations[r], info.class) {
                (Location::Unused, _) => (0, 0),
                (Location::Spill(_), _) => return Err(NumberingError::Spilled { vreg }),
                (loc @ Location::Pred(p), RegClass::Pred) => {
                    if p.0 >= predicates {
                        return Err(wrong_file(loc));
                    }
                    (general + p.0, 1)
                }
                (loc @ Location::Reg(base), class) if class != RegClass::Pred => {
                    let units = width_of(class).units();
                    if base.0 % units != 0 || base.0 + units > general {
                        return Err(wrong_file(loc));
                    }
                    (base.0, units)
                }
                (loc, _) => return Err(wrong_file(loc)),
            };
        }

        let n = func.num_insts();
        let mut view = CellView {
            func,
            general,
            predicates,
            reg_cells,
            use_starts: Vec::with_capacity(n + 1),
            use_cells: Vec::new(),
            def_starts: Vec::with_capacity(n + 1),
            def_cells: Vec::new(),
            slot_starts: Vec::with_capacity(n + 1),
            slot_ends: Vec::new(),
            touched_starts: Vec::with_capacity(n + 1),
            touched: Vec::new(),
        };
        view.use_starts.push(0);
        view.def_starts.push(0);
        view.slot_starts.push(0);
        view.touched_starts.push(0);
        let mut scratch = Vec::new();
        for i in 0..n {
            let inst = InstId::new(i);
            scratch.clear();
            for &r in func.uses(inst) {
                let (first, count) = view.cells_of(r, inst)?;
                for c in first..first + count {
                    view.use_cells.push(RegId(c));
                    if c < general {
                        scratch.push(c);
                    }
                }
                view.slot_ends.push(view.use_cells.len() as u32);
            }
            for &r in func.defs(inst) {
                let (first, count) = view.cells_of(r, inst)?;
                for c in first..first + count {
                    view.def_cells.push(RegId(c));
                    if c < general {
                        scratch.push(c);
                    }
                }
            }
            scratch.sort_unstable();
            scratch.dedup();
            view.touched.extend_from_slice(&scratch);
            view.use_starts.push(view.use_cells.len() as u32);
            view.def_starts.push(view.def_cells.len() as u32);
            view.slot_starts.push(view.slot_ends.len() as u32);
            view.touched_starts.push(view.touched.len() as u32);
        }
        Ok(view)
    }

    fn cells_of(&self, vreg: RegId, inst: InstId) -> Result<(u32, u32), NumberingError> {
        match self.reg_cells[vreg.index()] {
            (_, 0) => Err(NumberingError::Unplaced { vreg, inst }),
            cells => Ok(cells),
        }
    }

    pub fn function(&self) -> &'f Function {
        self.func
    }

    /// General (32-bit) registers: cells `0..general_cells()`.
    pub fn general_cells(&self) -> u32 {
        self.general
    }

    /// Predicate registers: cells `general_cells()..general_cells() + predicate_cells()`.
    pub fn predicate_cells(&self) -> u32 {
        self.predicates
    }

    pub fn is_general(&self, cell: RegId) -> bool {
        cell.0 < self.general
    }

    /// The cells of virtual register `vreg`, empty if it has none.
    pub fn cells(&self, vreg: RegId) -> std::ops::Range<u32> {
        let (first, count) = self.reg_cells[vreg.index()];
        first..first + count
    }

    /// The general registers `inst` reads or writes, sorted, each once: what it adds to
    /// a working set.
    pub fn touched(&self, inst: InstId) -> &[u32] {
        let i = inst.index();
        &self.touched[self.touched_starts[i] as usize..self.touched_starts[i + 1] as usize]
    }

    /// Where the cells of use slot `slot` of `inst` (an index into `Function::uses(inst)`)
    /// lie within [`RegisterEffects::uses`] of this view.
    pub fn slot_cells(&self, inst: InstId, slot: usize) -> std::ops::Range<usize> {
        let i = inst.index();
        let first_slot = self.slot_starts[i] as usize;
        debug_assert!(first_slot + slot < self.slot_starts[i + 1] as usize);
        let start = if slot == 0 {
            self.use_starts[i] as usize
        } else {
            self.slot_ends[first_slot + slot - 1] as usize
        };
        let base = self.use_starts[i] as usize;
        start - base..self.slot_ends[first_slot + slot] as usize - base
    }

    /// True if `inst` calls a function: LTRF gives every call a register-interval of its
    /// own, because the callee's registers are not in the caller's working set.
    pub fn is_call(&self, inst: InstId) -> bool {
        matches!(self.func.inst(inst).op, Op::Call(_))
    }
}

impl ControlFlowGraph for CellView<'_> {
    fn num_blocks(&self) -> usize {
        self.func.num_blocks()
    }
    fn entry(&self) -> BlockId {
        self.func.entry()
    }
    fn successors(&self, block: BlockId) -> &[BlockId] {
        self.func.successors(block)
    }
    fn predecessors(&self, block: BlockId) -> &[BlockId] {
        self.func.predecessors(block)
    }
}

impl RegisterEffects for CellView<'_> {
    fn num_regs(&self) -> usize {
        (self.general + self.predicates) as usize
    }
    fn num_insts(&self) -> usize {
        self.func.num_insts()
    }
    fn block_insts(&self, block: BlockId) -> &[InstId] {
        self.func.block_insts(block)
    }
    fn uses(&self, inst: InstId) -> &[RegId] {
        let i = inst.index();
        &self.use_cells[self.use_starts[i] as usize..self.use_starts[i + 1] as usize]
    }
    fn defs(&self, inst: InstId) -> &[RegId] {
        let i = inst.index();
        &self.def_cells[self.def_starts[i] as usize..self.def_starts[i + 1] as usize]
    }
    fn defs_are_partial(&self, inst: InstId) -> bool {
        self.func.defs_are_partial(inst)
    }
}

/// `func` with every virtual register replaced by the architectural register `numbering`
/// gives it — `%R5` for a 32-bit value in R5, `%RD4` for a 64-bit pair R4:R5, `%RQ8` for a
/// quad, `%RH5`/`%RB5` for 16- and 8-bit values, `%P2` for a predicate — declared with a
/// bit type of the value's size so that every use type-checks. One architectural register
/// holds every value the numbering puts there, so the emulator can run what the hardware
/// would (values of different widths that overlap in registers get different names: they
/// never overlap in time). Every operand, guard and `.reg` parameter is renamed; the
/// result passes the IR verifier if `func` does. Spilled registers are an error (materialise
/// spill code first).
pub fn architectural_function(
    func: &Function,
    numbering: &Allocation,
) -> Result<Function, NumberingError> {
    use ptx::ast::ScalarType;
    if numbering.locations.len() != func.regs.len() {
        return Err(NumberingError::WrongLength {
            locations: numbering.locations.len(),
            registers: func.regs.len(),
        });
    }
    let mut out = func.clone();
    out.regs.clear();
    let mut names: std::collections::BTreeMap<(bool, u32, u32), RegId> = Default::default();
    let mut map = vec![None; func.regs.len()];
    for (r, info) in func.regs.iter().enumerate() {
        let vreg = RegId::new(r);
        let (pred, index) = match numbering.locations[r] {
            Location::Unused => continue,
            Location::Spill(_) => return Err(NumberingError::Spilled { vreg }),
            Location::Reg(p) if info.class != RegClass::Pred => (false, p.0),
            Location::Pred(p) if info.class == RegClass::Pred => (true, p.0),
            location => {
                return Err(NumberingError::WrongFile {
                    vreg,
                    class: info.class.as_str(),
                    location,
                })
            }
        };
        let bits = if pred { 1 } else { info.ty.bits() };
        let new = *names.entry((pred, index, bits)).or_insert_with(|| {
            let (prefix, ty) = match bits {
                1 => ("P", ScalarType::Pred),
                0..=8 => ("RB", ScalarType::B8),
                9..=16 => ("RH", ScalarType::B16),
                17..=32 => ("R", ScalarType::B32),
                33..=64 => ("RD", ScalarType::B64),
                _ => ("RQ", ScalarType::B128),
            };
            out.add_reg(format!("%{prefix}{index}"), ty)
        });
        map[r] = Some(new);
    }
    let rename = |r: RegId| -> Result<RegId, NumberingError> {
        map[r.index()].ok_or(NumberingError::Unplaced {
            vreg: r,
            inst: InstId(u32::MAX),
        })
    };
    for op in out.operands.iter_mut() {
        match op {
            ir::Operand::Reg(r) | ir::Operand::NotReg(r) => *r = rename(*r)?,
            ir::Operand::Address(ir::Address {
                base: ir::AddrBase::Reg(r),
                ..
            }) => *r = rename(*r)?,
            _ => {}
        }
    }
    for inst in out.insts.iter_mut() {
        if let Some(g) = inst.guard.as_mut() {
            g.reg = rename(g.reg)?;
        }
    }
    // A `.reg` parameter the body never touches has no register: it gets one of its own.
    let params: Vec<(String, Option<RegId>)> = out
        .params
        .iter()
        .chain(&out.return_params)
        .map(|p| (p.name.clone(), p.reg))
        .collect();
    let mut renamed = Vec::with_capacity(params.len());
    for (name, reg) in params {
        renamed.push(reg.map(|r| match map[r.index()] {
            Some(new) => new,
            None => out.add_reg(format!("%unused_{name}"), func.reg(r).ty),
        }));
    }
    for (p, r) in out
        .params
        .iter_mut()
        .chain(out.return_params.iter_mut())
        .zip(renamed)
    {
        p.reg = r;
    }
    out.compute_effects();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::first_function;

    const KERNEL: &str = r#"
.version 7.8
.target sm_70
.address_size 64
.visible .entry k(.param .u64 a)
{
    .reg .u32 %r<4>;
    .reg .u64 %rd<3>;
    .reg .pred %p;
    .reg .u32 %unused;
    ld.param.u64 %rd1, [a];
    ld.global.u32 %r1, [%rd1];
    add.u32 %r2, %r1, 1;
    setp.eq.u32 %p, %r2, 0;
    @%p st.global.u32 [%rd1], %r2;
    exit;
}
"#;

    fn reg(f: &Function, name: &str) -> RegId {
        RegId::new(f.regs.iter().position(|r| r.name == name).unwrap())
    }

    #[test]
    fn the_virtual_numbering_gives_each_referenced_register_its_own_aligned_cells() {
        let f = first_function(KERNEL);
        let n = virtual_numbering(&f);
        // %r1 R0, %r2 R1, %rd1 R2:R3 (aligned), the rest unused.
        assert_eq!(n.location(reg(&f, "%r1")), Location::Reg(PhysReg(0)));
        assert_eq!(n.location(reg(&f, "%r2")), Location::Reg(PhysReg(1)));
        assert_eq!(n.location(reg(&f, "%rd1")), Location::Reg(PhysReg(2)));
        assert_eq!(n.location(reg(&f, "%p")), Location::Pred(PredReg(0)));
        assert_eq!(n.location(reg(&f, "%unused")), Location::Unused);
        assert_eq!((n.registers_used, n.predicates_used), (4, 1));
    }

    #[test]
    fn the_cell_view_counts_a_pair_as_two_registers() {
        let f = first_function(KERNEL);
        let n = virtual_numbering(&f);
        let view = CellView::new(&f, &n).unwrap();
        // ld.global.u32 %r1, [%rd1]: R0 written, R2:R3 read.
        assert_eq!(view.touched(InstId(1)), &[0, 2, 3]);
        // @%p st.global.u32 [%rd1], %r2: the guard is the predicate cell after the four
        // registers; the address is two cells, the value one.
        assert_eq!(
            view.uses(InstId(4)),
            &[RegId(4), RegId(2), RegId(3), RegId(1)]
        );
        assert_eq!(view.slot_cells(InstId(4), 0), 0..1);
        assert_eq!(view.slot_cells(InstId(4), 1), 1..3);
        assert_eq!(view.slot_cells(InstId(4), 2), 3..4);
        assert_eq!(view.touched(InstId(4)), &[1, 2, 3]);
        assert!(!view.is_general(RegId(4)));
    }

    #[test]
    fn numberings_that_do_not_fit_are_errors() {
        let f = first_function(KERNEL);
        let mut n = virtual_numbering(&f);
        n.locations[reg(&f, "%rd1").index()] = Location::Reg(PhysReg(1));
        assert!(matches!(
            CellView::new(&f, &n),
            Err(NumberingError::WrongFile { .. })
        ));
        let mut n = virtual_numbering(&f);
        n.locations[reg(&f, "%r1").index()] = Location::Unused;
        assert!(matches!(
            CellView::new(&f, &n),
            Err(NumberingError::Unplaced { .. })
        ));
        let mut n = virtual_numbering(&f);
        n.locations[reg(&f, "%p").index()] = Location::Reg(PhysReg(0));
        assert!(matches!(
            CellView::new(&f, &n),
            Err(NumberingError::WrongFile { .. })
        ));
    }

    #[test]
    fn architectural_names_follow_the_numbering() {
        let f = first_function(KERNEL);
        let mut n = virtual_numbering(&f);
        // %r1 and %r2 share R0 (one dies where the other is born).
        n.locations[reg(&f, "%r2").index()] = Location::Reg(PhysReg(0));
        let g = architectural_function(&f, &n).unwrap();
        ir::verify(&g).unwrap();
        let names: Vec<&str> = g.regs.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["%R0", "%RD2", "%P0"]);
        let text = |i: u32| ir::print::inst_to_string(None, &g, g.inst(InstId(i)));
        assert_eq!(text(2), "add.u32 %R0, %R0, 1;");
        assert_eq!(text(4), "@%P0 st.global.u32 [%RD2], %R0;");
    }
}

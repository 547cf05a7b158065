//! Loading a lowered PTX program for execution: module variables become global-memory
//! regions (with their initial bytes and relocations applied), shared variables get
//! offsets in the CTA's shared space, function-scope `.local`/`.param` variables get
//! offsets in the thread's call frame, and every operand is resolved once into a
//! [`Src`] so the interpreter never looks a symbol up while running.

use ir::analysis::post_dominators::PostDominatorTree;
use ir::function::{AddrBase, Function, FunctionKind, Operand, Symbol, VarSpace, Variable};
use ir::{FuncId, Program};

use crate::memory::{AllocKind, GlobalMemory, MemError, FUNC_WINDOW, PARAM_WINDOW};

/// Sentinel program counter: "reconverge only when the function returns".
pub const NO_PC: u32 = u32::MAX;

/// Where an address operand's base comes from, resolved at load time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Base {
    /// A register holding an address in the instruction's space.
    Reg(u32),
    /// A fixed address in the instruction's space (globals, shared offsets, `[100]`).
    Fixed(u64),
    /// An offset in the current call frame (function-scope `.local`/`.param` variables).
    Frame(u64),
    /// The `i`-th parameter of the executing device function (an address in local space
    /// supplied by the caller).
    FuncParam(u32),
    /// The `i`-th return parameter of the executing device function.
    FuncRet(u32),
    /// A kernel parameter: an offset in the launch's parameter buffer.
    KernelParam(u64),
}

/// A resolved operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Src {
    Reg(u32),
    NotReg(u32),
    Imm(u64),
    Special(ir::function::SpecialReg),
    Addr {
        base: Base,
        offset: i64,
    },
    /// The address of a frame variable (local space) plus offset, computed per frame.
    FrameAddr(u64),
    /// The generic address of a kernel or function parameter.
    ParamAddr(Base),
    Block(u32),
    Func(FuncId),
    Sink,
}

/// A function prepared for execution.
#[derive(Debug)]
pub struct ExecFunction {
    pub id: FuncId,
    /// Resolved operands, parallel to `Function::operands`.
    pub srcs: Vec<Src>,
    /// The first instruction of each block.
    pub block_start: Vec<u32>,
    /// For each instruction: the pc where a divergent branch ending its block reconverges
    /// (first instruction of the block's immediate post-dominator), or [`NO_PC`].
    pub reconverge: Vec<u32>,
    /// Bytes of `.local`/`.param` variables in one call frame.
    pub frame_size: u64,
    pub num_regs: usize,
    /// Width in bits of each register's storage (sign extension of narrow loads).
    pub reg_bits: Vec<u8>,
}

/// A loaded module: the program plus where its variables live.
#[derive(Debug)]
pub struct LoadedModule {
    pub program: Program,
    /// Address of each module variable: global address for `.global`/`.const`, shared
    /// offset for `.shared`, 0 for others.
    pub var_addr: Vec<u64>,
    pub funcs: Vec<ExecFunction>,
    /// Bytes of the shared address space every CTA of this module gets: module-scope
    /// `.shared` and every function's, each at its own offset, before the dynamic part.
    pub static_shared: u64,
    /// Bytes of static shared memory a kernel declares, per function (indexed like
    /// `funcs`; 0 for device functions): module-scope `.shared`, the kernel's own, and the
    /// device functions' (any kernel may call them). What CUDA reports and an SM
    /// allocates per CTA; the other kernels' variables take addresses in
    /// [`Self::static_shared`] but never space, since a CTA runs one kernel.
    pub kernel_shared: Vec<u64>,
    /// Offset where dynamic (`extern .shared []`) shared memory starts.
    pub dynamic_shared_base: u64,
}

fn is_sized_shared(v: &Variable) -> bool {
    v.space == VarSpace::Shared && !v.unsized_array && v.size > 0
}

fn align_up(x: u64, a: u64) -> u64 {
    let a = a.max(1);
    x.div_ceil(a) * a
}

impl LoadedModule {
    /// Lays out and allocates `program`'s variables in `mem`.
    pub fn load(program: Program, mem: &mut GlobalMemory) -> Result<LoadedModule, MemError> {
        let mut var_addr = vec![0u64; program.variables.len()];
        let mut shared_top = 0u64;
        let mut max_align = 16u64;
        let mut unsized_shared = Vec::new();
        for (i, v) in program.variables.iter().enumerate() {
            match v.space {
                VarSpace::Global | VarSpace::Const => {
                    let kind = if v.space == VarSpace::Const {
                        AllocKind::ConstVariable
                    } else if v.managed {
                        AllocKind::ManagedVariable
                    } else {
                        AllocKind::GlobalVariable
                    };
                    let addr = mem.alloc(v.size, kind)?;
                    if let Some(init) = &v.init {
                        mem.write(addr, &init[..init.len().min(v.size as usize)])?;
                    }
                    var_addr[i] = addr;
                }
                VarSpace::Shared if v.unsized_array || v.size == 0 => unsized_shared.push(i),
                VarSpace::Shared => {
                    shared_top = align_up(shared_top, v.align as u64);
                    var_addr[i] = shared_top;
                    shared_top += v.size;
                    max_align = max_align.max(v.align as u64);
                }
                _ => {}
            }
        }
        // Function-scope shared variables: one module-wide layout (a CTA runs one kernel,
        // but the kernel may call device functions that declare their own).
        let module_scope_shared = shared_top;
        let mut func_shared: Vec<Vec<u64>> = Vec::new();
        for f in &program.functions {
            let mut offs = vec![0u64; f.vars.len()];
            for (i, v) in f.vars.iter().enumerate() {
                if is_sized_shared(v) {
                    shared_top = align_up(shared_top, v.align as u64);
                    offs[i] = shared_top;
                    shared_top += v.size;
                    max_align = max_align.max(v.align as u64);
                }
            }
            func_shared.push(offs);
        }
        // A kernel's footprint: the same layout without the other kernels' variables (so a
        // module with one kernel gets exactly `shared_top`).
        let kernel_shared = program
            .functions
            .iter()
            .enumerate()
            .map(|(k, kernel)| {
                if kernel.kind != FunctionKind::Kernel {
                    return 0;
                }
                let mut top = module_scope_shared;
                let reachable = program
                    .functions
                    .iter()
                    .enumerate()
                    .filter(|&(i, f)| i == k || f.kind != FunctionKind::Kernel);
                for (_, f) in reachable {
                    for v in f.vars.iter().filter(|v| is_sized_shared(v)) {
                        top = align_up(top, v.align as u64) + v.size;
                    }
                }
                top
            })
            .collect();
        let dynamic_base = align_up(shared_top, max_align.max(16));
        for i in unsized_shared {
            var_addr[i] = dynamic_base;
        }
        // Relocations in initializers (addresses of other symbols).
        for (i, v) in program.variables.iter().enumerate() {
            if !matches!(v.space, VarSpace::Global | VarSpace::Const) {
                continue;
            }
            for r in &v.relocations {
                let target = match r.symbol {
                    Symbol::Global(g) => {
                        let tv = &program.variables[g.index()];
                        let a = var_addr[g.index()];
                        if r.generic && tv.space == VarSpace::Shared {
                            crate::memory::SHARED_WINDOW + a
                        } else {
                            a
                        }
                    }
                    Symbol::Func(f) => FUNC_WINDOW + f.index() as u64,
                    _ => 0,
                };
                let value = target.wrapping_add(r.addend as u64);
                mem.write_uint(var_addr[i] + r.offset, r.size as u32, value)?;
            }
        }
        let funcs = program
            .functions
            .iter()
            .enumerate()
            .map(|(i, f)| {
                prepare(
                    FuncId::new(i),
                    f,
                    &program,
                    &var_addr,
                    &func_shared[i],
                    dynamic_base,
                )
            })
            .collect();
        Ok(LoadedModule {
            program,
            var_addr,
            funcs,
            static_shared: shared_top,
            kernel_shared,
            dynamic_shared_base: dynamic_base,
        })
    }

    /// Bytes of static shared memory a CTA of kernel `func` occupies
    /// ([`Self::kernel_shared`]).
    pub fn kernel_static_shared(&self, func: FuncId) -> u64 {
        self.kernel_shared
            .get(func.index())
            .copied()
            .unwrap_or(self.static_shared)
    }

    /// Frees the module's variables.
    pub fn unload(&self, mem: &mut GlobalMemory) {
        for (v, &a) in self.program.variables.iter().zip(&self.var_addr) {
            if matches!(v.space, VarSpace::Global | VarSpace::Const) {
                // A failed free means the runtime already released it; nothing to do.
                let _ = mem.free(a);
            }
        }
    }

    /// Global address of a module `.global`/`.const` variable by name.
    pub fn symbol_address(&self, name: &str) -> Option<(u64, u64)> {
        let id = self.program.var_by_name(name)?;
        let v: &Variable = self.program.variable(id);
        matches!(v.space, VarSpace::Global | VarSpace::Const)
            .then(|| (self.var_addr[id.index()], v.size))
    }
}

fn prepare(
    id: FuncId,
    f: &Function,
    program: &Program,
    var_addr: &[u64],
    shared_offs: &[u64],
    dynamic_base: u64,
) -> ExecFunction {
    // Frame layout of function-scope .local and .param variables.
    let mut frame = 0u64;
    let mut frame_off = vec![0u64; f.vars.len()];
    for (i, v) in f.vars.iter().enumerate() {
        if matches!(v.space, VarSpace::Local | VarSpace::Param) {
            frame = align_up(frame, (v.align as u64).max(1));
            frame_off[i] = frame;
            frame += v.size.max(1);
        }
    }
    let frame_size = align_up(frame, 16);
    let is_kernel = f.kind == FunctionKind::Kernel;
    let symbol_base = |s: Symbol| -> Base {
        match s {
            Symbol::Global(g) => Base::Fixed(var_addr[g.index()]),
            Symbol::Local(l) => {
                let v = &f.vars[l.index()];
                match v.space {
                    VarSpace::Shared if v.unsized_array || v.size == 0 => Base::Fixed(dynamic_base),
                    VarSpace::Shared => Base::Fixed(shared_offs[l.index()]),
                    _ => Base::Frame(frame_off[l.index()]),
                }
            }
            Symbol::Param(i) if is_kernel => {
                Base::KernelParam(f.params.get(i as usize).map_or(0, |p| p.offset))
            }
            Symbol::Param(i) => Base::FuncParam(i),
            Symbol::ReturnParam(i) => Base::FuncRet(i),
            Symbol::Func(func) => Base::Fixed(FUNC_WINDOW + func.index() as u64),
        }
    };
    let srcs = f
        .operands
        .iter()
        .map(|op| match *op {
            Operand::Reg(r) => Src::Reg(r.0),
            Operand::NotReg(r) => Src::NotReg(r.0),
            Operand::Imm(v) => Src::Imm(v),
            Operand::Special(s) => Src::Special(s),
            Operand::Address(a) => {
                let base = match a.base {
                    AddrBase::Reg(r) => Base::Reg(r.0),
                    AddrBase::Symbol(s) => symbol_base(s),
                    AddrBase::Absolute => Base::Fixed(0),
                };
                Src::Addr {
                    base,
                    offset: a.offset,
                }
            }
            Operand::SymbolAddr { symbol, offset } => match symbol_base(symbol) {
                Base::Fixed(a) => Src::Imm(a.wrapping_add(offset as u64)),
                Base::Frame(o) => Src::FrameAddr(o.wrapping_add(offset as u64)),
                Base::KernelParam(o) => Src::Imm(PARAM_WINDOW + o.wrapping_add(offset as u64)),
                b => Src::ParamAddr(b),
            },
            Operand::Symbol(Symbol::Func(func)) => Src::Func(func),
            Operand::Symbol(s) => Src::Addr {
                base: symbol_base(s),
                offset: 0,
            },
            Operand::Block(b) => Src::Block(f.blocks.get(b.index()).map_or(NO_PC, |blk| blk.start)),
            Operand::Sink => Src::Sink,
        })
        .collect();
    let block_start: Vec<u32> = f.blocks.iter().map(|b| b.start).collect();
    let mut reconverge = vec![NO_PC; f.insts.len()];
    if f.has_body && !f.blocks.is_empty() {
        let pdt = PostDominatorTree::with_cfg(f);
        for (bi, b) in f.blocks.iter().enumerate() {
            let target = pdt
                .immediate_post_dominator(ir::BlockId::new(bi))
                .map_or(NO_PC, |p| f.blocks[p.index()].start);
            for pc in b.start..b.end {
                reconverge[pc as usize] = target;
            }
        }
    }
    let _ = program;
    ExecFunction {
        id,
        srcs,
        block_start,
        reconverge,
        frame_size,
        num_regs: f.regs.len(),
        reg_bits: f
            .regs
            .iter()
            .map(|r| r.class.bits().min(64) as u8)
            .collect(),
    }
}

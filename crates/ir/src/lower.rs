//! Lowering of a PTX syntax tree ([`ptx::ast::Module`]) to a [`Program`]: symbol tables,
//! scope resolution of registers and function-scope variables, parameter-buffer and
//! variable layout with initial bytes, instruction decoding (in [`crate::decode`]) and
//! block construction (in [`crate::cfg`]).
//!
//! Lowering reports every error it finds, each located at file:line:column and naming the
//! function and instruction, rather than stopping at the first.

use std::collections::HashMap;

use ptx::ast::{self, Immediate, InitValue, Initializer, ScalarType, Span, StateSpace};
use ptx::LineIndex;

use crate::cfg::{self, LabelPos};
use crate::entity::{FuncId, LocalVarId, RegId, VarId};
use crate::error::{LowerError, LowerErrors};
use crate::function::{
    Function, FunctionKind, Guard, Inst, Operand, Param, PerfDirectives, Relocation, Symbol,
    VarSpace, Variable,
};
use crate::op::{Callee, Op, Space};
use crate::program::Program;

/// The most virtual registers one function may declare (nvcc's largest kernels declare
/// tens of thousands).
pub const MAX_FUNCTION_REGS: u64 = 1 << 20;

/// The most `.local` memory one thread may have: ptxas refuses a function whose frame
/// is larger (512 KiB per thread, the CUDA C++ Programming Guide's "maximum amount of
/// local memory per thread" for every compute capability). The emulator lays a frame
/// out as [`frame_bytes`] does.
pub const MAX_LOCAL_BYTES_PER_THREAD: u64 = 512 * 1024;

/// The most statically declared `.shared` memory a block may have: ptxas refuses more
/// ("uses too much shared data (..., 0xc000 max)"); the CUDA C++ Programming Guide says
/// allocations above 48 KB per block must be dynamic, on every compute capability.
pub const MAX_STATIC_SHARED_BYTES: u64 = 48 * 1024;

fn align_up(x: u64, a: u64) -> u64 {
    let a = a.max(1);
    x.div_ceil(a).saturating_mul(a)
}

/// Bytes of the frame after appending `v` to a frame of `frame` bytes, as the emulator
/// lays frames out (`emu::module`): function-scope `.local` and `.param` variables in
/// declaration order, each at its alignment, at least one byte each.
pub fn frame_bytes(frame: u64, v: &Variable) -> u64 {
    if matches!(v.space, VarSpace::Local | VarSpace::Param) {
        align_up(frame, u64::from(v.align)).saturating_add(v.size.max(1))
    } else {
        frame
    }
}

/// Bytes of static shared memory after appending `v` to `top` bytes, as the emulator
/// lays shared memory out (`emu::module`): sized `.shared` variables, each at its
/// alignment; unsized ones (`.extern .shared` arrays) are dynamic shared memory.
pub fn static_shared_bytes(top: u64, v: &Variable) -> u64 {
    if v.space == VarSpace::Shared && !v.unsized_array && v.size > 0 {
        align_up(top, u64::from(v.align)).saturating_add(v.size)
    } else {
        top
    }
}

/// Lowers a parsed module. `file_name` and `source` are the file the tree was parsed from;
/// they locate errors and give instructions their text.
pub fn lower(module: &ast::Module, file_name: &str, source: &str) -> Result<Program, LowerErrors> {
    let mut cx = ModuleScope {
        file: file_name,
        source,
        lines: LineIndex::new(source),
        func_names: HashMap::new(),
        var_names: HashMap::new(),
        errors: Vec::new(),
    };

    // Functions: a declaration followed by a definition of the same name is one function.
    let mut func_asts: Vec<&ast::Function> = Vec::new();
    let mut var_asts: Vec<&ast::VariableDecl> = Vec::new();
    for item in &module.items {
        match item {
            ast::ModuleItem::Function(f) => match cx.func_names.get(&f.name.name) {
                Some(&id) => {
                    let prev = &mut func_asts[id.index()];
                    match (prev.body.is_some(), f.body.is_some()) {
                        (false, _) => *prev = f,
                        (true, false) => {}
                        (true, true) => cx.error(
                            None,
                            f.name.span,
                            f.name.span,
                            format!("function '{}' is defined twice", f.name.name),
                        ),
                    }
                }
                None => {
                    cx.func_names
                        .insert(f.name.name.clone(), FuncId::new(func_asts.len()));
                    func_asts.push(f);
                }
            },
            ast::ModuleItem::Variable(v) => match cx.var_names.get(&v.name.name) {
                Some(&id) => {
                    let prev = &mut var_asts[id.index()];
                    if prev.linkage == Some(ast::Linkage::Extern) {
                        *prev = v;
                    } else if v.linkage != Some(ast::Linkage::Extern) {
                        cx.error(
                            None,
                            v.name.span,
                            v.span,
                            format!("variable '{}' is declared twice", v.name.name),
                        );
                    }
                }
                None => {
                    cx.var_names
                        .insert(v.name.name.clone(), VarId::new(var_asts.len()));
                    var_asts.push(v);
                }
            },
            ast::ModuleItem::File(_) | ast::ModuleItem::Section(_) | ast::ModuleItem::Pragma(_) => {
            }
        }
    }

    let mut variables = Vec::with_capacity(var_asts.len());
    for decl in &var_asts {
        let resolve = |name: &str| cx.module_symbol(name);
        match layout_variable(decl, &resolve) {
            Ok(v) => {
                // A module-scope `.shared` variable larger than a block may declare is
                // refused as ptxas refuses a kernel that uses it (the emulator would give
                // it to every CTA). Several that fit are laid out together; which of them
                // a kernel uses is not known here, so their sum is not checked.
                let shared = static_shared_bytes(0, &v);
                if shared > MAX_STATIC_SHARED_BYTES {
                    cx.error(
                        None,
                        decl.name.span,
                        decl.span,
                        format!(
                            "{shared} bytes of static shared memory (`.shared`) in one \
                             variable, more than the {MAX_STATIC_SHARED_BYTES} a block may \
                             declare (ptxas refuses a kernel that uses it; use dynamic shared \
                             memory)"
                        ),
                    );
                }
                variables.push(v)
            }
            Err((span, msg)) => {
                cx.error(None, span, decl.span, msg);
                variables.push(placeholder_variable(decl));
            }
        }
    }

    let mut functions = Vec::with_capacity(func_asts.len());
    for f in &func_asts {
        functions.push(FnLower::lower(&mut cx, f));
    }
    check_call_signatures(&mut cx, &functions);
    check_targets(&mut cx, &module.target, &functions);

    if !cx.errors.is_empty() {
        cx.errors.sort_by_key(|e| (e.line, e.column));
        return Err(LowerErrors(cx.errors));
    }
    Ok(Program {
        file_name: file_name.to_string(),
        source: source.to_string(),
        version: module.version,
        target: module.target.iter().map(|t| t.name.clone()).collect(),
        address_size: module.address_size.unwrap_or(32),
        functions,
        variables,
        func_names: cx.func_names,
        var_names: cx.var_names,
    })
}

/// The module's `.target` (`sm_80`, `sm_90a`) allows each instruction's form, as ptxas
/// requires ([`crate::op::Op::target_need`]): an instruction newer than the target is an
/// error at its line. A module without an `sm_NN` target is not checked.
fn check_targets(cx: &mut ModuleScope<'_>, target: &[ast::Ident], functions: &[Function]) {
    let Some((sm, arch_specific, name)) = target.iter().find_map(|t| {
        let rest = t.name.strip_prefix("sm_")?;
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let sm = digits.parse::<u32>().ok()?;
        Some((sm, rest[digits.len()..].starts_with('a'), t.name.clone()))
    }) else {
        return;
    };
    for f in functions {
        for inst in &f.insts {
            let Some(need) = inst.op.target_need() else {
                continue;
            };
            if need.met_by(sm, arch_specific) {
                continue;
            }
            let wanted = if need.arch_specific {
                format!(".target {}", need.target_name())
            } else {
                format!(".target {} or higher", need.target_name())
            };
            cx.error(
                Some(f.describe()),
                inst.span,
                inst.span,
                format!(
                    "{} requires {wanted}; the module's .target is {name}",
                    need.feature
                ),
            );
        }
    }
}

/// Direct calls pass as many arguments and return slots as the callee declares.
fn check_call_signatures(cx: &mut ModuleScope<'_>, functions: &[Function]) {
    for f in functions {
        for inst in &f.insts {
            let Op::Call(call) = &inst.op else { continue };
            let Callee::Direct(id) = call.callee else {
                continue;
            };
            let Some(callee) = functions.get(id.index()) else {
                continue;
            };
            let args = (inst.num_srcs as usize).saturating_sub(1);
            let rets = inst.num_dsts as usize;
            if args != callee.params.len() || rets != callee.return_params.len() {
                cx.error(
                    Some(f.describe()),
                    inst.span,
                    inst.span,
                    format!(
                        "call to '{}' passes {args} argument(s) and {rets} return value(s), \
                         but it takes {} and returns {}",
                        callee.name,
                        callee.params.len(),
                        callee.return_params.len()
                    ),
                );
            }
        }
    }
}

/// Module-wide context: the symbol tables and everything needed to locate errors.
pub(crate) struct ModuleScope<'a> {
    pub(crate) file: &'a str,
    pub(crate) source: &'a str,
    lines: LineIndex,
    func_names: HashMap<String, FuncId>,
    var_names: HashMap<String, VarId>,
    errors: Vec<LowerError>,
}

impl ModuleScope<'_> {
    fn module_symbol(&self, name: &str) -> Option<Symbol> {
        self.var_names
            .get(name)
            .map(|&v| Symbol::Global(v))
            .or_else(|| self.func_names.get(name).map(|&f| Symbol::Func(f)))
    }

    pub(crate) fn line(&self, offset: u32) -> u32 {
        self.lines.line_col(offset).0
    }

    /// Records an error at `at`, quoting the source text of `text`.
    fn error(&mut self, function: Option<String>, at: Span, text: Span, message: String) {
        let (line, column) = self.lines.line_col(at.start);
        let text = self
            .source
            .get(text.start as usize..text.end as usize)
            .unwrap_or("")
            .trim()
            .to_string();
        self.errors.push(LowerError {
            file: self.file.to_string(),
            line,
            column,
            function,
            text,
            message,
        });
    }
}

/// What a name inside a function body refers to.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Resolved {
    Reg(RegId),
    /// A vector register, split into `lanes` consecutive registers.
    VecReg(RegId, u8),
    Symbol(Symbol),
    /// A `.callprototype` label.
    Prototype,
}

/// A decoding problem: where (an operand's span, or the instruction if `None`) and what.
#[derive(Debug)]
pub(crate) struct DecodeError {
    pub span: Option<Span>,
    pub message: String,
}

impl DecodeError {
    pub(crate) fn new(message: impl Into<String>) -> DecodeError {
        DecodeError {
            span: None,
            message: message.into(),
        }
    }
    pub(crate) fn at(span: Span, message: impl Into<String>) -> DecodeError {
        DecodeError {
            span: Some(span),
            message: message.into(),
        }
    }
}

/// Lowering state of one function body.
pub(crate) struct FnLower<'a, 'm> {
    pub(crate) module: &'m mut ModuleScope<'a>,
    pub(crate) f: Function,
    scopes: Vec<HashMap<String, Resolved>>,
    labels: HashMap<&'a str, u32>,
    label_pos: Vec<LabelPos<'a>>,
    /// Operand buffers of the instruction being decoded.
    pub(crate) dsts: Vec<Operand>,
    pub(crate) srcs: Vec<Operand>,
    /// Unsupported-feature errors reported so far, one per opcode: the opcode, the index
    /// of its error in the module's list and how many more instructions had one.
    unsupported: Vec<(&'static str, usize, u32)>,
}

impl<'a, 'm> FnLower<'a, 'm> {
    fn lower(module: &'m mut ModuleScope<'a>, ast: &'a ast::Function) -> Function {
        let kind = match ast.kind {
            ast::FunctionKind::Entry => FunctionKind::Kernel,
            ast::FunctionKind::Func => FunctionKind::Device,
        };
        let mut f = Function::new(ast.name.name.clone(), kind);
        f.linkage = ast.linkage;
        f.noreturn = ast.noreturn;
        f.has_body = ast.body.is_some();
        f.directives = directives(&ast.directives);
        if let Some(c) = f.directives.reqnctapercluster {
            // sm_90 runs clusters of at most 16 CTAs (8 portable; the CUDA runtime checks
            // which applies at launch).
            let size: u64 = c.iter().map(|&d| u64::from(d)).product();
            if size == 0 || size > 16 {
                module.error(
                    Some(ast.name.name.clone()),
                    ast.name.span,
                    ast.name.span,
                    format!(
                        "cluster shape '.reqnctapercluster {}, {}, {}' is {size} CTAs; a \
                         cluster holds 1 to 16",
                        c[0], c[1], c[2]
                    ),
                );
            }
        }
        let mut cx = FnLower {
            module,
            f,
            scopes: vec![HashMap::new()],
            labels: HashMap::new(),
            label_pos: Vec::new(),
            dsts: Vec::new(),
            srcs: Vec::new(),
            unsupported: Vec::new(),
        };
        let (params, size) = cx.params(&ast.params, false);
        let (rets, ret_size) = cx.params(&ast.return_params, true);
        cx.f.params = params;
        cx.f.param_size = size;
        cx.f.return_params = rets;
        cx.f.return_size = ret_size;
        if let Some(body) = &ast.body {
            cx.collect_labels(body);
            cx.block(body);
            let n = cx.f.insts.len() as u32;
            for l in &mut cx.label_pos {
                l.inst = l.inst.min(n);
            }
            cfg::split_blocks(&mut cx.f, &cx.label_pos);
        }
        for &(_, index, more) in &cx.unsupported {
            if more > 0 {
                if let Some(e) = cx.module.errors.get_mut(index) {
                    e.message.push_str(&format!(
                        " [and {more} more in this {}]",
                        cx.f.kind.as_str()
                    ));
                }
            }
        }
        cx.f.compute_effects();
        cx.f
    }

    fn func_error(&mut self, at: Span, text: Span, message: String) {
        let func = Some(format!(
            "{} '{}'",
            self.f.kind.as_str(),
            crate::error::short_name(&self.f.name)
        ));
        self.module.error(func, at, text, message);
    }

    /// Reports a decoding error; an unsupported instruction or modifier is reported once
    /// per (function, opcode), the first occurrence counting the others.
    fn decode_error(&mut self, inst: &ast::Instruction, e: DecodeError) {
        let unsupported =
            e.message.starts_with("unsupported ") || e.message.contains("not supported");
        if unsupported {
            let opcode = inst.opcode.as_str();
            if let Some(seen) = self.unsupported.iter_mut().find(|(o, ..)| *o == opcode) {
                seen.2 += 1;
                return;
            }
            self.unsupported.push((opcode, self.module.errors.len(), 0));
        }
        self.func_error(e.span.unwrap_or(inst.span), inst.span, e.message);
    }

    /// Lays out parameters in declaration order; `.reg` parameters become registers.
    fn params(&mut self, params: &'a [ast::Param], ret: bool) -> (Vec<Param>, u64) {
        let mut out = Vec::with_capacity(params.len());
        let mut offset = 0u64;
        for (i, p) in params.iter().enumerate() {
            let bytes = scalar_bytes(p.ty);
            let mut elements = 1u64;
            for d in &p.array {
                match d {
                    Some(n) => elements = elements.saturating_mul(*n),
                    None => {
                        self.func_error(p.name.span, p.span, "parameter array needs a size".into());
                    }
                }
            }
            let size = bytes.saturating_mul(elements);
            let align = p.align.unwrap_or(bytes as u32).max(1);
            if !align.is_power_of_two() {
                self.func_error(
                    p.span,
                    p.span,
                    format!("alignment {align} is not a power of two"),
                );
            }
            let reg = if p.space == StateSpace::Reg {
                Some(self.f.add_reg(p.name.name.clone(), p.ty))
            } else {
                offset = offset.next_multiple_of(align as u64);
                None
            };
            let symbol = match (reg, ret) {
                (Some(r), _) => Resolved::Reg(r),
                (None, false) => Resolved::Symbol(Symbol::Param(i as u32)),
                (None, true) => Resolved::Symbol(Symbol::ReturnParam(i as u32)),
            };
            if self.scopes[0].insert(p.name.name.clone(), symbol).is_some() && p.name.name != "_" {
                self.func_error(
                    p.name.span,
                    p.span,
                    format!("parameter '{}' is declared twice", p.name.name),
                );
            }
            let (ptr_space, ptr_align) = match &p.ptr {
                Some(ptr) => (ptr.space.and_then(space_of), ptr.align),
                None => (None, None),
            };
            out.push(Param {
                name: p.name.name.clone(),
                ty: p.ty,
                elements,
                size,
                align,
                offset: if reg.is_some() { 0 } else { offset },
                ptr_space,
                ptr_align,
                reg,
            });
            if reg.is_none() {
                offset += size;
            }
        }
        (out, offset)
    }

    fn collect_labels(&mut self, block: &'a ast::Block) {
        for s in &block.statements {
            match s {
                ast::Statement::Label(l) => {
                    let index = self.label_pos.len() as u32;
                    if self.labels.insert(&l.name, index).is_some() {
                        self.func_error(
                            l.span,
                            l.span,
                            format!("label '{}' is defined twice", l.name),
                        );
                    }
                    self.label_pos.push(LabelPos {
                        name: &l.name,
                        inst: 0,
                    });
                }
                ast::Statement::Block(b) => self.collect_labels(b),
                _ => {}
            }
        }
    }

    /// The label index of a label name (what `Operand::Block` holds until blocks exist).
    pub(crate) fn label(&self, name: &str) -> Option<u32> {
        self.labels.get(name).copied()
    }

    fn declare(&mut self, name: &ast::Ident, text: Span, what: Resolved) {
        let scope = self
            .scopes
            .last_mut()
            .expect("function scope stack is never empty");
        if scope.insert(name.name.clone(), what).is_some() {
            self.func_error(
                name.span,
                text,
                format!("'{}' is declared twice in one scope", name.name),
            );
        }
    }

    fn block(&mut self, block: &'a ast::Block) {
        self.scopes.push(HashMap::new());
        // Declarations are visible in their whole scope.
        for s in &block.statements {
            match s {
                ast::Statement::RegDecl(d) => self.reg_decl(d),
                ast::Statement::Variable(v) => self.local_var(v),
                ast::Statement::CallPrototype(p) => {
                    self.declare(&p.label, p.span, Resolved::Prototype)
                }
                _ => {}
            }
        }
        for s in &block.statements {
            match s {
                ast::Statement::Label(l) => {
                    if let Some(&i) = self.labels.get(l.name.as_str()) {
                        self.label_pos[i as usize].inst = self.f.insts.len() as u32;
                    }
                }
                ast::Statement::Instruction(i) => self.instruction(i),
                ast::Statement::Block(b) => self.block(b),
                ast::Statement::TargetList(t) => self.func_error(
                    t.span,
                    t.span,
                    "branch/call target lists are not supported".into(),
                ),
                ast::Statement::RegDecl(_)
                | ast::Statement::Variable(_)
                | ast::Statement::CallPrototype(_)
                | ast::Statement::Pragma(_)
                | ast::Statement::Loc(_) => {}
            }
        }
        self.scopes.pop();
    }

    fn reg_decl(&mut self, d: &ast::RegDecl) {
        if matches!(d.ty, ScalarType::S4 | ScalarType::U4 | ScalarType::B1) {
            self.func_error(
                d.span,
                d.span,
                format!("registers of type .{} are not supported", d.ty),
            );
            return;
        }
        let lanes = d.vector.map_or(1, |v| v.lanes());
        for decl in &d.names {
            let base = &decl.name.name;
            let count = decl.range.unwrap_or(1);
            let total = self.f.regs.len() as u64 + u64::from(count) * u64::from(lanes);
            if total > MAX_FUNCTION_REGS {
                // `%r<4000000000>` would take minutes and gigabytes to declare.
                self.func_error(
                    decl.name.span,
                    d.span,
                    format!(
                        "{count} registers '{base}<{count}>' make {total} in the function, more \
                         than the {MAX_FUNCTION_REGS} supported"
                    ),
                );
                return;
            }
            for i in 0..count {
                let name = match decl.range {
                    Some(_) => format!("{base}{i}"),
                    None => base.clone(),
                };
                let what = if lanes == 1 {
                    Resolved::Reg(self.f.add_reg(name.clone(), d.ty))
                } else {
                    let first = RegId::new(self.f.regs.len());
                    for lane in 0..lanes {
                        self.f.add_reg(format!("{name}.{}", lane_name(lane)), d.ty);
                    }
                    Resolved::VecReg(first, lanes as u8)
                };
                let ident = ast::Ident {
                    name,
                    span: decl.name.span,
                };
                self.declare(&ident, d.span, what);
            }
        }
    }

    fn local_var(&mut self, v: &'a ast::VariableDecl) {
        let resolve = |name: &str| self.module.module_symbol(name);
        let var = match layout_variable(v, &resolve) {
            Ok(var) => var,
            Err((span, msg)) => {
                self.func_error(span, v.span, msg);
                placeholder_variable(v)
            }
        };
        // As ptxas does, a frame or a block's static shared memory over the limit is
        // refused, at the declaration that crosses it (1 GiB of `.local` per thread, or
        // 4 GiB of `.shared`, would otherwise be allocated per thread or per CTA).
        let frame = self.f.vars.iter().fold(0, frame_bytes);
        let shared = self.f.vars.iter().fold(0, static_shared_bytes);
        let (new_frame, new_shared) = (frame_bytes(frame, &var), static_shared_bytes(shared, &var));
        if frame <= MAX_LOCAL_BYTES_PER_THREAD && new_frame > MAX_LOCAL_BYTES_PER_THREAD {
            self.func_error(
                v.name.span,
                v.span,
                format!(
                    "{new_frame} bytes of local memory (`.local`) per thread, more than the \
                     {MAX_LOCAL_BYTES_PER_THREAD} a thread may have (ptxas refuses such a \
                     function)"
                ),
            );
        }
        if shared <= MAX_STATIC_SHARED_BYTES && new_shared > MAX_STATIC_SHARED_BYTES {
            self.func_error(
                v.name.span,
                v.span,
                format!(
                    "{new_shared} bytes of static shared memory (`.shared`) per block, more \
                     than the {MAX_STATIC_SHARED_BYTES} a block may declare (ptxas refuses \
                     such a function; use dynamic shared memory)"
                ),
            );
        }
        let id = LocalVarId::new(self.f.vars.len());
        self.f.vars.push(var);
        self.declare(&v.name, v.span, Resolved::Symbol(Symbol::Local(id)));
    }

    /// Resolves a name in a function body: innermost scope first, then parameters, then
    /// module variables and functions.
    pub(crate) fn resolve(&self, name: &str) -> Option<Resolved> {
        self.scopes
            .iter()
            .rev()
            .find_map(|s| s.get(name).copied())
            .or_else(|| self.module.module_symbol(name).map(Resolved::Symbol))
    }

    fn instruction(&mut self, inst: &'a ast::Instruction) {
        self.dsts.clear();
        self.srcs.clear();
        let decoded = self.guard(inst).and_then(|g| {
            let op = self.decode(inst)?;
            if self.dsts.len() > u8::MAX as usize || self.srcs.len() > u8::MAX as usize {
                return Err(DecodeError::new("too many operands"));
            }
            Ok((g, op))
        });
        match decoded {
            Ok((guard, op)) => {
                let start = self.f.operands.len() as u32;
                self.f.operands.extend_from_slice(&self.dsts);
                self.f.operands.extend_from_slice(&self.srcs);
                let line = self.module.line(inst.span.start);
                self.f.insts.push(Inst {
                    op,
                    guard,
                    operands_start: start,
                    num_dsts: self.dsts.len() as u8,
                    num_srcs: self.srcs.len() as u8,
                    line,
                    span: inst.span,
                });
            }
            Err(e) => self.decode_error(inst, e),
        }
    }

    fn guard(&self, inst: &ast::Instruction) -> Result<Option<Guard>, DecodeError> {
        let Some(g) = &inst.guard else {
            return Ok(None);
        };
        let p = &g.predicate;
        match self.resolve(&p.name) {
            Some(Resolved::Reg(r)) if self.f.reg(r).ty == ScalarType::Pred => Ok(Some(Guard {
                reg: r,
                negated: g.negated,
            })),
            Some(_) => Err(DecodeError::at(
                p.span,
                format!("guard '{}' is not a predicate register", p.name),
            )),
            None => Err(DecodeError::at(
                p.span,
                format!("undefined register '{}'", p.name),
            )),
        }
    }
}

fn lane_name(lane: u32) -> &'static str {
    ["x", "y", "z", "w", "4", "5", "6", "7"][lane as usize % 8]
}

fn directives(ds: &[ast::PerformanceDirective]) -> PerfDirectives {
    let dims = |v: &[u32]| {
        let mut d = [1u32; 3];
        for (slot, x) in d.iter_mut().zip(v) {
            *slot = *x;
        }
        d
    };
    let mut out = PerfDirectives::default();
    for d in ds {
        match d {
            ast::PerformanceDirective::MaxNtid(v) => out.maxntid = Some(dims(v)),
            ast::PerformanceDirective::ReqNtid(v) => out.reqntid = Some(dims(v)),
            ast::PerformanceDirective::MinNctaPerSm(n) => out.minnctapersm = Some(*n),
            ast::PerformanceDirective::MaxNctaPerSm(n) => out.maxnctapersm = Some(*n),
            ast::PerformanceDirective::MaxNreg(n) => out.maxnreg = Some(*n),
            ast::PerformanceDirective::ReqNctaPerCluster(v) => {
                out.reqnctapercluster = Some(dims(v))
            }
            ast::PerformanceDirective::ExplicitCluster => out.explicitcluster = true,
            ast::PerformanceDirective::MaxClusterRank(n) => out.maxclusterrank = Some(*n),
            ast::PerformanceDirective::Pragma(_) => {}
        }
    }
    out
}

/// Bytes of one value of a scalar type in memory.
pub(crate) fn scalar_bytes(ty: ScalarType) -> u64 {
    (ty.bits() as u64).div_ceil(8).max(1)
}

/// The instruction-level space of a declared state space (`None` for `.reg`, `.sreg`, `.tex`).
pub(crate) fn space_of(s: StateSpace) -> Option<Space> {
    Some(match s {
        StateSpace::Global => Space::Global,
        StateSpace::Shared | StateSpace::SharedCta => Space::Shared,
        StateSpace::SharedCluster => Space::SharedCluster,
        StateSpace::Local => Space::Local,
        StateSpace::Const => Space::Const,
        StateSpace::Param | StateSpace::ParamEntry | StateSpace::ParamFunc => Space::Param,
        StateSpace::Reg | StateSpace::Sreg | StateSpace::Tex => return None,
    })
}

fn var_space(s: StateSpace) -> Option<VarSpace> {
    Some(match s {
        StateSpace::Global => VarSpace::Global,
        StateSpace::Const => VarSpace::Const,
        StateSpace::Shared | StateSpace::SharedCta | StateSpace::SharedCluster => VarSpace::Shared,
        StateSpace::Local => VarSpace::Local,
        StateSpace::Param | StateSpace::ParamEntry | StateSpace::ParamFunc => VarSpace::Param,
        StateSpace::Tex => VarSpace::Tex,
        StateSpace::Reg | StateSpace::Sreg => return None,
    })
}

fn placeholder_variable(decl: &ast::VariableDecl) -> Variable {
    Variable {
        name: decl.name.name.clone(),
        space: var_space(decl.space).unwrap_or(VarSpace::Global),
        linkage: decl.linkage,
        ty: decl.ty,
        elem_size: 0,
        size: 0,
        align: 1,
        unsized_array: false,
        managed: decl.managed,
        init: None,
        relocations: Vec::new(),
    }
}

/// Computes a variable's size, alignment and initial bytes. Symbol initializers become
/// relocations.
pub(crate) fn layout_variable(
    decl: &ast::VariableDecl,
    resolve: &dyn Fn(&str) -> Option<Symbol>,
) -> Result<Variable, (Span, String)> {
    let space = var_space(decl.space).ok_or_else(|| {
        (
            decl.span,
            format!("a variable cannot live in .{}", decl.space),
        )
    })?;
    let scalar = match decl.ty {
        ast::VariableType::Scalar(t) => Some(t),
        _ => None,
    };
    if scalar == Some(ScalarType::B1) {
        return Err((
            decl.span,
            "variables of type .b1 are not supported (.b1 is a type of mma's inputs only)"
                .to_string(),
        ));
    }
    // Texture, sampler and surface references are 64-bit handles.
    let scalar_size = scalar.map_or(8, scalar_bytes);
    let lanes = decl.vector.map_or(1, |v| v.lanes()) as u64;
    let elem_size = scalar_size * lanes;

    let mut leaves = Vec::new();
    if let Some(init) = &decl.init {
        flatten(init, &mut leaves);
    }
    let mut elements = 1u64;
    let mut unsized_array = false;
    for d in &decl.array {
        match d {
            Some(n) => elements = elements.saturating_mul(*n),
            None => unsized_array = true,
        }
    }
    if unsized_array {
        // `a[] = {…}`: the initializer gives the length.
        let known = elements.max(1);
        let per_element = lanes * known;
        elements = (leaves.len() as u64).div_ceil(per_element) * known;
    }
    let size = elem_size.saturating_mul(elements);
    let align = decl.align.unwrap_or(elem_size.max(1) as u32);
    if !align.is_power_of_two() {
        return Err((
            decl.span,
            format!("alignment {align} is not a power of two"),
        ));
    }

    let mut init = None;
    let mut relocations = Vec::new();
    if decl.init.is_some() {
        if (leaves.len() as u64).saturating_mul(scalar_size) > size {
            return Err((
                decl.span,
                format!(
                    "too many initializers for '{}' ({} values)",
                    decl.name.name,
                    leaves.len()
                ),
            ));
        }
        let ty = scalar.ok_or_else(|| {
            (
                decl.span,
                "texture references cannot be initialized".to_string(),
            )
        })?;
        let mut bytes = vec![0u8; size as usize];
        for (k, leaf) in leaves.iter().enumerate() {
            let offset = k as u64 * scalar_size;
            match leaf {
                InitValue::Immediate(imm) => {
                    let bits = init_bits(*imm, ty).map_err(|m| (decl.span, m))?;
                    let at = offset as usize;
                    bytes[at..at + scalar_size as usize]
                        .copy_from_slice(&bits.to_le_bytes()[..scalar_size as usize]);
                }
                InitValue::Symbol {
                    name,
                    offset: addend,
                }
                | InitValue::Generic {
                    name,
                    offset: addend,
                } => {
                    let symbol = resolve(&name.name)
                        .ok_or_else(|| (name.span, format!("undefined symbol '{}'", name.name)))?;
                    if scalar_size != 4 && scalar_size != 8 {
                        return Err((
                            name.span,
                            "an address initializer needs a 32- or 64-bit element".into(),
                        ));
                    }
                    relocations.push(Relocation {
                        offset,
                        size: scalar_size as u8,
                        symbol,
                        addend: *addend,
                        generic: matches!(leaf, InitValue::Generic { .. }),
                    });
                }
            }
        }
        init = Some(bytes);
    }
    Ok(Variable {
        name: decl.name.name.clone(),
        space,
        linkage: decl.linkage,
        ty: decl.ty,
        elem_size,
        size,
        align,
        unsized_array: unsized_array && decl.init.is_none(),
        managed: decl.managed,
        init,
        relocations,
    })
}

fn flatten<'t>(init: &'t Initializer, out: &mut Vec<&'t InitValue>) {
    match init {
        Initializer::Value(v) => out.push(v),
        Initializer::List(items) => items.iter().for_each(|i| flatten(i, out)),
    }
}

/// The bit pattern an initializer literal stores in a variable of type `ty`. Unlike
/// instruction operands, integer literals initialize float variables by value.
fn init_bits(imm: Immediate, ty: ScalarType) -> Result<u64, String> {
    match (imm, ty) {
        (Immediate::Int(v), ScalarType::F32) => Ok((v as f32).to_bits() as u64),
        (Immediate::Int(v), ScalarType::F64) => Ok((v as f64).to_bits()),
        _ => crate::decode::immediate_bits(imm, ty),
    }
}

#[cfg(test)]
#[path = "lower_tests.rs"]
mod lower_tests;

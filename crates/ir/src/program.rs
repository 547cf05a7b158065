//! A lowered PTX module: its functions (kernels and device functions), its module-scope
//! variables with their layouts and initial bytes, and the module header directives.

use std::collections::HashMap;

use crate::entity::{FuncId, VarId};
use crate::function::{Function, FunctionKind, Inst, Variable};

/// Everything one `.ptx` file defines, ready for analysis and execution.
#[derive(Clone, Debug)]
pub struct Program {
    pub file_name: String,
    /// The PTX text the program was lowered from (for instruction text in diagnostics).
    pub source: String,
    /// `.version major.minor`
    pub version: Option<(u32, u32)>,
    /// `.target` words, e.g. `["sm_70"]`.
    pub target: Vec<String>,
    /// `.address_size`; PTX assumes 32 when it is absent.
    pub address_size: u32,
    /// Functions by [`FuncId`], in module order. Declarations without a body are included
    /// (they can be called, e.g. `vprintf`).
    pub functions: Vec<Function>,
    /// Module-scope variables by [`VarId`], in module order.
    pub variables: Vec<Variable>,
    pub(crate) func_names: HashMap<String, FuncId>,
    pub(crate) var_names: HashMap<String, VarId>,
}

impl Program {
    pub fn function(&self, id: FuncId) -> &Function {
        &self.functions[id.index()]
    }

    pub fn variable(&self, id: VarId) -> &Variable {
        &self.variables[id.index()]
    }

    pub fn func_by_name(&self, name: &str) -> Option<FuncId> {
        self.func_names.get(name).copied()
    }

    pub fn var_by_name(&self, name: &str) -> Option<VarId> {
        self.var_names.get(name).copied()
    }

    /// The kernels (`.entry` functions), in module order.
    pub fn kernels(&self) -> impl Iterator<Item = (FuncId, &Function)> {
        self.functions
            .iter()
            .enumerate()
            .filter(|(_, f)| f.kind == FunctionKind::Kernel)
            .map(|(i, f)| (FuncId::new(i), f))
    }

    /// The source text of an instruction as written (empty for synthesized instructions).
    pub fn inst_text(&self, inst: &Inst) -> &str {
        self.source
            .get(inst.span.start as usize..inst.span.end as usize)
            .unwrap_or("")
    }
}

//! Kernel IR: functions as basic blocks of decoded instructions with explicit, typed
//! definition and use operands, and the static analyses that every compiler pass and the
//! simulator rely on.

pub mod analysis;
pub mod cfg;
mod decode;
pub mod entity;
pub mod error;
pub mod exec_class;
pub mod function;
pub mod graph;
mod lower;
pub mod op;
pub mod print;
pub mod program;
pub mod verify;

pub use entity::{BlockId, FuncId, InstId, LocalVarId, RegId, VarId};
pub use error::{LowerError, LowerErrors};
pub use exec_class::{exec_class, ExecClass};
pub use function::{
    AddrBase, Address, Block, Dim, Function, FunctionKind, Guard, Inst, Operand, Param,
    PerfDirectives, RegClass, RegInfo, Relocation, SpecialReg, Symbol, VarSpace, Variable,
};
pub use graph::{ControlFlowGraph, RegisterEffects};
pub use lower::{
    frame_bytes, lower, static_shared_bytes, MAX_LOCAL_BYTES_PER_THREAD, MAX_STATIC_SHARED_BYTES,
};
pub use op::Op;
pub use print::{to_dot, CfgJson};
pub use program::Program;
pub use verify::{verify, VerifyError};

//! Execution errors. Every error carries where it happened: kernel, PTX file and line,
//! the instruction's text, CTA, thread and lane — what a user needs to find the bug in
//! their kernel without a debugger.

use std::fmt;

use crate::memory::MemError;

/// What went wrong.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ErrorKind {
    #[error("{0}")]
    Memory(#[from] MemError),
    #[error("barrier {barrier} deadlock: warps {waiting:?} wait at it, warps {missing:?} never arrive (they exited or wait elsewhere)")]
    BarrierDeadlock {
        barrier: u32,
        waiting: Vec<u32>,
        missing: Vec<u32>,
    },
    #[error("unsupported instruction: {0}")]
    Unsupported(String),
    #[error("trap instruction executed")]
    Trap,
    #[error("device-side assertion failed: {0}")]
    Assert(String),
    #[error("call depth exceeds {limit} frames (unbounded recursion?)")]
    CallDepth { limit: usize },
    #[error("local memory of {needed} bytes per thread exceeds the {limit}-byte limit")]
    LocalOverflow { needed: u64, limit: u64 },
    #[error("call to '{0}', which has no body and is not a built-in")]
    UndefinedFunction(String),
    #[error("indirect call to {0:#x}, which is not a function address")]
    BadCallTarget(u64),
    #[error("invalid launch: {0}")]
    Launch(String),
    #[error("texture: {0}")]
    Texture(String),
    #[error("mbarrier: {0}")]
    Mbarrier(String),
    #[error("setmaxnreg: {0}")]
    Setmaxnreg(String),
    #[error("cp.async.bulk: {0}")]
    BulkCopy(String),
    #[error("wgmma: {0}")]
    Wgmma(String),
    #[error("mma.sp: {0}")]
    MmaSparse(String),
    /// `st.async`/`red.async` whose destination is not shared memory.
    #[error("{0}")]
    AsyncStore(String),
    #[error("warp {0} cannot execute: it has exited or waits at a barrier")]
    WarpNotReady(u32),
}

/// Where an error happened. Fields that do not apply are `None`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Location {
    pub kernel: String,
    pub function: String,
    pub file: String,
    pub line: u32,
    pub inst_text: String,
    pub cta: [u32; 3],
    pub warp: Option<u32>,
    pub thread: Option<[u32; 3]>,
    pub lane: Option<u32>,
}

/// An error with its location.
#[derive(Clone, Debug, PartialEq)]
pub struct ExecError {
    pub kind: ErrorKind,
    pub location: Box<Location>,
}

impl ExecError {
    pub fn new(kind: ErrorKind, location: Location) -> Self {
        ExecError {
            kind,
            location: Box::new(location),
        }
    }
}

impl fmt::Display for ExecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let l = &self.location;
        write!(f, "{}", self.kind)?;
        write!(f, "\n  kernel '{}'", l.kernel)?;
        if l.function != l.kernel && !l.function.is_empty() {
            write!(f, ", in function '{}'", l.function)?;
        }
        if l.line > 0 {
            write!(f, ", at {}:{}: {}", l.file, l.line, l.inst_text.trim())?;
        }
        write!(f, "\n  CTA ({}, {}, {})", l.cta[0], l.cta[1], l.cta[2])?;
        if let Some(w) = l.warp {
            write!(f, ", warp {w}")?;
        }
        if let Some(t) = l.thread {
            write!(f, ", thread ({}, {}, {})", t[0], t[1], t[2])?;
        }
        if let Some(lane) = l.lane {
            write!(f, ", lane {lane}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ExecError {}
